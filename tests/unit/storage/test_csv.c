/*
 * test_csv.c - unit tests for storage/csv_sniff.c and the streaming reader of
 * storage/csv.c: the dialect (delimiter, quote, escape) a sample is sniffed
 * as, the header decision, the narrowest type per column, generated and
 * de-duplicated names, options the caller fixes, and the reader's batches in
 * file order across window boundaries, with a replayed prefix and skipped
 * lines.  Batches are CM_BATCH_CAP rows (CI also builds it as 3).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/arena.h"
#include "storage/csv.h"

static CmErr err;
static CmArena arena;

static void setup(void)
{
    cm_err_init(&err);
    cm_arena_init(&arena, 4096);
}

static void teardown(void)
{
    cm_arena_fini(&arena);
}

TestSuite(st_csv, .init = setup, .fini = teardown);

static StCsvSniff sniff(const char *text)
{
    StCsvSniff s = {.null_str = "", .sample_size = 20480};
    cr_assert_eq(st_csv_sniff(text, strlen(text), true, &s, &arena, &err), CM_OK, "%s", err.msg);
    return s;
}

static void expect_types(const StCsvSniff *s, int n, const CmTypeId *ids)
{
    cr_assert_eq(s->n_cols, n);
    for (int i = 0; i < n; i++) {
        cr_expect_eq(s->types[i].id, ids[i], "column %d", i);
    }
}

Test(st_csv, types_are_the_narrowest_that_parse_every_value)
{
    StCsvSniff s = sniff("a,b,c,d,e,f,g\n1,0,t,1.5,2020-01-01,10:00:00,x\n"
                         "-2,1,FALSE,2,2020-01-02,11:00,1\n");
    CmTypeId ids[] = {CM_T_INT64, CM_T_INT64, CM_T_BOOL, CM_T_DOUBLE,
                      CM_T_DATE,  CM_T_TIME,  CM_T_VARCHAR};
    expect_types(&s, 7, ids);
    cr_expect(s.header);
    cr_expect_str_eq(s.names[6], "g");
}

Test(st_csv, blanks_nulls_and_mixed_values)
{
    /* a blank-padded number is text; a column with only NULLs is VARCHAR;
     * a DATE and a number together are VARCHAR */
    StCsvSniff s = sniff("a,b,c\n 12,,1\n3,,2020-01-01\n");
    CmTypeId ids[] = {CM_T_VARCHAR, CM_T_VARCHAR, CM_T_VARCHAR};
    expect_types(&s, 3, ids);
}

Test(st_csv, header_only_when_the_first_row_differs)
{
    StCsvSniff s = sniff("1,x\n2,y\n");
    cr_expect(!s.header);
    cr_expect_str_eq(s.names[0], "column0");
    cr_expect_str_eq(s.names[1], "column1");
    /* all VARCHAR: the first row is the header */
    s = sniff("foo,bar\nfoo,baz\n");
    cr_expect(s.header);
    cr_expect_str_eq(s.names[1], "bar");
}

Test(st_csv, generated_names_are_padded_and_repeats_get_suffixes)
{
    StCsvSniff s = sniff("1,2,3,4,5,6,7,8,9,10,11\n");
    cr_expect_str_eq(s.names[0], "column00");
    cr_expect_str_eq(s.names[10], "column10");
    s = sniff(",b,b,B\n1,2,3,4\n");
    cr_expect_str_eq(s.names[0], "column0");
    cr_expect_str_eq(s.names[2], "b_1");
    cr_expect_str_eq(s.names[3], "B_2");
}

Test(st_csv, dialects)
{
    StCsvSniff s = sniff("a;b\n1;\"x;y\"\n2;\"z\"\"w\"\n");
    cr_expect_eq(s.delimiter, ';');
    cr_expect_eq(s.quote, '"');
    cr_expect_eq(s.escape, '"');
    s = sniff("a|b\n1|'x|y'\n");
    cr_expect_eq(s.delimiter, '|');
    cr_expect_eq(s.quote, '\'');
    s = sniff("a\tb\n1\t2\n");
    cr_expect_eq(s.delimiter, '\t');
    /* "x\"y" only splits cleanly with a backslash escape */
    s = sniff("a,b\n1,\"x\\\"y\"\n");
    cr_expect_eq(s.escape, '\\');
    cr_expect_eq(s.n_cols, 2);
}

Test(st_csv, what_the_caller_fixes_is_kept)
{
    StCsvSniff s = {.null_str = "", .sample_size = 100, .has_delim = true, .delimiter = '|',
                    .has_header = true, .header = false};
    const char *text = "a,b\n1,2\n";
    cr_assert_eq(st_csv_sniff(text, strlen(text), true, &s, &arena, &err), CM_OK);
    cr_expect_eq(s.delimiter, '|');
    cr_expect_eq(s.n_cols, 1);
    cr_expect(!s.header);
    cr_expect_eq(s.types[0].id, CM_T_VARCHAR);
}

/* Writes text to a temporary file; returns its path (static buffer). */
static const char *temp_file(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/sluice_test_csv_XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

Test(st_csv, reader_streams_in_file_order_with_prefix_and_skip)
{
    /* 20000 records: several windows at the smallest window size */
    size_t cap = 20000 * 16 + 64;
    char *text = cm_arena_alloc(&arena, cap);
    size_t n = (size_t)snprintf(text, cap, "junk line\nn,s\n");
    for (int i = 0; i < 20000; i++) {
        n += (size_t)snprintf(text + n, cap - n, "%d,v%d\n", i, i);
    }
    /* the first 5 bytes come as a prefix (as a sniffed pipe's would) */
    const char *path = temp_file(text + 5);
    CmType types[2] = {cm_type_make(CM_T_INT64), cm_type_make(CM_T_VARCHAR)};
    const char *names[2] = {"n", "s"};
    StCsvOptions opt = {.delimiter = ',', .quote = '"', .header = true, .skip = 1,
                        .null_str = "", .n_cols = 2};
    StCsvReader *r = st_csv_reader_new(path, &opt, 2, types, names, text, 5, &err);
    cr_assert_not_null(r, "%s", err.msg);
    int64_t next = 0;
    CmBatch *b;
    while (st_csv_reader_next(r, &b, &err) == CM_OK && b != NULL) {
        for (int row = 0; row < b->n_rows; row++, next++) {
            cr_assert_eq(((int64_t *)b->cols[0].data)[row], next);
        }
    }
    cr_expect_eq(err.code, CM_OK, "%s", err.msg);
    cr_expect_eq(next, 20000);
    st_csv_reader_free(r);
    unlink(path);
}

Test(st_csv, reader_errors_name_file_line_and_column)
{
    const char *path = temp_file("n\n1\n2\nx\n");
    CmType t = cm_type_make(CM_T_INT64);
    const char *names[1] = {"n"};
    StCsvOptions opt = {.delimiter = ',', .quote = '"', .header = true, .null_str = "",
                        .n_cols = 1, .hint = " (hint)"};
    StCsvReader *r = st_csv_reader_new(path, &opt, 1, &t, names, NULL, 0, &err);
    cr_assert_not_null(r);
    CmBatch *b;
    while (st_csv_reader_next(r, &b, &err) == CM_OK && b != NULL) {
    }
    char want[128];
    snprintf(want, sizeof want, "%s, line 4, column 1 (n): cannot read as BIGINT: 'x' (hint)", path);
    cr_expect_str_eq(err.msg, want);
    st_csv_reader_free(r);
    unlink(path);
}
