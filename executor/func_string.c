/*
 * func_string.c - string functions and LIKE.
 *
 * Strings are bytes; length and substr count characters by UTF-8 code points,
 * and upper/lower change the letters of the blocks common/utf8case.h lists,
 * whatever the process locale.  Results longer than the inline size are
 * written into the evaluating node's heap, valid until its next evaluation.
 */
#define _GNU_SOURCE /* memmem */
#include <ctype.h>
#include <string.h>

#include "common/utf8case.h"
#include "executor/func_int.h"

static CmStatus str_oom(const ExExpr *e, CmErr *err)
{
    return cm_err_set(err, CM_OOM, e->src_off, "out of memory");
}

/* Code points are the bytes that are not continuation bytes (10xxxxxx).  Eight
 * bytes at a time: a byte continues when its top bit is set and the next one is
 * clear; the flags add up per byte lane for at most 255 words, then the lanes
 * are summed in pairs and the four 16-bit sums by one multiply.  Long text
 * lines are the common input. */
size_t ex_utf8_len(const char *s, size_t n)
{
    const uint64_t hi = 0x8080808080808080ull;
    size_t cont = 0;
    size_t i = 0;
    while (i + 8 <= n) {
        uint64_t lanes = 0;
        for (int k = 0; k < 255 && i + 8 <= n; k++, i += 8) {
            uint64_t w;
            memcpy(&w, s + i, sizeof w);
            lanes += (w & ~(w << 1) & hi) >> 7;
        }
        uint64_t pairs = (lanes & 0x00ff00ff00ff00ffull) + ((lanes >> 8) & 0x00ff00ff00ff00ffull);
        cont += (size_t)((pairs * 0x0001000100010001ull) >> 48);
    }
    for (; i < n; i++) {
        cont += ((unsigned char)s[i] & 0xc0) == 0x80;
    }
    return n - cont;
}

size_t ex_utf8_offset(const char *s, size_t n, int64_t k)
{
    size_t i = 0;
    while (i < n && k > 0) {
        i++;
        while (i < n && ((unsigned char)s[i] & 0xc0) == 0x80) {
            i++;
        }
        k--;
    }
    return i;
}

static CmStatus length_k(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data;
    int64_t *r = out->data;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = cm_vec_is_null(out, p) ? 0 : (int64_t)ex_utf8_len(cm_str_data(&a[p]), a[p].len);
    }
    return CM_OK;
}

static CmStatus case_k(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data;
    CmStr *r = out->data;
    bool upper = e->aux != 0;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        size_t n = a[p].len;
        char small[CM_STR_INLINE];
        char *d = n <= CM_STR_INLINE ? small : cm_arena_alloc(heap, n);
        if (d == NULL) {
            return str_oom(e, err);
        }
        size_t n_out = cm_utf8_case(cm_str_data(&a[p]), n, upper, d);
        r[p] = cm_str_make(d, (uint32_t)n_out);
    }
    return CM_OK;
}

/* The character range [*from, *from + *count) that substr(start, count) takes
 * from a string of n_chars characters, as sqlite3 computes it (DuckDB agrees
 * but for a negative start before the first character: docs/conformance.md).
 * A start below 0 counts from the end; start 0 is the position before the
 * first character, so it eats one of the count; a negative count takes the
 * characters before the start.  Written without overflow for any int64. */
static void substr_range(int64_t start, int64_t count, bool has_count, int64_t n_chars,
                         int64_t *from, int64_t *n_take)
{
    if (!has_count) {
        /* The rest of the string from the start; no count to shorten. */
        *from = start > 0 ? start - 1 : start < 0 && start + n_chars > 0 ? start + n_chars : 0;
        *n_take = *from >= n_chars ? 0 : n_chars - *from;
        return;
    }
    bool is_back = count < 0;
    int64_t p1 = start;
    int64_t p2 = !is_back ? count : count == INT64_MIN ? INT64_MAX : -count;
    if (p1 < 0) {
        p1 += n_chars;
        if (p1 < 0) {
            p2 += p1;
            p2 = p2 < 0 ? 0 : p2;
            p1 = 0;
        }
    } else if (p1 > 0) {
        p1--;
    } else if (p2 > 0) {
        p2--;
    }
    if (is_back) {
        p1 -= p2;
        if (p1 < 0) {
            p2 += p1;
            p1 = 0;
        }
    }
    *from = p1;
    *n_take = p1 >= n_chars ? 0 : p2 < n_chars - p1 ? p2 : n_chars - p1;
}

/* substr(s, start [, count]) in characters, with sqlite3's meaning of a start
 * below 1 and of a negative count (substr_range). */
static CmStatus substr_k(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data;
    const int64_t *st = args[1]->data;
    const int64_t *cnt = e->n_args > 2 ? args[2]->data : NULL;
    CmStr *r = out->data;
    ex_and_validity(args, e->n_args, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        const char *s = cm_str_data(&a[p]);
        size_t n = a[p].len;
        int64_t count = cnt != NULL ? cnt[p] : 0;
        bool needs_len = st[p] < 0;
        /* Without a count from the end, the length only clips, which the walk does. */
        int64_t n_chars = needs_len ? (int64_t)ex_utf8_len(s, n) : INT64_MAX;
        int64_t first, n_take;
        substr_range(st[p], count, cnt != NULL, n_chars, &first, &n_take);
        size_t from = ex_utf8_offset(s, n, first);
        size_t to = from + ex_utf8_offset(s + from, n - from, n_take);
        /* A slice of the argument, whose bytes live as long as this output. */
        r[p] = cm_str_make(s + from, (uint32_t)(to - from));
    }
    return CM_OK;
}

static bool in_set(char c, const char *set, size_t n)
{
    return memchr(set, c, n) != NULL;
}

/* trim/ltrim/rtrim(s [, chars]); aux: 1 leading, 2 trailing, 3 both. */
static CmStatus trim_k(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data;
    const CmStr *chars = e->n_args > 1 ? args[1]->data : NULL;
    CmStr *r = out->data;
    ex_and_validity(args, e->n_args, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        const char *set = chars ? cm_str_data(&chars[p]) : " ";
        size_t set_n = chars ? chars[p].len : 1;
        const char *s = cm_str_data(&a[p]);
        size_t b = 0, n = a[p].len;
        while ((e->aux & 1) && b < n && in_set(s[b], set, set_n)) {
            b++;
        }
        while ((e->aux & 2) && n > b && in_set(s[n - 1], set, set_n)) {
            n--;
        }
        r[p] = cm_str_make(s + b, (uint32_t)(n - b));
    }
    return CM_OK;
}

static CmStatus replace_k(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data, *f = args[1]->data, *t = args[2]->data;
    CmStr *r = out->data;
    ex_and_validity(args, 3, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        const char *s = cm_str_data(&a[p]), *from = cm_str_data(&f[p]), *to = cm_str_data(&t[p]);
        size_t n = a[p].len, fn = f[p].len, tn = t[p].len;
        if (fn == 0) {
            r[p] = a[p];
            continue;
        }
        size_t hits = 0;
        for (size_t k = 0; k + fn <= n;) {
            if (memcmp(s + k, from, fn) == 0) {
                hits++;
                k += fn;
            } else {
                k++;
            }
        }
        size_t len = n + hits * tn - hits * fn;
        char *d = cm_arena_alloc(heap, len ? len : 1);
        if (d == NULL) {
            return str_oom(e, err);
        }
        size_t w = 0;
        for (size_t k = 0; k < n;) {
            if (k + fn <= n && memcmp(s + k, from, fn) == 0) {
                memcpy(d + w, to, tn);
                w += tn;
                k += fn;
            } else {
                d[w++] = s[k++];
            }
        }
        r[p] = cm_str_make(d, (uint32_t)len);
    }
    return CM_OK;
}

/* strpos(haystack, needle), position(needle, haystack) (aux 1): 1-based
 * character position, 0 if absent. */
static CmStatus strpos_k(KERNEL_ARGS)
{
    const CmStr *a = args[e->aux ? 1 : 0]->data, *b = args[e->aux ? 0 : 1]->data;
    int64_t *r = out->data;
    ex_and_validity(args, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        const char *s = cm_str_data(&a[p]), *t = cm_str_data(&b[p]);
        size_t n = a[p].len, m = b[p].len;
        r[p] = 0;
        for (size_t k = 0; k + m <= n; k++) {
            if (memcmp(s + k, t, m) == 0) {
                r[p] = (int64_t)ex_utf8_len(s, k) + 1;
                break;
            }
        }
    }
    return CM_OK;
}

/* ---- LIKE -------------------------------------------------------------------------- */

/* Matches s against pattern p (% any run, _ one character, `esc` quotes the
 * next character).  Iterative with one backtrack point per %, linear in
 * practice.  Characters compare as bytes; _ eats one UTF-8 code point. */
static bool like(const char *s, size_t n, const char *p, size_t m, int esc, bool fold)
{
    size_t i = 0, j = 0, star_j = (size_t)-1, star_i = 0;
    while (i < n) {
        if (j < m && p[j] == '%') {
            star_j = ++j;
            star_i = i;
            continue;
        }
        if (j < m && p[j] == '_') {
            i++;
            while (i < n && ((unsigned char)s[i] & 0xc0) == 0x80) {
                i++;
            }
            j++;
            continue;
        }
        if (j < m) {
            size_t pj = j;
            if (esc >= 0 && p[j] == (char)esc && j + 1 < m) {
                pj = j + 1;
            }
            char pc = p[pj], sc = s[i];
            if (fold) {
                pc = (char)tolower((unsigned char)pc);
                sc = (char)tolower((unsigned char)sc);
            }
            if (pc == sc) {
                i++;
                j = pj + 1;
                continue;
            }
        }
        if (star_j == (size_t)-1) {
            return false;
        }
        j = star_j;
        i = ++star_i;
    }
    while (j < m && p[j] == '%') {
        j++;
    }
    return j == m;
}

/* A LIKE pattern of literal runs between %s (no _, no escape), taken apart
 * once per batch: run k is p[off[k] .. off[k] + len[k]); lead and trail say
 * whether the pattern starts and ends with %. */
#define LIKE_MAX_RUNS 16
typedef struct LikeRuns {
    int n;
    bool lead, trail;
    uint32_t off[LIKE_MAX_RUNS], len[LIKE_MAX_RUNS];
} LikeRuns;

/* False when the pattern has a _ or more than LIKE_MAX_RUNS runs. */
static bool like_runs_parse(const char *p, size_t m, LikeRuns *r)
{
    r->n = 0;
    r->lead = m > 0 && p[0] == '%';
    r->trail = m > 0 && p[m - 1] == '%';
    for (size_t j = 0; j < m;) {
        if (p[j] == '_') {
            return false;
        }
        if (p[j] == '%') {
            j++;
            continue;
        }
        size_t k = j;
        while (k < m && p[k] != '%' && p[k] != '_') {
            k++;
        }
        if (k < m && p[k] == '_') {
            return false;
        }
        if (r->n == LIKE_MAX_RUNS) {
            return false;
        }
        r->off[r->n] = (uint32_t)j;
        r->len[r->n++] = (uint32_t)(k - j);
        j = k;
    }
    return true;
}

/* Matches s against such a pattern: the first run at the start unless it
 * leads with %, the last at the end unless it trails one, each other run at
 * its leftmost place after the one before (memmem), which is where a match
 * of the whole can put it.  The same answers as like(), without its
 * byte-by-byte backtracking (TPC-H q13's o_comment NOT LIKE
 * '%special%requests%' took half the query). */
static bool like_runs(const char *s, size_t n, const char *p, const LikeRuns *r)
{
    size_t i = 0;
    for (int k = 0; k < r->n; k++) {
        const char *run = p + r->off[k];
        size_t len = r->len[k];
        if (n - i < len) {
            return false;
        }
        if (k == 0 && !r->lead) { /* the first run starts the string */
            if (s[0] != run[0] || memcmp(s, run, len) != 0) {
                return false;
            }
            i = len;
        } else if (k == r->n - 1 && !r->trail) { /* the last run ends it */
            return memcmp(s + n - len, run, len) == 0;
        } else {
            const char *at = memmem(s + i, n - i, run, len);
            if (at == NULL) {
                return false;
            }
            i = (size_t)(at - s) + len;
        }
    }
    return r->trail || i == n;
}

/* aux bits: 1 negated, 2 case-insensitive (ILIKE). args: s, pattern [, escape]. */
static CmStatus like_k(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data, *pat = args[1]->data;
    const ExExpr *pe = e->args[1];
    LikeRuns runs;
    if (e->n_args == 2 && (e->aux & 2) == 0 && pe->kind == EX_E_CONST && !pe->value.is_null &&
        like_runs_parse(cm_str_data(&pe->value.s), pe->value.s.len, &runs)) {
        const char *pp = cm_str_data(&pe->value.s);
        bool neg = (e->aux & 1) != 0;
        uint8_t *restrict r = out->data;
        ex_and_validity(args, 2, out);
        for (int i = 0; i < in->n_rows; i++) {
            uint32_t p = cm_batch_pos(in, i);
            if (cm_vec_is_null(out, p)) {
                continue; /* a NULL's slot may hold no string */
            }
            r[p] = (uint8_t)(like_runs(cm_str_data(&a[p]), a[p].len, pp, &runs) != neg);
        }
        return CM_OK;
    }
    const CmStr *esc = e->n_args > 2 ? args[2]->data : NULL;
    uint8_t *r = out->data;
    ex_and_validity(args, e->n_args, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        int esc_c = -1;
        if (esc != NULL && esc[p].len > 0) { /* ESCAPE '' means no escape character */
            if (esc[p].len != 1) {
                return cm_err_set(err, CM_RUNTIME, e->src_off,
                                  "the ESCAPE of LIKE must be a single character");
            }
            esc_c = (unsigned char)cm_str_data(&esc[p])[0];
        }
        bool m = like(cm_str_data(&a[p]), a[p].len, cm_str_data(&pat[p]), pat[p].len, esc_c,
                      (e->aux & 2) != 0);
        r[p] = (uint8_t)(m != ((e->aux & 1) != 0));
    }
    return CM_OK;
}

/* ---- resolution ---------------------------------------------------------------------- */

static void set_all(ExFuncMatch *m, int n, CmType t)
{
    for (int i = 0; i < n; i++) {
        m->arg_types[i] = t;
    }
}

CmStatus ex_resolve_string(const char *name, int n_args, const CmType *types, int64_t off,
                           ExFuncMatch *m, CmErr *err)
{
    CmType str = cm_type_varchar(-1, false), i64 = cm_type_make(CM_T_INT64);
    (void)types;
    (void)off;
    (void)err;
    if ((!strcmp(name, "length") || !strcmp(name, "char_length") ||
         !strcmp(name, "character_length")) &&
        n_args == 1) {
        set_all(m, 1, str);
        m->result = i64;
        m->kernel = length_k;
    } else if ((!strcmp(name, "upper") || !strcmp(name, "lower") || !strcmp(name, "ucase") ||
                !strcmp(name, "lcase")) &&
               n_args == 1) {
        set_all(m, 1, str);
        m->result = str;
        m->kernel = case_k;
        m->aux = name[0] == 'u';
    } else if ((!strcmp(name, "substr") || !strcmp(name, "substring")) &&
               (n_args == 2 || n_args == 3)) {
        m->arg_types[0] = str;
        m->arg_types[1] = m->arg_types[2] = i64;
        m->result = str;
        m->kernel = substr_k;
    } else if ((!strcmp(name, "trim") || !strcmp(name, "ltrim") || !strcmp(name, "rtrim")) &&
               (n_args == 1 || n_args == 2)) {
        set_all(m, n_args, str);
        m->result = str;
        m->kernel = trim_k;
        m->aux = name[0] == 'l' ? 1 : name[0] == 'r' ? 2 : 3;
    } else if (!strcmp(name, "replace") && n_args == 3) {
        set_all(m, 3, str);
        m->result = str;
        m->kernel = replace_k;
    } else if ((!strcmp(name, "strpos") || !strcmp(name, "position") || !strcmp(name, "instr")) &&
               n_args == 2) {
        set_all(m, 2, str);
        m->result = i64;
        m->kernel = strpos_k;
        m->aux = strcmp(name, "position") == 0;
    } else if ((!strcmp(name, "like") || !strcmp(name, "not_like") || !strcmp(name, "ilike") ||
                !strcmp(name, "not_ilike")) &&
               (n_args == 2 || n_args == 3)) {
        set_all(m, n_args, str);
        m->result = cm_type_make(CM_T_BOOL);
        m->kernel = like_k;
        m->aux = (name[0] == 'n') | ((strstr(name, "ilike") != NULL) << 1);
    } else {
        return EX_NOT_MINE;
    }
    return CM_OK;
}
