/*
 * test_csv_out.c - unit tests for storage/csv_out.c, COPY TO's CSV writer:
 * the text of values (quoting, NULLs, constants, selections), the same bytes
 * whatever the number of threads, rows in order across many batches, and the
 * row-at-a-time fallback when the text buffers' memory is refused.  Batches
 * are CM_BATCH_CAP rows (CI also builds it as 3).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/mem.h"
#include "storage/csv_out.h"

static CmErr err;

static void setup(void)
{
    cm_err_init(&err);
}

TestSuite(st_csv_out, .init = setup, .timeout = 60);

static const CmType TYPES[2] = {{.id = CM_T_INT64}, {.id = CM_T_VARCHAR}};

/* Writes the batches through a writer with n_threads; owned text (free). */
static char *write_all(CmBatch *const *bs, int n_batches, int n_threads, const char *null_str)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    StCsvOutOptions opt = {.delimiter = ',', .quote = '"', .null_str = null_str};
    StCsvOut *w = st_csv_out_new(f, &opt, n_threads, &err);
    cr_assert_not_null(w, "%s", err.msg);
    for (int i = 0; i < n_batches; i++) {
        cr_assert_eq(st_csv_out_write(w, bs[i], &err), CM_OK, "%s", err.msg);
    }
    cr_assert_eq(st_csv_out_finish(w, &err), CM_OK, "%s", err.msg);
    st_csv_out_free(w);
    fclose(f);
    return text;
}

/* write_all into a regular file, where several threads write with pwrite
 * (positioned mode), between a header written through the stream before
 * the first batch and a line written through it after finish; the text
 * between them, owned (free). */
static char *write_all_to_file(CmBatch *const *bs, int n_batches, int n_threads)
{
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    StCsvOutOptions opt = {.delimiter = ',', .quote = '"', .null_str = "", .name = "t.csv"};
    StCsvOut *w = st_csv_out_new(f, &opt, n_threads, &err);
    cr_assert_not_null(w, "%s", err.msg);
    fputs("head\n", f);
    for (int i = 0; i < n_batches; i++) {
        cr_assert_eq(st_csv_out_write(w, bs[i], &err), CM_OK, "%s", err.msg);
    }
    cr_assert_eq(st_csv_out_finish(w, &err), CM_OK, "%s", err.msg);
    st_csv_out_free(w);
    fputs("tail\n", f);
    cr_assert_eq(fflush(f), 0);
    long size = ftell(f);
    cr_assert_geq(size, 10L);
    char *all = cm_malloc((size_t)size + 1);
    rewind(f);
    cr_assert_eq(fread(all, 1, (size_t)size, f), (size_t)size);
    all[size] = 0;
    fclose(f);
    cr_expect_eq(strncmp(all, "head\n", 5), 0, "the header was overwritten");
    cr_expect_str_eq(all + size - 5, "tail\n", "the stream did not continue at the end");
    char *text = strndup(all + 5, (size_t)size - 10);
    cm_free(all);
    return text;
}

/* Row i of a batch: (base + i, a string from strs[i % n]), NULL where s is NULL. */
static void fill(CmBatch *b, int n_rows, int64_t base, const char *const *strs, int n_strs)
{
    for (int i = 0; i < n_rows; i++) {
        ((int64_t *)b->cols[0].data)[i] = base + i;
        const char *s = strs[i % n_strs];
        if (s == NULL) {
            cm_vec_set_null(&b->cols[1], (uint32_t)i);
        } else {
            ((CmStr *)b->cols[1].data)[i] = cm_str_make(s, (uint32_t)strlen(s));
        }
    }
    b->n_rows = n_rows;
}

/* The first n of rows[] joined. */
static void expect_rows(const char *text, const char *const *rows, int n)
{
    char want[1024] = "";
    for (int i = 0; i < n; i++) {
        strcat(want, rows[i]);
    }
    cr_expect_str_eq(text, want);
}

static int min_cap(int n)
{
    return CM_BATCH_CAP < n ? CM_BATCH_CAP : n;
}

Test(st_csv_out, quotes_what_would_read_back_differently)
{
    static const char *const strs[] = {"plain",
                                       "a,b",
                                       "say \"hi\"",
                                       "two\nlines",
                                       NULL,
                                       "",
                                       "a string longer than the inline part"};
    static const char *const rows[] = {"1,plain\n",
                                       "2,\"a,b\"\n",
                                       "3,\"say \"\"hi\"\"\"\n",
                                       "4,\"two\nlines\"\n",
                                       "5,\n",
                                       "6,\"\"\n",
                                       "7,a string longer than the inline part\n"};
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 2, TYPES, &err), CM_OK);
    fill(&b, min_cap(7), 1, strs, 7);
    CmBatch *bs[] = {&b};
    char *text = write_all(bs, 1, 1, "");
    expect_rows(text, rows, b.n_rows);
    free(text);
    cm_batch_fini(&b);
}

Test(st_csv_out, null_text_is_quoted_when_a_value_spells_it)
{
    static const char *const strs[] = {"NULL", NULL};
    static const char *const rows[] = {"NULL,\"NULL\"\n", "1,NULL\n"};
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 2, TYPES, &err), CM_OK);
    fill(&b, min_cap(2), 0, strs, 2);
    cm_vec_set_null(&b.cols[0], 0);
    CmBatch *bs[] = {&b};
    char *text = write_all(bs, 1, 2, "NULL");
    expect_rows(text, rows, b.n_rows);
    free(text);
    cm_batch_fini(&b);
}

Test(st_csv_out, constants_and_selections_are_read_through)
{
    static const char *const strs[] = {"x"};
    static const char *const rows[] = {"12,const\n", "10,const\n", "11,const\n"};
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 2, TYPES, &err), CM_OK);
    fill(&b, 3 <= CM_BATCH_CAP ? 3 : 1, 10, strs, 1);
    b.cols[1].kind = CM_VEC_CONST;
    ((CmStr *)b.cols[1].data)[0] = cm_str_make("const", 5);
    uint32_t sel[3] = {2, 0, 1};
    b.sel = sel;
    CmBatch *bs[] = {&b};
    char *text = write_all(bs, 1, 3, "");
    expect_rows(text, rows, b.n_rows);
    free(text);
    b.sel = NULL;
    cm_batch_fini(&b);
}

/* 200 batches (a last one partly full) of numbered rows, some quoted,
 * written to a memory stream or (to_file) a regular file. */
static char *numbered_to(int n_threads, bool to_file)
{
    static const char *const strs[] = {"abc", "with,comma", NULL,
                                       "long enough to live outside the inline bytes"};
    enum { N_BATCHES = 200 };
    CmBatch *bs[N_BATCHES];
    for (int i = 0; i < N_BATCHES; i++) {
        bs[i] = cm_malloc(sizeof(CmBatch));
        cr_assert_eq(cm_batch_init(bs[i], 2, TYPES, &err), CM_OK);
        int n = i == N_BATCHES - 1 && CM_BATCH_CAP > 5 ? CM_BATCH_CAP / 2 + 1 : CM_BATCH_CAP;
        fill(bs[i], n, (int64_t)i * CM_BATCH_CAP, strs, 4);
    }
    char *text = to_file ? write_all_to_file(bs, N_BATCHES, n_threads)
                         : write_all(bs, N_BATCHES, n_threads, "");
    for (int i = 0; i < N_BATCHES; i++) {
        cm_batch_fini(bs[i]);
        cm_free(bs[i]);
    }
    return text;
}

static char *numbered(int n_threads)
{
    return numbered_to(n_threads, false);
}

static void expect_numbered(const char *text)
{
    const char *p = text;
    int64_t want = 0;
    while (*p != '\0') {
        char *end;
        int64_t got = strtoll(p, &end, 10);
        cr_assert_eq(got, want, "row %lld came as %lld", (long long)want, (long long)got);
        p = strchr(end, '\n');
        cr_assert_not_null(p);
        p++;
        want++;
    }
    int64_t last = CM_BATCH_CAP > 5 ? CM_BATCH_CAP / 2 + 1 : CM_BATCH_CAP;
    cr_expect_eq(want, 199LL * CM_BATCH_CAP + last);
}

Test(st_csv_out, threads_write_the_same_bytes_in_row_order)
{
    char *one = numbered(1), *three = numbered(3);
    expect_numbered(one);
    cr_expect(strcmp(three, one) == 0, "three threads wrote other bytes");
    free(one);
    free(three);
}

Test(st_csv_out, refused_buffers_fall_back_to_rows)
{
    char *want = numbered(1);
    cm_mem_set_limit(16 * 1024); /* less than one text buffer */
    char *got = numbered(2);
    cm_mem_set_limit(cm_mem_default_limit());
    cr_expect(strcmp(got, want) == 0, "the fallback wrote other bytes");
    free(want);
    free(got);
}

Test(st_csv_out, threads_writing_a_file_in_place_write_the_same_bytes)
{
    char *one = numbered(1), *two = numbered_to(2, true), *three = numbered_to(3, true);
    cr_expect(strcmp(two, one) == 0, "two threads wrote other bytes to a file");
    cr_expect(strcmp(three, one) == 0, "three threads wrote other bytes to a file");
    free(one);
    free(two);
    free(three);
}

Test(st_csv_out, refused_buffers_fall_back_to_rows_in_a_file)
{
    char *want = numbered(1);
    cm_mem_set_limit(16 * 1024); /* less than one text buffer */
    char *got = numbered_to(2, true);
    cm_mem_set_limit(cm_mem_default_limit());
    cr_expect(strcmp(got, want) == 0, "the fallback wrote other bytes");
    free(want);
    free(got);
}

Test(st_csv_out, a_failed_write_in_place_is_an_error_naming_the_file)
{
    char path[] = "/tmp/sluice_csv_out_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    FILE *f = fopen(path, "r"); /* a regular file this process cannot write */
    cr_assert_not_null(f);
    static const char *const strs[] = {"abc"};
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 2, TYPES, &err), CM_OK);
    fill(&b, CM_BATCH_CAP, 0, strs, 1);
    StCsvOutOptions opt = {.delimiter = ',', .quote = '"', .null_str = "", .name = "out.csv"};
    StCsvOut *w = st_csv_out_new(f, &opt, 2, &err);
    cr_assert_not_null(w, "%s", err.msg);
    cr_expect_eq(st_csv_out_write(w, &b, &err), CM_IO);
    cr_expect(strstr(err.msg, "cannot write 'out.csv'") != NULL, "%s", err.msg);
    st_csv_out_free(w);
    fclose(f);
    unlink(path);
    cm_batch_fini(&b);
}

/* One row (1, s) written alone; owned text (free). */
static char *write_one(const char *s)
{
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 2, TYPES, &err), CM_OK);
    const char *strs[] = {s};
    fill(&b, 1, 1, strs, 1);
    CmBatch *bs[] = {&b};
    char *text = write_all(bs, 1, 1, "");
    cm_batch_fini(&b);
    return text;
}

/* The scan for characters that need quotes goes eight bytes at a time: each of
 * them is found at every position of strings up to three words long, and bytes
 * one off from them (where a borrow between bytes would show) are not. */
Test(st_csv_out, quotes_are_found_at_every_position)
{
    static const char special[] = {',', '"', '\n', '\r'};
    static const char near[] = {'+', '-', '!', '#', 0x09, 0x0b, 0x0c, 0x0e, (char)0x80, (char)0xff};
    char s[32];
    for (size_t n = 1; n <= 24; n++) {
        for (size_t i = 0; i < n; i++) {
            s[i] = near[i % sizeof near];
        }
        s[n] = 0;
        char *text = write_one(s);
        cr_expect_neq(text[2], '"', "length %zu quoted without a special byte", n);
        free(text);
        for (size_t pos = 0; pos < n; pos++) {
            for (size_t k = 0; k < sizeof special; k++) {
                char saved = s[pos];
                s[pos] = special[k];
                text = write_one(s);
                cr_expect_eq(text[2], '"', "byte 0x%02x at %zu of %zu not quoted", special[k], pos,
                             n);
                free(text);
                s[pos] = saved;
            }
        }
    }
}
