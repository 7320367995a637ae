/*
 * test_sort.c - unit tests for executor/sort.c: ORDER BY on one and several
 * keys, ASC/DESC, NULLS FIRST/LAST, stability (ties keep input order, across
 * batches), strings, top-N limits and output spanning several batches.  The
 * expected order comes from a reference insertion sort in this file.
 *
 * Input columns: 0 a BIGINT (NULL when idx % 7 == 3), 1 b VARCHAR, 2 c DOUBLE
 * (NULL when idx % 5 == 1), 3 idx BIGINT (input position).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ex_test_util.h"

enum { N = 300 };

static CmArena arena;
static CmErr err;
static CmType types[4];

static void setup(void)
{
    cm_arena_init(&arena, 0);
    cm_err_init(&err);
    types[0] = cm_type_make(CM_T_INT64);
    types[1] = cm_type_varchar(-1, false);
    types[2] = cm_type_make(CM_T_DOUBLE);
    types[3] = cm_type_make(CM_T_INT64);
}

static void teardown(void)
{
    cm_arena_fini(&arena);
}

TestSuite(ex_sort, .init = setup, .fini = teardown);

static const char *WORDS[] = {"delta", "alpha",    "a much longer string, out of line",
                              "",      "alphabet", "a much longer string, out of lineZ",
                              "Zulu"};

typedef struct Row {
    bool a_null, c_null;
    int64_t a;
    const char *b;
    double c;
    int64_t idx;
} Row;

static Row rows_data[N];

/* Few distinct values per key, so ties are common. */
static ExResult *make_input(int n)
{
    Rows rows;
    rows_init(&rows, 4, types);
    uint32_t seed = 12345;
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        Row *r = &rows_data[i];
        r->idx = i;
        r->a_null = i % 7 == 3;
        r->a = (int64_t)((seed >> 16) % 9) - 4;
        r->b = WORDS[(seed >> 8) % 7];
        r->c_null = i % 5 == 1;
        r->c = (double)((seed >> 20) % 5) * 0.5 - 1;
        CmValue v[4] = {r->a_null ? v_null(types[0]) : v_i64(r->a), v_str(r->b),
                        r->c_null ? v_null(types[2]) : v_f64(r->c), v_i64(i)};
        rows_add(&rows, v);
    }
    return rows_done(&rows);
}

static int ref_cmp(const Row *x, const Row *y, int n_keys, const ExSortKey *keys)
{
    for (int k = 0; k < n_keys; k++) {
        const ExSortKey *key = &keys[k];
        bool nx, ny;
        int c = 0;
        switch (key->col) {
        case 0:
            nx = x->a_null, ny = y->a_null, c = (x->a > y->a) - (x->a < y->a);
            break;
        case 1: {
            nx = ny = false;
            c = strcmp(x->b, y->b);
            c = (c > 0) - (c < 0);
            break;
        }
        case 2:
            nx = x->c_null, ny = y->c_null, c = (x->c > y->c) - (x->c < y->c);
            break;
        default:
            nx = ny = false, c = (x->idx > y->idx) - (x->idx < y->idx);
            break;
        }
        if (nx || ny) {
            if (nx && ny) {
                continue;
            }
            return nx == key->nulls_first ? -1 : 1;
        }
        if (c != 0) {
            return key->desc ? -c : c;
        }
    }
    return 0;
}

/* Stable reference: insertion sort of input positions. */
static void ref_sort(int n, int n_keys, const ExSortKey *keys, int64_t *order)
{
    for (int i = 0; i < n; i++) {
        int64_t v = i;
        int j = i;
        while (j > 0 && ref_cmp(&rows_data[order[j - 1]], &rows_data[v], n_keys, keys) > 0) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = v;
    }
}

static ExResult *sort_rows(const ExResult *in, int n_keys, const ExSortKey *keys, int64_t limit)
{
    ExOp *op = ex_sort_new(&arena, n_keys, keys, 4, types, limit, &err);
    cr_assert_not_null(op);
    ExResult *out;
    cr_assert_eq(drive_op(op, in, NULL, &out, &err), CM_OK, "%s", err.msg);
    return out;
}

static void check_sort(int n_keys, const ExSortKey *keys, int64_t limit)
{
    ExResult *in = make_input(N);
    ExResult *out = sort_rows(in, n_keys, keys, limit);
    static int64_t order[N];
    ref_sort(N, n_keys, keys, order);
    int64_t want_n = limit >= 0 && limit < N ? limit : N;
    cr_assert_eq(ex_result_n_rows(out), want_n);
    for (int64_t r = 0; r < want_n; r++) {
        cr_assert_eq(cell_i(out, r, 3), order[r], "output row %lld", (long long)r);
        /* The rest of the row travels with its key. */
        const Row *src = &rows_data[order[r]];
        cr_assert(cell_str_is(out, r, 1, src->b));
        cr_assert_eq(cell_null(out, r, 0), src->a_null);
    }
    ex_result_free(out);
    ex_result_free(in);
}

Test(ex_sort, one_key_ascending_nulls_last)
{
    ExSortKey k = {.col = 0, .desc = false, .nulls_first = false};
    check_sort(1, &k, -1);
}

Test(ex_sort, one_key_ascending_nulls_first)
{
    ExSortKey k = {.col = 0, .desc = false, .nulls_first = true};
    check_sort(1, &k, -1);
}

Test(ex_sort, one_key_descending_nulls_first)
{
    ExSortKey k = {.col = 0, .desc = true, .nulls_first = true};
    check_sort(1, &k, -1);
}

Test(ex_sort, one_key_descending_nulls_last)
{
    ExSortKey k = {.col = 0, .desc = true, .nulls_first = false};
    check_sort(1, &k, -1);
}

Test(ex_sort, strings)
{
    ExSortKey k = {.col = 1};
    check_sort(1, &k, -1);
    ExSortKey d = {.col = 1, .desc = true};
    check_sort(1, &d, -1);
}

Test(ex_sort, multi_key_mixed_directions)
{
    ExSortKey keys[3] = {
        {.col = 1, .desc = false},
        {.col = 2, .desc = true, .nulls_first = false},
        {.col = 0, .desc = false, .nulls_first = true},
    };
    check_sort(3, keys, -1);
}

Test(ex_sort, stable_on_ties_across_batches)
{
    /* Only 7 distinct strings over 300 rows: most rows tie, and ties must
     * come out in input order (check_sort compares idx). */
    ExSortKey k = {.col = 1, .desc = true};
    check_sort(1, &k, -1);
    ExSortKey none_null = {.col = 2, .nulls_first = true};
    check_sort(1, &none_null, -1);
}

Test(ex_sort, top_n_limit)
{
    ExSortKey keys[2] = {{.col = 0, .desc = true}, {.col = 1}};
    check_sort(2, keys, 10);
    check_sort(2, keys, 0);
    check_sort(2, keys, 1);
    check_sort(2, keys, N + 5);
}

Test(ex_sort, explicit_small_example)
{
    /* ORDER BY a DESC NULLS LAST, b on 5 rows written out by hand. */
    Rows rows;
    rows_init(&rows, 4, types);
    CmValue r0[4] = {v_i64(1), v_str("b"), v_f64(0), v_i64(0)};
    CmValue r1[4] = {v_null(types[0]), v_str("a"), v_f64(0), v_i64(1)};
    CmValue r2[4] = {v_i64(3), v_str("z"), v_f64(0), v_i64(2)};
    CmValue r3[4] = {v_i64(1), v_str("a"), v_f64(0), v_i64(3)};
    CmValue r4[4] = {v_i64(3), v_str("c"), v_f64(0), v_i64(4)};
    rows_add(&rows, r0);
    rows_add(&rows, r1);
    rows_add(&rows, r2);
    rows_add(&rows, r3);
    rows_add(&rows, r4);
    ExResult *in = rows_done(&rows);
    ExSortKey keys[2] = {{.col = 0, .desc = true, .nulls_first = false}, {.col = 1}};
    ExResult *out = sort_rows(in, 2, keys, -1);
    static const int64_t want[5] = {4, 2, 3, 0, 1};
    cr_assert_eq(ex_result_n_rows(out), 5);
    for (int r = 0; r < 5; r++) {
        cr_expect_eq(cell_i(out, r, 3), want[r], "row %d", r);
    }
    ex_result_free(out);
    ex_result_free(in);
}

Test(ex_sort, empty_input)
{
    Rows rows;
    rows_init(&rows, 4, types);
    ExResult *in = rows_done(&rows);
    ExSortKey k = {.col = 0};
    ExResult *out = sort_rows(in, 1, &k, -1);
    cr_expect_eq(ex_result_n_rows(out), 0);
    ex_result_free(out);
    ex_result_free(in);
}

/* Only the active rows of each batch are sorted. */
static void odd_rows(CmBatch *b, int batch_idx)
{
    int n = 0;
    for (int i = b->n_rows - 1; i >= 0; i--) {
        if ((batch_idx * CM_BATCH_CAP + i) % 2 == 1) {
            b->sel_buf[n++] = (uint32_t)i;
        }
    }
    b->sel = b->sel_buf;
    b->n_rows = n;
}

Test(ex_sort, input_selection_is_respected)
{
    ExResult *in = make_input(N);
    ExSortKey k = {.col = 3, .desc = true};
    ExOp *op = ex_sort_new(&arena, 1, &k, 4, types, -1, &err);
    ExResult *out;
    cr_assert_eq(drive_op(op, in, odd_rows, &out, &err), CM_OK);
    cr_assert_eq(ex_result_n_rows(out), N / 2);
    for (int64_t r = 0; r < N / 2; r++) {
        cr_assert_eq(cell_i(out, r, 3), N - 1 - 2 * r);
    }
    ex_result_free(out);
    ex_result_free(in);
}

/* Regression (was a bug): compare_cell() in sort.c orders doubles with (x > y) - (x < y), which
 * makes NaN "equal" to every value.  The comparator is then not a total
 * order and qsort_r may leave the non-NaN values out of order.  PostgreSQL
 * and DuckDB sort NaN after every other value (before NULLs with NULLS LAST). */
Test(ex_sort, nan_sorts_after_numbers)
{
    static const double vals[] = {3, NAN, 1, NAN, 2, 0.5, NAN, -1, 7, NAN, 4};
    int n = (int)(sizeof vals / sizeof vals[0]);
    Rows rows;
    rows_init(&rows, 4, types);
    for (int i = 0; i < n; i++) {
        CmValue v[4] = {v_i64(0), v_str(""), v_f64(vals[i]), v_i64(i)};
        rows_add(&rows, v);
    }
    ExResult *in = rows_done(&rows);
    ExSortKey k = {.col = 2};
    ExResult *out = sort_rows(in, 1, &k, -1);
    cr_assert_eq(ex_result_n_rows(out), n);
    static const double want[] = {-1, 0.5, 1, 2, 3, 4, 7};
    for (int r = 0; r < n; r++) {
        double got = cell_d(out, r, 2);
        if (r < 7) {
            cr_expect_eq(got, want[r], "row %d: %g", r, got);
        } else {
            cr_expect(isnan(got), "row %d: %g", r, got);
        }
    }
    ex_result_free(out);
    ex_result_free(in);
}
