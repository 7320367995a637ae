/*
 * stage.h - stages: the unit the planner cuts a physical plan into, and their
 * execution on the worker pool.
 *
 * A stage is one pipeline (source -> ops -> sink) run as tasks.  The number of
 * tasks comes from the source (table morsels, shuffle partition ranges, or one).
 * Stages form a DAG through the shuffles they write and read; the planner's
 * driver runs a stage only after the stages it depends on have finished, which
 * is where the adaptive optimizer gets to rewrite what has not run yet.
 * ex_stage_run is called by one thread (the driver); it uses the pool.
 */
#pragma once

#include "executor/op.h"
#include "shuffle/shuffle.h"

/* One task's run, for the stage timeline (planner/timeline.h): two clock
 * reads per task.  Times are cm_now_ns() values. */
typedef struct ExTaskSpan {
    long long start_ns, end_ns;
    int task_idx;
    int worker_id; /* the pool's worker that ran it (cm_pool_run's id) */
} ExTaskSpan;

typedef struct ExStage ExStage;
struct ExStage {
    int id;
    ExOp *source;
    int n_ops;
    ExOp **ops; /* streaming operators, in pipeline order */
    ExOp *sink;
    int n_deps;
    ExStage **deps;       /* stages that must finish before this one */
    const char *exchange; /* what the sink writes, for EXPLAIN: "hash(#0)", "gather", "result" */
    ShShuffle **shuffle;  /* the shuffle the sink writes, NULL for the result stage */
    /* filled in when it runs */
    int n_tasks;
    bool done;
    bool skipped;     /* the adaptive optimizer merged its work into another stage, or its
                         output was kept by an earlier statement (kept) */
    const char *kept; /* the partitioned form read instead of running it (planner/keep.h),
                         for EXPLAIN, or NULL */
    bool coalesced;   /* the adaptive optimizer has set its partition ranges */
    long long time_ns;
    long long start_ns, end_ns; /* cm_now_ns() at ex_stage_run's start and end */
    int64_t mem_at_start;       /* bytes the query's operators held when it started: what
                                   earlier stages still hold (EXPLAIN ANALYZE's JSON) */
    /* Each task's span, in the query arena, in order of finishing: slots are
     * taken with an atomic counter; a re-run appends (the array grows on the
     * driver thread before its tasks start). */
    ExTaskSpan *spans;
    int span_cap;
    atomic_int n_spans;
    /* Per-task wall time, summed and the longest: the longest task bounds the
     * stage however many cores run it, so longest/sum shows skew that a
     * 2-core wall clock hides. */
    atomic_llong task_sum_ns;
    atomic_llong task_max_ns;
};

/* Runs the stage: global_init of every op, all tasks, combine, finalize.  The
 * ops' global states stay alive (results are read from the sink) until
 * ex_stage_fini.  The first failing task cancels the rest; its error is
 * returned. */
CmStatus ex_stage_run(ExStage *stage, ExQuery *q, CmErr *err);

/* Runs again only the given tasks of a stage that ran (lineage recovery: the
 * map tasks whose shuffle output was lost).  The sink's global state must
 * still be alive (no ex_stage_fini in between); the other ops' states are
 * made again when ex_stage_release freed them.  q's error must have been
 * cleared. */
CmStatus ex_stage_rerun_tasks(ExStage *stage, ExQuery *q, const int *tasks, int n_tasks,
                              CmErr *err);

/* Frees the global states of a finished stage's source and ops, keeping the
 * sink's (later stages and the caller read it).  Their states serve only the
 * stage's own tasks, and the largest of them, a broadcast join's table, held
 * to the end of the plan, left every later stage a fraction of execution
 * memory.  A rerun of the stage's tasks makes them again (and rebuilds the
 * table from its shuffle). */
void ex_stage_release(ExStage *stage);

/* Releases the global states of the stage's ops. */
void ex_stage_fini(ExStage *stage);
