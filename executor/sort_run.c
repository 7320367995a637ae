/*
 * sort_run.c - the external sort (sort_run.h).
 *
 * Buffering: each added batch first reserves its bytes (fixed-width values,
 * out-of-line string bytes and one ExRowRef per row).  A refusal writes the
 * buffered rows as a sorted run and releases their memory; a batch that still
 * does not fit is written as a run of its own.  A granted batch that views a
 * table's chunk is kept in place, pinned (keep_batch), while the kept bytes
 * stay within keep_cap; others are copied into the open ExResult.  parts[]
 * then `rows` hold the buffered rows in input order.
 * Merging: a run is read one batch at a time, so merging k runs reserves k
 * times the largest batch any run wrote.  The fan-in F is how many of those
 * the manager grants (at least 2, at most EX_SORTER_MAX_FANIN or a quarter of
 * memory_limit); with more runs
 * than F, passes merge groups of F neighbouring runs into one until F remain.
 * Invariant: s->runs[0..n_runs) are consecutive stretches of the input in
 * order (NULL once freed by a pass), each sorted with ties in input order; a
 * merge breaks ties by input index, which keeps that invariant.
 */
#define _GNU_SOURCE
#include "executor/sort_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/datetime.h"
#include "common/thread.h"
#include "executor/result.h"
#include "executor/sort_key.h"
#include "shuffle/spill.h"

/* One run being merged: its current batch and the next row in it. */
typedef struct MergeIn {
    ShSpill *file;  /* borrowed from s->runs */
    CmBatch batch;  /* the run's current batch */
    int pos;        /* next row of batch */
    bool has_batch; /* batch was initialised */
} MergeIn;

typedef struct Merge {
    MergeIn *ins; /* owned, n_ins entries */
    int n_ins;
    int *heap; /* owned: indexes of inputs with rows left, a min-heap */
    int n_heap;
    /* The rows taken from the heap and not yet copied out, in output order:
     * input pend_in[i], row pend_pos[i].  Copied a column at a time (merge_emit)
     * before any of those inputs' batches is replaced.  Owned, CM_BATCH_CAP each. */
    uint8_t *pend_in;
    uint32_t *pend_pos;
    int n_pend;
} Merge;
_Static_assert(EX_SORTER_MAX_FANIN <= 256, "Merge.pend_in holds an input index in a byte");

/* Buffered rows before the open ExResult, in input order: copied rows, or a
 * batch kept in place (a view of a table's chunk, pinned: cm_batch_keep). */
typedef struct Part {
    ExResult *rows; /* owned; NULL for a kept batch */
    CmBatch view;   /* a kept batch: cols owned, vectors viewing the chunk */
    CmKeep kept;
} Part;

struct ExSorter {
    ExOp *op; /* borrowed: counts spills and memory */
    char temp_dir[256];
    int64_t max_temp;
    int n_cols;
    CmType *types; /* owned */
    int n_keys;
    ExSortKey *keys;          /* owned */
    int64_t limit;            /* -1: all rows */
    int n_threads;            /* threads of the in-memory sort (ex_sort_refs) and its output */
    bool presorted;           /* rows arrive in key order: sort_rows keeps it */
    CmPool *pool;             /* owned: gathers the in-memory output when n_threads > 1 */
    int64_t row_width;        /* fixed bytes a buffered row takes, its ExRowRef and its
                                 normalized key while sorted (sort_key.h) included */
    CmMemRes res;             /* buffered rows, then the merge's input batches */
    Part *parts;              /* buffered rows before `rows`; owned */
    int n_parts, cap_parts;
    int64_t part_rows;        /* rows in parts[] */
    int part_batches;         /* batches in parts[] */
    int64_t kept_bytes;       /* row bytes of the batches kept in place */
    int64_t keep_cap;         /* kept_bytes stays within this */
    ExResult *rows;           /* buffered rows after parts[] (copied); owned */
    const CmBatch **batches;  /* rows' batches by index, for the comparator; owned */
    ExRowRef *order;          /* the sorted buffered rows; owned */
    int64_t n_order, next;    /* rows in order (after a limit), next to emit */
    ShSpill **runs;           /* owned; NULL entries were merged away */
    int64_t *run_batch_bytes; /* the largest batch each run wrote */
    int n_runs, cap_runs;
    int n_runs_written; /* for ex_sorter_n_runs */
    bool is_finished;
    bool is_merging;   /* finish left runs: next() merges them */
    Merge merge;       /* the final merge */
    int64_t n_emitted; /* rows the final merge returned */
    CmBatch scratch;   /* a run's batch being written */
    CmBatch single;    /* an input batch that becomes a run alone */
};

/* In-memory output of fewer rows is gathered on the sorter's thread alone. */
#define GATHER_MIN_ROWS 16384

/* ---- comparison ---------------------------------------------------------------- */

static int compare_cell(const CmVec *a, uint32_t pa, const CmVec *b, uint32_t pb);

/* Lists compare element by element (a NULL element after any value, as
 * DuckDB orders them), then the shorter first. */
static int compare_list(const CmVec *a, uint32_t pa, const CmVec *b, uint32_t pb)
{
    const CmList *x = &((const CmList *)a->data)[pa], *y = &((const CmList *)b->data)[pb];
    CmType elem = cm_type_elem(a->type);
    size_t w = cm_type_width(elem);
    CmVec ex = {.type = elem, .data = (void *)x->data},
          ey = {.type = elem, .data = (void *)y->data};
    for (uint32_t k = 0; k < x->len && k < y->len; k++) {
        bool nx = cm_list_is_null(x, w, k), ny = cm_list_is_null(y, w, k);
        int c = nx || ny ? (int)nx - (int)ny : compare_cell(&ex, k, &ey, k);
        if (c != 0) {
            return c;
        }
    }
    return (x->len > y->len) - (x->len < y->len);
}

static int compare_cell(const CmVec *a, uint32_t pa, const CmVec *b, uint32_t pb)
{
    switch ((CmTypeId)a->type.id) {
    case CM_T_NULL:
    case CM_T_BOOL: {
        uint8_t x = ((const uint8_t *)a->data)[pa], y = ((const uint8_t *)b->data)[pb];
        return (x > y) - (x < y);
    }
    case CM_T_INT32:
    case CM_T_DATE: {
        int32_t x = ((const int32_t *)a->data)[pa], y = ((const int32_t *)b->data)[pb];
        return (x > y) - (x < y);
    }
    case CM_T_INTERVAL:
        return cm_interval_cmp(&((const CmInterval *)a->data)[pa],
                               &((const CmInterval *)b->data)[pb]);
    case CM_T_INT64:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
    case CM_T_DECIMAL: {
        int64_t x = ((const int64_t *)a->data)[pa], y = ((const int64_t *)b->data)[pb];
        return (x > y) - (x < y);
    }
    case CM_T_DECIMAL128: {
        CmInt128 x = cm_i128_get((const char *)a->data + 16 * (size_t)pa);
        CmInt128 y = cm_i128_get((const char *)b->data + 16 * (size_t)pb);
        return (x > y) - (x < y);
    }
    case CM_T_DOUBLE: {
        /* NaN sorts after every number (PostgreSQL), so the order is total. */
        return cm_f64_cmp(((const double *)a->data)[pa], ((const double *)b->data)[pb]);
    }
    case CM_T_VARCHAR:
        return cm_str_cmp(&((const CmStr *)a->data)[pa], &((const CmStr *)b->data)[pb]);
    case CM_T_LIST:
        return compare_list(a, pa, b, pb);
    }
    return 0;
}

int ex_sort_compare_rows(const ExSortKey *keys, int n_keys, const CmBatch *a, uint32_t ra,
                         const CmBatch *b, uint32_t rb)
{
    for (int k = 0; k < n_keys; k++) {
        const ExSortKey *key = &keys[k];
        const CmVec *va = &a->cols[key->col], *vb = &b->cols[key->col];
        bool na = cm_vec_is_null(va, ra), nb = cm_vec_is_null(vb, rb);
        if (na || nb) {
            if (na && nb) {
                continue;
            }
            return (na ? -1 : 1) * (key->nulls_first ? 1 : -1);
        }
        int c = compare_cell(va, ra, vb, rb);
        if (c != 0) {
            return key->desc ? -c : c;
        }
    }
    return 0;
}

typedef struct SortCtx {
    const ExSorter *s;
    const CmBatch **batches;
} SortCtx;

int ex_sort_compare_refs(const ExSortKey *keys, int n_keys, const CmBatch *const *batches,
                         const ExRowRef *ra, const ExRowRef *rb)
{
    int c = ex_sort_compare_rows(keys, n_keys, batches[ra->batch], ra->row, batches[rb->batch],
                                 rb->row);
    if (c != 0) {
        return c;
    }
    if (ra->batch != rb->batch) {
        return ra->batch < rb->batch ? -1 : 1;
    }
    return (ra->row > rb->row) - (ra->row < rb->row);
}

/* Keys, then input order: a total order, so the sort is stable. */
static int compare_refs(const void *x, const void *y, void *arg)
{
    const SortCtx *ctx = arg;
    return ex_sort_compare_refs(ctx->s->keys, ctx->s->n_keys, ctx->batches, x, y);
}

/* ---- sorting the buffered rows ------------------------------------------------------ */

static void swap_refs(ExRowRef *refs, int64_t a, int64_t b)
{
    ExRowRef t = refs[a];
    refs[a] = refs[b];
    refs[b] = t;
}

/* Puts the reference of rank nth of refs[0..n) at refs[nth], the smaller ones
 * before it and the larger after it: Hoare's selection with the median of
 * three as pivot, O(n) expected. */
static void select_nth(ExRowRef *refs, int64_t n, int64_t nth, SortCtx *ctx)
{
    int64_t lo = 0, hi = n - 1;
    while (hi > lo) {
        int64_t mid = lo + (hi - lo) / 2;
        if (compare_refs(&refs[mid], &refs[lo], ctx) < 0) {
            swap_refs(refs, mid, lo);
        }
        if (compare_refs(&refs[hi], &refs[lo], ctx) < 0) {
            swap_refs(refs, hi, lo);
        }
        if (compare_refs(&refs[hi], &refs[mid], ctx) < 0) {
            swap_refs(refs, hi, mid);
        }
        ExRowRef pivot = refs[mid]; /* refs[lo] <= pivot <= refs[hi]: the scans stop */
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (compare_refs(&refs[i], &pivot, ctx) < 0) {
                i++;
            }
            while (compare_refs(&refs[j], &pivot, ctx) > 0) {
                j--;
            }
            if (i <= j) {
                swap_refs(refs, i++, j--);
            }
        }
        if (nth <= j) {
            hi = j;
        } else if (nth >= i) {
            lo = i;
        } else {
            return;
        }
    }
}

/* Top-N: moves the k smallest of refs[0..n) (k < n / 2) to refs[0..k), for
 * sorting.  Candidates collect at the front; a row is one only when it is
 * smaller than the bound, the k-th smallest at the last selection, and each
 * time 2k have collected a selection keeps the k smallest.  O(n) comparisons
 * whatever the input order.  A max-heap of k took log k comparisons for
 * every row that entered it, which is every row when the input comes in the
 * opposite order (a table in ascending order read for ORDER BY ... DESC
 * LIMIT 1000000: 9 s for 10M rows).  The comparison is a total order, so
 * ties keep input order. */
static int64_t select_top(ExRowRef *refs, int64_t n, int64_t k, SortCtx *ctx)
{
    int64_t m = 0;
    bool has_bound = false;
    ExRowRef bound = {0};
    for (int64_t i = 0; i < n; i++) {
        if (has_bound && compare_refs(&refs[i], &bound, ctx) >= 0) {
            continue;
        }
        refs[m++] = refs[i]; /* m <= i */
        if (m == 2 * k) {
            select_nth(refs, m, k - 1, ctx);
            bound = refs[k - 1];
            has_bound = true;
            m = k;
        }
    }
    if (m > k) {
        select_nth(refs, m, k - 1, ctx);
    }
    return m < k ? m : k;
}

/* Rows buffered: in parts[] and the open result. */
static int64_t n_buffered(const ExSorter *s)
{
    return s->part_rows + ex_result_n_rows(s->rows);
}

/* Lists the buffered batches in input order into s->batches. */
static void list_batches(ExSorter *s)
{
    int n = 0;
    for (int p = 0; p < s->n_parts; p++) {
        const Part *part = &s->parts[p];
        if (part->rows == NULL) {
            s->batches[n++] = &part->view;
        }
        for (int b = 0; part->rows != NULL && b < ex_result_n_batches(part->rows); b++) {
            s->batches[n++] = ex_result_batch(part->rows, b);
        }
    }
    for (int b = 0; b < ex_result_n_batches(s->rows); b++) {
        s->batches[n++] = ex_result_batch(s->rows, b);
    }
}

/* Frees parts[], letting go of the kept batches. */
static void drop_parts(ExSorter *s)
{
    for (int p = 0; p < s->n_parts; p++) {
        ex_result_free(s->parts[p].rows);
        cm_keep_drop(&s->parts[p].kept);
        cm_free(s->parts[p].view.cols);
    }
    s->n_parts = 0;
    s->part_rows = 0;
    s->part_batches = 0;
    s->kept_bytes = 0;
}

/* Frees parts[] and empties the open result. */
static CmStatus free_buffered(ExSorter *s, CmErr *err)
{
    drop_parts(s);
    if (ex_result_n_rows(s->rows) > 0) {
        ExResult *fresh = ex_result_new(s->n_cols, s->types, err);
        if (fresh == NULL) {
            return err->code;
        }
        ex_result_free(s->rows);
        s->rows = fresh;
    }
    return CM_OK;
}

/* A free entry at the end of parts[]; NULL on OOM. */
static Part *add_part(ExSorter *s, CmErr *err)
{
    if (s->n_parts == s->cap_parts) {
        int cap = s->cap_parts ? 2 * s->cap_parts : 64;
        Part *parts = cm_realloc(s->parts, sizeof(Part) * (size_t)cap);
        if (parts == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory buffering sorted rows");
            return NULL;
        }
        s->parts = parts;
        s->cap_parts = cap;
    }
    Part *part = &s->parts[s->n_parts];
    memset(part, 0, sizeof *part);
    return part;
}

/* Keeps `in` in place instead of copying it, when it views a table's chunk
 * and the kept bytes stay within keep_cap (bytes: its row bytes, already
 * reserved).  The rows copied so far become a part of their own first, so
 * the order of parts is the input's.  False (nothing changed) when it is
 * not kept; CM_OOM in err. */
static bool keep_batch(ExSorter *s, const CmBatch *in, int64_t bytes, CmErr *err)
{
    if (in->keep.keeper == NULL || s->kept_bytes + bytes > s->keep_cap) {
        return false;
    }
    if (ex_result_n_rows(s->rows) > 0) {
        ExResult *fresh = ex_result_new(s->n_cols, s->types, err);
        Part *part = fresh != NULL ? add_part(s, err) : NULL;
        if (part == NULL) {
            ex_result_free(fresh);
            return false;
        }
        part->rows = s->rows;
        s->part_rows += ex_result_n_rows(s->rows);
        s->part_batches += ex_result_n_batches(s->rows);
        s->n_parts++;
        s->rows = fresh;
    }
    Part *part = add_part(s, err);
    CmVec *cols =
        part != NULL ? cm_calloc((size_t)(s->n_cols ? s->n_cols : 1), sizeof(CmVec)) : NULL;
    if (cols == NULL || !cm_batch_keep(in, &part->kept)) {
        cm_free(cols);
        if (part != NULL && cols == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory buffering sorted rows");
        }
        return false;
    }
    for (int c = 0; c < s->n_cols; c++) {
        cm_vec_reference(&cols[c], &in->cols[c]);
    }
    part->view.cols = cols;
    part->view.n_cols = s->n_cols;
    part->view.n_rows = in->n_rows;
    s->part_rows += in->n_rows;
    s->part_batches++;
    s->kept_bytes += bytes;
    s->n_parts++;
    return true;
}

/* Buffers the rows of `in`, whose `bytes` are reserved: kept in place or copied. */
static CmStatus buffer(ExSorter *s, const CmBatch *in, int64_t bytes, CmErr *err)
{
    if (keep_batch(s, in, bytes, err) || err->code != CM_OK) {
        return err->code;
    }
    return ex_result_append(s->rows, in, err);
}

/* Sorts the buffered rows, or the one batch `single` when not NULL, into
 * s->order (the first `limit` of them). */
static CmStatus sort_rows(ExSorter *s, const CmBatch *single, CmErr *err)
{
    int64_t n = single != NULL ? single->n_rows : n_buffered(s);
    int n_batches = single != NULL ? 1 : s->part_batches + ex_result_n_batches(s->rows);
    cm_free(s->order);
    cm_free(s->batches);
    s->order = cm_malloc(sizeof(ExRowRef) * (size_t)(n ? n : 1));
    s->batches = cm_malloc(sizeof(CmBatch *) * (size_t)(n_batches ? n_batches : 1));
    if (s->order == NULL || s->batches == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory sorting %lld rows", (long long)n);
    }
    if (single != NULL) {
        s->batches[0] = single;
    } else {
        list_batches(s);
    }
    int64_t at = 0;
    for (int b = 0; b < n_batches; b++) {
        const CmBatch *batch = s->batches[b];
        for (int r = 0; r < batch->n_rows; r++) {
            s->order[at].batch = (uint32_t)b;
            s->order[at].row = (uint32_t)r;
            at++;
        }
    }
    if (s->presorted) {
        s->n_order = s->limit >= 0 && s->limit < n ? s->limit : n;
        s->next = 0;
        return CM_OK;
    }
    SortCtx ctx = {.s = s, .batches = s->batches};
    int64_t keep = n;
    if (s->limit >= 0 && s->limit < n / 4) {
        keep = s->limit > 0 ? select_top(s->order, n, s->limit, &ctx) : 0;
    }
    /* Several threads sort through a second array of entries: only when it is granted. */
    int n_threads = 1;
    int64_t extra = keep * ex_sort_key_entry_bytes(s->types, s->keys, s->n_keys);
    if (ex_sort_key_parallel(keep, s->n_threads) && cm_mem_grow(&s->res, extra)) {
        n_threads = s->n_threads;
    }
    CmStatus st =
        ex_sort_refs(s->types, s->keys, s->n_keys, s->batches, s->order, keep, n_threads, err);
    if (n_threads > 1) {
        cm_mem_shrink(&s->res, extra);
    }
    if (st != CM_OK) {
        return st;
    }
    s->n_order = s->limit >= 0 && s->limit < keep ? s->limit : keep;
    s->next = 0;
    /* Many sorted rows on several threads: gathering them into batches (cache
     * misses over all the rows) is shared too. */
    if (s->pool == NULL && s->n_threads > 1 && s->n_order >= GATHER_MIN_ROWS) {
        s->pool = cm_pool_new(s->n_threads); /* NULL: gathered on this thread */
    }
    return CM_OK;
}

int64_t ex_sorter_row_bytes(const ExSorter *s, const CmBatch *b)
{
    int64_t bytes = (int64_t)b->n_rows * s->row_width;
    for (int c = 0; c < b->n_cols; c++) {
        if (b->cols[c].type.id != CM_T_VARCHAR) {
            continue;
        }
        const CmStr *v = b->cols[c].data;
        for (int i = 0; i < b->n_rows; i++) {
            uint32_t p = cm_batch_pos(b, i);
            if (!cm_vec_is_null(&b->cols[c], p) && v[p].len > CM_STR_INLINE) {
                bytes += v[p].len;
            }
        }
    }
    return bytes;
}

/* ---- gathering sorted rows into batches ------------------------------------------------ */

/* Copies v's out-of-line strings into out's heap, in order.  In sorted order
 * they are scattered over the sorter's heaps: here, in a tight loop, several
 * cache and TLB misses overlap, where the consumer (a COPY TO writer) would
 * wait for each in turn between its own work (TeraSort's job: 1.7 s of CPU
 * without the copy, 1.45 s with it). */
static CmStatus copy_strings(CmBatch *out, CmVec *v, int n, CmErr *err)
{
    CmStr *str = v->data;
    for (int i = 0; i < n && err->code == CM_OK; i++) {
        if (str[i].len > CM_STR_INLINE && !cm_vec_is_null(v, (uint32_t)i)) {
            str[i] = cm_str_copy(&out->heap, &str[i], err);
        }
    }
    return err->code;
}

/* Copies the value slot p of sv (w bytes wide) into slot `to` of dv.  Each width
 * is its own case so that the copy is inlined: a call to memcpy per 16-byte
 * string slot took an eighth of the CPU of TeraSort's sort. */
static inline void copy_slot(CmVec *dv, uint32_t to, const CmVec *sv, uint32_t p, size_t w)
{
    char *d = dv->data;
    const char *v = sv->data;
    switch (w) {
    case 1:
        d[to] = v[p];
        break;
    case 4:
        memcpy(d + 4 * (size_t)to, v + 4 * (size_t)p, 4);
        break;
    case 8:
        memcpy(d + 8 * (size_t)to, v + 8 * (size_t)p, 8);
        break;
    case 16:
        memcpy(d + 16 * (size_t)to, v + 16 * (size_t)p, 16);
        break;
    default:
        memcpy(d + w * to, v + w * p, w);
    }
}

/* Copies the values of rows refs[lo..hi) of the sorted batches into rows
 * [lo, hi) of out, a column at a time: a row at a time, the type dispatch per
 * value cost as much as the copy.  Long strings still point into the sorter's
 * heaps.  With lo and hi multiples of 64 (or hi = n), tasks on disjoint
 * ranges write disjoint words of out's bitmaps, which exist already then. */
static void gather_range(const ExSorter *s, const ExRowRef *refs, int lo, int hi, CmBatch *out)
{
    for (int c = 0; c < s->n_cols; c++) {
        CmVec *dv = &out->cols[c];
        size_t w = cm_type_width(dv->type);
        for (int i = lo; i < hi; i++) {
            const CmVec *sv = &s->batches[refs[i].batch]->cols[c];
            uint32_t p = sv->kind == CM_VEC_CONST ? 0 : refs[i].row;
            if (cm_vec_is_null(sv, p)) {
                cm_vec_set_null(dv, (uint32_t)i);
                continue;
            }
            copy_slot(dv, (uint32_t)i, sv, p, w);
        }
    }
}

/* Copies the rows refs[0..n) of the sorted batches into the empty batch out.
 * CM_OOM from the strings' heap. */
static CmStatus gather_rows(const ExSorter *s, const ExRowRef *refs, int n, CmBatch *out,
                            CmErr *err)
{
    gather_range(s, refs, 0, n, out);
    for (int c = 0; c < s->n_cols; c++) {
        CmVec *dv = &out->cols[c];
        if (dv->type.id == CM_T_VARCHAR && copy_strings(out, dv, n, err) != CM_OK) {
            return err->code;
        }
    }
    out->n_rows = n;
    return CM_OK;
}

/* ---- gathering on several threads ------------------------------------------- */

/* Rows of out per task, a multiple of 64 (a bitmap word). */
#define GATHER_SLICE_ROWS 256
#define GATHER_MAX_SLICES ((CM_BATCH_CAP + GATHER_SLICE_ROWS - 1) / GATHER_SLICE_ROWS)

/* One batch of output: each task gathers its slice of rows, counting the
 * bytes of its long strings; the strings of each slice are then copied into
 * a region of out's heap taken for it beforehand. */
typedef struct Gather {
    const ExSorter *s;
    const ExRowRef *refs;
    CmBatch *out;
    int n, n_slices;
    size_t str_bytes[GATHER_MAX_SLICES]; /* long strings' bytes of each slice */
    char *str_at[GATHER_MAX_SLICES];     /* their region in out's heap */
} Gather;

static void gather_values(void *arg, int idx, int worker_id)
{
    Gather *g = arg;
    int lo = idx * GATHER_SLICE_ROWS,
        hi = lo + GATHER_SLICE_ROWS < g->n ? lo + GATHER_SLICE_ROWS : g->n;
    gather_range(g->s, g->refs, lo, hi, g->out);
    size_t bytes = 0;
    for (int c = 0; c < g->s->n_cols; c++) {
        const CmVec *v = &g->out->cols[c];
        const CmStr *str = v->data;
        for (int i = lo; i < hi && v->type.id == CM_T_VARCHAR; i++) {
            if (str[i].len > CM_STR_INLINE && !cm_vec_is_null(v, (uint32_t)i)) {
                bytes += str[i].len;
            }
        }
    }
    g->str_bytes[idx] = bytes;
}

static void gather_strings(void *arg, int idx, int worker_id)
{
    Gather *g = arg;
    int lo = idx * GATHER_SLICE_ROWS,
        hi = lo + GATHER_SLICE_ROWS < g->n ? lo + GATHER_SLICE_ROWS : g->n;
    char *at = g->str_at[idx];
    for (int c = 0; c < g->s->n_cols; c++) {
        const CmVec *v = &g->out->cols[c];
        CmStr *str = v->data;
        for (int i = lo; i < hi && v->type.id == CM_T_VARCHAR; i++) {
            if (str[i].len > CM_STR_INLINE && !cm_vec_is_null(v, (uint32_t)i)) {
                memcpy(at, str[i].ptr, str[i].len);
                str[i] = cm_str_make(at, str[i].len);
                at += str[i].len;
            }
        }
    }
}

/* gather_rows on the sorter's pool. */
static CmStatus gather_rows_par(const ExSorter *s, const ExRowRef *refs, int n, CmBatch *out,
                                CmErr *err)
{
    Gather g = {.s = s, .refs = refs, .out = out, .n = n};
    g.n_slices = (n + GATHER_SLICE_ROWS - 1) / GATHER_SLICE_ROWS;
    for (int c = 0; c < s->n_cols; c++) { /* every bitmap exists: tasks only clear bits */
        cm_vec_set_null(&out->cols[c], 0);
        out->cols[c].validity[0] = ~(uint64_t)0;
    }
    cm_pool_run(s->pool, g.n_slices, gather_values, &g);
    bool has_strings = false;
    for (int i = 0; i < g.n_slices; i++) {
        has_strings |= g.str_bytes[i] > 0;
        g.str_at[i] = g.str_bytes[i] > 0 ? cm_arena_alloc(&out->heap, g.str_bytes[i]) : NULL;
        if (g.str_bytes[i] > 0 && g.str_at[i] == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory copying sorted strings");
        }
    }
    if (has_strings) {
        cm_pool_run(s->pool, g.n_slices, gather_strings, &g);
    }
    for (int c = 0; c < s->n_cols; c++) { /* no NULL set: no bitmap, as gather_rows leaves it */
        CmVec *v = &out->cols[c];
        bool is_all_valid = true;
        for (int w = 0; w < (n + 63) / 64; w++) {
            uint64_t mask = n - w * 64 >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << (n - w * 64)) - 1;
            is_all_valid &= (v->validity[w] & mask) == mask;
        }
        if (is_all_valid) {
            v->validity = NULL;
        }
    }
    out->n_rows = n;
    return CM_OK;
}

/* Copies the rows refs[0..n) of the sorted rows into the empty batch out: on
 * the sorter's pool when it has one and the batch is large enough. */
static CmStatus gather(const ExSorter *s, const ExRowRef *refs, int n, CmBatch *out, CmErr *err)
{
    return s->pool != NULL && n >= 2 * GATHER_SLICE_ROWS ? gather_rows_par(s, refs, n, out, err)
                                                         : gather_rows(s, refs, n, out, err);
}

/* ---- runs ------------------------------------------------------------------------------ */

/* A new empty run file at the end of s->runs (so ex_sorter_free closes it). */
static ShSpill *add_run(ExSorter *s, CmErr *err)
{
    if (s->n_runs == s->cap_runs) {
        int cap = s->cap_runs ? s->cap_runs * 2 : 16;
        ShSpill **runs = cm_realloc(s->runs, sizeof(ShSpill *) * (size_t)cap);
        if (runs != NULL) {
            s->runs = runs;
        }
        int64_t *bytes = cm_realloc(s->run_batch_bytes, sizeof(int64_t) * (size_t)cap);
        if (bytes != NULL) {
            s->run_batch_bytes = bytes;
        }
        if (runs == NULL || bytes == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory adding a sorted run");
            return NULL;
        }
        s->cap_runs = cap;
    }
    ShSpill *f = sh_spill_new(s->temp_dir, s->max_temp, err);
    if (f != NULL) {
        s->runs[s->n_runs] = f;
        s->run_batch_bytes[s->n_runs] = 0;
        s->n_runs++;
        s->n_runs_written++;
    }
    return f;
}

/* Appends s->scratch to run `idx` and empties it. */
static CmStatus write_scratch(ExSorter *s, int idx, CmErr *err)
{
    if (s->scratch.n_rows == 0) {
        return CM_OK;
    }
    int64_t bytes = ex_sorter_row_bytes(s, &s->scratch);
    if (bytes > s->run_batch_bytes[idx]) {
        s->run_batch_bytes[idx] = bytes;
    }
    CmStatus st = sh_spill_append(s->runs[idx], &s->scratch, err);
    cm_batch_reset(&s->scratch);
    return st;
}

/* Ends writing run `idx` and counts its file on the op. */
static CmStatus close_run(ExSorter *s, int idx, CmErr *err)
{
    if (write_scratch(s, idx, err) != CM_OK || sh_spill_rewind(s->runs[idx], err) != CM_OK) {
        return err->code;
    }
    ex_op_count_spill(s->op, sh_spill_bytes(s->runs[idx]));
    return CM_OK;
}

/* Sorts the buffered rows (or the batch `single`), writes them as a new run
 * and releases them. */
static CmStatus merge_pass(ExSorter *s, int fanin, CmErr *err);
static int grant_fanin(ExSorter *s, int want);

/* Past EX_SORTER_MAX_RUNS runs, one pass merges groups of neighbours (ties keep
 * input order: a group is a stretch of the input), so the open files stay
 * bounded however little memory the sorter gets. */
static CmStatus bound_runs(ExSorter *s, CmErr *err)
{
    if (s->n_runs < EX_SORTER_MAX_RUNS) {
        return CM_OK;
    }
    CmStatus rc = merge_pass(s, grant_fanin(s, EX_SORTER_MAX_FANIN), err);
    cm_mem_shrink(&s->res, s->res.held);
    return rc;
}

static CmStatus write_run(ExSorter *s, const CmBatch *single, CmErr *err)
{
    if (sort_rows(s, single, err) != CM_OK || add_run(s, err) == NULL) {
        return err->code;
    }
    int idx = s->n_runs - 1;
    for (int64_t i = 0; i < s->n_order; i += CM_BATCH_CAP) {
        int n = s->n_order - i < CM_BATCH_CAP ? (int)(s->n_order - i) : CM_BATCH_CAP;
        if (gather(s, &s->order[i], n, &s->scratch, err) != CM_OK ||
            write_scratch(s, idx, err) != CM_OK) {
            return err->code;
        }
    }
    if (close_run(s, idx, err) != CM_OK) {
        return err->code;
    }
    cm_free(s->order);
    cm_free(s->batches);
    s->order = NULL;
    s->batches = NULL;
    s->n_order = 0;
    if (single != NULL) {
        return bound_runs(s, err);
    }
    if (free_buffered(s, err) != CM_OK) {
        return err->code;
    }
    cm_mem_shrink(&s->res, s->res.held);
    return bound_runs(s, err);
}

/* ---- merging --------------------------------------------------------------------------- */

static bool in_less(const ExSorter *s, const Merge *m, int a, int b)
{
    const MergeIn *x = &m->ins[a], *y = &m->ins[b];
    int c = ex_sort_compare_rows(s->keys, s->n_keys, &x->batch, (uint32_t)x->pos, &y->batch,
                                 (uint32_t)y->pos);
    return c < 0 || (c == 0 && a < b);
}

static void heap_down(const ExSorter *s, Merge *m, int i)
{
    for (;;) {
        int small = i, l = 2 * i + 1, r = l + 1;
        if (l < m->n_heap && in_less(s, m, m->heap[l], m->heap[small])) {
            small = l;
        }
        if (r < m->n_heap && in_less(s, m, m->heap[r], m->heap[small])) {
            small = r;
        }
        if (small == i) {
            return;
        }
        int t = m->heap[i];
        m->heap[i] = m->heap[small];
        m->heap[small] = t;
        i = small;
    }
}

/* Reads the next non-empty batch of input i; *eof when the run is done. */
static CmStatus in_read(MergeIn *in, bool *eof, CmErr *err)
{
    in->pos = 0;
    do {
        if (sh_spill_read(in->file, &in->batch, eof, err) != CM_OK) {
            return err->code;
        }
    } while (!*eof && in->batch.n_rows == 0);
    return CM_OK;
}

static void merge_close(Merge *m)
{
    for (int i = 0; i < m->n_ins; i++) {
        if (m->ins[i].has_batch) {
            cm_batch_fini(&m->ins[i].batch);
        }
    }
    cm_free(m->ins);
    cm_free(m->heap);
    cm_free(m->pend_in);
    cm_free(m->pend_pos);
    memset(m, 0, sizeof *m);
}

/* Opens a merge of runs[0..n) (all non-NULL): reads each one's first batch. */
static CmStatus merge_open(ExSorter *s, Merge *m, ShSpill **runs, int n, CmErr *err)
{
    memset(m, 0, sizeof *m);
    m->ins = cm_calloc((size_t)n, sizeof *m->ins);
    m->heap = cm_malloc(sizeof(int) * (size_t)n);
    m->pend_in = cm_malloc(CM_BATCH_CAP);
    m->pend_pos = cm_malloc(sizeof(uint32_t) * CM_BATCH_CAP);
    if (m->ins == NULL || m->heap == NULL || m->pend_in == NULL || m->pend_pos == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory merging sorted runs");
    }
    m->n_ins = n;
    for (int i = 0; i < n; i++) {
        MergeIn *in = &m->ins[i];
        in->file = runs[i];
        if (cm_batch_init(&in->batch, s->n_cols, s->types, err) != CM_OK) {
            return err->code;
        }
        in->has_batch = true;
        bool eof = false;
        if (in_read(in, &eof, err) != CM_OK) {
            return err->code;
        }
        if (!eof) {
            m->heap[m->n_heap++] = i;
        }
    }
    for (int i = m->n_heap / 2 - 1; i >= 0; i--) {
        heap_down(s, m, i);
    }
    return CM_OK;
}

/* Copies the pending rows to the end of out, a column at a time, and the long
 * strings among them into one region of out's heap: a row at a time, the type
 * dispatch per value and an arena call per string cost more than the copy. */
static CmStatus merge_emit(const ExSorter *s, Merge *m, CmBatch *out, CmErr *err)
{
    int n = m->n_pend;
    uint32_t at = (uint32_t)out->n_rows;
    for (int c = 0; c < s->n_cols && n > 0; c++) {
        CmVec *dv = &out->cols[c];
        size_t w = cm_type_width(dv->type);
        size_t str_bytes = 0;
        for (int i = 0; i < n; i++) {
            const CmVec *sv = &m->ins[m->pend_in[i]].batch.cols[c];
            uint32_t p = sv->kind == CM_VEC_CONST ? 0 : m->pend_pos[i], to = at + (uint32_t)i;
            if (cm_vec_is_null(sv, p)) {
                cm_vec_set_null(dv, to);
                continue;
            }
            if (dv->validity != NULL) {
                cm_vec_set_valid(dv, to);
            }
            copy_slot(dv, to, sv, p, w);
            if (dv->type.id == CM_T_VARCHAR && ((const CmStr *)sv->data)[p].len > CM_STR_INLINE) {
                str_bytes += ((const CmStr *)sv->data)[p].len;
            } else if (dv->type.id == CM_T_LIST) {
                CmList *l = &((CmList *)dv->data)[to];
                *l = cm_list_copy(&out->heap, l, cm_type_elem(dv->type), err);
            }
        }
        if (str_bytes == 0) {
            continue;
        }
        char *dst = cm_arena_alloc(&out->heap, str_bytes);
        if (dst == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory merging sorted runs");
        }
        CmStr *str = (CmStr *)dv->data + at;
        for (int i = 0; i < n; i++) {
            if (str[i].len > CM_STR_INLINE && !cm_vec_is_null(dv, at + (uint32_t)i)) {
                memcpy(dst, str[i].ptr, str[i].len);
                str[i] = cm_str_make(dst, str[i].len);
                dst += str[i].len;
            }
        }
    }
    out->n_rows += n;
    m->n_pend = 0;
    return err->code;
}

/* Appends the next rows of the merge to out, up to a full batch or max_rows. */
static CmStatus merge_fill(ExSorter *s, Merge *m, CmBatch *out, int64_t max_rows, CmErr *err)
{
    while (m->n_heap > 0 && out->n_rows + m->n_pend < CM_BATCH_CAP && max_rows > 0) {
        int top = m->heap[0];
        MergeIn *in = &m->ins[top];
        m->pend_in[m->n_pend] = (uint8_t)top;
        m->pend_pos[m->n_pend++] = (uint32_t)in->pos;
        max_rows--;
        if (++in->pos == in->batch.n_rows) {
            bool eof = false;
            /* the pending rows may be in the batch the read replaces */
            if (merge_emit(s, m, out, err) != CM_OK || in_read(in, &eof, err) != CM_OK) {
                return err->code;
            }
            if (eof) {
                m->heap[0] = m->heap[--m->n_heap];
            }
        }
        heap_down(s, m, 0);
    }
    return merge_emit(s, m, out, err);
}

/* Reserves one input batch per run for up to `want` runs: how many the
 * manager grants, but at least 2.  Like any operator's working batches, the
 * two batches of the smallest merge are outside the limit: refusing them
 * could only fail the query while the sort holds nothing else. */
static int grant_fanin(ExSorter *s, int want)
{
    int64_t unit = 1;
    for (int i = 0; i < s->n_runs; i++) {
        if (s->runs[i] != NULL && s->run_batch_bytes[i] > unit) {
            unit = s->run_batch_bytes[i];
        }
    }
    if (want > EX_SORTER_MAX_FANIN) {
        want = EX_SORTER_MAX_FANIN;
    }
    /* A quarter of the limit at most: the merge runs while other operators
     * (a window's partitions, the sort after it) still need room. */
    int64_t cap = cm_mem_limit() / 4 / unit;
    if (want > cap) {
        want = (int)cap;
    }
    int n = 0;
    while (n < want && cm_mem_grow(&s->res, unit)) {
        n++;
    }
    return n < 2 ? 2 : n;
}

/* One pass: merges groups of `fanin` neighbouring runs into one run each. */
static CmStatus merge_pass(ExSorter *s, int fanin, CmErr *err)
{
    int n_old = s->n_runs, n_new = 0;
    Merge m = {0};
    for (int first = 0; first < n_old; first += fanin) {
        int n = n_old - first < fanin ? n_old - first : fanin;
        /* A new run lands at the end; it moves to slot n_new once its group is freed
         * (n_new <= first, so that slot is free or part of the group). */
        if (merge_open(s, &m, &s->runs[first], n, err) != CM_OK || add_run(s, err) == NULL) {
            goto done;
        }
        int idx = s->n_runs - 1;
        while (m.n_heap > 0) {
            if (merge_fill(s, &m, &s->scratch, s->limit >= 0 ? s->limit : INT64_MAX, err) !=
                CM_OK) {
                goto done;
            }
            if (s->scratch.n_rows == CM_BATCH_CAP && write_scratch(s, idx, err) != CM_OK) {
                goto done;
            }
            if (s->limit >= 0 && sh_spill_rows(s->runs[idx]) + s->scratch.n_rows >= s->limit) {
                break; /* no later row of this group can be among the first `limit` */
            }
        }
        if (close_run(s, idx, err) != CM_OK) {
            goto done;
        }
        merge_close(&m);
        for (int i = first; i < first + n; i++) {
            sh_spill_free(s->runs[i]);
            s->runs[i] = NULL;
        }
        s->runs[n_new] = s->runs[idx];
        s->run_batch_bytes[n_new] = s->run_batch_bytes[idx];
        s->runs[idx] = NULL;
        s->n_runs--;
        n_new++;
    }
    s->n_runs = n_new;
done:
    merge_close(&m);
    return err->code;
}

/* Merges passes until one merge of all runs fits, and opens it. */
static CmStatus prepare_merge(ExSorter *s, CmErr *err)
{
    for (;;) {
        int fanin = grant_fanin(s, s->n_runs);
        if (fanin >= s->n_runs) {
            break;
        }
        if (merge_pass(s, fanin, err) != CM_OK) {
            return err->code;
        }
        cm_mem_shrink(&s->res, s->res.held);
    }
    s->is_merging = true;
    return merge_open(s, &s->merge, s->runs, s->n_runs, err);
}

/* ---- the sorter ----------------------------------------------------------------------- */

ExSorter *ex_sorter_new(ExOp *op, ExQuery *q, const char *what, int n_cols, const CmType *types,
                        int n_keys, const ExSortKey *keys, int64_t limit, CmErr *err)
{
    ExSorter *s = cm_calloc(1, sizeof *s);
    if (s == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory creating a sort");
        return NULL;
    }
    ex_op_res_init(op, &s->res, what);
    s->op = op;
    CmConfig defaults;
    const CmConfig *cfg = q != NULL ? &q->config : NULL;
    if (q == NULL) { /* an op driven alone (unit tests): the default settings */
        cm_config_init(&defaults);
        cfg = &defaults;
    }
    snprintf(s->temp_dir, sizeof s->temp_dir, "%s", cfg->temp_directory);
    s->max_temp = cfg->max_temp_directory_size;
    s->n_cols = n_cols;
    s->n_keys = n_keys;
    s->limit = limit;
    s->n_threads = 1;
    s->types = cm_malloc(sizeof(CmType) * (size_t)(n_cols ? n_cols : 1));
    s->keys = cm_malloc(sizeof(ExSortKey) * (size_t)(n_keys ? n_keys : 1));
    if (s->types == NULL || s->keys == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory creating a sort");
        ex_sorter_free(s);
        return NULL;
    }
    memcpy(s->types, types, sizeof(CmType) * (size_t)n_cols);
    if (n_keys > 0) {
        memcpy(s->keys, keys, sizeof(ExSortKey) * (size_t)n_keys);
    }
    s->row_width = (int64_t)sizeof(ExRowRef) + ex_sort_key_entry_bytes(types, keys, n_keys);
    for (int c = 0; c < n_cols; c++) {
        s->row_width += (int64_t)cm_type_width(types[c]);
    }
    /* Batches kept in place pin their chunks: no more than a scan ring's
     * share of storage (st_table_scans_cold), so that pinned chunks never
     * crowd out what storage must load.  Past it rows are copied. */
    CmMemStats ms;
    cm_mem_stats(&ms);
    s->keep_cap = ms.storage_share / 4;
    s->rows = ex_result_new(n_cols, types, err);
    if (s->rows == NULL || cm_batch_init(&s->scratch, n_cols, types, err) != CM_OK ||
        cm_batch_init(&s->single, n_cols, types, err) != CM_OK) {
        ex_sorter_free(s);
        return NULL;
    }
    return s;
}

void ex_sorter_set_threads(ExSorter *s, int n_threads)
{
    s->n_threads = n_threads > 1 ? n_threads : 1;
}

void ex_sorter_free(ExSorter *s)
{
    if (s == NULL) {
        return;
    }
    cm_pool_free(s->pool);
    merge_close(&s->merge);
    for (int i = 0; i < s->n_runs; i++) {
        sh_spill_free(s->runs[i]);
    }
    cm_free(s->runs);
    cm_free(s->run_batch_bytes);
    drop_parts(s);
    cm_free(s->parts);
    ex_result_free(s->rows);
    cm_free(s->batches);
    cm_free(s->order);
    if (s->scratch.cols != NULL) {
        cm_batch_fini(&s->scratch);
    }
    if (s->single.cols != NULL) {
        cm_batch_fini(&s->single);
    }
    cm_free(s->types);
    cm_free(s->keys);
    cm_mem_res_fini(&s->res);
    cm_free(s);
}

CmStatus ex_sorter_add(ExSorter *s, const CmBatch *in, CmErr *err)
{
    if (in->n_rows == 0) {
        return CM_OK;
    }
    int64_t bytes = ex_sorter_row_bytes(s, in);
    if (cm_mem_grow(&s->res, bytes)) {
        return buffer(s, in, bytes, err);
    }
    if (n_buffered(s) > 0 && write_run(s, NULL, err) != CM_OK) {
        return err->code;
    }
    if (cm_mem_grow(&s->res, bytes)) {
        return buffer(s, in, bytes, err);
    }
    /* Not even this batch is granted: it becomes a run of its own, sorted in a
     * compacted copy (a batch, like any operator's, is outside the limit). */
    cm_batch_reset(&s->single);
    uint32_t pos[CM_BATCH_CAP];
    for (int i = 0; i < in->n_rows; i++) {
        pos[i] = cm_batch_pos(in, i);
    }
    if (cm_batch_append_rows(&s->single, in, pos, in->n_rows, false, err) != CM_OK) {
        return err->code;
    }
    return write_run(s, &s->single, err);
}

void ex_sorter_set_presorted(ExSorter *s)
{
    s->presorted = true;
}

CmStatus ex_sorter_finish(ExSorter *s, CmErr *err)
{
    s->is_finished = true;
    if (s->n_runs == 0) {
        return sort_rows(s, NULL, err);
    }
    if (n_buffered(s) > 0 && write_run(s, NULL, err) != CM_OK) {
        return err->code;
    }
    return prepare_merge(s, err);
}

CmStatus ex_sorter_next(ExSorter *s, CmBatch *out, bool *has_more, CmErr *err)
{
    cm_batch_reset(out);
    *has_more = false;
    if (s->is_merging) {
        int64_t left = s->limit >= 0 ? s->limit - s->n_emitted : INT64_MAX;
        if (merge_fill(s, &s->merge, out, left, err) != CM_OK) {
            return err->code;
        }
        s->n_emitted += out->n_rows;
        *has_more = s->merge.n_heap > 0 && (s->limit < 0 || s->n_emitted < s->limit);
        return CM_OK;
    }
    int n = s->n_order - s->next < CM_BATCH_CAP ? (int)(s->n_order - s->next) : CM_BATCH_CAP;
    if (gather(s, &s->order[s->next], n, out, err) != CM_OK) {
        return err->code;
    }
    s->next += n;
    *has_more = s->next < s->n_order;
    return CM_OK;
}

bool ex_sorter_in_memory(const ExSorter *s, const CmBatch *const **batches, const ExRowRef **order,
                         int64_t *n)
{
    if (s->is_merging) {
        return false;
    }
    *batches = s->batches;
    *order = s->order;
    *n = s->n_order;
    return true;
}

int ex_sorter_n_runs(const ExSorter *s)
{
    return s->n_runs_written;
}
