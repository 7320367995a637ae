/*
 * func.c - operator resolution and the arithmetic, comparison and logic kernels.
 *
 * Kernels that cannot fail compute every active row, NULL or not (the value
 * under a NULL is garbage but harmless), and take validity as the AND of their
 * arguments' bitmaps, word by word.  Kernels that can fail (overflow, division
 * by zero) skip NULL rows first.
 */
#include "executor/func.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "common/datetime.h"
#include "common/value.h"
#include "executor/func_int.h"

void ex_and_validity(const CmVec *const *args, int n, CmVec *out)
{
    out->validity = NULL;
    for (int a = 0; a < n; a++) {
        if (args[a]->validity == NULL) {
            continue;
        }
        if (out->validity == NULL) {
            memcpy(out->validity_buf, args[a]->validity, sizeof out->validity_buf);
            out->validity = out->validity_buf;
        } else {
            for (int w = 0; w < CM_VALIDITY_WORDS; w++) {
                out->validity_buf[w] &= args[a]->validity[w];
            }
        }
    }
}

static CmStatus overflow(const ExExpr *e, CmErr *err)
{
    return cm_err_set(err, CM_RUNTIME, e->src_off, "integer overflow in '%s'", e->name);
}

static CmStatus div_zero(const ExExpr *e, CmErr *err)
{
    return cm_err_set(err, CM_RUNTIME, e->src_off, "division by zero");
}

/* The kernels below read the batch's row count, selection and validity into
 * locals before their loops: a result written through a uint8_t pointer (a
 * comparison's) may alias anything, so the compiler would otherwise load them
 * again at every row (TPC-H q6's five comparisons took twice the time). */

/* True when row p is NULL in the bitmap `valid` (NULL: none is). */
static inline bool row_is_null(const uint64_t *valid, uint32_t p)
{
    return valid != NULL && !((valid[p >> 6] >> (p & 63)) & 1);
}

/* A binary kernel that may fail: BODY sets r[p] from a[p], b[p] or returns. */
#define CHECKED_BINARY(NAME, TA, TB, TR, BODY)                                                     \
    static CmStatus NAME(KERNEL_ARGS)                                                              \
    {                                                                                              \
        const TA *restrict a = args[0]->data;                                                      \
        const TB *restrict b = args[1]->data;                                                      \
        TR *restrict r = out->data;                                                                \
        ex_and_validity(args, 2, out);                                                             \
        const uint32_t *restrict sel = in->sel;                                                    \
        const uint64_t *restrict valid = out->validity;                                            \
        const int n_rows = in->n_rows;                                                             \
        for (int i = 0; i < n_rows; i++) {                                                         \
            uint32_t p = sel != NULL ? sel[i] : (uint32_t)i;                                       \
            if (row_is_null(valid, p)) {                                                           \
                continue;                                                                          \
            }                                                                                      \
            BODY                                                                                   \
        }                                                                                          \
        return CM_OK;                                                                              \
    }

/* A binary kernel that fails only by overflow: BODY sets r[p] from a[p] and
 * b[p], and bool o to whether the row overflows.  Unlike CHECKED_BINARY it computes
 * every active row, NULL or not (a NULL slot's garbage may overflow: only a
 * valid row's overflow counts), and raises the error once after the loop, so
 * a batch without NULLs or selection runs a loop with no exit and no test of
 * validity (TPC-H q1's DECIMAL expressions: about twice as fast). */
#define OVERFLOW_BINARY(NAME, T, BODY)                                                             \
    static CmStatus NAME(KERNEL_ARGS)                                                              \
    {                                                                                              \
        const T *restrict a = args[0]->data;                                                       \
        const T *restrict b = args[1]->data;                                                       \
        T *restrict r = out->data;                                                                 \
        ex_and_validity(args, 2, out);                                                             \
        const uint32_t *restrict sel = in->sel;                                                    \
        const uint64_t *restrict valid = out->validity;                                            \
        const uint32_t n_rows = (uint32_t)in->n_rows;                                              \
        bool bad = false;                                                                          \
        if (sel == NULL && valid == NULL) {                                                        \
            for (uint32_t p = 0; p < n_rows; p++) {                                                \
                BODY bad |= o;                                                                     \
            }                                                                                      \
        } else {                                                                                   \
            for (uint32_t i = 0; i < n_rows; i++) {                                                \
                uint32_t p = sel != NULL ? sel[i] : i;                                             \
                BODY bad |= o && !row_is_null(valid, p);                                           \
            }                                                                                      \
        }                                                                                          \
        return bad ? overflow(e, err) : CM_OK;                                                     \
    }

/* A binary kernel that cannot fail. */
#define PLAIN_BINARY(NAME, TA, TB, TR, EXPR)                                                       \
    static CmStatus NAME(KERNEL_ARGS)                                                              \
    {                                                                                              \
        const TA *restrict a = args[0]->data;                                                      \
        const TB *restrict b = args[1]->data;                                                      \
        TR *restrict r = out->data;                                                                \
        ex_and_validity(args, 2, out);                                                             \
        const uint32_t *restrict sel = in->sel;                                                    \
        const uint32_t n_rows = (uint32_t)in->n_rows;                                              \
        if (sel == NULL) {                                                                         \
            for (uint32_t p = 0; p < n_rows; p++) {                                                \
                r[p] = (EXPR);                                                                     \
            }                                                                                      \
        } else {                                                                                   \
            for (uint32_t i = 0; i < n_rows; i++) {                                                \
                uint32_t p = sel[i];                                                               \
                r[p] = (EXPR);                                                                     \
            }                                                                                      \
        }                                                                                          \
        return CM_OK;                                                                              \
    }

/* ---- arithmetic ------------------------------------------------------------ */

OVERFLOW_BINARY(add_i64, int64_t, bool o = __builtin_add_overflow(a[p], b[p], &r[p]);)
OVERFLOW_BINARY(sub_i64, int64_t, bool o = __builtin_sub_overflow(a[p], b[p], &r[p]);)
OVERFLOW_BINARY(mul_i64, int64_t, bool o = __builtin_mul_overflow(a[p], b[p], &r[p]);)
CHECKED_BINARY(
    div_i64, int64_t, int64_t, int64_t,
    if (b[p] == 0) { return div_zero(e, err); } if (a[p] == INT64_MIN && b[p] == -1) {
        return overflow(e, err);
    } r[p] = a[p] / b[p];)
CHECKED_BINARY(
    mod_i64, int64_t, int64_t, int64_t,
    if (b[p] == 0) { return div_zero(e, err); } r[p] = b[p] == -1 ? 0 : a[p] % b[p];)
PLAIN_BINARY(add_f64, double, double, double, a[p] + b[p])
PLAIN_BINARY(sub_f64, double, double, double, a[p] - b[p])
PLAIN_BINARY(mul_f64, double, double, double, a[p] * b[p])
/* DOUBLE / and % follow IEEE 754, as DuckDB does: x / 0 is +-Infinity, 0 / 0 and
 * x % 0 are NaN.  Integer and DECIMAL division keep the error (docs/conformance.md). */
PLAIN_BINARY(div_f64, double, double, double, a[p] / b[p])
PLAIN_BINARY(mod_f64, double, double, double, fmod(a[p], b[p]))
/* Decimal + and - work on operands already rescaled to the result's scale; the
 * result must stay within 18 digits. */
#define DEC18 INT64_C(1000000000000000000) /* 10^18: DECIMAL's values are below it */
/* Valid operands are below 10^18 in magnitude, so their sum is below 2^63
 * and only the 18-digit bound needs a test: the sum is taken unsigned (a
 * NULL slot's garbage may wrap, harmlessly), and the bound is one unsigned
 * compare, which leaves a loop the compiler can vectorize. */
#define DEC18_OUT(x) ((uint64_t)(x) + (uint64_t)(DEC18 - 1) > (uint64_t)(2 * (DEC18 - 1)))
OVERFLOW_BINARY(add_dec, int64_t, r[p] = (int64_t)((uint64_t)a[p] + (uint64_t)b[p]);
                bool o = DEC18_OUT(r[p]);)
OVERFLOW_BINARY(sub_dec, int64_t, r[p] = (int64_t)((uint64_t)a[p] - (uint64_t)b[p]);
                bool o = DEC18_OUT(r[p]);)
/* Decimal %: each operand raised to the result's scale in 128 bits (aux: the
 * two raises, 8 bits each), so that a BIGINT beside a DECIMAL(3,2) does not
 * overflow; the remainder is no larger than the operand already at that scale,
 * which fits. */
CHECKED_BINARY(
    mod_dec, int64_t, int64_t, int64_t,
    if (b[p] == 0) { return div_zero(e, err); } CmInt128 x = (CmInt128)a[p] *
                                                             cm_pow10((int)(e->aux & 0xff));
    CmInt128 y = (CmInt128)b[p] * cm_pow10((int)(e->aux >> 8)); r[p] = (int64_t)(x % y);)
/* Decimal *: scales add up; the product must fit 18 digits (past 64 bits it
 * is past 18 digits too, 10^18 < 2^63). */
OVERFLOW_BINARY(mul_dec, int64_t, bool o = __builtin_mul_overflow(a[p], b[p], &r[p]);
                o |= r[p] >= DEC18 || r[p] <= -DEC18;)

/* DECIMAL128 arithmetic on operands already at the result's scale (aux: the
 * result's precision): a result past it is an error, never a wrap.  Slots
 * are 16 bytes with no alignment promised, read through Wide. */
typedef struct Wide {
    unsigned char b[16];
} Wide;

static CmStatus wide_overflow(const ExExpr *e, CmErr *err)
{
    return cm_err_set(err, CM_RUNTIME, e->src_off,
                      "overflow in '%s': the result exceeds DECIMAL(%d)", e->name, (int)e->aux);
}

#define WIDE_BINARY(NAME, BODY)                                                                    \
    CHECKED_BINARY(NAME, Wide, Wide, Wide, CmInt128 x = cm_i128_get(a[p].b);                       \
                   CmInt128 y = cm_i128_get(b[p].b); CmInt128 v; BODY cm_i128_put(r[p].b, v);)
WIDE_BINARY(
    add_i128, if (!cm_i128_add_checked(x, y, (int)e->aux, &v)) { return wide_overflow(e, err); })
WIDE_BINARY(
    sub_i128, if (__builtin_sub_overflow(x, y, &v) || !cm_i128_add_checked(v, 0, (int)e->aux, &v)) {
        return wide_overflow(e, err);
    })
WIDE_BINARY(
    mul_i128, if (!cm_i128_mul_checked(x, y, (int)e->aux, &v)) { return wide_overflow(e, err); })
WIDE_BINARY(
    mod_i128, if (y == 0) { return div_zero(e, err); } v = x % y;)
/* Integers in 128 bits (a DECIMAL(p,0), as sum of an integer is) divide as
 * integers do here, truncating; |x / y| <= |x| always fits. */
WIDE_BINARY(
    div_i128, if (y == 0) { return div_zero(e, err); } v = x / y;)

/* - (aux 0) and abs (aux 1) of a DECIMAL128: within 38 digits, never past
 * them; unsigned, since a NULL slot may hold anything. */
static CmStatus neg_i128(KERNEL_ARGS)
{
    const Wide *a = args[0]->data;
    Wide *r = out->data;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        CmInt128 x = cm_i128_get(a[p].b);
        CmInt128 neg = (CmInt128)((CmUInt128)0 - (CmUInt128)x);
        cm_i128_put(r[p].b, e->aux != 0 && x >= 0 ? x : neg);
    }
    return CM_OK;
}

/* Date arithmetic: DATE +/- days, DATE - DATE (days + DATE swaps its
 * arguments to use add_date_i64). */
CHECKED_BINARY(
    add_date_i64, int32_t, int64_t, int32_t, int64_t v = (int64_t)a[p] + b[p];
    if (v > INT32_MAX || v < INT32_MIN) { return overflow(e, err); } r[p] = (int32_t)v;)
CHECKED_BINARY(
    sub_date_i64, int32_t, int64_t, int32_t, int64_t v = (int64_t)a[p] - b[p];
    if (v > INT32_MAX || v < INT32_MIN) { return overflow(e, err); } r[p] = (int32_t)v;)
PLAIN_BINARY(sub_date_date, int32_t, int32_t, int64_t, (int64_t)a[p] - b[p])

static CmStatus neg_i64(KERNEL_ARGS)
{
    const int64_t *a = args[0]->data;
    int64_t *r = out->data;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (!cm_vec_is_null(out, p) && a[p] == INT64_MIN) {
            return overflow(e, err);
        }
        r[p] = -a[p];
    }
    return CM_OK;
}

static CmStatus neg_f64(KERNEL_ARGS)
{
    const double *a = args[0]->data;
    double *r = out->data;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = -a[p];
    }
    return CM_OK;
}

static CmStatus abs_i64(KERNEL_ARGS)
{
    const int64_t *a = args[0]->data;
    int64_t *r = out->data;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (!cm_vec_is_null(out, p) && a[p] == INT64_MIN) {
            return overflow(e, err);
        }
        r[p] = a[p] < 0 ? -a[p] : a[p];
    }
    return CM_OK;
}

static CmStatus abs_f64(KERNEL_ARGS)
{
    const double *a = args[0]->data;
    double *r = out->data;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = fabs(a[p]);
    }
    return CM_OK;
}

/* ---- comparison ------------------------------------------------------------ */

#define CMP_KERNELS(SUFFIX, T, CMP)                                                                \
    PLAIN_BINARY(eq_##SUFFIX, T, T, uint8_t, CMP(a[p], b[p]) == 0)                                 \
    PLAIN_BINARY(ne_##SUFFIX, T, T, uint8_t, CMP(a[p], b[p]) != 0)                                 \
    PLAIN_BINARY(lt_##SUFFIX, T, T, uint8_t, CMP(a[p], b[p]) < 0)                                  \
    PLAIN_BINARY(le_##SUFFIX, T, T, uint8_t, CMP(a[p], b[p]) <= 0)                                 \
    PLAIN_BINARY(gt_##SUFFIX, T, T, uint8_t, CMP(a[p], b[p]) > 0)                                  \
    PLAIN_BINARY(ge_##SUFFIX, T, T, uint8_t, CMP(a[p], b[p]) >= 0)

#define NUM_CMP(x, y) (((x) > (y)) - ((x) < (y)))
#define STR_CMP(x, y) cm_str_cmp(&(x), &(y))

CMP_KERNELS(i32, int32_t, NUM_CMP)
CMP_KERNELS(i64, int64_t, NUM_CMP)
CMP_KERNELS(f64, double, cm_f64_cmp) /* NaN = NaN, and NaN > +Infinity */
CMP_KERNELS(u8, uint8_t, NUM_CMP)
#define IV_CMP(x, y) cm_interval_cmp(&(x), &(y))
CMP_KERNELS(iv, CmInterval, IV_CMP)
static inline int wide_cmp(const Wide *x, const Wide *y)
{
    CmInt128 u = cm_i128_get(x->b), v = cm_i128_get(y->b);
    return (u > v) - (u < v);
}
#define WIDE_CMP(x, y) wide_cmp(&(x), &(y))
CMP_KERNELS(i128, Wide, WIDE_CMP)
/* Strings are compared only where both sides are valid: the slot under a NULL
 * may hold no string at all. */
#define STR_KERNEL(NAME, TEST)                                                                     \
    CHECKED_BINARY(NAME, CmStr, CmStr, uint8_t, r[p] = (uint8_t)(STR_CMP(a[p], b[p]) TEST);)
/* Equality needs no order: lengths and 4-byte prefixes settle most pairs
 * without reaching the bytes. */
CHECKED_BINARY(eq_str_rows, CmStr, CmStr, uint8_t, r[p] = cm_str_eq(&a[p], &b[p]);)
CHECKED_BINARY(ne_str_rows, CmStr, CmStr, uint8_t, r[p] = !cm_str_eq(&a[p], &b[p]);)

/* = (ne 0) and <> (ne 1) of a column and a constant of at most CM_STR_INLINE
 * bytes (TPC-H q12's ship modes, an IN list of codes): the constant's words
 * and masks are made once, and a row is its length and two masked words,
 * compared without a branch.  Every active row is computed, NULL or not: the
 * slot is read, never what a garbage pointer in it would point to.  False
 * when neither side is such a constant. */
static bool str_eq_const(const ExExpr *e, const CmBatch *in, const CmVec *const *args, CmVec *out,
                         uint8_t ne)
{
    int c = e->args[1]->kind == EX_E_CONST ? 1 : e->args[0]->kind == EX_E_CONST ? 0 : -1;
    if (c < 0 || e->args[c]->value.is_null || e->args[c]->value.s.len > CM_STR_INLINE) {
        return false;
    }
    const CmStr *k = &e->args[c]->value.s;
    const uint32_t k_len = k->len;
    uint64_t k0, k1, m0;
    uint32_t m1;
    cm_str_inline_words(k, &k0, &k1);
    cm_str_inline_masks(k_len, &m0, &m1);
    const CmStr *restrict a = args[1 - c]->data;
    uint8_t *restrict r = out->data;
    ex_and_validity(args, 2, out);
    const uint32_t *restrict sel = in->sel;
    const int n_rows = in->n_rows;
    for (int i = 0; i < n_rows; i++) {
        uint32_t p = sel != NULL ? sel[i] : (uint32_t)i;
        uint64_t w0;
        uint32_t w1;
        memcpy(&w0, (const char *)&a[p] + offsetof(CmStr, prefix), 8);
        memcpy(&w1, (const char *)&a[p] + offsetof(CmStr, prefix) + 8, 4);
        r[p] = (uint8_t)(((a[p].len == k_len) & ((w0 & m0) == k0) & ((w1 & m1) == k1)) ^ ne);
    }
    return true;
}

static CmStatus eq_str(KERNEL_ARGS)
{
    return str_eq_const(e, in, args, out, 0) ? CM_OK : eq_str_rows(e, in, args, out, heap, err);
}

static CmStatus ne_str(KERNEL_ARGS)
{
    return str_eq_const(e, in, args, out, 1) ? CM_OK : ne_str_rows(e, in, args, out, heap, err);
}
STR_KERNEL(lt_str, < 0)
STR_KERNEL(le_str, <= 0)
STR_KERNEL(gt_str, > 0)
STR_KERNEL(ge_str, >= 0)

typedef struct CmpSet {
    ExKernel k[6]; /* = <> < <= > >= */
} CmpSet;

#define CMP_SET(SUFFIX)                                                                            \
    {                                                                                              \
        {                                                                                          \
            eq_##SUFFIX, ne_##SUFFIX, lt_##SUFFIX, le_##SUFFIX, gt_##SUFFIX, ge_##SUFFIX           \
        }                                                                                          \
    }

static const CmpSet CMP_I32 = CMP_SET(i32), CMP_I64 = CMP_SET(i64), CMP_F64 = CMP_SET(f64),
                    CMP_U8 = CMP_SET(u8), CMP_STR = CMP_SET(str), CMP_IV = CMP_SET(iv),
                    CMP_I128 = CMP_SET(i128);

/* ---- logic and NULL tests --------------------------------------------------- */

static CmStatus not_bool(KERNEL_ARGS)
{
    const uint8_t *a = args[0]->data;
    uint8_t *r = out->data;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = !a[p];
    }
    return CM_OK;
}

static CmStatus is_null_k(KERNEL_ARGS)
{
    uint8_t *r = out->data;
    out->validity = NULL;
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = (uint8_t)(cm_vec_is_null(args[0], p) != (e->aux != 0));
    }
    return CM_OK;
}

/* ---- strings ---------------------------------------------------------------- */

static CmStatus concat_str(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data;
    const CmStr *b = args[1]->data;
    CmStr *r = out->data;
    ex_and_validity(args, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        uint32_t n = a[p].len + b[p].len;
        char *buf = cm_arena_alloc(heap, n ? n : 1);
        if (buf == NULL) {
            return cm_err_set(err, CM_OOM, e->src_off, "out of memory");
        }
        memcpy(buf, cm_str_data(&a[p]), a[p].len);
        memcpy(buf + a[p].len, cm_str_data(&b[p]), b[p].len);
        r[p] = cm_str_make(buf, n);
    }
    return CM_OK;
}

/* ---- resolution -------------------------------------------------------------- */

static int rank(CmType t)
{
    switch ((CmTypeId)t.id) {
    case CM_T_INT32:
        return 1;
    case CM_T_INT64:
        return 2;
    case CM_T_DECIMAL:
    case CM_T_DECIMAL128:
        return 3;
    case CM_T_DOUBLE:
        return 4;
    default:
        return 0;
    }
}

/* Decimal digits a value of exact type t may need: DuckDB's widths. */
static int precision_of(CmType t)
{
    return t.id == CM_T_INT32 ? 10 : t.id == CM_T_INT64 ? 19 : t.precision;
}

bool ex_common_type(CmType a, CmType b, CmType *out)
{
    if (a.id == CM_T_NULL) {
        *out = b;
        return true;
    }
    if (b.id == CM_T_NULL) {
        *out = a;
        return true;
    }
    if (a.id == CM_T_LIST || b.id == CM_T_LIST) {
        /* lists meet lists only, element types in common */
        CmType e;
        if (a.id != b.id || !ex_common_type(cm_type_elem(a), cm_type_elem(b), &e)) {
            return false;
        }
        *out = cm_type_list(e);
        return true;
    }
    if ((a.id == CM_T_DATE && b.id == CM_T_TIMESTAMP) ||
        (a.id == CM_T_TIMESTAMP && b.id == CM_T_DATE)) {
        *out = cm_type_make(CM_T_TIMESTAMP); /* a date is its midnight, as DuckDB */
        return true;
    }
    if (a.id == b.id && !cm_type_is_decimal(a)) {
        *out = a.id == CM_T_VARCHAR ? cm_type_varchar(-1, false) : a;
        return true;
    }
    int ra = rank(a), rb = rank(b);
    if (ra && rb) {
        if (ra == 3 || rb == 3) {
            if (ra == 4 || rb == 4) {
                *out = cm_type_make(CM_T_DOUBLE);
                return true;
            }
            /* Every value of both sides must fit: the integer digits of the
             * wider side (a BIGINT counts 19, an INTEGER 10) and the larger
             * scale, as DuckDB.  Within 18 digits that is DECIMAL(18,s), and
             * so is a BIGINT at scale 0 (int64 holds it); past them DECIMAL128
             * (BIGINT = 2.5 compares exactly, not as DOUBLEs);
             * past 38 the scale gives way, as in DuckDB, and a comparison then
             * compares DOUBLEs (resolve_compare). */
            int sa = cm_type_is_decimal(a) ? a.scale : 0, sb = cm_type_is_decimal(b) ? b.scale : 0;
            int s = sa > sb ? sa : sb;
            int ia = precision_of(a) - sa, ib = precision_of(b) - sb;
            int i = ia > ib ? ia : ib;
            if ((i + s <= 18 || s == 0) && a.id != CM_T_DECIMAL128 && b.id != CM_T_DECIMAL128) {
                *out = cm_type_decimal(18, s);
                return true;
            }
            s = i + s > 38 ? 38 - i : s;
            *out = cm_type_decimal(i + s < 19 ? 19 : i + s, s);
            return true;
        }
        *out = ra > rb ? a : b;
        return true;
    }
    /* A string meets a typed value: the string is read as that type. */
    if (a.id == CM_T_VARCHAR && b.id != CM_T_VARCHAR) {
        *out = b;
        return true;
    }
    if (b.id == CM_T_VARCHAR && a.id != CM_T_VARCHAR) {
        *out = a;
        return true;
    }
    return false;
}

static CmStatus no_match(const char *name, int n_args, const CmType *types, int64_t off, CmErr *err)
{
    char t0[32], t1[32];
    if (n_args == 1) {
        return cm_err_set(err, CM_TYPE, off, "no operator %s for type %s", name,
                          cm_type_name(types[0], t0, sizeof t0));
    }
    return cm_err_set(err, CM_TYPE, off, "no operator %s for types %s and %s", name,
                      cm_type_name(types[0], t0, sizeof t0), cm_type_name(types[1], t1, sizeof t1));
}

static int cmp_index(const char *name)
{
    static const char *ops[] = {"=", "<>", "<", "<=", ">", ">="};
    for (int i = 0; i < 6; i++) {
        if (strcmp(name, ops[i]) == 0) {
            return i;
        }
    }
    return -1;
}

/* A DECIMAL argument already at the scale its kernel reads is taken as it is:
 * the kernels read raw int64 values, which the precision does not change, so
 * a DECIMAL(7,2) column meets 100.00 or another DECIMAL(x,2) with no cast. */
static void keep_decimal_scale(const CmType *t, ExFuncMatch *m)
{
    for (int i = 0; i < 2; i++) {
        if (cm_type_is_decimal(t[i]) && t[i].id == m->arg_types[i].id &&
            t[i].scale == m->arg_types[i].scale) {
            m->arg_types[i] = t[i];
        }
    }
}

static CmStatus resolve_compare(int op, const CmType *t, int64_t off, ExFuncMatch *m, CmErr *err)
{
    CmType c;
    if (!ex_common_type(t[0], t[1], &c)) {
        static const char *ops[] = {"=", "<>", "<", "<=", ">", ">="};
        return no_match(ops[op], 2, t, off, err);
    }
    if (c.id == CM_T_NULL) {
        c = cm_type_make(CM_T_BOOL);
    }
    if (c.id == CM_T_DECIMAL128 && ((cm_type_is_decimal(t[0]) && t[0].scale > c.scale) ||
                                    (cm_type_is_decimal(t[1]) && t[1].scale > c.scale))) {
        c = cm_type_make(CM_T_DOUBLE); /* the common type rounds: compare unrounded */
    }
    if (c.id == CM_T_LIST) {
        static const char *ops[] = {"=", "<>", "<", "<=", ">", ">="};
        return no_match(ops[op], 2, t, off, err); /* docs/conformance.md: lists do not compare */
    }
    const CmpSet *set;
    switch ((CmTypeId)c.id) {
    case CM_T_INT32:
    case CM_T_DATE:
        set = &CMP_I32;
        break;
    case CM_T_INT64:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
    case CM_T_DECIMAL:
        set = &CMP_I64;
        break;
    case CM_T_INTERVAL:
        set = &CMP_IV;
        break;
    case CM_T_DECIMAL128:
        set = &CMP_I128;
        break;
    case CM_T_DOUBLE:
        set = &CMP_F64;
        break;
    case CM_T_VARCHAR:
        set = &CMP_STR;
        break;
    default:
        set = &CMP_U8;
        break;
    }
    m->kernel = set->k[op];
    m->arg_types[0] = m->arg_types[1] = c;
    m->result = cm_type_make(CM_T_BOOL);
    keep_decimal_scale(t, m);
    return CM_OK;
}

static CmStatus resolve_decimal_arith(char op, CmType a, CmType b, ExFuncMatch *m)
{
    int sa = cm_type_is_decimal(a) ? a.scale : 0, sb = cm_type_is_decimal(b) ? b.scale : 0;
    CmType t[2] = {a, b};
    int pa = precision_of(a), pb = precision_of(b);
    bool has_wide = a.id == CM_T_DECIMAL128 || b.id == CM_T_DECIMAL128;
    if (op == '/' && sa == 0 && sb == 0 && (pa > 18 || pb > 18)) {
        /* sum(x) / count(*) stays the integer division BIGINT / BIGINT was */
        m->arg_types[0] = m->arg_types[1] = m->result = cm_type_decimal(38, 0);
        m->kernel = div_i128;
        m->aux = 38;
        keep_decimal_scale(t, m);
        return CM_OK;
    }
    int ia0 = pa - sa, ib0 = pb - sb;
    bool operands_fit = (ia0 > ib0 ? ia0 : ib0) + (sa > sb ? sa : sb) <= 18;
    if ((op == '+' || op == '-' || op == '*' || (op == '%' && has_wide)) &&
        (pa > 18 || pb > 18 || ((op == '+' || op == '-') && !operands_fit))) {
        /* DuckDB's widths: + and - one digit past the wider integer part,
         * * the sum of both; 38 at most, and a result past it an error.
         * + and - come here too when one DECIMAL(18,s) cannot hold both
         * operands (INTEGER + 0.000000001), where DuckDB fails the cast. */
        int s = op == '*' ? sa + sb : sa > sb ? sa : sb;
        int ia = pa - sa, ib = pb - sb;
        int p = op == '*' ? pa + pb : op == '%' ? 38 : (ia > ib ? ia : ib) + s + 1;
        if (s <= 38) {
            p = p > 38 ? 38 : p < s ? s : p;
            m->arg_types[0] = cm_type_decimal(38, op == '*' ? sa : s);
            m->arg_types[1] = cm_type_decimal(38, op == '*' ? sb : s);
            m->result = cm_type_decimal(p < 19 ? 19 : p, s);
            m->kernel = op == '+'   ? add_i128
                        : op == '-' ? sub_i128
                        : op == '*' ? mul_i128
                                    : mod_i128;
            m->aux = p < 19 ? 19 : p;
            keep_decimal_scale(t, m);
            return CM_OK;
        }
    }
    if (op == '*' && sa + sb <= 18) {
        m->arg_types[0] = cm_type_decimal(18, sa);
        m->arg_types[1] = cm_type_decimal(18, sb);
        m->result = cm_type_decimal(18, sa + sb);
        m->kernel = mul_dec;
        keep_decimal_scale(t, m);
        return CM_OK;
    }
    if (op == '+' || op == '-') {
        int s = sa > sb ? sa : sb;
        m->arg_types[0] = m->arg_types[1] = m->result = cm_type_decimal(18, s);
        m->kernel = op == '+' ? add_dec : sub_dec;
        keep_decimal_scale(t, m);
        return CM_OK;
    }
    if (op == '%') {
        /* Exact too: the remainder of the values at the larger scale (-1 %
         * -0.005 is 0.000, where fmod of the doubles is -0.00499...). */
        int s = sa > sb ? sa : sb;
        m->arg_types[0] = a.id == CM_T_DECIMAL ? a : cm_type_make(CM_T_INT64);
        m->arg_types[1] = b.id == CM_T_DECIMAL ? b : cm_type_make(CM_T_INT64);
        m->result = cm_type_decimal(18, s);
        m->kernel = mod_dec;
        m->aux = (s - sa) | (int64_t)(s - sb) << 8;
        return CM_OK;
    }
    /* Division and products too wide for 18 digits go through DOUBLE. */
    m->arg_types[0] = m->arg_types[1] = m->result = cm_type_make(CM_T_DOUBLE);
    m->kernel = op == '*' ? mul_f64 : div_f64;
    return CM_OK;
}

static CmStatus resolve_date_arith(char op, const CmType *t, int64_t off, ExFuncMatch *m,
                                   CmErr *err)
{
    if (t[0].id == CM_T_DATE && t[1].id == CM_T_DATE && op == '-') {
        m->arg_types[0] = m->arg_types[1] = t[0];
        m->result = cm_type_make(CM_T_INT64);
        m->kernel = sub_date_date;
        return CM_OK;
    }
    if (t[0].id == CM_T_DATE && cm_type_is_integer(t[1]) && (op == '+' || op == '-')) {
        m->arg_types[0] = t[0];
        m->arg_types[1] = cm_type_make(CM_T_INT64);
        m->result = t[0];
        m->kernel = op == '+' ? add_date_i64 : sub_date_i64;
        return CM_OK;
    }
    if (cm_type_is_integer(t[0]) && t[1].id == CM_T_DATE && op == '+') {
        /* + commutes: the DATE + days kernel, with the node's arguments swapped. */
        m->arg_types[0] = cm_type_make(CM_T_INT64);
        m->arg_types[1] = t[1];
        m->result = t[1];
        m->kernel = add_date_i64;
        m->swap_args = true;
        return CM_OK;
    }
    char name[2] = {op, 0};
    return no_match(name, 2, t, off, err);
}

static CmStatus resolve_arith(char op, const CmType *in, int64_t off, ExFuncMatch *m, CmErr *err)
{
    CmType t[2] = {in[0], in[1]};
    for (int i = 0; i < 2; i++) {
        if (t[i].id == CM_T_NULL) {
            t[i] = t[1 - i].id == CM_T_NULL ? cm_type_make(CM_T_INT64) : t[1 - i];
        }
        if (t[i].id == CM_T_VARCHAR && t[1 - i].id != CM_T_VARCHAR) {
            t[i] = t[1 - i];
        }
    }
    CmStatus st = ex_resolve_ts_arith(op, t, off, m, err);
    if (st != EX_NOT_MINE) {
        return st;
    }
    if (t[0].id == CM_T_DATE || t[1].id == CM_T_DATE) {
        return resolve_date_arith(op, t, off, m, err);
    }
    int ra = rank(t[0]), rb = rank(t[1]);
    if (!ra || !rb) {
        char name[2] = {op, 0};
        return no_match(name, 2, in, off, err);
    }
    if (ra == 4 || rb == 4) {
        m->arg_types[0] = m->arg_types[1] = m->result = cm_type_make(CM_T_DOUBLE);
        m->kernel = op == '+'   ? add_f64
                    : op == '-' ? sub_f64
                    : op == '*' ? mul_f64
                    : op == '/' ? div_f64
                                : mod_f64;
        return CM_OK;
    }
    if (ra == 3 || rb == 3) {
        return resolve_decimal_arith(op, t[0], t[1], m);
    }
    m->arg_types[0] = m->arg_types[1] = m->result = cm_type_make(CM_T_INT64);
    m->kernel = op == '+'   ? add_i64
                : op == '-' ? sub_i64
                : op == '*' ? mul_i64
                : op == '/' ? div_i64
                            : mod_i64;
    return CM_OK;
}

static CmStatus resolve_unary(const char *name, CmType t, int64_t off, ExFuncMatch *m, CmErr *err)
{
    bool is_neg = strcmp(name, "neg") == 0;
    if (t.id == CM_T_NULL || t.id == CM_T_VARCHAR) {
        t = cm_type_make(CM_T_INT64);
    }
    if (t.id == CM_T_DECIMAL128) {
        m->arg_types[0] = m->result = t;
        m->kernel = neg_i128;
        m->aux = !is_neg;
        return CM_OK;
    }
    if (cm_type_is_integer(t) || t.id == CM_T_DECIMAL) {
        m->arg_types[0] = m->result = t.id == CM_T_DECIMAL ? t : cm_type_make(CM_T_INT64);
        m->kernel = is_neg ? neg_i64 : abs_i64;
        return CM_OK;
    }
    if (t.id == CM_T_DOUBLE) {
        m->arg_types[0] = m->result = t;
        m->kernel = is_neg ? neg_f64 : abs_f64;
        return CM_OK;
    }
    if (t.id == CM_T_INTERVAL && is_neg) {
        return ex_resolve_ts_arith('n', &t, off, m, err);
    }
    return no_match(is_neg ? "-" : name, 1, &t, off, err);
}

CmStatus ex_func_resolve(const char *name, int n_args, const CmType *arg_types, int64_t off,
                         ExFuncMatch *m, CmErr *err)
{
    memset(m, 0, sizeof *m);
    int cmp = cmp_index(name);
    if (cmp >= 0 && n_args == 2) {
        return resolve_compare(cmp, arg_types, off, m, err);
    }
    if (n_args == 2 && name[1] == '\0' && strchr("+-*/%", name[0]) != NULL) {
        return resolve_arith(name[0], arg_types, off, m, err);
    }
    if (n_args == 1 && (strcmp(name, "neg") == 0 || strcmp(name, "abs") == 0)) {
        return resolve_unary(name, arg_types[0], off, m, err);
    }
    if (n_args == 1 && strcmp(name, "not") == 0) {
        if (arg_types[0].id != CM_T_BOOL && arg_types[0].id != CM_T_NULL &&
            !cm_type_is_integer(arg_types[0])) {
            return no_match("NOT", 1, arg_types, off, err);
        }
        m->arg_types[0] = m->result = cm_type_make(CM_T_BOOL);
        m->kernel = not_bool;
        return CM_OK;
    }
    if (n_args == 1 && (strcmp(name, "is_null") == 0 || strcmp(name, "is_not_null") == 0)) {
        m->arg_types[0] = arg_types[0];
        m->result = cm_type_make(CM_T_BOOL);
        m->kernel = is_null_k;
        m->aux = strcmp(name, "is_not_null") == 0;
        return CM_OK;
    }
    if (n_args == 2 && strcmp(name, "||") == 0) {
        if (arg_types[0].id == CM_T_LIST || arg_types[1].id == CM_T_LIST) {
            /* one list of both lists' elements (func_list.c), never their text joined */
            for (int i = 0; i < 2; i++) {
                if (arg_types[i].id != CM_T_LIST && arg_types[i].id != CM_T_NULL) {
                    return no_match(name, 2, arg_types, off, err);
                }
            }
            return ex_resolve_list(name, n_args, arg_types, off, m, err);
        }
        m->arg_types[0] = m->arg_types[1] = m->result = cm_type_varchar(-1, false);
        m->kernel = concat_str;
        return CM_OK;
    }
    /* lists first: length(list) is theirs, length(string) the string family's */
    static const ExResolver FAMILIES[] = {
        ex_resolve_list,      ex_resolve_string,   ex_resolve_math, ex_resolve_date,
        ex_resolve_timestamp, ex_resolve_calendar, ex_resolve_text, ex_resolve_misc,
        ex_resolve_regex,     ex_resolve_format};
    for (size_t i = 0; i < sizeof FAMILIES / sizeof FAMILIES[0]; i++) {
        CmStatus st = FAMILIES[i](name, n_args, arg_types, off, m, err);
        if (st != EX_NOT_MINE) {
            return st;
        }
    }
    return cm_err_set(err, CM_BIND, off, "unknown function %s with %d argument%s", name, n_args,
                      n_args == 1 ? "" : "s");
}
