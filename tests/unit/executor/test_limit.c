/*
 * test_limit.c - unit tests for executor/limit.c: LIMIT/OFFSET across batches
 * and with input selections; the output narrows the selection (no copy) and
 * answers EX_DONE once the limit is reached, which stops the pipeline.
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

TestSuite(ex_limit, .init = setup, .fini = teardown);

static ExResult *numbers_t(int n)
{
    return numbers(n, types);
}

/* ---- limit ------------------------------------------------------------------------------ */

static void check_limit(int n, int64_t limit, int64_t offset, SelectFn sel)
{
    ExResult *in = numbers_t(n);
    ExOp *op = ex_limit_new(&arena, limit, offset, 2, types, &err);
    cr_assert_not_null(op);
    ExResult *out;
    cr_assert_eq(drive_op(op, in, sel, &out, &err), CM_OK);
    /* Expected: the active input rows in order, skipping `offset`. */
    int64_t active = 0, kept = 0;
    for (int i = 0; i < n; i++) {
        bool is_active = sel == NULL || !thinned_out(i);
        if (!is_active) {
            continue;
        }
        if (active >= offset && (limit < 0 || active < offset + limit)) {
            cr_assert_lt(kept, ex_result_n_rows(out), "too few rows");
            cr_assert_eq(source_of(out, kept, 1), i, "output row %lld", (long long)kept);
            kept++;
        }
        active++;
    }
    cr_assert_eq(ex_result_n_rows(out), kept, "limit %lld offset %lld", (long long)limit,
                 (long long)offset);
    ex_result_free(out);
    ex_result_free(in);
}

Test(ex_limit, limit_only)
{
    check_limit(100, 5, 0, NULL);
    check_limit(100, 0, 0, NULL);
    check_limit(100, 100, 0, NULL);
    check_limit(100, 1000, 0, NULL);
}

Test(ex_limit, offset_only)
{
    check_limit(100, -1, 0, NULL);
    check_limit(100, -1, 7, NULL);
    check_limit(100, -1, 100, NULL);
    check_limit(100, -1, 250, NULL);
}

Test(ex_limit, limit_and_offset_across_batches)
{
    check_limit(100, 10, 3, NULL);
    check_limit(100, CM_BATCH_CAP + 1, CM_BATCH_CAP - 1, NULL);
    check_limit(5 * CM_BATCH_CAP, 2 * CM_BATCH_CAP, 2 * CM_BATCH_CAP + 1, NULL);
}

Test(ex_limit, with_input_selection)
{
    check_limit(100, 10, 3, thin_out);
    check_limit(100, -1, 5, thin_out);
    check_limit(3 * CM_BATCH_CAP, CM_BATCH_CAP, 1, thin_out);
}

Test(ex_limit, says_done_once_the_limit_is_reached)
{
    ExResult *in = numbers_t(3 * CM_BATCH_CAP);
    ExOp *op = ex_limit_new(&arena, 2, 1, 2, types, &err);
    ExTask task = {.n_tasks = 1};
    void *local = op->vt->local_init(op, &task, &err);
    cr_assert_not_null(local);
    const CmBatch *b0 = ex_result_batch(in, 0);
    const CmBatch *o = NULL;
    ExOpResult r = op->vt->push(op, local, b0, &o, &err);
    if (CM_BATCH_CAP >= 3) {
        cr_expect_eq(r, EX_DONE);
        cr_assert_not_null(o);
        cr_expect_eq(o->n_rows, 2);
        cr_expect_eq(cm_batch_pos(o, 0), 1);
        cr_expect_eq(cm_batch_pos(o, 1), 2);
        cr_expect_eq(o->cols, b0->cols, "a limit narrows the selection, never copies");
    }
    op->vt->local_fini(op, local);
    ex_result_free(in);
}

Test(ex_limit, limit_zero_is_done_at_once)
{
    ExResult *in = numbers_t(4);
    ExOp *op = ex_limit_new(&arena, 0, 0, 2, types, &err);
    ExTask task = {.n_tasks = 1};
    void *local = op->vt->local_init(op, &task, &err);
    const CmBatch *o = NULL;
    cr_expect_eq(op->vt->push(op, local, ex_result_batch(in, 0), &o, &err), EX_DONE);
    cr_expect_null(o);
    op->vt->local_fini(op, local);
    ex_result_free(in);
}
