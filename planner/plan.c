/*
 * plan.c - logical plan node construction.
 */
#include "planner/plan.h"

#include "planner/optimizer/estimate.h"

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

/* A copy of n items of `size` bytes at p in a; true when p is NULL or n is 0 (*out NULL). */
static bool dup_items(CmArena *a, const void *p, size_t n, size_t size, void *out)
{
    void *copy = NULL;
    if (p != NULL && n > 0 && (copy = cm_arena_alloc(a, n * size)) == NULL) {
        return false;
    }
    if (copy != NULL) {
        memcpy(copy, p, n * size);
    }
    memcpy(out, &copy, sizeof copy);
    return p == NULL || n == 0 || copy != NULL;
}

PlNode *pl_node_clone(CmArena *a, const PlNode *n)
{
    PlNode *c = cm_arena_alloc(a, sizeof *c);
    if (c == NULL) {
        return NULL;
    }
    *c = *n;
    size_t n_cols = (size_t)(n->n_cols ? n->n_cols : 1);
    size_t n_exprs =
        n->kind == PL_VALUES ? (size_t)n->n_rows * (size_t)n->n_cols : (size_t)n->n_cols;
    bool ok =
        dup_items(a, n->types, n_cols, sizeof(CmType), &c->types) &&
        dup_items(a, n->names, n_cols, sizeof(char *), &c->names) &&
        dup_items(a, n->col_ids, n_cols, sizeof(int), &c->col_ids) &&
        dup_items(a, n->exprs, n_exprs, sizeof(ExExpr *), &c->exprs) &&
        dup_items(a, n->aggs, (size_t)n->n_aggs, sizeof(ExAggSpec), &c->aggs) &&
        dup_items(a, n->sort_keys, (size_t)n->n_sort_keys, sizeof(ExSortKey), &c->sort_keys) &&
        dup_items(a, n->left_keys, (size_t)n->n_join_keys, sizeof(int), &c->left_keys) &&
        dup_items(a, n->right_keys, (size_t)n->n_join_keys, sizeof(int), &c->right_keys) &&
        dup_items(a, n->set_masks, (size_t)n->n_sets, sizeof(uint64_t), &c->set_masks) &&
        dup_items(a, n->win, 1, sizeof(ExWindowSpec), &c->win) &&
        dup_items(a, n->inputs, (size_t)n->n_inputs, sizeof(PlNode *), &c->inputs);
    for (int i = 0; ok && i < n->n_aggs; i++) {
        const ExAggSpec *g = &n->aggs[i];
        ok = dup_items(a, g->order, (size_t)g->n_order, sizeof(ExSortKey), &c->aggs[i].order) &&
             dup_items(a, g->order_types, (size_t)g->n_order, sizeof(CmType),
                       &c->aggs[i].order_types);
    }
    if (ok && n->win != NULL) {
        ok =
            dup_items(a, n->win->part, (size_t)n->win->n_part, sizeof(int), &c->win->part) &&
            dup_items(a, n->win->order, (size_t)n->win->n_order, sizeof(ExSortKey), &c->win->order);
    }
    for (int i = 0; ok && i < n->n_inputs; i++) {
        ok = (c->inputs[i] = pl_node_clone(a, n->inputs[i])) != NULL;
    }
    ok = ok && (n->child == NULL || (c->child = pl_node_clone(a, n->child)) != NULL);
    ok = ok && (n->right == NULL || (c->right = pl_node_clone(a, n->right)) != NULL);
    return ok ? c : NULL;
}

/* From the form of the condition alone, where no column statistics reach
 * (planner/optimizer/estimate.c falls back to it): an equality a tenth, a range bound a third, an
 * OR the sum of its branches, an AND the product, NOT the rest, anything else a quarter.  What
 * matters most is the ranking: d_year = 2001 reads as more selective than d_moy BETWEEN 4 AND 10,
 * and both as more than no condition at all. */
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
