/*
 * shuffle.h - the shuffle store's API: how stages exchange data.
 *
 * One ShShuffle is one exchange: n_maps map tasks each push column batches
 * into n_parts reduce partitions; reduce tasks read a partition range
 * [p0, p1), optionally restricted to a map-id range [m0, m1) (for skew splits).
 * A pushed batch becomes a block: a header (map id, attempt, sequence number,
 * rows, raw bytes, stored bytes, codec, xxh64 checksum) and a column-serialized
 * payload.  All blocks of one partition, from every mapper, are appended to
 * that partition (push aggregation).  A map task's blocks become visible to
 * readers only when its writer closes (commit); blocks of any other attempt of
 * the same map are skipped, so a re-run never double-counts.
 * Exact statistics per (map, partition) — rows and bytes — are kept for the
 * adaptive planner.  This version keeps blocks in memory; see docs/.
 * Thread-safety: writers of different maps and readers of committed data may
 * run concurrently; one writer or reader is used by one thread.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/types.h"
#include "common/vec.h"

typedef struct ShShuffle ShShuffle;
typedef struct ShWriter ShWriter;
typedef struct ShReader ShReader;

/* Counters of one exchange, for EXPLAIN ANALYZE. */
typedef struct ShShuffleStats {
    int64_t rows;         /* rows committed */
    int64_t bytes_pushed; /* stored bytes of committed blocks */
    int64_t blocks;       /* committed blocks */
} ShShuffleStats;

/* Owned; NULL with err on OOM.  Batches pushed must have n_cols columns of
 * `types` (copied). */
ShShuffle *sh_shuffle_new(int n_maps, int n_parts, int n_cols, const CmType *types, CmErr *err);
void sh_shuffle_free(ShShuffle *sh);
int sh_shuffle_n_parts(const ShShuffle *sh);
int sh_shuffle_n_maps(const ShShuffle *sh);

/* Opens the writer of map task `map_id` (attempt 0, 1, ...).  Owned until
 * sh_writer_close/abort. */
ShWriter *sh_writer_open(ShShuffle *sh, int map_id, int attempt, CmErr *err);
/* Serializes the active rows of `batch` into a block of partition `part`. */
CmStatus sh_writer_push(ShWriter *w, int part, const CmBatch *batch, CmErr *err);
/* Commits the map output and frees the writer. */
CmStatus sh_writer_close(ShWriter *w, CmErr *err);
/* Discards the map output of this attempt and frees the writer. */
void sh_writer_abort(ShWriter *w);

/* Opens a reader over partitions [p0, p1) and maps [m0, m1).  Owned. */
ShReader *sh_reader_open(ShShuffle *sh, int p0, int p1, int m0, int m1, CmErr *err);
/* Decodes the next block into `out` (columns of the shuffle's types; reset
 * first; strings copied into out->heap).  *eof is set when nothing is left. */
CmStatus sh_reader_next(ShReader *r, CmBatch *out, bool *eof, CmErr *err);
void sh_reader_close(ShReader *r);

/* Exact statistics of committed output. */
int64_t sh_shuffle_part_rows(const ShShuffle *sh, int part);
int64_t sh_shuffle_part_bytes(const ShShuffle *sh, int part);
int64_t sh_shuffle_map_part_bytes(const ShShuffle *sh, int map_id, int part);
void sh_shuffle_stats(const ShShuffle *sh, ShShuffleStats *out);
