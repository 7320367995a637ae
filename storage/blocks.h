/*
 * blocks.h - the tiered block store: memory first, then disk.
 *
 * One store for the process.  A block is a unit of columnar data (a CmBatch:
 * one flat array per column, validity bitmaps, a string heap) with an owner
 * and a level:
 *
 *   MEMORY_AND_DISK  evicted = written to the disk tier (once: a sealed block
 *                    never changes, so its disk copy stays valid), reloaded on
 *                    the next pin.  Table chunks.
 *   MEMORY_ONLY      evicted = dropped; the owner's `dropped` callback is told
 *                    (outside the store's lock) and must recompute.  Caches.
 *   DISK_ONLY        written to disk when sealed; in memory only while pinned.
 *
 * Life of a block: st_block_new makes it pinned (one pin, the creator's),
 * resident and unsealed; the owner fills its batch (st_block_batch), charging
 * growth with st_block_charge, then seals it (st_block_seal): from then on it
 * is immutable and may be evicted whenever nobody pins it.  Readers pin
 * (st_block_pin: loads it from disk when evicted), read the batch, unpin.
 * Unsealed blocks are never evicted.  st_block_free drops a block in any state.
 *
 * Memory: a resident block's bytes (its arrays and string heap) are reserved,
 * in the STORAGE pool, on the CmMemRes the owner gives (borrowed: it must
 * outlive the block).  A reservation that would pass memory_limit evicts
 * unpinned sealed blocks, least recently unpinned first, and fails with CM_OOM
 * only when none is left.  Execution takes memory back through the evictor the
 * store registers with the memory manager (cm_mem_set_evictor, common/mem.h).
 *
 * Disk tier: one unnamed temp file (O_TMPFILE in temp_directory, created on
 * first use, gone when the process ends) holding records in the shuffle block
 * format (shuffle/block.h: checksummed, zstd when it pays).  Freed extents are
 * reused (first fit on a free list).  Bytes of the file count against
 * max_temp_directory_size (sh_temp_charge).  A block knows where its bytes
 * live on disk (StBlockLoc); a saved block (st_block_new_saved) lives in a
 * file of its own: a directory database's data file.  A block with a home
 * (st_block_set_home) is written there, not to the temp file, at its first
 * eviction, and is a saved block from then on.
 *
 * Thread-safe: any number of threads may pin, unpin and evict at once (one
 * lock for the lists; disk reads happen outside it, a loading block makes
 * other pinners wait).  Writing a batch (st_block_batch on an unsealed block)
 * is for its one owner.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/mem.h"
#include "common/types.h"
#include "common/vec.h"

typedef enum StBlockLevel {
    ST_BLOCK_MEMORY_AND_DISK = 0,
    ST_BLOCK_MEMORY_ONLY = 1,
    ST_BLOCK_DISK_ONLY = 2,
} StBlockLevel;

typedef struct StBlock StBlock;

/* Where a block's bytes live on disk: a record of `bytes` at `offset` of the
 * store's file (fd).  bytes == 0: not on disk. */
typedef struct StBlockLoc {
    int fd;
    int64_t offset;
    int64_t bytes;
} StBlockLoc;

/* A file of the owner's that a sealed MEMORY_AND_DISK block goes to when it
 * is first evicted, instead of the store's temp file: a directory database's
 * data file (storage/persist.c), so that the chunks of a load larger than
 * memory are written once, where the commit keeps them (docs/storage.md).
 * `write` lays the batch's rows out as column records (col_bytes[i] bytes
 * each, back to back from loc->offset; one per column of `batch`) in a file
 * that outlives the block, and gives their place and the file's path (for
 * errors; it must outlive the block too).  From any thread, several at once;
 * the block is not changing meanwhile.  On an error the block goes to the
 * temp file as any other. */
typedef struct StBlockHome StBlockHome;
struct StBlockHome {
    CmStatus (*write)(StBlockHome *home, const CmBatch *batch, StBlockLoc *loc, int64_t *col_bytes,
                      const char **path, CmErr *err);
};

/* Called (outside the store's lock, from the evicting thread) when a
 * MEMORY_ONLY block was dropped; the block stays valid (st_block_pin then
 * returns NULL with no error) until its owner frees it. */
typedef void (*StBlockDropped)(void *owner, StBlock *b);

/* The disk tier's directory and cap on temp bytes (<= 0: none).  Applies to
 * the file when it is created (first eviction); default $TMPDIR or /tmp. */
void st_blocks_configure(const char *temp_dir, int64_t max_temp);

/* The disk tier's directory (copied to dir, cap bytes) and cap on temp bytes:
 * for other temp files of storage (spill files, shuffle/spill.h). */
void st_blocks_temp(char *dir, size_t cap, int64_t *max_temp);

/* A new block of n_cols columns of `types`, pinned once, unsealed, its batch
 * empty; its arrays are reserved on `res` (STORAGE pool).  `dropped` and
 * `owner` may be NULL unless level is MEMORY_ONLY.  Owned (st_block_free);
 * NULL with err (CM_OOM) when memory cannot be found. */
StBlock *st_block_new(StBlockLevel level, int n_cols, const CmType *types, CmMemRes *res,
                      StBlockDropped dropped, void *owner, CmErr *err);

/* A sealed MEMORY_AND_DISK block of n_rows rows that is not in memory: its
 * disk copy is at `loc` in a file of the caller's, `path` (for errors), both
 * borrowed until the block is freed.  With col_bytes NULL the copy is one
 * record (shuffle/block.h format) of every column; else each column is a
 * record of its own (a block of one column), col_bytes[i] bytes long, back
 * to back from loc.offset, and a pin reads only the columns asked for
 * (st_block_pin_cols).  The first pin loads (a damaged record, or one of
 * other than n_rows rows, is CM_IO naming the file); eviction drops the
 * batch, all its columns, and writes nothing; freeing it leaves the file
 * alone.  A database's table chunks (storage/persist.h).  Owned; NULL with
 * err on OOM. */
StBlock *st_block_new_saved(int n_cols, const CmType *types, CmMemRes *res, int n_rows,
                            StBlockLoc loc, const int64_t *col_bytes, const char *path, CmErr *err);

/* A saved block's data file (and, in *n_rows, the rows of its record; in
 * *by_column, whether it is a record per column, storage format 3); NULL
 * for any other block. */
const char *st_block_saved(const StBlock *b, int *n_rows, bool *by_column);

/* Makes sealed MEMORY_AND_DISK block b, which is not saved, a saved block
 * (as st_block_new_saved describes, its n_rows rows at `loc`, col_bytes and
 * path borrowed likewise) whose batch, if resident, stays: for a table chunk
 * that a commit has just written to a data file.  From then on its eviction
 * drops it (nothing written to the store's file, where its extent, if it had
 * one, is freed) and a pin loads the columns it asks for from the data file.
 * Only while no other thread pins b.  CM_OOM (b unchanged) on OOM. */
CmStatus st_block_set_saved(StBlock *b, int n_rows, StBlockLoc loc, const int64_t *col_bytes,
                            const char *path, CmErr *err);

/* Gives unsealed MEMORY_AND_DISK block b a home (borrowed: it must outlive
 * b): its first eviction writes it there, and it becomes a saved block over
 * those records (as st_block_set_saved), which later evictions just drop. */
void st_block_set_home(StBlock *b, StBlockHome *home);

/* The block's batch: written by the owner while unsealed; read while pinned. */
CmBatch *st_block_batch(StBlock *b);

/* Re-measures an unsealed block after its owner wrote into it (its string
 * heap grew) and reserves the growth; CM_OOM when memory cannot be found (the
 * block is unchanged: the owner undoes its writes or frees it). */
CmStatus st_block_charge(StBlock *b, CmErr *err);

/* Makes the block immutable and evictable once unpinned.  A DISK_ONLY block is
 * written to disk now (CM_IO on a write error or past max_temp; the block is
 * then unchanged, still unsealed). */
CmStatus st_block_seal(StBlock *b, CmErr *err);
bool st_block_sealed(const StBlock *b);

/* Pins b and returns its batch, loading it from disk when evicted (*loaded set
 * then, when loaded is not NULL).  NULL with err on a load failure (CM_OOM,
 * CM_IO); NULL with err untouched when a MEMORY_ONLY block was dropped.  Every
 * successful pin is matched by one st_block_unpin. */
const CmBatch *st_block_pin(StBlock *b, bool *loaded, CmErr *err);
void st_block_unpin(StBlock *b);
/* st_block_pin for a reader of only columns cols[0..n) of the batch (n 0:
 * none, e.g. a count; n < 0: all): a saved block in column records reads just those
 * that it does not hold yet, and the others' vectors of the batch returned
 * may be empty (data NULL) until a pin asks for them.  Any other block: as
 * st_block_pin.  *loaded: something was read from disk. */
const CmBatch *st_block_pin_cols(StBlock *b, const int *cols, int n, bool *loaded, CmErr *err);
/* Pins b when it is resident (never loads) and every vector of `view` views
 * one of its columns as it is (the same data and validity, FLAT): for a
 * consumer keeping a batch that viewed b (cm_batch_keep), which an operator
 * may have changed since.  Checked under the store's lock, while no load is
 * adding a column to b's batch.  false, with no pin taken, otherwise. */
bool st_block_pin_view(StBlock *b, const CmBatch *view);
/* As st_block_unpin, but when nobody pins it any more the block goes to the
 * evicting end of the LRU list: the first to leave.  For a block a scan
 * loaded from a table too large to stay: the scan will not read it again
 * before it has gone round the table, and at the fresh end it would push out
 * blocks that do get read again (a table scanned every round through a
 * smaller storage share, under LRU, hits nothing; PostgreSQL's ring for a
 * large sequential scan).  Blocks the scan found resident are unpinned
 * normally, so the resident part of the table stays resident. */
void st_block_unpin_cold(StBlock *b);

/* Frees b, resident or not; its disk extent is freed for reuse.  Pins still
 * held (the owner's own) go with it; nobody else may hold one. */
void st_block_free(StBlock *b);

/* True when the block is in memory now (for reports and tests). */
bool st_block_resident(const StBlock *b);
StBlockLevel st_block_level(const StBlock *b);
/* Where the block lives on disk (bytes 0 when not written). */
StBlockLoc st_block_loc(const StBlock *b);

/* Evicts unpinned sealed blocks, least recently used first, until `bytes` are
 * released or none is left; returns the bytes released.  Registered as the
 * memory manager's evictor: for execution, which takes the memory in other
 * buffers, so the evicted blocks' pages go back to the operating system at
 * once (cm_free_cold) and resident memory falls with the reservation.  A
 * block made or loaded past storage's limit evicts others itself, and their
 * buffers are freed for it to take. */
int64_t st_blocks_evict(int64_t bytes);
/* Grows res (STORAGE pool) by `bytes`, evicting unpinned blocks as long as
 * that is refused; CM_OOM (cm_mem_need's message) when nothing is left to
 * evict.  For storage memory that is not a block's: a table's indexes. */
CmStatus st_blocks_reserve(CmMemRes *res, int64_t bytes, CmErr *err);

typedef struct StBlocksStats {
    int64_t n_blocks;     /* blocks that exist */
    int64_t n_resident;   /* of them, in memory */
    int64_t memory_bytes; /* bytes of resident blocks */
    int64_t disk_bytes;   /* bytes of records on disk (live extents) */
    int64_t file_bytes;   /* size of the disk file (free extents included) */
    int64_t evictions;    /* blocks evicted since start */
    int64_t loads;        /* blocks loaded back from disk since start */
    int64_t drops;        /* MEMORY_ONLY blocks dropped since start */
    int64_t miss_loads;   /* of the loads, of blocks that were evicted (not DISK_ONLY ones,
                             which are on disk by their level): cache misses */
    int64_t miss_load_ns; /* time those loads took (read, decode, reserve) */
    int64_t temp_written; /* bytes of records written to the temp file since start */
    int64_t home_written; /* bytes of records written to homes (st_block_set_home) */
} StBlocksStats;

void st_blocks_stats(StBlocksStats *out);
