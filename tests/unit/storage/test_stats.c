/*
 * test_stats.c - unit tests for storage/stats.c: the HyperLogLog distinct
 * count within its error at several sizes, repeated values counted once,
 * NULLs, min/max in logical units (DECIMAL unscaled, -0.0 = 0.0), selection
 * vectors and CONST vectors, and a table's statistics through append,
 * truncate and st_table_analyze.  Batches are CM_BATCH_CAP rows (CI also
 * builds it as 3), so every loop is over batches.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "common/alloc.h"

#include "storage/stats.h"
#include "storage/table.h"

static CmErr err;

static void setup(void)
{
    cm_err_init(&err);
}

/* Counts the BIGINTs from..to-1 (each `repeat` times) in batches. */
static void add_range(StColStats *s, int64_t from, int64_t to, int repeat)
{
    CmType t = cm_type_make(CM_T_INT64);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, &t, &err), CM_OK);
    for (int r = 0; r < repeat; r++) {
        for (int64_t v = from; v < to;) {
            int n = 0;
            for (; n < CM_BATCH_CAP && v < to; n++, v++) {
                ((int64_t *)b.cols[0].data)[n] = v;
            }
            st_stats_add(s, &b.cols[0], NULL, n);
        }
    }
    cm_batch_fini(&b);
}

TestSuite(st_stats, .init = setup);

Test(st_stats, distinct_count_within_its_error)
{
    static const int64_t sizes[] = {1, 10, 100, 1000, 10000, 200000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        StColStats s;
        st_stats_reset(&s);
        add_range(&s, 1000, 1000 + sizes[i], 1);
        double ndv = st_stats_ndv(&s), want = (double)sizes[i];
        cr_expect(fabs(ndv - want) <= 0.05 * want + 0.5, "%lld values: ndv %.1f",
                  (long long)sizes[i], ndv);
        cr_expect_eq(s.min, 1000);
        cr_expect_eq(s.max, 999 + (double)sizes[i]);
    }
}

Test(st_stats, repeats_count_once)
{
    StColStats s;
    st_stats_reset(&s);
    add_range(&s, 0, 500, 7);
    cr_expect_eq(s.n_values, 3500);
    cr_expect(fabs(st_stats_ndv(&s) - 500) <= 25, "ndv %.1f", st_stats_ndv(&s));
}

Test(st_stats, nulls_selection_const_and_decimal)
{
    CmType t = cm_type_decimal(10, 2);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, &t, &err), CM_OK);
    int64_t vals[3] = {-250, 125, 999}; /* -2.50, 1.25 (NULL), 9.99 */
    for (int i = 0; i < 3; i++) {
        ((int64_t *)b.cols[0].data)[i] = vals[i];
    }
    cm_vec_set_null(&b.cols[0], 1);
    StColStats all;
    st_stats_reset(&all);
    st_stats_add(&all, &b.cols[0], NULL, 3);
    cr_expect_eq(all.n_values, 3);
    cr_expect_eq(all.n_nulls, 1);
    cr_expect(fabs(all.min + 2.5) < 1e-9 && fabs(all.max - 9.99) < 1e-9);
    cr_expect(fabs(st_stats_ndv(&all) - 2) < 0.5, "ndv %.2f", st_stats_ndv(&all));
    /* A selection of row 0 only: -2.50. */
    StColStats s;
    st_stats_reset(&s);
    uint32_t sel[1] = {0};
    st_stats_add(&s, &b.cols[0], sel, 1);
    cr_expect_eq(s.n_values, 1);
    cr_expect(fabs(s.min + 2.5) < 1e-9 && fabs(s.max + 2.5) < 1e-9);
    /* A CONST vector counts its value n times, one distinct value. */
    b.cols[0].kind = CM_VEC_CONST;
    ((int64_t *)b.cols[0].data)[0] = 999;
    b.cols[0].validity = NULL;
    st_stats_add(&s, &b.cols[0], NULL, 40);
    cr_expect_eq(s.n_values, 41);
    cr_expect(fabs(s.max - 9.99) < 1e-9);
    cr_expect(fabs(st_stats_ndv(&s) - 2) < 0.5, "ndv %.2f", st_stats_ndv(&s));
    cm_batch_fini(&b);
}

Test(st_stats, negative_zero_is_zero)
{
    CmType t = cm_type_make(CM_T_DOUBLE);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, &t, &err), CM_OK);
    StColStats s;
    st_stats_reset(&s);
    ((double *)b.cols[0].data)[0] = 0.0;
    st_stats_add(&s, &b.cols[0], NULL, 1);
    ((double *)b.cols[0].data)[0] = -0.0;
    st_stats_add(&s, &b.cols[0], NULL, 1);
    cr_expect(fabs(st_stats_ndv(&s) - 1) < 0.5, "ndv %.2f", st_stats_ndv(&s));
    cm_batch_fini(&b);
}

/* A table: appends count, a truncate marks stale (to no rows: empties), and
 * ANALYZE recomputes from the chunks. */
Test(st_stats, table_append_truncate_analyze)
{
    StColumn col = {.name = "v", .type = cm_type_make(CM_T_INT64)};
    StTable *t = st_table_new("t", 1, &col, &err);
    cr_assert_not_null(t);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, &col.type, &err), CM_OK);
    int64_t v = 0;
    for (int k = 0; k < 4; k++) {
        b.n_rows = CM_BATCH_CAP;
        for (int i = 0; i < CM_BATCH_CAP; i++) {
            ((int64_t *)b.cols[0].data)[i] = v++;
        }
        cr_assert_eq(st_table_append(t, &b, &err), CM_OK);
    }
    cr_expect_eq(t->stats[0].n_values, 4 * CM_BATCH_CAP);
    cr_expect_eq(t->stats[0].max, (double)(v - 1));
    cr_expect(!t->stats_stale);
    st_table_truncate(t, CM_BATCH_CAP + 1);
    cr_expect(t->stats_stale);
    cr_expect_eq(t->stats[0].max, (double)(v - 1)); /* an upper bound until ANALYZE */
    cr_assert_eq(st_table_analyze(t, &err), CM_OK);
    cr_expect(!t->stats_stale);
    cr_expect_eq(t->stats[0].n_values, CM_BATCH_CAP + 1);
    cr_expect_eq(t->stats[0].max, (double)CM_BATCH_CAP);
    st_table_truncate(t, 0);
    cr_expect(!t->stats_stale);
    cr_expect_eq(t->stats[0].n_values, 0);
    cm_batch_fini(&b);
    st_table_free(t);
}

/* The frequency sketch: a value in 60% of the rows reads as about 60%; values
 * of a uniform column are never frequent; the rare share is what the frequent
 * value leaves over the other distinct values; and the order values arrive in
 * does not change the sketch (parallel loads plan the same). */
Test(st_stats, frequent_values_and_the_rare_share)
{
    StColStats *s = st_stats_new_array(3);
    cr_assert_not_null(s);
    add_range(&s[0], 0, 1, 6000); /* 0: 6000 times */
    add_range(&s[0], 1, 4001, 1); /* 4000 others, once each */
    add_range(&s[1], 1, 4001, 1); /* the same values, the other way round */
    add_range(&s[1], 0, 1, 6000);
    add_range(&s[2], 0, 100, 100); /* uniform: 100 values, 100 times each */

    double f = st_stats_freq(&s[0], st_stats_hash_int(0));
    cr_expect(f > 0.58 && f < 0.62, "share of 0: %f", f);
    cr_expect_eq(st_stats_freq(&s[0], st_stats_hash_int(17)), -1);
    double rare = st_stats_rare_share(&s[0]); /* 0.4 / 4000 */
    cr_expect(rare > 0.8e-4 && rare < 1.2e-4, "rare share %g", rare);
    cr_expect_eq(memcmp(s[0].freq->cells, s[1].freq->cells, sizeof s[0].freq->cells), 0);

    for (int v = 0; v < 100; v++) {
        cr_expect_eq(st_stats_freq(&s[2], st_stats_hash_int(v)), -1, "value %d", v);
    }
    cr_expect(fabs(st_stats_rare_share(&s[2]) * st_stats_ndv(&s[2]) - 1) < 1e-9);

    st_stats_clear(&s[0]); /* keeps an empty sketch */
    cr_expect_not_null(s[0].freq);
    cr_expect_eq(s[0].freq->n, 0);
    cr_expect_eq(st_stats_freq(&s[0], st_stats_hash_int(0)), -1);
    cm_free(s);
}
