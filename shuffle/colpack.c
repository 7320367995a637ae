/*
 * colpack.c - frame-of-reference and dictionary encodings of block columns
 * (colpack.h).  Values are packed LSB first into 64-bit words; a value may
 * straddle two words.  The encoder measures first and writes only when the
 * encoding is smaller than the plain form.
 */
#include "shuffle/colpack.h"

#include <string.h>

#include "common/hash.h"

/* Words holding n values of `bits` bits. */
static size_t packed_words(int n, int bits)
{
    return ((size_t)n * (size_t)bits + 63) / 64;
}

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static void pack(const uint64_t *vals, int n, int bits, uint64_t *out)
{
    memset(out, 0, packed_words(n, bits) * 8);
    if (bits == 0) {
        return;
    }
    for (int i = 0; i < n; i++) {
        size_t bit = (size_t)i * (size_t)bits;
        size_t w = bit >> 6;
        unsigned off = (unsigned)(bit & 63);
        out[w] |= vals[i] << off;
        if (off + (unsigned)bits > 64) {
            out[w + 1] |= vals[i] >> (64 - off);
        }
    }
}

static inline uint64_t unpack_at(const uint64_t *in, int i, int bits, uint64_t mask)
{
    if (bits == 0) {
        return 0; /* a constant: no words to read */
    }
    size_t bit = (size_t)i * (size_t)bits;
    size_t w = bit >> 6;
    unsigned off = (unsigned)(bit & 63);
    uint64_t x = in[w] >> off;
    if (off + (unsigned)bits > 64) {
        x |= in[w + 1] << (64 - off);
    }
    return x & mask;
}

/* Values i0..n of `bits` <= 56 bits into out[i] = base + value: each read as
 * 8 unaligned bytes from its first byte, without a branch; the last values,
 * whose 8 bytes would pass the packed words, the careful way. */
#define UNPACK_LOOP(T, CONV)                                                                       \
    do {                                                                                           \
        T *o = (T *)v->data;                                                                       \
        const unsigned char *bytes = (const unsigned char *)pk;                                    \
        size_t limit = words * 8;                                                                  \
        int i = 0;                                                                                 \
        if (bits <= 56) {                                                                          \
            for (; i < n; i++) {                                                                   \
                size_t bit = (size_t)i * (size_t)bits;                                             \
                if ((bit >> 3) + 8 > limit) {                                                      \
                    break;                                                                         \
                }                                                                                  \
                uint64_t x;                                                                        \
                memcpy(&x, bytes + (bit >> 3), 8);                                                 \
                o[i] = CONV(base + ((x >> (bit & 7)) & mask));                                     \
            }                                                                                      \
        }                                                                                          \
        for (; i < n; i++) {                                                                       \
            o[i] = CONV(base + unpack_at(pk, i, bits, mask));                                      \
        }                                                                                          \
    } while (0)

#define AS_BOOL(x) ((uint8_t)((x) != 0)) /* a BOOLEAN is 0 or 1 whatever the payload says */
#define AS_I32(x) ((int32_t)(uint32_t)(x))
#define AS_I64(x) ((int64_t)(x))

static uint64_t mask_of(int bits)
{
    return bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
}

/* The byte width of an integer-like type's values, or 0 for other types. */
static size_t int_width(CmTypeId id)
{
    switch (id) {
    case CM_T_BOOL:
        return 1;
    case CM_T_INT32:
    case CM_T_DATE:
        return 4;
    case CM_T_INT64:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
    case CM_T_DECIMAL:
        return 8;
    default:
        return 0;
    }
}

static int64_t int_at(const void *data, size_t w, uint32_t p)
{
    switch (w) {
    case 1:
        return ((const uint8_t *)data)[p];
    case 4:
        return ((const int32_t *)data)[p];
    default:
        return ((const int64_t *)data)[p];
    }
}

static uint32_t row_pos(const CmBatch *b, const CmVec *v, int i)
{
    return v->kind == CM_VEC_CONST ? 0 : cm_batch_pos(b, i);
}

static unsigned char *encode_for(const CmBatch *b, const CmVec *v, size_t w, size_t plain_bytes,
                                 unsigned char *flag, unsigned char *out)
{
    int n = b->n_rows;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int i = 0; i < n; i++) {
        uint32_t p = row_pos(b, v, i);
        if (!cm_vec_is_null(v, p)) {
            int64_t x = int_at(v->data, w, p);
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
    }
    if (lo > hi) {
        lo = hi = 0; /* every row NULL */
    }
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    int bits = range == 0 ? 0 : 64 - __builtin_clzll(range);
    size_t bytes = 8 + packed_words(n, bits) * 8;
    if (bytes >= plain_bytes) {
        return NULL;
    }
    uint64_t vals[CM_BATCH_CAP];
    for (int i = 0; i < n; i++) {
        uint32_t p = row_pos(b, v, i);
        vals[i] = cm_vec_is_null(v, p) ? 0 : (uint64_t)int_at(v->data, w, p) - (uint64_t)lo;
    }
    memcpy(out, &lo, 8);
    pack(vals, n, bits, (uint64_t *)(void *)(out + 8));
    flag[1] = SH_COL_FOR;
    flag[2] = (unsigned char)bits;
    return out + bytes;
}

/* Slots of the dictionary's hash table: a power of two, at least twice the rows. */
#define DICT_SLOTS (4 * CM_BATCH_CAP + 8)

static unsigned char *encode_dict(const CmBatch *b, const CmVec *v, size_t plain_bytes,
                                  unsigned char *flag, unsigned char *out)
{
    int n = b->n_rows;
    int slots = 8;
    while (slots < 2 * n) {
        slots *= 2;
    }
    int32_t slot[DICT_SLOTS]; /* dictionary entry + 1; 0: empty */
    memset(slot, 0, sizeof(int32_t) * (size_t)slots);
    const CmStr *ent[CM_BATCH_CAP];
    uint64_t codes[CM_BATCH_CAP];
    const CmStr *strs = v->data;
    int n_dict = 0;
    size_t dict_bytes = 0;
    for (int i = 0; i < n; i++) {
        uint32_t p = row_pos(b, v, i);
        if (cm_vec_is_null(v, p)) {
            codes[i] = 0;
            continue;
        }
        const CmStr *s = &strs[p];
        size_t at = cm_hash_bytes(cm_str_data(s), s->len) & (size_t)(slots - 1);
        while (slot[at] != 0 && !cm_str_eq(ent[slot[at] - 1], s)) {
            at = (at + 1) & (size_t)(slots - 1);
        }
        if (slot[at] == 0) {
            ent[n_dict] = s;
            slot[at] = ++n_dict;
            dict_bytes += s->len;
            if (8 + 4 * (size_t)n_dict + dict_bytes >= plain_bytes) {
                return NULL; /* the dictionary alone is as large as the plain form */
            }
        }
        codes[i] = (uint64_t)(slot[at] - 1);
    }
    int bits = n_dict <= 1 ? 0 : 64 - __builtin_clzll((uint64_t)(n_dict - 1));
    size_t head = align8(8 + 4 * (size_t)n_dict + dict_bytes);
    size_t bytes = head + packed_words(n, bits) * 8;
    if (bytes >= plain_bytes) {
        return NULL;
    }
    uint32_t count = (uint32_t)n_dict, zero = 0;
    memcpy(out, &count, 4);
    memcpy(out + 4, &zero, 4);
    unsigned char *lens = out + 8;
    unsigned char *data = lens + 4 * (size_t)n_dict;
    for (int k = 0; k < n_dict; k++) {
        uint32_t len = ent[k]->len;
        memcpy(lens + 4 * (size_t)k, &len, 4);
        memcpy(data, cm_str_data(ent[k]), len);
        data += len;
    }
    memset(data, 0, (size_t)(out + head - data));
    pack(codes, n, bits, (uint64_t *)(void *)(out + head));
    flag[1] = SH_COL_DICT;
    flag[2] = (unsigned char)bits;
    return out + bytes;
}

unsigned char *sh_colpack_encode(const CmBatch *b, int c, size_t plain_bytes, unsigned char *flag,
                                 unsigned char *out)
{
    const CmVec *v = &b->cols[c];
    size_t w = int_width((CmTypeId)v->type.id);
    if (w > 0) {
        return encode_for(b, v, w, plain_bytes, flag, out);
    }
    if (v->type.id == CM_T_VARCHAR) {
        return encode_dict(b, v, plain_bytes, flag, out);
    }
    return NULL;
}

static const unsigned char *decode_for(int bits, const unsigned char *in, const unsigned char *end,
                                       int n, CmVec *v)
{
    size_t w = int_width((CmTypeId)v->type.id);
    size_t words = packed_words(n, bits);
    if (w == 0 || (size_t)(end - in) < 8 + words * 8) {
        return NULL;
    }
    int64_t ref;
    memcpy(&ref, in, 8);
    const uint64_t *pk = (const uint64_t *)(const void *)(in + 8);
    uint64_t mask = mask_of(bits);
    uint64_t base = (uint64_t)ref;
    switch (w) {
    case 1:
        UNPACK_LOOP(uint8_t, AS_BOOL);
        break;
    case 4:
        UNPACK_LOOP(int32_t, AS_I32);
        break;
    default:
        UNPACK_LOOP(int64_t, AS_I64);
        break;
    }
    return in + 8 + words * 8;
}

static const unsigned char *decode_dict(int bits, const unsigned char *in, const unsigned char *end,
                                        int n, CmVec *v, CmArena *heap, CmErr *err)
{
    if (v->type.id != CM_T_VARCHAR || bits > 32 || end - in < 8) {
        return NULL;
    }
    uint32_t n_dict;
    memcpy(&n_dict, in, 4);
    const unsigned char *lens = in + 8;
    if (n_dict > (uint32_t)n || (size_t)(end - lens) < 4 * (size_t)n_dict) {
        return NULL;
    }
    uint32_t offs[CM_BATCH_CAP + 1];
    size_t total = 0;
    const unsigned char *bytes = lens + 4 * (size_t)n_dict;
    for (uint32_t k = 0; k < n_dict; k++) {
        uint32_t len;
        memcpy(&len, lens + 4 * (size_t)k, 4);
        offs[k] = (uint32_t)total;
        total += len;
        if (total > (size_t)(end - bytes)) {
            return NULL;
        }
    }
    offs[n_dict] = (uint32_t)total;
    const unsigned char *codes = in + align8((size_t)(bytes - in) + total);
    size_t words = packed_words(n, bits);
    if (codes > end || (size_t)(end - codes) < words * 8) {
        return NULL;
    }
    char *copy = total ? cm_arena_alloc(heap, total) : NULL;
    if (total && copy == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory decoding a block");
        return NULL;
    }
    if (total) {
        memcpy(copy, bytes, total);
    }
    const char *base = copy != NULL ? copy : ""; /* NULL + 0 is undefined in C */
    const uint64_t *pk = (const uint64_t *)(const void *)codes;
    uint64_t mask = mask_of(bits);
    CmStr *out = v->data;
    for (int i = 0; i < n; i++) {
        uint64_t code = unpack_at(pk, i, bits, mask);
        if (code >= n_dict) {
            if (n_dict > 0 || !cm_vec_is_null(v, (uint32_t)i)) {
                return NULL; /* a code past the dictionary */
            }
            out[i] = cm_str_make(base, 0);
            continue;
        }
        out[i] = cm_str_make(base + offs[code], offs[code + 1] - offs[code]);
    }
    return codes + words * 8;
}

const unsigned char *sh_colpack_decode(int enc, int bits, const unsigned char *in,
                                       const unsigned char *end, int n, CmVec *v, CmArena *heap,
                                       CmErr *err)
{
    if (bits < 0 || bits > 64) {
        return NULL;
    }
    if (enc == SH_COL_FOR) {
        return decode_for(bits, in, end, n, v);
    }
    if (enc == SH_COL_DICT) {
        return decode_dict(bits, in, end, n, v, heap, err);
    }
    return NULL;
}
