/*
 * types.h - logical types (CmType), strings (CmStr) and constant values (CmValue).
 *
 * Each logical type has one physical representation in vectors:
 *   BOOLEAN uint8_t (0/1), INTEGER int32_t, DATE int32_t (days since 1970-01-01),
 *   BIGINT int64_t, DECIMAL(p,s) int64_t scaled by 10^s (p <= 18; DECIMAL128 for
 *   19 <= p <= 38: 16 bytes holding a CmInt128, read through cm_i128_get), DOUBLE double,
 *   TIME int64_t (microseconds since midnight), TIMESTAMP int64_t
 *   (microseconds since 1970-01-01 00:00:00, no time zone), INTERVAL
 *   CmInterval (16 bytes: months, days, microseconds, as PostgreSQL),
 *   VARCHAR/CHAR CmStr, NULL (the type of an untyped NULL literal) uint8_t,
 *   LIST (`INTEGER[]`, `VARCHAR[]`: one level, scalar elements) CmList.
 * CmStr is 16 bytes: strings up to 12 bytes are stored inline, longer ones
 * keep a 4-byte prefix inline and point at bytes owned by an arena or CmBuf
 * that outlives the vector (see STYLE.md, "Memory and ownership").
 * CmList follows the same discipline: 16 bytes in the vector (length, flags,
 * pointer) and the elements, packed in the element type's physical form, in
 * the same arena or CmBuf as a long string's bytes (a VARCHAR element's own
 * long bytes live there too).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum CmTypeId {
    CM_T_NULL = 0,
    CM_T_BOOL,
    CM_T_INT32,
    CM_T_INT64,
    CM_T_DOUBLE,
    CM_T_DECIMAL,
    CM_T_VARCHAR,
    CM_T_DATE,
    CM_T_TIME,       /* time of day: int64 microseconds since midnight */
    CM_T_LIST,       /* elements of type `child` (a scalar id), CmList */
    CM_T_TIMESTAMP,  /* int64 microseconds since 1970-01-01 00:00:00 */
    CM_T_INTERVAL,   /* CmInterval */
    CM_T_DECIMAL128, /* DECIMAL(19..38, s): a CmInt128 scaled by 10^s, 16 bytes */
} CmTypeId;

/* A 128-bit integer: the wide DECIMAL's value and the exact accumulators.
 * __extension__ keeps -Wpedantic quiet; use this name rather than spelling
 * __int128 elsewhere.  Vectors and arenas promise no 16-byte alignment, so a
 * stored one is read and written through cm_i128_get/cm_i128_put only. */
__extension__ typedef __int128 CmInt128;
__extension__ typedef unsigned __int128 CmUInt128;

static inline CmInt128 cm_i128_get(const void *p)
{
    CmInt128 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void cm_i128_put(void *p, CmInt128 v)
{
    memcpy(p, &v, sizeof v);
}

typedef struct CmType {
    uint8_t id;        /* CmTypeId */
    uint8_t precision; /* DECIMAL: total digits, 1..18; DECIMAL128: 19..38 */
    uint8_t scale;     /* DECIMAL: digits after the point */
    uint8_t is_char;   /* VARCHAR: declared CHAR(n) (blank-padded semantics) */
    int32_t length;    /* VARCHAR/CHAR: declared max length, -1 when unbounded */
    uint8_t child;     /* LIST: the element's CmTypeId (precision and scale above
                          describe a DECIMAL element); 0 otherwise */
} CmType;

#define CM_STR_INLINE 12

typedef struct CmStr {
    uint32_t len; /* bytes */
    char prefix[4];
    union {
        char rest[8];    /* inline tail when len <= CM_STR_INLINE */
        const char *ptr; /* whole string when len > CM_STR_INLINE */
    };
} CmStr;

/* A LIST value: `len` elements of the element type's width at `data`; when
 * `has_nulls`, the elements' validity bitmap (bit set = valid) follows at
 * data + cm_list_bits_off(len, width).  Bytes owned like a long string's. */
typedef struct CmList {
    uint32_t len;       /* elements */
    uint32_t has_nulls; /* 1 when the bitmap after the elements is present */
    const void *data;   /* NULL when len is 0 */
} CmList;

/* An INTERVAL: three parts kept apart, since a month has no fixed number of
 * days nor a day (across a DST change elsewhere) of microseconds.  Compared
 * and hashed by its span with a month as 30 days (cm_interval_span). */
typedef struct CmInterval {
    int32_t months;
    int32_t days;
    int64_t micros;
} CmInterval;

typedef struct CmValue {
    CmType type;
    bool is_null;
    union {
        int64_t i;     /* BOOL, INT32, INT64, DECIMAL, DATE, TIME, TIMESTAMP */
        uint64_t h[2]; /* DECIMAL128: a CmInt128 (cm_i128_get(v.h)), never read as i */
        double d;      /* DOUBLE */
        CmStr s;       /* VARCHAR: bytes in the owner's arena */
        CmList l;      /* LIST: elements in the owner's arena */
        CmInterval iv; /* INTERVAL */
    };
} CmValue;

static inline const char *cm_str_data(const CmStr *s)
{
    return s->len <= CM_STR_INLINE ? s->prefix : s->ptr;
}

/* Makes a CmStr over bytes that must outlive it (copied inline when short). */
static inline CmStr cm_str_make(const char *data, uint32_t len)
{
    CmStr s;
    memset(&s, 0, sizeof s);
    s.len = len;
    if (len == 0) {
        return s; /* data may be NULL */
    }
    if (len <= CM_STR_INLINE) {
        memcpy(s.prefix, data, len);
    } else {
        memcpy(s.prefix, data, 4);
        s.ptr = data;
    }
    return s;
}

/* The inline bytes of a short string (len <= CM_STR_INLINE): the first 8 in
 * *lo, the next 4 in *hi, the bytes past len masked off, so that neither
 * equality nor a hash depends on what its maker left there.  Little-endian:
 * the first byte is the low one. */
static inline void cm_str_inline_masks(uint32_t n, uint64_t *lo, uint32_t *hi)
{
    *lo = n >= 8 ? ~0ULL : (1ULL << (8 * n)) - 1;
    *hi = n >= 12 ? ~0U : n <= 8 ? 0U : (uint32_t)((1ULL << (8 * (n - 8))) - 1);
}

static inline void cm_str_inline_words(const CmStr *s, uint64_t *lo, uint64_t *hi)
{
    uint64_t a, ma;
    uint32_t b, mb;
    memcpy(&a, (const char *)s + offsetof(CmStr, prefix), 8);
    memcpy(&b, (const char *)s + offsetof(CmStr, prefix) + 8, 4);
    cm_str_inline_masks(s->len, &ma, &mb);
    *lo = a & ma;
    *hi = b & mb;
}

static inline bool cm_str_eq(const CmStr *a, const CmStr *b)
{
    if (a->len != b->len) {
        return false;
    }
    if (a->len <= CM_STR_INLINE) { /* two words each, no call */
        uint64_t a0, a1, b0, b1;
        cm_str_inline_words(a, &a0, &a1);
        cm_str_inline_words(b, &b0, &b1);
        return a0 == b0 && a1 == b1;
    }
    return memcmp(a->prefix, b->prefix, 4) == 0 && memcmp(a->ptr, b->ptr, a->len) == 0;
}

/* memcmp order, shorter first on a common prefix. */
int cm_str_cmp(const CmStr *a, const CmStr *b);

CmType cm_type_make(CmTypeId id);
/* DECIMAL(p,s): CM_T_DECIMAL for p <= 18, CM_T_DECIMAL128 for 19..38. */
CmType cm_type_decimal(int precision, int scale);
CmType cm_type_varchar(int32_t length, bool is_char);
/* The LIST type of elements `elem` (a scalar type), and a LIST's element type. */
CmType cm_type_list(CmType elem);
CmType cm_type_elem(CmType list);

/* Offset of a list's element bitmap: after the elements, 8-byte aligned. */
static inline size_t cm_list_bits_off(uint32_t len, size_t width)
{
    return ((size_t)len * width + 7) & ~(size_t)7;
}

/* Bytes of a list's block: its elements and, when has_nulls, their bitmap. */
static inline size_t cm_list_bytes(uint32_t len, size_t width, bool has_nulls)
{
    return cm_list_bits_off(len, width) + (has_nulls ? ((size_t)len + 63) / 64 * 8 : 0);
}

static inline bool cm_list_is_null(const CmList *l, size_t width, uint32_t k)
{
    if (!l->has_nulls) {
        return false;
    }
    const uint64_t *bits =
        (const uint64_t *)((const char *)l->data + cm_list_bits_off(l->len, width));
    return !((bits[k >> 6] >> (k & 63)) & 1);
}

/* Bytes of one value in a vector's data buffer. */
size_t cm_type_width(CmType t);
bool cm_type_eq(CmType a, CmType b);
bool cm_type_is_numeric(CmType t);
bool cm_type_is_integer(CmType t);
/* DECIMAL of either width. */
static inline bool cm_type_is_decimal(CmType t)
{
    return t.id == CM_T_DECIMAL || t.id == CM_T_DECIMAL128;
}

/* The SQL name, e.g. "INTEGER", "DECIMAL(7,2)", "VARCHAR(10)"; in buf (>= 32 bytes). */
const char *cm_type_name(CmType t, char *buf, size_t cap);
