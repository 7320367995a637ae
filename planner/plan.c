/*
 * plan.c - logical plan node construction.
 */
#include "planner/plan.h"

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

/* From the form of the condition alone (there are no column statistics
 * yet): an equality a tenth, a range bound a third, an OR the sum of its
 * branches, an AND the product, NOT the rest, anything else a quarter.  What
 * matters most is the ranking: d_year = 2001 reads as more selective than
 * d_moy BETWEEN 4 AND 10, and both as more than no condition at all. */
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
        return 0.25;
    default: return 0.25;
    }
}

double pl_estimate(const PlNode *n)
{
    switch (n->kind) {
    case PL_GET: return (double)n->table->n_rows;
    case PL_VALUES: return n->n_rows;
    case PL_SERIES: return (double)n->series_rows;
    case PL_FILTER: return pl_estimate(n->child) * pl_selectivity(n->pred);
    case PL_AGGREGATE: return n->n_keys == 0 ? 1 : pl_estimate(n->child) * 0.5;
    case PL_LIMIT: {
        double c = pl_estimate(n->child);
        return n->limit >= 0 && (double)n->limit < c ? (double)n->limit : c;
    }
    case PL_JOIN: {
        double l = pl_estimate(n->child), r = pl_estimate(n->right);
        if (n->join_type == EX_JOIN_SEMI || n->join_type == EX_JOIN_ANTI ||
            n->join_type == EX_JOIN_MARK) {
            return l;
        }
        double e = n->n_join_keys > 0 ? (l > r ? l : r) : l * r;
        return n->residual ? e * 0.5 : e;
    }
    case PL_UNION: {
        double sum = 0;
        for (int i = 0; i < n->n_inputs; i++) {
            sum += pl_estimate(n->inputs[i]);
        }
        return sum;
    }
    default: return pl_estimate(n->child);
    }
}
