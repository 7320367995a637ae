/*
 * window.c - window functions: each task buffers its rows, sorts references
 * by (partition keys, order keys), and walks each partition once.
 *
 * Ranking functions follow the peer groups (rows equal on the order keys).
 * Aggregates use the frame: the default with ORDER BY is RANGE UNBOUNDED
 * PRECEDING .. CURRENT ROW (peers included), without ORDER BY the whole
 * partition; ROWS frames with offsets are evaluated by direct recomputation
 * over the frame (O(rows x frame); running and whole-partition frames are
 * linear).  Ties keep input order, so results are deterministic.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/value.h"
#include "executor/ops.h"
#include "executor/result.h"
#include "executor/sort_run.h"

typedef struct WinLocal {
    ExSorter *sorter;   /* owned: rows sorted by (partition keys, order keys) */
    ExSortKey *keys;    /* partition keys (ASC NULLS LAST) then order keys; owned */
    bool is_sorted;     /* the sorter was finished */
    bool is_spilled;    /* the sorter spilled: chunks are copied from its merge */
    bool is_input_done; /* spilled: every row of the merge is in a chunk */
    /* the chunk being emitted: whole partitions, all the rows when not spilled */
    const CmBatch *const *batches; /* its rows' batches; borrowed from the sorter or part */
    const ExRowRef *order;         /* its rows in order */
    int64_t n, next;    /* rows in the chunk, next to emit */
    CmValue *values;    /* one per chunk row; owned */
    int64_t cap_values;
    CmArena strings;    /* string values of MIN/MAX/FIRST/LAST/LAG/LEAD of the chunk */
    CmBatch out;
    /* spilled only */
    CmMemRes part_res;  /* the chunk's rows and values (cm_mem_need: never spilled) */
    ExResult *part;     /* the chunk's rows; owned */
    const CmBatch **part_batches; /* owned */
    ExRowRef *part_order;         /* identity order over part; owned */
    CmBatch stage;      /* the merge's current batch */
    int stage_pos;      /* its next row not yet in a chunk */
    bool stage_more;    /* the merge has rows after stage */
} WinLocal;

typedef struct WinCtx {
    const ExWindowSpec *s;
    const CmBatch *const *batches;
} WinCtx;

static const CmVec *cell(const CmBatch *const *batches, ExRowRef r, int col, uint32_t *pos)
{
    *pos = r.row;
    return &batches[r.batch]->cols[col];
}

static int cmp_order(const WinCtx *c, ExRowRef a, ExRowRef b)
{
    return ex_sort_compare_rows(c->s->order, c->s->n_order, c->batches[a.batch], a.row,
                                c->batches[b.batch], b.row);
}

/* ---- aggregates over a frame ------------------------------------------------------- */

typedef struct Acc {
    int64_t n;
    int64_t i;
    double d;
    CmValue best;
    bool has_best;
} Acc;

static void acc_add(const ExWindowSpec *s, const CmBatch *const *rows, ExRowRef r, Acc *acc)
{
    if (s->fn == EX_WIN_COUNT_STAR) {
        acc->n++;
        return;
    }
    uint32_t p;
    const CmVec *v = cell(rows, r, s->arg, &p);
    if (cm_vec_is_null(v, p)) {
        return;
    }
    CmValue x;
    cm_vec_get_value(v, p, &x);
    acc->n++;
    if (s->fn == EX_WIN_SUM || s->fn == EX_WIN_AVG) {
        if (x.type.id == CM_T_DOUBLE) {
            acc->d += x.d;
        } else {
            acc->i += x.i;
            acc->d += (double)x.i;
        }
    } else if (s->fn == EX_WIN_MIN || s->fn == EX_WIN_MAX) {
        int c = 0;
        if (acc->has_best) {
            c = x.type.id == CM_T_DOUBLE ? (x.d > acc->best.d) - (x.d < acc->best.d)
              : x.type.id == CM_T_VARCHAR ? cm_str_cmp(&x.s, &acc->best.s)
                                          : (x.i > acc->best.i) - (x.i < acc->best.i);
        }
        if (!acc->has_best || (s->fn == EX_WIN_MIN ? c < 0 : c > 0)) {
            acc->best = x;
            acc->has_best = true;
        }
    }
}

static CmValue acc_value(const ExWindowSpec *s, const Acc *acc)
{
    CmValue v = {.type = s->type};
    switch (s->fn) {
    case EX_WIN_COUNT_STAR:
    case EX_WIN_COUNT: v.i = acc->n; break;
    case EX_WIN_SUM:
        v.is_null = acc->n == 0;
        if (s->type.id == CM_T_DOUBLE) {
            v.d = acc->d;
        } else {
            v.i = acc->i;
        }
        break;
    case EX_WIN_AVG: {
        v.is_null = acc->n == 0;
        double scale = s->arg_type.id == CM_T_DECIMAL ? (double)cm_pow10(s->arg_type.scale) : 1;
        double sum = s->arg_type.id == CM_T_DOUBLE ? acc->d : (double)acc->i / scale;
        v.d = acc->n ? sum / (double)acc->n : 0;
        break;
    }
    default:
        v = acc->best;
        v.type = s->type;
        v.is_null = !acc->has_best;
        break;
    }
    return v;
}

/* ---- evaluation per partition ------------------------------------------------------- */

/* End (exclusive) of the peer group starting at i, within [i, end). */
static int64_t peer_end(const WinCtx *c, const ExRowRef *o, int64_t i, int64_t end)
{
    int64_t j = i + 1;
    while (j < end && cmp_order(c, o[i], o[j]) == 0) {
        j++;
    }
    return j;
}

static void frame_of(const WinCtx *c, const ExRowRef *o, int64_t b, int64_t e, int64_t i,
                     int64_t peers_end, int64_t peers_begin, int64_t *f0, int64_t *f1)
{
    const ExWindowSpec *s = c->s;
    switch (s->start) {
    case EX_FRAME_UNBOUNDED_PRECEDING: *f0 = b; break;
    case EX_FRAME_PRECEDING: *f0 = i - s->start_off; break;
    case EX_FRAME_CURRENT_ROW: *f0 = s->rows ? i : peers_begin; break;
    case EX_FRAME_FOLLOWING: *f0 = i + s->start_off; break;
    case EX_FRAME_UNBOUNDED_FOLLOWING: *f0 = e; break;
    }
    switch (s->end) {
    case EX_FRAME_UNBOUNDED_PRECEDING: *f1 = b; break;
    case EX_FRAME_PRECEDING: *f1 = i - s->end_off + 1; break;
    case EX_FRAME_CURRENT_ROW: *f1 = s->rows ? i + 1 : peers_end; break;
    case EX_FRAME_FOLLOWING: *f1 = i + s->end_off + 1; break;
    case EX_FRAME_UNBOUNDED_FOLLOWING: *f1 = e; break;
    }
    *f0 = *f0 < b ? b : *f0 > e ? e : *f0;
    *f1 = *f1 < b ? b : *f1 > e ? e : *f1;
    (void)o;
}

static CmStatus value_at(WinLocal *l, const ExWindowSpec *s, ExRowRef r, CmValue *out, CmErr *err)
{
    uint32_t p;
    const CmVec *v = cell(l->batches, r, s->arg, &p);
    cm_vec_get_value(v, p, out);
    if (!out->is_null && out->type.id == CM_T_VARCHAR) {
        out->s = cm_str_copy(&l->strings, &out->s, err);
    }
    out->type = s->type;
    return err->code;
}

static CmStatus eval_partition(const WinCtx *c, WinLocal *l, int64_t b, int64_t e, CmErr *err)
{
    const ExWindowSpec *s = c->s;
    const ExRowRef *o = l->order;
    int64_t rank = 1, dense = 0, peers_begin = b, peers_end = b;
    Acc running = {0};
    int64_t running_to = b;
    for (int64_t i = b; i < e; i++) {
        if (i == peers_end) {
            peers_begin = i;
            peers_end = s->n_order > 0 ? peer_end(c, o, i, e) : e;
            rank = i - b + 1;
            dense++;
        }
        CmValue v = {.type = s->type};
        switch (s->fn) {
        case EX_WIN_ROW_NUMBER: v.i = i - b + 1; break;
        case EX_WIN_RANK: v.i = rank; break;
        case EX_WIN_DENSE_RANK: v.i = dense; break;
        case EX_WIN_PERCENT_RANK: v.d = e - b > 1 ? (double)(rank - 1) / (double)(e - b - 1) : 0; break;
        case EX_WIN_CUME_DIST: v.d = (double)(peers_end - b) / (double)(e - b); break;
        case EX_WIN_LAG:
        case EX_WIN_LEAD: {
            int64_t j = s->fn == EX_WIN_LAG ? i - s->start_off : i + s->start_off;
            if (j < b || j >= e) {
                v = s->has_dflt ? s->dflt : v;
                v.is_null = !s->has_dflt || s->dflt.is_null;
                v.type = s->type;
            } else if (value_at(l, s, o[j], &v, err) != CM_OK) {
                return err->code;
            }
            break;
        }
        default: {
            int64_t f0 = b, f1 = e;
            frame_of(c, o, b, e, i, peers_end, peers_begin, &f0, &f1);
            if (s->fn == EX_WIN_FIRST_VALUE || s->fn == EX_WIN_LAST_VALUE) {
                if (f0 >= f1) {
                    v.is_null = true;
                } else if (value_at(l, s, o[s->fn == EX_WIN_FIRST_VALUE ? f0 : f1 - 1], &v, err) !=
                           CM_OK) {
                    return err->code;
                }
                break;
            }
            Acc acc = {0};
            if (f0 == b && f1 >= running_to) {
                /* A frame growing from the partition start: extend the running one. */
                for (; running_to < f1; running_to++) {
                    acc_add(s, l->batches, o[running_to], &running);
                }
                acc = running;
            } else {
                for (int64_t j = f0; j < f1; j++) {
                    acc_add(s, l->batches, o[j], &acc);
                }
            }
            v = acc_value(s, &acc);
            if (!v.is_null && v.type.id == CM_T_VARCHAR) {
                v.s = cm_str_copy(&l->strings, &v.s, err);
            }
            break;
        }
        }
        l->values[i] = v;
    }
    return err->code;
}

/* Evaluates every partition of the chunk into l->values. */
static CmStatus compute_chunk(const ExWindowSpec *s, WinLocal *l, CmErr *err)
{
    if (l->n > l->cap_values) {
        cm_free(l->values);
        l->cap_values = 0;
        l->values = cm_malloc(sizeof(CmValue) * (size_t)l->n);
        if (l->values == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory in a window function");
        }
        l->cap_values = l->n;
    }
    WinCtx c = {.s = s, .batches = l->batches};
    for (int64_t b = 0; b < l->n;) {
        int64_t e = b + 1;
        while (e < l->n && ex_sort_compare_rows(l->keys, s->n_part, l->batches[l->order[b].batch],
                                                l->order[b].row, l->batches[l->order[e].batch],
                                                l->order[e].row) == 0) {
            e++;
        }
        if (eval_partition(&c, l, b, e, err) != CM_OK) {
            return err->code;
        }
        b = e;
    }
    return CM_OK;
}

/* ---- chunks of a spilled sort ----------------------------------------------------------- */

/* Drops the chunk just emitted (its rows, values and strings). */
static CmStatus chunk_reset(ExOp *op, WinLocal *l, CmErr *err)
{
    ExResult *fresh = ex_result_new(op->n_cols - 1, op->types, err);
    if (fresh == NULL) {
        return err->code;
    }
    ex_result_free(l->part);
    l->part = fresh;
    cm_free(l->part_batches);
    cm_free(l->part_order);
    l->part_batches = NULL;
    l->part_order = NULL;
    l->n = l->next = 0;
    cm_arena_reset(&l->strings);
    cm_mem_shrink(&l->part_res, l->part_res.held);
    return CM_OK;
}

/* Is row pos of the stage in the partition of the chunk's last row? */
static bool same_partition(const ExWindowSpec *s, WinLocal *l, int pos)
{
    int n_batches = ex_result_n_batches(l->part);
    if (n_batches == 0) {
        return false;
    }
    const CmBatch *last = ex_result_batch(l->part, n_batches - 1);
    return ex_sort_compare_rows(l->keys, s->n_part, &l->stage, (uint32_t)pos, last,
                                (uint32_t)(last->n_rows - 1)) == 0;
}

/* Copies rows stage[stage_pos..end), all of one partition, into the chunk.
 * A partition that starts the chunk or is already in it must be held whole
 * to evaluate its frames: that memory cannot be spilled (cm_mem_need).  One
 * that would start later is taken only while memory is granted; *is_taken
 * false when refused (the chunk ends before it). */
static CmStatus chunk_take(WinLocal *l, int end, bool is_new, bool *is_taken, CmErr *err)
{
    uint32_t sel[CM_BATCH_CAP];
    CmBatch view = l->stage;
    view.n_rows = end - l->stage_pos;
    view.sel = sel;
    for (int i = 0; i < view.n_rows; i++) {
        sel[i] = (uint32_t)(l->stage_pos + i);
    }
    int64_t bytes = ex_sorter_row_bytes(l->sorter, &view) + (int64_t)sizeof(CmValue) * view.n_rows;
    *is_taken = false;
    if (!cm_mem_grow(&l->part_res, bytes)) {
        if (is_new && ex_result_n_rows(l->part) > 0) {
            return CM_OK;
        }
        if (cm_mem_need(&l->part_res, bytes, err) != CM_OK) {
            return err->code;
        }
    }
    if (ex_result_append(l->part, &view, err) != CM_OK) {
        return err->code;
    }
    *is_taken = true;
    l->stage_pos = end;
    return CM_OK;
}

/* Loads the next chunk from the merge: whole partitions, a batch of rows or
 * more when memory allows (fewer at the end of input, or one partition), and
 * evaluates it. */
static CmStatus chunk_load(ExOp *op, WinLocal *l, CmErr *err)
{
    const ExWindowSpec *s = op->spec;
    if (chunk_reset(op, l, err) != CM_OK) {
        return err->code;
    }
    for (;;) {
        if (l->stage_pos == l->stage.n_rows) {
            if (!l->stage_more) {
                l->is_input_done = true;
                break;
            }
            l->stage_pos = 0;
            if (ex_sorter_next(l->sorter, &l->stage, &l->stage_more, err) != CM_OK) {
                return err->code;
            }
            continue;
        }
        bool is_new = !same_partition(s, l, l->stage_pos);
        if (is_new && ex_result_n_rows(l->part) >= CM_BATCH_CAP) {
            break;
        }
        int end = l->stage_pos + 1;
        while (end < l->stage.n_rows &&
               ex_sort_compare_rows(l->keys, s->n_part, &l->stage, (uint32_t)end - 1, &l->stage,
                                    (uint32_t)end) == 0) {
            end++;
        }
        bool is_taken = false;
        if (chunk_take(l, end, is_new, &is_taken, err) != CM_OK) {
            return err->code;
        }
        if (!is_taken) {
            break;
        }
    }
    l->n = ex_result_n_rows(l->part);
    int n_batches = ex_result_n_batches(l->part);
    l->part_batches = cm_malloc(sizeof(CmBatch *) * (size_t)(n_batches ? n_batches : 1));
    l->part_order = cm_malloc(sizeof(ExRowRef) * (size_t)(l->n ? l->n : 1));
    if (l->part_batches == NULL || l->part_order == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory in a window function");
    }
    int64_t at = 0;
    for (int b = 0; b < n_batches; b++) {
        l->part_batches[b] = ex_result_batch(l->part, b);
        for (int r = 0; r < l->part_batches[b]->n_rows; r++) {
            l->part_order[at++] = (ExRowRef){.batch = (uint32_t)b, .row = (uint32_t)r};
        }
    }
    l->batches = l->part_batches;
    l->order = l->part_order;
    return compute_chunk(s, l, err);
}

/* ---- operator -------------------------------------------------------------------------- */

static void win_local_fini(ExOp *op, void *local)
{
    WinLocal *l = local;
    if (l != NULL) {
        ex_sorter_free(l->sorter);
        cm_free(l->keys);
        cm_free(l->values);
        cm_arena_fini(&l->strings);
        cm_batch_fini(&l->out);
        ex_result_free(l->part);
        cm_free(l->part_batches);
        cm_free(l->part_order);
        if (l->stage.cols != NULL) {
            cm_batch_fini(&l->stage);
        }
        cm_mem_res_fini(&l->part_res);
        cm_free(l);
    }
}

static void *win_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    const ExWindowSpec *s = op->spec;
    WinLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    cm_arena_init(&l->strings, 16 * 1024);
    ex_op_res_init(op, &l->part_res, "WINDOW partition");
    int n_keys = s->n_part + s->n_order;
    l->keys = cm_malloc(sizeof(ExSortKey) * (size_t)(n_keys ? n_keys : 1));
    if (l->keys == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        win_local_fini(op, l);
        return NULL;
    }
    for (int k = 0; k < s->n_part; k++) {
        /* Partitions only need grouping; NULL sorts last, as one partition. */
        l->keys[k] = (ExSortKey){.col = s->part[k], .desc = false, .nulls_first = false};
    }
    for (int k = 0; k < s->n_order; k++) {
        l->keys[s->n_part + k] = s->order[k];
    }
    l->sorter = ex_sorter_new(op, task->query, "WINDOW", op->n_cols - 1, op->types, n_keys,
                              l->keys, -1, err);
    if (l->sorter == NULL || cm_batch_init(&l->out, op->n_cols, op->types, err) != CM_OK) {
        win_local_fini(op, l);
        return NULL;
    }
    return l;
}

static ExOpResult win_push(ExOp *op, void *local, const CmBatch *in, const CmBatch **out,
                           CmErr *err)
{
    WinLocal *l = local;
    ex_sorter_add(l->sorter, in, err);
    return EX_NEED_INPUT;
}

/* Ends the input: one chunk of every row when the sort stayed in memory. */
static CmStatus win_start(ExOp *op, WinLocal *l, CmErr *err)
{
    l->is_sorted = true;
    if (ex_sorter_finish(l->sorter, err) != CM_OK) {
        return err->code;
    }
    if (ex_sorter_in_memory(l->sorter, &l->batches, &l->order, &l->n)) {
        return compute_chunk(op->spec, l, err);
    }
    l->is_spilled = true;
    l->stage_more = true;
    l->part = ex_result_new(op->n_cols - 1, op->types, err);
    if (l->part == NULL || cm_batch_init(&l->stage, op->n_cols - 1, op->types, err) != CM_OK) {
        return err->code;
    }
    return CM_OK;
}

static ExOpResult win_flush(ExOp *op, void *local, const CmBatch **out, CmErr *err)
{
    WinLocal *l = local;
    if (!l->is_sorted && win_start(op, l, err) != CM_OK) {
        return EX_DONE;
    }
    cm_batch_reset(&l->out);
    *out = &l->out;
    int last = op->n_cols - 1;
    for (;;) {
        while (l->next < l->n && l->out.n_rows < CM_BATCH_CAP) {
            int64_t i = l->next++;
            const CmBatch *src = l->batches[l->order[i].batch];
            uint32_t to = (uint32_t)l->out.n_rows;
            for (int c = 0; c < last; c++) {
                CmValue v;
                cm_vec_get_value(&src->cols[c], l->order[i].row, &v);
                cm_vec_set_value(&l->out.cols[c], to, &v);
            }
            cm_vec_set_value(&l->out.cols[last], to, &l->values[i]);
            l->out.n_rows++;
        }
        if (l->out.n_rows == CM_BATCH_CAP || !l->is_spilled || l->is_input_done) {
            break;
        }
        if (l->out.n_rows > 0) {
            return EX_HAVE_MORE; /* out borrows the chunk: the next one loads next call */
        }
        if (chunk_load(op, l, err) != CM_OK) {
            return EX_DONE;
        }
    }
    bool has_more = l->next < l->n || (l->is_spilled && !l->is_input_done);
    return has_more ? EX_HAVE_MORE : EX_DONE;
}

static void win_explain(const ExOp *op, char *buf, size_t cap)
{
    static const char *names[] = {"row_number", "rank", "dense_rank", "percent_rank",
                                  "cume_dist", "count_star", "count", "sum", "avg", "min", "max",
                                  "first_value", "last_value", "lag", "lead"};
    const ExWindowSpec *s = op->spec;
    size_t n = (size_t)snprintf(buf, cap, "%s(#%d) partition by", names[s->fn], s->arg);
    for (int k = 0; k < s->n_part && n + 8 < cap; k++) {
        n += (size_t)snprintf(buf + n, cap - n, " #%d", s->part[k]);
    }
    n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, " order by");
    for (int k = 0; k < s->n_order && n + 16 < cap; k++) {
        n += (size_t)snprintf(buf + n, cap - n, " #%d%s", s->order[k].col,
                              s->order[k].desc ? " DESC" : "");
    }
}

static const ExOpVt WINDOW_VT = {
    .name = "WINDOW",
    .local_init = win_local_init,
    .local_fini = win_local_fini,
    .push = win_push,
    .flush = win_flush,
    .explain = win_explain,
};

ExOp *ex_window_new(CmArena *a, const ExWindowSpec *spec, int n_cols, const CmType *types,
                    CmErr *err)
{
    ExWindowSpec *s = cm_arena_alloc(a, sizeof *s);
    CmType *t = cm_arena_alloc(a, sizeof(CmType) * (size_t)(n_cols + 1));
    if (s == NULL || t == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    *s = *spec;
    memcpy(t, types, sizeof(CmType) * (size_t)n_cols);
    t[n_cols] = spec->type;
    ExOp *op = ex_op_new(a, &WINDOW_VT, s, n_cols + 1, t);
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    return op;
}
