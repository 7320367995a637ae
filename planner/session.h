/*
 * session.h - a database session: the catalog, the settings, the worker pool,
 * and the execution of one statement after another.
 *
 * pl_session_exec() parses the next statement of a text, binds and plans it,
 * runs it, and returns its rows (or nothing for DDL).  Each statement gets a
 * fresh query arena that dies when the statement ends; results own their
 * memory.  A statement that fails leaves the catalog and every table as they
 * were.  One session is used by one thread at a time.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"
#include "executor/progress.h"
#include "executor/result.h"
#include "planner/bind/binder.h"
#include "storage/catalog.h"

typedef struct PlSession PlSession;

typedef struct PlResult {
    ExResult *rows; /* owned; NULL for statements without rows */
    int n_cols;
    char **names;    /* owned */
    int64_t changes; /* rows inserted/updated/deleted, -1 otherwise */
} PlResult;

/* Owned; NULL with err on failure. */
PlSession *pl_session_new(CmErr *err);
/* A session over the catalog and cache of `first` (borrowed: it must outlive
 * the new one), with settings, worker pool and interrupt flag of its own.
 * The caller makes sure statements of sessions sharing a catalog never run
 * at the same time.  Owned; NULL with err on failure. */
PlSession *pl_session_new_shared(PlSession *first, CmErr *err);
void pl_session_free(PlSession *s);

/* Runs the statement at or after sql[*off]; see sluice_exec_next in api/sluice.h
 * for the contract on *off and *res. */
CmStatus pl_session_exec(PlSession *s, const char *sql, size_t len, size_t *off, PlResult **res,
                         CmErr *err);

/* Sets the handler the session calls with the running statement's progress
 * (executor/progress.h: from a watcher thread, every 100 ms once the
 * statement has run progress_bar_time ms, unless enable_progress_bar is off);
 * fn NULL removes it.  Between statements only. */
void pl_session_set_progress(PlSession *s, ExProgressFn fn, void *ctx);

/* How pl_session_exec_opts runs a statement beyond pl_session_exec. */
typedef struct PlExecOpts {
    const PlParams *params; /* values of `?`/`$n`, borrowed for the call; NULL: none */
    /* A SELECT's rows go to stream(stream_ctx, batch) as the query makes them
     * (worker threads, one call at a time, in the result's order) instead of
     * into the result, whose `rows` stay empty; start(stream_ctx, ...) is
     * called once, before any row, with the columns (names and types borrowed
     * for the call).  An error either returns fails the statement.  Other
     * statements ignore both.  NULL stream: rows are collected as usual. */
    ExResultStreamFn stream;
    CmStatus (*start)(void *ctx, int n_cols, const char *const *names, const CmType *types,
                      CmErr *err);
    void *stream_ctx;
} PlExecOpts;

/* pl_session_exec with opts (NULL: as pl_session_exec). */
CmStatus pl_session_exec_opts(PlSession *s, const char *sql, size_t len, size_t *off,
                              const PlExecOpts *opts, PlResult **res, CmErr *err);

/* Stops the statement running in s, which fails with CM_CANCELLED
 * "interrupted" at its next batch; nothing when none runs.  Async-signal-safe
 * (one atomic store) and callable from any thread. */
void pl_session_interrupt(PlSession *s);

/* True while this connection's BEGIN has a transaction open (planner/session.c
 * describes the semantics). */
bool pl_session_in_transaction(const PlSession *s);
/* Rolls back this connection's open transaction, if any (a connection closing). */
void pl_session_rollback(PlSession *s);

/* True when pl_session_interrupt was called since the running statement
 * started.  Any thread. */
bool pl_session_is_interrupted(PlSession *s);

void pl_result_free(PlResult *r);

/* SET name = value, with value as text. */
CmStatus pl_session_set(PlSession *s, const char *name, const char *value, CmErr *err);

/* Borrowed. */
StCatalog *pl_session_catalog(PlSession *s);

/* Makes s (a first session, its catalog still empty) a directory database:
 * opens or creates `dir` and loads it (storage/persist.h); from then on every
 * statement that changes the catalog or a table commits to it before it is
 * reported done, and a `readonly` database refuses such statements.  CM_IO
 * when the directory is locked, damaged or of another format version. */
CmStatus pl_session_attach(PlSession *s, const char *dir, bool readonly, CmErr *err);
