/*
 * project.c - computes output columns from expressions.  Each output column
 * is a view of its expression's result vector (a column reference costs
 * nothing); the input's selection carries over unchanged.
 */
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "executor/ops.h"

typedef struct ProjectSpec {
    int n_exprs;
    ExExpr **exprs;
} ProjectSpec;

typedef struct ProjectLocal {
    ExExprState **states;
    CmBatch out;
} ProjectLocal;

static void project_local_fini(ExOp *op, void *local)
{
    ProjectSpec *s = op->spec;
    ProjectLocal *l = local;
    if (l == NULL) {
        return;
    }
    for (int i = 0; l->states != NULL && i < s->n_exprs; i++) {
        ex_expr_state_free(l->states[i]);
    }
    cm_free(l->states);
    /* The output vectors only borrow data: drop their (unused) buffers. */
    cm_batch_fini(&l->out);
    cm_free(l);
}

static void *project_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    ProjectSpec *s = op->spec;
    ProjectLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    l->states = cm_calloc((size_t)(s->n_exprs ? s->n_exprs : 1), sizeof(ExExprState *));
    if (l->states == NULL || cm_batch_init(&l->out, 0, NULL, err) != CM_OK) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        project_local_fini(op, l);
        return NULL;
    }
    cm_free(l->out.cols);
    l->out.cols = cm_calloc((size_t)(s->n_exprs ? s->n_exprs : 1), sizeof(CmVec));
    if (l->out.cols == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        project_local_fini(op, l);
        return NULL;
    }
    for (int i = 0; i < s->n_exprs; i++) {
        l->states[i] = ex_expr_state_new(s->exprs[i], err);
        if (l->states[i] == NULL) {
            project_local_fini(op, l);
            return NULL;
        }
    }
    return l;
}

static ExOpResult project_push(ExOp *op, void *local, const CmBatch *in, const CmBatch **out,
                               CmErr *err)
{
    ProjectSpec *s = op->spec;
    ProjectLocal *l = local;
    for (int i = 0; i < s->n_exprs; i++) {
        const CmVec *v = ex_expr_eval(l->states[i], in, err);
        if (v == NULL) {
            return EX_NEED_INPUT;
        }
        cm_vec_reference(&l->out.cols[i], v);
    }
    l->out.n_cols = 0; /* keep cm_batch_fini from freeing borrowed data */
    l->out.n_rows = in->n_rows;
    l->out.sel = in->sel;
    *out = &l->out;
    /* n_cols is read by consumers: set it after the views are in place. */
    l->out.n_cols = s->n_exprs;
    return EX_NEED_INPUT;
}

static void project_explain(const ExOp *op, const char *const *in_names, char *buf, size_t cap)
{
    const ProjectSpec *s = op->spec;
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->n_exprs && n + 8 < cap; i++) {
        if (i > 0) {
            n += (size_t)snprintf(buf + n, cap - n, ", ");
        }
        ex_expr_to_string(s->exprs[i], in_names, buf + n, cap - n);
        n += strlen(buf + n);
    }
}

static int project_passes(const ExOp *op, int col)
{
    const ProjectSpec *s = op->spec;
    return col >= 0 && col < s->n_exprs && s->exprs[col]->kind == EX_E_COLUMN ? s->exprs[col]->col
                                                                              : -1;
}

static const ExOpVt PROJECT_VT = {
    .name = "PROJECTION",
    .local_init = project_local_init,
    .local_fini = project_local_fini,
    .push = project_push,
    .explain = project_explain,
    .row_independent = true,
    .passes = project_passes,
};

ExOp *ex_project_new(CmArena *a, int n_exprs, ExExpr **exprs, CmErr *err)
{
    ProjectSpec *s = cm_arena_zalloc(a, sizeof *s);
    CmType *types = cm_arena_alloc(a, sizeof(CmType) * (size_t)(n_exprs ? n_exprs : 1));
    if (s == NULL || types == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n_exprs; i++) {
        types[i] = exprs[i]->type;
    }
    s->n_exprs = n_exprs;
    s->exprs = exprs;
    ExOp *op = ex_op_new(a, &PROJECT_VT, s, n_exprs, types);
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    return op;
}
