/*
 * hash_agg_int.h - shared by the files of the hash aggregate, and included by
 * no others (the engine sees executor/ops.h): hash_agg.c (group table,
 * updates, output, push/flush, lifecycle), hash_agg_fast.c (direct index,
 * typed update loops), hash_agg_spill.c (spilling) and hash_agg_holistic.c
 * (holistic results, sorters).  Ownership: HashAggSpec is built once in the
 * query arena by ex_hash_agg_new and read-only after, shared by all tasks.
 * AggLocal is one task's table, never shared (no lock), and owns what it
 * points to, freed in agg_local_fini: its GroupChunks (each owns its
 * chunks), slots, direct index, SeenSets (own their slots; strings in the
 * table's string arena), SpillLevels (own their files) and sorters.
 * AggState is plain data inside a chunk; its strings, lists and sketches are
 * in the string arena (a sorter's result in AggLocal.sorted_buf).  The static
 * inline helpers below run per row and must stay inline (hottest loop).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/hash.h"
#include "common/mem.h"
#include "common/value.h"
#include "executor/ops.h"
#include "executor/sort_run.h"
#include "shuffle/spill.h"
#include "storage/stats.h"

/* Partitions per spill level, and the hash bits that pick one (the top bits
 * first: the shuffle before a FINAL aggregate partitions on bits 32 and up,
 * the slots on the low bits). */
#define SPILL_BITS 4
#define SPILL_FANOUT (1 << SPILL_BITS)
/* Levels of spilling before a partition that still does not fit is an OOM. */
#define SPILL_MAX_LEVELS 5
/* The level from which DISTINCT and holistic values go to sorters
 * (hash_agg_deep.c) instead of another split by hash: a partition there holds
 * 1/4096 of the groups, so one that still does not fit is almost surely a
 * group too large for memory, which no split helps; its groups must fit. */
#define SPILL_DEEP_LEVEL 3
/* Groups a table starts with, and shrinks back to after it spills. */
#define INITIAL_GROUPS 256
/* The most 64-bit words a group's packed keys take (HashAggSpec.pack_words). */
#define PACK_MAX_WORDS 3
/* A packed string key is one word (pack_str_word): a string of at most
 * PACK_STR_SHORT bytes is its bytes (the rest zero) with its length in the top
 * byte; a longer one is PACK_STR_LONG in the top byte over its id in the
 * table's StrIntern, or, where it is only looked up and is not there,
 * PACK_STR_ABSENT over its h56 (a word no group has). */
#define PACK_STR_SHORT 7
#define PACK_STR_LONG 0xFFu
#define PACK_STR_ABSENT 0xFEu

/* At most this many groups, a batch's rows are partitioned by group once for
 * all its aggregates (hash_agg_fast.c few_partition).  Past it a group's rows
 * in a batch are too few to repay the sort: at 32, 30 groups of two
 * aggregates ran 10% slower than row by row (TPC-H SF 1 lineitem). */
#define AGG_FEW_GROUPS 16
/* AggLocal.few: no partition (other paths, or it cannot be made for the
 * batch); absorb_rows's batch, not partitioned yet (made on first use, so a
 * batch whose aggregates cannot use it never pays for it); made. */
enum { AGG_FEW_OFF, AGG_FEW_PENDING, AGG_FEW_READY };

typedef struct AggState {
    union {
        int64_t i;
        double d; /* also the running mean of the variances */
        CmStr s;
        CmList l;      /* list(): the values, in the table's string arena */
        CmInterval iv; /* min/max of an INTERVAL */
        uint64_t h[2]; /* min/max and the like of a DECIMAL128: a CmInt128 (cm_i128_get) */
    };
    int64_t n; /* values seen (non-NULL; first/last: rows), or summed partial counts */
    union {
        double m2;       /* variances: sum of squared deviations from the mean (Welford);
                            first/last: 1 when the value kept is NULL */
        CmValue *x;      /* arg_min/arg_max (the union holds y): x of that row, in the string
                            arena */
        StColStats *hll; /* approx_count_distinct: its sketch, in the string arena, or NULL */
        int64_t hi;      /* sum/avg of an exact type: the sum is hi * 2^64 + i (i wraps, and
                            each wrap moves hi), so that BIGINT values sum in 128 bits */
    };
} AggState;

typedef struct HashAggSpec HashAggSpec;

struct HashAggSpec {
    ExAggMode mode;
    int n_keys;
    int *keys;
    CmType *key_types;
    int n_aggs;
    ExAggSpec *aggs;
    int *in_col;       /* per aggregate: its (first) input column */
    int empty_gid_key; /* the grouping-set key of an empty set (), or -1 */
    int64_t empty_gid; /* ... and the set's number */
    /* SINGLE and FINAL: how spilled state rows are read back (mode FINAL, keys
     * first, then per aggregate its partial state, or for a DISTINCT one the
     * raw value), and their column types.  In the query arena. */
    HashAggSpec *merge;
    int n_state_cols;
    CmType *state_types;
    /* SINGLE without keys: per aggregate, true when its values go through a
     * sorter of its own instead of a SeenSet (string_agg, list, quantiles and
     * mode; not a DISTINCT quantile), so that they spill.  In the query arena. */
    bool *by_sorter;
    /* SINGLE with keys and an ORDER BY inside a call: the input arrives sorted
     * by (keys, that ORDER BY), so groups arrive one after the other; the
     * table emits its complete groups as it goes and never spills. */
    bool sorted_input;
    /* Keys that are all integers, dates, times, decimals or strings, together
     * with a null bit each in at most PACK_MAX_WORDS words, are stored packed
     * per group (AggLocal.packed) instead of column by column: a probe
     * compares one to three words of one cache line, where the columns cost a
     * miss and a memcmp each.  Key k's bytes are at byte pack_off[k] (zero
     * when NULL), the null bits from byte pack_null_off.  A string key (of
     * declared length PACK_STR_SHORT or less: plan_packing) is one word
     * (PACK_STR_SHORT), whose form is decided per value at run time, so a
     * value longer than its type declares is still right.  0 words: not
     * packed. */
    int pack_words;
    int pack_null_off;
    int *pack_off;     /* n_keys; in the query arena */
    int *pack_width;   /* n_keys: each key's bytes (1, 4 or 8); in the query arena */
    bool *pack_is_str; /* n_keys: a VARCHAR key, packed as a string word; in the
                          query arena, NULL when no key is one */
    /* SINGLE of INTERSECT and EXCEPT (ex_hash_agg_set_find_only): rows whose
     * INTEGER or BIGINT column find_col is not 0 (the right side's) only find
     * the group of their keys, and are dropped when the table has none; -1
     * when every row finds or starts its group. */
    int find_col;
};

/* Per-group storage that grows without moving: chunk 0 holds groups
 * [0, INITIAL_GROUPS), chunk c >= 1 holds [INITIAL_GROUPS << (c - 1),
 * INITIAL_GROUPS << c).  Each new chunk doubles the capacity, and growing
 * never copies what the groups hold (nor faults its pages in twice). */
#define MAX_CHUNKS 48
typedef struct GroupChunks {
    char *chunk[MAX_CHUNKS]; /* owned */
    int n_chunks;
    size_t width; /* bytes per group */
} GroupChunks;

static inline void *chunk_at(const GroupChunks *c, int64_t g)
{
    uint64_t q = (uint64_t)g / INITIAL_GROUPS;
    int k = q == 0 ? 0 : 64 - __builtin_clzll(q);
    int64_t base = k == 0 ? 0 : (int64_t)INITIAL_GROUPS << (k - 1);
    return c->chunk[k] + (size_t)(g - base) * c->width;
}

/* Each string longer than PACK_STR_SHORT among a table's packed keys, once:
 * its packed word holds its id here, so that two words are equal exactly when
 * their strings are.  Slots, entries and the strings' bytes are all in the
 * table's string arena, and emptied with it (the groups go too).  An entry
 * is added only for the key of a row that gets a group, so there are at most
 * as many as the groups' string keys. */
typedef struct StrEntry {
    CmStr str;    /* bytes in the string arena */
    uint64_t h56; /* cm_hash_bytes of the bytes, top byte cleared */
} StrEntry;

typedef struct StrIntern {
    uint32_t *slots;   /* entry + 1, 0 = empty; 2 * cap of them, by h56 */
    StrEntry *entries; /* ids 0..n */
    uint32_t n, cap;
} StrIntern;

typedef struct KeyCol {
    void *data;     /* cap values of the key's physical type */
    uint8_t *nulls; /* cap flags */
} KeyCol;

typedef struct Slot {
    uint32_t group; /* group + 1; 0 = empty */
    uint32_t tag;   /* lower 32 bits of the hash, which give the home slot (slot_home) */
} Slot;

/* The slot a hash probes from.  It comes from the bits a slot keeps, so that a
 * rehash reads the old slots in order, and each one's entry lands in one of
 * two runs of the new slots that advance with it, instead of fetching every
 * group's hash and missing the cache once per group. */
static inline uint64_t slot_home(uint64_t h, uint64_t mask)
{
    return (uint64_t)(uint32_t)h & mask;
}

/* The (group, value) pairs a DISTINCT aggregate has seen: open addressing over
 * entries that keep the value (strings copied into the agg's arena). */
typedef struct SeenEntry {
    uint64_t hash;  /* 0 = empty (real hashes are forced odd) */
    uint32_t group; /* groups fit 32 bits, as in Slot */
    uint32_t n;     /* quantiles and mode: rows with this value (a full count starts
                       another entry); otherwise the set's size when it came (arrival
                       order, for string_agg).  Beside `group`, so the entry stays 48 bytes */
    CmValue value;
} SeenEntry;

typedef struct SeenSet {
    SeenEntry *slots;
    uint64_t mask;
    int64_t n;
} SeenSet;

/* One level of spilling: a state and a raw file per partition. */
typedef struct SpillLevel {
    ShSpill *state[SPILL_FANOUT]; /* state rows (merge layout); owned, NULL until written */
    ShSpill *raw[SPILL_FANOUT]; /* input rows (the op's input layout); owned, NULL until written */
    int next;                   /* the next partition to aggregate at flush */
} SpillLevel;

typedef struct AggLocal {
    int64_t n_groups, cap_groups;
    KeyCol *keys;       /* n_keys; unused when the keys are packed */
    GroupChunks packed; /* per group pack_words words and then, at state_off, its
                           states, when the keys are packed: the state a row updates
                           is in the cache line its key was just compared in */
    GroupChunks states; /* per group n_aggs AggStates (one when there are none), when
                           the keys are not packed */
    size_t state_off;   /* packed keys: the states' offset in a group's record */
    GroupChunks hashes; /* per group its uint64_t hash, for rehashing and spilling */
    Slot *slots;
    uint64_t mask; /* slots - 1 */
    /* Direct index (ex_hash_agg_direct_choose, hash_agg_fast.c): one integer key whose values span
     * few more entries than the slots is its own entry, direct[key - direct_base], and then the
     * slots stay empty (still grown and reserved, so that leaving needs no memory). */
    uint32_t *direct;     /* group + 1 per key value, 0 = none; owned; NULL when hashing */
    uint64_t direct_base; /* the key of direct[0] (unsigned: offsets wrap) */
    uint64_t direct_n;    /* entries */
    uint32_t direct_null; /* group + 1 of the NULL key, 0 = none */
    bool has_range;       /* key_lo, key_hi: the least and greatest non-NULL key */
    int64_t key_lo, key_hi;
    uint64_t direct_retry; /* after leaving for a span too wide: slots before trying again */
    CmArena strings;       /* key and min/max strings */
    StrIntern interned;    /* packed string keys longer than PACK_STR_SHORT */
    uint32_t row_group[CM_BATCH_CAP];
    AggState *row_states[CM_BATCH_CAP]; /* row_group's groups' states (locate_states) */
    uint64_t row_hash[CM_BATCH_CAP];
    uint64_t row_key[CM_BATCH_CAP][PACK_MAX_WORDS]; /* packed keys of the batch's rows */
    bool find_only;                                 /* assign_groups starts no group: a row
                                                       without one gets NO_GROUP */
    uint32_t start_pos[CM_BATCH_CAP];               /* find_col: the rows that may start a group */
    uint32_t find_pos[CM_BATCH_CAP];                /* find_col: the rows that only find theirs */
    /* few_partition (hash_agg_fast.c): with at most AGG_FEW_GROUPS groups, the batch's
     * row positions by group, group g's at few_pos[few_start[g] .. few_start[g + 1]) */
    uint8_t few; /* AGG_FEW_OFF, AGG_FEW_PENDING or AGG_FEW_READY */
    int few_start[AGG_FEW_GROUPS + 1];
    uint32_t few_pos[CM_BATCH_CAP];
    CmBatch out;
    int64_t next_out; /* flush position */
    bool flushed_empty;
    SeenSet *seen; /* per aggregate, for DISTINCT ones; owned */
    /* memory */
    CmMemRes res;         /* what the table holds: arrays, slots, DISTINCT sets, strings */
    int64_t str_reserved; /* the part of res covering the string arena */
    int64_t max_bytes;    /* the most the table reserves before it spills: its slice of the
                             budget among the stage's tasks that run at once */
    bool draining;        /* PARTIAL: emitting the groups of a refused table */
    int resume_at;        /* PARTIAL: the row of the input batch to go on from after draining */
    /* spilling (SINGLE, FINAL) */
    const char *temp_dir; /* borrowed from the query's config */
    int64_t max_temp;
    bool spilling; /* the table takes no new groups; their rows go to levels[depth] */
    int depth;     /* spill levels the table's input went through */
    int n_levels;  /* levels holding files (a stack: deeper ones are aggregated first) */
    SpillLevel levels[SPILL_MAX_LEVELS];
    ShSpill *loading[2]; /* the partition's files being read at flush; owned */
    bool emitting;       /* flush: emitting the table */
    bool flush_started;
    int n_in_cols;     /* the input's columns, as raw rows spill them */
    CmType *in_types;  /* owned */
    CmBatch state_buf; /* state rows written out (merge layout) */
    CmBatch state_in;  /* state rows read back */
    CmBatch raw_buf;   /* raw rows read back; initialised at first use */
    bool has_raw_buf;
    uint32_t hit_pos[CM_BATCH_CAP];   /* positions 0..n of state rows being written */
    uint64_t hit_hash[CM_BATCH_CAP];  /* their groups' hashes */
    uint32_t miss_pos[CM_BATCH_CAP];  /* positions of raw rows being written */
    uint64_t miss_hash[CM_BATCH_CAP]; /* hashes of DISTINCT value rows being written */
    uint32_t route_pos[CM_BATCH_CAP]; /* rows ordered by partition */
    uint32_t slice_pos[CM_BATCH_CAP]; /* the rows of a slice of a refused batch */
    uint8_t route_part[CM_BATCH_CAP];
    /* by_sorter aggregates (ungrouped) */
    ExSorter **sorters; /* per aggregate, NULL for the others; owned */
    int64_t *sorted_n;  /* per aggregate: the non-NULL values added */
    char **sorted_buf;  /* per aggregate: string_agg's result, list's elements; owned */
    uint32_t sorter_pos[CM_BATCH_CAP]; /* the rows whose argument is not NULL */
    /* sorted_input: the rows of the batch from resume_at on */
    uint32_t sorted_pos[CM_BATCH_CAP];
    /* the deepest spill level (hash_agg_deep.c): DISTINCT and holistic values
     * go to a sorter per aggregate instead of the SeenSets */
    bool deep;
    bool replaying;     /* deep: DISTINCT values read back, each once: no SeenSet */
    ExSorter **deep_by; /* per aggregate, NULL for the others; owned */
    char *deep_buf;     /* a group's string_agg or list while it is read back; owned */
    int64_t deep_cap;   /* its bytes, reserved in res */
    char **deep_kept;   /* the groups' string_agg and list results, handed over from
                           deep_buf; owned, reserved in res, freed with the groups */
    int n_kept, cap_kept;
    ExQuery *query; /* borrowed: the sorters' reservations and temp_directory */
    ExOp *op;       /* borrowed: the op whose table this is (its sorters count on it) */
    uint32_t deep_pos[CM_BATCH_CAP];
} AggLocal;

/* ---- inline helpers --------------------------------------------------------- */

/* l->row_group of a find-only row whose group the table does not have. */
#define NO_GROUP UINT32_MAX

/* Rows between asking for a group's key and comparing it, and again between
 * asking for its slot and reading it: a miss takes longer than a handful of
 * rows' work, so fewer leaves the probe waiting. */
#define PREFETCH_AHEAD 16

/* Slices a refused batch takes, so that a table in a small budget (whose room
 * for a whole batch of new groups and DISTINCT values may be most of it)
 * still aggregates in memory. */
#define SLICE_ROWS 128

/* The aggregate keeps (group, value) entries in a SeenSet: DISTINCT ones and
 * the holistic ones. */
static inline bool keeps_values(const ExAggSpec *agg)
{
    return agg->distinct || ex_agg_is_holistic(agg->fn);
}

/* list keeps NULL values as elements (DuckDB's list, PostgreSQL's
 * array_agg); the others skip them.  Spilled, its values carry a mark
 * (build_merge): a NULL value row is then told from a group's state row. */
static inline bool keeps_nulls(const ExAggSpec *agg)
{
    return agg->fn == EX_AGG_LIST && !agg->skip_nulls;
}

/* Whether row p of `in`, laid out for x, holds a value of aggregate a: not
 * NULL, or for list any raw row and a marked state row (x the merge spec). */
static inline bool has_value(const HashAggSpec *x, int a, const CmBatch *in, uint32_t p)
{
    if (!keeps_nulls(&x->aggs[a])) {
        return !cm_vec_is_null(&in->cols[x->in_col[a]], p);
    }
    return x->mode != EX_AGG_FINAL || !cm_vec_is_null(&in->cols[x->in_col[a] + 1], p);
}

/* string_agg and list keep each row, in arrival order. */
static inline bool in_arrival_order(ExAggFn fn)
{
    return fn == EX_AGG_STRING_AGG || fn == EX_AGG_LIST;
}

/* Equal values share one entry with a count (quantiles and mode, unless
 * DISTINCT); string_agg and list keep each row, in order. */
static inline bool counts_values(const ExAggSpec *agg)
{
    return !agg->distinct && !in_arrival_order(agg->fn);
}

static inline AggState *group_states(const AggLocal *l, int64_t g)
{
    if (l->state_off > 0) {
        return (AggState *)((char *)chunk_at(&l->packed, g) + l->state_off);
    }
    return chunk_at(&l->states, g);
}

/* Before the update loops of a batch whose n rows have their groups in
 * l->row_group: each row's states, found once for all the aggregates (q1's
 * eight each found them again, a chunk lookup per row). */
static inline void locate_states(AggLocal *l, int n)
{
    for (int i = 0; i < n; i++) {
        l->row_states[i] = group_states(l, l->row_group[i]);
    }
}

static inline uint64_t *group_hash(const AggLocal *l, int64_t g)
{
    return chunk_at(&l->hashes, g);
}

static inline uint64_t *group_key(const AggLocal *l, int64_t g)
{
    return chunk_at(&l->packed, g);
}

/* The word of a longer string (str->len > PACK_STR_SHORT): PACK_STR_LONG
 * over its id, added to l->interned when not there and may_add (its bytes
 * copied; on OOM err is set and the word is PACK_STR_ABSENT's), else
 * PACK_STR_ABSENT over its h56.  hash_agg_fast.c. */
uint64_t ex_hash_agg_long_str_word(AggLocal *l, const CmStr *str, bool may_add, CmErr *err);

/* The packed word of the non-NULL string *str (PACK_STR_SHORT): a short one
 * is read from the bytes CmStr keeps inline and masked to its length. */
static inline uint64_t pack_str_word(AggLocal *l, const CmStr *str, bool may_add, CmErr *err)
{
    uint32_t len = str->len;
    if (len > PACK_STR_SHORT) {
        return ex_hash_agg_long_str_word(l, str, may_add, err);
    }
    uint64_t w;
    memcpy(&w, (const char *)str + offsetof(CmStr, prefix), sizeof w); /* inline: 12 bytes */
    w &= len == 0 ? 0 : ~0ULL >> (64 - 8 * len);
    return w | (uint64_t)len << 56;
}

/* The string a packed string word stands for (a short one made inline). */
static inline CmStr str_word_value(const AggLocal *l, uint64_t w)
{
    if (w >> 56 == PACK_STR_LONG) {
        return l->interned.entries[(uint32_t)w].str;
    }
    char bytes[sizeof w];
    memcpy(bytes, &w, sizeof w);
    return cm_str_make(bytes, (uint32_t)(w >> 56));
}

/* A packed string word's part of the key hash: from the string alone, so
 * that a longer string hashes alike interned (its id) or not (its h56). */
static inline uint64_t str_word_hash(const AggLocal *l, uint64_t w)
{
    if (w >> 56 == PACK_STR_LONG) {
        w = (uint64_t)PACK_STR_ABSENT << 56 | l->interned.entries[(uint32_t)w].h56;
    }
    return cm_hash_u64(w);
}

/* The hash of packed keys: for integer-like keys ex_hash_keys's, bit for bit
 * (hashing.c); for strings str_word_hash's.  Every row and group of a table
 * (and of its merge spec, packed alike) is hashed here, so that a group's
 * spilled rows and state meet in one partition. */
static inline uint64_t packed_hash(const HashAggSpec *s, const AggLocal *l, const uint64_t *key)
{
    const char *b = (const char *)key;
    uint64_t h = 0;
    for (int k = 0; k < s->n_keys; k++) {
        uint64_t hv;
        if (b[s->pack_null_off + k / 8] & (1 << (k % 8))) {
            hv = CM_HASH_NULL;
        } else if (s->pack_is_str != NULL && s->pack_is_str[k]) {
            uint64_t w;
            memcpy(&w, b + s->pack_off[k], 8);
            hv = str_word_hash(l, w);
        } else if (s->pack_width[k] == 1) {
            hv = cm_hash_u64((uint8_t)b[s->pack_off[k]]);
        } else if (s->pack_width[k] == 4) {
            int32_t x;
            memcpy(&x, b + s->pack_off[k], 4);
            hv = cm_hash_u64((uint64_t)(int64_t)x);
        } else {
            int64_t x;
            memcpy(&x, b + s->pack_off[k], 8);
            hv = cm_hash_u64((uint64_t)x);
        }
        h = k == 0 ? hv : cm_hash_combine(h, hv);
    }
    return h;
}

/* Group g's hash: kept per group, or for packed keys computed from them
 * (which saves the 8 bytes a group). */
static inline uint64_t group_hash_of(const HashAggSpec *s, const AggLocal *l, int64_t g)
{
    return s->pack_words > 0 ? packed_hash(s, l, group_key(l, g)) : *group_hash(l, g);
}

static inline void init_states(const HashAggSpec *s, AggState *st)
{
    /* Not even an empty memset without aggregates: st is then in memory never
     * written, and a masked store of no bytes to a page not yet touched costs
     * the processor a microcode assist (it was 40% of a UNION's CPU). */
    if (s->n_aggs > 0) {
        memset(st, 0, sizeof(AggState) * (size_t)s->n_aggs);
    }
}

/* An exact sum's 128-bit value (AggState.hi and .i). */
static inline CmInt128 sum_get(const AggState *st)
{
    return cm_wide_sum_get(st->i, st->hi);
}

static inline void sum_set(AggState *st, CmInt128 v)
{
    cm_wide_sum_set(&st->i, &st->hi, v);
}

/* st's exact sum plus x: i wraps and hi counts the wraps, so the int64 add
 * (and its overflow flag) is all the hot loop pays.  2^64 rows would be
 * needed to carry past 38 digits; a merge of partial sums checks that. */
static inline void sum_add_i64(AggState *st, int64_t x)
{
    cm_wide_sum_add(&st->i, &st->hi, x);
}

/* st's exact sum plus x.  On the way the sum may pass 38 digits and come back
 * (as DuckDB's HUGEINT sum may); past 128 bits it is an error, and a final
 * value past 38 digits is one too (emit_batch checks). */
static inline CmStatus sum_add_wide(AggState *st, CmInt128 x, CmErr *err)
{
    CmInt128 r;
    if (__builtin_add_overflow(sum_get(st), x, &r)) {
        return cm_err_set(err, CM_RUNTIME, -1, "overflow in SUM: the sum exceeds DECIMAL(38)");
    }
    sum_set(st, r);
    return CM_OK;
}

/* ---- hash_agg.c --------------------------------------------------------------- */

/* Empties the table and gives back all but its initial memory. */
CmStatus ex_hash_agg_table_shrink(const HashAggSpec *s, AggLocal *l, CmErr *err);
/* Empties the table like ex_hash_agg_table_shrink, but keeps the arrays (and
 * their reservation) of up to `want` groups, never more than it has: for a
 * table about to be filled again with about that many groups, whose arrays
 * given back only to be grown anew would make every page a fault under a
 * tight limit (a fresh page costs ~10 us on the machines measured). */
CmStatus ex_hash_agg_table_trim(const HashAggSpec *s, AggLocal *l, int64_t want, CmErr *err);
/* Empties the table, keeping its arrays (and what they reserve) for reuse. */
void ex_hash_agg_table_reset(const HashAggSpec *s, AggLocal *l);
/* Makes room (reserved) for n_groups more groups and n_values more values in
 * each DISTINCT set.  False when refused (err unset: the caller spills) or on
 * an error (err set); `must` turns a refusal into CM_OOM. */
bool ex_hash_agg_make_room(const HashAggSpec *s, AggLocal *l, int64_t n_groups, int64_t n_values,
                           bool must, CmErr *err);
/* Whether group g has the keys of the row at position p of `in`. */
bool ex_hash_agg_key_matches(const HashAggSpec *s, AggLocal *l, int64_t g, const CmBatch *in,
                             uint32_t p);
/* The hashes of the active rows of `in` into l->row_hash (and for packed keys
 * their keys into l->row_key). */
void ex_hash_agg_hash_rows(const HashAggSpec *s, AggLocal *l, const CmBatch *in);
/* Updates aggregate a of the groups in l->row_group (their states located,
 * locate_states) with the active rows of `in`. */
CmStatus ex_hash_agg_update_one(const HashAggSpec *s, AggLocal *l, int a, const CmBatch *in,
                                CmErr *err);
/* At most how many groups the active rows of `in` can start: all of them,
 * but not those that only find theirs (find_col), and none without keys. */
int64_t ex_hash_agg_max_new_groups(const HashAggSpec *s, const CmBatch *in);
/* Aggregates the active rows of `in`, laid out for spec x, into the table
 * (room made for ex_hash_agg_max_new_groups of them). */
CmStatus ex_hash_agg_absorb(const HashAggSpec *x, AggLocal *l, const CmBatch *in, CmErr *err);
/* Writes group g's keys as row `row` of out's first columns. */
void ex_hash_agg_emit_keys(const HashAggSpec *s, const AggLocal *l, int64_t g, CmBatch *out,
                           uint32_t row);
/* Writes group g as row `row` of out: final values, partial states (PARTIAL),
 * or state rows (as_state: partial states, NULL for DISTINCT aggregates). */
void ex_hash_agg_emit_group(const HashAggSpec *s, AggLocal *l, int64_t g, CmBatch *out,
                            uint32_t row, bool as_state);
/* Sets min/max-like state st to value p of v (strings and lists copied into
 * the table's string arena). */
CmStatus ex_hash_agg_set_minmax(AggState *st, const CmVec *v, uint32_t p, AggLocal *l, CmErr *err);
/* Whether two non-NULL values of one type are equal (as a SeenSet compares them). */
bool ex_hash_agg_same_value(const CmValue *x, const CmValue *y);

/* ---- hash_agg_fast.c ---------------------------------------------------------- */

/* Forgets the direct index and the key range (the groups are going). */
void ex_hash_agg_direct_clear(AggLocal *l);
void ex_hash_agg_direct_drop(AggLocal *l);
/* Back to hashing: the groups go into the (reserved, empty) slots.  Does
 * nothing without a direct index. */
void ex_hash_agg_direct_leave(const HashAggSpec *s, AggLocal *l);
/* Before a batch (its keys packed into l->row_key, room made): true when its
 * groups are found through the direct index, which it enters or grows. */
bool ex_hash_agg_direct_choose(const HashAggSpec *s, AggLocal *l, const CmBatch *in);
/* The group of every active row into l->row_group, through the direct index
 * (ex_hash_agg_direct_choose said yes). */
void ex_hash_agg_assign_direct(const HashAggSpec *s, AggLocal *l, const CmBatch *in);
/* l->find_only with a direct index (keys packed into l->row_key): the group of
 * every active row, or NO_GROUP, into l->row_group; nothing is added. */
void ex_hash_agg_find_direct(const HashAggSpec *s, AggLocal *l, const CmBatch *in);
/* Aggregate a over the batch's rows when it is count(*), count(x) or sum/avg
 * of a DOUBLE, BIGINT or DECIMAL without DISTINCT and its argument is not a
 * constant: true with *rc set (an overflow in err); false, *rc untouched,
 * for the others.  With l->few at AGG_FEW_PENDING, the first aggregate that
 * can use the partition by group makes it (hash_agg_fast.c). */
bool ex_hash_agg_update_fast(const HashAggSpec *s, AggLocal *l, int a, ExAggMode mode,
                             const CmVec *v, const CmVec *v2, bool final_count, const CmBatch *in,
                             CmStatus *rc, CmErr *err);

/* ---- hash_agg_spill.c --------------------------------------------------------- */

/* SINGLE, FINAL: aggregates `in` (laid out for x: the op's spec, or its merge
 * spec for state rows), spilling from the first refusal on; a refused batch
 * is tried in slices of SLICE_ROWS. */
CmStatus ex_hash_agg_consume(const HashAggSpec *x, AggLocal *l, const CmBatch *in, bool is_state,
                             CmErr *err);
/* Writes the table out as state rows to the partitions at level l->depth and
 * empties it (its memory stays reserved, for reuse). */
CmStatus ex_hash_agg_dump_table(const HashAggSpec *x, AggLocal *l, CmErr *err);
/* The next spilled partition to aggregate, deepest level first; false when
 * none is left. */
bool ex_hash_agg_next_partition(AggLocal *l, int *level, int *part);
/* Aggregates partition `part` of `level` into the emptied table, spilling a
 * level deeper what does not fit; each file is freed once read. */
CmStatus ex_hash_agg_load_partition(ExOp *op, AggLocal *l, int level, int part, CmErr *err);

/* ---- hash_agg_holistic.c ------------------------------------------------------ */

/* Before the table is emitted: each holistic aggregate's entries are sorted
 * by group and computed into the groups' states (reserved with cm_mem_need:
 * they cannot spill). */
CmStatus ex_hash_agg_finish_holistic(const HashAggSpec *s, AggLocal *l, CmErr *err);
/* Makes the sorter of every by_sorter aggregate (l->sorters, owned). */
CmStatus ex_hash_agg_sorters_init(ExOp *op, const ExTask *task, AggLocal *l, CmErr *err);
/* Hands the rows of `in` whose argument is not NULL (first, last: every row)
 * to each sorter. */
CmStatus ex_hash_agg_sorter_add(const HashAggSpec *s, AggLocal *l, const CmBatch *in, CmErr *err);
/* Reads aggregate a's sorter back in order into the one group's state, and
 * frees the sorter. */
CmStatus ex_hash_agg_finish_sorted(const HashAggSpec *s, AggLocal *l, int a, CmErr *err);

/* The streaming state of a holistic aggregate over one group's values as a
 * sorter gives them back in order (begin, take each, end). */
typedef struct SortedRead {
    int64_t total;    /* the group's non-NULL values */
    int64_t n_taken;  /* values taken (DISTINCT: distinct ones) */
    int64_t len, cap; /* string_agg: bytes written; capacity of the result buffer */
    int64_t lo, hi;   /* quantiles: the positions read */
    double x, y;      /* quantile_cont: the values there */
    CmValue prev;     /* the value before (DISTINCT, mode), its string in prev_buf */
    bool has_prev;
    char *prev_buf, *best_buf; /* owned by the caller, kept by begin */
    int64_t prev_cap, best_cap;
    char *valid;       /* list: a bit per element taken, set when not NULL; reserved in res,
                          owned by the caller, kept by begin */
    int64_t valid_cap; /* its bytes */
    bool any_null;     /* list: a NULL element was taken */
    CmValue best;      /* mode: the value of the longest run so far, its string in best_buf */
    int64_t best_n, run_n;
} SortedRead;

/* Sets element k of list block d (len elements of width w, has_nulls) valid. */
static inline void list_set_valid(char *d, uint32_t len, size_t w, uint32_t k)
{
    uint64_t *bits = (uint64_t *)(d + cm_list_bits_off(len, w));
    bits[k >> 6] |= 1ULL << (k & 63);
}

/* qsort order of SeenEntry pointers: by group, then arrival (string_agg and
 * list number each row's entry as it came). */
int ex_hash_agg_by_group_arrival(const void *pa, const void *pb);
/* *dst = v, a string copied into the owned, unreserved buffer (*buf, *cap)
 * so that it outlives the sorter's batch it came in. */
CmStatus ex_hash_agg_keep_value(AggLocal *l, CmValue *dst, const CmValue *v, char **buf,
                                int64_t *cap, CmErr *err);
/* Starts r on a group of `total` values (its buffers and cap kept). */
void ex_hash_agg_sorted_begin(const ExAggSpec *agg, int64_t total, SortedRead *r);
/* Takes value v (not NULL) of agg, in sorted order: string_agg's string and
 * list's elements grow in *buf (reserved), a quantile_disc's value goes to st. */
CmStatus ex_hash_agg_sorted_take(const ExAggSpec *agg, AggLocal *l, AggState *st, char **buf,
                                 SortedRead *r, const CmValue *v, CmErr *err);
/* The group's result into st (string_agg and list pointing into *buf, which
 * list's bitmap may grow). */
CmStatus ex_hash_agg_sorted_end(const ExAggSpec *agg, AggLocal *l, AggState *st, char **buf,
                                SortedRead *r, CmErr *err);

/* ---- hash_agg_deep.c ---------------------------------------------------------- */

/* Whether every DISTINCT and holistic aggregate of s (at least one) can take
 * its values from a sorter at the deepest spill level. */
bool ex_hash_agg_deep_fits(const HashAggSpec *s);
/* Makes the sorters of the deepest level (l->deep_by) and enters it. */
CmStatus ex_hash_agg_deep_begin(ExOp *op, AggLocal *l, CmErr *err);
/* A sorted-input table refused room for its groups' values: enters the deep
 * level with the values its SeenSets hold handed to the sorters (in arrival
 * order), and the sets freed. */
CmStatus ex_hash_agg_deep_adopt(const HashAggSpec *s, AggLocal *l, CmErr *err);
/* Deep: hands the keys and non-NULL value of aggregate a of the active rows
 * of `in` (laid out for x; their groups located) to its sorter. */
CmStatus ex_hash_agg_deep_add(const HashAggSpec *x, AggLocal *l, int a, const CmBatch *in,
                              CmErr *err);
/* Deep, before the table is emitted: reads each sorter back in (keys, value)
 * order into the groups' states, frees the sorters and leaves the level. */
CmStatus ex_hash_agg_deep_finish(const HashAggSpec *s, AggLocal *l, CmErr *err);
/* Frees what the deepest level holds (on every path). */
void ex_hash_agg_deep_free(const HashAggSpec *s, AggLocal *l);
/* Frees the groups' results kept by the deepest level (the groups are going;
 * their reservation is the caller's to give back). */
void ex_hash_agg_deep_release(AggLocal *l);
/* The group of every active row of `in` (laid out for x) into l->row_group,
 * NO_GROUP where the table has none; nothing is added or updated. */
CmStatus ex_hash_agg_find_groups(const HashAggSpec *x, AggLocal *l, const CmBatch *in, CmErr *err);
