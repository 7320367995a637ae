/*
 * chunks.h - writes one generated table file in parallel chunks, the same
 * bytes for any thread count (shared by tpcds_gen and tpch_gen).
 *
 * The table is a sequence of units cut into chunks of spec->chunk units; the
 * worker pool generates chunks into per-worker GenBufs (bufs[worker id]) and
 * appends chunk k to DIR/NAME.dat.tmp once chunks 0..k-1 are written (a turn
 * counter under a mutex).  The finished file is renamed to DIR/NAME.dat; on
 * error the temporary file is removed.  spec->fn must be safe to call
 * concurrently on disjoint unit ranges.  Progress and errors go to stderr.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "bench/tpcds/gen/gen.h"
#include "common/thread.h"

/* Appends units [first, end) of the table described by arg to b. */
typedef void (*GenChunkFn)(const void *arg, GenBuf *b, int64_t first, int64_t end);

typedef struct GenFileSpec {
    const char *prog; /* program name for messages */
    const char *dir;  /* output directory */
    const char *name; /* table name: the file is DIR/NAME.dat */
    GenChunkFn fn;
    const void *arg; /* passed to fn, read-only */
    int64_t n_units;
    int64_t chunk; /* units per task */
} GenFileSpec;

/* Writes the file; bufs has cm_pool_size(pool) entries, reused across calls
 * (the caller frees them with gen_buf_fini).  False after any error. */
bool gen_write_file(const GenFileSpec *spec, CmPool *pool, GenBuf *bufs);
