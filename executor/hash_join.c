/*
 * hash_join.c - hash join of the pipeline's rows (probe) against the output of
 * a finished stage (build); with no keys it is a nested-loop join.
 *
 * Design: the build side is read from its shuffle into an ExResult (compacted
 * batches) and indexed by chains: heads[hash & mask] -> first row, and each
 * row's JoinRow (key or hash, batch, position) -> following row, in build
 * order; one integer key whose values span no more than the slots (or, when
 * the memory is granted, no more than 2^17 values: widen_direct) is its own
 * slot (key - least key; choose_direct), and the probe hashes nothing.
 * Rows with a NULL key are stored (an outer join still returns them) but
 * never chained.  Broadcast: one table, shared
 * read-only, built by the tasks that start while it is being built (each
 * decodes whole maps of the build shuffle; the last indexes, in map order;
 * see shared_table).  A broadcast table that turns out too big (past twice
 * broadcast_bytes, or refused by the memory manager) is dropped, and every
 * task then joins its probe rows with the whole build side in grace mode
 * (below): the join degrades into a spilling one instead of failing.  A
 * nested loop (no keys) is broadcast at any size and goes to grace mode only
 * when refused; there every row is in one class, joined in blocks.
 * Partitioned: each
 * task builds its own from its partition, so FULL joins can track which build
 * rows matched without locks.
 * Probing an input batch runs in two phases: candidate pairs (probe row,
 * build row) are gathered up to a batch, the residual predicate filters them,
 * and matched flags are set; then the rows that depend on the flags (unmatched
 * probe rows, semi/anti selections, marks) are emitted.  Pairs that name each
 * probe row once pass the probe columns through by reference (assemble_by_ref);
 * a cross join emits a build row against the whole probe batch (cross_next).
 * A nested loop with bounds (ExJoinSpec.bounds) is a range join: the build
 * rows sorted on the first bound's column, each probe row pairs with the
 * rows its bounds leave (range_index, bound_range, gather_range_pairs).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "executor/hashing.h"
#include "executor/ops.h"
#include "shuffle/spill.h"

/* What a probe reads of a build row, in one record: following a chain
 * compares `key` and moves to `next`, and a match finds the row's values by
 * `ref`, its batch and its position there in one word.  As separate arrays
 * these were a cache miss each per candidate on a table bigger than the
 * cache; together they are one.  Batch and position in one word make the
 * record 16 bytes instead of 24: four to a cache line, and 8 MB less for a
 * build side of 1M rows (PageRank's, which the aggregate after it needs). */
typedef struct JoinRow {
    int64_t key;  /* the integer key (JoinTable.int_keys), else the row's hash */
    int32_t next; /* next row in the chain, -1 at the end */
    uint32_t ref; /* batch << REF_POS_BITS | position in the batch (row_ref) */
} JoinRow;

/* Bits of a position in a batch of CM_BATCH_CAP rows. */
#define REF_POS_BITS                                                                               \
    (CM_BATCH_CAP <= 4 ? 2 : CM_BATCH_CAP <= 256 ? 8 : CM_BATCH_CAP <= 2048 ? 11 : 16)
#define REF_MAX_BATCHES ((int64_t)1 << (32 - REF_POS_BITS))
_Static_assert(CM_BATCH_CAP <= (1 << REF_POS_BITS), "a batch position fits REF_POS_BITS");

static inline uint32_t row_ref(int bi, int pos)
{
    return (uint32_t)bi << REF_POS_BITS | (uint32_t)pos;
}

typedef struct JoinTable {
    int n_batches, cap_batches;
    CmBatch **batches; /* build rows, one batch per shuffle block as decoded; owned */
    int64_t n_rows;
    uint64_t *hashes; /* per row, for indexing */
    JoinRow *rows;    /* per row (index_prepare) */
    int32_t *heads;   /* per slot: first row, -1 when empty (rows < 2^31: index_prepare) */
    uint64_t mask;
    bool has_null_key; /* some build row has a NULL key (IN semantics) */
    bool int_keys;     /* JoinRow.key is the key: one integer column compared by SQL '='
                          (the fast path); otherwise it is the hash */
    bool direct;       /* int_keys whose range fits the slots: a key's slot is key - key_min
                          (table_slot), not its hash's low bits */
    int64_t key_min;   /* direct: the least key */
    uint8_t *matched;  /* per row, FULL joins only */
    int64_t prepaid;   /* bytes already reserved for the index (index_fits) */
    /* A grace class's table (class_load): its index arrays go to `spare` when
     * it is freed (own_free), for the next class, so the per-row hashes and
     * NULL-key flags stay too (skip_kept) and index_done gives nothing back;
     * cap_rows and cap_slots are the arrays' room. */
    struct IndexSpare *spare;
    uint8_t *skip_kept;
    int64_t cap_rows;
    uint64_t cap_slots;
    int64_t idx_held; /* index_fits: what is held for the index arrays */
    /* A nested loop with bounds (ExJoinSpec.bounds; range_index): the rows
     * whose first bound's build column is not NULL, sorted on it (row
     * numbers, and their values in skey); with a second bound on another
     * column, agg[i] is the most (or least) of that column over the rows from
     * the scan's far end to i, to stop a probe row's scan where no row left
     * can meet it.  NULL without: every row is a candidate. */
    int32_t *sorted;
    int64_t *skey, *agg;
    int64_t n_sorted;
} JoinTable;

/* The index arrays of the grace class before, for the next one, and the bytes
 * held for them on the task's reservation.  Made anew for each class, their
 * pages were faulted in each time: a third of the faults of PageRank's
 * rounds at 120 MiB, where its broadcast table went grace. */
typedef struct IndexSpare {
    uint64_t *hashes;
    JoinRow *rows;
    uint8_t *skip;
    int64_t n; /* room in rows */
    int32_t *heads;
    uint64_t n_slots;
    int64_t bytes; /* held for them */
} IndexSpare;

/* Frees sp's arrays and gives back what was held for them on mem. */
static void spare_drop(IndexSpare *sp, CmMemRes *mem)
{
    cm_free(sp->hashes);
    cm_free(sp->rows);
    cm_free(sp->skip);
    cm_free(sp->heads);
    cm_mem_shrink(mem, sp->bytes);
    memset(sp, 0, sizeof *sp);
}

/* Bytes of index per build row, as index_prepare lays them out: the hash,
 * the JoinRow (key or hash, chain link, batch and position: 16 bytes)
 * and the NULL-key flag.  FULL joins add a matched flag a row.  Every slot
 * is a 32-bit chain head, and there are up to two slots a row. */
#define INDEX_ROW_BYTES (8 + (int64_t)sizeof(JoinRow) + 1)
#define INDEX_SLOT_BYTES 4

/* Reserves bytes for t's index in mem, first from what index_fits prepaid. */
static CmStatus index_need(JoinTable *t, CmMemRes *mem, int64_t bytes, CmErr *err)
{
    int64_t paid = bytes < t->prepaid ? bytes : t->prepaid;
    t->prepaid -= paid;
    return cm_mem_need(mem, bytes - paid, err);
}

/* A broadcast build with keys, which may turn out too big: its batches are
 * asked for (cm_mem_grow), summed, and refused past `cap`. */
typedef struct BuildCap {
    int64_t cap;
    atomic_llong bytes;
    atomic_bool refused;
} BuildCap;

typedef struct JoinGlobal {
    bool built;
    bool too_big; /* the broadcast table was dropped: tasks go grace (see above) */
    BuildCap cap;
    CmErr err; /* the build's error, repeated to every task */
    JoinTable table;
    /* the broadcast build, shared by the tasks that arrive while it runs:
     * each reads whole maps of the build shuffle into parts[map]; the one
     * that reads the last indexes them all, in map order */
    bool started;
    int n_maps, next_map, maps_done;
    JoinTable *parts;
    /* then the tasks index it together, each chaining a range of slots */
    bool indexing;
    int n_ranges, next_range, ranges_done;
    uint8_t *skip; /* rows with a NULL key (index_prepare) */
    int n_threads;
    CmCond built_cond; /* broadcast when built, or when indexing starts */
    CmMemRes mem;      /* the shared table's reservation (the manager locks it) */
    /* A partitioned MARK join's three-valued answer depends on the whole build
     * side, not the task's partition: whether it has rows, and whether one of
     * them has a NULL key.  Learned once, by the first task that asks. */
    bool facts_ready;
    int64_t facts_rows;
    bool facts_null;
} JoinGlobal;

typedef struct JoinLocal {
    JoinTable own; /* partitioned: this task's table */
    CmMemRes mem;  /* ... and its reservation */
    JoinTable *table;
    bool active; /* in the middle of an input batch */
    int phase;   /* 0: pairs, 1: rows that depend on the matched flags */
    /* gather_pairs: per probe row its chain position and integer key, and the
     * rows whose chain goes on */
    bool started;
    int n_live, live_pos, live_kept;
    int64_t cur[CM_BATCH_CAP];
    int64_t key[CM_BATCH_CAP];
    int32_t live[CM_BATCH_CAP];
    const CmBatch *pair_src[CM_BATCH_CAP]; /* assemble: each pair's build batch */
    uint32_t pair_src_pos[CM_BATCH_CAP];
    uint64_t hashes[CM_BATCH_CAP];
    uint8_t probe_matched[CM_BATCH_CAP];
    uint32_t pair_row[CM_BATCH_CAP];
    int64_t pair_build[CM_BATCH_CAP];
    uint32_t gather_pos[CM_BATCH_CAP];
    CmBatch out;      /* probe ++ build columns */
    CmBatch view;     /* SEMI/ANTI/MARK output: views of the input (+ mark) */
    CmVec *view_cols; /* view's own column array */
    CmVec mark;
    ExExprState *residual;
    int64_t flush_row; /* FULL: next build row to consider */
    int64_t cross_row; /* cross_next: the next build row to pair with the probe batch */
    /* Grace mode: a partitioned build that did not fit.  Both sides go to
     * spill files, one per hash class of the base modulus (rows whose hash >>
     * 40 is r modulo n_files); flush joins them one class at a time, reading
     * the class's files once (twice per halving, for a class split further). */
    bool grace;
    bool whole_build;    /* all_rows/all_has_null describe the build (grace, or a
                            partitioned MARK join), not l->table */
    ExQuery *query;      /* for the temp directory and its cap */
    int n_files;         /* the base modulus (cur_mod), at most GRACE_FANOUT */
    bool build_done;     /* the build files are written (join_push) */
    int64_t build_bytes; /* the build rows' bytes, as batches hold them */
    int64_t expect;      /* grace_start: the whole build's bytes when known beforehand */
    /* Hybrid: classes [0, n_resident) of the base modulus stayed in memory
     * (l->own, indexed): their probe rows are joined as they come, through
     * res_view (the input batch narrowed to them), and only the others' go to
     * files.  flush ends them (FULL: their unmatched build rows) first. */
    int n_resident;
    CmBatch res_view;
    uint32_t res_sel[CM_BATCH_CAP];
    ShSpill **build_files, **probe_files; /* owned, n_files each; NULL: no row yet */
    uint8_t route_class[CM_BATCH_CAP];    /* route: each row's class */
    uint32_t route_pos[CM_BATCH_CAP];     /* ... and the rows grouped by class */
    int64_t all_rows;                     /* build rows in all classes (MARK semantics) */
    bool all_has_null;                    /* some build row has a NULL key */
    int n_work; /* split classes still to join: (mod, residue) pairs, a stack
                   (a split pushes two, at most log2(GRACE_MAX_MOD) deep) */
    int64_t work_mod[32], work_res[32];
    int64_t cur_mod, cur_res;     /* the base modulus, and its last residue taken */
    int64_t probe_mod, probe_res; /* the class being joined */
    int g_state;                  /* GRACE_* */
    bool mid_batch;               /* join_push wants the current probe batch again */
    CmBatch probe_in;             /* a probe batch read back, narrowed to the class */
    CmBatch build_in;             /* a build batch read back */
    uint64_t class_hashes[CM_BATCH_CAP];
    /* Block mode: a class at GRACE_MAX_MOD whose build rows still do not fit
     * (one key holds more rows than memory) is joined a block of build rows at
     * a time, the probe file read once per block (a block nested loop).  Pairs
     * come out block by block; the rows that depend on every block (unmatched,
     * semi, anti, mark) come out of one more pass over the probe rows, from
     * `pmatch`, a bit per probe row of the class. */
    bool blocks;
    int64_t blk_done; /* the class's build rows loaded by earlier blocks */
    bool blk_more;    /* build rows are left after the current block */
    uint64_t *pmatch; /* owned; pmatch_cap bits */
    int64_t pmatch_cap;
    int64_t probe_ord; /* the class's probe rows seen in this pass */
    IndexSpare spare;  /* the index arrays of the class before (own_free) */
} JoinLocal;

enum { GRACE_NEXT = 0, GRACE_PROBE, GRACE_FULL_TAIL, GRACE_BLOCK_END, GRACE_FINAL };
/* A class is split in two while its build rows do not fit, down to this modulus;
 * past it one key holds more rows than memory: the class is joined in blocks. */
#define GRACE_MAX_MOD 4096
/* Spill files per side: the base modulus, whose classes have files of their
 * own, is at most this (each file holds a 64 KiB write buffer while written,
 * and a descriptor); classes past it are halves read from their base file. */
#define GRACE_FANOUT 32
/* Bytes of index per build row a block reserves with its rows (index_prepare's
 * arrays, FULL's flag, four 4-byte slots: the most a row can take, as the slots
 * are the next power of two past twice the rows); hybrid_start asks it too. */
#define BLOCK_INDEX_ROW_BYTES (INDEX_ROW_BYTES + 1 + 16)

/* ---- build ----------------------------------------------------------------------- */

static void table_free(JoinTable *t)
{
    for (int i = 0; i < t->n_batches; i++) {
        cm_batch_fini(t->batches[i]);
        cm_free(t->batches[i]);
    }
    cm_free(t->hashes);
    cm_free(t->rows);
    cm_free(t->heads);
    cm_free(t->skip_kept);
    cm_free(t->matched);
    cm_free(t->batches);
    cm_free(t->sorted);
    cm_free(t->skey);
    cm_free(t->agg);
    memset(t, 0, sizeof *t);
}

static inline const CmBatch *row_batch(const JoinTable *t, int64_t r, uint32_t *pos)
{
    uint32_t ref = t->rows[r].ref;
    *pos = ref & (((uint32_t)1 << REF_POS_BITS) - 1);
    return t->batches[ref >> REF_POS_BITS];
}

/* A single INTEGER, BIGINT or DATE key: compared as int64 without a call. */
static bool int_keyed(const ExJoinSpec *s)
{
    if (s->n_keys != 1) {
        return false;
    }
    uint8_t id = s->build_types[s->build_keys[0]].id;
    return id == CM_T_INT32 || id == CM_T_INT64 || id == CM_T_DATE;
}

/* An integer-like value (an integer key, or a range join's bound) as int64:
 * INTEGER and DATE are 4 bytes, BIGINT, TIME, TIMESTAMP and DECIMAL 8. */
static inline int64_t int_at(const CmVec *v, uint32_t p)
{
    return v->type.id == CM_T_INT32 || v->type.id == CM_T_DATE ? ((const int32_t *)v->data)[p]
                                                               : ((const int64_t *)v->data)[p];
}

/* A NULL in a key compared by SQL '=' (not one in null_eq) matches nothing. */
static bool has_null_key(const CmBatch *b, int i, int n_keys, const int *keys, uint64_t null_eq)
{
    uint32_t p = cm_batch_pos(b, i);
    for (int k = 0; k < n_keys; k++) {
        if (!((null_eq >> k) & 1) && cm_vec_is_null(&b->cols[keys[k]], p)) {
            return true;
        }
    }
    return false;
}

/* Integer keys that span fewer values than there are slots (ids, dense
 * surrogate keys: PageRank's vertices, K-means' points) are their own slot
 * numbers, minus the least.  A key then never shares its chain with another
 * one, the probe side needs no hashing, and probe keys that come in order
 * (a table scanned in key order) read the heads in order instead of at
 * random, which on a table bigger than the cache was a miss per row. */
/* The most head slots a direct table takes beyond what its rows would (a
 * 512 KiB array of heads, which stays in the L2 cache). */
#define DIRECT_MAX_SLOTS ((uint64_t)1 << 17)

/* Integer keys spread wider than the slots but over at most DIRECT_MAX_SLOTS
 * values (a filtered dimension: 180 items among 18000 ids, a month of dates
 * among 73049) are direct too, with heads of their own range: the probe then
 * finds a key's chain by a subtraction instead of hashing every probe row (a
 * quarter of a selective star join's time), and the heads stay in cache.
 * Only when the memory is granted (the table is then hashed as before); not
 * for a grace class, whose index arrays are kept for the next one. */
static void widen_direct(JoinTable *t, int64_t lo, int64_t hi, CmMemRes *mem)
{
    if (t->spare != NULL || (uint64_t)hi - (uint64_t)lo >= DIRECT_MAX_SLOTS) {
        return;
    }
    uint64_t n_slots = t->mask + 1;
    while (n_slots <= (uint64_t)hi - (uint64_t)lo) {
        n_slots *= 2;
    }
    int64_t extra = INDEX_SLOT_BYTES * (int64_t)(n_slots - (t->mask + 1));
    if (!cm_mem_grow(mem, extra)) {
        return;
    }
    int32_t *heads = cm_realloc(t->heads, sizeof(int32_t) * (size_t)n_slots);
    if (heads == NULL) {
        cm_mem_shrink(mem, extra);
        return;
    }
    memset(heads, 0xff, sizeof(int32_t) * (size_t)n_slots);
    t->heads = heads;
    t->cap_slots = n_slots;
    t->mask = n_slots - 1;
    t->idx_held += extra;
    t->direct = true;
    t->key_min = lo;
}

static void choose_direct(JoinTable *t, const uint8_t *skip, CmMemRes *mem)
{
    t->direct = false;
    if (!t->int_keys) {
        return;
    }
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t r = 0; r < t->n_rows; r++) {
        if (!skip[r]) {
            lo = t->rows[r].key < lo ? t->rows[r].key : lo;
            hi = t->rows[r].key > hi ? t->rows[r].key : hi;
        }
    }
    if (lo <= hi && (uint64_t)hi - (uint64_t)lo <= t->mask) {
        t->direct = true;
        t->key_min = lo;
    } else if (lo <= hi) {
        widen_direct(t, lo, hi, mem);
    }
}

/* The head slots of an index of n_rows rows: a power of two, at least 16 and
 * twice the rows (chains of half a row on average). */
static uint64_t slots_for(int64_t n_rows)
{
    uint64_t n_slots = 16;
    while (n_slots < (uint64_t)n_rows * 2) {
        n_slots *= 2;
    }
    return n_slots;
}

/* Indexing runs in two steps so that several tasks can share the second:
 * index_prepare lays out the per-row arrays (hash, batch and position, the
 * integer key) and marks the rows with a NULL key in *skip; index_insert
 * chains the rows whose slot falls in [lo, hi), each range touching only
 * its own heads and its own rows' links. */
static CmStatus index_prepare(const ExJoinSpec *s, JoinTable *t, uint8_t **skip, CmMemRes *mem,
                              CmErr *err)
{
    uint64_t n_slots = s->n_keys > 0 ? slots_for(t->n_rows) : 16;
    size_t n = (size_t)(t->n_rows ? t->n_rows : 1);
    bool fast = int_keyed(s) && s->null_eq == 0;
    /* Chains link rows by 32-bit numbers: half the memory of 64-bit links,
     * and twice the links per cache line.  2^31 rows would be 32 GiB of
     * table in one task, past any memory_limit a partitioned join runs in. */
    if (t->n_rows >= INT32_MAX) {
        return cm_err_set(err, CM_OOM, -1,
                          "hash join build side of %lld rows in one task: at most 2^31 - 1",
                          (long long)t->n_rows);
    }
    /* Batches are packed full as they are read (pack_into_previous): this
     * many hold a billion rows or more. */
    if (t->n_batches > REF_MAX_BATCHES) {
        return cm_err_set(err, CM_OOM, -1,
                          "hash join build side of %d batches in one task: at most %lld",
                          t->n_batches, (long long)REF_MAX_BATCHES);
    }
    if (index_need(t, mem, INDEX_ROW_BYTES * (int64_t)n + INDEX_SLOT_BYTES * (int64_t)n_slots,
                   err) != CM_OK) {
        return err->code;
    }
    IndexSpare *sp = t->spare;
    if (sp != NULL && sp->rows != NULL && sp->n >= (int64_t)n && sp->n_slots >= n_slots) {
        t->hashes = sp->hashes;
        t->rows = sp->rows;
        t->heads = sp->heads;
        *skip = sp->skip;
        t->cap_rows = sp->n;
        t->cap_slots = sp->n_slots;
        memset(sp, 0, sizeof *sp); /* its bytes are the table's now (index_fits) */
    } else {
        t->hashes = cm_malloc(sizeof(uint64_t) * n);
        t->rows = cm_malloc(sizeof(JoinRow) * n);
        t->heads = cm_malloc(sizeof(int32_t) * (size_t)n_slots);
        *skip = cm_malloc(n);
        t->cap_rows = (int64_t)n;
        t->cap_slots = n_slots;
    }
    if (t->hashes == NULL || t->rows == NULL || t->heads == NULL || *skip == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory building a hash join table");
    }
    t->int_keys = fast;
    memset(t->heads, 0xff, sizeof(int32_t) * (size_t)n_slots);
    t->mask = s->n_keys > 0 ? n_slots - 1 : 0;
    int64_t r = 0;
    for (int bi = 0; bi < t->n_batches; bi++) {
        const CmBatch *b = t->batches[bi];
        ex_hash_keys(b, s->n_keys, s->build_keys, t->hashes + r);
        const CmVec *kv = fast ? &b->cols[s->build_keys[0]] : NULL;
        for (int i = 0; i < b->n_rows; i++, r++) {
            JoinRow *row = &t->rows[r];
            row->key = fast ? int_at(kv, (uint32_t)i) : (int64_t)t->hashes[r];
            row->next = -1;
            row->ref = row_ref(bi, i);
            /* A NULL key compared by SQL '=' matches nothing: never chained. */
            (*skip)[r] = has_null_key(b, i, s->n_keys, s->build_keys, s->null_eq);
            t->has_null_key |= (*skip)[r];
        }
    }
    choose_direct(t, *skip, mem);
    return CM_OK;
}

/* The slot of build row r. */
static inline uint64_t table_slot(const JoinTable *t, int64_t r)
{
    return t->direct ? (uint64_t)t->rows[r].key - (uint64_t)t->key_min : t->hashes[r] & t->mask;
}

/* Insert backwards so that every chain lists rows in build order.  The heads
 * are far bigger than the cache for a big build side, and each insert
 * misses: the slot a few rows ahead is prefetched so that the misses overlap
 * instead of queueing. */
static void index_insert(JoinTable *t, const uint8_t *skip, uint64_t lo, uint64_t hi)
{
    for (int64_t r = t->n_rows - 1; r >= 0; r--) {
        if (r >= 16) {
            uint64_t ahead = table_slot(t, r - 16);
            if (ahead >= lo && ahead < hi) {
                __builtin_prefetch(&t->heads[ahead], 1);
            }
        }
        uint64_t slot = table_slot(t, r);
        if (skip[r] || slot < lo || slot >= hi) {
            continue;
        }
        t->rows[r].next = t->heads[slot];
        t->heads[slot] = (int32_t)r;
    }
}

/* The next batch slot of the table (a new, empty batch); NULL on OOM. */
static CmBatch *new_batch(const ExJoinSpec *s, JoinTable *t, CmErr *err)
{
    if (t->n_batches == t->cap_batches) {
        int cap = t->cap_batches ? t->cap_batches * 2 : 64;
        CmBatch **g = cm_realloc(t->batches, sizeof(CmBatch *) * (size_t)cap);
        if (g == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory building a hash join table");
            return NULL;
        }
        t->batches = g;
        t->cap_batches = cap;
    }
    CmBatch *b = cm_malloc(sizeof *b);
    if (b == NULL || cm_batch_init(b, s->n_build_cols, s->build_types, err) != CM_OK) {
        cm_free(b);
        cm_err_set(err, CM_OOM, -1, "out of memory building a hash join table");
        return NULL;
    }
    t->batches[t->n_batches++] = b;
    return b;
}

/* Bytes a decoded batch holds: its vectors and its strings. */
static int64_t batch_bytes(const CmBatch *b)
{
    int64_t n = (int64_t)b->heap.n_bytes;
    for (int c = 0; c < b->n_cols; c++) {
        n += (int64_t)cm_type_width(b->cols[c].type) * CM_BATCH_CAP + 8 * CM_VALIDITY_WORDS;
    }
    return n;
}

static void drop_last_batch(JoinTable *t)
{
    CmBatch *b = t->batches[--t->n_batches];
    cm_batch_fini(b);
    cm_free(b);
}

/* Positions 0, 1, 2, ...: appending a whole decoded batch. */
static uint32_t g_all_rows[CM_BATCH_CAP];
static pthread_once_t g_all_rows_once = PTHREAD_ONCE_INIT;

static void init_all_rows(void)
{
    for (uint32_t i = 0; i < CM_BATCH_CAP; i++) {
        g_all_rows[i] = i;
    }
}

/* The table's last batch b was just decoded.  A batch holds CM_BATCH_CAP rows
 * whatever it is given, and a block of a shuffle with many partitions holds a
 * fraction of that: when b's rows fit into the batch before it, they are
 * copied there and b is dropped, so that a table of small blocks does not
 * take several times its rows' size (eight partitions: ten times, for two
 * 8-byte columns).  Returns the bytes the table grew by (b's, or the string
 * bytes copied); -1 with err on OOM. */
static int64_t pack_into_previous(JoinTable *t, CmBatch *b, CmErr *err)
{
    CmBatch *prev = t->n_batches >= 2 ? t->batches[t->n_batches - 2] : NULL;
    if (prev == NULL || prev->n_rows + b->n_rows > CM_BATCH_CAP) {
        return batch_bytes(b);
    }
    pthread_once(&g_all_rows_once, init_all_rows);
    int64_t before = (int64_t)prev->heap.n_bytes;
    if (cm_batch_append_rows(prev, b, g_all_rows, b->n_rows, true, err) != CM_OK) {
        return -1;
    }
    drop_last_batch(t);
    return (int64_t)prev->heap.n_bytes - before;
}

/* Reads the build partitions [p0, p1) of maps [b0, b1) (b1 < 0: all maps):
 * each shuffle block is decoded straight into a batch the table keeps, so
 * build rows are never copied again.  Each batch is reserved in mem. */
static CmStatus grace_start(const ExJoinSpec *s, JoinLocal *l, CmErr *err);
static CmStatus grace_add_build(const ExJoinSpec *s, JoinLocal *l, const CmBatch *b, CmErr *err);
static CmStatus route(const ExJoinSpec *s, JoinLocal *l, ShSpill **files, const CmBatch *b,
                      const int *keys, CmErr *err);
static CmStatus hybrid_start(ExOp *op, const ExJoinSpec *s, JoinLocal *l, CmErr *err);

static CmStatus read_batches(const ExJoinSpec *s, JoinTable *t, int p0, int p1, int b0, int b1,
                             CmMemRes *mem, JoinLocal *l, BuildCap *bc, CmErr *err)
{
    ShShuffle *sh = *s->build;
    if (sh != NULL && b1 < 0) {
        b0 = 0;
        b1 = sh_shuffle_n_maps(sh);
    }
    ShReader *r = sh ? sh_reader_open(sh, p0, p1, b0, b1, err) : NULL;
    bool eof = r == NULL;
    while (!eof && err->code == CM_OK) {
        if (l != NULL && l->grace) {
            if (sh_reader_next(r, &l->build_in, &eof, err) == CM_OK && !eof) {
                grace_add_build(s, l, &l->build_in, err);
            }
            continue;
        }
        CmBatch *b = new_batch(s, t, err);
        if (b == NULL || sh_reader_next(r, b, &eof, err) != CM_OK) {
            break;
        }
        if (eof || b->n_rows == 0) {
            drop_last_batch(t);
            continue;
        }
        t->n_rows += b->n_rows;
        int64_t bytes = pack_into_previous(t, b, err);
        if (bytes < 0) {
            break;
        }
        /* A partitioned build (or a task's own copy of a broadcast that was
         * too big) goes to grace mode when refused; a broadcast build is
         * dropped past its cap. */
        if (l != NULL) {
            if (!cm_mem_grow(mem, bytes)) {
                grace_start(s, l, err);
            }
        } else if (bc != NULL) {
            if (atomic_load(&bc->refused) ||
                atomic_fetch_add(&bc->bytes, bytes) + bytes > bc->cap || !cm_mem_grow(mem, bytes)) {
                atomic_store(&bc->refused, true);
                break;
            }
        } else if (cm_mem_need(mem, bytes, err) != CM_OK) {
            break;
        }
    }
    if (r != NULL) {
        sh_reader_close(r);
    }
    return err->code;
}

/* Everything but the chaining, for the rows read: FULL joins' matched flags
 * and index_prepare. */
static CmStatus prepare_table(const ExJoinSpec *s, JoinTable *t, uint8_t **skip, CmMemRes *mem,
                              CmErr *err)
{
    if (s->type == EX_JOIN_FULL) {
        if (index_need(t, mem, t->n_rows, err) != CM_OK) {
            return err->code;
        }
        t->matched = cm_calloc((size_t)(t->n_rows ? t->n_rows : 1), 1);
        if (t->matched == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory building a hash join table");
        }
    }
    return index_prepare(s, t, skip, mem, err);
}

/* Once every row is chained: the per-row hashes and NULL-key flags only
 * placed rows in their slots (a JoinRow carries the key, or the hash), so
 * their 9 bytes a row go back to the probe side's consumers: 9 MB of
 * PageRank's 50 MB broadcast table, freed for the aggregate after it. */
static void index_done(JoinTable *t, uint8_t **skip, CmMemRes *mem)
{
    if (t->spare != NULL) {
        t->skip_kept = *skip; /* for the next class, held as they are */
        *skip = NULL;
        return;
    }
    cm_free(t->hashes);
    t->hashes = NULL;
    cm_free(*skip);
    *skip = NULL;
    cm_mem_shrink(mem, (int64_t)(sizeof(uint64_t) + 1) * t->n_rows);
}

/* ---- range joins ------------------------------------------------------------------ */

bool ex_join_bound_op(const ExExpr *e, ExBoundOp *op)
{
    static const char *names[] = {"<", "<=", ">", ">="}; /* in ExBoundOp's order */
    if (e->kind != EX_E_FUNC || e->n_args != 2 || !cm_type_eq(e->args[0]->type, e->args[1]->type)) {
        return false;
    }
    uint8_t id = e->args[0]->type.id;
    if (id != CM_T_INT32 && id != CM_T_INT64 && id != CM_T_DATE && id != CM_T_TIME &&
        id != CM_T_TIMESTAMP && id != CM_T_DECIMAL) {
        return false;
    }
    for (int k = 0; k < 4; k++) {
        if (strcmp(e->name, names[k]) == 0) {
            *op = (ExBoundOp)k;
            return true;
        }
    }
    return false;
}

typedef struct SortedRow {
    int64_t key;
    int32_t row;
} SortedRow;

static int sorted_cmp(const void *a, const void *b)
{
    int64_t x = ((const SortedRow *)a)->key, y = ((const SortedRow *)b)->key;
    return (x > y) - (x < y);
}

/* The second bound, when it is on another build column than the first (the
 * scan's early stop, agg), else NULL.  One on the same column narrows the
 * binary search instead. */
static const ExJoinBound *other_bound(const ExJoinSpec *s)
{
    return s->n_bounds > 1 && s->bounds[1].build_col != s->bounds[0].build_col ? &s->bounds[1]
                                                                               : NULL;
}

/* Does a probe row's scan go down from the top of its range?  When the
 * first bound keeps the rows below the probe value (b < x: intervals that
 * start before x) and a second bound on another column stops the scan: the
 * rows nearest x are the likeliest to meet it (intervals that end after x). */
static bool scan_down(const ExJoinSpec *s)
{
    return other_bound(s) != NULL &&
           (s->bounds[0].op == EX_BOUND_GT || s->bounds[0].op == EX_BOUND_GE);
}

/* Sorts t's rows on the first bound's build column (JoinTable.sorted).
 * Without the memory for it, or in grace mode (whose classes reuse the
 * index arrays), the table stays a plain nested loop: slower, same answer. */
static void range_index(const ExJoinSpec *s, JoinTable *t, CmMemRes *mem)
{
    if (s->n_bounds == 0 || t->spare != NULL || t->n_rows == 0) {
        return;
    }
    const ExJoinBound *b0 = &s->bounds[0], *b1 = other_bound(s);
    int64_t n = t->n_rows, tmp_bytes = n * (int64_t)sizeof(SortedRow);
    int64_t bytes = n * (int64_t)(sizeof(int32_t) + 2 * sizeof(int64_t));
    CmErr e;
    cm_err_init(&e);
    if (cm_mem_need(mem, bytes + tmp_bytes, &e) != CM_OK) {
        return;
    }
    SortedRow *tmp = cm_malloc((size_t)tmp_bytes);
    t->sorted = cm_malloc(sizeof(int32_t) * (size_t)n);
    t->skey = cm_malloc(sizeof(int64_t) * (size_t)n);
    t->agg = b1 != NULL ? cm_malloc(sizeof(int64_t) * (size_t)n) : NULL;
    if (tmp == NULL || t->sorted == NULL || t->skey == NULL || (b1 != NULL && t->agg == NULL)) {
        cm_free(tmp);
        cm_free(t->sorted);
        cm_free(t->skey);
        cm_free(t->agg);
        t->sorted = NULL;
        t->skey = t->agg = NULL;
        cm_mem_shrink(mem, bytes + tmp_bytes);
        return;
    }
    int64_t m = 0;
    for (int64_t r = 0; r < n; r++) {
        uint32_t pos;
        const CmVec *v = &row_batch(t, r, &pos)->cols[b0->build_col];
        if (!cm_vec_is_null(v, pos)) { /* a NULL meets no bound */
            tmp[m].key = int_at(v, pos);
            tmp[m++].row = (int32_t)r;
        }
    }
    qsort(tmp, (size_t)m, sizeof *tmp, sorted_cmp);
    for (int64_t i = 0; i < m; i++) {
        t->sorted[i] = tmp[i].row;
        t->skey[i] = tmp[i].key;
    }
    cm_free(tmp);
    cm_mem_shrink(mem, tmp_bytes);
    if (b1 != NULL) {
        /* b1's build column must be high (x < c, x <= c) or low */
        bool high = b1->op == EX_BOUND_LT || b1->op == EX_BOUND_LE, down = scan_down(s);
        int64_t acc = high ? INT64_MIN : INT64_MAX;
        for (int64_t k = 0; k < m; k++) {
            int64_t i = down ? k : m - 1 - k;
            uint32_t pos;
            const CmVec *v = &row_batch(t, t->sorted[i], &pos)->cols[b1->build_col];
            if (!cm_vec_is_null(v, pos)) {
                int64_t x = int_at(v, pos);
                acc = high ? (x > acc ? x : acc) : (x < acc ? x : acc);
            }
            t->agg[i] = acc;
        }
    }
    t->n_sorted = m;
}

/* The first position of t->sorted whose value is above x (or, `at_least`,
 * not below it). */
static int64_t sorted_search(const JoinTable *t, int64_t x, bool at_least)
{
    int64_t lo = 0, hi = t->n_sorted;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (t->skey[mid] > x || (at_least && t->skey[mid] == x)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

/* The positions [*lo, *hi) of t->sorted that probe row p's bounds on the
 * sorted column leave; false when none can match (an empty range, or a NULL
 * probe value: its comparison is never true, and the bounds are conjuncts). */
static bool bound_range(const ExJoinSpec *s, const JoinTable *t, const CmBatch *in, uint32_t p,
                        int64_t *lo, int64_t *hi)
{
    *lo = 0;
    *hi = t->n_sorted;
    for (int k = 0; k < s->n_bounds; k++) {
        const ExJoinBound *b = &s->bounds[k];
        const CmVec *v = &in->cols[b->probe_col];
        if (cm_vec_is_null(v, p)) {
            return false;
        }
        if (b->build_col != s->bounds[0].build_col) {
            continue;
        }
        int64_t x = int_at(v, p), at;
        switch (b->op) {
        case EX_BOUND_LT: /* x < col: the rows above x */
        case EX_BOUND_LE:
            at = sorted_search(t, x, b->op == EX_BOUND_LE);
            *lo = at > *lo ? at : *lo;
            break;
        case EX_BOUND_GT: /* x > col: the rows below x */
        case EX_BOUND_GE:
            at = sorted_search(t, x, b->op == EX_BOUND_GT);
            *hi = at < *hi ? at : *hi;
            break;
        }
    }
    return *lo < *hi;
}

/* Can a row at or past this point of the scan meet the second bound, the
 * most (or least) of its column there being agg and the probe value x? */
static inline bool may_meet(ExBoundOp op, int64_t agg, int64_t x)
{
    switch (op) {
    case EX_BOUND_LT:
        return agg > x;
    case EX_BOUND_LE:
        return agg >= x;
    case EX_BOUND_GT:
        return agg < x;
    case EX_BOUND_GE:
        return agg <= x;
    }
    return true;
}

/* Pairs of a range join (range_index): each live probe row's range of
 * sorted rows, from l->cur[i] towards l->key[i] (up to it, exclusive; or,
 * scanning down, down to it, inclusive), cut short where the second bound
 * says no row further on can meet it. */
static int gather_range_pairs(const ExJoinSpec *s, JoinLocal *l, const CmBatch *in)
{
    const JoinTable *t = l->table;
    const ExJoinBound *b1 = other_bound(s);
    int step = scan_down(s) ? -1 : 1, n = 0;
    for (; l->live_pos < l->n_live && n < CM_BATCH_CAP; l->live_pos++) {
        int i = l->live[l->live_pos];
        int64_t x = b1 ? int_at(&in->cols[b1->probe_col], cm_batch_pos(in, i)) : 0;
        int64_t end = step > 0 ? l->key[i] : l->key[i] - 1;
        for (; l->cur[i] != end && n < CM_BATCH_CAP; l->cur[i] += step) {
            if (b1 != NULL && !may_meet(b1->op, t->agg[l->cur[i]], x)) {
                l->cur[i] = end;
                break;
            }
            l->pair_row[n] = (uint32_t)i;
            l->pair_build[n++] = t->sorted[l->cur[i]];
        }
        if (l->cur[i] != end) {
            break; /* the output is full: this row goes on next time */
        }
    }
    return n;
}

/* Indexes the rows read, by one task. */
static CmStatus finish_table(const ExJoinSpec *s, JoinTable *t, CmMemRes *mem, CmErr *err)
{
    uint8_t *skip = NULL;
    if (prepare_table(s, t, &skip, mem, err) == CM_OK) {
        index_insert(t, skip, 0, t->mask + 1);
        index_done(t, &skip, mem);
        range_index(s, t, mem);
    }
    cm_free(skip);
    return err->code;
}

bool ex_hash_join_broadcastable(int64_t rows, double bytes, int64_t broadcast_bytes)
{
    /* Counts the integer key and two slots for every row: the most a row can take. */
    double per_row = INDEX_ROW_BYTES + 2 * INDEX_SLOT_BYTES;
    double table = bytes + (double)rows * per_row;
    return table <= 2.0 * (double)broadcast_bytes;
}

/* What index_prepare's arrays and FULL's flags take for n_rows rows. */
static int64_t index_bytes(int64_t n_rows)
{
    return n_rows * (INDEX_ROW_BYTES + 1) + INDEX_SLOT_BYTES * (int64_t)slots_for(n_rows);
}

/* cm_mem_grow for a table whose build rows, partitions [p0, p1) of the
 * build shuffle, are all read: refused, the store's buffered blocks of those
 * partitions go to disk and it is asked again.  Until then the build side is
 * held twice, as blocks and decoded: PageRank at 180 MiB had a 1M-row
 * broadcast index refused for 0.4 MB while its 16 MB of blocks stayed in
 * memory, and every probe task then spilled the whole build side.  Called
 * with no reader of ours open, so the flushed blocks are freed at once; a
 * flush that fails (the temp cap) leaves the refusal standing. */
static bool grow_after_read(const ExJoinSpec *s, CmMemRes *mem, int64_t bytes, int p0, int p1)
{
    if (cm_mem_grow(mem, bytes)) {
        return true;
    }
    ShShuffle *sh = *s->build;
    CmErr e;
    cm_err_init(&e);
    return sh != NULL && p0 < p1 && sh_shuffle_flush_parts(sh, p0, p1, &e) == CM_OK &&
           cm_mem_grow(mem, bytes);
}

/* Reserves the index of l->own (index_prepare's arrays, FULL's flags) if it
 * is granted, as t->prepaid; false when refused.  [p0, p1): the partitions
 * of the build shuffle the table holds, or p0 == p1 when it holds rows
 * read back from spill files. */
static bool index_fits(const ExJoinSpec *s, JoinLocal *l, int p0, int p1)
{
    int64_t idx = index_bytes(l->own.n_rows);
    /* a grace class: the arrays of the class before, when they have room,
     * are held already; else they go */
    IndexSpare *sp = l->own.spare;
    int64_t have = 0;
    if (sp != NULL && sp->rows != NULL) {
        if (sp->n >= l->own.n_rows && sp->n_slots >= slots_for(l->own.n_rows)) {
            have = sp->bytes;
        } else {
            spare_drop(sp, &l->mem);
        }
    }
    if (idx > have && !grow_after_read(s, &l->mem, idx - have, p0, p1)) {
        return false;
    }
    l->own.prepaid = idx > have ? idx : have; /* kept for index_prepare */
    l->own.idx_held = l->own.prepaid;
    return true;
}

static CmStatus table_build(const ExJoinSpec *s, JoinLocal *l, int p0, int p1, int b0, int b1,
                            CmErr *err)
{
    if (read_batches(s, &l->own, p0, p1, b0, b1, &l->mem, l, NULL, err) != CM_OK || l->grace) {
        return err->code;
    }
    if (!index_fits(s, l, p0, p1)) {
        return grace_start(s, l, err);
    }
    return finish_table(s, &l->own, &l->mem, err);
}

/* Moves the batches of `part` to the end of t's; false on OOM. */
static bool take_batches(JoinTable *t, JoinTable *part)
{
    if (t->n_batches + part->n_batches > t->cap_batches) {
        int cap = (t->n_batches + part->n_batches) * 2 + 8;
        CmBatch **b = cm_realloc(t->batches, sizeof(CmBatch *) * (size_t)cap);
        if (b == NULL) {
            return false;
        }
        t->batches = b;
        t->cap_batches = cap;
    }
    if (part->n_batches > 0) {
        memcpy(t->batches + t->n_batches, part->batches,
               sizeof(CmBatch *) * (size_t)part->n_batches);
    }
    t->n_batches += part->n_batches;
    t->n_rows += part->n_rows;
    part->n_batches = 0;
    cm_free(part->batches);
    part->batches = NULL;
    return true;
}

/* ---- output assembly --------------------------------------------------------------- */

/* dst[i] = src[pos[i]] for i < n, values and NULLs; pos NULL means "all NULL". */
static void gather_column(CmVec *dst, const CmVec *src, const uint32_t *pos, int n)
{
    if (src == NULL) {
        for (int i = 0; i < n; i++) {
            cm_vec_set_null(dst, (uint32_t)i);
        }
        return;
    }
    switch (cm_type_width(dst->type)) {
    case 1:
        for (int i = 0; i < n; i++) {
            ((uint8_t *)dst->data)[i] = ((const uint8_t *)src->data)[pos[i]];
        }
        break;
    case 4:
        for (int i = 0; i < n; i++) {
            ((int32_t *)dst->data)[i] = ((const int32_t *)src->data)[pos[i]];
        }
        break;
    case 8:
        for (int i = 0; i < n; i++) {
            ((int64_t *)dst->data)[i] = ((const int64_t *)src->data)[pos[i]];
        }
        break;
    default:
        for (int i = 0; i < n; i++) {
            ((CmStr *)dst->data)[i] = ((const CmStr *)src->data)[pos[i]];
        }
        break;
    }
    if (src->validity != NULL) {
        for (int i = 0; i < n; i++) {
            if (cm_vec_is_null(src, pos[i])) {
                cm_vec_set_null(dst, (uint32_t)i);
            }
        }
    }
}

/* Build column c of the pairs into dst: each pair's value at its probe
 * position (SCATTER), or at row i, a NULL source batch leaving it unset (COPY). */
#define SCATTER_FROM_PAIRS(T)                                                                      \
    for (int i = 0; i < n; i++) {                                                                  \
        ((T *)dst->data)[gpos[i]] = ((const T *)src[i]->cols[c].data)[pos[i]];                     \
    }

#define COPY_FROM_PAIRS(T)                                                                         \
    for (int i = 0; i < n; i++) {                                                                  \
        if (src[i] != NULL) {                                                                      \
            ((T *)dst->data)[i] = ((const T *)src[i]->cols[c].data)[pos[i]];                       \
        }                                                                                          \
    }

/* True when no probe row is in two of the n pairs: always so when the build
 * keys are unique, as a primary key's or a grouped subquery's are. */
static bool pairs_unique(const JoinLocal *l, int n)
{
    uint64_t seen[CM_VALIDITY_WORDS] = {0};
    for (int i = 0; i < n; i++) {
        uint32_t r = l->pair_row[i];
        uint64_t bit = (uint64_t)1 << (r & 63);
        if (seen[r >> 6] & bit) {
            return false;
        }
        seen[r >> 6] |= bit;
    }
    return true;
}

/* The probe column equal to build column c in every pair, or -1: a key
 * column of an integer type the two sides share, where equal means the same
 * value (and, for a key where NULL matches NULL, both NULL). */
static int probe_twin(const ExJoinSpec *s, int c)
{
    for (int k = 0; k < s->n_keys; k++) {
        CmType bt = s->build_types[c], pt = s->probe_types[s->probe_keys[k]];
        if (s->build_keys[k] == c && bt.id == pt.id &&
            (bt.id == CM_T_INT32 || bt.id == CM_T_INT64 || bt.id == CM_T_DATE)) {
            return s->probe_keys[k];
        }
    }
    return -1;
}

/* assemble for pairs of distinct probe rows: the probe columns are the
 * input's own (no copy; `in` stays valid until the join asks for the next
 * input, after the consumer has read this output), the selection names the
 * pairs' probe positions (in gather_pos, which match_pairs does not write),
 * and each build value is put at its pair's probe position, or for a key
 * column is the probe's key column. */
static void assemble_by_ref(const ExJoinSpec *s, JoinLocal *l, const CmBatch *in, int n)
{
    uint32_t *gpos = l->gather_pos;
    for (int i = 0; i < n; i++) {
        gpos[i] = cm_batch_pos(in, (int)l->pair_row[i]);
    }
    for (int c = 0; c < s->n_probe_cols; c++) {
        cm_vec_reference(&l->out.cols[c], &in->cols[c]);
    }
    const CmBatch **src = l->pair_src;
    uint32_t *pos = l->pair_src_pos;
    for (int i = 0; i < n; i++) {
        src[i] = row_batch(l->table, l->pair_build[i], &pos[i]);
    }
    for (int c = 0; c < s->n_build_cols; c++) {
        CmVec *dst = &l->out.cols[s->n_probe_cols + c];
        int twin = probe_twin(s, c);
        if (twin >= 0) {
            /* the probe row's key, at the same position: no fetch from the build rows */
            cm_vec_reference(dst, &in->cols[twin]);
            continue;
        }
        switch (cm_type_width(dst->type)) {
        case 1:
            SCATTER_FROM_PAIRS(uint8_t);
            break;
        case 4:
            SCATTER_FROM_PAIRS(int32_t);
            break;
        case 8:
            SCATTER_FROM_PAIRS(int64_t);
            break;
        default:
            SCATTER_FROM_PAIRS(CmStr);
            break;
        }
        for (int i = 0; i < n; i++) {
            if (cm_vec_is_null(&src[i]->cols[c], pos[i])) {
                cm_vec_set_null(dst, gpos[i]);
            }
        }
    }
    l->out.sel = gpos;
    l->out.n_rows = n;
}

/* out row i = probe row pair_row[i] ++ build row pair_build[i] (-1: NULLs);
 * a NULL `in` makes the probe side NULL.  Column at a time: the positions
 * are resolved once, then each column is one tight loop. */
static void assemble(const ExJoinSpec *s, JoinLocal *l, const CmBatch *in, int n)
{
    cm_batch_reset(&l->out);
    if (in != NULL && l->table != NULL && n > 0 && pairs_unique(l, n)) {
        /* every pair has a build row: only tail passes -1, and it passes no table rows */
        bool all_built = true;
        for (int i = 0; i < n && all_built; i++) {
            all_built = l->pair_build[i] >= 0;
        }
        if (all_built) {
            assemble_by_ref(s, l, in, n);
            return;
        }
    }
    uint32_t *gpos = l->gather_pos;
    if (in != NULL) {
        for (int i = 0; i < n; i++) {
            gpos[i] = cm_batch_pos(in, (int)l->pair_row[i]);
        }
    }
    for (int c = 0; c < s->n_probe_cols; c++) {
        gather_column(&l->out.cols[c], in ? &in->cols[c] : NULL, gpos, n);
    }
    if (s->n_build_cols == 0) {
        l->out.n_rows = n;
        return;
    }
    /* Build rows come from many batches: find each pair's batch and position
     * once, then copy a column at a time. */
    const CmBatch **src = l->pair_src;
    uint32_t *pos = l->pair_src_pos;
    for (int i = 0; i < n; i++) {
        int64_t r = l->pair_build[i];
        src[i] = r < 0 ? NULL : row_batch(l->table, r, &pos[i]);
    }
    for (int c = 0; c < s->n_build_cols; c++) {
        CmVec *dst = &l->out.cols[s->n_probe_cols + c];
        switch (cm_type_width(dst->type)) {
        case 1:
            COPY_FROM_PAIRS(uint8_t);
            break;
        case 4:
            COPY_FROM_PAIRS(int32_t);
            break;
        case 8:
            COPY_FROM_PAIRS(int64_t);
            break;
        default:
            COPY_FROM_PAIRS(CmStr);
            break;
        }
        for (int i = 0; i < n; i++) {
            if (src[i] == NULL || cm_vec_is_null(&src[i]->cols[c], pos[i])) {
                cm_vec_set_null(dst, (uint32_t)i);
            }
        }
    }
    l->out.n_rows = n;
}

/* A cross join (no keys, INNER, no residual) pairs every probe row with
 * every build row, and nothing depends on which pairs there were: it is
 * emitted a build row at a time (cross_next). */
static bool is_cross(const ExJoinSpec *s)
{
    return s->n_keys == 0 && s->type == EX_JOIN_INNER && s->residual == NULL;
}

/* dst's value at the physical positions [0, n) is value p of src (NULL when
 * that is). */
static void fill_column(CmVec *dst, const CmVec *src, uint32_t p, int n)
{
    if (cm_vec_is_null(src, p)) {
        memset(dst->validity_buf, 0, sizeof dst->validity_buf);
        dst->validity = dst->validity_buf;
        return;
    }
    switch (cm_type_width(dst->type)) {
    case 1: {
        uint8_t x = ((const uint8_t *)src->data)[p];
        memset(dst->data, x, (size_t)n);
        break;
    }
    case 4: {
        int32_t x = ((const int32_t *)src->data)[p];
        for (int i = 0; i < n; i++) {
            ((int32_t *)dst->data)[i] = x;
        }
        break;
    }
    case 8: {
        int64_t x = ((const int64_t *)src->data)[p];
        for (int i = 0; i < n; i++) {
            ((int64_t *)dst->data)[i] = x;
        }
        break;
    }
    default: {
        CmStr x = ((const CmStr *)src->data)[p];
        for (int i = 0; i < n; i++) {
            ((CmStr *)dst->data)[i] = x;
        }
        break;
    }
    }
}

/* The next output of a cross join: one build row against the whole probe
 * batch, in build order.  The probe columns and selection are the input's
 * own (no copy; `in` stays valid until this join asks for the next input,
 * after the consumer has read this output); the build row's values are
 * repeated at every physical position the selection can name.  Where the
 * pairs were copied out probe row by probe row, a wide cross join (K-means:
 * 21 columns a side) spent most of its time copying.  False when every build
 * row is done. */
static bool cross_next(const ExJoinSpec *s, JoinLocal *l, const CmBatch *in)
{
    const JoinTable *t = l->table;
    if (!l->started) {
        l->cross_row = 0;
        l->started = true;
    }
    if (l->cross_row >= t->n_rows || in->n_rows == 0) {
        return false;
    }
    int64_t r = l->cross_row++;
    memset(l->probe_matched, 1, (size_t)in->n_rows);
    cm_batch_reset(&l->out);
    for (int c = 0; c < s->n_probe_cols; c++) {
        cm_vec_reference(&l->out.cols[c], &in->cols[c]);
    }
    uint32_t pos;
    const CmBatch *b = row_batch(t, r, &pos);
    int n_phys = in->sel != NULL ? CM_BATCH_CAP : in->n_rows;
    for (int c = 0; c < s->n_build_cols; c++) {
        fill_column(&l->out.cols[s->n_probe_cols + c], &b->cols[c], pos, n_phys);
    }
    l->out.sel = in->sel;
    l->out.n_rows = in->n_rows;
    return true;
}

static bool keys_equal(const ExJoinSpec *s, const CmBatch *in, uint32_t p, const CmBatch *b,
                       uint32_t pos)
{
    for (int k = 0; k < s->n_keys; k++) {
        if (!ex_key_equal(&in->cols[s->probe_keys[k]], p, &b->cols[s->build_keys[k]], pos)) {
            return false;
        }
    }
    return true;
}

/* Gathers up to a batch of candidate pairs (probe row, build row); returns
 * how many.  A column at a time: first the chain head of every probe row of
 * the batch (independent loads, which the CPU overlaps instead of waiting on
 * each), then rounds that each follow one link of every chain still going,
 * keeping those that go on.  A single integer key compares the keys kept in
 * the table, with no call and no row lookup; other keys compare hashes first
 * and look the build row up only when they agree.  Pairs come out round by
 * round rather than probe row by probe row; nothing downstream depends on the
 * order.  A round cut short by a full output resumes at live_pos. */
#define PROBE_AHEAD 16

static int gather_pairs(const ExJoinSpec *s, JoinLocal *l, const CmBatch *in)
{
    const JoinTable *t = l->table;
    bool int_path = t->int_keys;
    if (!l->started) {
        const CmVec *kv = int_path ? &in->cols[s->probe_keys[0]] : NULL;
        int n_live = 0;
        for (int i = 0; i < in->n_rows; i++) {
            uint32_t p = cm_batch_pos(in, i);
            bool null_key = int_path ? cm_vec_is_null(kv, p)
                                     : has_null_key(in, i, s->n_keys, s->probe_keys, s->null_eq);
            int64_t key = int_path && !null_key ? int_at(kv, p) : 0;
            int64_t head = -1;
            if (null_key) {
                /* matches nothing */
            } else if (t->sorted != NULL) {
                int64_t lo, hi;
                bool any = bound_range(s, t, in, p, &lo, &hi);
                head = any ? 0 : -1;
                l->cur[i] = scan_down(s) ? hi - 1 : lo;
                key = scan_down(s) ? lo : hi;
            } else if (t->direct) {
                uint64_t slot = (uint64_t)key - (uint64_t)t->key_min; /* past mask: no such key */
                head = slot <= t->mask ? t->heads[slot] : -1;
            } else {
#if CM_BATCH_CAP > PROBE_AHEAD
                /* a table past the cache misses at every head: the misses
                 * overlap only as far as the CPU's window reaches, so the
                 * heads further on are asked for now */
                if (i + PROBE_AHEAD < in->n_rows) {
                    __builtin_prefetch(&t->heads[l->hashes[i + PROBE_AHEAD] & t->mask]);
                }
#endif
                head = t->heads[l->hashes[i] & t->mask];
            }
            l->cur[i] = t->sorted != NULL ? l->cur[i] : head;
            l->key[i] = key;
            l->live[n_live] = i;
            n_live += head >= 0;
        }
        l->n_live = n_live;
        l->live_pos = l->live_kept = 0;
        l->started = true;
    }
    int n = 0;
    if (t->sorted != NULL) {
        return gather_range_pairs(s, l, in);
    }
    if (s->n_keys == 0) {
        /* A nested loop pairs each probe row with every build row in turn,
         * probe row by probe row: the order a cross join is expected in. */
        for (; l->live_pos < l->n_live && n < CM_BATCH_CAP; l->live_pos++) {
            int i = l->live[l->live_pos];
            for (; l->cur[i] >= 0 && n < CM_BATCH_CAP; l->cur[i] = t->rows[l->cur[i]].next) {
                l->pair_row[n] = (uint32_t)i;
                l->pair_build[n++] = l->cur[i];
            }
            if (l->cur[i] >= 0) {
                break;
            }
        }
        return n;
    }
    /* Semi, anti and mark joins need one match per probe row: a row that has
     * one (from the pairs of an earlier call) stops following its chain.
     * With a residual a chain can be long and its first rows fail it
     * (`a.k = b.k AND a.w <> b.w`); this keeps such a probe row to a few
     * pairs instead of its whole key group. */
    bool once = s->type == EX_JOIN_SEMI || s->type == EX_JOIN_ANTI || s->type == EX_JOIN_MARK;
    while (l->n_live > 0 && n < CM_BATCH_CAP) {
        int j = l->live_pos, kept = l->live_kept;
        for (; j < l->n_live && n < CM_BATCH_CAP; j++) {
            int i = l->live[j];
            if (once && l->probe_matched[i]) {
                continue; /* dropped from the live rows */
            }
            int64_t r = l->cur[i];
#if CM_BATCH_CAP > PROBE_AHEAD
            if (j + PROBE_AHEAD < l->n_live) {
                __builtin_prefetch(&t->rows[l->cur[l->live[j + PROBE_AHEAD]]]);
            }
#endif
            const JoinRow *row = &t->rows[r];
            bool match;
            if (int_path) {
                match = row->key == l->key[i];
            } else {
                uint32_t pos;
                const CmBatch *b = row_batch(t, r, &pos);
                match = row->key == (int64_t)l->hashes[i] &&
                        keys_equal(s, in, cm_batch_pos(in, i), b, pos);
            }
            if (match) {
                l->pair_row[n] = (uint32_t)i;
                l->pair_build[n++] = r;
            }
            l->cur[i] = row->next;
            l->live[kept] = i;
            kept += l->cur[i] >= 0;
        }
        if (j < l->n_live) {
            l->live_pos = j;
            l->live_kept = kept;
            return n;
        }
        l->n_live = kept;
        l->live_pos = l->live_kept = 0;
    }
    return n;
}

/* Filters the assembled pairs by the residual and records the matches. */
static CmStatus match_pairs(const ExJoinSpec *s, JoinLocal *l, int n, bool assembled, CmErr *err)
{
    const CmVec *ok = NULL;
    if (s->residual != NULL) {
        ok = ex_expr_eval(l->residual, &l->out, err);
        if (ok == NULL) {
            return err->code;
        }
    }
    /* Assembled pairs are at the physical positions of out's selection when
     * assemble_by_ref made one (never sel_buf), else at 0..n-1. */
    int kept = 0;
    for (int i = 0; i < n; i++) {
        uint32_t p = assembled ? cm_batch_pos(&l->out, i) : (uint32_t)i;
        if (ok != NULL && (cm_vec_is_null(ok, p) || !((const uint8_t *)ok->data)[p])) {
            continue;
        }
        l->probe_matched[l->pair_row[i]] = 1;
        if (l->table->matched != NULL) {
            l->table->matched[l->pair_build[i]] = 1;
        }
        l->out.sel_buf[kept++] = p;
    }
    if (ok != NULL) {
        l->out.sel = l->out.sel_buf;
        l->out.n_rows = kept;
    }
    return CM_OK;
}

/* Phase 1: the rows whose output depends on the matched flags. */
static const CmBatch *tail(const ExJoinSpec *s, JoinLocal *l, const CmBatch *in)
{
    switch (s->type) {
    case EX_JOIN_LEFT:
    case EX_JOIN_FULL: {
        int n = 0;
        for (int i = 0; i < in->n_rows; i++) {
            if (!l->probe_matched[i]) {
                l->pair_row[n] = (uint32_t)i;
                l->pair_build[n++] = -1;
            }
        }
        assemble(s, l, in, n);
        return n > 0 ? &l->out : NULL;
    }
    case EX_JOIN_SEMI:
    case EX_JOIN_ANTI: {
        int n = 0;
        for (int i = 0; i < in->n_rows; i++) {
            l->view.sel_buf[n] = cm_batch_pos(in, i);
            n += l->probe_matched[i] == (s->type == EX_JOIN_SEMI);
        }
        for (int c = 0; c < s->n_probe_cols; c++) {
            cm_vec_reference(&l->view_cols[c], &in->cols[c]);
        }
        l->view.n_rows = n;
        l->view.sel = l->view.sel_buf;
        return n > 0 ? &l->view : NULL;
    }
    case EX_JOIN_MARK: {
        uint8_t *m = l->mark.data;
        l->mark.validity = NULL;
        for (int i = 0; i < in->n_rows; i++) {
            uint32_t p = cm_batch_pos(in, i);
            m[p] = l->probe_matched[i];
            int64_t build_rows = l->whole_build ? l->all_rows : l->table->n_rows;
            bool build_null = l->whole_build ? l->all_has_null : l->table->has_null_key;
            bool unknown =
                !s->mark_plain && !l->probe_matched[i] && build_rows > 0 &&
                (build_null || has_null_key(in, i, s->n_keys, s->probe_keys, s->null_eq));
            if (unknown) {
                cm_vec_set_null(&l->mark, p);
            }
        }
        for (int c = 0; c < s->n_probe_cols; c++) {
            cm_vec_reference(&l->view_cols[c], &in->cols[c]);
        }
        cm_vec_reference(&l->view_cols[s->n_probe_cols], &l->mark);
        l->view.n_rows = in->n_rows;
        l->view.sel = in->sel;
        return &l->view;
    }
    default:
        return NULL;
    }
}

/* Block mode: adds the probe rows of `in` that matched in this block to pmatch. */
static CmStatus block_matches(JoinLocal *l, const CmBatch *in, CmErr *err)
{
    int64_t need = l->probe_ord + in->n_rows;
    if (need > l->pmatch_cap) {
        int64_t cap = l->pmatch_cap ? l->pmatch_cap * 2 : 4096;
        while (cap < need) {
            cap *= 2;
        }
        uint64_t *g = NULL;
        if (cm_mem_need(&l->mem, (cap - l->pmatch_cap) / 8, err) != CM_OK ||
            (g = cm_realloc(l->pmatch, (size_t)(cap / 64) * sizeof(uint64_t))) == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory joining a skewed key");
        }
        memset(g + l->pmatch_cap / 64, 0, (size_t)((cap - l->pmatch_cap) / 64) * sizeof(uint64_t));
        l->pmatch = g;
        l->pmatch_cap = cap;
    }
    for (int i = 0; i < in->n_rows; i++) {
        int64_t o = l->probe_ord + i;
        l->pmatch[o / 64] |= (uint64_t)(l->probe_matched[i] != 0) << (o % 64);
    }
    l->probe_ord += in->n_rows;
    return CM_OK;
}

static ExOpResult join_push(ExOp *op, void *local, const CmBatch *in, const CmBatch **out,
                            CmErr *err)
{
    const ExJoinSpec *s = op->spec;
    JoinLocal *l = local;
    if (l->grace && in != &l->probe_in && !l->active) {
        if (!l->build_done) {
            /* The build side is all written: its files' write buffers go,
             * and the classes that fit come back (hybrid_start). */
            l->build_done = true;
            for (int c = 0; c < l->n_files && err->code == CM_OK; c++) {
                if (l->build_files[c] != NULL) {
                    sh_spill_rewind(l->build_files[c], err);
                }
            }
            if (err->code != CM_OK || hybrid_start(op, s, l, err) != CM_OK) {
                *out = NULL;
                return EX_NEED_INPUT;
            }
        }
        /* Probe rows of spilled classes wait in their class's file until
         * flush joins them; those of resident classes join now. */
        if (route(s, l, l->probe_files, in, s->probe_keys, err) != CM_OK ||
            l->res_view.n_rows == 0) {
            *out = NULL;
            return EX_NEED_INPUT;
        }
    }
    if (l->grace && in != &l->probe_in) {
        in = &l->res_view; /* the resident classes' rows of the input batch */
    }
    if (!l->active) {
        l->active = true;
        l->phase = 0;
        l->started = false;
        memset(l->probe_matched, 0, (size_t)in->n_rows);
        if (!l->table->direct) {
            ex_hash_keys(in, s->n_keys, s->probe_keys, l->hashes);
        }
    }
    if (l->phase == 0 && is_cross(s)) {
        if (cross_next(s, l, in)) {
            *out = &l->out;
            return EX_HAVE_MORE;
        }
        l->phase = 1;
    }
    if (l->phase == 0) {
        int n = gather_pairs(s, l, in);
        if (n > 0) {
            bool emits =
                s->type == EX_JOIN_INNER || s->type == EX_JOIN_LEFT || s->type == EX_JOIN_FULL;
            /* Semi, anti and mark joins only need the pairs' rows to check a
             * residual; without one the matched flags are all they need. */
            bool assembled = emits || s->residual != NULL;
            if (assembled) {
                assemble(s, l, in, n);
            }
            if (match_pairs(s, l, n, assembled, err) != CM_OK) {
                l->active = false;
                return EX_NEED_INPUT;
            }
            *out = emits && l->out.n_rows > 0 ? &l->out : NULL;
            return EX_HAVE_MORE;
        }
        l->phase = 1;
    }
    l->active = false;
    *out = l->blocks ? NULL : tail(s, l, in);
    if (l->blocks && block_matches(l, in, err) != CM_OK) {
        return EX_NEED_INPUT;
    }
    return EX_NEED_INPUT;
}

static ExOpResult grace_flush(ExOp *op, JoinLocal *l, const CmBatch **out, CmErr *err);

/* FULL: the build rows no probe row matched, a batch at a time. */
static ExOpResult full_tail(const ExJoinSpec *s, JoinLocal *l, const CmBatch **out)
{
    int n = 0;
    while (l->flush_row < l->table->n_rows && n < CM_BATCH_CAP) {
        int64_t r = l->flush_row++;
        if (!l->table->matched[r]) {
            l->pair_build[n++] = r;
        }
    }
    assemble(s, l, NULL, n);
    *out = n > 0 ? &l->out : NULL;
    return l->flush_row < l->table->n_rows ? EX_HAVE_MORE : EX_DONE;
}

static ExOpResult join_flush(ExOp *op, void *local, const CmBatch **out, CmErr *err)
{
    const ExJoinSpec *s = op->spec;
    JoinLocal *l = local;
    if (l->grace) {
        return grace_flush(op, l, out, err);
    }
    if (s->type != EX_JOIN_FULL) {
        return EX_DONE;
    }
    return full_tail(s, l, out);
}

/* ---- grace mode ------------------------------------------------------------------------ */

/* The class of a row is its hash >> 40 modulo the class's modulus: bits the
 * exchange (hash >> 32 modulo the partitions) and the table's slots (the low
 * bits) barely use. */
static inline uint64_t class_bits(uint64_t h)
{
    return h >> 40;
}

/* Appends the active rows of b to the files of their classes under the base
 * modulus (`keys`: b's key columns), made as first needed; rows of the
 * resident classes (hybrid) are left in l->res_view instead. */
static CmStatus route(const ExJoinSpec *s, JoinLocal *l, ShSpill **files, const CmBatch *b,
                      const int *keys, CmErr *err)
{
    const CmConfig *cfg = &l->query->config;
    int n = l->n_files;
    int count[GRACE_FANOUT] = {0}, start[GRACE_FANOUT], fill[GRACE_FANOUT];
    if (n > 1) {
        ex_hash_keys(b, s->n_keys, keys, l->class_hashes);
    }
    for (int i = 0; i < b->n_rows; i++) {
        int c = n > 1 ? (int)(class_bits(l->class_hashes[i]) % (uint64_t)n) : 0;
        l->route_class[i] = (uint8_t)c;
        count[c]++;
    }
    for (int c = 0, at = 0; c < n; c++) {
        start[c] = fill[c] = at;
        at += count[c];
    }
    for (int i = 0; i < b->n_rows; i++) {
        l->route_pos[fill[l->route_class[i]]++] = cm_batch_pos(b, i);
    }
    /* rows of classes below n_resident, in their order */
    int kept = 0;
    for (int i = 0; l->n_resident > 0 && i < b->n_rows; i++) {
        if (l->route_class[i] < l->n_resident) {
            l->res_sel[kept++] = cm_batch_pos(b, i);
        }
    }
    l->res_view = *b;
    l->res_view.sel = l->res_sel;
    l->res_view.n_rows = kept;
    for (int c = l->n_resident; c < n; c++) {
        if (count[c] == 0) {
            continue;
        }
        if (files[c] == NULL &&
            (files[c] = sh_spill_new(cfg->temp_directory, cfg->max_temp_directory_size, err)) ==
                NULL) {
            return err->code;
        }
        CmBatch view = *b;
        view.sel = &l->route_pos[start[c]];
        view.n_rows = count[c];
        if (sh_spill_append(files[c], &view, err) != CM_OK) {
            return err->code;
        }
    }
    return CM_OK;
}

static CmStatus grace_add_build(const ExJoinSpec *s, JoinLocal *l, const CmBatch *b, CmErr *err)
{
    for (int i = 0; i < b->n_rows; i++) {
        l->all_has_null |= has_null_key(b, i, s->n_keys, s->build_keys, s->null_eq);
    }
    l->all_rows += b->n_rows;
    l->build_bytes += (int64_t)b->heap.n_bytes;
    for (int c = 0; c < b->n_cols; c++) {
        l->build_bytes += (int64_t)cm_type_width(b->cols[c].type) * b->n_rows;
    }
    return route(s, l, l->build_files, b, s->build_keys, err);
}

/* Closes both files of base class c (its space goes back), counting them for
 * EXPLAIN ANALYZE. */
static void free_class_files(ExOp *op, JoinLocal *l, int c)
{
    ShSpill **f[2] = {&l->build_files[c], &l->probe_files[c]};
    for (int side = 0; side < 2; side++) {
        if (*f[side] != NULL) {
            ex_op_count_spill(op, sh_spill_bytes(*f[side]));
            sh_spill_free(*f[side]);
            *f[side] = NULL;
        }
    }
}

/* Hybrid grace, once the build side is in its files and before the first
 * probe row: the first classes whose build rows the manager grants (their
 * rows at the build's average size, an index at its largest, and a partly
 * filled batch) are read back into l->own and indexed, so that their probe
 * rows join as they come instead of making a round trip through a file.  A
 * build a little too big then spills a little of the probe side, not all of
 * it: PageRank's recursive CTE at 150 MiB spilled its 10M edges in every
 * round (383 MB a round).  When the rows turn out bigger than granted and the
 * rest is refused, every class stays spilled. */
static CmStatus hybrid_start(ExOp *op, const ExJoinSpec *s, JoinLocal *l, CmErr *err)
{
    if (s->n_keys == 0 || l->all_rows == 0) {
        return CM_OK;
    }
    int64_t batch = 0;
    for (int c = 0; c < s->n_build_cols; c++) {
        batch += (int64_t)cm_type_width(s->build_types[c]) * CM_BATCH_CAP + 8 * CM_VALIDITY_WORDS;
    }
    double per_row = (double)l->build_bytes / (double)l->all_rows + BLOCK_INDEX_ROW_BYTES;
    int64_t granted = 0;
    int k = 0;
    for (; k < l->n_files; k++) {
        ShSpill *f = l->build_files[k];
        int64_t ask = f ? (int64_t)((double)sh_spill_rows(f) * per_row) + batch : 0;
        if (!cm_mem_grow(&l->mem, ask)) {
            break;
        }
        granted += ask;
    }
    for (int c = 0; c < k && err->code == CM_OK; c++) {
        ShSpill *f = l->build_files[c];
        bool eof = f == NULL || sh_spill_rewind(f, err) != CM_OK;
        while (!eof && err->code == CM_OK) {
            CmBatch *b = new_batch(s, &l->own, err);
            if (b == NULL || sh_spill_read(f, b, &eof, err) != CM_OK) {
                break;
            }
            if (b->n_rows == 0) {
                drop_last_batch(&l->own);
                continue;
            }
            l->own.n_rows += b->n_rows;
            (void)pack_into_previous(&l->own, b, err);
        }
    }
    int64_t index = index_bytes(l->own.n_rows);
    int64_t used = index;
    for (int bi = 0; bi < l->own.n_batches; bi++) {
        used += batch_bytes(l->own.batches[bi]);
    }
    if (err->code != CM_OK || k == 0 || (used > granted && !cm_mem_grow(&l->mem, used - granted))) {
        table_free(&l->own);
        cm_mem_shrink(&l->mem, granted);
        return err->code;
    }
    cm_mem_shrink(&l->mem, granted > used ? granted - used : 0);
    l->own.prepaid = index;
    if (finish_table(s, &l->own, &l->mem, err) != CM_OK) {
        return err->code;
    }
    for (int c = 0; c < k; c++) {
        free_class_files(op, l, c);
    }
    l->n_resident = k;
    l->cur_res = k - 1; /* flush goes on from class k */
    l->table = &l->own;
    return CM_OK;
}

/* The build side does not fit: what was read goes to the build file, and so
 * will the rest of it and every probe row.  The first modulus aims at classes
 * of half what was granted. */
static CmStatus grace_start(const ExJoinSpec *s, JoinLocal *l, CmErr *err)
{
    int64_t granted = l->mem.held > (1 << 20) ? l->mem.held : (1 << 20);
    int64_t read = 0;
    for (int bi = 0; bi < l->own.n_batches; bi++) {
        read += batch_bytes(l->own.batches[bi]);
    }
    /* read is what did not fit; the rest of the build is unknown: guess 4x
     * (a broadcast turned grace knows it: l->expect).  Without keys every row
     * is in the one class 0 of modulus 1, joined in blocks (a block nested
     * loop). */
    int64_t expect = read * 4 > l->expect ? read * 4 : l->expect;
    int64_t mod = s->n_keys > 0 ? 2 : 1;
    while (s->n_keys > 0 && mod < GRACE_FANOUT && mod * granted / 2 < expect) {
        mod *= 2;
    }
    l->cur_mod = mod; /* the base modulus; classes 0..mod-1 are taken in turn */
    l->cur_res = -1;
    l->build_files = cm_calloc((size_t)mod, sizeof(ShSpill *));
    l->probe_files = cm_calloc((size_t)mod, sizeof(ShSpill *));
    if (l->build_files == NULL || l->probe_files == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory starting a spilling hash join");
    }
    l->n_files = (int)mod;
    if (cm_batch_init(&l->probe_in, s->n_probe_cols, s->probe_types, err) != CM_OK ||
        cm_batch_init(&l->build_in, s->n_build_cols, s->build_types, err) != CM_OK) {
        return err->code;
    }
    l->grace = true;
    l->whole_build = true;
    for (int bi = 0; bi < l->own.n_batches && err->code == CM_OK; bi++) {
        grace_add_build(s, l, l->own.batches[bi], err);
    }
    table_free(&l->own);
    cm_mem_shrink(&l->mem, l->mem.held);
    return err->code;
}

/* Moves to the next class: a split half first, else the next residue of the
 * base modulus, whose predecessor's files are done with.  False when every
 * class is done. */
static bool next_class(ExOp *op, JoinLocal *l, int64_t *mod, int64_t *res)
{
    if (l->n_work > 0) {
        l->n_work--;
        *mod = l->work_mod[l->n_work];
        *res = l->work_res[l->n_work];
        return true;
    }
    if (l->cur_res >= 0) {
        free_class_files(op, l, (int)l->cur_res);
    }
    if (l->cur_res + 1 >= l->cur_mod) {
        return false;
    }
    *mod = l->cur_mod;
    *res = ++l->cur_res;
    return true;
}

/* Appends the rows of l->build_in at pos[0..n) to the class's table,
 * reserving what grows; *fits false when the manager refuses. */
static CmStatus class_append(const ExJoinSpec *s, JoinLocal *l, const uint32_t *pos, int n,
                             bool can_split, bool *fits, CmErr *err)
{
    /* Block mode (can_split false) asks too, and ends the block when refused:
     * the rows appended are then reserved all the same, to stay counted. */
    JoinTable *t = &l->own;
    for (int k = 0; k < n && *fits;) {
        CmBatch *b = t->n_batches > 0 ? t->batches[t->n_batches - 1] : NULL;
        int64_t bytes = 0;
        if (b == NULL || b->n_rows == CM_BATCH_CAP) {
            if ((b = new_batch(s, t, err)) == NULL) {
                return err->code;
            }
            bytes = batch_bytes(b);
        }
        int take = CM_BATCH_CAP - b->n_rows < n - k ? CM_BATCH_CAP - b->n_rows : n - k;
        size_t heap = b->heap.n_bytes;
        if (cm_batch_append_rows(b, &l->build_in, pos + k, take, true, err) != CM_OK) {
            return err->code;
        }
        t->n_rows += take;
        k += take;
        bytes += (int64_t)(b->heap.n_bytes - heap);
        if (!can_split) {
            bytes += (int64_t)take * BLOCK_INDEX_ROW_BYTES;
            t->prepaid += (int64_t)take * BLOCK_INDEX_ROW_BYTES;
        }
        *fits = cm_mem_grow(&l->mem, bytes);
        if (!*fits && !can_split && cm_mem_need(&l->mem, bytes, err) != CM_OK) {
            return err->code;
        }
    }
    return CM_OK;
}

/* Frees the task's table and gives back its reservation, but for the match
 * bits of block mode (pmatch), which outlive it, and a grace class's index
 * arrays, which go to l->spare for the next class with their bytes held. */
static void own_free(JoinLocal *l)
{
    JoinTable *t = &l->own;
    if (t->spare != NULL && t->rows != NULL && t->skip_kept != NULL) {
        spare_drop(&l->spare, &l->mem);
        l->spare = (IndexSpare){.hashes = t->hashes,
                                .rows = t->rows,
                                .skip = t->skip_kept,
                                .n = t->cap_rows,
                                .heads = t->heads,
                                .n_slots = t->cap_slots,
                                .bytes = t->idx_held};
        t->hashes = NULL;
        t->rows = NULL;
        t->heads = NULL;
        t->skip_kept = NULL;
    }
    table_free(t);
    cm_mem_shrink(&l->mem, l->mem.held - l->pmatch_cap / 8 - l->spare.bytes);
}

/* Loads the build rows of class (mod, res) into l->own and indexes them;
 * *fits false (and the table empty) when they do not fit.  At GRACE_MAX_MOD
 * the class cannot split: it loads a block, the rows after the first
 * l->blk_done, until memory is refused, and sets l->blk_more when rows are
 * left for another block. */
static CmStatus class_load(const ExJoinSpec *s, JoinLocal *l, int64_t mod, int64_t res, bool *fits,
                           CmErr *err)
{
    own_free(l);
    l->own.spare = &l->spare;
    *fits = true;
    bool can_split = s->n_keys > 0 && mod < GRACE_MAX_MOD;
    bool full = false; /* block mode: the block is full */
    int64_t seen = 0;  /* block mode: the class's rows read so far */
    l->blk_more = false;
    ShSpill *f = l->build_files[res % l->n_files];
    if (f != NULL && sh_spill_rewind(f, err) != CM_OK) {
        return err->code;
    }
    uint32_t pos[CM_BATCH_CAP];
    bool eof = f == NULL;
    while (!eof && *fits && sh_spill_read(f, &l->build_in, &eof, err) == CM_OK && !eof) {
        ex_hash_keys(&l->build_in, s->n_keys, s->build_keys, l->class_hashes);
        int n = 0;
        for (int i = 0; i < l->build_in.n_rows; i++) {
            if (class_bits(l->class_hashes[i]) % (uint64_t)mod != (uint64_t)res) {
                continue;
            }
            if (!can_split && (seen++ < l->blk_done || full)) {
                continue;
            }
            pos[n++] = (uint32_t)i;
        }
        bool took = true;
        if (class_append(s, l, pos, n, can_split, &took, err) != CM_OK) {
            return err->code;
        }
        if (can_split) {
            *fits = took;
        } else {
            full |= !took;
        }
    }
    if (err->code != CM_OK) {
        return err->code;
    }
    if (*fits && can_split) {
        *fits = index_fits(s, l, 0, 0);
    }
    if (!*fits) {
        own_free(l);
        return CM_OK;
    }
    if (!can_split) {
        l->blk_done += l->own.n_rows;
        l->blk_more = seen > l->blk_done;
    }
    return finish_table(s, &l->own, &l->mem, err);
}

/* Reads the next probe batch with rows of the current class, narrowed to them. */
static CmStatus class_probe_batch(const ExJoinSpec *s, JoinLocal *l, int64_t mod, int64_t res,
                                  bool *eof, CmErr *err)
{
    ShSpill *f = l->probe_files[res % l->n_files];
    *eof = f == NULL;
    while (!*eof && sh_spill_read(f, &l->probe_in, eof, err) == CM_OK && !*eof) {
        ex_hash_keys(&l->probe_in, s->n_keys, s->probe_keys, l->class_hashes);
        int n = 0;
        for (int i = 0; i < l->probe_in.n_rows; i++) {
            l->probe_in.sel_buf[n] = (uint32_t)i;
            n += class_bits(l->class_hashes[i]) % (uint64_t)mod == (uint64_t)res;
        }
        if (n > 0) {
            l->probe_in.sel = l->probe_in.sel_buf;
            l->probe_in.n_rows = n;
            return CM_OK;
        }
    }
    return err->code;
}

/* Block mode is over for the class: pmatch goes. */
static void blocks_end(JoinLocal *l)
{
    cm_mem_shrink(&l->mem, l->pmatch_cap / 8);
    cm_free(l->pmatch);
    l->pmatch = NULL;
    l->pmatch_cap = 0;
    l->blocks = false;
}

/* Starts a pass over the current class's probe rows. */
static CmStatus probe_pass(JoinLocal *l, int state, CmErr *err)
{
    l->g_state = state;
    l->mid_batch = false;
    l->probe_ord = 0;
    ShSpill *f = l->probe_files[l->probe_res % l->n_files];
    return f != NULL ? sh_spill_rewind(f, err) : CM_OK;
}

/* Joins the spilled sides class by class: load a class's build rows (split
 * the class in two when they do not fit), stream the probe file through the
 * usual probe, then, for FULL joins, emit the class's unmatched build rows.
 * A class that cannot split goes in blocks (see JoinLocal.blocks): after each
 * block's probe pass (and FULL tail) the next block loads, and after the last
 * a final pass emits the rows that depend on every block. */
static ExOpResult grace_flush(ExOp *op, JoinLocal *l, const CmBatch **out, CmErr *err)
{
    const ExJoinSpec *s = op->spec;
    *out = NULL;
    while (err->code == CM_OK && l->n_resident > 0) {
        /* The resident classes are done with: FULL's unmatched rows of
         * theirs, then their table goes. */
        if (s->type == EX_JOIN_FULL && l->flush_row < l->own.n_rows) {
            full_tail(s, l, out);
            if (*out != NULL) {
                return EX_HAVE_MORE;
            }
            continue;
        }
        own_free(l);
        l->n_resident = 0;
    }
    while (err->code == CM_OK) {
        if (l->g_state == GRACE_NEXT) {
            int64_t mod, res;
            bool fits;
            if (!next_class(op, l, &mod, &res)) {
                return EX_DONE;
            }
            l->blk_done = 0;
            if (class_load(s, l, mod, res, &fits, err) != CM_OK) {
                break;
            }
            if (!fits) {
                /* Two halves: res and res + mod under twice the modulus. */
                l->work_mod[l->n_work] = mod * 2;
                l->work_res[l->n_work++] = res + mod;
                l->work_mod[l->n_work] = mod * 2;
                l->work_res[l->n_work++] = res;
                continue;
            }
            l->blocks = l->blk_more;
            l->table = &l->own;
            l->probe_mod = mod;
            l->probe_res = res;
            probe_pass(l, GRACE_PROBE, err);
            continue;
        }
        if (l->g_state == GRACE_PROBE) {
            if (!l->mid_batch) {
                bool eof = false;
                if (class_probe_batch(s, l, l->probe_mod, l->probe_res, &eof, err) != CM_OK) {
                    break;
                }
                if (eof) {
                    l->flush_row = 0;
                    l->g_state = s->type == EX_JOIN_FULL ? GRACE_FULL_TAIL
                                 : l->blocks             ? GRACE_BLOCK_END
                                                         : GRACE_NEXT;
                    continue;
                }
            }
            l->mid_batch = join_push(op, l, &l->probe_in, out, err) == EX_HAVE_MORE;
            if (err->code == CM_OK && *out != NULL) {
                return EX_HAVE_MORE;
            }
            continue;
        }
        if (l->g_state == GRACE_BLOCK_END) {
            bool fits;
            if (l->blk_more) {
                if (class_load(s, l, l->probe_mod, l->probe_res, &fits, err) == CM_OK) {
                    probe_pass(l, GRACE_PROBE, err);
                }
            } else if (s->type == EX_JOIN_INNER) {
                blocks_end(l);
                l->g_state = GRACE_NEXT;
            } else {
                table_free(&l->own);
                probe_pass(l, GRACE_FINAL, err);
            }
            continue;
        }
        if (l->g_state == GRACE_FINAL) {
            bool eof = false;
            if (class_probe_batch(s, l, l->probe_mod, l->probe_res, &eof, err) != CM_OK) {
                break;
            }
            if (eof) {
                blocks_end(l);
                l->g_state = GRACE_NEXT;
                continue;
            }
            for (int i = 0; i < l->probe_in.n_rows; i++) {
                int64_t o = l->probe_ord + i;
                l->probe_matched[i] = (uint8_t)((l->pmatch[o / 64] >> (o % 64)) & 1);
            }
            l->probe_ord += l->probe_in.n_rows;
            *out = tail(s, l, &l->probe_in);
            if (*out != NULL) {
                return EX_HAVE_MORE;
            }
            continue;
        }
        if (full_tail(s, l, out) == EX_DONE) {
            l->g_state = l->blocks ? GRACE_BLOCK_END : GRACE_NEXT;
        }
        if (*out != NULL) {
            return EX_HAVE_MORE;
        }
    }
    return EX_DONE;
}

/* ---- lifecycle ------------------------------------------------------------------------ */

static CmStatus join_global_init(ExOp *op, ExQuery *q, CmErr *err)
{
    JoinGlobal *g = cm_calloc(1, sizeof *g);
    if (g == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    cm_err_init(&g->err);
    cm_cond_init(&g->built_cond);
    g->n_threads = q->config.threads > 0 ? (int)q->config.threads : 1;
    ex_op_res_init(op, &g->mem, "hash join build");
    g->mem.shared = true; /* one table for every probe task */
    /* Decoded batches take more room than the shuffle blocks the broadcast
     * decision measured: twice its threshold is still a broadcast table. */
    g->cap.cap = 2 * cm_config_broadcast_bytes_max(&q->config);
    if (((const ExJoinSpec *)op->spec)->n_keys == 0) {
        /* A nested loop has no partitioned form to turn into: its build is
         * broadcast at any size, and only a refusal sends it to grace mode. */
        g->cap.cap = INT64_MAX;
    }
    op->global = g;
    return CM_OK;
}

static void join_global_fini(ExOp *op)
{
    JoinGlobal *g = op->global;
    table_free(&g->table);
    for (int m = 0; g->parts != NULL && m < g->n_maps; m++) {
        table_free(&g->parts[m]);
    }
    cm_free(g->parts);
    cm_free(g->skip);
    cm_cond_fini(&g->built_cond);
    cm_mem_res_fini(&g->mem);
    cm_free(g);
}

static void join_local_fini(ExOp *op, void *local)
{
    JoinLocal *l = local;
    if (l == NULL) {
        return;
    }
    table_free(&l->own);
    spare_drop(&l->spare, &l->mem);
    cm_free(l->pmatch);
    cm_mem_res_fini(&l->mem);
    for (int c = 0; c < l->n_files; c++) {
        free_class_files(op, l, c);
    }
    cm_free(l->build_files);
    cm_free(l->probe_files);
    cm_batch_fini(&l->probe_in);
    cm_batch_fini(&l->build_in);
    cm_batch_fini(&l->out);
    if (l->view.cols == l->view_cols) {
        l->view.cols = NULL; /* view_cols is freed below */
        l->view.n_cols = 0;
    }
    cm_batch_fini(&l->view);
    cm_free(l->view_cols);
    cm_vec_fini(&l->mark);
    ex_expr_state_free(l->residual);
    cm_free(l);
}

/* The range of the table's non-NULL keys, for the scan feeding the probe side. */
static void publish_range(const ExJoinSpec *s, const JoinTable *t, ExRangeFilter *rf)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int bi = 0; bi < t->n_batches; bi++) {
        const CmBatch *b = t->batches[bi];
        const CmVec *kv = &b->cols[s->build_keys[0]];
        for (int i = 0; i < b->n_rows; i++) {
            uint32_t p = cm_batch_pos(b, i);
            if (!cm_vec_is_null(kv, p)) {
                int64_t v = int_at(kv, p);
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
        }
    }
    rf->empty = lo > hi;
    rf->min = lo;
    rf->max = hi;
    rf->ready = true;
}

/* The last part read: every part joins the table in map order (so the
 * build order, and with it the order of matches, does not depend on which
 * task read what), and indexing starts: one slot range per worker for a big
 * table, one range for a small one.  Called under the op lock. */
static void start_index(const ExJoinSpec *s, JoinGlobal *g)
{
    for (int m = 0; m < g->n_maps && g->err.code == CM_OK; m++) {
        if (!take_batches(&g->table, &g->parts[m])) {
            cm_err_set(&g->err, CM_OOM, -1, "out of memory building a hash join table");
        }
    }
    if (g->err.code == CM_OK && !atomic_load(&g->cap.refused)) {
        /* The index is asked for too: refused, the table is too big all the same. */
        int64_t idx = index_bytes(g->table.n_rows);
        if (grow_after_read(s, &g->mem, idx, 0, *s->build ? sh_shuffle_n_parts(*s->build) : 0)) {
            g->table.prepaid = idx;
        } else {
            atomic_store(&g->cap.refused, true);
        }
    }
    if (g->err.code == CM_OK && atomic_load(&g->cap.refused)) {
        table_free(&g->table);
        cm_mem_shrink(&g->mem, g->mem.held);
        g->too_big = true;
        g->built = true;
        return;
    }
    if (g->err.code == CM_OK) {
        prepare_table(s, &g->table, &g->skip, &g->mem, &g->err);
    }
    if (g->err.code != CM_OK) {
        g->built = true;
        return;
    }
    g->n_ranges = g->table.n_rows >= 65536 && g->n_threads > 1 ? g->n_threads : 1;
    g->indexing = true;
}

/* The last range chained.  Called under the op lock. */
static void end_index(const ExJoinSpec *s, JoinGlobal *g)
{
    index_done(&g->table, &g->skip, &g->mem);
    range_index(s, &g->table, &g->mem);
    if (s->range_out != NULL && int_keyed(s)) {
        publish_range(s, &g->table, s->range_out);
    }
    g->built = true;
}

/* The broadcast table, built once for all tasks.  Every task that asks while
 * it is being built helps: first each takes the next map of the build
 * shuffle not yet taken and decodes it outside the lock; then each takes the
 * next range of slots to chain; it waits only when nothing is left to take. */
static JoinTable *shared_table(ExOp *op, const ExJoinSpec *s, CmErr *err)
{
    JoinGlobal *g = op->global;
    ShShuffle *sh = *s->build;
    cm_mutex_lock(&op->lock);
    if (!g->started) {
        g->started = true;
        g->n_maps = sh ? sh_shuffle_n_maps(sh) : 0;
        g->parts = cm_calloc((size_t)(g->n_maps > 0 ? g->n_maps : 1), sizeof(JoinTable));
        if (g->parts == NULL) {
            cm_err_set(&g->err, CM_OOM, -1, "out of memory building a hash join table");
            g->built = true;
        } else if (g->n_maps == 0) {
            start_index(s, g);
        }
    }
    while (!g->built) {
        if (g->indexing && g->next_range < g->n_ranges) {
            int k = g->next_range++;
            uint64_t n_slots = g->table.mask + 1;
            uint64_t lo = n_slots * (uint64_t)k / (uint64_t)g->n_ranges;
            uint64_t hi = n_slots * (uint64_t)(k + 1) / (uint64_t)g->n_ranges;
            cm_mutex_unlock(&op->lock);
            index_insert(&g->table, g->skip, lo, hi);
            cm_mutex_lock(&op->lock);
            if (++g->ranges_done == g->n_ranges) {
                end_index(s, g);
                cm_cond_broadcast(&g->built_cond);
            }
        } else if (!g->indexing && g->next_map < g->n_maps) {
            int m = g->next_map++;
            cm_mutex_unlock(&op->lock);
            CmErr e;
            cm_err_init(&e);
            read_batches(s, &g->parts[m], 0, sh_shuffle_n_parts(sh), m, m + 1, &g->mem, NULL,
                         &g->cap, &e);
            cm_mutex_lock(&op->lock);
            if (e.code != CM_OK && g->err.code == CM_OK) {
                g->err = e;
            }
            if (++g->maps_done == g->n_maps) {
                start_index(s, g);
                cm_cond_broadcast(&g->built_cond);
            }
        } else {
            cm_cond_wait(&g->built_cond, &op->lock);
        }
    }
    cm_mutex_unlock(&op->lock);
    cm_err_copy(err, &g->err);
    return err->code == CM_OK && !g->too_big ? &g->table : NULL;
}

/* The whole build side's row count and whether a key is NULL, read once (a
 * pass over the build shuffle) for the partitioned MARK joins that need it. */
static CmStatus whole_build_facts(ExOp *op, const ExJoinSpec *s, JoinLocal *l, CmErr *err)
{
    JoinGlobal *g = op->global;
    cm_mutex_lock(&op->lock);
    if (!g->facts_ready) {
        ShShuffle *sh = *s->build;
        CmBatch b;
        bool eof = sh == NULL;
        ShReader *r = NULL;
        if (sh != NULL && cm_batch_init(&b, s->n_build_cols, s->build_types, err) == CM_OK) {
            r = sh_reader_open(sh, 0, sh_shuffle_n_parts(sh), 0, sh_shuffle_n_maps(sh), err);
            while (r != NULL && !eof && !g->facts_null &&
                   sh_reader_next(r, &b, &eof, err) == CM_OK) {
                g->facts_rows += b.n_rows;
                for (int i = 0; i < b.n_rows && !g->facts_null; i++) {
                    g->facts_null = has_null_key(&b, i, s->n_keys, s->build_keys, s->null_eq);
                }
            }
            sh_reader_close(r);
            cm_batch_fini(&b);
        }
        g->facts_ready = err->code == CM_OK;
    }
    l->all_rows = g->facts_rows;
    l->all_has_null = g->facts_null;
    l->whole_build = true;
    cm_mutex_unlock(&op->lock);
    return err->code;
}

static void *join_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    const ExJoinSpec *s = op->spec;
    JoinLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    int n_view = s->n_probe_cols + 1;
    CmType all[512];
    int n_all = s->n_probe_cols + s->n_build_cols;
    if (n_all > 512) {
        cm_err_set(err, CM_LIMIT, -1, "a join of more than 512 columns is not supported");
        cm_free(l);
        return NULL;
    }
    memcpy(all, s->probe_types, sizeof(CmType) * (size_t)s->n_probe_cols);
    memcpy(all + s->n_probe_cols, s->build_types, sizeof(CmType) * (size_t)s->n_build_cols);
    l->view_cols = cm_calloc((size_t)n_view, sizeof(CmVec));
    if (l->view_cols == NULL || cm_batch_init(&l->out, n_all, all, err) != CM_OK ||
        cm_batch_init(&l->view, 0, NULL, err) != CM_OK ||
        cm_vec_init(&l->mark, cm_type_make(CM_T_BOOL), err) != CM_OK) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        join_local_fini(op, l);
        return NULL;
    }
    cm_free(l->view.cols);
    l->view.cols = l->view_cols;
    l->view.n_cols = s->type == EX_JOIN_MARK ? n_view : s->n_probe_cols;
    if (s->residual != NULL && (l->residual = ex_expr_state_new(s->residual, err)) == NULL) {
        join_local_fini(op, l);
        return NULL;
    }
    if (s->partitioned) {
        const ExTaskRead *t = s->ranges ? &s->ranges->task[task->task_idx] : NULL;
        int p0 = t ? t->p0 : task->task_idx;
        int p1 = t ? t->p1 : task->task_idx + 1;
        ex_op_res_init(op, &l->mem, "hash join build");
        l->query = task->query;
        bool needs_whole = s->type == EX_JOIN_MARK && !s->mark_plain;
        if (table_build(s, l, p0, p1, t ? t->b0 : 0, t ? t->b1 : -1, err) != CM_OK ||
            (needs_whole && whole_build_facts(op, s, l, err) != CM_OK)) {
            join_local_fini(op, l);
            return NULL;
        }
        l->table = &l->own;
    } else if ((l->table = shared_table(op, s, err)) == NULL) {
        /* Too big to broadcast: this task joins with the whole build in grace mode. */
        ShShuffle *sh = *s->build;
        ex_op_res_init(op, &l->mem, "hash join build");
        l->query = task->query;
        for (int p = 0; sh != NULL && p < sh_shuffle_n_parts(sh); p++) {
            l->expect += sh_shuffle_part_bytes(sh, p) +
                         sh_shuffle_part_rows(sh, p) * (INDEX_ROW_BYTES + 1 + 2 * INDEX_SLOT_BYTES);
        }
        if (err->code != CM_OK || grace_start(s, l, err) != CM_OK ||
            read_batches(s, &l->own, 0, sh_shuffle_n_parts(sh), 0, -1, &l->mem, l, NULL, err) !=
                CM_OK) {
            join_local_fini(op, l);
            return NULL;
        }
        l->table = &l->own;
    }
    return l;
}

#define MAX_NAMED_COLS 256

/* The names of probe ++ build columns, which the residual reads, in `names`;
 * NULL when either side has none (or there are too many to list). */
static const char *const *residual_names(const ExJoinSpec *s, const char *const *in_names,
                                         const char *names[MAX_NAMED_COLS])
{
    if (in_names == NULL || s->build_names == NULL ||
        s->n_probe_cols + s->n_build_cols > MAX_NAMED_COLS) {
        return NULL;
    }
    memcpy(names, in_names, sizeof(char *) * (size_t)s->n_probe_cols);
    memcpy(names + s->n_probe_cols, s->build_names, sizeof(char *) * (size_t)s->n_build_cols);
    return names;
}

static void join_explain(const ExOp *op, const char *const *in_names, char *buf, size_t cap)
{
    static const char *names[] = {"inner", "left", "full", "semi", "anti", "mark"};
    const ExJoinSpec *s = op->spec;
    size_t n = (size_t)snprintf(buf, cap, "%s, %s", names[s->type],
                                s->partitioned ? "partitioned" : "broadcast");
    for (int k = 0; k < s->n_keys && n + 16 < cap; k++) {
        n += (size_t)snprintf(buf + n, cap - n, "%s", k ? ", " : ", on ");
        n += ex_col_to_string(in_names, s->probe_keys[k], buf + n, cap - n);
        n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, " = %s",
                              s->build_names != NULL ? "" : "build");
        n += n < cap ? ex_col_to_string(s->build_names, s->build_keys[k], buf + n, cap - n) : 0;
    }
    if (s->n_keys == 0 && n + 16 < cap) {
        n += (size_t)snprintf(buf + n, cap - n, ", nested loop");
    }
    if (s->n_bounds > 0 && s->build_names != NULL && n + 16 < cap) {
        n += (size_t)snprintf(buf + n, cap - n, " over build rows sorted on ");
        n += n < cap ? ex_col_to_string(s->build_names, s->bounds[0].build_col, buf + n, cap - n)
                     : 0;
    }
    if (s->residual != NULL && n + 16 < cap) {
        n += (size_t)snprintf(buf + n, cap - n, ", where ");
        const char *cols[MAX_NAMED_COLS];
        ex_expr_to_string(s->residual, residual_names(s, in_names, cols), buf + n, cap - n);
    }
}

/* Probe columns come out as they came in, for every join type but FULL
 * (whose unmatched build rows carry NULL probe columns). */
static int join_passes(const ExOp *op, int col)
{
    const ExJoinSpec *s = op->spec;
    return s->type != EX_JOIN_FULL && col >= 0 && col < s->n_probe_cols ? col : -1;
}

static const ExOpVt JOIN_VT = {
    .name = "HASH_JOIN",
    .global_init = join_global_init,
    .global_fini = join_global_fini,
    .local_init = join_local_init,
    .local_fini = join_local_fini,
    .push = join_push,
    .flush = join_flush,
    .explain = join_explain,
    .passes = join_passes,
};

ExOp *ex_hash_join_new(CmArena *a, const ExJoinSpec *spec, CmErr *err)
{
    ExJoinSpec *s = cm_arena_alloc(a, sizeof *s);
    int n_out = spec->n_probe_cols + (spec->type == EX_JOIN_MARK ? 1
                                      : spec->type == EX_JOIN_SEMI || spec->type == EX_JOIN_ANTI
                                          ? 0
                                          : spec->n_build_cols);
    CmType *types = cm_arena_alloc(a, sizeof(CmType) * (size_t)(n_out + 1));
    if (s == NULL || types == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    *s = *spec;
    memcpy(types, spec->probe_types, sizeof(CmType) * (size_t)spec->n_probe_cols);
    if (spec->type == EX_JOIN_MARK) {
        types[spec->n_probe_cols] = cm_type_make(CM_T_BOOL);
    } else if (n_out > spec->n_probe_cols) {
        memcpy(types + spec->n_probe_cols, spec->build_types,
               sizeof(CmType) * (size_t)spec->n_build_cols);
    }
    ExOp *op = ex_op_new(a, &JOIN_VT, s, n_out, types);
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    return op;
}

/* ---- adaptive hooks ---------------------------------------------------------- */

bool ex_op_is_hash_join(const ExOp *op)
{
    return op->vt == &JOIN_VT;
}

const ExJoinSpec *ex_hash_join_spec(const ExOp *op)
{
    return op->spec;
}

void ex_hash_join_set_broadcast(ExOp *op)
{
    ExJoinSpec *s = op->spec;
    s->partitioned = false;
    s->ranges = NULL;
}

void ex_hash_join_set_ranges(ExOp *op, const ExReadRanges *ranges)
{
    ((ExJoinSpec *)op->spec)->ranges = ranges;
}
