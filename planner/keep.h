/*
 * keep.h - the partitioned form of a table, kept across statements
 * (docs/cache.md, "Partitioned forms kept across statements").
 *
 * A stage that only scans a table (a catalog table, or a cache entry's rows)
 * into a hash exchange writes the table's partitioned form: its rows, hashed
 * on the exchange's keys into n partitions.  An iterative script that joins
 * the same table on the same key every round (PageRank's edges on src, by a
 * shuffle join) writes the same partitioned form every round.  The keeper
 * remembers the exchanges of the statements it has seen, by their key: the
 * table (its id and version: storage/table.h, so any write to it makes a new
 * key), the columns read, the exchange's keys and partition count.  The
 * second time a statement runs one, the keeper takes its shuffle, flushed to
 * the disk tier, with its store (the temp files live on past the statement,
 * counted in max_temp_directory_size); from then on the physical planner
 * puts the kept shuffle where the stage's output would go and does not run
 * the stage.  Seen once only, nothing is kept: a one-off query pays nothing.
 *
 * What is kept is dropped when its table is written or dropped (pl_keep_sweep
 * after each statement), when a statement reading it fails (a damaged file is
 * never read twice), by least recent use past PL_KEEP_MAX entries, and by
 * pl_keep_clear (CLEAR CACHE, the setting exchange_reuse turned off).
 *
 * One keeper per session, used by the session's thread only; a kept shuffle
 * is read by the workers of the statement that borrowed it, which never
 * outlives the keeper's next call.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "shuffle/shuffle.h"
#include "storage/table.h"

#define PL_KEEP_MAX 16      /* entries, seen or kept */
#define PL_KEEP_MAX_COLS 64 /* columns of a keepable exchange */
#define PL_KEEP_MAX_KEYS 8  /* its hash keys */

typedef struct PlKeep PlKeep;

/* What decides a partitioned form's rows and their placement. */
typedef struct PlKeepKey {
    uint64_t table_id, version; /* the table's (storage/table.h) */
    int n_cols;
    int cols[PL_KEEP_MAX_COLS]; /* the table's columns the scan reads, in order */
    int n_keys;
    int keys[PL_KEEP_MAX_KEYS]; /* hash keys, positions in cols */
    int n_parts;
} PlKeepKey;

/* Whether a table is still what a key was made of: the table of that name
 * (in the catalog, or a cache entry's rows) is the object `id` at `version`. */
typedef bool (*PlKeepCurrentFn)(void *ctx, const char *name, uint64_t id, uint64_t version);

/* Owned; NULL on OOM.  is_current(ctx, ...) judges every table the keeper is
 * shown: only current tables are seen or kept (a WITH RECURSIVE round's table,
 * a statement's shared rows or a system table never are). */
PlKeep *pl_keep_new(PlKeepCurrentFn is_current, void *ctx);
/* Frees every kept shuffle with its store. */
void pl_keep_free(PlKeep *k);
/* Forgets every entry, kept or seen. */
void pl_keep_clear(PlKeep *k);

/* Whether an exchange of table t (named `name` in the catalog or the cache)
 * can be seen and kept: t is current. */
bool pl_keep_eligible(const PlKeep *k, const char *name, const StTable *t);
/* The kept shuffle of `key` (the statement borrows it: it stays until the
 * keeper's next pl_keep_done), or NULL.  Counts nothing. */
ShShuffle *pl_keep_find(PlKeep *k, const PlKeepKey *key);

/* A keepable exchange a plan wrote: its key, the table's name (for the
 * sweep), a description (sluice_cache, EXPLAIN) and its shuffle (NULL when
 * the run never wrote it: an adaptive rule merged its stage away). */
typedef struct PlKeepWrote {
    const PlKeepKey *key;
    const char *table, *what;
    ShShuffle *sh;
    bool filtered; /* a runtime join filter cut its rows (executor/bloom.h): the key is
                      remembered as seen, the shuffle never kept */
} PlKeepWrote;

/* After a plan built with the keeper has run: `used` of its keys were read
 * from kept shuffles, and the run wrote the keepable exchanges `wrote` into
 * shuffles of store st (the caller has freed the store's other shuffles).
 * Takes st and every wrote[i].sh: what it does not keep it frees (k may be
 * NULL: then all of it).  When `ok` (the run succeeded), each used entry
 * counts a hit, a written key seen before is kept (flushed to disk) if the
 * kept forms' bytes stay within `cap` (least recently used ones are dropped
 * to make room; the session gives a quarter of max_temp_directory_size, so
 * that spills keep the rest), and one seen for the first time is
 * remembered.  When not `ok`, the used entries are dropped. */
void pl_keep_done(PlKeep *k, bool ok, int n_used, PlKeepKey *const *used, int n_wrote,
                  const PlKeepWrote *wrote, ShStore *st, int64_t cap);

/* Drops every entry whose table is no longer current (written, dropped,
 * recomputed): after each statement. */
void pl_keep_sweep(PlKeep *k);

/* One kept entry, for sluice_cache. */
typedef struct PlKeepInfo {
    const char *name; /* "table (cols; hash on keys, n partitions)" */
    int64_t rows, disk_bytes, hits;
} PlKeepInfo;

/* The kept entries (not those only seen), least recently used first: fills up to cap of
 * out (borrowed until the keeper changes) and returns how many there are. */
int pl_keep_list(const PlKeep *k, PlKeepInfo *out, int cap);
