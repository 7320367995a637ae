/*
 * spill.h - spill files: runs of batches that an operator writes out when its
 * memory reservation is refused (common/mem.h), and reads back later.
 *
 * A spill file is a sequence of shuffle blocks (block.h: columnar, checksummed,
 * zstd-compressed when it pays), written and then read front to back.  The file
 * is created in `temp_directory` and unlinked at once, so it disappears when it
 * is closed or the process dies, whatever the query's fate: nothing is left
 * behind by an error, a cancel or kill -9.  Bytes written count against the
 * process-wide `max_temp_directory_size`; going over it, a full disk or an
 * unwritable directory is CM_IO naming the directory.
 * One spill file is used by one thread at a time; the temp-space counters are
 * atomic.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/types.h"
#include "common/vec.h"

typedef struct ShSpill ShSpill;

/* A new, empty spill file in `dir`.  `max_temp` caps the temp bytes of the
 * whole process (<= 0: no cap).  Owned (sh_spill_free); NULL with err. */
ShSpill *sh_spill_new(const char *dir, int64_t max_temp, CmErr *err);
/* Appends the active rows of b (borrowed for the call).  Not after rewind. */
CmStatus sh_spill_append(ShSpill *s, const CmBatch *b, CmErr *err);
/* Ends writing (or restarts reading): the next read returns the first batch. */
CmStatus sh_spill_rewind(ShSpill *s, CmErr *err);
/* Reads the next batch into out (reset first; out has the spilled columns'
 * types, strings land in out->heap).  *eof set, out empty, after the last. */
CmStatus sh_spill_read(ShSpill *s, CmBatch *out, bool *eof, CmErr *err);
/* After rewind: the position of the next batch to read, and a move back to
 * one it returned, so several cursors can read one file, each from its own
 * position (each seeks before it reads). */
int64_t sh_spill_tell(const ShSpill *s);
void sh_spill_seek(ShSpill *s, int64_t pos);
int64_t sh_spill_rows(const ShSpill *s);
/* Bytes of the file on disk. */
int64_t sh_spill_bytes(const ShSpill *s);
/* Closes the file (its space is freed) and frees s.  NULL is fine. */
void sh_spill_free(ShSpill *s);

/* Process-wide temp space of spill files: now and the peak since the last reset. */
int64_t sh_temp_used(void);
int64_t sh_temp_peak(void);
void sh_temp_peak_reset(void);
/* Process-wide totals of spill files since the process started: bytes written,
 * and nanoseconds spent appending and reading batches (encoding, compression
 * and the I/O).  What execution paid for lack of memory: the auto memory mode
 * weighs it against cache misses (docs/memory.md). */
void sh_spill_totals(int64_t *bytes, int64_t *ns);
/* Counts bytes of temp files written elsewhere (the shuffle store): CM_IO when
 * that would pass max_temp (<= 0: no cap).  Release with a negative count. */
CmStatus sh_temp_charge(int64_t bytes, int64_t max_temp, const char *dir, CmErr *err);
