/*
 * result.h - runs one statement on SQLite or on Sluice and turns the answer
 * into a normalized multiset of rows that the two engines can be compared on.
 *
 * A row is its cells joined by TABs.  Normalization (KNOWN_DIFFS.md): NULL is
 * "NULL"; integers are their decimal text; Sluice BOOLEAN true/false becomes
 * 1/0 (SQLite has no booleans); doubles are "%.15g" and marked so that cells
 * compare with a relative tolerance of 1e-9; strings are their text with TAB,
 * newline and backslash escaped.  Rows are sorted with strcmp, so comparing
 * two results is comparing multisets.  A DfResult owns all its memory; the
 * functions are not thread-safe and never print.
 */
#pragma once

#include "api/sluice.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum DfStatus {
    DF_OK,          /* rows were produced */
    DF_ERROR,       /* the engine reported an error (message holds it) */
    DF_INTERRUPTED, /* SQLite ran past the step budget; the query is skipped */
} DfStatus;

typedef struct DfResult {
    DfStatus status;   /* how the statement ended */
    char message[256]; /* the error message when status != DF_OK */
    int n_cols;        /* output columns */
    size_t n_rows;     /* rows in `rows` */
    size_t cap;        /* rows allocated */
    char **rows;       /* owned; each row owned: normalized cells joined by '\t' */
} DfResult;

/* Runs `sql` on SQLite.  Gives up with DF_INTERRUPTED after about
 * `step_budget` thousand virtual-machine steps. */
void df_run_sqlite(sqlite3 *db, const char *sql, long step_budget, DfResult *res);
/* Runs the first statement of `sql` on Sluice. */
void df_run_sluice(SluiceDb *db, const char *sql, DfResult *res);
/* Sorts the rows (strcmp order). */
void df_result_sort(DfResult *res);
/* True when two sorted results hold the same rows, doubles within 1e-9
 * relative.  On a difference *diff_row is the first differing row index. */
bool df_result_equal(const DfResult *a, const DfResult *b, size_t *diff_row);
/* Frees the rows and empties the result for reuse. */
void df_result_fini(DfResult *res);
