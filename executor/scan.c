/*
 * scan.c - table scan source.  The table's chunks are split into morsels of
 * contiguous chunks, one morsel per task; a batch is a chunk's columns by
 * reference (no copy).  A chunk is a block of the block store: the scan pins
 * it (loading it from disk when it was evicted) and unpins it at the next pull
 * or when the task ends, so one chunk per task is pinned at a time.  Range
 * filters from the hash joins the scan feeds (ExRangeFilter) skip whole
 * chunks on the chunk's zone map (the min and max of the key column recorded
 * when the chunk was sealed), so a skipped chunk is never loaded.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "executor/ops.h"

typedef struct ScanSpec {
    StTable *table;
    int n_cols;
    int *col_ids; /* table column of each output column */
    int chunks_per_task;
    bool whole; /* one task reads every chunk (ex_scan_set_whole) */
    int n_filters;
    int filter_col[4]; /* output column each filter reads */
    ExRangeFilter *filter[4];
    atomic_llong skipped; /* chunks skipped by the filters */
    atomic_llong loaded;  /* chunks loaded back from disk */
} ScanSpec;

typedef struct ScanLocal {
    CmBatch out; /* vectors point into the table */
    int next_chunk, end_chunk;
    int pinned;         /* the chunk `out` views (pinned), or -1 */
    bool pinned_loaded; /* ... and it was loaded from disk for this scan */
    bool cold;          /* unpin what it loads cold (st_table_scans_cold) */
} ScanLocal;

static int scan_n_tasks(ExOp *op, ExQuery *q)
{
    ScanSpec *s = op->spec;
    int n_chunks = s->table->n_chunks;
    int want = s->whole ? 1 : (int)q->config.threads * 4;
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
    l->pinned = -1;
    l->cold = st_table_scans_cold(s->table);
    l->next_chunk = task->task_idx * s->chunks_per_task;
    l->end_chunk = l->next_chunk + s->chunks_per_task;
    if (l->end_chunk > s->table->n_chunks) {
        l->end_chunk = s->table->n_chunks;
    }
    return l;
}

/* Unpins the chunk `out` views: cold when this scan loaded it and the
 * table is too large to stay (storage/table.h). */
static void unpin(const ScanSpec *s, ScanLocal *l)
{
    if (l->cold && l->pinned_loaded) {
        st_table_unpin_chunk_cold(s->table, l->pinned);
    } else {
        st_table_unpin_chunk(s->table, l->pinned);
    }
    l->pinned = -1;
}

static void scan_local_fini(ExOp *op, void *local)
{
    ScanLocal *l = local;
    if (l != NULL) {
        if (l->pinned >= 0) {
            unpin(op->spec, l);
        }
        cm_batch_fini(&l->out);
        cm_free(l);
    }
}

/* True when some ready filter proves that no row of chunk c can match. */
static bool chunk_excluded(const ExOp *op, const ScanSpec *s, int c)
{
    for (int f = 0; f < s->n_filters; f++) {
        const ExRangeFilter *rf = s->filter[f];
        if (!rf->ready) {
            continue;
        }
        int64_t lo, hi;
        if (!rf->empty) {
            int col = s->filter_col[f];
            st_table_chunk_range(s->table, c, s->col_ids[col], &lo, &hi);
        }
        if (rf->empty || lo > hi || hi < rf->min || lo > rf->max) {
            return true;
        }
    }
    return false;
}

static ExOpResult scan_pull(ExOp *op, void *local, const CmBatch **out, CmErr *err)
{
    ScanSpec *s = op->spec;
    ScanLocal *l = local;
    if (l->pinned >= 0) {
        /* the previous batch is no longer the consumer's (executor/op.h) */
        unpin(s, l);
    }
    while (l->next_chunk < l->end_chunk) {
        int c = l->next_chunk++;
        if (s->n_filters > 0 && chunk_excluded(op, s, c)) {
            atomic_fetch_add(&s->skipped, 1);
            continue;
        }
        bool loaded = false;
        if (st_table_scan_chunk(s->table, c, s->col_ids, s->n_cols, &l->out, &loaded, err) !=
            CM_OK) {
            return EX_DONE;
        }
        l->pinned = c;
        l->pinned_loaded = loaded;
        if (loaded) {
            atomic_fetch_add(&s->loaded, 1);
        }
        *out = &l->out;
        return l->next_chunk >= l->end_chunk ? EX_DONE : EX_HAVE_MORE;
    }
    return EX_DONE;
}

static void scan_explain(const ExOp *op, const char *const *in_names, char *buf, size_t cap)
{
    const ScanSpec *s = op->spec;
    int n = snprintf(buf, cap, "%s (%d of %d columns", s->table->name, s->n_cols, s->table->n_cols);
    for (int c = 0; op->names != NULL && c < s->n_cols && n > 0 && (size_t)n < cap; c++) {
        n += snprintf(buf + n, cap - (size_t)n, "%s", c ? ", " : ": ");
        n += (int)ex_col_to_string(op->names, c, buf + n, cap - (size_t)n);
    }
    if (n > 0 && (size_t)n < cap) {
        n += snprintf(buf + n, cap - (size_t)n, ")");
    }
    for (int where = 0; where < 2; where++) {
        bool first = true;
        for (int f = 0; f < s->n_filters && n > 0 && (size_t)n < cap; f++) {
            if (s->filter[f]->is_where != (where == 1)) {
                continue;
            }
            n += snprintf(buf + n, cap - (size_t)n, "%s",
                          !first  ? ", "
                          : where ? ", zone maps on "
                                  : ", join key range on ");
            n += (int)ex_col_to_string(op->names, s->filter_col[f], buf + n, cap - (size_t)n);
            first = false;
        }
    }
    long long skipped = atomic_load(&((ScanSpec *)s)->skipped);
    if (skipped > 0 && n > 0 && (size_t)n < cap) {
        n += snprintf(buf + n, cap - (size_t)n, ", %lld chunks skipped", skipped);
    }
    long long loaded = atomic_load(&((ScanSpec *)s)->loaded);
    if (loaded > 0 && n > 0 && (size_t)n < cap) {
        snprintf(buf + n, cap - (size_t)n, ", %lld chunks loaded from disk", loaded);
    }
}

static const ExOpVt SCAN_VT = {
    .name = "TABLE_SCAN",
    .n_tasks = scan_n_tasks,
    .local_init = scan_local_init,
    .local_fini = scan_local_fini,
    .pull = scan_pull,
    .explain = scan_explain,
};

bool ex_op_is_scan(const ExOp *op)
{
    return op->vt == &SCAN_VT;
}

void ex_scan_set_whole(ExOp *scan)
{
    ((ScanSpec *)scan->spec)->whole = true;
}

bool ex_scan_add_range_filter(ExOp *scan, int col, ExRangeFilter *rf)
{
    ScanSpec *s = scan->spec;
    uint8_t id = col >= 0 && col < s->n_cols ? scan->types[col].id : CM_T_NULL;
    /* a join publishes the range of INTEGER, BIGINT and DATE keys only */
    bool join_type = id == CM_T_INT32 || id == CM_T_INT64 || id == CM_T_DATE;
    if (s->n_filters == 4 || !ex_scan_zoned_type(id) || (!rf->is_where && !join_type)) {
        return false;
    }
    s->filter_col[s->n_filters] = col;
    s->filter[s->n_filters++] = rf;
    return true;
}

bool ex_zone_range(const ExExpr *e, int *col, int64_t *lo, int64_t *hi)
{
    enum { EQ, LT, LE, GT, GE };
    static const char *const ops[] = {"=", "<", "<=", ">", ">="};
    static const int flipped[] = {EQ, GT, GE, LT, LE}; /* 5 < k is k > 5 */
    if (e->kind != EX_E_FUNC || e->n_args != 2 || e->name == NULL) {
        return false;
    }
    int op = -1;
    for (int k = 0; k < 5 && op < 0; k++) {
        op = strcmp(e->name, ops[k]) == 0 ? k : -1;
    }
    const ExExpr *c = e->args[0], *v = e->args[1];
    if (c->kind == EX_E_CONST) {
        c = e->args[1];
        v = e->args[0];
        op = op >= 0 ? flipped[op] : op;
    }
    uint8_t id = c->type.id;
    if (op < 0 || c->kind != EX_E_COLUMN || v->kind != EX_E_CONST || v->value.is_null ||
        v->type.id != id || !ex_scan_zoned_type(id) ||
        (id == CM_T_DECIMAL && v->type.scale != c->type.scale)) {
        return false; /* a DECIMAL compares unscaled values of one scale */
    }
    int64_t x = v->value.i;
    *col = c->col;
    *lo = INT64_MIN;
    *hi = INT64_MAX;
    if (op == EQ) {
        *lo = *hi = x;
    } else if (op == LT) {
        *hi = x == INT64_MIN ? x : x - 1;
        *lo = x == INT64_MIN ? INT64_MAX : *lo;
    } else if (op == LE) {
        *hi = x;
    } else if (op == GT) {
        *lo = x == INT64_MAX ? x : x + 1;
        *hi = x == INT64_MAX ? INT64_MIN : *hi;
    } else {
        *lo = x;
    }
    return true;
}

ExRangeFilter *ex_scan_where_filter(ExOp *scan, int col)
{
    ScanSpec *s = scan->spec;
    for (int f = 0; f < s->n_filters; f++) {
        if (s->filter_col[f] == col && s->filter[f]->is_where) {
            return s->filter[f];
        }
    }
    return NULL;
}

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
        types[i] = col_ids[i] == ST_ROW_ADDR(table) ? cm_type_make(CM_T_INT64)
                                                    : table->cols[col_ids[i]].type;
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
