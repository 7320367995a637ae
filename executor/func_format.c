/*
 * func_format.c - printf(format, ...) with C's conversions and format(format,
 * ...) with {} placeholders, DuckDB's two formatting functions
 * (docs/conformance.md, "String functions").
 *
 * printf takes %[flags][width][.precision]conv with conv one of d i (an
 * integer), x X o (its 64 bits), c (a code point), f F e E g G (any number),
 * s (any value as results show it) and %%.  format takes {}, {N} and
 * {[N]:[[fill]align][sign][#][0][width][.precision][type]}, type one of
 * printf's conversions (b not), {{ and }}; without a type a value is its
 * text, numbers aligned right and the rest left.  A NULL argument makes the
 * result NULL; a missing argument or a conversion that does not take the
 * value's type is an error at the call.  Each result is written once into
 * the node's heap (no malloc per row).
 */
#include <stdio.h>
#include <string.h>

#include "common/utf8case.h"
#include "common/value.h"
#include "executor/func_int.h"

/* The text being built, in the node's heap: grows by doubling (the old
 * copies stay in the arena until its reset). */
typedef struct Out {
    char *d;
    size_t n, cap;
    CmArena *heap;
} Out;

static bool out_put(Out *o, const char *s, size_t n)
{
    if (n == 0) {
        return true; /* o->d may still be NULL: memcpy must not see it */
    }
    if (o->n + n > o->cap) {
        size_t cap = (o->cap + n) * 2 < 64 ? 64 : (o->cap + n) * 2;
        char *d = cm_arena_alloc(o->heap, cap);
        if (d == NULL) {
            return false;
        }
        if (o->n > 0) {
            memcpy(d, o->d, o->n);
        }
        o->d = d;
        o->cap = cap;
    }
    memcpy(o->d + o->n, s, n);
    o->n += n;
    return true;
}

static bool out_fill(Out *o, char c, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (!out_put(o, &c, 1)) {
            return false;
        }
    }
    return true;
}

/* One conversion: what C's printf would take, plus format's alignment. */
typedef struct Spec {
    char flags[8]; /* of "-+ 0#", NUL-terminated */
    int width;     /* -1: none */
    int prec;      /* -1: none */
    char conv;     /* 0: the value's text (format's {} without a type) */
    char fill;     /* format: the fill character, ' ' by default */
    char align;    /* format: '<', '>', '^' or 0 (printf: right; format: numbers right,
                      text left) */
    bool is_format;
} Spec;

static bool is_int_type(CmType t)
{
    return cm_type_is_integer(t) || t.id == CM_T_BOOL;
}

static double number_of(const CmValue *v)
{
    switch ((CmTypeId)v->type.id) {
    case CM_T_DOUBLE:
        return v->d;
    case CM_T_DECIMAL:
        return (double)v->i / (double)cm_pow10(v->type.scale);
    case CM_T_DECIMAL128:
        return (double)cm_i128_get(v->h) / (double)cm_pow10_128(v->type.scale);
    default:
        return (double)v->i;
    }
}

/* The UTF-8 bytes of code point c into b (4 bytes); 0 when c is none. */
static int utf8_put(int64_t c, char *b)
{
    if (c <= 0 || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) {
        return 0;
    }
    return (int)cm_utf8_encode((uint32_t)c, b);
}

/* Text t padded to sp's width (in characters) on the side sp says. */
static bool put_padded(Out *o, const Spec *sp, const char *t, size_t n, bool is_number)
{
    size_t chars = ex_utf8_len(t, n);
    size_t pad = sp->width > 0 && (size_t)sp->width > chars ? (size_t)sp->width - chars : 0;
    char align = sp->align                     ? sp->align
                 : strchr(sp->flags, '-')      ? '<'
                 : is_number || !sp->is_format ? '>'
                                               : '<';
    size_t left = align == '>' ? pad : align == '^' ? pad / 2 : 0;
    return out_fill(o, sp->fill, left) && out_put(o, t, n) && out_fill(o, sp->fill, pad - left);
}

/* Writes value v by spec sp; false with err set (or OOM). */
static bool put_value(Out *o, const Spec *sp, const CmValue *v, const ExExpr *e, CmErr *err)
{
    char fmt[32], buf[CM_FMT_CAP + 64];
    const char *name = e->aux ? "format" : "printf";
    char conv = sp->conv;
    bool is_num = cm_type_is_numeric(v->type);
    if (conv == 0 || conv == 's') {
        size_t n;
        const char *t = cm_fmt_value(v, buf, &n);
        if (sp->prec >= 0) {
            n = ex_utf8_offset(t, n, sp->prec);
        }
        if (put_padded(o, sp, t, n, conv == 0 && is_num)) {
            return true;
        }
    } else if (strchr("diuxXoc", conv) != NULL) {
        if (!is_int_type(v->type)) {
            char tn[32];
            cm_err_set(err, CM_RUNTIME, e->src_off, "%s: %%%c needs an integer, not %s", name, conv,
                       cm_type_name(v->type, tn, sizeof tn));
            return false;
        }
        int n;
        if (conv == 'c') {
            n = utf8_put(v->i, buf);
        } else {
            /* width and precision go through '*' (-1: none) */
            bool is_signed = conv == 'd' || conv == 'i' || conv == 'u';
            snprintf(fmt, sizeof fmt, "%%%s*.*ll%c", sp->flags, is_signed ? 'd' : conv);
            int width = sp->width > 60 ? 60 : sp->width, prec = sp->prec > 60 ? 60 : sp->prec;
            n = is_signed ? snprintf(buf, sizeof buf, fmt, width, prec, (long long)v->i)
                          : snprintf(buf, sizeof buf, fmt, width, prec, (unsigned long long)v->i);
        }
        if (n >= 0 &&
            put_padded(o, sp, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1, true)) {
            return true;
        }
    } else if (strchr("fFeEgG", conv) != NULL) {
        if (!is_num) {
            char tn[32];
            cm_err_set(err, CM_RUNTIME, e->src_off, "%s: %%%c needs a number, not %s", name, conv,
                       cm_type_name(v->type, tn, sizeof tn));
            return false;
        }
        snprintf(fmt, sizeof fmt, "%%%s*.*%c", sp->flags, conv);
        int prec = sp->prec >= 0 ? (sp->prec > 60 ? 60 : sp->prec) : 6;
        int width = sp->width > 60 ? 60 : sp->width;
        int n = snprintf(buf, sizeof buf, fmt, width, prec, number_of(v));
        if (n >= 0 &&
            put_padded(o, sp, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1, true)) {
            return true;
        }
    } else {
        cm_err_set(err, CM_RUNTIME, e->src_off, "%s: unknown conversion '%c'", name, conv);
        return false;
    }
    if (err->code == CM_OK) {
        cm_err_set(err, CM_OOM, e->src_off, "out of memory");
    }
    return false;
}

/* Reads digits at f[*k] (at most 3 of them: a width or precision past 999 is
 * refused); -1 when there are none. */
static int read_num(const char *f, size_t n, size_t *k)
{
    int v = -1;
    while (*k < n && f[*k] >= '0' && f[*k] <= '9' && v < 1000) {
        v = (v < 0 ? 0 : v * 10) + (f[(*k)++] - '0');
    }
    return v;
}

/* The flags, width, precision and conversion after a '%' (printf) or ':'
 * (format); length modifiers (l, h, ...) are skipped. */
static void read_spec(const char *f, size_t n, size_t *k, bool is_format, Spec *sp)
{
    *sp = (Spec){.width = -1, .prec = -1, .fill = ' ', .is_format = is_format};
    if (is_format && *k + 1 < n && strchr("<>^", f[*k + 1]) != NULL && f[*k] != '}') {
        sp->fill = f[*k];
        sp->align = f[*k + 1];
        *k += 2;
    } else if (is_format && *k < n && strchr("<>^", f[*k]) != NULL) {
        sp->align = f[(*k)++];
    }
    int nf = 0;
    while (*k < n && strchr(is_format ? "+- #0" : "-+ 0#", f[*k]) != NULL && nf < 6) {
        sp->flags[nf++] = f[(*k)++];
    }
    sp->width = read_num(f, n, k);
    if (*k < n && f[*k] == '.') {
        (*k)++;
        sp->prec = read_num(f, n, k);
        sp->prec = sp->prec < 0 ? 0 : sp->prec;
    }
    while (!is_format && *k < n && strchr("hlLjzt", f[*k]) != NULL) {
        (*k)++;
    }
    if (*k < n && (!is_format || f[*k] != '}')) {
        sp->conv = f[(*k)++];
    }
    if (sp->align != 0 && strchr(sp->flags, '0') != NULL) {
        /* fill and align win over '0', as in fmt */
        char *z = strchr(sp->flags, '0');
        memmove(z, z + 1, strlen(z));
    }
}

/* The argument a placeholder takes: the next one, or {N}'s; -1 with err set. */
static int pick_arg(const ExExpr *e, int *next, int explicit_idx, CmErr *err)
{
    const char *name = e->aux ? "format" : "printf";
    if (explicit_idx >= 0 ? *next > 0 : *next < 0) {
        cm_err_set(err, CM_RUNTIME, e->src_off,
                   "format: cannot mix automatic {} and numbered {N} arguments");
        return -1;
    }
    int a = explicit_idx >= 0 ? explicit_idx + 1 : ++*next;
    if (explicit_idx >= 0) {
        *next = -1;
    }
    if (a >= e->n_args) {
        cm_err_set(err, CM_RUNTIME, e->src_off, "%s: too few arguments for the format", name);
        return -1;
    }
    return a;
}

/* One row: the format at args[0] applied to the other arguments. */
static bool format_row(const ExExpr *e, const CmVec *const *args, uint32_t p, Out *o, CmErr *err)
{
    bool is_format = e->aux != 0;
    const CmStr *fs = &((const CmStr *)args[0]->data)[p];
    const char *f = cm_str_data(fs);
    size_t n = fs->len, k = 0;
    int next = 0;
    while (k < n) {
        size_t run = k;
        char open = is_format ? '{' : '%';
        while (run < n && f[run] != open && !(is_format && f[run] == '}')) {
            run++;
        }
        if (!out_put(o, f + k, run - k)) {
            return cm_err_set(err, CM_OOM, e->src_off, "out of memory") == CM_OK;
        }
        k = run;
        if (k >= n) {
            break;
        }
        if (k + 1 < n && f[k + 1] == f[k] && (is_format || f[k] == '%')) {
            if (!out_put(o, f + k, 1)) { /* {{, }} or %% */
                return cm_err_set(err, CM_OOM, e->src_off, "out of memory") == CM_OK;
            }
            k += 2;
            continue;
        }
        if (f[k] == '}') {
            return cm_err_set(err, CM_RUNTIME, e->src_off, "format: unmatched '}'") == CM_OK;
        }
        k++;
        Spec sp;
        int idx = -1;
        if (is_format) {
            idx = read_num(f, n, &k);
            if (k < n && f[k] == ':') {
                k++;
                read_spec(f, n, &k, true, &sp);
            } else {
                sp = (Spec){.width = -1, .prec = -1, .fill = ' ', .is_format = true};
            }
            if (k >= n || f[k] != '}') {
                return cm_err_set(err, CM_RUNTIME, e->src_off, "format: invalid placeholder") ==
                       CM_OK;
            }
            k++;
        } else {
            read_spec(f, n, &k, false, &sp);
            if (sp.conv == 0) {
                return cm_err_set(err, CM_RUNTIME, e->src_off, "printf: the format ends in '%%'") ==
                       CM_OK;
            }
        }
        int a = pick_arg(e, &next, idx, err);
        CmValue v;
        if (a < 0) {
            return false;
        }
        cm_vec_get_value(args[a], p, &v);
        if (!put_value(o, &sp, &v, e, err)) {
            return false;
        }
    }
    return true;
}

/* printf (aux 0) and format (aux 1); NULL when any argument is NULL. */
static CmStatus format_k(KERNEL_ARGS)
{
    CmStr *r = out->data;
    ex_and_validity(args, e->n_args, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        Out o = {.heap = heap};
        if (!format_row(e, args, p, &o, err)) {
            return err->code;
        }
        r[p] = o.n == 0 ? cm_str_make("", 0) : cm_str_make(o.d, (uint32_t)o.n);
    }
    return CM_OK;
}

CmStatus ex_resolve_format(const char *name, int n_args, const CmType *types, int64_t off,
                           ExFuncMatch *m, CmErr *err)
{
    bool is_format = !strcmp(name, "format");
    if ((!is_format && strcmp(name, "printf") != 0) || n_args < 1) {
        return EX_NOT_MINE;
    }
    CmType str = cm_type_varchar(-1, false);
    for (int a = 0; a < n_args; a++) {
        char tn[32];
        if (a == 0 && types[a].id != CM_T_VARCHAR && types[a].id != CM_T_NULL) {
            return cm_err_set(err, CM_TYPE, off, "%s expects a VARCHAR format, not %s", name,
                              cm_type_name(types[a], tn, sizeof tn));
        }
        if (types[a].id == CM_T_LIST) {
            return cm_err_set(err, CM_TYPE, off, "%s cannot take a list (argument %d is %s)", name,
                              a + 1, cm_type_name(types[a], tn, sizeof tn));
        }
        m->arg_types[a] = a == 0 || types[a].id == CM_T_NULL ? str : types[a];
    }
    m->result = str;
    m->kernel = format_k;
    m->aux = is_format;
    return CM_OK;
}
