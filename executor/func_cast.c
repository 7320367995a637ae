/*
 * func_cast.c - casts between the scalar types, for single values and vectors.
 *
 * Rounding: casts to integers and decimals round half away from zero (as
 * PostgreSQL and DuckDB do); a value that does not fit is an error naming the
 * value and the target type, never a wrapped number.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/datetime.h"
#include "common/value.h"
#include "executor/func.h"

static CmStatus cast_fail(const CmValue *in, CmType to, CmErr *err)
{
    char tn[32], text[CM_FMT_CAP];
    cm_type_name(to, tn, sizeof tn);
    switch ((CmTypeId)in->type.id) {
    case CM_T_LIST: {
        char from[32];
        return cm_err_set(err, CM_TYPE, -1, "cannot cast %s to %s",
                          cm_type_name(in->type, from, sizeof from), tn);
    }
    case CM_T_VARCHAR:
        return cm_err_set(err, CM_RUNTIME, -1, "could not convert string '%.*s' to %s",
                          (int)(in->s.len > 64 ? 64 : in->s.len), cm_str_data(&in->s), tn);
    case CM_T_DOUBLE:
        cm_fmt_double(in->d, text);
        break;
    case CM_T_DECIMAL:
        cm_fmt_decimal(in->i, in->type.scale, text);
        break;
    case CM_T_DECIMAL128:
        cm_fmt_int128_decimal(cm_i128_get(in->h), in->type.scale, text);
        break;
    default:
        cm_fmt_int64(in->i, text);
        break;
    }
    return cm_err_set(err, CM_RUNTIME, -1, "value %s is out of range for type %s", text, tn);
}

/* Rounds v / 10^shift (0 <= shift <= 38) half away from zero. */
static CmInt128 round_div(CmInt128 v, int shift)
{
    if (shift <= 0) {
        return v;
    }
    CmInt128 d = cm_pow10_128(shift);
    CmInt128 q = v / d, r = v % d;
    if (r >= d - r) {
        q++;
    } else if (-r >= d + r) {
        q--;
    }
    return q;
}

static bool fits_precision(CmInt128 v, int precision)
{
    CmInt128 lim = cm_pow10_128(precision);
    return v < lim && v > -lim;
}

static CmStatus to_int(const CmValue *in, CmType to, int64_t *out, CmErr *err)
{
    switch ((CmTypeId)in->type.id) {
    case CM_T_BOOL:
    case CM_T_INT32:
    case CM_T_INT64:
        *out = in->i;
        break;
    case CM_T_DECIMAL:
        *out = (int64_t)round_div(in->i, in->type.scale);
        break;
    case CM_T_DECIMAL128: {
        CmInt128 q = round_div(cm_i128_get(in->h), in->type.scale);
        if (q > INT64_MAX || q < INT64_MIN) {
            return cast_fail(in, to, err);
        }
        *out = (int64_t)q;
        break;
    }
    case CM_T_DOUBLE: {
        /* Halves round to even, as PostgreSQL and DuckDB do; 2^63 is exact as a
         * double, and rounding can reach it from below. */
        double r = nearbyint(in->d);
        if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0)) {
            return cast_fail(in, to, err);
        }
        *out = (int64_t)r;
        break;
    }
    case CM_T_VARCHAR:
        /* Exact: through a DOUBLE, '-9223372036854775809' would round into range.
         * Text is decimal, so halves round away from zero. */
        if (!cm_parse_int64(cm_str_data(&in->s), in->s.len, out) &&
            !cm_parse_int64_round(cm_str_data(&in->s), in->s.len, out)) {
            return cast_fail(in, to, err);
        }
        break;
    default:
        return cast_fail(in, to, err);
    }
    if (to.id == CM_T_INT32 && (*out > INT32_MAX || *out < INT32_MIN)) {
        return cast_fail(in, to, err);
    }
    return CM_OK;
}

/* To DECIMAL(p,s) of either width: the scaled value in 128 bits, within
 * p digits (the caller stores it as int64 when p <= 18). */
static CmStatus to_decimal(const CmValue *in, CmType to, CmInt128 *out, CmErr *err)
{
    int s = to.scale, from;
    CmInt128 v;
    if (cm_value_exact(in, &v, &from)) {
        if (from >= s) {
            *out = round_div(v, from - s);
        } else if (__builtin_mul_overflow(v, cm_pow10_128(s - from), out)) {
            return cast_fail(in, to, err);
        }
    } else if (in->type.id == CM_T_DOUBLE) {
        double x = in->d * (double)cm_pow10_128(s);
        if (!(x > -1e38 && x < 1e38)) {
            return cast_fail(in, to, err);
        }
        *out = (CmInt128)round(x);
    } else if (in->type.id == CM_T_VARCHAR) {
        if (!cm_parse_decimal128(cm_str_data(&in->s), in->s.len, to.precision, s, out)) {
            return cast_fail(in, to, err);
        }
    } else {
        return cast_fail(in, to, err);
    }
    if (!fits_precision(*out, to.precision)) {
        return cast_fail(in, to, err);
    }
    return CM_OK;
}

static CmStatus to_double(const CmValue *in, CmType to, double *out, CmErr *err)
{
    switch ((CmTypeId)in->type.id) {
    case CM_T_BOOL:
    case CM_T_INT32:
    case CM_T_INT64:
        *out = (double)in->i;
        return CM_OK;
    case CM_T_DECIMAL:
        *out = (double)in->i / (double)cm_pow10(in->type.scale);
        return CM_OK;
    case CM_T_DECIMAL128:
        *out = (double)cm_i128_get(in->h) / (double)cm_pow10_128(in->type.scale);
        return CM_OK;
    case CM_T_DOUBLE:
        *out = in->d;
        return CM_OK;
    case CM_T_VARCHAR:
        if (cm_parse_double(cm_str_data(&in->s), in->s.len, out)) {
            return CM_OK;
        }
        return cast_fail(in, to, err);
    default:
        return cast_fail(in, to, err);
    }
}

static CmStatus to_varchar(const CmValue *in, CmArena *a, CmStr *out, CmErr *err)
{
    char buf[CM_FMT_CAP];
    int n;
    switch ((CmTypeId)in->type.id) {
    case CM_T_VARCHAR:
        *out = in->s;
        return CM_OK;
    case CM_T_BOOL:
        n = snprintf(buf, sizeof buf, "%s", in->i ? "true" : "false");
        break;
    case CM_T_INT32:
    case CM_T_INT64:
        n = cm_fmt_int64(in->i, buf);
        break;
    case CM_T_DOUBLE:
        n = cm_fmt_double(in->d, buf);
        break;
    case CM_T_DECIMAL:
        n = cm_fmt_decimal(in->i, in->type.scale, buf);
        break;
    case CM_T_DECIMAL128:
        n = cm_fmt_int128_decimal(cm_i128_get(in->h), in->type.scale, buf);
        break;
    case CM_T_DATE:
        n = cm_fmt_date((int32_t)in->i, buf);
        break;
    case CM_T_TIME:
        n = cm_fmt_time(in->i, buf);
        break;
    case CM_T_TIMESTAMP:
        n = cm_fmt_timestamp(in->i, buf);
        break;
    case CM_T_INTERVAL:
        n = cm_fmt_interval(&in->iv, buf);
        break;
    case CM_T_LIST: {
        CmType elem = cm_type_elem(in->type);
        size_t len = cm_fmt_list(&in->l, elem, NULL, 0);
        char *p = cm_arena_alloc(a, len + 1);
        if (p == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory");
        }
        cm_fmt_list(&in->l, elem, p, len + 1);
        *out = cm_str_make(p, (uint32_t)len);
        return CM_OK;
    }
    default:
        n = snprintf(buf, sizeof buf, "NULL");
        break;
    }
    char *p = cm_arena_strndup(a, buf, (size_t)n);
    if (p == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    *out = cm_str_make(p, (uint32_t)n);
    return CM_OK;
}

/* A list cast element by element (INTEGER[] to BIGINT[], VARCHAR[] to
 * INTEGER[]): a new list in `a`; an element that does not convert fails the
 * cast, as in DuckDB. */
static CmStatus to_list(const CmValue *in, CmType to, CmArena *a, CmList *out, CmErr *err)
{
    if (in->type.id != CM_T_LIST) {
        char from[32], tn[32];
        return cm_err_set(err, CM_TYPE, -1, "cannot cast %s to %s",
                          cm_type_name(in->type, from, sizeof from),
                          cm_type_name(to, tn, sizeof tn));
    }
    CmType from = cm_type_elem(in->type), elem = cm_type_elem(to);
    size_t wf = cm_type_width(from), wt = cm_type_width(elem);
    const CmList *l = &in->l;
    *out = (CmList){.len = l->len, .has_nulls = l->has_nulls};
    if (l->len == 0) {
        return CM_OK;
    }
    char *p = cm_arena_zalloc(a, cm_list_bytes(l->len, wt, l->has_nulls));
    if (p == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    if (l->has_nulls) {
        memcpy(p + cm_list_bits_off(l->len, wt),
               (const char *)l->data + cm_list_bits_off(l->len, wf), (l->len + 63) / 64 * 8);
    }
    out->data = p;
    /* The element vectors of a one-row view: a value moves through CmVec's
     * accessors, which know each type's physical form. */
    CmVec src = {.type = from, .data = (void *)l->data}, dst = {.type = elem, .data = p};
    for (uint32_t k = 0; k < l->len; k++) {
        if (cm_list_is_null(l, wf, k)) {
            continue;
        }
        CmValue v, r;
        cm_vec_get_value(&src, k, &v);
        if (ex_cast_value(&v, elem, a, &r, err) != CM_OK) {
            return err->code;
        }
        if (r.type.id == CM_T_VARCHAR && r.s.len > CM_STR_INLINE && r.s.ptr == v.s.ptr) {
            r.s = cm_str_copy(a, &r.s, err); /* the list owns its strings */
        }
        cm_vec_set_value(&dst, k, &r);
    }
    return err->code;
}

/* TIMESTAMP from its text or a DATE (midnight); a date past the TIMESTAMP
 * range is an error. */
static CmStatus to_timestamp(const CmValue *in, CmType to, int64_t *out, CmErr *err)
{
    if (in->type.id == CM_T_TIMESTAMP) {
        *out = in->i;
        return CM_OK;
    }
    if (in->type.id == CM_T_DATE) {
        if (!cm_ts_make(in->i, 0, out)) {
            char d[CM_FMT_CAP];
            cm_fmt_date((int32_t)in->i, d);
            return cm_err_set(err, CM_RUNTIME, -1, "date %s is out of range for type TIMESTAMP", d);
        }
        return CM_OK;
    }
    if (!cm_parse_timestamp(cm_str_data(&in->s), in->s.len, out)) {
        return cast_fail(in, to, err);
    }
    return CM_OK;
}

/* The date and time types convert to and from text, DATE and TIMESTAMP into
 * each other, TIMESTAMP to TIME; nothing else crosses into or out of them. */
static bool cast_allowed(CmType from, CmType to)
{
    bool from_dt = from.id == CM_T_DATE || from.id == CM_T_TIME || from.id == CM_T_TIMESTAMP ||
                   from.id == CM_T_INTERVAL;
    bool to_dt = to.id == CM_T_DATE || to.id == CM_T_TIME || to.id == CM_T_TIMESTAMP ||
                 to.id == CM_T_INTERVAL;
    if (!from_dt && !to_dt) {
        return true;
    }
    if (from.id == to.id || from.id == CM_T_VARCHAR || to.id == CM_T_VARCHAR ||
        from.id == CM_T_NULL) {
        return true;
    }
    return (from.id == CM_T_DATE && to.id == CM_T_TIMESTAMP) ||
           (from.id == CM_T_TIMESTAMP && (to.id == CM_T_DATE || to.id == CM_T_TIME));
}

CmStatus ex_cast_value(const CmValue *in, CmType to, CmArena *a, CmValue *out, CmErr *err)
{
    CmValue r;
    memset(&r, 0, sizeof r);
    r.type = to;
    r.is_null = in->is_null;
    if (in->is_null || in->type.id == CM_T_NULL) {
        r.is_null = true;
        *out = r;
        return CM_OK;
    }
    CmStatus st = CM_OK;
    if (!cast_allowed(in->type, to)) {
        char from[32], tn[32];
        return cm_err_set(err, CM_RUNTIME, -1, "cannot cast %s to %s",
                          cm_type_name(in->type, from, sizeof from),
                          cm_type_name(to, tn, sizeof tn));
    }
    switch ((CmTypeId)to.id) {
    case CM_T_NULL:
        r.is_null = true;
        break;
    case CM_T_TIMESTAMP:
        st = to_timestamp(in, to, &r.i, err);
        break;
    case CM_T_INTERVAL:
        if (in->type.id == CM_T_INTERVAL) {
            r.iv = in->iv;
        } else if (!cm_parse_interval(cm_str_data(&in->s), in->s.len, &r.iv)) {
            return cast_fail(in, to, err);
        }
        break;
    case CM_T_BOOL:
        if (in->type.id == CM_T_VARCHAR) {
            bool b;
            if (!cm_parse_bool(cm_str_data(&in->s), in->s.len, &b)) {
                return cast_fail(in, to, err);
            }
            r.i = b;
        } else if (in->type.id == CM_T_DOUBLE) {
            r.i = in->d != 0;
        } else if (in->type.id == CM_T_DATE) {
            return cast_fail(in, to, err);
        } else if (in->type.id == CM_T_DECIMAL128) {
            r.i = cm_i128_get(in->h) != 0;
        } else {
            r.i = in->i != 0;
        }
        break;
    case CM_T_INT32:
    case CM_T_INT64:
        if (in->type.id == CM_T_DATE) {
            return cast_fail(in, to, err);
        }
        st = to_int(in, to, &r.i, err);
        break;
    case CM_T_DECIMAL:
    case CM_T_DECIMAL128: {
        CmInt128 v = 0;
        st = to_decimal(in, to, &v, err);
        if (to.id == CM_T_DECIMAL) {
            r.i = (int64_t)v; /* within 18 digits */
        } else {
            cm_i128_put(r.h, v);
        }
        break;
    }
    case CM_T_DOUBLE:
        st = to_double(in, to, &r.d, err);
        break;
    case CM_T_VARCHAR:
        st = to_varchar(in, a, &r.s, err);
        break;
    case CM_T_LIST:
        st = to_list(in, to, a, &r.l, err);
        break;
    case CM_T_TIME:
        if (in->type.id == CM_T_TIME) {
            r.i = in->i;
        } else if (in->type.id == CM_T_TIMESTAMP) {
            int32_t days;
            cm_ts_split(in->i, &days, &r.i);
        } else if (in->type.id != CM_T_VARCHAR ||
                   !cm_parse_time(cm_str_data(&in->s), in->s.len, &r.i)) {
            return cast_fail(in, to, err);
        }
        break;
    case CM_T_DATE: {
        int32_t days;
        if (in->type.id == CM_T_DATE) {
            r.i = in->i;
        } else if (in->type.id == CM_T_TIMESTAMP) {
            int64_t t;
            cm_ts_split(in->i, &days, &t);
            r.i = days;
        } else if (in->type.id == CM_T_VARCHAR &&
                   cm_parse_date(cm_str_data(&in->s), in->s.len, &days)) {
            r.i = days;
        } else {
            return cast_fail(in, to, err);
        }
        break;
    }
    }
    *out = r;
    return st;
}

/* ---- vector casts --------------------------------------------------------- */

static void copy_validity(const CmBatch *in, const CmVec *src, CmVec *out)
{
    (void)in;
    if (src->validity == NULL) {
        out->validity = NULL;
        return;
    }
    memcpy(out->validity_buf, src->validity, sizeof out->validity_buf);
    out->validity = out->validity_buf;
}

static CmStatus cast_generic(const ExExpr *e, const CmBatch *in, const CmVec *const *args,
                             CmVec *out, CmArena *heap, CmErr *err)
{
    const CmVec *src = args[0];
    copy_validity(in, src, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(src, p)) {
            continue;
        }
        CmValue v, r;
        cm_vec_get_value(src, p, &v);
        if (ex_cast_value(&v, e->type, heap, &r, err) != CM_OK) {
            err->off = e->src_off;
            return err->code;
        }
        cm_vec_set_value(out, p, &r);
    }
    return CM_OK;
}

#define WIDEN_KERNEL(NAME, TA, TR, EXPR)                                                           \
    static CmStatus NAME(const ExExpr *e, const CmBatch *in, const CmVec *const *args, CmVec *out, \
                         CmArena *heap, CmErr *err)                                                \
    {                                                                                              \
        const TA *a = args[0]->data;                                                               \
        TR *r = out->data;                                                                         \
        copy_validity(in, args[0], out);                                                           \
        for (int i = 0; i < in->n_rows; i++) {                                                     \
            uint32_t p = cm_batch_pos(in, i);                                                      \
            r[p] = (EXPR);                                                                         \
        }                                                                                          \
        return CM_OK;                                                                              \
    }

WIDEN_KERNEL(cast_i32_i64, int32_t, int64_t, (int64_t)a[p])
WIDEN_KERNEL(cast_i32_f64, int32_t, double, (double)a[p])
WIDEN_KERNEL(cast_i64_f64, int64_t, double, (double)a[p])
WIDEN_KERNEL(cast_dec_f64, int64_t, double, (double)a[p] / (double)cm_pow10(args[0]->type.scale))

/* DECIMAL, or INT32, to a DECIMAL with at least as many integer digits and
 * at least as many fraction digits: exact and never out of range, so a
 * multiply by 10^(scale difference) with no check.  Comparisons of a column
 * with a literal of another precision cast every row through here.  The
 * multiply is unsigned because NULL slots hold whatever they hold. */
static CmStatus cast_dec_widen(const ExExpr *e, const CmBatch *in, const CmVec *const *args,
                               CmVec *out, CmArena *heap, CmErr *err)
{
    const int64_t *a = args[0]->data;
    int64_t *r = out->data;
    uint64_t f = (uint64_t)cm_pow10(e->type.scale - args[0]->type.scale);
    copy_validity(in, args[0], out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = (int64_t)((uint64_t)a[p] * f);
    }
    return CM_OK;
}

/* INTEGER, BIGINT or DECIMAL to a DECIMAL128 with room for every value:
 * exact, a multiply by 10^(scale difference) in 128 bits. */
static CmStatus cast_to_wide(const ExExpr *e, const CmBatch *in, const CmVec *const *args,
                             CmVec *out, CmArena *heap, CmErr *err)
{
    const CmVec *a = args[0];
    int from = a->type.id == CM_T_DECIMAL ? a->type.scale : 0;
    CmInt128 f = cm_pow10_128(e->type.scale - from);
    copy_validity(in, a, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        int64_t x = a->type.id == CM_T_INT32 ? ((const int32_t *)a->data)[p]
                                             : ((const int64_t *)a->data)[p];
        cm_i128_put((char *)out->data + 16 * (size_t)p, (CmInt128)x * f);
    }
    return CM_OK;
}

static CmStatus cast_i32_dec(const ExExpr *e, const CmBatch *in, const CmVec *const *args,
                             CmVec *out, CmArena *heap, CmErr *err)
{
    const int32_t *a = args[0]->data;
    int64_t *r = out->data;
    int64_t f = cm_pow10(e->type.scale);
    copy_validity(in, args[0], out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = (int64_t)a[p] * f;
    }
    return CM_OK;
}

/* DATE to TIMESTAMP (midnight): a date past the TIMESTAMP range fails. */
static CmStatus cast_date_ts(const ExExpr *e, const CmBatch *in, const CmVec *const *args,
                             CmVec *out, CmArena *heap, CmErr *err)
{
    const int32_t *a = args[0]->data;
    int64_t *r = out->data;
    copy_validity(in, args[0], out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (!cm_ts_make(a[p], 0, &r[p]) && !cm_vec_is_null(args[0], p)) {
            CmValue v = {.type = args[0]->type, .i = a[p]}, res;
            ex_cast_value(&v, e->type, heap, &res, err); /* sets the message */
            err->off = e->src_off;
            return err->code;
        }
    }
    return CM_OK;
}

static CmStatus cast_null(const ExExpr *e, const CmBatch *in, const CmVec *const *args, CmVec *out,
                          CmArena *heap, CmErr *err)
{
    for (int i = 0; i < in->n_rows; i++) {
        cm_vec_set_null(out, cm_batch_pos(in, i));
    }
    return CM_OK;
}

static CmStatus cast_same(const ExExpr *e, const CmBatch *in, const CmVec *const *args, CmVec *out,
                          CmArena *heap, CmErr *err)
{
    copy_validity(in, args[0], out);
    size_t w = cm_type_width(out->type);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        memcpy((char *)out->data + w * p, (const char *)args[0]->data + w * p, w);
    }
    return CM_OK;
}

ExKernel ex_cast_kernel(CmType from, CmType to)
{
    if (from.id == CM_T_NULL) {
        return cast_null;
    }
    if (cm_type_eq(from, to) || (from.id == CM_T_VARCHAR && to.id == CM_T_VARCHAR)) {
        return cast_same;
    }
    if (from.id == CM_T_INT32 && to.id == CM_T_INT64) {
        return cast_i32_i64;
    }
    if (from.id == CM_T_INT32 && to.id == CM_T_DOUBLE) {
        return cast_i32_f64;
    }
    if (from.id == CM_T_INT64 && to.id == CM_T_DOUBLE) {
        return cast_i64_f64;
    }
    if (from.id == CM_T_DECIMAL && to.id == CM_T_DOUBLE) {
        return cast_dec_f64;
    }
    if (from.id == CM_T_DECIMAL && to.id == CM_T_DECIMAL && to.scale >= from.scale &&
        to.precision - to.scale >= from.precision - from.scale && to.precision <= 18) {
        return cast_dec_widen;
    }
    if (from.id == CM_T_INT32 && to.id == CM_T_DECIMAL && to.precision - to.scale >= 10 &&
        to.precision <= 18) {
        return cast_i32_dec;
    }
    if (to.id == CM_T_DECIMAL128 &&
        (from.id == CM_T_INT32 || from.id == CM_T_INT64 || from.id == CM_T_DECIMAL)) {
        int fs = from.id == CM_T_DECIMAL ? from.scale : 0;
        int fi = from.id == CM_T_INT32 ? 10 : from.id == CM_T_INT64 ? 19 : from.precision - fs;
        if (to.scale >= fs && to.precision - to.scale >= fi) {
            return cast_to_wide;
        }
    }
    if (from.id == CM_T_LIST || to.id == CM_T_LIST) {
        /* list to list element by element, and a list's text; nothing else */
        return from.id == CM_T_LIST && (to.id == CM_T_LIST || to.id == CM_T_VARCHAR) ? cast_generic
                                                                                     : NULL;
    }
    if (!cast_allowed(from, to)) {
        return NULL;
    }
    if (from.id == CM_T_DATE && to.id == CM_T_TIMESTAMP) {
        return cast_date_ts;
    }
    return cast_generic;
}
