/*
 * sort_key.c - normalized-key sort of row references (sort_key.h).
 *
 * An entry is [encoded keys: key_bytes][batch, row: 8 bytes big-endian][pad],
 * entry_bytes long (a multiple of 8).  Invariant of the encoding: for two
 * rows, memcmp of their encoded keys is < 0 only if the rows compare < 0 by
 * ex_sort_compare_rows, and > 0 only if they compare > 0; equal encodings
 * mean equal rows when the group is exact (every key encoded, no string
 * longer than its prefix), and otherwise the full comparison decides.  So
 * radix-sorting whole entries (keys, then reference) gives the final order up
 * to groups of equal inexact encodings, which are then sorted by comparison.
 * A string is its first P bytes (zero-padded) and a length byte min(len, P+1):
 * two strings of at most P bytes with equal padded prefixes differ only by
 * trailing zero bytes, and then the shorter is smaller, as the length byte says.
 */
#define _GNU_SOURCE
#include "executor/sort_key.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/thread.h"

/* Encoded key bytes at most: the keys past it are compared in full on ties. */
#define KEY_MAX_BYTES 40
/* A string key's prefix, before the entry's padding is given to the last key. */
#define STR_PREFIX 12
/* Buckets this small are insertion-sorted instead of radix-split. */
#define INSERTION_MAX 24
/* Fewer rows than this are sorted on the calling thread alone: starting the
 * threads would cost more than they save. */
#define PAR_MIN_ROWS 16384
/* Slices of rows per thread in the parallel sort's passes. */
#define PAR_SLICES 4

typedef struct Part {
    const ExSortKey *key;
    CmTypeId type;
    int off;          /* first byte in the entry: the NULL byte when has_null, then the value */
    int width;        /* value bytes; for a string its prefix and the length byte */
    bool has_null;    /* a NULL byte precedes the value */
    uint32_t str_off; /* a string's bytes before this are equal in all rows: skipped */
} Part;

typedef struct Layout {
    Part parts[KEY_MAX_BYTES]; /* each part takes at least a byte */
    int n_parts;
    bool is_complete; /* every ORDER BY key is encoded */
    bool has_str;     /* some part is a string prefix */
    int key_bytes;    /* encoded keys; the reference follows */
    int entry_bytes;  /* a multiple of 8 */
} Layout;

/* Value bytes of an encoded key of type t; 0 when t is not encoded. */
static int value_width(CmTypeId t)
{
    switch (t) {
    case CM_T_NULL:
    case CM_T_BOOL:
        return 1;
    case CM_T_INT32:
    case CM_T_DATE:
        return 4;
    case CM_T_INT64:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
    case CM_T_DECIMAL:
    case CM_T_DOUBLE:
        return 8;
    case CM_T_DECIMAL128:
        return 16;
    case CM_T_VARCHAR:
        return STR_PREFIX + 1;
    case CM_T_INTERVAL:
    case CM_T_LIST:
        return 0;
    }
    return 0;
}

static bool col_has_null(const CmBatch *const *batches, const ExRowRef *refs, int64_t n, int col)
{
    for (int64_t i = 0; i < n; i++) {
        const CmVec *v = &batches[refs[i].batch]->cols[col];
        if (v->validity != NULL && cm_vec_is_null(v, refs[i].row)) {
            return true;
        }
    }
    return false;
}

/* The layout for keys of the rows refs[0..n); with refs NULL, every key is
 * given a NULL byte (the widest layout).  The first key, when a string, is
 * encoded from byte str_off on (the rows agree on the bytes before).  With
 * entry_bytes > 0 the entries take exactly that many bytes: a first string key
 * that does not fit whole gets a shorter prefix. */
static void layout_init(Layout *l, const CmType *types, const ExSortKey *keys, int n_keys,
                        uint32_t str_off, int entry_bytes, const CmBatch *const *batches,
                        const ExRowRef *refs, int64_t n)
{
    memset(l, 0, sizeof *l);
    int cap = entry_bytes > 0 ? entry_bytes - 8 : KEY_MAX_BYTES;
    for (int k = 0; k < n_keys; k++) {
        CmTypeId t = (CmTypeId)types[keys[k].col].id;
        int w = value_width(t);
        if (w == 0) {
            break;
        }
        bool has_null = refs == NULL || col_has_null(batches, refs, n, keys[k].col);
        if (k == 0 && t == CM_T_VARCHAR && w + has_null > cap) {
            w = cap - has_null; /* a prefix of 6 bytes at least: entries are 16 bytes or more */
        }
        if (l->key_bytes + w + has_null > cap) {
            break;
        }
        Part *p = &l->parts[l->n_parts++];
        p->key = &keys[k];
        p->type = t;
        p->has_null = has_null;
        p->off = l->key_bytes;
        p->width = w;
        p->str_off = k == 0 ? str_off : 0;
        l->key_bytes += w + has_null;
        l->has_str |= t == CM_T_VARCHAR;
    }
    l->is_complete = l->n_parts == n_keys;
    l->entry_bytes = entry_bytes > 0 ? entry_bytes : (l->key_bytes + 8 + 7) & ~7;
    Part *last = l->n_parts > 0 ? &l->parts[l->n_parts - 1] : NULL;
    if (last != NULL && last->type == CM_T_VARCHAR) { /* the padding lengthens its prefix */
        int slack = l->entry_bytes - l->key_bytes - 8;
        last->width += slack;
        l->key_bytes += slack;
    }
}

int64_t ex_sort_key_entry_bytes(const CmType *types, const ExSortKey *keys, int n_keys)
{
    Layout l;
    layout_init(&l, types, keys, n_keys, 0, 0, NULL, NULL, 0);
    /* Without NULL bytes more keys may fit under the cap. */
    return l.is_complete ? l.entry_bytes : (KEY_MAX_BYTES + 8 + 7) & ~7;
}

/* ---- encoding ------------------------------------------------------------------------- */

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
    put_be32(p, (uint32_t)(v >> 32));
    put_be32(p + 4, (uint32_t)v);
}

static uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The value at pos of v (not NULL) into e[0..width). */
static void encode_value(const Part *p, const CmVec *v, uint32_t pos, uint8_t *e)
{
    switch (p->type) {
    case CM_T_NULL:
    case CM_T_BOOL:
        e[0] = ((const uint8_t *)v->data)[pos];
        break;
    case CM_T_INT32:
    case CM_T_DATE:
        put_be32(e, (uint32_t)((const int32_t *)v->data)[pos] ^ 0x80000000u);
        break;
    case CM_T_INT64:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
    case CM_T_DECIMAL:
        put_be64(e, (uint64_t)((const int64_t *)v->data)[pos] ^ 0x8000000000000000ull);
        break;
    case CM_T_DECIMAL128: { /* big-endian, the sign bit flipped: bytes sort as numbers */
        CmInt128 x = cm_i128_get((const char *)v->data + 16 * (size_t)pos);
        put_be64(e, (uint64_t)(x >> 64) ^ 0x8000000000000000ull);
        put_be64(e + 8, (uint64_t)x);
        break;
    }
    case CM_T_DOUBLE: {
        /* -0 equals 0 and every NaN is one value after +inf, as compare_cell has it. */
        double x = ((const double *)v->data)[pos];
        uint64_t bits;
        if (x == 0) {
            bits = 0;
        } else if (isnan(x)) {
            bits = 0x7ff8000000000000ull;
        } else {
            memcpy(&bits, &x, sizeof bits);
        }
        put_be64(e, bits >> 63 ? ~bits : bits ^ 0x8000000000000000ull);
        break;
    }
    case CM_T_VARCHAR: {
        const CmStr *s = &((const CmStr *)v->data)[pos];
        uint32_t prefix = (uint32_t)p->width - 1;
        uint32_t len = s->len > p->str_off ? s->len - p->str_off : 0;
        memcpy(e, cm_str_data(s) + p->str_off, len < prefix ? len : prefix);
        e[prefix] = (uint8_t)(len > prefix ? prefix + 1 : len);
        break;
    }
    case CM_T_INTERVAL:
    case CM_T_LIST:
        break; /* never encoded (value_width) */
    }
}

/* The length byte of string part p in entry e, as if ascending. */
static uint8_t str_len_byte(const Part *p, const uint8_t *e)
{
    uint8_t len = e[p->off + p->has_null + p->width - 1];
    return p->key->desc ? (uint8_t)~len : len;
}

/* A string longer than its prefix leaves the order of its row among rows of
 * the same prefix to the full comparison: the keys after it must not decide
 * first, so their bytes are zeroed. */
static void cut_after_long_string(const Layout *l, uint8_t *e)
{
    for (int k = 0; l->has_str && k < l->n_parts - 1; k++) {
        const Part *p = &l->parts[k];
        if (p->type == CM_T_VARCHAR && str_len_byte(p, e) > p->width - 1) {
            int end = p->off + p->has_null + p->width;
            memset(e + end, 0, (size_t)(l->key_bytes - end));
            return;
        }
    }
}

/* Fills ents[0..n) for refs[0..n); ents is zeroed. */
static void encode(const Layout *l, const CmBatch *const *batches, const ExRowRef *refs, int64_t n,
                   uint8_t *ents)
{
    size_t es = (size_t)l->entry_bytes;
    for (int k = 0; k < l->n_parts; k++) {
        const Part *p = &l->parts[k];
        int col = p->key->col;
        uint8_t null_byte = p->key->nulls_first ? 0 : 2;
        for (int64_t i = 0; i < n; i++) {
            uint8_t *e = ents + (size_t)i * es + p->off;
            const CmVec *v = &batches[refs[i].batch]->cols[col];
            if (p->has_null) {
                if (cm_vec_is_null(v, refs[i].row)) {
                    /* NULLs tie; their value bytes read as an empty value */
                    *e = null_byte;
                    memset(e + 1, p->key->desc ? 0xff : 0, (size_t)p->width);
                    continue;
                }
                *e++ = 1;
            }
            encode_value(p, v, refs[i].row, e);
            if (p->key->desc) {
                for (int b = 0; b < p->width; b++) {
                    e[b] = (uint8_t)~e[b];
                }
            }
        }
    }
    for (int64_t i = 0; i < n; i++) {
        cut_after_long_string(l, ents + (size_t)i * es);
        uint8_t *e = ents + (size_t)i * es + l->key_bytes;
        put_be32(e, refs[i].batch);
        put_be32(e + 4, refs[i].row);
    }
}

/* The references of sorted entries ents[0..n), es bytes apart (each holds its
 * batch and row after the key bytes), into refs[0..n). */
static void decode(const Layout *l, const uint8_t *ents, size_t es, int64_t n, ExRowRef *refs)
{
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *e = ents + (size_t)i * es + l->key_bytes;
        refs[i].batch = get_be32(e);
        refs[i].row = get_be32(e + 4);
    }
}

/* Rows whose encoded keys equal e are ordered by the keys from index *k on
 * (the keys before are equal), a string key from byte *str_off on; false when
 * they are equal rows (every key encoded, no string cut). */
static bool next_keys(const Layout *l, const uint8_t *e, int *k, uint32_t *str_off)
{
    for (int i = 0; i < l->n_parts && l->has_str; i++) {
        const Part *p = &l->parts[i];
        if (p->type == CM_T_VARCHAR && str_len_byte(p, e) > p->width - 1) {
            *k = i;
            *str_off = p->str_off + (uint32_t)p->width - 1;
            return true;
        }
    }
    *k = l->n_parts;
    *str_off = 0;
    return !l->is_complete;
}

/* ---- radix sort ---------------------------------------------------------------------- */

typedef struct Radix {
    size_t es;    /* entry bytes, a multiple of 8 */
    int n_bytes;  /* bytes sorted on: keys and reference */
    uint8_t *tmp; /* one entry */
} Radix;

static void swap_entries(uint8_t *x, uint8_t *y, size_t es)
{
    for (size_t b = 0; b < es; b += 8) {
        uint64_t t, u;
        memcpy(&t, x + b, 8);
        memcpy(&u, y + b, 8);
        memcpy(x + b, &u, 8);
        memcpy(y + b, &t, 8);
    }
}

/* Sorts a[0..n) on bytes [byte, n_bytes) by insertion. */
static void insertion_sort(const Radix *r, uint8_t *a, size_t n, int byte)
{
    size_t es = r->es, len = (size_t)(r->n_bytes - byte);
    for (size_t i = 1; i < n; i++) {
        if (memcmp(a + (i - 1) * es + byte, a + i * es + byte, len) <= 0) {
            continue;
        }
        memcpy(r->tmp, a + i * es, es);
        size_t j = i;
        do {
            memcpy(a + j * es, a + (j - 1) * es, es);
            j--;
        } while (j > 0 && memcmp(a + (j - 1) * es + byte, r->tmp + byte, len) > 0);
        memcpy(a + j * es, r->tmp, es);
    }
}

/* The first byte from `byte` on where some entry of a[0..n) differs from
 * a[0] (n_bytes when none does). */
static int common_bytes(const Radix *r, const uint8_t *a, size_t n, int byte)
{
    int end = r->n_bytes;
    for (size_t i = 1; i < n && end > byte; i++) {
        const uint8_t *x = a + i * r->es;
        int b = byte;
        while (b < end && x[b] == a[b]) {
            b++;
        }
        end = b;
    }
    return end;
}

/* Sorts a[0..n), equal on bytes before `byte`, in place (American flag sort);
 * recursion only where a byte splits the entries, so its depth is at most n_bytes. */
static void radix_sort(const Radix *r, uint8_t *a, size_t n, int byte)
{
    size_t es = r->es;
    while (n > INSERTION_MAX && byte < r->n_bytes) {
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++) {
            count[a[i * es + byte]]++;
        }
        if (count[a[byte]] == n) { /* the byte is common to all: skip every common byte */
            byte = common_bytes(r, a, n, byte + 1);
            continue;
        }
        size_t next[256], end[256], at = 0;
        for (int b = 0; b < 256; b++) {
            next[b] = at;
            at += count[b];
            end[b] = at;
        }
        for (int b = 0; b < 256; b++) {
            while (next[b] < end[b]) {
                uint8_t *x = a + next[b] * es;
                int d = x[byte];
                while (d != b) {
                    swap_entries(x, a + next[d]++ * es, es);
                    d = x[byte];
                }
                next[b]++;
            }
        }
        at = 0;
        for (int b = 0; b < 256; b++) {
            if (count[b] > 1) {
                radix_sort(r, a + at * es, count[b], byte + 1);
            }
            at += count[b];
        }
        return;
    }
    if (n > 1 && byte < r->n_bytes) {
        insertion_sort(r, a, n, byte);
    }
}

/* ---- parallel top level ------------------------------------------------------------ */

/* The work of one parallel sort, read by the pool's tasks, each on its own
 * slice of rows or its own bucket, so no two tasks write the same bytes.
 * The first radix split is not made in place (a serial chain of swaps) but
 * into a second array: the entries are encoded, each slice counts its rows'
 * bytes at the split and copies its entries to its own offsets in each
 * bucket of the other array, and each bucket is then radix-sorted on the
 * bytes after the split. */
typedef struct Par {
    CmPool *pool;   /* owned by ex_sort_refs */
    int n_threads;  /* workers of pool, the caller included */
    uint8_t *tmps;  /* (n_threads + 1) entries: one per worker id */
    size_t *counts; /* [n_slices][256]: rows of slice s with byte b at the split, then
                       where the slice's next row of bucket b goes */
    uint8_t *to;    /* as many entries as ents: the buckets of the split */
    const Layout *l;
    const CmBatch *const *batches;
    ExRowRef *refs;
    uint8_t *ents;
    int64_t n;
    int n_slices;
    Radix r;           /* tmp unused: each worker has its own */
    int byte;          /* the byte the first split is made on */
    size_t start[257]; /* bucket b is entries [start[b], start[b + 1]) of to */
} Par;

static void par_slice(const Par *p, int idx, int64_t *lo, int64_t *hi)
{
    *lo = p->n * idx / p->n_slices;
    *hi = p->n * (idx + 1) / p->n_slices;
}

static void par_encode(void *arg, int idx, int worker_id)
{
    const Par *p = arg;
    int64_t lo, hi;
    par_slice(p, idx, &lo, &hi);
    size_t es = p->r.es;
    memset(p->ents + (size_t)lo * es, 0, (size_t)(hi - lo) * es);
    encode(p->l, p->batches, p->refs + lo, hi - lo, p->ents + (size_t)lo * es);
}

static void par_count(void *arg, int idx, int worker_id)
{
    const Par *p = arg;
    int64_t lo, hi;
    par_slice(p, idx, &lo, &hi);
    size_t *count = p->counts + (size_t)idx * 256;
    memset(count, 0, 256 * sizeof *count);
    for (int64_t i = lo; i < hi; i++) {
        count[p->ents[(size_t)i * p->r.es + (size_t)p->byte]]++;
    }
}

static void par_scatter(void *arg, int idx, int worker_id)
{
    const Par *p = arg;
    int64_t lo, hi;
    par_slice(p, idx, &lo, &hi);
    size_t *next = p->counts + (size_t)idx * 256, es = p->r.es;
    for (int64_t i = lo; i < hi; i++) {
        const uint8_t *e = p->ents + (size_t)i * es;
        memcpy(p->to + next[e[p->byte]]++ * es, e, es);
    }
}

static void par_bucket(void *arg, int idx, int worker_id)
{
    const Par *p = arg;
    size_t lo = p->start[idx], n = p->start[idx + 1] - lo;
    if (n < 2) {
        return;
    }
    Radix r = p->r;
    r.tmp = p->tmps + (size_t)worker_id * r.es;
    radix_sort(&r, p->to + lo * r.es, n, p->byte + 1);
}

static void par_decode(void *arg, int idx, int worker_id)
{
    const Par *p = arg;
    int64_t lo, hi;
    par_slice(p, idx, &lo, &hi);
    decode(p->l, p->to + (size_t)lo * p->r.es, p->r.es, hi - lo, p->refs + lo);
}

/* Sorts p->refs[0..n) as encoding into p->ents, radix_sort and the decoding
 * after it do, on the pool's threads; the sorted entries end in p->to. */
static void par_sort(Par *p)
{
    cm_pool_run(p->pool, p->n_slices, par_encode, p);
    for (;;) {
        cm_pool_run(p->pool, p->n_slices, par_count, p);
        size_t total = 0;
        uint8_t first = p->ents[p->byte];
        for (int s = 0; s < p->n_slices; s++) {
            total += p->counts[(size_t)s * 256 + first];
        }
        if (total < (size_t)p->n) {
            break;
        }
        /* Every entry has the byte: skip the bytes all share (the references
         * differ, so some byte does). */
        p->byte = common_bytes(&p->r, p->ents, (size_t)p->n, p->byte + 1);
    }
    size_t at = 0;
    for (int b = 0; b < 256; b++) {
        p->start[b] = at;
        for (int s = 0; s < p->n_slices; s++) {
            size_t *c = &p->counts[(size_t)s * 256 + b], n = *c;
            *c = at;
            at += n;
        }
    }
    p->start[256] = at;
    cm_pool_run(p->pool, p->n_slices, par_scatter, p);
    cm_pool_run(p->pool, 256, par_bucket, p);
    cm_pool_run(p->pool, p->n_slices, par_decode, p);
}

/* ---- the sort ------------------------------------------------------------------------ */

/* Groups this small are sorted by comparison rather than encoded again. */
#define GROUP_COMPARE_MAX 32

typedef struct SortCtx {
    const CmType *types;
    const ExSortKey *keys; /* the keys still to order by; the ones before are equal */
    int n_keys;
    const CmBatch *const *batches;
} SortCtx;

/* Keys in full, then input order. */
static int compare_full(const void *x, const void *y, void *arg)
{
    const SortCtx *c = arg;
    return ex_sort_compare_refs(c->keys, c->n_keys, c->batches, x, y);
}

/* Bytes from str_off on that the first key's strings in refs[0..n) (NULLs
 * aside) all share: a long common prefix is skipped at once rather than a
 * prefix's width at a time. */
static uint32_t common_str_bytes(const SortCtx *c, uint32_t str_off, const ExRowRef *refs,
                                 int64_t n)
{
    int col = c->keys[0].col;
    const char *first = NULL;
    uint32_t common = 0;
    for (int64_t i = 0; i < n; i++) {
        const CmVec *v = &c->batches[refs[i].batch]->cols[col];
        if (cm_vec_is_null(v, refs[i].row)) {
            continue;
        }
        const CmStr *s = &((const CmStr *)v->data)[refs[i].row];
        uint32_t len = s->len > str_off ? s->len - str_off : 0;
        const char *d = cm_str_data(s) + str_off;
        if (first == NULL) {
            first = d;
            common = len;
            continue;
        }
        uint32_t b = 0, end = len < common ? len : common;
        while (b < end && d[b] == first[b]) {
            b++;
        }
        common = b;
        if (common == 0) {
            return 0;
        }
    }
    return common;
}

/* Sorts refs[0..n), equal on the keys before c->keys and on the first key's
 * string bytes before str_off, using ents (n entries of es bytes) to encode
 * them.  Each group of equal inexact encodings is sorted again in the same
 * entries, on the keys (or string bytes) the encoding left out: the recursion
 * advances a key or at least 6 bytes of a string, so it ends. */
static void sort_range(const SortCtx *c, uint32_t str_off, ExRowRef *refs, int64_t n, uint8_t *ents,
                       size_t es, uint8_t *tmp, const Par *par)
{
    if (n <= GROUP_COMPARE_MAX) {
        qsort_r(refs, (size_t)n, sizeof *refs, compare_full, (void *)c);
        return;
    }
    if (c->n_keys > 0 && c->types[c->keys[0].col].id == CM_T_VARCHAR) {
        str_off += common_str_bytes(c, str_off, refs, n);
    }
    Layout l;
    layout_init(&l, c->types, c->keys, c->n_keys, str_off, (int)es, c->batches, refs, n);
    if (l.n_parts == 0) {
        qsort_r(refs, (size_t)n, sizeof *refs, compare_full, (void *)c);
        return;
    }
    Radix r = {.es = es, .n_bytes = l.key_bytes + 8, .tmp = tmp};
    if (par != NULL) {
        Par p = *par;
        p.l = &l;
        p.batches = c->batches;
        p.refs = refs;
        p.ents = ents;
        p.n = n;
        p.r = r;
        p.byte = 0;
        par_sort(&p);
        ents = p.to; /* the sorted entries, for the groups below */
        par = NULL;  /* the groups' sorts use p.to's entries: ents is theirs no more */
    } else {
        memset(ents, 0, (size_t)n * es);
        encode(&l, c->batches, refs, n, ents);
        radix_sort(&r, ents, (size_t)n, 0);
        decode(&l, ents, es, n, refs);
    }
    for (int64_t i = 0, j; i < n; i = j) {
        const uint8_t *e = ents + (size_t)i * es;
        for (j = i + 1; j < n && memcmp(e, ents + (size_t)j * es, (size_t)l.key_bytes) == 0; j++) {
        }
        int k;
        uint32_t off;
        if (j - i > 1 && next_keys(&l, e, &k, &off)) {
            SortCtx sub = *c;
            sub.keys += k;
            sub.n_keys -= k;
            sort_range(&sub, off, refs + i, j - i, ents + (size_t)i * es, es, tmp, par);
        }
    }
}

bool ex_sort_key_parallel(int64_t n, int n_threads)
{
    return n_threads > 1 && n >= PAR_MIN_ROWS;
}

CmStatus ex_sort_refs(const CmType *types, const ExSortKey *keys, int n_keys,
                      const CmBatch *const *batches, ExRowRef *refs, int64_t n, int n_threads,
                      CmErr *err)
{
    if (n < 2) {
        return CM_OK;
    }
    SortCtx c = {.types = types, .keys = keys, .n_keys = n_keys, .batches = batches};
    Layout l;
    layout_init(&l, types, keys, n_keys, 0, 0, batches, refs, n);
    if (l.n_parts == 0) { /* the first key is not encoded: compare in full */
        qsort_r(refs, (size_t)n, sizeof *refs, compare_full, &c);
        return CM_OK;
    }
    size_t es = (size_t)l.entry_bytes;
    if (!ex_sort_key_parallel(n, n_threads)) {
        n_threads = 1;
    }
    uint8_t *ents = cm_malloc((size_t)n * es);
    uint8_t *tmp = cm_malloc(es * (size_t)(n_threads + 1));
    Par par = {.n_threads = n_threads, .tmps = tmp, .n_slices = n_threads * PAR_SLICES};
    if (n_threads > 1) {
        par.counts = cm_malloc(sizeof(size_t) * 256 * (size_t)par.n_slices);
        par.to = cm_malloc((size_t)n * es);
        /* Without them the sort still runs, on this thread alone. */
        par.pool = par.counts != NULL && par.to != NULL ? cm_pool_new(n_threads) : NULL;
    }
    CmStatus st = CM_OK;
    if (ents == NULL || tmp == NULL) {
        st = cm_err_set(err, CM_OOM, -1, "out of memory sorting %lld rows", (long long)n);
    } else {
        sort_range(&c, 0, refs, n, ents, es, tmp, par.pool != NULL ? &par : NULL);
    }
    cm_pool_free(par.pool);
    cm_free(par.counts);
    cm_free(par.to);
    cm_free(ents);
    cm_free(tmp);
    return st;
}
