/*
 * hash_agg_fast.c - the hash aggregate's fast paths (hash_agg_int.h).
 *
 * The direct index: a table whose one integer key spans few more values than
 * it has slots finds a row's group at direct[key - direct_base], with no hash
 * and no key to compare.  Invariant: while l->direct is set, every group is
 * in it (or in direct_null) and the slots are empty; leaving puts the groups
 * back into the slots, which stay grown and reserved so that leaving needs no
 * memory.  The typed update loops: count and sum/avg without DISTINCT in
 * loops of their own, which update_one tries before its general row loop.
 * And the strings of packed string keys too long for their word (StrIntern).
 * All run on one task's table (AggLocal); nothing here is shared.
 */
#include <string.h>

#include "common/alloc.h"
#include "executor/hash_agg_int.h"

/* Frees the direct index, with the NULL key's entry, and gives back its
 * memory. */
static void direct_free(AggLocal *l)
{
    if (l->direct != NULL) {
        cm_free(l->direct);
        l->direct = NULL;
        cm_mem_shrink(&l->res, (int64_t)(l->direct_n * sizeof(uint32_t)));
    }
    l->direct_n = 0;
    l->direct_null = 0;
}

/* Forgets the direct index and the key range (the groups are going). */
void ex_hash_agg_direct_drop(AggLocal *l)
{
    direct_free(l);
    l->has_range = false;
    l->direct_retry = 0;
}

/* Empties the direct index, keeping it and the key range (the groups are
 * going, the table stays): a table that empties and fills again, as a
 * partial aggregate does whenever memory refuses it, would otherwise make
 * and fault in its index anew every time. */
void ex_hash_agg_direct_clear(AggLocal *l)
{
    if (l->direct != NULL) {
        memset(l->direct, 0, sizeof(uint32_t) * (size_t)l->direct_n);
    }
    l->direct_null = 0;
}

/* ---- direct index ------------------------------------------------------------ */

/* Direct entries allowed per slot the table has (slots are 8 bytes, entries
 * 4: the index takes at most twice the slots' bytes), and at least. */
#define DIRECT_PER_SLOT 4
#define DIRECT_MIN_ENTRIES 4096
/* Entries (and four times the groups) up to which the index and the groups'
 * records are taken to be in the cache. */
#define DIRECT_NEAR 16384

/* Whether spec s may index its groups directly: one integer key. */
static bool direct_fits_spec(const HashAggSpec *s)
{
    return s->n_keys == 1 && s->pack_words > 0 && s->pack_is_str == NULL &&
           (s->pack_width[0] == 1 || s->pack_width[0] == 4 || s->pack_width[0] == 8);
}

static inline bool packed_is_null(const HashAggSpec *s, const uint64_t *key)
{
    return ((const char *)key)[s->pack_null_off] & 1;
}

/* The (only) key of packed key words, widened. */
static inline int64_t packed_int(const HashAggSpec *s, const uint64_t *key)
{
    if (s->pack_width[0] == 1) {
        return *(const uint8_t *)key;
    }
    if (s->pack_width[0] == 4) {
        int32_t x;
        memcpy(&x, key, 4);
        return x;
    }
    int64_t x;
    memcpy(&x, key, 8);
    return x;
}

/* The entry of group g (with its key packed) in the index or the slots. */
static uint32_t *direct_entry(const HashAggSpec *s, AggLocal *l, const uint64_t *key)
{
    if (packed_is_null(s, key)) {
        return &l->direct_null;
    }
    return &l->direct[(uint64_t)packed_int(s, key) - l->direct_base];
}

/* Back to hashing: the groups go into the (reserved, empty) slots. */
void ex_hash_agg_direct_leave(const HashAggSpec *s, AggLocal *l)
{
    if (l->direct == NULL) {
        return;
    }
    direct_free(l);
    memset(l->slots, 0, sizeof(Slot) * (size_t)(l->mask + 1));
    for (int64_t g = 0; g < l->n_groups; g++) {
        uint64_t h = packed_hash(s, l, group_key(l, g));
        uint64_t idx = slot_home(h, l->mask);
        while (l->slots[idx].group != 0) {
            idx = (idx + 1) & l->mask;
        }
        l->slots[idx].group = (uint32_t)(g + 1);
        l->slots[idx].tag = (uint32_t)h;
    }
}

/*
 * Decides, before a batch (keys packed into l->row_key, room made), whether
 * its groups are found through the direct index: true when every non-NULL key
 * the table has seen lies within DIRECT_PER_SLOT entries per slot and the
 * index, grown to cover them, is granted its memory.  Otherwise the table
 * hashes (leaving the index if it had one); after a span too wide it waits
 * for the slots to double before trying again.  The index grows at least
 * twofold, its slack split around the keys.
 */
bool ex_hash_agg_direct_choose(const HashAggSpec *s, AggLocal *l, const CmBatch *in)
{
    if (!direct_fits_spec(s)) {
        return false;
    }
    int64_t was_lo = l->key_lo, was_hi = l->key_hi; /* with has_range */
    int64_t lo = l->has_range ? l->key_lo : INT64_MAX;
    int64_t hi = l->has_range ? l->key_hi : INT64_MIN;
    for (int i = 0; i < in->n_rows; i++) {
        if (!packed_is_null(s, l->row_key[i])) {
            int64_t k = packed_int(s, l->row_key[i]);
            lo = k < lo ? k : lo;
            hi = k > hi ? k : hi;
        }
    }
    if (lo > hi) {
        return l->direct != NULL; /* NULL keys only */
    }
    l->has_range = true;
    l->key_lo = lo;
    l->key_hi = hi;
    uint64_t n_slots = l->mask + 1;
    uint64_t limit = n_slots * DIRECT_PER_SLOT;
    limit = limit > DIRECT_MIN_ENTRIES ? limit : DIRECT_MIN_ENTRIES;
    uint64_t span_m1 = (uint64_t)hi - (uint64_t)lo; /* entries - 1 */
    if (span_m1 >= limit) {
        ex_hash_agg_direct_leave(s, l);
        l->direct_retry = n_slots * 2;
        return false;
    }
    uint64_t span = span_m1 + 1;
    if (l->direct != NULL && (uint64_t)lo - l->direct_base < l->direct_n &&
        (uint64_t)hi - l->direct_base < l->direct_n) {
        return true;
    }
    if (l->direct == NULL && n_slots < l->direct_retry) {
        return false;
    }
    uint64_t n = l->direct_n * 2 > span ? l->direct_n * 2 : span;
    n = n < limit ? n : limit;
    uint64_t base = (uint64_t)lo - (n - span) / 2;
    int64_t more = (int64_t)((n - l->direct_n) * sizeof(uint32_t));
    uint32_t *d = NULL;
    if (l->res.held + more <= l->max_bytes && cm_mem_grow(&l->res, more)) {
        d = cm_calloc((size_t)n, sizeof(uint32_t));
        if (d == NULL) {
            cm_mem_shrink(&l->res, more);
        }
    }
    if (d == NULL) {
        ex_hash_agg_direct_leave(s, l);
        l->direct_retry = n_slots * 2;
        return false;
    }
    if (l->direct != NULL) {
        /* the entries of the keys seen before: [was_lo, was_hi] is within [lo, hi] */
        memcpy(d + ((uint64_t)was_lo - base), l->direct + ((uint64_t)was_lo - l->direct_base),
               sizeof(uint32_t) * (size_t)((uint64_t)was_hi - (uint64_t)was_lo + 1));
        cm_free(l->direct);
    }
    bool entering = l->direct == NULL;
    l->direct = d;
    l->direct_n = n;
    l->direct_base = base;
    if (entering) {
        for (int64_t g = 0; g < l->n_groups; g++) {
            *direct_entry(s, l, group_key(l, g)) = (uint32_t)(g + 1);
        }
        memset(l->slots, 0, sizeof(Slot) * (size_t)(l->mask + 1));
    }
    return true;
}

/* assign_groups through the direct index (ex_hash_agg_direct_choose said
 * yes): no hash and no key to compare.  With many groups the index outgrows
 * the cache too, so as in assign_packed a row's entry is fetched well ahead,
 * and then its group's record, for the updates that follow. */
void ex_hash_agg_assign_direct(const HashAggSpec *s, AggLocal *l, const CmBatch *in)
{
    int nw = s->pack_words;
    /* A small index and few groups stay in the cache: fetching ahead would
     * only cost (a GROUP BY of 64 groups took 8% longer with it). */
#if CM_BATCH_CAP > 2 * PREFETCH_AHEAD
    bool is_far = l->direct_n > DIRECT_NEAR || l->n_groups > DIRECT_NEAR / 4;
#endif
    for (int i = 0; i < in->n_rows; i++) {
#if CM_BATCH_CAP > 2 * PREFETCH_AHEAD
        if (is_far && i + 2 * PREFETCH_AHEAD < in->n_rows) {
            __builtin_prefetch(direct_entry(s, l, l->row_key[i + 2 * PREFETCH_AHEAD]));
        }
        if (is_far && i + PREFETCH_AHEAD < in->n_rows) {
            uint32_t ahead = *direct_entry(s, l, l->row_key[i + PREFETCH_AHEAD]);
            if (ahead != 0) {
                __builtin_prefetch(group_key(l, ahead - 1));
            }
        }
#endif
        const uint64_t *key = l->row_key[i];
        uint32_t *e = direct_entry(s, l, key);
        if (*e == 0) {
            CM_ASSERT(l->n_groups < l->cap_groups); /* make_room grew the arrays */
            int64_t g = l->n_groups++;
            memcpy(group_key(l, g), key, sizeof(uint64_t) * (size_t)nw);
            init_states(s, group_states(l, g));
            *e = (uint32_t)(g + 1);
        }
        l->row_group[i] = *e - 1;
    }
}

void ex_hash_agg_find_direct(const HashAggSpec *s, AggLocal *l, const CmBatch *in)
{
    for (int i = 0; i < in->n_rows; i++) {
        const uint64_t *key = l->row_key[i];
        uint32_t e = l->direct_null;
        if (!packed_is_null(s, key)) {
            uint64_t at = (uint64_t)packed_int(s, key) - l->direct_base;
            e = at < l->direct_n ? l->direct[at] : 0;
        }
        l->row_group[i] = e != 0 ? e - 1 : NO_GROUP;
    }
}

/* ---- long strings of packed keys ------------------------------------------------ */

/* Entries a StrIntern starts with. */
#define INTERN_INITIAL 64

/* The id of the string with bytes (data, len) and h56 in t, or -1. */
static int64_t intern_find(const StrIntern *t, const char *data, uint32_t len, uint64_t h56)
{
    if (t->n == 0) {
        return -1;
    }
    uint64_t mask = 2 * (uint64_t)t->cap - 1;
    for (uint64_t i = h56 & mask;; i = (i + 1) & mask) {
        uint32_t e = t->slots[i];
        if (e == 0) {
            return -1;
        }
        const StrEntry *x = &t->entries[e - 1];
        if (x->h56 == h56 && x->str.len == len && memcmp(cm_str_data(&x->str), data, len) == 0) {
            return e - 1;
        }
    }
}

static void intern_slot(StrIntern *t, uint32_t id)
{
    uint64_t mask = 2 * (uint64_t)t->cap - 1;
    uint64_t i = t->entries[id].h56 & mask;
    while (t->slots[i] != 0) {
        i = (i + 1) & mask;
    }
    t->slots[i] = id + 1;
}

/* Doubles t's entries and slots, in arena a (the old arrays stay there until
 * it is reset: at most as much again). */
static CmStatus intern_grow(StrIntern *t, CmArena *a, CmErr *err)
{
    uint32_t cap = t->cap ? 2 * t->cap : INTERN_INITIAL;
    StrEntry *entries = cm_arena_alloc(a, sizeof(StrEntry) * cap);
    uint32_t *slots = cm_arena_zalloc(a, sizeof(uint32_t) * 2 * (size_t)cap);
    if (entries == NULL || slots == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory in hash aggregate");
    }
    if (t->n > 0) {
        memcpy(entries, t->entries, sizeof(StrEntry) * t->n);
    }
    t->entries = entries;
    t->slots = slots;
    t->cap = cap;
    for (uint32_t id = 0; id < t->n; id++) {
        intern_slot(t, id);
    }
    return CM_OK;
}

uint64_t ex_hash_agg_long_str_word(AggLocal *l, const CmStr *str, bool may_add, CmErr *err)
{
    StrIntern *t = &l->interned;
    const char *data = cm_str_data(str);
    uint64_t h56 = cm_hash_bytes(data, str->len) & (~0ULL >> 8);
    uint64_t absent = (uint64_t)PACK_STR_ABSENT << 56 | h56;
    int64_t id = intern_find(t, data, str->len, h56);
    if (id < 0 && may_add) {
        if (t->n == t->cap && intern_grow(t, &l->strings, err) != CM_OK) {
            return absent;
        }
        CmStr copy = cm_str_copy(&l->strings, str, err);
        if (err->code != CM_OK) {
            return absent;
        }
        id = t->n++;
        t->entries[id] = (StrEntry){.str = copy, .h56 = h56};
        intern_slot(t, (uint32_t)id);
    }
    return id < 0 ? absent : (uint64_t)PACK_STR_LONG << 56 | (uint64_t)id;
}

/* ---- typed update loops ------------------------------------------------------- */

/* With many groups every row's state misses the cache: EACH_ROW_STATE fetches
 * that of the row 8 ahead (in batches that have one, as update_one). */
#if CM_BATCH_CAP > 8
#define PREFETCH_STATE_AHEAD(i)                                                                    \
    if ((i) + 8 < in->n_rows) {                                                                    \
        __builtin_prefetch(l->row_states[(i) + 8] + a);                                            \
    }
#else
#define PREFETCH_STATE_AHEAD(i)
#endif

/* The rows of `in` against their groups' states of aggregate a; BODY reads st
 * (the state) and p (the row's position). */
#define EACH_ROW_STATE(BODY)                                                                       \
    for (int i = 0; i < in->n_rows; i++) {                                                         \
        PREFETCH_STATE_AHEAD(i)                                                                    \
        AggState *st = l->row_states[i] + a;                                                       \
        uint32_t p = cm_batch_pos(in, i);                                                          \
        BODY                                                                                       \
    }

/* Without GROUP BY every row updates the one state.  Through the state's
 * pointer each row is a load and a store the next row waits for (the values
 * may alias it, so the compiler keeps it in memory); here the state is read
 * into locals, the batch added to them in the same order (the same sums,
 * bit for bit), and written back once.  An ungrouped sum of 6M DECIMALs
 * took about a third of the time this way. */
static bool update_one_state(AggState *st, ExAggFn fn, ExAggMode mode, const CmVec *v,
                             const CmVec *v2, bool final_count, const CmBatch *in)
{
    int64_t n = st->n;
    int rows = in->n_rows;
    bool sum = fn == EX_AGG_SUM || fn == EX_AGG_AVG;
    const int64_t *c = v2 != NULL ? v2->data : NULL;
    if (v == NULL) {
        n += rows;
    } else if (final_count || (fn == EX_AGG_COUNT && mode != EX_AGG_FINAL)) {
        const int64_t *x = v->data;
        for (int i = 0; i < rows; i++) {
            uint32_t p = cm_batch_pos(in, i);
            n += cm_vec_is_null(v, p) ? 0 : final_count ? x[p] : 1;
        }
    } else if (sum && v->type.id == CM_T_DOUBLE) {
        const double *x = v->data;
        double d = st->d;
        for (int i = 0; i < rows; i++) {
            uint32_t p = cm_batch_pos(in, i);
            if (!cm_vec_is_null(v, p)) {
                d += x[p];
                n += c != NULL ? c[p] : 1;
            }
        }
        st->d = d;
    } else if (sum && (v->type.id == CM_T_INT64 || v->type.id == CM_T_DECIMAL)) {
        const int64_t *x = v->data;
        int64_t lo = st->i, hi = st->hi;
        for (int i = 0; i < rows; i++) {
            uint32_t p = cm_batch_pos(in, i);
            if (!cm_vec_is_null(v, p)) {
                cm_wide_sum_add(&lo, &hi, x[p]);
                n += c != NULL ? c[p] : 1;
            }
        }
        st->i = lo;
        st->hi = hi;
    } else {
        return false;
    }
    st->n = n;
    return true;
}

/* With few groups (TPC-H q1's four) the rows of a batch take turns at the
 * same few states: in EACH_ROW_STATE each update loads a state pointer, then
 * the state, which waits for the store of the row before.  So the rows are
 * put in order of their group once per batch (a counting sort), and each
 * aggregate adds a group's values in a register and its state once. */
static void few_partition(AggLocal *l, const CmBatch *in)
{
    l->few = AGG_FEW_OFF;
    if (l->n_groups > AGG_FEW_GROUPS) {
        return;
    }
    const int rows = in->n_rows;
    const uint32_t *restrict grp = l->row_group;
    int count[AGG_FEW_GROUPS + 1] = {0};
    for (int i = 0; i < rows; i++) {
        if (grp[i] >= AGG_FEW_GROUPS) { /* NO_GROUP */
            return;
        }
        count[grp[i] + 1]++;
    }
    int at[AGG_FEW_GROUPS];
    l->few_start[0] = 0;
    for (int g = 0; g < AGG_FEW_GROUPS; g++) {
        at[g] = l->few_start[g];
        l->few_start[g + 1] = l->few_start[g] + count[g + 1];
    }
    const uint32_t *restrict sel = in->sel;
    uint32_t *restrict pos = l->few_pos;
    for (int i = 0; i < rows; i++) {
        pos[at[grp[i]]++] = sel != NULL ? sel[i] : (uint32_t)i;
    }
    l->few = AGG_FEW_READY;
}

/* Aggregate a over l's partition (few_partition), of values
 * without NULLs.  Counts and exact sums only: a DOUBLE sum would change with
 * the order of its additions.  x: the values (NULL: each row counts one);
 * x_counts: x holds counts to add (a final count); c: the partial counts of
 * a final avg, or NULL. */
static void update_few(AggLocal *l, int a, const int64_t *restrict x, bool x_counts,
                       const int64_t *restrict c)
{
    for (int64_t g = 0; g < l->n_groups; g++) {
        const uint32_t *restrict pos = l->few_pos + l->few_start[g];
        const int m = l->few_start[g + 1] - l->few_start[g];
        if (m == 0) {
            continue;
        }
        AggState *st = group_states(l, g) + a;
        int64_t n = x_counts || c != NULL ? 0 : m;
        if (x == NULL) {
            st->n += n;
            continue;
        }
        if (x_counts) {
            for (int j = 0; j < m; j++) {
                n += x[pos[j]];
            }
            st->n += n;
            continue;
        }
        CmInt128 sum = 0;
        for (int j = 0; j < m; j++) {
            sum += x[pos[j]];
        }
        for (int j = 0; c != NULL && j < m; j++) {
            n += c[pos[j]];
        }
        st->n += n;
        sum_set(st, sum_get(st) + sum);
    }
}

/* count(*), count(x) and sum/avg of a DOUBLE, BIGINT or DECIMAL without DISTINCT
 * (PageRank's sum, TPC-DS's sums and counts) in loops of their own: update_one's
 * row loop tests a dozen cases per row.  The same state changes as there.  False
 * when aggregate a is not one of these; *rc is then untouched. */
bool ex_hash_agg_update_fast(const HashAggSpec *s, AggLocal *l, int a, ExAggMode mode,
                             const CmVec *v, const CmVec *v2, bool final_count, const CmBatch *in,
                             CmStatus *rc, CmErr *err)
{
    ExAggFn fn = s->aggs[a].fn;
    if (s->aggs[a].distinct) {
        return false;
    }
    *rc = CM_OK;
    if (s->n_keys == 0 && (v == NULL || v->kind != CM_VEC_CONST) && in->n_rows > 0 &&
        update_one_state(group_states(l, l->row_group[0]) + a, fn, mode, v, v2, final_count, in)) {
        return true;
    }
    bool sum = fn == EX_AGG_SUM || fn == EX_AGG_AVG;
    if (v == NULL || (v->kind != CM_VEC_CONST && v->validity == NULL)) {
        bool is_count = v == NULL || (fn == EX_AGG_COUNT && mode != EX_AGG_FINAL);
        bool is_exact = v != NULL && (v->type.id == CM_T_INT64 || v->type.id == CM_T_DECIMAL);
        const int64_t *c = v2 != NULL && v2->validity == NULL ? v2->data : NULL;
        const int64_t *x = v != NULL ? v->data : NULL;
        if (l->few != AGG_FEW_OFF &&
            (is_count || final_count || (sum && is_exact && (v2 == NULL || c != NULL)))) {
            if (l->few == AGG_FEW_PENDING) {
                few_partition(l, in);
            }
            if (l->few == AGG_FEW_READY) {
                update_few(l, a, is_count ? NULL : x, final_count, c);
                return true;
            }
        }
    }
    if (v == NULL) {
        EACH_ROW_STATE(st->n++; (void)p;)
        return true;
    }
    if (v->kind == CM_VEC_CONST) {
        return false;
    }
    if (final_count) {
        const int64_t *x = v->data;
        EACH_ROW_STATE(if (!cm_vec_is_null(v, p)) { st->n += x[p]; })
    } else if (fn == EX_AGG_COUNT && mode != EX_AGG_FINAL) {
        EACH_ROW_STATE(st->n += !cm_vec_is_null(v, p);)
    } else if (sum && v->type.id == CM_T_DOUBLE) {
        const double *x = v->data;
        const int64_t *c = v2 != NULL ? v2->data : NULL;
        EACH_ROW_STATE(if (!cm_vec_is_null(v, p)) {
            st->d += x[p];
            st->n += c != NULL ? c[p] : 1;
        })
    } else if (sum && (v->type.id == CM_T_INT64 || v->type.id == CM_T_DECIMAL)) {
        const int64_t *x = v->data;
        const int64_t *c = v2 != NULL ? v2->data : NULL;
        EACH_ROW_STATE(if (!cm_vec_is_null(v, p)) {
            sum_add_i64(st, x[p]);
            st->n += c != NULL ? c[p] : 1;
        })
    } else if (sum && v->type.id == CM_T_DECIMAL128) { /* partial sums, or wide values */
        const char *x = v->data;
        const int64_t *c = v2 != NULL ? v2->data : NULL;
        EACH_ROW_STATE(if (!cm_vec_is_null(v, p)) {
            if (sum_add_wide(st, cm_i128_get(x + 16 * (size_t)p), err) != CM_OK) {
                *rc = err->code;
                return true;
            }
            st->n += c != NULL ? c[p] : 1;
        })
    } else {
        return false;
    }
    return true;
}
