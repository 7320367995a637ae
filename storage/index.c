/*
 * index.c - open-addressing hash index of row ids.
 *
 * Invariants: `slots` has `cap` entries (a power of two), each 0 (empty),
 * -1 (a forgotten row: the chain goes on past it) or row id + 1; n_used counts
 * the non-empty entries and stays <= cap / 2, so every probe ends at an empty
 * slot.  row_hash[r] holds the key hash of every row r < n_rows, indexed or
 * not (a row with a NULL key is not in the slots).  Rows are added a chunk
 * segment at a time: the segment's hashes are computed column by column into
 * a fixed buffer, then each row walks its chain; nothing is allocated per row.
 */
#include "storage/index.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/hash.h"
#include "common/value.h"

#define SLOT_EMPTY 0
#define SLOT_GONE (-1)

struct StIndex {
    char *name;         /* owned; NULL for a constraint */
    StIndexKind kind;
    int n_keys;
    int *key_cols;      /* owned: table column of each key component */
    int64_t *slots;     /* owned: cap entries (see the invariants above) */
    int64_t cap;        /* power of two, or 0 before the first row */
    int64_t n_used;     /* non-empty slots, forgotten ones included */
    uint64_t *row_hash; /* owned: key hash of rows [0, n_rows) */
    int64_t n_rows, cap_rows;
};

StIndex *st_index_new(const char *name, StIndexKind kind, int n_keys, const int *key_cols,
                      CmErr *err)
{
    StIndex *ix = cm_calloc(1, sizeof *ix);
    if (ix == NULL) {
        goto oom;
    }
    ix->kind = kind;
    ix->n_keys = n_keys;
    ix->key_cols = cm_malloc(sizeof(int) * (size_t)(n_keys > 0 ? n_keys : 1));
    if (ix->key_cols == NULL || (name != NULL && (ix->name = cm_strdup(name)) == NULL)) {
        goto oom;
    }
    memcpy(ix->key_cols, key_cols, sizeof(int) * (size_t)n_keys);
    return ix;
oom:
    st_index_free(ix);
    cm_err_set(err, CM_OOM, -1, "out of memory creating an index");
    return NULL;
}

void st_index_free(StIndex *ix)
{
    if (ix == NULL) {
        return;
    }
    cm_free(ix->name);
    cm_free(ix->key_cols);
    cm_free(ix->slots);
    cm_free(ix->row_hash);
    cm_free(ix);
}

const char *st_index_name(const StIndex *ix)
{
    return ix->name;
}

StIndexKind st_index_kind(const StIndex *ix)
{
    return ix->kind;
}

int st_index_n_keys(const StIndex *ix)
{
    return ix->n_keys;
}

const int *st_index_key_cols(const StIndex *ix)
{
    return ix->key_cols;
}

/* ---- values ------------------------------------------------------------------------------ */

/* Hash of value `i` of a flat array of type `type`.  -0.0 hashes as 0.0 and
 * every NaN alike, matching value_eq. */
static uint64_t hash_value(CmType type, const void *data, uint32_t i)
{
    switch (type.id) {
    case CM_T_BOOL: return cm_hash_u64(((const uint8_t *)data)[i]);
    case CM_T_INT32:
    case CM_T_DATE: return cm_hash_u64((uint64_t)(int64_t)((const int32_t *)data)[i]);
    case CM_T_DOUBLE: {
        double d = ((const double *)data)[i];
        d = d == 0.0 ? 0.0 : isnan(d) ? NAN : d;
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        return cm_hash_u64(bits);
    }
    case CM_T_VARCHAR: {
        const CmStr *s = &((const CmStr *)data)[i];
        return cm_hash_bytes(cm_str_data(s), s->len);
    }
    default: return cm_hash_u64((uint64_t)((const int64_t *)data)[i]);
    }
}

static bool value_eq(CmType type, const void *a, uint32_t i, const void *b, uint32_t j)
{
    switch (type.id) {
    case CM_T_BOOL: return ((const uint8_t *)a)[i] == ((const uint8_t *)b)[j];
    case CM_T_INT32:
    case CM_T_DATE: return ((const int32_t *)a)[i] == ((const int32_t *)b)[j];
    case CM_T_DOUBLE: {
        double x = ((const double *)a)[i], y = ((const double *)b)[j];
        return x == y || (isnan(x) && isnan(y));
    }
    case CM_T_VARCHAR: return cm_str_eq(&((const CmStr *)a)[i], &((const CmStr *)b)[j]);
    default: return ((const int64_t *)a)[i] == ((const int64_t *)b)[j];
    }
}

static bool bit_is_null(const uint64_t *validity, uint32_t i)
{
    return validity != NULL && !(validity[i >> 6] >> (i & 63) & 1);
}

static bool rows_eq(const StIndex *ix, const StTable *t, int64_t r1, int64_t r2)
{
    const StChunk *c1 = t->chunks[r1 / CM_BATCH_CAP], *c2 = t->chunks[r2 / CM_BATCH_CAP];
    uint32_t i1 = (uint32_t)(r1 % CM_BATCH_CAP), i2 = (uint32_t)(r2 % CM_BATCH_CAP);
    for (int k = 0; k < ix->n_keys; k++) {
        int col = ix->key_cols[k];
        if (!value_eq(t->cols[col].type, c1->data[col], i1, c2->data[col], i2)) {
            return false;
        }
    }
    return true;
}

/* Appends "name: value" of each key component of row r to buf. */
static void format_key(const StIndex *ix, const StTable *t, int64_t r, char *buf, size_t cap)
{
    const StChunk *c = t->chunks[r / CM_BATCH_CAP];
    uint32_t i = (uint32_t)(r % CM_BATCH_CAP);
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < ix->n_keys && len < cap; k++) {
        int col = ix->key_cols[k];
        const void *d = c->data[col];
        CmType type = t->cols[col].type;
        char text[CM_FMT_CAP];
        const char *v = text;
        int n;
        switch (type.id) {
        case CM_T_BOOL: v = ((const uint8_t *)d)[i] ? "true" : "false"; n = (int)strlen(v); break;
        case CM_T_INT32: n = cm_fmt_int64(((const int32_t *)d)[i], text); break;
        case CM_T_DATE: n = cm_fmt_date(((const int32_t *)d)[i], text); break;
        case CM_T_DOUBLE: n = cm_fmt_double(((const double *)d)[i], text); break;
        case CM_T_DECIMAL: n = cm_fmt_decimal(((const int64_t *)d)[i], type.scale, text); break;
        case CM_T_TIME: n = cm_fmt_time(((const int64_t *)d)[i], text); break;
        case CM_T_VARCHAR: {
            const CmStr *s = &((const CmStr *)d)[i];
            v = cm_str_data(s);
            n = (int)(s->len > 64 ? 64 : s->len);
            break;
        }
        default: n = cm_fmt_int64(((const int64_t *)d)[i], text); break;
        }
        int w = snprintf(buf + len, cap - len, "%s%s: %.*s", k > 0 ? ", " : "",
                         t->cols[col].name, n, v);
        len += w > 0 ? (size_t)w : 0;
    }
}

/* ---- the slots --------------------------------------------------------------------------- */

/* Rebuilds the slots with room for `n_more` further rows, dropping forgotten ones. */
static CmStatus grow(StIndex *ix, int64_t n_more, CmErr *err)
{
    int64_t n_live = 0;
    for (int64_t s = 0; s < ix->cap; s++) {
        n_live += ix->slots[s] > 0;
    }
    int64_t cap = 64;
    while (cap < 2 * (n_live + n_more)) {
        cap *= 2;
    }
    int64_t *slots = cm_calloc((size_t)cap, sizeof(int64_t));
    if (slots == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory growing an index");
    }
    for (int64_t s = 0; s < ix->cap; s++) {
        int64_t v = ix->slots[s];
        if (v > 0) {
            int64_t pos = (int64_t)(ix->row_hash[v - 1] & (uint64_t)(cap - 1));
            while (slots[pos] != SLOT_EMPTY) {
                pos = (pos + 1) & (cap - 1);
            }
            slots[pos] = v;
        }
    }
    cm_free(ix->slots);
    ix->slots = slots;
    ix->cap = cap;
    ix->n_used = n_live;
    return CM_OK;
}

static CmStatus reserve_rows(StIndex *ix, int64_t n_rows, CmErr *err)
{
    if (n_rows > ix->cap_rows) {
        int64_t cap = ix->cap_rows ? ix->cap_rows : 1024;
        while (cap < n_rows) {
            cap *= 2;
        }
        uint64_t *grown = cm_realloc(ix->row_hash, sizeof(uint64_t) * (size_t)cap);
        if (grown == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory growing an index");
        }
        ix->row_hash = grown;
        ix->cap_rows = cap;
    }
    if (2 * (ix->n_used + (n_rows - ix->n_rows)) > ix->cap) {
        return grow(ix, n_rows - ix->n_rows, err);
    }
    return CM_OK;
}

/* Hashes rows [first, first + n) of chunk `c` into h; is_null[i] is set when a
 * key component of row i is NULL. */
static void hash_segment(const StIndex *ix, const StTable *t, const StChunk *c, int first, int n,
                         uint64_t *h, bool *is_null)
{
    for (int k = 0; k < ix->n_keys; k++) {
        int col = ix->key_cols[k];
        CmType type = t->cols[col].type;
        const void *d = c->data[col];
        const uint64_t *validity = c->validity[col];
        for (int i = 0; i < n; i++) {
            uint64_t v = hash_value(type, d, (uint32_t)(first + i));
            h[i] = k == 0 ? v : cm_hash_combine(h[i], v);
            if (k == 0) {
                is_null[i] = false;
            }
            is_null[i] |= bit_is_null(validity, (uint32_t)(first + i));
        }
    }
}

CmStatus st_index_add_rows(StIndex *ix, const StTable *t, int64_t from, CmErr *err)
{
    CM_ASSERT(from == ix->n_rows);
    uint64_t h[CM_BATCH_CAP];
    bool is_null[CM_BATCH_CAP];
    if (reserve_rows(ix, t->n_rows, err) != CM_OK) {
        return err->code;
    }
    bool is_unique = ix->kind != ST_INDEX_PLAIN;
    int64_t mask = ix->cap - 1;
    for (int64_t r = from; r < t->n_rows;) {
        const StChunk *c = t->chunks[r / CM_BATCH_CAP];
        int first = (int)(r % CM_BATCH_CAP);
        int n = c->n_rows - first;
        hash_segment(ix, t, c, first, n, h, is_null);
        for (int i = 0; i < n; i++, r++) {
            ix->row_hash[r] = h[i];
            ix->n_rows = r + 1;
            if (is_null[i]) {
                continue;
            }
            int64_t pos = (int64_t)(h[i] & (uint64_t)mask);
            for (int64_t v; (v = ix->slots[pos]) != SLOT_EMPTY; pos = (pos + 1) & mask) {
                if (is_unique && v > 0 && ix->row_hash[v - 1] == h[i] &&
                    rows_eq(ix, t, v - 1, r)) {
                    char key[200];
                    format_key(ix, t, r, key, sizeof key);
                    st_index_truncate(ix, from);
                    return cm_err_set(err, CM_RUNTIME, -1,
                                      "Duplicate key \"%s\" violates %s constraint", key,
                                      ix->kind == ST_INDEX_PRIMARY ? "primary key" : "unique");
                }
            }
            ix->slots[pos] = r + 1;
            ix->n_used++;
        }
    }
    return CM_OK;
}

void st_index_truncate(StIndex *ix, int64_t n_rows)
{
    int64_t mask = ix->cap - 1;
    for (int64_t r = n_rows; r < ix->n_rows; r++) {
        int64_t pos = (int64_t)(ix->row_hash[r] & (uint64_t)mask);
        for (int64_t v; (v = ix->slots[pos]) != SLOT_EMPTY; pos = (pos + 1) & mask) {
            if (v == r + 1) {
                ix->slots[pos] = SLOT_GONE;
                break;
            }
        }
    }
    if (n_rows < ix->n_rows) {
        ix->n_rows = n_rows;
    }
}

int64_t st_index_lookup(const StIndex *ix, const StTable *t, const CmVec *keys, uint32_t pos,
                        int64_t *rows, int64_t cap)
{
    uint64_t h = 0;
    for (int k = 0; k < ix->n_keys; k++) {
        if (cm_vec_is_null(&keys[k], pos)) {
            return 0;
        }
        uint64_t v = hash_value(keys[k].type, keys[k].data, pos);
        h = k == 0 ? v : cm_hash_combine(h, v);
    }
    int64_t n = 0;
    int64_t mask = ix->cap - 1;
    for (int64_t s = ix->cap ? (int64_t)(h & (uint64_t)mask) : 0, v;
         ix->cap && (v = ix->slots[s]) != SLOT_EMPTY; s = (s + 1) & mask) {
        if (v <= 0 || ix->row_hash[v - 1] != h) {
            continue;
        }
        const StChunk *c = t->chunks[(v - 1) / CM_BATCH_CAP];
        uint32_t i = (uint32_t)((v - 1) % CM_BATCH_CAP);
        bool eq = true;
        for (int k = 0; k < ix->n_keys && eq; k++) {
            int col = ix->key_cols[k];
            eq = value_eq(t->cols[col].type, c->data[col], i, keys[k].data, pos);
        }
        if (eq) {
            if (n < cap) {
                rows[n] = v - 1;
            }
            n++;
        }
    }
    return n;
}
