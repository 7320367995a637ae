/*
 * test_series.c - unit tests for executor/series.c: the count of a series
 * (stop included or not, both step signs, the ends of BIGINT), each task's
 * morsel pulled by hand covering every row once in order with no batch over
 * CM_BATCH_CAP, and a series long enough for several tasks run as a stage on
 * a pool of 2 threads into the result sink (rows in order).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/config.h"
#include "common/thread.h"
#include "ex_test_util.h"
#include "executor/stage.h"

static CmArena arena;
static CmErr err;
static ExQuery q;

static void setup(void)
{
    cm_arena_init(&arena, 0);
    cm_err_init(&err);
    memset(&q, 0, sizeof q);
    q.arena = &arena;
    cm_config_init(&q.config);
    q.config.threads = 2;
    atomic_init(&q.cancelled, false);
    cm_mutex_init(&q.lock);
    cm_err_init(&q.err);
}

static void teardown(void)
{
    cm_mutex_fini(&q.lock);
    cm_arena_fini(&arena);
}

TestSuite(ex_series, .init = setup, .fini = teardown, .timeout = 30);

Test(ex_series, count)
{
    cr_expect_eq(ex_series_count(1, 5, 1, true), 5);
    cr_expect_eq(ex_series_count(1, 5, 1, false), 4);
    cr_expect_eq(ex_series_count(0, 10, 3, false), 4);  /* 0 3 6 9 */
    cr_expect_eq(ex_series_count(0, 9, 3, false), 3);   /* 0 3 6 */
    cr_expect_eq(ex_series_count(0, 9, 3, true), 4);    /* 0 3 6 9 */
    cr_expect_eq(ex_series_count(10, 1, -3, true), 4);  /* 10 7 4 1 */
    cr_expect_eq(ex_series_count(10, 1, -3, false), 3); /* 10 7 4 */
    cr_expect_eq(ex_series_count(3, 3, 1, true), 1);
    cr_expect_eq(ex_series_count(3, 3, -1, true), 1);
    cr_expect_eq(ex_series_count(3, 3, 1, false), 0);
    cr_expect_eq(ex_series_count(5, 1, 1, true), 0, "stop behind start");
    cr_expect_eq(ex_series_count(1, 5, -1, true), 0, "stop behind start counting down");
    cr_expect_eq(ex_series_count(1, 5, 0, true), 0);
}

Test(ex_series, count_at_the_ends_of_bigint)
{
    cr_expect_eq(ex_series_count(INT64_MAX - 1, INT64_MAX, 1, true), 2);
    cr_expect_eq(ex_series_count(INT64_MIN, INT64_MIN + 2, 1, true), 3);
    cr_expect_eq(ex_series_count(INT64_MIN, INT64_MAX, INT64_MAX, true), 3);
    cr_expect_eq(ex_series_count(INT64_MAX, INT64_MIN, INT64_MIN, true), 2);
    cr_expect_eq(ex_series_count(INT64_MIN, INT64_MAX, 1, false), UINT64_MAX);
    cr_expect_eq(ex_series_count(INT64_MIN, INT64_MAX, 1, true), UINT64_MAX, "2^64 saturates");
    cr_expect_eq(ex_series_count(0, INT64_MAX, 2, true), (uint64_t)INT64_MAX / 2 + 1);
}

/* Pulls every task's morsel by hand, in task order, and checks the values
 * are start, start + step, ... n values, each row once. */
static int pull_all(int64_t start, int64_t step, uint64_t n)
{
    ExOp *op = ex_series_new(&arena, cm_type_make(CM_T_INT64), start, step, NULL, n, &err);
    cr_assert_not_null(op);
    cr_assert_eq(op->n_cols, 1);
    cr_assert_eq(op->types[0].id, CM_T_INT64);
    int n_tasks = op->vt->n_tasks(op, &q);
    cr_assert_geq(n_tasks, 1);
    uint64_t seen = 0;
    for (int t = 0; t < n_tasks; t++) {
        ExTask task = {.query = &q, .task_idx = t, .n_tasks = n_tasks};
        void *local = op->vt->local_init(op, &task, &err);
        cr_assert_not_null(local);
        ExOpResult r;
        do {
            const CmBatch *b = NULL;
            r = op->vt->pull(op, local, &b, &err);
            cr_assert_eq(err.code, CM_OK);
            if (b == NULL) {
                continue;
            }
            cr_assert_leq(b->n_rows, CM_BATCH_CAP);
            cr_assert_null(b->sel);
            cr_assert_null(b->cols[0].validity);
            const int64_t *v = b->cols[0].data;
            for (int i = 0; i < b->n_rows; i++, seen++) {
                int64_t want = (int64_t)((uint64_t)start + seen * (uint64_t)step);
                cr_assert_eq(v[i], want, "row %llu", (unsigned long long)seen);
            }
        } while (r == EX_HAVE_MORE);
        op->vt->local_fini(op, local);
    }
    cr_expect_eq(seen, n);
    return n_tasks;
}

Test(ex_series, every_row_once_in_order)
{
    cr_expect_eq(pull_all(1, 1, 5), 1, "a short series is one task");
    cr_expect_eq(pull_all(7, 3, 0), 1, "an empty series is one task with no rows");
    pull_all(10, -3, 4);
    pull_all(0, 1, CM_BATCH_CAP);
    pull_all(0, 1, CM_BATCH_CAP + 1);
    int n_tasks = pull_all(-5, 7, 1000 * (uint64_t)CM_BATCH_CAP + 17);
    cr_expect_gt(n_tasks, 1, "a long series splits into several tasks");
    cr_expect_leq(n_tasks, 4 * q.config.threads);
    pull_all(INT64_MAX - 10 * CM_BATCH_CAP, 1, 10 * CM_BATCH_CAP + 1);
    pull_all(INT64_MAX, INT64_MIN, 2); /* INT64_MAX, then -1 */
}

Test(ex_series, stage_into_result_in_order)
{
    q.pool = cm_pool_new(2);
    cr_assert_not_null(q.pool);
    uint64_t n = 200 * (uint64_t)CM_BATCH_CAP + 3;
    ExOp *op = ex_series_new(&arena, cm_type_make(CM_T_INT64), 100, -2, NULL, n, &err);
    cr_assert_not_null(op);
    ExResult *res = ex_result_new(1, op->types, &err);
    cr_assert_not_null(res);
    ExStage s;
    memset(&s, 0, sizeof s);
    s.source = op;
    s.ops = cm_arena_alloc(&arena, sizeof(ExOp *));
    s.sink = ex_result_sink_new(&arena, res, 1, op->types, &err);
    s.exchange = "result";
    cr_assert_eq(ex_stage_run(&s, &q, &err), CM_OK, "stage failed: %s", err.msg);
    cr_expect_gt(s.n_tasks, 1);
    cr_assert_eq(ex_result_n_rows(res), (int64_t)n);
    for (uint64_t r = 0; r < n; r++) {
        cr_assert_eq(cell_i(res, (int64_t)r, 0), 100 - 2 * (int64_t)r, "row %llu",
                     (unsigned long long)r);
    }
    cr_expect_eq(atomic_load(&op->rows_out), (long long)n);
    ex_stage_fini(&s);
    ex_result_free(res);
    cm_pool_free(q.pool);
}
