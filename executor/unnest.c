/*
 * unnest.c - the expanding projection behind unnest(list): each input row
 * becomes one output row per element of its list in column `list_col`, with
 * the element in that column and the other columns repeated.  An empty or NULL
 * list gives no row, as in DuckDB.
 *
 * Streaming: an input batch is walked with a cursor (row, element), and a
 * full output batch goes downstream (EX_HAVE_MORE) before the walk goes on,
 * so a row with a million elements never needs more than one batch of memory.
 * Output values are copied as fixed-size slots; strings and lists keep
 * pointing at the input's bytes, which stay valid while the input batch is
 * (the push contract), and the elements at the list's block in the same way.
 */
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "executor/ops.h"

typedef struct UnnestSpec {
    int list_col; /* input column of the list; output column of its elements */
} UnnestSpec;

typedef struct UnnestLocal {
    CmBatch out;
    int row;                    /* cursor: active input row being expanded, */
    uint32_t elem;              /* and its next element */
    uint32_t pos[CM_BATCH_CAP]; /* per output row: the input's physical row */
} UnnestLocal;

static void unnest_local_fini(ExOp *op, void *local)
{
    UnnestLocal *l = local;
    if (l != NULL) {
        cm_batch_fini(&l->out);
        cm_free(l);
    }
}

static void *unnest_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    UnnestLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    if (cm_batch_init(&l->out, op->n_cols, op->types, err) != CM_OK) {
        cm_free(l);
        return NULL;
    }
    return l;
}

/* dv[0..n) = sv at the physical rows pos[0..n): the slots as they are. */
static void gather(CmVec *dv, const CmVec *sv, const uint32_t *pos, int n)
{
    size_t w = cm_type_width(dv->type);
    bool is_const = sv->kind == CM_VEC_CONST;
    for (int i = 0; i < n; i++) {
        uint32_t p = is_const ? 0 : pos[i];
        memcpy((char *)dv->data + w * (size_t)i, (const char *)sv->data + w * p, w);
        if (cm_vec_is_null(sv, p)) {
            cm_vec_set_null(dv, (uint32_t)i);
        }
    }
}

/* Fills the output from the cursor on; true when the input is used up. */
static bool expand(const UnnestSpec *s, UnnestLocal *l, const CmBatch *in)
{
    const CmVec *lv = &in->cols[s->list_col];
    CmVec *ev = &l->out.cols[s->list_col];
    size_t w = cm_type_width(ev->type);
    int n = 0;
    for (; l->row < in->n_rows && n < CM_BATCH_CAP; l->row++, l->elem = 0) {
        uint32_t p = lv->kind == CM_VEC_CONST ? 0 : cm_batch_pos(in, l->row);
        if (cm_vec_is_null(lv, p)) {
            continue;
        }
        const CmList *list = &((const CmList *)lv->data)[p];
        uint32_t take = list->len - l->elem;
        if (take > (uint32_t)(CM_BATCH_CAP - n)) {
            take = (uint32_t)(CM_BATCH_CAP - n);
        }
        if (take > 0) { /* the elements as one copy, not a call per element */
            memcpy((char *)ev->data + w * (size_t)n, (const char *)list->data + w * l->elem,
                   w * take);
        }
        for (uint32_t k = 0; k < take; k++) {
            l->pos[n + (int)k] = cm_batch_pos(in, l->row);
        }
        for (uint32_t k = 0; k < take && list->has_nulls; k++) {
            if (cm_list_is_null(list, w, l->elem + k)) {
                cm_vec_set_null(ev, (uint32_t)n + k);
            }
        }
        n += (int)take;
        l->elem += take;
        if (l->elem < list->len) {
            break; /* the output is full in the middle of this list */
        }
    }
    for (int c = 0; c < in->n_cols; c++) {
        if (c != s->list_col) {
            gather(&l->out.cols[c], &in->cols[c], l->pos, n);
        }
    }
    l->out.n_rows = n;
    return l->row >= in->n_rows;
}

static ExOpResult unnest_push(ExOp *op, void *local, const CmBatch *in, const CmBatch **out,
                              CmErr *err)
{
    UnnestLocal *l = local;
    cm_batch_reset(&l->out);
    bool is_done = expand(op->spec, l, in);
    *out = l->out.n_rows > 0 ? &l->out : NULL;
    if (!is_done) {
        return EX_HAVE_MORE;
    }
    l->row = 0;
    l->elem = 0;
    return EX_NEED_INPUT;
}

static void unnest_explain(const ExOp *op, const char *const *in_names, char *buf, size_t cap)
{
    const UnnestSpec *s = op->spec;
    ex_col_to_string(in_names, s->list_col, buf, cap);
}

static int unnest_passes(const ExOp *op, int col)
{
    const UnnestSpec *s = op->spec;
    return col == s->list_col ? -1 : col;
}

static const ExOpVt UNNEST_VT = {
    .name = "UNNEST",
    .local_init = unnest_local_init,
    .local_fini = unnest_local_fini,
    .push = unnest_push,
    .explain = unnest_explain,
    .passes = unnest_passes,
    .row_independent = true,
};

ExOp *ex_unnest_new(CmArena *a, int list_col, int n_cols, const CmType *types, CmErr *err)
{
    UnnestSpec *s = cm_arena_zalloc(a, sizeof *s);
    CmType *out = cm_arena_alloc(a, sizeof(CmType) * (size_t)n_cols);
    if (s == NULL || out == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    memcpy(out, types, sizeof(CmType) * (size_t)n_cols);
    out[list_col] = cm_type_elem(types[list_col]);
    s->list_col = list_col;
    ExOp *op = ex_op_new(a, &UNNEST_VT, s, n_cols, out);
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    return op;
}
