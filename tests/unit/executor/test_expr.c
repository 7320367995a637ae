/*
 * test_expr.c - unit tests for executor/expr.c: evaluation over selection
 * vectors (only active rows computed, results at physical positions), column
 * views, constants, three-valued AND/OR truth tables, CASE, NULL tests,
 * state reuse across batches, constant folding and EXPLAIN text.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "ex_test_util.h"

static CmArena arena;
static CmErr err;

static void setup(void)
{
    cm_arena_init(&arena, 0);
    cm_err_init(&err);
}

static void teardown(void)
{
    cm_arena_fini(&arena);
}

TestSuite(ex_expr, .init = setup, .fini = teardown);

static CmType T_I64(void)
{
    return cm_type_make(CM_T_INT64);
}

static CmType T_BOOL(void)
{
    return cm_type_make(CM_T_BOOL);
}

static CmType T_STR(void)
{
    return cm_type_varchar(-1, false);
}

/* Evaluates e over b and returns the vector (borrowed from the state). */
static const CmVec *eval(ExExprState *st, const CmBatch *b)
{
    const CmVec *v = ex_expr_eval(st, b, &err);
    cr_assert_not_null(v, "evaluation failed: %s", err.msg);
    return v;
}

/* ---- selection vectors ------------------------------------------------------------ */

Test(ex_expr, only_selected_rows_are_computed)
{
    if (CM_BATCH_CAP < 3) {
        cr_skip_test("needs three rows per batch");
    }
    CmType t[2] = {T_I64(), T_I64()};
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 2, t, &err), CM_OK);
    int64_t *x = b.cols[0].data, *y = b.cols[1].data;
    /* Row 1 would fail (division by zero) but is not selected. */
    x[0] = 100, y[0] = 7;
    x[1] = 1, y[1] = 0;
    x[2] = -9, y[2] = 2;
    b.sel_buf[0] = 2;
    b.sel_buf[1] = 0;
    b.sel = b.sel_buf;
    b.n_rows = 2;
    ExExpr *e = expr_bin(&arena, "/", expr_col(&arena, 0, T_I64()), expr_col(&arena, 1, T_I64()));
    ExExprState *st = ex_expr_state_new(e, &err);
    cr_assert_not_null(st);
    const CmVec *v = eval(st, &b);
    cr_expect_eq(((int64_t *)v->data)[0], 14);
    cr_expect_eq(((int64_t *)v->data)[2], -4, "integer division truncates toward zero");

    /* Selecting row 1 makes it fail. */
    b.sel_buf[0] = 1;
    b.n_rows = 1;
    cr_expect_null(ex_expr_eval(st, &b, &err));
    cr_expect_eq(err.code, CM_RUNTIME);
    ex_expr_state_free(st);
    cm_batch_fini(&b);
}

Test(ex_expr, overflow_in_unselected_row_is_ignored)
{
    if (CM_BATCH_CAP < 2) {
        cr_skip_test("needs two rows per batch");
    }
    CmType t[1] = {T_I64()};
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, t, &err), CM_OK);
    int64_t *x = b.cols[0].data;
    x[0] = INT64_MAX;
    x[1] = 41;
    b.sel_buf[0] = 1;
    b.sel = b.sel_buf;
    b.n_rows = 1;
    ExExpr *e = expr_bin(&arena, "+", expr_col(&arena, 0, T_I64()), expr_const(&arena, v_i64(1)));
    ExExprState *st = ex_expr_state_new(e, &err);
    const CmVec *v = eval(st, &b);
    cr_expect_eq(((int64_t *)v->data)[1], 42);
    ex_expr_state_free(st);
    cm_batch_fini(&b);
}

Test(ex_expr, column_reference_is_a_view)
{
    CmType t[2] = {T_I64(), T_STR()};
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 2, t, &err), CM_OK);
    b.n_rows = 1;
    cm_vec_set_null(&b.cols[1], 0);
    ExExprState *st = ex_expr_state_new(expr_col(&arena, 1, T_STR()), &err);
    const CmVec *v = eval(st, &b);
    cr_expect_eq(v->data, b.cols[1].data);
    cr_expect_eq(v->validity, b.cols[1].validity);
    ex_expr_state_free(st);
    cm_batch_fini(&b);
}

Test(ex_expr, constant_fills_the_selected_positions)
{
    CmType t[1] = {T_I64()};
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, t, &err), CM_OK);
    uint32_t last = CM_BATCH_CAP - 1;
    b.sel_buf[0] = last;
    b.sel = b.sel_buf;
    b.n_rows = 1;
    ExExprState *st = ex_expr_state_new(expr_const(&arena, v_i64(-5)), &err);
    const CmVec *v = eval(st, &b);
    cr_expect_eq(((int64_t *)v->data)[last], -5);
    cr_expect_not(cm_vec_is_null(v, last));
    ex_expr_state_free(st);

    st = ex_expr_state_new(expr_const(&arena, v_null(T_I64())), &err);
    v = eval(st, &b);
    cr_expect(cm_vec_is_null(v, last));
    ex_expr_state_free(st);
    cm_batch_fini(&b);
}

/* ---- three-valued logic --------------------------------------------------------------- */

enum { TV_F = 0, TV_T = 1, TV_N = 2 };

static CmValue tv_value(int tv)
{
    return tv == TV_N ? v_null(T_BOOL()) : v_bool(tv == TV_T);
}

/* Evaluates `e` (over bool columns 0 and 1) for every (a, b) pair, CM_BATCH_CAP
 * rows at a time with the active rows reversed, and checks expect[a][b]. */
static void check_table(ExExpr *e, const int expect[3][3], const char *what)
{
    CmType t[2] = {T_BOOL(), T_BOOL()};
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 2, t, &err), CM_OK);
    ExExprState *st = ex_expr_state_new(e, &err);
    cr_assert_not_null(st);
    int combos[9][2];
    for (int k = 0; k < 9; k++) {
        combos[k][0] = k / 3;
        combos[k][1] = k % 3;
    }
    for (int start = 0; start < 9; start += CM_BATCH_CAP) {
        cm_batch_reset(&b);
        int n = 9 - start < CM_BATCH_CAP ? 9 - start : CM_BATCH_CAP;
        for (int i = 0; i < n; i++) {
            for (int c = 0; c < 2; c++) {
                CmValue v = tv_value(combos[start + i][c]);
                cm_vec_set_value(&b.cols[c], (uint32_t)i, &v);
            }
            b.sel_buf[i] = (uint32_t)(n - 1 - i);
        }
        b.sel = b.sel_buf;
        b.n_rows = n;
        const CmVec *v = eval(st, &b);
        for (int i = 0; i < n; i++) {
            int x = combos[start + i][0], y = combos[start + i][1];
            int got = cm_vec_is_null(v, (uint32_t)i) ? TV_N : ((uint8_t *)v->data)[i] ? TV_T : TV_F;
            static const char *names = "FTN";
            cr_expect_eq(got, expect[x][y], "%s: %c, %c gave %c, want %c", what, names[x], names[y],
                         names[got], names[expect[x][y]]);
        }
    }
    ex_expr_state_free(st);
    cm_batch_fini(&b);
}

Test(ex_expr, and_truth_table)
{
    ExExpr *args[2] = {expr_col(&arena, 0, T_BOOL()), expr_col(&arena, 1, T_BOOL())};
    ExExpr *e = expr_node(&arena, EX_E_AND, T_BOOL(), 2, args);
    /* rows: a = F, T, N; columns: b = F, T, N */
    static const int expect[3][3] = {
        {TV_F, TV_F, TV_F},
        {TV_F, TV_T, TV_N},
        {TV_F, TV_N, TV_N},
    };
    check_table(e, expect, "AND");
}

Test(ex_expr, or_truth_table)
{
    ExExpr *args[2] = {expr_col(&arena, 0, T_BOOL()), expr_col(&arena, 1, T_BOOL())};
    ExExpr *e = expr_node(&arena, EX_E_OR, T_BOOL(), 2, args);
    static const int expect[3][3] = {
        {TV_F, TV_T, TV_N},
        {TV_T, TV_T, TV_T},
        {TV_N, TV_T, TV_N},
    };
    check_table(e, expect, "OR");
}

Test(ex_expr, not_truth_table)
{
    ExExpr *arg = expr_col(&arena, 0, T_BOOL());
    ExExpr *e = expr_call(&arena, "not", 1, &arg);
    static const int expect[3][3] = {
        {TV_T, TV_T, TV_T},
        {TV_F, TV_F, TV_F},
        {TV_N, TV_N, TV_N},
    };
    check_table(e, expect, "NOT");
}

Test(ex_expr, is_null_and_is_not_null)
{
    ExExpr *arg = expr_col(&arena, 1, T_BOOL());
    static const int is_null[3][3] = {
        {TV_F, TV_F, TV_T},
        {TV_F, TV_F, TV_T},
        {TV_F, TV_F, TV_T},
    };
    check_table(expr_call(&arena, "is_null", 1, &arg), is_null, "IS NULL");
    static const int not_null[3][3] = {
        {TV_T, TV_T, TV_F},
        {TV_T, TV_T, TV_F},
        {TV_T, TV_T, TV_F},
    };
    check_table(expr_call(&arena, "is_not_null", 1, &arg), not_null, "IS NOT NULL");
}

Test(ex_expr, and_or_with_three_arguments)
{
    /* a AND b AND NOT b / a OR b OR NULL over every (a, b). */
    ExExpr *a = expr_col(&arena, 0, T_BOOL()), *b = expr_col(&arena, 1, T_BOOL());
    ExExpr *not_b = expr_call(&arena, "not", 1, &b);
    ExExpr *and_args[3] = {a, b, not_b};
    static const int and3[3][3] = {
        {TV_F, TV_F, TV_F},
        {TV_F, TV_F, TV_N},
        {TV_F, TV_F, TV_N},
    };
    check_table(expr_node(&arena, EX_E_AND, T_BOOL(), 3, and_args), and3, "AND3");
    ExExpr *null_bool = expr_const(&arena, v_null(T_BOOL()));
    ExExpr *or_args[3] = {a, b, null_bool};
    static const int or3[3][3] = {
        {TV_N, TV_T, TV_N},
        {TV_T, TV_T, TV_T},
        {TV_N, TV_T, TV_N},
    };
    check_table(expr_node(&arena, EX_E_OR, T_BOOL(), 3, or_args), or3, "OR3");
}

/* ---- CASE ------------------------------------------------------------------------------- */

/* CASE WHEN x > 10 THEN 'big value over here' WHEN x > 5 THEN 'mid' [ELSE 'small'] END */
static ExExpr *size_case(bool with_else)
{
    ExExpr *x = expr_col(&arena, 0, T_I64());
    ExExpr *args[5] = {
        expr_bin(&arena, ">", x, expr_const(&arena, v_i64(10))),
        expr_const(&arena, v_str("big value over here")),
        expr_bin(&arena, ">", x, expr_const(&arena, v_i64(5))),
        expr_const(&arena, v_str("mid")),
        expr_const(&arena, v_str("small")),
    };
    ExExpr *e = expr_node(&arena, EX_E_CASE, T_STR(), with_else ? 5 : 4, args);
    e->has_else = with_else;
    return e;
}

static void check_case(bool with_else)
{
    static const int64_t xs[] = {20, 7, 1, 0 /* NULL */, 11, 5};
    static const char *want_else[] = {"big value over here", "mid",  "small", "small",
                                      "big value over here", "small"};
    CmType t[1] = {T_I64()};
    Rows rows;
    rows_init(&rows, 1, t);
    for (int i = 0; i < 6; i++) {
        CmValue v = i == 3 ? v_null(T_I64()) : v_i64(xs[i]);
        rows_add(&rows, &v);
    }
    ExResult *in = rows_done(&rows);
    ExExprState *st = ex_expr_state_new(size_case(with_else), &err);
    cr_assert_not_null(st);
    int64_t row = 0;
    for (int bi = 0; bi < ex_result_n_batches(in); bi++) {
        const CmBatch *b = ex_result_batch(in, bi);
        const CmVec *v = eval(st, b);
        for (int i = 0; i < b->n_rows; i++, row++) {
            const char *want = want_else[row];
            bool want_null = !with_else && strcmp(want, "small") == 0;
            cr_assert_eq(cm_vec_is_null(v, (uint32_t)i), want_null, "row %lld", (long long)row);
            if (!want_null) {
                const CmStr *s = &((CmStr *)v->data)[i];
                cr_expect_eq(s->len, strlen(want), "row %lld", (long long)row);
                cr_expect_eq(memcmp(cm_str_data(s), want, s->len), 0, "row %lld", (long long)row);
            }
        }
    }
    ex_expr_state_free(st);
    ex_result_free(in);
}

Test(ex_expr, case_with_else)
{
    check_case(true);
}

Test(ex_expr, case_without_else_gives_null)
{
    check_case(false);
}

Test(ex_expr, case_then_null_gives_null)
{
    ExExpr *args[3] = {expr_const(&arena, v_bool(true)), expr_const(&arena, v_null(T_I64())),
                       expr_const(&arena, v_i64(1))};
    ExExpr *e = expr_node(&arena, EX_E_CASE, T_I64(), 3, args);
    e->has_else = true;
    CmValue out;
    cr_assert_eq(ex_expr_eval_const(e, &arena, &out, &err), CM_OK);
    cr_expect(out.is_null);
}

/* ---- state reuse ------------------------------------------------------------------------- */

Test(ex_expr, nulls_of_one_batch_do_not_leak_into_the_next)
{
    CmType t[2] = {T_I64(), T_I64()};
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 2, t, &err), CM_OK);
    ExExpr *x = expr_col(&arena, 0, T_I64()), *y = expr_col(&arena, 1, T_I64());
    ExExpr *plus = expr_bin(&arena, "+", x, y);
    ExExpr *div = expr_bin(&arena, "/", x, y);
    ExExpr *gt = expr_bin(&arena, ">", x, y);
    ExExpr *and_args[2] = {gt, gt};
    ExExpr *and_e = expr_node(&arena, EX_E_AND, T_BOOL(), 2, and_args);
    ExExpr *exprs[4] = {plus, div, gt, and_e};
    for (int k = 0; k < 4; k++) {
        ExExprState *st = ex_expr_state_new(exprs[k], &err);
        cr_assert_not_null(st);
        /* Batch 1: every row NULL in x. */
        cm_batch_reset(&b);
        for (int i = 0; i < CM_BATCH_CAP; i++) {
            cm_vec_set_null(&b.cols[0], (uint32_t)i);
            ((int64_t *)b.cols[1].data)[i] = 1;
        }
        b.n_rows = CM_BATCH_CAP;
        const CmVec *v = eval(st, &b);
        cr_assert(cm_vec_is_null(v, 0), "expr %d", k);
        /* Batch 2: no NULLs at all. */
        cm_batch_reset(&b);
        for (int i = 0; i < CM_BATCH_CAP; i++) {
            ((int64_t *)b.cols[0].data)[i] = 10 + i;
            ((int64_t *)b.cols[1].data)[i] = 2;
        }
        b.n_rows = CM_BATCH_CAP;
        v = eval(st, &b);
        for (int i = 0; i < CM_BATCH_CAP; i++) {
            cr_assert_not(cm_vec_is_null(v, (uint32_t)i), "expr %d row %d", k, i);
        }
        if (k == 0) {
            cr_expect_eq(((int64_t *)v->data)[0], 12);
        }
        ex_expr_state_free(st);
    }
    cm_batch_fini(&b);
}

/* ---- strings ------------------------------------------------------------------------------ */

Test(ex_expr, concat_with_nulls_and_long_results)
{
    CmType t[2] = {T_STR(), T_STR()};
    Rows rows;
    rows_init(&rows, 2, t);
    CmValue r0[2] = {v_str("abc"), v_str("def")};
    CmValue r1[2] = {v_str("a longer left side "), v_str("and a longer right side")};
    CmValue r2[2] = {v_null(T_STR()), v_str("x")};
    CmValue r3[2] = {v_str(""), v_str("")};
    rows_add(&rows, r0);
    rows_add(&rows, r1);
    rows_add(&rows, r2);
    rows_add(&rows, r3);
    ExResult *in = rows_done(&rows);
    ExExpr *e = expr_bin(&arena, "||", expr_col(&arena, 0, T_STR()), expr_col(&arena, 1, T_STR()));
    ExOp *proj = ex_project_new(&arena, 1, expr_args(&arena, 1, &e), &err);
    cr_assert_not_null(proj);
    ExResult *out;
    cr_assert_eq(drive_op(proj, in, NULL, &out, &err), CM_OK, "%s", err.msg);
    cr_assert_eq(ex_result_n_rows(out), 4);
    cr_expect(cell_str_is(out, 0, 0, "abcdef"));
    cr_expect(cell_str_is(out, 1, 0, "a longer left side and a longer right side"));
    cr_expect(cell_null(out, 2, 0));
    cr_expect(cell_str_is(out, 3, 0, ""));
    ex_result_free(out);
    ex_result_free(in);
}

/* The slot under a NULL string may hold no string at all (table chunks leave
 * it uninitialized; ASan fills fresh heap with 0xbe): string comparisons must
 * not dereference it.  Simulated with explicit garbage. */
Test(ex_expr, string_compare_does_not_read_under_nulls)
{
    CmType t[1] = {T_STR()};
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, t, &err), CM_OK);
    CmStr garbage;
    memset(&garbage, 0xbe, sizeof garbage);
    ((CmStr *)b.cols[0].data)[0] = garbage;
    cm_vec_set_null(&b.cols[0], 0);
    b.n_rows = 1;
    ExExpr *e = expr_bin(&arena, "=", expr_col(&arena, 0, T_STR()),
                         expr_const(&arena, v_str("a constant of some length")));
    ExExprState *st = ex_expr_state_new(e, &err);
    const CmVec *v = eval(st, &b);
    cr_expect(cm_vec_is_null(v, 0));
    ex_expr_state_free(st);
    cm_batch_fini(&b);
}

/* ---- constants and text ------------------------------------------------------------------- */

Test(ex_expr, eval_const_folds_a_tree)
{
    /* 2 + 3 * 4 - (10 / 3) = 11 */
    ExExpr *mul = expr_bin(&arena, "*", expr_const(&arena, v_i64(3)), expr_const(&arena, v_i64(4)));
    ExExpr *add = expr_bin(&arena, "+", expr_const(&arena, v_i64(2)), mul);
    ExExpr *div =
        expr_bin(&arena, "/", expr_const(&arena, v_i64(10)), expr_const(&arena, v_i64(3)));
    ExExpr *e = expr_bin(&arena, "-", add, div);
    cr_expect(ex_expr_is_constant(e));
    CmValue out;
    cr_assert_eq(ex_expr_eval_const(e, &arena, &out, &err), CM_OK, "%s", err.msg);
    cr_expect_not(out.is_null);
    cr_expect_eq(out.type.id, CM_T_INT64);
    cr_expect_eq(out.i, 11);
}

Test(ex_expr, eval_const_copies_strings_into_the_arena)
{
    ExExpr *e = expr_bin(&arena, "||", expr_const(&arena, v_str("first half, ")),
                         expr_const(&arena, v_str("second half")));
    CmValue out;
    cr_assert_eq(ex_expr_eval_const(e, &arena, &out, &err), CM_OK);
    /* The evaluation state is gone; the value must still be readable. */
    cr_assert_eq(out.s.len, strlen("first half, second half"));
    cr_expect_eq(memcmp(cm_str_data(&out.s), "first half, second half", out.s.len), 0);
}

Test(ex_expr, eval_const_reports_errors)
{
    ExExpr *e = expr_bin(&arena, "/", expr_const(&arena, v_i64(1)), expr_const(&arena, v_i64(0)));
    e->src_off = 17;
    CmValue out;
    cr_expect_eq(ex_expr_eval_const(e, &arena, &out, &err), CM_RUNTIME);
    cr_expect_str_eq(err.msg, "division by zero");
    cr_expect_eq(err.off, 17);
}

Test(ex_expr, is_constant)
{
    ExExpr *c = expr_const(&arena, v_i64(1));
    ExExpr *x = expr_col(&arena, 0, T_I64());
    cr_expect(ex_expr_is_constant(c));
    cr_expect_not(ex_expr_is_constant(x));
    cr_expect_not(ex_expr_is_constant(expr_bin(&arena, "+", c, x)));
    cr_expect(ex_expr_is_constant(expr_bin(&arena, "+", c, c)));
}

Test(ex_expr, to_string)
{
    char buf[128];
    ExExpr *x = expr_col(&arena, 2, T_I64());
    ExExpr *e = expr_bin(&arena, "+", x, expr_const(&arena, v_i64(3)));
    ex_expr_to_string(e, NULL, buf, sizeof buf);
    cr_expect_str_eq(buf, "+(#2, 3)");
    ExExpr *args[2] = {expr_bin(&arena, "=", x, expr_const(&arena, v_i64(1))),
                       expr_const(&arena, v_null(T_BOOL()))};
    ex_expr_to_string(expr_node(&arena, EX_E_OR, T_BOOL(), 2, args), NULL, buf, sizeof buf);
    cr_expect_str_eq(buf, "or(=(#2, 1), NULL)");
    ex_expr_to_string(expr_const(&arena, v_str("hi")), NULL, buf, sizeof buf);
    cr_expect_str_eq(buf, "'hi'");
    ex_expr_to_string(expr_const(&arena, v_dec(-5, 5, 2)), NULL, buf, sizeof buf);
    cr_expect_str_eq(buf, "-0.05");
    /* A tiny buffer is never overrun (and stays terminated). */
    char small[6];
    memset(small, 'Z', sizeof small);
    ex_expr_to_string(e, NULL, small, sizeof small);
    cr_expect_lt(strlen(small), sizeof small);
    /* Columns by their names where there are names, by position where not. */
    const char *names[] = {"a", NULL, "ss_item_sk"};
    ex_expr_to_string(e, names, buf, sizeof buf);
    cr_expect_str_eq(buf, "+(ss_item_sk, 3)");
    ex_expr_to_string(expr_bin(&arena, "<", expr_col(&arena, 1, T_I64()), x), names, buf,
                      sizeof buf);
    cr_expect_str_eq(buf, "<(#1, ss_item_sk)");
}
