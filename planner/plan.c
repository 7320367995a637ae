/*
 * plan.c - logical plan node construction.
 */
#include "planner/plan.h"

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

double pl_estimate(const PlNode *n)
{
    switch (n->kind) {
    case PL_GET: return (double)n->table->n_rows;
    case PL_VALUES: return n->n_rows;
    case PL_FILTER: return pl_estimate(n->child) * 0.25;
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
