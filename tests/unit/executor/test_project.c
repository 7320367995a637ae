/*
 * test_project.c - unit tests for executor/project.c: computed columns,
 * column views and constants line up with the input's selection.
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

TestSuite(ex_project, .init = setup, .fini = teardown);

static ExResult *numbers_t(int n)
{
    return numbers(n, types);
}

/* ---- project ------------------------------------------------------------------------------ */

Test(ex_project, computed_columns_follow_the_selection)
{
    int n = 50;
    ExResult *in = numbers_t(n);
    ExExpr *x = expr_col(&arena, 0, types[0]);
    ExExpr *exprs[3] = {
        expr_bin(&arena, "*", x, expr_const(&arena, v_i64(10))),
        expr_col(&arena, 1, types[1]),
        expr_const(&arena, v_str("constant text, out of line")),
    };
    ExOp *op = ex_project_new(&arena, 3, expr_args(&arena, 3, exprs), &err);
    cr_assert_not_null(op);
    cr_expect_eq(op->n_cols, 3);
    cr_expect_eq(op->types[0].id, CM_T_INT64);
    cr_expect_eq(op->types[2].id, CM_T_VARCHAR);
    ExResult *out;
    cr_assert_eq(drive_op(op, in, thin_out, &out, &err), CM_OK, "%s", err.msg);
    int64_t r = 0;
    for (int i = 0; i < n; i++) {
        if (thinned_out(i)) {
            continue;
        }
        cr_assert_eq(source_of(out, r, 1), i);
        if (i % 4 == 2) {
            cr_assert(cell_null(out, r, 0));
        } else {
            cr_assert_eq(cell_i(out, r, 0), 10 * i);
        }
        cr_assert(cell_str_is(out, r, 2, "constant text, out of line"));
        r++;
    }
    cr_assert_eq(ex_result_n_rows(out), r);
    ex_result_free(out);
    ex_result_free(in);
}
