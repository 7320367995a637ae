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

#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"
#include "executor/progress.h"
#include "executor/result.h"
#include "storage/catalog.h"

typedef struct PlSession PlSession;

typedef struct PlResult {
    ExResult *rows;   /* owned; NULL for statements without rows */
    int n_cols;
    char **names;     /* owned */
    int64_t changes;  /* rows inserted/updated/deleted, -1 otherwise */
} PlResult;

/* Owned; NULL with err on failure. */
PlSession *pl_session_new(CmErr *err);
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

/* Stops the statement running in s, which fails with CM_CANCELLED
 * "interrupted" at its next batch; nothing when none runs.  Async-signal-safe
 * (one atomic store) and callable from any thread. */
void pl_session_interrupt(PlSession *s);

void pl_result_free(PlResult *r);

/* SET name = value, with value as text. */
CmStatus pl_session_set(PlSession *s, const char *name, const char *value, CmErr *err);

/* Borrowed. */
StCatalog *pl_session_catalog(PlSession *s);
