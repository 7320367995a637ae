/*
 * result.h - a materialized query result: compacted batches that own their
 * strings, plus column names.  Built by the result sink (appends under its
 * lock) and read by the API after the query finished.  Not thread-safe to read
 * while a query appends.
 */
#pragma once

#include <stdint.h>

#include "common/err.h"
#include "common/mem.h"
#include "common/types.h"
#include "common/vec.h"

typedef struct ExResult ExResult;

/* Owned; NULL on OOM. */
ExResult *ex_result_new(int n_cols, const CmType *types, CmErr *err);
void ex_result_free(ExResult *r);

/* Makes appends count what they allocate in `mem` (borrowed; NULL: none),
 * while the manager grants it; what is reserved stays reserved until mem is
 * released by its owner.  A query's final rows belong to its client and are
 * not spilled yet, so a refusal does not fail the query: they are the one
 * large holding that may pass memory_limit (docs/memory.md). */
void ex_result_set_mem(ExResult *r, CmMemRes *mem);

/* Rows handed on as they arrive instead of being kept: CTAS and INSERT append
 * them to their table.  Called from worker threads, one call at a time, with
 * the rows in the order the result would have held them. */
typedef CmStatus (*ExResultStreamFn)(void *ctx, const CmBatch *b, CmErr *err);

/* Makes the result sink of a plan whose result is r call fn(ctx, batch) for
 * its rows instead of appending them to r (which stays empty). */
void ex_result_set_stream(ExResult *r, ExResultStreamFn fn, void *ctx);
/* The stream set on r, or NULL (*ctx set too). */
ExResultStreamFn ex_result_stream(const ExResult *r, void **ctx);
/* Makes a streamed result's later tasks wait for their turn, once memory for
 * their rows is refused, instead of spilling them: for a stream read by a
 * client at its own pace (api/stream.c), whose unread rows would otherwise
 * pile up on disk.  The head task always runs, so a waiting task always gets
 * its turn. */
void ex_result_set_stream_waiting(ExResult *r);
bool ex_result_stream_waiting(const ExResult *r);

/* Block mode: makes r keep its rows in the tiered block store
 * (storage/blocks.h) instead of plain batches.  Each batch is the batch of a
 * MEMORY_AND_DISK block, reserved on `res` (STORAGE pool; borrowed, must
 * outlive r and every result its blocks move to) or, when res is NULL, on a
 * reservation r owns.  A full batch is sealed and let go of, so that memory
 * pressure moves it to disk: a query's final rows can be larger than
 * memory_limit.  Call before any row is appended.  Rows are read through
 * ex_result_row_batch or ex_result_pin; ex_result_batch gives NULL for a
 * sealed block. */
CmStatus ex_result_set_blocks(ExResult *r, CmMemRes *res, CmErr *err);
/* The reservation r's blocks are made on, or NULL when r is not in block mode. */
CmMemRes *ex_result_block_res(const ExResult *r);
/* Block mode: the first failure to load a block back for ex_result_row_batch
 * (which then returned NULL); code CM_OK when none. */
const CmErr *ex_result_read_err(const ExResult *r);

/* Moves src's batches to the end of dst (no copy); src is left empty.  The
 * last batch of dst may then be partly filled in the middle of the list.
 * Both are in block mode on the same reservation, or neither is; in block
 * mode the tails of both are sealed. */
CmStatus ex_result_move(ExResult *dst, ExResult *src, CmErr *err);

/* The batch holding row `row` (< n_rows) and its position in it; NULL on OOM
 * or, in block mode, when its block cannot be loaded (ex_result_read_err).
 * Not thread-safe (may index the batches on first use).  In block mode the
 * batch stays valid until the next call on r. */
const CmBatch *ex_result_row_batch(ExResult *r, int64_t row, uint32_t *pos);

/* Copies the active rows of `b` (strings included) to the end of the result. */
CmStatus ex_result_append(ExResult *r, const CmBatch *b, CmErr *err);

int ex_result_n_cols(const ExResult *r);
CmType ex_result_type(const ExResult *r, int col);
int64_t ex_result_n_rows(const ExResult *r);
/* Borrowed: the i-th stored batch (compacted, no selection).  Only for a
 * result without blocks (asserted): a sealed block's batch may be on disk,
 * and is read through ex_result_pin / ex_result_unpin. */
int ex_result_n_batches(const ExResult *r);
const CmBatch *ex_result_batch(const ExResult *r, int i);
/* The i-th batch for reading in either mode: in block mode pinned (loaded
 * back when evicted; NULL with err when it cannot be), and valid until
 * ex_result_unpin(r, i), which every non-NULL return is matched by. */
const CmBatch *ex_result_pin(ExResult *r, int i, CmErr *err);
void ex_result_unpin(ExResult *r, int i);
