/*
 * csv.h - bulk load of delimited text (CSV, and the TPC-DS .dat format) into
 * a table, parsed in parallel.
 *
 * The file is read one window at a time (a few hundred KiB, bounded by
 * memory_limit and reserved as execution memory; a window grows only to hold a
 * record longer than itself), cut into chunks at record boundaries (a
 * sequential pass that tracks quotes, so quoted newlines are safe), and the
 * chunks are parsed into typed column batches by the worker pool and appended
 * in file order, window after window: the load holds two windows' rows, not
 * the file.  The append is pipelined: while the workers parse a window, one
 * of them appends the window before (constraints, indexes) and another counts
 * its statistics (apart from the table's, added when the load succeeds), so
 * the single-threaded part of a load overlaps the parallel one.  The first
 * window sizes the table's indexes for the whole file (estimated from its
 * share of the file's bytes), so they are not rebuilt at every doubling.
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
 *
 * The same parser also streams: StCsvReader (the read_csv table function)
 * hands out the parsed batches of one window at a time, parsed in the calling
 * thread, so a scan holds one window whatever the file's size.  A reader may
 * read one byte range of a file (StCsvRange), cut by st_csv_ranges at record
 * starts with the same quote-aware pass, so several tasks parse one file.  st_csv_sniff
 * (csv_sniff.c) guesses the dialect, the header and the column types from a
 * sample of the text, as DuckDB's sniffer does.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/err.h"
#include "common/thread.h"
#include "storage/table.h"

/* The records a sniffer samples by default (DuckDB's sample_size default). */
#define ST_CSV_SNIFF_SAMPLE 20480

/* The default bound on a record's bytes (DuckDB's max_line_size default). */
#define ST_CSV_MAX_LINE_SIZE ((int64_t)2 * 1024 * 1024)

typedef struct StCsvOptions {
    char delimiter;               /* default ',' */
    char quote;                   /* default '"'; 0 = no quoting */
    char escape;                  /* inside quotes, makes the next byte literal; 0: the quote
                                     (a doubled quote is one quote) */
    bool header;                  /* skip the first record */
    int64_t skip;                 /* lines dropped before anything else (before the header) */
    bool ignore_errors;           /* a record that does not parse is left out, not an error */
    const char *hint;             /* appended to an error converting a field, or NULL */
    const char *null_str;         /* default "" */
    int64_t max_line_size;        /* bytes of the longest record; 0: ST_CSV_MAX_LINE_SIZE */
    int n_cols;                   /* columns the fields fill, in order */
    const int *cols;              /* table column of each field */
    const atomic_bool *interrupt; /* set: stop between windows, "interrupted" (may be NULL) */
    /* st_csv_load calls it between windows with the bytes of the file parsed
     * so far (for a progress bar); NULL: none */
    void (*on_read)(void *ctx, int64_t bytes);
    void *on_read_ctx;
} StCsvOptions;

/* Loads `path` into `t` with the pool's workers; *n_rows gets the rows added. */
CmStatus st_csv_load(StTable *t, const char *path, const StCsvOptions *opt, CmPool *pool,
                     int64_t *n_rows, CmErr *err);

/* ---- streaming ---- */

typedef struct StCsvReader StCsvReader;

/* Opens `path` to read batches of n_cols columns (types, names for errors;
 * both borrowed until st_csv_reader_free): field k of each record fills
 * column opt->cols[k] (k itself when cols is NULL), other columns are NULL.
 * `prefix` (borrowed, may be NULL) is input that comes before what the file
 * still holds: the bytes a sniffer already took from a pipe.  NULL with err
 * when the file cannot be opened or on OOM.  Not thread-safe. */
StCsvReader *st_csv_reader_new(const char *path, const StCsvOptions *opt, int n_cols,
                               const CmType *types, const char *const *names, const char *prefix,
                               size_t n_prefix, CmErr *err);
/* The next batch of rows in file order, *out borrowed until the next call
 * (the caller may fill columns no field fills); *out NULL at the end. */
CmStatus st_csv_reader_next(StCsvReader *r, CmBatch **out, CmErr *err);
void st_csv_reader_free(StCsvReader *r);

/* Bytes [begin, end) of a file, cut at record starts; `line` is the line
 * number of `begin` (1-based, physical lines, as in errors). */
typedef struct StCsvRange {
    int64_t begin;
    int64_t end; /* -1: to the end of the input */
    int64_t line;
} StCsvRange;

/* Cuts regular file `path` into ranges about range_bytes long (at most
 * max_ranges), in file order, by the pass COPY uses to cut its chunks
 * (find_chunks: quotes tracked from the first byte, after opt->skip lines),
 * so a quoted newline never starts a range.  A file that is not regular, or
 * under twice range_bytes, is one range.  The content never fails the call:
 * from a NUL byte, an over-long record or a record longer than the pass's
 * window on, the rest is one range, whose reader then reports what it finds.
 * *ranges owned (cm_free); CM_IO when the file cannot be read, CM_OOM. */
CmStatus st_csv_ranges(const char *path, const StCsvOptions *opt, int64_t range_bytes,
                       int max_ranges, StCsvRange **ranges, int *n_ranges, CmErr *err);
/* Makes a new reader (no batch taken yet) read only range `rg` of its file:
 * the header and opt->skip belong to the range that begins at byte 0. */
CmStatus st_csv_reader_set_range(StCsvReader *r, const StCsvRange *rg, CmErr *err);

/* ---- sniffing (csv_sniff.c) ---- */

typedef struct StCsvSniff {
    /* in: what the user fixed (has_*), the rest is guessed */
    bool has_delim, has_quote, has_escape, has_header;
    int64_t skip;         /* lines before the first record */
    const char *null_str; /* an unquoted field equal to it is NULL */
    int64_t sample_size;  /* records looked at */
    int n_fixed;          /* > 0: the columns' types are these (not guessed) */
    const CmType *fixed;
    /* in when fixed, else out */
    char delimiter, quote, escape; /* quote 0: none; escape: the quote when doubling */
    bool header;
    /* out, in the arena */
    int n_cols;
    CmType *types;
    const char **names; /* the header's (unique), or column0, column1, ... */
} StCsvSniff;

/* Reads the first bytes of `path` (about n_lines lines, at most a few MiB)
 * into *data in arena a, with read(2): of a pipe, only those bytes are taken.
 * *is_eof: the sample is the whole input. */
CmStatus st_csv_sample(const char *path, int64_t n_lines, CmArena *a, char **data, size_t *size,
                       bool *is_eof, CmErr *err);
/* Guesses what s leaves open from the sample data[0..size) (see csv_sniff.c). */
CmStatus st_csv_sniff(const char *data, size_t size, bool is_eof, StCsvSniff *s, CmArena *a,
                      CmErr *err);
