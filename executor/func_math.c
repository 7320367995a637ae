/*
 * func_math.c - numeric functions: round, floor, ceil, sqrt, power, exp, ln,
 * log10, sign.  round/floor/ceil of a DECIMAL stay exact (scaled integers,
 * half away from zero); of a DOUBLE they use libm.
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

/* round(x, digits) for DOUBLE: half away from zero at `digits` decimals. */
static CmStatus round_f64(KERNEL_ARGS)
{
    const double *a = args[0]->data;
    const int64_t *d = e->n_args > 1 ? args[1]->data : NULL;
    double *r = out->data;
    ex_and_validity(args, e->n_args, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        int64_t digits = d ? d[p] : 0;
        if (digits == 0) {
            r[p] = round(a[p]);
        } else {
            double f = pow(10.0, (double)(digits > 300 ? 300 : digits < -300 ? -300 : digits));
            r[p] = round(a[p] * f) / f;
        }
    }
    return CM_OK;
}

/* ---- DECIMAL (exact) --------------------------------------------------------------- */

/* Rounds a scaled value to `keep` decimals of its `scale`, staying at `scale`
 * (aux packs: scale | keep << 8 | mode << 16, mode 0 round, 1 floor, 2 ceil). */
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

/* v, a value at `scale`, rounded half away from zero to `keep` decimals: the
 * result keeps min(keep, scale) decimals, none when keep < 0 (a multiple of
 * 10^-keep, 0 past 18 digits).  False when that overflows BIGINT. */
static bool round_scaled(int64_t v, int scale, int64_t keep, int64_t *r)
{
    if (keep >= scale) {
        *r = v;
    } else if (keep >= 0) {
        *r = dec_round(v, scale, (int)keep, 0);
    } else if (scale - keep > 18) {
        *r = 0;
    } else {
        CmInt128 x = (CmInt128)dec_round(v, scale - (int)keep, 0, 0) * cm_pow10((int)-keep);
        if (x > INT64_MAX || x < INT64_MIN) {
            return false;
        }
        *r = (int64_t)x;
    }
    return true;
}

/* round(x, digits) for DECIMAL and integers with constant digits, exact:
 * aux = scale | (digits + 128) << 8. */
static CmStatus round_digits_k(KERNEL_ARGS)
{
    int scale = (int)(e->aux & 0xff), keep = (int)((e->aux >> 8) & 0xff) - 128;
    int64_t *r = out->data;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (!cm_vec_is_null(out, p) && !round_scaled(int_value(args[0], p), scale, keep, &r[p])) {
            return cm_err_set(err, CM_RUNTIME, e->src_off, "overflow in round");
        }
    }
    return CM_OK;
}

/* round(integer, digits) with digits a column or outside the constant path's
 * -18..18, per row; NULL digits give NULL. */
static CmStatus round_int_k(KERNEL_ARGS)
{
    const int64_t *d = args[1]->data;
    int64_t *r = out->data;
    ex_and_validity(args, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (!cm_vec_is_null(out, p) && !round_scaled(int_value(args[0], p), 0, d[p], &r[p])) {
            return cm_err_set(err, CM_RUNTIME, e->src_off, "overflow in round");
        }
    }
    return CM_OK;
}

ExKernel ex_round_digits_kernel(void)
{
    return round_digits_k;
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

static CmStatus resolve_rounding(const char *name, int n_args, const CmType *types, ExFuncMatch *m)
{
    CmType t = types[0];
    int mode = !strcmp(name, "floor")                                ? 1
               : (!strcmp(name, "ceil") || !strcmp(name, "ceiling")) ? 2
                                                                     : 0;
    if (cm_type_is_integer(t) && n_args == 2) {
        m->arg_types[0] = t;
        m->arg_types[1] = m->result = cm_type_make(CM_T_INT64);
        m->kernel = round_int_k;
        return CM_OK;
    }
    if (cm_type_is_integer(t)) {
        m->arg_types[0] = m->result = t;
        m->kernel = identity_k;
        return CM_OK;
    }
    if (t.id == CM_T_DECIMAL && n_args == 1) {
        /* round/floor/ceil of DECIMAL(p,s) is DECIMAL(p,0): exact. */
        m->arg_types[0] = t;
        m->result = cm_type_decimal(t.precision, 0);
        m->kernel = round_dec;
        m->aux = t.scale | (0 << 8) | ((int64_t)mode << 16);
        return CM_OK;
    }
    m->arg_types[0] = m->result = cm_type_make(CM_T_DOUBLE);
    m->arg_types[1] = cm_type_make(CM_T_INT64);
    m->kernel = mode == 1 ? floor_f64 : mode == 2 ? ceil_f64 : round_f64;
    return CM_OK;
}

CmStatus ex_resolve_math(const char *name, int n_args, const CmType *types, int64_t off,
                         ExFuncMatch *m, CmErr *err)
{
    CmType f64 = cm_type_make(CM_T_DOUBLE);
    bool rounding = !strcmp(name, "round") || !strcmp(name, "floor") || !strcmp(name, "ceil") ||
                    !strcmp(name, "ceiling");
    if (rounding && (n_args == 1 || (n_args == 2 && !strcmp(name, "round")))) {
        if (!is_number(types[0])) {
            return cm_err_set(err, CM_TYPE, off, "%s expects a number", name);
        }
        return resolve_rounding(name, n_args, types, m);
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
