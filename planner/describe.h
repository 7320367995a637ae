/*
 * describe.h - the rows of SHOW TABLES and DESCRIBE (DuckDB's shapes).
 *
 *   SHOW TABLES      one column `name`: every table and view, sorted by name.
 *   DESCRIBE x       one row per output column of x (a table, a view or a query):
 *                    column_name, column_type, null ('YES'/'NO'), key ('PRI'/'UNI'
 *                    or NULL), default (its text or NULL), extra (NULL).
 *
 * The session binds the query (`SELECT * FROM t` for a name) and hands over
 * its output names and types; for a table, its columns add NOT NULL, keys and
 * defaults.
 */
#pragma once

#include "common/err.h"
#include "executor/result.h"
#include "storage/catalog.h"

#define PL_DESCRIBE_COLS 6
extern const char *const pl_describe_names[PL_DESCRIBE_COLS];

/* Owned rows (ex_result_free); NULL with err. */
ExResult *pl_show_tables(StCatalog *cat, CmErr *err);
/* The text of column col's default as DESCRIBE and information_schema.columns
 * show it ('it''s' for a string, NULL for DEFAULT NULL): owned (cm_free), or
 * NULL when the column has no default or (with err) on OOM. */
char *pl_default_text(const StColumn *col, CmErr *err);
/* Owned rows for n output columns; `t` is the table they are (or NULL). */
ExResult *pl_describe(int n, const char *const *names, const CmType *types, const StTable *t,
                      CmErr *err);
