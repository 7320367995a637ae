/*
 * index.h - hash indexes over a table's key columns: PRIMARY KEY and UNIQUE
 * constraints, and CREATE [UNIQUE] INDEX.
 *
 * An index belongs to its table (StTable.indexes) and follows its rows:
 * st_table_append adds the appended rows, st_table_truncate forgets them, and
 * UPDATE/DELETE, which replace chunks, patch it (below) or build it anew
 * (st_table_swap_chunks).  A unique index refuses a key already present, in
 * earlier rows or among the rows being added; a key with a NULL component is
 * never indexed (NULLs never collide, and never match a lookup).
 *
 * Layout: one open-addressing table with a slot per distinct key (linear
 * probing, load <= 3/4) holding its newest row and the top bits of the key's
 * hash (and the key itself when it fits 64 bits: st_index_reads_rows), plus, for a non-unique
 * index, a per-row link to the previous row of the same key.  A probe compares keys only when the
 * hash bits agree; a key with many rows costs one slot, so inserting stays O(1) for a non-unique
 * index too.  The same structure serves lookups (st_index_lookup: every row
 * with a given key) and, later, index joins: a probe batch hashes its keys the
 * same way (hash of each component with cm_hash_u64 / cm_hash_bytes, combined
 * with cm_hash_combine), finds the slot and walks the row chain.  Not wired
 * into the planner yet: queries scan.
 * Written only between statements, like its table; lookups may run from many
 * threads at once.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/vec.h"
#include "storage/table.h"

/* Owned; NULL with err on OOM.  `name` (NULL for a constraint) and the key
 * column numbers are copied; col_types are the table's column types.  The
 * index is empty: add rows with st_index_add_rows. */
StIndex *st_index_new(const char *name, StIndexKind kind, int n_keys, const int *key_cols,
                      const CmType *col_types, CmErr *err);
void st_index_free(StIndex *ix);

/* Whether the index reads indexed rows of its table after adding them (to
 * compare keys, grow or forget rows): then the table must keep every chunk
 * in memory.  False when its keys fit 64 bits (one integer, date, time,
 * timestamp, boolean or 64-bit decimal component, or two of 32 bits), which
 * it keeps in its slots: it reads only rows being added. */
bool st_index_reads_rows(const StIndex *ix);

/* Borrowed for the index's life; NULL for a constraint's index. */
const char *st_index_name(const StIndex *ix);
StIndexKind st_index_kind(const StIndex *ix);
int st_index_n_keys(const StIndex *ix);
/* Borrowed: the table column of each key component. */
const int *st_index_key_cols(const StIndex *ix);

/* Indexes rows [from, t->n_rows) of `t` (the index must hold rows [0, from)).
 * A unique index fails with CM_RUNTIME ('Duplicate key "a: 1" violates primary
 * key constraint') at the first key already present; then, as on OOM, the
 * index is left holding rows [0, from) only. */
CmStatus st_index_add_rows(StIndex *ix, const StTable *t, int64_t from, CmErr *err);

/* Patching a unique index where an UPDATE or DELETE replaced chunks
 * (st_table_swap_chunks), at the cost of the rows of those chunks (and, for
 * a DELETE, a pass over the slots) rather than of a build from every row.
 * Chunks passed are held.
 *
 * An UPDATE: st_index_diff sets bit i of `differ` (CM_BATCH_CAP bits) where
 * row i of `old` and of `fresh` (the same rows, before and after) have
 * different keys, and returns how many.  st_index_room makes room for
 * n_more keys put without growing (it may rehash now, reading the table's
 * rows as the index knows them: call it before anything else).
 * st_index_forget frees the slots of the picked rows r0 + i (pick: bits, NULL
 * all), whose keys are rows i of chunk c.  st_index_put adds the picked rows
 * r0 + i of t (the chunk at r0, n rows), their old slots freed before, in room
 * made: a key already there fails it with CM_RUNTIME (the duplicate's
 * message), the rows before it staying added.  A freed slot stays used (as
 * truncate leaves it) until a growth rehashes the live ones.
 *
 * A DELETE: st_index_map_kept sets map[i] (old->n_rows entries) to the place
 * in `fresh` (the rows kept, in order; NULL: none) of old's row i, or -1 when
 * it is gone or not indexed.  st_index_close_up then moves every row id at
 * once: a row of a gap's chunk (old numbering: [start, start + n_old)) to
 * new_start + map[i], or out; a row after it up by moved_after (the rows taken
 * out up to and with that chunk), gaps ascending; the index then holds
 * n_rows rows. */
typedef struct StIndexGap {
    int64_t start;       /* the chunk's first row, before */
    int n_old;           /* its rows before */
    const int16_t *map;  /* st_index_map_kept's */
    int64_t new_start;   /* its first row after */
    int64_t moved_after; /* how far the rows up to the next gap move up */
} StIndexGap;
int st_index_diff(const StIndex *ix, const StTable *t, const StChunk *old, const StChunk *fresh,
                  uint64_t *differ);
CmStatus st_index_room(StIndex *ix, const StTable *t, int64_t n_more, CmErr *err);
void st_index_forget(StIndex *ix, const StTable *t, const StChunk *c, int64_t r0,
                     const uint64_t *pick);
CmStatus st_index_put(StIndex *ix, const StTable *t, int64_t r0, int n, const uint64_t *pick,
                      CmErr *err);
void st_index_map_kept(const StIndex *ix, const StTable *t, const StChunk *old,
                       const StChunk *fresh, int16_t *map);
void st_index_close_up(StIndex *ix, int n, const StIndexGap *gaps, int64_t n_rows);

/* Forgets every row, keeping the slots' memory: no row is read. */
void st_index_clear(StIndex *ix);
/* Forgets every row and frees the slots' memory: for an index too large for
 * memory_limit, whose keys are then checked without it (below). */
void st_index_release(StIndex *ix);
/* Bytes of storage memory the index holds (its slots and links). */
int64_t st_index_bytes(const StIndex *ix);

/* Whether rows [from, t->n_rows) of t have keys that a unique index `ix`
 * holding rows [0, from) would take: none equal to another's, none to a key
 * of rows [0, from) (rows with a NULL component never collide), found
 * without ix's slots (it may hold no row): the rows' key hashes go in a set
 * of a slice of memory_limit, partitioned through spill files (temp_directory)
 * when the set would be larger, and the key columns of every row are read
 * once, each chunk pinned while it is read.  CM_RUNTIME with the message
 * st_index_add_rows gives for a duplicate; CM_OOM, CM_IO.  For a table
 * whose index does not fit in memory (st_table_check_keys). */
CmStatus st_index_check_unique(const StIndex *ix, const StTable *t, int64_t from, CmErr *err);

/* Forgets rows >= n_rows; call before the table drops them (their keys are
 * re-hashed from its columns). */
void st_index_truncate(StIndex *ix, const StTable *t, int64_t n_rows);

/* Makes room for rows up to n_rows of `t` ahead of appends (a bulk load
 * knowing its size grows the slots once). */
CmStatus st_index_reserve(StIndex *ix, const StTable *t, int64_t n_rows, CmErr *err);

/* Rows of `t` whose key equals the key at position `pos` of `keys` (n_keys
 * flat vectors of the key columns' types, in key order): writes up to `cap`
 * row ids to `rows`, newest first, and returns how many match (possibly more
 * than cap).
 * A key with a NULL component matches nothing. */
int64_t st_index_lookup(const StIndex *ix, const StTable *t, const CmVec *keys, uint32_t pos,
                        int64_t *rows, int64_t cap);
