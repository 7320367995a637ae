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
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/hash.h"

static void freq_changed(StFreq *f)
{
    for (int r = 0; r < ST_CMS_DEPTH; r++) {
        f->noise[r] = -1;
    }
}

StColStats *st_stats_new_array(int n)
{
    n = n > 0 ? n : 1;
    StColStats *s = cm_calloc(1, (size_t)n * (sizeof(StColStats) + sizeof(StFreq)));
    if (s == NULL) {
        return NULL;
    }
    StFreq *freq = (StFreq *)(void *)(s + n);
    for (int i = 0; i < n; i++) {
        s[i].ndv = -1;
        s[i].freq = &freq[i];
        freq_changed(&freq[i]);
    }
    return s;
}

StColStats *st_stats_copy_array(const StColStats *s, int n)
{
    StColStats *c = st_stats_new_array(n);
    for (int i = 0; c != NULL && i < n; i++) {
        StFreq *freq = c[i].freq;
        c[i] = s[i];
        c[i].freq = s[i].freq != NULL ? freq : NULL;
        if (s[i].freq != NULL) {
            *freq = *s[i].freq;
        }
    }
    return c;
}

void st_stats_reset(StColStats *s)
{
    memset(s, 0, sizeof *s);
    s->ndv = -1;
}

void st_stats_clear(StColStats *s)
{
    StFreq *freq = s->freq;
    st_stats_reset(s);
    if (freq != NULL) {
        memset(freq, 0, sizeof *freq);
        freq_changed(freq);
        s->freq = freq;
    }
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

/* Row r's counter of hash h: rows take disjoint bits of h, below the bits the
 * HyperLogLog register and rank read first. */
static inline uint32_t cms_cell(uint64_t h, int r)
{
    return (uint32_t)(h >> (r * 16)) & (ST_CMS_WIDTH - 1);
}

static inline void freq_add(StFreq *f, uint64_t h)
{
    for (int r = 0; r < ST_CMS_DEPTH; r++) {
        f->cells[r][cms_cell(h, r)]++;
    }
}

static inline bool is_valid(const uint64_t *valid, uint32_t p)
{
    return valid == NULL || ((valid[p >> 6] >> (p & 63)) & 1);
}

/* One loop per physical type: hash, register, min and max of the valid rows. */
#define ADD_FIXED(T, TO_U64, RANGE)                                                                \
    do {                                                                                           \
        const T *vals = v->data;                                                                   \
        for (int i = 0; i < n; i++) {                                                              \
            uint32_t p = is_const ? 0 : sel ? sel[i] : (uint32_t)i;                                \
            if (!is_valid(v->validity, p)) {                                                       \
                n_null++;                                                                          \
                continue;                                                                          \
            }                                                                                      \
            T x = vals[p];                                                                         \
            uint64_t h = cm_hash_u64(TO_U64(x) ^ SEED);                                            \
            hll_add(s->hll, h);                                                                    \
            if (freq != NULL) {                                                                    \
                freq_add(freq, h);                                                                 \
            }                                                                                      \
            if (RANGE) {                                                                           \
                lo = (double)x < lo ? (double)x : lo;                                              \
                hi = (double)x > hi ? (double)x : hi;                                              \
            }                                                                                      \
        }                                                                                          \
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
    StFreq *freq = s->freq;
    int64_t n_null = 0;
    double lo = INFINITY, hi = -INFINITY;
    switch (v->type.id) {
    case CM_T_INT32:
    case CM_T_DATE:
        ADD_FIXED(int32_t, I64_BITS, true);
        break;
    case CM_T_INT64:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
    case CM_T_DECIMAL:
        ADD_FIXED(int64_t, I64_BITS, true);
        break;
    case CM_T_DOUBLE:
        ADD_FIXED(double, dbl_bits, !isnan(x));
        break;
    case CM_T_BOOL:
        ADD_FIXED(uint8_t, U8_BITS, false);
        break;
    case CM_T_VARCHAR: {
        const CmStr *vals = v->data;
        for (int i = 0; i < n; i++) {
            uint32_t p = is_const ? 0 : sel ? sel[i] : (uint32_t)i;
            if (!is_valid(v->validity, p)) {
                n_null++;
                continue;
            }
            uint64_t h = cm_hash_bytes(cm_str_data(&vals[p]), vals[p].len);
            hll_add(s->hll, h);
            if (freq != NULL) {
                freq_add(freq, h);
            }
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
            uint64_t h = cm_hash_u64(bits ^ SEED);
            hll_add(s->hll, h);
            if (freq != NULL) {
                freq_add(freq, h);
            }
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
    if (freq != NULL) {
        freq->n += n - n_null;
        freq_changed(freq);
    }
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
    if (s->freq != NULL) {
        freq_changed(s->freq); /* the frequent values' threshold follows the ndv */
    }
}

void st_stats_union(StColStats *s, const StColStats *from)
{
    st_stats_merge(s, from->hll, from->n_values);
    s->n_nulls += from->n_nulls;
    if (from->has_range) {
        s->min = s->has_range && s->min < from->min ? s->min : from->min;
        s->max = s->has_range && s->max > from->max ? s->max : from->max;
        s->has_range = true;
    }
    if (s->freq != NULL && from->freq != NULL) {
        for (int d = 0; d < ST_CMS_DEPTH; d++) {
            for (int w = 0; w < ST_CMS_WIDTH; w++) {
                s->freq->cells[d][w] += from->freq->cells[d][w];
            }
        }
        s->freq->n += from->freq->n;
        freq_changed(s->freq);
    }
}

double st_stats_ndv(StColStats *s)
{
    if (s->ndv >= 0) {
        return s->ndv;
    }
    double n_valid = (double)(s->n_values - s->n_nulls);
    if (n_valid <= 1) {
        return s->ndv = n_valid; /* a recursive CTE's one-row work table each round */
    }
    double sum = 0, m = ST_HLL_REGS;
    int n_zero = 0;
    for (int i = 0; i < ST_HLL_REGS; i++) {
        /* 2^-rank, built from its exponent bits: ldexp took a sixth of a
         * 1-row recursive CTE round's time (fresh work tables each round) */
        uint64_t bits = (uint64_t)(1023 - s->hll[i]) << 52;
        double inv;
        memcpy(&inv, &bits, sizeof inv);
        sum += inv;
        n_zero += s->hll[i] == 0;
    }
    double e = 0.7213 / (1 + 1.079 / m) * m * m / sum;
    if (e <= 2.5 * m && n_zero > 0) {
        e = m * log(m / n_zero); /* linear counting */
    }
    s->ndv = e < n_valid ? e : n_valid;
    return s->ndv;
}

uint64_t st_stats_hash_int(int64_t x)
{
    return cm_hash_u64(I64_BITS(x) ^ SEED);
}

uint64_t st_stats_hash_double(double x)
{
    return cm_hash_u64(dbl_bits(x) ^ SEED);
}

uint64_t st_stats_hash_str(const char *s, size_t n)
{
    return cm_hash_bytes(s, n);
}

/* ---- frequent values ------------------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* A value counted this far above its counters' noise is frequent. */
static double heavy_threshold(StColStats *s)
{
    const StFreq *f = s->freq;
    double noise = (double)(f->noise[0] > f->noise[1] ? f->noise[0] : f->noise[1]);
    double per_value = (double)f->n / fmax(1, st_stats_ndv(s));
    return fmax(4 * per_value, 4 * sqrt(noise) + 1);
}

/* The rows' median counters, and the frequent values' count and rows (read
 * from row 0's counters: a counter over the threshold holds at least one). */
static void freq_prepare(StColStats *s)
{
    StFreq *f = s->freq;
    if (f->noise[0] >= 0) {
        return;
    }
    uint64_t sorted[ST_CMS_WIDTH];
    for (int r = 0; r < ST_CMS_DEPTH; r++) {
        memcpy(sorted, f->cells[r], sizeof sorted);
        qsort(sorted, ST_CMS_WIDTH, sizeof sorted[0], cmp_u64);
        f->noise[r] = (int64_t)sorted[ST_CMS_WIDTH / 2];
    }
    double thr = heavy_threshold(s);
    f->heavy_n = 0;
    f->heavy_values = 0;
    for (int i = 0; i < ST_CMS_WIDTH; i++) {
        double above = (double)f->cells[0][i] - (double)f->noise[0];
        if (above >= thr) {
            f->heavy_n += above;
            f->heavy_values++;
        }
    }
}

double st_stats_freq(StColStats *s, uint64_t h)
{
    StFreq *f = s->freq;
    if (f == NULL || f->n == 0) {
        return -1;
    }
    freq_prepare(s);
    double count = INFINITY;
    for (int r = 0; r < ST_CMS_DEPTH; r++) {
        count = fmin(count, (double)f->cells[r][cms_cell(h, r)] - (double)f->noise[r]);
    }
    return count >= heavy_threshold(s) ? fmin(1, count / (double)f->n) : -1;
}

double st_stats_rare_share(StColStats *s)
{
    double ndv = fmax(1, st_stats_ndv(s));
    StFreq *f = s->freq;
    if (f == NULL || f->n == 0) {
        return 1 / ndv;
    }
    freq_prepare(s);
    if (f->heavy_values == 0) {
        return 1 / ndv;
    }
    double rest = fmax(0, (double)f->n - f->heavy_n) / (double)f->n;
    return rest / fmax(1, ndv - f->heavy_values);
}

bool st_stats_numeric(CmType type, const void *data, uint32_t pos, double *out)
{
    switch (type.id) {
    case CM_T_INT32:
    case CM_T_DATE:
        *out = ((const int32_t *)data)[pos];
        return true;
    case CM_T_INT64:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
        *out = (double)((const int64_t *)data)[pos];
        return true;
    case CM_T_DECIMAL:
        *out = (double)((const int64_t *)data)[pos] / pow(10, type.scale);
        return true;
    case CM_T_DOUBLE:
        *out = ((const double *)data)[pos];
        return !isnan(*out);
    default:
        return false;
    }
}
