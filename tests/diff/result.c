/*
 * result.c - runs a query on SQLite (linked as a library) or Sluice (the
 * public API) and normalizes the answer into sorted rows of text cells.
 *
 * A double cell is written "~" followed by "%.15g" of the value (-0 as 0):
 * the mark tells the comparison to parse the cell and allow a relative error
 * of 1e-9, and 15 digits make equal computations sort equally.  A DECIMAL
 * is one too, but a DECIMAL(p,0) (an integer: a sum of integers) is exact
 * text.  Every other cell must match exactly.
 */
#include "result.h"
#include "gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOUBLE_TOLERANCE 1e-9

static void push_row(DfResult *res, DfBuf *row)
{
    if (res->n_rows == res->cap) {
        res->cap = res->cap > 0 ? res->cap * 2 : 64;
        char **rows = realloc(res->rows, res->cap * sizeof rows[0]);
        if (rows == NULL) {
            fputs("diff_runner: out of memory\n", stderr);
            exit(2);
        }
        res->rows = rows;
    }
    /* Hand the buffer's memory to the result; the buffer starts over. */
    res->rows[res->n_rows++] = row->data != NULL ? row->data : calloc(1, 1);
    row->data = NULL;
    row->len = 0;
    row->cap = 0;
}

static void put_text_cell(DfBuf *row, const char *text)
{
    for (const char *p = text; *p != '\0'; p++) {
        char c[3] = {*p, '\0', '\0'};
        if (*p == '\t' || *p == '\n' || *p == '\\') {
            c[0] = '\\';
            c[1] = *p == '\t' ? 't' : *p == '\n' ? 'n' : '\\';
        }
        df_buf_puts(row, c);
    }
}

static void put_double_cell(DfBuf *row, double v)
{
    df_buf_printf(row, "~%.15g", v == 0.0 ? 0.0 : v);
}

static void begin_cell(DfBuf *row, int col)
{
    if (col > 0) {
        df_buf_puts(row, "\t");
    }
}

static void set_error(DfResult *res, DfStatus status, const char *message)
{
    res->status = status;
    snprintf(res->message, sizeof res->message, "%s", message != NULL ? message : "?");
}

/* ------------------------------------------------------------------------ */
/* SQLite                                                                    */
/* ------------------------------------------------------------------------ */

/* Counts progress callbacks (one per 1000 steps) and interrupts past the budget. */
typedef struct StepBudget {
    long n_calls; /* callbacks so far */
    long limit;   /* callbacks allowed */
} StepBudget;

static int on_progress(void *arg)
{
    StepBudget *budget = arg;
    return ++budget->n_calls > budget->limit;
}

static void put_sqlite_cell(sqlite3_stmt *stmt, int col, DfBuf *row)
{
    begin_cell(row, col);
    switch (sqlite3_column_type(stmt, col)) {
    case SQLITE_NULL:
        df_buf_puts(row, "NULL");
        break;
    case SQLITE_INTEGER:
        df_buf_printf(row, "%lld", (long long)sqlite3_column_int64(stmt, col));
        break;
    case SQLITE_FLOAT:
        put_double_cell(row, sqlite3_column_double(stmt, col));
        break;
    default:
        put_text_cell(row, (const char *)sqlite3_column_text(stmt, col));
        break;
    }
}

void df_run_sqlite(sqlite3 *db, const char *sql, long step_budget, DfResult *res)
{
    StepBudget budget = {0, step_budget};
    sqlite3_stmt *stmt = NULL;
    DfBuf row = {0};
    res->status = DF_OK;
    sqlite3_progress_handler(db, 1000, on_progress, &budget);
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK) {
        set_error(res, DF_ERROR, sqlite3_errmsg(db));
        goto done;
    }
    res->n_cols = sqlite3_column_count(stmt);
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        for (int col = 0; col < res->n_cols; col++) {
            put_sqlite_cell(stmt, col, &row);
        }
        push_row(res, &row);
    }
    if (rc == SQLITE_INTERRUPT) {
        set_error(res, DF_INTERRUPTED, "step budget exhausted");
    } else if (rc != SQLITE_DONE) {
        set_error(res, DF_ERROR, sqlite3_errmsg(db));
    }
done:
    sqlite3_finalize(stmt);
    sqlite3_progress_handler(db, 0, NULL, NULL);
    df_buf_fini(&row);
}

/* ------------------------------------------------------------------------ */
/* Sluice                                                                    */
/* ------------------------------------------------------------------------ */

static void put_sluice_cell(const SluiceResult *sr, int64_t row_idx, int col, DfBuf *row)
{
    begin_cell(row, col);
    const char *text = sluice_result_text(sr, row_idx, col);
    if (sluice_result_is_null(sr, row_idx, col) || text == NULL) {
        df_buf_puts(row, "NULL");
        return;
    }
    switch (sluice_result_column_type(sr, col)) {
    case SLUICE_BOOLEAN:
        df_buf_puts(row, strcmp(text, "true") == 0 ? "1" : strcmp(text, "false") == 0 ? "0" : text);
        break;
    case SLUICE_DECIMAL: {
        /* DECIMAL(p,0) is an integer (sum of integers is DECIMAL(38,0),
         * DuckDB's HUGEINT): exact, as SQLite's integers */
        int precision, scale;
        if (sluice_result_column_decimal(sr, col, &precision, &scale) && scale == 0) {
            put_text_cell(row, text);
            break;
        }
        put_double_cell(row, strtod(text, NULL));
        break;
    }
    case SLUICE_DOUBLE:
        put_double_cell(row, strtod(text, NULL));
        break;
    default:
        put_text_cell(row, text);
        break;
    }
}

void df_run_sluice(SluiceDb *db, const char *sql, DfResult *res)
{
    SluiceResult *sr = NULL;
    SluiceError err;
    size_t off = 0;
    DfBuf row = {0};
    res->status = DF_OK;
    memset(&err, 0, sizeof err);
    if (sluice_exec_next(db, sql, strlen(sql), &off, &sr, &err) != 0) {
        set_error(res, DF_ERROR, err.message);
        return;
    }
    if (sr == NULL) {
        set_error(res, DF_ERROR, "no statement");
        return;
    }
    res->n_cols = sluice_result_column_count(sr);
    int64_t n_rows = sluice_result_row_count(sr);
    for (int64_t row_idx = 0; row_idx < n_rows; row_idx++) {
        for (int col = 0; col < res->n_cols; col++) {
            put_sluice_cell(sr, row_idx, col, &row);
        }
        push_row(res, &row);
    }
    sluice_result_free(sr);
    df_buf_fini(&row);
}

/* ------------------------------------------------------------------------ */
/* Comparison                                                                */
/* ------------------------------------------------------------------------ */

static int compare_rows(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void df_result_sort(DfResult *res)
{
    if (res->n_rows > 1) {
        qsort(res->rows, res->n_rows, sizeof res->rows[0], compare_rows);
    }
}

/* Parses a number cell (with or without the double mark); false if not one. */
static bool parse_number(const char *cell, size_t len, double *v)
{
    char text[64];
    if (len == 0 || len >= sizeof text) {
        return false;
    }
    memcpy(text, cell, len);
    text[len] = '\0';
    const char *start = text[0] == '~' ? text + 1 : text;
    char *end = NULL;
    *v = strtod(start, &end);
    return end != start && *end == '\0';
}

static bool cells_equal(const char *a, size_t a_len, const char *b, size_t b_len)
{
    if (a_len == b_len && memcmp(a, b, a_len) == 0) {
        return true;
    }
    double x, y;
    if ((a[0] != '~' && b[0] != '~') || !parse_number(a, a_len, &x) ||
        !parse_number(b, b_len, &y)) {
        return false;
    }
    double scale = fmax(fabs(x), fabs(y));
    return fabs(x - y) <= DOUBLE_TOLERANCE * (scale > 1.0 ? scale : 1.0);
}

static bool rows_equal(const char *a, const char *b)
{
    for (;;) {
        size_t a_len = strcspn(a, "\t");
        size_t b_len = strcspn(b, "\t");
        if (!cells_equal(a, a_len, b, b_len)) {
            return false;
        }
        if (a[a_len] == '\0' || b[b_len] == '\0') {
            return a[a_len] == b[b_len];
        }
        a += a_len + 1;
        b += b_len + 1;
    }
}

bool df_result_equal(const DfResult *a, const DfResult *b, size_t *diff_row)
{
    size_t n = a->n_rows < b->n_rows ? a->n_rows : b->n_rows;
    for (size_t row_idx = 0; row_idx < n; row_idx++) {
        if (!rows_equal(a->rows[row_idx], b->rows[row_idx])) {
            *diff_row = row_idx;
            return false;
        }
    }
    *diff_row = n;
    return a->n_rows == b->n_rows && a->n_cols == b->n_cols;
}

void df_result_fini(DfResult *res)
{
    for (size_t row_idx = 0; row_idx < res->n_rows; row_idx++) {
        free(res->rows[row_idx]);
    }
    free(res->rows);
    memset(res, 0, sizeof *res);
}
