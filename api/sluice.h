/*
 * sluice.h - the embedding API of Sluice: open a database, run SQL, read results.
 *
 * Statements run one at a time: sluice_exec_next() runs the first statement of
 * a text and tells where the next begins, so a script's statements run, fail
 * and report independently.  sluice_prepare() makes a statement with `?`/`$n`
 * parameters that runs again and again with new values.  A SluiceResult is
 * fully materialized when returned and owns all its memory (rows larger than
 * memory wait on disk); every pointer read from it stays valid until
 * sluice_result_free().  A SluiceStream hands a query's rows over a chunk at a
 * time as the query makes them, so that a result is never held whole.
 * No function prints or exits.  This is the only header exported from libsluice.
 *
 * Threads.  A SluiceDb handle is one connection: used by one thread at a time
 * (the engine itself runs each query on the connection's worker pool).
 * sluice_connect() opens another connection to the same database, for another
 * thread.  Connections share the catalog (tables, views, indexes) and the
 * CACHE TABLE entries; each has its own settings, worker pool and interrupt.
 * Statements of different connections are serialized by a database-wide lock,
 * held from a statement's start to its end; for a stream, until its query has
 * made its last row or the stream is freed.  So a thread reading a stream must
 * not run a statement on another connection of the same database meanwhile
 * (it would wait for itself).  While one connection has a transaction open,
 * the others read the last committed state (snapshot isolation: its writes
 * are invisible to them until COMMIT) and may not write, ANALYZE or BEGIN
 * until it ends.  sluice_interrupt() may be called from any thread.
 * memory_limit is one limit for the process: each statement applies its
 * connection's setting when it starts.  SluiceStmt, SluiceResult and
 * SluiceStream belong to the thread of their connection; a result, once
 * returned, may be read by any one thread.
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
typedef struct SluiceStmt SluiceStmt;
typedef struct SluiceStream SluiceStream;

/* Return codes.  0 is success; 1..9 are the classes of SQL errors (as
 * SluiceError.code); the others are the API's own. */
typedef enum SluiceCode {
    SLUICE_OK = 0,
    SLUICE_SYNTAX = 1,    /* the SQL text does not parse */
    SLUICE_BIND = 2,      /* unknown name, unbound parameter */
    SLUICE_TYPE = 3,      /* incompatible types; a typed accessor that cannot convert */
    SLUICE_RUNTIME = 4,   /* overflow, division by zero, bad cast, constraint */
    SLUICE_LIMIT = 5,     /* a built-in limit was exceeded */
    SLUICE_IO = 6,        /* a file could not be read or written */
    SLUICE_OOM = 7,       /* out of memory */
    SLUICE_CANCELLED = 8, /* interrupted (sluice_interrupt), or a stream freed early */
    SLUICE_INTERNAL = 9,  /* a bug */
    SLUICE_RANGE = 100,   /* a parameter, row or column index out of range */
    SLUICE_MISUSE = 101,  /* a call out of order, e.g. a statement while a stream is open */
    SLUICE_NULL = 102,    /* a typed accessor read a NULL: not an error; *out is 0 */
} SluiceCode;

/* Logical types of result columns. */
typedef enum SluiceType {
    SLUICE_NULLTYPE = 0, /* a column of untyped NULLs (SELECT NULL) */
    SLUICE_BOOLEAN,
    SLUICE_INTEGER, /* int32 */
    SLUICE_BIGINT,  /* int64 */
    SLUICE_DOUBLE,
    SLUICE_DECIMAL, /* exact, printed with its scale */
    SLUICE_VARCHAR, /* also CHAR(n) */
    SLUICE_DATE,
    SLUICE_TIME,      /* time of day, printed HH:MM:SS[.ffffff] */
    SLUICE_LIST,      /* INTEGER[], VARCHAR[], ...: printed [1, 2, NULL] */
    SLUICE_TIMESTAMP, /* no time zone, printed YYYY-MM-DD HH:MM:SS[.f] */
    SLUICE_INTERVAL,  /* printed as DuckDB: "1 year 2 days 03:00:00" */
} SluiceType;

/* An error: the status class, a message, and where in the SQL text it is. */
typedef struct SluiceError {
    int code;          /* 0 = no error; otherwise a CmStatus class */
    int64_t offset;    /* byte offset into the `sql` passed in, -1 if unknown */
    int line, column;  /* 1-based position of `offset` in `sql`; 0 if unknown */
    char message[256]; /* e.g. "syntax error at or near 'selec'" (no "Error: ") */
} SluiceError;

/* Opens a database: in memory when path is NULL or ":memory:", otherwise the
 * directory `path` (created when missing).  Returns NULL and fills `err` on
 * failure.  Owned: close with sluice_close(). */
SLUICE_API SluiceDb *sluice_open(const char *path, SluiceError *err);

/* sluice_open's flags. */
enum {
    /* Open an existing directory database read-only: statements that would
     * change it fail; other read-only processes may have it open too. */
    SLUICE_OPEN_READONLY = 1,
};

/* sluice_open with SLUICE_OPEN_* flags (0: as sluice_open).  A directory
 * database is held by one writer at a time: a second one fails with
 * SLUICE_IO naming the directory.  Read-only needs a path. */
SLUICE_API SluiceDb *sluice_open_flags(const char *path, unsigned flags, SluiceError *err);

/* Opens another connection to db's database (see Threads above).  Owned:
 * close with sluice_close(); the database lives until its last connection
 * is closed, whichever that is.  NULL with err on failure. */
SLUICE_API SluiceDb *sluice_connect(SluiceDb *db, SluiceError *err);

/* Closes a connection; the database and everything it holds go with the last
 * one.  Free its statements, results and streams first.  NULL is accepted. */
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

/* 1 while `db` has a transaction open (between BEGIN and COMMIT or ROLLBACK),
 * else 0: its writes are not durable yet, and closing `db` discards them. */
SLUICE_API int sluice_in_transaction(SluiceDb *db);

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
SLUICE_API int64_t sluice_result_text_into(const SluiceResult *res, int64_t row, int col, char *buf,
                                           size_t cap);
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

/* ---- typed values ---------------------------------------------------------
 * Each reads one cell of a result (or of a stream's chunk, which is a result)
 * into *out and returns SLUICE_OK; SLUICE_NULL (and *out zeroed) for a NULL;
 * SLUICE_RANGE for a row or column out of range.  Conversions are exact or
 * refused with SLUICE_TYPE (*out zeroed), never silently lossy:
 *   int64:   BOOLEAN (0/1), INTEGER, BIGINT; a DECIMAL or DOUBLE whose value is
 *            a whole number within BIGINT (else SLUICE_TYPE).
 *   double:  any number (BOOLEAN, INTEGER, BIGINT, DECIMAL rounded to the
 *            nearest double, DOUBLE).
 *   decimal: the value times 10^scale as *value with *scale: a DECIMAL as
 *            stored (a DECIMAL(38) whose value needs more than 64 bits is
 *            SLUICE_RANGE), INTEGER and BIGINT with scale 0.
 *   date:    DATE only, as days since 1970-01-01.
 *   string:  VARCHAR's bytes as they are (may hold NUL: use *len); any other
 *            type as the text sluice_result_text gives.  Borrowed until the
 *            result is freed; NUL-terminated.  NULL: returns NULL, *len 0.
 */
SLUICE_API int sluice_result_int64(const SluiceResult *res, int64_t row, int col, int64_t *out);
SLUICE_API int sluice_result_double(const SluiceResult *res, int64_t row, int col, double *out);
SLUICE_API int sluice_result_decimal(const SluiceResult *res, int64_t row, int col, int64_t *value,
                                     int *scale);
SLUICE_API int sluice_result_date(const SluiceResult *res, int64_t row, int col, int32_t *days);
SLUICE_API const char *sluice_result_string(const SluiceResult *res, int64_t row, int col,
                                            size_t *len);

/* ---- prepared statements ---------------------------------------------------
 * sluice_prepare() parses one statement with parameters: `?` (numbered in
 * order, each one past the largest number before it, as in SQLite) or `$n`
 * (1-based).  A text with more than one statement is SLUICE_SYNTAX, with the
 * offset of the second.  Values are bound by index (1-based) and kept until
 * bound again or cleared, so that a statement re-runs with some values
 * changed; a parameter left unbound fails the execution with SLUICE_BIND
 * ("parameter $2 has no value bound") at its offset.  A value's type is the
 * parameter's type (text binds as VARCHAR, which casts as a string literal
 * does).  The statement is parsed, bound and planned anew at every execution,
 * so that it sees the catalog as it is then.  Bind functions return
 * SLUICE_RANGE for an index outside 1..sluice_stmt_param_count (message in
 * sluice_stmt_error), SLUICE_MISUSE while a stream of the statement's
 * connection is open.
 */

/* Owned (sluice_finalize); NULL with err (offset into sql) on failure.  `sql`
 * is copied. */
SLUICE_API int sluice_prepare(SluiceDb *db, const char *sql, SluiceStmt **stmt, SluiceError *err);
/* The largest parameter index in the statement (0 when it has none). */
SLUICE_API int sluice_stmt_param_count(const SluiceStmt *stmt);
SLUICE_API int sluice_bind_int64(SluiceStmt *stmt, int idx, int64_t value);
SLUICE_API int sluice_bind_double(SluiceStmt *stmt, int idx, double value);
/* len < 0: strlen(value).  Copied. */
SLUICE_API int sluice_bind_text(SluiceStmt *stmt, int idx, const char *value, int64_t len);
SLUICE_API int sluice_bind_null(SluiceStmt *stmt, int idx);
SLUICE_API int sluice_bind_bool(SluiceStmt *stmt, int idx, bool value);
/* Days since 1970-01-01. */
SLUICE_API int sluice_bind_date(SluiceStmt *stmt, int idx, int32_t days);
/* value / 10^scale as a DECIMAL(18, scale); 0 <= scale <= 18. */
SLUICE_API int sluice_bind_decimal(SluiceStmt *stmt, int idx, int64_t value, int scale);
/* Forgets every bound value. */
SLUICE_API int sluice_clear_bindings(SluiceStmt *stmt);
/* Readies the statement to run again, keeping its values (as SQLite's
 * sqlite3_reset; executing again also works without it) and clears its
 * error. */
SLUICE_API int sluice_reset(SluiceStmt *stmt);
/* Runs the statement with the values bound now; *res as sluice_exec_next's
 * (owned; zero columns for a statement without rows). */
SLUICE_API int sluice_execute(SluiceStmt *stmt, SluiceResult **res, SluiceError *err);
/* Runs the statement as a stream (see below).  Errors found before the first
 * row (syntax, names, unbound parameters) come back here. */
SLUICE_API int sluice_execute_stream(SluiceStmt *stmt, SluiceStream **out, SluiceError *err);
/* The last bind error of the statement (0 when none).  err may be NULL. */
SLUICE_API int sluice_stmt_error(const SluiceStmt *stmt, SluiceError *err);
SLUICE_API void sluice_finalize(SluiceStmt *stmt);

/* ---- streaming results ------------------------------------------------------
 * The query runs on a thread of its own while the caller fetches its rows in
 * chunks (up to one engine batch, 2048 rows, each): the query waits when four
 * chunks are ready and not yet fetched, and its tasks that run ahead of the
 * one being read keep their rows within memory_limit and then wait (they do
 * not spill), so memory stays bounded and nothing goes to disk whatever the
 * result's size.  A SELECT streams; any other statement runs to its end
 * first and its rows (if any) come as chunks of the materialized result.
 * The connection is busy until the stream is freed: other statements on it
 * fail with SLUICE_MISUSE.  Freeing a stream before its end stops the query.
 */

/* Runs the one statement in `sql` (see sluice_prepare) as a stream. */
SLUICE_API int sluice_query_stream(SluiceDb *db, const char *sql, SluiceStream **out,
                                   SluiceError *err);
SLUICE_API int sluice_stream_column_count(const SluiceStream *s);
/* Borrowed until the stream is freed. */
SLUICE_API const char *sluice_stream_column_name(const SluiceStream *s, int col);
SLUICE_API SluiceType sluice_stream_column_type(const SluiceStream *s, int col);
/* The next chunk of rows as a result (owned: sluice_result_free; read it with
 * the sluice_result_* functions).  *chunk NULL and SLUICE_OK at the end; an
 * error of the query (SLUICE_CANCELLED "interrupted" after sluice_interrupt)
 * comes back here, with err filled, and ends the stream. */
SLUICE_API int sluice_fetch_chunk(SluiceStream *s, SluiceResult **chunk, SluiceError *err);
/* Stops the query if it still runs, and frees the stream.  NULL is accepted. */
SLUICE_API void sluice_stream_free(SluiceStream *s);

/* Catalog access for the CLI's .tables and .schema: the names of the tables and
 * views in creation order (index 0..count-1), and the CREATE statement of one
 * as it was written (while another connection has a transaction open, those
 * it committed last).  Strings are borrowed until the next statement runs (on
 * any connection of the database). */
SLUICE_API int sluice_table_count(SluiceDb *db);
SLUICE_API const char *sluice_table_name(SluiceDb *db, int idx);
SLUICE_API const char *sluice_table_sql(SluiceDb *db, const char *name);

/* The library version, e.g. "0.1.0". */
SLUICE_API const char *sluice_version(void);

#ifdef __cplusplus
}
#endif
