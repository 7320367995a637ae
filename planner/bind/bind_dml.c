/*
 * bind_dml.c - UPDATE and DELETE as queries over the table, for the
 * statements that cannot run in place (planner/session.c): a plan of the
 * rows they change, each with its address (ST_ROW_ADDR) and new values, in
 * address order, which ExChanges (executor/update.h) turns into copies of the
 * chunks they lie in, swapped in only when every row was computed and
 * checked, so a failing statement changes nothing.  Conditions and new
 * values may use subqueries (they join onto the scan), and an UPDATE a FROM.
 * Also column defaults: a DEFAULT clause is a constant, evaluated once at
 * CREATE TABLE and kept as a value in the column (storage/table.h).
 */
#include <string.h>

#include "planner/bind/binder_int.h"

static void *oom(PlBinder *b)
{
    cm_err_set(b->err, CM_OOM, -1, "out of memory");
    return NULL;
}

/* A scan of every column of t, with a scope naming them after `name`; with
 * `addr`, then each row's address (pl_bind_scan_addr). */
static PlNode *scan_of(PlBinder *b, StTable *t, const char *name, PlScope *sc, bool addr)
{
    PlNode *n = addr ? pl_bind_scan_addr(b, t) : pl_bind_scan(b, t);
    if (n == NULL) {
        return NULL;
    }
    sc->n = n->n_cols;
    if ((sc->cols = cm_arena_zalloc(b->arena, sizeof(PlScopeCol) * (size_t)(n->n_cols + 1))) ==
        NULL) {
        return oom(b);
    }
    for (int i = 0; i < n->n_cols; i++) {
        sc->cols[i] = (PlScopeCol){.table = name, .name = n->names[i], .type = n->types[i]};
    }
    return n;
}

static PlNode *scan(PlBinder *b, StTable *t, const char *name, PlScope *sc)
{
    return scan_of(b, t, name, sc, false);
}

/* The rows `flag` (BOOLEAN, never NULL) picks from input, whose column
 * addr_at is the row address and column col_at[i] (col_at NULL: i) t's
 * column i: the address, then those of t's n columns in_plan[i] picks
 * (set[i] where given, else input's column), then the flag, in address
 * order. */
static PlNode *by_address(PlBinder *b, PlNode *input, int n, const int *col_at, int addr_at,
                          ExExpr **set, const bool *in_plan, ExExpr *flag, int64_t off)
{
    ExExpr **exprs = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n + 2));
    const char **names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(n + 2));
    ExSortKey *key = cm_arena_zalloc(b->arena, sizeof *key);
    if (exprs == NULL || names == NULL || key == NULL ||
        (exprs[0] = ex_expr_column(b->arena, addr_at, cm_type_make(CM_T_INT64))) == NULL) {
        return oom(b);
    }
    names[0] = "#addr";
    int k = 1;
    for (int i = 0; i < n; i++) {
        if (!in_plan[i]) {
            continue;
        }
        int at = col_at != NULL ? col_at[i] : i;
        exprs[k] = set && set[i] ? set[i] : ex_expr_column(b->arena, at, input->types[at]);
        names[k] = input->names[at];
        if (exprs[k++] == NULL) {
            return oom(b);
        }
    }
    exprs[k] = flag;
    names[k] = "#flag";
    PlNode *p = pl_project(b, input, k + 1, exprs, names);
    ExExpr *picked = p ? ex_expr_column(b->arena, k, cm_type_make(CM_T_BOOL)) : NULL;
    PlNode *f = picked ? pl_filter(b, p, picked, off) : NULL;
    PlNode *s = f ? pl_node_new(b->arena, PL_SORT, f->n_cols) : NULL;
    if (s == NULL) {
        return f ? oom(b) : NULL;
    }
    memcpy(s->types, f->types, sizeof(CmType) * (size_t)f->n_cols);
    memcpy(s->names, f->names, sizeof(char *) * (size_t)f->n_cols);
    s->child = f;
    s->n_sort_keys = 1;
    s->sort_keys = key; /* column 0, ascending */
    s->limit = -1;
    return s;
}

/* CASE WHEN cond THEN yes ELSE no END for BOOLEAN constants: NULL -> no. */
static ExExpr *truth(PlBinder *b, ExExpr *cond, bool yes, int64_t off)
{
    ExExpr **args = cm_arena_alloc(b->arena, sizeof(ExExpr *) * 3);
    ExExpr *e = cm_arena_zalloc(b->arena, sizeof *e);
    if (args == NULL || e == NULL) {
        return oom(b);
    }
    CmValue y = {.type = cm_type_make(CM_T_BOOL), .i = yes};
    CmValue n = {.type = cm_type_make(CM_T_BOOL), .i = !yes};
    args[0] = pl_cast(b, cond, cm_type_make(CM_T_BOOL), off);
    args[1] = ex_expr_const(b->arena, &y);
    args[2] = ex_expr_const(b->arena, &n);
    if (args[0] == NULL || args[1] == NULL || args[2] == NULL) {
        return args[0] ? oom(b) : NULL;
    }
    e->kind = EX_E_CASE;
    e->type = cm_type_make(CM_T_BOOL);
    e->n_args = 3;
    e->args = args;
    e->has_else = true;
    e->src_off = off;
    return e;
}

/* A projection of the first n columns of `child` plus `extra` (may be NULL). */
static PlNode *keep_columns(PlBinder *b, PlNode *child, int n, ExExpr **set, ExExpr *extra)
{
    int total = n + (extra != NULL);
    ExExpr **exprs = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(total + 1));
    const char **names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(total + 1));
    if (exprs == NULL || names == NULL) {
        return oom(b);
    }
    memcpy(names, child->names, sizeof(char *) * (size_t)n);
    names[n] = "#flag";
    for (int i = 0; i < n; i++) {
        exprs[i] = set && set[i] ? set[i] : ex_expr_column(b->arena, i, child->types[i]);
        if (exprs[i] == NULL) {
            return oom(b);
        }
    }
    if (extra != NULL) {
        exprs[n] = extra;
    }
    return pl_project(b, child, total, exprs, names);
}

CmValue pl_column_default(const StColumn *c)
{
    if (c->has_default) {
        return c->default_value;
    }
    return (CmValue){.type = c->type, .is_null = true};
}

CmStatus pl_bind_default(PlBinder *b, const PsExpr *ast, CmType type, CmValue *out)
{
    if (pl_has_subquery(ast)) {
        return cm_err_set(b->err, CM_BIND, ast->src_off, "subqueries are not allowed in DEFAULT");
    }
    PlScope none = {0};
    ExExpr *e = pl_bind_scalar(b, &none, ast, "DEFAULT");
    e = e ? pl_cast(b, e, type, ast->src_off) : NULL;
    if (e == NULL) {
        return b->err->code;
    }
    return ex_expr_eval_const(e, b->arena, out, b->err);
}

/* DELETE by address (by_address; t's columns only for RETURNING). */
static PlNode *bind_delete(PlBinder *b, StTable *t, const PsStmt *stmt, bool *in_plan)
{
    const PsExpr *where = stmt->where;
    PlScope sc;
    PlNode *input = scan_of(b, t, t->name, &sc, true);
    if (input == NULL) {
        return NULL;
    }
    ExExpr *gone;
    if (where == NULL) {
        CmValue yes = {.type = cm_type_make(CM_T_BOOL), .i = 1};
        gone = ex_expr_const(b->arena, &yes);
        if (gone == NULL) {
            return oom(b);
        }
    } else {
        PlBindCtx ctx = {
            .b = b, .scope = &sc, .mscope = &sc, .input = &input, .base = input, .clause = "WHERE"};
        ExExpr *pred = pl_bind_expr(&ctx, where);
        if ((gone = pred ? truth(b, pred, true, where->src_off) : NULL) == NULL) {
            return NULL;
        }
    }
    for (int i = 0; i < t->n_cols; i++) {
        in_plan[i] = stmt->returning != NULL;
    }
    return by_address(b, input, t->n_cols, NULL, t->n_cols, NULL, in_plan, gone, stmt->src_off);
}

/* The SET list bound in ctx: set[col] the new value of each column set (cast
 * to its type), NULL for the others.  False with b->err set. */
static bool bind_sets(PlBindCtx *ctx, StTable *t, const PsList *sets, ExExpr **set)
{
    PlBinder *b = ctx->b;
    for (int i = 0; i < sets->n; i++) {
        const PsSetClause *c = sets->items[i];
        int col = 0;
        while (col < t->n_cols && strcmp(t->cols[col].name, c->column) != 0) {
            col++;
        }
        if (col == t->n_cols) {
            cm_err_set(b->err, CM_BIND, c->column_off, "unknown column '%s' in table '%s'",
                       c->column, t->name);
            return false;
        }
        /* A column set twice takes the rightmost value, as in SQLite. */
        ExExpr *v;
        if (c->value->kind == PS_EX_DEFAULT) {
            CmValue d = pl_column_default(&t->cols[col]);
            if ((v = ex_expr_const(b->arena, &d)) == NULL) {
                oom(b);
                return false;
            }
        } else {
            v = pl_bind_expr(ctx, c->value);
        }
        set[col] = v ? pl_cast_implicit(b, v, t->cols[col].type, c->value->src_off) : NULL;
        if (set[col] == NULL) {
            return false;
        }
    }
    return true;
}

/* set[col] becomes CASE WHEN cond THEN set[col] ELSE old[col] END where set,
 * old[col] being column old_at + col of the input. */
static bool when_changed(PlBinder *b, StTable *t, ExExpr *cond, ExExpr **set, int old_at,
                         int64_t cond_off, int64_t off)
{
    for (int col = 0; col < t->n_cols; col++) {
        if (set[col] == NULL) {
            continue;
        }
        ExExpr **args = cm_arena_alloc(b->arena, sizeof(ExExpr *) * 3);
        ExExpr *e = cm_arena_zalloc(b->arena, sizeof *e);
        if (args == NULL || e == NULL) {
            oom(b);
            return false;
        }
        args[0] = pl_cast(b, cond, cm_type_make(CM_T_BOOL), cond_off);
        args[1] = set[col];
        args[2] = ex_expr_column(b->arena, old_at + col, t->cols[col].type);
        if (args[0] == NULL || args[2] == NULL) {
            if (args[0] != NULL) {
                oom(b);
            }
            return false;
        }
        *e = (ExExpr){.kind = EX_E_CASE,
                      .type = t->cols[col].type,
                      .n_args = 3,
                      .args = args,
                      .has_else = true,
                      .src_off = off};
        set[col] = e;
    }
    return true;
}

/* The rows of m with one of each value of m's column 0 (a row address): the
 * first of row_number() over the rows of each, which one left unspecified,
 * as PostgreSQL and DuckDB leave it.  m's columns, then
 * "#match". */
static PlNode *one_per_key(PlBinder *b, PlNode *m, int64_t off)
{
    ExWindowSpec *w = cm_arena_zalloc(b->arena, sizeof *w);
    int *part = cm_arena_zalloc(b->arena, sizeof(int)); /* column 0 */
    PlNode *wn = pl_node_new(b->arena, PL_WINDOW, m->n_cols + 1);
    if (w == NULL || part == NULL || wn == NULL) {
        return oom(b);
    }
    *w = (ExWindowSpec){.fn = EX_WIN_ROW_NUMBER,
                        .arg = -1,
                        .type = cm_type_make(CM_T_INT64),
                        .n_part = 1,
                        .part = part,
                        .rows = true,
                        .start = EX_FRAME_UNBOUNDED_PRECEDING,
                        .end = EX_FRAME_CURRENT_ROW};
    memcpy(wn->types, m->types, sizeof(CmType) * (size_t)m->n_cols);
    memcpy(wn->names, m->names, sizeof(char *) * (size_t)m->n_cols);
    wn->types[m->n_cols] = w->type;
    wn->names[m->n_cols] = "#match";
    wn->child = m;
    wn->win = w;
    CmValue one = {.type = cm_type_make(CM_T_INT64), .i = 1};
    ExExpr *first[2] = {ex_expr_column(b->arena, m->n_cols, w->type),
                        ex_expr_const(b->arena, &one)};
    ExExpr *is_first = first[0] && first[1] ? pl_make_call(b, "=", first, 2, off) : NULL;
    return is_first ? pl_filter(b, wn, is_first, off) : NULL;
}

/* UPDATE t SET .. FROM f WHERE w by row address: t's reference in the FROM
 * (b->update_target) scans t with each row's address, and the matches of
 * `t, f WHERE w`, one per address (one_per_key), give the rows changed and
 * their new values, in by_address' form.  in_plan as bind_update sets it. */
static PlNode *update_from_by_address(PlBinder *b, StTable *t, const PsStmt *stmt, bool *in_plan)
{
    int n = t->n_cols;
    PlScope sc;
    PlNode *j = pl_bind_from_where(b, stmt->from, stmt->where, &sc);
    ExExpr **set = cm_arena_zalloc(b->arena, sizeof(ExExpr *) * (size_t)(n + 1));
    if (j == NULL || set == NULL) {
        return j ? oom(b) : NULL;
    }
    /* t's columns lie before its address, as its scan gives them */
    int ai = n;
    while (ai < sc.n && strcmp(sc.cols[ai].name, "#addr") != 0) {
        ai++;
    }
    for (int i = 0; ai < sc.n && i < n; i++) {
        if (strcmp(sc.cols[ai - n + i].name, t->cols[i].name) != 0) {
            ai = sc.n;
        }
    }
    if (ai >= sc.n) {
        cm_err_set(b->err, CM_INTERNAL, stmt->src_off, "the rows of '%s' lost their addresses",
                   t->name);
        return NULL;
    }
    PlBindCtx ctx = {
        .b = b, .scope = &sc, .mscope = &sc, .input = &j, .base = j, .clause = "UPDATE"};
    if (!bind_sets(&ctx, t, stmt->sets, set)) {
        return NULL;
    }
    /* the address, then the new value or the old one of each column in the plan */
    ExExpr **vals = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n + 2));
    const char **names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(n + 2));
    int *col_at = cm_arena_zalloc(b->arena, sizeof(int) * (size_t)(n + 1));
    if (vals == NULL || names == NULL || col_at == NULL ||
        (vals[0] = ex_expr_column(b->arena, ai, cm_type_make(CM_T_INT64))) == NULL) {
        return oom(b);
    }
    names[0] = "#addr";
    int k = 1;
    for (int i = 0; i < n; i++) {
        in_plan[i] = stmt->returning != NULL || set[i] != NULL;
        if (in_plan[i]) {
            col_at[i] = k;
            names[k] = t->cols[i].name;
            vals[k] = set[i] ? set[i] : ex_expr_column(b->arena, ai - n + i, t->cols[i].type);
            if (vals[k++] == NULL) {
                return oom(b);
            }
        }
    }
    PlNode *m = pl_project(b, j, k, vals, names);
    PlNode *f = m ? one_per_key(b, m, stmt->src_off) : NULL;
    CmValue yes = {.type = cm_type_make(CM_T_BOOL), .i = 1};
    ExExpr *all = f ? ex_expr_const(b->arena, &yes) : NULL;
    if (all == NULL) {
        return f ? oom(b) : NULL;
    }
    return by_address(b, f, n, col_at, 0, NULL, in_plan, all, stmt->src_off);
}

/* UPDATE without FROM by address (by_address; the columns set, or all for
 * RETURNING). */
static PlNode *bind_update(PlBinder *b, StTable *t, const PsStmt *stmt, bool *in_plan)
{
    const PsExpr *where = stmt->where;
    PlScope sc;
    PlNode *input = scan_of(b, t, stmt->alias ? stmt->alias : t->name, &sc, true);
    ExExpr **set = cm_arena_zalloc(b->arena, sizeof(ExExpr *) * (size_t)(t->n_cols + 1));
    if (input == NULL || set == NULL) {
        return input ? oom(b) : NULL;
    }
    PlBindCtx ctx = {
        .b = b, .scope = &sc, .mscope = &sc, .input = &input, .base = input, .clause = "UPDATE"};
    ExExpr *pred = NULL;
    if (where != NULL && (pred = pl_bind_expr(&ctx, where)) == NULL) {
        return NULL;
    }
    if (!bind_sets(&ctx, t, stmt->sets, set)) {
        return NULL;
    }
    ExExpr *changed = NULL;
    if (pred != NULL) {
        /* the WHERE once per row, as a column every new value's CASE reads: evaluated in
         * each CASE, a volatile one (random()) would pick other rows per column */
        int m = input->n_cols;
        ExExpr *flag = truth(b, pred, true, where->src_off);
        PlNode *flagged = flag ? keep_columns(b, input, m, NULL, flag) : NULL;
        if (flagged == NULL) {
            return NULL;
        }
        if ((changed = ex_expr_column(b->arena, m, cm_type_make(CM_T_BOOL))) == NULL) {
            return oom(b);
        }
        if (!when_changed(b, t, changed, set, 0, where->src_off, stmt->src_off)) {
            return NULL;
        }
        input = flagged;
    } else {
        CmValue yes = {.type = cm_type_make(CM_T_BOOL), .i = 1};
        changed = ex_expr_const(b->arena, &yes);
    }
    if (changed == NULL) {
        return NULL;
    }
    for (int i = 0; i < t->n_cols; i++) {
        in_plan[i] = stmt->returning != NULL || set[i] != NULL;
    }
    return by_address(b, input, t->n_cols, NULL, t->n_cols, set, in_plan, changed, stmt->src_off);
}

PlNode *pl_bind_changes(PlBinder *b, StTable *t, const PsStmt *stmt, bool *in_plan)
{
    if (stmt->kind == PS_ST_DELETE) {
        return bind_delete(b, t, stmt, in_plan);
    }
    if (stmt->from == NULL) {
        return bind_update(b, t, stmt, in_plan);
    }
    CM_ASSERT(b->update_target == t);
    return update_from_by_address(b, t, stmt, in_plan);
}

bool pl_bind_update_values(PlBinder *b, StTable *t, const PsStmt *stmt, ExExpr **pred, ExExpr **set)
{
    if (stmt->from != NULL || (stmt->where != NULL && pl_has_subquery(stmt->where))) {
        return false;
    }
    for (int i = 0; stmt->sets != NULL && i < stmt->sets->n; i++) {
        if (pl_has_subquery(((const PsSetClause *)stmt->sets->items[i])->value)) {
            return false;
        }
    }
    PlScope sc;
    PlNode *scanned = scan(b, t, stmt->alias ? stmt->alias : t->name, &sc), *input = scanned;
    if (input == NULL) {
        return false;
    }
    PlBindCtx ctx = {
        .b = b, .scope = &sc, .mscope = &sc, .input = &input, .base = input, .clause = "UPDATE"};
    *pred = NULL;
    memset(set, 0, sizeof(ExExpr *) * (size_t)t->n_cols);
    if (stmt->where != NULL && (*pred = pl_bind_expr(&ctx, stmt->where)) == NULL) {
        return false;
    }
    if (stmt->sets != NULL && !bind_sets(&ctx, t, stmt->sets, set)) {
        return false;
    }
    if (*pred != NULL && (*pred = truth(b, *pred, true, stmt->where->src_off)) == NULL) {
        return false;
    }
    /* nothing may have been put between the scan and the expressions */
    return input == scanned;
}

PlNode *pl_bind_returning(PlBinder *b, const PsSelect *sel)
{
    for (int i = 0; i < sel->targets->n; i++) {
        const PsExpr *bad =
            pl_find_not_returnable(((const PsTarget *)sel->targets->items[i])->expr);
        if (bad != NULL) {
            const char *what = bad->kind == PS_EX_FUNC ? (bad->over != NULL ? "window functions"
                                                                            : "aggregate functions")
                                                       : "subqueries";
            cm_err_set(b->err, CM_BIND, bad->src_off, "%s are not allowed in RETURNING", what);
            return NULL;
        }
    }
    return pl_bind_select(b, sel);
}
