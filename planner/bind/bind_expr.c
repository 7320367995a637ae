/*
 * bind_expr.c - binding of expressions: names to column indexes, operators to
 * kernels, implicit casts made explicit, constant subtrees folded.
 *
 * After aggregation (ctx->agg set) an expression may only use group keys and
 * aggregates: any subtree equal to a group key becomes a reference to that
 * key's column, each aggregate call becomes a reference to its output column,
 * and a bare column that is neither is an error.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/datetime.h"
#include "common/value.h"
#include "executor/func.h"
#include "planner/bind/binder_int.h"
#include "planner/bind/functions.h"

static ExExpr *fail(PlBindCtx *ctx, CmStatus code, int64_t off, const char *msg, const char *arg)
{
    cm_err_set(ctx->b->err, code, off, msg, arg);
    return NULL;
}

const char *pl_source_text(PlBinder *b, int64_t off, int64_t len)
{
    if (off < 0 || len <= 0) {
        return "?";
    }
    return cm_arena_strndup(b->arena, b->sql + off, (size_t)len);
}

static ExExpr **new_args(PlBinder *b, int n)
{
    ExExpr **args = cm_arena_zalloc(b->arena, sizeof(ExExpr *) * (size_t)(n ? n : 1));
    if (args == NULL) {
        cm_err_set(b->err, CM_OOM, -1, "out of memory");
    }
    return args;
}

/* Replaces a node whose inputs are all constants by its value, when it
 * evaluates without error (an error is left for run time, where the row may
 * never be reached). */
static ExExpr *fold(PlBinder *b, ExExpr *e)
{
    if (e == NULL || e->kind == EX_E_CONST || e->kind == EX_E_COLUMN) {
        return e;
    }
    /* A function of an operand that already failed fails too (CASE, AND and OR
     * may not evaluate it): not trying again keeps a long chain linear. */
    for (int i = 0; e->kind == EX_E_FUNC && i < e->n_args; i++) {
        if (e->args[i]->fold_failed) {
            e->fold_failed = true;
            return e;
        }
    }
    if (!ex_expr_is_constant(e)) {
        return e;
    }
    CmErr trial;
    cm_err_init(&trial);
    CmValue v;
    if (ex_expr_eval_const(e, b->arena, &v, &trial) != CM_OK) {
        /* left for run time, where it fails with its position; but a fold that
         * ran out of memory would bind differently (a key that no longer
         * matches its folded twin), so that is an error now */
        if (pl_trial_oom(b, &trial)) {
            return NULL;
        }
        e->fold_failed = true;
        return e;
    }
    v.type = e->type;
    ExExpr *c = ex_expr_const(b->arena, &v);
    if (c != NULL) {
        c->src_off = e->src_off;
    }
    return c ? c : e;
}

/* A string cast to another string type: the bytes stay as they are (lengths
 * are not enforced here, as in DuckDB), but a wider type is taken on, so that
 * a UNION or CASE of CHAR(1) and 'longer' is not typed CHAR(1) while holding
 * 'longer' (the aggregate and the store read declared lengths).  A narrower
 * one is not: e's own type stays the truthful one. */
static ExExpr *relabel_string(PlBinder *b, ExExpr *e, CmType to)
{
    bool is_wider = to.length < 0 ? e->type.length >= 0 || e->type.is_char != to.is_char
                                  : e->type.length >= 0 && to.length > e->type.length;
    if (!is_wider) {
        return e;
    }
    ExExpr *c = cm_arena_alloc(b->arena, sizeof *c);
    if (c == NULL) {
        cm_err_set(b->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    *c = *e;
    c->type = to;
    if (c->kind == EX_E_CONST && !c->value.is_null) {
        c->value.type = to;
    }
    return c;
}

ExExpr *pl_cast(PlBinder *b, ExExpr *e, CmType to, int64_t off)
{
    if (e == NULL) {
        return NULL;
    }
    if (cm_type_eq(e->type, to) && !(to.id == CM_T_VARCHAR && e->type.length != to.length)) {
        return e;
    }
    if (e->type.id == CM_T_VARCHAR && to.id == CM_T_VARCHAR) {
        return relabel_string(b, e, to);
    }
    int64_t exact;
    if (e->kind == EX_E_CONST && e->name != NULL && cm_type_is_integer(to) &&
        !cm_parse_int64_round(e->name, strlen(e->name), &exact)) {
        /* The literal's own digits are out of range, whatever its double says. */
        char to_name[32];
        cm_err_set(b->err, CM_RUNTIME, off, "value %s is out of range for type %s", e->name,
                   cm_type_name(to, to_name, sizeof to_name));
        return NULL;
    }
    ExKernel k = ex_cast_kernel(e->type, to);
    if (k == NULL) {
        char from_name[32], to_name[32];
        cm_err_set(b->err, CM_TYPE, off, "cannot cast %s to %s",
                   cm_type_name(e->type, from_name, sizeof from_name),
                   cm_type_name(to, to_name, sizeof to_name));
        return NULL;
    }
    ExExpr **args = new_args(b, 1);
    if (args == NULL) {
        return NULL;
    }
    args[0] = e;
    ExExpr *c = ex_expr_func(b->arena, "cast", k, to, 1, args);
    if (c == NULL) {
        cm_err_set(b->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    c->src_off = off;
    return fold(b, c);
}

/* A string constant meets a typed value ('abc' compared with an INTEGER
 * column): it is converted once, here, and when it does not convert that is
 * the error, at the constant, as in PostgreSQL and DuckDB; a cast left for
 * run time would fail only if a row reached it, and a comparison made between
 * strings would be quietly false (docs/conformance.md). */
ExExpr *pl_cast_implicit(PlBinder *b, ExExpr *e, CmType to, int64_t off)
{
    if (e != NULL && e->kind == EX_E_CONST && e->type.id == CM_T_VARCHAR && !e->value.is_null &&
        to.id != CM_T_VARCHAR && to.id != CM_T_NULL) {
        CmErr probe;
        cm_err_init(&probe);
        CmValue v;
        if (ex_cast_value(&e->value, to, b->arena, &v, &probe) != CM_OK) {
            cm_err_set(b->err, probe.code, e->src_off >= 0 ? e->src_off : off, "%s", probe.msg);
            return NULL;
        }
    }
    return pl_cast(b, e, to, off);
}

/* now() and its synonyms: one constant for the whole statement, as DuckDB's
 * transaction-start time, however many calls and rows read it. */
static bool is_now(const char *name, int n)
{
    return n == 0 &&
           (!strcmp(name, "now") || !strcmp(name, "current_timestamp") ||
            !strcmp(name, "get_current_timestamp") || !strcmp(name, "transaction_timestamp"));
}

/* A DATE compared with a TIMESTAMP constant at midnight (DATE '1998-12-01' -
 * INTERVAL 90 DAY) is compared with that day instead: the same answer, and
 * the DATE column keeps its fast comparison and its scan filter. */
static void date_cmp_midnight(PlBinder *b, const char *name, ExExpr **in, int n)
{
    static const char *const CMP[] = {"=", "<>", "<", "<=", ">", ">="};
    bool is_cmp = false;
    for (size_t i = 0; n == 2 && i < sizeof CMP / sizeof CMP[0]; i++) {
        is_cmp |= !strcmp(name, CMP[i]);
    }
    for (int i = 0; is_cmp && i < 2; i++) {
        ExExpr *c = in[i];
        int32_t days;
        int64_t t;
        if (in[1 - i]->type.id != CM_T_DATE || c->kind != EX_E_CONST ||
            c->type.id != CM_T_TIMESTAMP || c->value.is_null) {
            continue;
        }
        cm_ts_split(c->value.i, &days, &t);
        CmValue v = {.type = cm_type_make(CM_T_DATE), .i = days};
        ExExpr *d = t == 0 ? ex_expr_const(b->arena, &v) : NULL;
        if (d != NULL) {
            d->src_off = c->src_off;
            in[i] = d;
        }
    }
}

ExExpr *pl_make_call(PlBinder *b, const char *name, ExExpr **caller_in, int n, int64_t off)
{
    CmType types[EX_FUNC_MAX_ARGS] = {{0}};
    /* An argument its caller failed to make (out of memory) is the call's failure. */
    for (int i = 0; i < n; i++) {
        if (caller_in[i] == NULL) {
            if (b->err->code == CM_OK) {
                cm_err_set(b->err, CM_OOM, -1, "out of memory");
            }
            return NULL;
        }
    }
    /* The comparison may swap a constant for its DATE (date_cmp_midnight) in
     * its own copy: callers reuse their arguments (nullif(a, b) returns a),
     * and must get them unchanged. */
    ExExpr *cmp_in[2];
    ExExpr **in = caller_in;
    if (n == 2) {
        cmp_in[0] = caller_in[0];
        cmp_in[1] = caller_in[1];
        in = cmp_in;
        date_cmp_midnight(b, name, in, n);
    }
    if (is_now(name, n)) {
        if (!b->has_now) {
            b->now_us = cm_ts_now();
            b->has_now = true;
        }
        CmValue v = {.type = cm_type_make(CM_T_TIMESTAMP), .i = b->now_us};
        ExExpr *e = ex_expr_const(b->arena, &v);
        if (e == NULL) {
            cm_err_set(b->err, CM_OOM, -1, "out of memory");
            return NULL;
        }
        e->src_off = off;
        return e;
    }
    if (n > EX_FUNC_MAX_ARGS) {
        cm_err_set(b->err, CM_BIND, off, "too many arguments to %s", name);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        types[i] = in[i]->type;
    }
    ExFuncMatch m;
    if (ex_func_resolve(name, n, types, off, &m, b->err) != CM_OK) {
        return NULL;
    }
    ExExpr **args = new_args(b, n);
    if (args == NULL) {
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        args[i] = pl_cast_implicit(b, in[i], m.arg_types[i], off);
        if (args[i] == NULL) {
            return NULL;
        }
    }
    if (m.swap_args) {
        ExExpr *first = args[0];
        args[0] = args[1];
        args[1] = first;
    }
    ExExpr *e = ex_expr_func(b->arena, name, m.kernel, m.result, n, args);
    if (e == NULL) {
        cm_err_set(b->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    e->aux = m.aux;
    e->src_off = off;
    e->is_volatile = m.is_volatile;
    if (m.prepare != NULL && m.prepare(b->arena, e, b->err) != CM_OK) {
        return NULL;
    }
    return fold(b, e);
}

static ExExpr *make_logic(PlBinder *b, ExExprKind kind, ExExpr *l, ExExpr *r, int64_t off);

ExExpr *pl_make_and(PlBinder *b, ExExpr *l, ExExpr *r)
{
    return make_logic(b, EX_E_AND, l, r, l->src_off);
}

ExExpr *pl_make_or(PlBinder *b, ExExpr *l, ExExpr *r)
{
    return make_logic(b, EX_E_OR, l, r, l->src_off);
}

/* A three-valued AND/OR of in[0..n), each cast to BOOLEAN, folded when all are
 * constant.  An operand that is itself an AND (OR) of the same kind is taken
 * apart, so that chains of any length stay one node: evaluation and every walk
 * over the tree then recurse only as deep as the operators alternate. */
static ExExpr *make_logic_n(PlBinder *b, ExExprKind kind, ExExpr **in, int n, int64_t off)
{
    CmType t = cm_type_make(CM_T_BOOL);
    int n_args = 0;
    for (int i = 0; i < n; i++) {
        n_args += in[i]->kind == kind ? in[i]->n_args : 1;
    }
    ExExpr **args = new_args(b, n_args);
    if (args == NULL) {
        return NULL;
    }
    int pos = 0;
    for (int i = 0; i < n; i++) {
        if (in[i]->kind == kind) {
            memcpy(args + pos, in[i]->args, sizeof(ExExpr *) * (size_t)in[i]->n_args);
            pos += in[i]->n_args;
        } else {
            args[pos] = pl_cast(b, in[i], t, off);
            if (args[pos++] == NULL) {
                return NULL;
            }
        }
    }
    ExExpr *e = cm_arena_zalloc(b->arena, sizeof *e);
    if (e == NULL) {
        cm_err_set(b->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    e->kind = kind;
    e->type = t;
    e->n_args = n_args;
    e->args = args;
    e->src_off = off;
    return fold(b, e);
}

static ExExpr *make_logic(PlBinder *b, ExExprKind kind, ExExpr *l, ExExpr *r, int64_t off)
{
    ExExpr *in[2] = {l, r};
    return make_logic_n(b, kind, in, 2, off);
}

/* ---- literals ------------------------------------------------------------------ */

static ExExpr *bind_number(PlBindCtx *ctx, const PsExpr *ast)
{
    CmValue v;
    memset(&v, 0, sizeof v);
    const char *s = ast->str;
    size_t len = strlen(s);
    const char *dot = strchr(s, '.');
    bool has_exp = strpbrk(s, "eE") != NULL;
    if (!has_exp) {
        size_t digits = 0, frac = 0;
        for (const char *p = s; *p; p++) {
            if (*p >= '0' && *p <= '9') {
                digits++;
                frac += dot != NULL && p > dot;
            }
        }
        int scale = (int)frac;
        int precision = (int)digits > scale ? (int)digits : scale + 1;
        if (digits <= 18) {
            if (cm_parse_decimal(s, len, precision, scale, &v.i)) {
                v.type = cm_type_decimal(precision, scale);
                return ex_expr_const(ctx->b->arena, &v);
            }
        } else if (precision <= 38) {
            /* An integer past BIGINT is DuckDB's HUGEINT, spelled DECIMAL(38,0)
             * here; a number with a point keeps its digits, as DuckDB does. */
            precision = dot == NULL ? 38 : precision;
            CmInt128 x;
            if (cm_parse_decimal128(s, len, precision, scale, &x)) {
                cm_i128_put(v.h, x);
                v.type = cm_type_decimal(precision, scale);
                return ex_expr_const(ctx->b->arena, &v);
            }
        }
    }
    if (!cm_parse_double(s, len, &v.d)) {
        return fail(ctx, CM_SYNTAX, ast->src_off, "invalid number '%s'", s);
    }
    /* Numbers past DECIMAL(38) and those with an exponent read as a DOUBLE, as
     * in DuckDB.  The text
     * stays with the constant for pl_cast: rounded to a double,
     * -9223372036854775809 would pass for the smallest BIGINT. */
    v.type = cm_type_make(CM_T_DOUBLE);
    ExExpr *e = ex_expr_const(ctx->b->arena, &v);
    if (e != NULL) {
        e->name = s;
    }
    return e;
}

/* INTERVAL '3' DAY, INTERVAL 3 DAYS: a whole count (signed) of the unit. */
static bool interval_with_unit(PlBindCtx *ctx, const PsExpr *ast, CmValue *v)
{
    int64_t n;
    v->type = cm_type_make(CM_T_INTERVAL);
    if (!cm_parse_int64(ast->str, strlen(ast->str), &n) ||
        !cm_interval_of_unit(n, ast->name, strlen(ast->name), &v->iv)) {
        cm_err_set(ctx->b->err, CM_RUNTIME, ast->src_off, "could not convert '%s' %s to INTERVAL",
                   ast->str, ast->name);
        return false;
    }
    return true;
}

static ExExpr *bind_literal(PlBindCtx *ctx, const PsExpr *ast)
{
    CmValue v;
    memset(&v, 0, sizeof v);
    switch (ast->kind) {
    case PS_EX_INT:
        v.i = ast->ival;
        v.type = cm_type_make(ast->ival >= INT32_MIN && ast->ival <= INT32_MAX ? CM_T_INT32
                                                                               : CM_T_INT64);
        break;
    case PS_EX_NUMBER: {
        ExExpr *e = bind_number(ctx, ast);
        if (e != NULL) {
            e->src_off = ast->src_off;
        }
        return e;
    }
    case PS_EX_STRING:
        v.type = cm_type_varchar(-1, false);
        v.s = cm_str_make(ast->str, (uint32_t)ast->str_len);
        break;
    case PS_EX_NULL:
        v.type = cm_type_make(CM_T_NULL);
        v.is_null = true;
        break;
    case PS_EX_BOOL:
        v.type = cm_type_make(CM_T_BOOL);
        v.i = ast->ival != 0;
        break;
    case PS_EX_TYPED: {
        CmType t;
        if (pl_type_from_ast(ast->type, &t, ctx->b->err) != CM_OK) {
            return NULL;
        }
        if (t.id == CM_T_INTERVAL && ast->name != NULL) {
            if (!interval_with_unit(ctx, ast, &v)) {
                return NULL;
            }
            break;
        }
        CmValue s = {.type = cm_type_varchar(-1, false)};
        s.s = cm_str_make(ast->str, (uint32_t)strlen(ast->str));
        if (ex_cast_value(&s, t, ctx->b->arena, &v, ctx->b->err) != CM_OK) {
            ctx->b->err->off = ast->src_off;
            return NULL;
        }
        break;
    }
    default:
        return NULL;
    }
    ExExpr *e = ex_expr_const(ctx->b->arena, &v);
    if (e != NULL) {
        e->src_off = ast->src_off;
    }
    return e;
}

/* A parameter: a constant of its bound value's type, copied into the query
 * arena (the caller may bind anew once the statement has run). */
static ExExpr *bind_param(PlBindCtx *ctx, const PsExpr *ast)
{
    const PlParams *p = ctx->b->params;
    int64_t idx = ast->ival;
    if (p == NULL || idx > p->n || !p->is_bound[idx - 1]) {
        cm_err_set(ctx->b->err, CM_BIND, ast->src_off, "parameter $%d has no value bound",
                   (int)idx);
        return NULL;
    }
    CmValue v = p->values[idx - 1];
    if (v.type.id == CM_T_VARCHAR && !v.is_null) {
        char *copy = cm_arena_alloc(ctx->b->arena, v.s.len + 1u);
        if (copy == NULL) {
            return fail(ctx, CM_OOM, ast->src_off, "out of memory%s", "");
        }
        memcpy(copy, cm_str_data(&v.s), v.s.len);
        v.s = cm_str_make(copy, v.s.len);
    }
    ExExpr *e = ex_expr_const(ctx->b->arena, &v);
    if (e != NULL) {
        e->src_off = ast->src_off;
    }
    return e;
}

/* ---- names ------------------------------------------------------------------------ */

/* The place of enclosing column `found` (a group key when o->grouped) among
 * o's references, added on first use; -1 (error set) when there is no room. */
static int outer_index(PlBindCtx *ctx, PlOuter *o, int found, CmType t, int64_t off)
{
    int k = 0;
    while (k < o->n_refs && o->refs[k] != found) {
        k++;
    }
    if (k == o->n_refs) {
        if (k == PL_MAX_CORR || o->inject_offset >= 0) {
            fail(ctx, CM_LIMIT, off, "too many outer references in a subquery%s", "");
            return -1;
        }
        o->refs[o->n_refs] = found;
        o->types[o->n_refs++] = t;
    }
    return k;
}

/* Enclosing column `found` (a group key when o->grouped), seen from a
 * correlated subquery: while discovering, a typed NULL stands in; once the
 * outer values are joined into the subquery's FROM, their column there. */
static ExExpr *outer_ref(PlBindCtx *ctx, PlOuter *o, int found, CmType t, int64_t off)
{
    int k = outer_index(ctx, o, found, t, off);
    if (k < 0) {
        return NULL;
    }
    if (o->inject_offset < 0) {
        CmValue null = {.type = t, .is_null = true};
        return ex_expr_const(ctx->b->arena, &null);
    }
    ExExpr *e = ex_expr_column(ctx->b->arena, o->inject_offset + k, t);
    if (e != NULL) {
        e->src_off = off;
    }
    return e;
}

/* True when `sc` has a column that `ast` (a column reference) may name. */
static bool scope_has(const PlScope *sc, const PsExpr *ast)
{
    for (int i = 0; i < sc->n; i++) {
        const PlScopeCol *c = &sc->cols[i];
        if (!(c->hidden && ast->qualifier == NULL) && strcmp(c->name, ast->name) == 0 &&
            (ast->qualifier == NULL ||
             (c->table != NULL && strcmp(c->table, ast->qualifier) == 0))) {
            return true;
        }
    }
    return false;
}

/* True when `sc`, or with `chain` the scope of an enclosing query at any
 * level, has a column that `ast` may name. */
static bool names_found(const PlScope *sc, const PlOuter *chain, const PsExpr *ast)
{
    if (sc != NULL && scope_has(sc, ast)) {
        return true;
    }
    for (; chain != NULL; chain = chain->parent) {
        if (scope_has(chain->scope, ast)) {
            return true;
        }
    }
    return false;
}

/* Counts the column references in `ast` (not looking into subqueries), and
 * those of them `sc` (or `chain`, see names_found) has. */
static void count_names(const PlScope *sc, const PlOuter *chain, const PsExpr *ast, int *n,
                        int *n_found)
{
    if (ast == NULL) {
        return;
    }
    if (ast->kind == PS_EX_COLUMN) {
        (*n)++;
        *n_found += names_found(sc, chain, ast);
        return;
    }
    count_names(sc, chain, ast->left, n, n_found);
    count_names(sc, chain, ast->right, n, n_found);
    count_names(sc, chain, ast->escape, n, n_found);
    for (int i = 0; ast->args != NULL && i < ast->args->n; i++) {
        if (ast->kind == PS_EX_CASE) {
            const PsWhen *w = ast->args->items[i];
            count_names(sc, chain, w->cond, n, n_found);
            count_names(sc, chain, w->result, n, n_found);
        } else {
            count_names(sc, chain, ast->args->items[i], n, n_found);
        }
    }
}

/* True when `ast` names columns, all of the enclosing query (`outer`), none
 * of the subquery's own (`local`). */
static bool reads_only(const PlScope *local, const PlScope *outer, const PlOuter *chain,
                       const PsExpr *ast)
{
    int n = 0, n_local = 0, n_outer = 0;
    count_names(local, NULL, ast, &n, &n_local);
    n = 0;
    count_names(outer, chain, ast, &n, &n_outer);
    return n > 0 && n_local == 0 && n_outer == n;
}

static bool reads_only_outer(const PlScope *local, const PlScope *outer, const PsExpr *ast)
{
    return reads_only(local, outer, NULL, ast);
}

/* As reads_only_outer, where the enclosing columns may be of any level out. */
static bool reads_only_enclosing(const PlScope *local, const PlOuter *o, const PsExpr *ast)
{
    return reads_only(local, NULL, o, ast);
}

/* After the enclosing query's aggregation: `ast`, which reads only enclosing
 * columns, as the group key it equals; *matched false (no error) when it
 * equals none. */
static ExExpr *grouped_outer(PlBindCtx *ctx, const PsExpr *ast, bool *matched)
{
    PlOuter *o = ctx->b->outer;
    *matched = false;
    PlBindCtx m = {.b = ctx->b, .scope = o->scope, .clause = ctx->clause};
    CmErr probe;
    cm_err_init(&probe);
    CmErr *saved_err = ctx->b->err;
    ctx->b->outer = NULL;
    ctx->b->err = &probe;
    ExExpr *e = pl_bind_expr(&m, ast);
    ctx->b->err = saved_err;
    ctx->b->outer = o;
    if (pl_trial_oom(ctx->b, &probe)) {
        return NULL;
    }
    for (int k = 0; e != NULL && k < o->grouped->n_keys; k++) {
        if (pl_expr_equal(e, o->grouped->keys[k])) {
            *matched = true;
            return outer_ref(ctx, o, k, o->grouped->keys[k]->type, ast->src_off);
        }
    }
    return NULL;
}

/* The column of `sc` that `ast` (a column reference) names: -1 when none,
 * -2 (error set) when two do. */
static int scope_column(PlBindCtx *ctx, const PlScope *sc, const PsExpr *ast)
{
    int found = -1;
    for (int i = 0; i < sc->n; i++) {
        const PlScopeCol *c = &sc->cols[i];
        if ((c->hidden && ast->qualifier == NULL) || strcmp(c->name, ast->name) != 0 ||
            (ast->qualifier != NULL &&
             (c->table == NULL || strcmp(c->table, ast->qualifier) != 0))) {
            continue;
        }
        if (found >= 0) {
            fail(ctx, CM_BIND, ast->src_off, "ambiguous column name '%s'", ast->name);
            return -2;
        }
        found = i;
    }
    return found;
}

/* Column `at` of o's enclosing query as the reference o keeps: itself, or
 * after that query's aggregation the group key it equals (-2, error set, when
 * it equals none). */
static int outer_key_of(PlBindCtx *ctx, const PlOuter *o, int at, CmType t, const PsExpr *ast)
{
    if (o->grouped == NULL) {
        return at;
    }
    ExExpr *c = ex_expr_column(ctx->b->arena, at, t);
    for (int k = 0; c != NULL && k < o->grouped->n_keys; k++) {
        if (pl_expr_equal(c, o->grouped->keys[k])) {
            return k;
        }
    }
    if (c == NULL) {
        cm_err_set(ctx->b->err, CM_OOM, -1, "out of memory");
        return -2;
    }
    fail(ctx, CM_BIND, ast->src_off,
         "column '%s' must appear in the GROUP BY clause or be used in an aggregate function",
         ast->name);
    return -2;
}

/* A column of a query two or more levels out, as a column of o->scope.  The
 * query in between (o's enclosing one) is a correlated subquery itself: the
 * value becomes its outer reference k, which is joined into its FROM at
 * parent->inject_offset + k.  -1 when no query out there has the name, -2 on
 * an error; *discovering while the query in between is still learning its
 * references, before its outer values are joined (its NULL stand-in then). */
static int carried_column(PlBindCtx *ctx, PlOuter *o, const PsExpr *ast, CmType *t,
                          bool *discovering)
{
    PlOuter *p = o->parent;
    if (p == NULL) {
        return -1;
    }
    int at = scope_column(ctx, p->scope, ast);
    if (at >= 0) {
        *t = p->scope->cols[at].type;
    } else if (at == -1) {
        at = carried_column(ctx, p, ast, t, discovering);
        if (*discovering) {
            return at;
        }
    }
    if (at < 0) {
        return at;
    }
    int ref = outer_key_of(ctx, p, at, *t, ast);
    if (ref < 0) {
        return ref;
    }
    if (p->grouped != NULL) {
        *t = p->grouped->keys[ref]->type;
    }
    int k = outer_index(ctx, p, ref, *t, ast->src_off);
    if (k < 0) {
        return -2;
    }
    if (p->inject_offset < 0) {
        *discovering = true;
        return 0;
    }
    return p->inject_offset + k;
}

/* A column of an enclosing query, seen from a correlated subquery.  NULL (no
 * error) when not found. */
static ExExpr *bind_outer_column(PlBindCtx *ctx, const PsExpr *ast)
{
    PlOuter *o = ctx->b->outer;
    int at = scope_column(ctx, o->scope, ast);
    if (at == -1) {
        CmType t;
        bool discovering = false;
        at = carried_column(ctx, o, ast, &t, &discovering);
        if (at >= 0 && discovering) {
            CmValue null = {.type = t, .is_null = true};
            return ex_expr_const(ctx->b->arena, &null);
        }
    }
    if (at < 0) {
        return NULL;
    }
    CmType t = o->scope->cols[at].type;
    int ref = outer_key_of(ctx, o, at, t, ast);
    if (ref < 0) {
        return NULL;
    }
    return outer_ref(ctx, o, ref, o->grouped ? o->grouped->keys[ref]->type : t, ast->src_off);
}

static ExExpr *bind_column(PlBindCtx *ctx, const PsExpr *ast)
{
    if (pl_check_schema(&ast->schema, ctx->b->err) != CM_OK) {
        return NULL;
    }
    const PlScope *sc = ctx->scope;
    int found = -1;
    bool table_seen = ast->qualifier == NULL;
    for (int i = 0; i < sc->n; i++) {
        const PlScopeCol *c = &sc->cols[i];
        if (c->hidden && ast->qualifier == NULL) {
            continue;
        }
        if (ast->qualifier != NULL) {
            if (c->table == NULL || strcmp(c->table, ast->qualifier) != 0) {
                continue;
            }
            table_seen = true;
        }
        if (strcmp(c->name, ast->name) != 0) {
            continue;
        }
        if (found >= 0) {
            return fail(ctx, CM_BIND, ast->src_off, "ambiguous column name '%s'", ast->name);
        }
        found = i;
    }
    if (found < 0 && ctx->b->outer != NULL) {
        ExExpr *outer = bind_outer_column(ctx, ast);
        if (outer != NULL || ctx->b->err->code != CM_OK) {
            return outer;
        }
    }
    if (found < 0 && ast->qualifier == NULL &&
        (strcmp(ast->name, "current_date") == 0 || strcmp(ast->name, "current_timestamp") == 0)) {
        /* SQL writes these without parentheses; a column of that name wins */
        return pl_make_call(ctx->b, ast->name, NULL, 0, ast->src_off);
    }
    if (found < 0) {
        /* `t.nosuch` where t is an enclosing query's table: the column is what is unknown */
        for (const PlOuter *o = ctx->b->outer; !table_seen && o != NULL; o = o->parent) {
            for (int i = 0; !table_seen && i < o->scope->n; i++) {
                const char *table = o->scope->cols[i].table;
                table_seen = table != NULL && strcmp(table, ast->qualifier) == 0;
            }
        }
        if (!table_seen) {
            return fail(ctx, CM_BIND, ast->src_off, "unknown table '%s'", ast->qualifier);
        }
        return fail(ctx, CM_BIND, ast->src_off, "unknown column '%s'", ast->name);
    }
    if (ctx->leaf_refs != NULL) {
        *ctx->leaf_refs |= ctx->js ? pl_join_leaves_of(ctx->js, &found, 1) : ~(uint64_t)0;
    }
    ExExpr *e = ex_expr_column(ctx->b->arena, found, sc->cols[found].type);
    if (e != NULL) {
        e->src_off = ast->src_off;
    }
    return e;
}

/* ---- aggregates ------------------------------------------------------------------ */

static int agg_fn_of(const char *name, bool star)
{
    const PlFunc *f = pl_func_find(name, PL_FUNC_AGGREGATE);
    if (f == NULL) {
        return -1;
    }
    return star && strcmp(name, "count") == 0 ? EX_AGG_COUNT_STAR : f->code;
}

/* The first node of `ast` (not looking into subqueries) that satisfies is(), or NULL. */
static const PsExpr *ast_find(const PsExpr *ast, bool (*is)(const PsExpr *))
{
    /* `left` by iteration: a chain of operators is as deep as it is long */
    for (; ast != NULL; ast = ast->left) {
        const PsExpr *hit;
        if (is(ast)) {
            return ast;
        }
        if ((hit = ast_find(ast->right, is)) != NULL) {
            return hit;
        }
        for (int i = 0; ast->args != NULL && i < ast->args->n; i++) {
            if (ast->kind == PS_EX_CASE) {
                const PsWhen *w = ast->args->items[i];
                if ((hit = ast_find(w->cond, is)) != NULL ||
                    (hit = ast_find(w->result, is)) != NULL) {
                    return hit;
                }
            } else if ((hit = ast_find(ast->args->items[i], is)) != NULL) {
                return hit;
            }
        }
    }
    return NULL;
}

static bool ast_any(const PsExpr *ast, bool (*is)(const PsExpr *))
{
    return ast_find(ast, is) != NULL;
}

static bool is_aggregate_call(const PsExpr *ast)
{
    return ast->kind == PS_EX_FUNC && agg_fn_of(ast->name, ast->star) >= 0 && ast->over == NULL;
}

bool pl_has_aggregate(const PsExpr *ast)
{
    return ast_any(ast, is_aggregate_call);
}

const PsExpr *pl_find_aggregate(const PsExpr *ast)
{
    return ast_find(ast, is_aggregate_call);
}

static CmType agg_result_type(ExAggFn fn, CmType arg)
{
    switch (fn) {
    case EX_AGG_COUNT_STAR:
    case EX_AGG_COUNT:
    case EX_AGG_APPROX_DISTINCT:
    case EX_AGG_SUM_COUNT:
        return cm_type_make(CM_T_INT64);
    case EX_AGG_AVG:
    case EX_AGG_VAR_SAMP:
    case EX_AGG_VAR_POP:
    case EX_AGG_STDDEV_SAMP:
    case EX_AGG_STDDEV_POP:
    case EX_AGG_QUANTILE_CONT:
        return cm_type_make(CM_T_DOUBLE);
    case EX_AGG_LIST:
        return cm_type_list(arg);
    case EX_AGG_SUM:
        /* DuckDB's sum of an integer is HUGEINT, spelled DECIMAL(38,0) here,
         * and of a DECIMAL(p,s) DECIMAL(38,s): 128 bits, never an overflow
         * short of 38 digits (hash_agg.c's sum_type, the same rule) */
        if (arg.id == CM_T_DOUBLE) {
            return arg;
        }
        return cm_type_decimal(38, cm_type_is_decimal(arg) ? arg.scale : 0);
    default:
        return arg;
    }
}

/* sum, avg and the variance family are defined for numbers only (and NULL):
 * a DATE, BOOLEAN or string argument is a type error at the call, as in
 * DuckDB and PostgreSQL, rather than a sum of day numbers or of 0/1. */
static bool agg_arg_is_numeric(PlBindCtx *ctx, const PsExpr *call, CmType arg)
{
    switch ((CmTypeId)arg.id) {
    case CM_T_NULL:
    case CM_T_INT32:
    case CM_T_INT64:
    case CM_T_DOUBLE:
    case CM_T_DECIMAL:
    case CM_T_DECIMAL128:
        return true;
    default:
        break;
    }
    char name[32];
    cm_err_set(ctx->b->err, CM_TYPE, call->src_off, "no function matches %s(%s)", call->name,
               cm_type_name(arg, name, sizeof name));
    return false;
}

/* Aggregates and window functions keep their values in scalar states: of a
 * LIST they take only count(x) (docs/conformance.md). */
static ExExpr *list_arg_fail(PlBindCtx *ctx, const PsExpr *call, CmType arg)
{
    char name[40];
    cm_err_set(ctx->b->err, CM_TYPE, call->src_off, "%s%s of a %s is not supported", call->name,
               call->distinct ? "(DISTINCT)" : "", cm_type_name(arg, name, sizeof name));
    return NULL;
}

static bool has_window(const PsExpr *ast);
static ExExpr *make_case(PlBinder *b, int n, ExExpr **args, bool has_else, int64_t off);

/* f(x) FILTER (WHERE c) is f(CASE WHEN c THEN x END): every aggregate skips
 * NULLs, and count(*) becomes count(CASE WHEN c THEN 1 END).  *fn is updated
 * for count(*) (count_star: the aggregate's or the window function's code). */
static ExExpr *filter_case(PlBindCtx *inner, const PsExpr *ast, ExExpr *arg, bool star)
{
    PlBindCtx where = *inner;
    where.clause = "FILTER";
    ExExpr *cond = pl_bind_expr(&where, ast->filter);
    if (cond != NULL) {
        cond = pl_cast(inner->b, cond, cm_type_make(CM_T_BOOL), ast->filter->src_off);
    }
    if (cond == NULL) {
        return NULL;
    }
    if (star) {
        CmValue one = {.type = cm_type_make(CM_T_INT64), .i = 1};
        arg = ex_expr_const(inner->b->arena, &one);
        if (arg == NULL) {
            cm_err_set(inner->b->err, CM_OOM, -1, "out of memory");
            return NULL;
        }
    }
    ExExpr *pair[2] = {cond, arg};
    ExExpr **args = new_args(inner->b, 2);
    if (args == NULL) {
        return NULL;
    }
    memcpy(args, pair, sizeof pair);
    return make_case(inner->b, 2, args, false, ast->src_off);
}

static ExExpr *filtered_arg(PlBindCtx *inner, const PsExpr *ast, ExExpr *arg, int *fn)
{
    bool star = *fn == EX_AGG_COUNT_STAR;
    if (star) {
        *fn = EX_AGG_COUNT;
    }
    return filter_case(inner, ast, arg, star);
}

static bool same_param(const CmValue *x, const CmValue *y)
{
    if (x->is_null || y->is_null) {
        return x->is_null == y->is_null;
    }
    return x->type.id == CM_T_VARCHAR ? cm_str_eq(&x->s, &y->s) : x->d == y->d;
}

/* The argument of a holistic aggregate (string_agg, median, quantile_*, mode),
 * cast to the type it is kept in, and its constant second argument into
 * *param: string_agg's separator (',' by default, as DuckDB and sqlite3's
 * group_concat), a quantile's fraction in [0, 1].  median is quantile_cont at
 * 0.5 over numbers, quantile_disc over other types (as DuckDB). */
/* fail() with any arguments. */
#define holistic_fail(ctx, code, off, ...) (cm_err_set((ctx)->b->err, code, off, __VA_ARGS__), NULL)

static ExExpr *bind_holistic(PlBindCtx *ctx, PlBindCtx *inner, const PsExpr *ast, int *fn,
                             CmValue *param, bool *is_time)
{
    bool is_median = strcmp(ast->name, "median") == 0;
    int n = ast->args ? ast->args->n : 0;
    bool is_one = *fn == EX_AGG_MODE || *fn == EX_AGG_LIST || is_median;
    int n_max = is_one ? 1 : 2;
    int n_min = is_one || *fn == EX_AGG_STRING_AGG ? 1 : 2;
    if (n < n_min || n > n_max) {
        return holistic_fail(ctx, CM_BIND, ast->src_off, "%s takes %s", ast->name,
                             n_max == 1   ? "exactly one argument"
                             : n_min == 2 ? "exactly two arguments"
                                          : "one or two arguments");
    }
    ExExpr *arg = pl_bind_expr(inner, ast->args->items[0]);
    if (arg == NULL) {
        return NULL;
    }
    if (n == 2) {
        const PsExpr *p_ast = ast->args->items[1];
        ExExpr *p = pl_bind_expr(inner, p_ast);
        if (p == NULL) {
            return NULL;
        }
        CmType want = cm_type_make(*fn == EX_AGG_STRING_AGG ? CM_T_VARCHAR : CM_T_DOUBLE);
        if (p->type.id != CM_T_NULL && (want.id == CM_T_DOUBLE) != cm_type_is_numeric(p->type) &&
            !(want.id == CM_T_VARCHAR && p->type.id == CM_T_VARCHAR)) {
            char tn[32];
            return holistic_fail(ctx, CM_TYPE, p_ast->src_off,
                                 "the second argument of %s must be %s, not %s", ast->name,
                                 want.id == CM_T_VARCHAR ? "a string" : "a number",
                                 cm_type_name(p->type, tn, sizeof tn));
        }
        p = pl_cast(ctx->b, p, want, p_ast->src_off);
        if (p == NULL) {
            return NULL;
        }
        if (p->kind != EX_E_CONST) {
            return holistic_fail(ctx, CM_BIND, p_ast->src_off,
                                 "the second argument of %s must be a "
                                 "constant",
                                 ast->name);
        }
        *param = p->value;
    } else {
        *param = (CmValue){.type = cm_type_make(CM_T_DOUBLE), .d = 0.5};
        if (*fn == EX_AGG_STRING_AGG) {
            *param = (CmValue){.type = cm_type_varchar(-1, false), .s = cm_str_make(",", 1)};
        }
    }
    if (*fn != EX_AGG_STRING_AGG && *fn != EX_AGG_MODE && !param->is_null &&
        !(param->d >= 0 && param->d <= 1)) {
        return holistic_fail(ctx, CM_RUNTIME, ((const PsExpr *)ast->args->items[1])->src_off,
                             "the quantile of %s must be between 0 and 1", ast->name);
    }
    if (*fn == EX_AGG_STRING_AGG) {
        return pl_cast(ctx->b, arg, cm_type_varchar(-1, false), ast->src_off);
    }
    bool is_number = cm_type_is_numeric(arg->type) || arg->type.id == CM_T_NULL;
    *is_time = *fn == EX_AGG_QUANTILE_CONT &&
               (arg->type.id == CM_T_DATE || arg->type.id == CM_T_TIMESTAMP);
    if (*is_time) {
        /* interpolated between microseconds, a TIMESTAMP again after (as DuckDB) */
        ExExpr *ts = pl_cast(ctx->b, arg, cm_type_make(CM_T_TIMESTAMP), ast->src_off);
        ExExpr *us = ts ? pl_make_call(ctx->b, "epoch_us", &ts, 1, ast->src_off) : NULL;
        return us ? pl_cast(ctx->b, us, cm_type_make(CM_T_DOUBLE), ast->src_off) : NULL;
    }
    if (*fn == EX_AGG_QUANTILE_CONT && !is_number) {
        if (!is_median) {
            char tn[32];
            return holistic_fail(ctx, CM_TYPE, ast->src_off, "no function matches %s(%s)",
                                 ast->name, cm_type_name(arg->type, tn, sizeof tn));
        }
        *fn = EX_AGG_QUANTILE_DISC;
    }
    if (*fn == EX_AGG_QUANTILE_CONT) {
        return pl_cast(ctx->b, arg, cm_type_make(CM_T_DOUBLE), ast->src_off);
    }
    return arg->type.id == CM_T_NULL ? pl_cast(ctx->b, arg, cm_type_make(CM_T_INT32), ast->src_off)
                                     : arg;
}

/* arg_min(x, y)/arg_max(x, y): x, and y in *by; y must be orderable (not a LIST). */
static ExExpr *bind_arg_by(PlBindCtx *ctx, PlBindCtx *inner, const PsExpr *ast, ExExpr **by)
{
    if (ast->args == NULL || ast->args->n != 2) {
        return fail(ctx, CM_BIND, ast->src_off, "%s takes exactly two arguments", ast->name);
    }
    ExExpr *x = pl_bind_expr(inner, ast->args->items[0]);
    ExExpr *y = x ? pl_bind_expr(inner, ast->args->items[1]) : NULL;
    if (y == NULL) {
        return NULL;
    }
    if (y->type.id == CM_T_LIST) {
        char tn[32], msg[96];
        snprintf(msg, sizeof msg, "%s cannot order by a %s", ast->name,
                 cm_type_name(y->type, tn, sizeof tn));
        return fail(ctx, CM_TYPE, ast->src_off, "%s", msg);
    }
    const PsExpr *ys = ast->args->items[1];
    *by = y->type.id == CM_T_NULL ? pl_cast(ctx->b, y, cm_type_make(CM_T_INT32), ys->src_off) : y;
    return *by == NULL               ? NULL
           : x->type.id == CM_T_NULL ? pl_cast(ctx->b, x, cm_type_make(CM_T_INT32), ast->src_off)
                                     : x;
}

/* ORDER BY inside an aggregate's call, bound over the FROM scope into
 * order[0..*n) (columns set later, by build_aggregate) and their expressions.
 * Only string_agg, list, first and last keep it: the other aggregates'
 * results do not depend on the order, and constant keys order nothing (DuckDB
 * ignores both).
 * With DISTINCT every key must be the argument, as in DuckDB and PostgreSQL.
 * False with the error set. */
static bool bind_agg_order(PlBindCtx *inner, const PsExpr *ast, int fn, ExSortKey *order,
                           ExExpr **order_by, int *n)
{
    PlBindCtx *ctx = inner;
    bool keeps =
        fn == EX_AGG_STRING_AGG || fn == EX_AGG_LIST || fn == EX_AGG_FIRST || fn == EX_AGG_LAST;
    ExExpr *arg = NULL;
    if (ast->distinct && ast->args != NULL && ast->args->n > 0 &&
        (arg = pl_bind_expr(inner, ast->args->items[0])) == NULL) {
        return false;
    }
    for (int i = 0; i < ast->agg_order->n; i++) {
        const PsOrderItem *item = ast->agg_order->items[i];
        ExExpr *e = pl_bind_expr(inner, item->expr);
        if (e == NULL) {
            return false;
        }
        if (ast->distinct && (arg == NULL || !pl_expr_equal(e, arg))) {
            fail(ctx, CM_BIND, item->expr->src_off,
                 "in a DISTINCT aggregate, ORDER BY expressions must appear in the argument "
                 "list%s",
                 "");
            return false;
        }
        if (!keeps || ex_expr_is_constant(e)) {
            continue;
        }
        if (*n == PL_MAX_AGG_ORDER) {
            fail(ctx, CM_LIMIT, item->expr->src_off, "too many ORDER BY keys in an aggregate%s",
                 "");
            return false;
        }
        order[*n] = (ExSortKey){.col = -1,
                                .desc = item->desc,
                                .nulls_first = item->nulls == 0 ? item->desc : item->nulls == 1};
        order_by[(*n)++] = e;
    }
    return true;
}

/* Do two aggregates order their values alike (ORDER BY inside the call)? */
static bool same_order(const ExAggSpec *x, ExExpr *const *x_by, const ExSortKey *order,
                       ExExpr *const *order_by, int n)
{
    if (x->n_order != n) {
        return false;
    }
    for (int k = 0; k < n; k++) {
        if (x->order[k].desc != order[k].desc || x->order[k].nulls_first != order[k].nulls_first ||
            !pl_expr_equal(x_by[k], order_by[k])) {
            return false;
        }
    }
    return true;
}

/* The TIMESTAMP of e, a DOUBLE count of microseconds since 1970 (median and
 * quantile_cont of dates and timestamps), rounded to the microsecond. */
static ExExpr *timestamp_of_micros(PlBindCtx *ctx, ExExpr *e, const PsExpr *ast)
{
    ExExpr *r = pl_make_call(ctx->b, "round", &e, 1, ast->src_off);
    ExExpr *us = r ? pl_cast(ctx->b, r, cm_type_make(CM_T_INT64), ast->src_off) : NULL;
    return us ? pl_make_call(ctx->b, "make_timestamp", &us, 1, ast->src_off) : NULL;
}

static ExExpr *bind_aggregate(PlBindCtx *ctx, const PsExpr *ast, int fn)
{
    PlAggCtx *agg = ctx->agg;
    if (agg == NULL || ctx->in_agg_arg) {
        return fail(ctx, CM_BIND, ast->src_off,
                    agg ? "aggregate function calls cannot be nested%s"
                        : "aggregate functions are not allowed in %s",
                    agg ? "" : ctx->clause);
    }
    if (ast->distinct && fn == EX_AGG_COUNT_STAR) {
        return fail(ctx, CM_BIND, ast->src_off, "count(DISTINCT *) is not valid SQL%s", "");
    }
    PlOuter *o = ctx->b->outer;
    if (o != NULL && ast->args != NULL && ast->args->n == 1 &&
        reads_only_enclosing(ctx->scope, o, ast->args->items[0])) {
        /* SQL makes it an aggregate of the enclosing query, computed over its
         * groups; taking it over the subquery's rows would answer wrongly. */
        return fail(ctx, CM_BIND, ast->src_off,
                    "an aggregate of the enclosing query's columns inside a subquery is not "
                    "supported yet%s",
                    "");
    }
    ExExpr *arg = NULL;
    PlBindCtx inner = *ctx;
    inner.agg = NULL;
    inner.in_agg_arg = true;
    if ((ast->args != NULL && ast->args->n > 0 && has_window(ast->args->items[0])) ||
        has_window(ast->filter)) {
        return fail(ctx, CM_BIND, ast->src_off,
                    "aggregate function calls cannot contain window function calls%s", "");
    }
    CmValue param = {.is_null = true};
    ExExpr *by = NULL;
    bool is_time = false;
    if (ex_agg_is_holistic((ExAggFn)fn)) {
        if ((arg = bind_holistic(ctx, &inner, ast, &fn, &param, &is_time)) == NULL) {
            return NULL;
        }
    } else if (fn == EX_AGG_ARG_MIN || fn == EX_AGG_ARG_MAX) {
        if ((arg = bind_arg_by(ctx, &inner, ast, &by)) == NULL) {
            return NULL;
        }
        param = (CmValue){.type = by->type, .is_null = true};
    } else if (fn != EX_AGG_COUNT_STAR) {
        if (ast->args == NULL || ast->args->n != 1) {
            return fail(ctx, CM_BIND, ast->src_off, "%s takes exactly one argument", ast->name);
        }
        arg = pl_bind_expr(&inner, ast->args->items[0]);
        if (arg == NULL) {
            return NULL;
        }
        bool is_numeric_fn = fn == EX_AGG_SUM || fn == EX_AGG_AVG || fn >= EX_AGG_VAR_SAMP;
        if (is_numeric_fn && !agg_arg_is_numeric(ctx, ast, arg->type)) {
            return NULL;
        }
        bool wants_bool = !strcmp(ast->name, "bool_and") || !strcmp(ast->name, "bool_or") ||
                          !strcmp(ast->name, "count_if");
        bool is_bit = fn == EX_AGG_BIT_AND || fn == EX_AGG_BIT_OR || fn == EX_AGG_BIT_XOR;
        if ((wants_bool && arg->type.id != CM_T_BOOL && arg->type.id != CM_T_NULL) ||
            (is_bit && !cm_type_is_integer(arg->type) && arg->type.id != CM_T_NULL)) {
            char buf[64], msg[160];
            snprintf(msg, sizeof msg, "no function matches %s(%s)", ast->name,
                     cm_type_name(arg->type, buf, sizeof buf));
            return fail(ctx, CM_TYPE, ast->src_off, "%s", msg);
        }
        if (wants_bool) {
            arg = pl_cast(ctx->b, arg, cm_type_make(CM_T_BOOL), ast->src_off);
        }
        if (arg != NULL && !strcmp(ast->name, "count_if")) {
            /* count(CASE WHEN x THEN true END): NULL and false are not counted */
            ExExpr **when = new_args(ctx->b, 2);
            if (when == NULL) {
                return NULL;
            }
            when[0] = arg;
            when[1] = arg;
            arg = make_case(ctx->b, 2, when, false, ast->src_off);
        }
        if (arg == NULL) {
            return NULL;
        }
        if (arg->type.id == CM_T_NULL && fn != EX_AGG_COUNT) {
            arg = pl_cast(ctx->b, arg, cm_type_make(CM_T_INT64), ast->src_off);
        }
    }
    if (arg != NULL && arg->type.id == CM_T_LIST && (fn != EX_AGG_COUNT || ast->distinct)) {
        return list_arg_fail(ctx, ast, arg->type);
    }
    /* An INTERVAL is counted, compared (min, max) and grouped; the other
     * aggregates keep 8-byte states, so they refuse it rather than cut it. */
    if (arg != NULL && arg->type.id == CM_T_INTERVAL && fn != EX_AGG_COUNT && fn != EX_AGG_MIN &&
        fn != EX_AGG_MAX) {
        return list_arg_fail(ctx, ast, arg->type);
    }
    if (ast->filter != NULL && (fn == EX_AGG_FIRST || fn == EX_AGG_LAST || by != NULL)) {
        /* FILTER is a CASE over the argument, whose NULLs these would keep */
        return fail(ctx, CM_BIND, ast->filter->src_off, "FILTER is not supported for %s yet",
                    ast->name);
    }
    ExSortKey order[PL_MAX_AGG_ORDER];
    ExExpr *order_by[PL_MAX_AGG_ORDER];
    int n_order = 0;
    if (ast->agg_order != NULL && !bind_agg_order(&inner, ast, fn, order, order_by, &n_order)) {
        return NULL;
    }
    if (ast->filter != NULL && (arg = filtered_arg(&inner, ast, arg, &fn)) == NULL) {
        return NULL;
    }
    if (agg->empty) {
        /* Over no rows: count is 0 and every other aggregate NULL. */
        CmType t = agg_result_type((ExAggFn)fn, arg ? arg->type : cm_type_make(CM_T_INT64));
        CmValue v = {.type = t,
                     .is_null = fn != EX_AGG_COUNT && fn != EX_AGG_COUNT_STAR &&
                                fn != EX_AGG_APPROX_DISTINCT};
        ExExpr *c = ex_expr_const(ctx->b->arena, &v);
        return is_time && c ? timestamp_of_micros(ctx, c, ast) : c;
    }
    /* The same aggregate twice is computed once. */
    int a = 0;
    for (; a < agg->n_aggs; a++) {
        if ((int)agg->aggs[a].fn == fn && agg->aggs[a].distinct == ast->distinct &&
            same_param(&agg->aggs[a].param, &param) &&
            same_order(&agg->aggs[a], agg->agg_order[a], order, order_by, n_order) &&
            (arg == NULL ? agg->agg_args[a] == NULL
                         : agg->agg_args[a] != NULL && pl_expr_equal(arg, agg->agg_args[a])) &&
            (by == NULL ? agg->agg_by[a] == NULL
                        : agg->agg_by[a] != NULL && pl_expr_equal(by, agg->agg_by[a]))) {
            break;
        }
    }
    if (a == agg->n_aggs) {
        if (a == PL_MAX_AGGS) {
            return fail(ctx, CM_LIMIT, ast->src_off, "too many aggregates%s", "");
        }
        CmType arg_type = arg ? arg->type : cm_type_make(CM_T_INT64);
        agg->aggs[a] =
            (ExAggSpec){.fn = (ExAggFn)fn,
                        .arg = -1,
                        .arg_type = arg_type,
                        .type = agg_result_type((ExAggFn)fn, arg_type),
                        .distinct = ast->distinct && fn != EX_AGG_MIN && fn != EX_AGG_MAX &&
                                    fn != EX_AGG_FIRST && fn != EX_AGG_LAST && by == NULL,
                        .param = param,
                        .skip_nulls = ast->filter != NULL};
        agg->agg_args[a] = arg;
        agg->agg_by[a] = by;
        if (n_order > 0) {
            ExSortKey *keys = cm_arena_alloc(ctx->b->arena, sizeof(ExSortKey) * (size_t)n_order);
            CmType *types = cm_arena_alloc(ctx->b->arena, sizeof(CmType) * (size_t)n_order);
            ExExpr **exprs = cm_arena_alloc(ctx->b->arena, sizeof(ExExpr *) * (size_t)n_order);
            if (keys == NULL || types == NULL || exprs == NULL) {
                return fail(ctx, CM_OOM, -1, "out of memory%s", "");
            }
            for (int k = 0; k < n_order; k++) {
                keys[k] = order[k];
                types[k] = order_by[k]->type;
                exprs[k] = order_by[k];
            }
            agg->aggs[a].n_order = n_order;
            agg->aggs[a].order = keys;
            agg->aggs[a].order_types = types;
            agg->agg_order[a] = exprs;
        }
        agg->n_aggs++;
    }
    ExExpr *ref = ex_expr_column(ctx->b->arena, PL_AGG_BASE + a, agg->aggs[a].type);
    if (ref != NULL) {
        ref->src_off = ast->src_off;
    }
    return is_time && ref ? timestamp_of_micros(ctx, ref, ast) : ref;
}

static bool is_window_call(const PsExpr *ast)
{
    return ast->kind == PS_EX_FUNC && ast->over != NULL;
}

static bool has_window(const PsExpr *ast)
{
    return ast_any(ast, is_window_call);
}

/* After aggregation: e, the binding of a subtree before aggregation, as a
 * group key's column (or itself when constant); *matched false when neither.
 * `off` is the subtree's position, for errors. */
static ExExpr *match_bound(PlBindCtx *ctx, ExExpr *e, int64_t off, bool *matched)
{
    *matched = false;
    for (int k = 0; k < ctx->agg->n_keys; k++) {
        if (pl_expr_equal(e, ctx->agg->keys[k])) {
            *matched = true;
            if (ctx->agg->empty) {
                int oc = ctx->agg->key_outer[k];
                if (oc < 0) {
                    *matched = false;
                    return fail(ctx, CM_BIND, off,
                                "this correlated subquery is not supported yet%s", "");
                }
                return ex_expr_column(ctx->b->arena, oc, e->type);
            }
            return ex_expr_column(ctx->b->arena, k, e->type);
        }
    }
    if (ex_expr_is_constant(e)) {
        *matched = true;
        return e;
    }
    return NULL;
}

/* True when a subtree cannot be a group key: it holds an aggregate, window or subquery. */
static bool is_unkeyable(const PsExpr *ast)
{
    return pl_has_aggregate(ast) || pl_has_subquery(ast) || has_window(ast);
}

/* After aggregation: a subtree equal to a group key is that key's column. */
static ExExpr *match_group_key(PlBindCtx *ctx, const PsExpr *ast, bool *matched)
{
    *matched = false;
    if (is_unkeyable(ast)) {
        return NULL;
    }
    PlBindCtx pre = *ctx;
    pre.agg = NULL;
    CmErr probe;
    cm_err_init(&probe);
    CmErr *saved = ctx->b->err;
    ctx->b->err = &probe;
    ExExpr *e = pl_bind_expr(&pre, ast);
    ctx->b->err = saved;
    if (e == NULL) {
        pl_trial_oom(ctx->b, &probe);
        return NULL;
    }
    return match_bound(ctx, e, ast->src_off, matched);
}

/* ---- operators ------------------------------------------------------------------- */

/* l op r, both bound. */
static ExExpr *combine_binary(PlBindCtx *ctx, const PsExpr *ast, ExExpr *l, ExExpr *r)
{
    static const struct {
        PsOp op;
        const char *name;
    } OPS[] = {
        {PS_OP_ADD, "+"}, {PS_OP_SUB, "-"},     {PS_OP_MUL, "*"}, {PS_OP_DIV, "/"},
        {PS_OP_MOD, "%"}, {PS_OP_CONCAT, "||"}, {PS_OP_EQ, "="},  {PS_OP_NE, "<>"},
        {PS_OP_LT, "<"},  {PS_OP_LE, "<="},     {PS_OP_GT, ">"},  {PS_OP_GE, ">="},
    };
    if (ast->op == PS_OP_AND || ast->op == PS_OP_OR) {
        return make_logic(ctx->b, ast->op == PS_OP_AND ? EX_E_AND : EX_E_OR, l, r, ast->src_off);
    }
    ExExpr *args[2] = {l, r};
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++) {
        if (OPS[i].op == ast->op) {
            return pl_make_call(ctx->b, OPS[i].name, args, 2, ast->src_off);
        }
    }
    return fail(ctx, CM_BIND, ast->src_off, "operator %s is not supported yet",
                pl_source_text(ctx->b, ast->src_off, ast->src_len));
}

/* One level of a chain (see bind_chain): `ast` applied to its left operand,
 * already bound as x. */
static ExExpr *bind_level(PlBindCtx *ctx, const PsExpr *ast, ExExpr *x)
{
    switch (ast->kind) {
    case PS_EX_BINARY: {
        ExExpr *r = pl_bind_expr(ctx, ast->right);
        return r ? combine_binary(ctx, ast, x, r) : NULL;
    }
    case PS_EX_UNARY:
        switch (ast->op) {
        case PS_OP_PLUS:
            return x;
        case PS_OP_NEG:
            return pl_make_call(ctx->b, "neg", &x, 1, ast->src_off);
        case PS_OP_NOT:
            return pl_make_call(ctx->b, "not", &x, 1, ast->src_off);
        default:
            return fail(ctx, CM_BIND, ast->src_off, "operator %s is not supported yet",
                        pl_source_text(ctx->b, ast->src_off, ast->src_len));
        }
    case PS_EX_IS_NULL:
        return pl_make_call(ctx->b, ast->negated ? "is_not_null" : "is_null", &x, 1, ast->src_off);
    case PS_EX_CAST: {
        CmType t;
        if (pl_type_from_ast(ast->type, &t, ctx->b->err) != CM_OK) {
            return NULL;
        }
        return pl_cast(ctx->b, x, t, ast->src_off);
    }
    default:
        return fail(ctx, CM_INTERNAL, ast->src_off, "not a chain operator%s", "");
    }
}

/* ---- chains ---------------------------------------------------------------------- */

/* A node whose main operand is `left`, bound before anything else of it: the
 * left-associative binary operators (a + b + c is ((a + b) + c)), the prefix
 * operators (NOT NOT x), IS [NOT] NULL and casts (x::int::text). */
static bool is_chain(const PsExpr *ast)
{
    switch (ast->kind) {
    case PS_EX_BINARY:
        return !pl_is_row_op(ast);
    case PS_EX_UNARY:
    case PS_EX_IS_NULL:
    case PS_EX_CAST:
        return true;
    default:
        return false;
    }
}

/* True for the operators whose runs are bound as one: AND and OR are n-ary
 * nodes; a run of more than PL_CONCAT_RUN || (associative) is a balanced tree,
 * which keeps it under the depth limit and folds constants in O(n log n)
 * bytes, not O(n^2).  A shorter one is left-deep, as written, so that each
 * prefix (a || b of a || b || c) stays a subtree that can match a group key. */
#define PL_CONCAT_RUN (PL_MAX_EXPR_DEPTH / 2)

static bool is_run_op(const PsExpr *ast)
{
    return ast->kind == PS_EX_BINARY &&
           (ast->op == PS_OP_AND || ast->op == PS_OP_OR || ast->op == PS_OP_CONCAT);
}

/* The depth of tree e, counting `known` (a subtree of depth known_depth)
 * without walking it again.  Called only on trees built under the depth limit,
 * so its own recursion is bounded. */
static int expr_depth(const ExExpr *e, const ExExpr *known, int known_depth)
{
    if (e == known) {
        return known_depth;
    }
    int depth = 0;
    for (int i = 0; i < e->n_args; i++) {
        int d = expr_depth(e->args[i], known, known_depth);
        depth = d > depth ? d : depth;
    }
    return depth + 1;
}

/* The search along a chain, after aggregation, for its outermost level equal
 * to a group key. */
typedef struct KeyScan {
    PlBindCtx *agg_ctx; /* the binding after aggregation */
    PlOuter *outer;     /* instead: the grouped enclosing query whose keys are matched */
    int level;          /* spine index of the outermost level matched, or n */
    ExExpr *key;        /* what that level binds to (own keys) */
    int key_idx;        /* which of the enclosing query's keys it equals (outer keys) */
    int err_level;      /* spine index of the outermost level whose match failed, or -1 */
} KeyScan;

/* The group keys a scan matches against. */
static ExExpr *const *scan_keys_of(const KeyScan *scan, int *n)
{
    const PlAggCtx *agg = scan->outer ? scan->outer->grouped : scan->agg_ctx->agg;
    *n = agg->n_keys;
    return agg->keys;
}

/* Matches a bound level against the scan's keys (see KeyScan). */
static void scan_match(KeyScan *scan, ExExpr *x, int level, int64_t off, CmErr *err)
{
    if (scan->outer != NULL) {
        int n_keys;
        ExExpr *const *keys = scan_keys_of(scan, &n_keys);
        for (int k = 0; k < n_keys; k++) {
            if (pl_expr_equal(x, keys[k])) {
                scan->level = level;
                scan->key_idx = k;
                return;
            }
        }
        return;
    }
    bool matched;
    ExExpr *k = match_bound(scan->agg_ctx, x, off, &matched);
    if (matched) {
        scan->level = level;
        scan->key = k;
    } else if (err->code != CM_OK) {
        scan->err_level = level;
        cm_err_init(err);
    }
}

/* Scan (see KeyScan) of an AND/OR run whose operands are in[0..n) and whose
 * innermost level is spine index `bottom`: the longest proper prefix of the
 * operands equal to a group key (a AND b of a AND b AND c).  The whole run is
 * matched by the caller. */
static void match_run_prefix(PlBindCtx *ctx, KeyScan *scan, ExExprKind kind, ExExpr **in, int n,
                             int bottom, int64_t off)
{
    int n_keys;
    ExExpr *const *keys = scan_keys_of(scan, &n_keys);
    int best = 1;
    for (int k = 0; k < n_keys; k++) {
        const ExExpr *key = keys[k];
        int n_flat = 0, m = 0;
        while (key->kind == kind && m < n - 1 && n_flat < key->n_args) {
            n_flat += in[m]->kind == kind ? in[m]->n_args : 1;
            m++;
        }
        if (key->kind != kind || m <= best || n_flat != key->n_args) {
            continue;
        }
        ExExpr *prefix = make_logic_n(ctx->b, kind, in, m, off);
        int level = scan->level;
        if (prefix != NULL) {
            scan_match(scan, prefix, bottom - (m - 2), off, ctx->b->err);
        }
        if (scan->level != level) {
            best = m;
        }
    }
}

/* A run of n levels of one operator (AND, OR or ||) over x: run[n - 1] is the
 * innermost, at spine index `bottom`.  *depth is x's depth on entry and the
 * result's on return.  With scan, prefixes of an AND/OR run are matched too. */
static ExExpr *bind_run(PlBindCtx *ctx, const PsExpr *const *run, int n, ExExpr *x, int *depth,
                        KeyScan *scan, int bottom)
{
    const PsExpr *top = run[0];
    ExExpr **in = new_args(ctx->b, n + 1);
    int *depths = cm_arena_alloc(ctx->b->arena, sizeof(int) * (size_t)(n + 1));
    if (in == NULL || depths == NULL) {
        return NULL;
    }
    in[0] = x;
    depths[0] = *depth;
    for (int i = 1; i <= n; i++) {
        in[i] = pl_bind_expr(ctx, run[n - i]->right);
        if (in[i] == NULL) {
            return NULL;
        }
        depths[i] = expr_depth(in[i], NULL, 0);
    }
    if (top->op != PS_OP_CONCAT) {
        ExExprKind kind = top->op == PS_OP_AND ? EX_E_AND : EX_E_OR;
        if (scan != NULL) {
            match_run_prefix(ctx, scan, kind, in, n + 1, bottom, top->src_off);
        }
        ExExpr *e = make_logic_n(ctx->b, kind, in, n + 1, top->src_off);
        *depth = e ? expr_depth(e, NULL, 0) : 0;
        return e;
    }
    /* Pairs combined round by round, in order: a || b || c || d as (a || b) || (c || d).
     * A cast to text may add a level above an operand. */
    for (int count = n + 1; count > 1; count = (count + 1) / 2) {
        for (int k = 0; k < count / 2; k++) {
            int d = depths[2 * k] > depths[2 * k + 1] ? depths[2 * k] : depths[2 * k + 1];
            in[k] = pl_make_call(ctx->b, "||", in + 2 * k, 2, top->src_off);
            depths[k] = d + 2;
            if (in[k] == NULL) {
                return NULL;
            }
        }
        if (count % 2 == 1) {
            in[count / 2] = in[count - 1];
            depths[count / 2] = depths[count - 1];
        }
    }
    *depth = depths[0];
    return in[0];
}

/* Binds spine[n - 1] (the innermost level) out to spine[0] over x, the binding
 * of the innermost operand; a run of AND, OR or || is bound as one (see
 * bind_run).  With scan, ctx binds before aggregation (errors go to a probe),
 * the outermost level of each step is matched against the group keys, and the
 * walk stops below the first level that cannot be a key (is_unkeyable). */
static ExExpr *bind_levels(PlBindCtx *ctx, const PsExpr *const *spine, int n, ExExpr *x,
                           KeyScan *scan)
{
    int depth = x ? expr_depth(x, NULL, 0) : 0;
    for (int i = n - 1; i >= 0 && x != NULL; i--) {
        const PsExpr *level = spine[i];
        int j = i;
        while (is_run_op(level) && j > 0 && spine[j - 1]->kind == PS_EX_BINARY &&
               spine[j - 1]->op == level->op) {
            j--;
        }
        if (level->op == PS_OP_CONCAT && i - j < PL_CONCAT_RUN) {
            j = i; /* a short run of || stays left-deep, each level a subtree */
        }
        bool is_last = false;
        for (int u = i; scan != NULL && u >= j; u--) {
            if (spine[u]->kind == PS_EX_BINARY && is_unkeyable(spine[u]->right)) {
                if (u == i) {
                    return NULL; /* neither this level nor any above can be a key */
                }
                j = u + 1; /* the levels below u can */
                is_last = true;
                break;
            }
        }
        if (j < i || (is_run_op(level) && level->op != PS_OP_CONCAT)) {
            x = bind_run(ctx, spine + j, i - j + 1, x, &depth, scan, i);
        } else {
            ExExpr *e = bind_level(ctx, level, x);
            depth = e ? expr_depth(e, x, depth) : 0;
            x = e;
        }
        i = j;
        if (x != NULL && depth > PL_MAX_EXPR_DEPTH) {
            const PsExpr *at = spine[i]->kind == PS_EX_BINARY ? spine[i]->right : spine[i];
            cm_err_set(ctx->b->err, CM_LIMIT, at->src_off,
                       "expression too deeply nested (limit %d)", PL_MAX_EXPR_DEPTH);
            x = NULL;
        }
        if (x != NULL && scan != NULL) {
            scan_match(scan, x, i, spine[i]->src_off, ctx->b->err);
        }
        if (is_last) {
            break;
        }
    }
    return x;
}

/* In a correlated subquery of a grouped query, before the subquery's own
 * aggregation: the spine index of the outermost level of the chain that reads
 * only enclosing columns and equals one of the enclosing query's group keys
 * (`s2.b = s.b + 1` under `GROUP BY b + 1`), *key the reference to that key;
 * n when there is none.  Like scan_keys, one binding of the chain, here in the
 * enclosing scope: a level that reads the subquery's own columns fails to bind
 * there, which ends the scan and is no error. */
static int scan_outer_keys(PlBindCtx *ctx, const PsExpr *const *spine, int n, ExExpr **key)
{
    PlOuter *o = ctx->b->outer;
    const PsExpr *inner = spine[n - 1]->left;
    if (is_unkeyable(inner) || !reads_only_outer(ctx->scope, o->scope, inner)) {
        return n;
    }
    KeyScan scan = {.outer = o, .level = n, .key_idx = -1, .err_level = -1};
    PlBindCtx m = {.b = ctx->b, .scope = o->scope, .clause = ctx->clause};
    CmErr probe;
    cm_err_init(&probe);
    CmErr *saved = ctx->b->err;
    ctx->b->outer = NULL;
    ctx->b->err = &probe;
    ExExpr *x = pl_bind_expr(&m, inner);
    (void)bind_levels(&m, spine, n, x, &scan);
    ctx->b->err = saved;
    ctx->b->outer = o;
    if (pl_trial_oom(ctx->b, &probe)) {
        return -1;
    }
    if (scan.level == n) {
        return n;
    }
    ExExpr *k = o->grouped->keys[scan.key_idx];
    *key = outer_ref(ctx, o, scan.key_idx, k->type, spine[scan.level]->src_off);
    return *key != NULL ? scan.level : -1;
}

/* After aggregation: the spine index of the outermost level of the chain equal
 * to a group key, *key its binding; n when there is none, -1 on error.  This is
 * what trying each level from the outside in finds (see pl_bind_expr), found
 * with one binding of the chain before aggregation instead of one per level. */
static int scan_keys(PlBindCtx *ctx, const PsExpr *const *spine, int n, ExExpr **key)
{
    const PsExpr *inner = spine[n - 1]->left;
    KeyScan scan = {.agg_ctx = ctx, .level = n, .key = NULL, .err_level = -1};
    if (is_unkeyable(inner)) {
        return n;
    }
    PlBindCtx pre = *ctx;
    pre.agg = NULL;
    CmErr probe;
    cm_err_init(&probe);
    CmErr *saved = ctx->b->err;
    ctx->b->err = &probe;
    /* In a correlated subquery of a grouped query, a level may first be a key
     * of the enclosing query (`count(*) + (s.b + 1)` under `GROUP BY b + 1`):
     * bound as that, it is then matched against this query's keys. */
    ExExpr *x = NULL;
    int start = n;
    if (ctx->b->outer != NULL && ctx->b->outer->grouped != NULL) {
        start = scan_outer_keys(&pre, spine, n, &x);
        if (start < 0 && probe.code == CM_OOM) {
            ctx->b->err = saved;
            pl_trial_oom(ctx->b, &probe);
            return -1;
        }
        if (start < 0) {
            cm_err_init(&probe);
            start = n;
        } else if (start < n) {
            scan_match(&scan, x, start, spine[start]->src_off, &probe);
        }
    }
    if (start == n) {
        x = pl_bind_expr(&pre, inner);
    }
    (void)bind_levels(&pre, spine, start, x, &scan);
    ctx->b->err = saved;
    if (pl_trial_oom(ctx->b, &probe)) {
        return -1;
    }
    if (scan.err_level >= 0 && scan.err_level < scan.level) {
        cm_err_set(ctx->b->err, CM_BIND, spine[scan.err_level]->src_off,
                   "this correlated subquery is not supported yet");
        return -1;
    }
    *key = scan.key;
    return scan.level;
}

/* Binds a chain (see is_chain) without recursing along it: a generated sum of
 * 100000 terms is a tree 100000 deep.  The spine is gathered from the top,
 * then bound from the innermost operand out (bind_levels).  A bound tree
 * deeper than PL_MAX_EXPR_DEPTH is an error at the operand that made it so:
 * evaluation and the planner's walks recurse over it. */
static ExExpr *bind_node(PlBindCtx *ctx, const PsExpr *ast);

static ExExpr *bind_chain(PlBindCtx *ctx, const PsExpr *ast)
{
    int n = 0, cap = 16;
    const PsExpr **spine = cm_malloc(sizeof *spine * (size_t)cap);
    ExExpr *x = NULL;
    for (const PsExpr *cur = ast; spine != NULL && is_chain(cur); cur = cur->left) {
        if (n == cap) {
            cap *= 2;
            const PsExpr **grown = cm_realloc(spine, sizeof *spine * (size_t)cap);
            if (grown == NULL) {
                cm_free(spine);
                spine = NULL;
                break;
            }
            spine = grown;
        }
        spine[n++] = cur;
    }
    if (spine == NULL) {
        cm_err_set(ctx->b->err, CM_OOM, ast->src_off, "out of memory");
        goto done;
    }
    int n_above = n; /* levels spine[0..n_above) are bound here, over x */
    if (ctx->agg != NULL) {
        n_above = scan_keys(ctx, spine, n, &x);
    } else if (ctx->b->outer != NULL && ctx->b->outer->grouped != NULL) {
        n_above = scan_outer_keys(ctx, spine, n, &x);
    }
    if (n_above < 0) {
        goto done;
    }
    if (n_above == n) {
        x = bind_node(ctx, spine[n - 1]->left);
    }
    x = bind_levels(ctx, spine, n_above, x, NULL);
done:
    cm_free(spine);
    return x;
}

static ExExpr *negate_if(PlBindCtx *ctx, ExExpr *e, bool negated, int64_t off)
{
    if (e == NULL || !negated) {
        return e;
    }
    return pl_make_call(ctx->b, "not", &e, 1, off);
}

/* x IS NOT DISTINCT FROM y: CASE WHEN x IS NULL THEN y IS NULL WHEN y IS NULL
 * THEN false ELSE x = y END, never NULL; IS DISTINCT FROM is its negation. */
static ExExpr *bind_is_distinct(PlBindCtx *ctx, const PsExpr *ast)
{
    PlBinder *b = ctx->b;
    ExExpr *x = pl_bind_expr(ctx, ast->left);
    ExExpr *y = x ? pl_bind_expr(ctx, ast->right) : NULL;
    ExExpr **args = y ? new_args(b, 5) : NULL;
    if (args == NULL) {
        return NULL;
    }
    ExExpr *pair[2] = {x, y};
    CmValue no = {.type = cm_type_make(CM_T_BOOL), .i = 0};
    if ((args[0] = pl_make_call(b, "is_null", &x, 1, ast->src_off)) == NULL ||
        (args[1] = pl_make_call(b, "is_null", &y, 1, ast->src_off)) == NULL ||
        (args[4] = pl_make_call(b, "=", pair, 2, ast->src_off)) == NULL) {
        return NULL;
    }
    args[2] = args[1];
    if ((args[3] = ex_expr_const(b->arena, &no)) == NULL) {
        return fail(ctx, CM_OOM, -1, "out of memory%s", "");
    }
    ExExpr *same = make_case(b, 5, args, true, ast->src_off);
    return negate_if(ctx, same, !ast->negated, ast->src_off);
}

static ExExpr *bind_between(PlBindCtx *ctx, const PsExpr *ast)
{
    ExExpr *x = pl_bind_expr(ctx, ast->left);
    ExExpr *lo = x ? pl_bind_expr(ctx, ast->args->items[0]) : NULL;
    ExExpr *hi = lo ? pl_bind_expr(ctx, ast->args->items[1]) : NULL;
    if (hi == NULL) {
        return NULL;
    }
    ExExpr *a1[2] = {x, lo}, *a2[2] = {x, hi};
    ExExpr *ge = pl_make_call(ctx->b, ">=", a1, 2, ast->src_off);
    ExExpr *le = ge ? pl_make_call(ctx->b, "<=", a2, 2, ast->src_off) : NULL;
    ExExpr *both = le ? make_logic(ctx->b, EX_E_AND, ge, le, ast->src_off) : NULL;
    return negate_if(ctx, both, ast->negated, ast->src_off);
}

static ExExpr *bind_in_list(PlBindCtx *ctx, const PsExpr *ast)
{
    if (ast->args == NULL || ast->args->n == 0) {
        /* SQLite's x IN (): false for every x, even NULL. */
        CmValue v = {.type = cm_type_make(CM_T_BOOL), .i = ast->negated};
        return ex_expr_const(ctx->b->arena, &v);
    }
    ExExpr *x = pl_bind_expr(ctx, ast->left);
    ExExpr **eqs = x ? new_args(ctx->b, ast->args->n) : NULL;
    for (int i = 0; eqs != NULL && i < ast->args->n; i++) {
        ExExpr *v = pl_bind_expr(ctx, ast->args->items[i]);
        if (v == NULL) {
            return NULL;
        }
        ExExpr *pair[2] = {x, v};
        eqs[i] = pl_make_call(ctx->b, "=", pair, 2, ast->src_off);
        if (eqs[i] == NULL) {
            return NULL;
        }
    }
    if (eqs == NULL) {
        return NULL;
    }
    /* one OR of every equality: a list of any length is one node deep */
    ExExpr *any =
        ast->args->n == 1 ? eqs[0] : make_logic_n(ctx->b, EX_E_OR, eqs, ast->args->n, ast->src_off);
    return negate_if(ctx, any, ast->negated, ast->src_off);
}

static ExExpr *bind_case(PlBindCtx *ctx, const PsExpr *ast)
{
    int n_when = ast->args->n;
    int n = 2 * n_when + (ast->right ? 1 : 0);
    ExExpr **args = new_args(ctx->b, n);
    ExExpr *operand = ast->left ? pl_bind_expr(ctx, ast->left) : NULL;
    if (args == NULL || (ast->left && operand == NULL)) {
        return NULL;
    }
    CmType result = cm_type_make(CM_T_NULL);
    for (int i = 0; i < n_when; i++) {
        const PsWhen *w = ast->args->items[i];
        ExExpr *c = pl_bind_expr(ctx, w->cond);
        if (c != NULL && operand != NULL) {
            ExExpr *pair[2] = {operand, c};
            c = pl_make_call(ctx->b, "=", pair, 2, w->cond->src_off);
        }
        args[2 * i] = c ? pl_cast(ctx->b, c, cm_type_make(CM_T_BOOL), w->cond->src_off) : NULL;
        args[2 * i + 1] = args[2 * i] ? pl_bind_expr(ctx, w->result) : NULL;
        if (args[2 * i + 1] == NULL) {
            return NULL;
        }
        if (!ex_common_type(result, args[2 * i + 1]->type, &result)) {
            return fail(ctx, CM_TYPE, w->result->src_off, "CASE branches have incompatible types%s",
                        "");
        }
    }
    if (ast->right != NULL) {
        args[n - 1] = pl_bind_expr(ctx, ast->right);
        if (args[n - 1] == NULL) {
            return NULL;
        }
        if (!ex_common_type(result, args[n - 1]->type, &result)) {
            return fail(ctx, CM_TYPE, ast->right->src_off,
                        "CASE branches have incompatible types%s", "");
        }
    }
    for (int i = 0; i < n; i++) {
        if (i % 2 == 1 || (ast->right != NULL && i == n - 1)) {
            args[i] = pl_cast_implicit(ctx->b, args[i], result, ast->src_off);
            if (args[i] == NULL) {
                return NULL;
            }
        }
    }
    ExExpr *e = cm_arena_zalloc(ctx->b->arena, sizeof *e);
    if (e == NULL) {
        cm_err_set(ctx->b->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    e->kind = EX_E_CASE;
    e->type = result;
    e->n_args = n;
    e->args = args;
    e->has_else = ast->right != NULL;
    e->src_off = ast->src_off;
    return fold(ctx->b, e);
}

static ExExpr *make_case(PlBinder *b, int n, ExExpr **args, bool has_else, int64_t off)
{
    CmType t = cm_type_make(CM_T_NULL);
    for (int i = 1; i < n; i += 2) {
        if (!ex_common_type(t, args[i]->type, &t)) {
            cm_err_set(b->err, CM_TYPE, off, "CASE branches have incompatible types");
            return NULL;
        }
    }
    if (has_else && !ex_common_type(t, args[n - 1]->type, &t)) {
        cm_err_set(b->err, CM_TYPE, off, "CASE branches have incompatible types");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        bool is_value = i % 2 == 1 || (has_else && i == n - 1);
        args[i] = is_value ? pl_cast_implicit(b, args[i], t, off)
                           : pl_cast(b, args[i], cm_type_make(CM_T_BOOL), off);
        if (args[i] == NULL) {
            return NULL;
        }
    }
    ExExpr *e = cm_arena_zalloc(b->arena, sizeof *e);
    if (e == NULL) {
        cm_err_set(b->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    e->kind = EX_E_CASE;
    e->type = t;
    e->n_args = n;
    e->args = args;
    e->has_else = has_else;
    e->src_off = off;
    return fold(b, e);
}

/* coalesce(a, b, ...) is CASE WHEN a IS NOT NULL THEN a ... ELSE last END;
 * nullif(a, b) is CASE WHEN a = b THEN NULL ELSE a END. */
static ExExpr *bind_conditional(PlBindCtx *ctx, const PsExpr *ast, ExExpr **in, int n)
{
    PlBinder *b = ctx->b;
    bool is_nullif = strcmp(ast->name, "nullif") == 0;
    if (is_nullif ? n != 2 : n < 1) {
        return fail(ctx, CM_BIND, ast->src_off, "wrong number of arguments to %s", ast->name);
    }
    int n_case = is_nullif ? 3 : 2 * (n - 1) + 1;
    ExExpr **args = new_args(b, n_case);
    if (args == NULL) {
        return NULL;
    }
    if (is_nullif) {
        ExExpr *eq = pl_make_call(b, "=", in, 2, ast->src_off);
        CmValue null = {.type = in[0]->type, .is_null = true};
        args[0] = eq;
        args[1] = ex_expr_const(b->arena, &null);
        args[2] = in[0];
        return eq && args[1] ? make_case(b, 3, args, true, ast->src_off) : NULL;
    }
    for (int i = 0; i < n - 1; i++) {
        args[2 * i] = pl_make_call(b, "is_not_null", &in[i], 1, ast->src_off);
        args[2 * i + 1] = in[i];
        if (args[2 * i] == NULL) {
            return NULL;
        }
    }
    args[n_case - 1] = in[n - 1];
    return make_case(b, n_case, args, true, ast->src_off);
}

ExExpr *pl_make_coalesce(PlBinder *b, ExExpr *l, ExExpr *r, int64_t off)
{
    ExExpr **args = new_args(b, 3);
    if (args == NULL || (args[0] = pl_make_call(b, "is_not_null", &l, 1, off)) == NULL) {
        return NULL;
    }
    args[1] = l;
    args[2] = r;
    return make_case(b, 3, args, true, off);
}

static ExExpr *bind_like(PlBindCtx *ctx, const PsExpr *ast)
{
    ExExpr *args[3];
    int n = ast->escape ? 3 : 2;
    args[0] = pl_bind_expr(ctx, ast->left);
    args[1] = args[0] ? pl_bind_expr(ctx, ast->right) : NULL;
    args[2] = args[1] && ast->escape ? pl_bind_expr(ctx, ast->escape) : NULL;
    if (args[n - 1] == NULL) {
        return NULL;
    }
    const char *name = ast->op == PS_OP_ILIKE ? (ast->negated ? "not_ilike" : "ilike")
                                              : (ast->negated ? "not_like" : "like");
    return pl_make_call(ctx->b, name, args, n, ast->src_off);
}

static int window_fn(const char *name, bool star)
{
    const PlFunc *f = pl_func_find(name, PL_FUNC_WINDOW);
    if (f == NULL) {
        return -1;
    }
    return star && f->code == EX_WIN_COUNT ? EX_WIN_COUNT_STAR : f->code;
}

static ExFrameBound frame_bound(PsBoundKind k)
{
    switch (k) {
    case PS_BOUND_UNBOUNDED_PRECEDING:
        return EX_FRAME_UNBOUNDED_PRECEDING;
    case PS_BOUND_PRECEDING:
        return EX_FRAME_PRECEDING;
    case PS_BOUND_CURRENT_ROW:
        return EX_FRAME_CURRENT_ROW;
    case PS_BOUND_FOLLOWING:
        return EX_FRAME_FOLLOWING;
    case PS_BOUND_UNBOUNDED_FOLLOWING:
        return EX_FRAME_UNBOUNDED_FOLLOWING;
    }
    return EX_FRAME_CURRENT_ROW;
}

static bool const_count(PlBindCtx *ctx, const PsExpr *ast, int64_t *out)
{
    PlScope none = {0};
    ExExpr *e = pl_bind_scalar(ctx->b, &none, ast, "a window frame");
    e = e ? pl_cast(ctx->b, e, cm_type_make(CM_T_INT64), ast->src_off) : NULL;
    CmValue v;
    if (e == NULL || ex_expr_eval_const(e, ctx->b->arena, &v, ctx->b->err) != CM_OK) {
        return false;
    }
    if (v.is_null || v.i < 0) {
        fail(ctx, CM_BIND, ast->src_off, "a frame offset must be a non-negative integer%s", "");
        return false;
    }
    *out = v.i;
    return true;
}

static bool is_column_ref(const PsExpr *ast)
{
    return ast->kind == PS_EX_COLUMN;
}

/* The default of lag/lead: a constant of the argument's type. A column (PostgreSQL
 * evaluates it at the current row) is refused rather than read at the wrong row. */
static bool const_default(PlBindCtx *ctx, const PsExpr *ast, CmType type, CmValue *out)
{
    if (ast_any(ast, is_column_ref) || pl_has_subquery(ast)) {
        fail(ctx, CM_BIND, ast->src_off, "the default of lag/lead must be a constant%s", "");
        return false;
    }
    PlScope none = {0};
    ExExpr *e = pl_bind_scalar(ctx->b, &none, ast, "the default of lag/lead");
    e = e ? pl_cast(ctx->b, e, type, ast->src_off) : NULL;
    return e != NULL && ex_expr_eval_const(e, ctx->b->arena, out, ctx->b->err) == CM_OK;
}

static CmType window_type(ExWinFn fn, CmType arg)
{
    switch (fn) {
    case EX_WIN_ROW_NUMBER:
    case EX_WIN_RANK:
    case EX_WIN_DENSE_RANK:
    case EX_WIN_COUNT_STAR:
    case EX_WIN_COUNT:
        return cm_type_make(CM_T_INT64);
    case EX_WIN_PERCENT_RANK:
    case EX_WIN_CUME_DIST:
    case EX_WIN_AVG:
        return cm_type_make(CM_T_DOUBLE);
    case EX_WIN_SUM:
        return agg_result_type(EX_AGG_SUM, arg);
    default:
        return arg;
    }
}

static bool bind_frame(PlBindCtx *ctx, const PsWindow *w, int64_t off, ExWindowSpec *s)
{
    if (w->frame == PS_FRAME_NONE) {
        s->rows = false;
        s->start = EX_FRAME_UNBOUNDED_PRECEDING;
        s->end = w->order_by ? EX_FRAME_CURRENT_ROW : EX_FRAME_UNBOUNDED_FOLLOWING;
        return true;
    }
    s->rows = w->frame == PS_FRAME_ROWS;
    if (w->start_kind == PS_BOUND_UNBOUNDED_FOLLOWING ||
        w->end_kind == PS_BOUND_UNBOUNDED_PRECEDING) {
        fail(ctx, CM_BIND, off, "%s",
             w->start_kind == PS_BOUND_UNBOUNDED_FOLLOWING
                 ? "a frame cannot start at UNBOUNDED FOLLOWING"
                 : "a frame cannot end at UNBOUNDED PRECEDING");
        return false;
    }
    s->start = frame_bound(w->start_kind);
    s->end = frame_bound(w->end_kind);
    if (!s->rows && (s->start == EX_FRAME_PRECEDING || s->start == EX_FRAME_FOLLOWING ||
                     s->end == EX_FRAME_PRECEDING || s->end == EX_FRAME_FOLLOWING)) {
        fail(ctx, CM_BIND, -1, "RANGE frames with offsets are not supported yet%s", "");
        return false;
    }
    return (w->start_off == NULL || const_count(ctx, w->start_off, &s->start_off)) &&
           (w->end_off == NULL || const_count(ctx, w->end_off, &s->end_off));
}

/* fn(args) OVER (...): the arguments, partition and order keys are bound like
 * the select list (after aggregation when there is one); the call becomes a
 * placeholder column filled in by a WINDOW node. */
/* The window `w` stands for once the named window it builds on, looked up among
 * defs[0..n_defs) (a definition sees only the ones before it), is folded in:
 * PostgreSQL's rules. OVER w copies w; OVER (w ...) takes w's PARTITION BY and
 * ORDER BY, may add an ORDER BY w lacks and a frame, and may not build on a w
 * with a frame. *out receives a merged copy; NULL on error. */
static const PsWindow *resolve_window(PlBinder *b, const PsWindow *w, const PsList *defs,
                                      int n_defs, PsWindow *out)
{
    if (w->ref == NULL) {
        return w;
    }
    int i = n_defs - 1;
    while (i >= 0 && strcmp(((const PsWindowDef *)defs->items[i])->name, w->ref) != 0) {
        i--;
    }
    if (i < 0) {
        cm_err_set(b->err, CM_BIND, w->ref_off, "window '%s' does not exist", w->ref);
        return NULL;
    }
    const PsWindow *base =
        resolve_window(b, ((const PsWindowDef *)defs->items[i])->spec, defs, i, out);
    if (base == NULL) {
        return NULL;
    }
    PsWindow merged = *base;
    merged.ref = NULL;
    if (!w->ref_bare) {
        if (w->partition_by != NULL) {
            cm_err_set(b->err, CM_BIND, w->ref_off,
                       "cannot override PARTITION BY clause of window '%s'", w->ref);
            return NULL;
        }
        if (w->order_by != NULL && base->order_by != NULL) {
            cm_err_set(b->err, CM_BIND, w->ref_off,
                       "cannot override ORDER BY clause of window '%s'", w->ref);
            return NULL;
        }
        if (base->frame != PS_FRAME_NONE) {
            cm_err_set(b->err, CM_BIND, w->ref_off,
                       "cannot copy window '%s' because it has a frame clause", w->ref);
            return NULL;
        }
        if (w->order_by != NULL) {
            merged.order_by = w->order_by;
        }
        merged.frame = w->frame;
        merged.start_kind = w->start_kind;
        merged.end_kind = w->end_kind;
        merged.start_off = w->start_off;
        merged.end_off = w->end_off;
    }
    *out = merged;
    return out;
}

const PsWindow *pl_resolve_window(PlBinder *b, const PsWindow *w, const PsList *defs, PsWindow *out)
{
    return resolve_window(b, w, defs, defs != NULL ? defs->n : 0, out);
}

static ExExpr *bind_window(PlBindCtx *ctx, const PsExpr *ast)
{
    PlWinCtx *w = ctx->win;
    int fn = window_fn(ast->name, ast->star);
    if (w == NULL || fn < 0) {
        return fail(ctx, CM_BIND, ast->src_off,
                    fn < 0 ? "unknown window function %s"
                           : "window functions are not allowed in %s",
                    fn < 0 ? ast->name : ctx->clause);
    }
    if (w->n == PL_MAX_WINDOWS) {
        return fail(ctx, CM_LIMIT, ast->src_off, "too many window functions%s", "");
    }
    int i = w->n;
    ExWindowSpec *s = &w->spec[i];
    memset(s, 0, sizeof *s);
    s->fn = (ExWinFn)fn;
    s->arg = -1;
    int n_args = ast->args ? ast->args->n : 0;
    PlBindCtx inner = *ctx;
    inner.win = NULL; /* no window inside a window */
    w->arg[i] = NULL;
    if (ast->distinct) {
        return fail(ctx, CM_BIND, ast->src_off,
                    "DISTINCT is not implemented for window functions%s", "");
    }
    if (ast->agg_order != NULL) {
        return fail(ctx, CM_BIND, ast->agg_order_off,
                    "ORDER BY inside the call of a window function is not supported yet%s", "");
    }
    if (ast->filter != NULL && fn < EX_WIN_COUNT_STAR) {
        return fail(ctx, CM_BIND, ast->src_off,
                    "FILTER is not implemented for non-aggregate window functions%s", "");
    }
    if ((fn == EX_WIN_LAG || fn == EX_WIN_LEAD) && n_args > 3) {
        return fail(ctx, CM_BIND, ast->src_off, "wrong number of arguments to %s", ast->name);
    }
    if (n_args > 0) {
        w->arg[i] = pl_bind_expr(&inner, ast->args->items[0]);
        if (w->arg[i] == NULL) {
            return NULL;
        }
    }
    if (ast->filter != NULL) {
        if ((w->arg[i] = filter_case(&inner, ast, w->arg[i], fn == EX_WIN_COUNT_STAR)) == NULL) {
            return NULL;
        }
        if (fn == EX_WIN_COUNT_STAR) {
            s->fn = (ExWinFn)(fn = EX_WIN_COUNT);
            n_args = 1;
        }
    }
    if (w->arg[i] != NULL) {
        s->arg_type = w->arg[i]->type;
        if ((fn == EX_WIN_SUM || fn == EX_WIN_AVG) && !agg_arg_is_numeric(ctx, ast, s->arg_type)) {
            return NULL;
        }
        if ((s->arg_type.id == CM_T_LIST || s->arg_type.id == CM_T_INTERVAL) &&
            fn != EX_WIN_COUNT) {
            return list_arg_fail(ctx, ast, s->arg_type);
        }
    }
    if ((fn == EX_WIN_LAG || fn == EX_WIN_LEAD)) {
        s->start_off = 1;
        if (n_args >= 2 && !const_count(ctx, ast->args->items[1], &s->start_off)) {
            return NULL;
        }
        if (n_args == 3 && !const_default(ctx, ast->args->items[2], s->arg_type, &s->dflt)) {
            return NULL;
        }
        s->has_dflt = n_args == 3;
    }
    bool needs_arg = fn >= EX_WIN_COUNT && fn != EX_WIN_COUNT_STAR;
    if (needs_arg != (n_args > 0)) {
        return fail(ctx, CM_BIND, ast->src_off, "wrong number of arguments to %s", ast->name);
    }
    PsWindow resolved;
    const PsWindow *pw = pl_resolve_window(ctx->b, ast->over, ctx->b->windows, &resolved);
    if (pw == NULL) {
        return NULL;
    }
    s->n_part = pw->partition_by ? pw->partition_by->n : 0;
    s->n_order = pw->order_by ? pw->order_by->n : 0;
    w->part[i] = new_args(ctx->b, s->n_part);
    w->order[i] = new_args(ctx->b, s->n_order);
    s->order = cm_arena_zalloc(ctx->b->arena, sizeof(ExSortKey) * (size_t)(s->n_order + 1));
    if (w->part[i] == NULL || w->order[i] == NULL || s->order == NULL) {
        return NULL;
    }
    for (int k = 0; k < s->n_part; k++) {
        if ((w->part[i][k] = pl_bind_expr(&inner, pw->partition_by->items[k])) == NULL) {
            return NULL;
        }
    }
    for (int k = 0; k < s->n_order; k++) {
        const PsOrderItem *o = pw->order_by->items[k];
        if ((w->order[i][k] = pl_bind_expr(&inner, o->expr)) == NULL) {
            return NULL;
        }
        s->order[k].desc = o->desc;
        s->order[k].nulls_first = o->nulls == 0 ? o->desc : o->nulls == 1;
    }
    if (!bind_frame(ctx, pw, ast->src_off, s)) {
        return NULL;
    }
    s->type = window_type(s->fn, s->arg_type);
    w->n++;
    ExExpr *ref = ex_expr_column(ctx->b->arena, PL_WIN_BASE + i, s->type);
    if (ref != NULL) {
        ref->src_off = ast->src_off;
    }
    return ref;
}

/* grouping(a, b, ...): bit i (from the left, most significant first) is 1
 * when argument i is rolled up in the row's grouping set; a CASE on the set
 * number. */
static ExExpr *bind_grouping(PlBindCtx *ctx, const PsExpr *ast)
{
    PlAggCtx *agg = ctx->agg;
    int n = ast->args ? ast->args->n : 0;
    if (agg == NULL || agg->empty || n == 0 || n > 62) {
        return fail(ctx, CM_BIND, ast->src_off, "GROUPING is allowed only with GROUP BY%s", "");
    }
    int keys[64];
    for (int i = 0; i < n; i++) {
        PlBindCtx pre = *ctx;
        pre.agg = NULL;
        pre.win = NULL;
        const PsExpr *arg = ast->args->items[i];
        ExExpr *e = pl_bind_expr(&pre, arg);
        if (e == NULL) {
            return NULL;
        }
        keys[i] = -1;
        int limit = agg->n_sets > 0 ? agg->n_set_keys : agg->n_keys;
        for (int k = 0; k < limit && keys[i] < 0; k++) {
            keys[i] = pl_expr_equal(e, agg->keys[k]) ? k : -1;
        }
        if (keys[i] < 0) {
            return fail(ctx, CM_BIND, arg->src_off,
                        "arguments of GROUPING must be grouping expressions%s", "");
        }
    }
    CmValue zero = {.type = cm_type_make(CM_T_INT64), .i = 0};
    if (agg->n_sets == 0) {
        return ex_expr_const(ctx->b->arena, &zero);
    }
    int n_case = 2 * agg->n_sets + 1;
    ExExpr **args = new_args(ctx->b, n_case);
    if (args == NULL) {
        return NULL;
    }
    for (int s = 0; s < agg->n_sets; s++) {
        CmValue id = {.type = cm_type_make(CM_T_INT64), .i = s};
        CmValue bits = {.type = cm_type_make(CM_T_INT64)};
        for (int i = 0; i < n; i++) {
            bits.i = bits.i * 2 + !((agg->set_masks[s] >> keys[i]) & 1);
        }
        ExExpr *pair[2] = {ex_expr_column(ctx->b->arena, agg->gid_key, zero.type),
                           ex_expr_const(ctx->b->arena, &id)};
        args[2 * s] = pair[0] && pair[1] ? pl_make_call(ctx->b, "=", pair, 2, ast->src_off) : NULL;
        args[2 * s + 1] = ex_expr_const(ctx->b->arena, &bits);
        if (args[2 * s] == NULL || args[2 * s + 1] == NULL) {
            return NULL;
        }
    }
    args[n_case - 1] = ex_expr_const(ctx->b->arena, &zero);
    return args[n_case - 1] ? make_case(ctx->b, n_case, args, true, ast->src_off) : NULL;
}

/* False (with the error) when no function has the call's name and argument
 * count.  Checked before the arguments are bound, so that an unknown function
 * is reported as such, not as an argument that is not grouped (`median(x)` in
 * a grouped query) or any other error of its arguments.  A name must be a
 * scalar function of the registry (planner/bind/functions.h): the executor's
 * operator names (neg, is_null, not_like) are not callable.  The catalog
 * resolves by name and count first: NULL-typed arguments can fail only on
 * their types (CM_TYPE), which the real call reports after binding. */
static bool function_exists(PlBindCtx *ctx, const PsExpr *ast, int n)
{
    const PlFunc *f = pl_func_find(ast->name, PL_FUNC_SCALAR);
    if (f == NULL) {
        cm_err_set(ctx->b->err, CM_BIND, ast->src_off, "unknown function %s with %d argument%s",
                   ast->name, n, n == 1 ? "" : "s");
        return false;
    }
    if (f->code == PL_FUNC_BINDER) {
        return true;
    }
    CmType types[EX_FUNC_MAX_ARGS] = {{0}};
    if (n > EX_FUNC_MAX_ARGS) {
        return true; /* pl_make_call reports the count */
    }
    ExFuncMatch m;
    CmErr probe;
    cm_err_init(&probe);
    if (ex_func_resolve(ast->name, n, types, ast->src_off, &m, &probe) == CM_BIND) {
        cm_err_set(ctx->b->err, probe.code, probe.off, "%s", probe.msg);
        return false;
    }
    return true;
}

/* unnest(list) in the select list: the list is bound now and computed below
 * the UNNEST node (binder.c, build_unnest); the call reads its element, as the
 * placeholder column PL_UNNEST_COL.  One per select list, as only the rows of
 * one list can be lined up without DuckDB's zipping of several. */
static ExExpr *bind_unnest(PlBindCtx *ctx, const PsExpr *ast)
{
    PlWinCtx *w = ctx->win;
    if (w == NULL || ctx->in_agg_arg) {
        return fail(ctx, CM_BIND, ast->src_off, "unnest is not allowed in %s",
                    ctx->in_agg_arg ? "an aggregate's argument" : ctx->clause);
    }
    if (w->unnest != NULL) {
        return fail(ctx, CM_BIND, ast->src_off, "only one unnest per select list is supported%s",
                    "");
    }
    if (ast->args == NULL || ast->args->n != 1 || ast->distinct || ast->star) {
        return fail(ctx, CM_BIND, ast->src_off, "unnest takes exactly one argument%s", "");
    }
    PlBindCtx inner = *ctx;
    inner.win = NULL;
    inner.clause = "the argument of unnest";
    ExExpr *arg = pl_bind_expr(&inner, ast->args->items[0]);
    if (arg != NULL && arg->type.id == CM_T_NULL) {
        arg = pl_cast(ctx->b, arg, cm_type_list(cm_type_make(CM_T_INT32)), ast->src_off);
    }
    if (arg == NULL) {
        return NULL;
    }
    if (arg->type.id != CM_T_LIST) {
        char tn[32];
        cm_err_set(ctx->b->err, CM_TYPE, ast->src_off, "unnest needs a list, not %s",
                   cm_type_name(arg->type, tn, sizeof tn));
        return NULL;
    }
    w->unnest = arg;
    ExExpr *e = ex_expr_column(ctx->b->arena, PL_UNNEST_COL, cm_type_elem(arg->type));
    if (e == NULL) {
        return fail(ctx, CM_OOM, -1, "out of memory%s", "");
    }
    e->src_off = ast->src_off;
    return e;
}

static ExExpr *bind_function(PlBindCtx *ctx, const PsExpr *ast)
{
    if (strcmp(ast->name, "grouping") == 0 || strcmp(ast->name, "grouping_id") == 0) {
        return bind_grouping(ctx, ast);
    }
    int fn = agg_fn_of(ast->name, ast->star);
    if (fn >= 0 && ast->over == NULL) {
        return bind_aggregate(ctx, ast, fn);
    }
    if (ast->over != NULL) {
        return bind_window(ctx, ast);
    }
    if (ast->filter != NULL) {
        return fail(ctx, CM_BIND, ast->src_off, "FILTER is allowed only on aggregate functions%s",
                    "");
    }
    if (ast->agg_order != NULL) {
        return fail(ctx, CM_BIND, ast->agg_order_off,
                    "ORDER BY inside a call is allowed only on aggregate functions%s", "");
    }
    if (strcmp(ast->name, "unnest") == 0) {
        return bind_unnest(ctx, ast);
    }
    int n = ast->args ? ast->args->n : 0;
    if (!function_exists(ctx, ast, n)) {
        return NULL;
    }
    ExExpr **args = new_args(ctx->b, n);
    if (args == NULL) {
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        args[i] = pl_bind_expr(ctx, ast->args->items[i]);
        if (args[i] == NULL) {
            return NULL;
        }
    }
    if (!strcmp(ast->name, "coalesce") || !strcmp(ast->name, "ifnull") ||
        !strcmp(ast->name, "nullif")) {
        return bind_conditional(ctx, ast, args, n);
    }
    if (!strcmp(ast->name, "typeof") && n == 1) {
        /* the argument's type as DuckDB names it, known when the query binds */
        char buf[64];
        const char *name = cm_type_name(args[0]->type, buf, sizeof buf);
        size_t len = strlen(name);
        char *copy = cm_arena_strndup(ctx->b->arena, name, len);
        CmValue v = {.type = cm_type_varchar(-1, false)};
        if (copy == NULL) {
            return fail(ctx, CM_OOM, -1, "out of memory%s", "");
        }
        v.s = cm_str_make(copy, (uint32_t)len);
        return ex_expr_const(ctx->b->arena, &v);
    }
    if ((!strcmp(ast->name, "if") || !strcmp(ast->name, "iif")) && n == 3) {
        /* if(c, a, b) is CASE WHEN c THEN a ELSE b END (DuckDB, sqlite3's iif) */
        ExExpr **when = new_args(ctx->b, 3);
        if (when == NULL ||
            (when[0] = pl_cast(ctx->b, args[0], cm_type_make(CM_T_BOOL), ast->src_off)) == NULL) {
            return NULL;
        }
        when[1] = args[1];
        when[2] = args[2];
        return make_case(ctx->b, 3, when, true, ast->src_off);
    }
    int mode = ex_rounding_mode(ast->name);
    if ((mode == 0 || mode == 3) && n == 2 && args[1]->kind == EX_E_CONST &&
        !args[1]->value.is_null && cm_type_is_integer(args[1]->type) &&
        (cm_type_is_decimal(args[0]->type) || cm_type_is_integer(args[0]->type))) {
        /* round or trunc(DECIMAL or integer, n): exact, with n decimals (at most the
         * input's) and its precision, one more digit for n < 0 (99 rounds to
         * 100), as many as the storage holds; an integer keeps its type (a
         * result past it is an overflow); see func_math.c.  Past 40
         * digits either way n changes nothing more. */
        CmType in = args[0]->type;
        int scale = cm_type_is_decimal(in) ? in.scale : 0;
        int64_t digits = args[1]->value.i;
        int keep = digits > 40 ? 40 : digits < -40 ? -40 : (int)digits;
        int cap = in.id == CM_T_DECIMAL128 ? 38 : 18;
        int prec = keep < 0 && in.precision < cap ? in.precision + 1 : in.precision;
        int out_scale = keep < 0 ? 0 : keep < scale ? keep : scale;
        CmType t = cm_type_is_decimal(in) ? cm_type_decimal(prec, out_scale) : in;
        ExExpr *e = ex_expr_func(ctx->b->arena, ast->name, ex_round_digits_kernel(), t, 1, args);
        if (e == NULL) {
            return fail(ctx, CM_OOM, -1, "out of memory%s", "");
        }
        e->aux = scale | (int64_t)(keep + 128) << 8 | (int64_t)mode << 16;
        e->src_off = ast->src_off;
        return fold(ctx->b, e);
    }
    if ((!strcmp(ast->name, "extract") || !strcmp(ast->name, "date_part")) && n == 2) {
        /* extract(year FROM d) arrives as extract('year', d): the field must be constant. */
        const PsExpr *f = ast->args->items[0];
        if (f->kind != PS_EX_STRING || ex_date_field(f->str) < 0) {
            return fail(ctx, CM_BIND, f->src_off, "unknown date field in %s", ast->name);
        }
        return pl_make_call(ctx->b, f->str, &args[1], 1, ast->src_off);
    }
    return pl_make_call(ctx->b, ast->name, args, n, ast->src_off);
}

static bool refs_post(const ExExpr *e)
{
    if (e->kind == EX_E_COLUMN) {
        return e->col >= PL_POST_BASE && e->col < PL_POST_BASE + PL_MAX_POST;
    }
    for (int i = 0; i < e->n_args; i++) {
        if (refs_post(e->args[i])) {
            return true;
        }
    }
    return false;
}

/* After aggregation, a subquery that reads the grouped rows (a correlated one,
 * or x IN (subquery) with x not constant) must see them as groups: each outer
 * column it reads must be a group key, and it is bound later, over the
 * aggregate's output (binder.c, join_late), where a key rolled up by ROLLUP or
 * CUBE is NULL.  Here it becomes a placeholder of its type; an IN's left
 * operand is bound now, as any expression after aggregation is. */
static ExExpr *defer_subquery(PlBindCtx *ctx, const PsExpr *ast, const PlNode *q)
{
    PlAggCtx *agg = ctx->agg;
    PlLate late = {.ast = ast, .type = cm_type_make(CM_T_BOOL)};
    if (ast->kind == PS_EX_SUBQUERY) {
        if (q->n_cols != 1) {
            return fail(ctx, CM_BIND, ast->src_off, "subquery must return only one column%s", "");
        }
        late.type = q->types[0];
    } else if (ast->kind == PS_EX_IN_SELECT && ast->left->kind == PS_EX_ROW) {
        const PsList *items = ast->left->args;
        late.row = cm_arena_alloc(ctx->b->arena, sizeof(ExExpr *) * (size_t)items->n);
        if (late.row == NULL) {
            return fail(ctx, CM_OOM, -1, "out of memory%s", "");
        }
        for (int i = 0; i < items->n; i++) {
            if ((late.row[i] = pl_bind_expr(ctx, items->items[i])) == NULL) {
                return NULL;
            }
        }
    } else if (ast->kind == PS_EX_IN_SELECT) {
        /* Bound first: a subquery in it is deferred too, and must come first. */
        if ((late.left = pl_bind_expr(ctx, ast->left)) == NULL) {
            return NULL;
        }
    }
    if (agg->n_late == PL_MAX_POST) {
        return fail(ctx, CM_LIMIT, ast->src_off, "too many subqueries after aggregation%s", "");
    }
    agg->late[agg->n_late] = late;
    return ex_expr_column(ctx->b->arena, PL_LATE_BASE + agg->n_late++, late.type);
}

/* After aggregation an uncorrelated scalar or EXISTS subquery (one row) is
 * joined onto the aggregate's output; the others are deferred (above). */
static ExExpr *bind_subquery_value(PlBindCtx *ctx, const PsExpr *ast)
{
    if (ctx->agg == NULL) {
        return pl_bind_subquery(ctx, ast);
    }
    if (ctx->agg->empty || ctx->input == NULL) {
        return fail(ctx, CM_BIND, ast->src_off, "a subquery is not supported here%s", "");
    }
    if (ast->kind == PS_EX_IN_SELECT && ctx->agg->n_post < PL_MAX_POST) {
        /* x IN (subquery) where nothing reads the rows (x constant, subquery
         * uncorrelated): a one-row plan joined after aggregation.  Otherwise it
         * fails to bind here and is deferred. */
        CmErr probe;
        cm_err_init(&probe);
        CmErr *saved = ctx->b->err;
        ctx->b->err = &probe;
        PlNode *one = pl_bind_in_one_row(ctx, ast);
        ctx->b->err = saved;
        if (pl_trial_oom(ctx->b, &probe)) {
            return NULL;
        }
        if (one != NULL) {
            ctx->agg->post[ctx->agg->n_post] = one;
            return ex_expr_column(ctx->b->arena, PL_POST_BASE + ctx->agg->n_post++, one->types[0]);
        }
    }
    PlBindCtx pre = *ctx;
    pre.agg = NULL;
    pre.grouped = ctx->agg;
    pre.grouped_scope = ctx->scope;
    PlOuter o;
    const PlNode *q = pl_subquery_outer_refs(&pre, ast, &o);
    pre.grouped = NULL;
    if (q == NULL) {
        return NULL;
    }
    if (o.n_refs > 0 || ast->kind == PS_EX_IN_SELECT) {
        return defer_subquery(ctx, ast, q);
    }
    pre.post_agg = ctx->agg;
    ExExpr *e = pl_bind_subquery(&pre, ast);
    if (e != NULL && !refs_post(e)) {
        return fail(ctx, CM_INTERNAL, ast->src_off,
                    "an uncorrelated subquery was not joined "
                    "after aggregation%s",
                    "");
    }
    return e;
}

static bool has_subquery(const PsExpr *ast, bool scalar)
{
    for (; ast != NULL; ast = ast->left) { /* `left` by iteration, as pl_has_aggregate */
        if ((scalar && ast->kind == PS_EX_SUBQUERY) || ast->kind == PS_EX_EXISTS ||
            ast->kind == PS_EX_IN_SELECT) {
            return true;
        }
        if (has_subquery(ast->right, scalar)) {
            return true;
        }
        for (int i = 0; ast->args != NULL && i < ast->args->n; i++) {
            if (ast->kind == PS_EX_CASE) {
                const PsWhen *w = ast->args->items[i];
                if (has_subquery(w->cond, scalar) || has_subquery(w->result, scalar)) {
                    return true;
                }
            } else if (has_subquery(ast->args->items[i], scalar)) {
                return true;
            }
        }
    }
    return false;
}

static bool is_not_returnable(const PsExpr *ast)
{
    return ast->kind == PS_EX_SUBQUERY || ast->kind == PS_EX_EXISTS ||
           ast->kind == PS_EX_IN_SELECT || is_aggregate_call(ast) || is_window_call(ast);
}

const PsExpr *pl_find_not_returnable(const PsExpr *ast)
{
    return ast_find(ast, is_not_returnable);
}

bool pl_has_subquery(const PsExpr *ast)
{
    return has_subquery(ast, true);
}

bool pl_has_predicate_subquery(const PsExpr *ast)
{
    return has_subquery(ast, false);
}

ExExpr *pl_bind_expr(PlBindCtx *ctx, const PsExpr *ast)
{
    ExExpr *e = is_chain(ast) ? bind_chain(ctx, ast) : bind_node(ctx, ast);
    if (e == NULL && ctx->b->err->code == CM_OK) {
        /* a node allocator (ex_expr_column, ...) came back empty-handed; no
         * other failure is silent, and a silent one would bind a hole */
        cm_err_set(ctx->b->err, CM_OOM, ast->src_off, "out of memory");
    }
    return e;
}

/* Binds a node that is not a chain (those go to bind_chain, whose innermost
 * operand comes back here). */
static ExExpr *bind_node(PlBindCtx *ctx, const PsExpr *ast)
{
    /* Any subtree but an aggregate, window or grouping() call may be a group key. */
    bool keyable =
        ast->kind != PS_EX_FUNC || (agg_fn_of(ast->name, ast->star) < 0 && ast->over == NULL &&
                                    strcmp(ast->name, "grouping") != 0);
    if (ctx->agg != NULL && keyable) {
        bool matched;
        ExExpr *k = match_group_key(ctx, ast, &matched);
        if (matched) {
            return k;
        }
        if (ast->kind == PS_EX_COLUMN) {
            return fail(ctx, CM_BIND, ast->src_off,
                        "column '%s' must appear in the GROUP BY clause or be used in an "
                        "aggregate function",
                        ast->name);
        }
    }
    PlOuter *o = ctx->b->outer;
    if (o != NULL && o->grouped != NULL && keyable && ast->kind != PS_EX_COLUMN &&
        !pl_has_aggregate(ast) && !pl_has_subquery(ast) && !has_window(ast) &&
        reads_only_outer(ctx->scope, o->scope, ast)) {
        /* A subtree of enclosing columns only may equal a group key as a whole
         * (GROUP BY a + 1 ... WHERE t.x = s.a + 1). */
        bool matched;
        ExExpr *e = grouped_outer(ctx, ast, &matched);
        if (matched || ctx->b->err->code != CM_OK) {
            return e;
        }
    }
    if (pl_is_row_op(ast)) {
        return pl_bind_row(ctx, ast);
    }
    switch (ast->kind) {
    case PS_EX_INT:
    case PS_EX_NUMBER:
    case PS_EX_STRING:
    case PS_EX_NULL:
    case PS_EX_BOOL:
    case PS_EX_TYPED:
        return bind_literal(ctx, ast);
    case PS_EX_PARAM:
        return bind_param(ctx, ast);
    case PS_EX_COLUMN:
        return bind_column(ctx, ast);
    case PS_EX_FUNC:
        return bind_function(ctx, ast);
    case PS_EX_CASE:
        return bind_case(ctx, ast);
    case PS_EX_BETWEEN:
        return bind_between(ctx, ast);
    case PS_EX_IS_DISTINCT:
        return bind_is_distinct(ctx, ast);
    case PS_EX_IN_LIST:
        return bind_in_list(ctx, ast);
    case PS_EX_LIKE:
        return bind_like(ctx, ast);
    case PS_EX_SUBQUERY:
    case PS_EX_EXISTS:
    case PS_EX_IN_SELECT:
        return bind_subquery_value(ctx, ast);
    case PS_EX_STAR:
        return fail(ctx, CM_BIND, ast->src_off, "'*' is not allowed here%s", "");
    case PS_EX_DEFAULT:
        return fail(ctx, CM_BIND, ast->src_off, "DEFAULT is not allowed here%s", "");
    case PS_EX_ROW:
        return fail(ctx, CM_BIND, ast->src_off,
                    "a row value is allowed only in a comparison or IN%s", "");
    default:
        return fail(ctx, CM_BIND, ast->src_off, "'%s' is not supported yet",
                    pl_source_text(ctx->b, ast->src_off, ast->src_len));
    }
}

bool pl_expr_equal(const ExExpr *a, const ExExpr *b)
{
    if (a->kind != b->kind || !cm_type_eq(a->type, b->type) || a->n_args != b->n_args) {
        return false;
    }
    switch (a->kind) {
    case EX_E_COLUMN:
        return a->col == b->col;
    case EX_E_CONST:
        if (a->value.is_null || b->value.is_null) {
            return a->value.is_null == b->value.is_null;
        }
        if (a->type.id == CM_T_VARCHAR) {
            return cm_str_eq(&a->value.s, &b->value.s);
        }
        if (a->type.id == CM_T_LIST) {
            return cm_list_eq(&a->value.l, &b->value.l, cm_type_elem(a->type));
        }
        if (a->type.id == CM_T_DECIMAL128) {
            return memcmp(a->value.h, b->value.h, sizeof a->value.h) == 0;
        }
        if (a->type.id == CM_T_INTERVAL) {
            return a->value.iv.months == b->value.iv.months &&
                   a->value.iv.days == b->value.iv.days && a->value.iv.micros == b->value.iv.micros;
        }
        return a->type.id == CM_T_DOUBLE ? a->value.d == b->value.d : a->value.i == b->value.i;
    case EX_E_FUNC:
        if (a->kernel != b->kernel || a->aux != b->aux) {
            return false;
        }
        break;
    default:
        if (a->has_else != b->has_else) {
            return false;
        }
        break;
    }
    for (int i = 0; i < a->n_args; i++) {
        if (!pl_expr_equal(a->args[i], b->args[i])) {
            return false;
        }
    }
    return true;
}

ExExpr *pl_bind_scalar(PlBinder *b, const PlScope *scope, const PsExpr *ast, const char *clause)
{
    PlBindCtx ctx = {.b = b, .scope = scope, .clause = clause};
    return pl_bind_expr(&ctx, ast);
}

CmStatus pl_type_from_ast(const PsTypeName *t, CmType *out, CmErr *err)
{
    const char *n = t->name;
    if (!strcmp(n, "integer") || !strcmp(n, "int") || !strcmp(n, "int4") ||
        !strcmp(n, "smallint") || !strcmp(n, "int2") || !strcmp(n, "tinyint")) {
        *out = cm_type_make(CM_T_INT32);
    } else if (!strcmp(n, "bigint") || !strcmp(n, "int8")) {
        *out = cm_type_make(CM_T_INT64);
    } else if (!strcmp(n, "double") || !strcmp(n, "float") || !strcmp(n, "real") ||
               !strcmp(n, "float8") || !strcmp(n, "float4")) {
        *out = cm_type_make(CM_T_DOUBLE);
    } else if (!strcmp(n, "decimal") || !strcmp(n, "numeric")) {
        int64_t p = t->n_params >= 1 ? t->params[0] : 18;
        int64_t s = t->n_params >= 2 ? t->params[1] : (t->n_params == 1 ? 0 : 3);
        if (p < 1 || p > 38 || s < 0 || s > p) {
            return cm_err_set(err, CM_TYPE, t->src_off,
                              "DECIMAL(%lld,%lld) is not supported: precision must be 1..38 and "
                              "scale 0..precision",
                              (long long)p, (long long)s);
        }
        *out = cm_type_decimal((int)p, (int)s);
    } else if (!strcmp(n, "hugeint") || !strcmp(n, "int128")) {
        *out = cm_type_decimal(38, 0); /* DuckDB's HUGEINT, as an exact 38-digit integer */
    } else if (!strcmp(n, "char") || !strcmp(n, "character") || !strcmp(n, "bpchar")) {
        *out = cm_type_varchar(t->n_params >= 1 ? (int32_t)t->params[0] : 1, true);
    } else if (!strcmp(n, "varchar") || !strcmp(n, "character varying")) {
        *out = cm_type_varchar(t->n_params >= 1 ? (int32_t)t->params[0] : -1, false);
    } else if (!strcmp(n, "text") || !strcmp(n, "string")) {
        *out = cm_type_varchar(-1, false);
    } else if (!strcmp(n, "date")) {
        *out = cm_type_make(CM_T_DATE);
    } else if (!strcmp(n, "time")) {
        *out = cm_type_make(CM_T_TIME);
    } else if (!strcmp(n, "timestamp") || !strcmp(n, "datetime")) {
        *out = cm_type_make(CM_T_TIMESTAMP);
    } else if (!strcmp(n, "interval")) {
        *out = cm_type_make(CM_T_INTERVAL);
    } else if (!strcmp(n, "boolean") || !strcmp(n, "bool")) {
        *out = cm_type_make(CM_T_BOOL);
    } else {
        return cm_err_set(err, CM_TYPE, t->src_off, "type '%s' is not supported", n);
    }
    if (t->is_list) {
        *out = cm_type_list(*out);
    }
    return CM_OK;
}
