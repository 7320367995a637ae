/*
 * gen_expr.c - random typed expressions for the differential test.
 *
 * Every generated expression has one static type (DF_INT, DF_STR, DF_BOOL),
 * and operands always have the type the operator expects, so SQLite's loose
 * typing never comes into play.  Every composite expression is wrapped in
 * parentheses, so precedence never matters, and negative literals are written
 * "(-3)" so "- -3" can never become a "--" comment.  Values stay small: a
 * multiplication budget bounds the nesting of '*', a divisor is a non-zero
 * literal, "(x * x + 1)" or guarded by CASE or nullif, and scalar subqueries
 * return counts, sums, mins or maxes of small columns.  See KNOWN_DIFFS.md for
 * what is avoided and why.
 */
#include "gen_int.h"

#include <stdio.h>

static void gen_int(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out);
static void gen_str(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out);
static void gen_bool(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out);

static bool chance(DfGen *g, int percent)
{
    return df_rng_chance(g->rng, percent);
}

static int range(DfGen *g, int lo, int hi)
{
    return df_rng_range(g->rng, lo, hi);
}

/* ------------------------------------------------------------------------ */
/* Leaves                                                                    */
/* ------------------------------------------------------------------------ */

static int count_cols(const DfScope *scope, DfType type)
{
    int n = 0;
    for (int col_idx = 0; scope != NULL && col_idx < scope->n_cols; col_idx++) {
        n += scope->cols[col_idx].type == type;
    }
    return n;
}

static const DfScopeCol *nth_col(const DfScope *scope, DfType type, int nth)
{
    for (int col_idx = 0; col_idx < scope->n_cols; col_idx++) {
        if (scope->cols[col_idx].type == type && nth-- == 0) {
            return &scope->cols[col_idx];
        }
    }
    return NULL;
}

const DfScopeCol *df_pick_col(DfGen *g, const DfScope *scope, DfType type, bool allow_outer)
{
    const DfScope *outer = allow_outer && scope != NULL ? scope->outer : NULL;
    bool is_outer2 = false;
    if (outer != NULL && outer->outer != NULL && (g->avoid & DF_AVOID_OUTER2) == 0 &&
        chance(g, 30)) {
        outer = outer->outer;
        is_outer2 = true;
    }
    int n_inner = count_cols(scope, type);
    int n_outer = count_cols(outer, type);
    if (n_inner + n_outer == 0) {
        return NULL;
    }
    /* Prefer own columns; an outer column is a correlated reference. */
    if (n_outer > 0 && (n_inner == 0 || chance(g, 30))) {
        g->used |= is_outer2 ? DF_AVOID_OUTER2 : 0;
        return nth_col(outer, type, range(g, 0, n_outer - 1));
    }
    return nth_col(scope, type, range(g, 0, n_inner - 1));
}

void df_put_col(DfBuf *out, const DfScopeCol *col)
{
    if (col->expr[0] != '\0') {
        df_buf_puts(out, col->expr);
    } else {
        df_buf_printf(out, "%s.%s", col->qual, col->name);
    }
}

void df_put_int_literal(DfGen *g, DfBuf *out)
{
    int v = range(g, -3, 22);
    if (v < 0) {
        df_buf_printf(out, "(%d)", v);
    } else {
        df_buf_printf(out, "%d", v);
    }
}

void df_put_str_literal(DfGen *g, DfBuf *out)
{
    static const char *const letters = "abcd";
    char text[8];
    int len = range(g, 0, 3);
    for (int idx = 0; idx < len; idx++) {
        text[idx] = letters[range(g, 0, chance(g, 10) ? 3 : 2)];
    }
    text[len] = '\0';
    df_buf_printf(out, "'%s'", text);
}

/* The context for an aggregate's argument: the rows of a grouped query. */
static DfCtx agg_arg_ctx(const DfCtx *ctx)
{
    DfCtx arg = {ctx->rows, NULL, 1};
    return arg;
}

static void gen_int_agg(DfGen *g, const DfCtx *ctx, DfBuf *out)
{
    static const char *const funcs[] = {"sum", "min", "max"};
    DfCtx arg = agg_arg_ctx(ctx);
    int pick = range(g, 0, 5);
    const char *distinct = chance(g, 15) ? "DISTINCT " : "";
    if (pick == 0) {
        df_buf_puts(out, "count(*)");
    } else if (pick == 1) {
        df_buf_printf(out, "count(%s", distinct);
        df_gen_expr(g, &arg, (DfType)range(g, 0, 2), range(g, 0, 1), out);
        df_buf_puts(out, ")");
    } else {
        df_buf_printf(out, "%s(%s", funcs[range(g, 0, 2)], distinct);
        gen_int(g, &arg, range(g, 0, 2), out);
        df_buf_puts(out, ")");
    }
}

static void gen_int_leaf(DfGen *g, const DfCtx *ctx, DfBuf *out)
{
    if (ctx->rows != NULL && chance(g, 55)) {
        gen_int_agg(g, ctx, out);
        return;
    }
    const DfScopeCol *col = chance(g, 80) ? df_pick_col(g, ctx->scope, DF_INT, true) : NULL;
    if (col != NULL) {
        df_put_col(out, col);
    } else if (chance(g, 5)) {
        df_buf_puts(out, "NULL");
    } else {
        df_put_int_literal(g, out);
    }
}

static void gen_str_leaf(DfGen *g, const DfCtx *ctx, DfBuf *out)
{
    if (ctx->rows != NULL && chance(g, 40)) {
        DfCtx arg = agg_arg_ctx(ctx);
        df_buf_puts(out, chance(g, 50) ? "min(" : "max(");
        gen_str(g, &arg, range(g, 0, 1), out);
        df_buf_puts(out, ")");
        return;
    }
    const DfScopeCol *col = chance(g, 75) ? df_pick_col(g, ctx->scope, DF_STR, true) : NULL;
    if (col != NULL) {
        df_put_col(out, col);
    } else {
        df_put_str_literal(g, out);
    }
}

/* ------------------------------------------------------------------------ */
/* Shared shapes: CASE, COALESCE, NULLIF                                     */
/* ------------------------------------------------------------------------ */

static void gen_typed(DfGen *g, const DfCtx *ctx, DfType type, int depth, DfBuf *out)
{
    if (type == DF_INT) {
        gen_int(g, ctx, depth, out);
    } else if (type == DF_STR) {
        gen_str(g, ctx, depth, out);
    } else {
        gen_bool(g, ctx, depth, out);
    }
}

/* CASE WHEN b THEN x ... [ELSE x] END, or the simple form CASE k WHEN v THEN x. */
static void gen_case(DfGen *g, const DfCtx *ctx, DfType type, int depth, DfBuf *out)
{
    bool is_simple = chance(g, 30);
    DfType key_type = chance(g, 60) ? DF_INT : DF_STR;
    df_buf_puts(out, "(CASE");
    if (is_simple) {
        df_buf_puts(out, " ");
        gen_typed(g, ctx, key_type, depth - 1, out);
    }
    int n_whens = range(g, 1, 2);
    for (int when_idx = 0; when_idx < n_whens; when_idx++) {
        df_buf_puts(out, " WHEN ");
        if (is_simple) {
            gen_typed(g, ctx, key_type, 0, out);
        } else {
            gen_bool(g, ctx, depth - 1, out);
        }
        df_buf_puts(out, " THEN ");
        gen_typed(g, ctx, type, depth - 1, out);
    }
    if (chance(g, 70)) {
        df_buf_puts(out, " ELSE ");
        gen_typed(g, ctx, type, depth - 1, out);
    }
    df_buf_puts(out, " END)");
}

static void gen_coalesce(DfGen *g, const DfCtx *ctx, DfType type, int depth, DfBuf *out)
{
    int n_args = range(g, 2, 3);
    df_buf_puts(out, "coalesce(");
    for (int arg_idx = 0; arg_idx < n_args; arg_idx++) {
        df_buf_puts(out, arg_idx > 0 ? ", " : "");
        gen_typed(g, ctx, type, depth - 1, out);
    }
    df_buf_puts(out, ")");
}

static void gen_nullif(DfGen *g, const DfCtx *ctx, DfType type, int depth, DfBuf *out)
{
    df_buf_puts(out, "nullif(");
    gen_typed(g, ctx, type, depth - 1, out);
    df_buf_puts(out, ", ");
    gen_typed(g, ctx, type, depth - 1, out);
    df_buf_puts(out, ")");
}

/* Callers write a subquery when this returns true. */
static bool can_subquery(DfGen *g, const DfCtx *ctx)
{
    if (ctx->rows != NULL && (g->avoid & DF_AVOID_SUB_IN_AGG_SELECT) != 0) {
        return false;
    }
    if (g->sub_depth >= DF_MAX_SUB_DEPTH) {
        return false;
    }
    if (ctx->rows != NULL) {
        g->used |= DF_AVOID_SUB_IN_AGG_SELECT;
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* INTEGER                                                                   */
/* ------------------------------------------------------------------------ */

static void gen_binary_int(DfGen *g, const DfCtx *ctx, const char *op, int depth, DfBuf *out)
{
    df_buf_puts(out, "(");
    gen_int(g, ctx, depth - 1, out);
    df_buf_printf(out, " %s ", op);
    gen_int(g, ctx, depth - 1, out);
    df_buf_puts(out, ")");
}

static void gen_mul(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out)
{
    if (ctx->mul_budget <= 0) {
        gen_binary_int(g, ctx, "+", depth, out);
        return;
    }
    DfCtx inner = *ctx;
    inner.mul_budget--;
    gen_binary_int(g, &inner, "*", depth, out);
}

/* A divisor that is never zero: a non-zero literal or "(c * c + 1)". */
static void put_safe_divisor(DfGen *g, const DfCtx *ctx, DfBuf *out)
{
    static const int divisors[] = {1, 2, 3, 4, 5, 7, -2, -3};
    const DfScopeCol *col = df_pick_col(g, ctx->scope, DF_INT, false);
    if (col != NULL && ctx->rows == NULL && chance(g, 50)) {
        df_buf_puts(out, "(");
        df_put_col(out, col);
        df_buf_puts(out, " * ");
        df_put_col(out, col);
        df_buf_puts(out, " + 1)");
    } else {
        int d = divisors[range(g, 0, 7)];
        df_buf_printf(out, d < 0 ? "(%d)" : "%d", d);
    }
}

/* x / d or x % d where d is never zero when the division runs: a safe divisor,
 * or one that may be zero behind a guard (CASE WHEN d <> 0 ..., nullif(d, 0)),
 * which both engines turn into NULL.  An unguarded zero is an error in Sluice
 * and NULL in SQLite (KNOWN_DIFFS.md). */
static void gen_div(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out)
{
    const char *op = chance(g, 60) ? "/" : "%";
    DfBuf x = {0}, d = {0};
    gen_int(g, ctx, depth - 1, &x);
    int pick = range(g, 0, 99);
    if (pick < 45) {
        put_safe_divisor(g, ctx, &d);
        df_buf_printf(out, "(%s %s %s)", df_buf_str(&x), op, df_buf_str(&d));
    } else {
        gen_int(g, ctx, depth > 1 ? 1 : 0, &d);
        const char *xs = df_buf_str(&x);
        const char *ds = df_buf_str(&d);
        if (pick < 70) {
            df_buf_printf(out, "(CASE WHEN (%s <> 0) THEN (%s %s %s) END)", ds, xs, op, ds);
        } else if (pick < 85) {
            df_buf_printf(out, "(CASE WHEN (%s = 0) THEN NULL ELSE (%s %s %s) END)", ds, xs, op,
                          ds);
        } else {
            df_buf_printf(out, "(%s %s nullif(%s, 0))", xs, op, ds);
        }
    }
    df_buf_fini(&x);
    df_buf_fini(&d);
}

static void gen_int_func(DfGen *g, const DfCtx *ctx, const char *func, DfType arg, int depth,
                         DfBuf *out)
{
    df_buf_printf(out, "%s(", func);
    gen_typed(g, ctx, arg, depth - 1, out);
    df_buf_puts(out, ")");
}

static void gen_int(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out)
{
    if (depth <= 0 || chance(g, 25)) {
        gen_int_leaf(g, ctx, out);
        return;
    }
    switch (range(g, 0, 12)) {
    case 0:
    case 1:
        gen_binary_int(g, ctx, chance(g, 50) ? "+" : "-", depth, out);
        break;
    case 2:
        gen_mul(g, ctx, depth, out);
        break;
    case 3:
        df_buf_puts(out, "(- ");
        gen_int(g, ctx, depth - 1, out);
        df_buf_puts(out, ")");
        break;
    case 4:
        gen_div(g, ctx, depth, out);
        break;
    case 5:
        gen_case(g, ctx, DF_INT, depth, out);
        break;
    case 6:
        gen_coalesce(g, ctx, DF_INT, depth, out);
        break;
    case 7:
        gen_nullif(g, ctx, DF_INT, depth, out);
        break;
    case 8:
        gen_int_func(g, ctx, "length", DF_STR, depth, out);
        break;
    case 9:
        gen_int_func(g, ctx, "abs", DF_INT, depth, out);
        break;
    case 10:
    case 11:
        if (can_subquery(g, ctx)) {
            df_gen_scalar_sub(g, ctx->scope, DF_INT, out);
            break;
        }
        gen_int_leaf(g, ctx, out);
        break;
    default:
        gen_int_leaf(g, ctx, out);
        break;
    }
}

/* ------------------------------------------------------------------------ */
/* VARCHAR                                                                   */
/* ------------------------------------------------------------------------ */

static void gen_substr(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out)
{
    df_buf_puts(out, "substr(");
    gen_str(g, ctx, depth - 1, out);
    /* Both engines count a negative start from the end and take the characters
     * before the start for a negative count. */
    df_buf_printf(out, ", %d", range(g, -5, 4));
    if (chance(g, 70)) {
        df_buf_printf(out, ", %d", range(g, -3, 3));
    }
    df_buf_puts(out, ")");
}

static void gen_str(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out)
{
    if (depth <= 0 || chance(g, 30)) {
        gen_str_leaf(g, ctx, out);
        return;
    }
    switch (range(g, 0, 8)) {
    case 0:
        df_buf_puts(out, chance(g, 50) ? "upper(" : "lower(");
        gen_str(g, ctx, depth - 1, out);
        df_buf_puts(out, ")");
        break;
    case 1:
        gen_substr(g, ctx, depth, out);
        break;
    case 2:
        df_buf_puts(out, "(");
        gen_str(g, ctx, depth - 1, out);
        df_buf_puts(out, " || ");
        gen_str(g, ctx, depth - 1, out);
        df_buf_puts(out, ")");
        break;
    case 3:
        gen_case(g, ctx, DF_STR, depth, out);
        break;
    case 4:
        gen_coalesce(g, ctx, DF_STR, depth, out);
        break;
    case 5:
        gen_nullif(g, ctx, DF_STR, depth, out);
        break;
    case 6:
        if (can_subquery(g, ctx)) {
            df_gen_scalar_sub(g, ctx->scope, DF_STR, out);
            break;
        }
        gen_str_leaf(g, ctx, out);
        break;
    default:
        gen_str_leaf(g, ctx, out);
        break;
    }
}

/* ------------------------------------------------------------------------ */
/* Boolean                                                                   */
/* ------------------------------------------------------------------------ */

/* INT with the given percentage, else STR, but a type with columns in reach
 * wins over one without, so fewer predicates compare two literals. */
static DfType pick_cmp_type(DfGen *g, const DfCtx *ctx, int int_percent)
{
    DfType type = chance(g, int_percent) ? DF_INT : DF_STR;
    const DfScope *outer = ctx->scope != NULL ? ctx->scope->outer : NULL;
    bool has_int = count_cols(ctx->scope, DF_INT) + count_cols(outer, DF_INT) > 0;
    bool has_str = count_cols(ctx->scope, DF_STR) + count_cols(outer, DF_STR) > 0;
    if (type == DF_STR && !has_str && (has_int || ctx->rows != NULL)) {
        return DF_INT;
    }
    if (type == DF_INT && !has_int && has_str && ctx->rows == NULL) {
        return DF_STR;
    }
    return type;
}

static void gen_compare(DfGen *g, const DfCtx *ctx, DfType type, int depth, DfBuf *out)
{
    static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">="};
    df_buf_puts(out, "(");
    gen_typed(g, ctx, type, depth - 1, out);
    df_buf_printf(out, " %s ", ops[range(g, 0, 5)]);
    gen_typed(g, ctx, type, depth - 1, out);
    df_buf_puts(out, ")");
}

/* Booleans compare as 0/1 in SQLite and false < true in Sluice: the same order. */
static void gen_bool_compare(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out)
{
    static const char *const ops[] = {"=", "<>", "<", ">="};
    df_buf_puts(out, "(");
    gen_bool(g, ctx, depth - 1, out);
    df_buf_printf(out, " %s ", ops[range(g, 0, 3)]);
    gen_bool(g, ctx, depth - 1, out);
    df_buf_puts(out, ")");
}

static void gen_between(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out)
{
    DfType type = pick_cmp_type(g, ctx, 75);
    df_buf_puts(out, "(");
    gen_typed(g, ctx, type, depth - 1, out);
    df_buf_puts(out, chance(g, 25) ? " NOT BETWEEN " : " BETWEEN ");
    gen_typed(g, ctx, type, 0, out);
    df_buf_puts(out, " AND ");
    gen_typed(g, ctx, type, 0, out);
    df_buf_puts(out, ")");
}

static void gen_in_list(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out)
{
    DfType type = pick_cmp_type(g, ctx, 65);
    df_buf_puts(out, "(");
    gen_typed(g, ctx, type, depth - 1, out);
    df_buf_puts(out, chance(g, 30) ? " NOT IN (" : " IN (");
    int n_items = range(g, 1, 4);
    for (int item_idx = 0; item_idx < n_items; item_idx++) {
        df_buf_puts(out, item_idx > 0 ? ", " : "");
        if (chance(g, 10)) {
            df_buf_puts(out, "NULL");
        } else if (type == DF_INT) {
            df_put_int_literal(g, out);
        } else {
            df_put_str_literal(g, out);
        }
    }
    df_buf_puts(out, "))");
}

/* A LIKE operand without upper-case letters: SQLite's LIKE ignores ASCII case. */
static void gen_like_operand(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out)
{
    const DfScopeCol *col = df_pick_col(g, ctx->scope, DF_STR, true);
    if (col != NULL && !col->may_upper && ctx->rows == NULL && chance(g, 60)) {
        df_put_col(out, col);
        return;
    }
    df_buf_puts(out, "lower(");
    gen_str(g, ctx, depth - 1, out);
    df_buf_puts(out, ")");
}

static void gen_like(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out)
{
    static const char *const pattern_chars = "abc%_";
    df_buf_puts(out, "(");
    gen_like_operand(g, ctx, depth, out);
    df_buf_puts(out, chance(g, 25) ? " NOT LIKE '" : " LIKE '");
    int len = range(g, 0, 4);
    for (int idx = 0; idx < len; idx++) {
        df_buf_printf(out, "%c", pattern_chars[range(g, 0, 4)]);
    }
    df_buf_puts(out, "')");
}

static void gen_bool_leaf(DfGen *g, const DfCtx *ctx, DfBuf *out)
{
    const DfScopeCol *col = df_pick_col(g, ctx->scope, DF_BOOL, true);
    if (col != NULL && chance(g, 70)) {
        df_put_col(out, col);
    } else {
        df_buf_puts(out, chance(g, 50) ? "TRUE" : "FALSE");
    }
}

static void gen_logic(DfGen *g, const DfCtx *ctx, const char *op, int depth, DfBuf *out)
{
    df_buf_puts(out, "(");
    gen_bool(g, ctx, depth - 1, out);
    df_buf_printf(out, " %s ", op);
    gen_bool(g, ctx, depth - 1, out);
    df_buf_puts(out, ")");
}

static void gen_is_null(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out)
{
    df_buf_puts(out, "(");
    gen_typed(g, ctx, (DfType)range(g, 0, 2), depth - 1, out);
    df_buf_puts(out, chance(g, 50) ? " IS NULL)" : " IS NOT NULL)");
}

static void gen_sub_pred(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out)
{
    if (chance(g, 45)) {
        df_buf_puts(out, chance(g, 35) ? "(NOT EXISTS " : "(EXISTS ");
        df_gen_exists_sub(g, ctx->scope, out);
        df_buf_puts(out, ")");
        return;
    }
    DfType type = pick_cmp_type(g, ctx, 70);
    DfCtx left = *ctx;
    if ((g->avoid & DF_AVOID_AGG_IN_LEFT) != 0) {
        left.rows = NULL; /* group keys only, no aggregates */
    } else if (ctx->rows != NULL) {
        g->used |= DF_AVOID_AGG_IN_LEFT;
    }
    df_buf_puts(out, "(");
    gen_typed(g, &left, type, depth - 1, out);
    df_buf_puts(out, chance(g, 40) ? " NOT IN " : " IN ");
    df_gen_list_sub(g, ctx->scope, type, out);
    df_buf_puts(out, ")");
}

static void gen_bool(DfGen *g, const DfCtx *ctx, int depth, DfBuf *out)
{
    if (depth <= 0) {
        if (chance(g, 85)) {
            gen_compare(g, ctx, pick_cmp_type(g, ctx, 70), 1, out);
        } else {
            gen_bool_leaf(g, ctx, out);
        }
        return;
    }
    switch (range(g, 0, 14)) {
    case 0:
    case 1:
    case 2:
        gen_compare(g, ctx, pick_cmp_type(g, ctx, 70), depth, out);
        break;
    case 3:
    case 4:
        gen_logic(g, ctx, chance(g, 55) ? "AND" : "OR", depth, out);
        break;
    case 5:
        df_buf_puts(out, "(NOT ");
        gen_bool(g, ctx, depth - 1, out);
        df_buf_puts(out, ")");
        break;
    case 6:
        gen_is_null(g, ctx, depth, out);
        break;
    case 7:
        gen_between(g, ctx, depth, out);
        break;
    case 8:
        gen_in_list(g, ctx, depth, out);
        break;
    case 9:
        gen_like(g, ctx, depth, out);
        break;
    case 10:
    case 11:
        if (can_subquery(g, ctx)) {
            gen_sub_pred(g, ctx, depth, out);
            break;
        }
        gen_compare(g, ctx, DF_INT, depth, out);
        break;
    case 12:
        gen_case(g, ctx, DF_BOOL, depth, out);
        break;
    case 13:
        gen_bool_compare(g, ctx, depth, out);
        break;
    default:
        gen_bool_leaf(g, ctx, out);
        break;
    }
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */
/* ------------------------------------------------------------------------ */

void df_gen_agg(DfGen *g, const DfCtx *ctx, DfType type, DfBuf *out)
{
    if (type == DF_INT) {
        gen_int_agg(g, ctx, out);
    } else if (type == DF_STR) {
        DfCtx arg = agg_arg_ctx(ctx);
        df_buf_puts(out, chance(g, 50) ? "min(" : "max(");
        gen_str(g, &arg, range(g, 0, 1), out);
        df_buf_puts(out, ")");
    } else if (type == DF_BOOL) {
        static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">="};
        df_buf_puts(out, "(");
        gen_int_agg(g, ctx, out);
        df_buf_printf(out, " %s ", ops[range(g, 0, 5)]);
        gen_int(g, ctx, 1, out);
        df_buf_puts(out, ")");
    } else {
        df_gen_expr(g, ctx, DF_DBL, range(g, 1, 3), out);
    }
}

void df_gen_expr(DfGen *g, const DfCtx *ctx, DfType type, int depth, DfBuf *out)
{
    if (type == DF_DBL) {
        /* avg() is the only source of doubles; it needs a grouped context. */
        DfCtx arg = agg_arg_ctx(ctx);
        df_buf_puts(out, chance(g, 15) ? "avg(DISTINCT " : "avg(");
        gen_int(g, &arg, depth - 1, out);
        df_buf_puts(out, ")");
        return;
    }
    gen_typed(g, ctx, type, depth, out);
}

void df_gen_join_cond(DfGen *g, const DfScope *scope, int first_new, DfBuf *out)
{
    /* Prefer a column of the new item against an older one of the same type. */
    int new_idx = range(g, first_new, scope->n_cols - 1);
    const DfScopeCol *right = &scope->cols[new_idx];
    int n_match = 0;
    for (int col_idx = 0; col_idx < first_new; col_idx++) {
        n_match += scope->cols[col_idx].type == right->type && right->type != DF_BOOL;
    }
    DfCtx ctx = {scope, NULL, 1};
    /* Sluice: "a subquery is not supported here" in ON (KNOWN_DIFFS.md). */
    int saved_depth = g->sub_depth;
    g->sub_depth = DF_MAX_SUB_DEPTH;
    if (n_match == 0 || chance(g, 8)) {
        gen_bool(g, &ctx, 1, out);
        g->sub_depth = saved_depth;
        return;
    }
    int nth = range(g, 0, n_match - 1);
    const DfScopeCol *left = NULL;
    for (int col_idx = 0; left == NULL; col_idx++) {
        if (scope->cols[col_idx].type == right->type && nth-- == 0) {
            left = &scope->cols[col_idx];
        }
    }
    static const char *const ops[] = {"=", "=", "=", "=", "<", "<>", ">="};
    df_buf_puts(out, "(");
    df_put_col(out, left);
    df_buf_printf(out, " %s ", ops[range(g, 0, 6)]);
    df_put_col(out, right);
    df_buf_puts(out, ")");
    if (chance(g, 25)) {
        df_buf_puts(out, chance(g, 75) ? " AND " : " OR ");
        gen_bool(g, &ctx, 1, out);
    }
    g->sub_depth = saved_depth;
}
