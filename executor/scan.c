/*
 * scan.c - table scan source.  The table's chunks are split into morsels of
 * contiguous chunks, one morsel per task; a batch is a chunk's columns by
 * reference (no copy).
 */
#include <stdio.h>

#include "common/alloc.h"
#include "executor/ops.h"

typedef struct ScanSpec {
    StTable *table;
    int n_cols;
    int *col_ids;      /* table column of each output column */
    int chunks_per_task;
} ScanSpec;

typedef struct ScanLocal {
    CmBatch out;       /* vectors point into the table */
    int next_chunk, end_chunk;
} ScanLocal;

static int scan_n_tasks(ExOp *op, ExQuery *q)
{
    ScanSpec *s = op->spec;
    int n_chunks = s->table->n_chunks;
    int want = (int)q->config.threads * 4;
    s->chunks_per_task = (n_chunks + want - 1) / want;
    if (s->chunks_per_task < 1) {
        s->chunks_per_task = 1;
    }
    int n = (n_chunks + s->chunks_per_task - 1) / s->chunks_per_task;
    return n > 0 ? n : 1;
}

static void *scan_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    ScanSpec *s = op->spec;
    ScanLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    if (cm_batch_init(&l->out, op->n_cols, op->types, err) != CM_OK) {
        cm_free(l);
        return NULL;
    }
    l->next_chunk = task->task_idx * s->chunks_per_task;
    l->end_chunk = l->next_chunk + s->chunks_per_task;
    if (l->end_chunk > s->table->n_chunks) {
        l->end_chunk = s->table->n_chunks;
    }
    return l;
}

static void scan_local_fini(ExOp *op, void *local)
{
    ScanLocal *l = local;
    if (l != NULL) {
        cm_batch_fini(&l->out);
        cm_free(l);
    }
}

static ExOpResult scan_pull(ExOp *op, void *local, const CmBatch **out, CmErr *err)
{
    ScanSpec *s = op->spec;
    ScanLocal *l = local;
    if (l->next_chunk >= l->end_chunk) {
        return EX_DONE;
    }
    st_table_scan_chunk(s->table, l->next_chunk++, s->col_ids, s->n_cols, &l->out);
    *out = &l->out;
    return l->next_chunk >= l->end_chunk ? EX_DONE : EX_HAVE_MORE;
}

static void scan_explain(const ExOp *op, char *buf, size_t cap)
{
    const ScanSpec *s = op->spec;
    snprintf(buf, cap, "%s (%d of %d columns)", s->table->name, s->n_cols, s->table->n_cols);
}

static const ExOpVt SCAN_VT = {
    .name = "TABLE_SCAN",
    .n_tasks = scan_n_tasks,
    .local_init = scan_local_init,
    .local_fini = scan_local_fini,
    .pull = scan_pull,
    .explain = scan_explain,
};

ExOp *ex_scan_new(CmArena *a, StTable *table, int n_cols, const int *col_ids, CmErr *err)
{
    ScanSpec *s = cm_arena_zalloc(a, sizeof *s);
    CmType *types = cm_arena_alloc(a, sizeof(CmType) * (size_t)(n_cols ? n_cols : 1));
    int *ids = cm_arena_alloc(a, sizeof(int) * (size_t)(n_cols ? n_cols : 1));
    if (s == NULL || types == NULL || ids == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n_cols; i++) {
        ids[i] = col_ids[i];
        types[i] = table->cols[col_ids[i]].type;
    }
    s->table = table;
    s->n_cols = n_cols;
    s->col_ids = ids;
    ExOp *op = ex_op_new(a, &SCAN_VT, s, n_cols, types);
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    return op;
}
