/*
 * shuffle.h - the shuffle store: how the stages of a query exchange data.
 *
 * An ShStore belongs to one query.  It owns the memory budget of pushed blocks,
 * the query's temp directory and the flushing.  An ShShuffle is one exchange in
 * it: n_maps map tasks push column batches into n_parts reduce partitions;
 * reduce tasks read a partition range [p0, p1), optionally only the maps
 * [m0, m1) (skew splits).  A pushed batch becomes a block (block.h); all blocks
 * of one partition, from every mapper, are buffered together and flushed to
 * that partition's file (push aggregation), zstd-compressed when so set.  A
 * file over the split threshold is sealed and a new split begins.  The first
 * map-range read of a split sorts it by map id (sort on read).
 * A map's blocks become visible when its writer commits; only the committed
 * attempt of a map is read, so re-runs never double-count.  A reader that
 * finds a block failing its checksum or a missing file fails with CM_IO and
 * records the lost maps, which a re-run attempt can replace.  docs/shuffle.md
 * has the design, the file layout and the flow-control invariants.
 * Thread-safety: every function may be called from any thread; one writer or
 * reader is used by one thread at a time.  Lock order: the store has one lock,
 * taken inside these calls only, never held across file I/O or across a call
 * out of shuffle/; callers may hold their own locks around any call here.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"
#include "common/mem.h"
#include "common/types.h"
#include "common/vec.h"

typedef struct ShStore ShStore;
typedef struct ShShuffle ShShuffle;
typedef struct ShWriter ShWriter;
typedef struct ShReader ShReader;

/* Codecs of blocks on disk (keep in sync with SH_BLOCK_CODEC_* in block.h). */
enum { SH_CODEC_NONE = 0, SH_CODEC_ZSTD = 1, SH_CODEC_LZ4 = 2, SH_CODEC_AUTO = 3 };

/* ---- the store ---------------------------------------------------------------- */

typedef struct ShStoreOptions {
    int codec;                /* SH_CODEC_*: how blocks are written to disk */
    bool compress_in_memory;  /* also compress blocks when pushed: more fit in memory */
    int64_t memory_limit;     /* bytes of buffered (not yet flushed) blocks, >= 1 */
    double pause_ratio;       /* pushers pause above this share of memory_limit */
    double resume_ratio;      /* ... until usage falls below this share (<= pause_ratio) */
    int64_t split_threshold;  /* bytes after which a partition file is sealed */
    int64_t flush_bytes;      /* a partition buffer this large is flushed first; 0: derived */
    char temp_directory[256]; /* the query's directory is made inside it, when first needed */
    int64_t max_temp;         /* bytes of temp files the process may hold (<= 0: no cap) */
} ShStoreOptions;

/* Store-wide counters. */
typedef struct ShStoreStats {
    int64_t used;          /* bytes of buffered blocks now */
    int64_t peak_used;     /* the most ever buffered */
    int64_t memory_limit;  /* the budget */
    int64_t pauses;        /* pushes that had to wait (or help flush) */
    int64_t paused_ms;     /* total time pushers spent paused */
    int64_t flushes;       /* partition buffers written */
    int64_t spilled_bytes; /* bytes written to data files */
    int64_t blocks_reused; /* pushes encoded into a kept flushed block (ShStore.spare) */
} ShStoreStats;

/* Fills o from the settings of cfg (defaults when cfg is NULL). */
void sh_store_options_init(ShStoreOptions *o, const CmConfig *cfg);
/* A store for one query, from its settings.  Owned (sh_store_free); NULL with
 * err on OOM.  No directory or file is made until a block must be flushed. */
ShStore *sh_store_new(const CmConfig *cfg, CmErr *err);
/* The same from explicit options (tests, benchmarks). */
ShStore *sh_store_new_opts(const ShStoreOptions *o, CmErr *err);
/* Frees every shuffle still in the store, then removes its directory. */
void sh_store_free(ShStore *st);
void sh_store_stats(ShStore *st, ShStoreStats *out);
/* Counts the store's reservation of execution memory in `group` too (the
 * query's; NULL to stop before the group dies). */
void sh_store_set_mem_group(ShStore *st, CmMemGroup *group);
/* Frees the flushed blocks the store keeps for reuse (and their reservation):
 * a store that outlives its query (planner/keep.h) holds no memory idle. */
void sh_store_trim(ShStore *st);
/* The query's directory: "" until the first flush; borrowed until sh_store_free. */
const char *sh_store_directory(ShStore *st);

/* ---- shuffles -------------------------------------------------------------------- */

/* Counters of one exchange, for EXPLAIN ANALYZE.  Bytes are payload bytes as
 * encoded (before compression) unless said otherwise. */
typedef struct ShShuffleStats {
    int64_t rows;           /* rows committed */
    int64_t bytes_pushed;   /* bytes of committed blocks */
    int64_t blocks;         /* committed blocks */
    int64_t files;          /* files created: split data files, sorted files, indexes */
    int64_t splits;         /* splits begun, over all partitions */
    int64_t spilled_bytes;  /* bytes written to this shuffle's split files, as stored */
    int64_t sorted_on_read; /* splits sorted by a map-range read */
    int64_t pauses;         /* pushes into this shuffle that paused */
    int64_t paused_ms;      /* time they spent paused */
    int64_t map_reruns;     /* commits that replaced a committed or invalidated map */
    int64_t lost_maps;      /* maps whose committed blocks a reader found lost, so far */
} ShShuffleStats;

/* A shuffle in `store` (NULL: a private store with default settings, freed
 * with the shuffle).  Batches pushed must have n_cols columns of `types`
 * (copied).  Owned; NULL with err on OOM. */
ShShuffle *sh_shuffle_new(ShStore *store, int n_maps, int n_parts, int n_cols, const CmType *types,
                          CmErr *err);
/* Removes the shuffle's files and frees it.  No writer or reader may be open. */
void sh_shuffle_free(ShShuffle *sh);
int sh_shuffle_n_parts(const ShShuffle *sh);
int sh_shuffle_n_maps(const ShShuffle *sh);
/* Writes every buffered block of the shuffle to disk (CM_IO on failure). */
CmStatus sh_shuffle_flush(ShShuffle *sh, CmErr *err);
/* The same for partitions [p0, p1) only: a consumer that decoded them and is
 * refused memory frees what the store holds of the same rows.  Blocks a reader
 * still holds are freed when it closes, their reservation at once. */
CmStatus sh_shuffle_flush_parts(ShShuffle *sh, int p0, int p1, CmErr *err);
/* Splits of partition `part` so far. */
int sh_shuffle_n_splits(const ShShuffle *sh, int part);

/* ---- writing ------------------------------------------------------------------------ */

/* Opens the writer of map task `map_id`, attempt `attempt` (0 first; a re-run
 * uses a number above every attempt opened before: sh_shuffle_next_attempt).
 * Owned until sh_writer_close/abort.  CM_INTERNAL for a reused attempt. */
ShWriter *sh_writer_open(ShShuffle *sh, int map_id, int attempt, CmErr *err);
/* Serializes the active rows of `batch` (borrowed for the call) into a block of
 * partition `part`.  May block while the store is paused (flow control) and
 * may flush buffered blocks itself.  CM_IO when flushing failed. */
CmStatus sh_writer_push(ShWriter *w, int part, const CmBatch *batch, CmErr *err);
/* Commits the map output (it replaces any committed attempt of the map) and
 * frees the writer. */
CmStatus sh_writer_close(ShWriter *w, CmErr *err);
/* Discards the map output of this attempt and frees the writer. */
void sh_writer_abort(ShWriter *w);

/* ---- reading ------------------------------------------------------------------------ */

/* Opens a reader over partitions [p0, p1) and maps [m0, m1).  Owned. */
ShReader *sh_reader_open(ShShuffle *sh, int p0, int p1, int m0, int m1, CmErr *err);
/* The same, returning each map's blocks in the order its writer pushed them,
 * whether they were flushed to files or not (sh_reader_open returns buffered
 * blocks first, and starts skewed reads on different files). */
ShReader *sh_reader_open_in_order(ShShuffle *sh, int p0, int p1, int m0, int m1, CmErr *err);
/* Decodes the next block into `out` (columns of the shuffle's types; reset
 * first; strings copied into out->heap).  *eof is set when nothing is left.
 * CM_IO when blocks were lost (checksum, missing or damaged file): the reader
 * then checks the rest of its range first, so that sh_shuffle_lost_maps lists
 * every lost map it covers. */
CmStatus sh_reader_next(ShReader *r, CmBatch *out, bool *eof, CmErr *err);
void sh_reader_close(ShReader *r);

/* ---- statistics (exact, of committed output) ---------------------------------------- */

int64_t sh_shuffle_part_rows(const ShShuffle *sh, int part);
int64_t sh_shuffle_part_bytes(const ShShuffle *sh, int part);
int64_t sh_shuffle_map_part_bytes(const ShShuffle *sh, int map_id, int part);
int64_t sh_shuffle_map_part_rows(const ShShuffle *sh, int map_id, int part);
void sh_shuffle_stats(const ShShuffle *sh, ShShuffleStats *out);

/* ---- faults and re-runs ----------------------------------------------------------------- */

/* Writes up to cap lost map ids (ascending) into maps; returns how many are
 * lost.  A map stays lost until it is invalidated or a new attempt commits. */
int sh_shuffle_lost_maps(const ShShuffle *sh, int *maps, int cap);
/* Withdraws the committed output of map_id (its blocks become invisible and
 * its statistics are subtracted) so that a re-run attempt can be committed. */
void sh_shuffle_invalidate_map(ShShuffle *sh, int map_id);
/* The committed attempt of map_id, or -1. */
int sh_shuffle_committed_attempt(const ShShuffle *sh, int map_id);
/* An attempt number not used yet for map_id. */
int sh_shuffle_next_attempt(const ShShuffle *sh, int map_id);

/* ---- test-only fault injection (compiled always; never used by the engine) ---- */

typedef enum ShDamage {
    SH_DAMAGE_PAYLOAD, /* flip a payload byte: a checksum mismatch */
    SH_DAMAGE_HEADER,  /* flip a header byte: the rest of the split is unreadable */
} ShDamage;

/* Flushes partition `part`, then damages the first on-disk block of the
 * committed attempt of map_id in it.  CM_INTERNAL when there is none. */
CmStatus sh_shuffle_debug_corrupt(ShShuffle *sh, int part, int map_id, ShDamage what, CmErr *err);
/* Flushes partition `part`, then deletes the data file of its split `split`. */
CmStatus sh_shuffle_debug_delete_file(ShShuffle *sh, int part, int split, CmErr *err);
