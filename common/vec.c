/*
 * vec.c - vector and batch storage.
 */
#include "common/vec.h"

#include <string.h>

#include "common/alloc.h"

CmStatus cm_vec_init(CmVec *v, CmType type, CmErr *err)
{
    memset(v, 0, sizeof *v);
    v->type = type;
    v->data_buf = cm_malloc(cm_type_width(type) * CM_BATCH_CAP);
    if (v->data_buf == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory allocating a vector");
    }
    v->data = v->data_buf;
    return CM_OK;
}

void cm_vec_fini(CmVec *v)
{
    cm_free(v->data_buf);
    v->data_buf = NULL;
    v->data = NULL;
}

void cm_vec_reference(CmVec *v, const CmVec *src)
{
    v->type = src->type;
    v->kind = src->kind;
    v->data = src->data;
    v->validity = src->validity;
}

CmStatus cm_batch_init(CmBatch *b, int n_cols, const CmType *types, CmErr *err)
{
    memset(b, 0, sizeof *b);
    cm_arena_init(&b->heap, 16 * 1024);
    b->cols = cm_calloc((size_t)(n_cols ? n_cols : 1), sizeof(CmVec));
    b->sel_buf = cm_malloc(sizeof(uint32_t) * CM_BATCH_CAP);
    if (b->cols == NULL || b->sel_buf == NULL) {
        cm_batch_fini(b);
        return cm_err_set(err, CM_OOM, -1, "out of memory allocating a batch");
    }
    b->n_cols = n_cols;
    for (int i = 0; i < n_cols; i++) {
        if (cm_vec_init(&b->cols[i], types[i], err) != CM_OK) {
            b->n_cols = i;
            cm_batch_fini(b);
            return err->code;
        }
    }
    return CM_OK;
}

static size_t slab_column_bytes(CmType type, int cap)
{
    return (cm_type_width(type) * (size_t)cap + 7) & ~(size_t)7;
}

size_t cm_batch_slab_bytes(int n_cols, const CmType *types, int cap)
{
    size_t n = 0;
    for (int i = 0; i < n_cols; i++) {
        n += slab_column_bytes(types[i], cap);
    }
    return n;
}

CmStatus cm_batch_init_in(CmBatch *b, int n_cols, const CmType *types, char *slab, int cap,
                          CmErr *err)
{
    CM_ASSERT(cap > 0 && cap <= CM_BATCH_CAP);
    memset(b, 0, sizeof *b);
    cm_arena_init(&b->heap, 16 * 1024);
    b->cols = cm_calloc((size_t)(n_cols ? n_cols : 1), sizeof(CmVec));
    if (b->cols == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory allocating a batch");
    }
    b->n_cols = n_cols;
    for (int i = 0; i < n_cols; i++) {
        /* no data_buf: cm_batch_reset leaves data on the slab, cm_vec_fini frees nothing */
        b->cols[i].type = types[i];
        b->cols[i].data = slab;
        slab += slab_column_bytes(types[i], cap);
    }
    return CM_OK;
}

void cm_batch_fini(CmBatch *b)
{
    if (b->cols != NULL) {
        for (int i = 0; i < b->n_cols; i++) {
            cm_vec_fini(&b->cols[i]);
        }
    }
    cm_free(b->cols);
    cm_free(b->sel_buf);
    cm_arena_fini(&b->heap);
    memset(b, 0, sizeof *b);
}

void cm_batch_reset(CmBatch *b)
{
    b->n_rows = 0;
    b->sel = NULL;
    b->keep.keeper = NULL;
    for (int i = 0; i < b->n_cols; i++) {
        b->cols[i].validity = NULL;
        b->cols[i].kind = CM_VEC_FLAT;
        if (b->cols[i].data_buf != NULL) {
            b->cols[i].data = b->cols[i].data_buf;
        }
    }
    cm_arena_reset(&b->heap);
}

bool cm_batch_keep(const CmBatch *b, CmKeep *kept)
{
    if (b->keep.keeper == NULL || b->sel != NULL || !b->keep.keeper->pin(b->keep.obj, b)) {
        return false;
    }
    *kept = b->keep;
    return true;
}

void cm_keep_drop(CmKeep *kept)
{
    if (kept->keeper != NULL) {
        kept->keeper->unpin(kept->obj);
        kept->keeper = NULL;
    }
}

CmStr cm_str_copy(CmArena *heap, const CmStr *s, CmErr *err)
{
    if (s->len <= CM_STR_INLINE) {
        return *s;
    }
    char *p = cm_arena_alloc(heap, s->len);
    if (p == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory copying a string");
        return *s;
    }
    memcpy(p, s->ptr, s->len);
    return cm_str_make(p, s->len);
}

CmList cm_list_copy(CmArena *heap, const CmList *l, CmType elem, CmErr *err)
{
    if (l->len == 0) {
        return *l;
    }
    size_t w = cm_type_width(elem);
    size_t bytes = cm_list_bytes(l->len, w, l->has_nulls);
    char *p = cm_arena_alloc(heap, bytes);
    if (p == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory copying a list");
        return *l;
    }
    memcpy(p, l->data, bytes);
    CmList out = {.len = l->len, .has_nulls = l->has_nulls, .data = p};
    if (elem.id == CM_T_VARCHAR) {
        CmStr *s = (CmStr *)p;
        for (uint32_t k = 0; k < l->len; k++) {
            /* A NULL element may hold anything: never follow its pointer. */
            s[k] = cm_list_is_null(&out, w, k) ? cm_str_make(NULL, 0) : cm_str_copy(heap, &s[k], err);
        }
    }
    return out;
}

bool cm_list_eq(const CmList *a, const CmList *b, CmType elem)
{
    size_t w = cm_type_width(elem);
    if (a->len != b->len) {
        return false;
    }
    for (uint32_t k = 0; k < a->len; k++) {
        bool na = cm_list_is_null(a, w, k), nb = cm_list_is_null(b, w, k);
        const char *x = (const char *)a->data + w * k, *y = (const char *)b->data + w * k;
        if (na != nb) {
            return false;
        }
        if (na) {
            continue;
        }
        if (elem.id == CM_T_VARCHAR ? !cm_str_eq((const CmStr *)x, (const CmStr *)y)
                                    : memcmp(x, y, w) != 0) {
            return false;
        }
    }
    return true;
}

CmStatus cm_batch_append_row(CmBatch *dst, const CmBatch *src, int i, bool copy_strings,
                             CmErr *err)
{
    uint32_t from = cm_batch_pos(src, i);
    uint32_t to = (uint32_t)dst->n_rows;
    for (int c = 0; c < dst->n_cols; c++) {
        const CmVec *sv = &src->cols[c];
        CmVec *dv = &dst->cols[c];
        uint32_t p = sv->kind == CM_VEC_CONST ? 0 : from;
        if (cm_vec_is_null(sv, p)) {
            cm_vec_set_null(dv, to);
            continue;
        }
        cm_vec_set_valid(dv, to);
        size_t w = cm_type_width(dv->type);
        if (dv->type.id == CM_T_VARCHAR) {
            CmStr s = ((const CmStr *)sv->data)[p];
            ((CmStr *)dv->data)[to] = copy_strings ? cm_str_copy(&dst->heap, &s, err) : s;
        } else if (dv->type.id == CM_T_LIST) {
            CmList l = ((const CmList *)sv->data)[p];
            ((CmList *)dv->data)[to] =
                copy_strings ? cm_list_copy(&dst->heap, &l, cm_type_elem(dv->type), err) : l;
        } else {
            memcpy((char *)dv->data + w * to, (const char *)sv->data + w * p, w);
        }
    }
    dst->n_rows++;
    return err->code;
}

static void append_strings(CmBatch *dst, CmVec *dv, const CmVec *sv, const uint32_t *pos, int n,
                           uint32_t at, bool copy, CmErr *err)
{
    const CmStr *from = sv->data;
    CmStr *to = (CmStr *)dv->data + at;
    if (!copy) {
        for (int i = 0; i < n; i++) {
            to[i] = from[pos[i]];
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        const CmStr *s = &from[pos[i]];
        /* A NULL slot may hold anything: never follow its pointer. */
        to[i] = cm_vec_is_null(sv, pos[i]) ? cm_str_make(NULL, 0) : cm_str_copy(&dst->heap, s, err);
    }
}

static void append_lists(CmBatch *dst, CmVec *dv, const CmVec *sv, const uint32_t *pos, int n,
                         uint32_t at, bool copy, CmErr *err)
{
    const CmList *from = sv->data;
    CmList *to = (CmList *)dv->data + at;
    CmType elem = cm_type_elem(dv->type);
    for (int i = 0; i < n; i++) {
        if (!copy) {
            to[i] = from[pos[i]];
        } else if (cm_vec_is_null(sv, pos[i])) {
            to[i] = (CmList){0};
        } else {
            to[i] = cm_list_copy(&dst->heap, &from[pos[i]], elem, err);
        }
    }
}

CmStatus cm_batch_append_rows(CmBatch *dst, const CmBatch *src, const uint32_t *pos, int n,
                              bool copy_strings, CmErr *err)
{
    uint32_t at = (uint32_t)dst->n_rows;
    for (int c = 0; c < dst->n_cols; c++) {
        const CmVec *sv = &src->cols[c];
        CmVec *dv = &dst->cols[c];
        size_t w = cm_type_width(dv->type);
        if (sv->kind == CM_VEC_CONST) {
            for (int i = 0; i < n; i++) {
                memcpy((char *)dv->data + w * (at + (uint32_t)i), sv->data, w);
            }
        } else if (dv->type.id == CM_T_VARCHAR) {
            append_strings(dst, dv, sv, pos, n, at, copy_strings, err);
        } else if (dv->type.id == CM_T_LIST) {
            append_lists(dst, dv, sv, pos, n, at, copy_strings, err);
        } else if (w == 8) {
            for (int i = 0; i < n; i++) {
                ((int64_t *)dv->data)[at + (uint32_t)i] = ((const int64_t *)sv->data)[pos[i]];
            }
        } else if (w == 4) {
            for (int i = 0; i < n; i++) {
                ((int32_t *)dv->data)[at + (uint32_t)i] = ((const int32_t *)sv->data)[pos[i]];
            }
        } else if (w == 1) {
            for (int i = 0; i < n; i++) {
                ((uint8_t *)dv->data)[at + (uint32_t)i] = ((const uint8_t *)sv->data)[pos[i]];
            }
        } else {
            for (int i = 0; i < n; i++) { /* INTERVAL */
                memcpy((char *)dv->data + w * (at + (uint32_t)i), (const char *)sv->data + w * pos[i], w);
            }
        }
        if (sv->validity != NULL) {
            for (int i = 0; i < n; i++) {
                uint32_t p = sv->kind == CM_VEC_CONST ? 0 : pos[i];
                if (cm_vec_is_null(sv, p)) {
                    cm_vec_set_null(dv, at + (uint32_t)i);
                } else {
                    cm_vec_set_valid(dv, at + (uint32_t)i);
                }
            }
        } else if (dv->validity != NULL) {
            for (int i = 0; i < n; i++) {
                cm_vec_set_valid(dv, at + (uint32_t)i);
            }
        }
    }
    dst->n_rows += n;
    return err->code;
}

void cm_vec_get_value(const CmVec *v, uint32_t pos, CmValue *out)
{
    if (v->kind == CM_VEC_CONST) {
        pos = 0;
    }
    out->type = v->type;
    out->is_null = cm_vec_is_null(v, pos);
    if (out->is_null) {
        memset(out->h, 0, sizeof out->h);
        return;
    }
    switch ((CmTypeId)v->type.id) {
    case CM_T_NULL:
    case CM_T_BOOL: out->i = ((const uint8_t *)v->data)[pos]; break;
    case CM_T_INT32:
    case CM_T_DATE: out->i = ((const int32_t *)v->data)[pos]; break;
    case CM_T_INT64:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
    case CM_T_DECIMAL: out->i = ((const int64_t *)v->data)[pos]; break;
    case CM_T_INTERVAL: out->iv = ((const CmInterval *)v->data)[pos]; break;
    case CM_T_DECIMAL128:
        memcpy(out->h, (const char *)v->data + 16 * (size_t)pos, 16);
        break;
    case CM_T_DOUBLE: out->d = ((const double *)v->data)[pos]; break;
    case CM_T_VARCHAR: out->s = ((const CmStr *)v->data)[pos]; break;
    case CM_T_LIST: out->l = ((const CmList *)v->data)[pos]; break;
    }
}

void cm_vec_set_value(CmVec *v, uint32_t pos, const CmValue *val)
{
    if (val->is_null) {
        cm_vec_set_null(v, pos);
        return;
    }
    cm_vec_set_valid(v, pos);
    switch ((CmTypeId)v->type.id) {
    case CM_T_NULL:
    case CM_T_BOOL: ((uint8_t *)v->data)[pos] = (uint8_t)val->i; break;
    case CM_T_INT32:
    case CM_T_DATE: ((int32_t *)v->data)[pos] = (int32_t)val->i; break;
    case CM_T_INT64:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
    case CM_T_DECIMAL: ((int64_t *)v->data)[pos] = val->i; break;
    case CM_T_INTERVAL: ((CmInterval *)v->data)[pos] = val->iv; break;
    case CM_T_DECIMAL128:
        memcpy((char *)v->data + 16 * (size_t)pos, val->h, 16);
        break;
    case CM_T_DOUBLE: ((double *)v->data)[pos] = val->d; break;
    case CM_T_VARCHAR: ((CmStr *)v->data)[pos] = val->s; break;
    case CM_T_LIST: ((CmList *)v->data)[pos] = val->l; break;
    }
}
