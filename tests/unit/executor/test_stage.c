/*
 * test_stage.c - unit tests for executor/stage.c with the real sources and
 * sinks (scan.c, values.c, shuffle_ops.c, result_sink.c) on a pool of 2
 * threads, the query set up by hand as planner/session.c does: a table or
 * VALUES source through filter/project into the result sink (rows in table
 * order), a two-stage aggregation through a hash exchange (PARTIAL, then
 * FINAL per partition) agreeing with SINGLE behind a gather exchange and
 * with a direct computation, a sort and limit after a gather, an error in
 * one task failing the stage with that error, and which operators a stage may
 * have its partition split across tasks with (ex_op_row_independent).
 *
 * Table t: 0 k BIGINT (r % 23, NULL when r % 17 == 5), 1 x BIGINT (r * 3 % 101 - 50,
 * NULL when r % 13 == 0), 2 s VARCHAR (a name of r, short or long).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/config.h"
#include "common/thread.h"
#include "ex_test_util.h"
#include "executor/stage.h"
#include "shuffle/shuffle.h"
#include "storage/table.h"

enum { N_KEYS = 23 };

static CmArena arena;
static CmErr err;
static ExQuery q;
static StTable *table;
static CmType ttypes[3];
static int64_t n_rows;

static void query_init(int threads)
{
    memset(&q, 0, sizeof q);
    q.arena = &arena;
    cm_config_init(&q.config);
    q.config.threads = threads;
    q.pool = cm_pool_new(threads);
    cr_assert_not_null(q.pool);
    atomic_init(&q.cancelled, false);
    cm_mutex_init(&q.lock);
    cm_err_init(&q.err);
}

static bool k_null(int64_t r)
{
    return r % 17 == 5;
}

static bool x_null(int64_t r)
{
    return r % 13 == 0;
}

static int64_t x_of(int64_t r)
{
    return r * 3 % 101 - 50;
}

static int name_of(int64_t r, char *buf)
{
    return snprintf(buf, 48, r % 3 ? "name %lld" : "a longer name for row %lld", (long long)r);
}

static void build_table(int64_t rows)
{
    StColumn cols[3] = {{.name = "k", .type = ttypes[0]},
                        {.name = "x", .type = ttypes[1]},
                        {.name = "s", .type = ttypes[2]}};
    table = st_table_new("t", 3, cols, &err);
    cr_assert_not_null(table);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 3, ttypes, &err), CM_OK);
    for (int64_t r = 0; r < rows; r++) {
        uint32_t i = (uint32_t)b.n_rows;
        if (k_null(r)) {
            cm_vec_set_null(&b.cols[0], i);
        } else {
            cm_vec_set_valid(&b.cols[0], i);
            ((int64_t *)b.cols[0].data)[i] = r % N_KEYS;
        }
        if (x_null(r)) {
            cm_vec_set_null(&b.cols[1], i);
        } else {
            cm_vec_set_valid(&b.cols[1], i);
            ((int64_t *)b.cols[1].data)[i] = x_of(r);
        }
        char buf[48];
        int len = name_of(r, buf);
        char *copy = cm_arena_strndup(&b.heap, buf, (size_t)len);
        ((CmStr *)b.cols[2].data)[i] = cm_str_make(copy, (uint32_t)len);
        b.n_rows++;
        if (b.n_rows == CM_BATCH_CAP || r == rows - 1) {
            cr_assert_eq(st_table_append(table, &b, &err), CM_OK);
            cm_batch_reset(&b);
        }
    }
    cm_batch_fini(&b);
    n_rows = rows;
}

static void setup(void)
{
    cm_arena_init(&arena, 0);
    cm_err_init(&err);
    ttypes[0] = cm_type_make(CM_T_INT64);
    ttypes[1] = cm_type_make(CM_T_INT64);
    ttypes[2] = cm_type_varchar(-1, false);
    query_init(2);
    /* Enough chunks for several scan tasks (the scan aims at 4 per thread),
     * and enough rows for every key to appear. */
    int64_t rows = 13 * (int64_t)CM_BATCH_CAP + 5;
    build_table(rows < 500 ? 500 : rows);
}

static void teardown(void)
{
    st_table_free(table);
    cm_pool_free(q.pool);
    cm_mutex_fini(&q.lock);
    cm_arena_fini(&arena);
}

TestSuite(ex_stage, .init = setup, .fini = teardown, .timeout = 30);

static ExOp *scan_all(void)
{
    int ids[3] = {0, 1, 2};
    ExOp *op = ex_scan_new(&arena, table, 3, ids, &err);
    cr_assert_not_null(op);
    return op;
}

static void stage_init(ExStage *s, ExOp *source, int n_ops, ExOp **ops, ExOp *sink)
{
    memset(s, 0, sizeof *s);
    s->source = source;
    s->n_ops = n_ops;
    s->ops = cm_arena_alloc(&arena, sizeof(ExOp *) * (size_t)(n_ops ? n_ops : 1));
    cr_assert_not_null(s->ops);
    for (int i = 0; i < n_ops; i++) {
        s->ops[i] = ops[i];
    }
    s->sink = sink;
    s->exchange = "result";
}

static void run_stage(ExStage *s)
{
    cr_assert_eq(ex_stage_run(s, &q, &err), CM_OK, "stage failed: %s", err.msg);
    cr_expect(s->done);
}

/* ---- one stage ------------------------------------------------------------------------------ */

Test(ex_stage, scan_filter_project_into_result_in_table_order)
{
    /* SELECT x * 2, s FROM t WHERE x % 3 = 0 */
    ExExpr *x = expr_col(&arena, 1, ttypes[1]);
    ExExpr *pred = expr_bin(&arena, "=", expr_bin(&arena, "%", x, expr_const(&arena, v_i64(3))),
                            expr_const(&arena, v_i64(0)));
    ExOp *filter = ex_filter_new(&arena, pred, 3, ttypes, &err);
    ExExpr *exprs[2] = {expr_bin(&arena, "*", x, expr_const(&arena, v_i64(2))),
                        expr_col(&arena, 2, ttypes[2])};
    ExOp *project = ex_project_new(&arena, 2, expr_args(&arena, 2, exprs), &err);
    ExResult *res = ex_result_new(2, project->types, &err);
    ExOp *sink = ex_result_sink_new(&arena, res, 2, project->types, &err);
    ExOp *ops[2] = {filter, project};
    ExStage s;
    stage_init(&s, scan_all(), 2, ops, sink);
    run_stage(&s);
    cr_expect_gt(s.n_tasks, 1, "the scan should split into several tasks");

    int64_t out = 0;
    for (int64_t r = 0; r < n_rows; r++) {
        if (x_null(r) || x_of(r) % 3 != 0) {
            continue;
        }
        cr_assert_lt(out, ex_result_n_rows(res));
        cr_assert_eq(cell_i(res, out, 0), 2 * x_of(r), "output row %lld", (long long)out);
        char buf[48];
        name_of(r, buf);
        cr_assert(cell_str_is(res, out, 1, buf), "output row %lld: want %s", (long long)out, buf);
        out++;
    }
    cr_expect_eq(ex_result_n_rows(res), out);
    cr_expect_eq(atomic_load(&sink->rows_out), out);
    cr_expect_eq(atomic_load(&s.source->rows_out), n_rows);
    ex_stage_fini(&s);
    ex_result_free(res);
}

Test(ex_stage, values_source)
{
    /* VALUES (1, 'one'), (NULL, 'a value long enough to be out of line'), (3, NULL) */
    CmType vt[2] = {cm_type_make(CM_T_INT64), cm_type_varchar(-1, false)};
    ExExpr *cells[6] = {
        expr_const(&arena, v_i64(1)),
        expr_const(&arena, v_str("one")),
        expr_const(&arena, v_null(vt[0])),
        expr_const(&arena, v_str("a value long enough to "
                                 "be out of line")),
        expr_bin(&arena, "+", expr_const(&arena, v_i64(1)), expr_const(&arena, v_i64(2))),
        expr_const(&arena, v_null(vt[1])),
    };
    ExOp *values = ex_values_new(&arena, 3, 2, expr_args(&arena, 6, cells), vt, &err);
    cr_assert_not_null(values);
    ExResult *res = ex_result_new(2, vt, &err);
    ExStage s;
    stage_init(&s, values, 0, NULL, ex_result_sink_new(&arena, res, 2, vt, &err));
    run_stage(&s);
    cr_expect_eq(s.n_tasks, 1);
    cr_assert_eq(ex_result_n_rows(res), 3);
    cr_expect_eq(cell_i(res, 0, 0), 1);
    cr_expect(cell_str_is(res, 0, 1, "one"));
    cr_expect(cell_null(res, 1, 0));
    cr_expect(cell_str_is(res, 1, 1, "a value long enough to be out of line"));
    cr_expect_eq(cell_i(res, 2, 0), 3);
    cr_expect(cell_null(res, 2, 1));
    ex_stage_fini(&s);
    ex_result_free(res);
}

Test(ex_stage, select_without_from)
{
    /* SELECT 1 + 2, 'x' || 'y': one empty row from VALUES, then a projection. */
    CmType none[1] = {cm_type_make(CM_T_NULL)};
    ExOp *values = ex_values_new(&arena, 1, 0, NULL, none, &err);
    cr_assert_not_null(values);
    ExExpr *exprs[2] = {
        expr_bin(&arena, "+", expr_const(&arena, v_i64(1)), expr_const(&arena, v_i64(2))),
        expr_bin(&arena, "||", expr_const(&arena, v_str("x")), expr_const(&arena, v_str("y"))),
    };
    ExOp *project = ex_project_new(&arena, 2, expr_args(&arena, 2, exprs), &err);
    ExResult *res = ex_result_new(2, project->types, &err);
    ExOp *ops[1] = {project};
    ExStage s;
    stage_init(&s, values, 1, ops, ex_result_sink_new(&arena, res, 2, project->types, &err));
    run_stage(&s);
    cr_assert_eq(ex_result_n_rows(res), 1);
    cr_expect_eq(cell_i(res, 0, 0), 3);
    cr_expect(cell_str_is(res, 0, 1, "xy"));
    ex_stage_fini(&s);
    ex_result_free(res);
}

Test(ex_stage, limit_stops_the_source_early)
{
    /* VALUES of many rows -> LIMIT 4 OFFSET 2: the pipeline stops once the
     * limit is satisfied and the result holds rows 2..5. */
    int n = 3 * CM_BATCH_CAP + 2;
    CmType vt[1] = {cm_type_make(CM_T_INT64)};
    ExExpr **cells = cm_arena_alloc(&arena, sizeof(ExExpr *) * (size_t)n);
    for (int i = 0; i < n; i++) {
        cells[i] = expr_const(&arena, v_i64(i));
    }
    ExOp *values = ex_values_new(&arena, n, 1, cells, vt, &err);
    ExOp *limit = ex_limit_new(&arena, 4, 2, 1, vt, &err);
    ExResult *res = ex_result_new(1, vt, &err);
    ExOp *ops[1] = {limit};
    ExStage s;
    stage_init(&s, values, 1, ops, ex_result_sink_new(&arena, res, 1, vt, &err));
    run_stage(&s);
    cr_assert_eq(ex_result_n_rows(res), 4);
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(cell_i(res, i, 0), i + 2);
    }
    cr_expect_lt(atomic_load(&values->rows_out), n, "the source was not drained");
    ex_stage_fini(&s);
    ex_result_free(res);
}

Test(ex_stage, values_with_more_rows_than_a_batch)
{
    int n = 2 * CM_BATCH_CAP + 3;
    CmType vt[1] = {cm_type_make(CM_T_INT64)};
    ExExpr **cells = cm_arena_alloc(&arena, sizeof(ExExpr *) * (size_t)n);
    for (int i = 0; i < n; i++) {
        cells[i] = expr_const(&arena, v_i64(i * 10));
    }
    ExOp *values = ex_values_new(&arena, n, 1, cells, vt, &err);
    ExResult *res = ex_result_new(1, vt, &err);
    ExStage s;
    stage_init(&s, values, 0, NULL, ex_result_sink_new(&arena, res, 1, vt, &err));
    run_stage(&s);
    cr_assert_eq(ex_result_n_rows(res), n);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(cell_i(res, i, 0), i * 10);
    }
    ex_stage_fini(&s);
    ex_result_free(res);
}

Test(ex_stage, empty_table_gives_empty_result)
{
    StColumn col = {.name = "v", .type = ttypes[0]};
    StTable *empty = st_table_new("e", 1, &col, &err);
    int ids[1] = {0};
    ExOp *scan = ex_scan_new(&arena, empty, 1, ids, &err);
    ExResult *res = ex_result_new(1, ttypes, &err);
    ExStage s;
    stage_init(&s, scan, 0, NULL, ex_result_sink_new(&arena, res, 1, ttypes, &err));
    run_stage(&s);
    cr_expect_eq(ex_result_n_rows(res), 0);
    ex_stage_fini(&s);
    ex_result_free(res);
    st_table_free(empty);
}

Test(ex_stage, string_filter_over_null_strings_in_a_table)
{
    /* The table leaves the slot under a NULL string uninitialized; comparing
     * must skip it (under ASan the slot is 0xbe garbage). */
    CmType st[1] = {cm_type_varchar(-1, false)};
    StColumn col = {.name = "s", .type = st[0]};
    StTable *t = st_table_new("n", 1, &col, &err);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, st, &err), CM_OK);
    int64_t n = 3 * (int64_t)CM_BATCH_CAP + 1, want = 0;
    for (int64_t r = 0; r < n; r++) {
        uint32_t i = (uint32_t)b.n_rows;
        if (r % 3 == 0) {
            cm_vec_set_null(&b.cols[0], i);
        } else {
            cm_vec_set_valid(&b.cols[0], i);
            const char *v = r % 3 == 1 ? "match me, a long string" : "no";
            ((CmStr *)b.cols[0].data)[i] = cm_str_make(v, (uint32_t)strlen(v));
            want += r % 3 == 1;
        }
        if (++b.n_rows == CM_BATCH_CAP || r == n - 1) {
            cr_assert_eq(st_table_append(t, &b, &err), CM_OK);
            cm_batch_reset(&b);
        }
    }
    cm_batch_fini(&b);
    int ids[1] = {0};
    ExOp *scan = ex_scan_new(&arena, t, 1, ids, &err);
    ExExpr *pred = expr_bin(&arena, "=", expr_col(&arena, 0, st[0]),
                            expr_const(&arena, v_str("match me, a long string")));
    ExOp *filter = ex_filter_new(&arena, pred, 1, st, &err);
    ExResult *res = ex_result_new(1, st, &err);
    ExOp *ops[1] = {filter};
    ExStage s;
    stage_init(&s, scan, 1, ops, ex_result_sink_new(&arena, res, 1, st, &err));
    run_stage(&s);
    cr_expect_eq(ex_result_n_rows(res), want);
    ex_stage_fini(&s);
    ex_result_free(res);
    st_table_free(t);
}

Test(ex_stage, an_interrupt_stops_the_stage)
{
    /* SELECT k FROM t with the query's interrupt flag already set, as Ctrl+C
     * would between two batches: the stage fails "interrupted" and delivers
     * nothing; cleared, the same query runs. */
    atomic_bool stop;
    atomic_init(&stop, true);
    q.interrupt = &stop;
    ExExpr *k = expr_col(&arena, 0, ttypes[0]);
    ExOp *project = ex_project_new(&arena, 1, expr_args(&arena, 1, &k), &err);
    ExResult *res = ex_result_new(1, project->types, &err);
    ExOp *ops[1] = {project};
    ExStage s;
    stage_init(&s, scan_all(), 1, ops, ex_result_sink_new(&arena, res, 1, project->types, &err));
    cr_expect_eq(ex_stage_run(&s, &q, &err), CM_CANCELLED);
    cr_expect_str_eq(err.msg, "interrupted");
    cr_expect_eq(ex_result_n_rows(res), 0, "an interrupted stage delivers no rows");
    ex_stage_fini(&s);
    ex_result_free(res);
    q.interrupt = NULL;
}

Test(ex_stage, error_in_one_task_fails_the_stage)
{
    /* SELECT 1000 / (x - x_of(r0)) FROM t: division by zero where x = x_of(r0),
     * a row in the middle of the table. */
    int64_t r0 = n_rows / 2;
    while (x_null(r0)) {
        r0++;
    }
    ExExpr *x = expr_col(&arena, 1, ttypes[1]);
    ExExpr *den = expr_bin(&arena, "-", x, expr_const(&arena, v_i64(x_of(r0))));
    ExExpr *e = expr_bin(&arena, "/", expr_const(&arena, v_i64(1000)), den);
    e->src_off = 7;
    ExOp *project = ex_project_new(&arena, 1, expr_args(&arena, 1, &e), &err);
    ExResult *res = ex_result_new(1, project->types, &err);
    ExOp *ops[1] = {project};
    ExStage s;
    stage_init(&s, scan_all(), 1, ops, ex_result_sink_new(&arena, res, 1, project->types, &err));
    cr_expect_eq(ex_stage_run(&s, &q, &err), CM_RUNTIME);
    cr_expect_str_eq(err.msg, "division by zero", "the root cause, not a cancellation");
    cr_expect_eq(err.off, 7);
    cr_expect_eq(q.err.code, CM_RUNTIME);
    cr_expect(atomic_load(&q.cancelled));
    cr_expect_not(s.done);
    cr_expect_eq(ex_result_n_rows(res), 0, "a failed stage delivers no rows");
    ex_stage_fini(&s);
    ex_result_free(res);
}

/* ---- two stages through the shuffle -----------------------------------------------------------
 */

/* count(*), count(x), sum(x), min(x), max(x), avg(x), min(s) */
static int test_aggs(ExAggSpec *a)
{
    CmType i64 = cm_type_make(CM_T_INT64);
    memset(a, 0, sizeof(ExAggSpec) * 7);
    ExAggFn fns[6] = {EX_AGG_COUNT_STAR, EX_AGG_COUNT, EX_AGG_SUM,
                      EX_AGG_MIN,        EX_AGG_MAX,   EX_AGG_AVG};
    for (int i = 0; i < 6; i++) {
        a[i].fn = fns[i];
        a[i].arg = i == 0 ? -1 : 1;
        a[i].arg_type = i64;
        a[i].type = fns[i] == EX_AGG_AVG ? cm_type_make(CM_T_DOUBLE) : i64;
    }
    a[6].fn = EX_AGG_MIN;
    a[6].arg = 2;
    a[6].arg_type = a[6].type = ttypes[2];
    return 7;
}

/* Stage 1: scan -> [partial agg] -> shuffle write; returns the stage. */
static void exchange_stage(ExStage *s, ShShuffle **sh, int n_parts, ExOp *op_before)
{
    int keys[1] = {0};
    const ExOp *top = op_before ? op_before : NULL;
    int n_cols = top ? top->n_cols : 3;
    const CmType *types = top ? top->types : ttypes;
    ExOp *w =
        ex_shuffle_write_new(&arena, sh, n_parts, n_parts > 1 ? 1 : 0, keys, n_cols, types, &err);
    cr_assert_not_null(w);
    ExOp *ops[1] = {op_before};
    stage_init(s, scan_all(), op_before ? 1 : 0, ops, w);
    s->exchange = n_parts > 1 ? "hash(#0)" : "gather";
}

static ExResult *two_stage_aggregate(int n_parts, ShShuffle **sh)
{
    ExAggSpec aggs[7];
    int n_aggs = test_aggs(aggs);
    int keys[1] = {0};
    ExOp *partial = ex_hash_agg_new(&arena, EX_AGG_PARTIAL, 1, keys, ttypes, n_aggs, aggs, &err);
    ExStage s1, s2;
    *sh = NULL;
    exchange_stage(&s1, sh, n_parts, partial);
    run_stage(&s1);
    cr_assert_not_null(*sh);
    cr_expect_eq(sh_shuffle_n_maps(*sh), s1.n_tasks);
    cr_expect_eq(sh_shuffle_n_parts(*sh), n_parts);

    ExOp *read = ex_shuffle_read_new(&arena, sh, partial->n_cols, partial->types, &err);
    ExOp *final = ex_hash_agg_new(&arena, EX_AGG_FINAL, 1, keys, ttypes, n_aggs, aggs, &err);
    ExResult *res = ex_result_new(final->n_cols, final->types, &err);
    ExOp *ops[1] = {final};
    stage_init(&s2, read, 1, ops,
               ex_result_sink_new(&arena, res, final->n_cols, final->types, &err));
    run_stage(&s2);
    cr_expect_eq(s2.n_tasks, n_parts, "one reduce task per partition");
    ex_stage_fini(&s1);
    ex_stage_fini(&s2);
    return res;
}

/* SINGLE aggregation in one task behind a gather exchange. */
static ExResult *gathered_single_aggregate(void)
{
    ExAggSpec aggs[7];
    int n_aggs = test_aggs(aggs);
    int keys[1] = {0};
    ShShuffle *sh = NULL;
    ExStage s1, s2;
    exchange_stage(&s1, &sh, 1, NULL);
    run_stage(&s1);
    ExOp *read = ex_shuffle_read_new(&arena, &sh, 3, ttypes, &err);
    ExOp *single = ex_hash_agg_new(&arena, EX_AGG_SINGLE, 1, keys, ttypes, n_aggs, aggs, &err);
    ExResult *res = ex_result_new(single->n_cols, single->types, &err);
    ExOp *ops[1] = {single};
    stage_init(&s2, read, 1, ops,
               ex_result_sink_new(&arena, res, single->n_cols, single->types, &err));
    run_stage(&s2);
    cr_expect_eq(s2.n_tasks, 1);
    ex_stage_fini(&s1);
    ex_stage_fini(&s2);
    sh_shuffle_free(sh);
    return res;
}

static int64_t find_group(const ExResult *res, int64_t k, bool is_null)
{
    for (int64_t r = 0; r < ex_result_n_rows(res); r++) {
        CmValue v;
        cell(res, r, 0, &v);
        if (v.is_null ? is_null : (!is_null && v.i == k)) {
            return r;
        }
    }
    cr_assert_fail("group %lld not found", (long long)k);
    return -1;
}

Test(ex_stage, two_stage_aggregate_matches_direct_computation)
{
    ShShuffle *sh;
    ExResult *res = two_stage_aggregate(4, &sh);
    ShShuffleStats st;
    sh_shuffle_stats(sh, &st);
    int64_t part_sum = 0;
    for (int p = 0; p < 4; p++) {
        part_sum += sh_shuffle_part_rows(sh, p);
    }
    cr_expect_eq(part_sum, st.rows);
    /* Each scan task sends at most one partial row per group. */
    cr_expect_leq(st.rows, (int64_t)(N_KEYS + 1) * sh_shuffle_n_maps(sh));
    cr_expect_geq(st.rows, N_KEYS + 1);

    cr_assert_eq(ex_result_n_rows(res), N_KEYS + 1);
    for (int g = 0; g <= N_KEYS; g++) {
        bool is_null = g == N_KEYS;
        int64_t cnt = 0, cnt_x = 0, sum = 0, mn = INT64_MAX, mx = INT64_MIN;
        char min_s[48] = "";
        bool have_s = false;
        for (int64_t r = 0; r < n_rows; r++) {
            if (is_null ? !k_null(r) : (k_null(r) || r % N_KEYS != g)) {
                continue;
            }
            cnt++;
            char buf[48];
            name_of(r, buf);
            if (!have_s || strcmp(buf, min_s) < 0) {
                strcpy(min_s, buf);
                have_s = true;
            }
            if (!x_null(r)) {
                int64_t x = x_of(r);
                cnt_x++;
                sum += x;
                mn = x < mn ? x : mn;
                mx = x > mx ? x : mx;
            }
        }
        int64_t row = find_group(res, g, is_null);
        cr_expect_eq(cell_i(res, row, 1), cnt, "group %d count(*)", g);
        cr_expect_eq(cell_i(res, row, 2), cnt_x, "group %d count(x)", g);
        cr_expect_eq(cell_i(res, row, 3), sum, "group %d sum", g);
        cr_expect_eq(cell_i(res, row, 4), mn, "group %d min", g);
        cr_expect_eq(cell_i(res, row, 5), mx, "group %d max", g);
        cr_expect_float_eq(cell_d(res, row, 6), (double)sum / (double)cnt_x, 1e-9);
        cr_expect(cell_str_is(res, row, 7, min_s), "group %d min(s), want %s", g, min_s);
    }
    ex_result_free(res);
    sh_shuffle_free(sh);
}

Test(ex_stage, partial_final_through_shuffle_equals_single)
{
    ExResult *single = gathered_single_aggregate();
    cr_assert_eq(ex_result_n_rows(single), N_KEYS + 1);
    static const int parts[] = {1, 3, 8};
    for (int i = 0; i < 3; i++) {
        ShShuffle *sh;
        ExResult *two = two_stage_aggregate(parts[i], &sh);
        expect_same_rows(single, two);
        ex_result_free(two);
        sh_shuffle_free(sh);
    }
    ex_result_free(single);
}

Test(ex_stage, repeated_runs_give_the_same_answer)
{
    ExResult *first = NULL;
    for (int run = 0; run < 5; run++) {
        ShShuffle *sh;
        ExResult *res = two_stage_aggregate(4, &sh);
        if (first == NULL) {
            first = res;
        } else {
            expect_same_rows(first, res);
            ex_result_free(res);
        }
        sh_shuffle_free(sh);
    }
    ex_result_free(first);
}

Test(ex_stage, four_threads_agree_with_two)
{
    ShShuffle *sh;
    ExResult *two = two_stage_aggregate(5, &sh);
    sh_shuffle_free(sh);
    cm_pool_free(q.pool);
    q.pool = cm_pool_new(4);
    q.config.threads = 4;
    ExResult *four = two_stage_aggregate(5, &sh);
    sh_shuffle_free(sh);
    expect_same_rows(two, four);
    ex_result_free(two);
    ex_result_free(four);
}

/* x DESC NULLS LAST, then s ascending (byte order) */
static int ref_order(const void *a, const void *b)
{
    int64_t ra = *(const int64_t *)a, rb = *(const int64_t *)b;
    if (x_null(ra) != x_null(rb)) {
        return x_null(ra) ? 1 : -1;
    }
    if (!x_null(ra) && x_of(ra) != x_of(rb)) {
        return x_of(ra) > x_of(rb) ? -1 : 1;
    }
    char sa[48], sb[48];
    name_of(ra, sa);
    name_of(rb, sb);
    return strcmp(sa, sb);
}

Test(ex_stage, gather_then_sort_and_limit)
{
    /* SELECT * FROM t ORDER BY x DESC NULLS LAST, s LIMIT 10 OFFSET 5 */
    ShShuffle *sh = NULL;
    ExStage s1, s2;
    exchange_stage(&s1, &sh, 1, NULL);
    run_stage(&s1);
    ExOp *read = ex_shuffle_read_new(&arena, &sh, 3, ttypes, &err);
    ExSortKey keys[2] = {{.col = 1, .desc = true, .nulls_first = false}, {.col = 2}};
    ExOp *sort = ex_sort_new(&arena, 2, keys, 3, ttypes, 15, &err);
    ExOp *limit = ex_limit_new(&arena, 10, 5, 3, ttypes, &err);
    ExResult *res = ex_result_new(3, ttypes, &err);
    ExOp *ops[2] = {sort, limit};
    stage_init(&s2, read, 2, ops, ex_result_sink_new(&arena, res, 3, ttypes, &err));
    run_stage(&s2);
    cr_assert_eq(ex_result_n_rows(res), 10);
    /* The reference: all row numbers sorted the same way (names are unique). */
    int64_t *order = cm_arena_alloc(&arena, sizeof(int64_t) * (size_t)n_rows);
    for (int64_t r = 0; r < n_rows; r++) {
        order[r] = r;
    }
    qsort(order, (size_t)n_rows, sizeof order[0], ref_order);
    for (int64_t r = 0; r < 10; r++) {
        int64_t want = order[r + 5];
        char buf[48];
        name_of(want, buf);
        cr_assert(cell_str_is(res, r, 2, buf), "row %lld: want %s", (long long)r, buf);
        cr_assert_eq(cell_null(res, r, 1), x_null(want));
        if (!x_null(want)) {
            cr_assert_eq(cell_i(res, r, 1), x_of(want));
        }
    }
    ex_stage_fini(&s1);
    ex_stage_fini(&s2);
    ex_result_free(res);
    sh_shuffle_free(sh);
}

/* ---- which operators a skew split may cut across tasks --------------------------------------- */

static bool agg_row_independent(ExAggMode mode)
{
    int keys[1] = {0};
    ExAggSpec a = {.fn = EX_AGG_SUM, .arg = 1, .arg_type = ttypes[1], .type = ttypes[1]};
    ExOp *op = ex_hash_agg_new(&arena, mode, 1, keys, ttypes, 1, &a, &err);
    cr_assert_not_null(op);
    return ex_op_row_independent(op);
}

static bool join_row_independent(ExJoinType type, bool partitioned)
{
    ShShuffle *build = NULL;
    int probe_keys[1] = {0}, build_keys[1] = {0};
    ExJoinSpec js = {.type = type,
                     .build = &build,
                     .partitioned = partitioned,
                     .n_keys = 1,
                     .probe_keys = probe_keys,
                     .build_keys = build_keys,
                     .n_probe_cols = 3,
                     .probe_types = ttypes,
                     .n_build_cols = 3,
                     .build_types = ttypes};
    ExOp *op = ex_hash_join_new(&arena, &js, &err);
    cr_assert_not_null(op);
    return ex_op_row_independent(op);
}

Test(ex_stage, row_independent_operators)
{
    ShShuffle *sh = NULL;
    int keys[1] = {0};
    uint64_t masks[2] = {1, 0};
    ExExpr *x = expr_col(&arena, 1, ttypes[1]);
    ExExpr *pred = expr_bin(&arena, "=", x, expr_const(&arena, v_i64(0)));
    ExResult *res = ex_result_new(3, ttypes, &err);
    cr_assert_not_null(res);

    /* Kinds that qualify whatever their spec. */
    cr_expect(ex_op_row_independent(ex_filter_new(&arena, pred, 3, ttypes, &err)));
    cr_expect(ex_op_row_independent(ex_project_new(&arena, 1, expr_args(&arena, 1, &x), &err)));
    cr_expect(ex_op_row_independent(ex_expand_new(&arena, 2, masks, 1, 0, 3, ttypes, &err)));
    cr_expect(
        ex_op_row_independent(ex_shuffle_write_new(&arena, &sh, 4, 1, keys, 3, ttypes, &err)));
    cr_expect(ex_op_row_independent(ex_result_sink_new(&arena, res, 3, ttypes, &err)));

    /* Kinds that qualify by their spec. */
    cr_expect(agg_row_independent(EX_AGG_PARTIAL));
    cr_expect_not(agg_row_independent(EX_AGG_SINGLE));
    cr_expect_not(agg_row_independent(EX_AGG_FINAL));
    cr_expect(join_row_independent(EX_JOIN_INNER, false));
    cr_expect(join_row_independent(EX_JOIN_LEFT, false));
    cr_expect_not(join_row_independent(EX_JOIN_INNER, true));
    cr_expect_not(join_row_independent(EX_JOIN_FULL, true));
    cr_expect_not(join_row_independent(EX_JOIN_FULL, false));

    /* Kinds that need the rows of a whole partition, or are sources. */
    ExSortKey sk = {.col = 0};
    ExWindowSpec ws = {.fn = EX_WIN_ROW_NUMBER,
                       .arg = -1,
                       .type = ttypes[0],
                       .n_part = 1,
                       .part = keys,
                       .rows = true,
                       .start = EX_FRAME_UNBOUNDED_PRECEDING,
                       .end = EX_FRAME_CURRENT_ROW};
    cr_expect_not(ex_op_row_independent(ex_sort_new(&arena, 1, &sk, 3, ttypes, -1, &err)));
    cr_expect_not(ex_op_row_independent(ex_limit_new(&arena, 10, 0, 3, ttypes, &err)));
    cr_expect_not(ex_op_row_independent(ex_window_new(&arena, &ws, 3, ttypes, &err)));
    cr_expect_not(ex_op_row_independent(scan_all()));
    cr_expect_not(ex_op_row_independent(ex_shuffle_read_new(&arena, &sh, 3, ttypes, &err)));
    ex_result_free(res);
}

/* ---- a task's local kept for the next task on the thread ------------------------------------ */

/* A pass-through operator that counts how its locals are made, kept, reused
 * and finished, and the rows each task pushed through its local. */
typedef struct KeepCounts {
    atomic_int inits, keeps, reuses, finis;
    atomic_int stale; /* a task began with rows of an earlier one in its local */
    atomic_llong rows;
    bool keep; /* whether local_keep takes locals back */
} KeepCounts;

typedef struct KeepLocal {
    int64_t task_rows;
} KeepLocal;

static KeepCounts counts;

static void *keep_init(ExOp *op, const ExTask *task, CmErr *e)
{
    (void)op;
    (void)task;
    (void)e;
    atomic_fetch_add(&counts.inits, 1);
    return cm_calloc(1, sizeof(KeepLocal));
}

static bool keep_keep(ExOp *op, void *local)
{
    (void)op;
    if (!counts.keep) {
        return false;
    }
    atomic_fetch_add(&counts.keeps, 1);
    ((KeepLocal *)local)->task_rows = 0;
    return true;
}

static CmStatus keep_reuse(ExOp *op, void *local, const ExTask *task, CmErr *e)
{
    (void)op;
    (void)task;
    (void)e;
    atomic_fetch_add(&counts.reuses, 1);
    if (((KeepLocal *)local)->task_rows != 0) {
        atomic_fetch_add(&counts.stale, 1);
    }
    return CM_OK;
}

static void keep_fini(ExOp *op, void *local)
{
    (void)op;
    atomic_fetch_add(&counts.finis, 1);
    KeepLocal *l = local;
    atomic_fetch_add(&counts.rows, l->task_rows);
    cm_free(l);
}

static ExOpResult keep_push(ExOp *op, void *local, const CmBatch *in, const CmBatch **out, CmErr *e)
{
    (void)op;
    (void)e;
    ((KeepLocal *)local)->task_rows += in->n_rows;
    *out = in;
    return EX_NEED_INPUT;
}

static const ExOpVt KEEP_VT = {
    .name = "KEEP_COUNTER",
    .local_init = keep_init,
    .local_fini = keep_fini,
    .local_keep = keep_keep,
    .local_reuse = keep_reuse,
    .push = keep_push,
};

/* SELECT * FROM t through the counting op; the stage's task count. */
static int run_counted(bool keep, ExResult **res_out)
{
    memset(&counts, 0, sizeof counts);
    counts.keep = keep;
    ExOp *op = ex_op_new(&arena, &KEEP_VT, NULL, 3, ttypes);
    cr_assert_not_null(op);
    ExResult *res = ex_result_new(3, ttypes, &err);
    ExOp *ops[1] = {op};
    ExStage s;
    stage_init(&s, scan_all(), 1, ops, ex_result_sink_new(&arena, res, 3, ttypes, &err));
    run_stage(&s);
    ex_stage_fini(&s);
    *res_out = res;
    return s.n_tasks;
}

Test(ex_stage, kept_locals_go_to_the_next_task_on_the_thread)
{
    ExResult *res;
    int n_tasks = run_counted(true, &res);
    cr_assert_gt(n_tasks, 2, "the table should give more tasks than threads");
    cr_expect_eq(ex_result_n_rows(res), n_rows);
    /* every task has a local, made or kept; at most one is made per worker */
    cr_expect_eq(atomic_load(&counts.inits) + atomic_load(&counts.reuses), n_tasks);
    cr_expect_leq(atomic_load(&counts.inits), cm_pool_size(q.pool));
    cr_expect_gt(atomic_load(&counts.reuses), 0);
    cr_expect_leq(atomic_load(&counts.reuses), atomic_load(&counts.keeps));
    /* each made local is finished once, kept ones when the stage ends */
    cr_expect_eq(atomic_load(&counts.finis), atomic_load(&counts.inits));
    cr_expect_eq(atomic_load(&counts.stale), 0);
    ex_result_free(res);

    /* an op that declines gets a new local for every task */
    n_tasks = run_counted(false, &res);
    cr_expect_eq(atomic_load(&counts.inits), n_tasks);
    cr_expect_eq(atomic_load(&counts.reuses), 0);
    cr_expect_eq(atomic_load(&counts.finis), n_tasks);
    cr_expect_eq(atomic_load(&counts.rows), n_rows);
    ex_result_free(res);
}

Test(ex_stage, a_failed_stage_finishes_every_local)
{
    /* the division by zero of error_in_one_task_fails_the_stage, after the
     * counting op: whatever was kept is finished, and nothing is kept past
     * the failing task */
    memset(&counts, 0, sizeof counts);
    counts.keep = true;
    int64_t r0 = n_rows - 3;
    while (x_null(r0)) {
        r0--;
    }
    ExExpr *x = expr_col(&arena, 1, ttypes[1]);
    ExExpr *den = expr_bin(&arena, "-", x, expr_const(&arena, v_i64(x_of(r0))));
    ExExpr *e = expr_bin(&arena, "/", expr_const(&arena, v_i64(1000)), den);
    ExOp *project = ex_project_new(&arena, 1, expr_args(&arena, 1, &e), &err);
    ExOp *op = ex_op_new(&arena, &KEEP_VT, NULL, 3, ttypes);
    ExResult *res = ex_result_new(1, project->types, &err);
    ExOp *ops[2] = {op, project};
    ExStage s;
    stage_init(&s, scan_all(), 2, ops, ex_result_sink_new(&arena, res, 1, project->types, &err));
    cr_expect_eq(ex_stage_run(&s, &q, &err), CM_RUNTIME);
    cr_expect_eq(atomic_load(&counts.finis), atomic_load(&counts.inits));
    ex_stage_fini(&s);
    ex_result_free(res);
}
