/*
 * test_api.c - the embedding API (api/sluice.h): prepared statements and their
 * binds, typed accessors, streaming results, interrupt, and connections used
 * from several threads.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/sluice.h"
#include "common/thread.h"
#include "common/vec.h"
#include "shuffle/spill.h"
#include "storage/blocks.h"

/* Under ASan the shadow memory is resident too, and rows cost ten times the
 * time: the large stream is smaller there and its RSS is not checked. */
#if defined(__SANITIZE_ADDRESS__)
#define IS_SANITIZED 1
#else
#define IS_SANITIZED 0
#endif

static SluiceDb *db;

static void setup(void)
{
    SluiceError err;
    db = sluice_open(NULL, &err);
    cr_assert_not_null(db, "%s", err.message);
}

static void teardown(void)
{
    sluice_close(db);
}

TestSuite(sluice_api, .init = setup, .fini = teardown, .timeout = 60);

static void run(SluiceDb *on, const char *sql)
{
    SluiceError err;
    SluiceResult *res = NULL;
    cr_assert_eq(sluice_exec(on, sql, &res, &err), 0, "%s: %s", sql, err.message);
    sluice_result_free(res);
}

static SluiceStmt *prepare(const char *sql)
{
    SluiceError err;
    SluiceStmt *st = NULL;
    cr_assert_eq(sluice_prepare(db, sql, &st, &err), 0, "%s: %s", sql, err.message);
    return st;
}

static SluiceResult *execute(SluiceStmt *st)
{
    SluiceError err;
    SluiceResult *res = NULL;
    cr_assert_eq(sluice_execute(st, &res, &err), 0, "%s", err.message);
    cr_assert_not_null(res);
    return res;
}

Test(sluice_api, binds_of_each_type)
{
    SluiceStmt *st = prepare("SELECT ?, ?, ?, ?, ?, ?, $7");
    cr_assert_eq(sluice_stmt_param_count(st), 7);
    cr_assert_eq(sluice_bind_int64(st, 1, INT64_C(-9000000000)), 0);
    cr_assert_eq(sluice_bind_double(st, 2, 2.5), 0);
    cr_assert_eq(sluice_bind_text(st, 3, "h\0i", 3), 0);
    cr_assert_eq(sluice_bind_null(st, 4), 0);
    cr_assert_eq(sluice_bind_date(st, 5, 19000), 0); /* 2022-01-08 */
    cr_assert_eq(sluice_bind_decimal(st, 6, -1234, 2), 0);
    cr_assert_eq(sluice_bind_bool(st, 7, true), 0);
    SluiceResult *res = execute(st);
    cr_assert_eq(sluice_result_column_type(res, 0), SLUICE_BIGINT);
    cr_assert_eq(sluice_result_column_type(res, 1), SLUICE_DOUBLE);
    cr_assert_eq(sluice_result_column_type(res, 2), SLUICE_VARCHAR);
    cr_assert_eq(sluice_result_column_type(res, 4), SLUICE_DATE);
    cr_assert_eq(sluice_result_column_type(res, 5), SLUICE_DECIMAL);
    cr_assert_eq(sluice_result_column_type(res, 6), SLUICE_BOOLEAN);
    int64_t i;
    double d;
    int32_t days;
    int scale;
    size_t len;
    cr_assert_eq(sluice_result_int64(res, 0, 0, &i), SLUICE_OK);
    cr_assert_eq(i, INT64_C(-9000000000));
    cr_assert_eq(sluice_result_double(res, 0, 1, &d), SLUICE_OK);
    cr_assert_eq(d, 2.5);
    const char *s = sluice_result_string(res, 0, 2, &len);
    cr_assert_eq(len, 3);
    cr_assert_eq(memcmp(s, "h\0i", 3), 0);
    cr_assert(sluice_result_is_null(res, 0, 3));
    cr_assert_eq(sluice_result_int64(res, 0, 3, &i), SLUICE_NULL);
    cr_assert_eq(i, 0);
    cr_assert_null(sluice_result_string(res, 0, 3, &len));
    cr_assert_eq(sluice_result_date(res, 0, 4, &days), SLUICE_OK);
    cr_assert_eq(days, 19000);
    cr_assert_str_eq(sluice_result_text(res, 0, 4), "2022-01-08");
    cr_assert_eq(sluice_result_decimal(res, 0, 5, &i, &scale), SLUICE_OK);
    cr_assert(i == -1234 && scale == 2);
    cr_assert_str_eq(sluice_result_text(res, 0, 5), "-12.34");
    cr_assert_eq(sluice_result_int64(res, 0, 6, &i), SLUICE_OK);
    cr_assert_eq(i, 1);
    sluice_result_free(res);
    sluice_finalize(st);
}

Test(sluice_api, parameters_take_part_in_expressions_and_casts)
{
    SluiceStmt *st = prepare("SELECT $1 * 2 + $2, CAST($3 AS DATE) + 1, $4 || 'x', $1 IS NULL");
    sluice_bind_int64(st, 1, 20);
    sluice_bind_decimal(st, 2, 5, 1);
    sluice_bind_text(st, 3, "2024-02-28", -1);
    sluice_bind_text(st, 4, "abc", -1);
    SluiceResult *res = execute(st);
    cr_assert_str_eq(sluice_result_text(res, 0, 0), "40.5");
    cr_assert_str_eq(sluice_result_text(res, 0, 1), "2024-02-29");
    cr_assert_str_eq(sluice_result_text(res, 0, 2), "abcx");
    cr_assert_str_eq(sluice_result_text(res, 0, 3), "false");
    sluice_result_free(res);
    sluice_bind_null(st, 1);
    res = execute(st);
    cr_assert(sluice_result_is_null(res, 0, 0));
    cr_assert_str_eq(sluice_result_text(res, 0, 3), "true");
    sluice_result_free(res);
    sluice_finalize(st);
}

Test(sluice_api, wrong_indexes_and_unbound_parameters)
{
    SluiceStmt *st = prepare("SELECT ? + $2");
    SluiceError err;
    cr_assert_eq(sluice_bind_int64(st, 0, 1), SLUICE_RANGE);
    cr_assert_eq(sluice_bind_int64(st, 3, 1), SLUICE_RANGE);
    cr_assert_eq(sluice_stmt_error(st, &err), SLUICE_RANGE);
    cr_assert_str_eq(err.message, "parameter index 3 is out of range: the statement has 2");
    cr_assert_eq(sluice_bind_decimal(st, 1, 1, 19), SLUICE_RANGE);
    cr_assert_eq(sluice_reset(st), 0);
    cr_assert_eq(sluice_stmt_error(st, NULL), 0);
    sluice_bind_int64(st, 1, 1);
    SluiceResult *res = NULL;
    cr_assert_eq(sluice_execute(st, &res, &err), SLUICE_BIND);
    cr_assert_null(res);
    cr_assert_str_eq(err.message, "parameter $2 has no value bound");
    cr_assert_eq(err.offset, 11);
    sluice_bind_int64(st, 2, 2);
    res = execute(st);
    cr_assert_str_eq(sluice_result_text(res, 0, 0), "3");
    sluice_result_free(res);
    sluice_clear_bindings(st);
    cr_assert_eq(sluice_execute(st, &res, &err), SLUICE_BIND);
    cr_assert_str_eq(err.message, "parameter $1 has no value bound");
    sluice_finalize(st);
}

Test(sluice_api, a_view_cannot_have_parameters)
{
    SluiceStmt *st = prepare("CREATE VIEW v AS SELECT ? AS x");
    sluice_bind_int64(st, 1, 1);
    SluiceResult *res = NULL;
    SluiceError err;
    cr_assert_eq(sluice_execute(st, &res, &err), SLUICE_BIND);
    cr_assert_str_eq(err.message, "a view cannot have parameters");
    sluice_finalize(st);
}

Test(sluice_api, prepare_refuses_several_statements)
{
    SluiceError err;
    SluiceStmt *st = NULL;
    cr_assert_eq(sluice_prepare(db, "SELECT 1; SELECT 2;", &st, &err), SLUICE_SYNTAX);
    cr_assert_null(st);
    cr_assert_eq(err.offset, 10);
    cr_assert_eq(err.column, 11);
    cr_assert_str_eq(err.message, "only one statement can be prepared; a second begins here");
    cr_assert_eq(sluice_prepare(db, "SELECT 1;;  -- done", &st, &err), 0);
    sluice_finalize(st);
    cr_assert_eq(sluice_prepare(db, "SELEC 1", &st, &err), SLUICE_SYNTAX);
    cr_assert_eq(err.offset, 0);
}

Test(sluice_api, re_execution_with_new_binds)
{
    run(db, "CREATE TABLE t (k INTEGER, v VARCHAR, d DATE)");
    SluiceStmt *ins = prepare("INSERT INTO t VALUES (?, ?, ?)");
    for (int k = 1; k <= 5; k++) {
        char v[16];
        snprintf(v, sizeof v, "v%d", k);
        sluice_bind_int64(ins, 1, k);
        sluice_bind_text(ins, 2, v, -1);
        if (k == 3) {
            sluice_bind_null(ins, 3);
        } else {
            sluice_bind_date(ins, 3, 19000 + k);
        }
        SluiceResult *res = execute(ins);
        cr_assert_eq(sluice_result_changes(res), 1);
        sluice_result_free(res);
        sluice_reset(ins);
    }
    sluice_finalize(ins);
    SluiceStmt *sel = prepare("SELECT v, d FROM t WHERE k >= $1 AND k < $2 ORDER BY k");
    sluice_bind_int64(sel, 1, 2);
    sluice_bind_int64(sel, 2, 4);
    SluiceResult *res = execute(sel);
    cr_assert_eq(sluice_result_row_count(res), 2);
    cr_assert_str_eq(sluice_result_text(res, 0, 0), "v2");
    cr_assert(sluice_result_is_null(res, 1, 1));
    sluice_result_free(res);
    sluice_bind_int64(sel, 2, 100); /* $1 stays 2 */
    res = execute(sel);
    cr_assert_eq(sluice_result_row_count(res), 4);
    int32_t days;
    cr_assert_eq(sluice_result_date(res, 3, 1, &days), SLUICE_OK);
    cr_assert_eq(days, 19005);
    sluice_result_free(res);
    sluice_finalize(sel);
}

Test(sluice_api, typed_accessors_convert_exactly_or_refuse)
{
    SluiceResult *res = NULL;
    SluiceError err;
    cr_assert_eq(sluice_exec(db,
                             "SELECT 'x', 1.50, 2.00, 3.0::DOUBLE, 3.5::DOUBLE, 7, "
                             "12345678901234567890123.0, DATE '2020-01-01'",
                             &res, &err),
                 0, "%s", err.message);
    int64_t i;
    double d;
    int scale;
    int32_t days;
    size_t len;
    cr_assert_eq(sluice_result_int64(res, 0, 0, &i), SLUICE_TYPE);
    cr_assert_eq(sluice_result_double(res, 0, 0, &d), SLUICE_TYPE);
    cr_assert_eq(sluice_result_int64(res, 0, 1, &i), SLUICE_TYPE); /* 1.50 is no int */
    cr_assert_eq(sluice_result_double(res, 0, 1, &d), SLUICE_OK);
    cr_assert_eq(d, 1.5);
    cr_assert_eq(sluice_result_int64(res, 0, 2, &i), SLUICE_OK);
    cr_assert_eq(i, 2);
    cr_assert_eq(sluice_result_int64(res, 0, 3, &i), SLUICE_OK);
    cr_assert_eq(i, 3);
    cr_assert_eq(sluice_result_int64(res, 0, 4, &i), SLUICE_TYPE);
    cr_assert_eq(sluice_result_decimal(res, 0, 4, &i, &scale), SLUICE_TYPE);
    cr_assert_eq(sluice_result_decimal(res, 0, 5, &i, &scale), SLUICE_OK);
    cr_assert(i == 7 && scale == 0);
    cr_assert_eq(sluice_result_decimal(res, 0, 6, &i, &scale), SLUICE_RANGE);
    cr_assert_eq(sluice_result_date(res, 0, 5, &days), SLUICE_TYPE);
    cr_assert_eq(sluice_result_date(res, 0, 7, &days), SLUICE_OK);
    cr_assert_str_eq(sluice_result_string(res, 0, 1, &len), "1.50");
    cr_assert_eq(len, 4);
    cr_assert_eq(sluice_result_int64(res, 1, 0, &i), SLUICE_RANGE);
    cr_assert_eq(sluice_result_int64(res, 0, 8, &i), SLUICE_RANGE);
    sluice_result_free(res);
}

/* ---- streaming ------------------------------------------------------------- */

/* The process's peak resident memory (VmHWM) in bytes. */
static int64_t peak_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kb = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "VmHWM: %lld kB", &kb) == 1) {
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return kb * 1024;
}

Test(sluice_api, stream_of_a_large_result_stays_small)
{
    /* 30M rows of two BIGINTs (480 MB) with the default batch; the
     * tiny-batch build scales down so that the test stays fast. */
    const int64_t n = CM_BATCH_CAP < 1024 ? 30000 : IS_SANITIZED ? 3000000 : 30000000;
    run(db, "SET memory_limit = '32MB'");
    run(db, "SET threads = 2");
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT range AS x, range %% 7 AS m FROM range(%lld)", (long long)n);
    SluiceStream *s = NULL;
    SluiceError err;
    cr_assert_eq(sluice_query_stream(db, sql, &s, &err), 0, "%s", err.message);
    cr_assert_eq(sluice_stream_column_count(s), 2);
    cr_assert_str_eq(sluice_stream_column_name(s, 0), "x");
    cr_assert_eq(sluice_stream_column_type(s, 0), SLUICE_BIGINT);
    int64_t rows = 0, sum = 0, n_chunks = 0;
    for (;;) {
        SluiceResult *chunk = NULL;
        cr_assert_eq(sluice_fetch_chunk(s, &chunk, &err), 0, "%s", err.message);
        if (chunk == NULL) {
            break;
        }
        int64_t k = sluice_result_row_count(chunk);
        cr_assert(k > 0 && k <= CM_BATCH_CAP);
        for (int64_t r = 0; r < k; r++) {
            int64_t x;
            cr_assert_eq(sluice_result_int64(chunk, r, 0, &x), SLUICE_OK);
            cr_assert_eq(x, rows + r, "rows come in order");
            sum += x;
        }
        rows += k;
        n_chunks++;
        sluice_result_free(chunk);
    }
    SluiceResult *after = NULL;
    cr_assert_eq(sluice_fetch_chunk(s, &after, &err), 0);
    cr_assert_null(after);
    sluice_stream_free(s);
    cr_assert_eq(rows, n);
    cr_assert_eq(sum, n * (n - 1) / 2);
    cr_assert_geq(n_chunks, n / CM_BATCH_CAP);
    /* Materialized, the 480 MB of rows would have passed through memory (or
     * the block store's disk); streamed, only a few chunks ever are. */
    int64_t peak = peak_rss();
    cr_assert(IS_SANITIZED || peak < (int64_t)160 << 20, "peak RSS %lld", (long long)peak);
    /* Nor did the rows wait on disk, as a materialized result's do. */
    StBlocksStats bs;
    st_blocks_stats(&bs);
    int64_t spilled, ns;
    sh_spill_totals(&spilled, &ns);
    cr_assert_eq(bs.evictions + bs.disk_bytes + spilled, 0, "%lld %lld %lld",
                 (long long)bs.evictions, (long long)bs.disk_bytes, (long long)spilled);
    if (CM_BATCH_CAP >= 1024 && !IS_SANITIZED) {
        /* the same check sees a materialized result of a tenth of the rows */
        SluiceResult *res = NULL;
        snprintf(sql, sizeof sql, "SELECT range AS x, range %% 7 AS m FROM range(%lld)",
                 (long long)n / 10);
        cr_assert_eq(sluice_exec(db, sql, &res, &err), 0, "%s", err.message);
        st_blocks_stats(&bs);
        cr_assert_gt(bs.evictions, 0);
        sluice_result_free(res);
    }
}

Test(sluice_api, freeing_a_stream_early_stops_its_query)
{
    SluiceStream *s = NULL;
    SluiceError err;
    long long t0 = cm_now_ns();
    cr_assert_eq(sluice_query_stream(db, "SELECT range FROM range(2000000000)", &s, &err), 0, "%s",
                 err.message);
    SluiceResult *chunk = NULL;
    cr_assert_eq(sluice_fetch_chunk(s, &chunk, &err), 0, "%s", err.message);
    int64_t first;
    cr_assert_eq(sluice_result_int64(chunk, 0, 0, &first), SLUICE_OK);
    cr_assert_eq(first, 0);
    sluice_result_free(chunk);
    sluice_stream_free(s);
    cr_assert_lt(cm_now_ns() - t0, 5000000000LL, "the query ran on");
    /* the connection is free again */
    run(db, "SELECT 1");
}

Test(sluice_api, connection_is_busy_while_a_stream_is_open)
{
    SluiceStream *s = NULL;
    SluiceError err;
    cr_assert_eq(sluice_query_stream(db, "SELECT range FROM range(10)", &s, &err), 0);
    SluiceResult *res = NULL;
    cr_assert_eq(sluice_exec(db, "SELECT 1", &res, &err), SLUICE_MISUSE);
    cr_assert_eq(err.code, SLUICE_MISUSE);
    SluiceStream *s2 = NULL;
    cr_assert_eq(sluice_query_stream(db, "SELECT 1", &s2, &err), SLUICE_MISUSE);
    sluice_stream_free(s);
    run(db, "SELECT 1");
}

Test(sluice_api, stream_errors_and_statements_without_a_stream)
{
    SluiceStream *s = NULL;
    SluiceError err;
    cr_assert_eq(sluice_query_stream(db, "SELECT nope FROM range(3)", &s, &err), SLUICE_BIND);
    cr_assert_null(s);
    cr_assert_eq(err.offset, 7);
    /* a runtime error after some rows: the rows, then the error */
    cr_assert_eq(sluice_query_stream(db, "SELECT 10 / (range - 5000) FROM range(10000)", &s, &err),
                 0, "%s", err.message);
    SluiceResult *chunk = NULL;
    int rc;
    while ((rc = sluice_fetch_chunk(s, &chunk, &err)) == 0 && chunk != NULL) {
        sluice_result_free(chunk);
    }
    cr_assert_eq(rc, SLUICE_RUNTIME, "%d %s", rc, err.message);
    sluice_stream_free(s);
    run(db, "CREATE TABLE u (a INTEGER)");
    cr_assert_eq(sluice_query_stream(db, "SHOW TABLES", &s, &err), 0, "%s", err.message);
    cr_assert_eq(sluice_stream_column_count(s), 1);
    cr_assert_eq(sluice_fetch_chunk(s, &chunk, &err), 0);
    cr_assert_not_null(chunk);
    cr_assert_str_eq(sluice_result_text(chunk, 0, 0), "u");
    sluice_result_free(chunk);
    cr_assert_eq(sluice_fetch_chunk(s, &chunk, &err), 0);
    cr_assert_null(chunk);
    sluice_stream_free(s);
}

Test(sluice_api, prepared_statement_streams_with_its_binds)
{
    SluiceStmt *st = prepare("SELECT range * $1 FROM range($2)");
    sluice_bind_int64(st, 1, 3);
    sluice_bind_int64(st, 2, 5000);
    SluiceStream *s = NULL;
    SluiceError err;
    cr_assert_eq(sluice_execute_stream(st, &s, &err), 0, "%s", err.message);
    cr_assert_eq(sluice_bind_int64(st, 1, 4), SLUICE_MISUSE);
    int64_t rows = 0, last = -1;
    SluiceResult *chunk = NULL;
    while (sluice_fetch_chunk(s, &chunk, &err) == 0 && chunk != NULL) {
        rows += sluice_result_row_count(chunk);
        sluice_result_int64(chunk, sluice_result_row_count(chunk) - 1, 0, &last);
        sluice_result_free(chunk);
    }
    sluice_stream_free(s);
    cr_assert_eq(rows, 5000);
    cr_assert_eq(last, 4999 * 3);
    sluice_finalize(st);
}

/* ---- interrupt and threads ------------------------------------------------- */

static void *interrupt_later(void *arg)
{
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    sluice_interrupt(arg);
    return NULL;
}

Test(sluice_api, interrupt_stops_a_stream_not_being_read)
{
    SluiceStream *s = NULL;
    SluiceError err;
    cr_assert_eq(sluice_query_stream(db, "SELECT range FROM range(2000000000)", &s, &err), 0);
    CmThread t;
    cr_assert(cm_thread_start(&t, interrupt_later, db));
    cm_thread_join(&t); /* the query waits on the full queue meanwhile */
    SluiceResult *chunk = NULL;
    int rc;
    int64_t rows = 0;
    while ((rc = sluice_fetch_chunk(s, &chunk, &err)) == 0 && chunk != NULL) {
        rows += sluice_result_row_count(chunk);
        sluice_result_free(chunk);
    }
    cr_assert_eq(rc, SLUICE_CANCELLED, "%d %s", rc, err.message);
    cr_assert_str_eq(err.message, "interrupted");
    cr_assert_lt(rows, 100 * CM_BATCH_CAP);
    sluice_stream_free(s);
    run(db, "SELECT 1");
}

Test(sluice_api, interrupt_stops_a_running_statement)
{
    CmThread t;
    cr_assert(cm_thread_start(&t, interrupt_later, db));
    SluiceResult *res = NULL;
    SluiceError err;
    int rc =
        sluice_exec(db, "SELECT count(*) FROM range(4000000000) WHERE range % 3 = 7", &res, &err);
    cm_thread_join(&t);
    cr_assert_eq(rc, SLUICE_CANCELLED, "%d %s", rc, err.message);
    cr_assert_null(res);
}

typedef struct Writer {
    SluiceDb *conn;
    int first, n;
    int rc;
} Writer;

/* Inserts rows first..first+n-1 one by one, and counts them back as it goes. */
static void *write_rows(void *arg)
{
    Writer *w = arg;
    SluiceError err;
    SluiceStmt *ins = NULL, *cnt = NULL;
    w->rc = sluice_prepare(w->conn, "INSERT INTO shared VALUES (?)", &ins, &err);
    if (w->rc == 0) {
        w->rc = sluice_prepare(w->conn, "SELECT count(*) FROM shared WHERE k >= ?", &cnt, &err);
    }
    for (int i = 0; i < w->n && w->rc == 0; i++) {
        SluiceResult *res = NULL;
        sluice_bind_int64(ins, 1, w->first + i);
        w->rc = sluice_execute(ins, &res, &err);
        sluice_result_free(res);
        res = NULL;
        sluice_bind_int64(cnt, 1, w->first);
        if (w->rc == 0 && (w->rc = sluice_execute(cnt, &res, &err)) == 0) {
            int64_t k = -1;
            sluice_result_int64(res, 0, 0, &k);
            w->rc = k >= i + 1 ? 0 : 999; /* its own rows are all seen */
        }
        sluice_result_free(res);
    }
    sluice_finalize(ins);
    sluice_finalize(cnt);
    return NULL;
}

Test(sluice_api, two_connections_from_two_threads)
{
    run(db, "CREATE TABLE shared (k INTEGER)");
    SluiceError err;
    SluiceDb *second = sluice_connect(db, &err);
    cr_assert_not_null(second, "%s", err.message);
    run(second, "SET threads = 1"); /* its own settings */
    Writer a = {.conn = db, .first = 0, .n = 200}, b = {.conn = second, .first = 1000, .n = 200};
    CmThread ta, tb;
    cr_assert(cm_thread_start(&ta, write_rows, &a));
    cr_assert(cm_thread_start(&tb, write_rows, &b));
    cm_thread_join(&ta);
    cm_thread_join(&tb);
    cr_assert_eq(a.rc, 0);
    cr_assert_eq(b.rc, 0);
    /* the first connection goes first: the database stays with the second */
    sluice_close(db);
    db = NULL;
    SluiceResult *res = NULL;
    cr_assert_eq(sluice_exec(second, "SELECT count(*), sum(k) FROM shared", &res, &err), 0);
    cr_assert_str_eq(sluice_result_text(res, 0, 0), "400");
    cr_assert_str_eq(sluice_result_text(res, 0, 1), "239800");
    sluice_result_free(res);
    cr_assert_eq(sluice_table_count(second), 1);
    sluice_close(second);
}

/* A transaction is its connection's: sluice_in_transaction tells, the other
 * connections read the committed state but may not write or BEGIN until it
 * ends, and closing the connection rolls it back. */
Test(sluice_api, transaction_belongs_to_its_connection)
{
    run(db, "CREATE TABLE tx (k INTEGER)");
    SluiceError err;
    SluiceDb *second = sluice_connect(db, &err);
    cr_assert_not_null(second, "%s", err.message);
    cr_expect_eq(sluice_in_transaction(db), 0);
    run(db, "BEGIN; INSERT INTO tx VALUES (1)");
    cr_expect_eq(sluice_in_transaction(db), 1);
    cr_expect_eq(sluice_in_transaction(second), 0);
    SluiceResult *res = NULL;
    cr_expect_neq(sluice_exec(second, "INSERT INTO tx VALUES (2)", &res, &err), 0);
    cr_expect(strstr(err.message, "another connection") != NULL, "%s", err.message);
    cr_expect_neq(sluice_exec(second, "BEGIN", &res, &err), 0);
    cr_assert_eq(sluice_exec(second, "SELECT count(*) FROM tx", &res, &err), 0, "%s", err.message);
    cr_expect_str_eq(sluice_result_text(res, 0, 0), "0"); /* not committed */
    sluice_result_free(res);
    run(db, "ROLLBACK");
    run(second, "BEGIN; INSERT INTO tx VALUES (2), (3)");
    sluice_close(second); /* closing rolls its transaction back */
    res = NULL;
    cr_assert_eq(sluice_exec(db, "SELECT count(*) FROM tx", &res, &err), 0, "%s", err.message);
    cr_expect_str_eq(sluice_result_text(res, 0, 0), "0");
    sluice_result_free(res);
    run(db, "INSERT INTO tx VALUES (4)");
    /* the first connection's session holds the catalog and outlives it: its
     * transaction still ends when it closes */
    second = sluice_connect(db, &err);
    cr_assert_not_null(second, "%s", err.message);
    run(db, "BEGIN; INSERT INTO tx VALUES (5)");
    sluice_close(db);
    db = second;
    run(db, "INSERT INTO tx VALUES (6)");
    cr_assert_eq(sluice_exec(db, "SELECT sum(k) FROM tx", &res, &err), 0, "%s", err.message);
    cr_expect_str_eq(sluice_result_text(res, 0, 0), "10");
    sluice_result_free(res);
}

/* The rows of one statement's result as text: cells joined by ',', rows by ';'
 * ("error: ..." when it fails). */
static void answer(SluiceDb *on, const char *sql, char *out, size_t cap)
{
    SluiceError err;
    SluiceResult *res = NULL;
    out[0] = '\0';
    if (sluice_exec(on, sql, &res, &err) != 0) {
        snprintf(out, cap, "error: %s", err.message);
        return;
    }
    size_t used = 0;
    for (int64_t r = 0; res != NULL && r < sluice_result_row_count(res); r++) {
        for (int c = 0; c < sluice_result_column_count(res); c++) {
            const char *cell = sluice_result_text(res, r, c);
            used += (size_t)snprintf(out + used, cap - used, "%s%s",
                                     c > 0   ? ","
                                     : r > 0 ? ";"
                                             : "",
                                     cell != NULL ? cell : "NULL");
            used = used < cap ? used : cap - 1;
        }
    }
    sluice_result_free(res);
}

#define EXPECT_ANSWER(on, sql, want)                                                               \
    do {                                                                                           \
        char got_[512];                                                                            \
        answer((on), (sql), got_, sizeof got_);                                                    \
        cr_expect_str_eq(got_, (want), "%s", (sql));                                               \
    } while (0)

/* Snapshot isolation between the connections of one database: while `a` has
 * a transaction open, `b` reads the state last committed, whatever kind of
 * write `a` made (appends into a chunk that was part full, UPDATEs in place,
 * one replacing a chunk twice, a DELETE that builds a new table, DDL), and
 * CACHE TABLE rows computed on either side are not served to the other. */
static void check_isolation(SluiceDb *a)
{
    SluiceError err;
    SluiceDb *b = sluice_connect(a, &err);
    cr_assert_not_null(b, "%s", err.message);
    /* 5000 rows: two full chunks and one of 904 (or any split of a smaller build's) */
    run(a, "CREATE TABLE t (k INTEGER PRIMARY KEY, v VARCHAR);"
           "INSERT INTO t SELECT i, 'value-' || CAST(i AS VARCHAR) FROM range(1, 5001) r(i);"
           "CREATE TABLE gone (x INTEGER); INSERT INTO gone VALUES (7);"
           "CREATE VIEW vw AS SELECT count(*) AS n FROM t");
    run(b, "CACHE TABLE c AS SELECT count(*) AS n, sum(k) AS s FROM t");
    const char *committed = "SELECT count(*), sum(k), count(*) FILTER (WHERE v LIKE 'value-%'), "
                            "min(v), max(k) FROM t";
    const char *was = "5000,12502500,5000,value-1,5000";
    EXPECT_ANSWER(b, committed, was);
    int n_tables = sluice_table_count(b);

    run(a, "BEGIN;"
           "INSERT INTO t SELECT i, 'new' FROM range(5001, 6001) r(i);"
           "UPDATE t SET v = 'changed' WHERE k <= 10;"
           "UPDATE t SET v = 'again' WHERE k <= 5;"
           "UPDATE t SET v = 'tail' WHERE k > 4990;"
           "DROP TABLE gone;"
           "CREATE TABLE newt (y INTEGER);"
           "ALTER TABLE t RENAME COLUMN v TO w;"
           "CREATE OR REPLACE VIEW vw AS SELECT 42 AS n");
    /* a's own view */
    EXPECT_ANSWER(a, "SELECT count(*), sum(k), count(*) FILTER (WHERE w = 'tail') FROM t",
                  "6000,18003000,1010");
    EXPECT_ANSWER(a, "SELECT n, s FROM c", "6000,18003000");
    EXPECT_ANSWER(a, "SELECT n FROM vw", "42");
    /* b's: the committed state, even of the cache a has just refilled */
    EXPECT_ANSWER(b, committed, was);
    EXPECT_ANSWER(b, "SELECT n, s FROM c", "5000,12502500");
    EXPECT_ANSWER(b, "SELECT n FROM vw", "5000");
    EXPECT_ANSWER(b, "SELECT x FROM gone", "7");
    EXPECT_ANSWER(b, "SELECT v FROM t WHERE k IN (3, 4995) ORDER BY k", "value-3;value-4995");
    EXPECT_ANSWER(b, "SELECT count(*) FROM newt", "error: unknown table 'newt'");
    /* the listing too: a dropped `gone` and made `newt` */
    cr_expect_eq(sluice_table_count(b), n_tables);
    cr_expect_str_eq(sluice_table_name(b, n_tables - 1), "vw");
    cr_expect_not_null(sluice_table_sql(b, "gone"));
    cr_expect_null(sluice_table_sql(b, "newt"));
    cr_expect_null(sluice_table_sql(a, "gone"));
    cr_expect_not_null(sluice_table_sql(a, "newt"));
    EXPECT_ANSWER(a, "SELECT n, s FROM c", "6000,18003000");
    /* a DELETE builds a new table: b still reads the old one */
    run(a, "DELETE FROM t WHERE k % 2 = 0");
    EXPECT_ANSWER(b, committed, was);
    EXPECT_ANSWER(a, "SELECT count(*) FROM t", "3000");
    /* b may not write */
    SluiceResult *res = NULL;
    cr_expect_neq(sluice_exec(b, "INSERT INTO t VALUES (0, 'x')", &res, &err), 0);
    cr_expect_neq(sluice_exec(b, "ANALYZE t", &res, &err), 0);
    cr_expect_neq(sluice_exec(b, "BEGIN", &res, &err), 0);
    run(a, "ROLLBACK");
    EXPECT_ANSWER(a, committed, was);
    EXPECT_ANSWER(b, committed, was);
    EXPECT_ANSWER(a, "SELECT n, s FROM c", "5000,12502500");

    /* committed writes become b's */
    run(a, "BEGIN; INSERT INTO t VALUES (6000, 'last'); UPDATE t SET v = 'one' WHERE k = 1");
    EXPECT_ANSWER(b, "SELECT count(*), min(v) FROM t", "5000,value-1");
    run(a, "COMMIT");
    EXPECT_ANSWER(b, "SELECT count(*), min(v) FROM t", "5001,last");
    EXPECT_ANSWER(b, "SELECT n, s FROM c", "5001,12508500");
    sluice_close(b);
}

Test(sluice_api, readers_see_the_committed_state)
{
    check_isolation(db);
}

/* Runs body on a new directory database, removed after. */
static void on_directory(void (*body)(SluiceDb *))
{
    char dir[] = "/tmp/sluice_iso_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/db", dir);
    SluiceError err;
    SluiceDb *d = sluice_open(path, &err);
    cr_assert_not_null(d, "%s", err.message);
    body(d);
    sluice_close(d);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(sluice_api, readers_see_the_committed_state_of_a_directory)
{
    on_directory(check_isolation);
}

/* Random writes in transactions, committed or rolled back at random: after
 * each write the other connection's checksum of every table is the one taken
 * at the last commit, and after COMMIT it is the writer's.  The writes take
 * every path: appends, UPDATEs in place, of a PRIMARY KEY (its index
 * rebuilt, in a transaction), DELETE, ALTER ADD COLUMN. */
static void random_writes(SluiceDb *a)
{
    SluiceError err;
    SluiceDb *b = sluice_connect(a, &err);
    cr_assert_not_null(b, "%s", err.message);
    run(a, "CREATE TABLE r (k INTEGER, g INTEGER, s VARCHAR);"
           "INSERT INTO r SELECT i, i % 7, 'row-' || CAST(i AS VARCHAR) FROM range(0, 3000) t(i);"
           "CREATE TABLE p (id INTEGER PRIMARY KEY, v INTEGER);"
           "INSERT INTO p SELECT i, i * 2 FROM range(0, 2500) t(i)");
    const char *sum = "SELECT count(*), sum(k), sum(g), sum(length(s)), min(s), max(s), "
                      "(SELECT count(*) || '/' || sum(id) || '/' || sum(v) FROM p) FROM r";
    char committed[512], got[512];
    answer(a, sum, committed, sizeof committed);
    unsigned seed = 20261207;
    int n_added = 0, next_id = 10000000;
    for (int txn = 0; txn < 12; txn++) {
        run(a, "BEGIN");
        for (int step = 0; step < 6; step++) {
            seed = seed * 1103515245u + 12345u;
            int lo = (int)(seed >> 8) % 6000, what = (int)(seed >> 4) % 8;
            char sql[256];
            if (what == 0) {
                snprintf(sql, sizeof sql,
                         "INSERT INTO r (k, g, s) SELECT i, i %% 5, 'new-' || CAST(i AS VARCHAR) "
                         "FROM range(%d, %d) t(i)",
                         lo, lo + 1 + lo % 2500);
            } else if (what == 1) {
                snprintf(sql, sizeof sql,
                         "UPDATE r SET g = g + 1, s = s || 'u' WHERE k BETWEEN %d AND %d", lo,
                         lo + 40);
            } else if (what == 2) {
                snprintf(sql, sizeof sql, "UPDATE r SET s = 'every' WHERE k %% %d = 0",
                         2 + lo % 50);
            } else if (what == 3) {
                snprintf(sql, sizeof sql, "DELETE FROM r WHERE k BETWEEN %d AND %d", lo, lo + 300);
            } else if (what == 4) {
                snprintf(sql, sizeof sql, "INSERT INTO r (k, g, s) VALUES (%d, 1, NULL)", lo);
            } else if (what == 5) {
                snprintf(sql, sizeof sql, "ALTER TABLE r ADD COLUMN x%d INTEGER DEFAULT %d",
                         n_added++, lo);
            } else if (what == 6) {
                snprintf(sql, sizeof sql, "INSERT INTO p SELECT i, %d FROM range(%d, %d) t(i)", lo,
                         next_id, next_id + 1 + lo % 3000);
                next_id += 3001;
            } else {
                snprintf(sql, sizeof sql, "UPDATE p SET id = id + 1, v = v - 1 WHERE id >= %d", lo);
            }
            run(a, sql);
            answer(b, sum, got, sizeof got);
            cr_expect_str_eq(got, committed, "after %s", sql);
        }
        seed = seed * 1103515245u + 12345u;
        run(a, (seed >> 8) % 2 ? "COMMIT" : "ROLLBACK");
        answer(a, sum, committed, sizeof committed);
        answer(b, sum, got, sizeof got);
        cr_expect_str_eq(got, committed, "after transaction %d", txn);
    }
    sluice_close(b);
}

Test(sluice_api, readers_see_the_committed_state_under_random_writes)
{
    random_writes(db);
}

Test(sluice_api, readers_see_the_committed_state_of_a_directory_under_random_writes)
{
    on_directory(random_writes);
}
