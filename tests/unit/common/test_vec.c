/*
 * test_vec.c - unit tests for common/vec.c and the inline helpers of
 * common/vec.h: the validity bitmap, value get/set per type, batch reset,
 * cm_batch_append_row (selection, NULLs, string copying) and cm_str_copy.
 * Sizes are derived from CM_BATCH_CAP, which CI also builds as 3.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/vec.h"

static CmErr err;

static void setup(void)
{
    cm_err_init(&err);
}

TestSuite(cm_vec, .init = setup);

static CmValue int_value(CmTypeId id, int64_t i)
{
    CmValue v;
    memset(&v, 0, sizeof v);
    v.type = cm_type_make(id);
    v.i = i;
    return v;
}

/* ---- validity bitmap ---------------------------------------------------------- */

Test(cm_vec, new_vector_has_no_nulls)
{
    CmVec v;
    cr_assert_eq(cm_vec_init(&v, cm_type_make(CM_T_INT64), &err), CM_OK);
    cr_expect_null(v.validity);
    cr_expect_not_null(v.data);
    cr_expect_eq(v.kind, CM_VEC_FLAT);
    for (uint32_t p = 0; p < CM_BATCH_CAP; p++) {
        cr_assert_not(cm_vec_is_null(&v, p));
    }
    cm_vec_fini(&v);
    cr_expect_null(v.data);
}

Test(cm_vec, set_null_marks_only_that_position)
{
    CmVec v;
    cr_assert_eq(cm_vec_init(&v, cm_type_make(CM_T_INT32), &err), CM_OK);
    uint32_t last = CM_BATCH_CAP - 1;
    cm_vec_set_null(&v, last);
    cr_assert_not_null(v.validity);
    for (uint32_t p = 0; p < CM_BATCH_CAP; p++) {
        cr_assert_eq(cm_vec_is_null(&v, p), p == last, "position %u", p);
    }
    cm_vec_set_null(&v, 0);
    cr_expect(cm_vec_is_null(&v, 0));
    cm_vec_set_valid(&v, last);
    cr_expect_not(cm_vec_is_null(&v, last));
    cr_expect(cm_vec_is_null(&v, 0));
    cm_vec_fini(&v);
}

Test(cm_vec, word_boundaries_of_the_bitmap)
{
    if (CM_BATCH_CAP <= 64) {
        cr_skip_test("needs more than 64 rows per batch");
    }
    CmVec v;
    cr_assert_eq(cm_vec_init(&v, cm_type_make(CM_T_BOOL), &err), CM_OK);
    uint32_t ps[] = {63, 64, 127 < CM_BATCH_CAP ? 127 : 65};
    for (int i = 0; i < 3; i++) {
        cm_vec_set_null(&v, ps[i]);
    }
    for (uint32_t p = 0; p < CM_BATCH_CAP; p++) {
        bool expect = p == ps[0] || p == ps[1] || p == ps[2];
        cr_assert_eq(cm_vec_is_null(&v, p), expect, "position %u", p);
    }
    cm_vec_set_valid(&v, 64);
    cr_expect(cm_vec_is_null(&v, 63));
    cr_expect_not(cm_vec_is_null(&v, 64));
    cm_vec_fini(&v);
}

Test(cm_vec, set_valid_without_bitmap_is_a_no_op)
{
    CmVec v;
    cr_assert_eq(cm_vec_init(&v, cm_type_make(CM_T_INT32), &err), CM_OK);
    cm_vec_set_valid(&v, 0);
    cr_expect_null(v.validity);
    cm_vec_fini(&v);
}

Test(cm_vec, clear_nulls_drops_the_bitmap)
{
    CmVec v;
    cr_assert_eq(cm_vec_init(&v, cm_type_make(CM_T_INT32), &err), CM_OK);
    cm_vec_set_null(&v, 0);
    cm_vec_clear_nulls(&v);
    cr_expect_null(v.validity);
    cr_expect_not(cm_vec_is_null(&v, 0));
    /* A new NULL after clearing starts from an all-valid bitmap again. */
    cm_vec_set_null(&v, CM_BATCH_CAP - 1);
    cr_expect_not(cm_vec_is_null(&v, 0));
    cr_expect(cm_vec_is_null(&v, CM_BATCH_CAP - 1));
    cm_vec_fini(&v);
}

Test(cm_vec, reference_shares_data_and_validity)
{
    CmVec src, view;
    cr_assert_eq(cm_vec_init(&src, cm_type_make(CM_T_INT64), &err), CM_OK);
    memset(&view, 0, sizeof view);
    ((int64_t *)src.data)[0] = 77;
    cm_vec_set_null(&src, CM_BATCH_CAP - 1);
    cm_vec_reference(&view, &src);
    cr_expect_eq(view.data, src.data);
    cr_expect_eq(view.validity, src.validity);
    cr_expect_eq(view.type.id, CM_T_INT64);
    cr_expect_null(view.data_buf, "a view must not own data");
    cr_expect_eq(((int64_t *)view.data)[0], 77);
    cr_expect(cm_vec_is_null(&view, CM_BATCH_CAP - 1));
    cm_vec_fini(&view); /* frees nothing */
    cr_expect_eq(((int64_t *)src.data)[0], 77);
    cm_vec_fini(&src);
}

/* ---- get/set values ------------------------------------------------------------ */

Test(cm_vec, get_set_round_trip_per_type)
{
    static const CmTypeId ids[] = {CM_T_BOOL, CM_T_INT32, CM_T_INT64, CM_T_DATE};
    static const int64_t vals[] = {1, -2147483647 - 1, INT64_MIN + 1, 19000};
    for (int t = 0; t < 4; t++) {
        CmVec v;
        cr_assert_eq(cm_vec_init(&v, cm_type_make(ids[t]), &err), CM_OK);
        CmValue in = int_value(ids[t], vals[t]);
        uint32_t pos = CM_BATCH_CAP - 1;
        cm_vec_set_value(&v, pos, &in);
        CmValue out;
        cm_vec_get_value(&v, pos, &out);
        cr_expect_not(out.is_null);
        cr_expect_eq(out.i, vals[t], "type %d", ids[t]);
        cr_expect_eq(out.type.id, ids[t]);
        cm_vec_fini(&v);
    }

    CmVec d;
    cr_assert_eq(cm_vec_init(&d, cm_type_decimal(10, 2), &err), CM_OK);
    CmValue dv = {.type = cm_type_decimal(10, 2), .i = -12345};
    cm_vec_set_value(&d, 0, &dv);
    CmValue dout;
    cm_vec_get_value(&d, 0, &dout);
    cr_expect_eq(dout.i, -12345);
    cr_expect_eq(dout.type.scale, 2);
    cm_vec_fini(&d);

    CmVec f;
    cr_assert_eq(cm_vec_init(&f, cm_type_make(CM_T_DOUBLE), &err), CM_OK);
    CmValue fv = {.type = cm_type_make(CM_T_DOUBLE), .d = -0.125};
    cm_vec_set_value(&f, 0, &fv);
    CmValue fout;
    cm_vec_get_value(&f, 0, &fout);
    cr_expect_eq(fout.d, -0.125);
    cm_vec_fini(&f);

    CmVec s;
    cr_assert_eq(cm_vec_init(&s, cm_type_varchar(-1, false), &err), CM_OK);
    const char *text = "a string longer than twelve";
    CmValue sv = {.type = cm_type_varchar(-1, false)};
    sv.s = cm_str_make(text, (uint32_t)strlen(text));
    cm_vec_set_value(&s, 0, &sv);
    CmValue sout;
    cm_vec_get_value(&s, 0, &sout);
    cr_expect_eq(sout.s.len, strlen(text));
    cr_expect_eq(cm_str_data(&sout.s), text, "strings are stored as given, not copied");
    cm_vec_fini(&s);
}

Test(cm_vec, set_value_null_then_valid_again)
{
    CmVec v;
    cr_assert_eq(cm_vec_init(&v, cm_type_make(CM_T_INT64), &err), CM_OK);
    CmValue null_v = int_value(CM_T_INT64, 0);
    null_v.is_null = true;
    cm_vec_set_value(&v, 0, &null_v);
    CmValue out;
    cm_vec_get_value(&v, 0, &out);
    cr_expect(out.is_null);
    CmValue five = int_value(CM_T_INT64, 5);
    cm_vec_set_value(&v, 0, &five);
    cm_vec_get_value(&v, 0, &out);
    cr_expect_not(out.is_null);
    cr_expect_eq(out.i, 5);
    cm_vec_fini(&v);
}

Test(cm_vec, const_vector_reads_position_zero)
{
    CmVec v;
    cr_assert_eq(cm_vec_init(&v, cm_type_make(CM_T_INT32), &err), CM_OK);
    ((int32_t *)v.data)[0] = 9;
    v.kind = CM_VEC_CONST;
    CmValue out;
    cm_vec_get_value(&v, CM_BATCH_CAP - 1, &out);
    cr_expect_eq(out.i, 9);
    cm_vec_fini(&v);
}

/* ---- batches -------------------------------------------------------------------- */

static const CmType *row_types(void)
{
    static CmType t[3];
    t[0] = cm_type_make(CM_T_INT64);
    t[1] = cm_type_varchar(-1, false);
    t[2] = cm_type_make(CM_T_DOUBLE);
    return t;
}

Test(cm_vec, batch_init_and_reset)
{
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 3, row_types(), &err), CM_OK);
    cr_expect_eq(b.n_cols, 3);
    cr_expect_eq(b.n_rows, 0);
    cr_expect_null(b.sel);
    cr_expect_not_null(b.sel_buf);
    cr_expect_eq(b.cols[1].type.id, CM_T_VARCHAR);

    b.n_rows = 1;
    b.sel_buf[0] = 0;
    b.sel = b.sel_buf;
    cm_vec_set_null(&b.cols[0], 0);
    b.cols[2].kind = CM_VEC_CONST;
    void *borrowed = b.cols[1].data;
    b.cols[1].data = NULL; /* as if it borrowed someone else's data */
    cm_arena_alloc(&b.heap, 100);
    cm_batch_reset(&b);
    cr_expect_eq(b.n_rows, 0);
    cr_expect_null(b.sel);
    cr_expect_null(b.cols[0].validity);
    cr_expect_eq(b.cols[2].kind, CM_VEC_FLAT);
    cr_expect_eq(b.cols[1].data, borrowed, "reset points data back at the owned buffer");
    cr_expect_eq(b.heap.n_bytes, 0);
    cm_batch_fini(&b);
}

Test(cm_vec, batch_pos_follows_selection)
{
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, row_types(), &err), CM_OK);
    b.n_rows = 1;
    cr_expect_eq(cm_batch_pos(&b, 0), 0);
    b.sel_buf[0] = CM_BATCH_CAP - 1;
    b.sel = b.sel_buf;
    cr_expect_eq(cm_batch_pos(&b, 0), CM_BATCH_CAP - 1);
    cm_batch_fini(&b);
}

/* Fills src with n rows: id = 10 * i, string of length 5 + 3 * i (short and
 * long ones), double = i / 4, and NULLs in column 2 for odd i. */
static void fill_source(CmBatch *src, int n, char texts[][64])
{
    for (int i = 0; i < n; i++) {
        ((int64_t *)src->cols[0].data)[i] = 10 * i;
        int len = 5 + 3 * i;
        if (len > 60) {
            len = 60;
        }
        for (int k = 0; k < len; k++) {
            texts[i][k] = (char)('a' + (i + k) % 26);
        }
        ((CmStr *)src->cols[1].data)[i] = cm_str_make(texts[i], (uint32_t)len);
        if (i % 2) {
            cm_vec_set_null(&src->cols[2], (uint32_t)i);
        } else {
            ((double *)src->cols[2].data)[i] = i / 4.0;
        }
    }
    src->n_rows = n;
}

Test(cm_vec, append_row_follows_selection_and_copies_strings)
{
    CmBatch src, dst;
    cr_assert_eq(cm_batch_init(&src, 3, row_types(), &err), CM_OK);
    cr_assert_eq(cm_batch_init(&dst, 3, row_types(), &err), CM_OK);
    static char texts[CM_BATCH_CAP][64];
    int n = CM_BATCH_CAP;
    fill_source(&src, n, texts);
    /* Select the rows in reverse order, skipping row 1 when there is one. */
    int n_sel = 0;
    for (int i = n - 1; i >= 0; i--) {
        if (i != 1 || n == 1) {
            src.sel_buf[n_sel++] = (uint32_t)i;
        }
    }
    src.sel = src.sel_buf;
    src.n_rows = n_sel;
    for (int i = 0; i < n_sel; i++) {
        cr_assert_eq(cm_batch_append_row(&dst, &src, i, true, &err), CM_OK);
    }
    cr_assert_eq(dst.n_rows, n_sel);
    cr_expect_null(dst.sel);
    /* Destroy the source bytes: copied long strings must not notice. */
    for (int i = 0; i < n; i++) {
        memset(texts[i], '#', sizeof texts[i]);
    }
    for (int i = 0; i < n_sel; i++) {
        int from = (int)src.sel_buf[i];
        cr_expect_eq(((int64_t *)dst.cols[0].data)[i], 10 * from);
        const CmStr *s = &((CmStr *)dst.cols[1].data)[i];
        int len = 5 + 3 * from > 60 ? 60 : 5 + 3 * from;
        cr_assert_eq(s->len, (uint32_t)len);
        for (int k = 0; k < len; k++) {
            cr_assert_eq(cm_str_data(s)[k], (char)('a' + (from + k) % 26), "row %d byte %d", i, k);
        }
        cr_expect_eq(cm_vec_is_null(&dst.cols[2], (uint32_t)i), from % 2 == 1);
        if (from % 2 == 0) {
            cr_expect_eq(((double *)dst.cols[2].data)[i], from / 4.0);
        }
    }
    cm_batch_fini(&src);
    cm_batch_fini(&dst);
}

Test(cm_vec, append_row_without_copy_borrows_long_strings)
{
    CmBatch src, dst;
    cr_assert_eq(cm_batch_init(&src, 3, row_types(), &err), CM_OK);
    cr_assert_eq(cm_batch_init(&dst, 3, row_types(), &err), CM_OK);
    const char *long_text = "0123456789abcdefghij"; /* 20 bytes */
    ((CmStr *)src.cols[1].data)[0] = cm_str_make(long_text, 20);
    ((int64_t *)src.cols[0].data)[0] = 1;
    ((double *)src.cols[2].data)[0] = 1.0;
    src.n_rows = 1;
    cr_assert_eq(cm_batch_append_row(&dst, &src, 0, false, &err), CM_OK);
    cr_expect_eq(cm_str_data(&((CmStr *)dst.cols[1].data)[0]), long_text);
    cr_expect_eq(dst.heap.n_bytes, 0);
    /* The same row appended with copying: a private copy in dst's heap. */
    cr_assert_eq(cm_batch_append_row(&dst, &src, 0, true, &err), CM_OK);
    const CmStr *copied = &((CmStr *)dst.cols[1].data)[1];
    cr_expect_neq(cm_str_data(copied), long_text);
    cr_expect_gt(dst.heap.n_bytes, 0);
    cr_expect_eq(memcmp(cm_str_data(copied), long_text, 20), 0);
    cm_batch_fini(&src);
    cm_batch_fini(&dst);
}

Test(cm_vec, append_row_valid_after_null_clears_the_bit)
{
    if (CM_BATCH_CAP < 2) {
        cr_skip_test("needs two rows per batch");
    }
    CmBatch src, dst;
    cr_assert_eq(cm_batch_init(&src, 3, row_types(), &err), CM_OK);
    cr_assert_eq(cm_batch_init(&dst, 3, row_types(), &err), CM_OK);
    /* dst position 1 was NULL in an earlier use that left its bitmap behind. */
    cm_vec_set_null(&dst.cols[0], 1);
    cm_vec_set_null(&src.cols[0], 0);
    ((int64_t *)src.cols[0].data)[1] = 42;
    ((CmStr *)src.cols[1].data)[0] = cm_str_make("x", 1);
    ((CmStr *)src.cols[1].data)[1] = cm_str_make("y", 1);
    src.n_rows = 2;
    cr_assert_eq(cm_batch_append_row(&dst, &src, 0, true, &err), CM_OK);
    cr_assert_eq(cm_batch_append_row(&dst, &src, 1, true, &err), CM_OK);
    cr_expect(cm_vec_is_null(&dst.cols[0], 0));
    cr_expect_not(cm_vec_is_null(&dst.cols[0], 1), "a valid row must set its bit again");
    cr_expect_eq(((int64_t *)dst.cols[0].data)[1], 42);
    cm_batch_fini(&src);
    cm_batch_fini(&dst);
}

Test(cm_vec, append_row_from_const_vector)
{
    CmBatch src, dst;
    cr_assert_eq(cm_batch_init(&src, 3, row_types(), &err), CM_OK);
    cr_assert_eq(cm_batch_init(&dst, 3, row_types(), &err), CM_OK);
    ((int64_t *)src.cols[0].data)[0] = 5;
    src.cols[0].kind = CM_VEC_CONST;
    ((CmStr *)src.cols[1].data)[0] = cm_str_make("c", 1);
    src.cols[1].kind = CM_VEC_CONST;
    cm_vec_set_null(&src.cols[2], 0);
    src.cols[2].kind = CM_VEC_CONST;
    src.n_rows = CM_BATCH_CAP;
    for (int i = 0; i < CM_BATCH_CAP; i++) {
        cr_assert_eq(cm_batch_append_row(&dst, &src, i, true, &err), CM_OK);
    }
    for (int i = 0; i < CM_BATCH_CAP; i++) {
        cr_expect_eq(((int64_t *)dst.cols[0].data)[i], 5);
        cr_expect_eq(((CmStr *)dst.cols[1].data)[i].len, 1);
        cr_expect(cm_vec_is_null(&dst.cols[2], (uint32_t)i));
    }
    cm_batch_fini(&src);
    cm_batch_fini(&dst);
}

Test(cm_vec, str_copy_short_stays_inline_long_goes_to_heap)
{
    CmArena heap;
    cm_arena_init(&heap, 0);
    CmStr s12 = cm_str_make("twelve bytes", 12);
    CmStr c12 = cm_str_copy(&heap, &s12, &err);
    cr_expect_eq(heap.n_bytes, 0, "a 12-byte string needs no heap");
    cr_expect(cm_str_eq(&s12, &c12));

    char buf[] = "thirteen byte";
    CmStr s13 = cm_str_make(buf, 13);
    CmStr c13 = cm_str_copy(&heap, &s13, &err);
    cr_expect_gt(heap.n_bytes, 0);
    cr_expect_neq(cm_str_data(&c13), buf);
    memset(buf, '-', 13);
    cr_expect_eq(memcmp(cm_str_data(&c13), "thirteen byte", 13), 0);
    cr_expect_eq(err.code, CM_OK);
    cm_arena_fini(&heap);
}
