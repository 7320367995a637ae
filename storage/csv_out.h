/*
 * csv_out.h - COPY ... TO's CSV writer: batches in, CSV records out to a
 * stream, in the order the batches come, with the formatting spread over
 * threads of the writer's own.
 *
 * Each batch's rows are cut into slices formatted at once into text buffers
 * (the calling thread works too), and the text of a batch is written to the
 * stream while the next batch is formatted: the query's last task (an ORDER
 * BY's one gathered task) no longer formats alone while the other cores idle.
 * The buffers are reserved as execution memory (common/mem.h) and kept from
 * batch to batch; when the manager refuses them, a batch is written a row at
 * a time as before, so memory_limit holds.  The bytes written are those of
 * the one-thread writer exactly.  Not thread-safe: one call at a time (from
 * any thread).  Into a regular file with several threads, each thread
 * writes the text it formatted itself, with pwrite at its place (csv_out.c);
 * a failed pwrite is a CM_IO error of st_csv_out_write or _finish.  Other
 * write errors stay in the stream (ferror), for whoever closes it.
 */
#pragma once

#include <stdio.h>

#include "common/err.h"
#include "common/vec.h"

typedef struct StCsvOut StCsvOut;

typedef struct StCsvOutOptions {
    char delimiter;
    char quote;           /* 0: never quote */
    const char *null_str; /* the text of a NULL; borrowed until st_csv_out_free */
    const char *name;     /* the file, for messages; borrowed; may be NULL */
} StCsvOutOptions;

/* A writer to f (borrowed until st_csv_out_free) formatting on n_threads
 * threads (the caller's included; 1: the caller alone).  Owned; NULL with
 * err (CM_OOM). */
StCsvOut *st_csv_out_new(FILE *f, const StCsvOutOptions *opt, int n_threads, CmErr *err);
/* Formats the active rows of b (borrowed for the call) and writes them after
 * those of the earlier calls; part of them may still be pending on return. */
CmStatus st_csv_out_write(StCsvOut *w, const CmBatch *b, CmErr *err);
/* Writes whatever is pending to the stream (not flushed). */
CmStatus st_csv_out_finish(StCsvOut *w, CmErr *err);
/* Stops the threads and frees the buffers; pending text is dropped.  NULL is fine. */
void st_csv_out_free(StCsvOut *w);
