/*
 * merge.c - scalar aggregates over the same rows but for one filter, computed
 * in one pass (merge.h).
 *
 * For a tree of cross joins whose leaves are one-row aggregates, each leaf's
 * input is compared with the first's: walking both together, they must be
 * equal (by the cache's fingerprints) but for one chain of FILTER nodes over
 * equal inputs, at the same place in every leaf.  That is checked twice: the
 * walk finds the place, and then the leaf with its chain replaced by the
 * first leaf's must fingerprint the same as the first leaf.  The merged plan:
 *
 *     PROJECT  (each leaf's own columns, over its aggregates' place)
 *       AGGREGATE  (every leaf's aggregates, each over its CASE column)
 *         PROJECT  CASE WHEN where_k THEN arg END
 *           the first leaf's input, where its chain was:
 *             PROJECT  (its columns, then where_k = p_k for each distinct p_k)
 *               FILTER  p_1 OR ... OR p_n  (each distinct p_k once)
 *
 * where p_k is the AND of leaf k's chain (leaves with equal chains, such as
 * a count and an avg over one bucket, share one condition and one flag
 * column, evaluated once), and arg an argument as the leaf's
 * own projection under its aggregate computed it (evaluated by the CASE on
 * its leaf's rows only, as before).  The n conditions travel up to the
 * aggregate at the end of every node's output (extend); that is where
 * validity is decided: each node on the way must pass the filtered rows on
 * unchanged (merge.h); an outer join, a LIMIT or an aggregate leaves the plan
 * alone.  Nodes between the filter and the aggregate now see the rows of
 * every leaf; each such row is one some leaf's plan met, so nothing is
 * evaluated on a row that was not before.
 */
#include "planner/optimizer/merge.h"

#include <string.h>

#include "common/alloc.h"
#include "planner/bind/binder_int.h"

#define MAX_LEAVES 32
#define MAX_OTHERS 8

typedef struct Leaf {
    ExExpr **outs; /* its n_out columns, over the aggregate's */
    PlNode *agg;
    PlNode *pre;   /* a PROJECT under the aggregate (its arguments), or NULL */
    PlNode *base;  /* what the aggregate reads, under `pre` */
    PlNode *chain; /* the top FILTER of its chain, in base; NULL: base is the first leaf's */
    int at;        /* its first column in the cross join's output */
    int n_out;     /* its columns there */
} Leaf;

typedef struct Merge {
    PlCacheCtx *ctx;
    CmArena *a;
    Leaf leaves[MAX_LEAVES];
    int n;
    PlNode *others[MAX_OTHERS]; /* the leaves that are not one-row aggregates, in order */
    int other_at[MAX_OTHERS];   /* their first columns in the cross join's output */
    int n_others;
    int n_cols;  /* columns of the leaves collected so far */
    bool is_bad; /* extend met a node the filtered rows do not pass unchanged */
    bool is_oom;
} Merge;

static bool is_cross(const PlNode *n)
{
    return n->kind == PL_JOIN && n->join_type == EX_JOIN_INNER && n->n_join_keys == 0 &&
           n->residual == NULL;
}

/* The aggregates that skip NULLs: over the rows a CASE keeps they give what
 * they give over the filtered rows, an empty set included. */
static bool is_mergeable_agg(const ExAggSpec *g)
{
    if (g->distinct || g->n_order > 0) {
        return false;
    }
    switch (g->fn) {
    case EX_AGG_COUNT_STAR:
    case EX_AGG_COUNT:
    case EX_AGG_SUM:
    case EX_AGG_MIN:
    case EX_AGG_MAX:
    case EX_AGG_AVG:
        return true;
    default:
        return false;
    }
}

static bool is_scalar_agg(const PlNode *n)
{
    if (n->kind != PL_AGGREGATE || n->n_keys != 0 || n->empty_set_key >= 0 || n->is_side_tagged) {
        return false;
    }
    for (int i = 0; i < n->n_aggs; i++) {
        if (!is_mergeable_agg(&n->aggs[i])) {
            return false;
        }
    }
    return true;
}

/* The one-row aggregate under x, through projections (renamings of plain
 * columns, then at most one that computes), or NULL; l->outs gets x's
 * columns as expressions over the aggregate's (m->is_oom on OOM). */
static PlNode *one_row_agg(Merge *m, PlNode *x, Leaf *l)
{
    int n = x->n_cols;
    int *idx = cm_arena_alloc(m->a, sizeof(int) * (size_t)(n + 1));
    ExExpr **outs = cm_arena_alloc(m->a, sizeof(ExExpr *) * (size_t)(n + 1));
    if (idx == NULL || outs == NULL) {
        m->is_oom = true;
        return NULL;
    }
    for (int j = 0; j < n; j++) {
        idx[j] = j;
    }
    PlNode *p = x;
    for (; p->kind == PL_PROJECT && p->child->kind == PL_PROJECT; p = p->child) {
        for (int j = 0; j < n; j++) {
            const ExExpr *e = p->exprs[idx[j]];
            if (e->kind != EX_E_COLUMN) {
                return NULL;
            }
            idx[j] = e->col;
        }
    }
    PlNode *agg = p->kind == PL_PROJECT ? p->child : p;
    if (!is_scalar_agg(agg)) {
        return NULL;
    }
    for (int j = 0; j < n; j++) {
        outs[j] = p->kind == PL_PROJECT ? p->exprs[idx[j]]
                                        : ex_expr_column(m->a, idx[j], agg->types[idx[j]]);
        if (outs[j] == NULL) {
            m->is_oom = true;
            return NULL;
        }
    }
    l->outs = outs;
    return agg;
}

/* A scalar subquery's value: SCALAR (an error past one row) over the one
 * column of what gives one row, which it passes on as it is. */
static bool is_scalar_of_one(const PlNode *n)
{
    return n->kind == PL_AGGREGATE && n->n_keys == 0 && n->empty_set_key < 0 &&
           !n->is_side_tagged && n->n_aggs == 1 && n->aggs[0].fn == EX_AGG_SCALAR &&
           n->aggs[0].arg == 0 && n->child->n_cols == 1 &&
           cm_type_eq(n->types[0], n->child->types[0]);
}

/* The leaves of a tree of cross joins, in the order of its output columns:
 * the one-row aggregates in m->leaves, the others in m->others. */
static bool collect(Merge *m, PlNode *n)
{
    if (is_cross(n)) {
        return collect(m, n->child) && collect(m, n->right);
    }
    Leaf l = {.at = m->n_cols, .n_out = n->n_cols};
    PlNode *x = is_scalar_of_one(n) ? n->child : n;
    l.agg = m->n < MAX_LEAVES ? one_row_agg(m, x, &l) : NULL;
    if (l.agg == NULL) {
        if (m->n_others == MAX_OTHERS) {
            return false;
        }
        m->other_at[m->n_others] = m->n_cols;
        m->others[m->n_others++] = n;
        m->n_cols += n->n_cols;
        return true;
    }
    m->n_cols += n->n_cols;
    /* the projection of the arguments may differ from leaf to leaf (count(*)
     * reads no column, sum(w) reads w): it is compared as part of no one */
    l.pre = l.agg->child->kind == PL_PROJECT ? l.agg->child : NULL;
    l.base = l.pre != NULL ? l.pre->child : l.agg->child;
    m->leaves[m->n++] = l;
    return true;
}

static PlNode *below_filters(PlNode *n)
{
    while (n->kind == PL_FILTER) {
        n = n->child;
    }
    return n;
}

/* Walks a and b together to the one place where they may differ, a chain
 * of filters over equal inputs: *at is a's top FILTER there, *bt b's.  False
 * when their shapes differ.  Only filters and unions are compared whole (a
 * fingerprint each), so the walk costs the plan's size times its filters,
 * not times its depth; whether the rest is equal is the caller's check. */
static bool find_diff(Merge *m, PlNode *a, PlNode *b, PlNode **at, PlNode **bt)
{
    if (a->kind == PL_FILTER && b->kind == PL_FILTER) {
        if (pl_cache_same_plan(m->ctx, a, b)) {
            return true;
        }
        if (*at == NULL && pl_cache_same_plan(m->ctx, below_filters(a), below_filters(b))) {
            *at = a;
            *bt = b;
            return true;
        }
    }
    if (a->kind == PL_UNION || b->kind == PL_UNION) {
        return pl_cache_same_plan(m->ctx, a, b);
    }
    if (a->kind != b->kind || (a->child == NULL) != (b->child == NULL) ||
        (a->right == NULL) != (b->right == NULL)) {
        return false;
    }
    return (a->child == NULL || find_diff(m, a->child, b->child, at, bt)) &&
           (a->right == NULL || find_diff(m, a->right, b->right, at, bt));
}

/* A copy of the path from n down to `target` with target replaced by `with`
 * (the nodes off the path shared); NULL when target is not under n (or OOM:
 * m->is_oom). */
static PlNode *replace(Merge *m, PlNode *n, PlNode *target, PlNode *with)
{
    if (n == target) {
        return with;
    }
    PlNode *c = n->child != NULL ? replace(m, n->child, target, with) : NULL;
    PlNode *r = c == NULL && n->right != NULL ? replace(m, n->right, target, with) : NULL;
    if (c == NULL && r == NULL) {
        return NULL;
    }
    PlNode *copy = cm_arena_alloc(m->a, sizeof *copy);
    if (copy == NULL) {
        m->is_oom = true;
        return NULL;
    }
    *copy = *n;
    if (c != NULL) {
        copy->child = c;
    } else {
        copy->right = r;
    }
    return copy;
}

/* Copies n column descriptions (types and names) from src's column `from`
 * to types/names at `at`. */
static void copy_cols(CmType *types, const char **names, int at, const PlNode *src, int from, int n)
{
    memcpy(types + at, src->types + from, sizeof(CmType) * (size_t)n);
    memcpy(names + at, src->names + from, sizeof(char *) * (size_t)n);
}

/* A copy of n's node with n_cols + k columns, the last k being the last k
 * of `from` (types and names); NULL on OOM. */
static PlNode *widened(Merge *m, const PlNode *n, const PlNode *from, int k)
{
    PlNode *c = cm_arena_alloc(m->a, sizeof *c);
    CmType *types = cm_arena_alloc(m->a, sizeof(CmType) * (size_t)(n->n_cols + k));
    const char **names = cm_arena_alloc(m->a, sizeof(char *) * (size_t)(n->n_cols + k));
    if (c == NULL || types == NULL || names == NULL) {
        m->is_oom = true;
        return NULL;
    }
    *c = *n;
    copy_cols(types, names, 0, n, 0, n->n_cols);
    copy_cols(types, names, n->n_cols, from, from->n_cols - k, k);
    c->types = types;
    c->names = names;
    c->n_cols = n->n_cols + k;
    return c;
}

/* A join over a probe side `c` that has k more columns at its end than
 * n->child: the residual's build columns move k places on. */
static bool shift_residual(Merge *m, PlNode *j, const PlNode *n, int k)
{
    if (n->residual == NULL) {
        return true;
    }
    int n_in = n->child->n_cols + n->right->n_cols;
    int *map = cm_arena_alloc(m->a, sizeof(int) * (size_t)(n_in + 1));
    if (map == NULL) {
        m->is_oom = true;
        return false;
    }
    for (int i = 0; i < n_in; i++) {
        map[i] = i < n->child->n_cols ? i : i + k;
    }
    if ((j->residual = ex_expr_remap(m->a, n->residual, map)) == NULL) {
        m->is_oom = true;
        return false;
    }
    return true;
}

/* A copy of the path from n down to `target`, where target becomes `with`,
 * which has k more columns at its end: every node on the way passes them on
 * at the end of its own output.  NULL when target is not under n, and when
 * the rows of target do not reach n unchanged (m->is_bad; merge.h). */
static PlNode *extend(Merge *m, PlNode *n, PlNode *target, PlNode *with, int k)
{
    if (n == target) {
        return with;
    }
    PlNode *c = n->child != NULL ? extend(m, n->child, target, with, k) : NULL;
    PlNode *r = c == NULL && n->right != NULL && !m->is_bad && !m->is_oom
                    ? extend(m, n->right, target, with, k)
                    : NULL;
    if (c == NULL && r == NULL) {
        return NULL;
    }
    PlNode *from = c != NULL ? c : r;
    switch (n->kind) {
    case PL_FILTER:
    case PL_SORT:
        if (n->kind == PL_SORT && (n->limit >= 0 || n->offset != 0)) {
            break;
        }
        /* fall through */
    case PL_PROJECT: {
        PlNode *w = widened(m, n, from, k);
        if (w == NULL) {
            return NULL;
        }
        w->child = c;
        if (n->kind == PL_PROJECT) {
            ExExpr **exprs = cm_arena_alloc(m->a, sizeof(ExExpr *) * (size_t)w->n_cols);
            if (exprs == NULL) {
                m->is_oom = true;
                return NULL;
            }
            memcpy(exprs, n->exprs, sizeof(ExExpr *) * (size_t)n->n_cols);
            for (int i = 0; i < k; i++) {
                int col = c->n_cols - k + i;
                if ((exprs[n->n_cols + i] = ex_expr_column(m->a, col, c->types[col])) == NULL) {
                    m->is_oom = true;
                    return NULL;
                }
            }
            w->exprs = exprs;
        }
        return w;
    }
    case PL_JOIN: {
        bool is_semi = n->join_type == EX_JOIN_SEMI || n->join_type == EX_JOIN_ANTI;
        if (r != NULL && n->join_type == EX_JOIN_INNER) {
            /* build side: its columns end the join's output */
            PlNode *w = widened(m, n, r, k);
            if (w != NULL) {
                w->right = r;
            }
            return w;
        }
        if (c == NULL || (!is_semi && n->join_type != EX_JOIN_INNER)) {
            break;
        }
        if (is_semi) {
            PlNode *w = widened(m, n, c, k);
            if (w == NULL) {
                return NULL;
            }
            w->child = c;
            return shift_residual(m, w, n, k) ? w : NULL;
        }
        /* probe side of an inner join: the new columns come out in the
         * middle, and a projection puts them at the end */
        PlNode *j = cm_arena_alloc(m->a, sizeof *j);
        PlNode *p = pl_node_new(m->a, PL_PROJECT, n->n_cols + k);
        int n_join = n->n_cols + k, n_left = n->child->n_cols;
        CmType *types = cm_arena_alloc(m->a, sizeof(CmType) * (size_t)n_join);
        const char **names = cm_arena_alloc(m->a, sizeof(char *) * (size_t)n_join);
        ExExpr **exprs = cm_arena_alloc(m->a, sizeof(ExExpr *) * (size_t)n_join);
        if (j == NULL || p == NULL || types == NULL || names == NULL || exprs == NULL) {
            m->is_oom = true;
            return NULL;
        }
        *j = *n;
        j->child = c;
        copy_cols(types, names, 0, c, 0, c->n_cols);
        copy_cols(types, names, c->n_cols, n->right, 0, n->right->n_cols);
        j->types = types;
        j->names = names;
        j->n_cols = n_join;
        if (!shift_residual(m, j, n, k)) {
            return NULL;
        }
        for (int i = 0; i < n_join; i++) {
            /* the join's columns, then the k new ones from the probe side */
            int col = i < n_left ? i : i < n->n_cols ? i + k : n_left + (i - n->n_cols);
            if ((exprs[i] = ex_expr_column(m->a, col, types[col])) == NULL) {
                m->is_oom = true;
                return NULL;
            }
            p->types[i] = types[col];
            p->names[i] = names[col];
        }
        p->exprs = exprs;
        p->child = j;
        return p;
    }
    default:
        break;
    }
    m->is_bad = true;
    return NULL;
}

/* An AND, OR or two-argument CASE over args (in m's arena); NULL on OOM. */
static ExExpr *expr_of(Merge *m, ExExprKind kind, CmType type, int n, ExExpr **args)
{
    ExExpr *e = cm_arena_zalloc(m->a, sizeof *e);
    ExExpr **copy = cm_arena_alloc(m->a, sizeof(ExExpr *) * (size_t)n);
    if (e == NULL || copy == NULL) {
        m->is_oom = true;
        return NULL;
    }
    memcpy(copy, args, sizeof(ExExpr *) * (size_t)n);
    *e = (ExExpr){.kind = kind, .type = type, .n_args = n, .args = copy, .src_off = -1};
    return e;
}

/* The condition of a chain of filters: its one predicate, or their AND. */
static ExExpr *chain_pred(Merge *m, PlNode *top)
{
    ExExpr *preds[16];
    int n = 0;
    for (PlNode *f = top; f->kind == PL_FILTER; f = f->child) {
        if (n == 16) {
            return NULL;
        }
        preds[n++] = f->pred;
    }
    return n == 1 ? preds[0] : expr_of(m, EX_E_AND, cm_type_make(CM_T_BOOL), n, preds);
}

/* Finds the chains and checks that the leaves differ by nothing else (a leaf
 * equal to the first has no chain of its own: the first's condition is
 * its); false when they are all equal (pl_cache_share computes such a
 * subtree once). */
static bool match_leaves(Merge *m)
{
    PlNode *a = m->leaves[0].base;
    for (int k = 1; k < m->n; k++) {
        PlNode *b = m->leaves[k].base;
        PlNode *at = NULL, *bt = NULL;
        if (!find_diff(m, a, b, &at, &bt)) {
            return false;
        }
        if (at == NULL) {
            if (!pl_cache_same_plan(m->ctx, a, b)) {
                return false;
            }
            continue;
        }
        if (m->leaves[0].chain != NULL && at != m->leaves[0].chain) {
            return false;
        }
        m->leaves[0].chain = at;
        m->leaves[k].chain = bt;
        PlNode *b_as_a = replace(m, b, bt, at);
        if (b_as_a == NULL || !pl_cache_same_plan(m->ctx, a, b_as_a)) {
            return false;
        }
    }
    return m->leaves[0].chain != NULL;
}

/* a x b, a cross join; NULL on OOM (m->is_oom). */
static PlNode *cross(Merge *m, PlNode *a, PlNode *b)
{
    PlNode *j = pl_node_new(m->a, PL_JOIN, a->n_cols + b->n_cols);
    if (j == NULL) {
        m->is_oom = true;
        return NULL;
    }
    j->join_type = EX_JOIN_INNER;
    j->child = a;
    j->right = b;
    copy_cols(j->types, j->names, 0, a, 0, a->n_cols);
    copy_cols(j->types, j->names, a->n_cols, b, 0, b->n_cols);
    return j;
}

/* The cross join `root` again, of its other leaves and then `merged` (the
 * merged aggregates' columns, in the order of their leaves), under a
 * projection that puts every column back in its place. */
static PlNode *with_others(Merge *m, PlNode *root, PlNode *merged)
{
    PlNode *j = m->others[0];
    for (int i = 1; i < m->n_others && j != NULL; i++) {
        j = cross(m, j, m->others[i]);
    }
    j = j != NULL ? cross(m, j, merged) : NULL;
    PlNode *p = pl_node_new(m->a, PL_PROJECT, root->n_cols);
    int *place = cm_arena_alloc(m->a, sizeof(int) * (size_t)root->n_cols);
    if (j == NULL || p == NULL || place == NULL ||
        (p->exprs = cm_arena_alloc(m->a, sizeof(ExExpr *) * (size_t)root->n_cols)) == NULL) {
        m->is_oom = true;
        return NULL;
    }
    int pos = 0;
    for (int i = 0; i < m->n_others; i++) {
        for (int c = 0; c < m->others[i]->n_cols; c++) {
            place[m->other_at[i] + c] = pos++;
        }
    }
    for (int k = 0; k < m->n; k++) {
        for (int c = 0; c < m->leaves[k].n_out; c++) {
            place[m->leaves[k].at + c] = pos++;
        }
    }
    for (int c = 0; c < root->n_cols; c++) {
        if ((p->exprs[c] = ex_expr_column(m->a, place[c], root->types[c])) == NULL) {
            m->is_oom = true;
            return NULL;
        }
    }
    copy_cols(p->types, p->names, 0, root, 0, root->n_cols);
    p->child = j;
    return p;
}

/* The merged plan for the cross join `root` of m's leaves, or NULL when it
 * does not apply (m->is_oom on OOM). */
static PlNode *merge(Merge *m, PlNode *root)
{
    m->is_bad = false;
    if (!match_leaves(m)) {
        return NULL;
    }
    int n = m->n, n_aggs = 0, n_top = 0, n_preds = 0;
    PlNode *bottom = below_filters(m->leaves[0].chain);
    ExExpr *preds[MAX_LEAVES]; /* the distinct conditions */
    int flag_of[MAX_LEAVES];   /* leaf k's condition: preds[flag_of[k]] */
    int first_of[MAX_LEAVES];  /* the first leaf of each condition (its flag column's name) */
    for (int k = 0; k < n; k++) {
        const Leaf *l = &m->leaves[k];
        ExExpr *p = l->chain != NULL ? chain_pred(m, l->chain) : preds[0];
        if (p == NULL) {
            return NULL;
        }
        int j = 0;
        while (j < n_preds && !pl_expr_equal(preds[j], p)) {
            j++;
        }
        if (j == n_preds) {
            first_of[n_preds] = k;
            preds[n_preds++] = p;
        }
        flag_of[k] = j;
        n_aggs += l->agg->n_aggs;
        n_top += l->n_out;
    }
    /* FILTER (p_1 OR ... OR p_n), then its columns and the n conditions */
    PlNode *f = pl_node_new(m->a, PL_FILTER, bottom->n_cols);
    PlNode *flags = pl_node_new(m->a, PL_PROJECT, bottom->n_cols + n_preds);
    PlNode *args = pl_node_new(m->a, PL_PROJECT, n_aggs);
    PlNode *agg = pl_node_new(m->a, PL_AGGREGATE, n_aggs);
    PlNode *top = pl_node_new(m->a, PL_PROJECT, n_top);
    ExAggSpec *specs = cm_arena_alloc(m->a, sizeof(ExAggSpec) * (size_t)n_aggs);
    if (f == NULL || flags == NULL || args == NULL || agg == NULL || top == NULL || specs == NULL ||
        (flags->exprs = cm_arena_alloc(m->a, sizeof(ExExpr *) * (size_t)flags->n_cols)) == NULL ||
        (args->exprs = cm_arena_alloc(m->a, sizeof(ExExpr *) * (size_t)n_aggs)) == NULL ||
        (top->exprs = cm_arena_alloc(m->a, sizeof(ExExpr *) * (size_t)n_top)) == NULL ||
        (f->pred = n_preds == 1
                       ? preds[0]
                       : expr_of(m, EX_E_OR, cm_type_make(CM_T_BOOL), n_preds, preds)) == NULL) {
        m->is_oom = true;
        return NULL;
    }
    copy_cols(f->types, f->names, 0, bottom, 0, bottom->n_cols);
    f->child = bottom;
    for (int i = 0; i < flags->n_cols; i++) {
        bool is_col = i < bottom->n_cols;
        int k = i - bottom->n_cols;
        flags->exprs[i] = is_col ? ex_expr_column(m->a, i, bottom->types[i]) : preds[k];
        flags->types[i] = is_col ? bottom->types[i] : cm_type_make(CM_T_BOOL);
        /* a condition is named after its leaf's first column: where_h8_30_to_9 */
        flags->names[i] =
            is_col ? bottom->names[i]
                   : cm_arena_printf(m->a, "where_%s", root->names[m->leaves[first_of[k]].at]);
        if (flags->exprs[i] == NULL || flags->names[i] == NULL) {
            m->is_oom = true;
            return NULL;
        }
    }
    flags->child = f;
    PlNode *input = extend(m, m->leaves[0].base, m->leaves[0].chain, flags, n_preds);
    if (input == NULL) {
        return NULL;
    }
    CmValue yes = {.type = cm_type_make(CM_T_BOOL), .i = 1};
    int at = 0, out = 0;
    for (int k = 0; k < n; k++) {
        const Leaf *l = &m->leaves[k];
        int first = at;
        ExExpr *when =
            ex_expr_column(m->a, input->n_cols - n_preds + flag_of[k], cm_type_make(CM_T_BOOL));
        for (int j = 0; when != NULL && j < l->agg->n_aggs; j++, at++) {
            const ExAggSpec *g = &l->agg->aggs[j];
            ExExpr *then = g->fn == EX_AGG_COUNT_STAR ? ex_expr_const(m->a, &yes)
                           : l->pre != NULL           ? l->pre->exprs[g->arg]
                                                      : ex_expr_column(m->a, g->arg, g->arg_type);
            ExExpr *pair[2] = {when, then};
            ExExpr *e = then != NULL ? expr_of(m, EX_E_CASE, then->type, 2, pair) : NULL;
            if (e == NULL) {
                return NULL;
            }
            args->exprs[at] = e;
            args->types[at] = e->type;
            args->names[at] = l->agg->names[j];
            specs[at] = *g;
            specs[at].fn = g->fn == EX_AGG_COUNT_STAR ? EX_AGG_COUNT : g->fn;
            specs[at].arg = at;
            specs[at].arg_type = e->type;
            agg->types[at] = l->agg->types[j];
            agg->names[at] = l->agg->names[j];
        }
        /* the leaf's own columns, over its aggregates' place in the new one */
        int *shift = cm_arena_alloc(m->a, sizeof(int) * (size_t)(l->agg->n_aggs + 1));
        if (when == NULL || shift == NULL) {
            m->is_oom = true;
            return NULL;
        }
        for (int j = 0; j < l->agg->n_aggs; j++) {
            shift[j] = first + j;
        }
        for (int j = 0; j < l->n_out; j++, out++) {
            top->exprs[out] = ex_expr_remap(m->a, l->outs[j], shift);
            if (top->exprs[out] == NULL) {
                m->is_oom = true;
                return NULL;
            }
        }
        copy_cols(top->types, top->names, out - l->n_out, root, l->at, l->n_out);
    }
    args->child = input;
    agg->child = args;
    agg->n_aggs = n_aggs;
    agg->aggs = specs;
    top->child = agg;
    return m->n_others == 0 ? top : with_others(m, root, top);
}

static PlNode *walk(Merge *m, PlNode *n)
{
    if (n == NULL || m->is_oom) {
        return n;
    }
    if (is_cross(n)) {
        m->n = m->n_others = m->n_cols = 0;
        PlNode *merged = collect(m, n) && m->n >= 2 ? merge(m, n) : NULL;
        if (merged != NULL || m->is_oom) {
            return merged;
        }
    }
    PlNode *c = walk(m, n->child);
    PlNode *r = walk(m, n->right);
    PlNode **inputs = NULL;
    for (int i = 0; n->kind == PL_UNION && i < n->n_inputs; i++) {
        PlNode *in = walk(m, n->inputs[i]);
        if (in != n->inputs[i] && inputs == NULL) {
            if ((inputs = cm_arena_alloc(m->a, sizeof(PlNode *) * (size_t)n->n_inputs)) == NULL) {
                m->is_oom = true;
                return n;
            }
            memcpy(inputs, n->inputs, sizeof(PlNode *) * (size_t)n->n_inputs);
        }
        if (inputs != NULL) {
            inputs[i] = in;
        }
    }
    if (m->is_oom || (c == n->child && r == n->right && inputs == NULL)) {
        return n;
    }
    PlNode *copy = cm_arena_alloc(m->a, sizeof *copy);
    if (copy == NULL) {
        m->is_oom = true;
        return n;
    }
    *copy = *n;
    copy->child = c;
    copy->right = r;
    copy->inputs = inputs != NULL ? inputs : n->inputs;
    return copy;
}

PlNode *pl_merge_scalar_aggs(PlCacheCtx *ctx, PlNode *root)
{
    if (!ctx->is_reusing) {
        return root;
    }
    Merge m = {.ctx = ctx, .a = ctx->arena};
    PlNode *out = walk(&m, root);
    if (m.is_oom) {
        cm_err_set(ctx->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    return out;
}
