/*
 * test_spill.c - spill files: what is appended reads back in order, strings and
 * NULLs included; temp space is counted and capped; a bad directory is a clean
 * error naming it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "shuffle/spill.h"

static CmType types[2];

static void setup(void)
{
    types[0] = cm_type_make(CM_T_INT64);
    types[1] = cm_type_varchar(-1, false);
}

TestSuite(sh_spill, .init = setup);

static void fill(CmBatch *b, int64_t first)
{
    cm_batch_reset(b);
    for (int r = 0; r < CM_BATCH_CAP; r++) {
        int64_t id = first + r;
        char buf[40];
        int len = snprintf(buf, sizeof buf, "row number %lld", (long long)id);
        ((int64_t *)b->cols[0].data)[r] = id;
        if (id % 7 == 0) {
            cm_vec_set_null(&b->cols[1], (uint32_t)r);
        } else {
            cm_vec_set_valid(&b->cols[1], (uint32_t)r);
            char *copy = cm_arena_strndup(&b->heap, buf, (size_t)len);
            ((CmStr *)b->cols[1].data)[r] = cm_str_make(copy, (uint32_t)len);
        }
        b->n_rows++;
    }
}

Test(sh_spill, reads_back_what_was_appended)
{
    CmErr err;
    cm_err_init(&err);
    CmBatch b, out;
    cr_assert_eq(cm_batch_init(&b, 2, types, &err), CM_OK);
    cr_assert_eq(cm_batch_init(&out, 2, types, &err), CM_OK);
    ShSpill *s = sh_spill_new("/tmp", 0, &err);
    cr_assert_not_null(s, "%s", err.msg);
    int64_t used0 = sh_temp_used();
    int n_batches = 3000 / CM_BATCH_CAP + 40;
    for (int i = 0; i < n_batches; i++) {
        fill(&b, (int64_t)i * CM_BATCH_CAP);
        cr_assert_eq(sh_spill_append(s, &b, &err), CM_OK, "%s", err.msg);
    }
    cr_assert_eq(sh_spill_rewind(s, &err), CM_OK);
    cr_expect_gt(sh_spill_bytes(s), 0);
    cr_expect_eq(sh_temp_used() - used0, sh_spill_bytes(s));
    cr_expect_eq(sh_spill_rows(s), (int64_t)n_batches * CM_BATCH_CAP);
    for (int pass = 0; pass < 2; pass++) {
        int64_t next = 0;
        bool eof = false;
        while (true) {
            cr_assert_eq(sh_spill_read(s, &out, &eof, &err), CM_OK, "%s", err.msg);
            if (eof) {
                break;
            }
            for (int r = 0; r < out.n_rows; r++, next++) {
                cr_assert_eq(((int64_t *)out.cols[0].data)[r], next);
                if (next % 7 == 0) {
                    cr_assert(cm_vec_is_null(&out.cols[1], (uint32_t)r));
                } else {
                    char buf[40];
                    int len = snprintf(buf, sizeof buf, "row number %lld", (long long)next);
                    CmStr str = ((CmStr *)out.cols[1].data)[r];
                    cr_assert_eq((int)str.len, len);
                    cr_assert(memcmp(cm_str_data(&str), buf, (size_t)len) == 0);
                }
            }
        }
        cr_expect_eq(next, (int64_t)n_batches * CM_BATCH_CAP);
        cr_assert_eq(sh_spill_rewind(s, &err), CM_OK);
    }
    sh_spill_free(s);
    cr_expect_eq(sh_temp_used(), used0, "the space is given back");
    cm_batch_fini(&b);
    cm_batch_fini(&out);
}

Test(sh_spill, max_temp_is_a_clean_error)
{
    CmErr err;
    cm_err_init(&err);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 2, types, &err), CM_OK);
    ShSpill *s = sh_spill_new("/tmp", 4096, &err);
    cr_assert_not_null(s);
    CmStatus st = CM_OK;
    for (int i = 0; i < 5000 && st == CM_OK; i++) {
        fill(&b, (int64_t)i * 1000003);
        st = sh_spill_append(s, &b, &err);
    }
    if (st == CM_OK) {
        st = sh_spill_rewind(s, &err);
    }
    cr_expect_eq(st, CM_IO);
    cr_expect(strstr(err.msg, "max_temp_directory_size") != NULL, "%s", err.msg);
    cr_expect(strstr(err.msg, "/tmp") != NULL, "%s", err.msg);
    sh_spill_free(s);
    cm_batch_fini(&b);
}

Test(sh_spill, bad_directory_names_it)
{
    CmErr err;
    cm_err_init(&err);
    ShSpill *s = sh_spill_new("/nonexistent/dir", 0, &err);
    cr_expect_null(s);
    cr_expect_eq(err.code, CM_IO);
    cr_expect(strstr(err.msg, "/nonexistent/dir") != NULL, "%s", err.msg);
}

/* Batch i of the mixed test: 1 + i % 5 rows, or a whole batch; every 9th has
 * a string of 50,000 bytes, larger than a read window. */
static void fill_mixed(CmBatch *b, int i, char *big)
{
    cm_batch_reset(b);
    int n = i % 4 == 3 ? CM_BATCH_CAP : 1 + i % 5;
    n = n < CM_BATCH_CAP ? n : CM_BATCH_CAP;
    for (int r = 0; r < n; r++) {
        ((int64_t *)b->cols[0].data)[r] = (int64_t)i * 100000 + r;
        cm_vec_set_valid(&b->cols[1], (uint32_t)r);
        size_t len = i % 9 == 0 && r == 0 ? 50000 : (size_t)(i % 13);
        memset(big, 'a' + i % 26, len);
        char *copy = cm_arena_strndup(&b->heap, big, len);
        ((CmStr *)b->cols[1].data)[r] = cm_str_make(copy, (uint32_t)len);
    }
    b->n_rows = n;
}

static void expect_mixed(const CmBatch *out, int i)
{
    int n = i % 4 == 3 ? CM_BATCH_CAP : 1 + i % 5;
    n = n < CM_BATCH_CAP ? n : CM_BATCH_CAP;
    cr_assert_eq(out->n_rows, n, "batch %d", i);
    for (int r = 0; r < n; r++) {
        cr_assert_eq(((int64_t *)out->cols[0].data)[r], (int64_t)i * 100000 + r);
        CmStr str = ((CmStr *)out->cols[1].data)[r];
        size_t len = i % 9 == 0 && r == 0 ? 50000 : (size_t)(i % 13);
        cr_assert_eq(str.len, len, "batch %d row %d", i, r);
        const char *d = cm_str_data(&str);
        for (size_t k = 0; k < len; k++) {
            cr_assert_eq(d[k], 'a' + i % 26);
        }
    }
}

/* Reads come through a window of several records: small records, records
 * larger than the window and records across its edge read back in order, and
 * seeking back and forth to remembered positions reads the same batches. */
Test(sh_spill, small_and_large_records_through_the_read_window)
{
    CmErr err;
    cm_err_init(&err);
    CmBatch b, out;
    cr_assert_eq(cm_batch_init(&b, 2, types, &err), CM_OK);
    cr_assert_eq(cm_batch_init(&out, 2, types, &err), CM_OK);
    char *big = cm_malloc(50000);
    cr_assert_not_null(big);
    ShSpill *s = sh_spill_new("/tmp", 0, &err);
    cr_assert_not_null(s, "%s", err.msg);
    enum { N = 400 };
    for (int i = 0; i < N; i++) {
        fill_mixed(&b, i, big);
        cr_assert_eq(sh_spill_append(s, &b, &err), CM_OK, "%s", err.msg);
    }
    cr_assert_eq(sh_spill_rewind(s, &err), CM_OK);
    static int64_t pos[N + 1];
    bool eof = false;
    for (int i = 0; i < N; i++) {
        pos[i] = sh_spill_tell(s);
        cr_assert_eq(sh_spill_read(s, &out, &eof, &err), CM_OK, "%s", err.msg);
        cr_assert(!eof, "batch %d", i);
        expect_mixed(&out, i);
    }
    pos[N] = sh_spill_tell(s);
    cr_assert_eq(sh_spill_read(s, &out, &eof, &err), CM_OK);
    cr_assert(eof);
    /* Backwards, then a stride through the file, each from its position. */
    for (int i = N - 1; i >= 0; i -= 3) {
        sh_spill_seek(s, pos[i]);
        cr_assert_eq(sh_spill_read(s, &out, &eof, &err), CM_OK, "%s", err.msg);
        expect_mixed(&out, i);
        cr_assert_eq(sh_spill_tell(s), pos[i + 1]);
    }
    for (int k = 0; k < N; k++) {
        int i = (k * 37) % N;
        sh_spill_seek(s, pos[i]);
        cr_assert_eq(sh_spill_read(s, &out, &eof, &err), CM_OK, "%s", err.msg);
        expect_mixed(&out, i);
    }
    sh_spill_free(s);
    cm_free(big);
    cm_batch_fini(&b);
    cm_batch_fini(&out);
}
