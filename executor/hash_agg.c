/*
 * hash_agg.c - hash aggregation in three modes: SINGLE (rows in, values out),
 * PARTIAL (rows in, partial states out, before a shuffle) and FINAL (partial
 * states in, values out, after it).
 *
 * Design: each task owns one table (partial aggregation is per task, and after
 * a hash exchange a partition's keys meet in one task, so no merging across
 * tasks is ever needed).  Groups are numbered densely.  Integer-like keys and
 * strings declared at most 7 bytes that fit 24 bytes are packed per group
 * into words (a string as its bytes, or one longer than declared as its id
 * among the table's longer strings, StrIntern), followed by the group's
 * n_aggs AggStates in one record; other keys are stored column by column in
 * growable arrays, the states and hashes in arrays of their own.  Records and
 * states live in chunks that double (GroupChunks), so growing never moves
 * them.  The index is open addressing with linear probing over (group + 1,
 * lower hash bits) slots, at most half full; the home slot comes from those
 * bits, so a rehash streams through the old slots.  A batch is processed
 * in two passes: find or insert the group of every row, then update each
 * aggregate column by column.  With no keys there is one group, and SINGLE or
 * FINAL emit one row even for empty input (count 0, sum NULL).
 *
 * Memory: the table reserves (common/mem.h) before each batch whatever that
 * batch could make it grow by (arrays and slots per doubling, DISTINCT sets,
 * the string arena after the fact), so the row loops never grow anything.
 * When a reservation is refused, PARTIAL emits its groups as partial states
 * and starts over (the FINAL side merges them).  SINGLE and FINAL spill
 * (docs/architecture.md, "Aggregate spilling"): the table is written out as
 * state rows (keys, partial states, and one row per DISTINCT (group, value))
 * into SPILL_FANOUT partition files chosen by the key hash, shrinks, and
 * starts over; a batch that even the empty table cannot take goes to the
 * partitions as raw input rows.  Invariant: all of a group's rows and states
 * are in the table or in its one partition of the current level.  At flush a
 * table that spilled writes out the rest too; each partition is then
 * aggregated alone (state rows merged, raw rows added), spilling on the next
 * hash bits when it still does not fit, down to SPILL_MAX_LEVELS.
 *
 * Rows that only find their groups (find_col, for INTERSECT and EXCEPT) go
 * after the batch's other rows and start none: a row without a group is
 * dropped (its group would be dropped above) unless the table is spilling,
 * when it goes to its partition like any other.  The planner promises that
 * a group's starting rows come first in each task; a partition is read back
 * in arrival order (state rows, then raw rows), which keeps that promise.
 *
 * Files: this one holds the group table, the updates, the output, push and
 * flush, and the lifecycle; hash_agg_fast.c the direct index and the typed
 * update loops; hash_agg_spill.c spilling and the partitions' aggregation at
 * flush; hash_agg_holistic.c the results of holistic aggregates and the
 * sorters of ungrouped and ordered ones.  The types they share are in
 * hash_agg_int.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/datetime.h"
#include "common/hash.h"
#include "common/value.h"
#include "executor/hash_agg_int.h"
#include "executor/hashing.h"
#include "executor/ops.h"
#include "executor/sort_run.h"
#include "shuffle/spill.h"
#include "storage/stats.h"

/* ---- types ------------------------------------------------------------------ */

bool ex_agg_is_holistic(ExAggFn fn)
{
    return fn == EX_AGG_STRING_AGG || fn == EX_AGG_QUANTILE_CONT || fn == EX_AGG_QUANTILE_DISC ||
           fn == EX_AGG_MODE || fn == EX_AGG_LIST;
}

/* sum and avg of an exact type accumulate in 128 bits and sum is
 * DECIMAL(38, scale), as DuckDB's sum is HUGEINT or DECIMAL(38,s); the
 * partial state has that type too. */
static CmType sum_type(CmType arg)
{
    if (arg.id == CM_T_DOUBLE) {
        return arg;
    }
    return cm_type_decimal(38, cm_type_is_decimal(arg) ? arg.scale : 0);
}

int ex_agg_partial_types(const ExAggSpec *agg, CmType *out)
{
    switch (agg->fn) {
    case EX_AGG_COUNT_STAR:
    case EX_AGG_COUNT:
    case EX_AGG_SUM_COUNT:
        out[0] = cm_type_make(CM_T_INT64);
        return 1;
    case EX_AGG_SUM:
        out[0] = sum_type(agg->arg_type);
        return 1;
    case EX_AGG_MIN:
    case EX_AGG_MAX:
    case EX_AGG_BIT_AND:
    case EX_AGG_BIT_OR:
    case EX_AGG_BIT_XOR:
    case EX_AGG_SCALAR:
    case EX_AGG_STRING_AGG:
    case EX_AGG_QUANTILE_CONT:
    case EX_AGG_QUANTILE_DISC:
    case EX_AGG_MODE:
    case EX_AGG_LIST:
        out[0] = agg->arg_type;
        return 1; /* holistic: never partial */
    case EX_AGG_AVG:
        out[0] = sum_type(agg->arg_type);
        out[1] = cm_type_make(CM_T_INT64);
        return 2;
    case EX_AGG_FIRST:
    case EX_AGG_LAST:
        out[0] = agg->arg_type;
        out[1] = cm_type_make(CM_T_INT64);
        return 2;
    case EX_AGG_ARG_MIN:
    case EX_AGG_ARG_MAX:
        out[0] = agg->arg_type;
        out[1] = agg->param.type;
        return 2;
    case EX_AGG_APPROX_DISTINCT:
        out[0] = cm_type_varchar(-1, false);
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

/* Gives c the chunks of cap groups (INITIAL_GROUPS times a power of two),
 * freeing or allocating whole chunks. */
static CmStatus chunks_resize(GroupChunks *c, int64_t cap, CmErr *err)
{
    int want = 1;
    for (int64_t have = INITIAL_GROUPS; have < cap; have *= 2) {
        want++;
    }
    CM_ASSERT(want <= MAX_CHUNKS && ((int64_t)INITIAL_GROUPS << (want - 1)) == cap);
    while (c->n_chunks > want) {
        cm_free(c->chunk[--c->n_chunks]);
    }
    while (c->n_chunks < want) {
        int k = c->n_chunks;
        int64_t n = k == 0 ? INITIAL_GROUPS : (int64_t)INITIAL_GROUPS << (k - 1);
        char *d = cm_malloc((size_t)n * c->width);
        if (d == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory in hash aggregate");
        }
        c->chunk[c->n_chunks++] = d;
    }
    return CM_OK;
}

static void chunks_free(GroupChunks *c)
{
    while (c->n_chunks > 0) {
        cm_free(c->chunk[--c->n_chunks]);
    }
}

/* Bytes per group of the key, state and hash arrays. */
static int64_t group_bytes(const HashAggSpec *s)
{
    int64_t n = (int64_t)sizeof(AggState) * (s->n_aggs ? s->n_aggs : 1);
    if (s->pack_words > 0) {
        return n + s->pack_words * (int64_t)sizeof(uint64_t); /* the hash comes from the keys */
    }
    n += (int64_t)sizeof(uint64_t);
    for (int k = 0; k < s->n_keys; k++) {
        n += (int64_t)cm_type_width(s->key_types[k]) + 1;
    }
    return n;
}

/* Grows the group arrays to cap groups (reserved by the caller). */
static CmStatus grow_groups(const HashAggSpec *s, AggLocal *l, int64_t cap, CmErr *err)
{
    if (s->pack_words > 0 && chunks_resize(&l->packed, cap, err) != CM_OK) {
        return err->code;
    }
    for (int k = 0; k < s->n_keys && s->pack_words == 0; k++) {
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
    if ((s->pack_words == 0 && chunks_resize(&l->states, cap, err) != CM_OK) ||
        (s->pack_words == 0 && chunks_resize(&l->hashes, cap, err) != CM_OK)) {
        return err->code;
    }
    l->cap_groups = cap;
    return CM_OK;
}

/* Rebuilds the index over n_slots slots (a power of two, reserved by the caller). */
static CmStatus rehash(AggLocal *l, uint64_t n_slots, CmErr *err)
{
    Slot *slots = cm_calloc((size_t)n_slots, sizeof(Slot));
    if (slots == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory in hash aggregate");
    }
    /* Entries of live slots move over; after table_shrink (no groups) the old
     * slots are stale. */
    for (uint64_t j = 0; l->n_groups > 0 && j <= l->mask; j++) {
        Slot e = l->slots[j];
        if (e.group == 0) {
            continue;
        }
        uint64_t i = slot_home(e.tag, n_slots - 1);
        while (slots[i].group != 0) {
            i = (i + 1) & (n_slots - 1);
        }
        slots[i] = e;
    }
    cm_free(l->slots);
    l->slots = slots;
    l->mask = n_slots - 1;
    return CM_OK;
}

/* What the table holds from the start: INITIAL_GROUPS groups and their slots. */
static int64_t initial_bytes(const HashAggSpec *s)
{
    return INITIAL_GROUPS * (group_bytes(s) + 2 * (int64_t)sizeof(Slot));
}

/* Rebuilds a DISTINCT set over n_slots slots (reserved by the caller). */
static CmStatus seen_grow(SeenSet *set, uint64_t n_slots, CmErr *err)
{
    SeenEntry *slots = cm_calloc((size_t)n_slots, sizeof(SeenEntry));
    if (slots == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory in a DISTINCT aggregate");
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
    return CM_OK;
}

/* Empties the table and gives back all but its initial memory, so that
 * other consumers get their share. */
CmStatus ex_hash_agg_table_shrink(const HashAggSpec *s, AggLocal *l, CmErr *err)
{
    return ex_hash_agg_table_trim(s, l, 0, err);
}

CmStatus ex_hash_agg_table_trim(const HashAggSpec *s, AggLocal *l, int64_t want, CmErr *err)
{
    int64_t cap = INITIAL_GROUPS;
    while (cap < want && cap < l->cap_groups) {
        cap *= 2;
    }
    uint64_t n_slots = 2 * INITIAL_GROUPS;
    while ((uint64_t)(want + 1) * 2 > n_slots && n_slots < l->mask + 1) {
        n_slots *= 2;
    }
    ex_hash_agg_direct_drop(l);
    l->n_groups = 0;
    l->next_out = 0;
    if (cap != l->cap_groups && grow_groups(s, l, cap, err) != CM_OK) {
        return err->code;
    }
    if (n_slots == l->mask + 1) {
        memset(l->slots, 0, sizeof(Slot) * (size_t)n_slots);
    } else if (rehash(l, n_slots, err) != CM_OK) {
        return err->code;
    }
    for (int a = 0; a < s->n_aggs; a++) {
        cm_free(l->seen[a].slots);
        l->seen[a].slots = NULL;
        l->seen[a].mask = 0;
        l->seen[a].n = 0;
    }
    cm_arena_reset(&l->strings);
    memset(&l->interned, 0, sizeof l->interned);
    ex_hash_agg_deep_release(l);
    l->str_reserved = 0;
    int64_t keep = initial_bytes(s) + (cap - INITIAL_GROUPS) * group_bytes(s) +
                   (int64_t)(n_slots - 2 * INITIAL_GROUPS) * (int64_t)sizeof(Slot);
    cm_mem_shrink(&l->res, l->res.held - keep);
    return CM_OK;
}

/* Reserves bytes for the table: through cm_mem_need when it must not spill
 * (then a refusal is CM_OOM in err), else cm_mem_grow.  False when refused. */
static bool reserve(AggLocal *l, int64_t bytes, bool must, CmErr *err)
{
    if (must) {
        return cm_mem_need(&l->res, bytes, err) == CM_OK;
    }
    return l->res.held + bytes <= l->max_bytes && cm_mem_grow(&l->res, bytes);
}

/*
 * Makes room for n_groups more groups and n_values more values in each
 * DISTINCT set, growing per doubling, and covers what the string arena took
 * since the last call (doubling its reservation).  False when a reservation is refused (err unset:
 * the caller spills; what was granted stays) or on an error (err set).
 * Growing before the batch keeps the row loops free of checks.
 */
bool ex_hash_agg_make_room(const HashAggSpec *s, AggLocal *l, int64_t n_groups, int64_t n_values,
                           bool must, CmErr *err)
{
    /* All or nothing: one reservation covers every structure that grows. */
    int64_t bytes = 0;
    int64_t str_more = 0;
    int64_t str_used = (int64_t)l->strings.n_bytes;
    if (str_used > l->str_reserved) {
        str_more = str_used - l->str_reserved;
        str_more = str_more > l->str_reserved ? str_more : l->str_reserved;
        str_more = str_more > 64 * 1024 ? str_more : 64 * 1024;
        bytes += str_more;
    }
    int64_t need = l->n_groups + n_groups;
    int64_t cap = l->cap_groups;
    while (cap < need) {
        cap *= 2;
    }
    bytes += (cap - l->cap_groups) * group_bytes(s);
    uint64_t n_slots = l->mask + 1;
    while ((uint64_t)(need + 1) * 2 > n_slots) {
        n_slots *= 2;
    }
    bytes += (int64_t)(n_slots - l->mask - 1) * (int64_t)sizeof(Slot);
    uint64_t seen_slots[s->n_aggs + 1];
    for (int a = 0; a < s->n_aggs; a++) {
        SeenSet *set = &l->seen[a];
        uint64_t had = set->slots != NULL ? set->mask + 1 : 0;
        seen_slots[a] = had;
        if (!keeps_values(&s->aggs[a]) || n_values == 0 || (s->by_sorter && s->by_sorter[a]) ||
            l->deep || (uint64_t)(set->n + n_values + 1) * 2 <= had) {
            continue;
        }
        seen_slots[a] = had ? had : 1024;
        while ((uint64_t)(set->n + n_values + 1) * 2 > seen_slots[a]) {
            seen_slots[a] *= 2;
        }
        bytes += (int64_t)(seen_slots[a] - had) * (int64_t)sizeof(SeenEntry);
    }
    if (bytes == 0) {
        return true;
    }
    if (!reserve(l, bytes, must, err)) {
        return false;
    }
    l->str_reserved += str_more;
    if (cap > l->cap_groups && grow_groups(s, l, cap, err) != CM_OK) {
        return false;
    }
    if (n_slots > l->mask + 1 && rehash(l, n_slots, err) != CM_OK) {
        return false;
    }
    for (int a = 0; a < s->n_aggs; a++) {
        uint64_t had = l->seen[a].slots != NULL ? l->seen[a].mask + 1 : 0;
        if (seen_slots[a] > had && seen_grow(&l->seen[a], seen_slots[a], err) != CM_OK) {
            return false;
        }
    }
    return true;
}

/* Empties the table, keeping its arrays (and what they reserve) for reuse. */
void ex_hash_agg_table_reset(const HashAggSpec *s, AggLocal *l)
{
    ex_hash_agg_direct_clear(l);
    l->n_groups = 0;
    l->next_out = 0;
    memset(l->slots, 0, sizeof(Slot) * (size_t)(l->mask + 1));
    for (int a = 0; a < s->n_aggs; a++) {
        if (l->seen[a].slots != NULL) {
            memset(l->seen[a].slots, 0, sizeof(SeenEntry) * (size_t)(l->seen[a].mask + 1));
        }
        l->seen[a].n = 0;
    }
    cm_arena_reset(&l->strings);
    memset(&l->interned, 0, sizeof l->interned);
    ex_hash_agg_deep_release(l);
}

static inline bool is_str_key(const HashAggSpec *s, int k)
{
    return s->pack_is_str != NULL && s->pack_is_str[k];
}

/* Packs key k, the value at position p of v, into key (zeroed before); a
 * longer string is added to the table's strings when may_add (err set on
 * OOM), else only looked up. */
static void pack_row_key(const HashAggSpec *s, AggLocal *l, const CmVec *v, int k, uint32_t p,
                         uint64_t *key, bool may_add, CmErr *err)
{
    char *b = (char *)key;
    if (cm_vec_is_null(v, p)) {
        b[s->pack_null_off + k / 8] |= (char)(1 << (k % 8));
    } else if (is_str_key(s, k)) {
        uint64_t w = pack_str_word(l, &((const CmStr *)v->data)[p], may_add, err);
        memcpy(b + s->pack_off[k], &w, sizeof w);
    } else {
        size_t w = cm_type_width(s->key_types[k]);
        memcpy(b + s->pack_off[k], (const char *)v->data + w * p, w);
    }
}

/* Packs the keys of the row at position p of `in` into out (pack_words
 * words), as pack_row_key. */
static void pack_row(const HashAggSpec *s, AggLocal *l, const CmBatch *in, uint32_t p,
                     uint64_t *out, bool may_add, CmErr *err)
{
    memset(out, 0, sizeof(uint64_t) * PACK_MAX_WORDS);
    for (int k = 0; k < s->n_keys; k++) {
        const CmVec *v = &in->cols[s->keys[k]];
        /* as ex_hash_keys reads it */
        pack_row_key(s, l, v, k, v->kind == CM_VEC_CONST ? 0 : p, out, may_add, err);
    }
}

/* Packs string key k of every active row of `in` into l->row_key (NULLs
 * after), as pack_row_key. */
static void pack_str_column(const HashAggSpec *s, AggLocal *l, const CmBatch *in, int k,
                            bool may_add, CmErr *err)
{
    const CmVec *v = &in->cols[s->keys[k]];
    const CmStr *x = v->data;
    int off = s->pack_off[k];
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        /* a NULL's CmStr may be anything: not looked at */
        uint64_t w =
            v->validity != NULL && cm_vec_is_null(v, p) ? 0 : pack_str_word(l, &x[p], may_add, err);
        memcpy((char *)l->row_key[i] + off, &w, sizeof w);
    }
}

/* Packs the keys of every active row of `in` into l->row_key, a column at a
 * time, as pack_row_key; err set only on OOM (may_add). */
static void pack_batch(const HashAggSpec *s, AggLocal *l, const CmBatch *in, bool may_add,
                       CmErr *err)
{
    int n = in->n_rows;
    memset(l->row_key, 0, sizeof(l->row_key[0]) * (size_t)n);
    for (int k = 0; k < s->n_keys; k++) {
        const CmVec *v = &in->cols[s->keys[k]];
        int off = s->pack_off[k];
        if (v->kind == CM_VEC_CONST) {
            for (int i = 0; i < n; i++) {
                pack_row_key(s, l, v, k, 0, l->row_key[i], may_add, err);
            }
            continue;
        }
        switch (is_str_key(s, k) ? 0 : s->pack_width[k]) {
        case 0:
            pack_str_column(s, l, in, k, may_add, err);
            break;
        case 1:
            for (int i = 0; i < n; i++) {
                ((uint8_t *)l->row_key[i])[off] = ((const uint8_t *)v->data)[cm_batch_pos(in, i)];
            }
            break;
        case 4:
            for (int i = 0; i < n; i++) {
                int32_t x = ((const int32_t *)v->data)[cm_batch_pos(in, i)];
                memcpy((char *)l->row_key[i] + off, &x, 4);
            }
            break;
        default:
            for (int i = 0; i < n; i++) {
                int64_t x = ((const int64_t *)v->data)[cm_batch_pos(in, i)];
                memcpy((char *)l->row_key[i] + off, &x, 8);
            }
            break;
        }
        if (v->validity == NULL) {
            continue;
        }
        /* NULL keys: zero bytes and the null bit, so that all NULLs compare equal. */
        size_t w = (size_t)s->pack_width[k];
        for (int i = 0; i < n; i++) {
            if (cm_vec_is_null(v, cm_batch_pos(in, i))) {
                char *b = (char *)l->row_key[i];
                memset(b + off, 0, w);
                b[s->pack_null_off + k / 8] |= (char)(1 << (k % 8));
            }
        }
    }
}

static bool packed_eq(const uint64_t *x, const uint64_t *y, int n_words)
{
    bool eq = x[0] == y[0];
    for (int j = 1; j < n_words; j++) {
        eq = eq && x[j] == y[j];
    }
    return eq;
}

bool ex_hash_agg_key_matches(const HashAggSpec *s, AggLocal *l, int64_t g, const CmBatch *in,
                             uint32_t p)
{
    if (s->pack_words > 0) {
        uint64_t row[PACK_MAX_WORDS];
        pack_row(s, l, in, p, row, false, NULL);
        return packed_eq(group_key(l, g), row, s->pack_words);
    }
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
        } else if (s->key_types[k].id == CM_T_LIST) {
            CmVec one = {.type = s->key_types[k], .data = (void *)stored};
            if (!ex_key_equal(&one, 0, v, p)) {
                return false;
            }
        } else if (s->key_types[k].id == CM_T_DOUBLE) {
            if (cm_f64_cmp(*(const double *)stored, ((const double *)v->data)[p]) != 0) {
                return false; /* NaNs group together, -0 with 0 */
            }
        } else if (s->key_types[k].id == CM_T_INTERVAL) { /* '1 month' = '30 days' */
            if (cm_interval_cmp((const CmInterval *)stored, &((const CmInterval *)v->data)[p])) {
                return false;
            }
        } else if (memcmp(stored, (const char *)v->data + w * p, w) != 0) {
            return false;
        }
    }
    return true;
}

static CmStatus new_group(const HashAggSpec *s, AggLocal *l, const CmBatch *in, uint32_t p,
                          uint64_t h, int64_t *g_out, CmErr *err)
{
    CM_ASSERT(l->n_groups < l->cap_groups); /* make_room grew the arrays */
    int64_t g = l->n_groups++;
    if (s->pack_words > 0) {
        uint64_t row[PACK_MAX_WORDS];
        pack_row(s, l, in, p, row, true, err);
        memcpy(group_key(l, g), row, sizeof(uint64_t) * (size_t)s->pack_words);
    }
    for (int k = 0; k < s->n_keys && s->pack_words == 0; k++) {
        const CmVec *v = &in->cols[s->keys[k]];
        size_t w = cm_type_width(s->key_types[k]);
        l->keys[k].nulls[g] = cm_vec_is_null(v, p);
        char *dst = (char *)l->keys[k].data + w * (size_t)g;
        if (s->key_types[k].id == CM_T_VARCHAR) {
            CmStr str = ((const CmStr *)v->data)[p];
            *(CmStr *)dst = l->keys[k].nulls[g] ? str : cm_str_copy(&l->strings, &str, err);
        } else if (s->key_types[k].id == CM_T_LIST) {
            CmList list = ((const CmList *)v->data)[p];
            *(CmList *)dst = l->keys[k].nulls[g] ? list
                                                 : cm_list_copy(&l->strings, &list,
                                                                cm_type_elem(s->key_types[k]), err);
        } else {
            memcpy(dst, (const char *)v->data + w * p, w);
        }
    }
    init_states(s, group_states(l, g));
    if (s->pack_words == 0) {
        *group_hash(l, g) = h;
    }
    *g_out = g;
    return err->code;
}

/* Key k's part of packed_hash for each of the n packed keys in l->row_key. */
static void packed_key_hashes(const HashAggSpec *s, const AggLocal *l, int k, int n, uint64_t *hv)
{
    int off = s->pack_off[k];
    size_t w = (size_t)s->pack_width[k];
    if (is_str_key(s, k)) {
        for (int i = 0; i < n; i++) {
            uint64_t x;
            memcpy(&x, (const char *)l->row_key[i] + off, sizeof x);
            hv[i] = str_word_hash(l, x);
        }
    } else if (w == 4) {
        for (int i = 0; i < n; i++) {
            int32_t x;
            memcpy(&x, (const char *)l->row_key[i] + off, sizeof x);
            hv[i] = cm_hash_u64((uint64_t)(int64_t)x);
        }
    } else {
        for (int i = 0; i < n; i++) {
            uint64_t x = 0; /* a BOOLEAN's byte, zero-extended */
            memcpy(&x, (const char *)l->row_key[i] + off, w);
            hv[i] = cm_hash_u64(x);
        }
    }
    for (int i = 0; i < n; i++) {
        if (((const char *)l->row_key[i])[s->pack_null_off + k / 8] & (1 << (k % 8))) {
            hv[i] = CM_HASH_NULL;
        }
    }
}

/* packed_hash of the n packed keys in l->row_key into l->row_hash, bit for
 * bit, a key at a time: the per-key tests leave the row loops. */
static void packed_hash_rows(const HashAggSpec *s, AggLocal *l, int n)
{
    uint64_t hv[CM_BATCH_CAP];
    for (int k = 0; k < s->n_keys; k++) {
        packed_key_hashes(s, l, k, n, k == 0 ? l->row_hash : hv);
        for (int i = 0; i < n && k > 0; i++) {
            l->row_hash[i] = cm_hash_combine(l->row_hash[i], hv[i]);
        }
    }
}

/* The hashes of the active rows of `in` into l->row_hash, and for packed keys
 * their packed keys into l->row_key (longer strings only looked up: the
 * rows are probed, not added). */
void ex_hash_agg_hash_rows(const HashAggSpec *s, AggLocal *l, const CmBatch *in)
{
    if (s->pack_words == 0) {
        ex_hash_keys(in, s->n_keys, s->keys, l->row_hash);
        return;
    }
    pack_batch(s, l, in, false, NULL);
    packed_hash_rows(s, l, in->n_rows);
}

/* With many groups the slots outgrow the cache and every row misses: while
 * row i is placed, the slot of row i + 2 * PREFETCH_AHEAD is asked for, and
 * the stored keys (packed words, or each key and its NULL flag) of the group
 * in the slot asked for earlier for row i + PREFETCH_AHEAD. */
static inline void prefetch_probe(const HashAggSpec *s, const AggLocal *l, const CmBatch *in, int i)
{
#if CM_BATCH_CAP > 2 * PREFETCH_AHEAD
    if (i + 2 * PREFETCH_AHEAD < in->n_rows) {
        __builtin_prefetch(&l->slots[slot_home(l->row_hash[i + 2 * PREFETCH_AHEAD], l->mask)]);
    }
    if (i + PREFETCH_AHEAD >= in->n_rows) {
        return;
    }
    uint32_t ahead = l->slots[slot_home(l->row_hash[i + PREFETCH_AHEAD], l->mask)].group;
    if (ahead == 0) {
        return;
    }
    if (s->pack_words > 0) {
        __builtin_prefetch(group_key(l, ahead - 1));
        return;
    }
    for (int k = 0; k < s->n_keys; k++) {
        size_t w = cm_type_width(s->key_types[k]);
        __builtin_prefetch((const char *)l->keys[k].data + w * (size_t)(ahead - 1));
        __builtin_prefetch(&l->keys[k].nulls[ahead - 1]);
    }
#else
    (void)s, (void)l, (void)in, (void)i;
#endif
}

/* assign_groups for packed keys (hash_rows done): the same probe, with
 * the keys compared as words and a group's words fetched a few rows ahead. */
static void assign_packed(const HashAggSpec *s, AggLocal *l, const CmBatch *in)
{
    int nw = s->pack_words;
    for (int i = 0; i < in->n_rows; i++) {
        CM_ASSERT((uint64_t)(l->n_groups + 1) * 2 <= l->mask + 1); /* make_room grew the slots */
        prefetch_probe(s, l, in, i);
        uint64_t h = l->row_hash[i];
        uint32_t tag = (uint32_t)h;
        const uint64_t *key = l->row_key[i];
        uint64_t idx = slot_home(h, l->mask);
        for (;;) {
            Slot *slot = &l->slots[idx];
            if (slot->group == 0 && l->find_only) {
                l->row_group[i] = NO_GROUP;
                break;
            }
            if (slot->group == 0) {
                CM_ASSERT(l->n_groups < l->cap_groups); /* make_room grew the arrays */
                int64_t g = l->n_groups++;
                memcpy(group_key(l, g), key, sizeof(uint64_t) * (size_t)nw);
                init_states(s, group_states(l, g));
                slot->group = (uint32_t)(g + 1);
                slot->tag = tag;
                l->row_group[i] = (uint32_t)g;
                break;
            }
            if (slot->tag == tag && packed_eq(group_key(l, slot->group - 1), key, nw)) {
                l->row_group[i] = slot->group - 1;
                break;
            }
            idx = (idx + 1) & l->mask;
        }
    }
}

/* ex_hash_agg_key_matches for a table whose only key is an unpacked string
 * (a word, a name: GROUP BY of text), inline in the probe loop. */
static inline bool str_key_matches(const AggLocal *l, int64_t g, const CmVec *v, uint32_t p)
{
    bool in_null = cm_vec_is_null(v, p), stored_null = l->keys[0].nulls[g] != 0;
    if (in_null || stored_null) {
        return in_null && stored_null;
    }
    return cm_str_eq(&((const CmStr *)l->keys[0].data)[g], &((const CmStr *)v->data)[p]);
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
    if (s->pack_words > 0) {
        pack_batch(s, l, in, !l->find_only, err); /* a row that only finds adds no string */
        if (err->code != CM_OK) {
            return err->code;
        }
        if (l->find_only && l->direct != NULL) {
            ex_hash_agg_find_direct(s, l, in); /* the index need not cover keys it adds none of */
            return CM_OK;
        }
        if (!l->find_only && ex_hash_agg_direct_choose(s, l, in)) {
            ex_hash_agg_assign_direct(s, l, in);
            return CM_OK;
        }
        packed_hash_rows(s, l, in->n_rows);
        assign_packed(s, l, in);
        return CM_OK;
    }
    ex_hash_agg_hash_rows(s, l, in);
    bool one_str = s->n_keys == 1 && s->key_types[0].id == CM_T_VARCHAR;
    const CmVec *kv = &in->cols[s->keys[0]];
    for (int i = 0; i < in->n_rows; i++) {
        CM_ASSERT((uint64_t)(l->n_groups + 1) * 2 <= l->mask + 1); /* make_room grew the slots */
        prefetch_probe(s, l, in, i);
        uint32_t p = cm_batch_pos(in, i);
        uint64_t h = l->row_hash[i];
        uint32_t tag = (uint32_t)h;
        uint64_t idx = slot_home(h, l->mask);
        for (;;) {
            Slot *slot = &l->slots[idx];
            if (slot->group == 0 && l->find_only) {
                l->row_group[i] = NO_GROUP;
                break;
            }
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
            if (slot->tag == tag &&
                (one_str ? str_key_matches(l, slot->group - 1, kv, p)
                         : ex_hash_agg_key_matches(s, l, slot->group - 1, in, p))) {
                l->row_group[i] = slot->group - 1;
                break;
            }
            idx = (idx + 1) & l->mask;
        }
    }
    return CM_OK;
}

/* ---- updates ---------------------------------------------------------------- */

/* Adds value p of v into st (SUM/AVG of a raw or partial value). */
static CmStatus add_value(AggState *st, const CmVec *v, uint32_t p, CmErr *err)
{
    switch ((CmTypeId)v->type.id) {
    case CM_T_DOUBLE:
        st->d += ((const double *)v->data)[p];
        break;
    case CM_T_INT32:
        sum_add_i64(st, ((const int32_t *)v->data)[p]);
        break;
    case CM_T_BOOL:
        st->i += ((const uint8_t *)v->data)[p];
        break;
    case CM_T_DECIMAL128:
        return sum_add_wide(st, cm_i128_get((const char *)v->data + 16 * (size_t)p), err);
    default:
        sum_add_i64(st, ((const int64_t *)v->data)[p]);
        break;
    }
    return CM_OK;
}

static int compare_value(const AggState *st, const CmVec *v, uint32_t p)
{
    switch ((CmTypeId)v->type.id) {
    case CM_T_DOUBLE: {
        return cm_f64_cmp(st->d, ((const double *)v->data)[p]);
    }
    case CM_T_VARCHAR:
        return cm_str_cmp(&st->s, &((const CmStr *)v->data)[p]);
    case CM_T_INTERVAL:
        return cm_interval_cmp(&st->iv, &((const CmInterval *)v->data)[p]);
    case CM_T_DECIMAL128: {
        CmInt128 x = cm_i128_get(st->h), y = cm_i128_get((const char *)v->data + 16 * (size_t)p);
        return (x > y) - (x < y);
    }
    default: {
        CmValue val;
        cm_vec_get_value(v, p, &val);
        return (st->i > val.i) - (st->i < val.i);
    }
    }
}

/* `str` as the string a state keeps, replacing `old`: into old's bytes when
 * it is a copy the state owns (`owned`) that is long enough, else a new copy
 * in the table's arena.  Without this every min or max a group replaced, every
 * last value and every arg_max's x stayed in the arena until the table was
 * emptied: an ungrouped max of rising strings kept all of them, and past the
 * limit failed (a table of one group cannot spill). */
static CmStr keep_str(AggLocal *l, CmStr old, bool owned, const CmStr *str, CmErr *err)
{
    if (owned && str->len > CM_STR_INLINE && old.len >= str->len) {
        char *d = (char *)old.ptr;
        memmove(d, cm_str_data(str), str->len);
        return cm_str_make(d, str->len);
    }
    return cm_str_copy(&l->strings, str, err);
}

/* ex_hash_agg_set_minmax; `held`: the state holds a value it owns (a string
 * copied for it), which this one replaces. */
static CmStatus set_value(AggState *st, const CmVec *v, uint32_t p, AggLocal *l, bool held,
                          CmErr *err)
{
    if (v->type.id == CM_T_VARCHAR) {
        CmStr str = ((const CmStr *)v->data)[p];
        st->s = keep_str(l, st->s, held, &str, err);
    } else if (v->type.id == CM_T_LIST) { /* a scalar subquery's list */
        CmList list = ((const CmList *)v->data)[p];
        st->l = cm_list_copy(&l->strings, &list, cm_type_elem(v->type), err);
    } else if (v->type.id == CM_T_DOUBLE) {
        st->d = ((const double *)v->data)[p];
    } else if (v->type.id == CM_T_INTERVAL) {
        st->iv = ((const CmInterval *)v->data)[p];
    } else if (v->type.id == CM_T_DECIMAL128) {
        memcpy(st->h, (const char *)v->data + 16 * (size_t)p, 16);
    } else {
        CmValue val;
        cm_vec_get_value(v, p, &val);
        st->i = val.i;
    }
    return err->code;
}

CmStatus ex_hash_agg_set_minmax(AggState *st, const CmVec *v, uint32_t p, AggLocal *l, CmErr *err)
{
    return set_value(st, v, p, l, false, err);
}

static double as_double(const CmVec *v, uint32_t p)
{
    CmValue x;
    cm_vec_get_value(v, p, &x);
    switch ((CmTypeId)x.type.id) {
    case CM_T_DOUBLE:
        return x.d;
    case CM_T_DECIMAL:
        return (double)x.i / (double)cm_pow10(x.type.scale);
    case CM_T_DECIMAL128:
        return (double)cm_i128_get(x.h) / (double)cm_pow10_128(x.type.scale);
    default:
        return (double)x.i;
    }
}

/* Welford's update for a raw value, or Chan's merge of a partial (n, mean, m2)
 * in FINAL mode: both keep the variance stable where sum-of-squares is not. */
static void variance_add(ExAggMode mode, AggState *st, const CmBatch *in, const CmVec *v,
                         uint32_t p, int col)
{
    if (mode != EX_AGG_FINAL) {
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

bool ex_hash_agg_same_value(const CmValue *x, const CmValue *y)
{
    if (x->is_null || y->is_null) {
        return x->is_null == y->is_null; /* list's NULL elements (keeps_nulls) */
    }
    switch ((CmTypeId)x->type.id) {
    case CM_T_VARCHAR:
        return cm_str_eq(&x->s, &y->s);
    case CM_T_DOUBLE:
        return x->d == y->d;
    case CM_T_INTERVAL:
        return cm_interval_cmp(&x->iv, &y->iv) == 0;
    case CM_T_DECIMAL128:
        return memcmp(x->h, y->h, sizeof x->h) == 0;
    default:
        return x->i == y->i;
    }
}

static uint64_t value_hash(const CmValue *x, int64_t group)
{
    uint64_t h;
    switch (x->is_null ? CM_T_NULL : (CmTypeId)x->type.id) {
    case CM_T_NULL:
        h = CM_HASH_NULL;
        break;
    case CM_T_VARCHAR:
        h = cm_hash_bytes(cm_str_data(&x->s), x->s.len);
        break;
    case CM_T_DOUBLE: {
        double d = x->d == 0 ? 0 : x->d;
        memcpy(&h, &d, sizeof h);
        h = cm_hash_u64(h);
        break;
    }
    case CM_T_INTERVAL: {
        CmInt128 span = cm_interval_span(&x->iv);
        h = cm_hash_combine(cm_hash_u64((uint64_t)span), cm_hash_u64((uint64_t)(span >> 64)));
        break;
    }
    case CM_T_DECIMAL128:
        h = cm_hash_combine(cm_hash_u64(x->h[0]), cm_hash_u64(x->h[1]));
        break;
    default:
        h = cm_hash_u64((uint64_t)x->i);
        break;
    }
    return cm_hash_combine(h, (uint64_t)group) | 1;
}

/* True (and remembered) the first time `group` sees value p of v.  With
 * `count`, a value seen again adds to its entry's count; with `append`, every
 * row is an entry of its own (its hash made unique by its arrival number). */
static bool first_sight_as(SeenSet *set, AggLocal *l, int64_t group, const CmVec *v, uint32_t p,
                           bool count, bool append, CmErr *err)
{
    CM_ASSERT((uint64_t)(set->n + 1) * 2 <= set->mask + 1); /* make_room grew the set */
    CmValue x;
    cm_vec_get_value(v, p, &x);
    uint64_t h = value_hash(&x, group);
    if (append) {
        h = cm_hash_combine(h, (uint64_t)set->n) | 1;
    }
    for (uint64_t j = h & set->mask;; j = (j + 1) & set->mask) {
        SeenEntry *e = &set->slots[j];
        if (e->hash == 0) {
            e->hash = h;
            e->group = (uint32_t)group;
            e->value = x;
            e->n = count ? 1 : (uint32_t)set->n;
            if (x.type.id == CM_T_VARCHAR && !x.is_null) {
                e->value.s = cm_str_copy(&l->strings, &x.s, err);
            }
            set->n++;
            return true;
        }
        if (!append && e->hash == h && e->group == (uint32_t)group &&
            ex_hash_agg_same_value(&e->value, &x) && (!count || e->n < UINT32_MAX)) {
            e->n += count;
            return false;
        }
    }
}

static bool first_sight(SeenSet *set, AggLocal *l, int64_t group, const CmVec *v, uint32_t p,
                        CmErr *err)
{
    return first_sight_as(set, l, group, v, p, false, false, err);
}

/* arg_min/arg_max: row p of (x, by) in every mode (a partial state is the
 * same pair, both NULL when it saw no rows).  The state keeps by in its union
 * and a copy of x in the string arena. */
static CmStatus arg_update(ExAggFn fn, AggState *st, const CmVec *x, const CmVec *by, uint32_t p,
                           AggLocal *l, CmErr *err)
{
    if (cm_vec_is_null(by, p) || cm_vec_is_null(x, p)) {
        return CM_OK; /* DuckDB skips a row with either NULL (arg_min_null would not) */
    }
    int c = st->n == 0 ? 0 : compare_value(st, by, p);
    st->n++;
    if (st->n > 1 && (fn == EX_AGG_ARG_MIN ? c <= 0 : c >= 0)) {
        return CM_OK; /* ties keep the first */
    }
    /* the x of the row it replaces is this state's own: its room is reused */
    bool held = st->n > 1 && st->x != NULL;
    CmValue *kept = held ? st->x : cm_arena_alloc(&l->strings, sizeof *kept);
    if (kept == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory in hash aggregate");
    }
    CmStr old = held && !kept->is_null && kept->type.id == CM_T_VARCHAR ? kept->s : (CmStr){0};
    cm_vec_get_value(x, p, kept);
    if (!kept->is_null && kept->type.id == CM_T_VARCHAR) {
        kept->s = keep_str(l, old, held, &kept->s, err);
    } else if (!kept->is_null && kept->type.id == CM_T_LIST) {
        kept->l = cm_list_copy(&l->strings, &kept->l, cm_type_elem(kept->type), err);
    }
    st->x = kept;
    return set_value(st, by, p, l, held, err);
}

/* approx_count_distinct: adds value p of v to the group's sketch, or in FINAL
 * mode (n: the counts column) merges the partial sketch at p into it. */
static CmStatus approx_update(AggState *st, const CmVec *v, const CmVec *n, uint32_t p, AggLocal *l,
                              CmErr *err)
{
    if (cm_vec_is_null(v, p)) {
        return CM_OK;
    }
    if (st->hll == NULL) {
        if ((st->hll = cm_arena_alloc(&l->strings, sizeof(StColStats))) == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory in approx_count_distinct");
        }
        st_stats_reset(st->hll);
    }
    if (n == NULL) {
        st_stats_add(st->hll, v, &p, 1);
        return CM_OK;
    }
    const CmStr *regs = &((const CmStr *)v->data)[p];
    if (regs->len != ST_HLL_REGS) {
        return cm_err_set(err, CM_INTERNAL, -1,
                          "approx_count_distinct: a partial state of %u bytes",
                          (unsigned)regs->len);
    }
    st_stats_merge(st->hll, (const uint8_t *)cm_str_data(regs), ((const int64_t *)n->data)[p]);
    return CM_OK;
}

CmStatus ex_hash_agg_update_one(const HashAggSpec *s, AggLocal *l, int a, const CmBatch *in,
                                CmErr *err)
{
    const ExAggSpec *agg = &s->aggs[a];
    ExAggFn fn = agg->fn;
    if (s->by_sorter != NULL && s->by_sorter[a]) {
        return CM_OK; /* its sorter took the batch (sorter_add) */
    }
    if (l->deep && keeps_values(agg) && !l->replaying) {
        return ex_hash_agg_deep_add(s, l, a, in, err);
    }
    /* A DISTINCT or holistic aggregate reads raw values, also from spilled state rows. */
    ExAggMode mode = keeps_values(agg) ? EX_AGG_SINGLE : s->mode;
    bool holistic = ex_agg_is_holistic(fn);
    const CmVec *v =
        fn == EX_AGG_COUNT_STAR && mode != EX_AGG_FINAL ? NULL : &in->cols[s->in_col[a]];
    bool is_first_last = fn == EX_AGG_FIRST || fn == EX_AGG_LAST;
    const CmVec *v2 =
        (fn == EX_AGG_AVG || is_first_last || fn == EX_AGG_APPROX_DISTINCT) && mode == EX_AGG_FINAL
            ? &in->cols[s->in_col[a] + 1]
            : NULL;
    /* SUM_COUNT sums counts in every mode (the planner's DISTINCT rewrite
     * feeds it counts as raw values). */
    bool final_count = fn == EX_AGG_SUM_COUNT ||
                       (mode == EX_AGG_FINAL && (fn == EX_AGG_COUNT || fn == EX_AGG_COUNT_STAR));
    CmStatus rc;
    if (!holistic && ex_hash_agg_update_fast(s, l, a, mode, v, v2, final_count, in, &rc, err)) {
        return rc;
    }
    for (int i = 0; i < in->n_rows; i++) {
#if CM_BATCH_CAP > 8
        /* With many groups every row's state misses the cache. */
        if (i + 8 < in->n_rows) {
            __builtin_prefetch(l->row_states[i + 8] + a);
        }
#endif
        AggState *st = l->row_states[i] + a;
        if (v == NULL) {
            st->n++;
            continue;
        }
        uint32_t p = cm_batch_pos(in, i);
        if (is_first_last) {
            /* NULLs count; a partial state of no rows does not */
            if (v2 != NULL && ((const int64_t *)v2->data)[p] == 0) {
                continue;
            }
            if (fn == EX_AGG_LAST || st->n == 0) {
                st->m2 = cm_vec_is_null(v, p);
                if (!cm_vec_is_null(v, p) && set_value(st, v, p, l, st->n > 0, err) != CM_OK) {
                    return err->code;
                }
            }
            st->n += v2 ? ((const int64_t *)v2->data)[p] : 1;
            continue;
        }
        if (fn == EX_AGG_APPROX_DISTINCT) {
            if (approx_update(st, v, v2, p, l, err) != CM_OK) {
                return err->code;
            }
            continue;
        }
        if (fn == EX_AGG_ARG_MIN || fn == EX_AGG_ARG_MAX) {
            if (arg_update(fn, st, v, &in->cols[s->in_col[a] + 1], p, l, err) != CM_OK) {
                return err->code;
            }
            continue;
        }
        if (holistic) {
            if (!has_value(s, a, in, p)) {
                continue;
            }
            /* Its result is computed from the set when the table is emitted. */
            first_sight_as(&l->seen[a], l, l->row_group[i], v, p, counts_values(agg),
                           !agg->distinct && in_arrival_order(fn), err);
            if (err->code != CM_OK) {
                return err->code;
            }
            continue;
        }
        if (cm_vec_is_null(v, p)) {
            continue;
        }
        if (agg->distinct && !l->replaying &&
            !first_sight(&l->seen[a], l, l->row_group[i], v, p, err)) {
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
            variance_add(mode, st, in, v, p, s->in_col[a]);
            continue;
        }
        switch (fn) {
        case EX_AGG_COUNT:
            st->n++;
            break;
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
            if (ex_hash_agg_set_minmax(st, v, p, l, err) != CM_OK) {
                return err->code;
            }
            st->n++;
            break;
        case EX_AGG_MIN:
        case EX_AGG_MAX: {
            int c = st->n == 0 ? 0 : compare_value(st, v, p);
            if (st->n == 0 || (fn == EX_AGG_MIN ? c > 0 : c < 0)) {
                if (set_value(st, v, p, l, st->n > 0, err) != CM_OK) {
                    return err->code;
                }
            }
            st->n++;
            break;
        }
        case EX_AGG_BIT_AND:
        case EX_AGG_BIT_OR:
        case EX_AGG_BIT_XOR: {
            CmValue val;
            cm_vec_get_value(v, p, &val);
            st->i = st->n == 0             ? val.i
                    : fn == EX_AGG_BIT_AND ? st->i & val.i
                    : fn == EX_AGG_BIT_OR  ? st->i | val.i
                                           : st->i ^ val.i;
            st->n++;
            break;
        }
        default:
            break;
        }
    }
    return CM_OK;
}

/* ---- output ----------------------------------------------------------------- */

/* Writes aggregate a of group g into column(s) starting at `col` of out. */
static int emit_agg(const HashAggSpec *s, const AggState *st, int a, CmBatch *out, int col,
                    uint32_t row, bool partial)
{
    const ExAggSpec *agg = &s->aggs[a];
    CmVec *v = &out->cols[col];
    switch (agg->fn) {
    case EX_AGG_COUNT_STAR:
    case EX_AGG_COUNT:
    case EX_AGG_SUM_COUNT:
        ((int64_t *)v->data)[row] = st->n;
        return 1;
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
            } else if (v->type.id == CM_T_DECIMAL128) {
                cm_i128_put((char *)v->data + 16 * (size_t)row, sum_get(st));
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
                         : t.id == CM_T_DECIMAL128
                             ? (double)sum_get(st) / (double)cm_pow10_128(t.scale)
                             : (double)st->i / (double)cm_pow10(t.id == CM_T_DECIMAL ? t.scale : 0);
            ((double *)v->data)[row] = sum / (double)st->n;
        }
        return 1;
    case EX_AGG_APPROX_DISTINCT:
        if (!partial) {
            ((int64_t *)v->data)[row] = st->hll ? llround(st_stats_ndv(st->hll)) : 0;
            return 1;
        }
        if (st->hll == NULL) {
            cm_vec_set_null(v, row);
        } else {
            ((CmStr *)v->data)[row] = cm_str_make((const char *)st->hll->hll, ST_HLL_REGS);
        }
        ((int64_t *)out->cols[col + 1].data)[row] =
            st->hll ? st->hll->n_values - st->hll->n_nulls : 0;
        return 2;
    case EX_AGG_ARG_MIN:
    case EX_AGG_ARG_MAX:
        if (st->n == 0 || st->x->is_null) {
            cm_vec_set_null(v, row);
        } else {
            cm_vec_set_value(v, row, st->x);
        }
        if (!partial) {
            return 1;
        }
        v = &out->cols[col + 1]; /* by, as the default case writes a min */
        if (st->n == 0) {
            cm_vec_set_null(v, row);
        } else if (v->type.id == CM_T_DOUBLE) {
            ((double *)v->data)[row] = st->d;
        } else if (v->type.id == CM_T_VARCHAR) {
            ((CmStr *)v->data)[row] = st->s;
        } else if (v->type.id == CM_T_DECIMAL128) {
            memcpy((char *)v->data + 16 * (size_t)row, st->h, 16);
        } else {
            CmValue val = {.type = v->type, .is_null = false, .i = st->i};
            cm_vec_set_value(v, row, &val);
        }
        return 2;
    case EX_AGG_FIRST:
    case EX_AGG_LAST:
        if (partial) {
            ((int64_t *)out->cols[col + 1].data)[row] = st->n;
        }
        if (st->n == 0 || st->m2 != 0) {
            cm_vec_set_null(v, row);
        } else if (v->type.id == CM_T_DOUBLE) {
            ((double *)v->data)[row] = st->d;
        } else if (v->type.id == CM_T_VARCHAR) {
            ((CmStr *)v->data)[row] = st->s;
        } else if (v->type.id == CM_T_LIST) {
            ((CmList *)v->data)[row] = st->l;
        } else if (v->type.id == CM_T_DECIMAL128) {
            memcpy((char *)v->data + 16 * (size_t)row, st->h, 16);
        } else {
            CmValue val = {.type = v->type, .is_null = false, .i = st->i};
            cm_vec_set_value(v, row, &val);
        }
        return partial ? 2 : 1;
    default:
        if (st->n == 0) {
            cm_vec_set_null(v, row);
        } else if (v->type.id == CM_T_DOUBLE) {
            ((double *)v->data)[row] = st->d;
        } else if (v->type.id == CM_T_VARCHAR) {
            ((CmStr *)v->data)[row] = st->s;
        } else if (v->type.id == CM_T_LIST) {
            ((CmList *)v->data)[row] = st->l;
        } else if (v->type.id == CM_T_INTERVAL) {
            ((CmInterval *)v->data)[row] = st->iv;
        } else if (v->type.id == CM_T_DECIMAL128 && agg->fn == EX_AGG_SUM) {
            cm_i128_put((char *)v->data + 16 * (size_t)row, sum_get(st));
        } else if (v->type.id == CM_T_DECIMAL128) {
            memcpy((char *)v->data + 16 * (size_t)row, st->h, 16);
        } else {
            CmValue val = {.type = v->type, .is_null = false, .i = st->i};
            cm_vec_set_value(v, row, &val);
        }
        return 1;
    }
}

void ex_hash_agg_emit_keys(const HashAggSpec *s, const AggLocal *l, int64_t g, CmBatch *out,
                           uint32_t row)
{
    if (s->pack_words > 0) {
        const char *b = (const char *)group_key(l, g);
        for (int k = 0; k < s->n_keys; k++) {
            CmVec *v = &out->cols[k];
            if (b[s->pack_null_off + k / 8] & (1 << (k % 8))) {
                cm_vec_set_null(v, row);
                continue;
            }
            if (is_str_key(s, k)) {
                uint64_t w;
                memcpy(&w, b + s->pack_off[k], sizeof w);
                ((CmStr *)v->data)[row] = str_word_value(l, w);
                continue;
            }
            size_t w = (size_t)s->pack_width[k];
            memcpy((char *)v->data + w * row, b + s->pack_off[k], w);
        }
        return;
    }
    for (int k = 0; k < s->n_keys; k++) {
        CmVec *v = &out->cols[k];
        if (l->keys[k].nulls[g]) {
            cm_vec_set_null(v, row);
            continue;
        }
        size_t w = cm_type_width(s->key_types[k]);
        memcpy((char *)v->data + w * row, (const char *)l->keys[k].data + w * (size_t)g, w);
    }
}

/* Writes group g as row `row` of out: final values, partial states (PARTIAL),
 * or state rows (as_state: partial states, NULL for DISTINCT aggregates). */
void ex_hash_agg_emit_group(const HashAggSpec *s, AggLocal *l, int64_t g, CmBatch *out,
                            uint32_t row, bool as_state)
{
    ex_hash_agg_emit_keys(s, l, g, out, row);
    int col = s->n_keys;
    bool partial = as_state || s->mode == EX_AGG_PARTIAL;
    for (int a = 0; a < s->n_aggs; a++) {
        if (as_state && keeps_values(&s->aggs[a])) {
            cm_vec_set_null(&out->cols[col++], row); /* its values are rows of their own */
            if (keeps_nulls(&s->aggs[a])) {
                cm_vec_set_null(&out->cols[col++], row); /* not a value's mark */
            }
            continue;
        }
        col += emit_agg(s, group_states(l, g) + a, a, out, col, row, partial);
    }
}

/* Fills l->out with the next groups of the table (from l->next_out).  A final
 * DECIMAL(38,s) sum past 38 digits is an error, never a value shown. */
static CmStatus emit_batch(const HashAggSpec *s, AggLocal *l, CmErr *err)
{
    cm_batch_reset(&l->out);
    uint32_t row = 0;
    while (l->next_out < l->n_groups && row < CM_BATCH_CAP) {
        ex_hash_agg_emit_group(s, l, l->next_out++, &l->out, row++, false);
    }
    l->out.n_rows = (int)row;
    for (int a = 0; a < s->n_aggs && s->mode != EX_AGG_PARTIAL; a++) {
        const CmVec *v = &l->out.cols[s->n_keys + a];
        if (s->aggs[a].fn != EX_AGG_SUM || v->type.id != CM_T_DECIMAL128) {
            continue;
        }
        for (uint32_t r = 0; r < row; r++) {
            CmInt128 x = cm_i128_get((const char *)v->data + 16 * (size_t)r);
            if (!cm_vec_is_null(v, r) && !cm_i128_add_checked(x, 0, 38, &x)) {
                return cm_err_set(err, CM_RUNTIME, -1,
                                  "overflow in SUM: the sum exceeds DECIMAL(38)");
            }
        }
    }
    return CM_OK;
}

/* Whether the row at position p of `in` only finds its group (its find_col
 * is not 0; a NULL there, which the planner never makes, may start one). */
static inline bool finds_only(const CmVec *v, uint32_t p)
{
    uint32_t at = v->kind == CM_VEC_CONST ? 0 : p;
    if (cm_vec_is_null(v, at)) {
        return false;
    }
    return v->type.id == CM_T_INT64 ? ((const int64_t *)v->data)[at] != 0
                                    : ((const int32_t *)v->data)[at] != 0;
}

int64_t ex_hash_agg_max_new_groups(const HashAggSpec *s, const CmBatch *in)
{
    if (s->n_keys == 0) {
        return 0;
    }
    if (s->find_col < 0) {
        return in->n_rows;
    }
    const CmVec *v = &in->cols[s->find_col];
    int64_t n = 0;
    for (int i = 0; i < in->n_rows; i++) {
        n += !finds_only(v, cm_batch_pos(in, i));
    }
    return n;
}

CmStatus ex_hash_agg_find_groups(const HashAggSpec *x, AggLocal *l, const CmBatch *in, CmErr *err)
{
    l->find_only = true;
    CmStatus rc = assign_groups(x, l, in, err);
    l->find_only = false;
    return rc;
}

/* Finds or starts the groups of the active rows of `in` (only finds them
 * when find_only: `in` is then a view over l->find_pos, whose rows without a
 * group are dropped from it) and updates every aggregate. */
static CmStatus absorb_rows(const HashAggSpec *x, AggLocal *l, CmBatch *in, bool find_only,
                            CmErr *err)
{
    l->find_only = find_only;
    CmStatus rc = assign_groups(x, l, in, err);
    l->find_only = false;
    if (rc != CM_OK) {
        return rc;
    }
    if (find_only) {
        int n = 0;
        for (int i = 0; i < in->n_rows; i++) {
            if (l->row_group[i] != NO_GROUP) {
                l->find_pos[n] = in->sel[i];
                l->row_group[n++] = l->row_group[i];
            }
        }
        in->n_rows = n;
    }
    locate_states(l, in->n_rows);
    l->few = AGG_FEW_PENDING;
    for (int a = 0; a < x->n_aggs && in->n_rows > 0; a++) {
        if (ex_hash_agg_update_one(x, l, a, in, err) != CM_OK) {
            l->few = AGG_FEW_OFF;
            return err->code;
        }
    }
    l->few = AGG_FEW_OFF; /* a partition is this batch's */
    return CM_OK;
}

/* Aggregates the active rows of `in`, laid out for spec x, into the table
 * (make_room has made room for the groups they may start).  With find_col,
 * the rows that may start groups go first, then the others only find
 * theirs: within a batch too, a group's starting rows come first. */
CmStatus ex_hash_agg_absorb(const HashAggSpec *x, AggLocal *l, const CmBatch *in, CmErr *err)
{
    CmBatch all = *in;
    if (x->find_col < 0) {
        return absorb_rows(x, l, &all, false, err);
    }
    const CmVec *v = &in->cols[x->find_col];
    int n_start = 0, n_find = 0;
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (finds_only(v, p)) {
            l->find_pos[n_find++] = p;
        } else {
            l->start_pos[n_start++] = p;
        }
    }
    CmBatch start = *in, find = *in;
    start.sel = l->start_pos;
    start.n_rows = n_start;
    find.sel = l->find_pos;
    find.n_rows = n_find;
    if (n_start > 0 && absorb_rows(x, l, n_find > 0 ? &start : &all, false, err) != CM_OK) {
        return err->code;
    }
    return n_find > 0 ? absorb_rows(x, l, &find, true, err) : CM_OK;
}

/* ---- push and flush -------------------------------------------------------------- */

/* Makes the rows a grouping over no input still returns: one row for a
 * global aggregate, one of NULL keys for the empty grouping set. */
static CmStatus flush_empty(const HashAggSpec *s, AggLocal *l, CmErr *err)
{
    if (l->n_groups == 0 && s->n_keys == 0 && s->mode != EX_AGG_PARTIAL && !l->flushed_empty) {
        CmBatch none = {.n_rows = 0};
        if (assign_groups(s, l, &none, err) != CM_OK) {
            return err->code;
        }
        l->flushed_empty = true;
    }
    if (l->n_groups == 0 && s->empty_gid_key >= 0 && s->mode != EX_AGG_PARTIAL &&
        !l->flushed_empty) {
        CM_ASSERT(l->cap_groups > 0);
        if (s->pack_words > 0) {
            char *b = (char *)group_key(l, 0);
            memset(b, 0, sizeof(uint64_t) * (size_t)s->pack_words);
            for (int k = 0; k < s->n_keys; k++) {
                if (k != s->empty_gid_key) {
                    b[s->pack_null_off + k / 8] |= (char)(1 << (k % 8));
                }
            }
            memcpy(b + s->pack_off[s->empty_gid_key], &s->empty_gid, sizeof(int64_t));
        } else {
            for (int k = 0; k < s->n_keys; k++) {
                l->keys[k].nulls[0] = k != s->empty_gid_key;
            }
            ((int64_t *)l->keys[s->empty_gid_key].data)[0] = s->empty_gid;
        }
        init_states(s, group_states(l, 0));
        l->n_groups = 1;
        l->flushed_empty = true;
    }
    return CM_OK;
}

/* ---- sorted input: groups one after the other --------------------------------------- */

/* Groups a sorted-input table holds before it emits the complete ones. */
#define SORTED_DRAIN_GROUPS 1024

/* SINGLE with sorted_input: aggregates the batch's rows from resume_at on.
 * Before a row that starts a group, when the table is large (by groups or
 * bytes), every group in it is complete: they are computed and emitted
 * (EX_HAVE_MORE, batch by batch, the caller passing the same input again),
 * the table is emptied (its memory given back) and the batch goes on from
 * that row.  Only a group's own values must fit (cm_mem_need). */
static ExOpResult sorted_push(const HashAggSpec *s, AggLocal *l, const CmBatch *in,
                              const CmBatch **out, CmErr *err)
{
    if (l->draining) {
        if (l->next_out < l->n_groups) {
            if (emit_batch(s, l, err) != CM_OK) {
                return EX_NEED_INPUT;
            }
            *out = &l->out;
            return EX_HAVE_MORE;
        }
        l->draining = false;
        if (ex_hash_agg_table_shrink(s, l, err) != CM_OK) {
            return EX_NEED_INPUT;
        }
    }
    int start = l->resume_at;
    l->resume_at = 0;
    /* In slices, so that the table is looked at often: a batch of small
     * groups would otherwise all be in it at once. */
    for (int at = start; at < in->n_rows; at += SLICE_ROWS) {
        int n = in->n_rows - at < SLICE_ROWS ? in->n_rows - at : SLICE_ROWS;
        for (int i = 0; i < n; i++) {
            l->sorted_pos[i] = cm_batch_pos(in, at + i);
        }
        CmBatch view = *in;
        view.n_rows = n;
        view.sel = l->sorted_pos;
        int b = n;
        if (l->n_groups > 0 &&
            (l->n_groups >= SORTED_DRAIN_GROUPS || l->res.held > l->max_bytes / 8)) {
            for (b = 0;
                 b < n && ex_hash_agg_key_matches(s, l, l->n_groups - 1, in, l->sorted_pos[b]);
                 b++) {
            }
        }
        view.n_rows = b;
        if (b > 0 && ex_hash_agg_consume(s, l, &view, false, err) != CM_OK) {
            return EX_NEED_INPUT;
        }
        if (b == n) {
            continue;
        }
        if ((l->deep && ex_hash_agg_deep_finish(s, l, err) != CM_OK) ||
            ex_hash_agg_finish_holistic(s, l, err) != CM_OK) {
            return EX_NEED_INPUT;
        }
        l->resume_at = at + b;
        l->draining = true;
        l->flushed_empty = true; /* rows came: an empty grouping set has no row of its own */
        l->next_out = 0;
        if (emit_batch(s, l, err) != CM_OK) {
            return EX_NEED_INPUT;
        }
        *out = &l->out;
        return EX_HAVE_MORE;
    }
    return EX_NEED_INPUT;
}

/* At the end of the table's input: emit it, unless some of its groups were
 * written out at its level, where the rest then go too. */
static CmStatus finish_table(const HashAggSpec *s, AggLocal *l, CmErr *err)
{
    l->next_out = 0;
    l->emitting = l->n_levels <= l->depth;
    if (l->emitting && l->deep && ex_hash_agg_deep_finish(s, l, err) != CM_OK) {
        return err->code;
    }
    return l->emitting ? ex_hash_agg_finish_holistic(s, l, err) : ex_hash_agg_dump_table(s, l, err);
}

/* Emits the table, then each spilled partition aggregated in turn. */
static ExOpResult agg_flush(ExOp *op, void *local, const CmBatch **out, CmErr *err)
{
    const HashAggSpec *s = op->spec;
    AggLocal *l = local;
    if (!l->flush_started) {
        l->flush_started = true;
        if (l->n_levels == 0 && flush_empty(s, l, err) != CM_OK) {
            return EX_DONE;
        }
        for (int a = 0; l->sorters != NULL && a < s->n_aggs; a++) {
            if (l->sorters[a] != NULL && ex_hash_agg_finish_sorted(s, l, a, err) != CM_OK) {
                return EX_DONE;
            }
        }
        if (finish_table(s, l, err) != CM_OK) {
            return EX_DONE;
        }
    }
    for (;;) {
        if (l->emitting) {
            if (emit_batch(s, l, err) != CM_OK) {
                return EX_DONE;
            }
            *out = &l->out;
            if (l->next_out < l->n_groups) {
                return EX_HAVE_MORE;
            }
            l->emitting = false;
            if (l->n_levels == 0) {
                return EX_DONE;
            }
            if (l->out.n_rows > 0) {
                return EX_HAVE_MORE;
            }
        }
        int level, part;
        if (!ex_hash_agg_next_partition(l, &level, &part)) {
            *out = NULL;
            return EX_DONE;
        }
        if (ex_hash_agg_load_partition(op, l, level, part, err) != CM_OK ||
            finish_table(s, l, err) != CM_OK) {
            return EX_DONE;
        }
    }
}

/* PARTIAL: when the table is refused memory, its groups go downstream as
 * partial states (EX_HAVE_MORE, batch by batch) and it starts over with the
 * arrays, direct index and reservation it has: it is about to fill them
 * again, and giving them back only to grow them anew made every page a fault
 * under a tight limit. */
static ExOpResult partial_push(const HashAggSpec *s, AggLocal *l, const CmBatch *in,
                               const CmBatch **out, CmErr *err)
{
    if (l->draining && l->next_out == l->n_groups) { /* the last batch was taken */
        l->draining = false;
        ex_hash_agg_table_reset(s, l);
    }
    if (!l->draining) {
        if (l->resume_at == 0 &&
            ex_hash_agg_make_room(s, l, s->n_keys ? in->n_rows : 0, in->n_rows, false, err)) {
            ex_hash_agg_absorb(s, l, in, err);
            return EX_NEED_INPUT;
        }
        /* Refused: the batch goes in slices, the groups out whenever a slice
         * does not fit (an empty table must take it), and on from there. */
        for (int at = l->resume_at; at < in->n_rows && err->code == CM_OK; at += SLICE_ROWS) {
            CmBatch view = *in;
            view.n_rows = in->n_rows - at < SLICE_ROWS ? in->n_rows - at : SLICE_ROWS;
            for (int i = 0; i < view.n_rows; i++) {
                l->slice_pos[i] = cm_batch_pos(in, at + i);
            }
            view.sel = l->slice_pos;
            if (ex_hash_agg_make_room(s, l, s->n_keys ? view.n_rows : 0, view.n_rows,
                                      l->n_groups == 0, err)) {
                ex_hash_agg_absorb(s, l, &view, err);
            } else if (err->code == CM_OK) {
                l->resume_at = at;
                l->draining = true;
                l->next_out = 0;
                break;
            }
        }
        if (!l->draining) {
            l->resume_at = 0;
            return EX_NEED_INPUT;
        }
    }
    if (emit_batch(s, l, err) != CM_OK) {
        return EX_NEED_INPUT;
    }
    *out = &l->out;
    return EX_HAVE_MORE;
}

static ExOpResult agg_push(ExOp *op, void *local, const CmBatch *in, const CmBatch **out,
                           CmErr *err)
{
    const HashAggSpec *s = op->spec;
    AggLocal *l = local;
    if (s->mode == EX_AGG_PARTIAL) {
        return partial_push(s, l, in, out, err);
    }
    if (s->sorted_input) {
        return sorted_push(s, l, in, out, err);
    }
    if (l->sorters != NULL && ex_hash_agg_sorter_add(s, l, in, err) != CM_OK) {
        return EX_NEED_INPUT;
    }
    ex_hash_agg_consume(s, l, in, false, err);
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
    chunks_free(&l->packed);
    chunks_free(&l->states);
    chunks_free(&l->hashes);
    cm_free(l->slots);
    cm_free(l->direct);
    for (int a = 0; l->seen != NULL && a < s->n_aggs; a++) {
        cm_free(l->seen[a].slots);
    }
    cm_free(l->seen);
    cm_arena_fini(&l->strings);
    cm_batch_fini(&l->out);
    for (int d = 0; d < l->n_levels; d++) {
        for (int part = 0; part < SPILL_FANOUT; part++) {
            sh_spill_free(l->levels[d].state[part]);
            sh_spill_free(l->levels[d].raw[part]);
        }
    }
    sh_spill_free(l->loading[0]);
    sh_spill_free(l->loading[1]);
    cm_free(l->in_types);
    if (s->mode != EX_AGG_PARTIAL) {
        cm_batch_fini(&l->state_buf);
        cm_batch_fini(&l->state_in);
    }
    if (l->has_raw_buf) {
        cm_batch_fini(&l->raw_buf);
    }
    for (int a = 0; l->sorters != NULL && a < s->n_aggs; a++) {
        ex_sorter_free(l->sorters[a]);
        cm_free(l->sorted_buf != NULL ? l->sorted_buf[a] : NULL);
    }
    cm_free(l->sorters);
    ex_hash_agg_deep_free(s, l);
    cm_free(l->sorted_n);
    cm_free(l->sorted_buf);
    cm_mem_res_fini(&l->res);
    cm_free(l);
}

/* The most a task's table reserves before it spills.  The manager's fair
 * share counts only consumers that hold memory: a task that starts its table
 * late would find the budget taken by one that was alone, and that one only
 * gives memory back when it next grows.  So each table keeps to its slice
 * among the tasks that run at once.  The slice is of execution memory as the
 * manager grants it: storage above its protected floor is evicted on demand,
 * so it counts.  Sized from the storage held at the moment instead, a task
 * that started while tables filled the pool (a scan had just loaded them) got
 * a sliver and spilled with the floor's worth of memory unused: PageRank's
 * final aggregate at 51 MB spilled 6 MB a round at a 6.7 MB slice of 27 MB. */
static int64_t table_slice(const ExTask *task)
{
    if (task->query == NULL) {
        return INT64_MAX;
    }
    int n_at_once =
        task->n_tasks < task->query->config.threads ? task->n_tasks : task->query->config.threads;
    return cm_mem_execution_bytes() / (n_at_once > 0 ? n_at_once : 1);
}

/* A table that emitted everything from memory (no spill files, sorters or
 * deep level: those are made per task) is emptied for the next task on the
 * thread, its arrays and reservation kept (ExOpVt.local_keep).  Under a
 * limit this is most of what a stage of many tasks would fault in: PageRank's
 * partial aggregates at a quarter of its peak built 8 MiB tables 8 times a
 * round. */
static bool agg_local_keep(ExOp *op, void *local)
{
    const HashAggSpec *s = op->spec;
    AggLocal *l = local;
    if (s->n_keys == 0 || s->sorted_input || l->sorters != NULL || l->deep || l->n_levels > 0 ||
        l->depth > 0 || l->spilling || l->n_kept > 0 || l->has_raw_buf || l->loading[0] != NULL ||
        l->loading[1] != NULL) {
        return false;
    }
    ex_hash_agg_table_reset(s, l);
    l->draining = false;
    l->resume_at = 0;
    l->flush_started = false;
    l->emitting = false;
    l->flushed_empty = false;
    return true;
}

static CmStatus agg_local_reuse(ExOp *op, void *local, const ExTask *task, CmErr *err)
{
    (void)op;
    (void)err;
    AggLocal *l = local;
    l->max_bytes = table_slice(task);
    return CM_OK;
}

static void *agg_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    const HashAggSpec *s = op->spec;
    AggLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    ex_op_res_init(op, &l->res, "hash aggregate");
    /* Without keys and without kept values (DISTINCT, holistic) the table is
     * one group that never grows: not a consumer a fair share divides by.
     * Counted, two of them held PageRank's final aggregates, in the same
     * stage, to a fifth of execution memory. */
    l->res.fixed = s->n_keys == 0;
    for (int a = 0; a < s->n_aggs; a++) {
        l->res.fixed = l->res.fixed && !keeps_values(&s->aggs[a]);
    }
    cm_arena_init(&l->strings, 64 * 1024);
    l->query = task->query;
    l->op = op;
    l->temp_dir = task->query != NULL ? task->query->config.temp_directory : "/tmp";
    l->max_temp = task->query != NULL ? task->query->config.max_temp_directory_size : 0;
    l->max_bytes = table_slice(task);
    l->states.width = sizeof(AggState) * (size_t)(s->n_aggs ? s->n_aggs : 1);
    l->hashes.width = sizeof(uint64_t);
    l->state_off = sizeof(uint64_t) * (size_t)s->pack_words;
    l->packed.width = l->state_off + sizeof(AggState) * (size_t)s->n_aggs;
    l->keys = cm_calloc((size_t)(s->n_keys ? s->n_keys : 1), sizeof(KeyCol));
    l->seen = cm_calloc((size_t)(s->n_aggs ? s->n_aggs : 1), sizeof(SeenSet));
    bool spills = s->mode != EX_AGG_PARTIAL;
    if (l->keys == NULL || l->seen == NULL ||
        cm_batch_init(&l->out, op->n_cols, op->types, err) != CM_OK ||
        (spills && cm_batch_init(&l->state_buf, s->n_state_cols, s->state_types, err) != CM_OK) ||
        (spills && cm_batch_init(&l->state_in, s->n_state_cols, s->state_types, err) != CM_OK) ||
        cm_mem_need(&l->res, initial_bytes(s), err) != CM_OK ||
        grow_groups(s, l, INITIAL_GROUPS, err) != CM_OK ||
        rehash(l, 2 * INITIAL_GROUPS, err) != CM_OK) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        agg_local_fini(op, l);
        return NULL;
    }
    if (s->by_sorter != NULL && ex_hash_agg_sorters_init(op, task, l, err) != CM_OK) {
        agg_local_fini(op, l);
        return NULL;
    }
    return l;
}

const char *ex_agg_fn_name(ExAggFn fn)
{
    /* indexed by name: a function missing here is NULL, "?" below */
    static const char *const fn_names[] = {
        [EX_AGG_COUNT_STAR] = "count_star",
        [EX_AGG_COUNT] = "count",
        [EX_AGG_SUM] = "sum",
        [EX_AGG_MIN] = "min",
        [EX_AGG_MAX] = "max",
        [EX_AGG_AVG] = "avg",
        [EX_AGG_SUM_COUNT] = "sum_count",
        [EX_AGG_SCALAR] = "scalar",
        [EX_AGG_FIRST] = "first",
        [EX_AGG_LAST] = "last",
        [EX_AGG_ARG_MIN] = "arg_min",
        [EX_AGG_ARG_MAX] = "arg_max",
        [EX_AGG_APPROX_DISTINCT] = "approx_count_distinct",
        [EX_AGG_BIT_AND] = "bit_and",
        [EX_AGG_BIT_OR] = "bit_or",
        [EX_AGG_BIT_XOR] = "bit_xor",
        [EX_AGG_STRING_AGG] = "string_agg",
        [EX_AGG_QUANTILE_CONT] = "quantile_cont",
        [EX_AGG_QUANTILE_DISC] = "quantile_disc",
        [EX_AGG_MODE] = "mode",
        [EX_AGG_LIST] = "list",
        [EX_AGG_VAR_SAMP] = "var_samp",
        [EX_AGG_VAR_POP] = "var_pop",
        [EX_AGG_STDDEV_SAMP] = "stddev_samp",
        [EX_AGG_STDDEV_POP] = "stddev_pop",
    };
    return fn >= 0 && (size_t)fn < sizeof fn_names / sizeof fn_names[0] && fn_names[fn] != NULL
               ? fn_names[fn]
               : "?";
}

/* One aggregate as EXPLAIN shows it: fn(argument) over raw rows; over partial
 * states, the name the planner gave the state column (the aggregate's). */
static size_t agg_to_string(const HashAggSpec *s, int a, const char *const *in_names, char *buf,
                            size_t cap)
{
    const ExAggSpec *g = &s->aggs[a];
    int col = s->in_col[a];
    if (s->mode == EX_AGG_FINAL && in_names != NULL && in_names[col] != NULL) {
        return ex_col_to_string(in_names, col, buf, cap);
    }
    size_t n =
        (size_t)snprintf(buf, cap, "%s(%s", ex_agg_fn_name(g->fn), g->distinct ? "DISTINCT " : "");
    if (g->fn != EX_AGG_COUNT_STAR && n < cap) {
        n += ex_col_to_string(s->mode == EX_AGG_FINAL ? NULL : in_names, col, buf + n, cap - n);
    }
    n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, ")");
    return n < cap ? n : cap ? cap - 1 : 0;
}

static void agg_explain(const ExOp *op, const char *const *in_names, char *buf, size_t cap)
{
    static const char *mode_names[] = {"single", "partial", "final"};
    const HashAggSpec *s = op->spec;
    size_t n = (size_t)snprintf(buf, cap, "%s", mode_names[s->mode]);
    for (int k = 0; k < s->n_keys && n + 8 < cap; k++) {
        n += (size_t)snprintf(buf + n, cap - n, "%s", k ? ", " : ", keys: ");
        n += ex_col_to_string(in_names, s->keys[k], buf + n, cap - n);
    }
    for (int a = 0; a < s->n_aggs && n + 16 < cap; a++) {
        n += (size_t)snprintf(buf + n, cap - n, "%s",
                              a           ? ", "
                              : s->n_keys ? "; aggregates: "
                                          : ", aggregates: ");
        n += agg_to_string(s, a, in_names, buf + n, cap - n);
    }
    if (s->find_col >= 0 && n + 32 < cap) {
        n += (size_t)snprintf(buf + n, cap - n, "; only finding groups: ");
        n += ex_col_to_string(in_names, s->find_col, buf + n, cap - n);
        snprintf(buf + n, cap - n, " <> 0");
    }
}

static const ExOpVt HASH_AGG_VT = {
    .name = "HASH_AGGREGATE",
    .local_init = agg_local_init,
    .local_fini = agg_local_fini,
    .local_keep = agg_local_keep,
    .local_reuse = agg_local_reuse,
    .push = agg_push,
    .flush = agg_flush,
    .explain = agg_explain,
};

bool ex_hash_agg_is_partial(const ExOp *op)
{
    return op->vt == &HASH_AGG_VT && ((const HashAggSpec *)op->spec)->mode == EX_AGG_PARTIAL;
}

/* The merge spec of s (mode FINAL over state rows) and the state row types. */
static CmStatus build_merge(CmArena *a, HashAggSpec *s)
{
    HashAggSpec *m = cm_arena_alloc(a, sizeof *m);
    int n_max = s->n_keys + 3 * s->n_aggs;
    CmType *types = cm_arena_alloc(a, sizeof(CmType) * (size_t)(n_max ? n_max : 1));
    int *keys = cm_arena_alloc(a, sizeof(int) * (size_t)(s->n_keys + 1));
    int *in_col = cm_arena_alloc(a, sizeof(int) * (size_t)(s->n_aggs + 1));
    if (m == NULL || types == NULL || keys == NULL || in_col == NULL) {
        return CM_OOM;
    }
    *m = *s;
    m->mode = EX_AGG_FINAL;
    m->keys = keys;
    m->in_col = in_col;
    int n = 0;
    for (int k = 0; k < s->n_keys; k++) {
        keys[k] = k;
        types[n++] = s->key_types[k];
    }
    for (int i = 0; i < s->n_aggs; i++) {
        in_col[i] = n;
        if (keeps_values(&s->aggs[i])) {
            types[n++] = s->aggs[i].arg_type; /* the raw value */
            if (keeps_nulls(&s->aggs[i])) {
                types[n++] = cm_type_make(CM_T_INT32); /* 1 on a value's row (has_value) */
            }
        } else {
            n += ex_agg_partial_types(&s->aggs[i], &types[n]);
        }
    }
    m->n_state_cols = s->n_state_cols = n;
    m->state_types = s->state_types = types;
    m->merge = s->merge = m;
    return CM_OK;
}

/* Decides whether s's keys are stored packed, and where each key goes. */
static CmStatus plan_packing(CmArena *a, HashAggSpec *s)
{
    int bytes = 0;
    bool has_str = false;
    for (int k = 0; k < s->n_keys; k++) {
        switch ((CmTypeId)s->key_types[k].id) {
        case CM_T_BOOL:
        case CM_T_INT32:
        case CM_T_DATE:
        case CM_T_INT64:
        case CM_T_DECIMAL:
        case CM_T_TIME:
        case CM_T_TIMESTAMP:
            bytes += (int)cm_type_width(s->key_types[k]);
            break;
        case CM_T_VARCHAR:
            /* Declared short enough to fit its word (CHAR(1) flags, CHAR(2)
             * states, codes).  Its values are still packed one by one, so a
             * longer one (a declared length that does not hold) is interned;
             * keys of longer or no declared length stay column by column: with
             * many distinct long values, interning costs a second probe per
             * row (a GROUP BY of 1M long strings took 1.85x the time). */
            if (s->key_types[k].length < 0 || s->key_types[k].length > PACK_STR_SHORT) {
                return CM_OK;
            }
            bytes += (int)sizeof(uint64_t); /* a string word (PACK_STR_SHORT) */
            has_str = true;
            break;
        default:
            return CM_OK; /* equality is not that of the bytes */
        }
    }
    int total = bytes + (s->n_keys + 7) / 8;
    if (s->n_keys == 0 || total > PACK_MAX_WORDS * 8) {
        return CM_OK;
    }
    s->pack_off = cm_arena_alloc(a, sizeof(int) * (size_t)s->n_keys);
    s->pack_width = cm_arena_alloc(a, sizeof(int) * (size_t)s->n_keys);
    s->pack_is_str = has_str ? cm_arena_zalloc(a, sizeof(bool) * (size_t)s->n_keys) : NULL;
    if (s->pack_off == NULL || s->pack_width == NULL || (has_str && s->pack_is_str == NULL)) {
        return CM_OOM;
    }
    int off = 0;
    for (int k = 0; k < s->n_keys; k++) {
        bool is_str = s->key_types[k].id == CM_T_VARCHAR;
        s->pack_off[k] = off;
        s->pack_width[k] = is_str ? (int)sizeof(uint64_t) : (int)cm_type_width(s->key_types[k]);
        if (is_str) {
            s->pack_is_str[k] = true;
        }
        off += s->pack_width[k];
    }
    s->pack_null_off = bytes;
    s->pack_words = (total + 7) / 8;
    return CM_OK;
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
    s->find_col = -1;
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
    if (plan_packing(a, s) != CM_OK || (mode != EX_AGG_PARTIAL && build_merge(a, s) != CM_OK)) {
        goto oom;
    }
    for (int i = 0; i < n_aggs && mode == EX_AGG_SINGLE; i++) {
        bool quantile = aggs[i].fn == EX_AGG_QUANTILE_CONT || aggs[i].fn == EX_AGG_QUANTILE_DISC;
        if (n_keys > 0) {
            s->sorted_input = s->sorted_input || aggs[i].n_order > 0;
        } else if ((ex_agg_is_holistic(aggs[i].fn) && !(aggs[i].distinct && quantile)) ||
                   aggs[i].n_order > 0) {
            if (s->by_sorter == NULL &&
                (s->by_sorter = cm_arena_zalloc(a, sizeof(bool) * (size_t)n_aggs)) == NULL) {
                goto oom;
            }
            s->by_sorter[i] = true;
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

void ex_hash_agg_set_find_only(ExOp *op, int col)
{
    HashAggSpec *s = op->spec;
    CM_ASSERT(s->mode == EX_AGG_SINGLE && s->n_keys > 0 && !s->sorted_input);
    CM_ASSERT(op->vt == &HASH_AGG_VT);
    s->find_col = col;
}
