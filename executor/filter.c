/*
 * filter.c - keeps the rows whose predicate is TRUE (not FALSE, not NULL) by
 * narrowing the selection vector; column data is never copied.
 */
#include <stdio.h>

#include "common/alloc.h"
#include "executor/ops.h"

typedef struct FilterLocal {
    ExExprState *pred;
    CmBatch out;     /* the input's columns with the narrowed selection */
    CmVec *own_cols; /* out's own column array, restored before cm_batch_fini */
} FilterLocal;

static void *filter_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    FilterLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    l->pred = ex_expr_state_new(op->spec, err);
    if (l->pred == NULL || cm_batch_init(&l->out, 0, NULL, err) != CM_OK) {
        ex_expr_state_free(l->pred);
        cm_free(l);
        return NULL;
    }
    l->own_cols = l->out.cols;
    return l;
}

static void filter_local_fini(ExOp *op, void *local)
{
    FilterLocal *l = local;
    if (l != NULL) {
        ex_expr_state_free(l->pred);
        l->out.cols = l->own_cols;
        l->out.n_cols = 0;
        cm_batch_fini(&l->out);
        cm_free(l);
    }
}

static ExOpResult filter_push(ExOp *op, void *local, const CmBatch *in, const CmBatch **out,
                              CmErr *err)
{
    FilterLocal *l = local;
    const CmVec *v = ex_expr_eval(l->pred, in, err);
    if (v == NULL) {
        return EX_NEED_INPUT;
    }
    /* Branch-free: every row's position is written, the count moves past it
     * only when the row is kept.  Everything the loop reads is in locals: the
     * stores through `o` could otherwise alias them and be re-read each row
     * (a chain of five filters, TPC-H q6: a third of the query's time here). */
    const uint8_t *restrict t = v->data;
    const uint32_t *restrict sel = in->sel;
    uint32_t *restrict o = l->out.sel_buf;
    int rows = in->n_rows, n = 0;
    if (v->validity != NULL) {
        for (int i = 0; i < rows; i++) {
            uint32_t p = sel != NULL ? sel[i] : (uint32_t)i;
            o[n] = p;
            n += t[p] != 0 && !cm_vec_is_null(v, p);
        }
    } else if (sel != NULL) {
        for (int i = 0; i < rows; i++) {
            uint32_t p = sel[i];
            o[n] = p;
            n += t[p] != 0;
        }
    } else {
        for (int i = 0; i < rows; i++) {
            o[n] = (uint32_t)i;
            n += t[i] != 0;
        }
    }
    /* The output shares the input's columns: only the selection is ours. */
    l->out.cols = in->cols;
    l->out.n_cols = in->n_cols;
    l->out.n_rows = n;
    l->out.sel = l->out.sel_buf;
    *out = n > 0 ? &l->out : NULL;
    return EX_NEED_INPUT;
}

static void filter_explain(const ExOp *op, const char *const *in_names, char *buf, size_t cap)
{
    ex_expr_to_string(op->spec, in_names, buf, cap);
}

static int filter_passes(const ExOp *op, int col)
{
    (void)op;
    return col;
}

static const ExOpVt FILTER_VT = {
    .name = "FILTER",
    .local_init = filter_local_init,
    .local_fini = filter_local_fini,
    .push = filter_push,
    .explain = filter_explain,
    .row_independent = true,
    .passes = filter_passes,
};

ExOp *ex_filter_new(CmArena *a, ExExpr *pred, int n_cols, const CmType *types, CmErr *err)
{
    ExOp *op = ex_op_new(a, &FILTER_VT, pred, n_cols, types);
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    return op;
}
