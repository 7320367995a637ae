/*
 * values.c - a source of constant rows (VALUES lists, SELECT without FROM).
 * One task; expressions are evaluated row by row into batches of up to
 * CM_BATCH_CAP rows.  With zero columns it yields n_rows empty rows.
 */
#include <stdio.h>

#include "common/alloc.h"
#include "executor/ops.h"

typedef struct ValuesSpec {
    int n_rows, n_cols;
    ExExpr **exprs; /* row-major */
} ValuesSpec;

typedef struct ValuesLocal {
    CmBatch out;
    int next_row;
} ValuesLocal;

static void *values_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    ValuesLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    if (cm_batch_init(&l->out, op->n_cols, op->types, err) != CM_OK) {
        cm_free(l);
        return NULL;
    }
    return l;
}

static void values_local_fini(ExOp *op, void *local)
{
    ValuesLocal *l = local;
    if (l != NULL) {
        cm_batch_fini(&l->out);
        cm_free(l);
    }
}

static ExOpResult values_pull(ExOp *op, void *local, const CmBatch **out, CmErr *err)
{
    ValuesSpec *s = op->spec;
    ValuesLocal *l = local;
    cm_batch_reset(&l->out);
    while (l->next_row < s->n_rows && l->out.n_rows < CM_BATCH_CAP) {
        for (int c = 0; c < s->n_cols; c++) {
            CmValue v;
            if (ex_expr_eval_const(s->exprs[l->next_row * s->n_cols + c], &l->out.heap, &v, err) !=
                CM_OK) {
                return EX_DONE;
            }
            cm_vec_set_value(&l->out.cols[c], (uint32_t)l->out.n_rows, &v);
        }
        l->out.n_rows++;
        l->next_row++;
    }
    *out = &l->out;
    return l->next_row >= s->n_rows ? EX_DONE : EX_HAVE_MORE;
}

static void values_explain(const ExOp *op, const char *const *in_names, char *buf, size_t cap)
{
    const ValuesSpec *s = op->spec;
    snprintf(buf, cap, "%d row%s", s->n_rows, s->n_rows == 1 ? "" : "s");
}

static const ExOpVt VALUES_VT = {
    .name = "VALUES",
    .local_init = values_local_init,
    .local_fini = values_local_fini,
    .pull = values_pull,
    .explain = values_explain,
};

ExOp *ex_values_new(CmArena *a, int n_rows, int n_cols, ExExpr **exprs, const CmType *types,
                    CmErr *err)
{
    ValuesSpec *s = cm_arena_zalloc(a, sizeof *s);
    ExOp *op = s ? ex_op_new(a, &VALUES_VT, s, n_cols, types) : NULL;
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    s->n_rows = n_rows;
    s->n_cols = n_cols;
    s->exprs = exprs;
    return op;
}
