/*
 * test_functions.c - the function registry (planner/bind/functions.h) against the
 * executor's catalog: every scalar entry that ex_func_resolve resolves is
 * known there at its least and greatest argument counts and refused one past
 * them, so the registry's counts, which sluice_functions shows, are the
 * engine's.  (A name the registry lacks cannot be called at all: the binder
 * refuses it, and the SQL tests that call it fail.)
 */
#include <criterion/criterion.h>
#include <string.h>

#include "executor/func.h"
#include "planner/bind/functions.h"

/* ex_func_resolve's answer for `name` with n NULL-typed arguments, as the
 * binder first asks it. */
static CmStatus probe(const char *name, int n)
{
    CmType types[EX_FUNC_MAX_ARGS];
    memset(types, 0, sizeof types);
    ExFuncMatch m;
    CmErr err;
    cm_err_init(&err);
    return ex_func_resolve(name, n, types, 0, &m, &err);
}

Test(pl_functions, resolved_scalars_take_their_argument_counts)
{
    for (int i = 0; i < pl_func_count(); i++) {
        const PlFunc *f = pl_func_at(i);
        if (f->kind != PL_FUNC_SCALAR || f->code != PL_FUNC_RESOLVED) {
            continue;
        }
        int hi = f->max_args < 0 ? EX_FUNC_MAX_ARGS : f->max_args;
        cr_expect(probe(f->name, f->min_args) != CM_BIND, "%s(%d args) is unknown", f->name,
                  f->min_args);
        cr_expect(probe(f->name, hi) != CM_BIND, "%s(%d args) is unknown", f->name, hi);
        if (f->min_args > 0) {
            cr_expect(probe(f->name, f->min_args - 1) != CM_OK, "%s takes %d args", f->name,
                      f->min_args - 1);
        }
        if (f->max_args >= 0) {
            cr_expect(probe(f->name, f->max_args + 1) != CM_OK, "%s takes %d args", f->name,
                      f->max_args + 1);
        }
    }
}

Test(pl_functions, entries_are_unique_and_aliases_name_an_entry)
{
    for (int i = 0; i < pl_func_count(); i++) {
        const PlFunc *f = pl_func_at(i);
        cr_expect(pl_func_find(f->name, f->kind) == f, "%s (%s) is listed twice", f->name,
                  pl_func_kind_name(f->kind));
        cr_expect(f->max_args < 0 || f->max_args >= f->min_args, "%s: counts", f->name);
        if (f->alias_of != NULL) {
            const PlFunc *to = pl_func_find(f->alias_of, f->kind);
            cr_expect(to != NULL && to->alias_of == NULL, "%s: alias of %s, not an entry",
                      f->name, f->alias_of);
        }
    }
    cr_expect(pl_func_at(pl_func_count()) == NULL);
}

Test(pl_functions, operators_are_not_callable)
{
    static const char *const OPS[] = {"neg", "not", "is_null", "is_not_null", "like",
                                      "not_like", "ilike", "not_ilike", "+", "="};
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++) {
        cr_expect(pl_func_find(OPS[i], PL_FUNC_SCALAR) == NULL, "%s is listed", OPS[i]);
    }
}
