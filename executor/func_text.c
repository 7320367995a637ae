/*
 * func_text.c - the string functions beyond func_string.c's core: concat,
 * concat_ws, lpad/rpad, split_part, repeat, reverse, left/right, starts_with,
 * ends_with, contains, ascii, chr, md5 and to_hex, with DuckDB's names and meanings
 * (docs/conformance.md, "String functions").
 *
 * Lengths and positions count UTF-8 code points, as length and substr do.
 * Results are slices of an argument where they can be; otherwise short ones
 * are made inline in the CmStr and long ones written into the evaluating
 * node's heap (valid until its next evaluation), one bump allocation per
 * string, never a malloc per row.
 */
#include <string.h>

#include "common/utf8case.h"
#include "executor/func_int.h"

static CmStatus text_oom(const ExExpr *e, CmErr *err)
{
    return cm_err_set(err, CM_OOM, e->src_off, "out of memory");
}

/* Where to write a result of n bytes: `small` when it fits inline (cm_str_make
 * copies it), else n bytes of the heap; NULL on OOM. */
static char *text_buf(CmArena *heap, size_t n, char *small)
{
    return n <= CM_STR_INLINE ? small : cm_arena_alloc(heap, n);
}

/* Bytes of the code point starting at s[0] (at most n). */
static size_t u8_char_len(const char *s, size_t n)
{
    size_t i = 1;
    while (i < n && ((unsigned char)s[i] & 0xc0) == 0x80) {
        i++;
    }
    return i;
}

#define ROWS_BEGIN                                                                                 \
    for (int i = 0; i < in->n_rows; i++) {                                                         \
        uint32_t p = cm_batch_pos(in, i);                                                          \
        if (cm_vec_is_null(out, p)) {                                                              \
            continue;                                                                              \
        }
#define ROWS_END }

/* ---- concat, concat_ws ------------------------------------------------------ */

/* concat(a, ...) skips NULL arguments; concat_ws(sep, a, ...) (aux 1) puts sep
 * between the non-NULL ones and is NULL only when sep is. */
static CmStatus concat_k(KERNEL_ARGS)
{
    bool ws = e->aux != 0;
    int first = ws ? 1 : 0;
    CmStr *r = out->data;
    if (ws) {
        ex_and_validity(args, 1, out);
    } else {
        out->validity = NULL;
    }
    ROWS_BEGIN
    const CmStr *sep = ws ? &((const CmStr *)args[0]->data)[p] : NULL;
    size_t n = 0;
    int n_parts = 0;
    for (int a = first; a < e->n_args; a++) {
        if (!cm_vec_is_null(args[a], p)) {
            n += ((const CmStr *)args[a]->data)[p].len;
            n_parts++;
        }
    }
    if (ws && n_parts > 1) {
        n += (size_t)(n_parts - 1) * sep->len;
    }
    char small[CM_STR_INLINE];
    char *d = text_buf(heap, n, small);
    if (d == NULL) {
        return text_oom(e, err);
    }
    size_t w = 0;
    bool is_first = true;
    for (int a = first; a < e->n_args; a++) {
        if (cm_vec_is_null(args[a], p)) {
            continue;
        }
        if (ws && !is_first) {
            memcpy(d + w, cm_str_data(sep), sep->len);
            w += sep->len;
        }
        const CmStr *s = &((const CmStr *)args[a]->data)[p];
        memcpy(d + w, cm_str_data(s), s->len);
        w += s->len;
        is_first = false;
    }
    r[p] = cm_str_make(d, (uint32_t)n);
    ROWS_END
    return CM_OK;
}

/* ---- lpad, rpad ------------------------------------------------------------- */

/* lpad/rpad(s, n, fill) (aux 1: rpad): s cut or padded to n characters with
 * fill repeated; an empty fill that would have to pad is an error, as in DuckDB. */
static CmStatus pad_k(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data, *f = args[2]->data;
    const int64_t *len = args[1]->data;
    CmStr *r = out->data;
    ex_and_validity(args, 3, out);
    ROWS_BEGIN
    const char *s = cm_str_data(&a[p]), *fill = cm_str_data(&f[p]);
    size_t n_chars = ex_utf8_len(s, a[p].len);
    int64_t want = len[p] < 0 ? 0 : len[p];
    if ((uint64_t)want <= n_chars) {
        r[p] = cm_str_make(s, (uint32_t)ex_utf8_offset(s, a[p].len, want));
        continue;
    }
    size_t n_fill_chars = ex_utf8_len(fill, f[p].len);
    if (n_fill_chars == 0) {
        return cm_err_set(err, CM_RUNTIME, e->src_off, "insufficient padding in %s",
                          e->aux ? "rpad" : "lpad");
    }
    /* The pad: (want - n_chars) characters of fill, repeated. */
    int64_t pad_chars = want - (int64_t)n_chars;
    int64_t whole = pad_chars / (int64_t)n_fill_chars, rest = pad_chars % (int64_t)n_fill_chars;
    size_t rest_bytes = ex_utf8_offset(fill, f[p].len, rest);
    if (whole > (int64_t)(UINT32_MAX / (f[p].len ? f[p].len : 1))) {
        return cm_err_set(err, CM_LIMIT, e->src_off, "result of %s is too long",
                          e->aux ? "rpad" : "lpad");
    }
    size_t pad_bytes = (size_t)whole * f[p].len + rest_bytes, n = pad_bytes + a[p].len;
    if (n > UINT32_MAX) {
        return cm_err_set(err, CM_LIMIT, e->src_off, "result of %s is too long",
                          e->aux ? "rpad" : "lpad");
    }
    char small[CM_STR_INLINE];
    char *d = text_buf(heap, n, small);
    if (d == NULL) {
        return text_oom(e, err);
    }
    char *pad = e->aux ? d + a[p].len : d;
    memcpy(e->aux ? d : d + pad_bytes, s, a[p].len);
    for (int64_t k = 0; k < whole; k++) {
        memcpy(pad + (size_t)k * f[p].len, fill, f[p].len);
    }
    memcpy(pad + (size_t)whole * f[p].len, fill, rest_bytes);
    r[p] = cm_str_make(d, (uint32_t)n);
    ROWS_END
    return CM_OK;
}

/* ---- split_part, repeat, reverse, left, right ---------------------------------- */

/* split_part(s, sep, k): the k-th field (1-based; negative from the end), ''
 * past the ends or for k = 0.  An empty sep splits into characters. */
static CmStatus split_part_k(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data, *sp = args[1]->data;
    const int64_t *idx = args[2]->data;
    CmStr *r = out->data;
    ex_and_validity(args, 3, out);
    ROWS_BEGIN
    const char *s = cm_str_data(&a[p]), *sep = cm_str_data(&sp[p]);
    size_t n = a[p].len, m = sp[p].len;
    /* Field starts and ends found left to right; the count is needed for k < 0. */
    int64_t n_fields = 0;
    size_t from = 0, to = 0;
    int64_t want = idx[p];
    r[p] = cm_str_make("", 0);
    if (want == 0 || (n == 0 && m == 0)) {
        continue;
    }
    if (want < 0) {
        /* Count the fields first: k < 0 is field n_fields + k + 1. */
        if (m == 0) {
            n_fields = (int64_t)ex_utf8_len(s, n);
        } else {
            n_fields = 1;
            for (size_t k = 0; k + m <= n;) {
                if (memcmp(s + k, sep, m) == 0) {
                    n_fields++;
                    k += m;
                } else {
                    k++;
                }
            }
        }
        want = n_fields + want + 1;
        if (want < 1) {
            continue;
        }
    }
    int64_t field = 1;
    size_t k = 0;
    from = 0;
    for (;;) {
        /* The end of the field starting at `from`. */
        if (m == 0) {
            to = from < n ? from + u8_char_len(s + from, n - from) : n;
        } else {
            to = from;
            while (to + m <= n && memcmp(s + to, sep, m) != 0) {
                to++;
            }
            if (to + m > n) {
                to = n;
            }
        }
        if (field == want) {
            r[p] = cm_str_make(s + from, (uint32_t)(to - from));
            break;
        }
        k = m == 0 ? to : to + m;
        if (to >= n || (m == 0 && k >= n)) {
            break; /* no field `want` */
        }
        from = k;
        field++;
    }
    ROWS_END
    return CM_OK;
}

static CmStatus repeat_k(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data;
    const int64_t *cnt = args[1]->data;
    CmStr *r = out->data;
    ex_and_validity(args, 2, out);
    ROWS_BEGIN
    size_t len = a[p].len;
    /* An empty string repeated any number of times is empty: copying it
     * 2^31 times would be a loop doing nothing for seconds. */
    int64_t times = cnt[p] < 0 || len == 0 ? 0 : cnt[p];
    if (len > 0 && times > (int64_t)(UINT32_MAX / len)) {
        return cm_err_set(err, CM_LIMIT, e->src_off, "result of repeat is too long");
    }
    size_t n = (size_t)times * len;
    char small[CM_STR_INLINE];
    char *d = text_buf(heap, n, small);
    if (d == NULL) {
        return text_oom(e, err);
    }
    for (int64_t k = 0; k < times; k++) {
        memcpy(d + (size_t)k * len, cm_str_data(&a[p]), len);
    }
    r[p] = cm_str_make(d, (uint32_t)n);
    ROWS_END
    return CM_OK;
}

/* reverse(s) by code point (DuckDB reverses grapheme clusters: they differ only
 * for combining sequences). */
static CmStatus reverse_k(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data;
    CmStr *r = out->data;
    ex_and_validity(args, 1, out);
    ROWS_BEGIN
    const char *s = cm_str_data(&a[p]);
    size_t n = a[p].len;
    char small[CM_STR_INLINE];
    char *d = text_buf(heap, n, small);
    if (d == NULL) {
        return text_oom(e, err);
    }
    for (size_t k = 0; k < n;) {
        size_t c = u8_char_len(s + k, n - k);
        memcpy(d + n - k - c, s + k, c);
        k += c;
    }
    r[p] = cm_str_make(d, (uint32_t)n);
    ROWS_END
    return CM_OK;
}

/* left(s, n) / right(s, n) (aux 1): the first / last n characters; a negative n
 * drops |n| characters from the other end, as in PostgreSQL and DuckDB. */
static CmStatus left_right_k(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data;
    const int64_t *cnt = args[1]->data;
    CmStr *r = out->data;
    ex_and_validity(args, 2, out);
    ROWS_BEGIN
    const char *s = cm_str_data(&a[p]);
    size_t n = a[p].len;
    int64_t k = cnt[p];
    int64_t n_chars = (k < 0 || e->aux) ? (int64_t)ex_utf8_len(s, n) : INT64_MAX;
    int64_t take = k >= 0 ? (k < n_chars ? k : n_chars) : (n_chars + k > 0 ? n_chars + k : 0);
    if (e->aux) {
        size_t from = ex_utf8_offset(s, n, n_chars - take);
        r[p] = cm_str_make(s + from, (uint32_t)(n - from));
    } else {
        r[p] = cm_str_make(s, (uint32_t)ex_utf8_offset(s, n, take));
    }
    ROWS_END
    return CM_OK;
}

/* ---- predicates --------------------------------------------------------------- */

/* aux 0 starts_with, 1 ends_with, 2 contains. */
static CmStatus affix_k(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data, *b = args[1]->data;
    uint8_t *r = out->data;
    ex_and_validity(args, 2, out);
    ROWS_BEGIN
    const char *s = cm_str_data(&a[p]), *t = cm_str_data(&b[p]);
    size_t n = a[p].len, m = b[p].len;
    bool hit = false;
    if (m <= n) {
        if (e->aux == 0) {
            hit = memcmp(s, t, m) == 0;
        } else if (e->aux == 1) {
            hit = memcmp(s + n - m, t, m) == 0;
        } else {
            hit = m == 0;
            for (size_t k = 0; !hit && k + m <= n; k++) {
                hit = s[k] == t[0] && memcmp(s + k, t, m) == 0;
            }
        }
    }
    r[p] = hit;
    ROWS_END
    return CM_OK;
}

/* ---- ascii, chr ------------------------------------------------------------------ */

/* ascii(s): the code point of the first character, 0 for ''; U+FFFD (65533) when
 * the text starts with an invalid UTF-8 sequence. */
static CmStatus ascii_k(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data;
    int64_t *r = out->data;
    ex_and_validity(args, 1, out);
    ROWS_BEGIN
    uint32_t cp = 0;
    if (a[p].len > 0) {
        cm_utf8_decode(cm_str_data(&a[p]), a[p].len, &cp);
    }
    r[p] = cp;
    ROWS_END
    return CM_OK;
}

/* chr(n): the character of code point n; outside Unicode (or a surrogate) an error. */
static CmStatus chr_k(KERNEL_ARGS)
{
    const int64_t *a = args[0]->data;
    CmStr *r = out->data;
    ex_and_validity(args, 1, out);
    ROWS_BEGIN
    int64_t c = a[p];
    if (c < 0 || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) {
        return cm_err_set(err, CM_RUNTIME, e->src_off, "invalid UTF-8 code point %lld",
                          (long long)c);
    }
    char d[4];
    size_t n = cm_utf8_encode((uint32_t)c, d);
    r[p] = cm_str_make(d, (uint32_t)n);
    ROWS_END
    return CM_OK;
}

/* ---- md5 (RFC 1321) ------------------------------------------------------------------ */

static const uint32_t MD5_K[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
static const uint8_t MD5_R[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                                  5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                                  4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                                  6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

static void md5_block(uint32_t h[4], const unsigned char *blk)
{
    uint32_t w[16];
    for (int k = 0; k < 16; k++) {
        w[k] = (uint32_t)blk[4 * k] | (uint32_t)blk[4 * k + 1] << 8 |
               (uint32_t)blk[4 * k + 2] << 16 | (uint32_t)blk[4 * k + 3] << 24;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
    for (int k = 0; k < 64; k++) {
        uint32_t f;
        int g;
        if (k < 16) {
            f = (b & c) | (~b & d);
            g = k;
        } else if (k < 32) {
            f = (d & b) | (~d & c);
            g = (5 * k + 1) % 16;
        } else if (k < 48) {
            f = b ^ c ^ d;
            g = (3 * k + 5) % 16;
        } else {
            f = c ^ (b | ~d);
            g = (7 * k) % 16;
        }
        uint32_t t = d;
        d = c;
        c = b;
        uint32_t x = a + f + MD5_K[k] + w[g];
        b = b + ((x << MD5_R[k]) | (x >> (32 - MD5_R[k])));
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
}

/* The 32 lowercase hex digits of the MD5 of s[0..n) into hex. */
static void md5_hex(const char *s, size_t n, char hex[32])
{
    uint32_t h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
    size_t k = 0;
    for (; k + 64 <= n; k += 64) {
        md5_block(h, (const unsigned char *)s + k);
    }
    unsigned char tail[128] = {0};
    size_t rest = n - k;
    memcpy(tail, s + k, rest);
    tail[rest] = 0x80;
    size_t tail_n = rest + 1 + 8 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)n * 8;
    for (int b = 0; b < 8; b++) {
        tail[tail_n - 8 + b] = (unsigned char)(bits >> (8 * b));
    }
    for (size_t t = 0; t < tail_n; t += 64) {
        md5_block(h, tail + t);
    }
    static const char DIGITS[] = "0123456789abcdef";
    for (int w = 0; w < 16; w++) {
        unsigned char byte = (unsigned char)(h[w / 4] >> (8 * (w % 4)));
        hex[2 * w] = DIGITS[byte >> 4];
        hex[2 * w + 1] = DIGITS[byte & 15];
    }
}

static CmStatus md5_k(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data;
    CmStr *r = out->data;
    ex_and_validity(args, 1, out);
    ROWS_BEGIN
    char *d = cm_arena_alloc(heap, 32);
    if (d == NULL) {
        return text_oom(e, err);
    }
    md5_hex(cm_str_data(&a[p]), a[p].len, d);
    r[p] = cm_str_make(d, 32);
    ROWS_END
    return CM_OK;
}

/* ---- to_hex ------------------------------------------------------------------------ */

/* to_hex of a BIGINT (aux 0): its 64 bits in upper-case hex without leading
 * zeros (-1 is 16 Fs), as DuckDB; of a VARCHAR (aux 1): each byte's two digits. */
static CmStatus to_hex_k(KERNEL_ARGS)
{
    static const char DIGITS[] = "0123456789ABCDEF";
    CmStr *r = out->data;
    ex_and_validity(args, 1, out);
    ROWS_BEGIN
    char small[CM_STR_INLINE], *d;
    size_t n = 0;
    if (e->aux == 0) {
        uint64_t v = (uint64_t)((const int64_t *)args[0]->data)[p];
        char tmp[16];
        do {
            tmp[n++] = DIGITS[v & 15];
            v >>= 4;
        } while (v != 0);
        if ((d = text_buf(heap, n, small)) == NULL) {
            return text_oom(e, err);
        }
        for (size_t k = 0; k < n; k++) {
            d[k] = tmp[n - 1 - k];
        }
    } else {
        const CmStr *a = &((const CmStr *)args[0]->data)[p];
        const unsigned char *src = (const unsigned char *)cm_str_data(a);
        n = (size_t)a->len * 2;
        if ((d = text_buf(heap, n, small)) == NULL) {
            return text_oom(e, err);
        }
        for (uint32_t k = 0; k < a->len; k++) {
            d[2 * k] = DIGITS[src[k] >> 4];
            d[2 * k + 1] = DIGITS[src[k] & 15];
        }
    }
    r[p] = cm_str_make(d, (uint32_t)n);
    ROWS_END
    return CM_OK;
}

/* ---- resolution ------------------------------------------------------------------------ */

CmStatus ex_resolve_text(const char *name, int n_args, const CmType *types, int64_t off,
                         ExFuncMatch *m, CmErr *err)
{
    CmType str = cm_type_varchar(-1, false), i64 = cm_type_make(CM_T_INT64);
    if ((!strcmp(name, "to_hex") || !strcmp(name, "hex")) && n_args == 1) {
        bool is_text = types[0].id == CM_T_VARCHAR;
        if (!is_text && !cm_type_is_integer(types[0]) && types[0].id != CM_T_NULL) {
            char tn[32];
            return cm_err_set(err, CM_TYPE, off, "%s expects an integer or VARCHAR, not %s", name,
                              cm_type_name(types[0], tn, sizeof tn));
        }
        m->arg_types[0] = is_text ? str : i64;
        m->result = str;
        m->kernel = to_hex_k;
        m->aux = is_text;
        return CM_OK;
    }
    static const struct {
        const char *name;
        int n_args;
        ExKernel k;
        int64_t aux;
        char sig[4]; /* s string, i BIGINT; then the result */
        char res;
    } FIXED[] = {
        {"lpad", 3, pad_k, 0, "sis", 's'},
        {"rpad", 3, pad_k, 1, "sis", 's'},
        {"split_part", 3, split_part_k, 0, "ssi", 's'},
        {"repeat", 2, repeat_k, 0, "si", 's'},
        {"reverse", 1, reverse_k, 0, "s", 's'},
        {"left", 2, left_right_k, 0, "si", 's'},
        {"right", 2, left_right_k, 1, "si", 's'},
        {"starts_with", 2, affix_k, 0, "ss", 'b'},
        {"prefix", 2, affix_k, 0, "ss", 'b'},
        {"ends_with", 2, affix_k, 1, "ss", 'b'},
        {"suffix", 2, affix_k, 1, "ss", 'b'},
        {"contains", 2, affix_k, 2, "ss", 'b'},
        {"ascii", 1, ascii_k, 0, "s", 'i'},
        {"chr", 1, chr_k, 0, "i", 's'},
        {"md5", 1, md5_k, 0, "s", 's'},
    };
    for (size_t f = 0; f < sizeof FIXED / sizeof FIXED[0]; f++) {
        if (strcmp(name, FIXED[f].name) != 0) {
            continue;
        }
        if (n_args != FIXED[f].n_args) {
            return EX_NOT_MINE; /* reported as an unknown function with that count */
        }
        for (int a = 0; a < n_args; a++) {
            CmType want = FIXED[f].sig[a] == 's' ? str : i64;
            /* A string constant converts to the integer it spells (pl_cast_implicit). */
            bool ok = types[a].id == CM_T_NULL || types[a].id == CM_T_VARCHAR ||
                      (want.id == CM_T_INT64 && cm_type_is_numeric(types[a]));
            if (!ok) {
                char tn[32];
                return cm_err_set(err, CM_TYPE, off, "%s expects %s for argument %d, not %s", name,
                                  want.id == CM_T_VARCHAR ? "VARCHAR" : "an integer", a + 1,
                                  cm_type_name(types[a], tn, sizeof tn));
            }
            m->arg_types[a] = want;
        }
        m->result = FIXED[f].res == 's' ? str : FIXED[f].res == 'i' ? i64 : cm_type_make(CM_T_BOOL);
        m->kernel = FIXED[f].k;
        m->aux = FIXED[f].aux;
        return CM_OK;
    }
    bool ws = strcmp(name, "concat_ws") == 0;
    if (ws || strcmp(name, "concat") == 0) {
        if (n_args < (ws ? 2 : 1)) {
            return EX_NOT_MINE;
        }
        for (int a = 0; a < n_args; a++) {
            if (types[a].id == CM_T_LIST && !ws) {
                /* concat of lists is list_concat, as in DuckDB: one list, NULLs skipped */
                for (int b = 0; b < n_args; b++) {
                    if (types[b].id != CM_T_LIST && types[b].id != CM_T_NULL) {
                        char tn[32], tl[32];
                        return cm_err_set(err, CM_TYPE, off,
                                          "concat cannot join %s (argument %d) with a list (%s)",
                                          cm_type_name(types[b], tn, sizeof tn), b + 1,
                                          cm_type_name(types[a], tl, sizeof tl));
                    }
                }
                return ex_resolve_list("list_concat", n_args, types, off, m, err);
            }
            if (types[a].id == CM_T_LIST) {
                /* a list's text joined would not be DuckDB's answer */
                char tn[32];
                return cm_err_set(err, CM_TYPE, off, "%s cannot take a list (argument %d is %s)",
                                  name, a + 1, cm_type_name(types[a], tn, sizeof tn));
            }
            m->arg_types[a] = str; /* any other value converts to text */
        }
        m->result = str;
        m->kernel = concat_k;
        m->aux = ws;
        return CM_OK;
    }
    return EX_NOT_MINE;
}
