/*
 * fuzz_csv.c - libFuzzer target: the CSV reader (storage/csv.h).
 *
 * Input: 4 option bytes, then the file.
 *   byte 0: bits 0-1 delimiter (, | TAB ;), bits 2-3 quote (" ' none `;
 *           COPY refuses a quote equal to the delimiter), bit 4 header,
 *           bits 5-6 null string ("" NULL \N x), bit 7 a small max_line_size
 *   byte 1: bits 0-1 fields per record - 1 (1..4)
 *   bytes 2-3: a nibble per field, the table column it fills (mod 8)
 * The file goes into a memfd read through /proc/self/fd, so the reader takes
 * its ordinary path (fopen, read to EOF) without touching the disk.  Each run
 * loads into a fresh table of eight columns, one of every type.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/err.h"
#include "common/thread.h"
#include "common/types.h"
#include "storage/csv.h"
#include "storage/table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static CmPool *g_pool;
static StColumn g_cols[8];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static char names[8][4] = {"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"};
    CmType types[8] = {cm_type_make(CM_T_INT32),   cm_type_make(CM_T_INT64),
                       cm_type_make(CM_T_DOUBLE),  cm_type_decimal(12, 3),
                       cm_type_varchar(-1, false), cm_type_make(CM_T_DATE),
                       cm_type_make(CM_T_TIME),    cm_type_make(CM_T_BOOL)};
    for (int i = 0; i < 8; i++) {
        g_cols[i].name = names[i];
        g_cols[i].type = types[i];
    }
    g_pool = cm_pool_new(2); /* two workers, as the CI machine has */
    if (g_pool == NULL) {
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) {
        return 0;
    }
    static const char delims[4] = {',', '|', '\t', ';'};
    static const char *const nulls[4] = {"", "NULL", "\\N", "x"};
    StCsvOptions opt = {0};
    opt.delimiter = delims[data[0] & 3];
    switch ((data[0] >> 2) & 3) {
    case 0:
        opt.quote = '"';
        break;
    case 1:
        opt.quote = '\'';
        break;
    case 2:
        opt.quote = 0;
        break;
    default:
        opt.quote = '`';
        break;
    }
    opt.header = (data[0] >> 4) & 1;
    opt.null_str = nulls[(data[0] >> 5) & 3];
    opt.max_line_size = (data[0] & 0x80) ? 64 : 0;
    int cols[4];
    opt.n_cols = (data[1] & 3) + 1;
    for (int i = 0; i < 4; i++) {
        cols[i] = (data[2 + i / 2] >> (4 * (i & 1))) & 7;
    }
    opt.cols = cols;

    int fd = memfd_create("fuzz_csv", 0);
    if (fd < 0) {
        abort();
    }
    size_t n = size - 4;
    if (n > 0 && write(fd, data + 4, n) != (ssize_t)n) {
        abort();
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    CmErr err;
    cm_err_init(&err);
    StTable *t = st_table_new("fuzz", 8, g_cols, &err);
    if (t == NULL) {
        abort();
    }
    int64_t rows = 0;
    if (st_csv_load(t, path, &opt, g_pool, &rows, &err) == CM_OK && rows != t->n_rows) {
        abort(); /* the reader's count must be the rows the table gained */
    }
    if (err.code != CM_OK && t->n_rows != 0) {
        abort(); /* a failed load leaves the table as it was */
    }
    st_table_free(t);
    close(fd);
    return 0;
}
