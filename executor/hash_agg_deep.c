/*
 * hash_agg_deep.c - the hash aggregate at its deepest spill level, where a
 * partition that still does not fit cannot be split by hash any more: its
 * rows are one group, or a few whose hashes share their top bits (types in
 * hash_agg_int.h).
 *
 * What outgrows memory there is the values a group keeps: its DISTINCT sets
 * and its holistic aggregates' values.  The groups themselves (keys, and the
 * states of the other aggregates) are few and small.  So at that level each
 * DISTINCT or holistic aggregate hands (keys, value) to an external sorter of
 * its own instead of a SeenSet; the sorter spills sorted runs (sort_run.h).
 * Before the table is emitted each sorter is read back in (keys, value)
 * order: every group's values come together and in order, so a holistic
 * aggregate streams through them as the ungrouped one does
 * (ex_hash_agg_sorted_take), and a DISTINCT one takes a value unequal to the
 * one before it, through the ordinary update.  Only results are kept
 * (string_agg's string, list's elements: cm_mem_need, a result cannot spill).
 * Everything belongs to one task's table (AggLocal).
 */
#include <string.h>

#include "common/alloc.h"
#include "executor/hash_agg_int.h"
#include "executor/sort_run.h"

/* Whether aggregate a's values go to a sorter at the deepest level. */
static bool deep_takes(const HashAggSpec *s, const ExAggSpec *agg)
{
    if (!keeps_values(agg)) {
        return false;
    }
    /* With an ORDER BY inside the call the input arrives in that order
     * (sorted_input); the sorter, stable, keeps it on equal keys. */
    bool order_ok = agg->n_order == 0 || s->sorted_input;
    switch (agg->fn) {
    case EX_AGG_STRING_AGG:
    case EX_AGG_LIST:
    case EX_AGG_MODE:
        return order_ok;
    /* two columns, or a row's order: they keep no values in a SeenSet here */
    case EX_AGG_ARG_MIN:
    case EX_AGG_ARG_MAX:
    case EX_AGG_APPROX_DISTINCT:
    case EX_AGG_FIRST:
    case EX_AGG_LAST:
    case EX_AGG_SCALAR:
    case EX_AGG_COUNT_STAR:
        return false;
    default:
        return order_ok;
    }
}

bool ex_hash_agg_deep_fits(const HashAggSpec *s)
{
    if (s->n_keys == 0) {
        return false;
    }
    int n = 0;
    for (int a = 0; a < s->n_aggs; a++) {
        if (keeps_values(&s->aggs[a]) && !deep_takes(s, &s->aggs[a])) {
            return false;
        }
        n += keeps_values(&s->aggs[a]);
    }
    return n > 0;
}

/* Sorter layout: the keys, then the value; sorted by the keys and, unless
 * string_agg or list keeps arrival order, by the value. */
static int deep_layout(const HashAggSpec *s, const ExAggSpec *agg, CmType *types, ExSortKey *keys)
{
    int n = 0;
    for (int k = 0; k < s->n_keys; k++) {
        types[k] = s->key_types[k];
        keys[n++] = (ExSortKey){.col = k};
    }
    types[s->n_keys] = agg->arg_type;
    if (agg->distinct || !in_arrival_order(agg->fn)) {
        keys[n++] = (ExSortKey){.col = s->n_keys};
    }
    return n;
}

CmStatus ex_hash_agg_deep_begin(ExOp *op, AggLocal *l, CmErr *err)
{
    const HashAggSpec *s = op->spec;
    if (l->deep_by == NULL &&
        (l->deep_by = cm_calloc((size_t)s->n_aggs, sizeof(ExSorter *))) == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory in hash aggregate");
    }
    for (int a = 0; a < s->n_aggs; a++) {
        if (!keeps_values(&s->aggs[a])) {
            continue;
        }
        CmType types[s->n_keys + 1];
        ExSortKey keys[s->n_keys + 1];
        int n_keys = deep_layout(s, &s->aggs[a], types, keys);
        l->deep_by[a] = ex_sorter_new(op, l->query, "aggregate sort", s->n_keys + 1, types, n_keys,
                                      keys, -1, err);
        if (l->deep_by[a] == NULL) {
            return err->code;
        }
    }
    l->deep = true;
    return CM_OK;
}

/* Hands aggregate a's SeenSet entries to its sorter as (keys, value) rows,
 * each counted value as many rows as it counts, a holistic group's count
 * of values into its state (as deep_add keeps it). */
static CmStatus adopt_one(const HashAggSpec *s, AggLocal *l, int a, CmErr *err)
{
    const ExAggSpec *agg = &s->aggs[a];
    SeenSet *set = &l->seen[a];
    if (set->n == 0) {
        return CM_OK;
    }
    /* a scratch index, outside the reservation the set's own slots hold */
    SeenEntry **e = cm_malloc(sizeof(SeenEntry *) * (size_t)set->n);
    CmType types[s->n_keys + 1];
    ExSortKey keys[s->n_keys + 1];
    deep_layout(s, agg, types, keys);
    CmBatch b = {0};
    if (e == NULL || cm_batch_init(&b, s->n_keys + 1, types, err) != CM_OK) {
        cm_free(e);
        return err->code != CM_OK ? err->code : cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    int64_t n = 0;
    for (uint64_t i = 0; i <= set->mask; i++) {
        if (set->slots[i].hash != 0) {
            e[n++] = &set->slots[i];
        }
    }
    bool arrival = in_arrival_order(agg->fn) && !agg->distinct;
    if (arrival) {
        qsort(e, (size_t)n, sizeof *e, ex_hash_agg_by_group_arrival);
    }
    bool counts = counts_values(agg), holistic = ex_agg_is_holistic(agg->fn);
    if (!holistic) {
        /* A DISTINCT aggregate's state already took the set's values: the
         * sorter will give them again, each once, so it starts over. */
        for (int64_t g = 0; g < l->n_groups; g++) {
            memset(group_states(l, g) + a, 0, sizeof(AggState));
        }
    }
    int row = 0;
    for (int64_t i = 0; i < n && err->code == CM_OK; i++) {
        int64_t times = counts ? (int64_t)e[i]->n : 1;
        group_states(l, e[i]->group)[a].n += holistic ? times : 0;
        for (int64_t k = 0; k < times; k++) {
            if (row == 0) {
                cm_batch_reset(&b);
            }
            ex_hash_agg_emit_keys(s, l, e[i]->group, &b, (uint32_t)row);
            cm_vec_set_value(&b.cols[s->n_keys], (uint32_t)row, &e[i]->value);
            if (++row == CM_BATCH_CAP || (i + 1 == n && k + 1 == times)) {
                b.n_rows = row;
                row = 0;
                if (ex_sorter_add(l->deep_by[a], &b, err) != CM_OK) {
                    break;
                }
            }
        }
    }
    cm_batch_fini(&b);
    cm_free(e);
    return err->code;
}

CmStatus ex_hash_agg_deep_adopt(const HashAggSpec *s, AggLocal *l, CmErr *err)
{
    if (ex_hash_agg_deep_begin(l->op, l, err) != CM_OK) {
        return err->code;
    }
    for (int a = 0; a < s->n_aggs; a++) {
        if (keeps_values(&s->aggs[a]) && adopt_one(s, l, a, err) != CM_OK) {
            return err->code;
        }
    }
    /* The sets go; their slots' reservation with them.  Their strings stay in
     * the table's arena until it is emptied. */
    for (int a = 0; a < s->n_aggs; a++) {
        SeenSet *set = &l->seen[a];
        if (set->slots != NULL) {
            cm_mem_shrink(&l->res, (int64_t)(set->mask + 1) * (int64_t)sizeof(SeenEntry));
            cm_free(set->slots);
        }
        set->slots = NULL;
        set->mask = 0;
        set->n = 0;
    }
    return CM_OK;
}

CmStatus ex_hash_agg_deep_add(const HashAggSpec *x, AggLocal *l, int a, const CmBatch *in,
                              CmErr *err)
{
    const CmVec *v = &in->cols[x->in_col[a]];
    bool holistic = ex_agg_is_holistic(x->aggs[a].fn);
    int n = 0;
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (has_value(x, a, in, p)) {
            l->deep_pos[n++] = p;
            /* a holistic group's count of values: where its quantile lies */
            l->row_states[i][a].n += holistic;
        }
    }
    if (n == 0) {
        return CM_OK;
    }
    CmVec cols[x->n_keys + 1];
    for (int k = 0; k < x->n_keys; k++) {
        cols[k] = in->cols[x->keys[k]];
    }
    cols[x->n_keys] = *v;
    CmBatch view = {.n_rows = n, .n_cols = x->n_keys + 1, .cols = cols, .sel = l->deep_pos};
    return ex_sorter_add(l->deep_by[a], &view, err);
}

/* A group's string_agg string or list array, built in deep_buf (r->cap bytes,
 * reserved): the buffer is handed over to the group, cut to its size (so the
 * result is never copied, nor its room doubled, which a result that is most
 * of the budget could not afford), and the next group starts a new one. */
static CmStatus keep_result(const ExAggSpec *agg, AggLocal *l, AggState *st, SortedRead *r,
                            CmErr *err)
{
    bool is_str = agg->fn == EX_AGG_STRING_AGG;
    if ((!is_str && agg->fn != EX_AGG_LIST) || st->n == 0 || l->deep_buf == NULL) {
        return CM_OK;
    }
    if (l->n_kept == l->cap_kept) {
        int cap = l->cap_kept ? 2 * l->cap_kept : 16;
        char **nk = cm_realloc(l->deep_kept, sizeof(char *) * (size_t)cap);
        if (nk == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory in an aggregate");
        }
        l->deep_kept = nk;
        l->cap_kept = cap;
    }
    int64_t bytes =
        is_str ? (int64_t)st->s.len
               : (int64_t)cm_list_bytes(st->l.len, cm_type_width(agg->arg_type), st->l.has_nulls);
    char *d = bytes < r->cap ? cm_realloc(l->deep_buf, (size_t)(bytes > 0 ? bytes : 1)) : NULL;
    if (d != NULL) {
        cm_mem_shrink(&l->res, r->cap - bytes);
    } else {
        d = l->deep_buf; /* not cut: it stays as large, and reserved */
    }
    l->deep_kept[l->n_kept++] = d;
    if (is_str) {
        st->s = cm_str_make(d, st->s.len);
    } else {
        st->l.data = d;
    }
    l->deep_buf = NULL;
    r->cap = 0;
    return CM_OK;
}

void ex_hash_agg_deep_release(AggLocal *l)
{
    for (int i = 0; i < l->n_kept; i++) {
        cm_free(l->deep_kept[i]);
    }
    l->n_kept = 0;
}

/* The value before, for DISTINCT: copied, since the sorter's batch it came
 * from is gone by the next one. */
typedef struct PrevValue {
    CmValue v;
    bool has;
    char *buf;
    int64_t cap;
} PrevValue;

static CmStatus prev_keep(AggLocal *l, PrevValue *pv, const CmValue *v, CmErr *err)
{
    pv->has = true;
    return ex_hash_agg_keep_value(l, &pv->v, v, &pv->buf, &pv->cap, err);
}

/* The DISTINCT values of one batch of the sorter, each the first of its group
 * or unequal to the one before, through the ordinary update (replaying: no
 * SeenSet); l->row_group holds each row's group. */
static CmStatus replay_distinct(const HashAggSpec *s, AggLocal *l, int a, const CmBatch *out,
                                PrevValue *pv, int64_t *cur, CmErr *err)
{
    int n = 0;
    const CmVec *vals = &out->cols[s->n_keys];
    for (int i = 0; i < out->n_rows; i++) {
        uint32_t p = cm_batch_pos(out, i);
        CmValue v;
        cm_vec_get_value(vals, p, &v);
        if ((int64_t)l->row_group[i] == *cur && pv->has && ex_hash_agg_same_value(&pv->v, &v)) {
            continue;
        }
        *cur = l->row_group[i];
        if (prev_keep(l, pv, &v, err) != CM_OK) {
            return err->code;
        }
        l->row_group[n] = l->row_group[i];
        l->deep_pos[n++] = p;
    }
    /* the update reads the value at the aggregate's input column */
    int width = s->in_col[a] + 1;
    CmVec cols[width];
    memset(cols, 0, sizeof cols);
    cols[s->in_col[a]] = *vals;
    CmBatch view = {.n_rows = n, .n_cols = width, .cols = cols, .sel = l->deep_pos};
    locate_states(l, n);
    l->replaying = true;
    CmStatus rc = n > 0 ? ex_hash_agg_update_one(s, l, a, &view, err) : CM_OK;
    l->replaying = false;
    return rc;
}

/* The groups of a holistic aggregate, one after the other as the batch gives
 * them; r is the open group's (*cur), ended when the next one starts. */
static CmStatus stream_holistic(const HashAggSpec *s, AggLocal *l, int a, const CmBatch *out,
                                SortedRead *r, int64_t *cur, CmErr *err)
{
    const ExAggSpec *agg = &s->aggs[a];
    for (int i = 0; i < out->n_rows; i++) {
        int64_t g = l->row_group[i];
        if (g != *cur) {
            if (*cur >= 0) {
                AggState *st = group_states(l, *cur) + a;
                if (ex_hash_agg_sorted_end(agg, l, st, &l->deep_buf, r, err) != CM_OK ||
                    keep_result(agg, l, st, r, err) != CM_OK) {
                    return err->code;
                }
            }
            *cur = g;
            ex_hash_agg_sorted_begin(agg, group_states(l, g)[a].n, r);
        }
        CmValue v;
        cm_vec_get_value(&out->cols[s->n_keys], cm_batch_pos(out, i), &v);
        if (ex_hash_agg_sorted_take(agg, l, group_states(l, g) + a, &l->deep_buf, r, &v, err) !=
            CM_OK) {
            return err->code;
        }
    }
    return CM_OK;
}

/* A DISTINCT quantile's position depends on the count of distinct values,
 * not known until they are read: a first pass over the sorter counts each
 * group's (into its state's n, which deep_add made the count of all values)
 * and writes them, once each, still in order, to a spill file, which the
 * second pass streams.  *file is the file, rewound; the caller frees it. */
static CmStatus dedup_pass(const HashAggSpec *s, AggLocal *l, int a, CmBatch *out, ShSpill **file,
                           CmErr *err)
{
    PrevValue pv = {0};
    int64_t cur = -1;
    if ((*file = sh_spill_new(l->temp_dir, l->max_temp, err)) == NULL) {
        return err->code;
    }
    for (bool more = true; more;) {
        if (ex_sorter_next(l->deep_by[a], out, &more, err) != CM_OK ||
            ex_hash_agg_find_groups(s->merge, l, out, err) != CM_OK) {
            break;
        }
        int n = 0;
        for (int i = 0; i < out->n_rows; i++) {
            int64_t g = l->row_group[i];
            uint32_t p = cm_batch_pos(out, i);
            CmValue v;
            cm_vec_get_value(&out->cols[s->n_keys], p, &v);
            if (g == cur && pv.has && ex_hash_agg_same_value(&pv.v, &v)) {
                continue;
            }
            if (g != cur && g != (int64_t)NO_GROUP) {
                group_states(l, g)[a].n = 0;
            }
            cur = g;
            if (g != (int64_t)NO_GROUP) {
                group_states(l, g)[a].n++;
            }
            if (prev_keep(l, &pv, &v, err) != CM_OK) {
                break;
            }
            l->deep_pos[n++] = p;
        }
        CmBatch view = *out;
        view.sel = l->deep_pos;
        view.n_rows = n;
        if (err->code != CM_OK || (n > 0 && sh_spill_append(*file, &view, err) != CM_OK)) {
            break;
        }
    }
    cm_free(pv.buf);
    return err->code != CM_OK ? err->code : sh_spill_rewind(*file, err);
}

/* The next batch of aggregate a's values in order: from its sorter, or from
 * the file of a DISTINCT quantile's first pass. */
static CmStatus next_values(AggLocal *l, int a, ShSpill *file, CmBatch *out, bool *more, CmErr *err)
{
    if (file == NULL) {
        return ex_sorter_next(l->deep_by[a], out, more, err);
    }
    bool eof = false;
    CmStatus rc = sh_spill_read(file, out, &eof, err);
    *more = !eof;
    if (eof) {
        out->n_rows = 0;
    }
    return rc;
}

/* Reads aggregate a's sorter back into its groups' states. */
static CmStatus finish_one(const HashAggSpec *s, AggLocal *l, int a, CmErr *err)
{
    const ExAggSpec *agg = &s->aggs[a];
    bool holistic = ex_agg_is_holistic(agg->fn);
    CmType types[s->n_keys + 1];
    ExSortKey keys[s->n_keys + 1];
    deep_layout(s, agg, types, keys);
    CmBatch out = {0};
    SortedRead r = {.cap = l->deep_cap};
    PrevValue pv = {0};
    int64_t cur = -1;
    ShSpill *file = NULL;
    bool two_pass =
        agg->distinct && (agg->fn == EX_AGG_QUANTILE_CONT || agg->fn == EX_AGG_QUANTILE_DISC);
    if (ex_sorter_finish(l->deep_by[a], err) != CM_OK ||
        cm_batch_init(&out, s->n_keys + 1, types, err) != CM_OK ||
        (two_pass && dedup_pass(s, l, a, &out, &file, err) != CM_OK)) {
        goto done;
    }
    for (bool more = true; more;) {
        if (next_values(l, a, file, &out, &more, err) != CM_OK ||
            ex_hash_agg_find_groups(s->merge, l, &out, err) != CM_OK) {
            goto done;
        }
        for (int i = 0; i < out.n_rows; i++) {
            if (l->row_group[i] == NO_GROUP) {
                cm_err_set(err, CM_INTERNAL, -1, "hash aggregate: a value without its group");
                goto done;
            }
        }
        if ((holistic ? stream_holistic(s, l, a, &out, &r, &cur, err)
                      : replay_distinct(s, l, a, &out, &pv, &cur, err)) != CM_OK) {
            goto done;
        }
    }
    if (holistic && cur >= 0) {
        AggState *st = group_states(l, cur) + a;
        if (ex_hash_agg_sorted_end(agg, l, st, &l->deep_buf, &r, err) == CM_OK) {
            keep_result(agg, l, st, &r, err);
        }
    }
done:
    sh_spill_free(file);
    l->deep_cap = r.cap; /* what sorted_take grew deep_buf to (reserved) */
    cm_batch_fini(&out);
    cm_free(r.prev_buf);
    cm_free(r.best_buf);
    cm_free(r.valid);
    cm_mem_shrink(&l->res, r.valid_cap);
    cm_free(pv.buf);
    return err->code;
}

CmStatus ex_hash_agg_deep_finish(const HashAggSpec *s, AggLocal *l, CmErr *err)
{
    for (int a = 0; a < s->n_aggs && err->code == CM_OK; a++) {
        if (l->deep_by[a] != NULL) {
            finish_one(s, l, a, err);
            ex_sorter_free(l->deep_by[a]);
            l->deep_by[a] = NULL;
        }
    }
    cm_free(l->deep_buf);
    l->deep_buf = NULL;
    cm_mem_shrink(&l->res, l->deep_cap);
    l->deep_cap = 0;
    l->deep = false;
    return err->code;
}

void ex_hash_agg_deep_free(const HashAggSpec *s, AggLocal *l)
{
    for (int a = 0; l->deep_by != NULL && a < s->n_aggs; a++) {
        ex_sorter_free(l->deep_by[a]);
    }
    cm_free(l->deep_by);
    l->deep_by = NULL;
    cm_free(l->deep_buf);
    l->deep_buf = NULL;
    ex_hash_agg_deep_release(l);
    cm_free(l->deep_kept);
    l->deep_kept = NULL;
}
