/*
 * hash_agg_holistic.c - the hash aggregate's holistic aggregates (string_agg,
 * list, quantiles, mode), whose results need all of a group's values, and the
 * sorters of ungrouped holistic and ordered aggregates (types in
 * hash_agg_int.h).
 *
 * Grouped, a holistic aggregate keeps its (group, value) entries in the
 * table's SeenSet as rows arrive; before the table is emitted they are sorted
 * by group and each group's result goes into its state.  Ungrouped (one
 * group, which spilling cannot split by hash), each one's values go to an
 * external sorter of its own and are read back once, in order, at flush;
 * only the result is kept.  Everything belongs to one task's table
 * (AggLocal); nothing here is shared.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "executor/hash_agg_int.h"
#include "executor/sort_run.h"

/* ---- holistic aggregates ---------------------------------------------------------- */

static int cmp_entry_value(const CmValue *x, const CmValue *y)
{
    if (x->is_null || y->is_null) {
        return (int)x->is_null - (int)y->is_null; /* list's NULL last */
    }
    switch ((CmTypeId)x->type.id) {
    case CM_T_VARCHAR:
        return cm_str_cmp(&x->s, &y->s);
    case CM_T_DOUBLE:
        return cm_f64_cmp(x->d, y->d);
    case CM_T_DECIMAL128: {
        CmInt128 a = cm_i128_get(x->h), b = cm_i128_get(y->h);
        return (a > b) - (a < b);
    }
    default:
        return (x->i > y->i) - (x->i < y->i);
    }
}

/* qsort orders: by group, then value (quantiles, mode) or arrival (string_agg). */
static int by_group_value(const void *pa, const void *pb)
{
    const SeenEntry *a = *(const SeenEntry *const *)pa, *b = *(const SeenEntry *const *)pb;
    if (a->group != b->group) {
        return a->group < b->group ? -1 : 1;
    }
    return cmp_entry_value(&a->value, &b->value);
}

int ex_hash_agg_by_group_arrival(const void *pa, const void *pb)
{
    const SeenEntry *a = *(const SeenEntry *const *)pa, *b = *(const SeenEntry *const *)pb;
    if (a->group != b->group) {
        return a->group < b->group ? -1 : 1;
    }
    return (a->n > b->n) - (a->n < b->n);
}

/* The value at 0-based position k of the sorted values e[0..n), each e[i]
 * standing for its count (w) rows. */
static const CmValue *value_at(SeenEntry *const *e, int64_t n, bool counts, int64_t k)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t w = counts ? (int64_t)e[i]->n : 1;
        if (k < w) {
            return &e[i]->value;
        }
        k -= w;
    }
    return &e[n - 1]->value;
}

static void set_state_value(AggState *st, const CmValue *v)
{
    if (v->type.id == CM_T_DOUBLE) {
        st->d = v->d;
    } else if (v->type.id == CM_T_VARCHAR) {
        st->s = v->s;
    } else if (v->type.id == CM_T_DECIMAL128) {
        memcpy(st->h, v->h, sizeof st->h);
    } else {
        st->i = v->i;
    }
}

/* The result of holistic aggregate `agg` over one group's sorted entries
 * e[0..n) into st (strings of string_agg into the table's string arena, which
 * finish_holistic has reserved for). */
static CmStatus holistic_group(const ExAggSpec *agg, AggLocal *l, SeenEntry *const *e, int64_t n,
                               AggState *st, CmErr *err)
{
    bool counts = counts_values(agg);
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) {
        total += counts ? (int64_t)e[i]->n : 1;
    }
    st->n = total;
    switch (agg->fn) {
    case EX_AGG_STRING_AGG: {
        const CmStr *sep = &agg->param.s;
        size_t len = (size_t)(n - 1) * sep->len;
        for (int64_t i = 0; i < n; i++) {
            len += e[i]->value.s.len;
        }
        if (len > UINT32_MAX) {
            return cm_err_set(err, CM_LIMIT, -1, "result of string_agg is too long");
        }
        char *d = cm_arena_alloc(&l->strings, len ? len : 1);
        if (d == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory in string_agg");
        }
        size_t w = 0;
        for (int64_t i = 0; i < n; i++) {
            if (i > 0) {
                memcpy(d + w, cm_str_data(sep), sep->len);
                w += sep->len;
            }
            memcpy(d + w, cm_str_data(&e[i]->value.s), e[i]->value.s.len);
            w += e[i]->value.s.len;
        }
        st->s = cm_str_make(d, (uint32_t)len);
        return CM_OK;
    }
    case EX_AGG_QUANTILE_CONT: {
        /* (n - 1) q between its neighbours, as DuckDB and PostgreSQL's percentile_cont. */
        double rn = (double)(total - 1) * agg->param.d;
        int64_t lo = (int64_t)floor(rn), hi = (int64_t)ceil(rn);
        double x = value_at(e, n, counts, lo)->d, y = value_at(e, n, counts, hi)->d;
        st->d = lo == hi ? x : x + (rn - (double)lo) * (y - x);
        return CM_OK;
    }
    case EX_AGG_QUANTILE_DISC: {
        /* The first value whose cumulative share reaches q (percentile_disc). */
        int64_t k = (int64_t)ceil((double)total * agg->param.d) - 1;
        set_state_value(st, value_at(e, n, counts, k < 0 ? 0 : k));
        return CM_OK;
    }
    case EX_AGG_LIST: {
        /* The entries' strings are in the string arena already: the list points at them. */
        size_t w = cm_type_width(agg->arg_type);
        bool any_null = false;
        for (int64_t i = 0; i < n; i++) {
            any_null |= e[i]->value.is_null;
        }
        size_t bytes = cm_list_bytes((uint32_t)n, w, any_null);
        char *d = cm_arena_alloc(&l->strings, bytes);
        if (d == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory in list");
        }
        memset(d, 0, bytes);
        CmVec elems = {.type = agg->arg_type, .data = d};
        for (int64_t i = 0; i < n; i++) {
            if (!e[i]->value.is_null) {
                cm_vec_set_value(&elems, (uint32_t)i, &e[i]->value);
                if (any_null) {
                    list_set_valid(d, (uint32_t)n, w, (uint32_t)i);
                }
            }
        }
        st->l = (CmList){.len = (uint32_t)n, .has_nulls = any_null, .data = d};
        return CM_OK;
    }
    default: { /* MODE */
        int64_t best = 0;
        for (int64_t i = 1; i < n; i++) {
            if (counts && e[i]->n > e[best]->n) {
                best = i;
            }
        }
        set_state_value(st, &e[best]->value);
        return CM_OK;
    }
    }
}

/* Before the table is emitted: each holistic aggregate's entries are sorted by
 * group and computed into the groups' states.  The sort's index and
 * string_agg's results are reserved first (cm_mem_need: they cannot spill). */
CmStatus ex_hash_agg_finish_holistic(const HashAggSpec *s, AggLocal *l, CmErr *err)
{
    for (int a = 0; a < s->n_aggs; a++) {
        const ExAggSpec *agg = &s->aggs[a];
        SeenSet *set = &l->seen[a];
        if (!ex_agg_is_holistic(agg->fn) || set->n == 0) {
            continue;
        }
        int64_t idx_bytes = set->n * (int64_t)sizeof(SeenEntry *);
        if (agg->fn == EX_AGG_STRING_AGG) {
            /* Every value once more, and a separator per value. */
            int64_t str_bytes = 0;
            for (uint64_t i = 0; i <= set->mask; i++) {
                if (set->slots[i].hash != 0) {
                    str_bytes += set->slots[i].value.s.len + agg->param.s.len;
                }
            }
            if (cm_mem_need(&l->res, str_bytes, err) != CM_OK) {
                return err->code;
            }
            l->str_reserved += str_bytes;
        }
        if (agg->fn == EX_AGG_LIST) {
            /* Each group's list: a slot per value, plus alignment. */
            int64_t list_bytes = set->n * (int64_t)cm_type_width(agg->arg_type) + 8 * set->n;
            if (cm_mem_need(&l->res, list_bytes, err) != CM_OK) {
                return err->code;
            }
            l->str_reserved += list_bytes;
        }
        if (cm_mem_need(&l->res, idx_bytes, err) != CM_OK) {
            return err->code;
        }
        SeenEntry **e = cm_malloc((size_t)idx_bytes);
        if (e == NULL) {
            cm_mem_shrink(&l->res, idx_bytes);
            return cm_err_set(err, CM_OOM, -1, "out of memory in %s", "an aggregate");
        }
        int64_t n = 0;
        for (uint64_t i = 0; i <= set->mask; i++) {
            if (set->slots[i].hash != 0) {
                e[n++] = &set->slots[i];
            }
        }
        qsort(e, (size_t)n, sizeof *e,
              in_arrival_order(agg->fn) ? ex_hash_agg_by_group_arrival : by_group_value);
        for (int64_t i = 0, j; i < n && err->code == CM_OK; i = j) {
            for (j = i + 1; j < n && e[j]->group == e[i]->group; j++) {
            }
            holistic_group(agg, l, e + i, j - i, group_states(l, e[i]->group) + a, err);
        }
        cm_free(e);
        cm_mem_shrink(&l->res, idx_bytes);
        if (err->code != CM_OK) {
            return err->code;
        }
    }
    return CM_OK;
}

/* ---- ungrouped holistic and ordered aggregates: sorters ------------------------- */

/*
 * Without keys a holistic aggregate's values are all in one group, which the
 * hash partitions of spilling cannot split.  So each one (by_sorter) hands
 * its non-NULL values, with its ORDER BY keys, to an external sorter of its
 * own (sort_run.h), which spills sorted runs and merges them; at the end the
 * values are read back in order, once, and only the result is kept:
 * string_agg's string and list's elements grow as they come (cm_mem_need: a
 * result cannot spill), a quantile reads on to its position (the count is
 * known), mode counts runs of equal values and DISTINCT skips a value equal
 * to the one before; first and last with ORDER BY (NULLs included) take the
 * first row read back or the last.  Sorter layout: the argument, then the
 * ORDER BY keys.
 */

/* first and last with ORDER BY: the value of one row in that order, NULL
 * included; DISTINCT changes nothing (the first value is the first distinct one). */
static bool takes_one(ExAggFn fn)
{
    return fn == EX_AGG_FIRST || fn == EX_AGG_LAST;
}

/* The sorter of aggregate agg: its columns' types into types, its keys into
 * keys; the number of keys. */
static int sorter_layout(const ExAggSpec *agg, CmType *types, ExSortKey *keys)
{
    types[0] = agg->arg_type;
    int n = 0;
    for (int k = 0; k < agg->n_order; k++) {
        types[1 + k] = agg->order_types[k];
        keys[n] = agg->order[k];
        keys[n++].col = 1 + k;
    }
    bool in_order = (in_arrival_order(agg->fn) && !agg->distinct) || takes_one(agg->fn);
    if (!in_order) {
        /* equal values next to each other: DISTINCT, quantiles and mode */
        keys[n++] = (ExSortKey){.col = 0};
    }
    return n;
}

CmStatus ex_hash_agg_sorters_init(ExOp *op, const ExTask *task, AggLocal *l, CmErr *err)
{
    const HashAggSpec *s = op->spec;
    l->sorters = cm_calloc((size_t)s->n_aggs, sizeof(ExSorter *));
    l->sorted_n = cm_calloc((size_t)s->n_aggs, sizeof(int64_t));
    l->sorted_buf = cm_calloc((size_t)s->n_aggs, sizeof(char *));
    if (l->sorters == NULL || l->sorted_n == NULL || l->sorted_buf == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    for (int a = 0; a < s->n_aggs; a++) {
        if (!s->by_sorter[a]) {
            continue;
        }
        CmType types[1 + s->aggs[a].n_order];
        ExSortKey keys[2 + s->aggs[a].n_order];
        int n_keys = sorter_layout(&s->aggs[a], types, keys);
        l->sorters[a] = ex_sorter_new(op, task->query, "aggregate sort", 1 + s->aggs[a].n_order,
                                      types, n_keys, keys, -1, err);
        if (l->sorters[a] == NULL) {
            return err->code;
        }
    }
    return CM_OK;
}

/* Hands the rows of `in` whose argument is not NULL (first, last: every row)
 * to each sorter. */
CmStatus ex_hash_agg_sorter_add(const HashAggSpec *s, AggLocal *l, const CmBatch *in, CmErr *err)
{
    for (int a = 0; a < s->n_aggs; a++) {
        if (l->sorters == NULL || l->sorters[a] == NULL) {
            continue;
        }
        const ExAggSpec *agg = &s->aggs[a];
        CmVec cols[1 + agg->n_order];
        cols[0] = in->cols[agg->arg];
        for (int k = 0; k < agg->n_order; k++) {
            cols[1 + k] = in->cols[agg->order[k].col];
        }
        int n = 0;
        for (int i = 0; i < in->n_rows; i++) {
            uint32_t p = cm_batch_pos(in, i);
            if (takes_one(agg->fn) || keeps_nulls(agg) || !cm_vec_is_null(&cols[0], p)) {
                l->sorter_pos[n++] = p;
            }
        }
        CmBatch view = {
            .n_rows = n, .n_cols = 1 + agg->n_order, .cols = cols, .sel = l->sorter_pos};
        l->sorted_n[a] += n;
        if (n > 0 && ex_sorter_add(l->sorters[a], &view, err) != CM_OK) {
            return err->code;
        }
    }
    return CM_OK;
}

/* Makes (*buf, *cap) hold at least `need` bytes, reserving what it adds:
 * doubling while memory allows, then by an eighth, so that a result near the
 * limit is not refused for the half it would never use. */
static CmStatus sorted_grow(AggLocal *l, char **buf, int64_t *cap, int64_t need, bool reserve,
                            CmErr *err)
{
    if (need <= *cap) {
        return CM_OK;
    }
    int64_t to = *cap > 0 ? *cap : 256;
    while (to < need) {
        to *= 2;
    }
    if (reserve && !cm_mem_grow(&l->res, to - *cap)) {
        to = *cap + *cap / 8 > need ? *cap + *cap / 8 : need;
        if (cm_mem_need(&l->res, to - *cap, err) != CM_OK) {
            return err->code;
        }
    }
    char *nb = cm_realloc(*buf, (size_t)to);
    if (nb == NULL) {
        if (reserve) {
            cm_mem_shrink(&l->res, to - *cap);
        }
        return cm_err_set(err, CM_OOM, -1, "out of memory in an aggregate");
    }
    *buf = nb;
    *cap = to;
    return CM_OK;
}

CmStatus ex_hash_agg_keep_value(AggLocal *l, CmValue *dst, const CmValue *v, char **buf,
                                int64_t *cap, CmErr *err)
{
    *dst = *v;
    if (v->type.id == CM_T_VARCHAR) {
        if (sorted_grow(l, buf, cap, v->s.len + 1, false, err) != CM_OK) {
            return err->code;
        }
        memcpy(*buf, cm_str_data(&v->s), v->s.len);
        dst->s = cm_str_make(*buf, v->s.len);
    }
    return CM_OK;
}

/* *x = v with its string (if any, and not inline) copied into the table's
 * string arena, reserved. */
static CmStatus arena_value(AggLocal *l, CmValue *x, const CmValue *v, CmErr *err)
{
    *x = *v;
    if (v->type.id == CM_T_VARCHAR && !v->is_null && v->s.len > CM_STR_INLINE) {
        char *d = NULL;
        if (cm_mem_need(&l->res, v->s.len, err) != CM_OK ||
            (d = cm_arena_alloc(&l->strings, v->s.len)) == NULL) {
            return err->code != CM_OK ? err->code : cm_err_set(err, CM_OOM, -1, "out of memory");
        }
        l->str_reserved += v->s.len;
        memcpy(d, cm_str_data(&v->s), v->s.len);
        x->s = cm_str_make(d, v->s.len);
    }
    return CM_OK;
}

/* A value the result keeps (quantile_disc, mode). */
static CmStatus set_kept_value(AggLocal *l, AggState *st, const CmValue *v, CmErr *err)
{
    CmValue x;
    if (arena_value(l, &x, v, err) != CM_OK) {
        return err->code;
    }
    set_state_value(st, &x);
    return CM_OK;
}

/* Takes value v (not NULL) of aggregate agg, in its sorter's order, into r
 * (string_agg's string and list's elements into *buf, reserved). */
CmStatus ex_hash_agg_sorted_take(const ExAggSpec *agg, AggLocal *l, AggState *st, char **buf,
                                 SortedRead *r, const CmValue *v, CmErr *err)
{
    bool same = r->has_prev && ex_hash_agg_same_value(&r->prev, v);
    if (agg->distinct && same) {
        return CM_OK;
    }
    switch (agg->fn) {
    case EX_AGG_STRING_AGG: {
        const CmStr *sep = &agg->param.s;
        int64_t add = (r->n_taken > 0 ? sep->len : 0) + v->s.len;
        if (r->len + add > UINT32_MAX) {
            return cm_err_set(err, CM_LIMIT, -1, "result of string_agg is too long");
        }
        if (sorted_grow(l, buf, &r->cap, r->len + add, true, err) != CM_OK) {
            return err->code;
        }
        if (r->n_taken > 0) {
            memcpy(*buf + r->len, cm_str_data(sep), sep->len);
            r->len += sep->len;
        }
        memcpy(*buf + r->len, cm_str_data(&v->s), v->s.len);
        r->len += v->s.len;
        break;
    }
    case EX_AGG_LIST: {
        size_t w = cm_type_width(agg->arg_type);
        int64_t need = (int64_t)cm_list_bytes((uint32_t)(r->n_taken + 1), w, false);
        if (sorted_grow(l, buf, &r->cap, need, true, err) != CM_OK ||
            sorted_grow(l, &r->valid, &r->valid_cap, r->n_taken / 8 + 1, true, err) != CM_OK) {
            return err->code;
        }
        if (r->n_taken % 8 == 0) {
            r->valid[r->n_taken / 8] = 0;
        }
        if (v->is_null) {
            r->any_null = true;
            break;
        }
        r->valid[r->n_taken / 8] |= (char)(1 << (r->n_taken % 8));
        CmValue x;
        if (arena_value(l, &x, v, err) != CM_OK) {
            return err->code;
        }
        CmVec elems = {.type = agg->arg_type, .data = *buf};
        cm_vec_set_value(&elems, (uint32_t)r->n_taken, &x);
        break;
    }
    case EX_AGG_QUANTILE_CONT:
        if (r->n_taken == r->lo) {
            r->x = v->d;
        }
        if (r->n_taken == r->hi) {
            r->y = v->d;
        }
        break;
    case EX_AGG_QUANTILE_DISC:
        if (r->n_taken == r->lo && set_kept_value(l, st, v, err) != CM_OK) {
            return err->code;
        }
        break;
    default: /* MODE: runs of equal values; the first of the longest is the least */
        if (same) {
            r->run_n++;
            break;
        }
        if (r->has_prev && r->run_n > r->best_n &&
            ex_hash_agg_keep_value(l, &r->best, &r->prev, &r->best_buf, &r->best_cap, err) !=
                CM_OK) {
            return err->code;
        }
        r->best_n = r->has_prev && r->run_n > r->best_n ? r->run_n : r->best_n;
        r->run_n = 1;
        break;
    }
    r->n_taken++;
    if (agg->distinct || agg->fn == EX_AGG_MODE) {
        if (ex_hash_agg_keep_value(l, &r->prev, v, &r->prev_buf, &r->prev_cap, err) != CM_OK) {
            return err->code;
        }
        r->has_prev = true;
    }
    return CM_OK;
}

void ex_hash_agg_sorted_begin(const ExAggSpec *agg, int64_t total, SortedRead *r)
{
    SortedRead kept = *r;
    *r = (SortedRead){.prev_buf = kept.prev_buf,
                      .best_buf = kept.best_buf,
                      .prev_cap = kept.prev_cap,
                      .best_cap = kept.best_cap,
                      .valid = kept.valid,
                      .valid_cap = kept.valid_cap,
                      .cap = kept.cap,
                      .total = total};
    if (agg->fn == EX_AGG_QUANTILE_CONT) {
        /* (n - 1) q between its neighbours, as holistic_group */
        double rn = (double)(total - 1) * agg->param.d;
        r->lo = (int64_t)floor(rn);
        r->hi = (int64_t)ceil(rn);
    } else if (agg->fn == EX_AGG_QUANTILE_DISC) {
        r->lo = (int64_t)ceil((double)total * agg->param.d) - 1;
        r->lo = r->lo < 0 ? 0 : r->lo;
    }
}

CmStatus ex_hash_agg_sorted_end(const ExAggSpec *agg, AggLocal *l, AggState *st, char **buf,
                                SortedRead *r, CmErr *err)
{
    st->n = r->n_taken;
    if (r->n_taken == 0) {
        return CM_OK;
    }
    switch (agg->fn) {
    case EX_AGG_STRING_AGG:
        st->s = cm_str_make(*buf, (uint32_t)r->len);
        break;
    case EX_AGG_LIST: {
        uint32_t n = (uint32_t)r->n_taken;
        size_t w = cm_type_width(agg->arg_type);
        if (r->any_null) {
            /* the bitmap after the elements (bytes of bits: little-endian words) */
            size_t off = cm_list_bits_off(n, w), bytes = cm_list_bytes(n, w, true);
            if (sorted_grow(l, buf, &r->cap, (int64_t)bytes, true, err) != CM_OK) {
                return err->code;
            }
            memset(*buf + off, 0, bytes - off);
            memcpy(*buf + off, r->valid, (n + 7) / 8);
        }
        st->l = (CmList){.len = n, .has_nulls = r->any_null, .data = *buf};
        break;
    }
    case EX_AGG_QUANTILE_CONT:
        st->d = r->lo == r->hi ? r->x
                               : r->x + ((double)(r->total - 1) * agg->param.d - (double)r->lo) *
                                            (r->y - r->x);
        break;
    case EX_AGG_QUANTILE_DISC:
    case EX_AGG_FIRST:
    case EX_AGG_LAST:
        break;
    default:
        if (r->run_n > r->best_n) {
            r->best = r->prev;
        }
        return set_kept_value(l, st, &r->best, err);
    }
    return CM_OK;
}

/* Reads aggregate a's sorter back in order into the one group's state. */
CmStatus ex_hash_agg_finish_sorted(const HashAggSpec *s, AggLocal *l, int a, CmErr *err)
{
    const ExAggSpec *agg = &s->aggs[a];
    AggState *st = group_states(l, 0) + a;
    CmType types[1 + agg->n_order];
    ExSortKey keys[2 + agg->n_order];
    sorter_layout(agg, types, keys);
    CmBatch out = {0};
    SortedRead r = {0};
    int64_t total = l->sorted_n[a];
    ex_hash_agg_sorted_begin(agg, total, &r);
    if (ex_sorter_finish(l->sorters[a], err) != CM_OK ||
        cm_batch_init(&out, 1 + agg->n_order, types, err) != CM_OK) {
        goto done;
    }
    for (bool more = total > 0; more;) {
        if (ex_sorter_next(l->sorters[a], &out, &more, err) != CM_OK) {
            goto done;
        }
        if (takes_one(agg->fn)) {
            /* first: the first row of the first batch; last: the last of the last */
            bool is_first = agg->fn == EX_AGG_FIRST;
            if (out.n_rows > 0 && (is_first ? r.n_taken == 0 : !more)) {
                uint32_t p = cm_batch_pos(&out, is_first ? 0 : out.n_rows - 1);
                st->m2 = cm_vec_is_null(&out.cols[0], p);
                if (!st->m2 && ex_hash_agg_set_minmax(st, &out.cols[0], p, l, err) != CM_OK) {
                    goto done;
                }
            }
            r.n_taken += out.n_rows;
            continue;
        }
        for (int i = 0; i < out.n_rows; i++) {
            CmValue v;
            cm_vec_get_value(&out.cols[0], cm_batch_pos(&out, i), &v);
            if (ex_hash_agg_sorted_take(agg, l, st, &l->sorted_buf[a], &r, &v, err) != CM_OK) {
                goto done;
            }
        }
    }
    ex_hash_agg_sorted_end(agg, l, st, &l->sorted_buf[a], &r, err);
done:
    cm_batch_fini(&out);
    cm_free(r.prev_buf);
    cm_free(r.best_buf);
    cm_free(r.valid);
    cm_mem_shrink(&l->res, r.valid_cap);
    ex_sorter_free(l->sorters[a]);
    l->sorters[a] = NULL;
    return err->code;
}
