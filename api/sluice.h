/*
 * sluice.h - the embedding API of Sluice: open a database, run SQL, read results.
 *
 * A SluiceDb is used by one thread at a time (the engine itself runs each query
 * on its own worker pool).  Statements run one at a time: sluice_exec_next() runs
 * the first statement of a text and tells where the next begins, so a script's
 * statements run, fail and report independently.  A SluiceResult is fully
 * materialized when returned and owns all its memory (rows larger than memory
 * wait on disk); every pointer read from it stays valid until
 * sluice_result_free().  No function prints or exits.
 * This is the only header exported from libsluice.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SLUICE_BUILDING)
#define SLUICE_API __attribute__((visibility("default")))
#else
#define SLUICE_API
#endif

typedef struct SluiceDb SluiceDb;
typedef struct SluiceResult SluiceResult;

/* Logical types of result columns. */
typedef enum SluiceType {
    SLUICE_NULLTYPE = 0, /* a column of untyped NULLs (SELECT NULL) */
    SLUICE_BOOLEAN,
    SLUICE_INTEGER,      /* int32 */
    SLUICE_BIGINT,       /* int64 */
    SLUICE_DOUBLE,
    SLUICE_DECIMAL,      /* exact, printed with its scale */
    SLUICE_VARCHAR,      /* also CHAR(n) */
    SLUICE_DATE,
    SLUICE_TIME,         /* time of day, printed HH:MM:SS[.ffffff] */
    SLUICE_LIST,         /* INTEGER[], VARCHAR[], ...: printed [1, 2, NULL] */
    SLUICE_TIMESTAMP,    /* no time zone, printed YYYY-MM-DD HH:MM:SS[.f] */
    SLUICE_INTERVAL,     /* printed as DuckDB: "1 year 2 days 03:00:00" */
} SluiceType;

/* An error: the status class, a message, and where in the SQL text it is. */
typedef struct SluiceError {
    int code;            /* 0 = no error; otherwise a CmStatus class */
    int64_t offset;      /* byte offset into the `sql` passed in, -1 if unknown */
    int line, column;    /* 1-based position of `offset` in `sql`; 0 if unknown */
    char message[256];   /* e.g. "syntax error at or near 'selec'" (no "Error: ") */
} SluiceError;

/* Opens a database: in memory when path is NULL or ":memory:", otherwise the
 * directory `path` (created when missing).  Returns NULL and fills `err` on
 * failure.  Owned: close with sluice_close(). */
SLUICE_API SluiceDb *sluice_open(const char *path, SluiceError *err);

/* Closes the database and frees everything it holds. NULL is accepted. */
SLUICE_API void sluice_close(SluiceDb *db);

/* Runs the first statement in sql[*off..len).  Returns 0 and *res (owned; a
 * result with zero columns for statements that return no rows) on success, and
 * moves *off past the statement.  *res is NULL when only white space and
 * comments remained (then *off == len).  On failure returns the error class,
 * fills `err` (offset relative to `sql`), sets *res to NULL and still moves *off
 * past the failed statement so the caller can go on with the next one. */
SLUICE_API int sluice_exec_next(SluiceDb *db, const char *sql, size_t len, size_t *off,
                                SluiceResult **res, SluiceError *err);

/* Runs every statement of a NUL-terminated text, stopping at the first error;
 * returns the last statement's result (owned, may be NULL) through `res` when
 * `res` is not NULL. */
SLUICE_API int sluice_exec(SluiceDb *db, const char *sql, SluiceResult **res, SluiceError *err);

/* Stops the statement running in `db` (from another thread, or a signal
 * handler: it is async-signal-safe): it fails soon, with "interrupted", and
 * leaves the database as it was before the statement.  Does nothing when no
 * statement runs; the next statement runs normally. */
SLUICE_API void sluice_interrupt(SluiceDb *db);

/* How far the running statement is (SET enable_progress_bar, progress_bar_time). */
typedef struct SluiceProgress {
    double fraction;       /* 0..1, weighted by each stage's estimated work; never goes
                              back within a statement, and below 1 until it ends */
    int stage;             /* the running stage, numbered as EXPLAIN does; -1: none */
    int n_stages;          /* stages of the running query */
    int64_t elapsed_ms;    /* since the statement started */
    int64_t spilled_bytes; /* written to spill files so far */
    char decision[96];     /* the last adaptive decision ("stage 3: join → broadcast"),
                              UTF-8, "" if none */
} SluiceProgress;

/* Called with the progress of the running statement every 100 ms, from a
 * thread of the library (never two calls at once, and none after the
 * statement's sluice_exec_next returned), once it has run progress_bar_time
 * ms, unless enable_progress_bar is off.  `p` is borrowed for the call.  The
 * handler must be quick and must not call into `db`. */
typedef void (*SluiceProgressFn)(void *ctx, const SluiceProgress *p);

/* Sets the progress handler of db (fn NULL removes it), between statements. */
SLUICE_API void sluice_set_progress_handler(SluiceDb *db, SluiceProgressFn fn, void *ctx);

/* True when `sql` ends with a complete statement (a ';' outside quotes and
 * comments), as the REPL needs to decide whether to read another line. */
SLUICE_API bool sluice_complete(const char *sql, size_t len);

/* Sets a setting as `SET name = value` would (value is SQL text, e.g. "2" or
 * "'64KB'").  Known names include threads. */
SLUICE_API int sluice_set(SluiceDb *db, const char *name, const char *value, SluiceError *err);

/* Result access.  Rows and columns are 0-based. */
SLUICE_API int sluice_result_column_count(const SluiceResult *res);
SLUICE_API const char *sluice_result_column_name(const SluiceResult *res, int col);
SLUICE_API SluiceType sluice_result_column_type(const SluiceResult *res, int col);
/* The precision (total digits) and scale (digits after the point) of a DECIMAL
 * column, as in DECIMAL(15,2).  Returns false, and sets both to 0, for a column
 * of any other type. */
SLUICE_API bool sluice_result_column_decimal(const SluiceResult *res, int col, int *precision,
                                             int *scale);
SLUICE_API int64_t sluice_result_row_count(const SluiceResult *res);
SLUICE_API bool sluice_result_is_null(const SluiceResult *res, int64_t row, int col);
/* The value as text, exactly as Sluice prints it: DOUBLE as the shortest text
 * that reads back to the same value, DECIMAL with its scale, DATE as YYYY-MM-DD,
 * BOOLEAN as true/false.  NULL values return NULL. Valid until the result is freed. */
SLUICE_API const char *sluice_result_text(const SluiceResult *res, int64_t row, int col);
/* The same text written into buf, snprintf's way: at most cap bytes, NUL
 * included (when cap > 0); returns the length of the whole text (call again
 * with a larger buf when it is >= cap), or -1 for NULL.  Keeps nothing, where
 * sluice_result_text keeps every text until the result is freed: for reading
 * results larger than memory. */
SLUICE_API int64_t sluice_result_text_into(const SluiceResult *res, int64_t row, int col,
                                           char *buf, size_t cap);
/* A failure reading the result's rows.  Rows larger than memory wait on disk
 * and are read back as they are asked for; when that fails (an I/O error, or
 * no memory to load them into) the cells asked for read as NULL.  Returns 0
 * when nothing failed so far, else the error class, with `err` filled (err
 * may be NULL).  A client that reads a large result checks it at the end. */
SLUICE_API int sluice_result_error(const SluiceResult *res, SluiceError *err);
/* A statement that changes rows reports how many (INSERT, UPDATE, DELETE, COPY);
 * -1 for other statements. */
SLUICE_API int64_t sluice_result_changes(const SluiceResult *res);
SLUICE_API void sluice_result_free(SluiceResult *res);

/* Catalog access for the CLI's .tables and .schema: the names of the tables and
 * views in creation order (index 0..count-1), and the CREATE statement of one
 * as it was written.  Strings are borrowed until the next statement runs. */
SLUICE_API int sluice_table_count(SluiceDb *db);
SLUICE_API const char *sluice_table_name(SluiceDb *db, int idx);
SLUICE_API const char *sluice_table_sql(SluiceDb *db, const char *name);

/* The library version, e.g. "0.1.0". */
SLUICE_API const char *sluice_version(void);

#ifdef __cplusplus
}
#endif
