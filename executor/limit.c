/*
 * limit.c - LIMIT/OFFSET over the rows of one task.  The planner puts the
 * final LIMIT in a single-task stage, so per-task counting is the query's.
 * Skipped and kept rows are chosen by narrowing the selection.
 */
#include <stdio.h>

#include "common/alloc.h"
#include "executor/ops.h"

typedef struct LimitSpec {
    int64_t limit; /* -1: no limit */
    int64_t offset;
} LimitSpec;

typedef struct LimitLocal {
    int64_t seen; /* rows passed by so far */
    CmBatch out;
    CmVec *own_cols;
} LimitLocal;

static void *limit_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    LimitLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL || cm_batch_init(&l->out, 0, NULL, err) != CM_OK) {
        cm_free(l);
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    l->own_cols = l->out.cols;
    return l;
}

static void limit_local_fini(ExOp *op, void *local)
{
    LimitLocal *l = local;
    if (l != NULL) {
        l->out.cols = l->own_cols;
        l->out.n_cols = 0;
        cm_batch_fini(&l->out);
        cm_free(l);
    }
}

static ExOpResult limit_push(ExOp *op, void *local, const CmBatch *in, const CmBatch **out,
                             CmErr *err)
{
    LimitSpec *s = op->spec;
    LimitLocal *l = local;
    int64_t end = s->limit < 0 ? INT64_MAX : s->offset + s->limit;
    int n = 0;
    for (int i = 0; i < in->n_rows && l->seen < end; i++, l->seen++) {
        if (l->seen >= s->offset) {
            l->out.sel_buf[n++] = cm_batch_pos(in, i);
        }
    }
    l->out.cols = in->cols;
    l->out.n_cols = in->n_cols;
    l->out.n_rows = n;
    l->out.sel = l->out.sel_buf;
    *out = n > 0 ? &l->out : NULL;
    return l->seen >= end ? EX_DONE : EX_NEED_INPUT;
}

static void limit_explain(const ExOp *op, const char *const *in_names, char *buf, size_t cap)
{
    const LimitSpec *s = op->spec;
    snprintf(buf, cap, "limit %lld offset %lld", (long long)s->limit, (long long)s->offset);
}

static const ExOpVt LIMIT_VT = {
    .name = "LIMIT",
    .local_init = limit_local_init,
    .local_fini = limit_local_fini,
    .push = limit_push,
    .explain = limit_explain,
};

ExOp *ex_limit_new(CmArena *a, int64_t limit, int64_t offset, int n_cols, const CmType *types,
                   CmErr *err)
{
    LimitSpec *s = cm_arena_zalloc(a, sizeof *s);
    ExOp *op = s ? ex_op_new(a, &LIMIT_VT, s, n_cols, types) : NULL;
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    s->limit = limit;
    s->offset = offset;
    return op;
}
