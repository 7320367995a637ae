/*
 * hash_agg.c - hash aggregation in three modes: SINGLE (rows in, values out),
 * PARTIAL (rows in, partial states out, before a shuffle) and FINAL (partial
 * states in, values out, after it).
 *
 * Design: each task owns one table (partial aggregation is per task, and after
 * a hash exchange a partition's keys meet in one task, so no merging across
 * tasks is ever needed).  Groups are numbered densely; keys are stored column
 * by column in growable arrays and aggregate states in one array of AggState
 * (n_aggs per group).  The index is open addressing with linear probing over
 * (group + 1, upper hash bits) slots, at most half full.  A batch is processed
 * in two passes: find or insert the group of every row, then update each
 * aggregate column by column.  With no keys there is one group, and SINGLE or
 * FINAL emit one row even for empty input (count 0, sum NULL).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/hash.h"
#include "common/value.h"
#include "executor/hashing.h"
#include "executor/ops.h"

typedef struct AggState {
    union {
        int64_t i;
        double d;  /* also the running mean of the variances */
        CmStr s;
    };
    int64_t n; /* values seen (non-NULL), or summed partial counts */
    double m2; /* variances: sum of squared deviations from the mean (Welford) */
} AggState;

typedef struct HashAggSpec {
    ExAggMode mode;
    int n_keys;
    int *keys;
    CmType *key_types;
    int n_aggs;
    ExAggSpec *aggs;
    int *in_col;   /* per aggregate: its (first) input column */
    int empty_gid_key;   /* the grouping-set key of an empty set (), or -1 */
    int64_t empty_gid;   /* ... and the set's number */
} HashAggSpec;

typedef struct KeyCol {
    void *data;     /* cap values of the key's physical type */
    uint8_t *nulls; /* cap flags */
} KeyCol;

typedef struct Slot {
    uint32_t group; /* group + 1; 0 = empty */
    uint32_t tag;   /* upper 32 bits of the hash */
} Slot;

/* The (group, value) pairs a DISTINCT aggregate has seen: open addressing over
 * entries that keep the value (strings copied into the agg's arena). */
typedef struct SeenEntry {
    uint64_t hash;   /* 0 = empty (real hashes are forced odd) */
    int64_t group;
    CmValue value;
} SeenEntry;

typedef struct SeenSet {
    SeenEntry *slots;
    uint64_t mask;
    int64_t n;
} SeenSet;

typedef struct AggLocal {
    int64_t n_groups, cap_groups;
    KeyCol *keys;        /* n_keys */
    AggState *states;    /* cap_groups * n_aggs */
    uint64_t *hashes;    /* per group, for rehashing */
    Slot *slots;
    uint64_t mask;       /* slots - 1 */
    CmArena strings;     /* key and min/max strings */
    uint32_t row_group[CM_BATCH_CAP];
    uint64_t row_hash[CM_BATCH_CAP];
    CmBatch out;
    int64_t next_out;    /* flush position */
    bool flushed_empty;
    SeenSet *seen;       /* per aggregate, for DISTINCT ones; owned */
} AggLocal;

/* ---- types ------------------------------------------------------------------ */

static CmType sum_type(CmType arg)
{
    if (arg.id == CM_T_DOUBLE) {
        return arg;
    }
    if (arg.id == CM_T_DECIMAL) {
        return cm_type_decimal(18, arg.scale);
    }
    return cm_type_make(CM_T_INT64);
}

int ex_agg_partial_types(const ExAggSpec *agg, CmType *out)
{
    switch (agg->fn) {
    case EX_AGG_COUNT_STAR:
    case EX_AGG_COUNT:
    case EX_AGG_SUM_COUNT: out[0] = cm_type_make(CM_T_INT64); return 1;
    case EX_AGG_SUM: out[0] = sum_type(agg->arg_type); return 1;
    case EX_AGG_MIN:
    case EX_AGG_MAX:
    case EX_AGG_SCALAR: out[0] = agg->arg_type; return 1;
    case EX_AGG_AVG:
        out[0] = sum_type(agg->arg_type);
        out[1] = cm_type_make(CM_T_INT64);
        return 2;
    case EX_AGG_VAR_SAMP:
    case EX_AGG_VAR_POP:
    case EX_AGG_STDDEV_SAMP:
    case EX_AGG_STDDEV_POP:
        out[0] = cm_type_make(CM_T_INT64);
        out[1] = out[2] = cm_type_make(CM_T_DOUBLE);
        return 3;
    }
    return 0;
}

/* ---- group table ---------------------------------------------------------- */

static CmStatus grow_groups(const HashAggSpec *s, AggLocal *l, CmErr *err)
{
    int64_t cap = l->cap_groups ? l->cap_groups * 2 : 1024;
    for (int k = 0; k < s->n_keys; k++) {
        void *d = cm_realloc(l->keys[k].data, cm_type_width(s->key_types[k]) * (size_t)cap);
        if (d == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory in hash aggregate");
        }
        l->keys[k].data = d;
        uint8_t *nl = cm_realloc(l->keys[k].nulls, (size_t)cap);
        if (nl == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory in hash aggregate");
        }
        l->keys[k].nulls = nl;
    }
    AggState *st = cm_realloc(l->states, sizeof(AggState) * (size_t)(cap * (s->n_aggs ? s->n_aggs : 1)));
    uint64_t *h = st ? cm_realloc(l->hashes, sizeof(uint64_t) * (size_t)cap) : NULL;
    if (st != NULL) {
        l->states = st;
    }
    if (h == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory in hash aggregate");
    }
    l->hashes = h;
    l->cap_groups = cap;
    return CM_OK;
}

static CmStatus rehash(AggLocal *l, CmErr *err)
{
    uint64_t n_slots = (l->mask + 1) * 2;
    if (n_slots < 2048) {
        n_slots = 2048;
    }
    Slot *slots = cm_calloc((size_t)n_slots, sizeof(Slot));
    if (slots == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory in hash aggregate");
    }
    for (int64_t g = 0; g < l->n_groups; g++) {
        uint64_t i = l->hashes[g] & (n_slots - 1);
        while (slots[i].group != 0) {
            i = (i + 1) & (n_slots - 1);
        }
        slots[i].group = (uint32_t)(g + 1);
        slots[i].tag = (uint32_t)(l->hashes[g] >> 32);
    }
    cm_free(l->slots);
    l->slots = slots;
    l->mask = n_slots - 1;
    return CM_OK;
}

static bool key_matches(const HashAggSpec *s, const AggLocal *l, int64_t g, const CmBatch *in,
                        uint32_t p)
{
    for (int k = 0; k < s->n_keys; k++) {
        const CmVec *v = &in->cols[s->keys[k]];
        bool in_null = cm_vec_is_null(v, p);
        if (in_null || l->keys[k].nulls[g]) {
            if (in_null != (l->keys[k].nulls[g] != 0)) {
                return false;
            }
            continue;
        }
        size_t w = cm_type_width(s->key_types[k]);
        const char *stored = (const char *)l->keys[k].data + w * (size_t)g;
        if (s->key_types[k].id == CM_T_VARCHAR) {
            if (!cm_str_eq((const CmStr *)stored, &((const CmStr *)v->data)[p])) {
                return false;
            }
        } else if (s->key_types[k].id == CM_T_DOUBLE) {
            double x = *(const double *)stored, y = ((const double *)v->data)[p];
            if (x != y && !(isnan(x) && isnan(y))) { /* NaNs group together */
                return false;
            }
        } else if (memcmp(stored, (const char *)v->data + w * p, w) != 0) {
            return false;
        }
    }
    return true;
}

static void init_states(const HashAggSpec *s, AggState *st)
{
    memset(st, 0, sizeof(AggState) * (size_t)s->n_aggs);
}

static CmStatus new_group(const HashAggSpec *s, AggLocal *l, const CmBatch *in, uint32_t p,
                          uint64_t h, int64_t *g_out, CmErr *err)
{
    if (l->n_groups == l->cap_groups && grow_groups(s, l, err) != CM_OK) {
        return err->code;
    }
    int64_t g = l->n_groups++;
    for (int k = 0; k < s->n_keys; k++) {
        const CmVec *v = &in->cols[s->keys[k]];
        size_t w = cm_type_width(s->key_types[k]);
        l->keys[k].nulls[g] = cm_vec_is_null(v, p);
        char *dst = (char *)l->keys[k].data + w * (size_t)g;
        if (s->key_types[k].id == CM_T_VARCHAR) {
            CmStr str = ((const CmStr *)v->data)[p];
            *(CmStr *)dst = l->keys[k].nulls[g] ? str : cm_str_copy(&l->strings, &str, err);
        } else {
            memcpy(dst, (const char *)v->data + w * p, w);
        }
    }
    init_states(s, &l->states[g * s->n_aggs]);
    l->hashes[g] = h;
    *g_out = g;
    return err->code;
}

/* Finds or creates the group of every active row into l->row_group. */
static CmStatus assign_groups(const HashAggSpec *s, AggLocal *l, const CmBatch *in, CmErr *err)
{
    if (s->n_keys == 0) {
        if (l->n_groups == 0) {
            int64_t g;
            if (new_group(s, l, in, 0, 0, &g, err) != CM_OK) {
                return err->code;
            }
        }
        memset(l->row_group, 0, sizeof(uint32_t) * (size_t)in->n_rows);
        return CM_OK;
    }
    ex_hash_keys(in, s->n_keys, s->keys, l->row_hash);
    for (int i = 0; i < in->n_rows; i++) {
        if ((uint64_t)(l->n_groups + 1) * 2 > l->mask + 1 && rehash(l, err) != CM_OK) {
            return err->code;
        }
        /* With many groups the slots outgrow the cache and every row misses:
         * the slot of a row a few ahead is fetched while this one is placed. */
        if (i + 8 < in->n_rows) {
            __builtin_prefetch(&l->slots[l->row_hash[i + 8] & l->mask]);
        }
        uint32_t p = cm_batch_pos(in, i);
        uint64_t h = l->row_hash[i];
        uint32_t tag = (uint32_t)(h >> 32);
        uint64_t idx = h & l->mask;
        for (;;) {
            Slot *slot = &l->slots[idx];
            if (slot->group == 0) {
                int64_t g;
                if (new_group(s, l, in, p, h, &g, err) != CM_OK) {
                    return err->code;
                }
                slot->group = (uint32_t)(g + 1);
                slot->tag = tag;
                l->row_group[i] = (uint32_t)g;
                break;
            }
            if (slot->tag == tag && key_matches(s, l, slot->group - 1, in, p)) {
                l->row_group[i] = slot->group - 1;
                break;
            }
            idx = (idx + 1) & l->mask;
        }
    }
    return CM_OK;
}

/* ---- updates ---------------------------------------------------------------- */

static CmStatus sum_overflow(CmErr *err)
{
    return cm_err_set(err, CM_RUNTIME, -1, "overflow in SUM");
}

/* Adds value p of v into st (SUM/AVG of a raw or partial value). */
static CmStatus add_value(AggState *st, const CmVec *v, uint32_t p, CmErr *err)
{
    switch ((CmTypeId)v->type.id) {
    case CM_T_DOUBLE: st->d += ((const double *)v->data)[p]; break;
    case CM_T_INT32:
        if (__builtin_add_overflow(st->i, (int64_t)((const int32_t *)v->data)[p], &st->i)) {
            return sum_overflow(err);
        }
        break;
    case CM_T_BOOL: st->i += ((const uint8_t *)v->data)[p]; break;
    default:
        if (__builtin_add_overflow(st->i, ((const int64_t *)v->data)[p], &st->i)) {
            return sum_overflow(err);
        }
        break;
    }
    return CM_OK;
}

static int compare_value(const AggState *st, const CmVec *v, uint32_t p)
{
    switch ((CmTypeId)v->type.id) {
    case CM_T_DOUBLE: {
        double a = st->d, b = ((const double *)v->data)[p];
        return (a > b) - (a < b);
    }
    case CM_T_VARCHAR: return cm_str_cmp(&st->s, &((const CmStr *)v->data)[p]);
    default: {
        CmValue val;
        cm_vec_get_value(v, p, &val);
        return (st->i > val.i) - (st->i < val.i);
    }
    }
}

static CmStatus set_minmax(AggState *st, const CmVec *v, uint32_t p, AggLocal *l, CmErr *err)
{
    if (v->type.id == CM_T_VARCHAR) {
        CmStr str = ((const CmStr *)v->data)[p];
        st->s = cm_str_copy(&l->strings, &str, err);
    } else if (v->type.id == CM_T_DOUBLE) {
        st->d = ((const double *)v->data)[p];
    } else {
        CmValue val;
        cm_vec_get_value(v, p, &val);
        st->i = val.i;
    }
    return err->code;
}

static double as_double(const CmVec *v, uint32_t p)
{
    CmValue x;
    cm_vec_get_value(v, p, &x);
    switch ((CmTypeId)x.type.id) {
    case CM_T_DOUBLE: return x.d;
    case CM_T_DECIMAL: return (double)x.i / (double)cm_pow10(x.type.scale);
    default: return (double)x.i;
    }
}

/* Welford's update for a raw value, or Chan's merge of a partial (n, mean, m2)
 * in FINAL mode: both keep the variance stable where sum-of-squares is not. */
static void variance_add(const HashAggSpec *s, AggState *st, const CmBatch *in, const CmVec *v,
                         uint32_t p, int col)
{
    if (s->mode != EX_AGG_FINAL) {
        double x = as_double(v, p);
        st->n++;
        double delta = x - st->d;
        st->d += delta / (double)st->n;
        st->m2 += delta * (x - st->d);
        return;
    }
    int64_t nb = ((const int64_t *)v->data)[p];
    if (nb == 0) {
        return;
    }
    double mean_b = ((const double *)in->cols[col + 1].data)[p];
    double m2_b = ((const double *)in->cols[col + 2].data)[p];
    int64_t n = st->n + nb;
    double delta = mean_b - st->d;
    st->m2 += m2_b + delta * delta * (double)st->n * (double)nb / (double)n;
    st->d += delta * (double)nb / (double)n;
    st->n = n;
}

static bool same_value(const CmValue *x, const CmValue *y)
{
    switch ((CmTypeId)x->type.id) {
    case CM_T_VARCHAR: return cm_str_eq(&x->s, &y->s);
    case CM_T_DOUBLE: return x->d == y->d;
    default: return x->i == y->i;
    }
}

static uint64_t value_hash(const CmValue *x, int64_t group)
{
    uint64_t h;
    switch ((CmTypeId)x->type.id) {
    case CM_T_VARCHAR: h = cm_hash_bytes(cm_str_data(&x->s), x->s.len); break;
    case CM_T_DOUBLE: {
        double d = x->d == 0 ? 0 : x->d;
        memcpy(&h, &d, sizeof h);
        h = cm_hash_u64(h);
        break;
    }
    default: h = cm_hash_u64((uint64_t)x->i); break;
    }
    return cm_hash_combine(h, (uint64_t)group) | 1;
}

/* True (and remembered) the first time `group` sees value p of v. */
static bool first_sight(SeenSet *set, AggLocal *l, int64_t group, const CmVec *v, uint32_t p,
                        CmErr *err)
{
    if ((uint64_t)(set->n + 1) * 2 > set->mask + 1) {
        uint64_t n_slots = set->mask ? (set->mask + 1) * 2 : 1024;
        SeenEntry *slots = cm_calloc((size_t)n_slots, sizeof(SeenEntry));
        if (slots == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory in a DISTINCT aggregate");
            return false;
        }
        for (uint64_t i = 0; set->slots != NULL && i <= set->mask; i++) {
            if (set->slots[i].hash != 0) {
                uint64_t j = set->slots[i].hash & (n_slots - 1);
                while (slots[j].hash != 0) {
                    j = (j + 1) & (n_slots - 1);
                }
                slots[j] = set->slots[i];
            }
        }
        cm_free(set->slots);
        set->slots = slots;
        set->mask = n_slots - 1;
    }
    CmValue x;
    cm_vec_get_value(v, p, &x);
    uint64_t h = value_hash(&x, group);
    for (uint64_t j = h & set->mask;; j = (j + 1) & set->mask) {
        SeenEntry *e = &set->slots[j];
        if (e->hash == 0) {
            e->hash = h;
            e->group = group;
            e->value = x;
            if (x.type.id == CM_T_VARCHAR) {
                e->value.s = cm_str_copy(&l->strings, &x.s, err);
            }
            set->n++;
            return true;
        }
        if (e->hash == h && e->group == group && same_value(&e->value, &x)) {
            return false;
        }
    }
}

static CmStatus update_one(const HashAggSpec *s, AggLocal *l, int a, const CmBatch *in,
                           CmErr *err)
{
    const ExAggSpec *agg = &s->aggs[a];
    ExAggFn fn = agg->fn;
    const CmVec *v = fn == EX_AGG_COUNT_STAR && s->mode != EX_AGG_FINAL ? NULL
                                                                        : &in->cols[s->in_col[a]];
    const CmVec *v2 = fn == EX_AGG_AVG && s->mode == EX_AGG_FINAL ? &in->cols[s->in_col[a] + 1]
                                                                   : NULL;
    bool final_count = s->mode == EX_AGG_FINAL &&
                       (fn == EX_AGG_COUNT || fn == EX_AGG_COUNT_STAR || fn == EX_AGG_SUM_COUNT);
    for (int i = 0; i < in->n_rows; i++) {
        AggState *st = &l->states[(int64_t)l->row_group[i] * s->n_aggs + a];
        if (v == NULL) {
            st->n++;
            continue;
        }
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(v, p)) {
            continue;
        }
        if (agg->distinct && !first_sight(&l->seen[a], l, l->row_group[i], v, p, err)) {
            if (err->code != CM_OK) {
                return err->code;
            }
            continue;
        }
        if (final_count) {
            st->n += ((const int64_t *)v->data)[p];
            continue;
        }
        if (fn >= EX_AGG_VAR_SAMP) {
            variance_add(s, st, in, v, p, s->in_col[a]);
            continue;
        }
        switch (fn) {
        case EX_AGG_COUNT: st->n++; break;
        case EX_AGG_SUM:
        case EX_AGG_AVG:
            if (add_value(st, v, p, err) != CM_OK) {
                return err->code;
            }
            st->n += v2 ? ((const int64_t *)v2->data)[p] : 1;
            break;
        case EX_AGG_SCALAR:
            if (st->n > 0) {
                return cm_err_set(err, CM_RUNTIME, -1,
                                  "more than one row returned by a subquery used as an expression");
            }
            if (set_minmax(st, v, p, l, err) != CM_OK) {
                return err->code;
            }
            st->n++;
            break;
        case EX_AGG_MIN:
        case EX_AGG_MAX: {
            int c = st->n == 0 ? 0 : compare_value(st, v, p);
            if (st->n == 0 || (fn == EX_AGG_MIN ? c > 0 : c < 0)) {
                if (set_minmax(st, v, p, l, err) != CM_OK) {
                    return err->code;
                }
            }
            st->n++;
            break;
        }
        default: break;
        }
    }
    return CM_OK;
}

/* ---- output ----------------------------------------------------------------- */

/* Writes aggregate a of group g into column(s) starting at `col` of out. */
static int emit_agg(const HashAggSpec *s, const AggState *st, int a, CmBatch *out, int col,
                    uint32_t row)
{
    const ExAggSpec *agg = &s->aggs[a];
    bool partial = s->mode == EX_AGG_PARTIAL;
    CmVec *v = &out->cols[col];
    switch (agg->fn) {
    case EX_AGG_COUNT_STAR:
    case EX_AGG_COUNT:
    case EX_AGG_SUM_COUNT: ((int64_t *)v->data)[row] = st->n; return 1;
    case EX_AGG_VAR_SAMP:
    case EX_AGG_VAR_POP:
    case EX_AGG_STDDEV_SAMP:
    case EX_AGG_STDDEV_POP: {
        if (partial) {
            ((int64_t *)v->data)[row] = st->n;
            ((double *)out->cols[col + 1].data)[row] = st->d;
            ((double *)out->cols[col + 2].data)[row] = st->m2;
            return 3;
        }
        bool samp = agg->fn == EX_AGG_VAR_SAMP || agg->fn == EX_AGG_STDDEV_SAMP;
        if (st->n < (samp ? 2 : 1)) {
            cm_vec_set_null(v, row);
            return 1;
        }
        double var = st->m2 / (double)(samp ? st->n - 1 : st->n);
        if (var < 0) {
            var = 0; /* rounding in the merge */
        }
        bool sd = agg->fn == EX_AGG_STDDEV_SAMP || agg->fn == EX_AGG_STDDEV_POP;
        ((double *)v->data)[row] = sd ? sqrt(var) : var;
        return 1;
    }
    case EX_AGG_AVG:
        if (partial) {
            if (st->n == 0) {
                cm_vec_set_null(v, row);
            } else if (v->type.id == CM_T_DOUBLE) {
                ((double *)v->data)[row] = st->d;
            } else {
                ((int64_t *)v->data)[row] = st->i;
            }
            ((int64_t *)out->cols[col + 1].data)[row] = st->n;
            return 2;
        }
        if (st->n == 0) {
            cm_vec_set_null(v, row);
        } else {
            CmType t = sum_type(agg->arg_type);
            double sum = t.id == CM_T_DOUBLE ? st->d
                       : (double)st->i / (double)cm_pow10(t.id == CM_T_DECIMAL ? t.scale : 0);
            ((double *)v->data)[row] = sum / (double)st->n;
        }
        return 1;
    default:
        if (st->n == 0) {
            cm_vec_set_null(v, row);
        } else if (v->type.id == CM_T_DOUBLE) {
            ((double *)v->data)[row] = st->d;
        } else if (v->type.id == CM_T_VARCHAR) {
            ((CmStr *)v->data)[row] = st->s;
        } else {
            CmValue val = {.type = v->type, .is_null = false, .i = st->i};
            cm_vec_set_value(v, row, &val);
        }
        return 1;
    }
}

static void emit_group(const HashAggSpec *s, AggLocal *l, int64_t g, uint32_t row)
{
    for (int k = 0; k < s->n_keys; k++) {
        CmVec *v = &l->out.cols[k];
        if (l->keys[k].nulls[g]) {
            cm_vec_set_null(v, row);
            continue;
        }
        size_t w = cm_type_width(s->key_types[k]);
        memcpy((char *)v->data + w * row, (const char *)l->keys[k].data + w * (size_t)g, w);
    }
    int col = s->n_keys;
    for (int a = 0; a < s->n_aggs; a++) {
        col += emit_agg(s, &l->states[g * s->n_aggs + a], a, &l->out, col, row);
    }
}

static ExOpResult agg_flush(ExOp *op, void *local, const CmBatch **out, CmErr *err)
{
    const HashAggSpec *s = op->spec;
    AggLocal *l = local;
    if (l->n_groups == 0 && s->n_keys == 0 && s->mode != EX_AGG_PARTIAL && !l->flushed_empty) {
        /* A global aggregate over no rows still returns its one row. */
        CmBatch none = {.n_rows = 0};
        if (assign_groups(s, l, &none, err) != CM_OK) {
            return EX_DONE;
        }
        l->flushed_empty = true;
    }
    if (l->n_groups == 0 && s->empty_gid_key >= 0 && s->mode != EX_AGG_PARTIAL &&
        !l->flushed_empty) {
        /* The empty grouping set over no rows: one row of NULL keys. */
        if (l->n_groups == l->cap_groups && grow_groups(s, l, err) != CM_OK) {
            return EX_DONE;
        }
        for (int k = 0; k < s->n_keys; k++) {
            l->keys[k].nulls[0] = k != s->empty_gid_key;
        }
        ((int64_t *)l->keys[s->empty_gid_key].data)[0] = s->empty_gid;
        init_states(s, &l->states[0]);
        l->n_groups = 1;
        l->flushed_empty = true;
    }
    cm_batch_reset(&l->out);
    uint32_t row = 0;
    while (l->next_out < l->n_groups && row < CM_BATCH_CAP) {
        emit_group(s, l, l->next_out++, row++);
    }
    l->out.n_rows = (int)row;
    *out = &l->out;
    return l->next_out < l->n_groups ? EX_HAVE_MORE : EX_DONE;
}

static ExOpResult agg_push(ExOp *op, void *local, const CmBatch *in, const CmBatch **out,
                           CmErr *err)
{
    const HashAggSpec *s = op->spec;
    AggLocal *l = local;
    if (assign_groups(s, l, in, err) != CM_OK) {
        return EX_NEED_INPUT;
    }
    for (int a = 0; a < s->n_aggs; a++) {
        if (update_one(s, l, a, in, err) != CM_OK) {
            break;
        }
    }
    return EX_NEED_INPUT;
}

/* ---- lifecycle ---------------------------------------------------------------- */

static void agg_local_fini(ExOp *op, void *local)
{
    const HashAggSpec *s = op->spec;
    AggLocal *l = local;
    if (l == NULL) {
        return;
    }
    for (int k = 0; l->keys != NULL && k < s->n_keys; k++) {
        cm_free(l->keys[k].data);
        cm_free(l->keys[k].nulls);
    }
    cm_free(l->keys);
    cm_free(l->states);
    cm_free(l->hashes);
    cm_free(l->slots);
    for (int a = 0; l->seen != NULL && a < s->n_aggs; a++) {
        cm_free(l->seen[a].slots);
    }
    cm_free(l->seen);
    cm_arena_fini(&l->strings);
    cm_batch_fini(&l->out);
    cm_free(l);
}

static void *agg_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    const HashAggSpec *s = op->spec;
    AggLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    cm_arena_init(&l->strings, 64 * 1024);
    l->keys = cm_calloc((size_t)(s->n_keys ? s->n_keys : 1), sizeof(KeyCol));
    l->seen = cm_calloc((size_t)(s->n_aggs ? s->n_aggs : 1), sizeof(SeenSet));
    if (l->keys == NULL || l->seen == NULL ||
        cm_batch_init(&l->out, op->n_cols, op->types, err) != CM_OK ||
        grow_groups(s, l, err) != CM_OK || rehash(l, err) != CM_OK) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        agg_local_fini(op, l);
        return NULL;
    }
    return l;
}

static void agg_explain(const ExOp *op, char *buf, size_t cap)
{
    static const char *fn_names[] = {"count_star", "count", "sum", "min", "max", "avg",
                                     "sum_count", "scalar", "var_samp", "var_pop",
                                     "stddev_samp", "stddev_pop"};
    static const char *mode_names[] = {"single", "partial", "final"};
    const HashAggSpec *s = op->spec;
    size_t n = (size_t)snprintf(buf, cap, "%s, keys:", mode_names[s->mode]);
    for (int k = 0; k < s->n_keys && n + 8 < cap; k++) {
        n += (size_t)snprintf(buf + n, cap - n, " #%d", s->keys[k]);
    }
    n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, ", aggregates:");
    for (int a = 0; a < s->n_aggs && n + 16 < cap; a++) {
        n += (size_t)snprintf(buf + n, cap - n, " %s(#%d)", fn_names[s->aggs[a].fn],
                              s->in_col[a]);
    }
}

static const ExOpVt HASH_AGG_VT = {
    .name = "HASH_AGGREGATE",
    .local_init = agg_local_init,
    .local_fini = agg_local_fini,
    .push = agg_push,
    .flush = agg_flush,
    .explain = agg_explain,
};

bool ex_hash_agg_is_partial(const ExOp *op)
{
    return op->vt == &HASH_AGG_VT && ((const HashAggSpec *)op->spec)->mode == EX_AGG_PARTIAL;
}

ExOp *ex_hash_agg_new(CmArena *a, ExAggMode mode, int n_keys, const int *keys,
                      const CmType *key_types, int n_aggs, const ExAggSpec *aggs, CmErr *err)
{
    HashAggSpec *s = cm_arena_zalloc(a, sizeof *s);
    int n_out = n_keys + 3 * n_aggs;
    CmType *types = cm_arena_alloc(a, sizeof(CmType) * (size_t)(n_out ? n_out : 1));
    if (s == NULL || types == NULL) {
        goto oom;
    }
    s->mode = mode;
    s->empty_gid_key = -1;
    s->n_keys = n_keys;
    s->n_aggs = n_aggs;
    s->keys = cm_arena_alloc(a, sizeof(int) * (size_t)(n_keys + 1));
    s->key_types = cm_arena_alloc(a, sizeof(CmType) * (size_t)(n_keys + 1));
    s->aggs = cm_arena_alloc(a, sizeof(ExAggSpec) * (size_t)(n_aggs + 1));
    s->in_col = cm_arena_alloc(a, sizeof(int) * (size_t)(n_aggs + 1));
    if (!s->keys || !s->key_types || !s->aggs || !s->in_col) {
        goto oom;
    }
    if (n_keys > 0) {
        memcpy(s->key_types, key_types, sizeof(CmType) * (size_t)n_keys);
    }
    if (n_aggs > 0) {
        memcpy(s->aggs, aggs, sizeof(ExAggSpec) * (size_t)n_aggs);
    }
    int n_cols = 0;
    for (int k = 0; k < n_keys; k++) {
        /* FINAL reads its keys at the front of the partial output. */
        s->keys[k] = mode == EX_AGG_FINAL ? k : keys[k];
        types[n_cols++] = key_types[k];
    }
    int in_at = n_keys;
    for (int i = 0; i < n_aggs; i++) {
        CmType partial[3];
        int np = ex_agg_partial_types(&aggs[i], partial);
        s->in_col[i] = mode == EX_AGG_FINAL ? in_at : aggs[i].arg;
        in_at += np;
        if (mode == EX_AGG_PARTIAL) {
            for (int j = 0; j < np; j++) {
                types[n_cols++] = partial[j];
            }
        } else {
            types[n_cols++] = aggs[i].type;
        }
    }
    ExOp *op = ex_op_new(a, &HASH_AGG_VT, s, n_cols, types);
    if (op == NULL) {
        goto oom;
    }
    return op;
oom:
    cm_err_set(err, CM_OOM, -1, "out of memory");
    return NULL;
}

void ex_hash_agg_set_empty_set(ExOp *op, int gid_key, int64_t gid)
{
    HashAggSpec *s = op->spec;
    s->empty_gid_key = gid_key;
    s->empty_gid = gid;
}
