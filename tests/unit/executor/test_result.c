/*
 * test_result.c - unit tests for executor/result.c: appended rows are
 * compacted (selection applied), packed into full batches, and own their
 * strings once the source batch is gone.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "ex_test_util.h"
#include "storage/blocks.h"

static CmErr err;
static CmType types[2];

static void setup(void)
{
    cm_err_init(&err);
    types[0] = cm_type_make(CM_T_INT32);
    types[1] = cm_type_varchar(-1, false);
}

TestSuite(ex_result, .init = setup);

Test(ex_result, new_result_is_empty)
{
    ExResult *r = ex_result_new(2, types, &err);
    cr_assert_not_null(r);
    cr_expect_eq(ex_result_n_cols(r), 2);
    cr_expect_eq(ex_result_type(r, 1).id, CM_T_VARCHAR);
    cr_expect_eq(ex_result_n_rows(r), 0);
    cr_expect_eq(ex_result_n_batches(r), 0);
    ex_result_free(r);
    ex_result_free(NULL);
}

Test(ex_result, appends_compact_and_copy_strings)
{
    ExResult *r = ex_result_new(2, types, &err);
    int total = 0;
    for (int round = 0; round < 5; round++) {
        CmBatch b;
        cr_assert_eq(cm_batch_init(&b, 2, types, &err), CM_OK);
        for (int i = 0; i < CM_BATCH_CAP; i++) {
            char buf[48];
            int len = snprintf(buf, sizeof buf, "string %d of round %d, long", i, round);
            char *copy = cm_arena_strndup(&b.heap, buf, (size_t)len);
            ((int32_t *)b.cols[0].data)[i] = round * 10000 + i;
            ((CmStr *)b.cols[1].data)[i] = cm_str_make(copy, (uint32_t)len);
            if (i % 3 == 2) {
                cm_vec_set_null(&b.cols[1], (uint32_t)i);
            }
        }
        /* Active: the even positions, backwards. */
        int n = 0;
        for (int i = CM_BATCH_CAP - 1; i >= 0; i--) {
            if (i % 2 == 0) {
                b.sel_buf[n++] = (uint32_t)i;
            }
        }
        b.sel = b.sel_buf;
        b.n_rows = n;
        cr_assert_eq(ex_result_append(r, &b, &err), CM_OK);
        total += n;
        cm_batch_fini(&b); /* the result must not point into it */
    }
    cr_assert_eq(ex_result_n_rows(r), total);
    for (int bi = 0; bi < ex_result_n_batches(r); bi++) {
        const CmBatch *b = ex_result_batch(r, bi);
        cr_expect_null(b->sel);
        if (bi + 1 < ex_result_n_batches(r)) {
            cr_expect_eq(b->n_rows, CM_BATCH_CAP, "all but the last batch are full");
        }
    }
    int64_t row = 0;
    for (int round = 0; round < 5; round++) {
        for (int i = CM_BATCH_CAP - 1; i >= 0; i--) {
            if (i % 2) {
                continue;
            }
            cr_assert_eq(cell_i(r, row, 0), round * 10000 + i);
            if (i % 3 == 2) {
                cr_assert(cell_null(r, row, 1));
            } else {
                char buf[48];
                snprintf(buf, sizeof buf, "string %d of round %d, long", i, round);
                cr_assert(cell_str_is(r, row, 1, buf), "row %lld", (long long)row);
            }
            row++;
        }
    }
    ex_result_free(r);
}

/* Appends `n` rows (k, 'row k') starting at k = from. */
static void append_rows(ExResult *r, int from, int n)
{
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 2, types, &err), CM_OK);
    for (int done = 0; done < n;) {
        int k = n - done < CM_BATCH_CAP ? n - done : CM_BATCH_CAP;
        b.n_rows = 0;
        cm_arena_reset(&b.heap);
        for (int i = 0; i < k; i++) {
            char buf[32];
            int len = snprintf(buf, sizeof buf, "row %d", from + done + i);
            ((int32_t *)b.cols[0].data)[i] = from + done + i;
            ((CmStr *)b.cols[1].data)[i] =
                cm_str_make(cm_arena_strndup(&b.heap, buf, (size_t)len), (uint32_t)len);
        }
        b.n_rows = k;
        cr_assert_eq(ex_result_append(r, &b, &err), CM_OK, "%s", err.msg);
        done += k;
    }
    cm_batch_fini(&b);
}

/* Block mode: the rows of several tasks moved into one result read back the
 * same after every block was evicted to disk, through both ways of reading. */
Test(ex_result, block_mode_survives_eviction)
{
    ExResult *dst = ex_result_new(2, types, &err);
    cr_assert_not_null(dst);
    cr_assert_eq(ex_result_set_blocks(dst, NULL, &err), CM_OK);
    cr_assert_not_null(ex_result_block_res(dst));
    /* three tasks: a partial last batch in each makes the result ragged */
    int sizes[3] = {CM_BATCH_CAP * 3 + 5, 7, CM_BATCH_CAP * 2 + 1}, from = 0;
    for (int t = 0; t < 3; t++) {
        ExResult *part = ex_result_new(2, types, &err);
        cr_assert_eq(ex_result_set_blocks(part, ex_result_block_res(dst), &err), CM_OK);
        append_rows(part, from, sizes[t]);
        cr_assert_eq(ex_result_move(dst, part, &err), CM_OK, "%s", err.msg);
        ex_result_free(part);
        from += sizes[t];
    }
    cr_assert_eq(ex_result_n_rows(dst), from);
    st_blocks_evict(INT64_MAX / 4); /* every sealed, unpinned block goes to disk */
    StBlocksStats s;
    st_blocks_stats(&s);
    cr_expect_gt(s.evictions, 0, "the result's blocks were evicted");
    for (int64_t row = 0; row < from; row++) {
        char buf[32];
        snprintf(buf, sizeof buf, "row %lld", (long long)row);
        cr_assert_eq(cell_i(dst, row, 0), row);
        cr_assert(cell_str_is(dst, row, 1, buf), "row %lld", (long long)row);
    }
    int64_t seen = 0;
    for (int i = 0; i < ex_result_n_batches(dst); i++) {
        const CmBatch *b = ex_result_pin(dst, i, &err);
        cr_assert_not_null(b, "%s", err.msg);
        for (int k = 0; k < b->n_rows; k++) {
            cr_assert_eq(((const int32_t *)b->cols[0].data)[k], seen + k);
        }
        seen += b->n_rows;
        ex_result_unpin(dst, i);
    }
    cr_expect_eq(seen, from);
    cr_expect_eq(ex_result_read_err(dst)->code, CM_OK);
    ex_result_free(dst);
}

/* Results of different kinds do not mix. */
Test(ex_result, block_mode_moves_only_to_its_kind)
{
    ExResult *a = ex_result_new(2, types, &err), *b = ex_result_new(2, types, &err);
    cr_assert_eq(ex_result_set_blocks(a, NULL, &err), CM_OK);
    append_rows(b, 0, 3);
    cr_expect_eq(ex_result_move(a, b, &err), CM_INTERNAL);
    ex_result_free(a);
    ex_result_free(b);
}
