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

typedef struct RowRef {
    uint32_t batch, row;
} RowRef;

typedef struct WinLocal {
    ExResult *rows;
    RowRef *order;
    int64_t n, next;
    CmValue *values;    /* one per sorted row, computed at the first flush */
    CmArena strings;    /* string values of MIN/MAX/FIRST/LAST/LAG/LEAD */
    CmBatch out;
} WinLocal;

typedef struct WinCtx {
    const ExWindowSpec *s;
    const ExResult *rows;
} WinCtx;

static const CmVec *cell(const ExResult *rows, RowRef r, int col, uint32_t *pos)
{
    *pos = r.row;
    return &ex_result_batch(rows, (int)r.batch)->cols[col];
}

static int cmp_cells(const ExResult *rows, RowRef a, RowRef b, int col)
{
    uint32_t pa, pb;
    const CmVec *va = cell(rows, a, col, &pa), *vb = cell(rows, b, col, &pb);
    bool na = cm_vec_is_null(va, pa), nb = cm_vec_is_null(vb, pb);
    if (na || nb) {
        return na == nb ? 0 : na ? 1 : -1; /* NULL largest */
    }
    CmValue x, y;
    cm_vec_get_value(va, pa, &x);
    cm_vec_get_value(vb, pb, &y);
    switch ((CmTypeId)x.type.id) {
    case CM_T_DOUBLE:
        if (isnan(x.d) || isnan(y.d)) {
            return isnan(x.d) - isnan(y.d);
        }
        return (x.d > y.d) - (x.d < y.d);
    case CM_T_VARCHAR: return cm_str_cmp(&x.s, &y.s);
    default: return (x.i > y.i) - (x.i < y.i);
    }
}

static int cmp_part(const WinCtx *c, RowRef a, RowRef b)
{
    for (int k = 0; k < c->s->n_part; k++) {
        int r = cmp_cells(c->rows, a, b, c->s->part[k]);
        if (r != 0) {
            return r;
        }
    }
    return 0;
}

static int cmp_order(const WinCtx *c, RowRef a, RowRef b)
{
    for (int k = 0; k < c->s->n_order; k++) {
        const ExSortKey *key = &c->s->order[k];
        uint32_t pa, pb;
        const CmVec *va = cell(c->rows, a, key->col, &pa);
        const CmVec *vb = cell(c->rows, b, key->col, &pb);
        bool na = cm_vec_is_null(va, pa), nb = cm_vec_is_null(vb, pb);
        if (na || nb) {
            if (na != nb) {
                return (na ? -1 : 1) * (key->nulls_first ? 1 : -1);
            }
            continue;
        }
        int r = cmp_cells(c->rows, a, b, key->col);
        if (r != 0) {
            return key->desc ? -r : r;
        }
    }
    return 0;
}

static int compare_refs(const void *x, const void *y, void *arg)
{
    const WinCtx *c = arg;
    RowRef a = *(const RowRef *)x, b = *(const RowRef *)y;
    int r = cmp_part(c, a, b);
    if (r == 0) {
        r = cmp_order(c, a, b);
    }
    if (r == 0) {
        r = a.batch != b.batch ? (a.batch < b.batch ? -1 : 1) : (a.row > b.row) - (a.row < b.row);
    }
    return r;
}

/* ---- aggregates over a frame ------------------------------------------------------- */

typedef struct Acc {
    int64_t n;
    int64_t i;
    double d;
    CmValue best;
    bool has_best;
} Acc;

static void acc_add(const ExWindowSpec *s, const ExResult *rows, RowRef r, Acc *acc)
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
static int64_t peer_end(const WinCtx *c, const RowRef *o, int64_t i, int64_t end)
{
    int64_t j = i + 1;
    while (j < end && cmp_order(c, o[i], o[j]) == 0) {
        j++;
    }
    return j;
}

static void frame_of(const WinCtx *c, const RowRef *o, int64_t b, int64_t e, int64_t i,
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

static CmStatus value_at(WinLocal *l, const ExWindowSpec *s, RowRef r, CmValue *out, CmErr *err)
{
    uint32_t p;
    const CmVec *v = cell(l->rows, r, s->arg, &p);
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
    const RowRef *o = l->order;
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
                v.is_null = true;
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
                    acc_add(s, l->rows, o[running_to], &running);
                }
                acc = running;
            } else {
                for (int64_t j = f0; j < f1; j++) {
                    acc_add(s, l->rows, o[j], &acc);
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

static CmStatus compute(const ExWindowSpec *s, WinLocal *l, CmErr *err)
{
    l->n = ex_result_n_rows(l->rows);
    size_t n = (size_t)(l->n ? l->n : 1);
    l->order = cm_malloc(sizeof(RowRef) * n);
    l->values = cm_malloc(sizeof(CmValue) * n);
    if (l->order == NULL || l->values == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory in a window function");
    }
    int64_t at = 0;
    for (int bi = 0; bi < ex_result_n_batches(l->rows); bi++) {
        for (int r = 0; r < ex_result_batch(l->rows, bi)->n_rows; r++) {
            l->order[at++] = (RowRef){.batch = (uint32_t)bi, .row = (uint32_t)r};
        }
    }
    WinCtx c = {.s = s, .rows = l->rows};
    qsort_r(l->order, (size_t)l->n, sizeof(RowRef), compare_refs, &c);
    for (int64_t b = 0; b < l->n;) {
        int64_t e = b + 1;
        while (e < l->n && cmp_part(&c, l->order[b], l->order[e]) == 0) {
            e++;
        }
        if (eval_partition(&c, l, b, e, err) != CM_OK) {
            return err->code;
        }
        b = e;
    }
    return CM_OK;
}

/* ---- operator -------------------------------------------------------------------------- */

static void win_local_fini(ExOp *op, void *local)
{
    WinLocal *l = local;
    if (l != NULL) {
        ex_result_free(l->rows);
        cm_free(l->order);
        cm_free(l->values);
        cm_arena_fini(&l->strings);
        cm_batch_fini(&l->out);
        cm_free(l);
    }
}

static void *win_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    WinLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    cm_arena_init(&l->strings, 16 * 1024);
    l->n = -1;
    l->rows = ex_result_new(op->n_cols - 1, op->types, err);
    if (l->rows == NULL || cm_batch_init(&l->out, op->n_cols, op->types, err) != CM_OK) {
        win_local_fini(op, l);
        return NULL;
    }
    return l;
}

static ExOpResult win_push(ExOp *op, void *local, const CmBatch *in, const CmBatch **out,
                           CmErr *err)
{
    WinLocal *l = local;
    ex_result_append(l->rows, in, err);
    return EX_NEED_INPUT;
}

static ExOpResult win_flush(ExOp *op, void *local, const CmBatch **out, CmErr *err)
{
    const ExWindowSpec *s = op->spec;
    WinLocal *l = local;
    if (l->n < 0 && compute(s, l, err) != CM_OK) {
        return EX_DONE;
    }
    cm_batch_reset(&l->out);
    int last = op->n_cols - 1;
    while (l->next < l->n && l->out.n_rows < CM_BATCH_CAP) {
        int64_t i = l->next++;
        const CmBatch *src = ex_result_batch(l->rows, (int)l->order[i].batch);
        uint32_t to = (uint32_t)l->out.n_rows;
        for (int c = 0; c < last; c++) {
            CmValue v;
            cm_vec_get_value(&src->cols[c], l->order[i].row, &v);
            cm_vec_set_value(&l->out.cols[c], to, &v);
        }
        cm_vec_set_value(&l->out.cols[last], to, &l->values[i]);
        l->out.n_rows++;
    }
    *out = &l->out;
    return l->next < l->n ? EX_HAVE_MORE : EX_DONE;
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
