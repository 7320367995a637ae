/*
 * func.h - the scalar function and operator catalog: resolution by name and
 * argument types to a kernel, and the cast kernels.
 *
 * Resolution is the binder's entry point into the executor's kernels: it picks
 * the kernel for the argument types, the result type, and the types each
 * argument must first be cast to (the binder inserts those casts).  Numeric
 * promotion: INTEGER < BIGINT < DECIMAL < DOUBLE; integer arithmetic is done in
 * BIGINT with overflow checks; integer division truncates toward zero; division
 * or modulo by zero is an error.  Pure functions; thread-safe.
 */
#pragma once

#include "common/err.h"
#include "common/types.h"
#include "executor/expr.h"

#define EX_FUNC_MAX_ARGS 32

typedef struct ExFuncMatch {
    ExKernel kernel;
    CmType result;
    CmType arg_types[EX_FUNC_MAX_ARGS]; /* what each argument is cast to first */
    int64_t aux;                        /* kernel parameter stored in the node */
    /* The kernel takes the two arguments in the other order (integer + DATE
     * runs the DATE + integer kernel): the node's args are (arg 1, arg 0),
     * each first cast as arg_types says for its position in the call. */
    bool swap_args;
    /* The result changes from row to row with the same arguments (random()):
     * never folded, whatever its arguments. */
    bool is_volatile;
    /* When set, the binder calls it on the built node (arguments cast) before
     * folding it: it may precompute from constant arguments into e->prep, in
     * arena a (regexp_*: the compiled pattern), or reject them (CM_TYPE or
     * CM_RUNTIME at the argument). */
    CmStatus (*prepare)(CmArena *a, ExExpr *e, CmErr *err);
} ExFuncMatch;

/* Resolves operator or function `name` ("+", "=", "not", "is_null", "neg",
 * "||", "abs", ...) for the argument types.  CM_BIND when the name is unknown,
 * CM_TYPE when no overload fits (message names the types); `off` is the
 * position reported.  The caller builds the node from m, swapping the two
 * arguments when m->swap_args (a commutative operator then needs one kernel
 * for both orders). */
CmStatus ex_func_resolve(const char *name, int n_args, const CmType *arg_types, int64_t off,
                         ExFuncMatch *m, CmErr *err);

/* The kernel casting `from` to `to`, or NULL when no cast exists. */
ExKernel ex_cast_kernel(CmType from, CmType to);

/* The type two values are compared or combined in (for =, <, CASE, IN, UNION);
 * false when they have none. */
bool ex_common_type(CmType a, CmType b, CmType *out);

/* Casts one constant value (strings copied into `a`); CM_RUNTIME when the value
 * does not convert. */
CmStatus ex_cast_value(const CmValue *in, CmType to, CmArena *a, CmValue *out, CmErr *err);

/* The field number of extract(<field> FROM date) ("year", "month", "dow", ...),
 * or -1; and the kernel computing it from (field-name, date) arguments with
 * the field number as the node's aux. */
int ex_date_field(const char *name);

/* round(x, digits) or trunc(x, digits) of a DECIMAL or integer x with constant
 * digits, exact; the node's aux is scale | (digits + 128) << 8 | mode << 16
 * (see func_math.c). */
ExKernel ex_round_digits_kernel(void);
/* The rounding mode of a function name: 0 round, 1 floor, 2 ceil (ceiling),
 * 3 trunc; -1 for any other name. */
int ex_rounding_mode(const char *name);
ExKernel ex_extract_kernel(void);
