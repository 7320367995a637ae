/*
 * result.c - materialized results: a growing list of full batches.  In block
 * mode each batch is the batch of a block of the tiered store: written while
 * unsealed (the creator's pin), sealed and let go of once full, pinned again
 * to be read.
 */
#include "executor/result.h"

#include <string.h>

#include "common/alloc.h"
#include "storage/blocks.h"

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
    bool is_stream_waiting; /* see ex_result_set_stream_waiting */
    /* block mode (ex_result_set_blocks): blocks[i] holds batch i; batches[i]
     * is its batch while unsealed, NULL once sealed; counts[i] its rows */
    StBlock **blocks;    /* owned; NULL: not in block mode */
    int32_t *counts;     /* owned */
    CmMemRes *block_res; /* where blocks are reserved: &own_res or a borrowed one */
    CmMemRes own_res;
    bool owns_res;
    int pinned; /* the sealed block pinned for ex_result_row_batch, or -1 */
    const CmBatch *pinned_batch;
    CmErr read_err; /* the first failure to load a block back */
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
    r->pinned = -1;
    cm_err_init(&r->read_err);
    return r;
}

CmStatus ex_result_set_blocks(ExResult *r, CmMemRes *res, CmErr *err)
{
    r->blocks = cm_calloc((size_t)(r->cap_batches > 0 ? r->cap_batches : 1), sizeof(StBlock *));
    r->counts = cm_calloc((size_t)(r->cap_batches > 0 ? r->cap_batches : 1), sizeof(int32_t));
    if (r->blocks == NULL || r->counts == NULL) {
        cm_free(r->blocks);
        cm_free(r->counts);
        r->blocks = NULL;
        r->counts = NULL;
        return cm_err_set(err, CM_OOM, -1, "out of memory creating a result");
    }
    if (res == NULL) {
        cm_mem_res_init(&r->own_res, CM_MEM_STORAGE, "query result", NULL);
        r->owns_res = true;
        res = &r->own_res;
    }
    r->block_res = res;
    return CM_OK;
}

CmMemRes *ex_result_block_res(const ExResult *r)
{
    return r->blocks != NULL ? r->block_res : NULL;
}

const CmErr *ex_result_read_err(const ExResult *r)
{
    return &r->read_err;
}

static int32_t batch_rows(const ExResult *r, int i)
{
    return r->blocks != NULL ? r->counts[i] : r->batches[i]->n_rows;
}

/* Block mode: seals block i, which its writer is done with, and lets go of
 * the creator's pin, so that it can be evicted. */
static CmStatus seal_block(ExResult *r, int i, CmErr *err)
{
    if (r->batches[i] == NULL) {
        return CM_OK;
    }
    r->batches[i]->n_rows = r->counts[i];
    if (st_block_seal(r->blocks[i], err) != CM_OK) {
        return err->code;
    }
    st_block_unpin(r->blocks[i]);
    r->batches[i] = NULL;
    return CM_OK;
}

void ex_result_free(ExResult *r)
{
    if (r == NULL) {
        return;
    }
    for (int i = 0; i < r->n_batches; i++) {
        if (r->blocks != NULL) {
            st_block_free(r->blocks[i]); /* the creator's or the reader's pin goes with it */
        } else {
            cm_batch_fini(r->batches[i]);
            cm_free(r->batches[i]);
        }
    }
    cm_free(r->batches);
    cm_free(r->blocks);
    cm_free(r->counts);
    if (r->owns_res) {
        cm_mem_res_fini(&r->own_res);
    }
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

void ex_result_set_stream_waiting(ExResult *r)
{
    r->is_stream_waiting = true;
}

bool ex_result_stream_waiting(const ExResult *r)
{
    return r->is_stream_waiting;
}

/* Room for `cap` batches (and their blocks and counts in block mode). */
static CmStatus reserve_batches(ExResult *r, int cap, CmErr *err)
{
    if (cap <= r->cap_batches) {
        return CM_OK;
    }
    CmBatch **grown = cm_realloc(r->batches, sizeof(CmBatch *) * (size_t)cap);
    if (grown == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory growing a result");
    }
    r->batches = grown;
    if (r->blocks != NULL) {
        StBlock **blocks = cm_realloc(r->blocks, sizeof(StBlock *) * (size_t)cap);
        if (blocks != NULL) {
            r->blocks = blocks;
        }
        int32_t *counts = blocks ? cm_realloc(r->counts, sizeof(int32_t) * (size_t)cap) : NULL;
        if (counts == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory growing a result");
        }
        r->counts = counts;
    }
    r->cap_batches = cap;
    return CM_OK;
}

/* Block mode: a new unsealed block at the end, its batch the tail. */
static CmBatch *tail_block(ExResult *r, CmErr *err)
{
    StBlock *blk =
        st_block_new(ST_BLOCK_MEMORY_AND_DISK, r->n_cols, r->types, r->block_res, NULL, NULL, err);
    if (blk == NULL) {
        return NULL;
    }
    r->blocks[r->n_batches] = blk;
    r->counts[r->n_batches] = 0;
    r->batches[r->n_batches] = st_block_batch(blk);
    return r->batches[r->n_batches++];
}

static CmBatch *tail(ExResult *r, CmErr *err)
{
    if (r->n_batches > 0 && batch_rows(r, r->n_batches - 1) < CM_BATCH_CAP) {
        if (r->batches[r->n_batches - 1] != NULL) {
            return r->batches[r->n_batches - 1];
        }
        r->ragged = true; /* a sealed partial block (after a move) stays partial */
    }
    if (r->n_batches == r->cap_batches &&
        reserve_batches(r, r->cap_batches ? r->cap_batches * 2 : 8, err) != CM_OK) {
        return NULL;
    }
    if (r->blocks != NULL) {
        return tail_block(r, err);
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
        if (r->blocks != NULL) {
            int last = r->n_batches - 1;
            r->counts[last] += n;
            if ((t->heap.n_bytes > heap && st_block_charge(r->blocks[last], err) != CM_OK) ||
                (r->counts[last] == CM_BATCH_CAP && seal_block(r, last, err) != CM_OK)) {
                return err->code;
            }
        }
    }
    return CM_OK;
}

void ex_result_set_mem(ExResult *r, CmMemRes *mem)
{
    r->mem = mem;
}

CmStatus ex_result_move(ExResult *dst, ExResult *src, CmErr *err)
{
    if ((dst->blocks == NULL) != (src->blocks == NULL) ||
        (dst->blocks != NULL && dst->block_res != src->block_res)) {
        return cm_err_set(err, CM_INTERNAL, -1, "results of different kinds moved together");
    }
    int need = dst->n_batches + src->n_batches;
    if (need > dst->cap_batches && reserve_batches(dst, need * 2 + 8, err) != CM_OK) {
        return err->code;
    }
    if (src->n_batches > 0 && dst->n_batches > 0 &&
        batch_rows(dst, dst->n_batches - 1) < CM_BATCH_CAP) {
        dst->ragged = true;
    }
    if (src->ragged || (src->n_batches > 1 && src->n_rows % CM_BATCH_CAP != 0)) {
        dst->ragged = true;
    }
    if (dst->blocks != NULL && src->n_batches > 0) {
        /* Neither is written again at its end: both partial tails can go. */
        if ((dst->n_batches > 0 && seal_block(dst, dst->n_batches - 1, err) != CM_OK) ||
            seal_block(src, src->n_batches - 1, err) != CM_OK) {
            return err->code;
        }
        memcpy(dst->blocks + dst->n_batches, src->blocks,
               sizeof(StBlock *) * (size_t)src->n_batches);
        memcpy(dst->counts + dst->n_batches, src->counts, sizeof(int32_t) * (size_t)src->n_batches);
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

/* Block mode: the batch of block i, pinned for reading until another block
 * is asked for (one pin per result); NULL with read_err on a load failure. */
static const CmBatch *pin_for_read(ExResult *r, int i)
{
    if (r->batches[i] != NULL) {
        return r->batches[i]; /* unsealed: still its writer's */
    }
    if (r->pinned == i) {
        return r->pinned_batch;
    }
    if (r->pinned >= 0) {
        st_block_unpin(r->blocks[r->pinned]);
        r->pinned = -1;
    }
    CmErr e;
    cm_err_init(&e);
    r->pinned_batch = st_block_pin(r->blocks[i], NULL, &e);
    if (r->pinned_batch == NULL) {
        if (r->read_err.code == CM_OK) {
            cm_err_copy(&r->read_err, &e);
        }
        return NULL;
    }
    r->pinned = i;
    return r->pinned_batch;
}

const CmBatch *ex_result_row_batch(ExResult *r, int64_t row, uint32_t *pos)
{
    if (!r->ragged) {
        *pos = (uint32_t)(row % CM_BATCH_CAP);
        int i = (int)(row / CM_BATCH_CAP);
        return r->blocks != NULL ? pin_for_read(r, i) : r->batches[i];
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
            at += batch_rows(r, i);
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
    return r->blocks != NULL ? pin_for_read(r, lo) : r->batches[lo];
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
    CM_ASSERT(r->blocks == NULL);
    return r->batches[i];
}

const CmBatch *ex_result_pin(ExResult *r, int i, CmErr *err)
{
    if (r->blocks == NULL || r->batches[i] != NULL) {
        return r->batches[i];
    }
    return st_block_pin(r->blocks[i], NULL, err);
}

void ex_result_unpin(ExResult *r, int i)
{
    if (r->blocks != NULL && r->batches[i] == NULL) {
        st_block_unpin(r->blocks[i]);
    }
}
