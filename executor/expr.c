/*
 * expr.c - evaluation of bound expression trees over batches.
 *
 * An ExExprState mirrors the tree: one node state per ExExpr node, each with
 * its own output vector, so evaluation allocates nothing per batch.  AND and OR
 * follow SQL's three-valued logic: FALSE AND NULL is FALSE, TRUE OR NULL is TRUE.
 * CASE evaluates a branch only over the rows that take it (selection
 * vectors narrowed branch by branch), so a branch never fails on a row it does
 * not produce.
 */
#include "executor/expr.h"

#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/datetime.h"
#include "common/mem.h"
#include "common/value.h"

struct ExExprState {
    const ExExpr *e;
    CmVec vec;  /* this node's output (unused for COLUMN) */
    CmVec view; /* COLUMN: a view of the input column */
    int n_children;
    ExExprState **children;
    CmArena heap;       /* strings made by this node, reset per evaluation; accounted */
    CmErr heap_refusal; /* why the heap's reservation was refused, if it was */
    bool has_vec;
    int const_filled;        /* CONST: vec holds the value at positions [0, const_filled) */
    uint32_t *sel_a, *sel_b; /* CASE: the rows still open, and those a branch took */
};

ExExprState *ex_expr_state_new(const ExExpr *e, CmErr *err)
{
    ExExprState *st = cm_calloc(1, sizeof *st);
    if (st == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    st->e = e;
    cm_arena_init(&st->heap, 16 * 1024);
    cm_err_init(&st->heap_refusal);
    cm_arena_reserve_through(&st->heap, cm_mem_values(), &st->heap_refusal);
    if (e->kind != EX_E_COLUMN) {
        if (cm_vec_init(&st->vec, e->type, err) != CM_OK) {
            ex_expr_state_free(st);
            return NULL;
        }
        st->has_vec = true;
    }
    if (e->kind == EX_E_CASE) {
        st->sel_a = cm_malloc(sizeof(uint32_t) * CM_BATCH_CAP);
        st->sel_b = cm_malloc(sizeof(uint32_t) * CM_BATCH_CAP);
        if (st->sel_a == NULL || st->sel_b == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory");
            ex_expr_state_free(st);
            return NULL;
        }
    }
    if (e->n_args > 0) {
        st->children = cm_calloc((size_t)e->n_args, sizeof(ExExprState *));
        if (st->children == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory");
            ex_expr_state_free(st);
            return NULL;
        }
        for (int i = 0; i < e->n_args; i++) {
            st->children[i] = ex_expr_state_new(e->args[i], err);
            st->n_children = i + 1;
            if (st->children[i] == NULL) {
                ex_expr_state_free(st);
                return NULL;
            }
        }
    }
    return st;
}

void ex_expr_state_free(ExExprState *st)
{
    if (st == NULL) {
        return;
    }
    for (int i = 0; i < st->n_children; i++) {
        ex_expr_state_free(st->children[i]);
    }
    cm_free(st->children);
    cm_free(st->sel_a);
    cm_free(st->sel_b);
    if (st->has_vec) {
        cm_vec_fini(&st->vec);
    }
    cm_arena_fini(&st->heap);
    cm_free(st);
}

/* A constant's vector is filled once per position: nothing writes into an
 * expression's output, so positions filled for one batch stay right for the
 * next, and each batch fills only the positions past any batch before it
 * (a recursive CTE or a short query makes new states all the time, and most
 * of their batches are small and dense). */
static void fill_const(ExExprState *st, const CmBatch *in)
{
    /* A selection may point anywhere in the batch: fill it all, once. */
    int need = in->sel != NULL ? CM_BATCH_CAP : in->n_rows;
    if (need <= st->const_filled) {
        return;
    }
    CmVec *v = &st->vec;
    const CmValue *val = &st->e->value;
    if (st->const_filled == 0) {
        v->validity = NULL;
        cm_vec_set_value(v, 0, val);
        st->const_filled = 1;
    }
    size_t w = cm_type_width(v->type);
    for (int p = st->const_filled; p < need; p++) {
        if (val->is_null) {
            cm_vec_set_null(v, (uint32_t)p);
        } else {
            memcpy((char *)v->data + w * (size_t)p, v->data, w);
        }
    }
    st->const_filled = need;
}

/* AND/OR of children none of which has a NULL: plain bitwise logic, a
 * child at a time, contiguous when there is no selection (the compiler
 * vectorizes those loops). */
static void eval_logic_valid(bool is_and, const CmBatch *in, const CmVec *const *args, int n_args,
                             uint8_t *restrict r)
{
    const int n = in->n_rows;
    const uint32_t *sel = in->sel;
    for (int a = 0; a < n_args; a++) {
        const uint8_t *restrict x = args[a]->data;
        if (sel == NULL) {
            if (a == 0) {
                for (int i = 0; i < n; i++) {
                    r[i] = x[i] != 0;
                }
            } else if (is_and) {
                for (int i = 0; i < n; i++) {
                    r[i] &= x[i] != 0;
                }
            } else {
                for (int i = 0; i < n; i++) {
                    r[i] |= x[i] != 0;
                }
            }
            continue;
        }
        for (int i = 0; i < n; i++) {
            uint32_t p = sel[i];
            uint8_t v = x[p] != 0;
            r[p] = a == 0 ? v : is_and ? (uint8_t)(r[p] & v) : (uint8_t)(r[p] | v);
        }
    }
}

/* Three-valued AND/OR over boolean children already evaluated. */
static void eval_logic(bool is_and, const CmBatch *in, const CmVec *const *args, int n, CmVec *out)
{
    uint8_t *r = out->data;
    out->validity = NULL;
    bool nulls = false;
    for (int a = 0; a < n; a++) {
        nulls |= args[a]->validity != NULL;
    }
    if (!nulls) {
        eval_logic_valid(is_and, in, args, n, r);
        return;
    }
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        bool any_null = false, decided = false;
        for (int a = 0; a < n && !decided; a++) {
            if (cm_vec_is_null(args[a], p)) {
                any_null = true;
            } else if ((((const uint8_t *)args[a]->data)[p] != 0) != is_and) {
                decided = true; /* FALSE for AND, TRUE for OR */
            }
        }
        if (decided) {
            r[p] = !is_and;
            cm_vec_set_valid(out, p);
        } else if (any_null) {
            cm_vec_set_null(out, p);
        } else {
            r[p] = is_and;
            cm_vec_set_valid(out, p);
        }
    }
}

/* Copies the values of `src` at the given positions into out. */
static void take(CmVec *out, const CmVec *src, const uint32_t *pos, int n, size_t w)
{
    for (int i = 0; i < n; i++) {
        uint32_t p = pos[i];
        if (src == NULL || cm_vec_is_null(src, p)) {
            cm_vec_set_null(out, p);
            continue;
        }
        cm_vec_set_valid(out, p);
        memcpy((char *)out->data + w * p, (const char *)src->data + w * p, w);
    }
}

/* CASE evaluates each WHEN only over the rows no earlier WHEN took, and each
 * THEN only over the rows its WHEN took: a branch is never computed for a row
 * that does not take it, so CASE WHEN b = 0 THEN 0 ELSE a / b END cannot fail.
 * The rows still open live in a selection narrowed branch by branch. */
static bool eval_case(ExExprState *st, const CmBatch *in, CmErr *err)
{
    const ExExpr *e = st->e;
    size_t w = cm_type_width(e->type);
    int n_pairs = (e->n_args - (e->has_else ? 1 : 0)) / 2;
    CmBatch view = *in;
    uint32_t *open = st->sel_a, *taken = st->sel_b;
    int n_open = in->n_rows;
    for (int i = 0; i < n_open; i++) {
        open[i] = cm_batch_pos(in, i);
    }
    st->vec.validity = NULL;
    for (int k = 0; k < n_pairs && n_open > 0; k++) {
        view.sel = open;
        view.n_rows = n_open;
        const CmVec *c = ex_expr_eval(st->children[2 * k], &view, err);
        if (c == NULL) {
            return false;
        }
        int n_taken = 0, n_rest = 0;
        for (int i = 0; i < n_open; i++) {
            uint32_t p = open[i];
            if (!cm_vec_is_null(c, p) && ((const uint8_t *)c->data)[p]) {
                taken[n_taken++] = p;
            } else {
                open[n_rest++] = p;
            }
        }
        if (n_taken > 0) {
            view.sel = taken;
            view.n_rows = n_taken;
            const CmVec *v = ex_expr_eval(st->children[2 * k + 1], &view, err);
            if (v == NULL) {
                return false;
            }
            take(&st->vec, v, taken, n_taken, w);
        }
        n_open = n_rest;
    }
    const CmVec *rest = NULL;
    if (e->has_else && n_open > 0) {
        view.sel = open;
        view.n_rows = n_open;
        if ((rest = ex_expr_eval(st->children[e->n_args - 1], &view, err)) == NULL) {
            return false;
        }
    }
    take(&st->vec, rest, open, n_open, w);
    return true;
}

const CmVec *ex_expr_eval(ExExprState *st, const CmBatch *in, CmErr *err)
{
    const ExExpr *e = st->e;
    if (e->kind == EX_E_COLUMN) {
        cm_vec_reference(&st->view, &in->cols[e->col]);
        return &st->view;
    }
    if (e->kind == EX_E_CONST) {
        fill_const(st, in);
        return &st->vec;
    }
    if (e->kind == EX_E_CASE) {
        return eval_case(st, in, err) ? &st->vec : NULL;
    }
    const CmVec *args_buf[16];
    const CmVec **args = args_buf;
    if (e->n_args > 16) {
        args = cm_malloc(sizeof(CmVec *) * (size_t)e->n_args);
        if (args == NULL) {
            cm_err_set(err, CM_OOM, e->src_off, "out of memory");
            return NULL;
        }
    }
    const CmVec *result = &st->vec;
    for (int i = 0; i < e->n_args && result != NULL; i++) {
        args[i] = ex_expr_eval(st->children[i], in, err);
        if (args[i] == NULL) {
            result = NULL;
        }
    }
    if (result != NULL) {
        cm_arena_reset(&st->heap);
        switch (e->kind) {
        case EX_E_FUNC:
            if (e->kernel(e, in, args, &st->vec, &st->heap, err) != CM_OK) {
                result = NULL;
                if (err->code == CM_OOM && st->heap_refusal.code == CM_OOM) {
                    /* the limit refused, not the heap: say who holds what */
                    int64_t off = err->off;
                    *err = st->heap_refusal;
                    err->off = off;
                    cm_err_init(&st->heap_refusal);
                }
            }
            break;
        case EX_E_AND:
        case EX_E_OR:
            eval_logic(e->kind == EX_E_AND, in, args, e->n_args, &st->vec);
            break;
        default:
            break;
        }
    }
    if (args != args_buf) {
        cm_free(args);
    }
    return result;
}

static ExExpr *node(CmArena *a, ExExprKind kind, CmType type)
{
    ExExpr *e = cm_arena_zalloc(a, sizeof *e);
    if (e != NULL) {
        e->kind = kind;
        e->type = type;
        e->src_off = -1;
    }
    return e;
}

ExExpr *ex_expr_column(CmArena *a, int col, CmType type)
{
    ExExpr *e = node(a, EX_E_COLUMN, type);
    if (e != NULL) {
        e->col = col;
    }
    return e;
}

ExExpr *ex_expr_const(CmArena *a, const CmValue *v)
{
    ExExpr *e = node(a, EX_E_CONST, v->type);
    if (e != NULL) {
        e->value = *v;
    }
    return e;
}

ExExpr *ex_expr_func(CmArena *a, const char *name, ExKernel kernel, CmType type, int n_args,
                     ExExpr **args)
{
    ExExpr *e = node(a, EX_E_FUNC, type);
    if (e != NULL) {
        e->name = name;
        e->kernel = kernel;
        e->n_args = n_args;
        e->args = args;
    }
    return e;
}

ExExpr *ex_expr_remap(CmArena *a, const ExExpr *e, const int *map)
{
    ExExpr *c = cm_arena_alloc(a, sizeof *c);
    if (c == NULL) {
        return NULL;
    }
    *c = *e;
    if (e->kind == EX_E_COLUMN) {
        c->col = map[e->col];
        return c;
    }
    if (e->n_args > 0) {
        c->args = cm_arena_alloc(a, sizeof(ExExpr *) * (size_t)e->n_args);
        if (c->args == NULL) {
            return NULL;
        }
        for (int i = 0; i < e->n_args; i++) {
            if ((c->args[i] = ex_expr_remap(a, e->args[i], map)) == NULL) {
                return NULL;
            }
        }
    }
    return c;
}

bool ex_expr_is_volatile(const ExExpr *e)
{
    if (e == NULL) {
        return false;
    }
    if (e->is_volatile) {
        return true;
    }
    for (int i = 0; i < e->n_args; i++) {
        if (ex_expr_is_volatile(e->args[i])) {
            return true;
        }
    }
    return false;
}

bool ex_expr_is_constant(const ExExpr *e)
{
    if (e->kind == EX_E_COLUMN || e->is_volatile) {
        return false;
    }
    for (int i = 0; i < e->n_args; i++) {
        if (!ex_expr_is_constant(e->args[i])) {
            return false;
        }
    }
    return true;
}

CmStatus ex_expr_eval_const(const ExExpr *e, CmArena *a, CmValue *out, CmErr *err)
{
    CmBatch one;
    if (cm_batch_init(&one, 0, NULL, err) != CM_OK) {
        return err->code;
    }
    one.n_rows = 1;
    ExExprState *st = ex_expr_state_new(e, err);
    if (st != NULL) {
        const CmVec *v = ex_expr_eval(st, &one, err);
        if (v != NULL) {
            cm_vec_get_value(v, 0, out);
            if (!out->is_null && out->type.id == CM_T_VARCHAR) {
                out->s = cm_str_copy(a, &out->s, err);
            } else if (!out->is_null && out->type.id == CM_T_LIST) {
                out->l = cm_list_copy(a, &out->l, cm_type_elem(out->type), err);
            }
        }
        ex_expr_state_free(st);
    }
    cm_batch_fini(&one);
    return err->code;
}

static void value_text(const CmValue *v, char *buf, size_t cap)
{
    char tmp[CM_FMT_CAP];
    if (v->is_null || v->type.id == CM_T_NULL) {
        snprintf(buf, cap, "NULL");
        return;
    }
    switch ((CmTypeId)v->type.id) {
    case CM_T_BOOL:
        snprintf(buf, cap, "%s", v->i ? "true" : "false");
        return;
    case CM_T_DOUBLE:
        cm_fmt_double(v->d, tmp);
        break;
    case CM_T_DECIMAL:
        cm_fmt_decimal(v->i, v->type.scale, tmp);
        break;
    case CM_T_DECIMAL128:
        cm_fmt_int128_decimal(cm_i128_get(v->h), v->type.scale, tmp);
        break;
    case CM_T_DATE:
        cm_fmt_date((int32_t)v->i, tmp);
        snprintf(buf, cap, "DATE '%s'", tmp);
        return;
    case CM_T_TIME:
        cm_fmt_time(v->i, tmp);
        snprintf(buf, cap, "TIME '%s'", tmp);
        return;
    case CM_T_TIMESTAMP:
        cm_fmt_timestamp(v->i, tmp);
        snprintf(buf, cap, "TIMESTAMP '%s'", tmp);
        return;
    case CM_T_INTERVAL:
        cm_fmt_interval(&v->iv, tmp);
        snprintf(buf, cap, "INTERVAL '%s'", tmp);
        return;
    case CM_T_VARCHAR:
        snprintf(buf, cap, "'%.*s'", (int)(v->s.len > 40 ? 40 : v->s.len), cm_str_data(&v->s));
        return;
    case CM_T_LIST:
        cm_fmt_list(&v->l, cm_type_elem(v->type), buf, cap);
        return;
    default:
        cm_fmt_int64(v->i, tmp);
        break;
    }
    snprintf(buf, cap, "%s", tmp);
}

size_t ex_col_to_string(const char *const *names, int col, char *buf, size_t cap)
{
    const char *name = names != NULL && col >= 0 ? names[col] : NULL;
    int n = name != NULL && name[0] != '\0' ? snprintf(buf, cap, "%s", name)
                                            : snprintf(buf, cap, "#%d", col);
    return n < 0 || cap == 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

void ex_expr_to_string(const ExExpr *e, const char *const *names, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    switch (e->kind) {
    case EX_E_COLUMN:
        ex_col_to_string(names, e->col, buf, cap);
        return;
    case EX_E_CONST:
        value_text(&e->value, buf, cap);
        return;
    case EX_E_AND:
        n = (size_t)snprintf(buf, cap, "and(");
        break;
    case EX_E_OR:
        n = (size_t)snprintf(buf, cap, "or(");
        break;
    case EX_E_CASE:
        n = (size_t)snprintf(buf, cap, "case(");
        break;
    case EX_E_FUNC:
        n = (size_t)snprintf(buf, cap, "%s(", e->name);
        break;
    }
    for (int i = 0; i < e->n_args && n + 2 < cap; i++) {
        if (i > 0) {
            n += (size_t)snprintf(buf + n, cap - n, ", ");
        }
        if (n + 2 < cap) {
            ex_expr_to_string(e->args[i], names, buf + n, cap - n);
            n += strlen(buf + n);
        }
    }
    if (n + 1 < cap) {
        snprintf(buf + n, cap - n, ")");
    }
}
