/*
 * hashing.c - column-at-a-time key hashing.
 */
#include "executor/hashing.h"

#include <math.h>
#include <string.h>

#include "common/datetime.h"
#include "common/hash.h"

/* A list's elements as a vector (its bitmap is a validity bitmap). */
static CmVec list_elems(CmType list, const CmList *l)
{
    CmType elem = cm_type_elem(list);
    size_t w = cm_type_width(elem);
    CmVec v = {.type = elem, .data = (void *)l->data};
    if (l->has_nulls) {
        v.validity = (uint64_t *)((const char *)l->data + cm_list_bits_off(l->len, w));
    }
    return v;
}

static uint64_t hash_value(const CmVec *v, uint32_t p);

/* A string's hash: a short one's inline words mixed (no call, the bytes past
 * its length masked off), a longer one's bytes through xxh3.  Which applies
 * depends on the length alone, so equal strings hash alike. */
static inline uint64_t hash_str(const CmStr *s)
{
    if (s->len > CM_STR_INLINE) {
        return cm_hash_bytes(s->ptr, s->len);
    }
    uint64_t lo, hi;
    cm_str_inline_words(s, &lo, &hi);
    return cm_hash_u64(lo ^ cm_hash_u64(hi | (uint64_t)s->len << 32));
}

static uint64_t hash_list(const CmVec *v, uint32_t p)
{
    const CmList *l = &((const CmList *)v->data)[p];
    CmVec e = list_elems(v->type, l);
    uint64_t h = cm_hash_u64(l->len);
    for (uint32_t k = 0; k < l->len; k++) {
        h = cm_hash_combine(h, hash_value(&e, k));
    }
    return h;
}

static uint64_t hash_value(const CmVec *v, uint32_t p)
{
    if (cm_vec_is_null(v, p)) {
        return CM_HASH_NULL;
    }
    switch ((CmTypeId)v->type.id) {
    case CM_T_NULL:
    case CM_T_BOOL: return cm_hash_u64(((const uint8_t *)v->data)[p]);
    case CM_T_INT32:
    case CM_T_DATE: return cm_hash_u64((uint64_t)(int64_t)((const int32_t *)v->data)[p]);
    case CM_T_INT64:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
    case CM_T_DECIMAL: return cm_hash_u64((uint64_t)((const int64_t *)v->data)[p]);
    case CM_T_INTERVAL: {
        /* by the span, so that equal intervals ('1 month', '30 days') hash alike */
        CmInt128 span = cm_interval_span(&((const CmInterval *)v->data)[p]);
        return cm_hash_combine(cm_hash_u64((uint64_t)span), cm_hash_u64((uint64_t)(span >> 64)));
    }
    case CM_T_DECIMAL128: {
        CmInt128 x = cm_i128_get((const char *)v->data + 16 * (size_t)p);
        return cm_hash_combine(cm_hash_u64((uint64_t)x), cm_hash_u64((uint64_t)(x >> 64)));
    }
    case CM_T_DOUBLE: /* -0.0 groups with 0.0, and every NaN with every other */
        return cm_hash_u64(cm_f64_key_bits(((const double *)v->data)[p]));
    case CM_T_VARCHAR:
        return hash_str(&((const CmStr *)v->data)[p]);
    case CM_T_LIST: return hash_list(v, p);
    }
    return 0;
}

/* Hashes an integer key column with no NULLs as hash_value does, without
 * its per-row type switch; false for any other column. */
static bool hash_ints(const CmBatch *b, const CmVec *v, bool first, uint64_t *hashes)
{
    if (v->validity != NULL || v->kind == CM_VEC_CONST) {
        return false;
    }
    switch ((CmTypeId)v->type.id) {
    case CM_T_INT32:
    case CM_T_DATE: {
        const int32_t *x = v->data;
        for (int i = 0; i < b->n_rows; i++) {
            uint64_t h = cm_hash_u64((uint64_t)(int64_t)x[cm_batch_pos(b, i)]);
            hashes[i] = first ? h : cm_hash_combine(hashes[i], h);
        }
        return true;
    }
    case CM_T_INT64:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
    case CM_T_DECIMAL: {
        const int64_t *x = v->data;
        for (int i = 0; i < b->n_rows; i++) {
            uint64_t h = cm_hash_u64((uint64_t)x[cm_batch_pos(b, i)]);
            hashes[i] = first ? h : cm_hash_combine(hashes[i], h);
        }
        return true;
    }
    default:
        return false;
    }
}

/* Hashes a string key column as hash_value does, without its per-row type
 * switch; false for any other column. */
static bool hash_strs(const CmBatch *b, const CmVec *v, bool first, uint64_t *hashes)
{
    if (v->kind == CM_VEC_CONST || v->type.id != CM_T_VARCHAR) {
        return false;
    }
    const CmStr *x = v->data;
    for (int i = 0; i < b->n_rows; i++) {
        uint32_t p = cm_batch_pos(b, i);
        uint64_t h = cm_vec_is_null(v, p) ? CM_HASH_NULL : hash_str(&x[p]);
        hashes[i] = first ? h : cm_hash_combine(hashes[i], h);
    }
    return true;
}

void ex_hash_keys(const CmBatch *b, int n_keys, const int *keys, uint64_t *hashes)
{
    for (int i = 0; i < b->n_rows; i++) {
        hashes[i] = 0x2545f4914f6cdd1dULL;
    }
    for (int k = 0; k < n_keys; k++) {
        const CmVec *v = &b->cols[keys[k]];
        if (hash_ints(b, v, k == 0, hashes) || hash_strs(b, v, k == 0, hashes)) {
            continue;
        }
        for (int i = 0; i < b->n_rows; i++) {
            uint32_t p = v->kind == CM_VEC_CONST ? 0 : cm_batch_pos(b, i);
            hashes[i] = k == 0 ? hash_value(v, p) : cm_hash_combine(hashes[i], hash_value(v, p));
        }
    }
}

int ex_key_equal(const CmVec *a, uint32_t pa, const CmVec *b, uint32_t pb)
{
    bool na = cm_vec_is_null(a, pa), nb = cm_vec_is_null(b, pb);
    if (na || nb) {
        return na && nb;
    }
    switch ((CmTypeId)a->type.id) {
    case CM_T_NULL:
    case CM_T_BOOL: return ((const uint8_t *)a->data)[pa] == ((const uint8_t *)b->data)[pb];
    case CM_T_INT32:
    case CM_T_DATE: return ((const int32_t *)a->data)[pa] == ((const int32_t *)b->data)[pb];
    case CM_T_INT64:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
    case CM_T_DECIMAL: return ((const int64_t *)a->data)[pa] == ((const int64_t *)b->data)[pb];
    case CM_T_DECIMAL128:
        return memcmp((const char *)a->data + 16 * (size_t)pa,
                      (const char *)b->data + 16 * (size_t)pb, 16) == 0;
    case CM_T_INTERVAL:
        return cm_interval_cmp(&((const CmInterval *)a->data)[pa],
                               &((const CmInterval *)b->data)[pb]) == 0;
    case CM_T_DOUBLE: {
        return cm_f64_cmp(((const double *)a->data)[pa], ((const double *)b->data)[pb]) == 0;
    }
    case CM_T_VARCHAR:
        return cm_str_eq(&((const CmStr *)a->data)[pa], &((const CmStr *)b->data)[pb]);
    case CM_T_LIST: {
        const CmList *x = &((const CmList *)a->data)[pa], *y = &((const CmList *)b->data)[pb];
        if (x->len != y->len) {
            return 0;
        }
        CmVec ex = list_elems(a->type, x), ey = list_elems(b->type, y);
        for (uint32_t k = 0; k < x->len; k++) {
            if (!ex_key_equal(&ex, k, &ey, k)) {
                return 0;
            }
        }
        return 1;
    }
    }
    return 0;
}
