/*
 * test_unnest.c - unit tests for executor/unnest.c: one output row per element
 * with the other columns repeated, no row for a NULL or empty list, NULL
 * elements kept, the input's selection followed, and a list longer than a
 * batch streamed over several pushes of the same input.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/alloc.h"
#include "executor/ops.h"

static CmArena arena;
static CmErr err;
static CmBatch in;
static CmType types[2];

static void setup(void)
{
    cm_arena_init(&arena, 0);
    cm_err_init(&err);
    types[0] = cm_type_make(CM_T_INT64);
    types[1] = cm_type_list(cm_type_make(CM_T_INT32));
    cr_assert_eq(cm_batch_init(&in, 2, types, &err), CM_OK);
}

static void teardown(void)
{
    cm_batch_fini(&in);
    cm_arena_fini(&arena);
}

TestSuite(ex_unnest, .init = setup, .fini = teardown);

/* A list of n INTEGERs, first + k, element k NULL when null_at == k. */
static CmList make_list(uint32_t n, int32_t first, int null_at)
{
    bool has_nulls = null_at >= 0;
    char *d = cm_arena_zalloc(&arena, cm_list_bytes(n, 4, has_nulls) + 8);
    for (uint32_t k = 0; k < n; k++) {
        ((int32_t *)d)[k] = first + (int32_t)k;
    }
    if (has_nulls) {
        uint64_t *bits = (uint64_t *)(d + cm_list_bits_off(n, 4));
        memset(bits, 0xff, ((size_t)n + 63) / 64 * 8);
        bits[null_at >> 6] &= ~((uint64_t)1 << (null_at & 63));
    }
    return (CmList){.len = n, .has_nulls = has_nulls, .data = d};
}

/* Pushes `in` until the op wants more input; the output rows as (id, value)
 * pairs, value INT32_MIN for NULL.  Returns the row count. */
static int drive(ExOp *op, int64_t *ids, int32_t *vals, int cap, int *n_pushes)
{
    ExTask task = {.query = NULL, .task_idx = 0, .n_tasks = 1, .worker_id = 0};
    void *local = op->vt->local_init(op, &task, &err);
    cr_assert_not_null(local);
    int n = 0;
    ExOpResult r;
    *n_pushes = 0;
    do {
        const CmBatch *out = NULL;
        r = op->vt->push(op, local, &in, &out, &err);
        cr_assert_eq(err.code, CM_OK, "%s", err.msg);
        (*n_pushes)++;
        for (int i = 0; out != NULL && i < out->n_rows; i++) {
            uint32_t p = cm_batch_pos(out, i);
            cr_assert_lt(n, cap);
            ids[n] = ((const int64_t *)out->cols[0].data)[p];
            vals[n] = cm_vec_is_null(&out->cols[1], p) ? INT32_MIN
                                                        : ((const int32_t *)out->cols[1].data)[p];
            n++;
        }
    } while (r == EX_HAVE_MORE);
    cr_assert_eq(r, EX_NEED_INPUT);
    op->vt->local_fini(op, local);
    return n;
}

Test(ex_unnest, elements_become_rows_and_long_lists_stream)
{
    /* Row 0: [10, NULL, 12]; row 1: a NULL list; row 2: a list longer than a batch;
     * read through the selection 2, 1, 0 (one row each when the batch holds 3). */
    uint32_t long_len = CM_BATCH_CAP + 5;
    CmList lists[3] = {make_list(3, 10, 1), {0}, make_list(long_len, 100, -1)};
    for (int i = 0; i < 3; i++) {
        ((int64_t *)in.cols[0].data)[i] = i;
        ((CmList *)in.cols[1].data)[i] = lists[i];
    }
    cm_vec_set_null(&in.cols[1], 1);
    in.sel_buf[0] = 2;
    in.sel_buf[1] = 1;
    in.sel_buf[2] = 0;
    in.sel = in.sel_buf;
    in.n_rows = 3;
    ExOp *op = ex_unnest_new(&arena, 1, 2, types, &err);
    cr_assert_not_null(op);
    cr_expect_eq(op->types[1].id, CM_T_INT32);
    cr_expect_eq(op->types[0].id, CM_T_INT64);
    int cap = (int)long_len + 3;
    int64_t *ids = cm_malloc(sizeof(int64_t) * (size_t)cap);
    int32_t *vals = cm_malloc(sizeof(int32_t) * (size_t)cap);
    int n_pushes;
    int n = drive(op, ids, vals, cap, &n_pushes);
    cr_assert_eq(n, (int)long_len + 3);
    cr_expect_geq(n_pushes, 2, "a list longer than a batch takes several outputs");
    for (uint32_t k = 0; k < long_len; k++) {
        cr_assert_eq(ids[k], 2);
        cr_assert_eq(vals[k], 100 + (int32_t)k);
    }
    cr_expect_eq(ids[long_len], 0);
    cr_expect_eq(vals[long_len], 10);
    cr_expect_eq(vals[long_len + 1], INT32_MIN, "a NULL element stays a NULL row");
    cr_expect_eq(vals[long_len + 2], 12);
    cm_free(ids);
    cm_free(vals);
}

Test(ex_unnest, empty_and_null_lists_give_no_rows)
{
    ((int64_t *)in.cols[0].data)[0] = 7;
    ((CmList *)in.cols[1].data)[0] = (CmList){0};
    in.n_rows = 1;
    if (CM_BATCH_CAP >= 2) {
        ((int64_t *)in.cols[0].data)[1] = 8;
        cm_vec_set_null(&in.cols[1], 1);
        in.n_rows = 2;
    }
    ExOp *op = ex_unnest_new(&arena, 1, 2, types, &err);
    cr_assert_not_null(op);
    int64_t ids[4];
    int32_t vals[4];
    int n_pushes;
    cr_expect_eq(drive(op, ids, vals, 4, &n_pushes), 0);
    cr_expect_eq(n_pushes, 1);
}
