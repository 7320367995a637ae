/*
 * progress.h - how far the running statement is, for a progress bar.
 *
 * Done work is a count of parts per billion (EX_PROGRESS_ONE) that only grows.
 * When a stage starts, the planner's driver gives it a span [done, end) of
 * what remains of its plan, in proportion to its estimated work among the
 * stages still to run, so a stage the adaptive optimizer added or rewrote
 * re-weights only the remaining share.  Each finished task adds span / tasks,
 * never past the stage's end; the stage's end moves done to it.  Readers see
 * at most 99.9% until the statement finishes, which sets exactly 100%: the bar
 * never goes back and never shows 100% while anything is left to do.
 * One ExProgress per session, reused by each statement.  The driver calls
 * (begin, plan_begin, stage_*, decision, finish) come from the thread running
 * the statement; ex_progress_task_done from any worker (one atomic add);
 * ex_progress_read from any thread.  With a handler set, a watcher thread
 * calls it every EX_PROGRESS_TICK_MS while a statement runs, once the
 * statement has run progress_bar_time ms, unless enable_progress_bar is off.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/config.h"

#define EX_PROGRESS_ONE 1000000000LL /* done work of a finished statement */
#define EX_PROGRESS_CAP 999000000LL  /* the most shown while it runs (99.9%) */
#define EX_PROGRESS_TICK_MS 100

typedef struct ExProgress ExProgress;

/* A reading of the running statement. */
typedef struct ExProgressView {
    double fraction;       /* 0..1, never below an earlier reading of the statement */
    int stage;             /* id of the running stage (as EXPLAIN numbers it), -1: none */
    int n_stages;          /* stages of the running plan */
    int64_t elapsed_ms;    /* since the statement started */
    int64_t spilled_bytes; /* written to spill files by the statement so far */
    char decision[96];     /* the last adaptive decision, "" if none */
} ExProgressView;

/* Called by the watcher thread, never twice at once; view borrowed for the call. */
typedef void (*ExProgressFn)(void *ctx, const ExProgressView *view);

/* Owned; NULL on OOM. */
ExProgress *ex_progress_new(void);
void ex_progress_free(ExProgress *p);

/* Sets (fn NULL: removes) the handler; between statements only. */
void ex_progress_set_handler(ExProgress *p, ExProgressFn fn, void *ctx);

/* A statement starts: done work back to 0, the log of cfg->debug_progress_log
 * opened (appended to), the watcher started when a handler is set and
 * cfg->enable_progress_bar.  Failing to open the log or start the watcher
 * loses only the display. */
void ex_progress_begin(ExProgress *p, const CmConfig *cfg);
/* A plan starts; it may take `share` (0..1] of what remains of the statement
 * (1 for the statement's own query; less for the queries it runs first, whose
 * number is not known in advance).  Returns the previous plan's end, for
 * ex_progress_plan_end. */
int64_t ex_progress_plan_begin(ExProgress *p, double share);
/* The plan ended: done moves to its end; prev_end (plan_begin's) is restored. */
void ex_progress_plan_end(ExProgress *p, int64_t prev_end);
/* Stage `stage_id` (of n_stages in the plan) starts and gets `share` (0..1]
 * of what remains of the plan. */
void ex_progress_stage_begin(ExProgress *p, int stage_id, int n_stages, double share);
/* A step that is not run as tasks (COPY FROM's parallel load) has done
 * `fraction` (0..1) of the running stage's span. */
void ex_progress_advance(ExProgress *p, double fraction);
/* The running stage has n_tasks tasks. */
void ex_progress_stage_tasks(ExProgress *p, int n_tasks);
/* A task of the running stage finished; its stage's operators have spilled
 * stage_spilled bytes so far.  Any thread; p may be NULL. */
void ex_progress_task_done(ExProgress *p, int64_t stage_spilled);
/* The running stage finished, having spilled stage_spilled bytes. */
void ex_progress_stage_end(ExProgress *p, int64_t stage_spilled);
/* An adaptive decision, as a short text ("stage 3: join → broadcast"); copied. */
void ex_progress_decision(ExProgress *p, const char *text);
/* The statement ended: the watcher stops (its handler is not called after
 * this returns), done work becomes 100% if it succeeded, the log is closed. */
void ex_progress_finish(ExProgress *p, bool ok);

/* Reads the running (or last) statement's progress. */
void ex_progress_read(ExProgress *p, ExProgressView *out);
