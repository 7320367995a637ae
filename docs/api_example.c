/*
 * api_example.c - the embedding API in one program: open a database, prepare
 * statements with parameters, bind typed values, read typed results, stream a
 * large result chunk by chunk, and share the database with a second
 * connection.  Build it against the installed library:
 *
 *   cc api_example.c $(pkg-config --cflags --libs sluice) -o api_example
 *
 * CI builds and runs it that way (tests/api/example_test.sh) and checks its
 * output against tests/api/example.expected.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <sluice.h>

/* Prints the error and exits when rc is not SLUICE_OK. */
static void check(int rc, const SluiceError *err, const char *what)
{
    if (rc != SLUICE_OK) {
        fprintf(stderr, "%s: error %d: %s (at byte %" PRId64 ")\n", what, rc, err->message,
                err->offset);
        exit(1);
    }
}

static void insert_rows(SluiceDb *db)
{
    SluiceError err;
    SluiceStmt *ins;
    check(sluice_exec(db,
                      "CREATE TABLE sales (id BIGINT, item VARCHAR, price DECIMAL(10,2), "
                      "sold DATE)",
                      NULL, &err),
          &err, "create");
    check(sluice_prepare(db, "INSERT INTO sales VALUES ($1, $2, $3, $4)", &ins, &err), &err,
          "prepare insert");
    const char *items[] = {"apple", "pear", "plum"};
    for (int i = 0; i < 3; i++) {
        sluice_bind_int64(ins, 1, i + 1);
        sluice_bind_text(ins, 2, items[i], -1);
        sluice_bind_decimal(ins, 3, 125 * (i + 1), 2); /* 1.25, 2.50, 3.75 */
        if (i == 2) {
            sluice_bind_null(ins, 4);
        } else {
            sluice_bind_date(ins, 4, 19723 + i); /* 2024-01-01 + i */
        }
        SluiceResult *res;
        check(sluice_execute(ins, &res, &err), &err, "insert");
        sluice_result_free(res);
        sluice_reset(ins);
    }
    sluice_finalize(ins);
}

static void query_rows(SluiceDb *db)
{
    SluiceError err;
    SluiceStmt *sel;
    check(sluice_prepare(db, "SELECT item, price, sold FROM sales WHERE price >= ? ORDER BY id",
                         &sel, &err),
          &err, "prepare select");
    sluice_bind_double(sel, 1, 2.0);
    SluiceResult *res;
    check(sluice_execute(sel, &res, &err), &err, "select");
    for (int64_t row = 0; row < sluice_result_row_count(res); row++) {
        size_t len;
        const char *item = sluice_result_string(res, row, 0, &len);
        int64_t cents;
        int scale;
        sluice_result_decimal(res, row, 1, &cents, &scale);
        int32_t days;
        int rc = sluice_result_date(res, row, 2, &days);
        printf("%s %" PRId64 "e-%d sold=%s\n", item, cents, scale,
               rc == SLUICE_NULL ? "NULL" : sluice_result_text(res, row, 2));
    }
    sluice_result_free(res);
    /* An unbound parameter is an error that names it. */
    sluice_clear_bindings(sel);
    int rc = sluice_execute(sel, &res, &err);
    printf("unbound: code %d, %s, at byte %" PRId64 "\n", rc, err.message, err.offset);
    sluice_finalize(sel);
}

static void stream_rows(SluiceDb *db)
{
    SluiceError err;
    SluiceStream *s;
    check(sluice_query_stream(db, "SELECT range * 2 AS twice FROM range(1000000)", &s, &err), &err,
          "stream");
    int64_t rows = 0, sum = 0;
    SluiceResult *chunk;
    while (sluice_fetch_chunk(s, &chunk, &err) == SLUICE_OK && chunk != NULL) {
        for (int64_t row = 0; row < sluice_result_row_count(chunk); row++) {
            int64_t v;
            sluice_result_int64(chunk, row, 0, &v);
            sum += v;
        }
        rows += sluice_result_row_count(chunk);
        sluice_result_free(chunk);
    }
    check(err.code, &err, "fetch");
    printf("streamed %s: %" PRId64 " rows, sum %" PRId64 "\n", sluice_stream_column_name(s, 0),
           rows, sum);
    sluice_stream_free(s);
}

int main(void)
{
    SluiceError err;
    SluiceDb *db = sluice_open(NULL, &err);
    if (db == NULL) {
        fprintf(stderr, "open: %s\n", err.message);
        return 1;
    }
    printf("sluice %s\n", sluice_version());
    insert_rows(db);
    query_rows(db);
    stream_rows(db);
    /* A second connection sees the same tables (one connection per thread). */
    SluiceDb *other = sluice_connect(db, &err);
    SluiceResult *res;
    check(sluice_exec(other, "SELECT count(*) FROM sales", &res, &err), &err, "count");
    printf("second connection counts %s rows\n", sluice_result_text(res, 0, 0));
    sluice_result_free(res);
    /* It reads what was last committed: another connection's open transaction
     * is its own until COMMIT. */
    check(sluice_exec(db, "BEGIN; DELETE FROM sales WHERE id % 2 = 0", NULL, &err), &err, "begin");
    check(sluice_exec(other, "SELECT count(*) FROM sales", &res, &err), &err, "count");
    printf("during the transaction: %s rows\n", sluice_result_text(res, 0, 0));
    sluice_result_free(res);
    check(sluice_exec(db, "COMMIT", NULL, &err), &err, "commit");
    check(sluice_exec(other, "SELECT count(*) FROM sales", &res, &err), &err, "count");
    printf("after COMMIT: %s rows\n", sluice_result_text(res, 0, 0));
    sluice_result_free(res);
    sluice_close(other);
    sluice_close(db);
    return 0;
}
