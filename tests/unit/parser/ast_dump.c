/*
 * ast_dump.c - S-expression printer for parser ASTs (unit tests only).
 *
 * Format: literals print as written (strings in single quotes, NULL as null);
 * columns as [qualifier.]name; operators as (op l r) with SQL symbols or
 * and/or/not/neg/pos/bitnot; predicates as (between x lo hi), (in x (list)),
 * (like x p [:escape e]), (is-null x), (is-distinct l r), each with a "not-"
 * prefix when negated; calls as (name [distinct] args.. [:filter f] [:over w]).
 * Queries: (select [distinct] (targets) [:from f] [:where w] [:group kind (..)]
 * [:having h] [:with (..)] [:order (..)] [:limit n] [:offset m]); a target
 * with an alias is (as expr alias).  FROM items: name, (name as alias (cols)),
 * (sub select [as alias]), (join-<type> l r [:on x] [:using (..)]).
 */
#include "ast_dump.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"

typedef struct Buf {
    char *data; /* owned, cm_malloc */
    size_t n;   /* bytes written, without the NUL */
    size_t cap; /* bytes allocated */
} Buf;

static void put(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(Buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->n + (size_t)need + 1 > b->cap) {
        size_t cap = (b->cap + (size_t)need + 1) * 2;
        char *data = cm_realloc(b->data, cap);
        if (data == NULL) {
            return;
        }
        b->data = data;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->data + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)need;
}

static void put_select(Buf *b, const PsSelect *s);

static const char *op_name(PsOp op)
{
    static const char *const names[] = {
        [PS_OP_NONE] = "?",      [PS_OP_NEG] = "neg",       [PS_OP_PLUS] = "pos",
        [PS_OP_NOT] = "not",     [PS_OP_BITNOT] = "bitnot", [PS_OP_ADD] = "+",
        [PS_OP_SUB] = "-",       [PS_OP_MUL] = "*",         [PS_OP_DIV] = "/",
        [PS_OP_MOD] = "%",       [PS_OP_CONCAT] = "||",     [PS_OP_BITAND] = "&",
        [PS_OP_BITOR] = "|",     [PS_OP_SHL] = "<<",        [PS_OP_SHR] = ">>",
        [PS_OP_EQ] = "=",        [PS_OP_NE] = "<>",         [PS_OP_LT] = "<",
        [PS_OP_LE] = "<=",       [PS_OP_GT] = ">",          [PS_OP_GE] = ">=",
        [PS_OP_AND] = "and",     [PS_OP_OR] = "or",         [PS_OP_LIKE] = "like",
        [PS_OP_ILIKE] = "ilike",
    };
    return names[op];
}

static void put_string(Buf *b, const char *s, int64_t n)
{
    put(b, "'");
    for (int64_t idx = 0; idx < n; idx++) {
        if (s[idx] == '\'') {
            put(b, "''");
        } else {
            put(b, "%c", s[idx]);
        }
    }
    put(b, "'");
}

static void put_type(Buf *b, const PsTypeName *t)
{
    put(b, "%s", t->name);
    if (t->n_params == 1) {
        put(b, "(%" PRId64 ")", t->params[0]);
    } else if (t->n_params == 2) {
        put(b, "(%" PRId64 ",%" PRId64 ")", t->params[0], t->params[1]);
    }
}

static void put_expr(Buf *b, const PsExpr *e);

/* " a b c" for a list of expressions. */
static void put_exprs(Buf *b, const PsList *list)
{
    for (int idx = 0; list != NULL && idx < list->n; idx++) {
        put(b, " ");
        put_expr(b, list->items[idx]);
    }
}

static void put_order(Buf *b, const PsList *items)
{
    put(b, "(");
    for (int idx = 0; items != NULL && idx < items->n; idx++) {
        const PsOrderItem *o = items->items[idx];
        put(b, "%s(%s ", idx > 0 ? " " : "", o->desc ? "desc" : "asc");
        put_expr(b, o->expr);
        put(b, "%s)", o->nulls == 1 ? " nulls-first" : o->nulls == 2 ? " nulls-last" : "");
    }
    put(b, ")");
}

static void put_bound(Buf *b, PsBoundKind kind, const PsExpr *off)
{
    switch (kind) {
    case PS_BOUND_UNBOUNDED_PRECEDING:
        put(b, "unbounded-preceding");
        break;
    case PS_BOUND_UNBOUNDED_FOLLOWING:
        put(b, "unbounded-following");
        break;
    case PS_BOUND_CURRENT_ROW:
        put(b, "current-row");
        break;
    case PS_BOUND_PRECEDING:
    case PS_BOUND_FOLLOWING:
        put(b, "(%s ", kind == PS_BOUND_PRECEDING ? "preceding" : "following");
        put_expr(b, off);
        put(b, ")");
        break;
    }
}

static void put_window(Buf *b, const PsWindow *w)
{
    put(b, "(window");
    if (w->partition_by != NULL) {
        put(b, " :partition (");
        for (int idx = 0; idx < w->partition_by->n; idx++) {
            put(b, "%s", idx > 0 ? " " : "");
            put_expr(b, w->partition_by->items[idx]);
        }
        put(b, ")");
    }
    if (w->order_by != NULL) {
        put(b, " :order ");
        put_order(b, w->order_by);
    }
    if (w->frame != PS_FRAME_NONE) {
        put(b, " :%s ", w->frame == PS_FRAME_ROWS ? "rows" : "range");
        put_bound(b, w->start_kind, w->start_off);
        put(b, " ");
        put_bound(b, w->end_kind, w->end_off);
    }
    put(b, ")");
}

static void put_func(Buf *b, const PsExpr *e)
{
    put(b, "(%s%s%s", e->name, e->distinct ? " distinct" : "", e->star ? " *" : "");
    put_exprs(b, e->args);
    if (e->filter != NULL) {
        put(b, " :filter ");
        put_expr(b, e->filter);
    }
    if (e->over != NULL) {
        put(b, " :over ");
        put_window(b, e->over);
    }
    put(b, ")");
}

static void put_case(Buf *b, const PsExpr *e)
{
    put(b, "(case");
    if (e->left != NULL) {
        put(b, " :operand ");
        put_expr(b, e->left);
    }
    for (int idx = 0; idx < e->args->n; idx++) {
        const PsWhen *w = e->args->items[idx];
        put(b, " (when ");
        put_expr(b, w->cond);
        put(b, " ");
        put_expr(b, w->result);
        put(b, ")");
    }
    if (e->right != NULL) {
        put(b, " :else ");
        put_expr(b, e->right);
    }
    put(b, ")");
}

/* (name[-negated] left rest..) for predicates. */
static void put_pred(Buf *b, const char *name, const PsExpr *e)
{
    put(b, "(%s%s ", e->negated ? "not-" : "", name);
    put_expr(b, e->left);
}

/* "catalog.schema." or "schema." before a qualified name; nothing when absent. */
static void put_schema(Buf *b, const PsSchemaRef *s)
{
    if (s->catalog != NULL) {
        put(b, "%s.", s->catalog);
    }
    if (s->schema != NULL) {
        put(b, "%s.", s->schema);
    }
}

static void put_literal(Buf *b, const PsExpr *e)
{
    switch (e->kind) {
    case PS_EX_INT:
        put(b, "%" PRId64, e->ival);
        break;
    case PS_EX_NUMBER:
        put(b, "%s", e->str);
        break;
    case PS_EX_STRING:
        put_string(b, e->str, e->str_len);
        break;
    case PS_EX_NULL:
        put(b, "null");
        break;
    case PS_EX_BOOL:
        put(b, e->ival ? "true" : "false");
        break;
    case PS_EX_PARAM:
        put(b, "$%" PRId64, e->ival);
        break;
    case PS_EX_TYPED:
        put(b, "(%s ", e->type->name);
        put_string(b, e->str, e->str_len);
        put(b, "%s%s)", e->name != NULL ? " " : "", e->name != NULL ? e->name : "");
        break;
    case PS_EX_COLUMN:
        put_schema(b, &e->schema);
        put(b, "%s%s%s", e->qualifier ? e->qualifier : "", e->qualifier ? "." : "", e->name);
        break;
    case PS_EX_STAR:
        put_schema(b, &e->schema);
        put(b, "%s%s*", e->qualifier ? e->qualifier : "", e->qualifier ? "." : "");
        break;
    case PS_EX_DEFAULT:
        put(b, "default");
        break;
    default:
        break;
    }
}

/* Predicates: BETWEEN, IN, EXISTS, IS [NOT] NULL, LIKE, IS DISTINCT. */
static void put_predicate(Buf *b, const PsExpr *e)
{
    switch (e->kind) {
    case PS_EX_BETWEEN:
        put_pred(b, "between", e);
        put_exprs(b, e->args);
        break;
    case PS_EX_IN_LIST:
        put_pred(b, "in", e);
        put(b, " (");
        for (int idx = 0; idx < e->args->n; idx++) {
            put(b, "%s", idx > 0 ? " " : "");
            put_expr(b, e->args->items[idx]);
        }
        put(b, ")");
        break;
    case PS_EX_IN_SELECT:
        put_pred(b, "in", e);
        put(b, " ");
        put_select(b, e->subquery);
        break;
    case PS_EX_EXISTS:
        put(b, "(%sexists ", e->negated ? "not-" : "");
        put_select(b, e->subquery);
        break;
    case PS_EX_IS_NULL:
        put_pred(b, "is-null", e);
        break;
    case PS_EX_LIKE:
        put_pred(b, e->op == PS_OP_ILIKE ? "ilike" : "like", e);
        put(b, " ");
        put_expr(b, e->right);
        if (e->escape != NULL) {
            put(b, " :escape ");
            put_expr(b, e->escape);
        }
        break;
    default: /* PS_EX_IS_DISTINCT */
        put_pred(b, "is-distinct", e);
        put(b, " ");
        put_expr(b, e->right);
        break;
    }
    put(b, ")");
}

static void put_expr(Buf *b, const PsExpr *e)
{
    switch (e->kind) {
    case PS_EX_UNARY:
        put(b, "(%s ", op_name(e->op));
        put_expr(b, e->left);
        put(b, ")");
        return;
    case PS_EX_BINARY:
        put(b, "(%s ", op_name(e->op));
        put_expr(b, e->left);
        put(b, " ");
        put_expr(b, e->right);
        put(b, ")");
        return;
    case PS_EX_FUNC:
        put_func(b, e);
        return;
    case PS_EX_CASE:
        put_case(b, e);
        return;
    case PS_EX_CAST:
        put(b, "(cast ");
        put_expr(b, e->left);
        put(b, " ");
        put_type(b, e->type);
        put(b, ")");
        return;
    case PS_EX_ROW:
        put(b, "(row");
        put_exprs(b, e->args);
        put(b, ")");
        return;
    case PS_EX_SUBQUERY:
        put(b, "(subquery ");
        put_select(b, e->subquery);
        put(b, ")");
        return;
    case PS_EX_BETWEEN:
    case PS_EX_IN_LIST:
    case PS_EX_IN_SELECT:
    case PS_EX_EXISTS:
    case PS_EX_IS_NULL:
    case PS_EX_LIKE:
    case PS_EX_IS_DISTINCT:
        put_predicate(b, e);
        return;
    default:
        put_literal(b, e);
        return;
    }
}

/* " (a b c)" for a list of names. */
static void put_names(Buf *b, const PsList *names)
{
    if (names == NULL) {
        return;
    }
    put(b, " (");
    for (int idx = 0; idx < names->n; idx++) {
        put(b, "%s%s", idx > 0 ? " " : "", (const char *)names->items[idx]);
    }
    put(b, ")");
}

static void put_from(Buf *b, const PsFrom *f)
{
    static const char *const joins[] = {"inner", "left", "right", "full", "cross"};
    switch (f->kind) {
    case PS_FROM_TABLE:
        if (f->alias == NULL && f->col_aliases == NULL) {
            put_schema(b, &f->schema);
            put(b, "%s", f->name);
            return;
        }
        put(b, "(");
        put_schema(b, &f->schema);
        put(b, "%s as %s", f->name, f->alias);
        put_names(b, f->col_aliases);
        put(b, ")");
        return;
    case PS_FROM_SUBQUERY:
        put(b, "(sub ");
        put_select(b, f->subquery);
        if (f->alias != NULL) {
            put(b, " as %s", f->alias);
        }
        put_names(b, f->col_aliases);
        put(b, ")");
        return;
    case PS_FROM_FUNCTION:
        put(b, "(tablefunc %s", f->name);
        put_exprs(b, f->args);
        if (f->alias != NULL) {
            put(b, " as %s", f->alias);
        }
        put_names(b, f->col_aliases);
        put(b, ")");
        return;
    case PS_FROM_JOIN:
        put(b, "(%sjoin-%s ", f->natural ? "natural-" : "", joins[f->join_type]);
        put_from(b, f->left);
        put(b, " ");
        put_from(b, f->right);
        if (f->on != NULL) {
            put(b, " :on ");
            put_expr(b, f->on);
        }
        if (f->using_cols != NULL) {
            put(b, " :using");
            put_names(b, f->using_cols);
        }
        put(b, ")");
        return;
    }
}

static void put_group(Buf *b, const PsSelect *s)
{
    static const char *const kinds[] = {"plain", "rollup", "cube", "sets"};
    put(b, " :group %s (", kinds[s->group_kind]);
    for (int idx = 0; idx < s->group_by->n; idx++) {
        if (s->group_kind != PS_GROUP_SETS) {
            put(b, "%s", idx > 0 ? " " : "");
            put_expr(b, s->group_by->items[idx]);
            continue;
        }
        const PsList *set = s->group_by->items[idx];
        put(b, "%s(", idx > 0 ? " " : "");
        for (int e_idx = 0; e_idx < set->n; e_idx++) {
            put(b, "%s", e_idx > 0 ? " " : "");
            put_expr(b, set->items[e_idx]);
        }
        put(b, ")");
    }
    put(b, ")");
}

static void put_simple(Buf *b, const PsSelect *s)
{
    put(b, "(select%s (", s->distinct ? " distinct" : "");
    for (int idx = 0; idx < s->targets->n; idx++) {
        const PsTarget *t = s->targets->items[idx];
        put(b, "%s%s", idx > 0 ? " " : "", t->alias ? "(as " : "");
        put_expr(b, t->expr);
        if (t->alias != NULL) {
            put(b, " %s)", t->alias);
        }
    }
    put(b, ")");
    if (s->from != NULL) {
        put(b, " :from ");
        put_from(b, s->from);
    }
    if (s->where != NULL) {
        put(b, " :where ");
        put_expr(b, s->where);
    }
    if (s->group_by != NULL) {
        put_group(b, s);
    }
    if (s->having != NULL) {
        put(b, " :having ");
        put_expr(b, s->having);
    }
}

static void put_tail(Buf *b, const PsSelect *s)
{
    if (s->with != NULL) {
        put(b, " :with%s (", s->recursive ? "-recursive" : "");
        for (int idx = 0; idx < s->with->n; idx++) {
            const PsCte *c = s->with->items[idx];
            put(b, "%s(%s", idx > 0 ? " " : "", c->name);
            put_names(b, c->col_names);
            put(b, " ");
            put_select(b, c->select);
            put(b, ")");
        }
        put(b, ")");
    }
    if (s->order_by != NULL) {
        put(b, " :order ");
        put_order(b, s->order_by);
    }
    if (s->limit != NULL) {
        put(b, " :limit ");
        put_expr(b, s->limit);
    }
    if (s->offset != NULL) {
        put(b, " :offset ");
        put_expr(b, s->offset);
    }
    put(b, ")");
}

static void put_select(Buf *b, const PsSelect *s)
{
    static const char *const ops[] = {"union", "intersect", "except"};
    switch (s->kind) {
    case PS_SEL_SIMPLE:
        put_simple(b, s);
        break;
    case PS_SEL_SETOP:
        put(b, "(%s%s ", ops[s->setop], s->all ? "-all" : "");
        put_select(b, s->left);
        put(b, " ");
        put_select(b, s->right);
        break;
    case PS_SEL_VALUES:
        put(b, "(values");
        for (int idx = 0; idx < s->rows->n; idx++) {
            const PsList *row = s->rows->items[idx];
            put(b, " (");
            for (int col_idx = 0; col_idx < row->n; col_idx++) {
                put(b, "%s", col_idx > 0 ? " " : "");
                put_expr(b, row->items[col_idx]);
            }
            put(b, ")");
        }
        break;
    }
    put_tail(b, s);
}

static void put_options(Buf *b, const PsList *options)
{
    if (options == NULL) {
        return;
    }
    put(b, " :options (");
    for (int idx = 0; idx < options->n; idx++) {
        const PsOption *o = options->items[idx];
        put(b, "%s(%s", idx > 0 ? " " : "", o->name);
        if (o->value != NULL) {
            put(b, " ");
            put_expr(b, o->value);
        }
        put(b, ")");
    }
    put(b, ")");
}

static void put_create_table(Buf *b, const PsStmt *st)
{
    put(b, "(create-table%s%s %s", st->temporary ? " temp" : "",
        st->if_not_exists ? " if-not-exists" : "", st->name);
    for (int idx = 0; st->columns != NULL && idx < st->columns->n; idx++) {
        const PsColumnDef *c = st->columns->items[idx];
        put(b, " (%s ", c->name);
        put_type(b, c->type);
        put(b, "%s%s", c->not_null ? " not-null" : "", c->primary_key ? " pk" : "");
        if (c->default_value != NULL) {
            put(b, " :default ");
            put_expr(b, c->default_value);
        }
        put(b, ")");
    }
    if (st->primary_key != NULL) {
        put(b, " :pk %s", st->primary_key);
    }
    if (st->select != NULL) {
        put(b, " :as ");
        put_select(b, st->select);
    }
    put(b, ")");
}

static void put_dml(Buf *b, const PsStmt *st)
{
    switch (st->kind) {
    case PS_ST_INSERT:
        put(b, "(insert ");
        put_schema(b, &st->schema);
        put(b, "%s", st->table);
        put_names(b, st->columns);
        put(b, " ");
        if (st->select == NULL) {
            put(b, "default-values");
        } else {
            put_select(b, st->select);
        }
        break;
    case PS_ST_UPDATE:
        put(b, "(update %s", st->table);
        for (int idx = 0; idx < st->sets->n; idx++) {
            const PsSetClause *s = st->sets->items[idx];
            put(b, " (set %s ", s->column);
            put_expr(b, s->value);
            put(b, ")");
        }
        break;
    case PS_ST_DELETE:
        put(b, "(delete %s", st->table);
        break;
    default: /* COPY */
        put(b, "(copy ");
        if (st->select != NULL) {
            put_select(b, st->select);
        } else {
            put(b, "%s", st->table);
            put_names(b, st->columns);
        }
        put(b, " %s ", st->is_to ? "to" : "from");
        put_string(b, st->path, (int64_t)strlen(st->path));
        put_options(b, st->options);
        break;
    }
    if (st->where != NULL) {
        put(b, " :where ");
        put_expr(b, st->where);
    }
    put(b, ")");
}

static void put_stmt(Buf *b, const PsStmt *st)
{
    switch (st->kind) {
    case PS_ST_SELECT:
        put_select(b, st->select);
        return;
    case PS_ST_CREATE_TABLE:
        put_create_table(b, st);
        return;
    case PS_ST_CREATE_VIEW:
        put(b, "(create-view%s%s %s", st->temporary ? " temp" : "",
            st->if_not_exists ? " if-not-exists" : "", st->name);
        put_names(b, st->columns);
        put(b, " ");
        put_select(b, st->select);
        put(b, ")");
        return;
    case PS_ST_CREATE_INDEX:
        put(b, "(create-%sindex%s %s %s", st->unique ? "unique-" : "",
            st->if_not_exists ? " if-not-exists" : "", st->name, st->table);
        put_names(b, st->columns);
        put(b, ")");
        return;
    case PS_ST_DROP:
        put(b, "(drop %s%s %s)", st->object, st->if_exists ? " if-exists" : "", st->name);
        return;
    case PS_ST_SET:
        put(b, "(set %s ", st->name);
        put_expr(b, st->value);
        put(b, ")");
        return;
    case PS_ST_RESET:
        put(b, "(reset %s)", st->name);
        return;
    case PS_ST_EXPLAIN:
        put(b, "(explain%s", st->analyze ? " analyze" : "");
        put_options(b, st->options);
        put(b, " ");
        put_stmt(b, st->inner);
        put(b, ")");
        return;
    case PS_ST_BEGIN:
        put(b, "(begin)");
        return;
    case PS_ST_COMMIT:
        put(b, "(commit)");
        return;
    case PS_ST_ROLLBACK:
        put(b, "(rollback)");
        return;
    default:
        put_dml(b, st);
        return;
    }
}

/* Copies the buffer into the arena and frees it. */
static const char *finish(CmArena *arena, Buf *b)
{
    const char *out = cm_arena_strdup(arena, b->data != NULL ? b->data : "");
    cm_free(b->data);
    return out;
}

const char *dump_stmt(CmArena *arena, const PsStmt *stmt)
{
    Buf b = {NULL, 0, 0};
    put_stmt(&b, stmt);
    return finish(arena, &b);
}

const char *dump_expr(CmArena *arena, const PsExpr *expr)
{
    Buf b = {NULL, 0, 0};
    put_expr(&b, expr);
    return finish(arena, &b);
}
