/*
 * result.c - materialized results: a growing list of full batches.
 */
#include "executor/result.h"

#include <string.h>

#include "common/alloc.h"

struct ExResult {
    int n_cols;
    CmType *types; /* owned */
    int n_batches, cap_batches;
    CmBatch **batches; /* owned; appends fill the last one */
    int64_t n_rows;
    CmMemRes *mem;   /* where new batches and strings are reserved; borrowed, may be NULL */
    bool ragged;     /* a batch before the last is not full (after ex_result_move) */
    int64_t *starts; /* ragged: first row of each batch, n_starts of them; owned */
    int n_starts;
    ExResultStreamFn stream; /* see ex_result_set_stream; NULL: rows are kept */
    void *stream_ctx;
};

ExResult *ex_result_new(int n_cols, const CmType *types, CmErr *err)
{
    ExResult *r = cm_calloc(1, sizeof *r);
    if (r != NULL) {
        r->types = cm_malloc(sizeof(CmType) * (size_t)(n_cols ? n_cols : 1));
    }
    if (r == NULL || r->types == NULL) {
        cm_free(r);
        cm_err_set(err, CM_OOM, -1, "out of memory creating a result");
        return NULL;
    }
    r->n_cols = n_cols;
    memcpy(r->types, types, sizeof(CmType) * (size_t)n_cols);
    return r;
}

void ex_result_free(ExResult *r)
{
    if (r == NULL) {
        return;
    }
    for (int i = 0; i < r->n_batches; i++) {
        cm_batch_fini(r->batches[i]);
        cm_free(r->batches[i]);
    }
    cm_free(r->batches);
    cm_free(r->types);
    cm_free(r->starts);
    cm_free(r);
}

void ex_result_set_stream(ExResult *r, ExResultStreamFn fn, void *ctx)
{
    r->stream = fn;
    r->stream_ctx = ctx;
}

ExResultStreamFn ex_result_stream(const ExResult *r, void **ctx)
{
    *ctx = r->stream_ctx;
    return r->stream;
}

static CmBatch *tail(ExResult *r, CmErr *err)
{
    if (r->n_batches > 0 && r->batches[r->n_batches - 1]->n_rows < CM_BATCH_CAP) {
        return r->batches[r->n_batches - 1];
    }
    if (r->n_batches == r->cap_batches) {
        int cap = r->cap_batches ? r->cap_batches * 2 : 8;
        CmBatch **grown = cm_realloc(r->batches, sizeof(CmBatch *) * (size_t)cap);
        if (grown == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory growing a result");
            return NULL;
        }
        r->batches = grown;
        r->cap_batches = cap;
    }
    if (r->mem != NULL) {
        int64_t bytes = 0;
        for (int c = 0; c < r->n_cols; c++) {
            bytes += (int64_t)cm_type_width(r->types[c]) * CM_BATCH_CAP + 8 * CM_VALIDITY_WORDS;
        }
        (void)cm_mem_grow(r->mem, bytes); /* counted while memory allows: see result.h */
    }
    CmBatch *b = cm_malloc(sizeof *b);
    if (b == NULL || cm_batch_init(b, r->n_cols, r->types, err) != CM_OK) {
        cm_free(b);
        cm_err_set(err, CM_OOM, -1, "out of memory growing a result");
        return NULL;
    }
    r->batches[r->n_batches++] = b;
    return b;
}

CmStatus ex_result_append(ExResult *r, const CmBatch *b, CmErr *err)
{
    uint32_t pos[CM_BATCH_CAP];
    for (int i = 0; i < b->n_rows;) {
        CmBatch *t = tail(r, err);
        if (t == NULL) {
            return err->code;
        }
        int n = CM_BATCH_CAP - t->n_rows;
        n = n < b->n_rows - i ? n : b->n_rows - i;
        for (int k = 0; k < n; k++) {
            pos[k] = cm_batch_pos(b, i + k);
        }
        size_t heap = t->heap.n_bytes;
        if (cm_batch_append_rows(t, b, pos, n, true, err) != CM_OK) {
            return err->code;
        }
        if (r->mem != NULL && t->heap.n_bytes > heap) {
            (void)cm_mem_grow(r->mem, (int64_t)(t->heap.n_bytes - heap));
        }
        r->n_rows += n;
        i += n;
    }
    return CM_OK;
}

void ex_result_set_mem(ExResult *r, CmMemRes *mem)
{
    r->mem = mem;
}

CmStatus ex_result_move(ExResult *dst, ExResult *src, CmErr *err)
{
    if (dst->n_batches + src->n_batches > dst->cap_batches) {
        int cap = (dst->n_batches + src->n_batches) * 2 + 8;
        CmBatch **grown = cm_realloc(dst->batches, sizeof(CmBatch *) * (size_t)cap);
        if (grown == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory growing a result");
        }
        dst->batches = grown;
        dst->cap_batches = cap;
    }
    if (src->n_batches > 0 && dst->n_batches > 0 &&
        dst->batches[dst->n_batches - 1]->n_rows < CM_BATCH_CAP) {
        dst->ragged = true;
    }
    if (src->ragged || (src->n_batches > 1 && src->n_rows % CM_BATCH_CAP != 0)) {
        dst->ragged = true;
    }
    if (src->n_batches > 0) {
        memcpy(dst->batches + dst->n_batches, src->batches,
               sizeof(CmBatch *) * (size_t)src->n_batches);
    }
    dst->n_batches += src->n_batches;
    dst->n_rows += src->n_rows;
    src->n_batches = 0;
    src->n_rows = 0;
    return CM_OK;
}

const CmBatch *ex_result_row_batch(ExResult *r, int64_t row, uint32_t *pos)
{
    if (!r->ragged) {
        *pos = (uint32_t)(row % CM_BATCH_CAP);
        return r->batches[row / CM_BATCH_CAP];
    }
    if (r->n_starts != r->n_batches) {
        int64_t *st = cm_realloc(r->starts, sizeof(int64_t) * (size_t)(r->n_batches + 1));
        if (st == NULL) {
            return NULL;
        }
        r->starts = st;
        int64_t at = 0;
        for (int i = 0; i < r->n_batches; i++) {
            st[i] = at;
            at += r->batches[i]->n_rows;
        }
        r->n_starts = r->n_batches;
    }
    int lo = 0, hi = r->n_batches - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (r->starts[mid] <= row) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    *pos = (uint32_t)(row - r->starts[lo]);
    return r->batches[lo];
}

int ex_result_n_cols(const ExResult *r)
{
    return r->n_cols;
}
CmType ex_result_type(const ExResult *r, int col)
{
    return r->types[col];
}
int64_t ex_result_n_rows(const ExResult *r)
{
    return r->n_rows;
}
int ex_result_n_batches(const ExResult *r)
{
    return r->n_batches;
}
const CmBatch *ex_result_batch(const ExResult *r, int i)
{
    return r->batches[i];
}
