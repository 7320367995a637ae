/*
 * index.c - open-addressing hash index of row ids.
 *
 * Invariants: the slots are two arrays of `cap` entries (a power of two), one
 * slot per distinct key: tags[s] is TAG_EMPTY, TAG_GONE (a key whose rows
 * were all forgotten: probes go on past it) or a live tag (>= TAG_LIVE, from
 * the top bits of the key's hash), and rows[s] the newest row of a live slot's
 * key.  A probe walks the small tag array (1 byte a slot, mostly in cache) and
 * compares keys in the table only when a tag agrees; the row array is mostly
 * written.  n_used counts the non-empty slots and stays <= 3/4 of cap, so every
 * probe ends at an empty slot.  A plain index links row r to the previous row
 * of its key in next[r] (+ 1, 0 at the end), so a key's rows form one chain,
 * newest first, however many there are.  Nothing else is kept per row:
 * growing and forgetting rows re-hash keys from the table's columns, read in
 * order.  Row ids are 32 bits: an indexed table holds under 2^32 rows.
 * A key that fits 64 bits (one integer-like component, or two of 32 bits at
 * most: surrogate keys, TPC-DS's composite ones) is kept in its slot too,
 * packed (keys[s]): then probes compare it there, growing re-hashes it from
 * there and forgetting rows walks the slots, so the table's rows are read
 * only as they are added (in chunks still held for the append) and the
 * table need not keep its sealed chunks in memory (st_index_reads_rows).  Rows
 * are added a chunk segment at a time: the segment's hashes are computed
 * column by column into a fixed buffer, then each row probes for its key, the
 * tag of a row a few ahead prefetched; nothing is allocated per row.
 * The table keeps its chunks pinned while it has an index that reads rows
 * (storage/table.h), so the rows read here are always in memory
 * (st_chunk_data).
 */
#include "storage/index.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "common/alloc.h"
#include "common/datetime.h"
#include "common/hash.h"
#include "common/mem.h"
#include "common/value.h"
#include "shuffle/spill.h"
#include "storage/blocks.h"

#define TAG_EMPTY 0
#define TAG_GONE 1
#define TAG_LIVE 2
#define MAX_ROWS ((int64_t)UINT32_MAX)
#define PREFETCH_AHEAD 64

struct StIndex {
    char *name; /* owned; NULL for a constraint */
    StIndexKind kind;
    int n_keys;
    int *key_cols;  /* owned: table column of each key component */
    uint8_t *tags;  /* owned: cap entries (see the invariants above) */
    uint32_t *rows; /* owned: cap entries, the newest row of a live slot's key */
    bool keyed;     /* keys fit 64 bits and live in the slots (keys[]) */
    uint64_t *keys; /* owned when keyed: cap entries, a live slot's key packed (pack_add) */
    int64_t cap;    /* power of two, or 0 before the first row */
    int64_t n_used; /* non-empty slots, forgotten ones included */
    uint32_t *next; /* owned, plain index only: per row, previous row of its key + 1 */
    int64_t cap_next;
    int64_t n_rows; /* rows [0, n_rows) of the table are indexed */
    CmMemRes res;   /* the bytes of tags, rows, keys and next: storage memory */
};

/* Whether values of `type` compare as their 64-bit integer image (slot_value). */
static int slot_bits(CmType type)
{
    switch (type.id) {
    case CM_T_BOOL:
    case CM_T_INT32:
    case CM_T_DATE:
        return 32;
    case CM_T_INT64:
    case CM_T_DECIMAL:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
        return 64;
    default:
        return 0;
    }
}

StIndex *st_index_new(const char *name, StIndexKind kind, int n_keys, const int *key_cols,
                      const CmType *col_types, CmErr *err)
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
    cm_mem_res_init(&ix->res, CM_MEM_STORAGE, "table index", NULL);
    ix->keyed = (n_keys == 1 && slot_bits(col_types[key_cols[0]]) > 0) ||
                (n_keys == 2 && slot_bits(col_types[key_cols[0]]) == 32 &&
                 slot_bits(col_types[key_cols[1]]) == 32);
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
    cm_free(ix->tags);
    cm_free(ix->rows);
    cm_free(ix->keys);
    cm_free(ix->next);
    cm_mem_res_fini(&ix->res);
    cm_free(ix);
}

bool st_index_reads_rows(const StIndex *ix)
{
    return !ix->keyed;
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
    case CM_T_BOOL:
        return cm_hash_u64(((const uint8_t *)data)[i]);
    case CM_T_INT32:
    case CM_T_DATE:
        return cm_hash_u64((uint64_t)(int64_t)((const int32_t *)data)[i]);
    case CM_T_DOUBLE:
        return cm_hash_u64(cm_f64_key_bits(((const double *)data)[i]));
    case CM_T_VARCHAR: {
        const CmStr *s = &((const CmStr *)data)[i];
        return cm_hash_bytes(cm_str_data(s), s->len);
    }
    case CM_T_INTERVAL: {
        CmInt128 span = cm_interval_span(&((const CmInterval *)data)[i]);
        return cm_hash_combine(cm_hash_u64((uint64_t)span), cm_hash_u64((uint64_t)(span >> 64)));
    }
    case CM_T_DECIMAL128:
        return cm_hash_bytes((const char *)data + 16 * (size_t)i, 16);
    case CM_T_LIST: {
        const CmList *l = &((const CmList *)data)[i];
        CmType elem = cm_type_elem(type);
        uint64_t h = cm_hash_u64(l->len);
        for (uint32_t k = 0; k < l->len; k++) {
            bool is_null = cm_list_is_null(l, cm_type_width(elem), k);
            h = cm_hash_combine(h, is_null ? 0 : hash_value(elem, l->data, k));
        }
        return h;
    }
    default:
        return cm_hash_u64((uint64_t)((const int64_t *)data)[i]);
    }
}

/* The 64-bit integer image of value i of a slot_bits type: equal values, equal
 * images, and hash_value(v) == cm_hash_u64(image). */
static int64_t slot_value(CmType type, const void *data, uint32_t i)
{
    switch (type.id) {
    case CM_T_BOOL:
        return ((const uint8_t *)data)[i];
    case CM_T_INT32:
    case CM_T_DATE:
        return ((const int32_t *)data)[i];
    default:
        return ((const int64_t *)data)[i];
    }
}

/* A keyed index's key `key` so far with component k's image added: the
 * image itself for k = 0, else two 32-bit halves. */
static uint64_t pack_add(uint64_t key, int k, int64_t image)
{
    return k == 0 ? (uint64_t)image : key << 32 | (uint32_t)image;
}

/* The hash of a packed key: the hash its row's components have (hash_segment). */
static uint64_t packed_hash(int n_keys, uint64_t key)
{
    if (n_keys == 1) {
        return cm_hash_u64(key);
    }
    int64_t v0 = (int32_t)(uint32_t)(key >> 32), v1 = (int32_t)(uint32_t)key;
    return cm_hash_combine(cm_hash_u64((uint64_t)v0), cm_hash_u64((uint64_t)v1));
}

static bool value_eq(CmType type, const void *a, uint32_t i, const void *b, uint32_t j)
{
    switch (type.id) {
    case CM_T_BOOL:
        return ((const uint8_t *)a)[i] == ((const uint8_t *)b)[j];
    case CM_T_INT32:
    case CM_T_DATE:
        return ((const int32_t *)a)[i] == ((const int32_t *)b)[j];
    case CM_T_DOUBLE: {
        double x = ((const double *)a)[i], y = ((const double *)b)[j];
        return x == y || (isnan(x) && isnan(y));
    }
    case CM_T_VARCHAR:
        return cm_str_eq(&((const CmStr *)a)[i], &((const CmStr *)b)[j]);
    case CM_T_INTERVAL:
        return cm_interval_cmp(&((const CmInterval *)a)[i], &((const CmInterval *)b)[j]) == 0;
    case CM_T_LIST:
        return cm_list_eq(&((const CmList *)a)[i], &((const CmList *)b)[j], cm_type_elem(type));
    case CM_T_DECIMAL128:
        return memcmp((const char *)a + 16 * (size_t)i, (const char *)b + 16 * (size_t)j, 16) == 0;
    default:
        return ((const int64_t *)a)[i] == ((const int64_t *)b)[j];
    }
}

static bool bit_is_null(const uint64_t *validity, uint32_t i)
{
    return validity != NULL && !(validity[i >> 6] >> (i & 63) & 1);
}

static bool rows_eq(const StIndex *ix, const StTable *t, int64_t r1, int64_t r2)
{
    int i1, i2;
    const StChunk *c1 = t->chunks[st_table_chunk_of(t, r1, &i1)];
    const StChunk *c2 = t->chunks[st_table_chunk_of(t, r2, &i2)];
    for (int k = 0; k < ix->n_keys; k++) {
        int col = ix->key_cols[k];
        if (!value_eq(t->cols[col].type, st_chunk_data(c1, col), i1, st_chunk_data(c2, col), i2)) {
            return false;
        }
    }
    return true;
}

/* Writes "name: value" of each key component of row i of chunk c to buf. */
static void format_key_in(const StIndex *ix, const StTable *t, const StChunk *c, int i, char *buf,
                          size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < ix->n_keys && len < cap; k++) {
        int col = ix->key_cols[k];
        const void *d = st_chunk_data(c, col);
        CmType type = t->cols[col].type;
        char text[CM_FMT_CAP];
        const char *v = text;
        int n;
        switch (type.id) {
        case CM_T_BOOL:
            v = ((const uint8_t *)d)[i] ? "true" : "false";
            n = (int)strlen(v);
            break;
        case CM_T_INT32:
            n = cm_fmt_int64(((const int32_t *)d)[i], text);
            break;
        case CM_T_DATE:
            n = cm_fmt_date(((const int32_t *)d)[i], text);
            break;
        case CM_T_DOUBLE:
            n = cm_fmt_double(((const double *)d)[i], text);
            break;
        case CM_T_DECIMAL:
            n = cm_fmt_decimal(((const int64_t *)d)[i], type.scale, text);
            break;
        case CM_T_DECIMAL128:
            n = cm_fmt_int128_decimal(cm_i128_get((const char *)d + 16 * (size_t)i), type.scale,
                                      text);
            break;
        case CM_T_TIME:
            n = cm_fmt_time(((const int64_t *)d)[i], text);
            break;
        case CM_T_TIMESTAMP:
            n = cm_fmt_timestamp(((const int64_t *)d)[i], text);
            break;
        case CM_T_INTERVAL:
            n = cm_fmt_interval(&((const CmInterval *)d)[i], text);
            break;
        case CM_T_VARCHAR: {
            const CmStr *s = &((const CmStr *)d)[i];
            v = cm_str_data(s);
            n = (int)(s->len > 64 ? 64 : s->len);
            break;
        }
        case CM_T_LIST:
            n = (int)cm_fmt_list(&((const CmList *)d)[i], cm_type_elem(type), text, sizeof text);
            n = n < (int)sizeof text ? n : (int)sizeof text - 1;
            break;
        default:
            n = cm_fmt_int64(((const int64_t *)d)[i], text);
            break;
        }
        int w = snprintf(buf + len, cap - len, "%s%s: %.*s", k > 0 ? ", " : "", t->cols[col].name,
                         n, v);
        len += w > 0 ? (size_t)w : 0;
    }
}

/* format_key_in for row r of t (held). */
static void format_key(const StIndex *ix, const StTable *t, int64_t r, char *buf, size_t cap)
{
    int i;
    const StChunk *c = t->chunks[st_table_chunk_of(t, r, &i)];
    format_key_in(ix, t, c, i, buf, cap);
}

/* ---- the slots --------------------------------------------------------------------------- */

/* Hashes rows [first, first + n) of chunk `c` into h; is_null[i] is set when a
 * key component of row i is NULL.  A keyed index's packed keys go to key[]. */
static void hash_segment(const StIndex *ix, const StTable *t, const StChunk *c, int first, int n,
                         uint64_t *h, bool *is_null, uint64_t *key)
{
    for (int k = 0; k < ix->n_keys; k++) {
        int col = ix->key_cols[k];
        CmType type = t->cols[col].type;
        const void *d = st_chunk_data(c, col);
        const uint64_t *validity = st_chunk_validity(c, col);
        if (validity == NULL && (type.id == CM_T_INT32 || type.id == CM_T_DATE)) {
            /* The common key (a NOT NULL integer): one loop without a switch. */
            const int32_t *x = (const int32_t *)d + first;
            for (int i = 0; i < n; i++) {
                uint64_t v = cm_hash_u64((uint64_t)(int64_t)x[i]);
                h[i] = k == 0 ? v : cm_hash_combine(h[i], v);
                is_null[i] = k > 0 && is_null[i];
                if (ix->keyed) {
                    key[i] = pack_add(key[i], k, x[i]);
                }
            }
            continue;
        }
        for (int i = 0; i < n; i++) {
            /* the bytes under a NULL are whatever was there: never read them */
            bool is_null_here = bit_is_null(validity, (uint32_t)(first + i));
            uint64_t v = is_null_here ? 0 : hash_value(type, d, (uint32_t)(first + i));
            h[i] = k == 0 ? v : cm_hash_combine(h[i], v);
            is_null[i] = (k > 0 && is_null[i]) || is_null_here;
            if (ix->keyed) {
                int64_t image = is_null_here ? 0 : slot_value(type, d, (uint32_t)(first + i));
                key[i] = pack_add(key[i], k, image);
            }
        }
    }
}

static uint8_t tag_of(uint64_t h)
{
    return (uint8_t)(TAG_LIVE + (h >> 56) % (256 - TAG_LIVE));
}

/* The slot of row r's key (hash h; packed as `key` when keyed): the slot
 * holding it, or the empty slot that ends its probe. */
static int64_t find_slot(const StIndex *ix, const StTable *t, uint64_t h, int64_t r, uint64_t key)
{
    int64_t mask = ix->cap - 1;
    int64_t pos = (int64_t)(h & (uint64_t)mask);
    uint8_t tag = tag_of(h);
    for (uint8_t v; (v = ix->tags[pos]) != TAG_EMPTY; pos = (pos + 1) & mask) {
        if (v == tag && (ix->keyed ? ix->keys[pos] == key : rows_eq(ix, t, ix->rows[pos], r))) {
            break;
        }
    }
    return pos;
}

/* Whether bit i of `pick` is set (pick NULL: every row). */
static bool picked(const uint64_t *pick, int i)
{
    return pick == NULL || (pick[i >> 6] >> (i & 63) & 1);
}

/* The slot holding row r (its key's hash h), or -1 when the row is not indexed. */
static int64_t slot_of_row(const StIndex *ix, uint64_t h, int64_t r)
{
    int64_t mask = ix->cap - 1;
    int64_t pos = (int64_t)(h & (uint64_t)mask);
    for (uint8_t v; ix->cap > 0 && (v = ix->tags[pos]) != TAG_EMPTY; pos = (pos + 1) & mask) {
        if (v >= TAG_LIVE && ix->rows[pos] == (uint32_t)r) {
            return pos;
        }
    }
    return -1;
}

/* Adds rows [from, to) of t, those `pick` picks (NULL: all; bit r - from, so
 * at most CM_BATCH_CAP rows with a pick); with `append`, ix->n_rows becomes
 * to.  Returns -1, or, for a unique index, the first row whose key is
 * already there (with `append`, ix->n_rows is then that row: it and the rows
 * after it are not indexed). */
static int64_t insert_rows(StIndex *ix, const StTable *t, int64_t from, int64_t to, bool append,
                           const uint64_t *pick)
{
    uint64_t h[CM_BATCH_CAP], key[CM_BATCH_CAP];
    bool is_null[CM_BATCH_CAP];
    int64_t mask = ix->cap - 1;
    for (int64_t r = from; r < to;) {
        int first;
        const StChunk *c = t->chunks[st_table_chunk_of(t, r, &first)];
        int n = (int)(c->n_rows - first < to - r ? c->n_rows - first : to - r);
        hash_segment(ix, t, c, first, n, h, is_null, key);
        for (int i = 0; i < n; i++, r++) {
            if (PREFETCH_AHEAD < CM_BATCH_CAP && i + PREFETCH_AHEAD < n) {
                uint64_t ahead = h[i + PREFETCH_AHEAD] & (uint64_t)mask;
                __builtin_prefetch(&ix->tags[ahead]);
                __builtin_prefetch(&ix->rows[ahead], 1);
            }
            if (append) {
                ix->n_rows = r;
            }
            if (is_null[i] || !picked(pick, (int)(r - from))) {
                continue;
            }
            int64_t pos = find_slot(ix, t, h[i], r, key[i]);
            bool is_new = ix->tags[pos] == TAG_EMPTY;
            CM_ASSERT(!is_new || 4 * (ix->n_used + 1) <= 3 * ix->cap); /* room made before */
            if (!is_new && ix->kind != ST_INDEX_PLAIN) {
                return r;
            }
            if (ix->kind == ST_INDEX_PLAIN) {
                ix->next[r] = is_new ? 0 : ix->rows[pos] + 1;
            }
            ix->tags[pos] = tag_of(h[i]);
            ix->rows[pos] = (uint32_t)r;
            if (ix->keyed) {
                ix->keys[pos] = key[i];
            }
            ix->n_used += is_new;
        }
    }
    if (append) {
        ix->n_rows = to;
    }
    return -1;
}

/* Every insert touches a random slot: on a large table, huge pages spare a
 * TLB miss and a page fault per 4 KB.  Only a hint (the kernel may say no). */
static void advise_huge(void *p, size_t size)
{
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t start = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t end = ((uintptr_t)p + size) & ~(huge - 1);
    if (end > start) {
        (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
    }
}

/* Makes room for rows up to n_rows: the chain links, and slots rebuilt from
 * the table's rows when the load would pass 3/4 (forgotten keys go then).
 * 3/4 rather than 1/2: the slots are storage memory within memory_limit, and
 * a probe mostly reads tags, 64 to a cache line. */
static CmStatus reserve(StIndex *ix, const StTable *t, int64_t n_rows, CmErr *err)
{
    if (n_rows > MAX_ROWS) {
        return cm_err_set(err, CM_LIMIT, -1, "an indexed table holds at most %lld rows",
                          (long long)MAX_ROWS);
    }
    if (ix->kind == ST_INDEX_PLAIN && n_rows > ix->cap_next) {
        int64_t cap = ix->cap_next ? ix->cap_next : 1024;
        while (cap < n_rows) {
            cap *= 2;
        }
        int64_t more = (int64_t)sizeof(uint32_t) * (cap - ix->cap_next);
        if (st_blocks_reserve(&ix->res, more, err) != CM_OK) {
            return err->code;
        }
        uint32_t *grown = cm_realloc(ix->next, sizeof(uint32_t) * (size_t)cap);
        if (grown == NULL) {
            cm_mem_shrink(&ix->res, more);
            return cm_err_set(err, CM_OOM, -1, "out of memory growing an index");
        }
        ix->next = grown;
        ix->cap_next = cap;
    }
    if (4 * (ix->n_used + (n_rows - ix->n_rows)) <= 3 * ix->cap) {
        return CM_OK;
    }
    int64_t cap = 64;
    while (3 * cap < 4 * n_rows) {
        cap *= 2;
    }
    /* old and new slots live together while the keys move */
    int64_t slot_bytes =
        1 + (int64_t)sizeof(uint32_t) + (ix->keyed ? (int64_t)sizeof(uint64_t) : 0);
    if (st_blocks_reserve(&ix->res, slot_bytes * cap, err) != CM_OK) {
        return err->code;
    }
    uint8_t *tags = cm_calloc((size_t)cap, 1);
    uint32_t *rows = cm_malloc(sizeof(uint32_t) * (size_t)cap);
    uint64_t *keys = ix->keyed ? cm_malloc(sizeof(uint64_t) * (size_t)cap) : NULL;
    if (tags == NULL || rows == NULL || (ix->keyed && keys == NULL)) {
        cm_free(tags);
        cm_free(rows);
        cm_free(keys);
        cm_mem_shrink(&ix->res, slot_bytes * cap);
        return cm_err_set(err, CM_OOM, -1, "out of memory growing an index");
    }
    advise_huge(rows, sizeof(uint32_t) * (size_t)cap);
    if (keys != NULL) {
        advise_huge(keys, sizeof(uint64_t) * (size_t)cap);
    }
    uint8_t *old_tags = ix->tags;
    uint32_t *old_rows = ix->rows;
    uint64_t *old_keys = ix->keys;
    int64_t old_cap = ix->cap;
    ix->tags = tags;
    ix->rows = rows;
    ix->keys = keys;
    ix->cap = cap;
    ix->n_used = 0;
    if (ix->keyed) { /* from the old slots: the rows are not read */
        for (int64_t s = 0; s < old_cap; s++) {
            if (old_tags[s] >= TAG_LIVE) {
                uint64_t h = packed_hash(ix->n_keys, old_keys[s]);
                int64_t pos = (int64_t)(h & (uint64_t)(cap - 1));
                while (tags[pos] != TAG_EMPTY) {
                    pos = (pos + 1) & (cap - 1);
                }
                tags[pos] = tag_of(h);
                rows[pos] = old_rows[s];
                keys[pos] = old_keys[s];
                ix->n_used++;
            }
        }
    } else {
        insert_rows(ix, t, 0, ix->n_rows, true, NULL); /* the rows are already known distinct */
    }
    cm_free(old_tags);
    cm_free(old_rows);
    cm_free(old_keys);
    cm_mem_shrink(&ix->res, slot_bytes * old_cap);
    return CM_OK;
}

CmStatus st_index_reserve(StIndex *ix, const StTable *t, int64_t n_rows, CmErr *err)
{
    return reserve(ix, t, n_rows, err);
}

static CmStatus duplicate(const StIndex *ix, const char *key, CmErr *err)
{
    return cm_err_set(err, CM_RUNTIME, -1, "Duplicate key \"%s\" violates %s constraint", key,
                      ix->kind == ST_INDEX_PRIMARY ? "primary key" : "unique");
}

CmStatus st_index_add_rows(StIndex *ix, const StTable *t, int64_t from, CmErr *err)
{
    CM_ASSERT(from == ix->n_rows);
    if (reserve(ix, t, t->n_rows, err) != CM_OK) {
        return err->code;
    }
    int64_t dup = insert_rows(ix, t, from, t->n_rows, true, NULL);
    if (dup < 0) {
        return CM_OK;
    }
    char key[200];
    format_key(ix, t, dup, key, sizeof key);
    st_index_truncate(ix, t, from);
    return duplicate(ix, key, err);
}

/* ---- patching: the rows of some chunks replaced ----------------------------------------- */

CmStatus st_index_room(StIndex *ix, const StTable *t, int64_t n_more, CmErr *err)
{
    CM_ASSERT(ix->kind != ST_INDEX_PLAIN);
    return reserve(ix, t, ix->n_rows + n_more, err);
}

/* Whether row i of chunk a and row j of chunk b (hashes ha, hb; packed ka,
 * kb when keyed; neither key NULL) have the same key. */
static bool keys_eq(const StIndex *ix, const StTable *t, const StChunk *a, int i, const StChunk *b,
                    int j, uint64_t ha, uint64_t hb, uint64_t ka, uint64_t kb)
{
    if (ha != hb || (ix->keyed && ka != kb)) {
        return false;
    }
    for (int k = 0; k < ix->n_keys && !ix->keyed; k++) {
        int col = ix->key_cols[k];
        if (!value_eq(t->cols[col].type, st_chunk_data(a, col), i, st_chunk_data(b, col), j)) {
            return false;
        }
    }
    return true;
}

int st_index_diff(const StIndex *ix, const StTable *t, const StChunk *old, const StChunk *fresh,
                  uint64_t *differ)
{
    CM_ASSERT(old->n_rows == fresh->n_rows);
    uint64_t ho[CM_BATCH_CAP], ko[CM_BATCH_CAP], hf[CM_BATCH_CAP], kf[CM_BATCH_CAP];
    bool no[CM_BATCH_CAP], nf[CM_BATCH_CAP];
    hash_segment(ix, t, old, 0, old->n_rows, ho, no, ko);
    hash_segment(ix, t, fresh, 0, fresh->n_rows, hf, nf, kf);
    int n = 0;
    memset(differ, 0, sizeof(uint64_t) * (((size_t)CM_BATCH_CAP + 63) / 64));
    for (int i = 0; i < old->n_rows; i++) {
        bool same = no[i] && nf[i];
        if (!no[i] && !nf[i]) {
            same = keys_eq(ix, t, old, i, fresh, i, ho[i], hf[i], ko[i], kf[i]);
        }
        if (!same) {
            differ[i >> 6] |= (uint64_t)1 << (i & 63);
            n++;
        }
    }
    return n;
}

void st_index_forget(StIndex *ix, const StTable *t, const StChunk *c, int64_t r0,
                     const uint64_t *pick)
{
    CM_ASSERT(ix->kind != ST_INDEX_PLAIN);
    if (ix->cap == 0 || c->n_rows == 0) {
        return;
    }
    uint64_t h[CM_BATCH_CAP], key[CM_BATCH_CAP];
    bool is_null[CM_BATCH_CAP];
    hash_segment(ix, t, c, 0, c->n_rows, h, is_null, key);
    for (int i = 0; i < c->n_rows; i++) {
        int64_t pos = is_null[i] || !picked(pick, i) ? -1 : slot_of_row(ix, h[i], r0 + i);
        if (pos >= 0) {
            ix->tags[pos] = TAG_GONE;
        }
    }
}

CmStatus st_index_put(StIndex *ix, const StTable *t, int64_t r0, int n, const uint64_t *pick,
                      CmErr *err)
{
    CM_ASSERT(ix->kind != ST_INDEX_PLAIN && n <= CM_BATCH_CAP);
    int64_t dup = insert_rows(ix, t, r0, r0 + n, false, pick);
    if (dup < 0) {
        return CM_OK;
    }
    char text[200];
    format_key(ix, t, dup, text, sizeof text);
    return duplicate(ix, text, err);
}

void st_index_map_kept(const StIndex *ix, const StTable *t, const StChunk *old,
                       const StChunk *fresh, int16_t *map)
{
    uint64_t ho[CM_BATCH_CAP], ko[CM_BATCH_CAP], hf[CM_BATCH_CAP], kf[CM_BATCH_CAP];
    bool no[CM_BATCH_CAP], nf[CM_BATCH_CAP];
    int n_fresh = fresh != NULL ? fresh->n_rows : 0;
    hash_segment(ix, t, old, 0, old->n_rows, ho, no, ko);
    if (fresh != NULL) {
        hash_segment(ix, t, fresh, 0, n_fresh, hf, nf, kf);
    }
    /* fresh's indexed keys are old's, some left out, in order, and no two alike: each old
     * key is kept when it is the next one of fresh */
    int j = 0;
    for (int i = 0; i < old->n_rows; i++) {
        map[i] = -1;
        if (no[i]) {
            continue;
        }
        while (j < n_fresh && nf[j]) {
            j++;
        }
        if (j < n_fresh && keys_eq(ix, t, old, i, fresh, j, ho[i], hf[j], ko[i], kf[j])) {
            map[i] = (int16_t)j++;
        }
    }
}

/* The last gap starting at or before r (gaps[0].start <= r): from the
 * first one of r's span of CM_BATCH_CAP row ids (by_span, when not NULL) on,
 * else by bisection. */
static int gap_of(int n, const StIndexGap *gaps, const int *by_span, int64_t r)
{
    if (by_span != NULL) {
        int k = by_span[r / CM_BATCH_CAP];
        while (k + 1 < n && gaps[k + 1].start <= r) {
            k++;
        }
        return k;
    }
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (gaps[mid].start <= r) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

void st_index_close_up(StIndex *ix, int n, const StIndexGap *gaps, int64_t n_rows)
{
    CM_ASSERT(ix->kind != ST_INDEX_PLAIN);
    /* per span of CM_BATCH_CAP row ids, the last gap starting at or before it (a pass
     * over the slots then mostly finds a row's gap in a step, not a bisection) */
    int64_t n_spans = ix->n_rows / CM_BATCH_CAP + 1;
    int *by_span = n > 0 ? cm_malloc(sizeof(int) * (size_t)n_spans) : NULL;
    for (int64_t sp = 0, k = 0; by_span != NULL && sp < n_spans; sp++) {
        while (k + 1 < n && gaps[k + 1].start <= sp * CM_BATCH_CAP) {
            k++;
        }
        by_span[sp] = (int)k;
    }
    for (int64_t s = 0; n > 0 && s < ix->cap; s++) {
        if (ix->tags[s] < TAG_LIVE || ix->rows[s] < gaps[0].start) {
            continue;
        }
        int64_t r = ix->rows[s];
        const StIndexGap *g = &gaps[gap_of(n, gaps, by_span, r)];
        if (r >= g->start + g->n_old) { /* a row after the chunk, moved up */
            ix->rows[s] = (uint32_t)(r - g->moved_after);
        } else if (g->map[r - g->start] < 0) {
            ix->tags[s] = TAG_GONE;
        } else {
            ix->rows[s] = (uint32_t)(g->new_start + g->map[r - g->start]);
        }
    }
    cm_free(by_span);
    ix->n_rows = n_rows;
}

void st_index_clear(StIndex *ix)
{
    if (ix->cap > 0) {
        memset(ix->tags, TAG_EMPTY, (size_t)ix->cap);
    }
    ix->n_used = 0;
    ix->n_rows = 0;
}

/* A keyed index forgets rows >= n_rows slot by slot: a key's newest row
 * before n_rows is down its chain (rows only ever grow along it). */
static void truncate_slots(StIndex *ix, int64_t n_rows)
{
    for (int64_t s = 0; s < ix->cap; s++) {
        if (ix->tags[s] < TAG_LIVE || ix->rows[s] < n_rows) {
            continue;
        }
        int64_t row = ix->rows[s];
        while (row >= n_rows && ix->kind == ST_INDEX_PLAIN && ix->next[row] != 0) {
            row = (int64_t)ix->next[row] - 1;
        }
        if (row < n_rows) {
            ix->rows[s] = (uint32_t)row;
        } else {
            ix->tags[s] = TAG_GONE;
        }
    }
}

/* Forgets the newest rows first, so each is at the head of its key's chain. */
void st_index_truncate(StIndex *ix, const StTable *t, int64_t n_rows)
{
    if (ix->keyed && n_rows < ix->n_rows) {
        truncate_slots(ix, n_rows);
        ix->n_rows = n_rows;
        return;
    }
    uint64_t h[CM_BATCH_CAP], key[CM_BATCH_CAP];
    bool is_null[CM_BATCH_CAP];
    for (int64_t end = ix->n_rows; end > n_rows;) {
        int off;
        int ci = st_table_chunk_of(t, end - 1, &off);
        int64_t seg = end - 1 - off; /* the chunk's first row */
        int64_t start = seg > n_rows ? seg : n_rows;
        hash_segment(ix, t, t->chunks[ci], (int)(start - seg), (int)(end - start), h, is_null, key);
        for (int64_t r = end - 1; r >= start; r--) {
            int i = (int)(r - start);
            if (is_null[i]) {
                continue;
            }
            int64_t pos = slot_of_row(ix, h[i], r);
            if (pos >= 0) {
                uint32_t prev = ix->kind == ST_INDEX_PLAIN ? ix->next[r] : 0;
                if (prev != 0) {
                    ix->rows[pos] = prev - 1;
                } else {
                    ix->tags[pos] = TAG_GONE;
                }
            }
        }
        end = start;
    }
    if (n_rows < ix->n_rows) {
        ix->n_rows = n_rows;
    }
}

int64_t st_index_lookup(const StIndex *ix, const StTable *t, const CmVec *keys, uint32_t pos,
                        int64_t *rows, int64_t cap)
{
    uint64_t h = 0, packed = 0;
    for (int k = 0; k < ix->n_keys; k++) {
        if (cm_vec_is_null(&keys[k], pos)) {
            return 0;
        }
        uint64_t v = hash_value(keys[k].type, keys[k].data, pos);
        h = k == 0 ? v : cm_hash_combine(h, v);
        if (ix->keyed) {
            int64_t image = slot_value(keys[k].type, keys[k].data, pos);
            packed = pack_add(packed, k, image);
        }
    }
    int64_t n = 0;
    int64_t mask = ix->cap - 1;
    for (int64_t s = ix->cap ? (int64_t)(h & (uint64_t)mask) : 0; ix->cap; s = (s + 1) & mask) {
        uint8_t v = ix->tags[s];
        if (v == TAG_EMPTY) {
            break;
        }
        if (v != tag_of(h)) {
            continue;
        }
        int64_t row = ix->rows[s];
        int i;
        const StChunk *c = t->chunks[st_table_chunk_of(t, row, &i)];
        bool eq = !ix->keyed || ix->keys[s] == packed;
        for (int k = 0; k < ix->n_keys && eq && !ix->keyed; k++) {
            int col = ix->key_cols[k];
            eq = value_eq(t->cols[col].type, st_chunk_data(c, col), i, keys[k].data, pos);
        }
        if (!eq) {
            continue;
        }
        for (; row >= 0; row = ix->kind == ST_INDEX_PLAIN ? (int64_t)ix->next[row] - 1 : -1, n++) {
            if (n < cap) {
                rows[n] = row;
            }
        }
        break;
    }
    return n;
}

void st_index_release(StIndex *ix)
{
    cm_free(ix->tags);
    cm_free(ix->rows);
    cm_free(ix->keys);
    cm_free(ix->next);
    ix->tags = NULL;
    ix->rows = NULL;
    ix->keys = NULL;
    ix->next = NULL;
    ix->cap = ix->cap_next = ix->n_used = ix->n_rows = 0;
    cm_mem_res_fini(&ix->res);
    cm_mem_res_init(&ix->res, CM_MEM_STORAGE, "table index", NULL);
}

/* ---- checking without the slots ----------------------------------------------------------
 *
 * st_index_check_unique: the keys of the rows checked ([from, n_rows)) go
 * in a set of (hash, row) entries; the rows before them probe it.  Equal
 * hashes are compared by their keys, read from the chunks (pinned for it).
 * A set of more entries than a slice of memory_limit holds is cut by the
 * hashes' top bits into partitions, written to spill files in one pass over
 * the table, each partition then checked alone: the table's key columns are
 * read once, whatever its size. */

/* Bytes of one partition's set at most (and at most an eighth of memory_limit). */
#define CHECK_SET_MAX ((int64_t)64 << 20)

typedef struct CheckEntry {
    uint64_t h;
    int64_t row; /* -1: an empty entry */
} CheckEntry;

typedef struct Checker {
    const StIndex *ix;
    const StTable *t;
    int64_t from;
    CmMemRes res; /* the set's bytes */
    CheckEntry *set;
    int64_t cap; /* power of two */
    int bits;    /* partitions: 2^bits by the hashes' top bits */
    ShSpill **parts;
    CmBatch *bufs; /* one per partition: (hash, row) as two BIGINT columns */
} Checker;

/* Pins the key columns of chunk ci into *view (a copy of the chunk that
 * holds them); NULL with err. */
static const StChunk *pin_keys(const Checker *ck, int ci, StChunk *view, CmErr *err)
{
    const StChunk *c = ck->t->chunks[ci];
    *view = *c;
    view->held = st_block_pin_cols(c->block, ck->ix->key_cols, ck->ix->n_keys, NULL, err);
    return view->held != NULL ? view : NULL;
}

/* Whether rows a and b have the same key; CM_RUNTIME with the duplicate's
 * message (of row b) when they do.  Reads both rows' chunks. */
static CmStatus compare_rows(const Checker *ck, int64_t a, int64_t b, CmErr *err)
{
    int ia, ib;
    int ca = st_table_chunk_of(ck->t, a, &ia), cb = st_table_chunk_of(ck->t, b, &ib);
    StChunk va, vb;
    if (pin_keys(ck, ca, &va, err) == NULL) {
        return err->code;
    }
    if (pin_keys(ck, cb, &vb, err) != NULL) {
        bool same = true;
        for (int k = 0; k < ck->ix->n_keys && same; k++) {
            int col = ck->ix->key_cols[k];
            same = value_eq(ck->t->cols[col].type, st_chunk_data(&va, col), (uint32_t)ia,
                            st_chunk_data(&vb, col), (uint32_t)ib);
        }
        if (same) {
            char key[200];
            format_key_in(ck->ix, ck->t, &vb, ib, key, sizeof key);
            duplicate(ck->ix, key, err);
        }
        st_block_unpin(vb.block);
    }
    st_block_unpin(va.block);
    return err->code;
}

/* Puts (h, row) in the set (insert) or looks for h there (probe); a
 * matching hash is compared by key. */
static CmStatus set_visit(Checker *ck, uint64_t h, int64_t row, bool insert, CmErr *err)
{
    int64_t mask = ck->cap - 1;
    for (int64_t pos = (int64_t)(h & (uint64_t)mask);; pos = (pos + 1) & mask) {
        CheckEntry *e = &ck->set[pos];
        if (e->row < 0) {
            if (insert) {
                *e = (CheckEntry){.h = h, .row = row};
            }
            return CM_OK;
        }
        if (e->h == h &&
            compare_rows(ck, insert ? e->row : row, insert ? row : e->row, err) != CM_OK) {
            return err->code;
        }
    }
}

/* Sends (h, row) to its partition's spill file. */
static CmStatus spill_entry(Checker *ck, uint64_t h, int64_t row, CmErr *err)
{
    int p = (int)(h >> (64 - ck->bits));
    CmBatch *b = &ck->bufs[p];
    ((uint64_t *)b->cols[0].data)[b->n_rows] = h;
    ((int64_t *)b->cols[1].data)[b->n_rows] = row;
    if (++b->n_rows == CM_BATCH_CAP) {
        if (sh_spill_append(ck->parts[p], b, err) != CM_OK) {
            return err->code;
        }
        b->n_rows = 0;
    }
    return CM_OK;
}

/* One pass over rows [lo, hi) of the table: each row with a key (no NULL
 * component) is put in the set (insert), looked for in it (probe), or,
 * partitioned, spilled. */
static CmStatus scan_rows(Checker *ck, int64_t lo, int64_t hi, bool insert, CmErr *err)
{
    uint64_t h[CM_BATCH_CAP], key[CM_BATCH_CAP];
    bool is_null[CM_BATCH_CAP];
    for (int64_t r = lo; r < hi && err->code == CM_OK;) {
        int first;
        int ci = st_table_chunk_of(ck->t, r, &first);
        StChunk view;
        if (pin_keys(ck, ci, &view, err) == NULL) {
            break;
        }
        int n = (int)(view.n_rows - first < hi - r ? view.n_rows - first : hi - r);
        hash_segment(ck->ix, ck->t, &view, first, n, h, is_null, key);
        st_block_unpin(view.block);
        for (int i = 0; i < n && err->code == CM_OK; i++) {
            if (!is_null[i]) {
                if (ck->bits > 0) {
                    spill_entry(ck, h[i], r + i, err);
                } else {
                    set_visit(ck, h[i], r + i, insert, err);
                }
            }
        }
        r += n;
    }
    return err->code;
}

/* Sizes and allocates the set for n entries (and empties it). */
static CmStatus set_make(Checker *ck, int64_t n, CmErr *err)
{
    int64_t cap = 16;
    while (cap < 2 * n) {
        cap *= 2;
    }
    if (cap > ck->cap) {
        cm_free(ck->set);
        ck->set = NULL;
        cm_mem_res_fini(&ck->res);
        cm_mem_res_init(&ck->res, CM_MEM_STORAGE, "unique key check", NULL);
        if (st_blocks_reserve(&ck->res, (int64_t)sizeof(CheckEntry) * cap, err) != CM_OK) {
            return err->code;
        }
        if ((ck->set = cm_malloc(sizeof(CheckEntry) * (size_t)cap)) == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory checking a unique key");
        }
        ck->cap = cap;
    }
    memset(ck->set, 0xff, sizeof(CheckEntry) * (size_t)ck->cap);
    return CM_OK;
}

/* Checks partition p: its entries of rows checked in the set, then the others probe. */
static CmStatus check_part(Checker *ck, int p, CmErr *err)
{
    ShSpill *s = ck->parts[p];
    CmBatch *b = &ck->bufs[p];
    if (set_make(ck, sh_spill_rows(s), err) != CM_OK) {
        return err->code;
    }
    for (int pass = 0; pass < 2 && err->code == CM_OK; pass++) {
        bool insert = pass == 0, eof = false;
        if (sh_spill_rewind(s, err) != CM_OK) {
            break;
        }
        while (err->code == CM_OK && sh_spill_read(s, b, &eof, err) == CM_OK && !eof) {
            const uint64_t *hs = b->cols[0].data;
            const int64_t *rows = b->cols[1].data;
            for (int i = 0; i < b->n_rows && err->code == CM_OK; i++) {
                if ((rows[i] >= ck->from) == insert) {
                    set_visit(ck, hs[i], rows[i], insert, err);
                }
            }
        }
    }
    return err->code;
}

/* Opens the 2^bits partitions' spill files and batches. */
static CmStatus parts_open(Checker *ck, CmErr *err)
{
    int n = 1 << ck->bits;
    char dir[256];
    int64_t max_temp;
    st_blocks_temp(dir, sizeof dir, &max_temp);
    CmType types[2] = {cm_type_make(CM_T_INT64), cm_type_make(CM_T_INT64)};
    ck->parts = cm_calloc((size_t)n, sizeof(ShSpill *));
    ck->bufs = cm_calloc((size_t)n, sizeof(CmBatch));
    if (ck->parts == NULL || ck->bufs == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory checking a unique key");
    }
    for (int p = 0; p < n; p++) {
        if (cm_batch_init(&ck->bufs[p], 2, types, err) != CM_OK ||
            (ck->parts[p] = sh_spill_new(dir, max_temp, err)) == NULL) {
            return err->code;
        }
    }
    return CM_OK;
}

static void checker_fini(Checker *ck)
{
    for (int p = 0; ck->parts != NULL && p < (1 << ck->bits); p++) {
        sh_spill_free(ck->parts[p]);
        if (ck->bufs[p].cols != NULL) {
            cm_batch_fini(&ck->bufs[p]);
        }
    }
    cm_free(ck->parts);
    cm_free(ck->bufs);
    cm_free(ck->set);
    cm_mem_res_fini(&ck->res);
}

CmStatus st_index_check_unique(const StIndex *ix, const StTable *t, int64_t from, CmErr *err)
{
    if (ix->kind == ST_INDEX_PLAIN || from >= t->n_rows) {
        return CM_OK;
    }
    Checker ck = {.ix = ix, .t = t, .from = from};
    cm_mem_res_init(&ck.res, CM_MEM_STORAGE, "unique key check", NULL);
    int64_t budget = cm_mem_limit() / 8;
    budget = budget < CHECK_SET_MAX ? budget : CHECK_SET_MAX;
    int64_t per_part = budget / (int64_t)sizeof(CheckEntry) / 2;
    per_part = per_part > 1024 ? per_part : 1024;
    while (ck.bits < 16 && ((int64_t)1 << ck.bits) * per_part < t->n_rows - from) {
        ck.bits++;
    }
    if (ck.bits == 0) {
        if (set_make(&ck, t->n_rows - from, err) == CM_OK &&
            scan_rows(&ck, from, t->n_rows, true, err) == CM_OK) {
            scan_rows(&ck, 0, from, false, err);
        }
    } else if (parts_open(&ck, err) == CM_OK && scan_rows(&ck, 0, t->n_rows, false, err) == CM_OK) {
        for (int p = 0; p < (1 << ck.bits) && err->code == CM_OK; p++) {
            if (ck.bufs[p].n_rows > 0 && sh_spill_append(ck.parts[p], &ck.bufs[p], err) != CM_OK) {
                break;
            }
            check_part(&ck, p, err);
        }
    }
    checker_fini(&ck);
    return err->code;
}

int64_t st_index_bytes(const StIndex *ix)
{
    return cm_mem_held((CmMemRes *)&ix->res);
}
