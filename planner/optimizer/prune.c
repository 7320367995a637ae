/*
 * prune.c - projection pruning: every node produces only the columns some
 * node above it reads.
 *
 * A top-down pass: given which output columns of a node are needed, the node
 * works out which columns of its inputs it needs (its own expressions' and
 * keys' references included), prunes its inputs, and rewrites itself over
 * their new column numbers.  It reports its own new numbering to its parent
 * through `map` (old column -> new column, -1 when dropped).  Scans read only
 * needed columns; joins carry only needed ones.  Aggregates, grouping-set
 * expansions and VALUES keep all their columns (their inputs are pruned).
 * Nodes may be shared (a correlated subquery reads its outer rows twice), so
 * each is copied before it is rewritten: the original stays valid for its
 * other parent.
 */
#include <string.h>

#include "common/alloc.h"
#include "planner/optimizer/prune.h"
#include "planner/plan.h"

typedef struct Pruner {
    CmArena *a;
    CmErr *err;
    bool join_input; /* the node being pruned is an input of a join (prune_filter) */
} Pruner;

static bool *need_new(Pruner *p, int n)
{
    bool *need = cm_arena_zalloc(p->a, sizeof(bool) * (size_t)(n + 1));
    if (need == NULL) {
        cm_err_set(p->err, CM_OOM, -1, "out of memory");
    }
    return need;
}

static int *map_new(Pruner *p, int n)
{
    int *map = cm_arena_alloc(p->a, sizeof(int) * (size_t)(n + 1));
    if (map == NULL) {
        cm_err_set(p->err, CM_OOM, -1, "out of memory");
    }
    return map;
}

static void mark_refs(const ExExpr *e, bool *need)
{
    if (e == NULL) {
        return;
    }
    if (e->kind == EX_E_COLUMN) {
        need[e->col] = true;
        return;
    }
    for (int i = 0; i < e->n_args; i++) {
        mark_refs(e->args[i], need);
    }
}

/* A copy of e with every column c replaced by map[c]. */
static ExExpr *remap(Pruner *p, const ExExpr *e, const int *map)
{
    ExExpr *c = ex_expr_remap(p->a, e, map);
    if (c == NULL) {
        cm_err_set(p->err, CM_OOM, -1, "out of memory");
    }
    return c;
}

static PlNode *prune(Pruner *p, PlNode *n, const bool *need, int *map);

static void identity(int n, int *map)
{
    for (int i = 0; i < n; i++) {
        map[i] = i;
    }
}

/* Prunes every input with all of its columns needed (keeps the node's shape). */
static PlNode *keep_all(Pruner *p, PlNode *n, int *map)
{
    if (n->child != NULL) {
        bool *all = need_new(p, n->child->n_cols);
        int *cmap = map_new(p, n->child->n_cols);
        if (all == NULL || cmap == NULL) {
            return NULL;
        }
        memset(all, 1, (size_t)n->child->n_cols);
        PlNode *c = prune(p, n->child, all, cmap);
        if (c == NULL) {
            return NULL;
        }
        n->child = c;
    }
    identity(n->n_cols, map);
    return n;
}

/* Drops the output columns of n that `keep` does not have, by compacting the
 * type and name arrays; fills map. */
static void compact(PlNode *n, const bool *keep, int *map)
{
    int at = 0;
    for (int i = 0; i < n->n_cols; i++) {
        map[i] = keep[i] ? at : -1;
        if (keep[i]) {
            n->types[at] = n->types[i];
            n->names[at] = n->names[i];
            at++;
        }
    }
    n->n_cols = at;
}

static PlNode *prune_get(PlNode *n, const bool *need, int *map)
{
    int at = 0;
    for (int i = 0; i < n->n_cols; i++) {
        if (need[i]) {
            n->col_ids[at++] = n->col_ids[i];
        }
    }
    compact(n, need, map);
    (void)at;
    return n;
}

static PlNode *prune_project(Pruner *p, PlNode *n, const bool *need, int *map)
{
    bool *cneed = need_new(p, n->child->n_cols);
    int *cmap = map_new(p, n->child->n_cols);
    if (cneed == NULL || cmap == NULL) {
        return NULL;
    }
    for (int i = 0; i < n->n_cols; i++) {
        if (need[i]) {
            mark_refs(n->exprs[i], cneed);
        }
    }
    PlNode *c = prune(p, n->child, cneed, cmap);
    if (c == NULL) {
        return NULL;
    }
    n->child = c;
    int at = 0;
    for (int i = 0; i < n->n_cols; i++) {
        if (need[i] && (n->exprs[at] = remap(p, n->exprs[i], cmap)) == NULL) {
            return NULL;
        }
        at += need[i];
    }
    compact(n, need, map);
    return n;
}

/* Nodes whose output is their child's columns (FILTER, SORT, LIMIT). */
static PlNode *prune_passthrough(Pruner *p, PlNode *n, const bool *need, int *map)
{
    bool *cneed = need_new(p, n->child->n_cols);
    if (cneed == NULL) {
        return NULL;
    }
    memcpy(cneed, need, sizeof(bool) * (size_t)n->n_cols);
    mark_refs(n->pred, cneed);
    for (int k = 0; k < n->n_sort_keys; k++) {
        cneed[n->sort_keys[k].col] = true;
    }
    PlNode *c = prune(p, n->child, cneed, map);
    if (c == NULL) {
        return NULL;
    }
    n->child = c;
    if (n->pred != NULL && (n->pred = remap(p, n->pred, map)) == NULL) {
        return NULL;
    }
    for (int k = 0; k < n->n_sort_keys; k++) {
        n->sort_keys[k].col = map[n->sort_keys[k].col];
    }
    n->n_cols = c->n_cols;
    n->types = c->types;
    n->names = c->names;
    return n;
}

/* A projection of the needed columns i < n_cols (n_keep of them) of a node
 * whose pruned input is `child`, where column i is child's column cmap[i]:
 * column references only, with child's types, and names[i] (child's names
 * when NULL). */
static PlNode *project_needed(Pruner *p, PlNode *child, const int *cmap, const bool *need,
                              int n_cols, int n_keep, const char **names)
{
    PlNode *proj = pl_node_new(p->a, PL_PROJECT, n_keep);
    ExExpr **exprs = proj ? cm_arena_alloc(p->a, sizeof(ExExpr *) * (size_t)(n_keep + 1)) : NULL;
    if (exprs == NULL) {
        cm_err_set(p->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    int at = 0;
    for (int i = 0; i < n_cols; i++) {
        if (!need[i]) {
            continue;
        }
        int c = cmap[i];
        if ((exprs[at] = ex_expr_column(p->a, c, child->types[c])) == NULL) {
            cm_err_set(p->err, CM_OOM, -1, "out of memory");
            return NULL;
        }
        proj->types[at] = child->types[c];
        proj->names[at++] = names != NULL ? names[i] : child->names[c];
    }
    proj->child = child;
    proj->exprs = exprs;
    return proj;
}

/* FILTER under a join whose condition reads columns nothing above it reads:
 * the filter keeps them, and a projection over it drops them (a column
 * reference costs nothing), so that they do not travel on into the join's
 * build table or an exchange before it (a filter under anything else feeds
 * an operator that reads only what it needs).  PageRank's recursive CTE
 * filtered its working set on `it < 10` and carried `it` into a 1M-row
 * broadcast table, 4 MB that made the table miss its grant at 150 MiB and the
 * join go grace (10M probe rows spilled each round). */
static PlNode *prune_filter(Pruner *p, PlNode *n, const bool *need, int *map)
{
    bool *fneed = need_new(p, n->n_cols);
    if (fneed == NULL) {
        return NULL;
    }
    memcpy(fneed, need, sizeof(bool) * (size_t)n->n_cols);
    mark_refs(n->pred, fneed);
    int n_keep = 0, n_extra = 0;
    for (int i = 0; i < n->n_cols; i++) {
        n_keep += need[i];
        n_extra += fneed[i] && !need[i];
    }
    if (n_extra == 0 || n_keep == 0) {
        return prune_passthrough(p, n, need, map);
    }
    int n_in = n->n_cols;
    int *fmap = map_new(p, n_in);
    PlNode *f = fmap ? prune_passthrough(p, n, fneed, fmap) : NULL;
    PlNode *proj = f ? project_needed(p, f, fmap, need, n_in, n_keep, NULL) : NULL;
    for (int i = 0, at = 0; proj != NULL && i < n_in; i++) {
        map[i] = need[i] ? at++ : -1;
    }
    return proj;
}

static void *dup_n(Pruner *p, const void *src, size_t elem, size_t n);

/* UNNEST passes its child's columns through but the list, which becomes its
 * element, and which it always needs: it decides how many rows there are. */
static PlNode *prune_unnest(Pruner *p, PlNode *n, const bool *need, int *map)
{
    bool *cneed = need_new(p, n->child->n_cols);
    if (cneed == NULL) {
        return NULL;
    }
    memcpy(cneed, need, sizeof(bool) * (size_t)n->n_cols);
    cneed[n->unnest_col] = true;
    CmType elem = n->types[n->unnest_col];
    PlNode *c = prune(p, n->child, cneed, map);
    if (c == NULL) {
        return NULL;
    }
    n->child = c;
    n->unnest_col = map[n->unnest_col];
    n->n_cols = c->n_cols;
    n->types = dup_n(p, c->types, sizeof(CmType), (size_t)c->n_cols);
    n->names = c->names;
    if (n->types == NULL) {
        return NULL;
    }
    n->types[n->unnest_col] = elem;
    return n;
}

static PlNode *prune_join(Pruner *p, PlNode *n, const bool *need, int *map)
{
    int nl = n->child->n_cols, nr = n->right->n_cols;
    bool *lneed = need_new(p, nl), *rneed = need_new(p, nr);
    int *lmap = map_new(p, nl), *rmap = map_new(p, nr);
    bool *both = need_new(p, nl + nr);
    if (!lneed || !rneed || !lmap || !rmap || !both) {
        return NULL;
    }
    bool pairs = n->join_type == EX_JOIN_INNER || n->join_type == EX_JOIN_LEFT ||
                 n->join_type == EX_JOIN_FULL;
    for (int i = 0; i < nl; i++) {
        lneed[i] = need[i];
    }
    for (int i = 0; pairs && i < nr; i++) {
        rneed[i] = need[nl + i];
    }
    mark_refs(n->residual, both);
    for (int i = 0; i < nl + nr; i++) {
        if (both[i]) {
            if (i < nl) {
                lneed[i] = true;
            } else {
                rneed[i - nl] = true;
            }
        }
    }
    for (int k = 0; k < n->n_join_keys; k++) {
        lneed[n->left_keys[k]] = true;
        rneed[n->right_keys[k]] = true;
    }
    p->join_input = true;
    PlNode *l = prune(p, n->child, lneed, lmap);
    p->join_input = true;
    PlNode *r = l ? prune(p, n->right, rneed, rmap) : NULL;
    int *jmap = map_new(p, nl + nr);
    if (r == NULL || jmap == NULL) {
        return NULL;
    }
    for (int i = 0; i < nl; i++) {
        jmap[i] = lmap[i];
    }
    for (int i = 0; i < nr; i++) {
        jmap[nl + i] = rmap[i] < 0 ? -1 : l->n_cols + rmap[i];
    }
    for (int k = 0; k < n->n_join_keys; k++) {
        n->left_keys[k] = lmap[n->left_keys[k]];
        n->right_keys[k] = rmap[n->right_keys[k]];
    }
    if (n->residual != NULL && (n->residual = remap(p, n->residual, jmap)) == NULL) {
        return NULL;
    }
    n->child = l;
    n->right = r;
    /* The output: the pruned sides, as the join emits them. */
    int n_out = l->n_cols + (pairs ? r->n_cols : n->join_type == EX_JOIN_MARK ? 1 : 0);
    CmType *types = cm_arena_alloc(p->a, sizeof(CmType) * (size_t)(n_out + 1));
    const char **names = cm_arena_alloc(p->a, sizeof(char *) * (size_t)(n_out + 1));
    if (types == NULL || names == NULL) {
        cm_err_set(p->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    int old_n = n->n_cols;
    for (int i = 0; i < old_n; i++) {
        int to = i < nl ? lmap[i] : !pairs ? l->n_cols : jmap[i];
        map[i] = to;
        if (to >= 0) {
            types[to] = n->types[i];
            names[to] = n->names[i];
        }
    }
    n->n_cols = n_out;
    n->types = types;
    n->names = names;
    return n;
}

static PlNode *prune_window(Pruner *p, PlNode *n, const bool *need, int *map)
{
    int nc = n->child->n_cols;
    bool *cneed = need_new(p, nc);
    int *cmap = map_new(p, nc);
    if (cneed == NULL || cmap == NULL) {
        return NULL;
    }
    memcpy(cneed, need, sizeof(bool) * (size_t)nc);
    ExWindowSpec *w = n->win;
    if (w->arg >= 0) {
        cneed[w->arg] = true;
    }
    for (int k = 0; k < w->n_part; k++) {
        cneed[w->part[k]] = true;
    }
    for (int k = 0; k < w->n_order; k++) {
        cneed[w->order[k].col] = true;
    }
    PlNode *c = prune(p, n->child, cneed, cmap);
    if (c == NULL) {
        return NULL;
    }
    if (w->arg >= 0) {
        w->arg = cmap[w->arg];
    }
    for (int k = 0; k < w->n_part; k++) {
        w->part[k] = cmap[w->part[k]];
    }
    for (int k = 0; k < w->n_order; k++) {
        w->order[k].col = cmap[w->order[k].col];
    }
    n->child = c;
    CmType wt = n->types[nc];
    const char *wn = n->names[nc];
    for (int i = 0; i < nc; i++) {
        map[i] = cmap[i];
    }
    map[nc] = c->n_cols;
    n->types = cm_arena_alloc(p->a, sizeof(CmType) * (size_t)(c->n_cols + 1));
    n->names = cm_arena_alloc(p->a, sizeof(char *) * (size_t)(c->n_cols + 1));
    if (n->types == NULL || n->names == NULL) {
        cm_err_set(p->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    memcpy(n->types, c->types, sizeof(CmType) * (size_t)c->n_cols);
    memcpy(n->names, c->names, sizeof(char *) * (size_t)c->n_cols);
    n->types[c->n_cols] = wt;
    n->names[c->n_cols] = wn;
    n->n_cols = c->n_cols + 1;
    return n;
}

/* UNION: every input must keep the same columns, so each is pruned and then
 * projected to exactly the needed ones. */
static PlNode *prune_union(Pruner *p, PlNode *n, const bool *need, int *map)
{
    int n_keep = 0;
    for (int i = 0; i < n->n_cols; i++) {
        n_keep += need[i];
    }
    for (int k = 0; k < n->n_inputs; k++) {
        PlNode *in = n->inputs[k];
        int *imap = map_new(p, in->n_cols);
        PlNode *pi = imap ? prune(p, in, need, imap) : NULL;
        PlNode *proj = pi ? project_needed(p, pi, imap, need, n->n_cols, n_keep, n->names) : NULL;
        if (proj == NULL) {
            return NULL;
        }
        n->inputs[k] = proj;
    }
    compact(n, need, map);
    return n;
}

static void *dup(Pruner *p, const void *src, size_t size)
{
    if (src == NULL) {
        return NULL;
    }
    void *d = cm_arena_alloc(p->a, size ? size : 1);
    if (d == NULL) {
        cm_err_set(p->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    memcpy(d, src, size);
    return d;
}

/* A copy of the first n elements of src in room for max(n, 1) (NULL stays NULL). */
static void *dup_n(Pruner *p, const void *src, size_t elem, size_t n)
{
    if (src == NULL) {
        return NULL;
    }
    void *d = cm_arena_zalloc(p->a, elem * (n ? n : 1));
    if (d == NULL) {
        cm_err_set(p->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    if (n > 0) {
        memcpy(d, src, elem * n);
    }
    return d;
}

/* A copy of n whose arrays can be rewritten without touching n. */
static PlNode *clone(Pruner *p, const PlNode *n)
{
    PlNode *c = dup(p, n, sizeof *n);
    if (c == NULL) {
        return NULL;
    }
    size_t nc = (size_t)n->n_cols;
    c->types = dup_n(p, n->types, sizeof(CmType), nc);
    c->names = dup_n(p, n->names, sizeof(char *), nc);
    c->col_ids = dup_n(p, n->col_ids, sizeof(int), nc);
    size_t n_exprs = n->kind == PL_VALUES ? (size_t)(n->n_rows * n->n_cols) : nc;
    c->exprs = dup_n(p, n->exprs, sizeof(ExExpr *), n_exprs);
    c->left_keys = dup_n(p, n->left_keys, sizeof(int), (size_t)n->n_join_keys);
    c->right_keys = dup_n(p, n->right_keys, sizeof(int), (size_t)n->n_join_keys);
    c->sort_keys = dup_n(p, n->sort_keys, sizeof(ExSortKey), (size_t)n->n_sort_keys);
    c->inputs = dup_n(p, n->inputs, sizeof(PlNode *), (size_t)n->n_inputs);
    if (n->win != NULL) {
        c->win = dup(p, n->win, sizeof *n->win);
        if (c->win != NULL) {
            c->win->part = dup_n(p, n->win->part, sizeof(int), (size_t)n->win->n_part);
            c->win->order = dup_n(p, n->win->order, sizeof(ExSortKey), (size_t)n->win->n_order);
        }
    }
    return p->err->code == CM_OK ? c : NULL;
}

static PlNode *prune(Pruner *p, PlNode *orig, const bool *need, int *map)
{
    bool join_input = p->join_input;
    p->join_input = false;
    PlNode *n = clone(p, orig);
    if (n == NULL) {
        return NULL;
    }
    switch (n->kind) {
    case PL_GET:
        return prune_get(n, need, map);
    case PL_PROJECT:
        return prune_project(p, n, need, map);
    case PL_FILTER:
        return (join_input ? prune_filter : prune_passthrough)(p, n, need, map);
    case PL_SORT:
    case PL_LIMIT:
        return prune_passthrough(p, n, need, map);
    case PL_JOIN:
        return prune_join(p, n, need, map);
    case PL_WINDOW:
        return prune_window(p, n, need, map);
    case PL_UNNEST:
        return prune_unnest(p, n, need, map);
    case PL_UNION:
        return prune_union(p, n, need, map);
    default:
        return keep_all(p, n, map);
    }
}

PlNode *pl_prune(CmArena *a, PlNode *root, CmErr *err)
{
    Pruner p = {.a = a, .err = err};
    bool *all = need_new(&p, root->n_cols);
    int *map = map_new(&p, root->n_cols);
    if (all == NULL || map == NULL) {
        return NULL;
    }
    memset(all, 1, (size_t)root->n_cols);
    return prune(&p, root, all, map);
}
