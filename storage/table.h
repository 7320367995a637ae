/*
 * table.h - in-memory columnar tables.
 *
 * A table is a list of chunks; each chunk holds up to CM_BATCH_CAP rows as one
 * flat array per column plus a validity bitmap, so a scan hands a chunk's
 * columns to the executor by reference, without copying.  Strings longer than
 * the inline size live in the table's string arena for the table's lifetime.
 * Appending copies rows in; st_table_truncate() undoes an append that could not
 * finish, so a failed INSERT or COPY leaves the table exactly as it was.
 * Chunks and strings are reserved as storage memory: an append that would pass
 * memory_limit fails with CM_OOM and is undone.
 * The table owns its hash indexes (storage/index.h: PRIMARY KEY, UNIQUE and
 * CREATE INDEX); appending adds the new rows to each, and fails, undoing
 * itself, when a unique index finds a duplicate key.
 * A table is read by many workers at once but written only between queries
 * (the database runs one statement at a time).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/err.h"
#include "common/mem.h"
#include "common/types.h"
#include "common/vec.h"

typedef struct StIndex StIndex; /* storage/index.h */

typedef enum StIndexKind {
    ST_INDEX_PLAIN,   /* CREATE INDEX: duplicates allowed */
    ST_INDEX_UNIQUE,  /* UNIQUE constraint or CREATE UNIQUE INDEX */
    ST_INDEX_PRIMARY, /* PRIMARY KEY: unique (its columns are also NOT NULL) */
} StIndexKind;

typedef struct StColumn {
    char *name;    /* owned */
    CmType type;
    bool not_null;
    bool primary_key;
    bool has_default;      /* a DEFAULT clause was declared */
    CmValue default_value; /* its value, of `type` (evaluated at CREATE TABLE: defaults are
                              constant); a long string's bytes are in the table's `strings` */
} StColumn;

typedef struct StChunk {
    int n_rows;           /* rows in use, <= CM_BATCH_CAP */
    void **data;          /* per column: CM_BATCH_CAP values; owned */
    uint64_t **validity;  /* per column: bitmap or NULL (no NULLs yet); owned */
} StChunk;

typedef struct StTable {
    char *name;           /* owned */
    int n_cols;
    StColumn *cols;       /* owned */
    int n_chunks, cap_chunks;
    StChunk **chunks;     /* owned */
    int64_t n_rows;
    CmArena strings;      /* bytes of long strings */
    CmMemRes mem;         /* storage memory held by chunks and strings (common/mem.h) */
    int n_indexes;
    StIndex **indexes;    /* owned; each holds rows [0, n_rows) */
} StTable;

/* Owned; NULL with err on OOM.  Column names, types and defaults are copied. */
StTable *st_table_new(const char *name, int n_cols, const StColumn *cols, CmErr *err);
void st_table_free(StTable *t);

/* Owned; NULL with err on OOM.  An empty table with t's name, columns and
 * indexes (UPDATE and DELETE build the new rows into it). */
StTable *st_table_new_like(const StTable *t, CmErr *err);

/* Adds an index on `key_cols` (n_keys table columns; `name` NULL for a
 * constraint) and indexes the rows already there.  A unique kind fails with
 * CM_RUNTIME when they hold a duplicate key; the table is then unchanged. */
CmStatus st_table_add_index(StTable *t, const char *name, StIndexKind kind, int n_keys,
                            const int *key_cols, CmErr *err);

/* Drops the index called `name`; false when there is none. */
bool st_table_drop_index(StTable *t, const char *name);

/* Checks the batch against the columns' NOT NULL and CHAR/VARCHAR lengths; the
 * batch must already have the columns' types. */
CmStatus st_table_check(const StTable *t, const CmBatch *b, CmErr *err);

/* Appends the active rows of `b` (same column types as the table) and adds
 * them to the indexes.  On failure (OOM, or a duplicate key, CM_RUNTIME) the
 * table is left as it was. */
CmStatus st_table_append(StTable *t, const CmBatch *b, CmErr *err);

/* Makes the indexes ready for `n_more` appended rows, so a bulk load grows
 * them once rather than doubling as it goes.  Optional. */
CmStatus st_table_reserve(StTable *t, int64_t n_more, CmErr *err);

/* Drops rows past `n_rows` (to undo a failed append), from the indexes too. */
void st_table_truncate(StTable *t, int64_t n_rows);

/* Points the vectors of `out` (n_cols columns, vectors not owning data) at chunk
 * `chunk_idx`'s columns `col_ids` (n_out of them); sets n_rows, no selection. */
void st_table_scan_chunk(const StTable *t, int chunk_idx, const int *col_ids, int n_out,
                         CmBatch *out);
