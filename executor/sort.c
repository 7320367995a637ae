/*
 * sort.c - ORDER BY: buffers every row of its task, sorts row references on
 * the keys at the end of input, and emits the rows in order.
 *
 * Rows are copied into an ExResult (compacted batches owning their strings);
 * the sort permutes 8-byte references, never rows.  Ties keep input order, so
 * the result is deterministic.  With a limit only the first limit rows are
 * emitted (a bounded top-N heap is the planned improvement, see docs/).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "executor/ops.h"

typedef struct SortSpec {
    int n_keys;
    ExSortKey *keys;
    int64_t limit; /* -1: all rows */
} SortSpec;

typedef struct RowRef {
    uint32_t batch;
    uint32_t row;
} RowRef;

typedef struct SortLocal {
    ExResult *rows;
    const CmBatch **batches; /* rows' batches by index, for the comparator; owned */
    RowRef *order;   /* after the sort */
    int64_t n_order, next;
    CmBatch out;
} SortLocal;

typedef struct SortCtx {
    const SortSpec *spec;
    const CmBatch **batches; /* the buffered batches, by index */
} SortCtx;

static int compare_cell(const CmVec *a, uint32_t pa, const CmVec *b, uint32_t pb)
{
    switch ((CmTypeId)a->type.id) {
    case CM_T_NULL:
    case CM_T_BOOL: {
        uint8_t x = ((const uint8_t *)a->data)[pa], y = ((const uint8_t *)b->data)[pb];
        return (x > y) - (x < y);
    }
    case CM_T_INT32:
    case CM_T_DATE: {
        int32_t x = ((const int32_t *)a->data)[pa], y = ((const int32_t *)b->data)[pb];
        return (x > y) - (x < y);
    }
    case CM_T_INT64:
    case CM_T_TIME:
    case CM_T_DECIMAL: {
        int64_t x = ((const int64_t *)a->data)[pa], y = ((const int64_t *)b->data)[pb];
        return (x > y) - (x < y);
    }
    case CM_T_DOUBLE: {
        /* NaN sorts after every number (PostgreSQL), so the order is total. */
        double x = ((const double *)a->data)[pa], y = ((const double *)b->data)[pb];
        if (isnan(x) || isnan(y)) {
            return isnan(x) - isnan(y);
        }
        return (x > y) - (x < y);
    }
    case CM_T_VARCHAR:
        return cm_str_cmp(&((const CmStr *)a->data)[pa], &((const CmStr *)b->data)[pb]);
    }
    return 0;
}

static int compare_refs(const void *x, const void *y, void *arg)
{
    const SortCtx *ctx = arg;
    const RowRef *ra = x, *rb = y;
    const CmBatch *ba = ctx->batches[ra->batch], *bb = ctx->batches[rb->batch];
    for (int k = 0; k < ctx->spec->n_keys; k++) {
        const ExSortKey *key = &ctx->spec->keys[k];
        const CmVec *va = &ba->cols[key->col], *vb = &bb->cols[key->col];
        bool na = cm_vec_is_null(va, ra->row), nb = cm_vec_is_null(vb, rb->row);
        if (na || nb) {
            if (na && nb) {
                continue;
            }
            return (na ? -1 : 1) * (key->nulls_first ? 1 : -1);
        }
        int c = compare_cell(va, ra->row, vb, rb->row);
        if (c != 0) {
            return key->desc ? -c : c;
        }
    }
    if (ra->batch != rb->batch) {
        return ra->batch < rb->batch ? -1 : 1;
    }
    return (ra->row > rb->row) - (ra->row < rb->row);
}

static void sort_local_fini(ExOp *op, void *local)
{
    SortLocal *l = local;
    if (l != NULL) {
        ex_result_free(l->rows);
        cm_free(l->batches);
        cm_free(l->order);
        cm_batch_fini(&l->out);
        cm_free(l);
    }
}

static void *sort_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    SortLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    l->rows = ex_result_new(op->n_cols, op->types, err);
    if (l->rows == NULL || cm_batch_init(&l->out, op->n_cols, op->types, err) != CM_OK) {
        sort_local_fini(op, l);
        return NULL;
    }
    l->n_order = -1;
    return l;
}

static ExOpResult sort_push(ExOp *op, void *local, const CmBatch *in, const CmBatch **out,
                            CmErr *err)
{
    SortLocal *l = local;
    ex_result_append(l->rows, in, err);
    return EX_NEED_INPUT;
}

/* Moves heap[i] down to its place in a max-heap of k references. */
static void sift_down(RowRef *heap, int64_t k, int64_t i, SortCtx *ctx)
{
    for (;;) {
        int64_t big = i, l = 2 * i + 1, r = l + 1;
        if (l < k && compare_refs(&heap[l], &heap[big], ctx) > 0) {
            big = l;
        }
        if (r < k && compare_refs(&heap[r], &heap[big], ctx) > 0) {
            big = r;
        }
        if (big == i) {
            return;
        }
        RowRef t = heap[i];
        heap[i] = heap[big];
        heap[big] = t;
        i = big;
    }
}

/* Top-N: the k smallest references kept in a max-heap, O(n log k); they are
 * then sorted.  The comparison is a total order, so ties keep input order. */
static int64_t select_top(RowRef *refs, int64_t n, int64_t k, SortCtx *ctx)
{
    for (int64_t i = k / 2 - 1; i >= 0; i--) {
        sift_down(refs, k, i, ctx);
    }
    for (int64_t i = k; i < n; i++) {
        if (compare_refs(&refs[i], &refs[0], ctx) < 0) {
            refs[0] = refs[i];
            sift_down(refs, k, 0, ctx);
        }
    }
    return k;
}

static CmStatus do_sort(const SortSpec *s, SortLocal *l, CmErr *err)
{
    int64_t n = ex_result_n_rows(l->rows);
    int n_batches = ex_result_n_batches(l->rows);
    l->order = cm_malloc(sizeof(RowRef) * (size_t)(n ? n : 1));
    l->batches = cm_malloc(sizeof(CmBatch *) * (size_t)(n_batches ? n_batches : 1));
    if (l->order == NULL || l->batches == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory sorting %lld rows", (long long)n);
    }
    for (int b = 0; b < n_batches; b++) {
        l->batches[b] = ex_result_batch(l->rows, b);
    }
    int64_t at = 0;
    for (int b = 0; b < ex_result_n_batches(l->rows); b++) {
        const CmBatch *batch = ex_result_batch(l->rows, b);
        for (int r = 0; r < batch->n_rows; r++) {
            l->order[at].batch = (uint32_t)b;
            l->order[at].row = (uint32_t)r;
            at++;
        }
    }
    SortCtx ctx = {.spec = s, .batches = l->batches};
    int64_t keep = n;
    if (s->limit >= 0 && s->limit < n / 4) {
        keep = s->limit > 0 ? select_top(l->order, n, s->limit, &ctx) : 0;
    }
    qsort_r(l->order, (size_t)keep, sizeof(RowRef), compare_refs, &ctx);
    l->n_order = s->limit >= 0 && s->limit < keep ? s->limit : keep;
    return CM_OK;
}

static ExOpResult sort_flush(ExOp *op, void *local, const CmBatch **out, CmErr *err)
{
    const SortSpec *s = op->spec;
    SortLocal *l = local;
    if (l->n_order < 0 && do_sort(s, l, err) != CM_OK) {
        return EX_DONE;
    }
    cm_batch_reset(&l->out);
    while (l->next < l->n_order && l->out.n_rows < CM_BATCH_CAP) {
        const RowRef *ref = &l->order[l->next++];
        const CmBatch *src = ex_result_batch(l->rows, (int)ref->batch);
        if (cm_batch_append_row(&l->out, src, (int)ref->row, false, err) != CM_OK) {
            return EX_DONE;
        }
    }
    *out = &l->out;
    return l->next < l->n_order ? EX_HAVE_MORE : EX_DONE;
}

static void sort_explain(const ExOp *op, char *buf, size_t cap)
{
    const SortSpec *s = op->spec;
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < s->n_keys && n + 24 < cap; k++) {
        n += (size_t)snprintf(buf + n, cap - n, "%s#%d %s%s", k ? ", " : "", s->keys[k].col,
                              s->keys[k].desc ? "DESC" : "ASC",
                              s->keys[k].nulls_first ? " NULLS FIRST" : "");
    }
    if (s->limit >= 0 && n + 24 < cap) {
        snprintf(buf + n, cap - n, ", top %lld", (long long)s->limit);
    }
}

static const ExOpVt SORT_VT = {
    .name = "ORDER_BY",
    .local_init = sort_local_init,
    .local_fini = sort_local_fini,
    .push = sort_push,
    .flush = sort_flush,
    .explain = sort_explain,
};

ExOp *ex_sort_new(CmArena *a, int n_keys, const ExSortKey *keys, int n_cols, const CmType *types,
                  int64_t limit, CmErr *err)
{
    SortSpec *s = cm_arena_zalloc(a, sizeof *s);
    ExSortKey *k = cm_arena_alloc(a, sizeof(ExSortKey) * (size_t)(n_keys ? n_keys : 1));
    ExOp *op = s && k ? ex_op_new(a, &SORT_VT, s, n_cols, types) : NULL;
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    if (n_keys > 0) {
        memcpy(k, keys, sizeof(ExSortKey) * (size_t)n_keys);
    }
    s->n_keys = n_keys;
    s->keys = k;
    s->limit = limit;
    return op;
}
