/*
 * expr.h - bound scalar expressions and their vectorized evaluation.
 *
 * The binder (planner/) builds ExExpr trees whose column references are
 * indexes into the input batch of the operator that evaluates them, and whose
 * types are resolved: every function node carries the kernel chosen for its
 * argument types (implicit casts are explicit EX_E_CAST nodes by then).
 * An ExExpr is immutable and shared by all workers; each worker evaluates it
 * through its own ExExprState, which owns one output vector per node and a
 * scratch arena for the strings it produces (valid until the next evaluation).
 * Evaluation covers the active rows of the input (its selection) and writes
 * results at their physical positions, so the output lines up with the input.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/err.h"
#include "common/types.h"
#include "common/vec.h"

typedef struct ExExpr ExExpr;

/* A kernel: computes out[pos] for every active row of `in` from the argument
 * vectors (aligned with `in`).  It handles NULLs itself; long strings it makes go
 * into `heap`.  `e` is the node (its type, src_off for error positions). */
typedef CmStatus (*ExKernel)(const ExExpr *e, const CmBatch *in, const CmVec *const *args,
                             CmVec *out, CmArena *heap, CmErr *err);

typedef enum ExExprKind {
    EX_E_COLUMN, /* input column `col` */
    EX_E_CONST,  /* `value` */
    EX_E_FUNC,   /* kernel(args) */
    EX_E_AND,    /* three-valued AND of args (n >= 2) */
    EX_E_OR,     /* three-valued OR of args (n >= 2) */
    EX_E_CASE,   /* args: when1, then1, ..., [else]: `has_else` */
} ExExprKind;

struct ExExpr {
    ExExprKind kind;
    CmType type;      /* result type */
    int col;          /* COLUMN */
    CmValue value;    /* CONST (string bytes in the query arena) */
    ExKernel kernel;  /* FUNC */
    const char *name; /* FUNC: operator or function name, for EXPLAIN; CONST: the text
                       * of an integer literal beyond BIGINT that the DOUBLE `value`
                       * approximates (so a cast to an integer type can refuse it), else
                       * NULL */
    int n_args;
    ExExpr **args;    /* in the query arena */
    bool has_else;    /* CASE */
    int64_t aux;      /* FUNC: kernel parameter (e.g. a scale factor) */
    const void *prep; /* FUNC: what the function prepared from its constant arguments
                       * (func.h, ExFuncMatch.prepare), in the query arena, or NULL */
    bool is_volatile; /* FUNC: a new value per row (random()): never constant */
    bool fold_failed; /* constant, but evaluating it at bind time failed (the error is
                       * left for run time); a FUNC over it is not tried again */
    int64_t src_off;  /* position in the SQL text for errors, -1 if none */
};

typedef struct ExExprState ExExprState;

/* Per-worker evaluation state for `e`; owned, NULL with err on OOM. */
ExExprState *ex_expr_state_new(const ExExpr *e, CmErr *err);
void ex_expr_state_free(ExExprState *st);

/* Evaluates over the active rows of `in`; returns the result vector, borrowed
 * until the next call on this state (a COLUMN returns a view of the input).
 * NULL with err on failure. */
const CmVec *ex_expr_eval(ExExprState *st, const CmBatch *in, CmErr *err);

/* Constructors in an arena (the query arena). NULL on OOM. */
ExExpr *ex_expr_column(CmArena *a, int col, CmType type);
ExExpr *ex_expr_const(CmArena *a, const CmValue *v);
ExExpr *ex_expr_func(CmArena *a, const char *name, ExKernel kernel, CmType type, int n_args,
                     ExExpr **args);

/* A copy of e, in `a`, with every column c replaced by map[c]; NULL on OOM.
 * Planners use it to move an expression onto another node's columns. */
ExExpr *ex_expr_remap(CmArena *a, const ExExpr *e, const int *map);

/* Writes a readable form (for EXPLAIN) into buf: a column by its name in
 * `names` (the input's column names, or NULL), as #col where it has none. */
void ex_expr_to_string(const ExExpr *e, const char *const *names, char *buf, size_t cap);
/* Writes column `col` as ex_expr_to_string does; the length written. */
size_t ex_col_to_string(const char *const *names, int col, char *buf, size_t cap);

/* True when the tree has no column references (it can be folded). */
bool ex_expr_is_constant(const ExExpr *e);

/* True when e calls a volatile function (random()) anywhere. */
bool ex_expr_is_volatile(const ExExpr *e);

/* Evaluates a constant expression into *out (strings copied into `a`). */
CmStatus ex_expr_eval_const(const ExExpr *e, CmArena *a, CmValue *out, CmErr *err);
