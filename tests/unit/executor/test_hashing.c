/*
 * test_hashing.c - unit tests for executor/hashing.c: equal keys hash alike
 * whatever their physical position, selection or vector kind; NULL hashes to
 * a fixed value; -0.0 hashes as 0.0; multi-column hashes depend on column
 * order; ex_key_equal treats NULL as equal to NULL.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/hash.h"
#include "ex_test_util.h"
#include "executor/hashing.h"

static CmErr err;
static CmType types[3];
static CmBatch b;

static void setup(void)
{
    cm_err_init(&err);
    types[0] = cm_type_make(CM_T_INT64);
    types[1] = cm_type_varchar(-1, false);
    types[2] = cm_type_make(CM_T_DOUBLE);
    cr_assert_eq(cm_batch_init(&b, 3, types, &err), CM_OK);
}

static void teardown(void)
{
    cm_batch_fini(&b);
}

TestSuite(ex_hashing, .init = setup, .fini = teardown);

static void set_row(uint32_t p, int64_t i, const char *s, double d)
{
    ((int64_t *)b.cols[0].data)[p] = i;
    ((CmStr *)b.cols[1].data)[p] = cm_str_make(s, (uint32_t)strlen(s));
    ((double *)b.cols[2].data)[p] = d;
}

Test(ex_hashing, equal_keys_hash_alike_at_any_position)
{
    if (CM_BATCH_CAP < 3) {
        cr_skip_test("needs three rows per batch");
    }
    /* Rows 0 and 2 are equal (the strings at different addresses). */
    char s1[] = "same long string value", s2[] = "same long string value";
    set_row(0, 42, s1, 1.5);
    set_row(1, 43, s1, 1.5);
    set_row(2, 42, s2, 1.5);
    b.n_rows = 3;
    int keys[3] = {0, 1, 2};
    uint64_t h[CM_BATCH_CAP];
    ex_hash_keys(&b, 3, keys, h);
    cr_expect_eq(h[0], h[2]);
    cr_expect_neq(h[0], h[1]);
    /* Through a selection: active row i hashes physical row sel[i]. */
    uint64_t hs[CM_BATCH_CAP];
    b.sel_buf[0] = 2;
    b.sel_buf[1] = 1;
    b.sel = b.sel_buf;
    b.n_rows = 2;
    ex_hash_keys(&b, 3, keys, hs);
    cr_expect_eq(hs[0], h[2]);
    cr_expect_eq(hs[1], h[1]);
}

Test(ex_hashing, nulls_and_negative_zero)
{
    if (CM_BATCH_CAP < 3) {
        cr_skip_test("needs three rows per batch");
    }
    set_row(0, 1, "a", 0.0);
    set_row(1, 2, "b", -0.0);
    set_row(2, 3, "c", 0.0);
    cm_vec_set_null(&b.cols[0], 0);
    cm_vec_set_null(&b.cols[0], 1);
    b.n_rows = 3;
    int k0[1] = {0}, k2[1] = {2};
    uint64_t h[CM_BATCH_CAP];
    ex_hash_keys(&b, 1, k0, h);
    cr_expect_eq(h[0], h[1], "NULL hashes to one value whatever lies under it");
    cr_expect_eq(h[0], CM_HASH_NULL);
    cr_expect_neq(h[2], h[0]);
    ex_hash_keys(&b, 1, k2, h);
    cr_expect_eq(h[0], h[1], "-0.0 hashes as 0.0");
    cr_expect_eq(h[1], h[2]);
    cr_expect(ex_key_equal(&b.cols[2], 0, &b.cols[2], 1));
    cr_expect(ex_key_equal(&b.cols[0], 0, &b.cols[0], 1), "NULL equals NULL when grouping");
    cr_expect_not(ex_key_equal(&b.cols[0], 0, &b.cols[0], 2));
    cr_expect_not(ex_key_equal(&b.cols[0], 2, &b.cols[0], 0));
}

Test(ex_hashing, column_order_matters_and_no_keys_gives_a_seed)
{
    set_row(0, 7, "x", 7.0);
    b.n_rows = 1;
    int ab[2] = {0, 2}, ba[2] = {2, 0};
    uint64_t h1[CM_BATCH_CAP], h2[CM_BATCH_CAP], h0[CM_BATCH_CAP];
    ex_hash_keys(&b, 2, ab, h1);
    ex_hash_keys(&b, 2, ba, h2);
    cr_expect_neq(h1[0], h2[0]);
    ex_hash_keys(&b, 0, NULL, h0);
    set_row(0, 8, "y", 8.0);
    uint64_t h0b[CM_BATCH_CAP];
    ex_hash_keys(&b, 0, NULL, h0b);
    cr_expect_eq(h0[0], h0b[0], "without keys every row gets the same seed");
}

Test(ex_hashing, const_vector_hashes_its_single_value)
{
    set_row(0, 99, "constant", 0.25);
    b.cols[0].kind = CM_VEC_CONST;
    b.n_rows = CM_BATCH_CAP;
    int k[1] = {0};
    uint64_t h[CM_BATCH_CAP];
    ex_hash_keys(&b, 1, k, h);
    for (int i = 1; i < CM_BATCH_CAP; i++) {
        cr_assert_eq(h[i], h[0]);
    }
    b.cols[0].kind = CM_VEC_FLAT;
    b.n_rows = 1;
    uint64_t flat[CM_BATCH_CAP];
    ex_hash_keys(&b, 1, k, flat);
    cr_expect_eq(flat[0], h[0]);
}

Test(ex_hashing, strings_equal_across_the_inline_boundary)
{
    CmVec a, c;
    cr_assert_eq(cm_vec_init(&a, types[1], &err), CM_OK);
    cr_assert_eq(cm_vec_init(&c, types[1], &err), CM_OK);
    char x[] = "thirteen byte", y[] = "thirteen byte";
    ((CmStr *)a.data)[0] = cm_str_make(x, 13);
    ((CmStr *)c.data)[0] = cm_str_make(y, 13);
    ((CmStr *)a.data)[1] = cm_str_make(x, 12);
    cr_expect(ex_key_equal(&a, 0, &c, 0));
    cr_expect_not(ex_key_equal(&a, 1, &c, 0));
    cm_vec_fini(&a);
    cm_vec_fini(&c);
}

/* Integer columns without NULLs take a loop of their own: the hashes are
 * those of the general path (a column with a bitmap, every value valid),
 * which hash_agg's packed keys reproduce bit for bit. */
Test(ex_hashing, integer_columns_without_nulls_hash_as_with_a_bitmap)
{
    CmType t[2] = {cm_type_make(CM_T_INT32), cm_type_make(CM_T_INT64)};
    CmBatch ints;
    cr_assert_eq(cm_batch_init(&ints, 2, t, &err), CM_OK);
    int n = CM_BATCH_CAP < 5 ? CM_BATCH_CAP : 5;
    for (int i = 0; i < n; i++) {
        ((int32_t *)ints.cols[0].data)[i] = -7 + 3 * i;
        ((int64_t *)ints.cols[1].data)[i] = (int64_t)1 << (40 + i);
    }
    ints.n_rows = n;
    int keys[2] = {0, 1};
    uint64_t fast[CM_BATCH_CAP], slow[CM_BATCH_CAP];
    ex_hash_keys(&ints, 2, keys, fast);
    for (int c = 0; c < 2; c++) {
        cm_vec_set_null(&ints.cols[c], 0);
        cm_vec_set_valid(&ints.cols[c], 0); /* a bitmap, all valid */
    }
    ex_hash_keys(&ints, 2, keys, slow);
    for (int i = 0; i < n; i++) {
        cr_expect_eq(fast[i], slow[i], "row %d", i);
        cr_expect_eq(fast[i], cm_hash_combine(cm_hash_u64((uint64_t)(int64_t)(-7 + 3 * i)),
                                              cm_hash_u64((uint64_t)1 << (40 + i))));
    }
    cm_batch_fini(&ints);
}
