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
    n->types = cm_arena_zalloc(a, sizeof(CmType) * (size_t)(n_cols ? n_cols : 1));
    n->names = cm_arena_zalloc(a, sizeof(char *) * (size_t)(n_cols ? n_cols : 1));
    if (n->types == NULL || n->names == NULL) {
        return NULL;
    }
    return n;
}
