/*
 * bind_row.c - row values: (a, b) compared with a row, a list of rows or a
 * one-row subquery, taken apart into comparisons of their items.
 *
 * The meaning is PostgreSQL's and SQLite's, with SQL's three-valued logic:
 * (a, b) = (c, d) is a = c AND b = d; <> its negation, a <> c OR b <> d; the
 * ordered comparisons are lexicographic, decided by the first pair of items
 * that is not equal (NULL when that pair holds a NULL):
 * (a, b) < (c, d) is a < c OR (a = c AND b < d).  IN over a list of rows is
 * the OR of the row equalities, IS [NOT] DISTINCT FROM the AND of the items'.
 * DuckDB instead orders NULL as a value inside a row; docs/conformance.md.
 * (a, b) IN (subquery) is bind_subquery.c's.  Each item is bound once; its
 * tree is shared by the comparisons that read it, as IN lists and BETWEEN
 * share their left operand.
 */
#include <string.h>

#include "planner/bind/binder_int.h"

static void *oom(PlBinder *b)
{
    cm_err_set(b->err, CM_OOM, -1, "out of memory");
    return NULL;
}

static bool is_compare(PsOp op)
{
    return op == PS_OP_EQ || op == PS_OP_NE || op == PS_OP_LT || op == PS_OP_LE || op == PS_OP_GT ||
           op == PS_OP_GE;
}

bool pl_is_row_op(const PsExpr *ast)
{
    bool row_left = ast->left != NULL && ast->left->kind == PS_EX_ROW;
    bool row_right = ast->right != NULL && ast->right->kind == PS_EX_ROW;
    switch (ast->kind) {
    case PS_EX_BINARY:
        return is_compare(ast->op) && (row_left || row_right);
    case PS_EX_IS_DISTINCT:
        return row_left || row_right;
    case PS_EX_IN_LIST:
        return row_left;
    default:
        return false;
    }
}

static int row_size(const PsExpr *e)
{
    return e->kind == PS_EX_ROW ? e->args->n : 1;
}

/* The n values of `side`: a row value's items, or a one-row subquery's columns. */
static bool row_values(PlBindCtx *ctx, const PsExpr *side, int n, ExExpr **out, int64_t *offs)
{
    PlBinder *b = ctx->b;
    if (side->kind == PS_EX_SUBQUERY) {
        for (int i = 0; i < n; i++) {
            offs[i] = side->src_off;
        }
        return pl_bind_row_subquery(ctx, side, n, out);
    }
    if (row_size(side) != n) {
        cm_err_set(b->err, CM_BIND, side->src_off,
                   "a row value of %d items compared with one of %d", row_size(side), n);
        return false;
    }
    for (int i = 0; i < n; i++) {
        const PsExpr *item = side->args->items[i];
        offs[i] = item->src_off;
        if ((out[i] = pl_bind_expr(ctx, item)) == NULL) {
            return false;
        }
    }
    return true;
}

static ExExpr *compare(PlBinder *b, const char *op, ExExpr *l, ExExpr *r, int64_t off)
{
    ExExpr *pair[2] = {l, r};
    return pl_make_call(b, op, pair, 2, off);
}

/* l[0..n) op r[0..n) as the AND/OR of item comparisons (see the top). */
static ExExpr *compare_rows(PlBinder *b, PsOp op, ExExpr **l, ExExpr **r, const int64_t *offs,
                            int n)
{
    static const char *const NAMES[] = {
        [PS_OP_EQ] = "=",  [PS_OP_NE] = "<>", [PS_OP_LT] = "<",
        [PS_OP_LE] = "<=", [PS_OP_GT] = ">",  [PS_OP_GE] = ">=",
    };
    if (op == PS_OP_EQ || op == PS_OP_NE) {
        ExExpr *all = NULL;
        for (int i = 0; i < n; i++) {
            ExExpr *c = compare(b, NAMES[op], l[i], r[i], offs[i]);
            if (c == NULL) {
                return NULL;
            }
            all = all == NULL ? c : op == PS_OP_EQ ? pl_make_and(b, all, c) : pl_make_or(b, all, c);
            if (all == NULL) {
                return NULL;
            }
        }
        return all;
    }
    /* From the last item outwards: l_i strict r_i OR (l_i = r_i AND rest). */
    const char *strict = op == PS_OP_LT || op == PS_OP_LE ? "<" : ">";
    ExExpr *e = compare(b, NAMES[op], l[n - 1], r[n - 1], offs[n - 1]);
    for (int i = n - 2; i >= 0 && e != NULL; i--) {
        ExExpr *s = compare(b, strict, l[i], r[i], offs[i]);
        ExExpr *eq = s ? compare(b, "=", l[i], r[i], offs[i]) : NULL;
        ExExpr *tie = eq ? pl_make_and(b, eq, e) : NULL;
        e = tie ? pl_make_or(b, s, tie) : NULL;
    }
    return e;
}

static PsOp flip(PsOp op)
{
    switch (op) {
    case PS_OP_LT:
        return PS_OP_GT;
    case PS_OP_LE:
        return PS_OP_GE;
    case PS_OP_GT:
        return PS_OP_LT;
    case PS_OP_GE:
        return PS_OP_LE;
    default:
        return op;
    }
}

static ExExpr *bind_compare(PlBindCtx *ctx, const PsExpr *ast)
{
    PlBinder *b = ctx->b;
    const PsExpr *row = ast->left, *other = ast->right;
    PsOp op = ast->op;
    if (row->kind != PS_EX_ROW) { /* (subquery) op (a, b): the row on the left */
        row = ast->right;
        other = ast->left;
        op = flip(op);
    }
    int n = row->args->n;
    if (other->kind != PS_EX_ROW && other->kind != PS_EX_SUBQUERY) {
        cm_err_set(b->err, CM_BIND, other->src_off,
                   "a row value of %d items compared with a single value", n);
        return NULL;
    }
    ExExpr **l = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)n * 2);
    int64_t *offs = cm_arena_alloc(b->arena, sizeof(int64_t) * (size_t)n * 2);
    if (l == NULL || offs == NULL) {
        return oom(b);
    }
    if (other->kind == PS_EX_ROW && other->args->n != n) {
        cm_err_set(b->err, CM_BIND, ast->right->src_off,
                   "a row value of %d items compared with one of %d", row_size(ast->right),
                   row_size(ast->left));
        return NULL;
    }
    /* Bound in the order written: a subquery joins onto the input as it binds. */
    bool row_first = row == ast->left;
    if (!row_values(ctx, row_first ? row : other, n, row_first ? l : l + n,
                    row_first ? offs : offs + n) ||
        !row_values(ctx, row_first ? other : row, n, row_first ? l + n : l,
                    row_first ? offs + n : offs)) {
        return NULL;
    }
    return compare_rows(b, op, l, l + n, offs, n);
}

/* (a, b) IN ((1, 2), (3, 4)): the OR of the row equalities. */
static ExExpr *bind_in_rows(PlBindCtx *ctx, const PsExpr *ast)
{
    PlBinder *b = ctx->b;
    int n = ast->left->args->n;
    ExExpr **x = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)n * 2);
    int64_t *offs = cm_arena_alloc(b->arena, sizeof(int64_t) * (size_t)n * 2);
    if (x == NULL || offs == NULL) {
        return oom(b);
    }
    if (!row_values(ctx, ast->left, n, x, offs)) {
        return NULL;
    }
    ExExpr *any = NULL;
    for (int k = 0; ast->args != NULL && k < ast->args->n; k++) {
        const PsExpr *item = ast->args->items[k];
        if (item->kind != PS_EX_ROW && item->kind != PS_EX_SUBQUERY) {
            cm_err_set(b->err, CM_BIND, item->src_off,
                       "a row value of %d items compared with a single value", n);
            return NULL;
        }
        if (!row_values(ctx, item, n, x + n, offs + n)) {
            return NULL;
        }
        ExExpr *eq = compare_rows(b, PS_OP_EQ, x, x + n, offs, n);
        any = eq == NULL ? NULL : any == NULL ? eq : pl_make_or(b, any, eq);
        if (any == NULL) {
            return NULL;
        }
    }
    if (any == NULL) { /* SQLite's x IN (): false for every x, even NULL */
        CmValue v = {.type = cm_type_make(CM_T_BOOL), .i = 0};
        if ((any = ex_expr_const(b->arena, &v)) == NULL) {
            return oom(b);
        }
    }
    return ast->negated ? pl_make_call(b, "not", &any, 1, ast->src_off) : any;
}

/* (a, b) IS [NOT] DISTINCT FROM (c, d): the items' IS NOT DISTINCT FROM, ANDed. */
static ExExpr *bind_distinct_rows(PlBindCtx *ctx, const PsExpr *ast)
{
    PlBinder *b = ctx->b;
    const PsExpr *l = ast->left, *r = ast->right;
    if (l->kind != PS_EX_ROW || r->kind != PS_EX_ROW) {
        const PsExpr *single = l->kind == PS_EX_ROW ? r : l;
        cm_err_set(b->err, CM_BIND, single->src_off,
                   "a row value of %d items compared with a single value",
                   row_size(l->kind == PS_EX_ROW ? l : r));
        return NULL;
    }
    if (l->args->n != r->args->n) {
        cm_err_set(b->err, CM_BIND, r->src_off, "a row value of %d items compared with one of %d",
                   r->args->n, l->args->n);
        return NULL;
    }
    ExExpr *all = NULL;
    for (int i = 0; i < l->args->n; i++) {
        PsExpr *same = cm_arena_alloc(b->arena, sizeof *same);
        if (same == NULL) {
            return oom(b);
        }
        const PsExpr *li = l->args->items[i], *ri = r->args->items[i];
        *same = (PsExpr){.kind = PS_EX_IS_DISTINCT,
                         .negated = true,
                         .left = (PsExpr *)li,
                         .right = (PsExpr *)ri,
                         .src_off = li->src_off,
                         .src_len = ri->src_off + ri->src_len - li->src_off};
        ExExpr *e = pl_bind_expr(ctx, same);
        all = e == NULL ? NULL : all == NULL ? e : pl_make_and(b, all, e);
        if (all == NULL) {
            return NULL;
        }
    }
    return ast->negated ? all : pl_make_call(b, "not", &all, 1, ast->src_off);
}

ExExpr *pl_bind_row(PlBindCtx *ctx, const PsExpr *ast)
{
    switch (ast->kind) {
    case PS_EX_BINARY:
        return bind_compare(ctx, ast);
    case PS_EX_IN_LIST:
        return bind_in_rows(ctx, ast);
    case PS_EX_IS_DISTINCT:
        return bind_distinct_rows(ctx, ast);
    default:
        cm_err_set(ctx->b->err, CM_BIND, ast->src_off,
                   "a row value is allowed only in a comparison or IN");
        return NULL;
    }
}
