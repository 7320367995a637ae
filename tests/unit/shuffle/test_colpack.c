/*
 * test_colpack.c - unit tests for shuffle/colpack.c through
 * sh_block_encode_packed: every integer-like type round-trips at the edges of
 * its range (the reference and the packed offsets wrap), with NULLs, a
 * selection and constant vectors; the encoding chosen (frame of reference,
 * a constant of 0 bits, a dictionary, plain when nothing pays) and that the
 * packed payload is never larger than the plain one; and a damaged dictionary
 * code or width, with a checksum made to match, is an error and not a read
 * out of bounds.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/hash.h"
#include "shuffle/block.h"
#include "shuffle/colpack.h"

enum { N_COLS = 8 };

static CmErr err;
static CmType types[N_COLS];
static CmBatch in, out;
static char texts[CM_BATCH_CAP][40];

static void setup(void)
{
    cm_err_init(&err);
    types[0] = cm_type_make(CM_T_BOOL);
    types[1] = cm_type_make(CM_T_INT32);
    types[2] = cm_type_make(CM_T_INT64);
    types[3] = cm_type_make(CM_T_DOUBLE);
    types[4] = cm_type_decimal(12, 2);
    types[5] = cm_type_varchar(-1, false);
    types[6] = cm_type_make(CM_T_DATE);
    types[7] = cm_type_make(CM_T_TIMESTAMP);
    cr_assert_eq(cm_batch_init(&in, N_COLS, types, &err), CM_OK);
    cr_assert_eq(cm_batch_init(&out, N_COLS, types, &err), CM_OK);
}

static void teardown(void)
{
    cm_batch_fini(&in);
    cm_batch_fini(&out);
}

TestSuite(colpack, .init = setup, .fini = teardown);

/* Row i's text: few distinct values (a dictionary pays), inline and long. */
static void set_text(int i, int distinct)
{
    int v = i % distinct;
    int len = snprintf(texts[i], sizeof texts[i], "%s-%d", v % 2 ? "a longer text value" : "s", v);
    ((CmStr *)in.cols[5].data)[i] = cm_str_make(texts[i], (uint32_t)len);
}

static void fill(int n, int distinct)
{
    for (int i = 0; i < n; i++) {
        ((uint8_t *)in.cols[0].data)[i] = (uint8_t)(i % 3 == 0);
        ((int32_t *)in.cols[1].data)[i] = i % 2 ? INT32_MIN + i : INT32_MAX - i;
        ((int64_t *)in.cols[2].data)[i] = i % 2 ? INT64_MIN + i : INT64_MAX - i;
        ((double *)in.cols[3].data)[i] = i * 0.5;
        ((int64_t *)in.cols[4].data)[i] = 100000 + (i % 50) * 3;
        set_text(i, distinct);
        ((int32_t *)in.cols[6].data)[i] = 19000 + i % 30;
        ((int64_t *)in.cols[7].data)[i] = (int64_t)1700000000 * 1000000 + i;
        for (int c = 0; c < N_COLS; c++) {
            if ((i * 7 + c) % 5 == 2) {
                cm_vec_set_null(&in.cols[c], (uint32_t)i);
            }
        }
    }
    in.n_rows = n;
}

static bool null_at(int i, int c)
{
    return (i * 7 + c) % 5 == 2;
}

static void check_row(int row, int i, int distinct)
{
    for (int c = 0; c < N_COLS; c++) {
        cr_assert_eq(cm_vec_is_null(&out.cols[c], (uint32_t)row), null_at(i, c), "row %d col %d",
                     row, c);
    }
    if (!null_at(i, 0)) {
        cr_assert_eq(((uint8_t *)out.cols[0].data)[row], i % 3 == 0);
    }
    if (!null_at(i, 1)) {
        cr_assert_eq(((int32_t *)out.cols[1].data)[row], i % 2 ? INT32_MIN + i : INT32_MAX - i);
    }
    if (!null_at(i, 2)) {
        cr_assert_eq(((int64_t *)out.cols[2].data)[row], i % 2 ? INT64_MIN + i : INT64_MAX - i);
    }
    if (!null_at(i, 3)) {
        cr_assert_eq(((double *)out.cols[3].data)[row], i * 0.5);
    }
    if (!null_at(i, 4)) {
        cr_assert_eq(((int64_t *)out.cols[4].data)[row], 100000 + (i % 50) * 3);
    }
    if (!null_at(i, 5)) {
        char want[40];
        int v = i % distinct;
        int len = snprintf(want, sizeof want, "%s-%d", v % 2 ? "a longer text value" : "s", v);
        const CmStr *s = &((CmStr *)out.cols[5].data)[row];
        cr_assert_eq(s->len, (uint32_t)len, "row %d", row);
        cr_assert_eq(memcmp(cm_str_data(s), want, (size_t)len), 0, "row %d", row);
    }
    if (!null_at(i, 6)) {
        cr_assert_eq(((int32_t *)out.cols[6].data)[row], 19000 + i % 30);
    }
    if (!null_at(i, 7)) {
        cr_assert_eq(((int64_t *)out.cols[7].data)[row], (int64_t)1700000000 * 1000000 + i);
    }
}

Test(colpack, round_trip_at_the_edges_of_every_range)
{
    int n = CM_BATCH_CAP;
    fill(n, 13);
    ShBlock *plain = sh_block_encode(&in, &err);
    ShBlock *blk = sh_block_encode_packed(&in, &err);
    cr_assert_not_null(blk, "%s", err.msg);
    cr_assert_not_null(plain);
    cr_expect_leq(blk->hdr.raw_bytes, plain->hdr.raw_bytes);
    cr_expect_eq(blk->hdr.checksum, XXH64(blk->payload, (size_t)blk->hdr.stored_bytes, 0));
    cr_assert_eq(sh_block_decode(blk, &out, &err), CM_OK, "%s", err.msg);
    cr_assert_eq(out.n_rows, n);
    memset(texts, '?', sizeof texts); /* decoded strings must be copies */
    for (int i = 0; i < n; i++) {
        check_row(i, i, 13);
    }
    cm_free(blk);
    cm_free(plain);
}

Test(colpack, a_selection_and_constant_vectors)
{
    int n = CM_BATCH_CAP;
    fill(n, 5);
    int k = 0;
    for (int i = n - 1; i >= 0; i -= 3) {
        in.sel_buf[k++] = (uint32_t)i;
    }
    in.sel = in.sel_buf;
    in.n_rows = k;
    ShBlock *blk = sh_block_encode_packed(&in, &err);
    cr_assert_not_null(blk);
    cr_assert_eq(sh_block_decode(blk, &out, &err), CM_OK, "%s", err.msg);
    cr_assert_eq(out.n_rows, k);
    for (int r = 0; r < k; r++) {
        check_row(r, (int)in.sel_buf[r], 5);
    }
    cm_free(blk);
    /* constants: one value for every row, and a NULL one */
    in.sel = NULL;
    in.n_rows = n;
    ((int64_t *)in.cols[2].data)[0] = -5;
    cm_vec_set_valid(&in.cols[2], 0);
    in.cols[2].kind = CM_VEC_CONST;
    cm_vec_set_null(&in.cols[1], 0);
    in.cols[1].kind = CM_VEC_CONST;
    ((CmStr *)in.cols[5].data)[0] = cm_str_make("the same string, long enough", 28);
    cm_vec_set_valid(&in.cols[5], 0);
    in.cols[5].kind = CM_VEC_CONST;
    blk = sh_block_encode_packed(&in, &err);
    cr_assert_not_null(blk);
    cr_assert_eq(sh_block_decode(blk, &out, &err), CM_OK, "%s", err.msg);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(((int64_t *)out.cols[2].data)[i], -5);
        cr_assert(cm_vec_is_null(&out.cols[1], (uint32_t)i));
        const CmStr *s = &((CmStr *)out.cols[5].data)[i];
        cr_assert_eq(s->len, 28);
        cr_assert_eq(memcmp(cm_str_data(s), "the same string, long enough", 28), 0);
    }
    cm_free(blk);
}

/* The payload of a one-column batch of n rows: its flag word is byte 0. */
static ShBlock *one_column(CmType type, int n, void (*set)(CmVec *v, int i))
{
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, &type, &err), CM_OK);
    for (int i = 0; i < n; i++) {
        set(&b.cols[0], i);
    }
    b.n_rows = n;
    ShBlock *blk = sh_block_encode_packed(&b, &err);
    cr_assert_not_null(blk);
    CmBatch back;
    cr_assert_eq(cm_batch_init(&back, 1, &type, &err), CM_OK);
    cr_assert_eq(sh_block_decode(blk, &back, &err), CM_OK, "%s", err.msg);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(cm_vec_is_null(&back.cols[0], (uint32_t)i),
                     cm_vec_is_null(&b.cols[0], (uint32_t)i));
        if (cm_vec_is_null(&b.cols[0], (uint32_t)i)) {
            continue;
        }
        if (type.id == CM_T_VARCHAR) {
            cr_assert(cm_str_eq(&((CmStr *)back.cols[0].data)[i], &((CmStr *)b.cols[0].data)[i]),
                      "row %d", i);
        } else {
            size_t w = cm_type_width(type);
            cr_assert_eq(memcmp((char *)back.cols[0].data + w * (size_t)i,
                                (char *)b.cols[0].data + w * (size_t)i, w),
                         0, "row %d", i);
        }
    }
    cm_batch_fini(&b);
    cm_batch_fini(&back);
    return blk;
}

static void set_const_int(CmVec *v, int i)
{
    ((int32_t *)v->data)[i] = 42;
}

static void set_small_int(CmVec *v, int i)
{
    ((int32_t *)v->data)[i] = 1000 + i % 16;
}

static void set_wide_int(CmVec *v, int i)
{
    ((int64_t *)v->data)[i] = (int64_t)cm_hash_u64((uint64_t)i); /* 64 bits of noise */
}

static void set_unique_text(CmVec *v, int i)
{
    snprintf(texts[i], sizeof texts[i], "unique %08d", i * 7919);
    ((CmStr *)v->data)[i] = cm_str_make(texts[i], (uint32_t)strlen(texts[i]));
}

static void set_few_texts(CmVec *v, int i)
{
    snprintf(texts[i], sizeof texts[i], "a category name %d", i % 4);
    ((CmStr *)v->data)[i] = cm_str_make(texts[i], (uint32_t)strlen(texts[i]));
}

static void set_all_null(CmVec *v, int i)
{
    cm_vec_set_null(v, (uint32_t)i);
}

Test(colpack, the_encoding_chosen)
{
    int n = CM_BATCH_CAP;
    ShBlock *blk = one_column(cm_type_make(CM_T_INT32), n, set_const_int);
    cr_expect_eq(blk->payload[1], SH_COL_FOR);
    cr_expect_eq(blk->payload[2], 0, "a constant takes 0 bits");
    cr_expect_eq(blk->hdr.raw_bytes, 16, "the flag word and the reference");
    cm_free(blk);
    blk = one_column(cm_type_make(CM_T_INT32), n, set_small_int);
    cr_expect_eq(blk->payload[1], n >= 4 ? SH_COL_FOR : SH_COL_PLAIN);
    if (n >= 4) {
        cr_expect_eq(blk->payload[2], 4);
    }
    cm_free(blk);
    blk = one_column(cm_type_make(CM_T_INT64), n, set_wide_int);
    cr_expect_eq(blk->payload[1], SH_COL_PLAIN, "64 bits of range: plain");
    cm_free(blk);
    blk = one_column(cm_type_varchar(-1, false), n, set_unique_text);
    cr_expect_eq(blk->payload[1], SH_COL_PLAIN, "no repeats: plain");
    cm_free(blk);
    blk = one_column(cm_type_varchar(-1, false), n, set_few_texts);
    cr_expect_eq(blk->payload[1], n >= 4 ? SH_COL_DICT : SH_COL_PLAIN);
    if (n >= 4) {
        cr_expect_eq(blk->payload[2], 2, "four strings: 2-bit codes");
    }
    cm_free(blk);
    blk = one_column(cm_type_varchar(-1, false), n, set_all_null);
    cm_free(blk);
    blk = one_column(cm_type_make(CM_T_INT64), n, set_all_null);
    cm_free(blk);
}

/* Rewrites blk's checksum after a change, as a damaged but consistent payload would have. */
static void reseal(ShBlock *blk)
{
    blk->hdr.checksum = XXH64(blk->payload, (size_t)blk->hdr.stored_bytes, 0);
}

Test(colpack, damage_behind_a_matching_checksum_is_an_error)
{
    int n = CM_BATCH_CAP;
    if (n < 4) {
        return; /* too few rows for a dictionary */
    }
    CmType t = cm_type_varchar(-1, false);
    ShBlock *blk = one_column(t, n, set_few_texts);
    cr_assert_eq(blk->payload[1], SH_COL_DICT);
    CmBatch back;
    cr_assert_eq(cm_batch_init(&back, 1, &t, &err), CM_OK);
    /* the dictionary claims more entries than rows */
    uint32_t count;
    memcpy(&count, blk->payload + 8, 4);
    uint32_t bad = (uint32_t)n + 1;
    memcpy(blk->payload + 8, &bad, 4);
    reseal(blk);
    CmErr e;
    cm_err_init(&e);
    cr_expect_eq(sh_block_decode(blk, &back, &e), CM_IO);
    memcpy(blk->payload + 8, &count, 4);
    /* a width of 64 bits: the codes would run past the payload */
    blk->payload[2] = 64;
    reseal(blk);
    cm_err_init(&e);
    cr_expect_eq(sh_block_decode(blk, &back, &e), CM_IO);
    blk->payload[2] = 2;
    /* an unknown encoding */
    blk->payload[1] = 9;
    reseal(blk);
    cm_err_init(&e);
    cr_expect_eq(sh_block_decode(blk, &back, &e), CM_IO);
    blk->payload[1] = SH_COL_DICT;
    reseal(blk);
    cr_expect_eq(sh_block_decode(blk, &back, &err), CM_OK, "%s", err.msg);
    cm_batch_fini(&back);
    cm_free(blk);
}
