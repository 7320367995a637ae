/*
 * physical.h - cuts a logical plan into a stage DAG and runs it.
 *
 * Exchanges are placed where the data must move: a hash exchange between the
 * partial and final halves of a grouped aggregate, a gather (one partition)
 * before a global aggregate's final half, a sort or a final LIMIT.  Every
 * exchange goes through the shuffle store.  Stages are listed in an order in
 * which each one's inputs come before it; the driver runs them in that order,
 * which is the point where the adaptive rules (planner/aqe/) step in.
 * Everything but the shuffles and the result lives in the query arena.
 */
#pragma once

#include "common/config.h"
#include "executor/result.h"
#include "executor/stage.h"
#include "planner/keep.h"
#include "planner/plan.h"
#include "shuffle/shuffle.h"

/* Kept partitioned forms a plan reads, and keepable exchanges it offers, at most. */
#define PL_KEEP_PER_PLAN 8

typedef struct PlStagePlan {
    int n_stages;
    ExStage **stages; /* execution order; the last one produces the result */
    int n_shuffles;
    ShShuffle **shuffles;      /* slots, filled when writers start; owned */
    ShStore *store;            /* the shuffles' store, made when the plan runs; owned (freed
                                  after the shuffles) */
    ExResult *result;          /* owned until taken */
    int n_decisions;           /* adaptive decisions taken while running, for EXPLAIN */
    const char *decisions[64]; /* each a JSON object, in the query arena */
    CmArena *arena;            /* the query arena (for the adaptive rewrites) */
    /* measured by the run, for EXPLAIN ANALYZE */
    int64_t peak_memory_bytes;    /* the most the query reserved at once */
    int64_t peak_rss_bytes;       /* the process's peak RSS while it ran (VmHWM) */
    int64_t peak_temp_bytes;      /* the most temp-file space held while it ran */
    int64_t before_spilled_bytes; /* what the runs the binder made first spilled (WITH
                                     RECURSIVE rounds, cached subplans); counted in
                                     pl_spilled_bytes, and the three peaks above cover them */
    int64_t total_ns;             /* how long it ran, stages and adaptive rules together */
    int64_t statement_ns;         /* EXPLAIN ANALYZE: the whole statement, binding (with any
                                     WITH RECURSIVE rounds) and planning too; 0 if unknown */
    int n_cached_scans;           /* scans of cached rows (planner/cache.h), for EXPLAIN */
    const ExOp *cached_scans[16];
    bool cached_is_shared[16]; /* the scan reads a shared subtree's rows (SHARED SCAN) */
    /* Partitioned forms kept across statements (planner/keep.h), when planned
     * with a keeper: the exchanges read from kept shuffles (their slots are
     * borrowed, never freed here), and the keepable exchanges the run writes
     * (sh is read from each slot), offered to the keeper when the plan is
     * finished. */
    PlKeep *keep;
    int n_keep_used;
    PlKeepKey *keep_used[PL_KEEP_PER_PLAN];
    ShShuffle **keep_borrowed[PL_KEEP_PER_PLAN];
    int n_keep_wrote;
    PlKeepWrote keep_wrote[PL_KEEP_PER_PLAN];
    ShShuffle **keep_slot[PL_KEEP_PER_PLAN];
    int64_t keep_cap;       /* bytes the kept forms may hold: max_temp_directory_size / 4 */
    bool keep_ran, keep_ok; /* set by the runner: the plan ran, and succeeded */
} PlStagePlan;

/* Builds the stages for `root`, reading the partitioned forms `keep` has
 * kept (NULL: none).  On failure *plan is left safe to fini. */
CmStatus pl_physical_plan(CmArena *a, const PlNode *root, const CmConfig *cfg, PlKeep *keep,
                          PlStagePlan *plan, CmErr *err);

/* Runs the stages in order on q's pool. */
CmStatus pl_run_plan(PlStagePlan *plan, ExQuery *q, CmErr *err);

/* Frees shuffles, operator states and the result unless it was taken (NULLed).
 * A plan that ran (keep_ran) first tells its keeper what it read and wrote
 * (pl_keep_done), which may take the written shuffle and the store. */
void pl_stage_plan_fini(PlStagePlan *plan);

/* The stage DAG as text, one line per element through `emit` (with analyze:
 * tasks, rows and time measured by the run, and the memory they took). */
void pl_explain_plan(const PlStagePlan *plan, bool analyze,
                     void (*emit)(void *ctx, const char *line), void *ctx);
/* EXPLAIN ANALYZE's last line: how long the run took ("Total: 1.234 ms"). */
void pl_explain_total(const PlStagePlan *plan, void (*emit)(void *ctx, const char *line),
                      void *ctx);

/* Bytes every operator of the plan wrote to spill files. */
int64_t pl_spilled_bytes(const PlStagePlan *plan);

/* The stage DAG as one JSON document: {"stages": [...], "adaptive": [...]},
 * each stage with id, tasks, rows_out, operators and, where it writes a
 * shuffle, the shuffle's counters.  Owned (cm_free); NULL on OOM. */
char *pl_explain_json(const PlStagePlan *plan, bool analyze);
