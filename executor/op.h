/*
 * op.h - the operator interface of the push-based pipeline executor.
 *
 * A stage runs one pipeline: a source, zero or more streaming operators and a
 * sink, as n_tasks tasks on the worker pool.  Each operator has three kinds of
 * state: the ExOp itself (immutable once built, shared by all workers), a
 * global state (`op->global`, shared, guarded by the op's own lock) and a local
 * state per task (no lock).  Slots a kind does not use are NULL.
 *
 * Streaming `push(in -> out)`: returns EX_NEED_INPUT when done with `in` (with
 * *out a batch or NULL), EX_HAVE_MORE when *out is set and push must be called
 * again with the same `in`, EX_DONE when it wants no more input (*out may hold
 * a last batch).  `flush` is called at the end of the input of a task, for
 * operators that hold rows back (aggregates, sorts): EX_HAVE_MORE with *out,
 * or EX_DONE.  Output batches belong to the local state and stay valid until
 * the next call.  Input batches are borrowed for the call and never modified.
 * Sources `pull` batches of their task's share of the input; sinks `sink`
 * batches, `combine` once per task at its end, `finalize` once after all tasks.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/config.h"
#include "common/err.h"
#include "common/mem.h"
#include "common/thread.h"
#include "common/vec.h"

typedef enum ExOpResult { EX_NEED_INPUT = 0, EX_HAVE_MORE, EX_DONE } ExOpResult;

typedef struct ExOp ExOp;
typedef struct ExQuery ExQuery;

/* What a task knows of itself. */
typedef struct ExTask {
    ExQuery *query;
    int task_idx; /* 0..n_tasks-1 within the stage */
    int n_tasks;
    int worker_id;
} ExTask;

typedef struct ExOpVt {
    const char *name; /* as EXPLAIN prints it */
    CmStatus (*global_init)(ExOp *op, ExQuery *q, CmErr *err);
    void (*global_fini)(ExOp *op);
    /* Sources: how many tasks the input splits into (called after global_init). */
    int (*n_tasks)(ExOp *op, ExQuery *q);
    void *(*local_init)(ExOp *op, const ExTask *task, CmErr *err);
    void (*local_fini)(ExOp *op, void *local);
    ExOpResult (*push)(ExOp *op, void *local, const CmBatch *in, const CmBatch **out, CmErr *err);
    ExOpResult (*flush)(ExOp *op, void *local, const CmBatch **out, CmErr *err);
    ExOpResult (*pull)(ExOp *op, void *local, const CmBatch **out, CmErr *err);
    CmStatus (*sink)(ExOp *op, void *local, const CmBatch *in, CmErr *err);
    CmStatus (*combine)(ExOp *op, void *local, CmErr *err);
    CmStatus (*finalize)(ExOp *op, ExQuery *q, CmErr *err);
    /* Handing a task's local state to the next task of the stage on the same
     * thread (both or neither).  At the end of a task that succeeded while
     * tasks of the stage are still to start, local_keep empties `local` for
     * another task and returns true to have it kept, false to have it
     * finished (local_fini).  local_reuse prepares a kept local for `task`: it
     * still holds its arrays and their reservations, which is the point: a
     * table built anew by every task faults in every page again, and under a
     * memory_limit freed pages go straight back to the system.  A stage keeps
     * at most one local per op and thread, and finishes them when its tasks
     * are done. */
    bool (*local_keep)(ExOp *op, void *local);
    CmStatus (*local_reuse)(ExOp *op, void *local, const ExTask *task, CmErr *err);
    /* One line of detail for EXPLAIN (after the name), into buf.  in_names:
     * the names of the op's input columns (ex_col_to_string), or NULL. */
    void (*explain)(const ExOp *op, const char *const *in_names, char *buf, size_t cap);
    /* The input column that output column `col` is, value for value (rows may
     * be dropped or repeated), or -1; NULL when no column passes through.  The
     * planner follows a join key back to the scan that reads it. */
    int (*passes)(const ExOp *op, int col);
    /* The op's output for a row does not depend on which other rows its task
     * sees, whatever its spec, so a stage made only of such ops may have a
     * shuffle partition split across tasks (planner/aqe skew splits).  Ops
     * that qualify only for some specs leave this false and are recognised by
     * ex_op_row_independent (executor/ops.h); keep the two in sync. */
    bool row_independent;
} ExOpVt;

struct ExOp {
    const ExOpVt *vt;
    void *spec;                 /* the operator's plan-time parameters, in the query arena */
    int n_cols;                 /* output columns */
    CmType *types;              /* output types, in the query arena */
    void *global;               /* global state, owned by the op between global_init/fini */
    CmMutex lock;               /* guards `global` where the op says so */
    atomic_llong rows_out;      /* rows this op emitted (all tasks), for EXPLAIN ANALYZE */
    atomic_llong time_ns;       /* time spent inside this op's calls */
    CmMemGroup mem;             /* what its consumers reserve, all tasks (parent: the query's) */
    atomic_llong spilled_bytes; /* bytes it wrote to spill files */
    atomic_llong spill_files;   /* spill files it made */
    double est_rows;            /* the planner's estimate of rows_out, for EXPLAIN ANALYZE;
                                   0: none (set by the planner after construction) */
    const char *const *names;   /* the output columns' names, for EXPLAIN (in the query arena),
                                   or NULL: unknown (set by the planner after construction) */
};

/* The state of one running query that operators may use. */
struct ExQuery {
    CmArena *arena;                /* the query arena: plans, constants */
    CmConfig config;               /* settings as of the query's start */
    CmPool *pool;                  /* the worker pool */
    struct ShStore *shuffle_store; /* the query's shuffle store (shuffle/shuffle.h); borrowed,
                                      NULL: each shuffle gets a private one */
    CmMemGroup mem;                /* what the query's consumers reserve (common/mem.h) */
    atomic_bool cancelled;         /* set by the first failing task */
    const atomic_bool *interrupt;  /* set from outside to stop the query (Ctrl+C,
                                      sluice_interrupt); borrowed, may be NULL */
    CmMutex lock;                  /* guards err */
    CmErr err;                     /* the first error of any task */
    struct ExProgress *progress;   /* the statement's progress (executor/progress.h);
                                      borrowed, may be NULL */
};

/* CM_CANCELLED when the query should stop: "interrupted" when asked from
 * outside, "query cancelled" when another task failed.  Operators with long
 * loops of their own (merging runs, re-reading spill files) call it between
 * batches; the stage driver calls it between every batch it moves. */
CmStatus ex_query_check(ExQuery *q, CmErr *err);

/* Prepares r as a consumer of execution memory for op (named `what` in
 * messages: a static string).  It counts for the op's query through
 * op->mem.parent, which ex_stage_run sets once before the tasks start: every
 * task of the op reserves through here at once. */
void ex_op_res_init(ExOp *op, CmMemRes *r, const char *what);
/* Counts a spill file of `bytes` bytes that op wrote. */
void ex_op_count_spill(ExOp *op, int64_t bytes);

/* Makes an op with `vt` and `spec`, output types copied into the arena. */
ExOp *ex_op_new(CmArena *arena, const ExOpVt *vt, void *spec, int n_cols, const CmType *types);
