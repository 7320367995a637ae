/*
 * binder.c - binding of query expressions (SELECT, VALUES) into logical plans.
 *
 * A SELECT becomes, bottom up: FROM source -> FILTER (WHERE) -> [PROJECT
 * (group keys, aggregate arguments) -> AGGREGATE -> FILTER (HAVING)] ->
 * PROJECT (select list plus hidden ORDER BY columns) -> [AGGREGATE for
 * DISTINCT] -> SORT -> LIMIT -> [PROJECT dropping the hidden columns].
 * ORDER BY items resolve, in order of preference, as an ordinal, as the name
 * of an output column, or as an expression over the FROM clause.
 */
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/datetime.h"
#include "common/value.h"
#include "executor/func.h"
#include "parser/parser.h"
#include "planner/bind/binder_int.h"
#include "planner/bind/functions.h"
#include "planner/cache.h"
#include "planner/system.h"

#define PL_MAX_DEPTH 32

static PlNode *bind_query(PlBinder *b, const PsSelect *sel);
static PlNode *from_item(PlBinder *b, const PsFrom *f, PlScope *sc);

static void *oom(PlBinder *b)
{
    cm_err_set(b->err, CM_OOM, -1, "out of memory");
    return NULL;
}

/* ---- FROM ----------------------------------------------------------------------- */

/* The scope of a node's output, all columns attributed to `table`. */
static bool scope_of(PlBinder *b, const PlNode *n, const char *table, const PsList *aliases,
                     PlScope *sc)
{
    sc->n = n->n_cols;
    sc->cols = cm_arena_zalloc(b->arena, sizeof(PlScopeCol) * (size_t)(n->n_cols + 1));
    if (sc->cols == NULL) {
        oom(b);
        return false;
    }
    for (int i = 0; i < n->n_cols; i++) {
        sc->cols[i].table = table;
        sc->cols[i].name = aliases && i < aliases->n ? aliases->items[i] : n->names[i];
        sc->cols[i].type = n->types[i];
    }
    return true;
}

PlNode *pl_bind_reshape(PlBinder *b, StTable *t, int n, const int *from, const CmValue *fill,
                        const char *const *names)
{
    PlNode *scan = pl_bind_scan(b, t);
    ExExpr **exprs = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n + 1));
    const char **out = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(n + 1));
    if (scan == NULL || exprs == NULL || out == NULL) {
        return scan ? oom(b) : NULL;
    }
    for (int i = 0; i < n; i++) {
        exprs[i] = from[i] >= 0 ? ex_expr_column(b->arena, from[i], t->cols[from[i]].type)
                                : ex_expr_const(b->arena, &fill[i]);
        out[i] = names[i];
        if (exprs[i] == NULL) {
            return oom(b);
        }
    }
    return pl_project(b, scan, n, exprs, out);
}

static PlNode *scan(PlBinder *b, StTable *t, bool addr)
{
    int n_cols = t->n_cols + addr;
    PlNode *n = pl_node_new(b->arena, PL_GET, n_cols);
    if (n == NULL) {
        return oom(b);
    }
    n->table = t;
    n->col_ids = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(n_cols + 1));
    if (n->col_ids == NULL) {
        return oom(b);
    }
    for (int i = 0; i < n_cols; i++) {
        bool is_addr = i == t->n_cols;
        n->col_ids[i] = i;
        n->types[i] = is_addr ? cm_type_make(CM_T_INT64) : t->cols[i].type;
        n->names[i] = is_addr ? "#addr" : t->cols[i].name;
    }
    return n;
}

PlNode *pl_bind_scan(PlBinder *b, StTable *t)
{
    return scan(b, t, false);
}

PlNode *pl_bind_scan_addr(PlBinder *b, StTable *t)
{
    return scan(b, t, true);
}

static PlNode *bind_view(PlBinder *b, const StEntry *e, int64_t off)
{
    size_t pos = 0;
    PsStmt *stmt = NULL;
    CmErr perr;
    cm_err_init(&perr);
    const char *saved_sql = b->sql;
    if (ps_parse_next(b->arena, e->view_sql, strlen(e->view_sql), &pos, &stmt, &perr) != CM_OK ||
        stmt == NULL || stmt->kind != PS_ST_SELECT) {
        cm_err_set(b->err, CM_BIND, off, "view '%s' no longer parses", e->name);
        return NULL;
    }
    /* The view's AST points into its own text: errors inside it have no place
     * in the user's statement, so they are reported at the view's name. */
    b->sql = e->view_sql;
    PlCte *saved_ctes = b->ctes;
    b->ctes = NULL;
    PlNode *n = bind_query(b, stmt->select);
    b->ctes = saved_ctes;
    b->sql = saved_sql;
    if (n == NULL) {
        b->err->off = off;
        return NULL;
    }
    for (int i = 0; i < e->n_view_cols && i < n->n_cols; i++) {
        n->names[i] = e->view_cols[i];
    }
    return n;
}

/* A scan of snapshot t (owned; NULL: err is set), kept with the statement's temps. */
static PlNode *keep_scan(PlBinder *b, StTable *t)
{
    PlTemp *tp = t ? cm_calloc(1, sizeof *tp) : NULL;
    if (tp == NULL) {
        st_table_free(t);
        cm_err_set(b->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    tp->name = t->name;
    tp->table = t;
    tp->next = *b->keep;
    *b->keep = tp;
    return pl_bind_scan(b, t);
}

/* A snapshot of a system table. */
static PlNode *bind_system(PlBinder *b, const char *name, int64_t off)
{
    if (b->keep == NULL) {
        cm_err_set(b->err, CM_BIND, off, "system table '%s' cannot be read here", name);
        return NULL;
    }
    return keep_scan(b, pl_system_table(name, b->cache, b->kept, b->cat, b->cfg, b->err));
}

/* The names and types of view e's output, bound by a binder of its own: a
 * view that no longer binds is left out, not an error of the query (running
 * out of memory is). */
static bool view_shape(void *ctx, const StEntry *e, int *n_cols, const char *const **names,
                       const CmType **types)
{
    PlBinder *b = ctx;
    CmErr err;
    cm_err_init(&err);
    PlBinder sub = {.arena = b->arena,
                    .cat = b->cat,
                    .sql = b->sql,
                    .keep = b->keep,
                    .cache = b->cache,
                    .kept = b->kept,
                    .cfg = b->cfg,
                    .is_listing_views = true,
                    .err = &err};
    PlNode *n = bind_view(&sub, e, -1);
    if (n == NULL) {
        if (err.code == CM_OOM) {
            cm_err_set(b->err, CM_OOM, -1, "out of memory");
        }
        return false;
    }
    *n_cols = n->n_cols;
    *names = (const char *const *)n->names;
    *types = n->types;
    return true;
}

/* information_schema.`f->name` (a snapshot of the catalog); a view over
 * information_schema.columns, met while listing the views' columns, lists
 * none, so that the listing ends. */
static PlNode *bind_info_schema(PlBinder *b, const PsFrom *f)
{
    const PsSchemaRef *sr = &f->schema;
    if (sr->catalog != NULL && strcmp(sr->catalog, "memory") != 0) {
        cm_err_set(b->err, CM_BIND, sr->off, "unknown catalog '%s'", sr->catalog);
        return NULL;
    }
    if (!pl_info_schema_exists(f->name)) {
        cm_err_set(b->err, CM_BIND, f->src_off, "unknown table 'information_schema.%s'", f->name);
        return NULL;
    }
    if (b->keep == NULL) {
        cm_err_set(b->err, CM_BIND, f->src_off, "system table '%s' cannot be read here", f->name);
        return NULL;
    }
    return keep_scan(b, pl_info_schema_table(f->name, b->cat,
                                             b->is_listing_views ? NULL : view_shape, b, b->err));
}

CmStatus pl_check_schema(const PsSchemaRef *schema, CmErr *err)
{
    if (schema->schema == NULL) {
        return CM_OK;
    }
    if (schema->catalog != NULL && strcmp(schema->catalog, "memory") != 0) {
        return cm_err_set(err, CM_BIND, schema->off, "unknown catalog '%s'", schema->catalog);
    }
    if (strcmp(schema->schema, "main") != 0 &&
        (schema->catalog != NULL || strcmp(schema->schema, "memory") != 0)) {
        return cm_err_set(err, CM_BIND, schema->off, "unknown schema '%s'", schema->schema);
    }
    return CM_OK;
}

static PlNode *bind_named(PlBinder *b, const PsFrom *f)
{
    if (f->schema.schema != NULL && strcmp(f->schema.schema, "information_schema") == 0) {
        return bind_info_schema(b, f);
    }
    if (pl_check_schema(&f->schema, b->err) != CM_OK) {
        return NULL;
    }
    /* WITH names are not in a schema: a qualified name means a stored table or view. */
    bool is_qualified = f->schema.schema != NULL;
    if (f->is_update_target && b->update_target != NULL) {
        return pl_bind_scan_addr(b, b->update_target);
    }
    for (PlTemp *t = is_qualified ? NULL : b->temps; t != NULL; t = t->next) {
        if (strcmp(t->name, f->name) == 0) {
            return pl_bind_scan(b, t->table);
        }
    }
    for (PlCte *c = is_qualified ? NULL : b->ctes; c != NULL; c = c->next) {
        if (strcmp(c->cte->name, f->name) == 0) {
            PlCte *saved = b->ctes;
            b->ctes = c->next; /* a CTE sees only the ones before it */
            PlNode *n = bind_query(b, c->cte->select);
            b->ctes = saved;
            if (n != NULL && c->cte->col_names != NULL && c->cte->col_names->n > n->n_cols) {
                cm_err_set(b->err, CM_BIND, c->cte->src_off,
                           "'%s' names %d columns but its query has %d", c->cte->name,
                           c->cte->col_names->n, n->n_cols);
                return NULL;
            }
            if (n != NULL && c->cte->col_names != NULL) {
                for (int i = 0; i < c->cte->col_names->n && i < n->n_cols; i++) {
                    n->names[i] = c->cte->col_names->items[i];
                }
            }
            return n;
        }
    }
    StEntry *e = st_catalog_find(b->cat, f->name);
    if (e == NULL && !is_qualified) {
        e = pl_cache_view(b->cache, f->name); /* temporary views are in no schema */
    }
    if (e == NULL && pl_system_table_exists(f->name)) {
        return bind_system(b, f->name, f->src_off);
    }
    if (e == NULL || e->kind == ST_ENTRY_INDEX) {
        cm_err_set(b->err, CM_BIND, f->src_off, "unknown table '%s'", f->name);
        return NULL;
    }
    return e->kind == ST_ENTRY_TABLE ? pl_bind_scan(b, e->table) : bind_view(b, e, f->src_off);
}

/* One argument of a table function: an integer constant, folded now (the
 * series' length is known before the plan is cut into stages).  False with
 * b->err set when it is not one. */
static bool series_arg(PlBinder *b, const PsFrom *f, const PsExpr *ast, int idx, CmValue *out)
{
    PlScope none = {0};
    ExExpr *e = pl_has_subquery(ast) ? NULL : pl_bind_scalar(b, &none, ast, f->name);
    if (b->err->code != CM_OK) {
        return false;
    }
    if (e == NULL || !ex_expr_is_constant(e)) {
        cm_err_set(b->err, CM_BIND, ast->src_off, "the arguments of %s must be constants", f->name);
        return false;
    }
    bool is_time = e->type.id == CM_T_TIMESTAMP || e->type.id == CM_T_DATE;
    if (e->type.id != CM_T_NULL && !cm_type_is_integer(e->type) &&
        !(is_time && idx < 2 && f->args->n == 3) && !(e->type.id == CM_T_INTERVAL && idx == 2)) {
        char buf[64];
        cm_err_set(b->err, CM_TYPE, ast->src_off, "argument %d of %s must be an integer, not %s",
                   idx + 1, f->name, cm_type_name(e->type, buf, sizeof buf));
        return false;
    }
    if (e->type.id == CM_T_DATE) {
        e = pl_cast(b, e, cm_type_make(CM_T_TIMESTAMP), ast->src_off); /* as DuckDB */
    }
    return e != NULL && ex_expr_eval_const(e, b->arena, out, b->err) == CM_OK;
}

/* The table functions generate_series(start, stop[, step]) (stop included)
 * and range(start, stop[, step]) (stop excluded), with start 0 when only stop
 * is given, as DuckDB has them.  A NULL argument gives no rows (DuckDB). */
/* FROM unnest(list): one row per element, in one column named unnest.  The
 * list sees no columns (no LATERAL): one row of it, then UNNEST. */
static PlNode *bind_unnest_from(PlBinder *b, const PsFrom *f)
{
    if (f->args == NULL || f->args->n != 1) {
        cm_err_set(b->err, CM_BIND, f->src_off, "unnest takes exactly one argument");
        return NULL;
    }
    PlScope none = {0};
    const PsExpr *ast = f->args->items[0];
    ExExpr *e = pl_has_subquery(ast) ? NULL : pl_bind_scalar(b, &none, ast, "unnest");
    if (b->err->code != CM_OK) {
        return NULL;
    }
    if (e == NULL) {
        cm_err_set(b->err, CM_BIND, ast->src_off, "the argument of unnest cannot be a subquery");
        return NULL;
    }
    if (e->type.id == CM_T_NULL) {
        e = pl_cast(b, e, cm_type_list(cm_type_make(CM_T_INT32)), ast->src_off);
    } else if (e->type.id != CM_T_LIST) {
        char tn[32];
        cm_err_set(b->err, CM_TYPE, ast->src_off, "unnest needs a list, not %s",
                   cm_type_name(e->type, tn, sizeof tn));
        return NULL;
    }
    PlNode *v = e ? pl_node_new(b->arena, PL_VALUES, 1) : NULL;
    PlNode *u = v ? pl_node_new(b->arena, PL_UNNEST, 1) : NULL;
    ExExpr **row = u ? cm_arena_alloc(b->arena, sizeof(ExExpr *)) : NULL;
    if (row == NULL) {
        return e ? oom(b) : NULL;
    }
    row[0] = e;
    v->types[0] = e->type;
    v->names[0] = "unnest";
    v->n_rows = 1;
    v->exprs = row;
    u->types[0] = cm_type_elem(e->type);
    u->names[0] = "unnest";
    u->child = v;
    u->unnest_col = 0;
    return u;
}

/* generate_series/range(start, stop, step) over TIMESTAMPs (or DATEs, read
 * as TIMESTAMPs) by an INTERVAL, as DuckDB: a step without months is a fixed
 * number of microseconds; one with months is added row by row. */
static PlNode *bind_time_series(PlBinder *b, const PsFrom *f, const CmValue *v, bool inclusive)
{
    for (int i = 0; i < 3; i++) {
        CmTypeId want = i < 2 ? CM_T_TIMESTAMP : CM_T_INTERVAL;
        if (v[i].type.id != want && v[i].type.id != CM_T_NULL) {
            char buf[32];
            cm_err_set(b->err, CM_TYPE, ((const PsExpr *)f->args->items[i])->src_off,
                       "argument %d of %s must be %s, not %s", i + 1, f->name,
                       i < 2 ? "a TIMESTAMP" : "an INTERVAL",
                       cm_type_name(v[i].type, buf, sizeof buf));
            return NULL;
        }
    }
    PlNode *n = pl_node_new(b->arena, PL_SERIES, 1);
    if (n == NULL) {
        return oom(b);
    }
    n->types[0] = n->series_type = cm_type_make(CM_T_TIMESTAMP);
    n->names[0] = f->name;
    if (v[0].is_null || v[1].is_null || v[2].is_null) {
        return n; /* no rows, as DuckDB */
    }
    const CmInterval *iv = &v[2].iv;
    bool pos = iv->months >= 0 && iv->days >= 0 && iv->micros >= 0;
    bool neg = iv->months <= 0 && iv->days <= 0 && iv->micros <= 0;
    int64_t off = ((const PsExpr *)f->args->items[2])->src_off;
    if (pos && neg) {
        cm_err_set(b->err, CM_RUNTIME, off, "the step of %s cannot be 0", f->name);
        return NULL;
    }
    if (!pos && !neg) {
        cm_err_set(b->err, CM_RUNTIME, off,
                   "the step of %s must not mix positive and negative parts", f->name);
        return NULL;
    }
    n->series_start = v[0].i;
    if (iv->months == 0) {
        if (!cm_ts_make(iv->days, iv->micros, &n->series_step)) {
            cm_err_set(b->err, CM_RUNTIME, off, "the step of %s is out of range", f->name);
            return NULL;
        }
        n->series_rows = ex_series_count(v[0].i, v[1].i, n->series_step, inclusive);
        return n;
    }
    n->series_is_cal = true;
    n->series_cal = *iv;
    /* a month step covers the TIMESTAMP range in under 10^7 rows */
    if (!ex_series_count_cal(v[0].i, v[1].i, iv, inclusive, UINT64_C(100000000), &n->series_rows)) {
        cm_err_set(b->err, CM_LIMIT, off, "%s has too many rows", f->name);
        return NULL;
    }
    return n;
}

static PlNode *bind_table_function(PlBinder *b, const PsFrom *f)
{
    if (pl_func_find(f->name, PL_FUNC_TABLE) == NULL) {
        cm_err_set(b->err, CM_BIND, f->src_off, "unknown table function '%s'", f->name);
        return NULL;
    }
    if (strcmp(f->name, "unnest") == 0) {
        return bind_unnest_from(b, f);
    }
    if (pl_system_table_exists(f->name)) {
        /* sluice_settings() is sluice_settings, whatever tables the catalog holds */
        if (f->args != NULL && f->args->n > 0) {
            cm_err_set(b->err, CM_BIND, f->src_off, "%s takes no arguments", f->name);
            return NULL;
        }
        return bind_system(b, f->name, f->src_off);
    }
    if (strcmp(f->name, "read_csv") == 0 || strcmp(f->name, "read_csv_auto") == 0) {
        return pl_bind_read_csv(b, f);
    }
    bool inclusive = strcmp(f->name, "generate_series") == 0;
    if (!inclusive && strcmp(f->name, "range") != 0) {
        cm_err_set(b->err, CM_BIND, f->src_off, "unknown table function '%s'", f->name);
        return NULL;
    }
    int n_args = f->args != NULL ? f->args->n : 0;
    if (n_args < 1 || n_args > 3) {
        cm_err_set(b->err, CM_BIND, f->src_off, "%s takes 1 to 3 arguments, not %d", f->name,
                   n_args);
        return NULL;
    }
    int64_t arg[3] = {0, 0, 1}; /* start, stop, step */
    bool has_null = false;
    CmValue v[3];
    for (int i = 0; i < n_args; i++) {
        if (!series_arg(b, f, f->args->items[i], i, &v[i])) {
            return NULL;
        }
        has_null |= v[i].is_null;
        arg[n_args == 1 ? 1 : i] = v[i].i;
    }
    if (n_args == 3 && (v[0].type.id == CM_T_TIMESTAMP || v[1].type.id == CM_T_TIMESTAMP ||
                        v[2].type.id == CM_T_INTERVAL)) {
        return bind_time_series(b, f, v, inclusive);
    }
    if (!has_null && arg[2] == 0) {
        const PsExpr *step = f->args->items[2];
        cm_err_set(b->err, CM_RUNTIME, step->src_off, "the step of %s cannot be 0", f->name);
        return NULL;
    }
    PlNode *n = pl_node_new(b->arena, PL_SERIES, 1);
    if (n == NULL) {
        return oom(b);
    }
    n->types[0] = n->series_type = cm_type_make(CM_T_INT64);
    n->names[0] = f->name;
    n->series_start = arg[0];
    n->series_step = arg[2];
    n->series_rows = has_null ? 0 : ex_series_count(arg[0], arg[1], arg[2], inclusive);
    return n;
}

bool pl_trial_oom(PlBinder *b, const CmErr *trial)
{
    if (trial->code != CM_OOM) {
        return false;
    }
    cm_err_set(b->err, CM_OOM, trial->off, "%s", trial->msg);
    return true;
}

PlNode *pl_bind_from_item(PlBinder *b, const PsFrom *f, PlScope *sc)
{
    /* A derived table cannot see the columns of an enclosing query (no LATERAL). */
    PlOuter *outer = b->outer;
    b->outer = NULL;
    PlNode *n = from_item(b, f, sc);
    b->outer = outer;
    return n;
}

static PlNode *from_item(PlBinder *b, const PsFrom *f, PlScope *sc)
{
    if (++b->depth > PL_MAX_DEPTH) {
        cm_err_set(b->err, CM_LIMIT, f->src_off, "views and subqueries nest too deeply");
        return NULL;
    }
    PlNode *n = NULL;
    const char *table = f->alias;
    switch (f->kind) {
    case PS_FROM_TABLE:
        n = bind_named(b, f);
        table = f->alias ? f->alias : f->name;
        break;
    case PS_FROM_SUBQUERY:
        n = bind_query(b, f->subquery);
        break;
    case PS_FROM_FUNCTION:
        n = bind_table_function(b, f);
        table = f->alias ? f->alias : f->name;
        break;
    case PS_FROM_JOIN:
        b->depth--;
        return pl_bind_from_where(b, f, NULL, sc);
    }
    b->depth--;
    if (n != NULL && f->col_aliases != NULL && f->col_aliases->n > n->n_cols) {
        cm_err_set(b->err, CM_BIND, f->src_off, "'%s' has %d columns but %d column names are given",
                   table ? table : "subquery", n->n_cols, f->col_aliases->n);
        return NULL;
    }
    if (n != NULL && f->one_column && n->n_cols != 1) {
        cm_err_set(b->err, CM_BIND, f->src_off, "subquery has too many columns");
        return NULL;
    }
    if (n == NULL || !scope_of(b, n, table, f->col_aliases, sc)) {
        return NULL;
    }
    return n;
}

/* ---- helpers ------------------------------------------------------------------ */

PlNode *pl_bind_query(PlBinder *b, const PsSelect *sel)
{
    return bind_query(b, sel);
}

PlNode *pl_project(PlBinder *b, PlNode *child, int n, ExExpr **exprs, const char **names)
{
    PlNode *p = pl_node_new(b->arena, PL_PROJECT, n);
    if (p == NULL) {
        return oom(b);
    }
    p->child = child;
    p->exprs = exprs;
    for (int i = 0; i < n; i++) {
        p->types[i] = exprs[i]->type;
        p->names[i] = names[i];
    }
    return p;
}

PlNode *pl_filter(PlBinder *b, PlNode *child, ExExpr *pred, int64_t off)
{
    pred = pl_cast(b, pred, cm_type_make(CM_T_BOOL), off);
    if (pred == NULL) {
        return NULL;
    }
    PlNode *f = pl_node_new(b->arena, PL_FILTER, child->n_cols);
    if (f == NULL) {
        return oom(b);
    }
    f->child = child;
    f->pred = pred;
    memcpy(f->types, child->types, sizeof(CmType) * (size_t)child->n_cols);
    memcpy(f->names, child->names, sizeof(char *) * (size_t)child->n_cols);
    return f;
}

static bool eval_count(PlBinder *b, const PsExpr *ast, const char *what, int64_t *out)
{
    PlScope none = {0};
    ExExpr *e = pl_bind_scalar(b, &none, ast, what);
    if (e == NULL) {
        return false;
    }
    e = pl_cast(b, e, cm_type_make(CM_T_INT64), ast->src_off);
    CmValue v;
    if (e == NULL || ex_expr_eval_const(e, b->arena, &v, b->err) != CM_OK) {
        return false;
    }
    if (v.is_null || v.i < 0) {
        cm_err_set(b->err, CM_BIND, ast->src_off, "%s must be a non-negative integer", what);
        return false;
    }
    *out = v.i;
    return true;
}

/* ---- the select list ---------------------------------------------------------- */

typedef struct OutList {
    int n, cap;
    ExExpr **exprs;
    const char **names;
    int n_visible; /* the select list; hidden ORDER BY columns follow */
} OutList;

static bool out_add(PlBinder *b, OutList *o, ExExpr *e, const char *name)
{
    if (o->n == o->cap) {
        int cap = o->cap ? o->cap * 2 : 16;
        ExExpr **ex = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)cap);
        const char **nm = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)cap);
        if (ex == NULL || nm == NULL) {
            oom(b);
            return false;
        }
        if (o->n > 0) {
            memcpy(ex, o->exprs, sizeof(ExExpr *) * (size_t)o->n);
            memcpy(nm, o->names, sizeof(char *) * (size_t)o->n);
        }
        o->exprs = ex;
        o->names = nm;
        o->cap = cap;
    }
    o->exprs[o->n] = e;
    o->names[o->n] = name;
    o->n++;
    return true;
}

/* The index in `list` of the modifier naming column `name` (PsExpr* columns for
 * EXCLUDE, PsTarget* for REPLACE), or -1. */
static int star_mod(const PsList *list, bool is_replace, const char *name)
{
    for (int i = 0; list != NULL && i < list->n; i++) {
        const char *n = is_replace ? ((const PsTarget *)list->items[i])->alias
                                   : ((const PsExpr *)list->items[i])->name;
        if (strcmp(n, name) == 0) {
            return i;
        }
    }
    return -1;
}

/* A column of '*' in an aggregate query, bound as if written there by name
 * (qualified by its table): a group key's value, or the GROUP BY error at the
 * '*'.  So `SELECT * FROM t GROUP BY <every column>` works, as the standard
 * allows through functional dependency. */
static ExExpr *star_grouped_column(PlBindCtx *ctx, const PsExpr *star, const PlScopeCol *c)
{
    PsExpr *col = cm_arena_zalloc(ctx->b->arena, sizeof *col);
    if (col == NULL) {
        return oom(ctx->b);
    }
    col->kind = PS_EX_COLUMN;
    col->name = c->name;
    col->qualifier = c->table;
    col->src_off = star->src_off;
    col->src_len = star->src_len;
    return pl_bind_expr(ctx, col);
}

static bool expand_star(PlBindCtx *ctx, const PsTarget *t, OutList *o)
{
    PlBinder *b = ctx->b;
    const PsExpr *star = t->expr;
    int n_ex = t->exclude ? t->exclude->n : 0, n_re = t->replace ? t->replace->n : 0;
    bool *used = cm_arena_zalloc(b->arena, (size_t)(n_ex + n_re + 1));
    if (used == NULL) {
        return oom(b) != NULL;
    }
    if (pl_check_schema(&star->schema, b->err) != CM_OK) {
        return false;
    }
    int added = 0;
    for (int i = 0; i < ctx->scope->n; i++) {
        const PlScopeCol *c = &ctx->scope->cols[i];
        if (c->hidden && star->qualifier == NULL) {
            continue;
        }
        if (star->qualifier && (c->table == NULL || strcmp(c->table, star->qualifier) != 0)) {
            continue;
        }
        added++;
        int ex = star_mod(t->exclude, false, c->name), re = star_mod(t->replace, true, c->name);
        if (ex >= 0) {
            used[ex] = true;
            continue;
        }
        ExExpr *e;
        if (re >= 0) {
            used[n_ex + re] = true;
            if ((e = pl_bind_expr(ctx, ((const PsTarget *)t->replace->items[re])->expr)) == NULL) {
                return false;
            }
        } else if (ctx->agg != NULL) {
            if ((e = star_grouped_column(ctx, star, c)) == NULL) {
                return false;
            }
        } else if ((e = ex_expr_column(b->arena, i, c->type)) == NULL) {
            return oom(b) != NULL;
        }
        if (!out_add(b, o, e, c->name)) {
            return false;
        }
    }
    if (added == 0 && star->qualifier != NULL) {
        cm_err_set(b->err, CM_BIND, star->src_off, "unknown table '%s'", star->qualifier);
        return false;
    }
    for (int k = 0; k < n_ex + n_re; k++) {
        if (!used[k]) {
            const PsExpr *x = k < n_ex ? t->exclude->items[k] : NULL;
            const PsTarget *r = k < n_ex ? NULL : t->replace->items[k - n_ex];
            cm_err_set(b->err, CM_BIND, x ? x->src_off : r->src_off,
                       "column '%s' in %s is not among the columns of '*'", x ? x->name : r->alias,
                       x ? "EXCLUDE" : "REPLACE");
            return false;
        }
    }
    return true;
}

static bool bind_targets(PlBindCtx *ctx, const PsSelect *sel, OutList *o)
{
    for (int i = 0; i < sel->targets->n; i++) {
        const PsTarget *t = sel->targets->items[i];
        if (t->expr->kind == PS_EX_STAR) {
            if (!expand_star(ctx, t, o)) {
                return false;
            }
            continue;
        }
        ExExpr *e = pl_bind_expr(ctx, t->expr);
        if (e == NULL) {
            return false;
        }
        const char *name = t->alias ? t->alias
                           : t->expr->kind == PS_EX_COLUMN
                               ? t->expr->name
                               : pl_source_text(ctx->b, t->expr->src_off, t->expr->src_len);
        if (!out_add(ctx->b, o, e, name)) {
            return false;
        }
    }
    o->n_visible = o->n;
    return true;
}

/* ---- aggregation ---------------------------------------------------------------- */

/* GROUP BY items may name a select-list ordinal or alias, as in PostgreSQL. */
static const PsExpr *group_item(const PsSelect *sel, const PsExpr *g, const PlScope *sc)
{
    if (g->kind == PS_EX_INT && (g->ival < 1 || g->ival > sel->targets->n)) {
        return NULL; /* an ordinal past the select list */
    }
    if (g->kind == PS_EX_INT && g->ival >= 1 && g->ival <= sel->targets->n) {
        const PsTarget *t = sel->targets->items[g->ival - 1];
        return t->expr->kind == PS_EX_STAR ? g : t->expr;
    }
    if (g->kind == PS_EX_COLUMN && g->qualifier == NULL) {
        for (int i = 0; i < sc->n; i++) {
            if (strcmp(sc->cols[i].name, g->name) == 0) {
                return g;
            }
        }
        for (int i = 0; i < sel->targets->n; i++) {
            const PsTarget *t = sel->targets->items[i];
            if (t->alias && strcmp(t->alias, g->name) == 0) {
                return t->expr;
            }
        }
    }
    return g;
}

/* Index of `e` among the keys, adding it when new; -1 on error. */
static const PsExpr *group_expr(PlBinder *b, const PsSelect *sel, const PsExpr *g,
                                const PlScope *sc)
{
    const PsExpr *e = group_item(sel, g, sc);
    if (e == NULL) {
        cm_err_set(b->err, CM_BIND, g->src_off, "GROUP BY position %lld is not in the select list",
                   (long long)g->ival);
    }
    return e;
}

static int key_index(PlBinder *b, PlAggCtx *agg, const PsSelect *sel, const PsExpr *g,
                     const PlScope *sc)
{
    g = group_expr(b, sel, g, sc);
    if (g == NULL) {
        return -1;
    }
    if (pl_has_aggregate(g)) {
        cm_err_set(b->err, CM_BIND, g->src_off, "aggregate functions are not allowed in GROUP BY");
        return -1;
    }
    ExExpr *e = pl_bind_scalar(b, sc, g, "GROUP BY");
    if (e == NULL) {
        return -1;
    }
    for (int k = 0; k < agg->n_keys; k++) {
        if (pl_expr_equal(agg->keys[k], e)) {
            return k;
        }
    }
    if (agg->n_keys >= 63) {
        cm_err_set(b->err, CM_LIMIT, g->src_off, "too many GROUP BY keys");
        return -1;
    }
    agg->keys[agg->n_keys] = e;
    return agg->n_keys++;
}

static bool add_set(PlBinder *b, PlAggCtx *agg, uint64_t mask, int64_t off)
{
    if (agg->n_sets == 4096) {
        cm_err_set(b->err, CM_LIMIT, off, "too many grouping sets");
        return false;
    }
    agg->set_masks[agg->n_sets++] = mask;
    return true;
}

/* ROLLUP (a, b) = (a, b), (a), (); CUBE (a, b) = every subset; GROUPING SETS
 * as written.  The set number becomes one more group key, so that a NULL made
 * by rolling up never merges with a NULL in the data. */
static bool bind_grouping_sets(PlBinder *b, const PsSelect *sel, const PlScope *sc, PlAggCtx *agg)
{
    const PsList *g = sel->group_by;
    agg->set_masks = cm_arena_alloc(b->arena, sizeof(uint64_t) * 4096);
    if (agg->set_masks == NULL) {
        return oom(b) != NULL;
    }
    int n = g ? g->n : 0;
    if (sel->group_kind == PS_GROUP_SETS) {
        for (int i = 0; i < n; i++) {
            const PsList *set = g->items[i];
            uint64_t mask = 0;
            for (int j = 0; set != NULL && j < set->n; j++) {
                int k = key_index(b, agg, sel, set->items[j], sc);
                if (k < 0) {
                    return false;
                }
                mask |= (uint64_t)1 << k;
            }
            if (!add_set(b, agg, mask, sel->src_off)) {
                return false;
            }
        }
    } else {
        for (int i = 0; i < n; i++) {
            if (key_index(b, agg, sel, g->items[i], sc) != i) {
                cm_err_set(b->err, CM_BIND, ((PsExpr *)g->items[i])->src_off,
                           "a key appears twice in ROLLUP or CUBE");
                return false;
            }
        }
        if (sel->group_kind == PS_GROUP_CUBE && n > 12) {
            cm_err_set(b->err, CM_LIMIT, sel->src_off, "CUBE of more than 12 keys");
            return false;
        }
        int n_sets = sel->group_kind == PS_GROUP_ROLLUP ? n + 1 : 1 << n;
        for (int i = 0; i < n_sets; i++) {
            uint64_t mask = sel->group_kind == PS_GROUP_ROLLUP ? (((uint64_t)1 << (n - i)) - 1)
                                                               : (uint64_t)(((1 << n) - 1) & ~i);
            if (!add_set(b, agg, mask, sel->src_off)) {
                return false;
            }
        }
    }
    agg->n_set_keys = agg->n_keys;
    agg->gid_key = agg->n_keys;
    CmValue zero = {.type = cm_type_make(CM_T_INT64), .i = 0};
    agg->keys[agg->n_keys] = ex_expr_const(b->arena, &zero);
    if (agg->keys[agg->n_keys] == NULL) {
        return oom(b) != NULL;
    }
    agg->n_keys++;
    return true;
}

static bool bind_group_keys(PlBinder *b, const PsSelect *sel, const PlScope *sc, PlAggCtx *agg)
{
    int n = sel->group_by ? sel->group_by->n : 0;
    agg->gid_key = -1;
    agg->keys = cm_arena_alloc(b->arena, sizeof(ExExpr *) * PL_MAX_KEYS);
    if (agg->keys == NULL) {
        oom(b);
        return false;
    }
    if (sel->group_kind != PS_GROUP_PLAIN) {
        return bind_grouping_sets(b, sel, sc, agg);
    }
    if (n > PL_MAX_KEYS - 64) {
        cm_err_set(b->err, CM_LIMIT, sel->src_off, "too many GROUP BY keys");
        return false;
    }
    for (int i = 0; i < n; i++) {
        const PsExpr *g = group_expr(b, sel, sel->group_by->items[i], sc);
        if (g == NULL) {
            return false;
        }
        if (pl_has_aggregate(g)) {
            cm_err_set(b->err, CM_BIND, g->src_off,
                       "aggregate functions are not allowed in GROUP BY");
            return false;
        }
        ExExpr *e = pl_bind_scalar(b, sc, g, "GROUP BY");
        if (e == NULL) {
            return false;
        }
        agg->keys[agg->n_keys++] = e;
    }
    return true;
}

const char *pl_expr_name(PlBinder *b, const ExExpr *e, const PlNode *input, const char *fallback)
{
    if (e->kind == EX_E_COLUMN && input->names[e->col] != NULL) {
        return input->names[e->col];
    }
    char text[256];
    ex_expr_to_string(e, input->names, text, sizeof text);
    const char *name = cm_arena_strdup(b->arena, text);
    return name != NULL ? name : fallback;
}

/* An aggregate's name for EXPLAIN: sum(ss_net_paid), count_star(),
 * count(DISTINCT x) (in the arena; "agg" on OOM). */
static const char *agg_name(PlBinder *b, const PlAggCtx *agg, int a, const PlNode *input)
{
    const ExAggSpec *g = &agg->aggs[a];
    const char *arg = agg->agg_args[a] != NULL ? pl_expr_name(b, agg->agg_args[a], input, "") : "";
    const char *name = cm_arena_printf(b->arena, "%s(%s%s)", ex_agg_fn_name(g->fn),
                                       g->distinct ? "DISTINCT " : "", arg);
    return name != NULL ? name : "agg";
}

/* PROJECT(keys, aggregate arguments) -> AGGREGATE over it. */
static PlNode *build_aggregate_one(PlBinder *b, PlNode *input, PlAggCtx *agg)
{
    int n_pre = agg->n_keys;
    for (int a = 0; a < agg->n_aggs; a++) {
        n_pre += (agg->agg_args[a] != NULL) + (agg->agg_by[a] != NULL) + agg->aggs[a].n_order;
    }
    ExExpr **pre = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n_pre + 1));
    const char **pre_names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(n_pre + 1));
    PlNode *node = pl_node_new(b->arena, PL_AGGREGATE, agg->n_keys + agg->n_aggs);
    if (pre == NULL || pre_names == NULL || node == NULL) {
        return oom(b);
    }
    int at = 0;
    for (int k = 0; k < agg->n_keys; k++) {
        pre[at] = agg->keys[k];
        pre_names[at++] = pl_expr_name(b, agg->keys[k], input, "key");
        node->types[k] = agg->keys[k]->type;
        node->names[k] = pre_names[at - 1];
    }
    node->aggs = cm_arena_alloc(b->arena, sizeof(ExAggSpec) * (size_t)(agg->n_aggs + 1));
    if (node->aggs == NULL) {
        return oom(b);
    }
    for (int a = 0; a < agg->n_aggs; a++) {
        node->aggs[a] = agg->aggs[a];
        if (agg->agg_args[a] != NULL) {
            node->aggs[a].arg = at;
            pre[at] = agg->agg_args[a];
            pre_names[at++] = pl_expr_name(b, agg->agg_args[a], input, "arg");
        }
        if (agg->agg_by[a] != NULL) {
            pre[at] = agg->agg_by[a];
            pre_names[at++] = pl_expr_name(b, agg->agg_by[a], input, "arg");
        }
        if (agg->aggs[a].n_order > 0) {
            /* ORDER BY inside the call: its keys become input columns too. */
            ExSortKey *order =
                cm_arena_alloc(b->arena, sizeof(ExSortKey) * (size_t)agg->aggs[a].n_order);
            if (order == NULL) {
                return oom(b);
            }
            for (int k = 0; k < agg->aggs[a].n_order; k++) {
                order[k] = agg->aggs[a].order[k];
                order[k].col = at;
                pre[at] = agg->agg_order[a][k];
                pre_names[at++] = pl_expr_name(b, agg->agg_order[a][k], input, "order");
            }
            node->aggs[a].order = order;
        }
        node->types[agg->n_keys + a] = agg->aggs[a].type;
        node->names[agg->n_keys + a] = agg_name(b, agg, a, input);
    }
    node->n_keys = agg->n_keys;
    node->n_aggs = agg->n_aggs;
    node->child = pl_project(b, input, n_pre, pre, pre_names);
    if (node->child != NULL && agg->n_sets > 0) {
        PlNode *x = pl_node_new(b->arena, PL_EXPAND, n_pre);
        if (x == NULL) {
            return oom(b);
        }
        memcpy(x->types, node->child->types, sizeof(CmType) * (size_t)n_pre);
        memcpy(x->names, node->child->names, sizeof(char *) * (size_t)n_pre);
        x->child = node->child;
        x->n_sets = agg->n_sets;
        x->set_masks = agg->set_masks;
        x->n_set_keys = agg->n_set_keys;
        x->gid_col = agg->gid_key;
        node->child = x;
        for (int set = 0; set < agg->n_sets; set++) {
            if (agg->set_masks[set] == 0) {
                node->empty_set_key = agg->gid_key;
                node->empty_set_id = set;
            }
        }
    }
    return node->child ? node : NULL;
}

/* l joined with r, which has one row: l's columns then r's first n_right
 * (an inner join without keys, so an l row meets r's one row). */
static PlNode *join_one_row(PlBinder *b, PlNode *l, PlNode *r, int n_right)
{
    PlNode *j = pl_node_new(b->arena, PL_JOIN, l->n_cols + n_right);
    if (j == NULL) {
        return oom(b);
    }
    memcpy(j->types, l->types, sizeof(CmType) * (size_t)l->n_cols);
    memcpy(j->names, l->names, sizeof(char *) * (size_t)l->n_cols);
    memcpy(j->types + l->n_cols, r->types, sizeof(CmType) * (size_t)n_right);
    memcpy(j->names + l->n_cols, r->names, sizeof(char *) * (size_t)n_right);
    j->child = l;
    j->right = r;
    j->join_type = EX_JOIN_INNER;
    return j;
}

/* Whether aggregate a keeps its values whole or reads two columns: holistic,
 * ordered inside the call, or arg_min/arg_max. */
static bool agg_keeps_values(const PlAggCtx *agg, int a)
{
    const ExAggSpec *g = &agg->aggs[a];
    return ex_agg_is_holistic(g->fn) || g->n_order > 0 || agg->agg_by[a] != NULL;
}

/*
 * Which part of a split aggregate each aggregate goes to; returns how many
 * parts, 1 when the aggregate stays whole.  An aggregate without GROUP BY
 * spills as a whole when it has no DISTINCT (a sorter per holistic aggregate),
 * when its DISTINCT ones stand beside plain ones only (Spark's Expand), or
 * when all are DISTINCT over one argument (a grouping of it first; all in
 * planner/physical.c).  A mix beyond that, DISTINCT beside a holistic, ordered
 * or two-column aggregate (count(DISTINCT a), median(b)), would keep its
 * distinct sets in the one group, which does not spill.  Split into parts that
 * each are one of those shapes, it does: part 0 the aggregates without
 * DISTINCT, part 1 the DISTINCT ones that are neither holistic nor ordered, and
 * one part per argument for the DISTINCT holistic ones.
 */
static int split_parts(const PlAggCtx *agg, int *part)
{
    if (agg->n_keys != 0 || agg->n_sets > 0 || agg->n_aggs < 2) {
        return 1;
    }
    bool has_distinct = false, has_other = false;
    for (int a = 0; a < agg->n_aggs; a++) {
        const ExAggSpec *g = &agg->aggs[a];
        if (g->fn == EX_AGG_SCALAR || g->fn == EX_AGG_SUM_COUNT) {
            return 1;
        }
        has_distinct |= g->distinct;
        has_other |= agg_keeps_values(agg, a);
    }
    if (!has_distinct || !has_other) {
        return 1;
    }
    int first_of[PL_MAX_AGGS]; /* per part from 2: the first aggregate in it */
    int n_parts = 2;
    bool used[2] = {false, false};
    /* the holistic DISTINCT ones first, a part per argument; then a plain DISTINCT
     * one over the same argument joins that part (one grouping of it serves both) */
    for (int pass = 0; pass < 2; pass++) {
        for (int a = 0; a < agg->n_aggs; a++) {
            const ExAggSpec *g = &agg->aggs[a];
            if ((g->distinct && agg_keeps_values(agg, a)) != (pass == 0)) {
                continue;
            }
            part[a] = -1;
            for (int p = 2; p < n_parts && part[a] < 0 && g->distinct && g->n_order == 0; p++) {
                const ExExpr *x = agg->agg_args[first_of[p]];
                part[a] =
                    x != NULL && agg->agg_args[a] != NULL && pl_expr_equal(x, agg->agg_args[a])
                        ? p
                        : -1;
            }
            if (part[a] >= 0) {
                continue;
            }
            if (pass == 1) {
                part[a] = g->distinct ? 1 : 0;
                used[part[a]] = true;
                continue;
            }
            first_of[n_parts] = a;
            part[a] = n_parts++;
        }
    }
    /* number the parts in use from 0 */
    int shift = !used[0] + !used[1];
    for (int a = 0; a < agg->n_aggs; a++) {
        part[a] = part[a] >= 2 ? part[a] - shift : part[a] == 1 ? 1 - !used[0] : 0;
    }
    return n_parts - shift;
}

/* The aggregates over `input`, each part of split_parts its own aggregate
 * over a copy of it, joined (each is one row) and put back in their order.
 * The copies are the same subtree, so the cost rule (planner/cache.c) may
 * compute it once. */
static PlNode *build_aggregate(PlBinder *b, PlNode *input, PlAggCtx *agg)
{
    int part[PL_MAX_AGGS], col[PL_MAX_AGGS];
    int n_parts = split_parts(agg, part);
    if (n_parts < 2) {
        return build_aggregate_one(b, input, agg);
    }
    PlAggCtx *sub = cm_arena_alloc(b->arena, sizeof *sub);
    ExExpr **cols = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)agg->n_aggs);
    const char **names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)agg->n_aggs);
    if (sub == NULL || cols == NULL || names == NULL) {
        return oom(b);
    }
    PlNode *top = NULL;
    for (int p = 0; p < n_parts; p++) {
        *sub = *agg;
        sub->n_aggs = 0;
        for (int a = 0; a < agg->n_aggs; a++) {
            if (part[a] == p) {
                col[a] = (top != NULL ? top->n_cols : 0) + sub->n_aggs;
                sub->aggs[sub->n_aggs] = agg->aggs[a];
                sub->agg_args[sub->n_aggs] = agg->agg_args[a];
                sub->agg_by[sub->n_aggs] = agg->agg_by[a];
                sub->agg_order[sub->n_aggs++] = agg->agg_order[a];
            }
        }
        PlNode *in = p == 0 ? input : pl_node_clone(b->arena, input);
        PlNode *node = in != NULL ? build_aggregate_one(b, in, sub) : oom(b);
        if (node == NULL) {
            return NULL;
        }
        top = top == NULL ? node : join_one_row(b, top, node, node->n_cols);
        if (top == NULL) {
            return NULL;
        }
    }
    for (int a = 0; a < agg->n_aggs; a++) {
        if ((cols[a] = ex_expr_column(b->arena, col[a], top->types[col[a]])) == NULL) {
            return oom(b);
        }
        names[a] = top->names[col[a]];
    }
    return pl_project(b, top, agg->n_aggs, cols, names);
}

/* The scan whose column `col` of n is, through filters, column projections and
 * joins (an inner, left or full join's columns are each one side's; a semi,
 * anti or mark join's past its probe side are not a scan's), and that table's
 * column in *tcol; NULL when it is computed. */
static const PlNode *scan_of(const PlNode *n, int col, int *tcol)
{
    for (;;) {
        switch (n->kind) {
        case PL_GET: /* a row address (ST_ROW_ADDR) is no column of the table */
            *tcol = n->col_ids[col];
            return n->table != NULL && *tcol < n->table->n_cols ? n : NULL;
        case PL_FILTER:
            n = n->child;
            break;
        case PL_PROJECT:
            if (n->exprs[col]->kind != EX_E_COLUMN) {
                return NULL;
            }
            col = n->exprs[col]->col;
            n = n->child;
            break;
        case PL_JOIN:
            if (col < n->child->n_cols) {
                n = n->child;
            } else if (n->join_type == EX_JOIN_INNER || n->join_type == EX_JOIN_LEFT ||
                       n->join_type == EX_JOIN_FULL) { /* the build side's columns follow */
                col -= n->child->n_cols;
                n = n->right;
            } else {
                return NULL;
            }
            break;
        default:
            return NULL;
        }
    }
}

/* build_aggregate with the keys a key of one table's row determines taken out
 * of the grouping: GROUP BY c_custkey, c_name, c_address, c_comment (TPC-H
 * q10) hashes, compares and exchanges c_custkey alone when it is customer's
 * PRIMARY KEY, and carries the other columns of that row as first() of each
 * group, where every row has the same value (NULL-extended rows of an outer
 * join have NULL in all of them).  The output is the same: the keys, then the
 * aggregates.  Only for plain GROUP BY over columns read from the same scan
 * of a table whose every PRIMARY KEY column is a key. */
static PlNode *build_aggregate_fd(PlBinder *b, PlNode *input, PlAggCtx *agg)
{
    int n = agg->n_keys, tcol[PL_MAX_KEYS];
    const PlNode *get[PL_MAX_KEYS];
    bool dep[PL_MAX_KEYS] = {false};
    int n_dep = 0;
    if (agg->n_sets > 0 || agg->empty || n < 2) {
        return build_aggregate(b, input, agg);
    }
    for (int k = 0; k < n; k++) {
        get[k] =
            agg->keys[k]->kind == EX_E_COLUMN ? scan_of(input, agg->keys[k]->col, &tcol[k]) : NULL;
    }
    for (int k = 0; k < n; k++) {
        const StTable *t = get[k] != NULL ? get[k]->table : NULL;
        if (t == NULL || t->cols[tcol[k]].primary_key) {
            continue; /* a key column itself stays a key */
        }
        int same[PL_MAX_KEYS], n_same = 0; /* the key columns read from the same scan */
        for (int m = 0; m < n; m++) {
            if (get[m] == get[k]) {
                same[n_same++] = tcol[m];
            }
        }
        if (st_table_key_within(t, same, n_same)) {
            dep[k] = true;
            n_dep++;
        }
    }
    if (n_dep == 0 || agg->n_aggs + n_dep > PL_MAX_AGGS) {
        return build_aggregate(b, input, agg);
    }
    PlAggCtx *red = cm_arena_alloc(b->arena, sizeof *red);
    ExExpr **keys = cm_arena_alloc(b->arena, sizeof(ExExpr *) * PL_MAX_KEYS);
    ExExpr **cols = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n + agg->n_aggs));
    const char **names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(n + agg->n_aggs));
    int at[PL_MAX_KEYS];
    if (red == NULL || keys == NULL || cols == NULL || names == NULL) {
        return oom(b);
    }
    *red = *agg;
    red->keys = keys;
    red->n_keys = 0;
    for (int k = 0; k < n; k++) {
        if (!dep[k]) {
            at[k] = red->n_keys;
            keys[red->n_keys++] = agg->keys[k];
            continue;
        }
        CmType type = agg->keys[k]->type;
        at[k] = -1 - red->n_aggs;
        red->aggs[red->n_aggs] =
            (ExAggSpec){.fn = EX_AGG_FIRST, .arg = -1, .arg_type = type, .type = type};
        red->agg_args[red->n_aggs] = agg->keys[k];
        red->agg_by[red->n_aggs] = NULL;
        red->agg_order[red->n_aggs++] = NULL;
    }
    PlNode *node = build_aggregate(b, input, red);
    if (node == NULL) {
        return NULL;
    }
    for (int k = 0; k < n + agg->n_aggs; k++) {
        int c = k >= n ? red->n_keys + k - n : at[k] >= 0 ? at[k] : red->n_keys - 1 - at[k];
        cols[k] = ex_expr_column(b->arena, c, node->types[c]);
        names[k] =
            k < n && at[k] < 0 ? pl_expr_name(b, agg->keys[k], input, "key") : node->names[c];
        if (cols[k] == NULL) {
            return oom(b);
        }
    }
    return pl_project(b, node, n + agg->n_aggs, cols, names);
}

/* ---- ORDER BY ------------------------------------------------------------------- */

static int find_output(const OutList *o, const PsExpr *e)
{
    if (e->kind == PS_EX_INT) {
        return e->ival >= 1 && e->ival <= o->n_visible ? (int)e->ival - 1 : -2;
    }
    if (e->kind != PS_EX_COLUMN || e->qualifier != NULL) {
        return -1;
    }
    int found = -1;
    for (int i = 0; i < o->n_visible; i++) {
        if (strcmp(o->names[i], e->name) == 0) {
            if (found >= 0) {
                return -3;
            }
            found = i;
        }
    }
    return found;
}

static bool bind_order(PlBindCtx *ctx, const PsSelect *sel, OutList *o, ExSortKey *keys)
{
    PlBinder *b = ctx->b;
    for (int i = 0; i < sel->order_by->n; i++) {
        const PsOrderItem *item = sel->order_by->items[i];
        int col = find_output(o, item->expr);
        if (col == -2) {
            cm_err_set(b->err, CM_BIND, item->expr->src_off,
                       "ORDER BY position %lld is not in the select list",
                       (long long)item->expr->ival);
            return false;
        }
        if (col == -3) {
            cm_err_set(b->err, CM_BIND, item->expr->src_off, "ORDER BY '%s' is ambiguous",
                       item->expr->name);
            return false;
        }
        if (col < 0) {
            if (sel->distinct) {
                cm_err_set(b->err, CM_BIND, item->expr->src_off,
                           "for SELECT DISTINCT, ORDER BY expressions must appear in the select "
                           "list");
                return false;
            }
            ExExpr *e = pl_bind_expr(ctx, item->expr);
            if (e == NULL) {
                return false;
            }
            col = -1;
            for (int j = 0; j < o->n; j++) {
                if (pl_expr_equal(o->exprs[j], e)) {
                    col = j;
                    break;
                }
            }
            if (col < 0) {
                col = o->n;
                if (!out_add(b, o, e, "order")) {
                    return false;
                }
            }
        }
        keys[i].col = col;
        keys[i].desc = item->desc;
        /* NULLs sort as larger than any value unless told (PostgreSQL). */
        keys[i].nulls_first = item->nulls == 0 ? item->desc : item->nulls == 1;
    }
    return true;
}

/* ---- SELECT ---------------------------------------------------------------------- */

/* DEFAULT as the c-th value of a row of the INSERT's VALUES. */
static ExExpr *insert_default(PlBinder *b, int c, const PsExpr *ast)
{
    CmValue null = {.type = cm_type_make(CM_T_NULL), .is_null = true};
    /* Past the target columns: the INSERT reports the count. */
    const CmValue *v = c < b->n_insert_defaults ? &b->insert_defaults[c] : &null;
    ExExpr *e = ex_expr_const(b->arena, v);
    if (e == NULL) {
        return oom(b);
    }
    e->src_off = ast->src_off;
    return e;
}

/* VALUES rows with a subquery: each row is a one-row query (as a SELECT
 * without FROM is) that its subqueries join onto, and the rows are their
 * UNION ALL, which keeps the rows' order.  `exprs` are the rows' bound cells,
 * over row r's input inputs[r]; `types` the columns' common types. */
static PlNode *values_as_union(PlBinder *b, const PsSelect *sel, PlNode **inputs, ExExpr **exprs,
                               const PlNode *shape)
{
    int n_rows = sel->rows->n, n_cols = shape->n_cols;
    PlNode *u = n_rows > 1 ? pl_node_new(b->arena, PL_UNION, n_cols) : NULL;
    PlNode **rows = cm_arena_alloc(b->arena, sizeof(PlNode *) * (size_t)(n_rows + 1));
    if ((n_rows > 1 && u == NULL) || rows == NULL) {
        return oom(b);
    }
    for (int r = 0; r < n_rows; r++) {
        rows[r] = pl_project(b, inputs[r], n_cols, exprs + (size_t)r * (size_t)n_cols,
                             (const char **)shape->names);
        if (rows[r] == NULL) {
            return NULL;
        }
    }
    if (n_rows == 1) {
        return rows[0];
    }
    memcpy(u->types, shape->types, sizeof(CmType) * (size_t)n_cols);
    memcpy(u->names, shape->names, sizeof(char *) * (size_t)n_cols);
    u->n_inputs = n_rows;
    u->inputs = rows;
    return u;
}

static bool values_have_subquery(const PsSelect *sel)
{
    for (int r = 0; r < sel->rows->n; r++) {
        const PsList *row = sel->rows->items[r];
        for (int c = 0; c < row->n; c++) {
            if (pl_has_subquery(row->items[c])) {
                return true;
            }
        }
    }
    return false;
}

static PlNode *bind_values(PlBinder *b, const PsSelect *sel)
{
    bool is_insert = sel == b->insert_values;
    bool is_query = values_have_subquery(sel);
    int n_rows = sel->rows->n;
    const PsList *first = sel->rows->items[0];
    int n_cols = first->n;
    PlNode *n = pl_node_new(b->arena, PL_VALUES, n_cols);
    ExExpr **exprs = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n_rows * n_cols + 1));
    PlNode **inputs =
        is_query ? cm_arena_alloc(b->arena, sizeof(PlNode *) * (size_t)(n_rows + 1)) : NULL;
    if (n == NULL || exprs == NULL || (is_query && inputs == NULL)) {
        return oom(b);
    }
    PlScope none = {0};
    for (int c = 0; c < n_cols; c++) {
        n->types[c] = cm_type_make(CM_T_NULL);
        n->names[c] = cm_arena_printf(b->arena, "col%d", c);
    }
    for (int r = 0; r < n_rows; r++) {
        const PsList *row = sel->rows->items[r];
        if (row->n != n_cols) {
            cm_err_set(b->err, CM_BIND, ((PsExpr *)row->items[0])->src_off,
                       "VALUES rows must all have %d values", n_cols);
            return NULL;
        }
        PlScope row_scope = {0};
        PlBindCtx ctx = {.b = b, .scope = &row_scope, .mscope = &row_scope, .clause = "VALUES"};
        if (is_query) {
            if ((inputs[r] = pl_node_new(b->arena, PL_VALUES, 0)) == NULL) {
                return oom(b);
            }
            inputs[r]->n_rows = 1;
            ctx.input = &inputs[r];
            ctx.base = inputs[r];
        }
        for (int c = 0; c < n_cols; c++) {
            const PsExpr *item = row->items[c];
            ExExpr *e = is_insert && item->kind == PS_EX_DEFAULT ? insert_default(b, c, item)
                        : is_query                               ? pl_bind_expr(&ctx, item)
                                   : pl_bind_scalar(b, &none, item, "VALUES");
            if (e == NULL) {
                return NULL;
            }
            if (!ex_common_type(n->types[c], e->type, &n->types[c])) {
                cm_err_set(b->err, CM_TYPE, ((PsExpr *)row->items[c])->src_off,
                           "VALUES column %d mixes incompatible types", c + 1);
                return NULL;
            }
            exprs[r * n_cols + c] = e;
        }
    }
    for (int i = 0; i < n_rows * n_cols; i++) {
        exprs[i] = pl_cast_implicit(b, exprs[i], n->types[i % n_cols], exprs[i]->src_off);
        if (exprs[i] == NULL) {
            return NULL;
        }
    }
    if (is_query) {
        return values_as_union(b, sel, inputs, exprs, n);
    }
    n->n_rows = n_rows;
    n->exprs = exprs;
    return n;
}

static bool select_aggregates(const PsSelect *sel)
{
    if (sel->group_by != NULL || sel->having != NULL) {
        return true;
    }
    for (int i = 0; i < sel->targets->n; i++) {
        if (pl_has_aggregate(((PsTarget *)sel->targets->items[i])->expr)) {
            return true;
        }
    }
    for (int i = 0; sel->order_by != NULL && i < sel->order_by->n; i++) {
        if (pl_has_aggregate(((PsOrderItem *)sel->order_by->items[i])->expr)) {
            return true;
        }
    }
    return false;
}

/* Collects the names the items of one FROM clause go by (alias, else table or
 * function name; a subquery without alias has none) into seen[*n]; false with
 * b->err set at the second of two equal names, as PostgreSQL and DuckDB refuse
 * `FROM t, t` and `FROM t x JOIN u x`: a column qualified by that name could
 * mean either. */
static bool distinct_from_names(PlBinder *b, const PsFrom *f, const char **seen, int *n)
{
    if (f->kind == PS_FROM_JOIN) {
        return distinct_from_names(b, f->left, seen, n) &&
               distinct_from_names(b, f->right, seen, n);
    }
    const char *name = f->alias ? f->alias : f->kind == PS_FROM_SUBQUERY ? NULL : f->name;
    if (name == NULL) {
        return true;
    }
    for (int i = 0; i < *n; i++) {
        if (strcmp(seen[i], name) == 0) {
            cm_err_set(b->err, CM_BIND, f->src_off,
                       "table name '%s' is used more than once in FROM", name);
            return false;
        }
    }
    if (*n < PS_MAX_FROM_TABLES) {
        seen[(*n)++] = name;
    }
    return true;
}

/* FROM and WHERE: the input rows of a SELECT and their scope. */
static PlNode *bind_input(PlBinder *b, const PsSelect *sel, PlScope *sc)
{
    PlNode *input;
    if (sel->from != NULL) {
        const char *seen[PS_MAX_FROM_TABLES];
        int n_seen = 0;
        if (!distinct_from_names(b, sel->from, seen, &n_seen)) {
            return NULL;
        }
        const PsExpr *agg = sel->where != NULL ? pl_find_aggregate(sel->where) : NULL;
        if (agg != NULL) {
            cm_err_set(b->err, CM_BIND, agg->src_off,
                       "aggregate functions are not allowed in WHERE");
            return NULL;
        }
        return pl_bind_from_where(b, sel->from, sel->where, sc);
    } else if (b->inject != NULL) {
        /* A correlated subquery without FROM reads its outer values. */
        PlInject *inj = b->inject;
        b->inject = NULL;
        input = inj->d;
        inj->joined = true;
        inj->outer->inject_offset = 0;
        sc->n = input->n_cols;
        sc->cols = cm_arena_zalloc(b->arena, sizeof(PlScopeCol) * (size_t)(sc->n + 1));
        if (sc->cols == NULL) {
            return oom(b);
        }
        for (int i = 0; i < sc->n; i++) {
            sc->cols[i] = (PlScopeCol){
                .name = pl_outer_name(b, input, i), .type = input->types[i], .hidden = true};
        }
    } else {
        input = pl_node_new(b->arena, PL_VALUES, 0);
        if (input != NULL) {
            input->n_rows = 1;
        }
        sc->n = 0;
        sc->cols = NULL;
    }
    if (input == NULL || sel->where == NULL) {
        return input;
    }
    const PsExpr *agg = pl_find_aggregate(sel->where);
    if (agg != NULL) {
        cm_err_set(b->err, CM_BIND, agg->src_off, "aggregate functions are not allowed in WHERE");
        return NULL;
    }
    ExExpr *pred = pl_bind_scalar(b, sc, sel->where, "WHERE");
    return pred ? pl_filter(b, input, pred, sel->where->src_off) : NULL;
}

PlNode *pl_distinct(PlBinder *b, PlNode *child)
{
    PlNode *d = pl_node_new(b->arena, PL_AGGREGATE, child->n_cols);
    ExExpr **keys = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(child->n_cols + 1));
    if (d == NULL || keys == NULL) {
        return oom(b);
    }
    for (int i = 0; i < child->n_cols; i++) {
        keys[i] = ex_expr_column(b->arena, i, child->types[i]);
        if (keys[i] == NULL) {
            return oom(b);
        }
    }
    memcpy(d->types, child->types, sizeof(CmType) * (size_t)child->n_cols);
    memcpy(d->names, child->names, sizeof(char *) * (size_t)child->n_cols);
    d->n_keys = child->n_cols;
    d->child = pl_project(b, child, child->n_cols, keys, child->names);
    return d->child ? d : NULL;
}

/* SORT, LIMIT and the dropping of hidden columns, over the projection. */
static PlNode *finish_select(PlBinder *b, const PsSelect *sel, PlNode *top, OutList *o,
                             ExSortKey *keys)
{
    int64_t limit = -1, offset = 0;
    if (sel->limit != NULL && !eval_count(b, sel->limit, "LIMIT", &limit)) {
        return NULL;
    }
    if (sel->offset != NULL && !eval_count(b, sel->offset, "OFFSET", &offset)) {
        return NULL;
    }
    if (keys != NULL) {
        PlNode *s = pl_node_new(b->arena, PL_SORT, top->n_cols);
        if (s == NULL) {
            return oom(b);
        }
        memcpy(s->types, top->types, sizeof(CmType) * (size_t)top->n_cols);
        memcpy(s->names, top->names, sizeof(char *) * (size_t)top->n_cols);
        s->child = top;
        s->n_sort_keys = sel->order_by->n;
        s->sort_keys = keys;
        s->limit = limit >= 0 ? limit + offset : -1;
        top = s;
    }
    if (limit >= 0 || offset > 0) {
        PlNode *l = pl_node_new(b->arena, PL_LIMIT, top->n_cols);
        if (l == NULL) {
            return oom(b);
        }
        memcpy(l->types, top->types, sizeof(CmType) * (size_t)top->n_cols);
        memcpy(l->names, top->names, sizeof(char *) * (size_t)top->n_cols);
        l->child = top;
        l->limit = limit;
        l->offset = offset;
        top = l;
    }
    if (o->n > o->n_visible) {
        ExExpr **cols = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)o->n_visible);
        if (cols == NULL) {
            return oom(b);
        }
        for (int i = 0; i < o->n_visible; i++) {
            cols[i] = ex_expr_column(b->arena, i, top->types[i]);
            if (cols[i] == NULL) {
                return oom(b);
            }
        }
        top = pl_project(b, top, o->n_visible, cols, o->names);
    }
    return top;
}

/* A correlated subquery's SELECT: its outer values become extra group keys
 * (when it aggregates) and extra output columns after its own. */
static bool carry_keys(PlBinder *b, const PlInject *carry, PlAggCtx *agg, const PlScope *sc)
{
    int base = carry->outer->inject_offset;
    for (int k = 0; k < carry->d->n_cols; k++) {
        if (agg->n_keys == PL_MAX_KEYS) {
            cm_err_set(b->err, CM_LIMIT, -1, "too many GROUP BY keys");
            return false;
        }
        agg->keys[agg->n_keys] = ex_expr_column(b->arena, base + k, sc->cols[base + k].type);
        if (agg->keys[agg->n_keys++] == NULL) {
            return oom(b) != NULL;
        }
    }
    return true;
}

static bool carry_outputs(PlBinder *b, PlInject *carry, const PlAggCtx *agg, int n_user_keys,
                          const PlScope *sc, OutList *o)
{
    int base = carry->outer->inject_offset;
    carry->n_values = o->n;
    for (int k = 0; k < carry->d->n_cols; k++) {
        CmType t = sc->cols[base + k].type;
        ExExpr *e = ex_expr_column(b->arena, agg ? n_user_keys + k : base + k, t);
        if (e == NULL || !out_add(b, o, e, pl_outer_name(b, carry->d, k))) {
            return e ? false : oom(b) != NULL;
        }
    }
    o->n_visible = o->n;
    carry->carried = true;
    return true;
}

/* The first select item of a correlated aggregate over no rows at all, as an
 * expression over the enclosing query's columns (count is 0, the rest NULL). */
static bool carry_empty_value(PlBindCtx *ctx, const PsSelect *sel, PlInject *carry,
                              const PlAggCtx *agg, int n_user_keys)
{
    PlBinder *b = ctx->b;
    PlAggCtx *empty = cm_arena_zalloc(b->arena, sizeof *empty);
    int *key_outer = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(agg->n_keys + 1));
    if (empty == NULL || key_outer == NULL) {
        return oom(b) != NULL;
    }
    *empty = *agg;
    empty->empty = true;
    for (int k = 0; k < agg->n_keys; k++) {
        key_outer[k] = k >= n_user_keys ? carry->outer->refs[k - n_user_keys] : -1;
    }
    empty->key_outer = key_outer;
    PlBindCtx ectx = *ctx;
    ectx.agg = empty;
    ectx.input = NULL;
    const PsTarget *t = sel->targets->items[0];
    carry->empty_value = pl_bind_expr(&ectx, t->expr);
    carry->plain_aggregate = true;
    return carry->empty_value != NULL;
}

/* Replaces, in place, placeholder columns lo + i (below hi) by column base + i. */
static void rebase_refs(ExExpr *e, int lo, int hi, int base)
{
    if (e == NULL) {
        return;
    }
    if (e->kind == EX_E_COLUMN && e->col >= lo && e->col < hi) {
        e->col = base + (e->col - lo);
        return;
    }
    for (int i = 0; i < e->n_args; i++) {
        rebase_refs(e->args[i], lo, hi, base);
    }
}

/* rebase_refs over every expression bound after aggregation: the select list,
 * HAVING, the windows' inputs and the left operands of deferred IN subqueries. */
static void rebase_all(const PlAggCtx *agg, OutList *o, ExExpr *having, PlWinCtx *w, int lo, int hi,
                       int base)
{
    for (int i = 0; i < o->n; i++) {
        rebase_refs(o->exprs[i], lo, hi, base);
    }
    rebase_refs(having, lo, hi, base);
    for (int i = 0; i < w->n; i++) {
        rebase_refs(w->arg[i], lo, hi, base);
        for (int k = 0; k < w->spec[i].n_part; k++) {
            rebase_refs(w->part[i][k], lo, hi, base);
        }
        for (int k = 0; k < w->spec[i].n_order; k++) {
            rebase_refs(w->order[i][k], lo, hi, base);
        }
    }
    for (int i = 0; i < agg->n_late; i++) {
        rebase_refs(agg->late[i].left, lo, hi, base);
        for (int k = 0; agg->late[i].row != NULL && k < agg->late[i].ast->left->args->n; k++) {
            rebase_refs(agg->late[i].row[k], lo, hi, base);
        }
    }
    rebase_refs(w->unnest, lo, hi, base);
}

/* Replaces aggregate placeholders (PL_AGG_BASE + a) by column n_keys + a. */
static void fill_all_agg_refs(const PlAggCtx *agg, OutList *o, ExExpr *having, PlWinCtx *w)
{
    rebase_all(agg, o, having, w, PL_AGG_BASE, PL_WIN_BASE, agg->n_keys);
}

/* Joins the one-row plans of uncorrelated subqueries onto the aggregate's
 * output, so an aggregate over no rows still has its row to join to. */
static PlNode *join_post(PlBinder *b, PlNode *top, PlAggCtx *agg, OutList *o, ExExpr *having,
                         PlWinCtx *w)
{
    int base = top->n_cols;
    for (int i = 0; i < agg->n_post; i++) {
        PlNode *j = join_one_row(b, top, agg->post[i], 1);
        if (j == NULL) {
            return NULL;
        }
        j->names[top->n_cols] = "#subquery";
        top = j;
    }
    rebase_all(agg, o, having, w, PL_POST_BASE, PL_POST_BASE + PL_MAX_POST, base);
    return top;
}

/* Binds the subqueries deferred until after aggregation (PL_LATE_BASE + i)
 * over `top`, the aggregate's output, whose group keys their outer references
 * read (matched over `from`, the FROM clause's scope): a correlated subquery
 * takes its outer values from the groups and joins back onto them, so a key
 * rolled up by ROLLUP or CUBE is NULL there.  The values are appended as
 * columns and the placeholders pointed at them. */
static PlNode *join_late(PlBinder *b, PlNode *top, PlAggCtx *agg, const PlScope *from, OutList *o,
                         ExExpr *having, PlWinCtx *w)
{
    PlScope sc = {.n = top->n_cols};
    sc.cols = cm_arena_zalloc(b->arena, sizeof(PlScopeCol) * (size_t)(top->n_cols + 1));
    if (sc.cols == NULL) {
        return oom(b);
    }
    for (int i = 0; i < top->n_cols; i++) {
        sc.cols[i] = (PlScopeCol){.name = "#grouped", .type = top->types[i], .hidden = true};
    }
    PlBindCtx ctx = {.b = b,
                     .scope = &sc,
                     .mscope = &sc,
                     .input = &top,
                     .base = top,
                     .grouped = agg,
                     .grouped_scope = from,
                     .clause = "the select list"};
    for (int i = 0; i < agg->n_late; i++) {
        /* One at a time: a later one's IN operand may read an earlier one. */
        const PlLate *late = &agg->late[i];
        ctx.in_left = late->left;
        ctx.in_row = late->row;
        ExExpr *v = pl_bind_subquery(&ctx, late->ast);
        v = v ? pl_cast(b, v, late->type, late->ast->src_off) : NULL;
        int n = top->n_cols;
        ExExpr **exprs = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n + 1));
        const char **names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(n + 1));
        PlScopeCol *cols = cm_arena_alloc(b->arena, sizeof(PlScopeCol) * (size_t)(n + 1));
        if (v == NULL || exprs == NULL || names == NULL || cols == NULL) {
            return v ? oom(b) : NULL;
        }
        for (int c = 0; c < n; c++) {
            if ((exprs[c] = ex_expr_column(b->arena, c, top->types[c])) == NULL) {
                return oom(b);
            }
            names[c] = top->names[c];
        }
        exprs[n] = v;
        names[n] = "#subquery";
        memcpy(cols, sc.cols, sizeof(PlScopeCol) * (size_t)n);
        cols[n] = (PlScopeCol){.name = "#subquery", .type = v->type, .hidden = true};
        sc.cols = cols;
        sc.n = n + 1;
        if ((top = pl_project(b, top, n + 1, exprs, names)) == NULL) {
            return NULL;
        }
        rebase_all(agg, o, having, w, PL_LATE_BASE + i, PL_LATE_BASE + i + 1, n);
    }
    return top;
}

/* Replaces window placeholders (PL_WIN_BASE + i) by column base + i, in place. */
static void fill_window_refs(ExExpr *e, int base, const int *pos)
{
    if (e->kind == EX_E_COLUMN && e->col >= PL_WIN_BASE && e->col < PL_WIN_BASE + PL_MAX_WINDOWS) {
        e->col = base + pos[e->col - PL_WIN_BASE];
        return;
    }
    for (int i = 0; i < e->n_args; i++) {
        fill_window_refs(e->args[i], base, pos);
    }
}

static bool same_partition(const ExWindowSpec *a, const ExWindowSpec *b)
{
    return a->n_part == b->n_part && memcmp(a->part, b->part, sizeof(int) * (size_t)a->n_part) == 0;
}

static bool same_order(const ExWindowSpec *a, const ExWindowSpec *b)
{
    return a->n_order == b->n_order && ex_sort_keys_equal(a->order, b->order, a->n_order);
}

/* The order the WINDOW nodes are built in (perm) and each window's place in
 * it (pos): windows over the same partitions together, those with more order
 * keys first, so that one whose keys are the first of the one before it
 * reads its rows in order and sorts nothing (planner/physical.c).  Stable
 * otherwise. */
static void order_windows(const PlWinCtx *w, int *perm, int *pos)
{
    int group[PL_MAX_WINDOWS], same[PL_MAX_WINDOWS]; /* the first with its partitions, keys */
    for (int i = 0; i < w->n; i++) {
        group[i] = same[i] = i;
        for (int j = 0; j < i && group[i] == i; j++) {
            if (same_partition(&w->spec[i], &w->spec[j])) {
                group[i] = group[j];
            }
        }
        for (int j = 0; j < i && same[i] == i; j++) {
            if (group[j] == group[i] && same_order(&w->spec[i], &w->spec[j])) {
                same[i] = same[j];
            }
        }
        int at = i;
        for (; at > 0; at--) {
            const ExWindowSpec *o = &w->spec[perm[at - 1]], *s = &w->spec[i];
            bool after = group[perm[at - 1]] > group[i] ||
                         (group[perm[at - 1]] == group[i] &&
                          (o->n_order < s->n_order ||
                           (o->n_order == s->n_order && same[perm[at - 1]] > same[i])));
            if (!after) {
                break;
            }
            perm[at] = perm[at - 1];
        }
        perm[at] = i;
    }
    for (int i = 0; i < w->n; i++) {
        pos[perm[i]] = i;
    }
}

/* The column of pre[0..at) computing e, or -1: a window's argument or key
 * that another window (or top, as a column) already has is not projected
 * again, so that every window's sort carries one copy. */
static int same_input(ExExpr *const *pre, int at, const ExExpr *e)
{
    if (ex_expr_is_volatile(e)) {
        return -1; /* random() twice is two values */
    }
    for (int c = 0; c < at; c++) {
        if (pl_expr_equal(pre[c], e)) {
            return c;
        }
    }
    return -1;
}

/* A projection of top's columns plus every window's inputs (each distinct one
 * once), then one WINDOW node per window call, each appending its value. */
static PlNode *build_windows(PlBinder *b, PlNode *top, PlWinCtx *w, OutList *o)
{
    int n_pre = top->n_cols;
    for (int i = 0; i < w->n; i++) {
        n_pre += (w->arg[i] != NULL) + w->spec[i].n_part + w->spec[i].n_order;
    }
    ExExpr **pre = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n_pre + 1));
    const char **names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(n_pre + 1));
    if (pre == NULL || names == NULL) {
        return oom(b);
    }
    int at = 0;
    for (; at < top->n_cols; at++) {
        if ((pre[at] = ex_expr_column(b->arena, at, top->types[at])) == NULL) {
            return oom(b);
        }
        names[at] = top->names[at];
    }
    for (int i = 0; i < w->n; i++) {
        ExWindowSpec *s = &w->spec[i];
        s->part = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(s->n_part + 1));
        if (s->part == NULL) {
            return oom(b);
        }
        if (w->arg[i] != NULL && (s->arg = same_input(pre, at, w->arg[i])) < 0) {
            s->arg = at;
            names[at] = pl_expr_name(b, w->arg[i], top, "#arg");
            pre[at++] = w->arg[i];
        }
        for (int k = 0; k < s->n_part; k++) {
            if ((s->part[k] = same_input(pre, at, w->part[i][k])) < 0) {
                s->part[k] = at;
                names[at] = pl_expr_name(b, w->part[i][k], top, "#part");
                pre[at++] = w->part[i][k];
            }
        }
        for (int k = 0; k < s->n_order; k++) {
            if ((s->order[k].col = same_input(pre, at, w->order[i][k])) < 0) {
                s->order[k].col = at;
                names[at] = pl_expr_name(b, w->order[i][k], top, "#order");
                pre[at++] = w->order[i][k];
            }
        }
    }
    n_pre = at;
    int perm[PL_MAX_WINDOWS], pos[PL_MAX_WINDOWS];
    order_windows(w, perm, pos);
    PlNode *n = pl_project(b, top, n_pre, pre, names);
    for (int j = 0; n != NULL && j < w->n; j++) {
        int i = perm[j];
        PlNode *wn = pl_node_new(b->arena, PL_WINDOW, n->n_cols + 1);
        if (wn == NULL) {
            return oom(b);
        }
        memcpy(wn->types, n->types, sizeof(CmType) * (size_t)n->n_cols);
        memcpy(wn->names, n->names, sizeof(char *) * (size_t)n->n_cols);
        wn->types[n->n_cols] = w->spec[i].type;
        const ExWindowSpec *ws = &w->spec[i];
        const char *call = cm_arena_printf(b->arena, "%s(%s)", ex_window_fn_name(ws->fn),
                                           ws->arg >= 0 ? n->names[ws->arg] : "");
        wn->names[n->n_cols] = call != NULL ? call : "#window";
        wn->child = n;
        wn->win = &w->spec[i];
        n = wn;
    }
    for (int i = 0; n != NULL && i < o->n; i++) {
        fill_window_refs(o->exprs[i], n_pre, pos);
    }
    if (n != NULL && w->unnest != NULL) {
        fill_window_refs(w->unnest, n_pre, pos);
    }
    return n;
}

/* A projection of top's columns plus the list of the select list's unnest,
 * then the UNNEST node that turns that list into its elements, one row each:
 * the select list reads the element where the call was. */
static PlNode *build_unnest(PlBinder *b, PlNode *top, PlWinCtx *w, OutList *o)
{
    int n = top->n_cols;
    ExExpr **pre = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n + 1));
    const char **names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(n + 1));
    if (pre == NULL || names == NULL) {
        return oom(b);
    }
    for (int i = 0; i < n; i++) {
        if ((pre[i] = ex_expr_column(b->arena, i, top->types[i])) == NULL) {
            return oom(b);
        }
        names[i] = top->names[i];
    }
    pre[n] = w->unnest;
    names[n] = "#unnest";
    PlNode *p = pl_project(b, top, n + 1, pre, names);
    PlNode *u = p ? pl_node_new(b->arena, PL_UNNEST, n + 1) : NULL;
    if (u == NULL) {
        return p ? oom(b) : NULL;
    }
    memcpy(u->types, p->types, sizeof(CmType) * (size_t)(n + 1));
    memcpy(u->names, p->names, sizeof(char *) * (size_t)(n + 1));
    u->types[n] = cm_type_elem(p->types[n]);
    u->child = p;
    u->unnest_col = n;
    for (int i = 0; i < o->n; i++) {
        rebase_refs(o->exprs[i], PL_UNNEST_COL, PL_UNNEST_COL + 1, n);
    }
    return u;
}

static PlNode *bind_simple_windows(PlBinder *b, const PsSelect *sel);

/* GROUP BY ALL (DuckDB): the targets that hold no aggregate call, as written. */
static const PsSelect *group_by_all(PlBinder *b, const PsSelect *sel)
{
    PsSelect *copy = cm_arena_alloc(b->arena, sizeof *copy);
    if (copy == NULL) {
        return oom(b);
    }
    *copy = *sel;
    copy->group_all = false;
    copy->group_by = NULL;
    for (int i = 0; i < sel->targets->n; i++) {
        const PsTarget *t = sel->targets->items[i];
        if (t->expr->kind == PS_EX_STAR) {
            cm_err_set(b->err, CM_BIND, t->src_off, "GROUP BY ALL with '*' is not supported yet");
            return NULL;
        }
        if (!pl_has_aggregate(t->expr) &&
            (copy->group_by = ps_list_append(b->arena, copy->group_by, t->expr)) == NULL) {
            return oom(b);
        }
    }
    return copy;
}

/* ORDER BY ALL (DuckDB): every output column, left to right, in the template's
 * direction and NULL order, as ORDER BY 1, 2, ... */
static const PsSelect *order_by_all(PlBinder *b, const PsSelect *sel, int n_out)
{
    PsSelect *copy = cm_arena_alloc(b->arena, sizeof *copy);
    if (copy == NULL) {
        return oom(b);
    }
    *copy = *sel;
    copy->order_all = false;
    copy->order_by = NULL;
    const PsOrderItem *tmpl = sel->order_by->items[0];
    for (int i = 0; i < n_out; i++) {
        PsOrderItem *item = cm_arena_alloc(b->arena, sizeof *item);
        PsExpr *pos = cm_arena_alloc(b->arena, sizeof *pos);
        if (item == NULL || pos == NULL) {
            return oom(b);
        }
        *pos = *tmpl->expr;
        pos->ival = i + 1;
        *item = *tmpl;
        item->expr = pos;
        if ((copy->order_by = ps_list_append(b->arena, copy->order_by, item)) == NULL) {
            return oom(b);
        }
    }
    return copy;
}

static PsExpr *qualify_aliases(PlBinder *b, const PsExpr *ast, const PsSelect *sel,
                               const PlScope *sc, int depth);

/* A window specification with qualify_aliases applied to its keys. */
static PsWindow *window_aliases(PlBinder *b, const PsWindow *w, const PsSelect *sel,
                                const PlScope *sc, int depth)
{
    PsWindow *copy = cm_arena_alloc(b->arena, sizeof *copy);
    if (copy == NULL) {
        return oom(b);
    }
    *copy = *w;
    copy->partition_by = NULL;
    copy->order_by = NULL;
    for (int i = 0; w->partition_by != NULL && i < w->partition_by->n; i++) {
        PsExpr *k = qualify_aliases(b, w->partition_by->items[i], sel, sc, depth);
        if (k == NULL ||
            (copy->partition_by = ps_list_append(b->arena, copy->partition_by, k)) == NULL) {
            return k ? oom(b) : NULL;
        }
    }
    for (int i = 0; w->order_by != NULL && i < w->order_by->n; i++) {
        const PsOrderItem *item = w->order_by->items[i];
        PsOrderItem *o = cm_arena_alloc(b->arena, sizeof *o);
        if (o == NULL) {
            return oom(b);
        }
        *o = *item;
        if ((o->expr = qualify_aliases(b, item->expr, sel, sc, depth)) == NULL ||
            (copy->order_by = ps_list_append(b->arena, copy->order_by, o)) == NULL) {
            return o->expr ? oom(b) : NULL;
        }
    }
    return copy;
}

/* QUALIFY may name a target by its alias (DuckDB) where no input column has
 * that name: a copy of `ast` with each such name replaced by the target's
 * expression, bound afresh. Subqueries are left alone. The `left` chain is
 * followed by iteration, as it is as deep as it is long. NULL on OOM. */
static PsExpr *qualify_aliases(PlBinder *b, const PsExpr *ast, const PsSelect *sel,
                               const PlScope *sc, int depth)
{
    PsExpr *root = NULL, **slot = &root;
    for (; ast != NULL; ast = ast->left) {
        if (ast->kind == PS_EX_COLUMN && ast->qualifier == NULL && depth < 64) {
            bool is_input = false;
            for (int i = 0; i < sc->n && !is_input; i++) {
                is_input = !sc->cols[i].hidden && strcmp(sc->cols[i].name, ast->name) == 0;
            }
            for (int i = 0; !is_input && i < sel->targets->n; i++) {
                const PsTarget *t = sel->targets->items[i];
                if (t->alias != NULL && strcmp(t->alias, ast->name) == 0) {
                    *slot = qualify_aliases(b, t->expr, sel, sc, depth + 1);
                    return *slot != NULL ? root : NULL;
                }
            }
        }
        PsExpr *copy = cm_arena_alloc(b->arena, sizeof *copy);
        if (copy == NULL) {
            return oom(b);
        }
        *copy = *ast;
        *slot = copy;
        slot = &copy->left;
        if (ast->kind == PS_EX_SUBQUERY || ast->kind == PS_EX_EXISTS) {
            break;
        }
        if (ast->right != NULL &&
            (copy->right = qualify_aliases(b, ast->right, sel, sc, depth)) == NULL) {
            return NULL;
        }
        if (ast->over != NULL &&
            (copy->over = window_aliases(b, ast->over, sel, sc, depth)) == NULL) {
            return NULL;
        }
        if (ast->args == NULL || ast->kind == PS_EX_IN_SELECT) {
            continue;
        }
        PsList *args = NULL;
        for (int i = 0; i < ast->args->n; i++) {
            void *item = ast->args->items[i];
            if (ast->kind == PS_EX_CASE) {
                const PsWhen *w = item;
                PsWhen *nw = cm_arena_alloc(b->arena, sizeof *nw);
                if (nw == NULL) {
                    return oom(b);
                }
                nw->cond = w->cond ? qualify_aliases(b, w->cond, sel, sc, depth) : NULL;
                nw->result = w->result ? qualify_aliases(b, w->result, sel, sc, depth) : NULL;
                if ((w->cond && !nw->cond) || (w->result && !nw->result)) {
                    return NULL;
                }
                item = nw;
            } else if ((item = qualify_aliases(b, item, sel, sc, depth)) == NULL) {
                return NULL;
            }
            if ((args = ps_list_append(b->arena, args, item)) == NULL) {
                return oom(b);
            }
        }
        copy->args = args;
    }
    return root;
}

/* An ORDER BY item or DISTINCT ON expression as it reads inside a window: an
 * ordinal is the target it names (targets' aliases are replaced later, by
 * qualify_aliases). NULL when the ordinal is past the select list. */
static PsExpr *target_of_ordinal(PlBinder *b, const PsSelect *sel, PsExpr *x, const char *what)
{
    if (x->kind != PS_EX_INT) {
        return x;
    }
    if (x->ival < 1 || x->ival > sel->targets->n ||
        ((const PsTarget *)sel->targets->items[x->ival - 1])->expr->kind == PS_EX_STAR) {
        cm_err_set(b->err, CM_BIND, x->src_off, "%s position %lld is not in the select list", what,
                   (long long)x->ival);
        return NULL;
    }
    return ((const PsTarget *)sel->targets->items[x->ival - 1])->expr;
}

static PsExpr *ps_node(PlBinder *b, PsExprKind kind, int64_t off)
{
    PsExpr *e = cm_arena_zalloc(b->arena, sizeof *e);
    if (e == NULL) {
        return oom(b);
    }
    e->kind = kind;
    e->src_off = off;
    e->src_len = 0;
    return e;
}

/* DISTINCT ON (k, ...): the first row of each k in ORDER BY's order, as
 * QUALIFY row_number() OVER (PARTITION BY k, ... ORDER BY <the ORDER BY>) = 1. */
static const PsSelect *distinct_on(PlBinder *b, const PsSelect *sel)
{
    PsSelect *copy = cm_arena_alloc(b->arena, sizeof *copy);
    PsWindow *w = cm_arena_zalloc(b->arena, sizeof *w);
    int64_t off = ((const PsExpr *)sel->distinct_on->items[0])->src_off;
    PsExpr *call = ps_node(b, PS_EX_FUNC, off), *one = ps_node(b, PS_EX_INT, off);
    PsExpr *eq = ps_node(b, PS_EX_BINARY, off);
    if (copy == NULL || w == NULL || call == NULL || one == NULL || eq == NULL) {
        return copy && w ? NULL : oom(b);
    }
    *copy = *sel;
    copy->distinct_on = NULL;
    w->frame = PS_FRAME_NONE;
    w->start_kind = PS_BOUND_UNBOUNDED_PRECEDING;
    w->end_kind = PS_BOUND_CURRENT_ROW;
    for (int i = 0; i < sel->distinct_on->n; i++) {
        PsExpr *k = target_of_ordinal(b, sel, sel->distinct_on->items[i], "DISTINCT ON");
        if (k == NULL || (w->partition_by = ps_list_append(b->arena, w->partition_by, k)) == NULL) {
            return k ? oom(b) : NULL;
        }
    }
    for (int i = 0; sel->order_by != NULL && i < sel->order_by->n; i++) {
        const PsOrderItem *item = sel->order_by->items[i];
        PsOrderItem *o = cm_arena_alloc(b->arena, sizeof *o);
        if (o == NULL) {
            return oom(b);
        }
        *o = *item;
        if ((o->expr = target_of_ordinal(b, sel, item->expr, "ORDER BY")) == NULL) {
            return NULL;
        }
        if ((w->order_by = ps_list_append(b->arena, w->order_by, o)) == NULL) {
            return oom(b);
        }
    }
    call->name = "row_number";
    call->over = w;
    one->ival = 1;
    eq->op = PS_OP_EQ;
    eq->left = call;
    eq->right = one;
    if (sel->qualify != NULL) {
        PsExpr *both = ps_node(b, PS_EX_BINARY, off);
        if (both == NULL) {
            return NULL;
        }
        both->op = PS_OP_AND;
        both->left = sel->qualify;
        both->right = eq;
        eq = both;
    }
    copy->qualify = eq;
    return copy;
}

/* A SELECT with its WINDOW clause in scope for its expressions (not its subqueries'). */
static PlNode *bind_simple(PlBinder *b, const PsSelect *sel)
{
    if (sel->distinct_on != NULL && (sel = distinct_on(b, sel)) == NULL) {
        return NULL;
    }
    if (sel->group_all && (sel = group_by_all(b, sel)) == NULL) {
        return NULL;
    }
    for (int i = 0; sel->windows != NULL && i < sel->windows->n; i++) {
        const PsWindowDef *d = sel->windows->items[i];
        for (int j = 0; j < i; j++) {
            if (strcmp(((const PsWindowDef *)sel->windows->items[j])->name, d->name) == 0) {
                cm_err_set(b->err, CM_BIND, d->name_off, "window '%s' is defined more than once",
                           d->name);
                return NULL;
            }
        }
    }
    const PsList *saved = b->windows;
    b->windows = sel->windows;
    PlNode *n = bind_simple_windows(b, sel);
    b->windows = saved;
    return n;
}

static PlNode *bind_simple_windows(PlBinder *b, const PsSelect *sel)
{
    PlInject *carry = b->carry;
    b->carry = NULL;
    PlScope sc;
    PlNode *input = bind_input(b, sel, &sc);
    if (input == NULL) {
        return NULL;
    }
    if (carry != NULL && (!carry->joined || sel->limit != NULL || sel->offset != NULL)) {
        cm_err_set(b->err, CM_BIND, sel->src_off,
                   carry->joined ? "LIMIT in a correlated subquery is not supported yet"
                                 : "this correlated subquery is not supported yet");
        return NULL;
    }
    PlAggCtx *agg = NULL;
    int n_user_keys = 0;
    if (select_aggregates(sel)) {
        agg = cm_arena_zalloc(b->arena, sizeof *agg);
        if (agg == NULL || !bind_group_keys(b, sel, &sc, agg)) {
            return agg ? NULL : oom(b);
        }
        n_user_keys = agg->n_keys;
        if (carry != NULL && !carry_keys(b, carry, agg, &sc)) {
            return NULL;
        }
    }
    PlWinCtx *win = cm_arena_zalloc(b->arena, sizeof *win);
    if (win == NULL) {
        return oom(b);
    }
    PlBindCtx ctx = {.b = b,
                     .scope = &sc,
                     .mscope = &sc,
                     .input = &input,
                     .base = input,
                     .agg = agg,
                     .win = win,
                     .clause = "the select list"};
    OutList o = {0};
    if (!bind_targets(&ctx, sel, &o)) {
        return NULL;
    }
    if (carry != NULL) {
        if (agg != NULL && sel->group_by == NULL &&
            !carry_empty_value(&ctx, sel, carry, agg, n_user_keys)) {
            return NULL;
        }
        if (!carry_outputs(b, carry, agg, n_user_keys, &sc, &o)) {
            return NULL;
        }
    }
    ExExpr *having = NULL;
    if (sel->having != NULL) {
        ctx.clause = "HAVING";
        ctx.win = NULL;
        having = pl_bind_expr(&ctx, sel->having);
        ctx.win = win;
        if (having == NULL) {
            return NULL;
        }
    }
    ExSortKey *keys = NULL;
    if (sel->order_all && (sel = order_by_all(b, sel, o.n)) == NULL) {
        return NULL;
    }
    if (sel->order_by != NULL) {
        keys = cm_arena_alloc(b->arena, sizeof(ExSortKey) * (size_t)sel->order_by->n);
        ctx.clause = "ORDER BY";
        if (keys == NULL || !bind_order(&ctx, sel, &o, keys)) {
            return keys ? NULL : oom(b);
        }
    }
    /* QUALIFY: one more hidden column, after ORDER BY's, filtered on once the
     * windows are computed and then dropped */
    int qualify_col = -1;
    if (sel->qualify != NULL) {
        ctx.clause = "QUALIFY";
        const PsExpr *qa = qualify_aliases(b, sel->qualify, sel, &sc, 0);
        ExExpr *q = qa ? pl_bind_expr(&ctx, qa) : NULL;
        q = q ? pl_cast(b, q, cm_type_make(CM_T_BOOL), sel->qualify->src_off) : NULL;
        if (q == NULL) {
            return NULL;
        }
        qualify_col = o.n;
        if (!out_add(b, &o, q, "#qualify")) {
            return NULL;
        }
    }
    PlNode *top = input;
    if (agg != NULL) {
        fill_all_agg_refs(agg, &o, having, win);
        top = build_aggregate_fd(b, top, agg);
        if (top != NULL && agg->n_post > 0) {
            top = join_post(b, top, agg, &o, having, win);
        }
        if (top != NULL && agg->n_late > 0) {
            top = join_late(b, top, agg, &sc, &o, having, win);
        }
        if (top != NULL && having != NULL) {
            top = pl_filter(b, top, having, sel->having->src_off);
        }
        if (top == NULL) {
            return NULL;
        }
    }
    if (win->n > 0 && (top = build_windows(b, top, win, &o)) == NULL) {
        return NULL;
    }
    if (win->unnest != NULL && (top = build_unnest(b, top, win, &o)) == NULL) {
        return NULL;
    }
    top = pl_project(b, top, o.n, o.exprs, o.names);
    if (top != NULL && qualify_col >= 0) {
        ExExpr *q = ex_expr_column(b->arena, qualify_col, cm_type_make(CM_T_BOOL));
        top = q ? pl_filter(b, top, q, sel->qualify->src_off) : oom(b);
        o.n = qualify_col;
        ExExpr **cols = top ? cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(o.n + 1)) : NULL;
        for (int i = 0; cols != NULL && i < o.n; i++) {
            if ((cols[i] = ex_expr_column(b->arena, i, top->types[i])) == NULL) {
                cols = NULL;
            }
        }
        top = cols ? pl_project(b, top, o.n, cols, o.names) : top ? oom(b) : NULL;
    }
    if (top != NULL && sel->distinct) {
        top = pl_distinct(b, top);
    }
    return top ? finish_select(b, sel, top, &o, keys) : NULL;
}

/* ---- set operations ------------------------------------------------------------- */

/* child with its columns cast to `types` (child itself when nothing changes). */
static PlNode *cast_columns(PlBinder *b, PlNode *child, const CmType *types, int n_extra,
                            const int64_t *extra)
{
    int n = child->n_cols + n_extra;
    ExExpr **exprs = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n + 1));
    const char **names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(n + 1));
    if (exprs == NULL || names == NULL) {
        return oom(b);
    }
    bool same = n_extra == 0;
    for (int i = 0; i < child->n_cols; i++) {
        ExExpr *c = ex_expr_column(b->arena, i, child->types[i]);
        exprs[i] = c ? pl_cast(b, c, types[i], -1) : NULL;
        if (exprs[i] == NULL) {
            return c ? NULL : oom(b);
        }
        same = same && exprs[i] == c;
        names[i] = child->names[i];
    }
    for (int i = 0; i < n_extra; i++) {
        CmValue v = {.type = cm_type_make(CM_T_INT64), .i = extra[i]};
        exprs[child->n_cols + i] = ex_expr_const(b->arena, &v);
        names[child->n_cols + i] = "tag";
        if (exprs[child->n_cols + i] == NULL) {
            return oom(b);
        }
    }
    return same ? child : pl_project(b, child, n, exprs, names);
}

static PlNode *union_all(PlBinder *b, PlNode *l, PlNode *r)
{
    PlNode *u = pl_node_new(b->arena, PL_UNION, l->n_cols);
    PlNode **inputs = cm_arena_alloc(b->arena, sizeof(PlNode *) * 2);
    if (u == NULL || inputs == NULL) {
        return oom(b);
    }
    memcpy(u->types, l->types, sizeof(CmType) * (size_t)l->n_cols);
    memcpy(u->names, l->names, sizeof(char *) * (size_t)l->n_cols);
    inputs[0] = l;
    inputs[1] = r;
    u->n_inputs = 2;
    u->inputs = inputs;
    return u;
}

/* INTERSECT and EXCEPT: tag each side's rows (0 left, 1 right), group by
 * every column (where NULLs are equal, as set operations want), and keep the
 * groups with no right row, sum(tag) = 0 (EXCEPT), or with rows on both
 * sides, sum(tag) > 0 and count(*) > sum(tag) (INTERSECT).  One tag column
 * and, for EXCEPT, one aggregate keep the rows and the groups small.  Both
 * keep only groups with a left row, so the aggregate is marked
 * is_side_tagged: where it reads the left side first, right rows need only
 * find groups (physical.c), and the right side is never held. */
static PlNode *intersect_except(PlBinder *b, const PsSelect *sel, PlNode *l, PlNode *r,
                                const CmType *types)
{
    int n = l->n_cols;
    bool is_except = sel->setop != PS_SET_INTERSECT;
    int n_aggs = is_except ? 1 : 2;
    int64_t ltag = 0, rtag = 1;
    l = cast_columns(b, l, types, 1, &ltag);
    r = l ? cast_columns(b, r, types, 1, &rtag) : NULL;
    PlNode *u = r ? union_all(b, l, r) : NULL;
    PlNode *agg = u ? pl_node_new(b->arena, PL_AGGREGATE, n + n_aggs) : NULL;
    ExExpr **pre = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n + 1));
    ExAggSpec *aggs = cm_arena_alloc(b->arena, sizeof(ExAggSpec) * 2);
    if (agg == NULL || pre == NULL || aggs == NULL) {
        return u ? oom(b) : NULL;
    }
    for (int i = 0; i < n + 1; i++) {
        pre[i] = ex_expr_column(b->arena, i, u->types[i]);
        if (pre[i] == NULL) {
            return oom(b);
        }
    }
    CmType int64 = cm_type_make(CM_T_INT64);
    for (int i = 0; i < n + n_aggs; i++) {
        agg->types[i] = i < n ? u->types[i] : int64;
        agg->names[i] = u->names[i < n ? i : n];
    }
    /* sum(tag) as a BIGINT: the tags are counts, and SUM_COUNT sums them so */
    aggs[0] = (ExAggSpec){.fn = EX_AGG_SUM_COUNT, .arg = n, .arg_type = u->types[n], .type = int64};
    aggs[1] = (ExAggSpec){.fn = EX_AGG_COUNT_STAR, .arg = -1, .type = int64};
    agg->n_keys = n;
    agg->n_aggs = n_aggs;
    agg->aggs = aggs;
    agg->is_side_tagged = true;
    agg->child = pl_project(b, u, n + 1, pre, u->names);
    if (agg->child == NULL) {
        return NULL;
    }
    CmValue zero = {.type = int64, .i = 0};
    ExExpr *sum = ex_expr_column(b->arena, n, int64);
    ExExpr *cmp_zero[2] = {sum, ex_expr_const(b->arena, &zero)};
    ExExpr *pred = pl_make_call(b, is_except ? "=" : ">", cmp_zero, 2, sel->src_off);
    if (!is_except && pred != NULL) {
        ExExpr *cmp_count[2] = {ex_expr_column(b->arena, n + 1, int64), sum};
        ExExpr *has_left = pl_make_call(b, ">", cmp_count, 2, sel->src_off);
        pred = has_left ? pl_make_and(b, pred, has_left) : NULL;
    }
    PlNode *f = pred ? pl_filter(b, agg, pred, sel->src_off) : NULL;
    if (f == NULL) {
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        pre[i] = ex_expr_column(b->arena, i, f->types[i]);
    }
    return pl_project(b, f, n, pre, l->names);
}

PlNode *pl_bind_except(PlBinder *b, PlNode *l, PlNode *r)
{
    PsSelect sel = {.kind = PS_SEL_SETOP, .setop = PS_SET_EXCEPT};
    return intersect_except(b, &sel, l, r, l->types);
}

/* child's columns plus #copy, the row's number among the rows equal to it in
 * every column (row_number() OVER (PARTITION BY every column): NULLs are
 * equal there, as in set operations). */
static PlNode *number_copies(PlBinder *b, PlNode *child)
{
    int n = child->n_cols;
    PlNode *wn = pl_node_new(b->arena, PL_WINDOW, n + 1);
    ExWindowSpec *w = cm_arena_zalloc(b->arena, sizeof *w);
    int *part = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(n + 1));
    if (wn == NULL || w == NULL || part == NULL) {
        return oom(b);
    }
    for (int i = 0; i < n; i++) {
        part[i] = i;
    }
    *w = (ExWindowSpec){.fn = EX_WIN_ROW_NUMBER,
                        .arg = -1,
                        .type = cm_type_make(CM_T_INT64),
                        .n_part = n,
                        .part = part,
                        .rows = true,
                        .start = EX_FRAME_UNBOUNDED_PRECEDING,
                        .end = EX_FRAME_CURRENT_ROW};
    memcpy(wn->types, child->types, sizeof(CmType) * (size_t)n);
    memcpy(wn->names, child->names, sizeof(char *) * (size_t)n);
    wn->types[n] = w->type;
    wn->names[n] = "#copy";
    wn->child = child;
    wn->win = w;
    return wn;
}

/* INTERSECT ALL and EXCEPT ALL: a row that occurs m times on the left and n
 * on the right comes out min(m, n) times (INTERSECT ALL) or max(m - n, 0)
 * times (EXCEPT ALL).  Numbering the copies of each row on both sides makes
 * them distinct: the left's (row, 1..m) against the right's (row, 1..n) keep
 * (row, 1..min) or (row, n+1..m) under the set operation without ALL, and
 * dropping the number gives the answer.  The numbering is a window and the
 * set operation a grouping, so both spill as they always do. */
static PlNode *intersect_except_all(PlBinder *b, const PsSelect *sel, PlNode *l, PlNode *r,
                                    const CmType *types)
{
    int n = l->n_cols;
    const char **names = l->names;
    l = cast_columns(b, l, types, 0, NULL);
    r = l ? cast_columns(b, r, types, 0, NULL) : NULL;
    l = r ? number_copies(b, l) : NULL;
    r = l ? number_copies(b, r) : NULL;
    CmType *numbered = cm_arena_alloc(b->arena, sizeof(CmType) * (size_t)(n + 2));
    ExExpr **cols = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n + 1));
    if (r == NULL || numbered == NULL || cols == NULL) {
        return r ? oom(b) : NULL;
    }
    memcpy(numbered, types, sizeof(CmType) * (size_t)n);
    numbered[n] = cm_type_make(CM_T_INT64);
    PlNode *x = intersect_except(b, sel, l, r, numbered);
    for (int i = 0; x != NULL && i < n; i++) {
        if ((cols[i] = ex_expr_column(b->arena, i, x->types[i])) == NULL) {
            return oom(b);
        }
    }
    return x ? pl_project(b, x, n, cols, names) : NULL;
}

static PlNode *bind_setop(PlBinder *b, const PsSelect *sel)
{
    PlNode *l = bind_query(b, sel->left);
    PlNode *r = l ? bind_query(b, sel->right) : NULL;
    if (r == NULL) {
        return NULL;
    }
    if (l->n_cols != r->n_cols) {
        cm_err_set(b->err, CM_BIND, sel->right->src_off,
                   "each side of a set operation must have the same number of columns (%d and %d)",
                   l->n_cols, r->n_cols);
        return NULL;
    }
    CmType *types = cm_arena_alloc(b->arena, sizeof(CmType) * (size_t)(l->n_cols + 1));
    if (types == NULL) {
        return oom(b);
    }
    for (int i = 0; i < l->n_cols; i++) {
        if (!ex_common_type(l->types[i], r->types[i], &types[i])) {
            cm_err_set(b->err, CM_TYPE, sel->right->src_off,
                       "column %d of a set operation mixes incompatible types", i + 1);
            return NULL;
        }
        if (types[i].id == CM_T_NULL) {
            types[i] = cm_type_make(CM_T_INT32);
        }
    }
    if (sel->setop != PS_SET_UNION) {
        return sel->all ? intersect_except_all(b, sel, l, r, types)
                        : intersect_except(b, sel, l, r, types);
    }
    l = cast_columns(b, l, types, 0, NULL);
    r = l ? cast_columns(b, r, types, 0, NULL) : NULL;
    PlNode *u = r ? union_all(b, l, r) : NULL;
    return u && !sel->all ? pl_distinct(b, u) : u;
}

/* ORDER BY and LIMIT over a set operation or VALUES: they see its output columns. */
static PlNode *order_output(PlBinder *b, const PsSelect *sel, PlNode *n)
{
    if (sel->order_by == NULL && sel->limit == NULL && sel->offset == NULL) {
        return n;
    }
    PlScopeCol *cols = cm_arena_zalloc(b->arena, sizeof(PlScopeCol) * (size_t)(n->n_cols + 1));
    OutList o = {0};
    if (cols == NULL) {
        return oom(b);
    }
    for (int i = 0; i < n->n_cols; i++) {
        cols[i].name = n->names[i];
        cols[i].type = n->types[i];
        ExExpr *c = ex_expr_column(b->arena, i, n->types[i]);
        if (c == NULL || !out_add(b, &o, c, n->names[i])) {
            return c ? NULL : oom(b);
        }
    }
    o.n_visible = o.n;
    PlScope sc = {.n = n->n_cols, .cols = cols};
    PlBindCtx ctx = {.b = b, .scope = &sc, .clause = "ORDER BY"};
    ExSortKey *keys = NULL;
    if (sel->order_all && (sel = order_by_all(b, sel, o.n_visible)) == NULL) {
        return NULL;
    }
    if (sel->order_by != NULL) {
        keys = cm_arena_alloc(b->arena, sizeof(ExSortKey) * (size_t)sel->order_by->n);
        PsSelect plain = *sel;
        plain.distinct = false;
        if (keys == NULL || !bind_order(&ctx, &plain, &o, keys)) {
            return keys ? NULL : oom(b);
        }
    }
    if (o.n > o.n_visible) {
        n = pl_project(b, n, o.n, o.exprs, o.names);
    }
    return n ? finish_select(b, sel, n, &o, keys) : NULL;
}

static PlNode *bind_query(PlBinder *b, const PsSelect *sel)
{
    PlCte *saved = b->ctes;
    for (int i = 0; sel->with != NULL && i < sel->with->n; i++) {
        PlCte *c = cm_arena_zalloc(b->arena, sizeof *c);
        if (c == NULL) {
            return oom(b);
        }
        c->cte = sel->with->items[i];
        for (int j = 0; j < i; j++) {
            const PsCte *prev = sel->with->items[j];
            if (strcmp(prev->name, c->cte->name) == 0) {
                b->ctes = saved;
                cm_err_set(b->err, CM_BIND, c->cte->src_off,
                           "WITH query name '%s' is given more than once", c->cte->name);
                return NULL;
            }
        }
        c->next = b->ctes;
        b->ctes = c;
    }
    PlNode *n = NULL;
    switch (sel->kind) {
    case PS_SEL_SIMPLE:
        n = bind_simple(b, sel);
        break;
    case PS_SEL_VALUES:
        n = bind_values(b, sel);
        n = n ? order_output(b, sel, n) : NULL;
        break;
    case PS_SEL_SETOP:
        if (b->carry != NULL) {
            cm_err_set(b->err, CM_BIND, sel->src_off,
                       "a set operation in a correlated subquery is not supported yet");
            break;
        }
        n = bind_setop(b, sel);
        n = n ? order_output(b, sel, n) : NULL;
        break;
    }
    b->ctes = saved;
    return n;
}

PlNode *pl_bind_select(PlBinder *b, const PsSelect *sel)
{
    return bind_query(b, sel);
}
