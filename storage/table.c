/*
 * table.c - chunked columnar storage in memory.
 *
 * Invariant: every chunk but the last is full (CM_BATCH_CAP rows), so row r is
 * in chunk r / CM_BATCH_CAP; truncation relies on it.
 */
#include "storage/table.h"

#include <string.h>

#include "common/alloc.h"
#include "storage/index.h"

static void chunk_free(StChunk *c, int n_cols)
{
    if (c == NULL) {
        return;
    }
    for (int i = 0; i < n_cols; i++) {
        cm_free(c->data ? c->data[i] : NULL);
        cm_free(c->validity ? c->validity[i] : NULL);
    }
    cm_free(c->data);
    cm_free(c->validity);
    cm_free(c);
}

/* Moves a column's string default into the table's own arena; false on OOM. */
static bool own_default(StTable *t, StColumn *c)
{
    CmStr *s = &c->default_value.s;
    if (!c->has_default || c->default_value.is_null || c->type.id != CM_T_VARCHAR ||
        s->len <= CM_STR_INLINE) {
        return true;
    }
    char *p = cm_arena_alloc(&t->strings, s->len);
    if (p == NULL) {
        return false;
    }
    memcpy(p, s->ptr, s->len);
    *s = cm_str_make(p, s->len);
    return true;
}

StTable *st_table_new(const char *name, int n_cols, const StColumn *cols, CmErr *err)
{
    StTable *t = cm_calloc(1, sizeof *t);
    if (t == NULL) {
        goto oom;
    }
    cm_arena_init(&t->strings, 256 * 1024);
    cm_mem_res_init(&t->mem, CM_MEM_STORAGE, "table storage", NULL);
    t->name = cm_strdup(name);
    t->cols = cm_calloc((size_t)n_cols, sizeof(StColumn));
    if (t->name == NULL || t->cols == NULL) {
        goto oom;
    }
    t->n_cols = n_cols;
    for (int i = 0; i < n_cols; i++) {
        t->cols[i] = cols[i];
        t->cols[i].name = cm_strdup(cols[i].name);
        if (t->cols[i].name == NULL || !own_default(t, &t->cols[i])) {
            goto oom;
        }
    }
    return t;
oom:
    st_table_free(t);
    cm_err_set(err, CM_OOM, -1, "out of memory creating table '%s'", name);
    return NULL;
}

void st_table_free(StTable *t)
{
    if (t == NULL) {
        return;
    }
    for (int i = 0; i < t->n_chunks; i++) {
        chunk_free(t->chunks[i], t->n_cols);
    }
    cm_free(t->chunks);
    for (int i = 0; i < t->n_indexes; i++) {
        st_index_free(t->indexes[i]);
    }
    cm_free(t->indexes);
    for (int i = 0; t->cols != NULL && i < t->n_cols; i++) {
        cm_free(t->cols[i].name);
    }
    cm_free(t->cols);
    cm_free(t->name);
    cm_arena_fini(&t->strings);
    cm_mem_res_fini(&t->mem);
    cm_free(t);
}

StTable *st_table_new_like(const StTable *t, CmErr *err)
{
    StTable *n = st_table_new(t->name, t->n_cols, t->cols, err);
    for (int i = 0; n != NULL && i < t->n_indexes; i++) {
        const StIndex *ix = t->indexes[i];
        if (st_table_add_index(n, st_index_name(ix), st_index_kind(ix), st_index_n_keys(ix),
                               st_index_key_cols(ix), err) != CM_OK) {
            st_table_free(n);
            n = NULL;
        }
    }
    return n;
}

CmStatus st_table_add_index(StTable *t, const char *name, StIndexKind kind, int n_keys,
                            const int *key_cols, CmErr *err)
{
    StIndex **grown = cm_realloc(t->indexes, sizeof(StIndex *) * (size_t)(t->n_indexes + 1));
    if (grown == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory adding an index");
    }
    t->indexes = grown;
    StIndex *ix = st_index_new(name, kind, n_keys, key_cols, err);
    if (ix == NULL || st_index_add_rows(ix, t, 0, err) != CM_OK) {
        st_index_free(ix);
        return err->code;
    }
    t->indexes[t->n_indexes++] = ix;
    return CM_OK;
}

bool st_table_drop_index(StTable *t, const char *name)
{
    for (int i = 0; i < t->n_indexes; i++) {
        const char *ix_name = st_index_name(t->indexes[i]);
        if (ix_name != NULL && strcmp(ix_name, name) == 0) {
            st_index_free(t->indexes[i]);
            memmove(&t->indexes[i], &t->indexes[i + 1],
                    sizeof(StIndex *) * (size_t)(t->n_indexes - i - 1));
            t->n_indexes--;
            return true;
        }
    }
    return false;
}

CmStatus st_table_check(const StTable *t, const CmBatch *b, CmErr *err)
{
    for (int c = 0; c < t->n_cols; c++) {
        const StColumn *col = &t->cols[c];
        const CmVec *v = &b->cols[c];
        for (int i = 0; i < b->n_rows; i++) {
            uint32_t p = v->kind == CM_VEC_CONST ? 0 : cm_batch_pos(b, i);
            if (cm_vec_is_null(v, p)) {
                if (col->not_null) {
                    return cm_err_set(err, CM_RUNTIME, -1,
                                      "NOT NULL constraint failed: %s.%s", t->name, col->name);
                }
                continue;
            }
            if (col->type.id == CM_T_VARCHAR && col->type.length >= 0) {
                const CmStr *s = &((const CmStr *)v->data)[p];
                if ((int64_t)s->len > col->type.length) {
                    return cm_err_set(err, CM_RUNTIME, -1,
                                      "value too long for type %s(%d) of column %s.%s",
                                      col->type.is_char ? "CHAR" : "VARCHAR",
                                      (int)col->type.length, t->name, col->name);
                }
            }
        }
    }
    return CM_OK;
}

static StChunk *chunk_new(const StTable *t)
{
    StChunk *c = cm_calloc(1, sizeof *c);
    if (c == NULL) {
        return NULL;
    }
    c->data = cm_calloc((size_t)t->n_cols, sizeof(void *));
    c->validity = cm_calloc((size_t)t->n_cols, sizeof(uint64_t *));
    if (c->data == NULL || c->validity == NULL) {
        chunk_free(c, t->n_cols);
        return NULL;
    }
    for (int i = 0; i < t->n_cols; i++) {
        c->data[i] = cm_malloc(cm_type_width(t->cols[i].type) * CM_BATCH_CAP);
        if (c->data[i] == NULL) {
            chunk_free(c, t->n_cols);
            return NULL;
        }
    }
    return c;
}

static StChunk *tail_chunk(StTable *t, CmErr *err)
{
    if (t->n_chunks > 0 && t->chunks[t->n_chunks - 1]->n_rows < CM_BATCH_CAP) {
        return t->chunks[t->n_chunks - 1];
    }
    if (t->n_chunks == t->cap_chunks) {
        int cap = t->cap_chunks ? t->cap_chunks * 2 : 8;
        StChunk **grown = cm_realloc(t->chunks, sizeof(StChunk *) * (size_t)cap);
        if (grown == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory growing table '%s'", t->name);
            return NULL;
        }
        t->chunks = grown;
        t->cap_chunks = cap;
    }
    StChunk *c = chunk_new(t);
    if (c == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory growing table '%s'", t->name);
        return NULL;
    }
    t->chunks[t->n_chunks++] = c;
    return c;
}

static CmStatus set_null(StChunk *c, int col, int row, CmErr *err)
{
    if (c->validity[col] == NULL) {
        c->validity[col] = cm_malloc(sizeof(uint64_t) * CM_VALIDITY_WORDS);
        if (c->validity[col] == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory");
        }
        memset(c->validity[col], 0xff, sizeof(uint64_t) * CM_VALIDITY_WORDS);
    }
    c->validity[col][row >> 6] &= ~((uint64_t)1 << (row & 63));
    return CM_OK;
}

static CmStatus copy_value(StTable *t, StChunk *c, int col, int row, const CmVec *v, uint32_t p,
                           CmErr *err)
{
    if (v->kind == CM_VEC_CONST) {
        p = 0;
    }
    if (cm_vec_is_null(v, p)) {
        return set_null(c, col, row, err);
    }
    if (c->validity[col] != NULL) {
        c->validity[col][row >> 6] |= (uint64_t)1 << (row & 63);
    }
    size_t w = cm_type_width(t->cols[col].type);
    if (t->cols[col].type.id == CM_T_VARCHAR) {
        CmStr s = ((const CmStr *)v->data)[p];
        ((CmStr *)c->data[col])[row] = cm_str_copy(&t->strings, &s, err);
        return err->code;
    }
    memcpy((char *)c->data[col] + w * (size_t)row, (const char *)v->data + w * p, w);
    return CM_OK;
}

/* Bytes the table holds (chunk arrays and strings; bitmaps are small). */
static int64_t table_bytes(const StTable *t)
{
    int64_t row_bytes = 0;
    for (int i = 0; i < t->n_cols; i++) {
        row_bytes += (int64_t)cm_type_width(t->cols[i].type);
    }
    return (int64_t)t->n_chunks * row_bytes * CM_BATCH_CAP + (int64_t)t->strings.n_bytes;
}

CmStatus st_table_append(StTable *t, const CmBatch *b, CmErr *err)
{
    int64_t start = t->n_rows;
    for (int i = 0; i < b->n_rows; i++) {
        StChunk *c = tail_chunk(t, err);
        if (c == NULL) {
            goto fail;
        }
        uint32_t p = cm_batch_pos(b, i);
        for (int col = 0; col < t->n_cols; col++) {
            if (copy_value(t, c, col, c->n_rows, &b->cols[col], p, err) != CM_OK) {
                goto fail;
            }
        }
        c->n_rows++;
        t->n_rows++;
    }
    for (int i = 0; i < t->n_indexes; i++) {
        if (st_index_add_rows(t->indexes[i], t, start, err) != CM_OK) {
            goto fail;
        }
    }
    if (cm_mem_need_total(&t->mem, table_bytes(t), err) != CM_OK) {
        goto fail;
    }
    return CM_OK;
fail:
    st_table_truncate(t, start);
    return err->code;
}

CmStatus st_table_reserve(StTable *t, int64_t n_more, CmErr *err)
{
    for (int i = 0; i < t->n_indexes; i++) {
        if (st_index_reserve(t->indexes[i], t, t->n_rows + n_more, err) != CM_OK) {
            return err->code;
        }
    }
    return CM_OK;
}

void st_table_truncate(StTable *t, int64_t n_rows)
{
    if (n_rows >= t->n_rows) {
        return;
    }
    for (int i = 0; i < t->n_indexes; i++) {
        st_index_truncate(t->indexes[i], t, n_rows);
    }
    int keep = (int)((n_rows + CM_BATCH_CAP - 1) / CM_BATCH_CAP);
    for (int i = keep; i < t->n_chunks; i++) {
        chunk_free(t->chunks[i], t->n_cols);
    }
    t->n_chunks = keep;
    if (keep > 0) {
        t->chunks[keep - 1]->n_rows = (int)(n_rows - (int64_t)(keep - 1) * CM_BATCH_CAP);
    }
    t->n_rows = n_rows;
    if (t->mem.held > table_bytes(t)) {
        cm_mem_shrink(&t->mem, t->mem.held - table_bytes(t));
    }
}

void st_table_scan_chunk(const StTable *t, int chunk_idx, const int *col_ids, int n_out,
                         CmBatch *out)
{
    const StChunk *c = t->chunks[chunk_idx];
    for (int i = 0; i < n_out; i++) {
        CmVec *v = &out->cols[i];
        v->kind = CM_VEC_FLAT;
        v->data = c->data[col_ids[i]];
        v->validity = c->validity[col_ids[i]];
    }
    out->n_rows = c->n_rows;
    out->sel = NULL;
}
