/*
 * result_sink.c - collects a query's rows into an ExResult.  Each task
 * buffers its rows locally and hands them over at combine; finalize appends
 * them in task order, so a scan's rows come out in table order whatever the
 * number of threads (as users of sqlite3 and DuckDB expect).
 *
 * A streamed result (ex_result_set_stream: CTAS, INSERT) keeps that order
 * without holding the rows: the lowest task not finished (the head) hands its
 * rows on as they come; the others keep theirs, reserved as execution memory
 * and spilled when the manager refuses, until every task before them is done.
 * With ex_result_set_stream_waiting, a task refused memory waits for its
 * turn instead of spilling.
 * A result in block mode (ex_result_set_blocks: a query's final rows) makes
 * each task keep its rows in blocks of the tiered store on the result's
 * reservation, which memory pressure moves to disk.
 */
#include <stdio.h>

#include "common/alloc.h"
#include "executor/ops.h"
#include "shuffle/spill.h"

/* A task's rows waiting for the tasks before it (streamed results): the first
 * ones in memory, the rest, once memory was refused, in a spill file. */
typedef struct Pending {
    ExResult *rows;
    ShSpill *spill; /* or NULL */
    CmMemRes mem;   /* what `rows` holds */
} Pending;

typedef struct ResultLocal {
    ExResult *rows; /* this task's rows */
    Pending *pend;  /* streamed results: this task's waiting rows; owned */
    int task_idx;
} ResultLocal;

typedef struct ResultGlobal {
    int n_tasks;
    ExResult **by_task; /* guarded by op->lock until finalize */
    CmMemRes mem;       /* every task's rows, while the query runs */
    /* streamed results */
    ExResultStreamFn stream;
    void *stream_ctx;
    Pending **pend;  /* by task, once done; guarded by op->lock */
    bool *done;      /* by task; guarded by op->lock */
    atomic_int head; /* the lowest task not done; written under op->lock */
    bool is_waiting; /* ex_result_stream_waiting: a later task waits, never spills */
    CmCond turn;     /* broadcast when head moves (with op->lock) */
    ExQuery *q;      /* for a waiting task to see the query stop */
    char temp_dir[256];
    int64_t max_temp;
} ResultGlobal;

static void pending_free(ExOp *op, Pending *p)
{
    if (p != NULL) {
        ex_result_free(p->rows);
        if (p->spill != NULL) {
            ex_op_count_spill(op, sh_spill_bytes(p->spill));
        }
        sh_spill_free(p->spill);
        cm_mem_res_fini(&p->mem);
        cm_free(p);
    }
}

/* Hands p's rows on, in order, and empties p. */
static CmStatus pending_flush(ExOp *op, Pending *p, CmErr *err)
{
    ResultGlobal *g = op->global;
    if (ex_result_n_batches(p->rows) == 0 && p->spill == NULL) {
        return CM_OK;
    }
    for (int i = 0; i < ex_result_n_batches(p->rows) && err->code == CM_OK; i++) {
        g->stream(g->stream_ctx, ex_result_batch(p->rows, i), err);
    }
    if (err->code == CM_OK && p->spill != NULL) {
        CmBatch b;
        if (cm_batch_init(&b, op->n_cols, op->types, err) != CM_OK) {
            return err->code;
        }
        bool eof = false;
        if (sh_spill_rewind(p->spill, err) == CM_OK) {
            while (sh_spill_read(p->spill, &b, &eof, err) == CM_OK && !eof) {
                if (g->stream(g->stream_ctx, &b, err) != CM_OK) {
                    break;
                }
            }
        }
        cm_batch_fini(&b);
        ex_op_count_spill(op, sh_spill_bytes(p->spill));
        sh_spill_free(p->spill);
        p->spill = NULL;
    }
    ExResult *empty = err->code == CM_OK ? ex_result_new(op->n_cols, op->types, err) : NULL;
    if (empty != NULL) {
        ex_result_free(p->rows);
        p->rows = empty;
        cm_mem_shrink(&p->mem, p->mem.held);
    }
    return err->code;
}

/* Bytes the active rows of b take once copied into a result.  A NULL's
 * value is not read: it may be anything (a NULL constant's string length
 * is), and counting it once made a query whose pruned columns are NULL
 * constants spill every streamed row (TPC-DS q01 at SF 10: 25 GB counted
 * for a batch of 2048 rows). */
static int64_t batch_bytes(const CmBatch *b)
{
    int64_t bytes = 0;
    for (int c = 0; c < b->n_cols; c++) {
        const CmVec *v = &b->cols[c];
        bytes += (int64_t)cm_type_width(v->type) * b->n_rows;
        if (v->type.id == CM_T_VARCHAR) {
            for (int i = 0; i < b->n_rows; i++) {
                uint32_t p = v->kind == CM_VEC_CONST ? 0 : cm_batch_pos(b, i);
                bytes += cm_vec_is_null(v, p) ? 0 : ((const CmStr *)v->data)[p].len;
            }
        } else if (v->type.id == CM_T_LIST) {
            size_t w = cm_type_width(cm_type_elem(v->type));
            for (int i = 0; i < b->n_rows; i++) {
                uint32_t p = v->kind == CM_VEC_CONST ? 0 : cm_batch_pos(b, i);
                if (cm_vec_is_null(v, p)) {
                    continue;
                }
                const CmList *l = &((const CmList *)v->data)[p];
                bytes += (int64_t)cm_list_bytes(l->len, w, l->has_nulls);
            }
        }
    }
    return bytes;
}

/* Keeps b's rows in p until the task's turn: in memory while the manager
 * grants it, then (and from then on, to keep the order) in a spill file. */
static CmStatus pending_add(ExOp *op, Pending *p, const CmBatch *b, CmErr *err)
{
    ResultGlobal *g = op->global;
    if (p->spill == NULL && cm_mem_grow(&p->mem, batch_bytes(b))) {
        return ex_result_append(p->rows, b, err);
    }
    if (p->spill == NULL && (p->spill = sh_spill_new(g->temp_dir, g->max_temp, err)) == NULL) {
        return err->code;
    }
    return sh_spill_append(p->spill, b, err);
}

static void result_global_fini(ExOp *op)
{
    ResultGlobal *g = op->global;
    for (int i = 0; g->by_task != NULL && i < g->n_tasks; i++) {
        ex_result_free(g->by_task[i]);
    }
    cm_free(g->by_task);
    for (int i = 0; g->pend != NULL && i < g->n_tasks; i++) {
        pending_free(op, g->pend[i]);
    }
    cm_free(g->pend);
    cm_free(g->done);
    cm_mem_res_fini(&g->mem);
    cm_cond_fini(&g->turn);
    cm_free(g);
}

static CmStatus result_global_init(ExOp *op, ExQuery *q, CmErr *err)
{
    ResultGlobal *g = cm_calloc(1, sizeof(ResultGlobal));
    if (g == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    ex_op_res_init(op, &g->mem, "query result");
    g->stream = ex_result_stream(op->spec, &g->stream_ctx);
    g->is_waiting = ex_result_stream_waiting(op->spec);
    g->q = q;
    cm_cond_init(&g->turn);
    snprintf(g->temp_dir, sizeof g->temp_dir, "%s", q->config.temp_directory);
    g->max_temp = q->config.max_temp_directory_size;
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
    if (g->stream != NULL) {
        if ((l->pend = cm_calloc(1, sizeof(Pending))) == NULL) {
            result_local_fini(op, l);
            cm_err_set(err, CM_OOM, -1, "out of memory");
            return NULL;
        }
        l->pend->rows = l->rows;
        l->rows = NULL;
        ex_op_res_init(op, &l->pend->mem, "rows waiting to be appended");
    } else if (ex_result_block_res(op->spec) != NULL) {
        /* block mode: the rows are storage, evictable, reserved by the blocks */
        if (ex_result_set_blocks(l->rows, ex_result_block_res(op->spec), err) != CM_OK) {
            result_local_fini(op, l);
            return NULL;
        }
    } else {
        ex_result_set_mem(l->rows, &g->mem);
    }
    cm_mutex_lock(&op->lock);
    if (g->by_task == NULL) {
        g->by_task = cm_calloc((size_t)task->n_tasks, sizeof(ExResult *));
        g->pend = cm_calloc((size_t)task->n_tasks, sizeof(Pending *));
        g->done = cm_calloc((size_t)task->n_tasks, sizeof(bool));
        g->n_tasks = task->n_tasks;
        if (g->by_task == NULL || g->pend == NULL || g->done == NULL) {
            cm_free(g->by_task);
            g->by_task = NULL;
            g->n_tasks = 0;
        }
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
        pending_free(op, l->pend);
        cm_free(l);
    }
}

/* How often a task waiting for its turn looks whether the query stopped. */
#define TURN_POLL_MS 20

/* Waits until task_idx is the head (or the query stops). */
static CmStatus wait_for_turn(ExOp *op, int task_idx, CmErr *err)
{
    ResultGlobal *g = op->global;
    cm_mutex_lock(&op->lock);
    while (atomic_load(&g->head) != task_idx && ex_query_check(g->q, err) == CM_OK) {
        cm_cond_timedwait(&g->turn, &op->lock, TURN_POLL_MS);
    }
    cm_mutex_unlock(&op->lock);
    return err->code;
}

static CmStatus result_sink(ExOp *op, void *local, const CmBatch *in, CmErr *err)
{
    ResultLocal *l = local;
    ResultGlobal *g = op->global;
    if (g->stream == NULL) {
        return ex_result_append(l->rows, in, err);
    }
    if (atomic_load(&g->head) != l->task_idx) {
        if (!g->is_waiting) {
            return pending_add(op, l->pend, in, err);
        }
        if (cm_mem_grow(&l->pend->mem, batch_bytes(in))) {
            return ex_result_append(l->pend->rows, in, err);
        }
        if (wait_for_turn(op, l->task_idx, err) != CM_OK) {
            return err->code;
        }
    }
    /* The head: what it kept before its turn goes first. */
    cm_mutex_lock(&op->lock);
    if (pending_flush(op, l->pend, err) == CM_OK) {
        g->stream(g->stream_ctx, in, err);
    }
    cm_mutex_unlock(&op->lock);
    return err->code;
}

/* Hands on the rows of the done tasks from the head on, in task order, and
 * moves the head past them.  Under op->lock. */
static CmStatus release_done(ExOp *op, CmErr *err)
{
    ResultGlobal *g = op->global;
    int head = atomic_load(&g->head);
    while (head < g->n_tasks && g->done[head] && err->code == CM_OK) {
        if (g->pend[head] != NULL && pending_flush(op, g->pend[head], err) == CM_OK) {
            pending_free(op, g->pend[head]);
            g->pend[head] = NULL;
        }
        if (err->code == CM_OK) {
            atomic_store(&g->head, ++head);
            cm_cond_broadcast(&g->turn);
        }
    }
    return err->code;
}

static CmStatus result_combine(ExOp *op, void *local, CmErr *err)
{
    ResultLocal *l = local;
    ResultGlobal *g = op->global;
    cm_mutex_lock(&op->lock);
    if (g->stream != NULL) {
        g->pend[l->task_idx] = l->pend;
        l->pend = NULL;
        g->done[l->task_idx] = true;
        release_done(op, err);
    } else {
        g->by_task[l->task_idx] = l->rows;
        l->rows = NULL;
    }
    cm_mutex_unlock(&op->lock);
    return err->code;
}

static CmStatus result_finalize(ExOp *op, ExQuery *q, CmErr *err)
{
    ResultGlobal *g = op->global;
    ExResult *dst = op->spec;
    if (g->stream != NULL) {
        cm_mutex_lock(&op->lock);
        release_done(op, err);
        cm_mutex_unlock(&op->lock);
        return err->code;
    }
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

ExOp *ex_result_sink_new(CmArena *a, ExResult *result, int n_cols, const CmType *types, CmErr *err)
{
    ExOp *op = ex_op_new(a, &RESULT_VT, result, n_cols, types);
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    return op;
}
