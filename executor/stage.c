/*
 * stage.c - runs a stage's pipeline as tasks on the worker pool.
 *
 * A task pulls batches from its share of the source and pushes each through the
 * streaming operators into the sink (depth first, so at most one batch per
 * operator is in flight).  When the source is exhausted, operators are flushed
 * in order, each flush's output going through the operators after it.  An
 * operator that answers EX_DONE stops the pipeline above it (LIMIT).
 * Invariant: every local state that was created is finalized, on every path:
 * at the end of its task, or (kept for the next task on the thread, see
 * ExOpVt.local_keep) when the stage's tasks are done.
 */
#include "executor/stage.h"

#include <string.h>

#include "common/alloc.h"
#include "executor/progress.h"

typedef struct TaskRun {
    ExStage *stage;
    const ExTask *task;
    void **locals; /* [0] source, [1..n_ops] ops, [n_ops+1] sink */
    int stop_at;   /* ops before this index are finished (EX_DONE seen) */
} TaskRun;

ExOp *ex_op_new(CmArena *arena, const ExOpVt *vt, void *spec, int n_cols, const CmType *types)
{
    ExOp *op = cm_arena_zalloc(arena, sizeof *op);
    if (op == NULL) {
        return NULL;
    }
    op->vt = vt;
    op->spec = spec;
    op->n_cols = n_cols;
    op->types = cm_arena_alloc(arena, sizeof(CmType) * (size_t)(n_cols ? n_cols : 1));
    if (op->types == NULL) {
        return NULL;
    }
    memcpy(op->types, types, sizeof(CmType) * (size_t)n_cols);
    cm_mutex_init(&op->lock);
    return op;
}

void ex_op_res_init(ExOp *op, CmMemRes *r, const char *what)
{
    cm_mem_res_init(r, CM_MEM_EXECUTION, what, &op->mem);
}

void ex_op_count_spill(ExOp *op, int64_t bytes)
{
    atomic_fetch_add(&op->spilled_bytes, bytes);
    atomic_fetch_add(&op->spill_files, 1);
}

static ExOp *op_at(ExStage *s, int i)
{
    return i == 0 ? s->source : i <= s->n_ops ? s->ops[i - 1] : s->sink;
}

static int n_slots(const ExStage *s)
{
    return s->n_ops + 2;
}

/* Sends `batch` into pipeline position i (1..n_ops are ops, n_ops+1 the sink). */
static CmStatus process(TaskRun *run, int i, const CmBatch *batch, CmErr *err)
{
    ExStage *s = run->stage;
    if (batch == NULL || batch->n_rows == 0) {
        return CM_OK;
    }
    if (i == s->n_ops + 1) {
        atomic_fetch_add(&s->sink->rows_out, batch->n_rows);
        return s->sink->vt->sink(s->sink, run->locals[i], batch, err);
    }
    ExOp *op = s->ops[i - 1];
    for (;;) {
        const CmBatch *out = NULL;
        ExOpResult r = op->vt->push(op, run->locals[i], batch, &out, err);
        if (err->code != CM_OK) {
            return err->code;
        }
        if (out != NULL && out->n_rows > 0) {
            atomic_fetch_add(&op->rows_out, out->n_rows);
            if (process(run, i + 1, out, err) != CM_OK) {
                return err->code;
            }
        }
        if (r == EX_DONE) {
            if (run->stop_at < i) {
                run->stop_at = i;
            }
            return CM_OK;
        }
        if (r == EX_NEED_INPUT) {
            return CM_OK;
        }
    }
}

static CmStatus flush_from(TaskRun *run, int first, CmErr *err)
{
    ExStage *s = run->stage;
    for (int i = first; i <= s->n_ops; i++) {
        ExOp *op = s->ops[i - 1];
        if (op->vt->flush == NULL) {
            continue;
        }
        ExOpResult r;
        do {
            const CmBatch *out = NULL;
            r = op->vt->flush(op, run->locals[i], &out, err);
            if (err->code != CM_OK) {
                return err->code;
            }
            if (out != NULL && out->n_rows > 0) {
                atomic_fetch_add(&op->rows_out, out->n_rows);
                if (process(run, i + 1, out, err) != CM_OK) {
                    return err->code;
                }
            }
        } while (r == EX_HAVE_MORE && ex_query_check(run->task->query, err) == CM_OK);
        if (err->code != CM_OK) {
            return err->code;
        }
    }
    return CM_OK;
}

CmStatus ex_query_check(ExQuery *q, CmErr *err)
{
    if (q->interrupt != NULL && atomic_load(q->interrupt)) {
        return cm_err_set(err, CM_CANCELLED, -1, "interrupted");
    }
    if (atomic_load(&q->cancelled)) {
        return cm_err_set(err, CM_CANCELLED, -1, "query cancelled");
    }
    return CM_OK;
}

static CmStatus drive(TaskRun *run, CmErr *err)
{
    ExStage *s = run->stage;
    ExQuery *q = run->task->query;
    for (;;) {
        if (ex_query_check(q, err) != CM_OK) {
            return err->code;
        }
        if (run->stop_at > 0) {
            break;
        }
        const CmBatch *out = NULL;
        ExOpResult r = s->source->vt->pull(s->source, run->locals[0], &out, err);
        if (err->code != CM_OK) {
            return err->code;
        }
        if (out != NULL && out->n_rows > 0) {
            atomic_fetch_add(&s->source->rows_out, out->n_rows);
            if (process(run, 1, out, err) != CM_OK) {
                return err->code;
            }
        }
        if (r == EX_DONE) {
            break;
        }
    }
    if (flush_from(run, run->stop_at + 1, err) != CM_OK) {
        return err->code;
    }
    if (s->sink->vt->combine != NULL) {
        return s->sink->vt->combine(s->sink, run->locals[s->n_ops + 1], err);
    }
    return CM_OK;
}

static void record_error(ExQuery *q, const CmErr *err)
{
    if (err->code == CM_OK) {
        return;
    }
    cm_mutex_lock(&q->lock);
    /* A cancellation is only an echo of the error that caused it. */
    if (err->code != CM_CANCELLED || q->err.code == CM_OK) {
        if (q->err.code == CM_OK || q->err.code == CM_CANCELLED) {
            q->err = *err;
        }
    }
    cm_mutex_unlock(&q->lock);
    atomic_store(&q->cancelled, true);
}

/* Bytes the stage's operators have spilled so far (all tasks). */
static int64_t stage_spilled(ExStage *s)
{
    int64_t n = 0;
    for (int i = 0; i < n_slots(s); i++) {
        n += atomic_load(&op_at(s, i)->spilled_bytes);
    }
    return n;
}

/* Room for n more task spans (driver thread, no task of the stage running).
 * Out of memory only loses the spans: the timeline shows fewer bars. */
static void reserve_spans(ExStage *s, ExQuery *q, int n)
{
    if (n <= 0 || q->arena == NULL) {
        return;
    }
    int used = atomic_load(&s->n_spans);
    used = used < s->span_cap ? used : s->span_cap;
    ExTaskSpan *spans = cm_arena_alloc(q->arena, sizeof(ExTaskSpan) * (size_t)(used + n));
    if (spans == NULL) {
        return;
    }
    if (used > 0) {
        memcpy(spans, s->spans, sizeof(ExTaskSpan) * (size_t)used);
    }
    s->spans = spans;
    s->span_cap = used + n;
    atomic_store(&s->n_spans, used);
}

typedef struct StageRun {
    ExStage *stage;
    ExQuery *query;
    const int *tasks; /* the task numbers to run (a re-run), or NULL for all */
    int n_run;        /* tasks in this run */
    atomic_int begun; /* tasks of this run started so far */
    /* Locals kept for the next task on the same worker: [worker * slots + op
     * slot], NULL where none (or kept == NULL: none at all). */
    void **kept;
    int n_workers;
} StageRun;

/* Where the run keeps op slot i's local for the task's worker, or NULL. */
static void **kept_slot(StageRun *sr, int i, const ExTask *task)
{
    return sr->kept != NULL && task->worker_id < sr->n_workers
               ? &sr->kept[(size_t)task->worker_id * (size_t)n_slots(sr->stage) + (size_t)i]
               : NULL;
}

/* The local of op slot i for a task on worker w: a kept one made ready for
 * the task, or a new one.  A kept one that cannot be reused is finished. */
static void *local_for(StageRun *sr, ExOp *op, int i, const ExTask *task, CmErr *err)
{
    void **kept = kept_slot(sr, i, task);
    if (kept != NULL && *kept != NULL) {
        void *local = *kept;
        *kept = NULL;
        if (op->vt->local_reuse(op, local, task, err) == CM_OK) {
            return local;
        }
        op->vt->local_fini(op, local);
        return NULL;
    }
    return op->vt->local_init(op, task, err);
}

/* Ends a task's local of op slot i: kept for the worker's next task when the
 * task succeeded, tasks are still to start and the op takes it back; else
 * finished. */
static void local_end(StageRun *sr, ExOp *op, int i, const ExTask *task, void *local, bool ok)
{
    void **kept = kept_slot(sr, i, task);
    if (ok && local != NULL && kept != NULL && *kept == NULL && op->vt->local_keep != NULL &&
        atomic_load(&sr->begun) < sr->n_run && !atomic_load(&sr->query->cancelled) &&
        op->vt->local_keep(op, local)) {
        *kept = local;
        return;
    }
    op->vt->local_fini(op, local);
}

/* Room for the locals a run keeps; none when there is no memory for it. */
static void kept_begin(StageRun *sr)
{
    sr->n_workers = cm_pool_size(sr->query->pool);
    sr->kept = cm_calloc((size_t)sr->n_workers * (size_t)n_slots(sr->stage), sizeof(void *));
}

/* Finishes the locals the run kept, once its tasks are done. */
static void kept_end(StageRun *sr)
{
    for (int w = 0; sr->kept != NULL && w < sr->n_workers; w++) {
        for (int i = 0; i < n_slots(sr->stage); i++) {
            void *local = sr->kept[(size_t)w * (size_t)n_slots(sr->stage) + (size_t)i];
            if (local != NULL) {
                ExOp *op = op_at(sr->stage, i);
                op->vt->local_fini(op, local);
            }
        }
    }
    cm_free(sr->kept);
    sr->kept = NULL;
}

static void task_main(void *arg, int task_idx, int worker_id)
{
    StageRun *sr = arg;
    if (sr->tasks != NULL) {
        task_idx = sr->tasks[task_idx];
    }
    atomic_fetch_add(&sr->begun, 1);
    ExStage *s = sr->stage;
    ExQuery *q = sr->query;
    long long start = cm_now_ns();
    CmErr err;
    cm_err_init(&err);
    ExTask task = {.query = q, .task_idx = task_idx, .n_tasks = s->n_tasks, .worker_id = worker_id};
    void *locals_buf[32];
    void **locals = locals_buf;
    int n = n_slots(s);
    if (n > 32) {
        locals = cm_calloc((size_t)n, sizeof(void *));
        if (locals == NULL) {
            cm_err_set(&err, CM_OOM, -1, "out of memory starting a task");
            record_error(q, &err);
            return;
        }
    }
    memset(locals, 0, sizeof(void *) * (size_t)n);
    TaskRun run = {.stage = s, .task = &task, .locals = locals, .stop_at = 0};
    int made = 0;
    for (; made < n && !atomic_load(&q->cancelled); made++) {
        ExOp *op = op_at(s, made);
        if (op->vt->local_init != NULL) {
            locals[made] = local_for(sr, op, made, &task, &err);
            if (err.code != CM_OK) {
                break;
            }
        }
    }
    if (err.code == CM_OK && made == n) {
        drive(&run, &err);
    }
    bool ok = err.code == CM_OK && made == n;
    for (int i = 0; i < made; i++) {
        ExOp *op = op_at(s, i);
        if (op->vt->local_fini != NULL) {
            local_end(sr, op, i, &task, locals[i], ok);
        }
    }
    if (made < n && locals[made] != NULL && op_at(s, made)->vt->local_fini != NULL) {
        op_at(s, made)->vt->local_fini(op_at(s, made), locals[made]);
    }
    if (locals != locals_buf) {
        cm_free(locals);
    }
    record_error(q, &err);
    long long end = cm_now_ns(), took = end - start;
    int slot = atomic_fetch_add(&s->n_spans, 1);
    if (slot < s->span_cap) {
        s->spans[slot] = (ExTaskSpan){start, end, task_idx, worker_id};
    }
    atomic_fetch_add(&s->task_sum_ns, took);
    long long max = atomic_load(&s->task_max_ns);
    while (took > max && !atomic_compare_exchange_weak(&s->task_max_ns, &max, took)) {
    }
    ex_progress_task_done(q->progress, stage_spilled(s));
}

CmStatus ex_stage_run(ExStage *stage, ExQuery *q, CmErr *err)
{
    long long start = cm_now_ns();
    int n = n_slots(stage);
    for (int i = 0; i < n; i++) {
        op_at(stage, i)->mem.parent = &q->mem;
    }
    for (int i = 0; i < n; i++) {
        ExOp *op = op_at(stage, i);
        if (op->vt->global_init != NULL && op->vt->global_init(op, q, err) != CM_OK) {
            return err->code;
        }
    }
    stage->n_tasks = stage->source->vt->n_tasks ? stage->source->vt->n_tasks(stage->source, q) : 1;
    if (q->progress != NULL) {
        ex_progress_stage_tasks(q->progress, stage->n_tasks);
    }
    reserve_spans(stage, q, stage->n_tasks);
    stage->start_ns = start;
    stage->mem_at_start = atomic_load(&q->mem.used);
    StageRun sr = {.stage = stage, .query = q, .n_run = stage->n_tasks};
    kept_begin(&sr);
    cm_pool_run(q->pool, stage->n_tasks, task_main, &sr);
    kept_end(&sr);
    if (q->err.code == CM_OK) {
        CmErr stop; /* an interrupt after the last batch still stops the finalize */
        cm_err_init(&stop);
        if (ex_query_check(q, &stop) != CM_OK) {
            record_error(q, &stop);
        }
    }
    if (q->err.code != CM_OK) {
        cm_err_copy(err, &q->err);
        return err->code;
    }
    if (stage->sink->vt->finalize != NULL &&
        stage->sink->vt->finalize(stage->sink, q, err) != CM_OK) {
        return err->code;
    }
    stage->done = true;
    stage->end_ns = cm_now_ns();
    stage->time_ns = stage->end_ns - start;
    if (q->progress != NULL) {
        ex_progress_stage_end(q->progress, stage_spilled(stage));
    }
    return CM_OK;
}

CmStatus ex_stage_rerun_tasks(ExStage *stage, ExQuery *q, const int *tasks, int n_tasks, CmErr *err)
{
    for (int i = 0; i < n_slots(stage); i++) {
        ExOp *op = op_at(stage, i);
        if (op->global == NULL && op->vt->global_init != NULL &&
            op->vt->global_init(op, q, err) != CM_OK) {
            return err->code;
        }
    }
    reserve_spans(stage, q, n_tasks);
    StageRun sr = {.stage = stage, .query = q, .tasks = tasks, .n_run = n_tasks};
    kept_begin(&sr);
    cm_pool_run(q->pool, n_tasks, task_main, &sr);
    kept_end(&sr);
    if (q->err.code != CM_OK) {
        cm_err_copy(err, &q->err);
    }
    return err->code;
}

static void fini_op(ExOp *op)
{
    if (op != NULL && op->vt->global_fini != NULL && op->global != NULL) {
        op->vt->global_fini(op);
        op->global = NULL;
    }
}

void ex_stage_release(ExStage *stage)
{
    for (int i = 0; i < n_slots(stage) - 1; i++) {
        fini_op(op_at(stage, i));
    }
}

void ex_stage_fini(ExStage *stage)
{
    int n = n_slots(stage);
    for (int i = 0; i < n; i++) {
        fini_op(op_at(stage, i));
    }
}
