/*
 * test_hash_agg.c - unit tests for executor/hash_agg.c on hand-built batches:
 * SINGLE mode (NULL keys form one group; count(*), count, sum, min, max, avg
 * with NULL arguments; a global aggregate over no rows returns one row),
 * PARTIAL then FINAL giving the same rows as SINGLE, many groups (growth and
 * rehashing, output over several batches), a dense integer key's direct
 * index growing and falling back to hashing, multi-column and string keys that
 * outlive their input, selections, and SUM overflow; rows that only find their
 * groups (INTERSECT, EXCEPT) start none, also when the table spills.
 *
 * Input columns: 0 k BIGINT (key), 1 s VARCHAR (key), 2 x BIGINT,
 * 3 y DECIMAL(9,2), 4 w VARCHAR, 5 z INTEGER.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/value.h"
#include "ex_test_util.h"

static CmArena arena;
static CmErr err;
static CmType in_types[6];

static void setup(void)
{
    cm_arena_init(&arena, 0);
    cm_err_init(&err);
    in_types[0] = cm_type_make(CM_T_INT64);
    in_types[1] = cm_type_varchar(-1, false);
    in_types[2] = cm_type_make(CM_T_INT64);
    in_types[3] = cm_type_decimal(9, 2);
    in_types[4] = cm_type_varchar(-1, false);
    in_types[5] = cm_type_make(CM_T_INT32);
}

static void teardown(void)
{
    cm_arena_fini(&arena);
}

TestSuite(ex_hash_agg, .init = setup, .fini = teardown);

static ExAggSpec agg(ExAggFn fn, int arg, CmType result)
{
    ExAggSpec a;
    memset(&a, 0, sizeof a);
    a.fn = fn;
    a.arg = arg;
    a.arg_type = arg >= 0 ? in_types[arg] : cm_type_make(CM_T_INT64);
    a.type = result;
    return a;
}

/* count(*), count(x), sum(x), min(x), max(x), avg(x) */
static int basic_aggs(ExAggSpec *out)
{
    CmType i64 = cm_type_make(CM_T_INT64), f64 = cm_type_make(CM_T_DOUBLE);
    out[0] = agg(EX_AGG_COUNT_STAR, -1, i64);
    out[1] = agg(EX_AGG_COUNT, 2, i64);
    out[2] = agg(EX_AGG_SUM, 2, i64);
    out[3] = agg(EX_AGG_MIN, 2, i64);
    out[4] = agg(EX_AGG_MAX, 2, i64);
    out[5] = agg(EX_AGG_AVG, 2, f64);
    return 6;
}

static ExOp *agg_op(ExAggMode mode, int n_keys, const int *keys, int n_aggs, const ExAggSpec *aggs)
{
    CmType kt[4];
    for (int k = 0; k < n_keys; k++) {
        kt[k] = in_types[keys[k]];
    }
    ExOp *op = ex_hash_agg_new(&arena, mode, n_keys, keys, kt, n_aggs, aggs, &err);
    cr_assert_not_null(op);
    return op;
}

static ExResult *run(ExOp *op, const ExResult *in)
{
    ExResult *out;
    cr_assert_eq(drive_op(op, in, NULL, &out, &err), CM_OK, "%s", err.msg);
    return out;
}

/* One input row: k (NULL if k_null), s, x (NULL if x_null), y, w, z. */
static void add(Rows *r, int64_t k, bool k_null, int64_t x, bool x_null)
{
    CmValue v[6] = {k_null ? v_null(in_types[0]) : v_i64(k),
                    v_str("s"),
                    x_null ? v_null(in_types[2]) : v_i64(x),
                    v_dec(x * 25, 9, 2),
                    v_str("w"),
                    v_i32((int32_t)x)};
    rows_add(r, v);
}

/* The output row whose first column is key k (or the NULL key). */
static int64_t find_key(const ExResult *res, int64_t k, bool k_null)
{
    for (int64_t r = 0; r < ex_result_n_rows(res); r++) {
        CmValue v;
        cell(res, r, 0, &v);
        if (v.is_null ? k_null : (!k_null && v.i == k)) {
            return r;
        }
    }
    cr_assert_fail("key %lld%s not in the output", (long long)k, k_null ? " (NULL)" : "");
    return -1;
}

Test(ex_hash_agg, nulls_form_one_group)
{
    Rows rows;
    rows_init(&rows, 6, in_types);
    add(&rows, 1, false, 10, false);
    add(&rows, 0, true, 5, false);
    add(&rows, 2, false, 0, true);
    add(&rows, 0, true, 7, false);
    add(&rows, 1, false, 20, false);
    add(&rows, 2, false, 0, true);
    add(&rows, 0, true, 0, true);
    ExResult *in = rows_done(&rows);
    ExAggSpec aggs[6];
    int n_aggs = basic_aggs(aggs);
    int keys[1] = {0};
    ExResult *out = run(agg_op(EX_AGG_SINGLE, 1, keys, n_aggs, aggs), in);
    cr_assert_eq(ex_result_n_rows(out), 3, "groups 1, 2 and NULL");

    int64_t g1 = find_key(out, 1, false);
    cr_expect_eq(cell_i(out, g1, 1), 2);
    cr_expect_eq(cell_i(out, g1, 2), 2);
    cr_expect_eq(cell_i(out, g1, 3), 30);
    cr_expect_eq(cell_i(out, g1, 4), 10);
    cr_expect_eq(cell_i(out, g1, 5), 20);
    cr_expect_eq(cell_d(out, g1, 6), 15.0);

    int64_t gn = find_key(out, 0, true);
    cr_expect_eq(cell_i(out, gn, 1), 3, "count(*) counts NULL arguments");
    cr_expect_eq(cell_i(out, gn, 2), 2, "count(x) does not");
    cr_expect_eq(cell_i(out, gn, 3), 12);
    cr_expect_eq(cell_i(out, gn, 4), 5);
    cr_expect_eq(cell_i(out, gn, 5), 7);
    cr_expect_eq(cell_d(out, gn, 6), 6.0);

    int64_t g2 = find_key(out, 2, false);
    cr_expect_eq(cell_i(out, g2, 1), 2);
    cr_expect_eq(cell_i(out, g2, 2), 0);
    cr_expect(cell_null(out, g2, 3), "sum of only NULLs is NULL");
    cr_expect(cell_null(out, g2, 4));
    cr_expect(cell_null(out, g2, 5));
    cr_expect(cell_null(out, g2, 6));
    ex_result_free(out);
    ex_result_free(in);
}

Test(ex_hash_agg, no_keys_over_no_rows_gives_one_row)
{
    ExAggSpec aggs[6];
    int n_aggs = basic_aggs(aggs);
    Rows rows;
    rows_init(&rows, 6, in_types);
    ExResult *in = rows_done(&rows);
    ExResult *out = run(agg_op(EX_AGG_SINGLE, 0, NULL, n_aggs, aggs), in);
    cr_assert_eq(ex_result_n_rows(out), 1);
    cr_expect_eq(cell_i(out, 0, 0), 0, "count(*)");
    cr_expect_eq(cell_i(out, 0, 1), 0, "count(x)");
    cr_expect(cell_null(out, 0, 2), "sum");
    cr_expect(cell_null(out, 0, 3), "min");
    cr_expect(cell_null(out, 0, 4), "max");
    cr_expect(cell_null(out, 0, 5), "avg");
    ex_result_free(out);
    ex_result_free(in);
}

Test(ex_hash_agg, no_keys_over_rows)
{
    ExAggSpec aggs[6];
    int n_aggs = basic_aggs(aggs);
    Rows rows;
    rows_init(&rows, 6, in_types);
    int64_t sum = 0;
    for (int i = 0; i < 100; i++) {
        add(&rows, 0, false, i - 40, i % 10 == 0);
        sum += i % 10 == 0 ? 0 : i - 40;
    }
    ExResult *in = rows_done(&rows);
    ExResult *out = run(agg_op(EX_AGG_SINGLE, 0, NULL, n_aggs, aggs), in);
    cr_assert_eq(ex_result_n_rows(out), 1);
    cr_expect_eq(cell_i(out, 0, 0), 100);
    cr_expect_eq(cell_i(out, 0, 1), 90);
    cr_expect_eq(cell_i(out, 0, 2), sum);
    cr_expect_eq(cell_i(out, 0, 3), -39);
    cr_expect_eq(cell_i(out, 0, 4), 59);
    cr_expect_float_eq(cell_d(out, 0, 5), (double)sum / 90, 1e-12);
    ex_result_free(out);
    ex_result_free(in);
}

Test(ex_hash_agg, keys_over_no_rows_give_no_rows)
{
    ExAggSpec aggs[6];
    int n_aggs = basic_aggs(aggs);
    int keys[1] = {0};
    Rows rows;
    rows_init(&rows, 6, in_types);
    ExResult *in = rows_done(&rows);
    ExResult *out = run(agg_op(EX_AGG_SINGLE, 1, keys, n_aggs, aggs), in);
    cr_expect_eq(ex_result_n_rows(out), 0);
    ex_result_free(out);
    ex_result_free(in);
}

Test(ex_hash_agg, partial_without_keys_over_no_rows_then_final)
{
    ExAggSpec aggs[6];
    int n_aggs = basic_aggs(aggs);
    Rows rows;
    rows_init(&rows, 6, in_types);
    ExResult *in = rows_done(&rows);
    ExResult *partial = run(agg_op(EX_AGG_PARTIAL, 0, NULL, n_aggs, aggs), in);
    cr_expect_eq(ex_result_n_rows(partial), 0, "an empty partial sends nothing");
    ExResult *final = run(agg_op(EX_AGG_FINAL, 0, NULL, n_aggs, aggs), partial);
    cr_assert_eq(ex_result_n_rows(final), 1);
    cr_expect_eq(cell_i(final, 0, 0), 0);
    cr_expect_eq(cell_i(final, 0, 1), 0);
    cr_expect(cell_null(final, 0, 2));
    cr_expect(cell_null(final, 0, 5));
    ex_result_free(final);
    ex_result_free(partial);
    ex_result_free(in);
}

Test(ex_hash_agg, partial_output_types)
{
    ExAggSpec aggs[6];
    int n_aggs = basic_aggs(aggs);
    aggs[2] = agg(EX_AGG_SUM, 3, cm_type_decimal(18, 2));    /* sum(y) */
    aggs[5] = agg(EX_AGG_AVG, 5, cm_type_make(CM_T_DOUBLE)); /* avg(z) */
    int keys[1] = {0};
    ExOp *p = agg_op(EX_AGG_PARTIAL, 1, keys, n_aggs, aggs);
    /* k, count*, count, sum(y), min, max, avg sum, avg count */
    cr_assert_eq(p->n_cols, 8);
    cr_expect_eq(p->types[0].id, CM_T_INT64);
    /* exact sums are 128 bits, partial ones too: DECIMAL(38,s) */
    cr_expect_eq(p->types[3].id, CM_T_DECIMAL128);
    cr_expect_eq(p->types[3].precision, 38);
    cr_expect_eq(p->types[3].scale, 2);
    cr_expect_eq(p->types[6].id, CM_T_DECIMAL128, "avg of INTEGER sums in DECIMAL(38,0)");
    cr_expect_eq(p->types[6].scale, 0);
    cr_expect_eq(p->types[7].id, CM_T_INT64);
    CmType t[2];
    cr_expect_eq(ex_agg_partial_types(&aggs[5], t), 2);
    cr_expect_eq(ex_agg_partial_types(&aggs[0], t), 1);
    ExOp *s = agg_op(EX_AGG_SINGLE, 1, keys, n_aggs, aggs);
    cr_expect_eq(s->n_cols, 7);
    cr_expect_eq(s->types[6].id, CM_T_DOUBLE);
}

/* Rows with keys k = i % n_keys (NULL when i % 11 == 0), x = (i * 7) % 100 - 30
 * (NULL when i % 13 == 0), y = x / 4 as DECIMAL, w = a string of the key. */
static ExResult *grouped_input(int n_rows, int n_keys)
{
    static const char *words[] = {"pear", "apple", "a fairly long string value",
                                  "another long string for min/max", "zz"};
    Rows rows;
    rows_init(&rows, 6, in_types);
    for (int i = 0; i < n_rows; i++) {
        int64_t x = (i * 7) % 100 - 30;
        bool x_null = i % 13 == 0;
        CmValue v[6] = {i % 11 == 0 ? v_null(in_types[0]) : v_i64(i % n_keys),
                        v_str(words[i % 3]),
                        x_null ? v_null(in_types[2]) : v_i64(x),
                        x_null ? v_null(in_types[3]) : v_dec(x * 25, 9, 2),
                        v_str(words[(i / 3) % 5]),
                        v_i32((int32_t)(i % 17) - 8)};
        rows_add(&rows, v);
    }
    return rows_done(&rows);
}

/* Every aggregate over every column kind (integer, decimal, string, int32). */
static int all_aggs(ExAggSpec *out)
{
    CmType i64 = cm_type_make(CM_T_INT64), f64 = cm_type_make(CM_T_DOUBLE);
    int n = basic_aggs(out);
    out[n++] = agg(EX_AGG_SUM, 3, cm_type_decimal(18, 2));
    out[n++] = agg(EX_AGG_AVG, 3, f64);
    out[n++] = agg(EX_AGG_MIN, 4, in_types[4]);
    out[n++] = agg(EX_AGG_MAX, 4, in_types[4]);
    out[n++] = agg(EX_AGG_SUM, 5, i64);
    out[n++] = agg(EX_AGG_MIN, 5, in_types[5]);
    out[n++] = agg(EX_AGG_AVG, 5, f64);
    out[n++] = agg(EX_AGG_COUNT, 4, i64);
    return n;
}

/* Splits `in` into `n_tasks` inputs (batch b goes to task b % n_tasks), runs
 * PARTIAL on each, FINAL over all partial outputs, and returns FINAL's rows. */
static ExResult *partial_then_final(const ExResult *in, int n_tasks, int n_keys, const int *keys,
                                    int n_aggs, const ExAggSpec *aggs)
{
    ExOp *partial = agg_op(EX_AGG_PARTIAL, n_keys, keys, n_aggs, aggs);
    ExResult *all_partials = ex_result_new(partial->n_cols, partial->types, &err);
    for (int t = 0; t < n_tasks; t++) {
        ExResult *share = ex_result_new(ex_result_n_cols(in), in_types, &err);
        for (int b = t; b < ex_result_n_batches(in); b += n_tasks) {
            cr_assert_eq(ex_result_append(share, ex_result_batch(in, b), &err), CM_OK);
        }
        ExResult *out = run(partial, share);
        for (int b = 0; b < ex_result_n_batches(out); b++) {
            cr_assert_eq(ex_result_append(all_partials, ex_result_batch(out, b), &err), CM_OK);
        }
        ex_result_free(out);
        ex_result_free(share);
    }
    /* FINAL finds its keys at the front of the partial output itself. */
    ExOp *final = agg_op(EX_AGG_FINAL, n_keys, keys, n_aggs, aggs);
    ExResult *out = run(final, all_partials);
    ex_result_free(all_partials);
    return out;
}

Test(ex_hash_agg, partial_then_final_equals_single)
{
    ExResult *in = grouped_input(2000, 37);
    ExAggSpec aggs[16];
    int n_aggs = all_aggs(aggs);
    int keys[1] = {0};
    ExResult *single = run(agg_op(EX_AGG_SINGLE, 1, keys, n_aggs, aggs), in);
    cr_expect_eq(ex_result_n_rows(single), 38, "37 keys and NULL");
    for (int tasks = 1; tasks <= 4; tasks++) {
        ExResult *final = partial_then_final(in, tasks, 1, keys, n_aggs, aggs);
        expect_same_rows(single, final);
        ex_result_free(final);
    }
    ex_result_free(single);
    ex_result_free(in);
}

Test(ex_hash_agg, partial_then_final_without_keys)
{
    ExResult *in = grouped_input(500, 5);
    ExAggSpec aggs[16];
    int n_aggs = all_aggs(aggs);
    ExResult *single = run(agg_op(EX_AGG_SINGLE, 0, NULL, n_aggs, aggs), in);
    cr_assert_eq(ex_result_n_rows(single), 1);
    cr_expect_eq(cell_i(single, 0, 0), 500);
    ExResult *final = partial_then_final(in, 3, 0, NULL, n_aggs, aggs);
    expect_same_rows(single, final);
    ex_result_free(final);
    ex_result_free(single);
    ex_result_free(in);
}

Test(ex_hash_agg, partial_then_final_with_two_keys)
{
    ExResult *in = grouped_input(1500, 7);
    ExAggSpec aggs[16];
    int n_aggs = all_aggs(aggs);
    int keys[2] = {1, 0};
    ExResult *single = run(agg_op(EX_AGG_SINGLE, 2, keys, n_aggs, aggs), in);
    cr_expect_eq(ex_result_n_rows(single), 3 * 8, "3 words x (7 keys and NULL)");
    ExResult *final = partial_then_final(in, 2, 2, keys, n_aggs, aggs);
    expect_same_rows(single, final);
    ex_result_free(final);
    ex_result_free(single);
    ex_result_free(in);
}

/* Checks SINGLE's answer for grouped_input against a direct computation. */
Test(ex_hash_agg, single_matches_a_direct_computation)
{
    enum { N = 3000, K = 37 };
    ExResult *in = grouped_input(N, K);
    ExAggSpec aggs[16];
    int n_aggs = all_aggs(aggs);
    int keys[1] = {0};
    ExResult *out = run(agg_op(EX_AGG_SINGLE, 1, keys, n_aggs, aggs), in);
    /* group K stands for the NULL key */
    int64_t cnt[K + 1] = {0}, cnt_x[K + 1] = {0}, sum_x[K + 1] = {0}, min_x[K + 1], max_x[K + 1];
    for (int g = 0; g <= K; g++) {
        min_x[g] = INT64_MAX;
        max_x[g] = INT64_MIN;
    }
    for (int i = 0; i < N; i++) {
        int g = i % 11 == 0 ? K : i % K;
        cnt[g]++;
        if (i % 13 != 0) {
            int64_t x = (i * 7) % 100 - 30;
            cnt_x[g]++;
            sum_x[g] += x;
            min_x[g] = x < min_x[g] ? x : min_x[g];
            max_x[g] = x > max_x[g] ? x : max_x[g];
        }
    }
    cr_assert_eq(ex_result_n_rows(out), K + 1);
    for (int g = 0; g <= K; g++) {
        int64_t r = find_key(out, g, g == K);
        cr_expect_eq(cell_i(out, r, 1), cnt[g], "group %d", g);
        cr_expect_eq(cell_i(out, r, 2), cnt_x[g], "group %d", g);
        cr_expect_eq(cell_i(out, r, 3), sum_x[g], "group %d", g);
        cr_expect_eq(cell_i(out, r, 4), min_x[g], "group %d", g);
        cr_expect_eq(cell_i(out, r, 5), max_x[g], "group %d", g);
        cr_expect_float_eq(cell_d(out, r, 6), (double)sum_x[g] / (double)cnt_x[g], 1e-9);
        /* sum(y) with y = x / 4 in cents: exactly 25 * sum(x) cents. */
        CmValue sy;
        cell(out, r, 7, &sy);
        cr_expect_eq(sy.i, 25 * sum_x[g]);
        cr_expect_eq(sy.type.scale, 2);
    }
    ex_result_free(out);
    ex_result_free(in);
}

/* count(*) and sum(column `col`) of rows of types t, grouped by column 0. */
static ExOp *count_and_sum(const CmType *t, int col)
{
    ExAggSpec a[2];
    memset(a, 0, sizeof a);
    a[0].fn = EX_AGG_COUNT_STAR;
    a[0].arg = -1;
    a[0].type = t[0];
    a[1].fn = EX_AGG_SUM;
    a[1].arg = col;
    a[1].arg_type = t[col];
    a[1].type = t[col];
    int keys[1] = {0};
    return ex_hash_agg_new(&arena, EX_AGG_SINGLE, 1, keys, t, 2, a, &err);
}

Test(ex_hash_agg, many_groups_grow_and_span_several_output_batches)
{
    enum { N_GROUPS = 5000 };
    CmType t[1] = {cm_type_make(CM_T_INT64)};
    Rows rows;
    rows_init(&rows, 1, t);
    /* Every group twice, in two passes, so matches happen after rehashes. */
    for (int pass = 0; pass < 2; pass++) {
        for (int g = 0; g < N_GROUPS; g++) {
            CmValue v = v_i64((int64_t)g * 1000003);
            rows_add(&rows, &v);
        }
    }
    ExResult *in = rows_done(&rows);
    ExOp *op = count_and_sum(t, 0);
    cr_assert_not_null(op);
    ExResult *out = run(op, in);
    cr_assert_eq(ex_result_n_rows(out), N_GROUPS);
    cr_expect_geq(ex_result_n_batches(out), (N_GROUPS + CM_BATCH_CAP - 1) / CM_BATCH_CAP);
    static bool seen[N_GROUPS];
    memset(seen, 0, sizeof seen);
    for (int64_t r = 0; r < N_GROUPS; r++) {
        int64_t key = cell_i(out, r, 0);
        cr_assert_eq(key % 1000003, 0);
        int64_t g = key / 1000003;
        cr_assert(g >= 0 && g < N_GROUPS && !seen[g], "group %lld twice", (long long)g);
        seen[g] = true;
        cr_assert_eq(cell_i(out, r, 1), 2, "group %lld", (long long)g);
        cr_assert_eq(cell_i(out, r, 2), 2 * key);
    }
    ex_result_free(out);
    ex_result_free(in);
}

/* One integer key over a dense span indexes its groups directly (hash_agg.c
 * direct_choose); the index grows to both sides, keeps a NULL group apart,
 * and hands its groups over to the hash slots when keys far apart arrive
 * mid-stream, after which the dense keys still find their groups. */
static void add_key(Rows *r, int64_t k, bool is_null)
{
    CmValue v = is_null ? v_null(cm_type_make(CM_T_INT64)) : v_i64(k);
    rows_add(r, &v);
}

Test(ex_hash_agg, dense_key_index_grows_and_falls_back_mid_stream)
{
    enum { N_POS = 3000, N_NEG = 2000, N_FAR = 500 };
    const int64_t far = 1000000000000;
    CmType t[1] = {cm_type_make(CM_T_INT64)};
    Rows rows;
    rows_init(&rows, 1, t);
    for (int k = 0; k < N_POS; k++) { /* dense: indexed */
        add_key(&rows, k, false);
    }
    for (int k = 1; k <= N_NEG; k++) { /* the span grows to the left */
        add_key(&rows, -k, false);
    }
    for (int i = 0; i < 3; i++) {
        add_key(&rows, 0, true);
    }
    for (int k = N_POS - 1; k >= 0; k--) {
        add_key(&rows, k, false);
    }
    for (int i = 1; i <= N_FAR; i++) { /* far apart: back to hashing */
        add_key(&rows, i * far, false);
    }
    for (int k = -N_NEG; k < N_POS; k++) {
        add_key(&rows, k, false);
        if (k % 1000 == 0) {
            add_key(&rows, 0, true);
        }
    }
    for (int i = N_FAR; i >= 1; i--) {
        add_key(&rows, i * far, false);
    }
    ExResult *in = rows_done(&rows);
    ExOp *op = count_and_sum(t, 0);
    cr_assert_not_null(op);
    ExResult *out = run(op, in);
    cr_assert_eq(ex_result_n_rows(out), N_POS + N_NEG + N_FAR + 1);
    int64_t n_null_groups = 0;
    for (int64_t r = 0; r < ex_result_n_rows(out); r++) {
        if (cell_null(out, r, 0)) {
            n_null_groups++;
            cr_expect_eq(cell_i(out, r, 1), 3 + 5, "the NULL key's rows");
            cr_expect(cell_null(out, r, 2));
            continue;
        }
        int64_t k = cell_i(out, r, 0);
        int64_t want = k >= far ? 2 : k >= 0 ? 3 : 2;
        cr_assert(k >= far ? k % far == 0 && k / far <= N_FAR : k >= -N_NEG && k < N_POS,
                  "unexpected key %lld", (long long)k);
        cr_assert_eq(cell_i(out, r, 1), want, "key %lld", (long long)k);
        cr_assert_eq(cell_i(out, r, 2), want * k, "key %lld", (long long)k);
    }
    cr_expect_eq(n_null_groups, 1);
    ex_result_free(out);
    ex_result_free(in);
}

/* Only the active rows of a batch are aggregated. */
static void every_third_row(CmBatch *b, int batch_idx)
{
    int n = 0;
    for (int i = 0; i < b->n_rows; i++) {
        if ((batch_idx * CM_BATCH_CAP + i) % 3 == 0) {
            b->sel_buf[n++] = (uint32_t)i;
        }
    }
    b->sel = b->sel_buf;
    b->n_rows = n;
}

Test(ex_hash_agg, selection_limits_the_rows)
{
    CmType t[2] = {cm_type_make(CM_T_INT64), cm_type_make(CM_T_INT64)};
    Rows rows;
    rows_init(&rows, 2, t);
    int64_t want_sum[2] = {0, 0}, want_cnt[2] = {0, 0};
    for (int i = 0; i < 300; i++) {
        CmValue v[2] = {v_i64(i % 2), v_i64(i)};
        rows_add(&rows, v);
        if (i % 3 == 0) {
            want_sum[i % 2] += i;
            want_cnt[i % 2]++;
        }
    }
    ExResult *in = rows_done(&rows);
    ExOp *op = count_and_sum(t, 1);
    ExResult *out;
    cr_assert_eq(drive_op(op, in, every_third_row, &out, &err), CM_OK);
    cr_assert_eq(ex_result_n_rows(out), 2);
    for (int r = 0; r < 2; r++) {
        int64_t k = cell_i(out, r, 0);
        cr_expect_eq(cell_i(out, r, 1), want_cnt[k]);
        cr_expect_eq(cell_i(out, r, 2), want_sum[k]);
    }
    ex_result_free(out);
    ex_result_free(in);
}

/* Groups 4 batches of a short and a long key with min/max of a string, the
 * input's bytes overwritten after each batch: keys and values must have been
 * copied.  key_type: the key column's declared type. */
static void check_string_keys_outlive_the_input(CmType key_type)
{
    CmType t[2] = {key_type, cm_type_varchar(-1, false)};
    int keys[1] = {0};
    ExAggSpec a[2];
    memset(a, 0, sizeof a);
    a[0].fn = EX_AGG_MIN;
    a[0].arg = 1;
    a[0].arg_type = a[0].type = t[1];
    a[1].fn = EX_AGG_MAX;
    a[1].arg = 1;
    a[1].arg_type = a[1].type = t[1];
    ExOp *op = ex_hash_agg_new(&arena, EX_AGG_SINGLE, 1, keys, t, 2, a, &err);
    cr_assert_not_null(op);
    ExTask task = {.n_tasks = 1};
    void *local = op->vt->local_init(op, &task, &err);
    cr_assert_not_null(local);
    static const char *key_text[] = {"short", "a key that is long enough to be out of line"};
    int n_batches = 4;
    for (int b = 0; b < n_batches; b++) {
        CmBatch in;
        cr_assert_eq(cm_batch_init(&in, 2, t, &err), CM_OK);
        for (int i = 0; i < CM_BATCH_CAP; i++) {
            const char *k = key_text[i % 2];
            char val[64];
            int len = snprintf(val, sizeof val, "value number %06d of the input", b * 10000 + i);
            char *kc = cm_arena_strdup(&in.heap, k);
            char *vc = cm_arena_strndup(&in.heap, val, (size_t)len);
            ((CmStr *)in.cols[0].data)[i] = cm_str_make(kc, (uint32_t)strlen(kc));
            ((CmStr *)in.cols[1].data)[i] = cm_str_make(vc, (uint32_t)len);
        }
        in.n_rows = CM_BATCH_CAP;
        const CmBatch *o = NULL;
        cr_assert_eq(op->vt->push(op, local, &in, &o, &err), EX_NEED_INPUT);
        cr_assert_eq(err.code, CM_OK);
        /* Destroy the input's bytes before freeing it. */
        for (int i = 0; i < CM_BATCH_CAP; i++) {
            for (int c = 0; c < 2; c++) {
                CmStr *s = &((CmStr *)in.cols[c].data)[i];
                if (s->len > CM_STR_INLINE) {
                    memset((char *)s->ptr, '#', s->len);
                }
            }
        }
        cm_batch_fini(&in);
    }
    ExResult *out = ex_result_new(op->n_cols, op->types, &err);
    ExOpResult r;
    do {
        const CmBatch *o = NULL;
        r = op->vt->flush(op, local, &o, &err);
        cr_assert_eq(err.code, CM_OK);
        if (o != NULL) {
            cr_assert_eq(ex_result_append(out, o, &err), CM_OK);
        }
    } while (r == EX_HAVE_MORE);
    op->vt->local_fini(op, local);
    int n_groups = CM_BATCH_CAP >= 2 ? 2 : 1;
    cr_assert_eq(ex_result_n_rows(out), n_groups);
    for (int64_t row = 0; row < n_groups; row++) {
        bool is_long = cell_str_is(out, row, 0, key_text[1]);
        cr_assert(is_long || cell_str_is(out, row, 0, key_text[0]), "key damaged");
        /* min: first batch's first row of that key; max: last batch's last. */
        int first = is_long ? 1 : 0;
        int last = (CM_BATCH_CAP - 1) % 2 == first ? CM_BATCH_CAP - 1 : CM_BATCH_CAP - 2;
        char want[64];
        snprintf(want, sizeof want, "value number %06d of the input", first);
        cr_expect(cell_str_is(out, row, 1, want), "min of %s", is_long ? "long" : "short");
        snprintf(want, sizeof want, "value number %06d of the input",
                 (n_batches - 1) * 10000 + last);
        cr_expect(cell_str_is(out, row, 2, want), "max of %s", is_long ? "long" : "short");
    }
    ex_result_free(out);
}

Test(ex_hash_agg, string_keys_and_min_max_outlive_the_input)
{
    check_string_keys_outlive_the_input(cm_type_varchar(-1, false));
}

/* A key declared CHAR(1) is packed into a word; a value longer than declared
 * (a type that does not hold) goes to the table's interned strings instead
 * of being cut to its word, and is copied there. */
Test(ex_hash_agg, packed_string_keys_longer_than_declared_are_interned)
{
    check_string_keys_outlive_the_input(cm_type_varchar(1, true));
}

Test(ex_hash_agg, multi_column_keys_distinguish_null_positions)
{
    CmType t[3] = {cm_type_make(CM_T_INT64), cm_type_make(CM_T_INT64), cm_type_make(CM_T_INT64)};
    Rows rows;
    rows_init(&rows, 3, t);
    /* (1, NULL), (NULL, 1), (NULL, NULL), (1, 1), each twice. */
    for (int rep = 0; rep < 2; rep++) {
        CmValue r1[3] = {v_i64(1), v_null(t[1]), v_i64(1)};
        CmValue r2[3] = {v_null(t[0]), v_i64(1), v_i64(10)};
        CmValue r3[3] = {v_null(t[0]), v_null(t[1]), v_i64(100)};
        CmValue r4[3] = {v_i64(1), v_i64(1), v_i64(1000)};
        rows_add(&rows, r1);
        rows_add(&rows, r2);
        rows_add(&rows, r3);
        rows_add(&rows, r4);
    }
    ExResult *in = rows_done(&rows);
    ExAggSpec a;
    memset(&a, 0, sizeof a);
    a.fn = EX_AGG_SUM;
    a.arg = 2;
    a.arg_type = a.type = t[2];
    int keys[2] = {0, 1};
    ExOp *op = ex_hash_agg_new(&arena, EX_AGG_SINGLE, 2, keys, t, 1, &a, &err);
    ExResult *out = run(op, in);
    cr_assert_eq(ex_result_n_rows(out), 4);
    int64_t total = 0;
    for (int64_t r = 0; r < 4; r++) {
        int64_t s = cell_i(out, r, 2);
        cr_expect(s == 2 || s == 20 || s == 200 || s == 2000, "sum %lld", (long long)s);
        bool n0 = cell_null(out, r, 0), n1 = cell_null(out, r, 1);
        int64_t want = n0 && n1 ? 200 : n0 ? 20 : n1 ? 2 : 2000;
        cr_expect_eq(s, want);
        total += s;
    }
    cr_expect_eq(total, 2222);
    ex_result_free(out);
    ex_result_free(in);
}

Test(ex_hash_agg, negative_zero_groups_with_zero)
{
    CmType t[1] = {cm_type_make(CM_T_DOUBLE)};
    Rows rows;
    rows_init(&rows, 1, t);
    CmValue a = v_f64(0.0), b = v_f64(-0.0), c = v_f64(1.5);
    rows_add(&rows, &a);
    rows_add(&rows, &b);
    rows_add(&rows, &c);
    rows_add(&rows, &b);
    ExResult *in = rows_done(&rows);
    ExAggSpec s;
    memset(&s, 0, sizeof s);
    s.fn = EX_AGG_COUNT_STAR;
    s.arg = -1;
    s.type = cm_type_make(CM_T_INT64);
    int keys[1] = {0};
    ExResult *out = run(ex_hash_agg_new(&arena, EX_AGG_SINGLE, 1, keys, t, 1, &s, &err), in);
    cr_assert_eq(ex_result_n_rows(out), 2);
    for (int64_t r = 0; r < 2; r++) {
        cr_expect_eq(cell_i(out, r, 1), cell_d(out, r, 0) == 0 ? 3 : 1);
    }
    ex_result_free(out);
    ex_result_free(in);
}

/* A BIGINT sum past BIGINT is exact (DECIMAL(38,0), DuckDB's HUGEINT), both
 * ways round, and the wide partial sums merge to it in FINAL; a sum past 38
 * digits is an error, never a wrapped value. */
Test(ex_hash_agg, sum_past_bigint_is_exact)
{
    CmType t[1] = {cm_type_make(CM_T_INT64)};
    Rows rows;
    rows_init(&rows, 1, t);
    for (int i = 0; i < 3; i++) {
        CmValue big = v_i64(INT64_MAX - 5), small = v_i64(INT64_MIN + 1), ten = v_i64(10);
        rows_add(&rows, &big);
        rows_add(&rows, &ten);
        rows_add(&rows, &big);
        rows_add(&rows, i == 2 ? &small : &ten);
    }
    ExResult *in = rows_done(&rows);
    ExAggSpec s;
    memset(&s, 0, sizeof s);
    s.fn = EX_AGG_SUM;
    s.arg = 0;
    s.arg_type = t[0];
    s.type = cm_type_decimal(38, 0);
    CmInt128 want = (CmInt128)(INT64_MAX - 5) * 6 + 50 + (INT64_MIN + 1);
    ExResult *out = run(ex_hash_agg_new(&arena, EX_AGG_SINGLE, 0, NULL, t, 1, &s, &err), in);
    CmValue v;
    cell(out, 0, 0, &v);
    cr_assert_eq(v.type.id, CM_T_DECIMAL128);
    cr_expect(cm_i128_get(v.h) == want);
    ex_result_free(out);
    /* two partial sums, each past BIGINT, merged */
    ExOp *partial = ex_hash_agg_new(&arena, EX_AGG_PARTIAL, 0, NULL, t, 1, &s, &err);
    ExResult *parts = run(partial, in);
    ExResult *twice = ex_result_new(partial->n_cols, partial->types, &err);
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(ex_result_append(twice, ex_result_batch(parts, 0), &err), CM_OK);
    }
    ExResult *merged = run(ex_hash_agg_new(&arena, EX_AGG_FINAL, 0, NULL, t, 1, &s, &err), twice);
    cell(merged, 0, 0, &v);
    cr_expect(cm_i128_get(v.h) == 2 * want);
    ex_result_free(merged);
    ex_result_free(twice);
    ex_result_free(parts);
    ex_result_free(in);

    CmType w[1] = {cm_type_decimal(38, 0)};
    rows_init(&rows, 1, w);
    CmValue top = {.type = w[0]}, one = {.type = w[0]};
    cm_i128_put(top.h, cm_pow10_128(38) - 1);
    cm_i128_put(one.h, 1);
    rows_add(&rows, &top);
    rows_add(&rows, &one);
    in = rows_done(&rows);
    s.arg_type = s.type = w[0];
    ExOp *op = ex_hash_agg_new(&arena, EX_AGG_SINGLE, 0, NULL, w, 1, &s, &err);
    cr_expect_eq(drive_op(op, in, NULL, &out, &err), CM_RUNTIME);
    cr_expect_str_eq(err.msg, "overflow in SUM: the sum exceeds DECIMAL(38)");
    ex_result_free(out);
    ex_result_free(in);
}

Test(ex_hash_agg, sum_of_int32_is_computed_in_bigint)
{
    CmType t[1] = {cm_type_make(CM_T_INT32)};
    Rows rows;
    rows_init(&rows, 1, t);
    for (int i = 0; i < 4; i++) {
        CmValue v = v_i32(INT32_MAX);
        rows_add(&rows, &v);
    }
    ExResult *in = rows_done(&rows);
    ExAggSpec s;
    memset(&s, 0, sizeof s);
    s.fn = EX_AGG_SUM;
    s.arg = 0;
    s.arg_type = t[0];
    s.type = cm_type_make(CM_T_INT64);
    ExResult *out = run(ex_hash_agg_new(&arena, EX_AGG_SINGLE, 0, NULL, t, 1, &s, &err), in);
    cr_expect_eq(cell_i(out, 0, 0), 4LL * INT32_MAX);
    ex_result_free(out);
    ex_result_free(in);
}

/* Regression (was a bug): NaN keys do not group.  hashing.c gives every NaN the same hash, but
 * key_matches() in hash_agg.c compares doubles with `!=`, and NaN != NaN, so
 * every NaN row becomes a group of its own: GROUP BY over a column with two
 * NaNs returns two 'nan' rows.  In SQL grouping NaN is not distinct from NaN
 * (PostgreSQL and DuckDB return one group); the double case of key_matches
 * (and ex_key_equal) should compare NaN equal to NaN. */
Test(ex_hash_agg, nan_keys_form_one_group)
{
    CmType t[1] = {cm_type_make(CM_T_DOUBLE)};
    Rows rows;
    rows_init(&rows, 1, t);
    CmValue n = v_f64(NAN), one = v_f64(1.0);
    rows_add(&rows, &n);
    rows_add(&rows, &one);
    rows_add(&rows, &n);
    ExResult *in = rows_done(&rows);
    ExAggSpec s;
    memset(&s, 0, sizeof s);
    s.fn = EX_AGG_COUNT_STAR;
    s.arg = -1;
    s.type = cm_type_make(CM_T_INT64);
    int keys[1] = {0};
    ExResult *out = run(ex_hash_agg_new(&arena, EX_AGG_SINGLE, 1, keys, t, 1, &s, &err), in);
    cr_expect_eq(ex_result_n_rows(out), 2, "groups: NaN and 1.0");
    ex_result_free(out);
    ex_result_free(in);
}

/* ---- spilling -------------------------------------------------------------------------- */

/* count(*), count, sum, min, max, avg of x; min/max of the string w; count(DISTINCT z) and
 * sum(DISTINCT x): results that do not depend on the order rows are added in. */
static int spill_aggs(ExAggSpec *out)
{
    CmType i64 = cm_type_make(CM_T_INT64);
    int n = basic_aggs(out);
    out[n++] = agg(EX_AGG_MIN, 4, in_types[4]);
    out[n++] = agg(EX_AGG_MAX, 4, in_types[4]);
    out[n] = agg(EX_AGG_COUNT, 5, i64);
    out[n++].distinct = true;
    out[n] = agg(EX_AGG_SUM, 2, i64);
    out[n++].distinct = true;
    return n;
}

Test(ex_hash_agg, spills_within_a_small_limit_with_the_same_rows)
{
    ExResult *in = grouped_input(60000, 20000);
    ExAggSpec aggs[16];
    int n_aggs = spill_aggs(aggs);
    int keys[2] = {0, 1};
    ExOp *big = agg_op(EX_AGG_SINGLE, 2, keys, n_aggs, aggs);
    ExResult *in_memory = run(big, in);
    cr_expect_eq(atomic_load(&big->spilled_bytes), 0);
    int64_t limit = cm_mem_limit();
    cm_mem_set_limit(cm_mem_limit_pooling(256 * 1024));
    ExOp *small = agg_op(EX_AGG_SINGLE, 2, keys, n_aggs, aggs);
    ExResult *spilled = run(small, in);
    cm_mem_set_limit(limit);
    cr_expect_gt(atomic_load(&small->spilled_bytes), 0, "the table spilled");
    cr_expect_gt(atomic_load(&small->spill_files), 16, "some partitions spilled again");
    expect_same_rows(in_memory, spilled);
    ex_result_free(spilled);
    ex_result_free(in_memory);
    ex_result_free(in);
}

/* PARTIAL over grouped_input(n_rows, n_keys) at a limit that pools 256 KB, then FINAL
 * without one, must give SINGLE's rows, having emitted more than `times`
 * rows per group before the end of the input (the table drained). */
static void partial_at_a_small_limit(int n_rows, int n_keys, int times)
{
    ExResult *in = grouped_input(n_rows, n_keys);
    ExAggSpec aggs[16];
    int n_aggs = basic_aggs(aggs);
    int keys[1] = {0};
    ExResult *single = run(agg_op(EX_AGG_SINGLE, 1, keys, n_aggs, aggs), in);
    int64_t limit = cm_mem_limit();
    cm_mem_set_limit(cm_mem_limit_pooling(256 * 1024));
    ExResult *partials = run(agg_op(EX_AGG_PARTIAL, 1, keys, n_aggs, aggs), in);
    cm_mem_set_limit(limit);
    cr_expect_gt(ex_result_n_rows(partials), times * ex_result_n_rows(single),
                 "groups were emitted before the end of the input");
    ExResult *final = run(agg_op(EX_AGG_FINAL, 1, keys, n_aggs, aggs), partials);
    expect_same_rows(single, final);
    ex_result_free(final);
    ex_result_free(partials);
    ex_result_free(single);
    ex_result_free(in);
}

Test(ex_hash_agg, partial_emits_early_within_a_small_limit)
{
    partial_at_a_small_limit(40000, 10000, 1);
}

/* A partial table that memory refuses empties and fills again, keeping its
 * direct index (hash_agg_fast.c ex_hash_agg_direct_clear): 3,000 dense keys,
 * within the index's first size, drained several times.  An entry left over
 * from before a drain would send rows to a group that is gone. */
Test(ex_hash_agg, partial_reuses_its_direct_index_after_each_drain)
{
    partial_at_a_small_limit(60000, 3000, 2);
}

/* ---- rows that only find their groups (INTERSECT, EXCEPT) ---------------------------------- */

/* sum_count(x) by `keys`, the rows whose x is not 0 only finding their groups. */
static ExOp *find_only_op(int n_keys, const int *keys)
{
    ExAggSpec sum = agg(EX_AGG_SUM_COUNT, 2, cm_type_make(CM_T_INT64));
    ExOp *op = agg_op(EX_AGG_SINGLE, n_keys, keys, 1, &sum);
    ex_hash_agg_set_find_only(op, 2);
    return op;
}

/* Rows of both kinds mixed in a batch (in 3-row batches too): keys 2 and 4
 * have only rows with x = 1, which start no group.  Through the direct index
 * (one dense key), the packed hash (sparse keys) and the column-wise keys
 * (with a string). */
Test(ex_hash_agg, rows_that_only_find_start_no_group)
{
    static const int64_t k[] = {1, 2, 1, 3, 0, 0, 4, 3, 5, 5};
    static const bool k_null[] = {0, 0, 0, 0, 1, 1, 0, 0, 0, 0};
    static const int64_t x[] = {0, 1, 1, 0, 0, 1, 1, 0, 0, 1};
    static const int64_t want_k[] = {1, 3, 5};
    static const int64_t want_sum[] = {1, 0, 1};
    for (int form = 0; form < 3; form++) {
        int64_t scale = form == 1 ? 1000000007 : 1;
        Rows rows;
        rows_init(&rows, 6, in_types);
        for (int i = 0; i < 10; i++) {
            add(&rows, k[i] * scale, k_null[i], x[i], false);
        }
        ExResult *in = rows_done(&rows);
        int keys[2] = {0, 1};
        ExResult *out = run(find_only_op(form == 2 ? 2 : 1, keys), in);
        cr_assert_eq(ex_result_n_rows(out), 4, "groups 1, 3, 5 and NULL (form %d)", form);
        for (int g = 0; g < 3; g++) {
            int64_t r = find_key(out, want_k[g] * scale, false);
            cr_expect_eq(cell_i(out, r, form == 2 ? 2 : 1), want_sum[g], "form %d", form);
        }
        cr_expect_eq(cell_i(out, find_key(out, 0, true), form == 2 ? 2 : 1), 1);
        ex_result_free(out);
        ex_result_free(in);
    }
}

/* Keys 0..n-1 with x = 0, then keys n/2..2n-1 with x = 1: n groups, sums 1
 * from n/2 on.  At a limit that pools 256 KB the table spills, its partitions keep the
 * finding rows that missed, and the answer is the same. */
Test(ex_hash_agg, rows_that_only_find_spill_with_the_same_groups)
{
    int n = 30000;
    Rows rows;
    rows_init(&rows, 6, in_types);
    for (int i = 0; i < 2 * n + n / 2; i++) {
        bool finds = i >= n;
        int64_t key = finds ? i - n / 2 : i;
        add(&rows, key * 7919 - 100000, false, finds, false);
    }
    ExResult *in = rows_done(&rows);
    int keys[1] = {0};
    ExResult *in_memory = run(find_only_op(1, keys), in);
    int64_t limit = cm_mem_limit();
    cm_mem_set_limit(cm_mem_limit_pooling(256 * 1024));
    ExOp *small = find_only_op(1, keys);
    ExResult *spilled = run(small, in);
    cm_mem_set_limit(limit);
    cr_expect_gt(atomic_load(&small->spilled_bytes), 0, "the table spilled");
    cr_assert_eq(ex_result_n_rows(in_memory), n);
    int64_t n_found = 0;
    for (int64_t r = 0; r < n; r++) {
        int64_t key = (cell_i(in_memory, r, 0) + 100000) / 7919;
        cr_expect_eq(cell_i(in_memory, r, 1), key >= n / 2, "key %lld", (long long)key);
        n_found += cell_i(in_memory, r, 1);
    }
    cr_expect_eq(n_found, n / 2);
    expect_same_rows(in_memory, spilled);
    ex_result_free(spilled);
    ex_result_free(in_memory);
    ex_result_free(in);
}
