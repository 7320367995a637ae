/*
 * bind_dml.c - UPDATE and DELETE as queries over the table: the statement
 * computes the table's new rows, and the session swaps them in only when all
 * of them were computed and checked, so a failing statement changes nothing.
 * Conditions and new values may use subqueries (they join onto the scan).
 * Also column defaults: a DEFAULT clause is a constant, evaluated once at
 * CREATE TABLE and kept as a value in the column (storage/table.h).
 */
#include <string.h>

#include "planner/binder_int.h"

static void *oom(PlBinder *b)
{
    cm_err_set(b->err, CM_OOM, -1, "out of memory");
    return NULL;
}

/* A scan of every column of t, with a scope naming them after `name`. */
static PlNode *scan(PlBinder *b, StTable *t, const char *name, PlScope *sc)
{
    PlNode *n = pl_node_new(b->arena, PL_GET, t->n_cols);
    sc->n = t->n_cols;
    sc->cols = cm_arena_zalloc(b->arena, sizeof(PlScopeCol) * (size_t)(t->n_cols + 1));
    if (n == NULL || sc->cols == NULL ||
        (n->col_ids = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(t->n_cols + 1))) == NULL) {
        return oom(b);
    }
    n->table = t;
    for (int i = 0; i < t->n_cols; i++) {
        n->col_ids[i] = i;
        n->types[i] = t->cols[i].type;
        n->names[i] = t->cols[i].name;
        sc->cols[i] = (PlScopeCol){.table = name, .name = t->cols[i].name,
                                   .type = t->cols[i].type};
    }
    return n;
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
    if (exprs == NULL) {
        return oom(b);
    }
    for (int i = 0; i < n; i++) {
        exprs[i] = set && set[i] ? set[i] : ex_expr_column(b->arena, i, child->types[i]);
        if (exprs[i] == NULL) {
            return oom(b);
        }
    }
    if (extra != NULL) {
        exprs[n] = extra;
    }
    return pl_project(b, child, total, exprs, child->names);
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

PlNode *pl_bind_delete(PlBinder *b, StTable *t, const PsExpr *where)
{
    PlScope sc;
    PlNode *input = scan(b, t, t->name, &sc);
    if (input == NULL) {
        return NULL;
    }
    if (where == NULL) {
        CmValue yes = {.type = cm_type_make(CM_T_BOOL), .i = 1};
        ExExpr *all = ex_expr_const(b->arena, &yes);
        return all ? keep_columns(b, input, t->n_cols, NULL, all) : oom(b);
    }
    PlBindCtx ctx = {.b = b, .scope = &sc, .mscope = &sc, .input = &input, .base = input,
                     .clause = "WHERE"};
    ExExpr *pred = pl_bind_expr(&ctx, where);
    ExExpr *gone = pred ? truth(b, pred, true, where->src_off) : NULL;
    return gone ? keep_columns(b, input, t->n_cols, NULL, gone) : NULL;
}

PlNode *pl_bind_update(PlBinder *b, StTable *t, const PsStmt *stmt)
{
    const PsList *sets = stmt->sets;
    const PsExpr *where = stmt->where;
    int64_t off = stmt->src_off;
    PlScope sc;
    PlNode *input = scan(b, t, stmt->alias ? stmt->alias : t->name, &sc);
    ExExpr **set = cm_arena_zalloc(b->arena, sizeof(ExExpr *) * (size_t)(t->n_cols + 1));
    if (input == NULL || set == NULL) {
        return input ? oom(b) : NULL;
    }
    PlBindCtx ctx = {.b = b, .scope = &sc, .mscope = &sc, .input = &input, .base = input,
                     .clause = "UPDATE"};
    ExExpr *pred = NULL;
    if (where != NULL && (pred = pl_bind_expr(&ctx, where)) == NULL) {
        return NULL;
    }
    for (int i = 0; i < sets->n; i++) {
        const PsSetClause *c = sets->items[i];
        int col = 0;
        while (col < t->n_cols && strcmp(t->cols[col].name, c->column) != 0) {
            col++;
        }
        if (col == t->n_cols) {
            cm_err_set(b->err, CM_BIND, c->column_off, "unknown column '%s' in table '%s'",
                       c->column, t->name);
            return NULL;
        }
        /* A column set twice takes the rightmost value, as in SQLite. */
        ExExpr *v;
        if (c->value->kind == PS_EX_DEFAULT) {
            CmValue d = pl_column_default(&t->cols[col]);
            if ((v = ex_expr_const(b->arena, &d)) == NULL) {
                return oom(b);
            }
        } else {
            v = pl_bind_expr(&ctx, c->value);
        }
        set[col] = v ? pl_cast_implicit(b, v, t->cols[col].type, c->value->src_off) : NULL;
        if (set[col] == NULL) {
            return NULL;
        }
    }
    ExExpr *changed = NULL;
    if (pred != NULL) {
        changed = truth(b, pred, true, where->src_off);
        for (int col = 0; changed != NULL && col < t->n_cols; col++) {
            if (set[col] == NULL) {
                continue;
            }
            /* CASE WHEN pred THEN new ELSE old END */
            ExExpr **args = cm_arena_alloc(b->arena, sizeof(ExExpr *) * 3);
            ExExpr *e = cm_arena_zalloc(b->arena, sizeof *e);
            if (args == NULL || e == NULL) {
                return oom(b);
            }
            args[0] = pl_cast(b, pred, cm_type_make(CM_T_BOOL), where->src_off);
            args[1] = set[col];
            args[2] = ex_expr_column(b->arena, col, t->cols[col].type);
            if (args[0] == NULL || args[2] == NULL) {
                return args[0] ? oom(b) : NULL;
            }
            *e = (ExExpr){.kind = EX_E_CASE, .type = t->cols[col].type, .n_args = 3,
                          .args = args, .has_else = true, .src_off = off};
            set[col] = e;
        }
    } else {
        CmValue yes = {.type = cm_type_make(CM_T_BOOL), .i = 1};
        changed = ex_expr_const(b->arena, &yes);
    }
    return changed ? keep_columns(b, input, t->n_cols, set, changed) : NULL;
}

PlNode *pl_bind_returning(PlBinder *b, const PsSelect *sel)
{
    for (int i = 0; i < sel->targets->n; i++) {
        const PsExpr *bad = pl_find_not_returnable(((const PsTarget *)sel->targets->items[i])->expr);
        if (bad != NULL) {
            const char *what = bad->kind == PS_EX_FUNC
                                   ? (bad->over != NULL ? "window functions" : "aggregate functions")
                                   : "subqueries";
            cm_err_set(b->err, CM_BIND, bad->src_off, "%s are not allowed in RETURNING", what);
            return NULL;
        }
    }
    return pl_bind_select(b, sel);
}
