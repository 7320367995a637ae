/*
 * api_int.h - what the files of the embedding API share (never included
 * outside api/).
 *
 * A SluiceDb is one connection: its own session over the database's shared
 * catalog.  SluiceDatabase is the database itself; `lock` serializes the
 * statements of all its connections (see the Threads paragraph of sluice.h),
 * and is taken by the thread that runs the statement: the caller's, or a
 * stream's producer thread.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>

#include "api/sluice.h"
#include "common/arena.h"
#include "common/thread.h"
#include "common/types.h"
#include "planner/session.h"

typedef struct SluiceDatabase {
    CmMutex lock;       /* held while a statement of any connection runs */
    atomic_int n_conns; /* open connections; the last to close frees the database */
    PlSession *owner;   /* the first connection's session: owns catalog and cache */
} SluiceDatabase;

struct SluiceDb {
    SluiceDatabase *shared;       /* borrowed; freed by the last connection */
    PlSession *session;           /* == shared->owner for the first connection */
    atomic_bool is_streaming;     /* a stream is open: the connection is busy */
    SluiceProgressFn progress_fn; /* the embedder's progress handler, or NULL */
    void *progress_ctx;
};

struct SluiceResult {
    PlResult *r;        /* owned */
    const char **text;  /* n_rows * n_cols, lazily formatted; owned */
    CmArena text_arena; /* the texts and strings handed out */
};

/* Fills out (may be NULL) from e; line and column when sql is given. */
void api_to_error(const CmErr *e, const char *sql, size_t len, SluiceError *out);

/* A result over r (taken over; freed with the wrapper), NULL on OOM (r freed). */
SluiceResult *api_result_wrap(PlResult *r);

/* Runs the statement at sql[*off] on db's session with opts, under the
 * database lock: api_exec for the caller's thread.  Fails with SLUICE_MISUSE
 * while a stream is open on db.  *res as sluice_exec_next's. */
int api_exec(SluiceDb *db, const char *sql, size_t len, size_t *off, const PlExecOpts *opts,
             SluiceResult **res, SluiceError *err);

/* The value of a cell (strings borrowed from the result, valid until the next
 * call on it); is_null with type NULL for a missing row. */
void api_cell(const SluiceResult *res, int64_t row, int col, CmValue *v);

/* Parses sql[0..len) as exactly one statement: SLUICE_OK with its parameter
 * count, or the error (a second statement is SLUICE_SYNTAX at its start). */
int api_check_one(const char *sql, size_t len, int *n_params, CmErr *err);

/* Starts sql[0..len) (one statement) as a stream on db with opts (params
 * borrowed until it returns: they are bound before it does). */
int api_stream_start(SluiceDb *db, const char *sql, size_t len, const PlExecOpts *opts,
                     SluiceStream **out, SluiceError *err);

/* The API's name for an engine type. */
SluiceType api_type_of(CmType t);

/* Fills err (may be NULL) with "a streaming result is open on this
 * connection"; returns SLUICE_MISUSE. */
int api_misuse(SluiceError *err);
