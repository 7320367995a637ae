/*
 * func_list.c - the LIST functions: list_value ([a, b]), string_split,
 * len, list_extract (l[i]), list_contains and list_concat (and `||` of two
 * lists), with DuckDB's names and semantics.
 *
 * A list a kernel makes is one block in the expression's heap (elements, then
 * their bitmap when one is NULL), the same discipline as a long string: no
 * allocation of its own, valid until the next evaluation.  string_split does
 * not copy the text: its elements point into the input string's bytes, which
 * outlive the output as any string argument does.  unnest is not here: it
 * changes the number of rows, so it is an operator (executor/unnest.c).
 */
#include <stdio.h>
#include <string.h>

#include "executor/func_int.h"
#include "executor/hashing.h"

/* A new list of n elements of width w in heap: *out points at it; the
 * bitmap, when has_nulls, starts all valid.  NULL with err on OOM; for n = 0
 * a non-NULL pointer to nothing (the list's data stays NULL). */
static char *list_new(CmArena *heap, uint32_t n, size_t w, bool has_nulls, CmList *out,
                      CmErr *err)
{
    *out = (CmList){.len = n, .has_nulls = has_nulls};
    if (n == 0) {
        return (char *)"";
    }
    char *p = cm_arena_alloc(heap, cm_list_bytes(n, w, has_nulls));
    if (p == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory building a list");
        return NULL;
    }
    if (has_nulls) {
        memset(p + cm_list_bits_off(n, w), 0xff, ((size_t)n + 63) / 64 * 8);
    }
    out->data = p;
    return p;
}

static void list_set_null(CmList *l, size_t w, uint32_t k)
{
    uint64_t *bits = (uint64_t *)((char *)l->data + cm_list_bits_off(l->len, w));
    bits[k >> 6] &= ~((uint64_t)1 << (k & 63));
}

/* list_value(a, b, ...): one list per row, NULL arguments as NULL elements. */
static CmStatus list_value_k(KERNEL_ARGS)
{
    size_t w = cm_type_width(cm_type_elem(e->type));
    uint32_t n = (uint32_t)e->n_args;
    CmList *r = out->data;
    out->validity = NULL;
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        bool has_nulls = false;
        for (uint32_t k = 0; k < n; k++) {
            has_nulls |= cm_vec_is_null(args[k], p);
        }
        char *d = list_new(heap, n, w, has_nulls, &r[p], err);
        if (d == NULL) {
            return err->code;
        }
        for (uint32_t k = 0; k < n; k++) {
            if (cm_vec_is_null(args[k], p)) {
                list_set_null(&r[p], w, k);
                memset(d + w * k, 0, w);
            } else {
                memcpy(d + w * k, (const char *)args[k]->data + w * p, w);
            }
        }
    }
    return CM_OK;
}

/* Bytes of the UTF-8 character starting at s[0] (1 for a stray byte). */
static size_t utf8_char_len(const char *s, size_t n)
{
    size_t k = 1;
    while (k < n && ((unsigned char)s[k] & 0xC0) == 0x80) {
        k++;
    }
    return k;
}

/* The characters of s (UTF-8), the pieces of an empty separator: counted,
 * and written to out when it is not NULL. */
static uint32_t split_chars(const char *s, size_t n, CmStr *out)
{
    uint32_t k = 0;
    for (size_t at = 0; at < n; k++) {
        size_t len = utf8_char_len(s + at, n - at);
        if (out != NULL) {
            out[k] = cm_str_make(s + at, (uint32_t)len);
        }
        at += len;
    }
    return k;
}

/* *dst = the piece s[start, start + len) of a string of n bytes, as
 * cm_str_make makes it.  A short piece with 12 bytes of s from its start is
 * loaded as two words, masked and stored as two words: built in registers,
 * since a struct written in parts and read whole stalls the store buffer. */
static inline void piece_put(CmStr *dst, const char *s, size_t n, size_t start, size_t len)
{
    if (len > CM_STR_INLINE || start + CM_STR_INLINE > n) {
        *dst = cm_str_make(s + start, (uint32_t)len);
        return;
    }
    uint64_t lo;
    uint32_t hi;
    memcpy(&lo, s + start, 8);
    memcpy(&hi, s + start + 8, 4);
    lo &= len >= 8 ? ~0ULL : (1ULL << (8 * len)) - 1;
    hi &= len >= 12 ? ~0U : len <= 8 ? 0U : (uint32_t)((1ULL << (8 * (len - 8))) - 1);
    /* little-endian: len, then the bytes from the prefix on (CmStr's layout) */
    uint64_t w0 = (uint64_t)len | lo << 32, w1 = lo >> 32 | (uint64_t)hi << 32;
    memcpy(dst, &w0, 8);
    memcpy((char *)dst + 8, &w1, 8);
}

/* The high bit of each byte of the 8 at s that equals the byte pattern pat
 * (c in every byte), exactly: no false hits past a true one. */
static inline uint64_t byte_hits(const char *s, uint64_t pat)
{
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL;
    uint64_t w;
    memcpy(&w, s, 8);
    uint64_t x = w ^ pat; /* a zero byte where s has c */
    return ~(((x & low7) + low7) | x) & ~low7;
}

/* The pieces of s (n bytes) split at the byte c: the separators counted
 * eight bytes at a time, plus one. */
static uint32_t split_byte_count(const char *s, size_t n, char c)
{
    uint64_t pat = 0x0101010101010101ULL * (uint8_t)c;
    uint32_t k = 1;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        /* a 1 per hit byte, summed into the top byte by the multiply */
        k += (uint32_t)(((byte_hits(s + i, pat) >> 7) * 0x0101010101010101ULL) >> 56);
    }
    for (; i < n; i++) {
        k += s[i] == c;
    }
    return k;
}

/* Fills out with the pieces of s split at the byte c (split_byte_count of
 * them), a word's separators found at once, without a branch per byte. */
static void split_byte_fill(const char *s, size_t n, char c, CmStr *out)
{
    uint64_t pat = 0x0101010101010101ULL * (uint8_t)c;
    uint32_t k = 0;
    size_t start = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        for (uint64_t hit = byte_hits(s + i, pat); hit != 0; hit &= hit - 1) {
            size_t at = i + (size_t)(__builtin_ctzll(hit) >> 3);
            piece_put(&out[k++], s, n, start, at - start);
            start = at + 1;
        }
    }
    for (; i < n; i++) {
        if (s[i] == c) {
            piece_put(&out[k++], s, n, start, i - start);
            start = i + 1;
        }
    }
    piece_put(&out[k], s, n, start, n - start);
}

/* The pieces of s (n bytes) split at sep (ns >= 2 bytes), counted, and
 * written to out when it is not NULL.  The candidates for sep's first byte
 * are found eight bytes at a time (byte_hits) and each checked whole; a match
 * covers its ns bytes, so candidates inside it are passed over: the leftmost
 * matches, none overlapping, as memmem from after each match finds them. */
static uint32_t split_seq(const char *s, size_t n, const char *sep, size_t ns, CmStr *out)
{
    uint64_t pat = 0x0101010101010101ULL * (uint8_t)sep[0];
    uint32_t k = 0;
    size_t start = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        for (uint64_t hit = byte_hits(s + i, pat); hit != 0; hit &= hit - 1) {
            size_t at = i + (size_t)(__builtin_ctzll(hit) >> 3);
            if (at >= start && at + ns <= n && memcmp(s + at + 1, sep + 1, ns - 1) == 0) {
                if (out != NULL) {
                    piece_put(&out[k], s, n, start, at - start);
                }
                k++;
                start = at + ns;
            }
        }
    }
    for (; i < n; i++) {
        if (s[i] == sep[0] && i >= start && i + ns <= n &&
            memcmp(s + i + 1, sep + 1, ns - 1) == 0) {
            if (out != NULL) {
                piece_put(&out[k], s, n, start, i - start);
            }
            k++;
            start = i + ns;
        }
    }
    if (out != NULL) {
        piece_put(&out[k], s, n, start, n - start);
    }
    return k + 1;
}

/* string_split(s, sep): the pieces point into s's bytes (no copy); a NULL
 * string gives NULL, and a NULL separator the whole string (DuckDB). */
static CmStatus string_split_k(KERNEL_ARGS)
{
    const CmStr *str = args[0]->data, *sep = args[1]->data;
    CmList *r = out->data;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        /* A short string's pieces are short, so cm_str_make copies them inline;
         * a long one's point into its bytes. */
        const char *s = cm_str_data(&str[p]);
        if (cm_vec_is_null(args[1], p)) {
            CmStr *d = (CmStr *)list_new(heap, 1, sizeof(CmStr), false, &r[p], err);
            if (d == NULL) {
                return err->code;
            }
            d[0] = str[p];
            continue;
        }
        const char *sp = cm_str_data(&sep[p]);
        if (sep[p].len == 1) { /* the common case, a word at a time */
            uint32_t n = split_byte_count(s, str[p].len, sp[0]);
            CmStr *d = (CmStr *)list_new(heap, n, sizeof(CmStr), false, &r[p], err);
            if (d == NULL) {
                return err->code;
            }
            split_byte_fill(s, str[p].len, sp[0], d);
            continue;
        }
        if (sep[p].len > 1) { /* a word at a time too, each candidate checked */
            uint32_t n = split_seq(s, str[p].len, sp, sep[p].len, NULL);
            CmStr *d = (CmStr *)list_new(heap, n, sizeof(CmStr), false, &r[p], err);
            if (d == NULL) {
                return err->code;
            }
            split_seq(s, str[p].len, sp, sep[p].len, d);
            continue;
        }
        uint32_t n = split_chars(s, str[p].len, NULL);
        CmStr *d = (CmStr *)list_new(heap, n, sizeof(CmStr), false, &r[p], err);
        if (d == NULL) {
            return err->code;
        }
        split_chars(s, str[p].len, d);
    }
    return CM_OK;
}

/* len(list): the number of elements, NULL ones included. */
static CmStatus list_len_k(KERNEL_ARGS)
{
    const CmList *l = args[0]->data;
    int64_t *r = out->data;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = cm_vec_is_null(out, p) ? 0 : l[p].len;
    }
    return CM_OK;
}

/* list_extract(l, i): element i counted from 1, or from the end when i < 0;
 * NULL when i is 0 or out of range, as in DuckDB. */
static CmStatus list_extract_k(KERNEL_ARGS)
{
    const CmList *l = args[0]->data;
    const int64_t *idx = args[1]->data;
    size_t w = cm_type_width(e->type);
    ex_and_validity(args, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        int64_t len = l[p].len, k = idx[p] > 0 ? idx[p] - 1 : len + idx[p];
        if (idx[p] == 0 || k < 0 || k >= len || cm_list_is_null(&l[p], w, (uint32_t)k)) {
            cm_vec_set_null(out, p);
            continue;
        }
        memcpy((char *)out->data + w * p, (const char *)l[p].data + w * (size_t)k, w);
    }
    return CM_OK;
}

/* list_contains(l, x): whether an element equals x; NULL elements match
 * nothing, and a NULL list or x gives NULL. */
static CmStatus list_contains_k(KERNEL_ARGS)
{
    const CmList *l = args[0]->data;
    CmType elem = cm_type_elem(args[0]->type);
    size_t w = cm_type_width(elem);
    uint8_t *r = out->data;
    ex_and_validity(args, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        CmVec elems = {.type = elem, .data = (void *)l[p].data};
        if (l[p].has_nulls) {
            elems.validity = (uint64_t *)((char *)l[p].data + cm_list_bits_off(l[p].len, w));
        }
        r[p] = 0;
        for (uint32_t k = 0; k < l[p].len && !r[p]; k++) {
            r[p] = !cm_list_is_null(&l[p], w, k) && ex_key_equal(&elems, k, args[1], p);
        }
    }
    return CM_OK;
}

/* list_concat(a, b, ...): the elements of each list in turn.  A NULL list
 * adds nothing (list_concat of typed NULLs only is []), as in DuckDB; `||` of
 * lists, and list_concat of untyped NULLs only (aux 1), is NULL when an
 * argument is, as DuckDB.  Elements are
 * copied by value, so a VARCHAR element points where its input's did. */
static CmStatus list_concat_k(KERNEL_ARGS)
{
    size_t w = cm_type_width(cm_type_elem(e->type));
    int n = e->n_args;
    CmList *r = out->data;
    if (e->aux) {
        ex_and_validity(args, n, out);
    } else {
        out->validity = NULL;
    }
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        uint64_t len = 0;
        bool has_nulls = false;
        for (int k = 0; k < n; k++) {
            if (!cm_vec_is_null(args[k], p)) {
                const CmList *l = &((const CmList *)args[k]->data)[p];
                len += l->len;
                has_nulls |= l->has_nulls;
            }
        }
        if (len > UINT32_MAX) {
            return cm_err_set(err, CM_LIMIT, e->src_off, "result of list_concat is too long");
        }
        char *d = list_new(heap, (uint32_t)len, w, has_nulls, &r[p], err);
        if (d == NULL) {
            return err->code;
        }
        uint32_t at = 0;
        for (int k = 0; k < n; k++) {
            if (cm_vec_is_null(args[k], p)) {
                continue;
            }
            const CmList *l = &((const CmList *)args[k]->data)[p];
            if (l->len > 0) {
                memcpy(d + w * at, l->data, w * l->len);
            }
            for (uint32_t j = 0; l->has_nulls && j < l->len; j++) {
                if (cm_list_is_null(l, w, j)) {
                    list_set_null(&r[p], w, at + j);
                }
            }
            at += l->len;
        }
    }
    return CM_OK;
}

/* ---- resolution -------------------------------------------------------------------- */

static bool is_name(const char *name, const char *const *names)
{
    for (; *names != NULL; names++) {
        if (strcmp(name, *names) == 0) {
            return true;
        }
    }
    return false;
}

static CmStatus list_type_error(const char *name, int n_args, const CmType *types, int64_t off,
                                CmErr *err)
{
    char buf[160] = "", tn[40];
    size_t at = 0;
    for (int i = 0; i < n_args && at < sizeof buf; i++) {
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", i ? ", " : "",
                               cm_type_name(types[i], tn, sizeof tn));
    }
    return cm_err_set(err, CM_TYPE, off, "no function matches %s(%s)", name, buf);
}

/* The element type of [a, b, ...]: the common type of the arguments, NULL
 * when all are NULL or for [] (DuckDB's "NULL"[]), which meets any list. */
static bool list_elem_type(int n_args, const CmType *types, CmType *out)
{
    CmType c = cm_type_make(CM_T_NULL);
    for (int i = 0; i < n_args; i++) {
        if (types[i].id == CM_T_LIST || !ex_common_type(c, types[i], &c)) {
            return false;
        }
    }
    if (c.id == CM_T_VARCHAR) {
        c = cm_type_varchar(-1, false);
    }
    *out = c;
    return true;
}

CmStatus ex_resolve_list(const char *name, int n_args, const CmType *t, int64_t off,
                         ExFuncMatch *m, CmErr *err)
{
    static const char *const VALUE[] = {"list_value", "list_pack", NULL};
    static const char *const SPLIT[] = {"string_split", "str_split", "string_to_array", NULL};
    static const char *const LEN[] = {"len", "length", "array_length", "list_length", NULL};
    static const char *const EXTRACT[] = {"list_extract", "list_element", "array_extract", NULL};
    static const char *const CONTAINS[] = {"list_contains", "list_has", "array_contains",
                                           "array_has", NULL};
    static const char *const CONCAT[] = {"list_concat", "list_cat", "array_concat",
                                         "array_cat",   "||",       NULL};
    bool is_list = n_args >= 1 && t[0].id == CM_T_LIST;
    if (is_name(name, CONCAT)) {
        /* the lists' common element type; NULL arguments take it too */
        CmType elem = cm_type_make(CM_T_NULL);
        bool ok = n_args >= 1;
        for (int i = 0; i < n_args && ok; i++) {
            /* a VARCHAR list never meets a typed one: its strings are data, not literals */
            CmType et = t[i].id == CM_T_LIST ? cm_type_elem(t[i]) : elem;
            ok = t[i].id == CM_T_NULL || (t[i].id == CM_T_LIST &&
                                          (elem.id == CM_T_NULL || et.id == CM_T_NULL ||
                                           (elem.id == CM_T_VARCHAR) == (et.id == CM_T_VARCHAR)) &&
                                          ex_common_type(elem, et, &elem));
        }
        if (!ok) {
            return list_type_error(name, n_args, t, off, err);
        }
        if (elem.id == CM_T_VARCHAR) {
            elem = cm_type_varchar(-1, false);
        }
        for (int i = 0; i < n_args; i++) {
            m->arg_types[i] = cm_type_list(elem);
        }
        bool all_null = true; /* untyped NULLs only: NULL, as DuckDB (typed ones give []) */
        for (int i = 0; i < n_args; i++) {
            all_null = all_null && t[i].id == CM_T_NULL;
        }
        m->result = cm_type_list(elem);
        m->kernel = list_concat_k;
        m->aux = strcmp(name, "||") == 0 || all_null;
        return CM_OK;
    }
    if (is_name(name, VALUE)) {
        CmType elem;
        if (!list_elem_type(n_args, t, &elem)) {
            return list_type_error(name, n_args, t, off, err);
        }
        for (int i = 0; i < n_args; i++) {
            m->arg_types[i] = elem;
        }
        m->result = cm_type_list(elem);
        m->kernel = list_value_k;
        return CM_OK;
    }
    if (is_name(name, SPLIT)) {
        if (n_args != 2 || t[0].id == CM_T_LIST || t[1].id == CM_T_LIST) {
            return list_type_error(name, n_args, t, off, err);
        }
        m->arg_types[0] = m->arg_types[1] = cm_type_varchar(-1, false);
        m->result = cm_type_list(cm_type_varchar(-1, false));
        m->kernel = string_split_k;
        return CM_OK;
    }
    if (is_name(name, LEN) && (is_list || strcmp(name, "length") != 0)) {
        if (n_args == 1 && !is_list && t[0].id != CM_T_NULL && strcmp(name, "len") == 0) {
            return ex_resolve_string("length", n_args, t, off, m, err); /* len('abc') is 3 */
        }
        if (n_args != 1 || (!is_list && t[0].id != CM_T_NULL)) {
            return list_type_error(name, n_args, t, off, err);
        }
        m->arg_types[0] = is_list ? t[0] : cm_type_list(cm_type_make(CM_T_INT32));
        m->result = cm_type_make(CM_T_INT64);
        m->kernel = list_len_k;
        return CM_OK;
    }
    if (is_name(name, EXTRACT)) {
        if (n_args != 2 || !is_list || !(cm_type_is_integer(t[1]) || t[1].id == CM_T_NULL)) {
            return list_type_error(name, n_args, t, off, err);
        }
        m->arg_types[0] = t[0];
        m->arg_types[1] = cm_type_make(CM_T_INT64);
        m->result = cm_type_elem(t[0]);
        m->kernel = list_extract_k;
        return CM_OK;
    }
    if (is_name(name, CONTAINS)) {
        CmType c;
        if (n_args != 2 || !is_list || t[1].id == CM_T_LIST ||
            !ex_common_type(cm_type_elem(t[0]), t[1], &c)) {
            return list_type_error(name, n_args, t, off, err);
        }
        m->arg_types[0] = cm_type_list(c);
        m->arg_types[1] = c;
        m->result = cm_type_make(CM_T_BOOL);
        m->kernel = list_contains_k;
        return CM_OK;
    }
    return EX_NOT_MINE;
}
