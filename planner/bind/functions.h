/*
 * functions.h - the registry of every function a query can call by name:
 * scalar functions, aggregates, window functions and table functions.
 *
 * The binder looks names up here and nowhere else: an aggregate's or window
 * function's code comes from its entry, a table function must have one, and a
 * scalar call whose name has no scalar entry is an unknown function before the
 * executor's catalog (executor/func.h) is asked for its overload.  So the
 * system table sluice_functions (planner/system.h) and docs/functions.md,
 * which a test checks against it, list exactly what the engine has.
 *
 * A name may have entries of several kinds (count is an aggregate and a
 * window function; unnest a scalar and a table function).  An alias names the
 * entry of the same kind it behaves as.  Static data: thread-safe.
 */
#pragma once

#include <stdbool.h>

typedef enum PlFuncKind {
    PL_FUNC_SCALAR,
    PL_FUNC_AGGREGATE,
    PL_FUNC_WINDOW,
    PL_FUNC_TABLE,
} PlFuncKind;

/* code of a scalar entry: who binds the call */
enum {
    PL_FUNC_RESOLVED, /* ex_func_resolve picks the overload */
    PL_FUNC_BINDER,   /* the binder builds it (coalesce, typeof, now, ...) */
};

typedef struct PlFunc {
    const char *name; /* as written in SQL, lower case */
    PlFuncKind kind;
    int min_args;         /* count(*) counts as no argument */
    int max_args;         /* -1: any number from min_args */
    int code;             /* AGGREGATE: ExAggFn; WINDOW: ExWinFn; SCALAR: PL_FUNC_RESOLVED or
                             PL_FUNC_BINDER; TABLE: 0 */
    const char *alias_of; /* NULL, or the entry of this kind it is another name of */
} PlFunc;

/* The entry for `name` of kind `kind` (static), or NULL. */
const PlFunc *pl_func_find(const char *name, PlFuncKind kind);

/* The number of entries, and the idx-th (static): grouped by kind, in no other order. */
int pl_func_count(void);
const PlFunc *pl_func_at(int idx);

/* "scalar", "aggregate", "window" or "table". */
const char *pl_func_kind_name(PlFuncKind kind);
