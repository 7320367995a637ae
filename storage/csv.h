/*
 * csv.h - bulk load of delimited text (CSV, and the TPC-DS .dat format) into
 * a table, parsed in parallel.
 *
 * The file is read one window at a time (a few hundred KiB, bounded by
 * memory_limit and reserved as execution memory; a window grows only to hold a
 * record longer than itself), cut into chunks at record boundaries (a
 * sequential pass that tracks quotes, so quoted newlines are safe), and the
 * chunks are parsed into typed column batches by the worker pool and appended
 * in file order, window after window: the load holds a window, not the file.
 * A failure truncates what earlier windows appended, so a bad row leaves the
 * table exactly as it was.  A window's parse errors come before its constraint
 * errors, and both before anything of later windows.  Errors name the
 * file, the line (1-based, counting physical lines) and the column.
 * A trailing delimiter at the end of a line (TPC-DS .dat) is accepted when
 * it is the only extra field and empty.  An unquoted field equal to the NULL
 * string (by default empty) is NULL; a quoted one never is.
 * The input is read to its end, not to a size stat() reports, so pipes, FIFOs
 * and /dev/stdin load too.  A NUL byte anywhere, a record longer than
 * max_line_size bytes, or a VARCHAR field that is not valid UTF-8 fails the
 * load with the file and line; an endless device such as /dev/zero fails in
 * its first window instead of filling memory.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/thread.h"
#include "storage/table.h"

/* The default bound on a record's bytes (DuckDB's max_line_size default). */
#define ST_CSV_MAX_LINE_SIZE ((int64_t)2 * 1024 * 1024)

typedef struct StCsvOptions {
    char delimiter;        /* default ',' */
    char quote;            /* default '"'; 0 = no quoting */
    bool header;           /* skip the first record */
    const char *null_str;  /* default "" */
    int64_t max_line_size; /* bytes of the longest record; 0: ST_CSV_MAX_LINE_SIZE */
    int n_cols;            /* columns the fields fill, in order */
    const int *cols;       /* table column of each field */
    const atomic_bool *interrupt; /* set: stop between windows, "interrupted" (may be NULL) */
} StCsvOptions;

/* Loads `path` into `t` with the pool's workers; *n_rows gets the rows added. */
CmStatus st_csv_load(StTable *t, const char *path, const StCsvOptions *opt, CmPool *pool,
                     int64_t *n_rows, CmErr *err);
