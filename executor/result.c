/*
 * result.c - materialized results: a growing list of full batches.
 */
#include "executor/result.h"

#include <string.h>

#include "common/alloc.h"

struct ExResult {
    int n_cols;
    CmType *types;      /* owned */
    int n_batches, cap_batches;
    CmBatch **batches;  /* owned; all but the last are full */
    int64_t n_rows;
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
    cm_free(r);
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
        if (cm_batch_append_rows(t, b, pos, n, true, err) != CM_OK) {
            return err->code;
        }
        r->n_rows += n;
        i += n;
    }
    return CM_OK;
}

int ex_result_n_cols(const ExResult *r) { return r->n_cols; }
CmType ex_result_type(const ExResult *r, int col) { return r->types[col]; }
int64_t ex_result_n_rows(const ExResult *r) { return r->n_rows; }
int ex_result_n_batches(const ExResult *r) { return r->n_batches; }
const CmBatch *ex_result_batch(const ExResult *r, int i) { return r->batches[i]; }
