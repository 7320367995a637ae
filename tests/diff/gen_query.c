/*
 * gen_query.c - random SELECT statements for the differential test: FROM
 * clauses (comma joins, JOIN ... ON, LEFT JOIN, derived tables), plain,
 * grouped and aggregate-only cores with WHERE/GROUP BY/HAVING/DISTINCT, set
 * operations, ORDER BY ... LIMIT, and the subqueries expressions use (scalar,
 * EXISTS, IN), correlated through DfScope.outer.
 *
 * Determinism: a LIMIT is only generated after an ORDER BY over every output
 * column with explicit NULLS FIRST/LAST, so the rows kept are the same
 * multiset in both engines; a scalar subquery is an aggregate without GROUP BY
 * or such an ORDER BY ... LIMIT 1, so it never returns two rows.  Chains of
 * set operations never put INTERSECT after UNION/EXCEPT (SQLite reads them
 * left to right, the standard gives INTERSECT precedence).
 */
#include "gen_int.h"

#include <stdio.h>
#include <string.h>

static bool chance(DfGen *g, int percent)
{
    return df_rng_chance(g->rng, percent);
}

static int range(DfGen *g, int lo, int hi)
{
    return df_rng_range(g->rng, lo, hi);
}

void df_new_alias(DfGen *g, char alias[DF_NAME_CAP])
{
    snprintf(alias, DF_NAME_CAP, "q%d", ++g->n_aliases);
}

static void scope_add(DfScope *scope, const char *qual, const char *name, DfType type,
                      bool may_upper)
{
    if (scope->n_cols >= DF_SCOPE_CAP) {
        return;
    }
    DfScopeCol *col = &scope->cols[scope->n_cols++];
    snprintf(col->qual, DF_NAME_CAP, "%s", qual);
    snprintf(col->name, DF_NAME_CAP, "%s", name);
    col->type = type;
    col->may_upper = may_upper;
    col->expr[0] = '\0';
}

static void scope_add_table(DfScope *scope, const DfTable *t, const char *alias)
{
    for (int col_idx = 0; col_idx < t->n_cols; col_idx++) {
        scope_add(scope, alias, t->cols[col_idx].name, t->cols[col_idx].type, false);
    }
}

static bool table_has(const DfTable *t, DfType type)
{
    for (int col_idx = 0; col_idx < t->n_cols; col_idx++) {
        if (t->cols[col_idx].type == type) {
            return true;
        }
    }
    return false;
}

/* A random table with a column of `type`, or NULL when none has one. */
static const DfTable *pick_table(DfGen *g, DfType type)
{
    int start = range(g, 0, g->schema->n_tables - 1);
    for (int step = 0; step < g->schema->n_tables; step++) {
        const DfTable *t = &g->schema->tables[(start + step) % g->schema->n_tables];
        if (table_has(t, type)) {
            return t;
        }
    }
    return NULL;
}

static DfType pick_type(DfGen *g, bool allow_avg)
{
    int pick = range(g, 0, 99);
    if (allow_avg && pick < 10) {
        return DF_DBL;
    }
    return pick < 55 ? DF_INT : pick < 85 ? DF_STR : DF_BOOL;
}

/* gen_core flags */
#define CORE_AVG 1u  /* avg() may be an output column */
#define CORE_STAR 2u /* SELECT * may be the select list */

static void gen_core(DfGen *g, const DfShape *want, DfShape *got, char alias_prefix, unsigned flags,
                     DfBuf *out);
static void gen_order_limit(DfGen *g, const DfShape *shape, DfBuf *out);
static void gen_set_op(DfGen *g, char alias_prefix, DfShape *shape, DfBuf *out);

/* ------------------------------------------------------------------------ */
/* FROM                                                                      */
/* ------------------------------------------------------------------------ */

/* A derived table "(SELECT ...) AS qN" with columns d0, d1, ...  On the right
 * of a LEFT JOIN its select lists hold no subquery: SQLite 3.40 then gives
 * NULL for matched rows that follow an unmatched one (KNOWN_DIFFS.md). */
static void gen_derived(DfGen *g, bool is_outer_side, DfScope *scope, DfBuf *out)
{
    DfBuf body = {0};
    DfShape shape;
    g->n_no_select_sub += is_outer_side;
    g->sub_depth++;
    if (chance(g, 15)) {
        gen_set_op(g, 'd', &shape, &body);
    } else {
        gen_core(g, NULL, &shape, 'd', 0, &body);
    }
    if (chance(g, 20)) {
        gen_order_limit(g, &shape, &body);
    }
    g->sub_depth--;
    g->n_no_select_sub -= is_outer_side;
    char alias[DF_NAME_CAP];
    df_new_alias(g, alias);
    df_buf_printf(out, "(%s) AS %s", df_buf_str(&body), alias);
    for (int col_idx = 0; col_idx < shape.n_cols; col_idx++) {
        char name[DF_NAME_CAP];
        snprintf(name, sizeof name, "d%d", col_idx);
        scope_add(scope, alias, name, shape.types[col_idx], true);
    }
    df_buf_fini(&body);
}

static void gen_from_item(DfGen *g, bool is_outer_side, DfScope *scope, DfBuf *out)
{
    if (g->sub_depth < 2 && chance(g, g->sub_depth == 0 ? 15 : 8)) {
        gen_derived(g, is_outer_side, scope, out);
        return;
    }
    const DfTable *t = &g->schema->tables[range(g, 0, g->schema->n_tables - 1)];
    char alias[DF_NAME_CAP];
    df_new_alias(g, alias);
    df_buf_printf(out, "%s AS %s", t->name, alias);
    scope_add_table(scope, t, alias);
}

/* An ON condition.  It may only name the items joined since the last comma:
 * in "a, b JOIN c ON ..." the comma binds loosest, so a is not visible (SQLite
 * accepts it, Sluice and the standard do not; KNOWN_DIFFS.md). */
static void gen_on(DfGen *g, const DfScope *scope, int group_start, int first_new, DfBuf *out)
{
    DfScope group;
    group.outer = NULL;
    group.n_cols = scope->n_cols - group_start;
    memcpy(group.cols, scope->cols + group_start, (size_t)group.n_cols * sizeof group.cols[0]);
    df_gen_join_cond(g, &group, first_new - group_start, out);
}

/* Fills `scope` and writes the FROM list; conditions of comma joins go to `preds`. */
static void gen_from(DfGen *g, DfScope *scope, DfBuf *from, DfBuf *preds)
{
    int pick = range(g, 0, 99);
    int n_items = pick < 45 ? 1 : pick < 85 ? 2 : 3;
    int group_start = 0; /* first column of the items since the last comma */
    scope->outer = NULL;
    scope->n_cols = 0;
    for (int item_idx = 0; item_idx < n_items; item_idx++) {
        int first_new = scope->n_cols;
        DfBuf item = {0};
        int kind = range(g, 0, 9);
        gen_from_item(g, item_idx > 0 && kind >= 7, scope, &item);
        if (item_idx == 0) {
            df_buf_puts(from, df_buf_str(&item));
        } else if (kind < 4) {
            df_buf_printf(from, ", %s", df_buf_str(&item));
            group_start = first_new;
            /* The third item always gets a condition: no 60^3 cross products. */
            if (item_idx == 2 || chance(g, 75)) {
                df_buf_puts(preds, preds->len > 0 ? " AND " : "");
                df_gen_join_cond(g, scope, first_new, preds);
            }
        } else {
            df_buf_printf(from, " %s %s ON ", kind < 7 ? "JOIN" : "LEFT JOIN", df_buf_str(&item));
            gen_on(g, scope, group_start, first_new, from);
        }
        df_buf_fini(&item);
    }
}

/* ------------------------------------------------------------------------ */
/* SELECT cores                                                              */
/* ------------------------------------------------------------------------ */

typedef enum CoreMode { CORE_PLAIN, CORE_GROUPED, CORE_AGGREGATE } CoreMode;

/* A GROUP BY key: the column itself, or now and then an expression over it
 * (the select list and HAVING then name the same expression). */
static DfScopeCol make_key(DfGen *g, const DfScopeCol *col)
{
    DfScopeCol key = *col;
    int pick = range(g, 0, 99);
    if (col->type == DF_INT && pick < 20) {
        static const char *const forms[] = {"(%s.%s %% 3)", "(%s.%s + 1)", "abs((%s.%s - 5))"};
        snprintf(key.expr, sizeof key.expr, forms[range(g, 0, 2)], col->qual, col->name);
    } else if (col->type == DF_STR && pick < 10) {
        snprintf(key.expr, sizeof key.expr, "substr(%s.%s, 1, 1)", col->qual, col->name);
    } else if (col->type == DF_STR && pick < 20) {
        snprintf(key.expr, sizeof key.expr, "length(%s.%s)", col->qual, col->name);
        key.type = DF_INT;
    }
    return key;
}

static bool same_key(const DfScopeCol *a, const DfScopeCol *b)
{
    return strcmp(a->qual, b->qual) == 0 && strcmp(a->name, b->name) == 0 &&
           strcmp(a->expr, b->expr) == 0;
}

static void pick_keys(DfGen *g, const DfScope *scope, DfScope *keys, DfBuf *group_by)
{
    keys->outer = NULL;
    keys->n_cols = 0;
    int n_keys = chance(g, 70) ? 1 : 2;
    for (int key_idx = 0; key_idx < n_keys; key_idx++) {
        DfScopeCol key = make_key(g, &scope->cols[range(g, 0, scope->n_cols - 1)]);
        bool is_dup = false;
        for (int col_idx = 0; col_idx < keys->n_cols; col_idx++) {
            is_dup = is_dup || same_key(&keys->cols[col_idx], &key);
        }
        if (is_dup) {
            continue;
        }
        keys->cols[keys->n_cols++] = key;
        df_buf_puts(group_by, keys->n_cols > 1 ? ", " : " GROUP BY ");
        df_put_col(group_by, &key);
    }
}

static void pick_shape(DfGen *g, const DfShape *want, bool allow_avg, DfShape *got)
{
    if (want != NULL) {
        *got = *want;
        return;
    }
    int pick = range(g, 0, 99);
    got->n_cols = pick < 35 ? 1 : pick < 70 ? 2 : pick < 90 ? 3 : 4;
    for (int col_idx = 0; col_idx < got->n_cols; col_idx++) {
        got->types[col_idx] = pick_type(g, allow_avg);
    }
}

static void gen_where(DfGen *g, const DfCtx *row_ctx, const DfBuf *preds, DfBuf *out)
{
    bool has_filter = chance(g, 45);
    if (preds->len == 0 && !has_filter) {
        return;
    }
    df_buf_puts(out, " WHERE ");
    df_buf_puts(out, df_buf_str(preds));
    if (has_filter) {
        df_buf_puts(out, preds->len > 0 ? " AND " : "");
        df_gen_expr(g, row_ctx, DF_BOOL, range(g, 1, 2), out);
    }
}

/* One SELECT ... FROM ... [WHERE] [GROUP BY] [HAVING].  Output columns are named
 * <alias_prefix>0, 1, ... when alias_prefix is not 0. */
/* SELECT * FROM ...: every column of the FROM clause, in order. */
static void put_star(const DfScope *scope, DfShape *got, DfBuf *out)
{
    df_buf_puts(out, "SELECT *");
    got->n_cols = scope->n_cols;
    for (int col_idx = 0; col_idx < scope->n_cols; col_idx++) {
        got->types[col_idx] = scope->cols[col_idx].type;
    }
}

static void gen_select_list(DfGen *g, const DfCtx *sel_ctx, bool is_aggregate, char alias_prefix,
                            const DfShape *got, DfBuf *out)
{
    int saved_depth = g->sub_depth;
    if (g->n_no_select_sub > 0) {
        g->sub_depth = DF_MAX_SUB_DEPTH;
    }
    df_buf_puts(out, chance(g, 12) ? "SELECT DISTINCT " : "SELECT ");
    for (int col_idx = 0; col_idx < got->n_cols; col_idx++) {
        df_buf_puts(out, col_idx > 0 ? ", " : "");
        if (is_aggregate && col_idx == 0) {
            /* SQLite rejects HAVING unless the select list aggregates. */
            df_gen_agg(g, sel_ctx, got->types[col_idx], out);
        } else {
            df_gen_expr(g, sel_ctx, got->types[col_idx], range(g, 1, 3), out);
        }
        if (alias_prefix != 0) {
            df_buf_printf(out, " AS %c%d", alias_prefix, col_idx);
        }
    }
    g->sub_depth = saved_depth;
}

static void gen_core(DfGen *g, const DfShape *want, DfShape *got, char alias_prefix, unsigned flags,
                     DfBuf *out)
{
    DfScope scope, keys;
    DfBuf from = {0}, preds = {0}, group_by = {0};
    keys.outer = NULL;
    keys.n_cols = 0;
    gen_from(g, &scope, &from, &preds);
    int pick = range(g, 0, 99);
    CoreMode mode = pick < 58 ? CORE_PLAIN : pick < 88 ? CORE_GROUPED : CORE_AGGREGATE;
    if (mode == CORE_GROUPED) {
        pick_keys(g, &scope, &keys, &group_by);
    }
    DfCtx row_ctx = {&scope, NULL, 1};
    DfCtx grp_ctx = {&keys, &scope, 1};
    const DfCtx *sel_ctx = mode == CORE_PLAIN ? &row_ctx : &grp_ctx;
    if (mode == CORE_PLAIN && (flags & CORE_STAR) != 0 && chance(g, 6)) {
        put_star(&scope, got, out);
    } else {
        pick_shape(g, want, (flags & CORE_AVG) != 0 && mode != CORE_PLAIN, got);
        gen_select_list(g, sel_ctx, mode == CORE_AGGREGATE, alias_prefix, got, out);
    }
    df_buf_printf(out, " FROM %s", df_buf_str(&from));
    gen_where(g, &row_ctx, &preds, out);
    df_buf_puts(out, df_buf_str(&group_by));
    if (mode != CORE_PLAIN && chance(g, 40)) {
        df_buf_puts(out, " HAVING ");
        df_gen_expr(g, &grp_ctx, DF_BOOL, range(g, 1, 2), out);
    }
    df_buf_fini(&from);
    df_buf_fini(&preds);
    df_buf_fini(&group_by);
}

/* ------------------------------------------------------------------------ */
/* Subqueries                                                                */
/* ------------------------------------------------------------------------ */

/* "(inner.x op outer.y)" for a random inner column; false when no outer column fits. */
static bool put_correlation(DfGen *g, const DfScope *inner, const DfScope *outer, DfBuf *out)
{
    static const char *const ops[] = {"=", "=", "=", "<", "<>", ">="};
    const DfScopeCol *mine = &inner->cols[range(g, 0, inner->n_cols - 1)];
    const DfScopeCol *theirs = df_pick_col(g, outer, mine->type, false);
    if (theirs == NULL || mine->type == DF_BOOL) {
        return false;
    }
    df_buf_puts(out, "(");
    df_put_col(out, mine);
    df_buf_printf(out, " %s ", ops[range(g, 0, 5)]);
    df_put_col(out, theirs);
    df_buf_puts(out, ")");
    return true;
}

/* A second table joined into a subquery's FROM (the subquery scope grows). */
static void gen_sub_join(DfGen *g, DfScope *inner, DfBuf *out)
{
    const DfTable *t = &g->schema->tables[range(g, 0, g->schema->n_tables - 1)];
    char alias[DF_NAME_CAP];
    df_new_alias(g, alias);
    int first_new = inner->n_cols;
    scope_add_table(inner, t, alias);
    df_buf_printf(out, " %s %s AS %s ON ", chance(g, 70) ? "JOIN" : "LEFT JOIN", t->name, alias);
    DfScope own = *inner;
    own.outer = NULL;
    df_gen_join_cond(g, &own, first_new, out);
}

/* " FROM t AS qN [JOIN ...] [WHERE ...]" of a subquery, usually correlated with
 * `outer` by one or two predicates. */
static void gen_sub_from(DfGen *g, const DfTable *t, const DfScope *outer, DfScope *inner,
                         DfBuf *out)
{
    char alias[DF_NAME_CAP];
    df_new_alias(g, alias);
    inner->outer = outer;
    inner->n_cols = 0;
    scope_add_table(inner, t, alias);
    df_buf_printf(out, " FROM %s AS %s", t->name, alias);
    if (chance(g, 15)) {
        gen_sub_join(g, inner, out);
    }
    bool has_where = false;
    if (outer != NULL && outer->n_cols > 0 && chance(g, 70)) {
        df_buf_puts(out, " WHERE ");
        has_where = put_correlation(g, inner, outer, out);
        if (!has_where) {
            df_buf_puts(out, "TRUE");
            has_where = true;
        } else if (chance(g, 20)) {
            df_buf_puts(out, " AND ");
            if (!put_correlation(g, inner, outer, out)) {
                df_buf_puts(out, "TRUE");
            }
        }
    }
    if (chance(g, has_where ? 35 : 50)) {
        DfCtx ctx = {inner, NULL, 1};
        df_buf_puts(out, has_where ? " AND " : " WHERE ");
        df_gen_expr(g, &ctx, DF_BOOL, range(g, 0, 2), out);
    }
}

/* The only-own-columns view of a subquery's scope, for aggregate arguments. */
static DfScope own_columns(const DfScope *inner)
{
    DfScope own = *inner;
    own.outer = NULL;
    return own;
}

/* The select item of a scalar subquery: an aggregate over the inner columns.
 * It holds no subquery: Sluice does not support one in the select list of a
 * correlated subquery ("a subquery is not supported here", KNOWN_DIFFS.md). */
static void gen_scalar_item(DfGen *g, const DfScope *inner, DfType type, DfBuf *out)
{
    static const char *const funcs[] = {"sum", "min", "max"};
    DfScope own = own_columns(inner);
    DfCtx ctx = {&own, NULL, 0};
    if (type == DF_STR) {
        df_buf_puts(out, chance(g, 50) ? "min(" : "max(");
        df_gen_expr(g, &ctx, DF_STR, range(g, 0, 1), out);
        df_buf_puts(out, ")");
        return;
    }
    int pick = range(g, 0, 4);
    if (pick == 0) {
        df_buf_puts(out, "count(*)");
    } else if (pick == 1) {
        df_buf_puts(out, "count(");
        df_gen_expr(g, &ctx, (DfType)range(g, 0, 1), 0, out);
        df_buf_puts(out, ")");
    } else {
        df_buf_printf(out, "%s(", funcs[range(g, 0, 2)]);
        df_gen_expr(g, &ctx, DF_INT, range(g, 0, 1), out);
        df_buf_puts(out, ")");
    }
}

void df_gen_scalar_sub(DfGen *g, const DfScope *outer, DfType type, DfBuf *out)
{
    const DfTable *t = pick_table(g, type);
    if (t == NULL) {
        df_put_str_literal(g, out);
        return;
    }
    DfScope inner;
    DfBuf from = {0};
    /* Sluice: "LIMIT in a correlated subquery is not supported yet". */
    bool is_limit = chance(g, 20);
    int saved_depth = g->sub_depth++;
    gen_sub_from(g, t, is_limit ? NULL : outer, &inner, &from);
    df_buf_puts(out, "(SELECT ");
    if (is_limit) {
        /* One row by a total order: deterministic, unlike a bare LIMIT 1. */
        df_put_col(out, df_pick_col(g, &inner, type, false));
        df_buf_printf(out, "%s ORDER BY 1 %s NULLS %s LIMIT 1)", df_buf_str(&from),
                      chance(g, 50) ? "ASC" : "DESC", chance(g, 50) ? "FIRST" : "LAST");
    } else {
        g->sub_depth = DF_MAX_SUB_DEPTH;
        const DfScopeCol *theirs =
            type == DF_INT && chance(g, 15) ? df_pick_col(g, outer, DF_INT, false) : NULL;
        /* An outer column outside the aggregate: still one value per outer row. */
        df_buf_puts(out, theirs != NULL ? "(" : "");
        gen_scalar_item(g, &inner, type, out);
        if (theirs != NULL) {
            df_buf_puts(out, " + ");
            df_put_col(out, theirs);
            df_buf_puts(out, ")");
        }
        df_buf_printf(out, "%s)", df_buf_str(&from));
    }
    g->sub_depth = saved_depth;
    df_buf_fini(&from);
}

void df_gen_exists_sub(DfGen *g, const DfScope *outer, DfBuf *out)
{
    const DfTable *t = &g->schema->tables[range(g, 0, g->schema->n_tables - 1)];
    DfScope inner;
    DfBuf from = {0};
    int saved_depth = g->sub_depth++;
    gen_sub_from(g, t, outer, &inner, &from);
    g->sub_depth = DF_MAX_SUB_DEPTH;
    DfScope own = own_columns(&inner);
    int pick = range(g, 0, 99);
    bool is_corr = outer != NULL && outer->n_cols > 0;
    if (pick >= 65 && pick < 90 && (g->avoid & DF_AVOID_EXISTS_AGG) != 0) {
        pick = 0;
    } else if (pick >= 65 && pick < 90 && is_corr) {
        g->used |= DF_AVOID_EXISTS_AGG;
    }
    if (pick < 55) {
        df_buf_printf(out, "(SELECT 1%s)", df_buf_str(&from));
    } else if (pick < 65) {
        df_buf_printf(out, "(SELECT *%s)", df_buf_str(&from));
    } else if (pick < 80) {
        /* An aggregate without GROUP BY: always one row, so EXISTS is true. */
        df_buf_puts(out, "(SELECT ");
        gen_scalar_item(g, &inner, DF_INT, out);
        df_buf_printf(out, "%s)", df_buf_str(&from));
    } else if (pick < 90) {
        df_buf_printf(out, "(SELECT count(*)%s HAVING count(*) > %d)", df_buf_str(&from),
                      range(g, 0, 3));
    } else {
        const DfScopeCol *key = &own.cols[range(g, 0, own.n_cols - 1)];
        df_buf_puts(out, "(SELECT ");
        df_put_col(out, key);
        df_buf_printf(out, "%s GROUP BY ", df_buf_str(&from));
        df_put_col(out, key);
        df_buf_puts(out, ")");
    }
    g->sub_depth = saved_depth;
    df_buf_fini(&from);
}

/* One "SELECT x FROM t AS qN [WHERE ...] [GROUP BY ...]" of an IN list. */
static void gen_list_select(DfGen *g, const DfScope *outer, DfType type, DfBuf *out)
{
    const DfTable *t = pick_table(g, type);
    if (t == NULL) {
        t = &g->schema->tables[0];
    }
    DfScope inner;
    DfBuf from = {0};
    gen_sub_from(g, t, outer, &inner, &from);
    int saved_depth = g->sub_depth;
    g->sub_depth = DF_MAX_SUB_DEPTH; /* no subquery in the select list, as above */
    DfScope own = own_columns(&inner);
    DfCtx ctx = {&own, NULL, 0};
    const DfScopeCol *col = df_pick_col(g, &own, type, false);
    int pick = range(g, 0, 99);
    df_buf_puts(out, pick < 10 ? "SELECT DISTINCT " : "SELECT ");
    if (pick >= 85 && type == DF_INT) {
        /* A grouped list: one value per group. */
        df_buf_printf(out, "%s(", chance(g, 50) ? "max" : "count");
        df_gen_expr(g, &ctx, DF_INT, 0, out);
        df_buf_printf(out, ")%s GROUP BY ", df_buf_str(&from));
        df_put_col(out, &own.cols[range(g, 0, own.n_cols - 1)]);
    } else {
        if (col != NULL && chance(g, 65)) {
            df_put_col(out, col);
        } else {
            df_gen_expr(g, &ctx, type, 1, out);
        }
        df_buf_puts(out, df_buf_str(&from));
    }
    g->sub_depth = saved_depth;
    df_buf_fini(&from);
}

void df_gen_list_sub(DfGen *g, const DfScope *outer, DfType type, DfBuf *out)
{
    static const char *const ops[] = {"UNION", "UNION ALL", "INTERSECT", "EXCEPT"};
    if ((g->avoid & DF_AVOID_CORR_IN) != 0) {
        outer = NULL;
    }
    bool is_set_op = chance(g, 10);
    if (is_set_op && (g->avoid & DF_AVOID_CORR_SET_OP) != 0) {
        outer = NULL;
    }
    if (outer != NULL && outer->n_cols > 0) {
        g->used |= DF_AVOID_CORR_IN | (is_set_op ? DF_AVOID_CORR_SET_OP : 0);
    }
    g->sub_depth++;
    df_buf_puts(out, "(");
    gen_list_select(g, outer, type, out);
    if (is_set_op) {
        df_buf_printf(out, " %s ", ops[range(g, 0, 3)]);
        gen_list_select(g, outer, type, out);
    }
    df_buf_puts(out, ")");
    g->sub_depth--;
}

/* ------------------------------------------------------------------------ */
/* Whole statements                                                          */
/* ------------------------------------------------------------------------ */

static void gen_set_op(DfGen *g, char alias_prefix, DfShape *shape, DfBuf *out)
{
    static const char *const ops[] = {"UNION", "UNION ALL", "INTERSECT", "EXCEPT"};
    DfShape other;
    gen_core(g, NULL, shape, alias_prefix, 0, out);
    int first_op = range(g, 0, 3);
    df_buf_printf(out, " %s ", ops[first_op]);
    gen_core(g, shape, &other, alias_prefix, 0, out);
    if (chance(g, 25)) {
        int second_op = range(g, 0, 3);
        if (second_op == 2 && first_op != 2) {
            second_op = 1; /* KNOWN_DIFFS.md: INTERSECT precedence */
        }
        df_buf_printf(out, " %s ", ops[second_op]);
        gen_core(g, shape, &other, alias_prefix, 0, out);
    }
}

static void gen_order_limit(DfGen *g, const DfShape *shape, DfBuf *out)
{
    df_buf_puts(out, " ORDER BY ");
    for (int col_idx = 0; col_idx < shape->n_cols; col_idx++) {
        df_buf_printf(out, "%s%d %s NULLS %s", col_idx > 0 ? ", " : "", col_idx + 1,
                      chance(g, 60) ? "ASC" : "DESC", chance(g, 50) ? "FIRST" : "LAST");
    }
    df_buf_printf(out, " LIMIT %d", chance(g, 5) ? 0 : range(g, 1, 12));
    if (chance(g, 30)) {
        df_buf_printf(out, " OFFSET %d", range(g, 0, 6));
    }
}

unsigned df_gen_query(DfRng *rng, const DfSchema *schema, unsigned avoid, DfBuf *sql)
{
    DfGen g = {rng, schema, 0, 0, 0, avoid, 0};
    DfShape shape;
    DfBuf body = {0};
    bool is_wrapped = df_rng_chance(rng, 8);
    char alias_prefix = is_wrapped ? 'c' : 0;
    if (df_rng_chance(rng, 16)) {
        gen_set_op(&g, alias_prefix, &shape, &body);
    } else {
        gen_core(&g, NULL, &shape, alias_prefix, is_wrapped ? CORE_AVG : CORE_AVG | CORE_STAR,
                 &body);
    }
    if (df_rng_chance(rng, 20)) {
        gen_order_limit(&g, &shape, &body);
    }
    if (is_wrapped) {
        char alias[DF_NAME_CAP];
        df_new_alias(&g, alias);
        df_buf_printf(sql, "SELECT * FROM (%s) AS %s", df_buf_str(&body), alias);
    } else {
        df_buf_puts(sql, df_buf_str(&body));
    }
    df_buf_fini(&body);
    return g.used;
}
