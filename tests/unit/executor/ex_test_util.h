/*
 * ex_test_util.h - helpers shared by the executor unit tests: value
 * constructors, a row builder that packs rows into batches of CM_BATCH_CAP
 * (so tests hold under the CM_BATCH_CAP=3 build), expression builders that
 * resolve operators and insert casts the way the binder does, a driver that
 * runs one streaming operator over batches (push, then flush), and readers
 * of ExResult cells.  Everything is static inline so each test file may use
 * any subset.
 */
#pragma once

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/vec.h"
#include "executor/expr.h"
#include "executor/func.h"
#include "executor/op.h"
#include "executor/ops.h"
#include "executor/result.h"

/* ---- values ------------------------------------------------------------------- */

static inline CmValue v_int(CmTypeId id, int64_t x)
{
    CmValue v;
    memset(&v, 0, sizeof v);
    v.type = cm_type_make(id);
    v.i = x;
    return v;
}

static inline CmValue v_i64(int64_t x)
{
    return v_int(CM_T_INT64, x);
}

static inline CmValue v_i32(int32_t x)
{
    return v_int(CM_T_INT32, x);
}

static inline CmValue v_bool(bool b)
{
    return v_int(CM_T_BOOL, b);
}

static inline CmValue v_f64(double d)
{
    CmValue v;
    memset(&v, 0, sizeof v);
    v.type = cm_type_make(CM_T_DOUBLE);
    v.d = d;
    return v;
}

static inline CmValue v_dec(int64_t scaled, int precision, int scale)
{
    CmValue v;
    memset(&v, 0, sizeof v);
    v.type = cm_type_decimal(precision, scale);
    v.i = scaled;
    return v;
}

/* The bytes must outlive the value (use literals). */
static inline CmValue v_str(const char *s)
{
    CmValue v;
    memset(&v, 0, sizeof v);
    v.type = cm_type_varchar(-1, false);
    v.s = cm_str_make(s, (uint32_t)strlen(s));
    return v;
}

static inline CmValue v_null(CmType t)
{
    CmValue v;
    memset(&v, 0, sizeof v);
    v.type = t;
    v.is_null = true;
    return v;
}

/* ---- building input ----------------------------------------------------------- */

/* Rows collected into an ExResult, one full batch at a time. */
typedef struct Rows {
    ExResult *res;
    CmBatch cur;
    int n_cols;
    CmErr err;
} Rows;

static inline void rows_init(Rows *r, int n_cols, const CmType *types)
{
    cm_err_init(&r->err);
    r->n_cols = n_cols;
    r->res = ex_result_new(n_cols, types, &r->err);
    cr_assert_not_null(r->res);
    cr_assert_eq(cm_batch_init(&r->cur, n_cols, types, &r->err), CM_OK);
}

static inline void rows_flush(Rows *r)
{
    if (r->cur.n_rows > 0) {
        cr_assert_eq(ex_result_append(r->res, &r->cur, &r->err), CM_OK);
        cm_batch_reset(&r->cur);
    }
}

static inline void rows_add(Rows *r, const CmValue *vals)
{
    for (int c = 0; c < r->n_cols; c++) {
        cm_vec_set_value(&r->cur.cols[c], (uint32_t)r->cur.n_rows, &vals[c]);
    }
    r->cur.n_rows++;
    if (r->cur.n_rows == CM_BATCH_CAP) {
        rows_flush(r);
    }
}

/* Finishes building: returns the result (owned by the caller). */
static inline ExResult *rows_done(Rows *r)
{
    rows_flush(r);
    cm_batch_fini(&r->cur);
    return r->res;
}

/* ---- reading results ---------------------------------------------------------- */

static inline void cell(const ExResult *res, int64_t row, int col, CmValue *out)
{
    cr_assert_lt(row, ex_result_n_rows(res));
    uint32_t pos;
    const CmBatch *b = ex_result_row_batch((ExResult *)res, row, &pos);
    cr_assert_not_null(b);
    cm_vec_get_value(&b->cols[col], pos, out);
}

static inline bool cell_null(const ExResult *res, int64_t row, int col)
{
    CmValue v;
    cell(res, row, col, &v);
    return v.is_null;
}

static inline int64_t cell_i(const ExResult *res, int64_t row, int col)
{
    CmValue v;
    cell(res, row, col, &v);
    cr_assert_not(v.is_null, "row %lld col %d is NULL", (long long)row, col);
    return v.i;
}

static inline double cell_d(const ExResult *res, int64_t row, int col)
{
    CmValue v;
    cell(res, row, col, &v);
    cr_assert_not(v.is_null, "row %lld col %d is NULL", (long long)row, col);
    return v.d;
}

/* Compares a VARCHAR cell with a C string. */
static inline bool cell_str_is(const ExResult *res, int64_t row, int col, const char *s)
{
    CmValue v;
    cell(res, row, col, &v);
    return !v.is_null && v.s.len == strlen(s) && memcmp(cm_str_data(&v.s), s, v.s.len) == 0;
}

/* Appends the text of one value to buf (for comparing rows as text). */
static inline void value_text(const CmValue *v, char *buf, size_t cap)
{
    size_t n = strlen(buf);
    if (v->is_null) {
        snprintf(buf + n, cap - n, "NULL|");
        return;
    }
    switch ((CmTypeId)v->type.id) {
    case CM_T_DOUBLE:
        snprintf(buf + n, cap - n, "%.17g|", v->d);
        break;
    case CM_T_VARCHAR:
        snprintf(buf + n, cap - n, "'%.*s'|", (int)v->s.len, cm_str_data(&v->s));
        break;
    case CM_T_DECIMAL:
        snprintf(buf + n, cap - n, "%llde-%d|", (long long)v->i, v->type.scale);
        break;
    default:
        snprintf(buf + n, cap - n, "%lld|", (long long)v->i);
        break;
    }
}

static inline int text_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The rows of res as text, sorted (a multiset view); free with rows_text_free. */
static inline char **rows_text(const ExResult *res)
{
    int64_t n = ex_result_n_rows(res);
    char **rows = calloc((size_t)(n ? n : 1), sizeof(char *));
    cr_assert_not_null(rows);
    for (int64_t r = 0; r < n; r++) {
        rows[r] = calloc(1, 1024);
        cr_assert_not_null(rows[r]);
        for (int c = 0; c < ex_result_n_cols(res); c++) {
            CmValue v;
            cell(res, r, c, &v);
            value_text(&v, rows[r], 1024);
        }
    }
    qsort(rows, (size_t)n, sizeof(char *), text_cmp);
    return rows;
}

static inline void rows_text_free(char **rows, int64_t n)
{
    for (int64_t r = 0; r < n; r++) {
        free(rows[r]);
    }
    free(rows);
}

/* Both results hold the same multiset of rows. */
static inline void expect_same_rows(const ExResult *a, const ExResult *b)
{
    int64_t n = ex_result_n_rows(a);
    cr_assert_eq(n, ex_result_n_rows(b), "row counts differ");
    cr_assert_eq(ex_result_n_cols(a), ex_result_n_cols(b));
    char **ta = rows_text(a), **tb = rows_text(b);
    for (int64_t r = 0; r < n; r++) {
        cr_assert_str_eq(ta[r], tb[r], "sorted row %lld differs", (long long)r);
    }
    rows_text_free(ta, n);
    rows_text_free(tb, n);
}

/* ---- a shared numbered input --------------------------------------------------------- */

/* Rows 0..n-1 of (x BIGINT, t VARCHAR): x = i, NULL when i % 4 == 2;
 * t = "row <i>", out of line for odd i.  `types` gets the two column types.
 * The texts only need to live until their batch is copied into the result. */
static inline ExResult *numbers(int n, CmType *types)
{
    static char texts[CM_BATCH_CAP][32];
    types[0] = cm_type_make(CM_T_INT64);
    types[1] = cm_type_varchar(-1, false);
    Rows rows;
    rows_init(&rows, 2, types);
    for (int i = 0; i < n; i++) {
        char *text = texts[i % CM_BATCH_CAP];
        snprintf(text, sizeof texts[0], i % 2 ? "row %d, a longer one" : "row %d", i);
        CmValue v[2] = {i % 4 == 2 ? v_null(types[0]) : v_i64(i), v_str(text)};
        rows_add(&rows, v);
    }
    return rows_done(&rows);
}

/* Input position of output row r of a numbers() derivative (from its text). */
static inline int64_t source_of(const ExResult *out, int64_t r, int text_col)
{
    CmValue v;
    cell(out, r, text_col, &v);
    char buf[40];
    snprintf(buf, sizeof buf, "%.*s", (int)v.s.len, cm_str_data(&v.s));
    return strtoll(buf + 4, NULL, 10);
}

/* A SelectFn: drops the rows where (i + batch) % 3 == 0, i the input position. */
static inline void thin_out(CmBatch *b, int batch_idx)
{
    int n = 0;
    for (int i = 0; i < b->n_rows; i++) {
        if ((batch_idx * CM_BATCH_CAP + i + batch_idx) % 3 != 0) {
            b->sel_buf[n++] = (uint32_t)i;
        }
    }
    b->sel = b->sel_buf;
    b->n_rows = n;
}

static inline bool thinned_out(int i)
{
    return (i + i / CM_BATCH_CAP) % 3 == 0;
}

/* ---- expressions ---------------------------------------------------------------- */

static inline ExExpr **expr_args(CmArena *a, int n, ExExpr *const *args)
{
    ExExpr **arr = cm_arena_alloc(a, sizeof(ExExpr *) * (size_t)(n ? n : 1));
    cr_assert_not_null(arr);
    for (int i = 0; i < n; i++) {
        arr[i] = args[i];
    }
    return arr;
}

static inline ExExpr *expr_cast(CmArena *a, ExExpr *arg, CmType to)
{
    ExKernel k = ex_cast_kernel(arg->type, to);
    cr_assert_not_null(k, "no cast");
    return ex_expr_func(a, "cast", k, to, 1, expr_args(a, 1, &arg));
}

/* Resolves `name` for the argument types, casting arguments as needed. */
static inline ExExpr *expr_call(CmArena *a, const char *name, int n, ExExpr *const *args_in)
{
    CmType types[EX_FUNC_MAX_ARGS];
    ExExpr *args[EX_FUNC_MAX_ARGS];
    for (int i = 0; i < n; i++) {
        types[i] = args_in[i]->type;
        args[i] = args_in[i];
    }
    ExFuncMatch m;
    CmErr err;
    cm_err_init(&err);
    cr_assert_eq(ex_func_resolve(name, n, types, -1, &m, &err), CM_OK, "%s: %s", name, err.msg);
    for (int i = 0; i < n; i++) {
        if (!cm_type_eq(types[i], m.arg_types[i]) &&
            !(types[i].id == CM_T_VARCHAR && m.arg_types[i].id == CM_T_VARCHAR)) {
            args[i] = expr_cast(a, args[i], m.arg_types[i]);
        }
    }
    if (m.swap_args) {
        ExExpr *first = args[0];
        args[0] = args[1];
        args[1] = first;
    }
    ExExpr *e = ex_expr_func(a, name, m.kernel, m.result, n, expr_args(a, n, args));
    cr_assert_not_null(e);
    e->aux = m.aux;
    return e;
}

static inline ExExpr *expr_bin(CmArena *a, const char *name, ExExpr *x, ExExpr *y)
{
    ExExpr *args[2] = {x, y};
    return expr_call(a, name, 2, args);
}

static inline ExExpr *expr_col(CmArena *a, int col, CmType t)
{
    ExExpr *e = ex_expr_column(a, col, t);
    cr_assert_not_null(e);
    return e;
}

static inline ExExpr *expr_const(CmArena *a, CmValue v)
{
    ExExpr *e = ex_expr_const(a, &v);
    cr_assert_not_null(e);
    return e;
}

/* AND / OR / CASE nodes have no constructor: the binder builds them. */
static inline ExExpr *expr_node(CmArena *a, ExExprKind kind, CmType type, int n,
                                ExExpr *const *args)
{
    ExExpr *e = cm_arena_zalloc(a, sizeof *e);
    cr_assert_not_null(e);
    e->kind = kind;
    e->type = type;
    e->n_args = n;
    e->args = expr_args(a, n, args);
    e->src_off = -1;
    return e;
}

/* ---- running one operator --------------------------------------------------------- */

/* Runs op's push over every batch of `in` (with `sel_of` narrowing each
 * batch when given), then its flush, collecting output into a new result of
 * the op's types.  Returns the status; *out gets the rows either way. */
typedef void (*SelectFn)(CmBatch *b, int batch_idx);

static inline CmStatus drive_op(ExOp *op, const ExResult *in, SelectFn sel_of, ExResult **out,
                                CmErr *err)
{
    *out = ex_result_new(op->n_cols, op->types, err);
    cr_assert_not_null(*out);
    ExTask task = {.query = NULL, .task_idx = 0, .n_tasks = 1, .worker_id = 0};
    void *local = op->vt->local_init ? op->vt->local_init(op, &task, err) : NULL;
    if (err->code != CM_OK) {
        return err->code;
    }
    bool done = false;
    for (int b = 0; in != NULL && b < ex_result_n_batches(in) && !done; b++) {
        CmBatch view = *ex_result_batch(in, b);
        if (sel_of != NULL) {
            sel_of(&view, b);
        }
        for (;;) {
            const CmBatch *o = NULL;
            ExOpResult r = op->vt->push(op, local, &view, &o, err);
            if (err->code != CM_OK) {
                goto end;
            }
            if (o != NULL && o->n_rows > 0) {
                cr_assert_eq(ex_result_append(*out, o, err), CM_OK);
            }
            if (r == EX_DONE) {
                done = true;
            }
            if (r != EX_HAVE_MORE) {
                break;
            }
        }
    }
    if (!done && op->vt->flush != NULL) {
        ExOpResult r;
        do {
            const CmBatch *o = NULL;
            r = op->vt->flush(op, local, &o, err);
            if (err->code != CM_OK) {
                goto end;
            }
            if (o != NULL && o->n_rows > 0) {
                cr_assert_eq(ex_result_append(*out, o, err), CM_OK);
            }
        } while (r == EX_HAVE_MORE);
    }
end:
    if (op->vt->local_fini != NULL) {
        op->vt->local_fini(op, local);
    }
    return err->code;
}
