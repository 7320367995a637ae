/*
 * stats.c - per-column statistics (stats.h).
 *
 * The distinct count is a dense HyperLogLog (Flajolet et al. 2007): a value's
 * 64-bit hash picks a register by its top ST_HLL_BITS bits, and the register
 * keeps the largest rank (leading zeros + 1) of the remaining bits seen.
 * The estimate is the harmonic mean of 2^register, corrected by linear
 * counting while many registers are still empty.  Registers only grow, so
 * adding a batch twice changes nothing: the sketch of a set is exact under
 * repetition, which is why a truncate can keep it as an upper bound.
 */
#include "storage/stats.h"

#include <math.h>
#include <string.h>

#include "common/hash.h"

void st_stats_reset(StColStats *s)
{
    memset(s, 0, sizeof *s);
    s->ndv = -1;
}

/* The seed keeps 0 (a common value) off the mixer's fixed point. */
#define SEED 0x9e3779b97f4a7c15ULL

static inline void hll_add(uint8_t *regs, uint64_t h)
{
    uint32_t reg = (uint32_t)(h >> (64 - ST_HLL_BITS));
    uint64_t rest = (h << ST_HLL_BITS) | ((uint64_t)1 << (ST_HLL_BITS - 1));
    uint8_t rank = (uint8_t)(__builtin_clzll(rest) + 1);
    regs[reg] = rank > regs[reg] ? rank : regs[reg];
}

static inline bool is_valid(const uint64_t *valid, uint32_t p)
{
    return valid == NULL || ((valid[p >> 6] >> (p & 63)) & 1);
}

/* One loop per physical type: hash, register, min and max of the valid rows. */
#define ADD_FIXED(T, TO_U64, RANGE)                                                         \
    do {                                                                                   \
        const T *vals = v->data;                                                           \
        for (int i = 0; i < n; i++) {                                                      \
            uint32_t p = is_const ? 0 : sel ? sel[i] : (uint32_t)i;                        \
            if (!is_valid(v->validity, p)) {                                               \
                n_null++;                                                                  \
                continue;                                                                  \
            }                                                                              \
            T x = vals[p];                                                                 \
            hll_add(s->hll, cm_hash_u64(TO_U64(x) ^ SEED));                                \
            if (RANGE) {                                                                   \
                lo = (double)x < lo ? (double)x : lo;                                      \
                hi = (double)x > hi ? (double)x : hi;                                      \
            }                                                                              \
        }                                                                                  \
    } while (0)

#define I64_BITS(x) ((uint64_t)(int64_t)(x))
#define U8_BITS(x) ((uint64_t)(x))

static inline uint64_t dbl_bits(double d)
{
    uint64_t u;
    d = d == 0 ? 0.0 : d; /* -0.0 equals 0.0 */
    memcpy(&u, &d, sizeof u);
    return u;
}

void st_stats_add(StColStats *s, const CmVec *v, const uint32_t *sel, int n)
{
    bool is_const = v->kind == CM_VEC_CONST;
    int64_t n_null = 0;
    double lo = INFINITY, hi = -INFINITY;
    switch (v->type.id) {
    case CM_T_INT32:
    case CM_T_DATE: ADD_FIXED(int32_t, I64_BITS, true); break;
    case CM_T_INT64:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
    case CM_T_DECIMAL: ADD_FIXED(int64_t, I64_BITS, true); break;
    case CM_T_DOUBLE: ADD_FIXED(double, dbl_bits, !isnan(x)); break;
    case CM_T_BOOL: ADD_FIXED(uint8_t, U8_BITS, false); break;
    case CM_T_VARCHAR: {
        const CmStr *vals = v->data;
        for (int i = 0; i < n; i++) {
            uint32_t p = is_const ? 0 : sel ? sel[i] : (uint32_t)i;
            if (!is_valid(v->validity, p)) {
                n_null++;
                continue;
            }
            hll_add(s->hll, cm_hash_bytes(cm_str_data(&vals[p]), vals[p].len));
        }
        break;
    }
    case CM_T_DECIMAL128: /* a value within BIGINT hashes as a DECIMAL's raw int64 does */
        for (int i = 0; i < n; i++) {
            uint32_t p = is_const ? 0 : sel ? sel[i] : (uint32_t)i;
            if (!is_valid(v->validity, p)) {
                n_null++;
                continue;
            }
            CmInt128 x = cm_i128_get((const char *)v->data + 16 * (size_t)p);
            uint64_t bits = (uint64_t)x;
            if (x != (int64_t)x) {
                bits = cm_hash_combine(bits, (uint64_t)(x >> 64));
            }
            hll_add(s->hll, cm_hash_u64(bits ^ SEED));
            lo = (double)x < lo ? (double)x : lo;
            hi = (double)x > hi ? (double)x : hi;
        }
        break;
    default: /* the NULL type: every value is NULL */
        n_null = n;
        break;
    }
    s->n_values += n;
    s->n_nulls += n_null;
    s->ndv = -1;
    if (lo <= hi) {
        if (cm_type_is_decimal(v->type)) {
            double f = pow(10, v->type.scale);
            lo /= f;
            hi /= f;
        }
        s->min = s->has_range && s->min < lo ? s->min : lo;
        s->max = s->has_range && s->max > hi ? s->max : hi;
        s->has_range = true;
    }
}

void st_stats_merge(StColStats *s, const uint8_t *hll, int64_t n_values)
{
    for (int i = 0; i < ST_HLL_REGS; i++) {
        s->hll[i] = hll[i] > s->hll[i] ? hll[i] : s->hll[i];
    }
    s->n_values += n_values;
    s->ndv = -1;
}

double st_stats_ndv(StColStats *s)
{
    if (s->ndv >= 0) {
        return s->ndv;
    }
    double sum = 0, m = ST_HLL_REGS;
    int n_zero = 0;
    for (int i = 0; i < ST_HLL_REGS; i++) {
        sum += ldexp(1.0, -(int)s->hll[i]);
        n_zero += s->hll[i] == 0;
    }
    double e = 0.7213 / (1 + 1.079 / m) * m * m / sum;
    if (e <= 2.5 * m && n_zero > 0) {
        e = m * log(m / n_zero); /* linear counting */
    }
    double n_valid = (double)(s->n_values - s->n_nulls);
    s->ndv = e < n_valid ? e : n_valid;
    return s->ndv;
}

bool st_stats_numeric(CmType type, const void *data, uint32_t pos, double *out)
{
    switch (type.id) {
    case CM_T_INT32:
    case CM_T_DATE: *out = ((const int32_t *)data)[pos]; return true;
    case CM_T_INT64:
    case CM_T_TIME:
    case CM_T_TIMESTAMP: *out = (double)((const int64_t *)data)[pos]; return true;
    case CM_T_DECIMAL:
        *out = (double)((const int64_t *)data)[pos] / pow(10, type.scale);
        return true;
    case CM_T_DOUBLE: *out = ((const double *)data)[pos]; return !isnan(*out);
    default: return false;
    }
}
