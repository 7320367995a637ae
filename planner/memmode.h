/*
 * memmode.h - the memory modes at the statement level, and the controller of
 * the auto mode (docs/memory.md, "Memory modes").
 *
 * Each statement applies its session's memory_mode, storage_fraction and
 * shuffle_fraction to the memory manager (common/mem.h), which enforces the
 * split.  In the auto mode, at the end of each statement, the controller looks
 * at what the statement paid for lack of memory on each side: execution's
 * spill files (bytes, and time writing and reading them: shuffle/spill.h)
 * against storage's cache misses (blocks evicted from memory and loaded back
 * from disk: storage/blocks.h; cached rows dropped and recomputed: the cache
 * calls pl_memmode_note_recompute).  When one side paid more than 1.25 times
 * the other, the protected storage share moves by 5% of memory_limit toward
 * it, within [10%, storage + shuffle - 10%].  The counters and the boundary
 * belong to the process, as the limit does.  Thread-safe.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/config.h"

/* What the process has paid for lack of memory since it started. */
typedef struct PlMemObs {
    int64_t spill_bytes, spill_ns;    /* written to spill files; time in them */
    int64_t miss_loads, miss_load_ns; /* evicted blocks loaded back; time */
    int64_t recomputes, recompute_ns; /* cached rows recomputed after a drop; time */
    int64_t refusals;                 /* execution growth refused (cm_mem_grow) */
} PlMemObs;

/* Applies cfg's mode and shares to the memory manager (each statement). */
void pl_memmode_apply(const CmConfig *cfg);
/* The totals now, taken when a statement starts; it also starts the window
 * over execution memory (cm_mem_window_start) whose peak is the statement's
 * demand. */
void pl_memmode_observe(PlMemObs *out);
/* Counts one recompute of cached rows the block store dropped, of `ns`. */
void pl_memmode_note_recompute(int64_t ns);
/* Ends a statement that started at `start`: in the auto mode, moves the
 * boundary as the header says.  Returns the line EXPLAIN ANALYZE shows (in
 * `arena`; without "Memory: "), or NULL in the unified mode or when the
 * arena is NULL or full. */
const char *pl_memmode_step(const PlMemObs *start, CmArena *arena);
/* The auto mode's last move, as text, for sluice_memory; false when it has
 * not decided anything since the mode was set. */
bool pl_memmode_last(char *buf, size_t cap);
