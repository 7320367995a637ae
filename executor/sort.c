/*
 * sort.c - ORDER BY: hands every row of its task to an external sorter
 * (sort_run.h) and emits them in order at the end of input.
 *
 * Within memory_limit the rows are sorted in memory as 8-byte references;
 * past it the sorter writes sorted runs to spill files and merges them.  Ties
 * keep input order either way, so the result is deterministic.  With a limit
 * only the first limit rows are emitted (top-N selection in memory; runs cut
 * at limit rows when spilling).
 */
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "executor/ops.h"
#include "executor/sort_run.h"

typedef struct SortSpec {
    int n_keys;
    ExSortKey *keys;
    int64_t limit; /* -1: all rows */
} SortSpec;

typedef struct SortLocal {
    ExSorter *sorter; /* owned */
    bool is_sorted;   /* ex_sorter_finish was called */
    CmBatch out;
} SortLocal;

static void sort_local_fini(ExOp *op, void *local)
{
    SortLocal *l = local;
    if (l != NULL) {
        ex_sorter_free(l->sorter);
        cm_batch_fini(&l->out);
        cm_free(l);
    }
}

static void *sort_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    const SortSpec *s = op->spec;
    SortLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    l->sorter = ex_sorter_new(op, task->query, "ORDER BY", op->n_cols, op->types, s->n_keys,
                              s->keys, s->limit, err);
    if (l->sorter == NULL || cm_batch_init(&l->out, op->n_cols, op->types, err) != CM_OK) {
        sort_local_fini(op, l);
        return NULL;
    }
    /* A task alone in its stage (after a gather) sorts on every worker: the
     * others have nothing else to do meanwhile. */
    if (task->n_tasks == 1 && task->query != NULL) {
        ex_sorter_set_threads(l->sorter, (int)task->query->config.threads);
    }
    return l;
}

static ExOpResult sort_push(ExOp *op, void *local, const CmBatch *in, const CmBatch **out,
                            CmErr *err)
{
    SortLocal *l = local;
    ex_sorter_add(l->sorter, in, err);
    return EX_NEED_INPUT;
}

static ExOpResult sort_flush(ExOp *op, void *local, const CmBatch **out, CmErr *err)
{
    SortLocal *l = local;
    if (!l->is_sorted) {
        l->is_sorted = true;
        if (ex_sorter_finish(l->sorter, err) != CM_OK) {
            return EX_DONE;
        }
    }
    bool has_more = false;
    if (ex_sorter_next(l->sorter, &l->out, &has_more, err) != CM_OK) {
        return EX_DONE;
    }
    *out = &l->out;
    return has_more ? EX_HAVE_MORE : EX_DONE;
}

static void sort_explain(const ExOp *op, const char *const *in_names, char *buf, size_t cap)
{
    const SortSpec *s = op->spec;
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < s->n_keys && n + 24 < cap; k++) {
        n += (size_t)snprintf(buf + n, cap - n, "%s", k ? ", " : "");
        n += ex_col_to_string(in_names, s->keys[k].col, buf + n, cap - n);
        n += (size_t)snprintf(buf + n, cap - n, " %s%s", s->keys[k].desc ? "DESC" : "ASC",
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
