/*
 * bind_subquery.c - scalar, IN and EXISTS subqueries, joined onto the rows
 * that use them: a subquery is planned once, never re-run per outer row.
 *
 * Uncorrelated: a scalar subquery becomes a one-row aggregate (an error past
 * one row, NULL for none) cross-joined on; EXISTS a one-row count; IN a mark
 * join, whose mark is TRUE, FALSE or NULL exactly as x IN (...) is.
 * Correlated: the subquery is bound twice.  The first pass only discovers
 * which outer columns it reads.  Then D, the distinct values of those columns
 * in the outer rows, is joined into the subquery's FROM (its conditions on the
 * outer columns become join conditions there), and the subquery's SELECT
 * carries D's columns out — as extra group keys when it aggregates.  The outer
 * rows are then joined to that result on D's columns, NULL matching NULL.  An
 * outer row whose group is empty gets what the subquery gives over no rows:
 * count 0, other aggregates NULL (the "count bug" is handled by evaluating the
 * select item once more with those empty values).
 * EXISTS over a plain join of D with the subquery's tables (no aggregate,
 * DISTINCT, LIMIT or window) takes a SEMI join of D instead of the join and
 * DISTINCT: the hash join stops at a D row's first partner (exists_as_semi).
 */
#include <string.h>

#include "executor/func.h"
#include "planner/bind/binder_int.h"
#include "planner/optimizer/estimate.h"

static void *oom(PlBinder *b)
{
    cm_err_set(b->err, CM_OOM, -1, "out of memory");
    return NULL;
}

/* *ctx->input joined with `right`; the new columns are added to the scope,
 * hidden, and the index of the first one returned (-1 on error). */
static int attach(PlBindCtx *ctx, PlNode *right, ExJoinType type, int n_keys, const int *lkeys,
                  const int *rkeys, uint64_t null_eq)
{
    PlBinder *b = ctx->b;
    PlNode *cur = *ctx->input;
    int n_new = type == EX_JOIN_MARK ? 1 : right->n_cols;
    PlNode *j = pl_node_new(b->arena, PL_JOIN, cur->n_cols + n_new);
    int *lk = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(n_keys + 1));
    int *rk = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(n_keys + 1));
    PlScopeCol *cols = cm_arena_alloc(b->arena, sizeof(PlScopeCol) * (size_t)(j ? j->n_cols : 1));
    if (j == NULL || lk == NULL || rk == NULL || cols == NULL) {
        oom(b);
        return -1;
    }
    if (n_keys > 0) {
        memcpy(lk, lkeys, sizeof(int) * (size_t)n_keys);
        memcpy(rk, rkeys, sizeof(int) * (size_t)n_keys);
    }
    j->child = cur;
    j->right = right;
    j->join_type = type;
    j->n_join_keys = n_keys;
    j->left_keys = lk;
    j->right_keys = rk;
    j->join_null_eq = null_eq;
    memcpy(j->types, cur->types, sizeof(CmType) * (size_t)cur->n_cols);
    memcpy(j->names, cur->names, sizeof(char *) * (size_t)cur->n_cols);
    for (int i = 0; i < n_new; i++) {
        j->types[cur->n_cols + i] =
            type == EX_JOIN_MARK ? cm_type_make(CM_T_BOOL) : right->types[i];
        j->names[cur->n_cols + i] = "#subquery";
    }
    PlScope *sc = ctx->mscope;
    if (sc->n > 0) { /* a scope without columns may have no array at all */
        memcpy(cols, sc->cols, sizeof(PlScopeCol) * (size_t)sc->n);
    }
    for (int i = sc->n; i < j->n_cols; i++) {
        cols[i] = (PlScopeCol){.name = "#subquery", .type = j->types[i], .hidden = true};
    }
    sc->cols = cols;
    sc->n = j->n_cols;
    *ctx->input = j;
    return cur->n_cols;
}

/* *ctx->input with one more column, `e` (over its columns); its index. */
static int append_column(PlBindCtx *ctx, ExExpr *e)
{
    PlBinder *b = ctx->b;
    PlNode *cur = *ctx->input;
    int n = cur->n_cols;
    ExExpr **exprs = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n + 1));
    PlScopeCol *cols = cm_arena_alloc(b->arena, sizeof(PlScopeCol) * (size_t)(n + 1));
    if (exprs == NULL || cols == NULL) {
        oom(b);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        exprs[i] = ex_expr_column(b->arena, i, cur->types[i]);
        if (exprs[i] == NULL) {
            oom(b);
            return -1;
        }
    }
    exprs[n] = e;
    const char **names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(n + 1));
    if (names == NULL) {
        oom(b);
        return -1;
    }
    memcpy(names, cur->names, sizeof(char *) * (size_t)n);
    names[n] = pl_expr_name(b, e, cur, "#probe");
    PlNode *p = pl_project(b, cur, n + 1, exprs, names);
    if (p == NULL) {
        return -1;
    }
    if (n > 0) {
        memcpy(cols, ctx->mscope->cols, sizeof(PlScopeCol) * (size_t)n);
    }
    cols[n] = (PlScopeCol){.name = "#probe", .type = e->type, .hidden = true};
    ctx->mscope->cols = cols;
    ctx->mscope->n = n + 1;
    *ctx->input = p;
    return n;
}

/* A node over `child` computing `exprs` (copied: callers pass stack arrays). */
static PlNode *project_exprs(PlBinder *b, PlNode *child, int n, ExExpr **in)
{
    const char **names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(n + 1));
    ExExpr **exprs = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n + 1));
    if (names == NULL || exprs == NULL) {
        return oom(b);
    }
    memcpy(exprs, in, sizeof(ExExpr *) * (size_t)n);
    for (int i = 0; i < n; i++) {
        names[i] = in[i] != NULL ? pl_expr_name(b, in[i], child, "#expr") : "#expr";
    }
    return pl_project(b, child, n, exprs, names);
}

const char *pl_outer_name(PlBinder *b, const PlNode *d, int i)
{
    const char *name = cm_arena_printf(b->arena, "outer.%s", d->names[i]);
    return name != NULL ? name : "#outer";
}

static ExExpr *col(PlBinder *b, int i, CmType t)
{
    ExExpr *e = ex_expr_column(b->arena, i, t);
    return e ? e : oom(b);
}

/* Aggregate of `child` grouped by its columns [k0, k0 + n_keys) (moved to the
 * front), computing one aggregate of column `arg`. */
static PlNode *aggregate(PlBinder *b, PlNode *child, int k0, int n_keys, ExAggFn fn, int arg)
{
    int n_pre = n_keys + (arg >= 0);
    ExExpr **pre = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n_pre + 1));
    ExAggSpec *spec = cm_arena_zalloc(b->arena, sizeof *spec);
    PlNode *a = pl_node_new(b->arena, PL_AGGREGATE, n_keys + 1);
    if (pre == NULL || spec == NULL || a == NULL) {
        return oom(b);
    }
    for (int k = 0; k < n_keys; k++) {
        if ((pre[k] = col(b, k0 + k, child->types[k0 + k])) == NULL) {
            return NULL;
        }
        a->types[k] = child->types[k0 + k];
        a->names[k] = child->names[k0 + k]; /* EXPLAIN names the keys as they came */
    }
    CmType at = arg >= 0 ? child->types[arg] : cm_type_make(CM_T_INT64);
    if (arg >= 0 && (pre[n_keys] = col(b, arg, at)) == NULL) {
        return NULL;
    }
    spec->fn = fn;
    spec->arg = arg >= 0 ? n_keys : -1;
    spec->arg_type = at;
    spec->type = fn == EX_AGG_COUNT_STAR ? cm_type_make(CM_T_INT64) : at;
    a->types[n_keys] = spec->type;
    const char *call =
        cm_arena_printf(b->arena, "%s(%s)", ex_agg_fn_name(fn), arg >= 0 ? child->names[arg] : "");
    a->names[n_keys] = call != NULL ? call : "#value";
    a->n_keys = n_keys;
    a->n_aggs = 1;
    a->aggs = spec;
    a->child = project_exprs(b, child, n_pre, pre);
    return a->child ? a : NULL;
}

/* Whether no two rows of n agree on all of its columns cols[0..n_cols): an
 * aggregate grouped by some of them (or by none), seen through filters,
 * sorts, limits and projections that pass those columns on as they are. */
static bool unique_on(const PlNode *n, const int *cols, int n_cols)
{
    switch (n->kind) {
    case PL_AGGREGATE:
        if (n->is_side_tagged || n->empty_set_key >= 0) {
            return false;
        }
        for (int k = 0; k < n->n_keys; k++) {
            bool found = false;
            for (int i = 0; i < n_cols && !found; i++) {
                found = cols[i] == k;
            }
            if (!found) {
                return false;
            }
        }
        return true;
    case PL_FILTER:
    case PL_SORT:
    case PL_LIMIT:
        return unique_on(n->child, cols, n_cols);
    case PL_PROJECT: {
        int below[PL_MAX_CORR + 1];
        int n_below = 0;
        for (int i = 0; i < n_cols && n_below <= PL_MAX_CORR; i++) {
            const ExExpr *e = n->exprs[cols[i]];
            if (e->kind == EX_E_COLUMN) {
                below[n_below++] = e->col;
            }
        }
        return n_below <= PL_MAX_CORR && unique_on(n->child, below, n_below);
    }
    default:
        return false;
    }
}

static ExExpr *negate(PlBindCtx *ctx, ExExpr *e, bool negated, int64_t off)
{
    return e && negated ? pl_make_call(ctx->b, "not", &e, 1, off) : e;
}

static ExExpr *make_case3(PlBinder *b, ExExpr **args, int n, CmType t, int64_t off)
{
    ExExpr **a = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)n);
    ExExpr *e = cm_arena_zalloc(b->arena, sizeof *e);
    if (a == NULL || e == NULL) {
        return oom(b);
    }
    for (int i = 0; i < n; i++) {
        bool is_value = i % 2 == 1 || i == n - 1;
        a[i] = pl_cast(b, args[i], is_value ? t : cm_type_make(CM_T_BOOL), off);
        if (a[i] == NULL) {
            return NULL;
        }
    }
    *e = (ExExpr){
        .kind = EX_E_CASE, .type = t, .n_args = n, .args = a, .has_else = true, .src_off = off};
    return e;
}

/* x IN (correlated subquery), from the plain match `m` and the group's row and
 * non-NULL counts: TRUE if matched; FALSE for an empty group; NULL when x is
 * NULL or the group holds a NULL; else FALSE. */
static ExExpr *correlated_in_value(PlBindCtx *ctx, const PsExpr *ast, PlNode *build, int nc,
                                   const int *lkeys, ExExpr *m, int xcol)
{
    PlBinder *b = ctx->b;
    PlNode *a = pl_node_new(b->arena, PL_AGGREGATE, nc + 2);
    ExAggSpec *aggs = cm_arena_zalloc(b->arena, sizeof(ExAggSpec) * 2);
    if (a == NULL || aggs == NULL) {
        return oom(b);
    }
    for (int k = 0; k < nc; k++) {
        a->types[k] = build->types[k];
        a->names[k] = build->names[k];
    }
    CmType i64 = cm_type_make(CM_T_INT64);
    aggs[0] = (ExAggSpec){.fn = EX_AGG_COUNT_STAR, .arg = -1, .arg_type = i64, .type = i64};
    aggs[1] = (ExAggSpec){.fn = EX_AGG_COUNT, .arg = nc, .arg_type = build->types[nc], .type = i64};
    a->types[nc] = a->types[nc + 1] = i64;
    a->names[nc] = a->names[nc + 1] = "#count";
    a->n_keys = nc;
    a->n_aggs = 2;
    a->aggs = aggs;
    a->child = build; /* its columns: the correlated values, then the value */
    int rk[PL_MAX_CORR];
    for (int k = 0; k < nc; k++) {
        rk[k] = k;
    }
    uint64_t all_eq = nc >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << nc) - 1);
    int c = attach(ctx, a, EX_JOIN_LEFT, nc, lkeys, rk, all_eq);
    if (c < 0) {
        return NULL;
    }
    ExExpr *n = col(b, c + nc, i64), *nn = col(b, c + nc + 1, i64);
    ExExpr *x = col(b, xcol, (*ctx->input)->types[xcol]);
    if (n == NULL || nn == NULL || x == NULL) {
        return NULL;
    }
    ExExpr *gt[2] = {n, nn};
    ExExpr *no_group = pl_make_call(b, "is_null", &n, 1, ast->src_off);
    ExExpr *x_null = pl_make_call(b, "is_null", &x, 1, ast->src_off);
    ExExpr *has_null = pl_make_call(b, ">", gt, 2, ast->src_off);
    ExExpr *unknown = x_null && has_null ? pl_make_or(b, x_null, has_null) : NULL;
    CmValue yes = {.type = cm_type_make(CM_T_BOOL), .i = 1};
    CmValue no = {.type = cm_type_make(CM_T_BOOL), .i = 0};
    CmValue null = {.type = cm_type_make(CM_T_BOOL), .is_null = true};
    ExExpr *args[7] = {m,
                       ex_expr_const(b->arena, &yes),
                       no_group,
                       ex_expr_const(b->arena, &no),
                       unknown,
                       ex_expr_const(b->arena, &null),
                       ex_expr_const(b->arena, &no)};
    for (int i = 0; i < 7; i++) {
        if (args[i] == NULL) {
            return NULL;
        }
    }
    return make_case3(b, args, 7, cm_type_make(CM_T_BOOL), ast->src_off);
}

/* ---- uncorrelated ------------------------------------------------------------------- */

/* *t: the type x IN (...) compares x and a value of type `vt` as. */
static bool in_type(PlBinder *b, const ExExpr *x, CmType vt, int64_t off, CmType *t)
{
    if (!ex_common_type(x->type, vt, t)) {
        cm_err_set(b->err, CM_TYPE, off, "IN compares values of incompatible types");
        return false;
    }
    if (x->kind == EX_E_CONST && x->type.id == CM_T_VARCHAR && !x->value.is_null &&
        t->id != CM_T_VARCHAR) {
        /* As for '=': a string that is not a value of the other type compares as text. */
        CmErr probe;
        cm_err_init(&probe);
        CmValue v;
        if (ex_cast_value(&x->value, *t, b->arena, &v, &probe) != CM_OK) {
            if (pl_trial_oom(b, &probe)) {
                return false;
            }
            *t = cm_type_varchar(-1, false);
        }
    }
    return true;
}

static ExExpr *in_select(PlBindCtx *ctx, const PsExpr *ast, PlNode *q, int n_corr, const int *lkeys,
                         int value_col)
{
    PlBinder *b = ctx->b;
    ExExpr *x = ctx->in_left ? ctx->in_left : pl_bind_expr(ctx, ast->left);
    CmType t;
    if (x == NULL || !in_type(b, x, q->types[value_col], ast->src_off, &t)) {
        return NULL;
    }
    /* Build side: the correlated columns, then the value, of one type. */
    ExExpr **exprs = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n_corr + 1));
    if (exprs == NULL) {
        return oom(b);
    }
    for (int k = 0; k < n_corr; k++) {
        if ((exprs[k] = col(b, value_col + 1 + k, q->types[value_col + 1 + k])) == NULL) {
            return NULL;
        }
    }
    exprs[n_corr] = pl_cast(b, col(b, value_col, q->types[value_col]), t, ast->src_off);
    PlNode *right = exprs[n_corr] ? project_exprs(b, q, n_corr + 1, exprs) : NULL;
    ExExpr *xc = pl_cast(b, x, t, ast->src_off);
    int xcol = right && xc ? append_column(ctx, xc) : -1;
    if (xcol < 0) {
        return NULL;
    }
    int lk[PL_MAX_CORR + 1], rk[PL_MAX_CORR + 1];
    for (int k = 0; k < n_corr; k++) {
        lk[k] = lkeys[k];
        rk[k] = k;
    }
    lk[n_corr] = xcol;
    rk[n_corr] = n_corr;
    uint64_t null_eq = n_corr >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << n_corr) - 1);
    int mark = attach(ctx, right, EX_JOIN_MARK, n_corr + 1, lk, rk, null_eq);
    if (mark < 0) {
        return NULL;
    }
    ExExpr *m = col(b, mark, cm_type_make(CM_T_BOOL));
    if (n_corr > 0) {
        /* The mark join's NULL logic sees the whole build side; per outer row
         * it must see only its group: decided from the group's counts. */
        (*ctx->input)->join_mark_plain = true;
        m = m ? correlated_in_value(ctx, ast, right, n_corr, lkeys, m, xcol) : NULL;
    }
    return negate(ctx, m, ast->negated, ast->src_off);
}

/* Most items of a row value compared with IN (subquery): its NULL logic takes
 * one join per subset of the items (row_in_select), 2^n of them. */
#define PL_MAX_ROW_IN 4

/* The mark of row_in_select's join over the items in `k` (a bit mask): the
 * subquery's distinct (correlated values, its items in k, whether each other
 * item is NULL), joined on the correlated values and the items in k, with the
 * residual that each other item is NULL on one side or the other. */
static ExExpr *subset_mark(PlBindCtx *ctx, PlNode *q, int nc, const int *lkeys, int n,
                           const CmType *t, const int *xcol, unsigned k, int64_t off)
{
    PlBinder *b = ctx->b;
    unsigned full = (1u << n) - 1;
    ExExpr *exprs[PL_MAX_CORR + 2 * PL_MAX_ROW_IN];
    int lk[PL_MAX_CORR + PL_MAX_ROW_IN], rk[PL_MAX_CORR + PL_MAX_ROW_IN];
    int ne = 0;
    for (int c = 0; c < nc; c++, ne++) {
        lk[ne] = lkeys[c];
        rk[ne] = ne;
        if ((exprs[ne] = col(b, n + c, q->types[n + c])) == NULL) {
            return NULL;
        }
    }
    for (int i = 0; i < n; i++) {
        if (k & (1u << i)) {
            lk[ne] = xcol[i];
            rk[ne] = ne;
            if ((exprs[ne++] = pl_cast(b, col(b, i, q->types[i]), t[i], off)) == NULL) {
                return NULL;
            }
        }
    }
    int n_keys = ne;
    for (int i = 0; i < n; i++) {
        ExExpr *v = (k & (1u << i)) ? NULL : col(b, i, q->types[i]);
        if (v != NULL && (exprs[ne++] = pl_make_call(b, "is_null", &v, 1, off)) == NULL) {
            return NULL;
        }
    }
    PlNode *right = project_exprs(b, q, ne, exprs);
    right = right && k != full ? pl_distinct(b, right) : right;
    if (right == NULL) {
        return NULL;
    }
    const PlNode *probe = *ctx->input;
    ExExpr *residual = NULL;
    for (int i = 0, flag = n_keys; i < n; i++) {
        if (k & (1u << i)) {
            continue;
        }
        ExExpr *xi = col(b, xcol[i], probe->types[xcol[i]]);
        ExExpr *x_null = xi ? pl_make_call(b, "is_null", &xi, 1, off) : NULL;
        ExExpr *s_null = col(b, probe->n_cols + flag++, cm_type_make(CM_T_BOOL));
        ExExpr *either = x_null && s_null ? pl_make_or(b, x_null, s_null) : NULL;
        residual = either && residual ? pl_make_and(b, residual, either) : either;
        if (residual == NULL) {
            return NULL;
        }
    }
    uint64_t null_eq = nc >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << nc) - 1);
    int mark = attach(ctx, right, EX_JOIN_MARK, n_keys, lk, rk, null_eq);
    if (mark < 0) {
        return NULL;
    }
    (*ctx->input)->join_mark_plain = true;
    (*ctx->input)->residual = residual;
    return col(b, mark, cm_type_make(CM_T_BOOL));
}

/* (x_1, .., x_n) [NOT] IN (subquery), whose columns are its n values and then
 * (correlated) the nc correlated values, which lkeys give in the input.
 * TRUE when a row equals x item for item; else NULL when one could, each pair
 * of items being equal or holding a NULL; else FALSE (also over no rows), as
 * in PostgreSQL and SQLite.  A row that could match does so over the items K
 * where neither side is NULL, so there is one plain mark join per subset K
 * (subset_mark): on K for the exact match (all items), and on each smaller K
 * with a residual that every other item is NULL on one side.  Taking the
 * subquery's distinct (K values, NULL flags) bounds the residual's work to
 * 2^(n-|K|) rows per probe row; the joins are hash joins but for K empty
 * (without correlation), whose build side has at most 2^n rows.  A WHERE
 * conjunct that is the IN itself (not NOT IN) needs the exact match only. */
static ExExpr *row_in_select(PlBindCtx *ctx, const PsExpr *ast, PlNode *q, int nc, const int *lkeys)
{
    PlBinder *b = ctx->b;
    const PsList *items = ast->left->args;
    int n = items->n;
    if (n > PL_MAX_ROW_IN) {
        cm_err_set(b->err, CM_LIMIT, ast->left->src_off,
                   "a row value compared with IN (subquery) may have at most %d items",
                   PL_MAX_ROW_IN);
        return NULL;
    }
    ExExpr *x[PL_MAX_ROW_IN];
    CmType t[PL_MAX_ROW_IN];
    int xcol[PL_MAX_ROW_IN];
    for (int i = 0; i < n; i++) {
        const PsExpr *item = items->items[i];
        x[i] = ctx->in_row ? ctx->in_row[i] : pl_bind_expr(ctx, item);
        if (x[i] == NULL || !in_type(b, x[i], q->types[i], item->src_off, &t[i])) {
            return NULL;
        }
    }
    for (int i = 0; i < n; i++) {
        const PsExpr *item = items->items[i];
        ExExpr *xc = pl_cast(b, x[i], t[i], item->src_off);
        if (xc == NULL || (xcol[i] = append_column(ctx, xc)) < 0) {
            return NULL;
        }
    }
    unsigned full = (1u << n) - 1;
    if (ctx->filter_top == ast && !ast->negated) {
        /* A WHERE conjunct: NULL drops the row as FALSE does, so only the exact
         * match counts, one join instead of 2^n. */
        return subset_mark(ctx, q, nc, lkeys, n, t, xcol, full, ast->src_off);
    }
    ExExpr *exact = NULL, *could = NULL;
    for (unsigned k = full + 1; k-- > 0;) {
        ExExpr *m = subset_mark(ctx, q, nc, lkeys, n, t, xcol, k, ast->src_off);
        if (m == NULL) {
            return NULL;
        }
        if (k == full) {
            exact = m;
        } else if ((could = could ? pl_make_or(b, could, m) : m) == NULL) {
            return NULL;
        }
    }
    CmValue yes = {.type = cm_type_make(CM_T_BOOL), .i = 1};
    CmValue no = {.type = cm_type_make(CM_T_BOOL), .i = 0};
    CmValue null = {.type = cm_type_make(CM_T_BOOL), .is_null = true};
    ExExpr *args[5] = {exact, ex_expr_const(b->arena, &yes), could, ex_expr_const(b->arena, &null),
                       ex_expr_const(b->arena, &no)};
    if (args[1] == NULL || args[3] == NULL || args[4] == NULL) {
        return oom(b);
    }
    ExExpr *v = make_case3(b, args, 5, cm_type_make(CM_T_BOOL), ast->src_off);
    return negate(ctx, v, ast->negated, ast->src_off);
}

/* The columns a subquery compared with IN must have; false with b->err set. */
static bool in_arity(PlBinder *b, const PsExpr *ast, int n_cols)
{
    int n = ast->left->kind == PS_EX_ROW ? ast->left->args->n : 1;
    if (n_cols == n) {
        return true;
    }
    int64_t off = n > 1 ? ast->subquery->src_off : ast->src_off;
    if (n_cols > n) {
        cm_err_set(b->err, CM_BIND, off, "subquery has too many columns");
    } else {
        cm_err_set(b->err, CM_BIND, off, "subquery has too few columns");
    }
    return false;
}

bool pl_bind_row_subquery(PlBindCtx *ctx, const PsExpr *ast, int n, ExExpr **out)
{
    PlBinder *b = ctx->b;
    PlAggCtx *agg = ctx->agg;
    if (ctx->input == NULL || ctx->mscope == NULL || (agg != NULL && agg->empty) ||
        (agg == NULL && ctx->post_agg != NULL)) {
        cm_err_set(b->err, CM_BIND, ast->src_off, "a subquery is not supported here");
        return false;
    }
    PlBindCtx pre = *ctx; /* after aggregation: it sees the group keys */
    pre.agg = NULL;
    pre.grouped = agg;
    pre.grouped_scope = agg ? ctx->scope : NULL;
    PlOuter o;
    PlNode *q = pl_subquery_outer_refs(agg ? &pre : ctx, ast, &o);
    if (q == NULL) {
        return false;
    }
    if (o.n_refs > 0) {
        cm_err_set(b->err, CM_BIND, ast->src_off,
                   "a correlated subquery compared with a row value is not supported yet");
        return false;
    }
    if (q->n_cols != n) {
        cm_err_set(b->err, CM_BIND, ast->src_off, "subquery has too %s columns",
                   q->n_cols > n ? "many" : "few");
        return false;
    }
    PlNode *a = pl_node_new(b->arena, PL_AGGREGATE, n);
    ExAggSpec *spec = cm_arena_zalloc(b->arena, sizeof(ExAggSpec) * (size_t)n);
    if (a == NULL || spec == NULL) {
        oom(b);
        return false;
    }
    for (int i = 0; i < n; i++) {
        spec[i] = (ExAggSpec){
            .fn = EX_AGG_SCALAR, .arg = i, .arg_type = q->types[i], .type = q->types[i]};
        a->types[i] = q->types[i];
        a->names[i] = q->names[i];
    }
    a->n_aggs = n;
    a->aggs = spec;
    a->child = q;
    if (agg != NULL) {
        /* After aggregation: joined onto the aggregate's output, one column
         * per one-row plan (join_post), so a projection of `a` for each. */
        if (agg->n_post + n > PL_MAX_POST) {
            cm_err_set(b->err, CM_LIMIT, ast->src_off, "too many subqueries after aggregation");
            return false;
        }
        for (int i = 0; i < n; i++) {
            ExExpr *v = col(b, i, q->types[i]);
            PlNode *one = v ? project_exprs(b, a, 1, &v) : NULL;
            if (one == NULL || (out[i] = col(b, PL_POST_BASE + agg->n_post, q->types[i])) == NULL) {
                return false;
            }
            agg->post[agg->n_post++] = one;
        }
        return true;
    }
    int c = attach(ctx, a, EX_JOIN_INNER, 0, NULL, NULL, 0);
    for (int i = 0; c >= 0 && i < n; i++) {
        if ((out[i] = col(b, c + i, q->types[i])) == NULL) {
            return false;
        }
    }
    return c >= 0;
}

static ExExpr *uncorrelated(PlBindCtx *ctx, const PsExpr *ast, PlNode *q)
{
    PlBinder *b = ctx->b;
    if (ast->kind == PS_EX_IN_SELECT) {
        if (!in_arity(b, ast, q->n_cols)) {
            return NULL;
        }
        return ast->left->kind == PS_EX_ROW ? row_in_select(ctx, ast, q, 0, NULL)
                                            : in_select(ctx, ast, q, 0, NULL, 0);
    }
    PlNode *one;
    if (ctx->post_agg != NULL && ctx->post_agg->n_post == PL_MAX_POST) {
        cm_err_set(b->err, CM_LIMIT, ast->src_off, "too many subqueries after aggregation");
        return NULL;
    }
    if (ast->kind == PS_EX_EXISTS) {
        PlNode *lim = pl_node_new(b->arena, PL_LIMIT, q->n_cols);
        if (lim == NULL) {
            return oom(b);
        }
        memcpy(lim->types, q->types, sizeof(CmType) * (size_t)q->n_cols);
        memcpy(lim->names, q->names, sizeof(char *) * (size_t)q->n_cols);
        lim->child = q;
        lim->limit = 1;
        one = aggregate(b, lim, 0, 0, EX_AGG_COUNT_STAR, -1);
    } else {
        if (q->n_cols != 1) {
            cm_err_set(b->err, CM_BIND, ast->src_off, "subquery must return only one column");
            return NULL;
        }
        one = aggregate(b, q, 0, 0, EX_AGG_SCALAR, 0);
    }
    ExExpr *v;
    if (one != NULL && ctx->post_agg != NULL) {
        /* After aggregation: joined onto the aggregate's one-row-per-group output. */
        PlAggCtx *agg = ctx->post_agg;
        agg->post[agg->n_post] = one;
        v = col(b, PL_POST_BASE + agg->n_post++, one->types[0]);
    } else {
        int c = one ? attach(ctx, one, EX_JOIN_INNER, 0, NULL, NULL, 0) : -1;
        if (c < 0) {
            return NULL;
        }
        v = col(b, c, (*ctx->input)->types[c]);
    }
    if (ast->kind != PS_EX_EXISTS || v == NULL) {
        return v;
    }
    CmValue zero = {.type = cm_type_make(CM_T_INT64), .i = 0};
    ExExpr *args[2] = {v, ex_expr_const(b->arena, &zero)};
    return args[1] ? pl_make_call(b, ast->negated ? "=" : ">", args, 2, ast->src_off) : oom(b);
}

/* ---- correlated ---------------------------------------------------------------------- */

/* D: the distinct values of the outer columns the subquery reads. */
static PlNode *outer_values(PlBindCtx *ctx, const PlOuter *o)
{
    PlBinder *b = ctx->b;
    ExExpr **exprs = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)o->n_refs);
    if (exprs == NULL) {
        return oom(b);
    }
    for (int k = 0; k < o->n_refs; k++) {
        if ((exprs[k] = col(b, o->refs[k], o->types[k])) == NULL) {
            return NULL;
        }
    }
    /* When the outer columns all come from one table of the FROM clause, D is
     * taken from that table alone: a superset of the values the joined rows
     * hold (extra values find no partner later), without planning the whole
     * join a second time.  Unless the joins are estimated to keep under a
     * quarter of the table's rows: then from the joined rows, which the plan
     * then computes once for both uses (cache.h: pl_cache_share). */
    int local[PL_MAX_CORR];
    PlNode *leaf = ctx->js ? pl_join_leaf_of(ctx->js, o->refs, o->n_refs, local) : NULL;
    PlEst *est = leaf != NULL && ctx->base != NULL ? pl_est_new() : NULL;
    if (est != NULL && pl_est_rows(est, ctx->base) * 4 < pl_est_rows(est, leaf)) {
        leaf = NULL;
    }
    pl_est_free(est);
    for (int k = 0; leaf != NULL && k < o->n_refs; k++) {
        exprs[k]->col = local[k];
    }
    PlNode *p = project_exprs(b, leaf ? leaf : ctx->base, o->n_refs, exprs);
    return p ? pl_distinct(b, p) : NULL;
}

/* True when `side` gives D's nd columns first, unchanged: D itself, under
 * filters and projections that keep them in front (join keys computed from
 * expressions are added after them). */
static bool is_d_side(const PlNode *side, const PlNode *d, int nd)
{
    while (side != d) {
        if (side->kind == PL_PROJECT) {
            for (int k = 0; k < nd; k++) {
                const ExExpr *e = k < side->n_cols ? side->exprs[k] : NULL;
                if (e == NULL || e->kind != EX_E_COLUMN || e->col != k) {
                    return false;
                }
            }
        } else if (side->kind != PL_FILTER) {
            return false;
        }
        side = side->child;
    }
    return true;
}

/* EXISTS: the D rows that have a partner, as a SEMI join, when the subquery
 * is its FROM clause's join of D with the rest and nothing but projections
 * above it (no aggregate, DISTINCT, LIMIT, window or condition with a
 * subquery).  The plain plan joins every D row to every partner and then
 * takes the distinct D rows back: with a condition besides the equalities
 * (`a.k = b.k AND a.w <> b.w`) that is every pair of a key's group, 200M
 * pairs for 2M rows in groups of 100, where a semi join stops at a row's first
 * partner.  D's columns come out first, as the caller's plan expects.  NULL
 * with no error when the subquery has another shape. */
/* os, the subquery's side of an EXISTS semi join with D's side ds, reduced
 * to its rows whose keys occur in ds (a SEMI join on the equality keys
 * alone, built from ds), when ds is estimated at under a quarter of os: the
 * semi join then builds its table from the few rows that can matter, not
 * from the whole inner table (TPC-H q4: the orders of one quarter probe a
 * table built from lineitem's 3.8M late lines at SF 1).  os itself when not
 * worth it; NULL on OOM. */
static PlNode *reduced_by_d(PlBinder *b, PlNode *os, PlNode *ds, const PlNode *semi)
{
    PlEst *est = pl_est_new();
    bool worth = est != NULL && pl_est_rows(est, ds) * 4 < pl_est_rows(est, os);
    pl_est_free(est);
    if (!worth) {
        return os;
    }
    PlNode *r = pl_node_new(b->arena, PL_JOIN, os->n_cols);
    if (r == NULL) {
        return oom(b);
    }
    r->child = os;
    r->right = ds;
    r->join_type = EX_JOIN_SEMI;
    r->n_join_keys = semi->n_join_keys;
    r->left_keys = semi->right_keys;
    r->right_keys = semi->left_keys;
    r->join_null_eq = semi->join_null_eq;
    memcpy(r->types, os->types, sizeof(CmType) * (size_t)os->n_cols);
    memcpy(r->names, os->names, sizeof(char *) * (size_t)os->n_cols);
    return r;
}

static PlNode *exists_as_semi(PlBinder *b, PlNode *q, const PlNode *d, int nd)
{
    PlNode *j = q;
    while (j->kind == PL_PROJECT) {
        j = j->child;
    }
    if (j->kind != PL_JOIN || j->join_type != EX_JOIN_INNER || j->n_join_keys == 0) {
        return NULL;
    }
    bool d_left = is_d_side(j->child, d, nd);
    if (!d_left && !is_d_side(j->right, d, nd)) {
        return NULL;
    }
    PlNode *ds = d_left ? j->child : j->right, *os = d_left ? j->right : j->child;
    ExExpr *residual = j->residual;
    if (residual != NULL && !d_left) { /* its columns were os ++ ds; now ds ++ os */
        int *map = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(j->n_cols + 1));
        if (map == NULL) {
            return oom(b);
        }
        for (int c = 0; c < os->n_cols; c++) {
            map[c] = ds->n_cols + c;
        }
        for (int c = 0; c < ds->n_cols; c++) {
            map[os->n_cols + c] = c;
        }
        if ((residual = ex_expr_remap(b->arena, residual, map)) == NULL) {
            return oom(b);
        }
    }
    PlNode *semi = pl_node_new(b->arena, PL_JOIN, ds->n_cols);
    if (semi == NULL) {
        return oom(b);
    }
    semi->child = ds;
    semi->right = os;
    semi->join_type = EX_JOIN_SEMI;
    semi->n_join_keys = j->n_join_keys;
    semi->left_keys = d_left ? j->left_keys : j->right_keys;
    semi->right_keys = d_left ? j->right_keys : j->left_keys;
    semi->join_null_eq = j->join_null_eq;
    semi->residual = residual;
    memcpy(semi->types, ds->types, sizeof(CmType) * (size_t)ds->n_cols);
    memcpy(semi->names, ds->names, sizeof(char *) * (size_t)ds->n_cols);
    if ((semi->right = reduced_by_d(b, os, ds, semi)) == NULL) {
        return NULL;
    }
    if (ds->n_cols == nd) {
        return semi;
    }
    ExExpr *keys[PL_MAX_CORR + 1];
    for (int k = 0; k < nd; k++) {
        if ((keys[k] = col(b, k, ds->types[k])) == NULL) {
            return NULL;
        }
    }
    return project_exprs(b, semi, nd, keys);
}

static ExExpr *correlated(PlBindCtx *ctx, const PsExpr *ast, PlOuter *o)
{
    PlBinder *b = ctx->b;
    PlNode *d = outer_values(ctx, o);
    if (d == NULL) {
        return NULL;
    }
    PlInject inj = {.d = d, .outer = o};
    PlOuter *saved_outer = b->outer;
    b->outer = o;
    b->inject = &inj;
    b->carry = &inj;
    PlNode *q = pl_bind_query(b, ast->subquery);
    b->outer = saved_outer;
    b->inject = NULL;
    b->carry = NULL;
    if (q == NULL) {
        return NULL;
    }
    if (!inj.joined || !inj.carried) {
        cm_err_set(b->err, CM_BIND, ast->src_off, "this correlated subquery is not supported yet");
        return NULL;
    }
    int nc = o->n_refs;
    int rk[PL_MAX_CORR];
    for (int k = 0; k < nc; k++) {
        rk[k] = k;
    }
    uint64_t all_eq = nc >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << nc) - 1);
    if (ast->kind == PS_EX_EXISTS && inj.plain_aggregate && ast->subquery->having == NULL) {
        /* An aggregate without GROUP BY returns a row even for an empty group. */
        CmValue v = {.type = cm_type_make(CM_T_BOOL), .i = !ast->negated};
        return ex_expr_const(b->arena, &v);
    }
    if (ast->kind == PS_EX_IN_SELECT) {
        if (!in_arity(b, ast, inj.n_values)) {
            return NULL;
        }
        return ast->left->kind == PS_EX_ROW ? row_in_select(ctx, ast, q, nc, o->refs)
                                            : in_select(ctx, ast, q, nc, o->refs, 0);
    }
    /* The outer values (to join on) and a marker that says a group was found. */
    PlNode *right;
    int value = -1;
    if (ast->kind == PS_EX_EXISTS && (right = exists_as_semi(b, q, d, nc)) != NULL) {
        /* D is distinct already, and a semi join keeps each of its rows once */
    } else if (ast->kind == PS_EX_EXISTS) {
        if (b->err->code != CM_OK) {
            return NULL;
        }
        ExExpr *keys[PL_MAX_CORR + 1];
        for (int k = 0; k < nc; k++) {
            if ((keys[k] = col(b, inj.n_values + k, q->types[inj.n_values + k])) == NULL) {
                return NULL;
            }
        }
        right = project_exprs(b, q, nc, keys);
        right = right ? pl_distinct(b, right) : NULL;
    } else {
        if (inj.n_values != 1) {
            cm_err_set(b->err, CM_BIND, ast->src_off, "subquery must return only one column");
            return NULL;
        }
        int keys[PL_MAX_CORR] = {0};
        for (int k = 0; k < nc; k++) {
            keys[k] = 1 + k;
        }
        if (unique_on(q, keys, nc)) {
            /* The subquery is an aggregate grouped by the outer values (as
             * decorrelating `SELECT agg(x) ... WHERE k = outer.k` makes it):
             * one row a group, so no SCALAR check, nor the shuffle its
             * aggregate costs.  The keys first, then the value. */
            ExExpr *order[PL_MAX_CORR + 1];
            for (int k = 0; k <= nc; k++) {
                int from = k < nc ? 1 + k : 0;
                if ((order[k] = col(b, from, q->types[from])) == NULL) {
                    return NULL;
                }
            }
            right = project_exprs(b, q, nc + 1, order);
        } else {
            right = aggregate(b, q, 1, nc, EX_AGG_SCALAR, 0);
        }
        value = nc;
    }
    ExExpr *with_marker[PL_MAX_CORR + 2];
    for (int k = 0; right != NULL && k < right->n_cols; k++) {
        if ((with_marker[k] = col(b, k, right->types[k])) == NULL) {
            return NULL;
        }
    }
    CmValue yes = {.type = cm_type_make(CM_T_BOOL), .i = 1};
    if (right == NULL || (with_marker[right->n_cols] = ex_expr_const(b->arena, &yes)) == NULL) {
        return right ? oom(b) : NULL;
    }
    int marker_at = right->n_cols;
    right = project_exprs(b, right, right->n_cols + 1, with_marker);
    int c = right ? attach(ctx, right, EX_JOIN_LEFT, nc, o->refs, rk, all_eq) : -1;
    if (c < 0) {
        return NULL;
    }
    PlNode *cur = *ctx->input;
    ExExpr *marker = col(b, c + marker_at, cur->types[c + marker_at]);
    if (marker == NULL) {
        return NULL;
    }
    if (ast->kind == PS_EX_EXISTS) {
        return pl_make_call(b, ast->negated ? "is_null" : "is_not_null", &marker, 1, ast->src_off);
    }
    ExExpr *v = col(b, c + value, cur->types[c + value]);
    ExExpr *empty = inj.empty_value;
    if (v == NULL || empty == NULL || (empty->kind == EX_E_CONST && empty->value.is_null)) {
        return v;
    }
    /* CASE WHEN marker IS NOT NULL THEN value ELSE <value over no rows> END */
    ExExpr *found = pl_make_call(b, "is_not_null", &marker, 1, ast->src_off);
    CmType t;
    if (found == NULL || !ex_common_type(v->type, empty->type, &t)) {
        return found ? v : NULL;
    }
    ExExpr **args = cm_arena_alloc(b->arena, sizeof(ExExpr *) * 3);
    ExExpr *e = cm_arena_zalloc(b->arena, sizeof *e);
    if (args == NULL || e == NULL) {
        return oom(b);
    }
    args[0] = found;
    args[1] = pl_cast(b, v, t, ast->src_off);
    args[2] = pl_cast(b, empty, t, ast->src_off);
    if (args[1] == NULL || args[2] == NULL) {
        return NULL;
    }
    e->kind = EX_E_CASE;
    e->type = t;
    e->n_args = 3;
    e->args = args;
    e->has_else = true;
    e->src_off = ast->src_off;
    return e;
}

/* `const IN (uncorrelated subquery)` as a plan of one row and one BOOLEAN
 * column: a one-row VALUES probing the subquery with a mark join.  Lets such
 * an IN stand after aggregation, where it joins onto the aggregate's output. */
PlNode *pl_bind_in_one_row(PlBindCtx *ctx, const PsExpr *ast)
{
    PlBinder *b = ctx->b;
    PlNode *one = pl_node_new(b->arena, PL_VALUES, 0);
    if (one == NULL) {
        return oom(b);
    }
    one->n_rows = 1;
    PlScope sc = {0};
    PlNode *input = one;
    PlBindCtx c = {
        .b = b, .scope = &sc, .mscope = &sc, .input = &input, .base = one, .clause = ctx->clause};
    ExExpr *m = pl_bind_subquery(&c, ast);
    if (m == NULL) {
        return NULL;
    }
    return project_exprs(b, input, 1, &m);
}

PlNode *pl_subquery_outer_refs(PlBindCtx *ctx, const PsExpr *ast, PlOuter *o)
{
    PlBinder *b = ctx->b;
    *o = (PlOuter){.scope = ctx->grouped ? ctx->grouped_scope : ctx->mscope,
                   .parent = b->outer,
                   .grouped = ctx->grouped,
                   .inject_offset = -1};
    PlOuter *saved = b->outer;
    b->outer = o;
    PlNode *q = pl_bind_query(b, ast->subquery);
    b->outer = saved;
    return q;
}

ExExpr *pl_bind_subquery(PlBindCtx *ctx, const PsExpr *ast)
{
    PlBinder *b = ctx->b;
    if (ctx->input == NULL || ctx->mscope == NULL) {
        cm_err_set(b->err, CM_BIND, ast->src_off, "a subquery is not supported here");
        return NULL;
    }
    /* Pass 1: plan it, and learn which outer columns it reads. */
    PlOuter o;
    PlNode *q = pl_subquery_outer_refs(ctx, ast, &o);
    if (q == NULL) {
        return NULL;
    }
    if (ctx->correlated != NULL && o.n_refs > 0) {
        *ctx->correlated = true;
    }
    if (ctx->leaf_refs != NULL && o.n_refs > 0) {
        *ctx->leaf_refs |= ctx->js ? pl_join_leaves_of(ctx->js, o.refs, o.n_refs) : ~(uint64_t)0;
    }
    return o.n_refs == 0 ? uncorrelated(ctx, ast, q) : correlated(ctx, ast, &o);
}
