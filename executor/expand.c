/*
 * expand.c - the row expansion behind ROLLUP, CUBE and GROUPING SETS: each
 * input batch is emitted once per grouping set, as views of the input's
 * columns where the keys outside the set point at an all-NULL vector and the
 * set number column at a vector filled with that number.  Nothing is copied,
 * so k grouping sets cost k passes of the aggregate's hashing, not k scans.
 */
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "executor/ops.h"

typedef struct ExpandSpec {
    int n_sets;
    uint64_t *masks;
    int n_set_keys;
    int gid_col;
} ExpandSpec;

typedef struct ExpandLocal {
    int set;      /* next set to emit for the current input */
    CmVec *nulls; /* per key column: an all-NULL vector of its type */
    CmVec *gids;  /* per set: a BIGINT vector holding the set number */
    CmBatch out;  /* views */
    CmVec *own_cols;
} ExpandLocal;

static void expand_local_fini(ExOp *op, void *local)
{
    const ExpandSpec *s = op->spec;
    ExpandLocal *l = local;
    if (l == NULL) {
        return;
    }
    for (int k = 0; l->nulls != NULL && k < s->n_set_keys; k++) {
        cm_vec_fini(&l->nulls[k]);
    }
    for (int i = 0; l->gids != NULL && i < s->n_sets; i++) {
        cm_vec_fini(&l->gids[i]);
    }
    cm_free(l->nulls);
    cm_free(l->gids);
    cm_free(l->own_cols);
    cm_free(l);
}

static void *expand_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    const ExpandSpec *s = op->spec;
    ExpandLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL || (l->nulls = cm_calloc((size_t)s->n_set_keys + 1, sizeof(CmVec))) == NULL ||
        (l->gids = cm_calloc((size_t)s->n_sets, sizeof(CmVec))) == NULL ||
        (l->own_cols = cm_calloc((size_t)op->n_cols + 1, sizeof(CmVec))) == NULL) {
        expand_local_fini(op, l);
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    for (int k = 0; k < s->n_set_keys; k++) {
        if (cm_vec_init(&l->nulls[k], op->types[k], err) != CM_OK) {
            expand_local_fini(op, l);
            return NULL;
        }
        memset(l->nulls[k].data_buf, 0, cm_type_width(op->types[k]) * CM_BATCH_CAP);
        memset(l->nulls[k].validity_buf, 0, sizeof l->nulls[k].validity_buf);
        l->nulls[k].validity = l->nulls[k].validity_buf;
    }
    for (int i = 0; i < s->n_sets; i++) {
        if (cm_vec_init(&l->gids[i], cm_type_make(CM_T_INT64), err) != CM_OK) {
            expand_local_fini(op, l);
            return NULL;
        }
        for (int r = 0; r < CM_BATCH_CAP; r++) {
            ((int64_t *)l->gids[i].data)[r] = i;
        }
    }
    l->out.cols = l->own_cols;
    l->out.n_cols = op->n_cols;
    return l;
}

static ExOpResult expand_push(ExOp *op, void *local, const CmBatch *in, const CmBatch **out,
                              CmErr *err)
{
    const ExpandSpec *s = op->spec;
    ExpandLocal *l = local;
    int set = l->set;
    for (int c = 0; c < op->n_cols; c++) {
        const CmVec *src = &in->cols[c];
        if (c == s->gid_col) {
            src = &l->gids[set];
        } else if (c < s->n_set_keys && !((s->masks[set] >> c) & 1)) {
            src = &l->nulls[c];
        }
        cm_vec_reference(&l->out.cols[c], src);
    }
    l->out.n_rows = in->n_rows;
    l->out.sel = in->sel;
    *out = &l->out;
    l->set = (set + 1) % s->n_sets;
    return l->set == 0 ? EX_NEED_INPUT : EX_HAVE_MORE;
}

static void expand_explain(const ExOp *op, const char *const *in_names, char *buf, size_t cap)
{
    const ExpandSpec *s = op->spec;
    snprintf(buf, cap, "%d grouping sets of %d keys", s->n_sets, s->n_set_keys);
}

static const ExOpVt EXPAND_VT = {
    .name = "EXPAND",
    .local_init = expand_local_init,
    .local_fini = expand_local_fini,
    .push = expand_push,
    .explain = expand_explain,
    .row_independent = true,
};

ExOp *ex_expand_new(CmArena *a, int n_sets, const uint64_t *masks, int n_set_keys, int gid_col,
                    int n_cols, const CmType *types, CmErr *err)
{
    ExpandSpec *s = cm_arena_zalloc(a, sizeof *s);
    uint64_t *m = cm_arena_alloc(a, sizeof(uint64_t) * (size_t)(n_sets + 1));
    ExOp *op = s && m ? ex_op_new(a, &EXPAND_VT, s, n_cols, types) : NULL;
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    memcpy(m, masks, sizeof(uint64_t) * (size_t)n_sets);
    s->n_sets = n_sets;
    s->masks = m;
    s->n_set_keys = n_set_keys;
    s->gid_col = gid_col;
    return op;
}
