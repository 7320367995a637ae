/*
 * window.c - window functions: each task buffers its rows, sorts references
 * by (partition keys, order keys), and walks each partition once.
 *
 * Ranking functions follow the peer groups (rows equal on the order keys).
 * Aggregates use the frame: the default with ORDER BY is RANGE UNBOUNDED
 * PRECEDING .. CURRENT ROW (peers included), without ORDER BY the whole
 * partition; ROWS frames with offsets are evaluated by direct recomputation
 * over the frame (O(rows x frame); running and whole-partition frames are
 * linear, and so are frames that end at the partition's end: suf_prepare).
 * Ties keep input order, so results are deterministic.
 *
 * When the sort spilled, partitions come back from its merge in chunks of
 * whole partitions held in memory (part_res).  A partition refused memory
 * goes to a spill file of its own instead (big_start) when its function can
 * be evaluated from cursors that only move forward over that file (see
 * big_supported): the chunk ends before it, and its rows come out after the
 * chunk's, computed row by row (big_emit).  An aggregate over a sliding ROWS
 * frame (n PRECEDING .. m FOLLOWING) keeps only its frame's values there, in
 * a ring that rows enter at the frame's end and leave at its start, and
 * recomputes each row's value over it as the in-memory path does.  A frame
 * that ends at the partition's end is added up per block of rows in a first
 * pass, as the in-memory path adds it up.  Other partitions must fit.
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
#include "shuffle/spill.h"

/* A reader of a spilled partition: the batch holding row `first` on, and the
 * file position of the batch after it.  Several read one file (sh_spill_seek). */
typedef struct WinCursor {
    CmBatch b;
    int64_t first;
    int64_t next_pos;
} WinCursor;

/* The cursors of a spilled partition: its rows in turn, the end of the
 * current row's peers, and two for frame rows (the frame start or LAG/LEAD's
 * row, the frame end).  Each only moves forward: frame bounds never go back. */
enum { CUR_ROW = 0, CUR_PEERS, CUR_START, CUR_END, N_CURSORS };

typedef struct Acc {
    int64_t n;
    int64_t i; /* an exact sum is hi * 2^64 + i: i wraps and hi counts the wraps */
    int64_t hi;
    bool is_overflow; /* a DECIMAL(19..38) sum went past 128 bits */
    double d;
    CmValue best;
    bool has_best;
} Acc;

typedef struct WinLocal {
    ExSorter *sorter;   /* owned: rows sorted by (partition keys, order keys) */
    ExSortKey *keys;    /* partition keys (ASC NULLS LAST) then order keys; owned */
    bool is_sorted;     /* the sorter was finished */
    bool is_spilled;    /* the sorter spilled: chunks are copied from its merge */
    bool is_input_done; /* spilled: every row of the merge is in a chunk */
    /* the chunk being emitted: whole partitions, all the rows when not spilled */
    const CmBatch *const *batches; /* its rows' batches; borrowed from the sorter or part */
    const ExRowRef *order;         /* its rows in order */
    int64_t n, next;               /* rows in the chunk, next to emit */
    CmValue *values;               /* rows [v_lo, v_hi) of the chunk: whole partitions; owned */
    int64_t cap_values;
    int64_t v_lo, v_hi;
    int64_t *bounds; /* compute_values: partition starts of a slice, VALUES_SLICE_ROWS + 1; owned */
    CmArena strings; /* string values of MIN/MAX/FIRST/LAST/LAG/LEAD of the chunk */
    CmBatch out;
    /* spilled only */
    CmMemRes part_res;            /* the chunk's rows and values (cm_mem_need: never spilled) */
    ExResult *part;               /* the chunk's rows; owned */
    const CmBatch **part_batches; /* owned */
    ExRowRef *part_order;         /* identity order over part; owned */
    CmBatch stage;                /* the merge's current batch */
    int stage_pos;                /* its next row not yet in a chunk */
    bool stage_more;              /* the merge has rows after stage */
    int64_t part_start;           /* the chunk's row where its last partition starts */
    /* A partition that does not fit in memory even alone (see big_start): its
     * rows go to a spill file, read back through cursors while its values are
     * computed row by row.  Spilled only. */
    ExQuery *query;          /* for temp_directory */
    ShSpill *big;            /* owned; NULL when no such partition is pending */
    int64_t big_n, big_next; /* its rows, and the next to emit */
    CmBatch big_key;         /* one row of it, to find its end in the merge */
    WinCursor cur[N_CURSORS];
    int64_t rank, dense, peers_begin, peers_end, running_to; /* eval_partition's walk */
    Acc running;
    CmArena best[2]; /* the running MIN/MAX string, copied out of the cursor's batch */
    int best_idx;
    const char *best_ptr; /* the copy's bytes */
    /* sliding frames of the big partition: the values of its rows
     * [ring_first, ring_first + ring_n), long strings in cm_malloc copies */
    CmValue *ring; /* ring_cap entries from ring_head, circular; owned */
    int64_t ring_cap, ring_head, ring_n, ring_first;
    int64_t ring_bytes; /* what part_res holds for the ring */
    /* frames that end at the partition's end (suf_prepare): the suffixes of
     * the partition's blocks, and those of the current block from each row */
    Acc *suf;                  /* suf_n_blocks + 1 (the last one empty); owned */
    int64_t suf_cap;           /* entries of suf */
    int64_t suf_n;             /* the partition's rows */
    int64_t suf_block;         /* the block suf_inner covers; -1 none */
    Acc *suf_inner;            /* SUF_BLOCK + 1; owned */
    CmValue *suf_vals;         /* SUF_BLOCK: the block's values; owned */
    CmArena suf_strings;       /* the blocks' MIN/MAX strings, for the partition */
    CmArena suf_block_strings; /* the block's values' strings */
    int64_t suf_bytes;         /* what part_res holds for them (the big partition) */
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

static void acc_add_value(const ExWindowSpec *s, const CmValue *xp, Acc *acc);

/* acc_add_value's MIN/MAX step alone: x (not NULL) becomes the best when better. */
static void acc_best(const ExWindowSpec *s, const CmValue *x, Acc *acc)
{
    int c = 0;
    if (acc->has_best) {
        c = x->type.id == CM_T_DOUBLE       ? cm_f64_cmp(x->d, acc->best.d)
            : x->type.id == CM_T_VARCHAR    ? cm_str_cmp(&x->s, &acc->best.s)
            : x->type.id == CM_T_DECIMAL128 ? (cm_i128_get(x->h) > cm_i128_get(acc->best.h)) -
                                                  (cm_i128_get(x->h) < cm_i128_get(acc->best.h))
                                            : (x->i > acc->best.i) - (x->i < acc->best.i);
    }
    if (!acc->has_best || (s->fn == EX_WIN_MIN ? c < 0 : c > 0)) {
        acc->best = *x;
        acc->has_best = true;
    }
}

/* An exact sum's 128-bit value (the wide sum of sum() OVER, as DuckDB's). */
static CmInt128 acc_sum(const Acc *acc)
{
    return cm_wide_sum_get(acc->i, acc->hi);
}

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
    acc_add_value(s, &x, acc);
}

/* acc_add of a value (count(*) counts any, the others skip NULL); a MIN/MAX
 * string best points at x's bytes. */
static void acc_add_value(const ExWindowSpec *s, const CmValue *xp, Acc *acc)
{
    if (s->fn != EX_WIN_COUNT_STAR && xp->is_null) {
        return;
    }
    CmValue x = *xp;
    acc->n++;
    if (s->fn == EX_WIN_COUNT_STAR) {
        return;
    }
    if (s->fn == EX_WIN_SUM || s->fn == EX_WIN_AVG) {
        if (x.type.id == CM_T_DOUBLE) {
            acc->d += x.d;
        } else {
            if (x.type.id == CM_T_DECIMAL128) {
                CmInt128 r;
                if (!__builtin_add_overflow(acc_sum(acc), cm_i128_get(x.h), &r)) {
                    cm_wide_sum_set(&acc->i, &acc->hi, r);
                } else {
                    acc->is_overflow = true;
                }
            } else {
                cm_wide_sum_add(&acc->i, &acc->hi, x.i);
                acc->d += (double)x.i;
            }
        }
    } else if (s->fn == EX_WIN_MIN || s->fn == EX_WIN_MAX) {
        acc_best(s, &x, acc);
    }
}

/* The frame's value into *out; a sum past 38 digits is an error. */
static CmStatus acc_value(const ExWindowSpec *s, const Acc *acc, CmValue *out, CmErr *err)
{
    if (acc->is_overflow) {
        return cm_err_set(err, CM_RUNTIME, -1, "overflow in SUM: the sum exceeds DECIMAL(38)");
    }
    CmValue v = {.type = s->type};
    switch (s->fn) {
    case EX_WIN_COUNT_STAR:
    case EX_WIN_COUNT:
        v.i = acc->n;
        break;
    case EX_WIN_SUM:
        v.is_null = acc->n == 0;
        if (s->type.id == CM_T_DOUBLE) {
            v.d = acc->d;
        } else if (s->type.id == CM_T_DECIMAL128) {
            /* on the way it may pass 38 digits, not at the end */
            CmInt128 sum = acc_sum(acc);
            if (!cm_i128_add_checked(sum, 0, 38, &sum)) {
                return cm_err_set(err, CM_RUNTIME, -1,
                                  "overflow in SUM: the sum exceeds DECIMAL(38)");
            }
            cm_i128_put(v.h, sum);
        } else {
            v.i = acc->i;
        }
        break;
    case EX_WIN_AVG: {
        v.is_null = acc->n == 0;
        double scale =
            cm_type_is_decimal(s->arg_type) ? (double)cm_pow10_128(s->arg_type.scale) : 1;
        double sum = s->arg_type.id == CM_T_DOUBLE ? acc->d : (double)acc_sum(acc) / scale;
        v.d = acc->n ? sum / (double)acc->n : 0;
        break;
    }
    default:
        v = acc->best;
        v.type = s->type;
        v.is_null = !acc->has_best;
        break;
    }
    *out = v;
    return CM_OK;
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
    case EX_FRAME_UNBOUNDED_PRECEDING:
        *f0 = b;
        break;
    case EX_FRAME_PRECEDING:
        *f0 = i - s->start_off;
        break;
    case EX_FRAME_CURRENT_ROW:
        *f0 = s->rows ? i : peers_begin;
        break;
    case EX_FRAME_FOLLOWING:
        *f0 = i + s->start_off;
        break;
    case EX_FRAME_UNBOUNDED_FOLLOWING:
        *f0 = e;
        break;
    }
    switch (s->end) {
    case EX_FRAME_UNBOUNDED_PRECEDING:
        *f1 = b;
        break;
    case EX_FRAME_PRECEDING:
        *f1 = i - s->end_off + 1;
        break;
    case EX_FRAME_CURRENT_ROW:
        *f1 = s->rows ? i + 1 : peers_end;
        break;
    case EX_FRAME_FOLLOWING:
        *f1 = i + s->end_off + 1;
        break;
    case EX_FRAME_UNBOUNDED_FOLLOWING:
        *f1 = e;
        break;
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

/* ---- frames that end at the partition's end --------------------------------------------- */

/* An aggregate over [f0, partition end) where f0 is not the partition's start
 * (`CURRENT ROW AND UNBOUNDED FOLLOWING`, `n FOLLOWING AND ...`, `n PRECEDING
 * AND ...`).  Adding up each row's frame is quadratic, and a spilled partition
 * can only be read forward, so the partition is cut into blocks of SUF_BLOCK
 * rows.  A first pass adds up each block (forward); the blocks' suffixes are
 * then merged backward, one Acc per block.  A row's value is the suffix of its
 * frame start's block from that row (the block's values read once and added
 * backward) merged with the suffix of the blocks after it.  Frame starts
 * never move back, so each block is read twice in all.  The in-memory and the
 * spilled path both compute this way: the same doubles to the bit. */
#define SUF_BLOCK 256

static bool is_suffix(const ExWindowSpec *s)
{
    bool agg = s->fn == EX_WIN_COUNT_STAR || s->fn == EX_WIN_COUNT || s->fn == EX_WIN_SUM ||
               s->fn == EX_WIN_AVG || s->fn == EX_WIN_MIN || s->fn == EX_WIN_MAX;
    return agg && s->end == EX_FRAME_UNBOUNDED_FOLLOWING &&
           s->start != EX_FRAME_UNBOUNDED_PRECEDING;
}

/* Where suf_value reads a partition's rows: the chunk in memory from row
 * `base` of l->order on, or (base < 0) the big partition through a cursor. */
typedef struct SufSrc {
    WinLocal *l;
    const ExWindowSpec *s;
    int64_t base;
    int cursor;
} SufSrc;

static CmStatus cursor_at(WinLocal *l, WinCursor *c, int64_t i, const CmBatch **b, uint32_t *pos,
                          CmErr *err);

/* Adds what `from` holds to `into`: the accumulator of the rows of both. */
static void acc_merge(const ExWindowSpec *s, Acc *into, const Acc *from)
{
    into->n += from->n;
    into->is_overflow |= from->is_overflow;
    if (s->fn == EX_WIN_SUM || s->fn == EX_WIN_AVG) {
        into->d += from->d;
        CmInt128 r;
        if (!__builtin_add_overflow(acc_sum(into), acc_sum(from), &r)) {
            cm_wide_sum_set(&into->i, &into->hi, r);
        } else {
            into->is_overflow = true;
        }
    } else if ((s->fn == EX_WIN_MIN || s->fn == EX_WIN_MAX) && from->has_best) {
        acc_best(s, &from->best, into);
    }
}

/* The argument of row i of the partition into *x (a non-NULL one for
 * count(*)), a MIN/MAX string copied into `strings`. */
static CmStatus suf_value(const SufSrc *src, int64_t i, CmArena *strings, CmValue *x, CmErr *err)
{
    const CmBatch *b;
    uint32_t p;
    if (src->base >= 0) {
        ExRowRef r = src->l->order[src->base + i];
        b = src->l->batches[r.batch];
        p = r.row;
    } else if (cursor_at(src->l, &src->l->cur[src->cursor], i, &b, &p, err) != CM_OK) {
        return err->code;
    }
    if (src->s->fn == EX_WIN_COUNT_STAR) {
        *x = (CmValue){.type = src->s->type};
        return CM_OK;
    }
    cm_vec_get_value(&b->cols[src->s->arg], p, x);
    if (!x->is_null && x->type.id == CM_T_VARCHAR &&
        (src->s->fn == EX_WIN_MIN || src->s->fn == EX_WIN_MAX)) {
        x->s = cm_str_copy(strings, &x->s, err);
    }
    return err->code;
}

/* Memory of the big partition's blocks (cm_mem_need: a block's values, and an
 * accumulator per SUF_BLOCK rows). */
static CmStatus suf_need(const SufSrc *src, int64_t bytes, CmErr *err)
{
    if (src->base >= 0 || bytes <= 0) {
        return CM_OK;
    }
    if (cm_mem_need(&src->l->part_res, bytes, err) != CM_OK) {
        return err->code;
    }
    src->l->suf_bytes += bytes;
    return CM_OK;
}

/* The first pass over a partition of n rows: each block's total, then the
 * suffixes of the blocks. */
static CmStatus suf_prepare(const SufSrc *src, int64_t n, CmErr *err)
{
    const ExWindowSpec *s = src->s;
    WinLocal *l = src->l;
    int64_t nb = (n + SUF_BLOCK - 1) / SUF_BLOCK;
    if (l->suf_inner == NULL) {
        if (suf_need(src, (int64_t)((sizeof(Acc) + sizeof(CmValue)) * (SUF_BLOCK + 1)), err) !=
            CM_OK) {
            return err->code;
        }
        l->suf_inner = cm_malloc(sizeof(Acc) * (SUF_BLOCK + 1));
        l->suf_vals = cm_malloc(sizeof(CmValue) * SUF_BLOCK);
        if (l->suf_inner == NULL || l->suf_vals == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory in a window function");
        }
    }
    if (nb + 1 > l->suf_cap) {
        if (suf_need(src, (int64_t)sizeof(Acc) * (nb + 1 - l->suf_cap), err) != CM_OK) {
            return err->code;
        }
        cm_free(l->suf);
        l->suf_cap = 0;
        l->suf = cm_malloc(sizeof(Acc) * (size_t)(nb + 1));
        if (l->suf == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory in a window function");
        }
        l->suf_cap = nb + 1;
    }
    cm_arena_reset(&l->suf_strings);
    for (int64_t k = 0; k < nb; k++) {
        Acc a = {0};
        cm_arena_reset(&l->suf_block_strings);
        int64_t to = (k + 1) * SUF_BLOCK < n ? (k + 1) * SUF_BLOCK : n;
        for (int64_t i = k * SUF_BLOCK; i < to; i++) {
            CmValue x;
            if (suf_value(src, i, &l->suf_block_strings, &x, err) != CM_OK) {
                return err->code;
            }
            acc_add_value(s, &x, &a);
        }
        if (a.has_best && a.best.type.id == CM_T_VARCHAR) {
            if (suf_need(src, a.best.s.len > CM_STR_INLINE ? a.best.s.len : 0, err) != CM_OK) {
                return err->code;
            }
            a.best.s = cm_str_copy(&l->suf_strings, &a.best.s, err);
        }
        l->suf[k] = a;
    }
    l->suf[nb] = (Acc){0};
    for (int64_t k = nb - 1; k >= 0; k--) {
        acc_merge(s, &l->suf[k], &l->suf[k + 1]);
    }
    l->suf_n = n;
    l->suf_block = -1;
    return err->code;
}

/* The aggregate over [f0, n) of the partition suf_prepare went over. */
static CmStatus suf_eval(const SufSrc *src, int64_t f0, CmValue *v, CmErr *err)
{
    const ExWindowSpec *s = src->s;
    WinLocal *l = src->l;
    Acc acc = {0};
    if (f0 < l->suf_n) {
        int64_t k = f0 / SUF_BLOCK, from = k * SUF_BLOCK;
        if (k != l->suf_block) {
            int64_t len = from + SUF_BLOCK < l->suf_n ? SUF_BLOCK : l->suf_n - from;
            cm_arena_reset(&l->suf_block_strings);
            for (int64_t j = 0; j < len; j++) {
                if (suf_value(src, from + j, &l->suf_block_strings, &l->suf_vals[j], err) !=
                    CM_OK) {
                    return err->code;
                }
            }
            l->suf_inner[len] = (Acc){0};
            for (int64_t j = len - 1; j >= 0; j--) {
                l->suf_inner[j] = l->suf_inner[j + 1];
                acc_add_value(s, &l->suf_vals[j], &l->suf_inner[j]);
            }
            l->suf_block = k;
        }
        acc = l->suf_inner[f0 - from];
        acc_merge(s, &acc, &l->suf[k + 1]);
    }
    if (acc_value(s, &acc, v, err) != CM_OK) {
        return err->code;
    }
    if (!v->is_null && v->type.id == CM_T_VARCHAR) {
        v->s = cm_str_copy(&l->strings, &v->s, err);
    }
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
        case EX_WIN_ROW_NUMBER:
            v.i = i - b + 1;
            break;
        case EX_WIN_RANK:
            v.i = rank;
            break;
        case EX_WIN_DENSE_RANK:
            v.i = dense;
            break;
        case EX_WIN_PERCENT_RANK:
            v.d = e - b > 1 ? (double)(rank - 1) / (double)(e - b - 1) : 0;
            break;
        case EX_WIN_CUME_DIST:
            v.d = (double)(peers_end - b) / (double)(e - b);
            break;
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
            if (is_suffix(s)) {
                SufSrc src = {.l = l, .s = s, .base = b};
                if ((i == b && suf_prepare(&src, e - b, err) != CM_OK) ||
                    suf_eval(&src, f0 - b, &v, err) != CM_OK) {
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
            if (acc_value(s, &acc, &v, err) != CM_OK) {
                return err->code;
            }
            if (!v.is_null && v.type.id == CM_T_VARCHAR) {
                v.s = cm_str_copy(&l->strings, &v.s, err);
            }
            break;
        }
        }
        l->values[i - l->v_lo] = v;
    }
    return err->code;
}

/* Rows of a chunk whose values are computed at a time (whole partitions, so
 * more when one partition is larger).  Values for every row of a sort that
 * stayed in memory took a CmValue a row beside the reserved rows, all at
 * once and unreserved: 60 MB for a task's 2.5M rows.  Now that part is a
 * slice's, or the largest partition's. */
#define VALUES_SLICE_ROWS 16384

/* Evaluates the partitions of the chunk from row l->v_hi on, VALUES_SLICE_ROWS
 * rows of them or a little more (to the chunk's end at most), into l->values. */
static CmStatus compute_values(const ExWindowSpec *s, WinLocal *l, CmErr *err)
{
    if (l->bounds == NULL &&
        (l->bounds = cm_malloc(sizeof(int64_t) * (VALUES_SLICE_ROWS + 1))) == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory in a window function");
    }
    int64_t lo = l->v_hi, hi = lo;
    int n_parts = 0;
    while (hi < l->n && hi - lo < VALUES_SLICE_ROWS) {
        l->bounds[n_parts++] = hi;
        int64_t b = hi++;
        while (hi < l->n && ex_sort_compare_rows(l->keys, s->n_part, l->batches[l->order[b].batch],
                                                 l->order[b].row, l->batches[l->order[hi].batch],
                                                 l->order[hi].row) == 0) {
            hi++;
        }
    }
    l->bounds[n_parts] = hi;
    if (hi - lo > l->cap_values) {
        cm_free(l->values);
        l->cap_values = 0;
        l->values = cm_malloc(sizeof(CmValue) * (size_t)(hi - lo));
        if (l->values == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory in a window function");
        }
        l->cap_values = hi - lo;
    }
    l->v_lo = lo;
    l->v_hi = hi;
    WinCtx c = {.s = s, .batches = l->batches};
    for (int k = 0; k < n_parts; k++) {
        if (eval_partition(&c, l, l->bounds[k], l->bounds[k + 1], err) != CM_OK) {
            return err->code;
        }
    }
    return CM_OK;
}

/* A new chunk (l->n rows in l->order): its first partitions' values. */
static CmStatus compute_chunk(const ExWindowSpec *s, WinLocal *l, CmErr *err)
{
    l->v_lo = l->v_hi = 0;
    return compute_values(s, l, err);
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
    l->part_start = 0;
    cm_arena_reset(&l->strings);
    cm_mem_shrink(&l->part_res, l->part_res.held);
    return CM_OK;
}

/* ---- a partition larger than memory ---------------------------------------------------- */

/* A ROWS frame whose both ends are offsets from the row (n PRECEDING, CURRENT
 * ROW, m FOLLOWING): it holds at most a constant number of rows. */
static bool is_sliding(const ExWindowSpec *s)
{
    bool start = s->start == EX_FRAME_PRECEDING || s->start == EX_FRAME_FOLLOWING ||
                 s->start == EX_FRAME_CURRENT_ROW;
    bool end = s->end == EX_FRAME_PRECEDING || s->end == EX_FRAME_FOLLOWING ||
               s->end == EX_FRAME_CURRENT_ROW;
    return s->rows && start && end;
}

/* Frees the ring's string copies and empties it (its array stays). */
static void ring_clear(WinLocal *l)
{
    for (int64_t k = 0; k < l->ring_n; k++) {
        CmValue *v = &l->ring[(l->ring_head + k) % l->ring_cap];
        if (!v->is_null && v->type.id == CM_T_VARCHAR && v->s.len > CM_STR_INLINE) {
            cm_free((void *)v->s.ptr);
        }
    }
    l->ring_n = 0;
    l->ring_head = 0;
}

static void ring_pop(WinLocal *l)
{
    CmValue *v = &l->ring[l->ring_head];
    if (!v->is_null && v->type.id == CM_T_VARCHAR && v->s.len > CM_STR_INLINE) {
        cm_free((void *)v->s.ptr);
        cm_mem_shrink(&l->part_res, v->s.len);
        l->ring_bytes -= v->s.len;
    }
    l->ring_head = (l->ring_head + 1) % l->ring_cap;
    l->ring_n--;
    l->ring_first++;
}

/* Appends x to the ring, its long string copied (the frame's values are
 * memory that cannot spill: cm_mem_need, bounded by the frame's size). */
static CmStatus ring_push(WinLocal *l, const CmValue *x, CmErr *err)
{
    if (l->ring_n == l->ring_cap) {
        int64_t cap = l->ring_cap ? 2 * l->ring_cap : 64;
        int64_t more = (cap - l->ring_cap) * (int64_t)sizeof(CmValue);
        CmValue *r = NULL;
        if (cm_mem_need(&l->part_res, more, err) != CM_OK ||
            (r = cm_malloc(sizeof(CmValue) * (size_t)cap)) == NULL) {
            return err->code != CM_OK ? err->code : cm_err_set(err, CM_OOM, -1, "out of memory");
        }
        l->ring_bytes += more;
        for (int64_t k = 0; k < l->ring_n; k++) {
            r[k] = l->ring[(l->ring_head + k) % l->ring_cap];
        }
        cm_free(l->ring);
        l->ring = r;
        l->ring_cap = cap;
        l->ring_head = 0;
    }
    CmValue v = *x;
    if (!v.is_null && v.type.id == CM_T_VARCHAR && v.s.len > CM_STR_INLINE) {
        char *d = NULL;
        if (cm_mem_need(&l->part_res, v.s.len, err) != CM_OK || (d = cm_malloc(v.s.len)) == NULL) {
            return err->code != CM_OK ? err->code : cm_err_set(err, CM_OOM, -1, "out of memory");
        }
        l->ring_bytes += v.s.len;
        memcpy(d, v.s.ptr, v.s.len);
        v.s.ptr = d;
    }
    l->ring[(l->ring_head + l->ring_n) % l->ring_cap] = v;
    l->ring_n++;
    return CM_OK;
}

/* Can a partition of s be evaluated from cursors that only move forward?
 * Ranking, LAG/LEAD and FIRST/LAST_VALUE can; an aggregate can when its frame
 * starts at the partition's start (running or whole-partition frames): one
 * running accumulator then follows the frame's end. */
static bool big_supported(const ExWindowSpec *s)
{
    switch (s->fn) {
    case EX_WIN_COUNT_STAR:
    case EX_WIN_COUNT:
    case EX_WIN_SUM:
    case EX_WIN_AVG:
    case EX_WIN_MIN:
    case EX_WIN_MAX:
        return s->start == EX_FRAME_UNBOUNDED_PRECEDING || is_sliding(s) || is_suffix(s);
    default:
        return true;
    }
}

/* Appends rows [from, to) of b (positions of its active rows) to the big file. */
static CmStatus big_append(WinLocal *l, const CmBatch *b, int from, int to, CmErr *err)
{
    if (from >= to) {
        return CM_OK;
    }
    uint32_t sel[CM_BATCH_CAP];
    CmBatch view = *b;
    for (int i = from; i < to; i++) {
        sel[i - from] = cm_batch_pos(b, i);
    }
    view.sel = sel;
    view.n_rows = to - from;
    return sh_spill_append(l->big, &view, err);
}

/* The partition at stage[stage_pos] does not fit in memory (the manager
 * refused even what cannot spill): its rows already in the chunk (from
 * part_start on) and the rest of it in the merge go to a spill file, and the
 * chunk ends before it.  Its values are computed when it is emitted
 * (big_emit), after the chunk's other rows. */
static CmStatus big_start(ExOp *op, WinLocal *l, int end, CmErr *err)
{
    const ExWindowSpec *s = op->spec;
    const CmConfig *cfg = &l->query->config;
    l->big = sh_spill_new(cfg->temp_directory, cfg->max_temp_directory_size, err);
    if (l->big == NULL) {
        return err->code;
    }
    if (l->big_key.cols == NULL &&
        cm_batch_init(&l->big_key, op->n_cols - 1, op->types, err) != CM_OK) {
        return err->code;
    }
    cm_batch_reset(&l->big_key);
    uint32_t first = cm_batch_pos(&l->stage, l->stage_pos);
    if (cm_batch_append_rows(&l->big_key, &l->stage, &first, 1, true, err) != CM_OK) {
        return err->code;
    }
    int64_t at = 0;
    for (int bi = 0; bi < ex_result_n_batches(l->part); bi++) {
        const CmBatch *b = ex_result_batch(l->part, bi);
        int64_t from = l->part_start - at;
        if (big_append(l, b, from > 0 ? (int)(from < b->n_rows ? from : b->n_rows) : 0, b->n_rows,
                       err) != CM_OK) {
            return err->code;
        }
        at += b->n_rows;
    }
    for (;;) {
        if (big_append(l, &l->stage, l->stage_pos, end, err) != CM_OK) {
            return err->code;
        }
        l->stage_pos = end;
        if (end < l->stage.n_rows) {
            break;
        }
        if (!l->stage_more) {
            l->is_input_done = true;
            break;
        }
        if (ex_query_check(l->query, err) != CM_OK ||
            ex_sorter_next(l->sorter, &l->stage, &l->stage_more, err) != CM_OK) {
            return err->code;
        }
        l->stage_pos = 0;
        end = 0;
        while (end < l->stage.n_rows &&
               ex_sort_compare_rows(l->keys, s->n_part, &l->stage, cm_batch_pos(&l->stage, end),
                                    &l->big_key, 0) == 0) {
            end++;
        }
    }
    if (sh_spill_rewind(l->big, err) != CM_OK) {
        return err->code;
    }
    /* A chunk that was this partition alone has all its rows in the file
     * now: its memory goes to the partition's frames (chunk_load reads an
     * empty chunk). */
    if (l->part_start == 0 && chunk_reset(op, l, err) != CM_OK) {
        return err->code;
    }
    l->big_n = sh_spill_rows(l->big);
    l->big_next = 0;
    for (int c = 0; c < N_CURSORS; c++) {
        WinCursor *cu = &l->cur[c];
        if (cu->b.cols == NULL && cm_batch_init(&cu->b, op->n_cols - 1, op->types, err) != CM_OK) {
            return err->code;
        }
        cm_batch_reset(&cu->b);
        cu->first = 0;
        cu->next_pos = sh_spill_tell(l->big);
    }
    l->rank = l->dense = l->peers_begin = l->peers_end = l->running_to = 0;
    l->running = (Acc){0};
    l->best_ptr = NULL;
    ring_clear(l);
    l->ring_first = 0;
    return CM_OK;
}

/* Row i of the big partition through cursor c: its batch and position. */
static CmStatus cursor_at(WinLocal *l, WinCursor *c, int64_t i, const CmBatch **b, uint32_t *pos,
                          CmErr *err)
{
    while (i >= c->first + c->b.n_rows) {
        bool eof = false;
        c->first += c->b.n_rows;
        sh_spill_seek(l->big, c->next_pos);
        if (sh_spill_read(l->big, &c->b, &eof, err) != CM_OK) {
            return err->code;
        }
        if (eof) {
            return cm_err_set(err, CM_INTERNAL, -1,
                              "a window cursor passed the end of its partition");
        }
        c->next_pos = sh_spill_tell(l->big);
    }
    *b = &c->b;
    *pos = cm_batch_pos(&c->b, (int)(i - c->first));
    return CM_OK;
}

/* The value of column `col` of big row i, through cursor c, strings copied
 * into l->strings. */
static CmStatus big_value_at(WinLocal *l, const ExWindowSpec *s, int c, int64_t i, CmValue *out,
                             CmErr *err)
{
    const CmBatch *b;
    uint32_t p;
    if (cursor_at(l, &l->cur[c], i, &b, &p, err) != CM_OK) {
        return err->code;
    }
    cm_vec_get_value(&b->cols[s->arg], p, out);
    if (!out->is_null && out->type.id == CM_T_VARCHAR) {
        out->s = cm_str_copy(&l->strings, &out->s, err);
    }
    out->type = s->type;
    return err->code;
}

/* An aggregate over the sliding frame [f0, f1) of the big partition: rows
 * before f0 leave the ring, rows up to f1 enter it (through the frame-end
 * cursor: both bounds only move forward), and the value is computed over the
 * ring in frame order, as eval_partition computes it over the chunk. */
static CmStatus big_sliding(const ExWindowSpec *s, WinLocal *l, int64_t f0, int64_t f1, CmValue *v,
                            CmErr *err)
{
    while (l->ring_n > 0 && l->ring_first < f0) {
        ring_pop(l);
    }
    if (l->ring_n == 0 && l->ring_first < f0) {
        l->ring_first = f0;
    }
    for (int64_t j = l->ring_first + l->ring_n; j < f1; j++) {
        const CmBatch *rb;
        uint32_t rp;
        CmValue x = {.type = s->type, .is_null = false};
        if (cursor_at(l, &l->cur[CUR_END], j, &rb, &rp, err) != CM_OK) {
            return err->code;
        }
        if (s->fn != EX_WIN_COUNT_STAR) {
            cm_vec_get_value(&rb->cols[s->arg], rp, &x);
        }
        if (ring_push(l, &x, err) != CM_OK) {
            return err->code;
        }
    }
    Acc acc = {0};
    for (int64_t j = f0 < l->ring_first ? l->ring_first : f0; j < f1; j++) {
        acc_add_value(s, &l->ring[(l->ring_head + (j - l->ring_first)) % l->ring_cap], &acc);
    }
    if (acc_value(s, &acc, v, err) != CM_OK) {
        return err->code;
    }
    if (!v->is_null && v->type.id == CM_T_VARCHAR) {
        v->s = cm_str_copy(&l->strings, &v->s, err);
    }
    return err->code;
}

/* eval_partition for row i of the big partition (b its batch, p its position). */
static CmStatus big_eval(const ExWindowSpec *s, WinLocal *l, int64_t i, const CmBatch *b,
                         uint32_t p, CmValue *v, CmErr *err)
{
    int64_t n = l->big_n;
    if (i == l->peers_end) {
        l->peers_begin = i;
        int64_t j = i + 1;
        while (s->n_order > 0 && j < n) {
            const CmBatch *pb;
            uint32_t pp;
            if (cursor_at(l, &l->cur[CUR_PEERS], j, &pb, &pp, err) != CM_OK) {
                return err->code;
            }
            if (ex_sort_compare_rows(s->order, s->n_order, b, p, pb, pp) != 0) {
                break;
            }
            j++;
        }
        l->peers_end = s->n_order > 0 ? j : n;
        l->rank = i + 1;
        l->dense++;
    }
    *v = (CmValue){.type = s->type};
    switch (s->fn) {
    case EX_WIN_ROW_NUMBER:
        v->i = i + 1;
        break;
    case EX_WIN_RANK:
        v->i = l->rank;
        break;
    case EX_WIN_DENSE_RANK:
        v->i = l->dense;
        break;
    case EX_WIN_PERCENT_RANK:
        v->d = n > 1 ? (double)(l->rank - 1) / (double)(n - 1) : 0;
        break;
    case EX_WIN_CUME_DIST:
        v->d = (double)l->peers_end / (double)n;
        break;
    case EX_WIN_LAG:
    case EX_WIN_LEAD: {
        int64_t j = s->fn == EX_WIN_LAG ? i - s->start_off : i + s->start_off;
        if (j < 0 || j >= n) {
            v->is_null = true;
        } else {
            return big_value_at(l, s, CUR_START, j, v, err);
        }
        break;
    }
    default: {
        WinCtx c = {.s = s};
        int64_t f0 = 0, f1 = n;
        frame_of(&c, NULL, 0, n, i, l->peers_end, l->peers_begin, &f0, &f1);
        if (s->fn == EX_WIN_FIRST_VALUE || s->fn == EX_WIN_LAST_VALUE) {
            if (f0 >= f1) {
                v->is_null = true;
                break;
            }
            bool first = s->fn == EX_WIN_FIRST_VALUE;
            return big_value_at(l, s, first ? CUR_START : CUR_END, first ? f0 : f1 - 1, v, err);
        }
        if (is_sliding(s)) {
            return big_sliding(s, l, f0, f1, v, err);
        }
        if (is_suffix(s)) { /* a first pass through the frame-end cursor, then the start's */
            SufSrc src = {.l = l, .s = s, .base = -1, .cursor = CUR_END};
            if (i == 0 && suf_prepare(&src, n, err) != CM_OK) {
                return err->code;
            }
            src.cursor = CUR_START;
            return suf_eval(&src, f0, v, err);
        }
        /* big_supported: the frame starts at 0, and its end never goes back. */
        for (; l->running_to < f1; l->running_to++) {
            const CmBatch *rb;
            uint32_t rp;
            if (cursor_at(l, &l->cur[CUR_END], l->running_to, &rb, &rp, err) != CM_OK) {
                return err->code;
            }
            ExRowRef r = {.batch = 0, .row = rp};
            acc_add(s, &rb, r, &l->running);
            CmValue *best = &l->running.best;
            if (l->running.has_best && best->type.id == CM_T_VARCHAR &&
                best->s.len > CM_STR_INLINE && best->s.ptr != l->best_ptr) {
                /* A new best, in the cursor's batch: copied before the batch goes. */
                l->best_idx ^= 1;
                cm_arena_reset(&l->best[l->best_idx]);
                best->s = cm_str_copy(&l->best[l->best_idx], &best->s, err);
                if (err->code != CM_OK) {
                    return err->code;
                }
                l->best_ptr = best->s.ptr;
            }
        }
        if (acc_value(s, &l->running, v, err) != CM_OK) {
            return err->code;
        }
        if (!v->is_null && v->type.id == CM_T_VARCHAR) {
            v->s = cm_str_copy(&l->strings, &v->s, err);
        }
        break;
    }
    }
    return err->code;
}

/* Frees the big partition once emitted. */
static void big_end(ExOp *op, WinLocal *l)
{
    ring_clear(l);
    cm_mem_shrink(&l->part_res, l->ring_bytes + l->suf_bytes);
    l->ring_bytes = 0;
    l->suf_bytes = 0;
    cm_free(l->suf);
    cm_free(l->suf_inner);
    cm_free(l->suf_vals);
    l->suf = NULL;
    l->suf_inner = NULL;
    l->suf_vals = NULL;
    l->suf_cap = 0;
    cm_arena_reset(&l->suf_strings);
    cm_arena_reset(&l->suf_block_strings);
    if (l->big != NULL) {
        ex_op_count_spill(op, sh_spill_bytes(l->big));
        sh_spill_free(l->big);
        l->big = NULL;
    }
}

/* Emits rows of the big partition into l->out (empty), with their values:
 * at most the rest of the row cursor's batch, whose strings out borrows. */
static CmStatus big_emit(ExOp *op, WinLocal *l, CmErr *err)
{
    const ExWindowSpec *s = op->spec;
    int last = op->n_cols - 1;
    WinCursor *m = &l->cur[CUR_ROW];
    cm_arena_reset(&l->strings);
    while (l->big_next < l->big_n && l->out.n_rows < CM_BATCH_CAP) {
        int64_t i = l->big_next;
        if (l->out.n_rows > 0 && i >= m->first + m->b.n_rows) {
            break;
        }
        const CmBatch *b;
        uint32_t p;
        CmValue v;
        if (cursor_at(l, m, i, &b, &p, err) != CM_OK || big_eval(s, l, i, b, p, &v, err) != CM_OK) {
            return err->code;
        }
        uint32_t to = (uint32_t)l->out.n_rows;
        for (int c = 0; c < last; c++) {
            CmValue x;
            cm_vec_get_value(&b->cols[c], p, &x);
            cm_vec_set_value(&l->out.cols[c], to, &x);
        }
        cm_vec_set_value(&l->out.cols[last], to, &v);
        l->out.n_rows++;
        l->big_next++;
    }
    if (l->big_next == l->big_n) {
        big_end(op, l);
    }
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
 * A partition that starts the chunk or is already in it and is refused goes
 * to a spill file of its own (big_start) when its frames allow, and the
 * chunk ends before it; else it is held whole (cm_mem_need: an OOM past the
 * limit).
 * One that would start later is taken only while memory is granted;
 * *is_taken false when refused or spilled (the chunk ends before it). */
static CmStatus chunk_take(ExOp *op, WinLocal *l, int end, bool is_new, bool *is_taken, CmErr *err)
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
        /* A partition whose frames allow it goes to a file of its own
         * (big_start); the others must be held whole. */
        if (big_supported(op->spec)) {
            return big_start(op, l, end, err);
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
        if (is_new) {
            l->part_start = ex_result_n_rows(l->part);
        }
        int end = l->stage_pos + 1;
        while (end < l->stage.n_rows &&
               ex_sort_compare_rows(l->keys, s->n_part, &l->stage, (uint32_t)end - 1, &l->stage,
                                    (uint32_t)end) == 0) {
            end++;
        }
        bool is_taken = false;
        if (chunk_take(op, l, end, is_new, &is_taken, err) != CM_OK) {
            return err->code;
        }
        if (!is_taken) {
            break;
        }
    }
    /* A partition sent to big_start is not the chunk's: its rows from
     * part_start stay in part, unread, until the chunk is reset. */
    l->n = l->big != NULL ? l->part_start : ex_result_n_rows(l->part);
    int n_batches = ex_result_n_batches(l->part);
    l->part_batches = cm_malloc(sizeof(CmBatch *) * (size_t)(n_batches ? n_batches : 1));
    l->part_order = cm_malloc(sizeof(ExRowRef) * (size_t)(l->n ? l->n : 1));
    if (l->part_batches == NULL || l->part_order == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory in a window function");
    }
    int64_t at = 0;
    for (int b = 0; b < n_batches; b++) {
        l->part_batches[b] = ex_result_batch(l->part, b);
        for (int r = 0; r < l->part_batches[b]->n_rows && at < l->n; r++) {
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
        cm_free(l->bounds);
        cm_arena_fini(&l->strings);
        cm_batch_fini(&l->out);
        ex_result_free(l->part);
        cm_free(l->part_batches);
        cm_free(l->part_order);
        if (l->stage.cols != NULL) {
            cm_batch_fini(&l->stage);
        }
        big_end(op, l);
        cm_free(l->ring);
        cm_mem_res_fini(&l->part_res);
        if (l->big_key.cols != NULL) {
            cm_batch_fini(&l->big_key);
        }
        for (int c = 0; c < N_CURSORS; c++) {
            if (l->cur[c].b.cols != NULL) {
                cm_batch_fini(&l->cur[c].b);
            }
        }
        cm_arena_fini(&l->best[0]);
        cm_arena_fini(&l->best[1]);
        cm_arena_fini(&l->suf_strings);
        cm_arena_fini(&l->suf_block_strings);
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
    cm_arena_init(&l->best[0], 1024);
    cm_arena_init(&l->best[1], 1024);
    cm_arena_init(&l->suf_strings, 1024);
    cm_arena_init(&l->suf_block_strings, 16 * 1024);
    l->query = task->query;
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
    l->sorter = ex_sorter_new(op, task->query, "WINDOW", op->n_cols - 1, op->types, n_keys, l->keys,
                              -1, err);
    if (l->sorter == NULL || cm_batch_init(&l->out, op->n_cols, op->types, err) != CM_OK) {
        win_local_fini(op, l);
        return NULL;
    }
    if (s->presorted) {
        ex_sorter_set_presorted(l->sorter);
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
            if (i >= l->v_hi && compute_values(op->spec, l, err) != CM_OK) {
                return EX_DONE;
            }
            cm_vec_set_value(&l->out.cols[last], to, &l->values[i - l->v_lo]);
            l->out.n_rows++;
        }
        if (l->out.n_rows == CM_BATCH_CAP) {
            break;
        }
        if (l->out.n_rows > 0 && l->big != NULL) {
            return EX_HAVE_MORE; /* the big partition's rows start a batch of their own */
        }
        if (l->big != NULL) {
            if (big_emit(op, l, err) != CM_OK) {
                return EX_DONE;
            }
            break;
        }
        if (!l->is_spilled || l->is_input_done) {
            break;
        }
        if (l->out.n_rows > 0) {
            return EX_HAVE_MORE; /* out borrows the chunk: the next one loads next call */
        }
        if (chunk_load(op, l, err) != CM_OK) {
            return EX_DONE;
        }
    }
    bool has_more = l->next < l->n || l->big != NULL || (l->is_spilled && !l->is_input_done);
    return has_more ? EX_HAVE_MORE : EX_DONE;
}

const char *ex_window_fn_name(ExWinFn fn)
{
    static const char *names[] = {"row_number", "rank",       "dense_rank", "percent_rank",
                                  "cume_dist",  "count_star", "count",      "sum",
                                  "avg",        "min",        "max",        "first_value",
                                  "last_value", "lag",        "lead"};
    return names[fn];
}

static void win_explain(const ExOp *op, const char *const *in_names, char *buf, size_t cap)
{
    const ExWindowSpec *s = op->spec;
    size_t n = (size_t)snprintf(buf, cap, "%s(", ex_window_fn_name(s->fn));
    if (s->arg >= 0 && n < cap) {
        n += ex_col_to_string(in_names, s->arg, buf + n, cap - n);
    }
    n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, ") partition by");
    for (int k = 0; k < s->n_part && n + 8 < cap; k++) {
        n += (size_t)snprintf(buf + n, cap - n, k ? ", " : " ");
        n += ex_col_to_string(in_names, s->part[k], buf + n, cap - n);
    }
    n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, " order by");
    for (int k = 0; k < s->n_order && n + 16 < cap; k++) {
        n += (size_t)snprintf(buf + n, cap - n, k ? ", " : " ");
        n += ex_col_to_string(in_names, s->order[k].col, buf + n, cap - n);
        n +=
            (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s", s->order[k].desc ? " DESC" : "");
    }
    if (s->presorted && n < cap) {
        snprintf(buf + n, cap - n, " (input in order)");
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

ExWindowSpec *ex_window_spec(ExOp *op)
{
    return op->vt == &WINDOW_VT ? (ExWindowSpec *)op->spec : NULL;
}

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
