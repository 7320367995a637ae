/*
 * result_sink.c - collects a query's rows into an ExResult.  Each task
 * buffers its rows locally and hands them over at combine; finalize appends
 * them in task order, so a scan's rows come out in table order whatever the
 * number of threads (as users of sqlite3 and DuckDB expect).
 */
#include <stdio.h>

#include "common/alloc.h"
#include "executor/ops.h"

typedef struct ResultLocal {
    ExResult *rows; /* this task's rows */
    int task_idx;
} ResultLocal;

typedef struct ResultGlobal {
    int n_tasks;
    ExResult **by_task; /* guarded by op->lock until finalize */
    CmMemRes mem;       /* every task's rows, while the query runs */
} ResultGlobal;

static void result_global_fini(ExOp *op)
{
    ResultGlobal *g = op->global;
    for (int i = 0; g->by_task != NULL && i < g->n_tasks; i++) {
        ex_result_free(g->by_task[i]);
    }
    cm_free(g->by_task);
    cm_mem_res_fini(&g->mem);
    cm_free(g);
}

static CmStatus result_global_init(ExOp *op, ExQuery *q, CmErr *err)
{
    ResultGlobal *g = cm_calloc(1, sizeof(ResultGlobal));
    if (g == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    ex_op_res_init(op, q, &g->mem, "query result");
    op->global = g;
    return CM_OK;
}

static void result_local_fini(ExOp *op, void *local);

static void *result_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    ResultLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    l->rows = ex_result_new(op->n_cols, op->types, err);
    if (l->rows == NULL) {
        cm_free(l);
        return NULL;
    }
    l->task_idx = task->task_idx;
    ResultGlobal *g = op->global;
    ex_result_set_mem(l->rows, &g->mem);
    cm_mutex_lock(&op->lock);
    if (g->by_task == NULL) {
        g->by_task = cm_calloc((size_t)task->n_tasks, sizeof(ExResult *));
        g->n_tasks = g->by_task ? task->n_tasks : 0;
    }
    cm_mutex_unlock(&op->lock);
    if (g->by_task == NULL) {
        result_local_fini(op, l);
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    return l;
}

static void result_local_fini(ExOp *op, void *local)
{
    ResultLocal *l = local;
    if (l != NULL) {
        ex_result_free(l->rows);
        cm_free(l);
    }
}

static CmStatus result_sink(ExOp *op, void *local, const CmBatch *in, CmErr *err)
{
    ResultLocal *l = local;
    return ex_result_append(l->rows, in, err);
}

static CmStatus result_combine(ExOp *op, void *local, CmErr *err)
{
    ResultLocal *l = local;
    ResultGlobal *g = op->global;
    cm_mutex_lock(&op->lock);
    g->by_task[l->task_idx] = l->rows;
    l->rows = NULL;
    cm_mutex_unlock(&op->lock);
    return CM_OK;
}

static CmStatus result_finalize(ExOp *op, ExQuery *q, CmErr *err)
{
    ResultGlobal *g = op->global;
    ExResult *dst = op->spec;
    for (int t = 0; t < g->n_tasks && err->code == CM_OK; t++) {
        if (g->by_task[t] != NULL) {
            ex_result_move(dst, g->by_task[t], err);
        }
    }
    return err->code;
}

static const ExOpVt RESULT_VT = {
    .name = "RESULT",
    .global_init = result_global_init,
    .global_fini = result_global_fini,
    .finalize = result_finalize,
    .local_init = result_local_init,
    .local_fini = result_local_fini,
    .sink = result_sink,
    .combine = result_combine,
    .row_independent = true,
};

ExOp *ex_result_sink_new(CmArena *a, ExResult *result, int n_cols, const CmType *types,
                         CmErr *err)
{
    ExOp *op = ex_op_new(a, &RESULT_VT, result, n_cols, types);
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    return op;
}
