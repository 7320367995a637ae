/*
 * sort_key.h - sorting row references by normalized keys: the in-memory sort
 * of the external sorter (sort_run.c).
 *
 * Each row's ORDER BY keys are encoded once into a fixed-width byte string
 * whose memcmp order is the keys' order (integers big-endian with the sign
 * bit flipped, doubles by their ordered bit pattern, strings as a prefix and a
 * clamped length byte, a NULL byte per key that holds NULLs, DESC by flipping
 * the bytes), followed by the row reference itself, big-endian, so that ties
 * keep input order.  The entries are radix-sorted (MSD, in place); only
 * neighbours whose encoded keys are equal and not known to be exact (strings
 * longer than their prefix, keys that are not encoded) are compared again on
 * the full values.  The result equals a comparison sort by
 * ex_sort_compare_rows and then (batch, row).
 * Stateless and thread-safe; memory is the caller's to reserve
 * (ex_sort_key_entry_bytes per row, twice on several threads).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/vec.h"
#include "executor/ops.h"
#include "executor/sort_run.h"

/* Upper bound of the bytes one row takes while ex_sort_refs runs, for rows
 * of `types` sorted on keys[0..n_keys). */
int64_t ex_sort_key_entry_bytes(const CmType *types, const ExSortKey *keys, int n_keys);
/* True when ex_sort_refs of n rows on n_threads threads would use them (and
 * its second array of entries). */
bool ex_sort_key_parallel(int64_t n, int n_threads);

/* Sorts refs[0..n) (rows of batches[], columns of `types`, no selection) by
 * keys[0..n_keys), ties by (batch, row).  With n_threads > 1 and enough rows
 * (ex_sort_key_parallel), the encoding, the first radix split, its buckets and
 * the decoding run on a pool of n_threads threads started for the call (the
 * caller among them), with a second array of entries (the caller reserves
 * both: ex_sort_key_entry_bytes per row each); the order is the same.  When
 * the second array or the threads cannot be had, the sort runs on the calling
 * thread.  CM_OOM when the work array cannot be allocated (refs are then
 * unchanged). */
CmStatus ex_sort_refs(const CmType *types, const ExSortKey *keys, int n_keys,
                      const CmBatch *const *batches, ExRowRef *refs, int64_t n, int n_threads,
                      CmErr *err);
