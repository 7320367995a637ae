/*
 * plan.c - logical plan node construction.
 */
#include "planner/plan.h"

#include "planner/estimate.h"

#include <string.h>

PlNode *pl_node_new(CmArena *a, PlKind kind, int n_cols)
{
    PlNode *n = cm_arena_zalloc(a, sizeof *n);
    if (n == NULL) {
        return NULL;
    }
    n->kind = kind;
    n->n_cols = n_cols;
    n->limit = -1;
    n->empty_set_key = -1;
    n->types = cm_arena_zalloc(a, sizeof(CmType) * (size_t)(n_cols ? n_cols : 1));
    n->names = cm_arena_zalloc(a, sizeof(char *) * (size_t)(n_cols ? n_cols : 1));
    if (n->types == NULL || n->names == NULL) {
        return NULL;
    }
    return n;
}

/* From the form of the condition alone, where no column statistics reach
 * (planner/estimate.c falls back to it): an equality a tenth, a range bound a third, an OR the sum
 * of its branches, an AND the product, NOT the rest, anything else a quarter.  What matters most is
 * the ranking: d_year = 2001 reads as more selective than d_moy BETWEEN 4 AND 10, and both as more
 * than no condition at all. */
double pl_selectivity(const ExExpr *e)
{
    double s;
    switch (e->kind) {
    case EX_E_AND:
        s = 1;
        for (int i = 0; i < e->n_args; i++) {
            s *= pl_selectivity(e->args[i]);
        }
        return s;
    case EX_E_OR:
        s = 0;
        for (int i = 0; i < e->n_args; i++) {
            s += pl_selectivity(e->args[i]);
        }
        return s < 1 ? s : 1;
    case EX_E_FUNC:
        if (strcmp(e->name, "=") == 0) {
            return 0.1;
        }
        if (strcmp(e->name, "<") == 0 || strcmp(e->name, "<=") == 0 || strcmp(e->name, ">") == 0 ||
            strcmp(e->name, ">=") == 0) {
            return 1.0 / 3;
        }
        if (strcmp(e->name, "not") == 0 && e->n_args == 1) {
            return 1 - pl_selectivity(e->args[0]);
        }
        /* the negated forms keep what their positive forms drop */
        if (strcmp(e->name, "<>") == 0 || strcmp(e->name, "!=") == 0) {
            return 1 - 0.1;
        }
        if (strncmp(e->name, "not_", 4) == 0) { /* not_like, not_ilike, not_glob, ... */
            return 1 - 0.25;
        }
        return 0.25;
    default:
        return 0.25;
    }
}

double pl_estimate(const PlNode *n)
{
    PlEst *e = pl_est_new();
    double rows = pl_est_rows(e, n);
    pl_est_free(e);
    return rows;
}
