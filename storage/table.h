/*
 * table.h - in-memory columnar tables whose chunks live in the block store.
 *
 * A table is a list of chunks; each chunk holds up to CM_BATCH_CAP rows as one
 * flat array per column plus a validity bitmap, so a scan hands a chunk's
 * columns to the executor by reference, without copying.  A chunk is a block
 * of the block store (storage/blocks.h, level MEMORY_AND_DISK) and its long
 * strings live in the block's own heap, so a full chunk, once sealed, can be
 * evicted to disk with its strings under memory pressure and is loaded back
 * when read.  Readers pin a chunk (st_table_scan_chunk) and unpin it when done
 * (st_table_unpin_chunk).  The tail chunk, being appended to, stays in memory
 * until it is full.  Sealing records each integer column's min and max (a
 * zone map, st_table_chunk_range), so a scan can skip a chunk without loading it.
 * Appending copies rows in; st_table_truncate() undoes an append that could not
 * finish, so a failed INSERT or COPY leaves the table exactly as it was.
 * Chunks are reserved as storage memory: an append that would pass
 * memory_limit evicts other chunks first, and fails with CM_OOM (undone) only
 * when nothing can be evicted.
 * The table owns its hash indexes (storage/index.h: PRIMARY KEY, UNIQUE and
 * CREATE INDEX); appending adds the new rows to each, and fails, undoing
 * itself, when a unique index finds a duplicate key.  An index whose keys do
 * not fit its slots probes rows at random (st_index_reads_rows), so a table
 * with such an index keeps every chunk pinned in memory (held), except while
 * its indexes are cold (a saved table just opened, whose indexes are built at
 * its first append).  Integer keys of one or two columns live in the slots:
 * the table's sealed chunks stay evictable.
 * Chunks are full but for the last, until a DELETE in place
 * (st_table_swap_chunks) leaves shorter ones, or none, where it took rows
 * out: the table is then ragged, and row r is found by its chunks' first rows
 * (st_table_chunk_of) rather than by r / CM_BATCH_CAP.
 * Transactions (storage/catalog.h) mark a table at BEGIN (st_table_mark):
 * its row count, version, statistics, names, index list and list of chunks
 * are recorded, no row is copied.  Within the transaction rows are only
 * appended in place, or an UPDATE or DELETE puts new chunks in place of old
 * ones (st_table_swap_chunks), which the mark keeps (ALTER ADD/DROP COLUMN and
 * the statements that rebuild build a new table), so st_table_restore undoes
 * everything by putting the marked list of chunks back, each with its marked
 * row count; the statistics are copied on their first change, an index
 * dropped is kept by the mark, and a marked table is freed only by the
 * catalog at COMMIT (st_table_release).  Because rows already there are never
 * written in place, the mark also describes the committed rows exactly:
 * st_table_snapshot makes a read-only table of them for the other
 * connections' statements.
 * A table is read by many workers at once but written only between queries
 * (the database runs one statement at a time).
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/err.h"
#include "common/mem.h"
#include "common/types.h"
#include "common/vec.h"
#include "storage/blocks.h"
#include "storage/stats.h"

typedef struct StIndex StIndex;         /* storage/index.h */
typedef struct StTableMark StTableMark; /* a transaction's record of the table at BEGIN */

typedef enum StIndexKind {
    ST_INDEX_PLAIN,   /* CREATE INDEX: duplicates allowed */
    ST_INDEX_UNIQUE,  /* UNIQUE constraint or CREATE UNIQUE INDEX */
    ST_INDEX_PRIMARY, /* PRIMARY KEY: unique (its columns are also NOT NULL) */
} StIndexKind;

typedef struct StColumn {
    char *name; /* owned */
    CmType type;
    bool not_null;
    bool primary_key;
    bool has_default;      /* a DEFAULT clause was declared */
    CmValue default_value; /* its value, of `type` (evaluated at CREATE TABLE: defaults are
                              constant); a long string's bytes are in the table's `strings` */
} StColumn;

typedef struct StChunk {
    int n_rows;          /* rows of the table in this chunk, <= CM_BATCH_CAP (a sealed
                            block may hold more after a truncate: they are not the table's) */
    StBlock *block;      /* the columns and their strings; owned */
    const CmBatch *held; /* the block's batch while the table pins it (an unsealed tail
                            chunk, or any chunk of a table with indexes); else NULL */
    bool sealed;         /* immutable (full, or made by a DELETE): evictable when not pinned */
    bool in_mark;        /* in the list of chunks of its table's transaction mark, which
                            then owns it once the table lets go of it */
    int64_t *zone;       /* from sealing: min, max of each column (2 per column; min > max
                            when all NULL); meaningful for INT32, DATE, INT64; owned */
} StChunk;

typedef struct StTable {
    char *name; /* owned */
    int n_cols;
    StColumn *cols; /* owned */
    CmType *types;  /* owned: the columns' types */
    int n_chunks, cap_chunks;
    StChunk **chunks; /* owned */
    int64_t *starts;  /* owned, cap_chunks of them: the first row of each chunk */
    bool is_ragged;   /* a chunk before the last holds fewer than CM_BATCH_CAP rows */
    int64_t n_rows;
    CmArena strings; /* bytes of long default values */
    CmMemRes mem;    /* storage memory held by the resident chunks (common/mem.h) */
    int n_indexes;
    StIndex **indexes;  /* owned; each holds rows [0, n_rows) */
    StBlockLevel level; /* of its chunks: MEMORY_AND_DISK unless st_table_set_level */
    /* borrowed, or NULL: where its MEMORY_AND_DISK chunks go when first evicted
     * (st_table_set_home) */
    StBlockHome *home;
    atomic_bool lost;   /* a MEMORY_ONLY chunk was dropped: the rows are incomplete */
    StColStats *stats;  /* owned: one per column, of the rows appended (storage/stats.h) */
    bool stats_stale;   /* rows were taken out since: stats are an upper bound until ANALYZE */
    bool is_index_cold; /* the indexes hold no rows yet (st_table_add_index_cold), and
                           sealed chunks are not held: built at the first append */
    /* the indexes did not fit in memory_limit: cold for good, each statement's keys
     * checked at its end without them (st_table_check_keys) */
    bool is_index_external;
    int64_t n_checked; /* while is_index_external: rows [0, n_checked) are known unique */
    /* owned, or NULL: while cold, the indexes of before a DELETE, with the renumbering
     * that makes them current, applied at the first append instead of a build (table.c) */
    struct StIndexPending *pending;
    uint64_t id;       /* unique to this table object, fixed at st_table_new */
    uint64_t version;  /* changes whenever the rows or their statistics do (new, append,
                          truncate, ANALYZE), unique across tables: a saved copy of the
                          rows is current while it matches */
    StTableMark *mark; /* the table as the open transaction's BEGIN found it, or NULL; owned */
    StChunk *own_tail; /* a snapshot's (st_table_snapshot) copy of its last chunk, shortened
                          to the rows BEGIN saw; owned; NULL in any other table */
    bool is_snapshot;  /* made by st_table_snapshot: borrows everything else it points to */
} StTable;

/* The chunk holding row r (< n_rows), and r's place in it in *off: r /
 * CM_BATCH_CAP unless the table is ragged. */
int st_table_chunk_search(const StTable *t, int64_t r, int *off);
static inline int st_table_chunk_of(const StTable *t, int64_t r, int *off)
{
    if (!t->is_ragged) {
        *off = (int)(r % CM_BATCH_CAP);
        return (int)(r / CM_BATCH_CAP);
    }
    return st_table_chunk_search(t, r, off);
}

/* A held chunk's column data and validity (NULL: no NULLs). */
static inline const void *st_chunk_data(const StChunk *c, int col)
{
    return c->held->cols[col].data;
}
static inline const uint64_t *st_chunk_validity(const StChunk *c, int col)
{
    return c->held->cols[col].validity;
}

/* Owned; NULL with err on OOM.  Column names, types and defaults are copied. */
StTable *st_table_new(const char *name, int n_cols, const StColumn *cols, CmErr *err);
void st_table_free(StTable *t);

/* Frees t, unless a transaction marked it (st_table_mark): the catalog then
 * keeps it for a ROLLBACK and frees it at COMMIT.  For a table just replaced
 * (UPDATE, DELETE, ALTER) or dropped. */
void st_table_release(StTable *t);

/* Transactions (storage/catalog.h): records t's state (rows, version,
 * statistics, table and column names, indexes) without copying rows.  CM_OOM
 * leaves t unmarked.  t must not be marked already. */
CmStatus st_table_mark(StTable *t, CmErr *err);
/* Puts t back as st_table_mark found it: the marked chunks, each with its
 * marked row count (the chunks made since are freed, and the rows appended
 * since forgotten by its indexes), an index added since is freed, one
 * dropped (or set aside by a DELETE in place) comes back, the statistics,
 * version (so a saved copy is current again) and names are the marked ones.
 * Cannot fail.  Unmarks t. */
void st_table_restore(StTable *t);
/* Keeps t as it is and forgets the mark (COMMIT); NULL mark: nothing. */
void st_table_unmark(StTable *t);

/* The rows of marked table t as its mark records them (the committed state
 * that other connections read while t's transaction is open): a table object
 * of t's id, the marked version, statistics, names and indexes, and t's
 * chunks up to the marked row count, with each chunk an UPDATE replaced since
 * the mark in its old place (the mark keeps those) and the last one cut to
 * the rows the mark counted.  No row is copied; the snapshot borrows the
 * chunks, indexes and statistics, so it is read only, and only until t is
 * written again, restored or unmarked (the database runs one statement at a
 * time: a reader's statement builds it, reads and frees it).  st_table_free
 * frees it.  NULL with err on OOM. */
StTable *st_table_snapshot(const StTable *t, CmErr *err);

/* Owned; NULL with err on OOM.  An empty table with t's name, columns and
 * indexes (UPDATE and DELETE build the new rows into it). */
StTable *st_table_new_like(const StTable *t, CmErr *err);

/* Adds an index on `key_cols` (n_keys table columns; `name` NULL for a
 * constraint) and indexes the rows already there.  A unique kind fails with
 * CM_RUNTIME when they hold a duplicate key; the table is then unchanged. */
CmStatus st_table_add_index(StTable *t, const char *name, StIndexKind kind, int n_keys,
                            const int *key_cols, CmErr *err);

/* Sets the block level of the chunks the table will make (storage/blocks.h):
 * a cache's copy of a query's rows may be MEMORY_ONLY (a chunk evicted is
 * dropped, and st_table_lost turns true: its owner recomputes the rows) or
 * DISK_ONLY (chunks are written to disk when full, in memory only while read).
 * Only on an empty table. */
void st_table_set_level(StTable *t, StBlockLevel level);
/* A table whose unique indexes do not fit in memory_limit gives their slots
 * up (an append, a reserve or the build of cold indexes that fails with
 * CM_OOM, or an append when an index that reads rows keeps more than a
 * quarter of the limit in chunks; outside a transaction: the table is then
 * `is_index_external`, and the append goes on) and checks the keys each statement added at its end,
 * reading the key columns of every row (st_index_check_unique): slower, but
 * a load larger than memory does not fail.  st_table_check_keys is that
 * check: every statement that appends rows calls it before it succeeds (on
 * CM_RUNTIME, a duplicate, it undoes its rows as on any failure).  After a
 * load (`is_load`: COPY) it also lets warm indexes of more than a quarter
 * of memory_limit go cold (their slots cannot be evicted, and beside the
 * indexes of the tables loaded next they would starve those loads): the
 * next append builds them again, or checks without them.  An UPDATE of a
 * key column checks every row before it changes anything. */
CmStatus st_table_check_keys(StTable *t, bool is_load, CmErr *err);

/* The chunks t seals from now on go to `home` (borrowed: it must outlive
 * them; NULL: the temp file) when they are first evicted (st_block_set_home):
 * a directory database's tables, whose chunks a commit would write to a data
 * file anyway. */
void st_table_set_home(StTable *t, StBlockHome *home);
/* True when a MEMORY_ONLY chunk was dropped: the table no longer holds its rows. */
bool st_table_lost(const StTable *t);
/* Bytes of the table's chunks on the disk tier now. */
int64_t st_table_disk_bytes(const StTable *t);
/* Whether t declares a PRIMARY KEY and each of its columns is one of
 * cols[0..n) (column indexes of t): rows equal on cols are then one row. */
bool st_table_key_within(const StTable *t, const int *cols, int n);

/* st_table_add_index for rows known to satisfy it (a saved table's, checked
 * when they were saved): the index is built from the rows only before the
 * first append, reserve or index added, so until then the chunks need not be
 * in memory.  Built at once when the table's other indexes are. */
CmStatus st_table_add_index_cold(StTable *t, const char *name, StIndexKind kind, int n_keys,
                                 const int *key_cols, CmErr *err);

/* Appends a sealed chunk of n_rows rows whose columns are the record at `loc`
 * of file `path`, or with col_bytes one record per column from there
 * (storage/blocks.h, st_block_new_saved: loaded on first pin, a scan's
 * columns only), with `zone` (min, max per column, as StChunk.zone).  Only
 * before any index is added.  The statistics are the caller's to set. */
CmStatus st_table_add_saved_chunk(StTable *t, int n_rows, StBlockLoc loc, const int64_t *col_bytes,
                                  const char *path, const int64_t *zone, CmErr *err);

/* Drops the index called `name`; false when there is none. */
bool st_table_drop_index(StTable *t, const char *name);

/* Checks the batch against the columns' NOT NULL and CHAR/VARCHAR lengths; the
 * batch must already have the columns' types. */
CmStatus st_table_check(const StTable *t, const CmBatch *b, CmErr *err);

/* Appends the active rows of `b` (same column types as the table) and adds
 * them to the indexes.  On failure (OOM, or a duplicate key, CM_RUNTIME) the
 * table is left as it was. */
CmStatus st_table_append(StTable *t, const CmBatch *b, CmErr *err);
/* st_table_append without counting the rows in the statistics: for a bulk
 * load that counts its batches apart (st_stats_add into its own array, on
 * another thread, while this one appends: this touches no statistics) and
 * adds the count with st_table_add_stats once the whole load succeeded. */
CmStatus st_table_append_uncounted(StTable *t, const CmBatch *b, CmErr *err);
/* Adds statistics counted apart (one per column, st_stats_union) to t's. */
CmStatus st_table_add_stats(StTable *t, const StColStats *add, CmErr *err);

/* UPDATE and DELETE in place (executor/update.h).  st_table_chunk_from
 * makes a chunk in t's layout holding the active rows of `rows` (at most
 * CM_BATCH_CAP; sealed when full or `seal`), its memory reserved on t, but
 * not in t: NULL with err on OOM; st_table_chunk_discard frees one that is
 * not put in.  st_table_swap_chunks puts fresh[i] at place at[i] (places
 * ascending), taking each fresh[i] (set to NULL); the chunks taken out are
 * freed, or, in a transaction, kept for st_table_restore.  For an UPDATE,
 * fresh[i] holds as many rows as the chunk it replaces (and is sealed when
 * that one is), and no index key changed: the indexes stay as they are.  For
 * a DELETE, fresh[i] (sealed) holds fewer rows, or is NULL: the chunk at at[i]
 * goes, and the rows after move up; the indexes become cold until the next
 * append, which renumbers them (unique indexes outside a transaction: the
 * map of the replaced chunks' rows is kept, `pending`, and a second DELETE
 * before gives it up) or builds them from the rows (the others).  With
 * `rekey` (an UPDATE that set index keys) the rows whose key changed leave
 * the indexes and come back with the new key (unique, warm indexes outside
 * a transaction's mark; else the indexes are built anew from every row): a
 * duplicate key fails it (CM_RUNTIME, nothing changed, fresh[i] left to the
 * caller).  `add` (n_cols
 * statistics, or NULL) are the new values' statistics, merged in; the old
 * values stay counted (stats_stale).  Fails (CM_OOM, nothing changed) only
 * before it puts any chunk in. */
StChunk *st_table_chunk_from(StTable *t, const CmBatch *rows, bool seal, CmErr *err);
void st_table_chunk_discard(StChunk *c);
CmStatus st_table_swap_chunks(StTable *t, int n, const int *at, StChunk **fresh,
                              const StColStats *add, bool rekey, CmErr *err);

/* Makes the indexes ready for `n_more` appended rows, so a bulk load grows
 * them once rather than doubling as it goes.  Optional. */
CmStatus st_table_reserve(StTable *t, int64_t n_more, CmErr *err);

/* Recomputes the column statistics from the table's rows (ANALYZE): loads
 * every chunk once.  CM_OOM or CM_IO when a chunk cannot be loaded; the
 * statistics are then left as they were. */
CmStatus st_table_analyze(StTable *t, CmErr *err);

/* Drops rows past `n_rows` (to undo a failed append), from the indexes too;
 * the statistics turn stale unless no row is left. */
void st_table_truncate(StTable *t, int64_t n_rows);

/* Pins chunk `chunk_idx` (loading it from disk when evicted; *loaded tells,
 * when not NULL) and points the vectors of `out` (n_cols columns, vectors not
 * owning data) at its columns `col_ids` (n_out of them); sets n_rows, no
 * selection.  Column id t->n_cols (ST_ROW_ADDR) is each row's address, an
 * INT64 written into that vector's own buffer (cm_batch_init made it):
 * chunk_idx * CM_BATCH_CAP + its place in the chunk, for the plans of UPDATE
 * and DELETE (the table does not change while they run).  A saved chunk in column records reads
 * only those columns (st_block_pin_cols).  The view is valid until st_table_unpin_chunk.  CM_OOM or
 * CM_IO when the chunk cannot be loaded (out is then empty). */
#define ST_ROW_ADDR(t) ((t)->n_cols)
CmStatus st_table_scan_chunk(const StTable *t, int chunk_idx, const int *col_ids, int n_out,
                             CmBatch *out, bool *loaded, CmErr *err);
void st_table_unpin_chunk(const StTable *t, int chunk_idx);
/* Unpins a chunk a scan loaded from disk, to be evicted first
 * (st_block_unpin_cold): for tables larger than st_table_ring_bytes. */
void st_table_unpin_chunk_cold(const StTable *t, int chunk_idx);
/* Whether a scan of t should unpin what it loads cold: t's fixed-width bytes
 * pass a quarter of storage's protected share (PostgreSQL's threshold for
 * its scan ring is a quarter of shared_buffers).  Smaller tables are meant
 * to stay, and an LRU keeps them. */
bool st_table_scans_cold(const StTable *t);

/* The smallest and largest non-NULL value of an INT32, DATE or INT64 column of
 * a chunk, without loading it (lo > hi when all are NULL). */
void st_table_chunk_range(const StTable *t, int chunk_idx, int col, int64_t *lo, int64_t *hi);
