/*
 * build_query.c - AST builders for queries (SELECT, set operations, VALUES,
 * WITH, FROM items) and statements, called from the grammar's actions.
 *
 * Same invariant as build_expr.c: after ps->is_failed every builder returns
 * the scratch node without reading its arguments; spans end at ps->prev_end.
 * ORDER BY, LIMIT/OFFSET and WITH are stored on the node of the whole query
 * expression they follow; a second clause of the same kind on one node (as in
 * "(select .. order by a) order by b") is a syntax error, as in PostgreSQL.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/arena.h"
#include "parser/parse_int.h"

/* Sets a node's span from off to the end of the last token read. */
static void set_span(PsParse *ps, int64_t *src_off, int64_t *src_len, int64_t off)
{
    *src_off = off;
    *src_len = ps->prev_end - off;
}

/* ======================================================================== */
/* queries                                                                   */
/* ======================================================================== */

static PsSelect *select_new(PsParse *ps, PsSelectKind kind, int64_t off)
{
    PsSelect *s = ps_build_alloc(ps, sizeof(PsSelect));
    s->kind = kind;
    set_span(ps, &s->src_off, &s->src_len, off);
    return s;
}

PsSelect *ps_build_simple(PsParse *ps, PsToken kw, bool distinct, PsList *targets, PsFrom *from,
                          PsExpr *where, const PsGroupSpec *group, PsExpr *having)
{
    PsSelect *s = select_new(ps, PS_SEL_SIMPLE, kw.off);
    s->distinct = distinct;
    s->targets = targets;
    s->from = from;
    s->where = where;
    s->group_kind = group->kind;
    s->group_by = group->list;
    s->group_all = group->all;
    s->having = having;
    return s;
}

PsGroupSpec *ps_build_group_item(PsParse *ps, PsGroupKind kind, PsList *list)
{
    PsGroupSpec *g = ps_build_alloc(ps, sizeof(PsGroupSpec));
    g->kind = kind;
    g->list = list;
    return g;
}

/* The sets of one GROUP BY item: ROLLUP (a, b) = (a, b), (a), (); CUBE = every
 * subset, largest first; GROUPING SETS as written; a plain key is one set. */
static PsList *item_sets(PsParse *ps, const PsGroupSpec *g)
{
    if (g->kind == PS_GROUP_SETS) {
        return g->list;
    }
    if (g->kind == PS_GROUP_PLAIN) {
        return ps_build_list(ps, NULL, g->list);
    }
    int n = g->list->n;
    if (g->kind == PS_GROUP_CUBE && n > 12) {
        return NULL;
    }
    int n_sets = g->kind == PS_GROUP_ROLLUP ? n + 1 : 1 << n;
    PsList *sets = NULL;
    for (int i = 0; i < n_sets && !ps->is_failed; i++) {
        uint64_t mask = g->kind == PS_GROUP_ROLLUP ? ((uint64_t)1 << (n - i)) - 1
                                                   : (uint64_t)(((1 << n) - 1) & ~i);
        PsList *set = ps_build_alloc(ps, sizeof(PsList));
        for (int k = 0; k < n; k++) {
            if (mask & ((uint64_t)1 << k)) {
                set = ps_build_list(ps, set, g->list->items[k]);
            }
        }
        sets = ps_build_list(ps, sets, set);
    }
    return sets;
}

PsGroupSpec ps_build_group(PsParse *ps, PsList *items, int64_t off)
{
    PsGroupSpec out = {.kind = PS_GROUP_PLAIN, .list = NULL, .all = false};
    if (ps->is_failed) {
        return out;
    }
    bool plain = true;
    for (int i = 0; i < items->n; i++) {
        plain = plain && ((const PsGroupSpec *)items->items[i])->kind == PS_GROUP_PLAIN;
    }
    if (plain) {
        for (int i = 0; i < items->n; i++) {
            const PsList *keys = ((PsGroupSpec *)items->items[i])->list; /* (a, b): several */
            for (int k = 0; k < keys->n; k++) {
                out.list = ps_build_list(ps, out.list, keys->items[k]);
            }
        }
        return out;
    }
    if (items->n == 1) {
        return *(const PsGroupSpec *)items->items[0];
    }
    /* (): the one empty set, crossed with each item's sets in turn */
    PsList *sets = ps_build_list(ps, NULL, ps_build_alloc(ps, sizeof(PsList)));
    for (int i = 0; i < items->n && !ps->is_failed; i++) {
        PsList *mine = item_sets(ps, items->items[i]), *next = NULL;
        if (mine == NULL || (int64_t)sets->n * mine->n > PS_MAX_GROUPING_SETS) {
            char msg[64];
            snprintf(msg, sizeof msg, "too many grouping sets (limit %d)", PS_MAX_GROUPING_SETS);
            ps_build_fail(ps, CM_LIMIT, off, msg);
            return out;
        }
        for (int a = 0; a < sets->n; a++) {
            for (int c = 0; c < mine->n; c++) {
                const PsList *left = sets->items[a], *right = mine->items[c];
                PsList *set = ps_build_alloc(ps, sizeof(PsList));
                for (int k = 0; k < left->n; k++) {
                    set = ps_build_list(ps, set, left->items[k]);
                }
                for (int k = 0; right != NULL && k < right->n; k++) {
                    set = ps_build_list(ps, set, right->items[k]);
                }
                next = ps_build_list(ps, next, set);
            }
        }
        sets = next;
    }
    out.kind = PS_GROUP_SETS;
    out.list = sets;
    return out;
}

PsSelect *ps_build_values(PsParse *ps, PsSelect *values, PsToken kw, PsList *row)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsSelect));
    }
    PsSelect *s = values != NULL ? values : select_new(ps, PS_SEL_VALUES, kw.off);
    s->rows = ps_build_list(ps, s->rows, row);
    set_span(ps, &s->src_off, &s->src_len, s->src_off);
    return s;
}

PsSelect *ps_build_setop(PsParse *ps, PsSetOp op, bool all, PsSelect *l, PsSelect *r)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsSelect));
    }
    int n_terms =
        (l->kind == PS_SEL_SETOP ? l->n_terms : 1) + (r->kind == PS_SEL_SETOP ? r->n_terms : 1);
    if (n_terms > PS_MAX_COMPOUND_TERMS) {
        char msg[64];
        snprintf(msg, sizeof msg, "too many terms in compound SELECT (limit %d)",
                 PS_MAX_COMPOUND_TERMS);
        ps_build_fail(ps, CM_LIMIT, r->src_off, msg);
        return ps_build_alloc(ps, sizeof(PsSelect));
    }
    PsSelect *s = select_new(ps, PS_SEL_SETOP, l->src_off);
    s->n_terms = n_terms;
    s->setop = op;
    s->all = all;
    s->left = l;
    s->right = r;
    return s;
}

PsSelect *ps_build_parens_select(PsParse *ps, PsSelect *sel, PsToken lp)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsSelect));
    }
    set_span(ps, &sel->src_off, &sel->src_len, lp.off);
    return sel;
}

PsSelect *ps_build_select_tail(PsParse *ps, PsSelect *sel, const PsWithSpec *with,
                               const PsOrderSpec *order, const PsLimitSpec *limit)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsSelect));
    }
    if (with != NULL && with->ctes != NULL) {
        if (sel->with != NULL) {
            ps_build_fail(ps, CM_SYNTAX, with->off, "multiple WITH clauses not allowed");
            return ps_build_alloc(ps, sizeof(PsSelect));
        }
        sel->with = with->ctes;
        sel->recursive = with->recursive;
        sel->src_off = with->off;
    }
    if (order != NULL && order->items != NULL) {
        if (sel->order_by != NULL) {
            ps_build_fail(ps, CM_SYNTAX, order->off, "multiple ORDER BY clauses not allowed");
            return ps_build_alloc(ps, sizeof(PsSelect));
        }
        sel->order_by = order->items;
        sel->order_all = order->all;
    }
    if (limit != NULL && limit->off >= 0) {
        if (sel->limit != NULL || sel->offset != NULL) {
            ps_build_fail(ps, CM_SYNTAX, limit->off, "multiple LIMIT/OFFSET clauses not allowed");
            return ps_build_alloc(ps, sizeof(PsSelect));
        }
        sel->limit = limit->limit;
        sel->offset = limit->offset;
    }
    set_span(ps, &sel->src_off, &sel->src_len, sel->src_off);
    return sel;
}

PsCte *ps_build_cte(PsParse *ps, PsToken name, PsList *cols, PsSelect *sel)
{
    PsCte *c = ps_build_alloc(ps, sizeof(PsCte));
    c->name = ps_build_ident(ps, name);
    c->col_names = cols;
    c->select = sel;
    set_span(ps, &c->src_off, &c->src_len, name.off);
    return c;
}

PsTarget *ps_build_target(PsParse *ps, PsExpr *x, const PsToken *alias)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsTarget));
    }
    PsTarget *t = ps_build_alloc(ps, sizeof(PsTarget));
    t->expr = x;
    t->alias = alias != NULL ? ps_build_ident(ps, *alias) : NULL;
    set_span(ps, &t->src_off, &t->src_len, x->src_off);
    return t;
}

PsStmt *ps_build_alter(PsParse *ps, PsToken kw, const PsQName *table, PsAlterKind kind,
                       const PsToken *column, const PsToken *name, PsColumnDef *def)
{
    PsStmt *s = ps_build_stmt(ps, PS_ST_ALTER, kw.off);
    s->table = ps_build_qname(ps, table, &s->schema);
    s->alter = kind;
    if (kind == PS_ALTER_RENAME_TABLE) {
        s->name = ps_build_ident(ps, *name);
        s->name_off = name->off;
    } else if (column != NULL) {
        s->name = ps_build_ident(ps, *column);
        s->name_off = column->off;
        s->name2 = name != NULL ? ps_build_ident(ps, *name) : NULL;
    } else {
        s->columns = ps_build_list(ps, NULL, def);
        s->name_off = def->src_off;
    }
    return s;
}

void ps_build_or_replace(PsParse *ps, PsStmt *s, bool or_replace)
{
    if (or_replace && s->if_not_exists && !ps->is_failed) {
        ps_build_fail(ps, CM_SYNTAX, s->src_off,
                      "OR REPLACE and IF NOT EXISTS cannot be used together");
        return;
    }
    s->or_replace = or_replace;
}

PsSelect *ps_build_select_all(PsParse *ps, PsToken kw, const PsQName *name)
{
    PsAliasSpec none = {0};
    PsGroupSpec plain = {.kind = PS_GROUP_PLAIN};
    PsList *targets =
        ps_build_list(ps, NULL, ps_build_target(ps, ps_build_star(ps, NULL, 0, kw.off), NULL));
    return ps_build_simple(ps, kw, false, targets, ps_build_table(ps, name, &none), NULL, &plain,
                           NULL);
}

/* ---- x op ANY|SOME|ALL (subquery) ---- */

/* A plain `SELECT col FROM .. [WHERE ..]`: its aggregates can be taken in
 * place, so that a correlated one stays correlated (a derived table cannot
 * see the enclosing query). */
static bool quant_is_plain(const PsSelect *sub)
{
    return sub->kind == PS_SEL_SIMPLE && sub->targets->n == 1 &&
           ((const PsTarget *)sub->targets->items[0])->expr->kind == PS_EX_COLUMN &&
           sub->group_by == NULL && !sub->group_all && sub->having == NULL &&
           sub->qualify == NULL && sub->distinct_on == NULL && sub->windows == NULL &&
           sub->limit == NULL && sub->offset == NULL;
}

typedef enum QuantPart { QUANT_COUNT, QUANT_HAS_NULL, QUANT_MIN, QUANT_MAX } QuantPart;

/* One scalar subquery over sub's values: count(*), count(*) > count(v), min(v)
 * or max(v), v being its column (sub as a derived table "#q"("#c") unless plain). */
static PsExpr *quant_scalar(PsParse *ps, PsSelect *sub, QuantPart part, int64_t off)
{
    bool is_plain = quant_is_plain(sub);
    PsExpr *v;
    if (is_plain) {
        v = ((const PsTarget *)sub->targets->items[0])->expr;
    } else {
        v = ps_build_expr(ps, PS_EX_COLUMN, off);
        v->name = "#c"; /* no written name can be it */
    }
    PsExpr *value;
    if (part == QUANT_MIN || part == QUANT_MAX) {
        value = ps_build_func_named(ps, part == QUANT_MIN ? "min" : "max", off,
                                    ps_build_list(ps, NULL, v));
    } else {
        value = ps_build_func_named(ps, "count", off, NULL);
        value->star = true;
        if (part == QUANT_HAS_NULL) {
            PsExpr *n = ps_build_func_named(ps, "count", off, ps_build_list(ps, NULL, v));
            value = ps_build_binary(ps, PS_OP_GT, value, n);
        }
    }
    PsList *targets = ps_build_list(ps, NULL, ps_build_target(ps, value, NULL));
    PsSelect *sel;
    if (is_plain) {
        /* DISTINCT and ORDER BY change none of the four */
        sel = ps_build_alloc(ps, sizeof *sel);
        *sel = *sub;
        sel->targets = targets;
        sel->distinct = false;
        sel->order_by = NULL;
        sel->order_all = false;
    } else {
        PsAliasSpec al = {.alias = "#q", .cols = ps_build_list(ps, NULL, (void *)"#c")};
        PsGroupSpec plain = {.kind = PS_GROUP_PLAIN};
        PsFrom *from = ps_build_from_subquery(ps, sub, &al);
        from->one_column = true;
        PsToken kw = {.off = off};
        sel = ps_build_simple(ps, kw, false, targets, from, NULL, &plain, NULL);
    }
    return ps_build_subquery(ps, PS_EX_SUBQUERY, sel, off);
}

static PsExpr *quant_literal(PsParse *ps, PsExprKind kind, int64_t value, int64_t off)
{
    PsExpr *e = ps_build_expr(ps, kind, off);
    e->ival = value;
    return e;
}

PsExpr *ps_build_quantified(PsParse *ps, PsOp op, PsExpr *x, bool all, PsSelect *sub)
{
    int64_t off = x->src_off;
    if (ps->is_failed) {
        return x;
    }
    if (op == PS_OP_EQ && !all) {
        return ps_build_in_select(ps, x, sub, false);
    }
    if (op == PS_OP_NE && all) {
        return ps_build_in_select(ps, x, sub, true);
    }
    if (x->kind == PS_EX_ROW) {
        ps_build_fail(ps, CM_BIND, off,
                      "a row value is compared with ANY or ALL only as = ANY and <> ALL");
        return x;
    }
    /* n = 0, then whether a value decides (ANY: one makes it true; ALL: one
     * makes it false), then NULL when x or a value is NULL; min and max stand
     * for every value. */
    PsExpr *empty = ps_build_binary(ps, PS_OP_EQ, quant_scalar(ps, sub, QUANT_COUNT, off),
                                    quant_literal(ps, PS_EX_INT, 0, off));
    PsExpr *has_null = ps_build_binary(ps, PS_OP_OR, ps_build_is_null(ps, x, false),
                                       quant_scalar(ps, sub, QUANT_HAS_NULL, off));
    PsExpr *lo = quant_scalar(ps, sub, QUANT_MIN, off);
    PsExpr *hi = quant_scalar(ps, sub, QUANT_MAX, off);
    PsExpr *decides;
    if (op == PS_OP_EQ || op == PS_OP_NE) {
        /* = ALL fails, <> ANY holds, on a value other than x */
        decides = ps_build_binary(ps, PS_OP_OR, ps_build_binary(ps, PS_OP_NE, x, lo),
                                  ps_build_binary(ps, PS_OP_NE, x, hi));
    } else {
        bool is_greater = op == PS_OP_GT || op == PS_OP_GE;
        /* ANY: x > some value iff x > min; ALL: x > every value iff x > max */
        PsExpr *bound = is_greater == all ? hi : lo;
        decides = ps_build_binary(ps, op, x, bound);
        if (all) {
            PsToken not_kw = {.off = off};
            decides = ps_build_unary(ps, PS_OP_NOT, not_kw, decides);
        }
    }
    PsList *whens = ps_build_when(ps, NULL, empty, quant_literal(ps, PS_EX_BOOL, all, off));
    whens = ps_build_when(ps, whens, decides, quant_literal(ps, PS_EX_BOOL, !all, off));
    whens = ps_build_when(ps, whens, has_null, ps_build_expr(ps, PS_EX_NULL, off));
    PsToken kw = {.off = off};
    return ps_build_case(ps, kw, NULL, whens, quant_literal(ps, PS_EX_BOOL, all, off));
}

void ps_build_update_from(PsParse *ps, PsStmt *s, const PsQName *name, PsFrom *f)
{
    if (f == NULL || ps->is_failed) {
        return;
    }
    PsAliasSpec al = {.alias = s->alias};
    PsQName last = {{name->parts[name->n - 1]}, 1};
    PsFrom *target = ps_build_table(ps, &last, &al);
    target->is_update_target = true;
    s->from = ps_build_join(ps, PS_JOIN_CROSS, false, target, f, NULL);
}

void ps_build_returning(PsParse *ps, PsStmt *s, const PsQName *name, const char *alias,
                        PsList *targets)
{
    if (targets == NULL || ps->is_failed) {
        return;
    }
    PsAliasSpec al = {.alias = alias};
    PsGroupSpec plain = {.kind = PS_GROUP_PLAIN};
    PsQName last = {{name->parts[name->n - 1]}, 1};
    PsToken kw = {.off = ((const PsTarget *)targets->items[0])->expr->src_off};
    s->returning =
        ps_build_simple(ps, kw, false, targets, ps_build_table(ps, &last, &al), NULL, &plain, NULL);
}

PsStmt *ps_build_show(PsParse *ps, PsToken kw, PsToken name)
{
    const char *word = ps_build_ident(ps, name);
    if (strcmp(word, "tables") == 0) {
        return ps_build_stmt(ps, PS_ST_SHOW_TABLES, kw.off);
    }
    if (strcmp(word, "settings") == 0) {
        return ps_build_show_settings(ps, kw);
    }
    PsStmt *s = ps_build_stmt(ps, PS_ST_DESCRIBE, kw.off);
    PsQName q = {{name}, 1};
    s->select = ps_build_select_all(ps, kw, &q);
    return s;
}

static PsFrom *from_new(PsParse *ps, PsFromKind kind, int64_t off);

PsStmt *ps_build_show_settings(PsParse *ps, PsToken kw)
{
    PsStmt *s = ps_build_stmt(ps, PS_ST_SELECT, kw.off);
    if (ps->is_failed) {
        return s;
    }
    PsGroupSpec plain = {.kind = PS_GROUP_PLAIN};
    PsList *targets =
        ps_build_list(ps, NULL, ps_build_target(ps, ps_build_star(ps, NULL, 0, kw.off), NULL));
    PsFrom *from = from_new(ps, PS_FROM_FUNCTION, kw.off);
    if (ps->is_failed) {
        return s;
    }
    from->name = "sluice_settings";
    s->select = ps_build_simple(ps, kw, false, targets, from, NULL, &plain, NULL);
    return s;
}

PsTarget *ps_build_star_target(PsParse *ps, PsExpr *star, const PsStarMods *mods)
{
    PsTarget *t = ps_build_target(ps, star, NULL);
    t->exclude = mods->exclude;
    t->replace = mods->replace;
    return t;
}

PsList *ps_build_concat(PsParse *ps, PsList *a, PsList *b)
{
    for (int i = 0; b != NULL && i < b->n && !ps->is_failed; i++) {
        a = ps_build_list(ps, a, b->items[i]);
    }
    return a;
}

PsList *ps_build_names(PsParse *ps, PsList *list, PsToken name)
{
    return ps_build_list(ps, list, (void *)ps_build_ident(ps, name));
}

/* ======================================================================== */
/* FROM items                                                                */
/* ======================================================================== */

static PsFrom *from_new(PsParse *ps, PsFromKind kind, int64_t off)
{
    PsFrom *f = ps_build_alloc(ps, sizeof(PsFrom));
    f->kind = kind;
    set_span(ps, &f->src_off, &f->src_len, off);
    return f;
}

void ps_build_schema_ref(PsParse *ps, const PsToken *parts, int n, PsSchemaRef *out)
{
    out->catalog = n == 2 ? ps_build_ident(ps, parts[0]) : NULL;
    out->schema = n > 0 ? ps_build_ident(ps, parts[n - 1]) : NULL;
    out->off = n > 0 ? parts[0].off : -1;
}

const char *ps_build_qname(PsParse *ps, const PsQName *name, PsSchemaRef *schema)
{
    ps_build_schema_ref(ps, name->parts, name->n - 1, schema);
    return ps_build_ident(ps, name->parts[name->n - 1]);
}

PsFrom *ps_build_table(PsParse *ps, const PsQName *name, const PsAliasSpec *al)
{
    PsFrom *f = from_new(ps, PS_FROM_TABLE, name->parts[0].off);
    f->name = ps_build_qname(ps, name, &f->schema);
    f->alias = al->alias;
    f->col_aliases = al->cols;
    return f;
}

PsFrom *ps_build_from_subquery(PsParse *ps, PsSelect *sub, const PsAliasSpec *al)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsFrom));
    }
    PsFrom *f = from_new(ps, PS_FROM_SUBQUERY, sub->src_off);
    f->subquery = sub;
    f->alias = al->alias;
    f->col_aliases = al->cols;
    return f;
}

PsFrom *ps_build_from_function(PsParse *ps, PsToken name, PsList *args, const PsAliasSpec *al)
{
    PsFrom *f = from_new(ps, PS_FROM_FUNCTION, name.off);
    f->name = ps_build_ident(ps, name);
    f->args = args;
    f->alias = al->alias;
    f->col_aliases = al->cols;
    return f;
}

PsFrom *ps_build_join(PsParse *ps, PsJoinType type, bool natural, PsFrom *l, PsFrom *r,
                      const PsJoinQual *qual)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsFrom));
    }
    int n_tables =
        (l->kind == PS_FROM_JOIN ? l->n_tables : 1) + (r->kind == PS_FROM_JOIN ? r->n_tables : 1);
    if (n_tables > PS_MAX_FROM_TABLES) {
        char msg[64];
        snprintf(msg, sizeof msg, "more than %d tables in one FROM clause", PS_MAX_FROM_TABLES);
        ps_build_fail(ps, CM_LIMIT, r->src_off, msg);
        return ps_build_alloc(ps, sizeof(PsFrom));
    }
    PsFrom *f = from_new(ps, PS_FROM_JOIN, l->src_off);
    f->n_tables = n_tables;
    f->join_type = type;
    f->natural = natural;
    f->left = l;
    f->right = r;
    f->on = qual != NULL ? qual->on : NULL;
    f->using_cols = qual != NULL ? qual->using_cols : NULL;
    return f;
}

PsFrom *ps_build_parens_from(PsParse *ps, PsFrom *from, PsToken lp)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsFrom));
    }
    set_span(ps, &from->src_off, &from->src_len, lp.off);
    return from;
}

/* ======================================================================== */
/* statements                                                                */
/* ======================================================================== */

PsStmt *ps_build_stmt(PsParse *ps, PsStmtKind kind, int64_t off)
{
    PsStmt *st = ps_build_alloc(ps, sizeof(PsStmt));
    st->kind = kind;
    set_span(ps, &st->src_off, &st->src_len, off);
    return st;
}

void ps_build_copy_path(PsParse *ps, PsStmt *st, PsToken tok)
{
    const PsExpr *e = ps_build_string(ps, tok);
    st->path = e->str;
    st->path_len = e->str_len;
    st->path_off = tok.off;
}

PsColumnDef *ps_build_coldef(PsParse *ps, PsToken name, PsTypeName *type)
{
    PsColumnDef *def = ps_build_alloc(ps, sizeof(PsColumnDef));
    def->name = ps_build_ident(ps, name);
    def->type = type;
    set_span(ps, &def->src_off, &def->src_len, name.off);
    return def;
}

PsColumnDef *ps_build_coldef_more(PsParse *ps, PsColumnDef *def)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsColumnDef));
    }
    set_span(ps, &def->src_off, &def->src_len, def->src_off);
    return def;
}

/* In arena: the names of a list of const char* joined by ','. */
static const char *join_list(PsParse *ps, const PsList *names)
{
    size_t n = 0;
    for (int idx = 0; idx < names->n; idx++) {
        n += strlen(names->items[idx]) + 1;
    }
    char *out = cm_arena_alloc(ps->arena, n + 1);
    if (out == NULL) {
        ps_build_oom(ps);
        return "";
    }
    out[0] = '\0';
    for (int idx = 0; idx < names->n; idx++) {
        if (idx > 0) {
            strcat(out, ",");
        }
        strcat(out, names->items[idx]);
    }
    return out;
}

PsStmt *ps_build_table_elem(PsParse *ps, PsStmt *shell, PsColumnDef *col,
                            const PsTableConstraint *cons)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsStmt));
    }
    PsStmt *st = shell != NULL ? shell : ps_build_stmt(ps, PS_ST_CREATE_TABLE, 0);
    if (col != NULL) {
        st->columns = ps_build_list(ps, st->columns, col);
    }
    if (cons != NULL && cons->is_primary) {
        st->primary_key = join_list(ps, cons->cols);
    } else if (cons != NULL) {
        st->uniques = ps_build_list(ps, st->uniques, (void *)join_list(ps, cons->cols));
    }
    return st;
}

PsStmt *ps_build_create_table(PsParse *ps, PsToken kw, bool temporary, bool if_not_exists,
                              const PsQName *name, PsStmt *shell, PsSelect *as_select)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsStmt));
    }
    PsStmt *st = shell != NULL ? shell : ps_build_alloc(ps, sizeof(PsStmt));
    st->kind = PS_ST_CREATE_TABLE;
    set_span(ps, &st->src_off, &st->src_len, kw.off);
    st->temporary = temporary;
    st->if_not_exists = if_not_exists;
    st->name = ps_build_qname(ps, name, &st->schema);
    st->select = as_select;
    return st;
}

PsOption *ps_build_option(PsParse *ps, PsToken name, PsExpr *value)
{
    PsOption *opt = ps_build_alloc(ps, sizeof(PsOption));
    opt->name = ps_build_ident(ps, name);
    opt->value = value;
    return opt;
}

/* True unless the option's value says no (false, 0, off). */
static bool option_is_on(const PsExpr *value)
{
    if (value == NULL) {
        return true;
    }
    switch (value->kind) {
    case PS_EX_BOOL:
    case PS_EX_INT:
        return value->ival != 0;
    case PS_EX_COLUMN:
        return strcmp(value->name, "off") != 0 && strcmp(value->name, "false") != 0;
    case PS_EX_STRING:
        return strcmp(value->str, "off") != 0 && strcmp(value->str, "false") != 0;
    default:
        return true;
    }
}

PsStmt *ps_build_explain(PsParse *ps, PsToken kw, PsStmt *inner, bool analyze, PsList *options)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsStmt));
    }
    PsStmt *st = ps_build_stmt(ps, PS_ST_EXPLAIN, kw.off);
    st->inner = inner;
    st->analyze = analyze;
    st->options = options;
    for (int idx = 0; options != NULL && idx < options->n; idx++) {
        const PsOption *opt = options->items[idx];
        if (strcmp(opt->name, "analyze") == 0) {
            st->analyze = option_is_on(opt->value);
        }
    }
    return st;
}

const char *ps_build_dotted(PsParse *ps, const char *prefix, PsToken part)
{
    const char *name = ps_build_ident(ps, part);
    if (prefix == NULL || ps->is_failed) {
        return name;
    }
    char *out = cm_arena_printf(ps->arena, "%s.%s", prefix, name);
    if (out == NULL) {
        ps_build_oom(ps);
        return "";
    }
    return out;
}

PsSetClause *ps_build_set_clause(PsParse *ps, PsToken column, PsExpr *value)
{
    PsSetClause *set = ps_build_alloc(ps, sizeof(PsSetClause));
    set->column = ps_build_ident(ps, column);
    set->column_off = column.off;
    set->value = value;
    return set;
}
