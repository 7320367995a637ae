/*
 * series.c - a source of consecutive integers, start, start + step, ..., for
 * the table functions generate_series and range in FROM.  Nothing is
 * materialized: the rows are split into equal morsels of row numbers, one per
 * task, and each batch is computed from its first row number.  Row i's value
 * is start + i * step in wrapping unsigned arithmetic, which is exact whenever
 * the true value fits in a BIGINT, and every row's does (the count was cut at
 * the series' end), so no row can overflow.  A TIMESTAMP series whose step
 * has months is not linear (each step clamps the day to its month), so it
 * runs as one task that adds the step row after row.
 */
#include <stdio.h>

#include "common/alloc.h"
#include "common/datetime.h"
#include "executor/ops.h"

/* A task gets at least this many batches' worth of rows: smaller morsels
 * would cost more in task start-up than they gain in balance. */
#define SERIES_MIN_BATCHES_PER_TASK 64

typedef struct SeriesSpec {
    int64_t start, step;
    bool is_cal; /* a calendar step: each row is the one before plus cal */
    CmInterval cal;
    uint64_t n_rows;
    uint64_t rows_per_task; /* set by series_n_tasks, before any local_init */
} SeriesSpec;

typedef struct SeriesLocal {
    CmBatch out;
    uint64_t next, end; /* row numbers [next, end) are still to come */
    int64_t cur;        /* calendar step: the value of row `next` */
} SeriesLocal;

bool ex_series_count_cal(int64_t start, int64_t stop, const CmInterval *iv, bool inclusive,
                         uint64_t cap, uint64_t *n_rows)
{
    bool up = iv->months > 0 || iv->days > 0 || iv->micros > 0;
    uint64_t n = 0;
    for (int64_t x = start; n < cap; n++) {
        if (up ? (inclusive ? x > stop : x >= stop) : (inclusive ? x < stop : x <= stop)) {
            break;
        }
        if (!cm_ts_add_interval(x, iv, 1, &x)) {
            /* the next value is past the range: fine if it is past stop too */
            *n_rows = n + 1;
            return true;
        }
    }
    *n_rows = n;
    return n < cap;
}

uint64_t ex_series_count(int64_t start, int64_t stop, int64_t step, bool inclusive)
{
    if (step == 0 || (step > 0 ? start > stop : start < stop) || (!inclusive && start == stop)) {
        return 0;
    }
    /* The distance and the step's size as unsigned: both fit even when the
     * signed difference would overflow. */
    uint64_t dist = step > 0 ? (uint64_t)stop - (uint64_t)start : (uint64_t)start - (uint64_t)stop;
    uint64_t size = step > 0 ? (uint64_t)step : 0 - (uint64_t)step;
    if (!inclusive) {
        dist--; /* the last value is strictly before stop */
    }
    uint64_t last = dist / size; /* row number of the last value */
    /* 2^64 rows (INT64_MIN to INT64_MAX by 1) cannot be counted in 64 bits;
     * one row short of it cannot make a difference in practice. */
    return last == UINT64_MAX ? UINT64_MAX : last + 1;
}

static int series_n_tasks(ExOp *op, ExQuery *q)
{
    SeriesSpec *s = op->spec;
    if (s->is_cal) {
        s->rows_per_task = s->n_rows; /* row i needs row i - 1 */
        return 1;
    }
    uint64_t min_rows = (uint64_t)SERIES_MIN_BATCHES_PER_TASK * CM_BATCH_CAP;
    uint64_t want = (uint64_t)q->config.threads * 4;
    uint64_t n = s->n_rows / min_rows + (s->n_rows % min_rows != 0);
    n = n < 1 ? 1 : n > want ? want : n;
    s->rows_per_task = s->n_rows / n + (s->n_rows % n != 0);
    return (int)n;
}

static void *series_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    SeriesSpec *s = op->spec;
    SeriesLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    if (cm_batch_init(&l->out, 1, op->types, err) != CM_OK) {
        cm_free(l);
        return NULL;
    }
    /* Without series_n_tasks (one task), the task has every row. */
    uint64_t per = s->rows_per_task > 0 ? s->rows_per_task : s->n_rows;
    l->next = (uint64_t)task->task_idx * per;
    if (l->next > s->n_rows) {
        l->next = s->n_rows;
    }
    l->end = s->n_rows - l->next < per ? s->n_rows : l->next + per;
    l->cur = s->start;
    return l;
}

static void series_local_fini(ExOp *op, void *local)
{
    (void)op;
    SeriesLocal *l = local;
    if (l != NULL) {
        cm_batch_fini(&l->out);
        cm_free(l);
    }
}

static ExOpResult series_pull(ExOp *op, void *local, const CmBatch **out, CmErr *err)
{
    (void)err;
    SeriesSpec *s = op->spec;
    SeriesLocal *l = local;
    cm_batch_reset(&l->out);
    uint64_t n = l->end - l->next < CM_BATCH_CAP ? l->end - l->next : CM_BATCH_CAP;
    int64_t *v = l->out.cols[0].data;
    uint64_t x = (uint64_t)s->start + l->next * (uint64_t)s->step;
    for (uint64_t i = 0; i < n && !s->is_cal; i++) {
        v[i] = (int64_t)x;
        x += (uint64_t)s->step;
    }
    for (uint64_t i = 0; i < n && s->is_cal; i++) {
        v[i] = l->cur;
        /* the row after the last may be out of range (ex_series_count_cal) */
        if (!cm_ts_add_interval(l->cur, &s->cal, 1, &l->cur)) {
            l->cur = INT64_MAX;
        }
    }
    l->out.n_rows = (int)n;
    l->next += n;
    *out = &l->out;
    return l->next >= l->end ? EX_DONE : EX_HAVE_MORE;
}

static void series_explain(const ExOp *op, const char *const *in_names, char *buf, size_t cap)
{
    const SeriesSpec *s = op->spec;
    snprintf(buf, cap, "%lld step %lld, %llu row%s", (long long)s->start, (long long)s->step,
             (unsigned long long)s->n_rows, s->n_rows == 1 ? "" : "s");
}

static const ExOpVt SERIES_VT = {
    .name = "SERIES",
    .n_tasks = series_n_tasks,
    .local_init = series_local_init,
    .local_fini = series_local_fini,
    .pull = series_pull,
    .explain = series_explain,
};

ExOp *ex_series_new(CmArena *a, CmType type, int64_t start, int64_t step, const CmInterval *cal,
                    uint64_t n_rows, CmErr *err)
{
    SeriesSpec *s = cm_arena_zalloc(a, sizeof *s);
    ExOp *op = s ? ex_op_new(a, &SERIES_VT, s, 1, &type) : NULL;
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    s->start = start;
    s->step = step;
    s->is_cal = cal != NULL;
    if (cal != NULL) {
        s->cal = *cal;
    }
    s->n_rows = n_rows;
    return op;
}
