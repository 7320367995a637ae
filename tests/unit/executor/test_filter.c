/*
 * test_filter.c - unit tests for executor/filter.c: keeps the rows whose
 * predicate is TRUE (never FALSE or NULL) by narrowing the selection, shares
 * the input's columns, and surfaces predicate errors.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "ex_test_util.h"

static CmArena arena;
static CmErr err;
static CmType types[2];

static void setup(void)
{
    cm_arena_init(&arena, 0);
    cm_err_init(&err);
}

static void teardown(void)
{
    cm_arena_fini(&arena);
}

TestSuite(ex_filter, .init = setup, .fini = teardown);

static ExResult *numbers_t(int n)
{
    return numbers(n, types);
}

/* ---- filter ----------------------------------------------------------------------------- */

static ExResult *filter_rows(const ExResult *in, ExExpr *pred, SelectFn sel)
{
    ExOp *op = ex_filter_new(&arena, pred, 2, types, &err);
    cr_assert_not_null(op);
    ExResult *out;
    cr_assert_eq(drive_op(op, in, sel, &out, &err), CM_OK, "%s", err.msg);
    return out;
}

Test(ex_filter, keeps_true_drops_false_and_null)
{
    int n = 40;
    ExResult *in = numbers_t(n);
    /* x % 3 = 0: NULL for the rows where x is NULL */
    ExExpr *x = expr_col(&arena, 0, types[0]);
    ExExpr *mod = expr_bin(&arena, "%", x, expr_const(&arena, v_i64(3)));
    ExExpr *pred = expr_bin(&arena, "=", mod, expr_const(&arena, v_i64(0)));
    ExResult *out = filter_rows(in, pred, NULL);
    int64_t r = 0;
    for (int i = 0; i < n; i++) {
        if (i % 4 != 2 && i % 3 == 0) {
            cr_assert_eq(source_of(out, r, 1), i);
            cr_assert_eq(cell_i(out, r, 0), i);
            r++;
        }
    }
    cr_assert_eq(ex_result_n_rows(out), r);
    ex_result_free(out);
    ex_result_free(in);
}

Test(ex_filter, narrows_an_existing_selection)
{
    int n = 60;
    ExResult *in = numbers_t(n);
    ExExpr *pred =
        expr_bin(&arena, "<", expr_col(&arena, 0, types[0]), expr_const(&arena, v_i64(30)));
    ExResult *out = filter_rows(in, pred, thin_out);
    int64_t r = 0;
    for (int i = 0; i < n; i++) {
        if (!thinned_out(i) && i % 4 != 2 && i < 30) {
            cr_assert_eq(source_of(out, r, 1), i, "output row %lld", (long long)r);
            r++;
        }
    }
    cr_assert_eq(ex_result_n_rows(out), r);
    ex_result_free(out);
    ex_result_free(in);
}

Test(ex_filter, shares_the_input_columns)
{
    ExResult *in = numbers_t(CM_BATCH_CAP);
    ExExpr *pred = expr_const(&arena, v_bool(true));
    ExOp *op = ex_filter_new(&arena, pred, 2, types, &err);
    ExTask task = {.n_tasks = 1};
    void *local = op->vt->local_init(op, &task, &err);
    const CmBatch *o = NULL;
    const CmBatch *b0 = ex_result_batch(in, 0);
    cr_expect_eq(op->vt->push(op, local, b0, &o, &err), EX_NEED_INPUT);
    cr_assert_not_null(o);
    cr_expect_eq(o->cols, b0->cols);
    cr_expect_eq(o->n_rows, CM_BATCH_CAP);
    /* A FALSE predicate yields no batch at all. */
    op->vt->local_fini(op, local);
    ExOp *none = ex_filter_new(&arena, expr_const(&arena, v_bool(false)), 2, types, &err);
    local = none->vt->local_init(none, &task, &err);
    o = NULL;
    cr_expect_eq(none->vt->push(none, local, b0, &o, &err), EX_NEED_INPUT);
    cr_expect_null(o);
    none->vt->local_fini(none, local);
    ex_result_free(in);
}

Test(ex_filter, predicate_errors_surface)
{
    ExResult *in = numbers_t(10);
    /* 100 / (x - 5) fails at x = 5 */
    ExExpr *x = expr_col(&arena, 0, types[0]);
    ExExpr *den = expr_bin(&arena, "-", x, expr_const(&arena, v_i64(5)));
    ExExpr *q = expr_bin(&arena, "/", expr_const(&arena, v_i64(100)), den);
    ExExpr *pred = expr_bin(&arena, ">", q, expr_const(&arena, v_i64(0)));
    ExOp *op = ex_filter_new(&arena, pred, 2, types, &err);
    ExResult *out;
    cr_expect_eq(drive_op(op, in, NULL, &out, &err), CM_RUNTIME);
    cr_expect_str_eq(err.msg, "division by zero");
    ex_result_free(out);
    ex_result_free(in);
}
