/*
 * test_window.c - the WINDOW and EXPAND operators on hand-built batches:
 * ranking over peer groups, running and whole-partition frames, ROWS frames
 * with offsets, lag/lead, and the grouping-set expansion's NULL views.
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

TestSuite(ex_window, .init = setup, .fini = teardown);

/* (g BIGINT, x BIGINT): partition a = 1, 2, 2, 5; partition b = 7, NULL. */
static ExResult *input(CmType *types)
{
    types[0] = types[1] = cm_type_make(CM_T_INT64);
    Rows r;
    rows_init(&r, 2, types);
    int64_t g[] = {1, 2, 1, 1, 2, 1}, x[] = {2, 7, 1, 5, -1, 2};
    for (int i = 0; i < 6; i++) {
        CmValue row[2] = {v_i64(g[i]), x[i] < 0 ? v_null(types[1]) : v_i64(x[i])};
        rows_add(&r, row);
    }
    return rows_done(&r);
}

static ExResult *run(ExWindowSpec *spec, ExResult *in, const CmType *types)
{
    ExOp *op = ex_window_new(&arena, spec, 2, types, &err);
    cr_assert_not_null(op);
    ExResult *out = NULL;
    cr_assert_eq(drive_op(op, in, NULL, &out, &err), CM_OK, "%s", err.msg);
    return out;
}

/* The window column of the row whose (g, x) is given (x < 0 for NULL). */
static CmValue value_for(const ExResult *out, int64_t g, int64_t x, int nth)
{
    for (int64_t r = 0; r < ex_result_n_rows(out); r++) {
        bool xn = cell_null(out, r, 1);
        if (cell_i(out, r, 0) == g && (x < 0 ? xn : !xn && cell_i(out, r, 1) == x) && nth-- == 0) {
            CmValue v;
            cell(out, r, 2, &v);
            return v;
        }
    }
    cr_assert_fail("row (%lld, %lld) not found", (long long)g, (long long)x);
    return v_i64(0);
}

static ExWindowSpec spec_of(ExWinFn fn, int arg, CmType type)
{
    static int part[1] = {0};
    static ExSortKey order[1] = {{.col = 1, .desc = false, .nulls_first = false}};
    ExWindowSpec s = {.fn = fn, .arg = arg, .arg_type = cm_type_make(CM_T_INT64), .type = type,
                      .n_part = 1, .part = part, .n_order = 1, .order = order,
                      .start = EX_FRAME_UNBOUNDED_PRECEDING, .end = EX_FRAME_CURRENT_ROW};
    return s;
}

Test(ex_window, ranks_follow_peer_groups)
{
    CmType types[2];
    ExResult *in = input(types);
    CmType i64 = cm_type_make(CM_T_INT64);
    ExWindowSpec rn = spec_of(EX_WIN_ROW_NUMBER, -1, i64), rk = spec_of(EX_WIN_RANK, -1, i64),
                 dr = spec_of(EX_WIN_DENSE_RANK, -1, i64);
    ExResult *a = run(&rn, in, types), *b = run(&rk, in, types), *c = run(&dr, in, types);
    /* partition 1: x = 1, 2, 2, 5 */
    cr_expect_eq(value_for(b, 1, 1, 0).i, 1);
    cr_expect_eq(value_for(b, 1, 2, 0).i, 2);
    cr_expect_eq(value_for(b, 1, 2, 1).i, 2);
    cr_expect_eq(value_for(b, 1, 5, 0).i, 4);
    cr_expect_eq(value_for(c, 1, 5, 0).i, 3);
    cr_expect_eq(value_for(a, 1, 5, 0).i, 4);
    /* partition 2: 7, then NULL (NULLs sort last) */
    cr_expect_eq(value_for(a, 2, 7, 0).i, 1);
    cr_expect_eq(value_for(a, 2, -1, 0).i, 2);
    ex_result_free(a);
    ex_result_free(b);
    ex_result_free(c);
    ex_result_free(in);
}

Test(ex_window, running_sum_includes_peers)
{
    CmType types[2];
    ExResult *in = input(types);
    ExWindowSpec s = spec_of(EX_WIN_SUM, 1, cm_type_make(CM_T_INT64));
    ExResult *out = run(&s, in, types);
    cr_expect_eq(value_for(out, 1, 1, 0).i, 1);
    cr_expect_eq(value_for(out, 1, 2, 0).i, 5); /* both peers 2 count: 1 + 2 + 2 */
    cr_expect_eq(value_for(out, 1, 2, 1).i, 5);
    cr_expect_eq(value_for(out, 1, 5, 0).i, 10);
    cr_expect_eq(value_for(out, 2, -1, 0).i, 7); /* NULL adds nothing */
    ex_result_free(out);
    ex_result_free(in);
}

Test(ex_window, rows_frame_with_offsets)
{
    CmType types[2];
    ExResult *in = input(types);
    ExWindowSpec s = spec_of(EX_WIN_SUM, 1, cm_type_make(CM_T_INT64));
    s.rows = true;
    s.start = EX_FRAME_PRECEDING;
    s.start_off = 1;
    s.end = EX_FRAME_FOLLOWING;
    s.end_off = 1;
    ExResult *out = run(&s, in, types);
    cr_expect_eq(value_for(out, 1, 1, 0).i, 3);  /* 1 + 2 */
    cr_expect_eq(value_for(out, 1, 5, 0).i, 7);  /* 2 + 5 */
    ex_result_free(out);
    ex_result_free(in);
}

Test(ex_window, whole_partition_without_order)
{
    CmType types[2];
    ExResult *in = input(types);
    ExWindowSpec s = spec_of(EX_WIN_COUNT_STAR, -1, cm_type_make(CM_T_INT64));
    s.n_order = 0;
    s.end = EX_FRAME_UNBOUNDED_FOLLOWING;
    ExResult *out = run(&s, in, types);
    cr_expect_eq(value_for(out, 1, 1, 0).i, 4);
    cr_expect_eq(value_for(out, 2, 7, 0).i, 2);
    ex_result_free(out);
    ex_result_free(in);
}

Test(ex_window, lag_and_lead)
{
    CmType types[2];
    ExResult *in = input(types);
    ExWindowSpec lag = spec_of(EX_WIN_LAG, 1, cm_type_make(CM_T_INT64));
    lag.start_off = 1;
    ExWindowSpec lead = spec_of(EX_WIN_LEAD, 1, cm_type_make(CM_T_INT64));
    lead.start_off = 2;
    ExResult *a = run(&lag, in, types), *b = run(&lead, in, types);
    cr_expect(value_for(a, 1, 1, 0).is_null);
    cr_expect_eq(value_for(a, 1, 5, 0).i, 2);
    cr_expect_eq(value_for(b, 1, 1, 0).i, 2);
    cr_expect(value_for(b, 1, 5, 0).is_null);
    ex_result_free(a);
    ex_result_free(b);
    ex_result_free(in);
}

TestSuite(ex_expand, .init = setup, .fini = teardown);

Test(ex_expand, one_copy_per_set_with_nulls_outside_it)
{
    /* (k1, k2, gid): sets {k1, k2}, {k1}, {} */
    CmType types[3] = {cm_type_make(CM_T_INT64), cm_type_make(CM_T_INT64),
                       cm_type_make(CM_T_INT64)};
    Rows r;
    rows_init(&r, 3, types);
    CmValue row[3] = {v_i64(10), v_i64(20), v_i64(0)};
    rows_add(&r, row);
    ExResult *in = rows_done(&r);
    uint64_t masks[3] = {3, 1, 0};
    ExOp *op = ex_expand_new(&arena, 3, masks, 2, 2, 3, types, &err);
    cr_assert_not_null(op);
    ExResult *out = NULL;
    cr_assert_eq(drive_op(op, in, NULL, &out, &err), CM_OK, "%s", err.msg);
    cr_assert_eq(ex_result_n_rows(out), 3);
    for (int64_t i = 0; i < 3; i++) {
        int64_t set = cell_i(out, i, 2);
        cr_expect_eq(cell_null(out, i, 0), set == 2);
        cr_expect_eq(cell_null(out, i, 1), set >= 1);
        if (!cell_null(out, i, 0)) {
            cr_expect_eq(cell_i(out, i, 0), 10);
        }
    }
    ex_result_free(out);
    ex_result_free(in);
}
