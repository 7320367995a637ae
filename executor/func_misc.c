/*
 * func_misc.c - greatest/least, mod, hash, random/setseed and version.
 *
 * greatest/least take any number of values of one comparable type and, as in
 * DuckDB, ignore NULLs (NULL only when all are).  hash(...) is a 64-bit hash
 * of its arguments built from common/hash.h (xxh3 for strings, the splitmix64
 * finalizer for fixed-width values): stable across runs and platforms, but not
 * DuckDB's values, and BIGINT (the 64 bits read as signed) where DuckDB
 * returns UBIGINT (docs/conformance.md).  random() draws from one process-wide
 * counter-based generator: each batch takes a range of the counter with one
 * atomic add and row k gets splitmix64(seed + k), so no state is shared but
 * the counter, and one thread after setseed(x) gets the same sequence.
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "common/datetime.h"
#include "common/hash.h"
#include "executor/func_int.h"

#ifndef SLUICE_VERSION
#define SLUICE_VERSION "unknown"
#endif

/* ---- greatest, least ------------------------------------------------------------ */

/* aux 1: greatest, 0: least.  The first valid argument, then any valid one
 * that compares past it. */
#define EXTREME_KERNEL(NAME, T, CMP)                                                               \
    static CmStatus NAME(KERNEL_ARGS)                                                              \
    {                                                                                              \
        T *r = out->data;                                                                          \
        int want = e->aux ? 1 : -1;                                                                \
        out->validity = out->validity_buf;                                                         \
        memset(out->validity_buf, 0xff, sizeof out->validity_buf);                                 \
        for (int i = 0; i < in->n_rows; i++) {                                                     \
            uint32_t p = cm_batch_pos(in, i);                                                      \
            bool has = false;                                                                      \
            for (int a = 0; a < e->n_args; a++) {                                                  \
                if (cm_vec_is_null(args[a], p)) {                                                  \
                    continue;                                                                      \
                }                                                                                  \
                const T *x = &((const T *)args[a]->data)[p];                                       \
                if (!has || CMP(x, &r[p]) * want > 0) {                                            \
                    r[p] = *x;                                                                     \
                    has = true;                                                                    \
                }                                                                                  \
            }                                                                                      \
            if (!has) {                                                                            \
                cm_vec_set_null(out, p);                                                           \
            }                                                                                      \
        }                                                                                          \
        return CM_OK;                                                                              \
    }

#define NUM_CMP(x, y) ((*(x) > *(y)) - (*(x) < *(y)))

EXTREME_KERNEL(extreme_u8, uint8_t, NUM_CMP)
EXTREME_KERNEL(extreme_i32, int32_t, NUM_CMP)
EXTREME_KERNEL(extreme_i64, int64_t, NUM_CMP)
#define F64_CMP(x, y) cm_f64_cmp(*(x), *(y))
EXTREME_KERNEL(extreme_f64, double, F64_CMP) /* NaN is the greatest */
EXTREME_KERNEL(extreme_str, CmStr, cm_str_cmp)
EXTREME_KERNEL(extreme_iv, CmInterval, cm_interval_cmp)
/* A DECIMAL128 slot: 16 bytes with no alignment promised, compared as a CmInt128. */
typedef struct Wide {
    unsigned char b[16];
} Wide;
static int wide_cmp(const Wide *x, const Wide *y)
{
    CmInt128 a = cm_i128_get(x->b), b = cm_i128_get(y->b);
    return (a > b) - (a < b);
}
EXTREME_KERNEL(extreme_i128, Wide, wide_cmp)

static CmStatus resolve_extreme(const char *name, int n_args, const CmType *types, int64_t off,
                                ExFuncMatch *m, CmErr *err)
{
    CmType c = types[0];
    for (int a = 1; a < n_args; a++) {
        CmType next;
        if (!ex_common_type(c, types[a], &next)) {
            char t0[32], t1[32];
            return cm_err_set(err, CM_TYPE, off, "%s cannot compare %s with %s", name,
                              cm_type_name(c, t0, sizeof t0),
                              cm_type_name(types[a], t1, sizeof t1));
        }
        c = next;
    }
    if (c.id == CM_T_NULL) {
        c = cm_type_make(CM_T_INT32); /* all NULL: a NULL of DuckDB's INTEGER */
    }
    if (c.id == CM_T_LIST) {
        /* Lists have no order here (no `<` either); the int64 kernel would
         * read their 16-byte values as integers. */
        char t0[32];
        return cm_err_set(err, CM_TYPE, off, "%s cannot compare values of type %s", name,
                          cm_type_name(c, t0, sizeof t0));
    }
    for (int a = 0; a < n_args; a++) {
        m->arg_types[a] = c;
    }
    m->result = c;
    m->aux = name[0] == 'g';
    switch ((CmTypeId)c.id) {
    case CM_T_BOOL:
        m->kernel = extreme_u8;
        break;
    case CM_T_INT32:
    case CM_T_DATE:
        m->kernel = extreme_i32;
        break;
    case CM_T_DOUBLE:
        m->kernel = extreme_f64;
        break;
    case CM_T_VARCHAR:
        m->kernel = extreme_str;
        break;
    case CM_T_INTERVAL:
        m->kernel = extreme_iv;
        break;
    case CM_T_DECIMAL128:
        m->kernel = extreme_i128;
        break;
    default:
        m->kernel = extreme_i64;
        break; /* BIGINT, DECIMAL (one scale), TIME */
    }
    return CM_OK;
}

/* ---- hash -------------------------------------------------------------------------- */

/* The hash of value p of v (integers arrive as BIGINT, so 1 hashes the same
 * whether INTEGER or BIGINT; -0.0 as 0.0 and every NaN alike). */
static uint64_t hash_one(const CmVec *v, uint32_t p)
{
    if (cm_vec_is_null(v, p)) {
        return CM_HASH_NULL;
    }
    switch ((CmTypeId)v->type.id) {
    case CM_T_VARCHAR: {
        const CmStr *s = &((const CmStr *)v->data)[p];
        return cm_hash_bytes(cm_str_data(s), s->len);
    }
    case CM_T_DOUBLE:
        return cm_hash_u64(cm_f64_key_bits(((const double *)v->data)[p]));
    case CM_T_BOOL:
        return cm_hash_u64(((const uint8_t *)v->data)[p]);
    case CM_T_DATE:
    case CM_T_INT32:
        return cm_hash_u64((uint64_t)(int64_t)((const int32_t *)v->data)[p]);
    case CM_T_INTERVAL: {
        CmInt128 span = cm_interval_span(&((const CmInterval *)v->data)[p]);
        return cm_hash_combine(cm_hash_u64((uint64_t)span), cm_hash_u64((uint64_t)(span >> 64)));
    }
    case CM_T_DECIMAL128: {
        CmInt128 x = cm_i128_get((const char *)v->data + 16 * (size_t)p);
        return cm_hash_combine(cm_hash_u64((uint64_t)x), cm_hash_u64((uint64_t)(x >> 64)));
    }
    default:
        return cm_hash_u64((uint64_t)((const int64_t *)v->data)[p]);
    }
}

static CmStatus hash_k(KERNEL_ARGS)
{
    int64_t *r = out->data;
    out->validity = NULL;
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        uint64_t h = hash_one(args[0], p);
        for (int a = 1; a < e->n_args; a++) {
            h = cm_hash_combine(h, hash_one(args[a], p));
        }
        r[p] = (int64_t)h;
    }
    return CM_OK;
}

/* ---- random, setseed --------------------------------------------------------------- */

static atomic_uint_fast64_t rng_seed;    /* 0 until the first draw or setseed */
static atomic_uint_fast64_t rng_counter; /* draws taken since the seed was set */

static uint64_t rng_current_seed(void)
{
    uint64_t s = atomic_load(&rng_seed);
    if (s == 0) {
        /* Unseeded: a different sequence per run, as DuckDB's. */
        struct timespec ts;
        timespec_get(&ts, TIME_UTC);
        uint64_t fresh = cm_hash_u64((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) | 1;
        uint_fast64_t expected = 0;
        atomic_compare_exchange_strong(&rng_seed, &expected, fresh);
        s = atomic_load(&rng_seed);
    }
    return s;
}

static CmStatus random_k(KERNEL_ARGS)
{
    double *r = out->data;
    out->validity = NULL;
    uint64_t seed = rng_current_seed();
    uint64_t base = atomic_fetch_add(&rng_counter, (uint_fast64_t)in->n_rows);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        uint64_t x = cm_hash_u64(seed + 0x9e3779b97f4a7c15ULL * (base + (uint64_t)i));
        r[p] = (double)(x >> 11) * 0x1.0p-53; /* 53 random bits: [0, 1) */
    }
    return CM_OK;
}

/* setseed(x), x in [-1, 1]: restarts random()'s sequence; returns NULL. */
static CmStatus setseed_k(KERNEL_ARGS)
{
    const double *a = args[0]->data;
    out->validity = out->validity_buf;
    memset(out->validity_buf, 0, sizeof out->validity_buf);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(args[0], p)) {
            continue;
        }
        double x = a[p];
        if (!(x >= -1 && x <= 1)) {
            return cm_err_set(err, CM_RUNTIME, e->src_off,
                              "setseed takes a value between -1 and 1, not %g", x);
        }
        uint64_t bits;
        memcpy(&bits, &x, sizeof bits);
        atomic_store(&rng_seed, cm_hash_u64(bits) | 1);
        atomic_store(&rng_counter, 0);
    }
    return CM_OK;
}

/* ---- version ------------------------------------------------------------------------- */

static CmStatus version_k(KERNEL_ARGS)
{
    static const char V[] = "Sluice " SLUICE_VERSION;
    CmStr *r = out->data;
    out->validity = NULL;
    for (int i = 0; i < in->n_rows; i++) {
        r[cm_batch_pos(in, i)] = cm_str_make(V, sizeof V - 1);
    }
    return CM_OK;
}

/* ---- resolution ----------------------------------------------------------------------- */

CmStatus ex_resolve_misc(const char *name, int n_args, const CmType *types, int64_t off,
                         ExFuncMatch *m, CmErr *err)
{
    if ((!strcmp(name, "greatest") || !strcmp(name, "least")) && n_args >= 1) {
        return resolve_extreme(name, n_args, types, off, m, err);
    }
    if (!strcmp(name, "mod") && n_args == 2) {
        return ex_func_resolve("%", 2, types, off, m, err);
    }
    if (!strcmp(name, "hash") && n_args >= 1) {
        for (int a = 0; a < n_args; a++) {
            m->arg_types[a] = types[a].id == CM_T_NULL || cm_type_is_integer(types[a])
                                  ? cm_type_make(CM_T_INT64)
                                  : types[a];
        }
        m->result = cm_type_make(CM_T_INT64);
        m->kernel = hash_k;
        return CM_OK;
    }
    if (!strcmp(name, "random") && n_args == 0) {
        m->result = cm_type_make(CM_T_DOUBLE);
        m->kernel = random_k;
        m->is_volatile = true;
        return CM_OK;
    }
    if (!strcmp(name, "setseed") && n_args == 1) {
        if (types[0].id != CM_T_NULL && !cm_type_is_numeric(types[0])) {
            char tn[32];
            return cm_err_set(err, CM_TYPE, off, "setseed expects a number, not %s",
                              cm_type_name(types[0], tn, sizeof tn));
        }
        m->arg_types[0] = cm_type_make(CM_T_DOUBLE);
        m->result = cm_type_make(CM_T_INT32);
        m->kernel = setseed_k;
        m->is_volatile = true; /* run when the query runs, not when it is bound */
        return CM_OK;
    }
    if (!strcmp(name, "version") && n_args == 0) {
        m->result = cm_type_varchar(-1, false);
        m->kernel = version_k;
        return CM_OK;
    }
    return EX_NOT_MINE;
}
