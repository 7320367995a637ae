/*
 * catalog.h - the names a database knows: tables and views, in creation order.
 *
 * Names are compared case-sensitively after the parser's folding (unquoted
 * identifiers arrive lower-cased).  The catalog owns its tables and the text of
 * each CREATE statement (for .schema and for re-binding views).  Written only
 * between statements; read by the planner of the running statement.
 *
 * Transactions: st_catalog_begin copies the entries (their names and texts;
 * the tables are shared, and marked: st_table_mark) without copying rows.
 * While one is open, a dropped or replaced table that BEGIN saw is not freed
 * (st_table_release), so st_catalog_rollback can put the saved entries back
 * and restore each of their tables (st_table_restore), freeing the tables
 * made since; st_catalog_commit frees the saved copies and the tables no
 * entry names any more, and unmarks the rest.  Meanwhile st_catalog_snapshot
 * gives the other connections' statements the committed state to read.
 */
#pragma once

#include <stdbool.h>

#include "common/err.h"
#include "storage/table.h"

typedef enum StEntryKind { ST_ENTRY_TABLE, ST_ENTRY_VIEW, ST_ENTRY_INDEX } StEntryKind;

typedef struct StEntry {
    StEntryKind kind;
    char *name;        /* owned */
    char *create_sql;  /* owned: the CREATE statement as written */
    StTable *table;    /* TABLE: owned */
    char *view_sql;    /* VIEW: owned: the SELECT text */
    int n_view_cols;   /* VIEW: explicit column names, or 0 */
    char **view_cols;  /* VIEW: owned */
    char *index_table; /* INDEX: owned: the table holding it (dropped with it) */
    bool is_temp;      /* TABLE, VIEW: made by CREATE TEMP[ORARY]; it lives and is found as
                          any other (one session, nothing persists), only listed as temporary */
} StEntry;

typedef struct StCatalog StCatalog;

/* Owned; NULL on OOM. */
StCatalog *st_catalog_new(void);
void st_catalog_free(StCatalog *cat);

/* Borrowed until the entry is dropped; NULL when unknown. */
StEntry *st_catalog_find(StCatalog *cat, const char *name);

/* Adds a table (ownership passes to the catalog, also on failure).  With
 * `replace`, an entry of the same name (CREATE OR REPLACE) is dropped in the
 * same step, once nothing can fail any more: on failure it is still there. */
CmStatus st_catalog_add_table(StCatalog *cat, StTable *table, const char *create_sql, bool replace,
                              CmErr *err);

/* Adds a view over `select_sql` with optional column names; `replace` as for
 * a table. */
CmStatus st_catalog_add_view(StCatalog *cat, const char *name, const char *select_sql, int n_cols,
                             const char *const *cols, const char *create_sql, bool replace,
                             CmErr *err);

/* Adds an index entry on `table`: the name of an index the table holds
 * (st_table_add_index); dropping the entry drops that index. */
CmStatus st_catalog_add_index(StCatalog *cat, const char *name, const char *table,
                              const char *create_sql, CmErr *err);

/* Removes and frees an entry (a table's indexes with it); false when unknown. */
bool st_catalog_drop(StCatalog *cat, const char *name);

/* ALTER TABLE ... RENAME TO: entry e (a table or view) and its table are named
 * `to`, and its indexes follow; the caller checks that `to` is free. */
CmStatus st_catalog_rename(StCatalog *cat, StEntry *e, const char *to, CmErr *err);
/* Appends `stmt` (an ALTER TABLE) to e's CREATE text, so that .schema replays it. */
CmStatus st_catalog_append_sql(StEntry *e, const char *stmt, CmErr *err);

/* Opens a transaction: remembers every entry and marks every table.  CM_OOM
 * leaves none open.  Not while one is open. */
CmStatus st_catalog_begin(StCatalog *cat, CmErr *err);
/* True between st_catalog_begin and st_catalog_commit or st_catalog_rollback. */
bool st_catalog_in_txn(const StCatalog *cat);
/* Keeps the catalog as it is and closes the transaction. */
void st_catalog_commit(StCatalog *cat);
/* The catalog as the open transaction's BEGIN found it, for a statement of
 * another connection (which reads the last committed state): a catalog of
 * copies of the entries BEGIN saw, each table a snapshot of its marked state
 * (st_table_snapshot).  Valid until the transaction's next write; freed with
 * st_catalog_free.  NULL with err on OOM.  Only while a transaction is open. */
StCatalog *st_catalog_snapshot(const StCatalog *cat, CmErr *err);
/* The entries of the committed state without building tables: those BEGIN saw
 * while a transaction is open, else the entries.  For listing names. */
int st_catalog_committed_count(const StCatalog *cat);
StEntry *st_catalog_committed_entry(StCatalog *cat, int idx);

/* Puts the catalog and every table back as st_catalog_begin found them (the
 * entries are new objects: StEntry pointers taken since are stale) and
 * closes the transaction.  Cannot fail. */
void st_catalog_rollback(StCatalog *cat);

int st_catalog_count(const StCatalog *cat);
/* Borrowed: the idx-th entry in creation order. */
StEntry *st_catalog_entry(StCatalog *cat, int idx);
