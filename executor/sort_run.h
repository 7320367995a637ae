/*
 * sort_run.h - the external sort shared by ORDER BY (sort.c) and window
 * functions (window.c): one task's rows in, the same rows out in key order.
 *
 * Rows are buffered in compacted batches while the memory manager grants them
 * (common/mem.h); when a reservation is refused the buffered rows are sorted
 * and written to a spill file as a sorted run (shuffle/spill.h), their memory
 * is released, and buffering goes on.  At the end, with no run written, the
 * rows are sorted in memory and stay there (no spill, no copy: the common
 * case costs what a plain in-memory sort does; rows are sorted by normalized
 * keys, sort_key.h).  Otherwise the last part is
 * written as a run too and the runs are k-way merged with a heap, reading one
 * batch of each run at a time; when more runs exist than the memory for one
 * batch each (or EX_SORTER_MAX_FANIN) allows, groups of neighbouring runs are
 * first merged into longer runs.
 * Ties keep input order: runs hold consecutive stretches of the input, each
 * sorted stably, and the merge breaks ties by run index, so the output equals
 * the in-memory sort's exactly.  With a limit only the first `limit` rows come
 * out, and no run keeps more than that.
 * An ExSorter belongs to one task; not thread-safe.  Its spill files are
 * closed by ex_sorter_free on every path.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/mem.h"
#include "common/vec.h"
#include "executor/op.h"
#include "executor/ops.h"

/* Runs merged at once at most. */
#define EX_SORTER_MAX_FANIN 64
/* Runs held (each an open file) before neighbours are merged while rows still
 * arrive: a sorter granted less than a batch writes a run per batch. */
#define EX_SORTER_MAX_RUNS (4 * EX_SORTER_MAX_FANIN)

typedef struct ExSorter ExSorter;

/* A row of the in-memory sorted rows: batch index and row in it. */
typedef struct ExRowRef {
    uint32_t batch;
    uint32_t row;
} ExRowRef;

/* Compares row ra of batch a with row rb of batch b (same layout, no
 * selection) on keys[0..n_keys): < 0, 0 or > 0.  NULLs order as each key
 * says; NaN sorts after every number. */
int ex_sort_compare_rows(const ExSortKey *keys, int n_keys, const CmBatch *a, uint32_t ra,
                         const CmBatch *b, uint32_t rb);
/* Compares the rows ra and rb of batches[] by keys[0..n_keys), then by
 * (batch, row): a total order, under which a sort is stable. */
int ex_sort_compare_refs(const ExSortKey *keys, int n_keys, const CmBatch *const *batches,
                         const ExRowRef *ra, const ExRowRef *rb);

/* A sorter of rows with n_cols columns of `types` on keys[0..n_keys) (copied),
 * keeping the first `limit` rows (-1: all).  Memory is reserved for op in
 * query q under the name `what` (static); spill files go to q's
 * temp_directory (the default one when q is NULL) and are counted on op.
 * Owned (ex_sorter_free); NULL with err. */
ExSorter *ex_sorter_new(ExOp *op, ExQuery *q, const char *what, int n_cols, const CmType *types,
                        int n_keys, const ExSortKey *keys, int64_t limit, CmErr *err);
/* Sorts buffered rows (in memory, or before writing a run) on n_threads
 * threads (default 1): for a sorter whose task runs alone in its stage, so
 * that the other workers would otherwise wait. */
void ex_sorter_set_threads(ExSorter *s, int n_threads);
/* The rows will arrive in key order already (a window after one on the same
 * keys): they keep their order, unsorted; runs and merge work as before. */
void ex_sorter_set_presorted(ExSorter *s);
/* Frees s, its rows, its spill files and its reservation.  NULL is fine. */
void ex_sorter_free(ExSorter *s);

/* Adds the active rows of `in` (borrowed for the call; strings are copied),
 * or keeps them in place when `in` views a table's chunk (cm_batch_keep:
 * the chunk stays pinned until a run is written or s is freed).  May write a
 * sorted run.  CM_IO from the spill file. */
CmStatus ex_sorter_add(ExSorter *s, const CmBatch *in, CmErr *err);
/* Ends the input: sorts in memory, or writes the last run and prepares the
 * merge.  Called once, before ex_sorter_next. */
CmStatus ex_sorter_finish(ExSorter *s, CmErr *err);
/* Resets `out` (n_cols columns of the sorter's types) and fills it with the
 * next rows in order, up to CM_BATCH_CAP; *has_more false when no row is left
 * after them.  Strings of out are borrowed until the next call or the free. */
CmStatus ex_sorter_next(ExSorter *s, CmBatch *out, bool *has_more, CmErr *err);

/* After finish: true when nothing was spilled; then batches[0..) and
 * order[0..*n) are the sorted rows, borrowed until ex_sorter_free (the caller
 * may read them in place instead of calling ex_sorter_next). */
bool ex_sorter_in_memory(const ExSorter *s, const CmBatch *const **batches, const ExRowRef **order,
                         int64_t *n);
/* Bytes the active rows of b (the sorter's layout) take once buffered:
 * fixed-width values, out-of-line string bytes, one ExRowRef per row and the
 * normalized key the row has while it is sorted. */
int64_t ex_sorter_row_bytes(const ExSorter *s, const CmBatch *b);
/* Sorted runs written so far (intermediate merges included). */
int ex_sorter_n_runs(const ExSorter *s);
