/*
 * func_math.c - numeric functions: round, floor, ceil, sqrt, power, exp, ln,
 * log10, sign.  round/floor/ceil/trunc of a DECIMAL (64- or 128-bit) stay exact
 * (scaled integers, half away from zero) and stay DECIMAL, as in DuckDB:
 * round(DECIMAL(p,s), n) is DECIMAL(p, min(n,s)) (p+1 digits for n < 0,
 * where 99 rounds to 100; trunc alike), with n a column DECIMAL(p+1, s) (DuckDB refuses
 * that), floor and ceil DECIMAL(p,0); round(integer, n) keeps the integer's
 * type.  Of a DOUBLE they use libm.
 */
#include <math.h>
#include <string.h>

#include "common/value.h"
#include "executor/func_int.h"

/* ---- DOUBLE ------------------------------------------------------------------------ */

#define UNARY_F64(NAME, EXPR)                                                                      \
    static CmStatus NAME(KERNEL_ARGS)                                                              \
    {                                                                                              \
        const double *a = args[0]->data;                                                           \
        double *r = out->data;                                                                     \
        ex_and_validity(args, 1, out);                                                             \
        for (int i = 0; i < in->n_rows; i++) {                                                     \
            uint32_t p = cm_batch_pos(in, i);                                                      \
            double x = a[p];                                                                       \
            r[p] = (EXPR);                                                                         \
        }                                                                                          \
        return CM_OK;                                                                              \
    }

UNARY_F64(floor_f64, floor(x))
UNARY_F64(ceil_f64, ceil(x))
UNARY_F64(exp_f64, exp(x))
UNARY_F64(sign_f64, (double)((x > 0) - (x < 0)))
UNARY_F64(sin_f64, sin(x))
UNARY_F64(cos_f64, cos(x))
UNARY_F64(tan_f64, tan(x))
UNARY_F64(atan_f64, atan(x))
UNARY_F64(cot_f64, 1.0 / tan(x))
UNARY_F64(cbrt_f64, cbrt(x))
UNARY_F64(degrees_f64, x *(180.0 / M_PI))
UNARY_F64(radians_f64, x *(M_PI / 180.0))

/* Functions with a domain: outside it, an error (as PostgreSQL), not NaN. */
#define DOMAIN_F64(NAME, OK, EXPR, MSG)                                                            \
    static CmStatus NAME(KERNEL_ARGS)                                                              \
    {                                                                                              \
        const double *a = args[0]->data;                                                           \
        double *r = out->data;                                                                     \
        ex_and_validity(args, 1, out);                                                             \
        for (int i = 0; i < in->n_rows; i++) {                                                     \
            uint32_t p = cm_batch_pos(in, i);                                                      \
            double x = a[p];                                                                       \
            if (cm_vec_is_null(out, p)) {                                                          \
                continue;                                                                          \
            }                                                                                      \
            if (!(OK)) {                                                                           \
                return cm_err_set(err, CM_RUNTIME, e->src_off, MSG);                               \
            }                                                                                      \
            r[p] = (EXPR);                                                                         \
        }                                                                                          \
        return CM_OK;                                                                              \
    }

DOMAIN_F64(sqrt_f64, x >= 0, sqrt(x), "cannot take the square root of a negative number")
DOMAIN_F64(ln_f64, x > 0, log(x), "cannot take the logarithm of zero or a negative number")
DOMAIN_F64(log10_f64, x > 0, log10(x), "cannot take the logarithm of zero or a negative number")
DOMAIN_F64(log2_f64, x > 0, log2(x), "cannot take the logarithm of zero or a negative number")
DOMAIN_F64(asin_f64, x >= -1 && x <= 1, asin(x), "asin is undefined outside [-1, 1]")
DOMAIN_F64(acos_f64, x >= -1 && x <= 1, acos(x), "acos is undefined outside [-1, 1]")

static CmStatus atan2_f64(KERNEL_ARGS)
{
    const double *y = args[0]->data, *x = args[1]->data;
    double *r = out->data;
    ex_and_validity(args, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = atan2(y[p], x[p]);
    }
    return CM_OK;
}

/* log(b, x): the logarithm of x in base b (DuckDB's order); b and x must be
 * positive and b not 1. */
static CmStatus log_base_f64(KERNEL_ARGS)
{
    const double *b = args[0]->data, *x = args[1]->data;
    double *r = out->data;
    ex_and_validity(args, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        if (!(b[p] > 0) || !(x[p] > 0)) {
            return cm_err_set(err, CM_RUNTIME, e->src_off,
                              "cannot take the logarithm of zero or a negative number");
        }
        if (b[p] == 1) {
            return cm_err_set(err, CM_RUNTIME, e->src_off, "the base of a logarithm cannot be 1");
        }
        r[p] = log10(x[p]) / log10(b[p]); /* as DuckDB: log(10, 1000) is 3 */
    }
    return CM_OK;
}

/* pi(): a constant, folded at bind time. */
static CmStatus pi_f64(KERNEL_ARGS)
{
    double *r = out->data;
    (void)args;
    (void)e;
    (void)err;
    for (int i = 0; i < in->n_rows; i++) {
        r[cm_batch_pos(in, i)] = M_PI;
    }
    return CM_OK;
}

static CmStatus power_f64(KERNEL_ARGS)
{
    const double *a = args[0]->data, *b = args[1]->data;
    double *r = out->data;
    ex_and_validity(args, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = pow(a[p], b[p]);
    }
    return CM_OK;
}

/* round(x, digits) for DOUBLE: half away from zero at `digits` decimals;
 * trunc (aux 3) toward zero. */
static CmStatus round_f64(KERNEL_ARGS)
{
    double (*fn)(double) = e->aux == 3 ? trunc : round;
    const double *a = args[0]->data;
    const int64_t *d = e->n_args > 1 ? args[1]->data : NULL;
    double *r = out->data;
    ex_and_validity(args, e->n_args, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        int64_t digits = d ? d[p] : 0;
        if (digits == 0) {
            r[p] = fn(a[p]);
        } else {
            double f = pow(10.0, (double)(digits > 300 ? 300 : digits < -300 ? -300 : digits));
            r[p] = fn(a[p] * f) / f;
        }
    }
    return CM_OK;
}

/* ---- DECIMAL (exact) --------------------------------------------------------------- */

/* Rounds a scaled value to `keep` decimals of its `scale`: the quotient by
 * 10^(scale - keep) (aux packs: scale | keep << 8 | mode << 16, mode 0 round
 * half away from zero, 1 floor, 2 ceil, 3 trunc toward zero). */
static int64_t dec_round(int64_t v, int scale, int keep, int mode)
{
    if (keep >= scale) {
        return v;
    }
    int64_t unit = cm_pow10(scale - keep);
    int64_t q = v / unit, rem = v % unit;
    if (mode == 0) {
        if (rem * 2 >= unit) {
            q++;
        } else if (rem * 2 <= -unit) {
            q--;
        }
    } else if (mode == 1 && rem < 0) {
        q--;
    } else if (mode == 2 && rem > 0) {
        q++;
    }
    return q;
}

static CmStatus round_dec(KERNEL_ARGS)
{
    const int64_t *a = args[0]->data;
    int64_t *r = out->data;
    int scale = (int)(e->aux & 0xff), keep = (int)((e->aux >> 8) & 0xff),
        mode = (int)(e->aux >> 16);
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        /* The result keeps `keep` decimals: its scale is the function's result scale. */
        r[p] = dec_round(a[p], scale, keep, mode);
    }
    return CM_OK;
}

/* The integer at p of a, an INTEGER or BIGINT vector (or a DECIMAL's raw value). */
static inline int64_t int_value(const CmVec *a, uint32_t p)
{
    return a->type.id == CM_T_INT32 ? ((const int32_t *)a->data)[p] : ((const int64_t *)a->data)[p];
}

/* Stores v at p of out, an INTEGER or a BIGINT-wide vector (BIGINT, DECIMAL):
 * false when it does not fit an INTEGER. */
static inline bool put_int(CmVec *out, uint32_t p, int64_t v)
{
    if (out->type.id != CM_T_INT32) {
        ((int64_t *)out->data)[p] = v;
        return true;
    }
    ((int32_t *)out->data)[p] = (int32_t)v;
    return v >= INT32_MIN && v <= INT32_MAX;
}

/* v, a value at `scale`, rounded half away from zero to `keep` decimals: the
 * result keeps min(keep, scale) decimals, none when keep < 0 (a multiple of
 * 10^-keep, 0 past 18 digits); by `mode` (dec_round's 0 or 3, trunc).
 * False when that overflows BIGINT. */
static bool round_scaled(int64_t v, int scale, int64_t keep, int mode, int64_t *r)
{
    if (keep >= scale) {
        *r = v;
    } else if (keep >= 0) {
        *r = dec_round(v, scale, (int)keep, mode);
    } else if (scale - keep > 18) {
        *r = 0;
    } else {
        CmInt128 x = (CmInt128)dec_round(v, scale - (int)keep, 0, mode) * cm_pow10((int)-keep);
        if (x > INT64_MAX || x < INT64_MIN) {
            return false;
        }
        *r = (int64_t)x;
    }
    return true;
}

/* round(DECIMAL(p,s), digits) with digits a column: each value rounded to its
 * row's digits and kept at scale s (aux: s | mode << 16, dec_round's), in
 * DECIMAL(min(p+1, 18), s); a
 * result past that precision is an overflow. */
static CmStatus round_dec_col_k(KERNEL_ARGS)
{
    const int64_t *a = args[0]->data, *d = args[1]->data;
    int64_t *r = out->data;
    int scale = (int)(e->aux & 0xff), mode = (int)(e->aux >> 16);
    int64_t limit = cm_pow10(out->type.precision);
    ex_and_validity(args, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p) || d[p] >= scale) {
            r[p] = a[p];
            continue;
        }
        if (scale - d[p] > 18) {
            r[p] = 0; /* |a| < 10^18 rounds to 0 at a unit of 10^19 or more */
            continue;
        }
        int keep = (int)d[p];
        CmInt128 v = (CmInt128)dec_round(a[p], scale, keep, mode) * cm_pow10(scale - keep);
        if (v >= limit || v <= -limit) {
            return cm_err_set(err, CM_RUNTIME, e->src_off,
                              "overflow in round: the result exceeds DECIMAL(%d)",
                              out->type.precision);
        }
        r[p] = (int64_t)v;
    }
    return CM_OK;
}

/* ---- DECIMAL128 (exact) ------------------------------------------------------------ */

typedef struct Wide {
    unsigned char b[16]; /* a CmInt128 with no alignment promised (cm_i128_get) */
} Wide;

/* v rounded (mode 0 half away from zero, 1 floor, 2 ceil, 3 trunc) to `drop` fewer
 * decimals: the quotient by 10^drop.  |v| < 10^38, so past 38 dropped digits
 * only 0 (or -1/1 for floor/ceil of a fraction) is left. */
static CmInt128 wide_round(CmInt128 v, int drop, int mode)
{
    if (drop <= 0) {
        return v;
    }
    if (drop > 38) {
        return mode == 1 && v < 0 ? -1 : mode == 2 && v > 0 ? 1 : 0;
    }
    CmInt128 unit = cm_pow10_128(drop);
    CmInt128 q = v / unit, rem = v % unit;
    /* rem * 2 could pass 2^127: compare against unit - |rem| instead */
    if (mode == 0) {
        q += rem > 0 && rem >= unit - rem ? 1 : rem < 0 && -rem >= unit + rem ? -1 : 0;
    } else if (mode == 1 && rem < 0) {
        q--;
    } else if (mode == 2 && rem > 0) {
        q++;
    }
    return q;
}

/* floor/ceil/round of a DECIMAL128 to an integer (aux as round_dec's): the
 * result, DECIMAL(p,0), holds p-s+1 integer digits, so it cannot overflow. */
static CmStatus round_dec128(KERNEL_ARGS)
{
    const Wide *a = args[0]->data;
    Wide *r = out->data;
    int scale = (int)(e->aux & 0xff), keep = (int)((e->aux >> 8) & 0xff),
        mode = (int)(e->aux >> 16);
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        cm_i128_put(r[p].b, wide_round(cm_i128_get(a[p].b), scale - keep, mode));
    }
    return CM_OK;
}

/* round_scaled for a DECIMAL128 value: false when the result passes
 * `precision` digits (only a negative `keep` can carry it there). */
static bool round_scaled128(CmInt128 v, int scale, int keep, int mode, int precision, CmInt128 *r)
{
    if (keep >= scale) {
        *r = v;
        return true;
    }
    CmInt128 q = wide_round(v, scale - keep, mode);
    if (keep >= 0 || q == 0) {
        *r = q;
        return true;
    }
    return -keep <= 38 && cm_i128_mul_checked(q, cm_pow10_128(-keep), precision, r);
}

/* round(DECIMAL128, digits) with constant digits: round_digits_k's wide loop. */
static CmStatus round_digits128(const ExExpr *e, const CmBatch *in, const CmVec *a, CmVec *out,
                                CmErr *err)
{
    int scale = (int)(e->aux & 0xff), keep = (int)((e->aux >> 8) & 0xff) - 128,
        mode = (int)(e->aux >> 16);
    const Wide *x = a->data;
    Wide *r = out->data;
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        CmInt128 v;
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        if (!round_scaled128(cm_i128_get(x[p].b), scale, keep, mode, e->type.precision, &v)) {
            return cm_err_set(err, CM_RUNTIME, e->src_off,
                              "overflow in round: the result exceeds DECIMAL(%d)",
                              e->type.precision);
        }
        cm_i128_put(r[p].b, v);
    }
    return CM_OK;
}

/* round(x, digits) for DECIMAL and integers with constant digits, exact:
 * aux = scale | (digits + 128) << 8 | mode << 16 (0 round, 3 trunc). */
static CmStatus round_digits_k(KERNEL_ARGS)
{
    int scale = (int)(e->aux & 0xff), keep = (int)((e->aux >> 8) & 0xff) - 128,
        mode = (int)(e->aux >> 16);
    ex_and_validity(args, 1, out);
    if (args[0]->type.id == CM_T_DECIMAL128) {
        return round_digits128(e, in, args[0], out, err);
    }
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        int64_t v;
        if (!cm_vec_is_null(out, p) &&
            (!round_scaled(int_value(args[0], p), scale, keep, mode, &v) || !put_int(out, p, v))) {
            return cm_err_set(err, CM_RUNTIME, e->src_off, "overflow in round");
        }
    }
    return CM_OK;
}

/* round(integer, digits) with digits a column or outside the constant path's
 * -18..18, per row (aux: the mode, 0 round or 3 trunc); NULL digits give NULL. */
static CmStatus round_int_k(KERNEL_ARGS)
{
    const int64_t *d = args[1]->data;
    ex_and_validity(args, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        int64_t v;
        if (!cm_vec_is_null(out, p) &&
            (!round_scaled(int_value(args[0], p), 0, d[p], (int)e->aux, &v) ||
             !put_int(out, p, v))) {
            return cm_err_set(err, CM_RUNTIME, e->src_off, "overflow in round");
        }
    }
    return CM_OK;
}

ExKernel ex_round_digits_kernel(void)
{
    return round_digits_k;
}

int ex_rounding_mode(const char *name)
{
    return !strcmp(name, "round")                                ? 0
           : !strcmp(name, "floor")                              ? 1
           : (!strcmp(name, "ceil") || !strcmp(name, "ceiling")) ? 2
           : !strcmp(name, "trunc")                              ? 3
                                                                 : -1;
}

static CmStatus identity_k(KERNEL_ARGS)
{
    memcpy(out->data, args[0]->data, cm_type_width(out->type) * CM_BATCH_CAP);
    ex_and_validity(args, 1, out);
    return CM_OK;
}

/* ---- resolution ----------------------------------------------------------------------- */

static bool is_number(CmType t)
{
    return cm_type_is_numeric(t) || t.id == CM_T_NULL || t.id == CM_T_VARCHAR;
}

static CmStatus resolve_rounding(const char *name, int n_args, const CmType *types, int64_t off,
                                 ExFuncMatch *m, CmErr *err)
{
    CmType t = types[0];
    if (t.id == CM_T_DECIMAL128 && n_args == 2 && types[1].id != CM_T_NULL) {
        /* The binder takes a constant n (round_digits_k); through DOUBLE a
         * wide value would lose its digits unseen.  DuckDB refuses it too. */
        return cm_err_set(err, CM_TYPE, off, "%s of a DECIMAL(%d,%d) needs constant digits", name,
                          t.precision, t.scale);
    }
    int mode = ex_rounding_mode(name);
    if (cm_type_is_integer(t) && n_args == 2) {
        /* of the integer's type, as DuckDB; a result past it is an overflow */
        m->arg_types[0] = m->result = t;
        m->arg_types[1] = cm_type_make(CM_T_INT64);
        m->kernel = round_int_k;
        m->aux = mode;
        return CM_OK;
    }
    if (cm_type_is_integer(t)) {
        m->arg_types[0] = m->result = t;
        m->kernel = identity_k;
        return CM_OK;
    }
    if (t.id == CM_T_DECIMAL && n_args == 2) {
        /* digits not constant (the binder takes those): exact, at the input's
         * scale, one more digit for 99 rounding to 100 */
        m->arg_types[0] = t;
        m->arg_types[1] = cm_type_make(CM_T_INT64);
        m->result = cm_type_decimal(t.precision < 18 ? t.precision + 1 : 18, t.scale);
        m->kernel = round_dec_col_k;
        m->aux = t.scale | (int64_t)mode << 16;
        return CM_OK;
    }
    if (cm_type_is_decimal(t) && n_args == 1) {
        /* round/floor/ceil/trunc of DECIMAL(p,s) is DECIMAL(p,0): exact. */
        m->arg_types[0] = t;
        m->result = cm_type_decimal(t.precision, 0);
        m->kernel = t.id == CM_T_DECIMAL ? round_dec : round_dec128;
        m->aux = t.scale | (0 << 8) | ((int64_t)mode << 16);
        return CM_OK;
    }
    m->arg_types[0] = m->result = cm_type_make(CM_T_DOUBLE);
    m->arg_types[1] = cm_type_make(CM_T_INT64);
    m->kernel = mode == 1 ? floor_f64 : mode == 2 ? ceil_f64 : round_f64;
    m->aux = mode;
    return CM_OK;
}

CmStatus ex_resolve_math(const char *name, int n_args, const CmType *types, int64_t off,
                         ExFuncMatch *m, CmErr *err)
{
    CmType f64 = cm_type_make(CM_T_DOUBLE);
    int mode = ex_rounding_mode(name);
    if (mode >= 0 && (n_args == 1 || (n_args == 2 && (mode == 0 || mode == 3)))) {
        if (!is_number(types[0])) {
            return cm_err_set(err, CM_TYPE, off, "%s expects a number", name);
        }
        return resolve_rounding(name, n_args, types, off, m, err);
    }
    static const struct {
        const char *name;
        ExKernel k;
    } UNARY[] = {{"sqrt", sqrt_f64},       {"exp", exp_f64},        {"ln", ln_f64},
                 {"log10", log10_f64},     {"sign", sign_f64},      {"log", log10_f64},
                 {"log2", log2_f64},       {"sin", sin_f64},        {"cos", cos_f64},
                 {"tan", tan_f64},         {"cot", cot_f64},        {"asin", asin_f64},
                 {"acos", acos_f64},       {"atan", atan_f64},      {"cbrt", cbrt_f64},
                 {"degrees", degrees_f64}, {"radians", radians_f64}};
    for (size_t i = 0; n_args == 1 && i < sizeof UNARY / sizeof UNARY[0]; i++) {
        if (!strcmp(name, UNARY[i].name)) {
            m->arg_types[0] = m->result = f64;
            m->kernel = UNARY[i].k;
            return CM_OK;
        }
    }
    if (!strcmp(name, "log") && n_args == 2) {
        m->arg_types[0] = m->arg_types[1] = m->result = f64;
        m->kernel = log_base_f64;
        return CM_OK;
    }
    if ((!strcmp(name, "power") || !strcmp(name, "pow") || !strcmp(name, "atan2")) && n_args == 2) {
        m->arg_types[0] = m->arg_types[1] = m->result = f64;
        m->kernel = name[0] == 'a' ? atan2_f64 : power_f64;
        return CM_OK;
    }
    if (!strcmp(name, "pi") && n_args == 0) {
        m->result = f64;
        m->kernel = pi_f64;
        return CM_OK;
    }
    return EX_NOT_MINE;
}
