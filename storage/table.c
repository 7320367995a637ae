/*
 * table.c - chunked columnar storage in the block store.
 *
 * Invariants: row r is in the chunk whose first row (starts[]) is the last at
 * or before r: every chunk but the last is full (CM_BATCH_CAP rows), so that
 * is r / CM_BATCH_CAP, unless a DELETE in place left shorter ones (is_ragged).
 * No chunk is empty.  Every chunk but the last is sealed.  A chunk is held (pinned by the table,
 * `held` set) exactly when it is unsealed or rows_needed(t): the table has a built index that reads
 * rows (st_index_reads_rows), or a transaction's mark keeps one to put back (cold indexes, of a
 * table just opened from disk, hold no rows and pin nothing; after a DELETE they may hold the rows
 * of before it, with the renumbering that makes them current pending).  An append seals the chunks
 * it filled only once it has succeeded, so undoing it never has to change a sealed block; a
 * truncate that cuts into a sealed chunk only lowers the chunk's n_rows, and the next append copies
 * its rows into a new block.
 */
#include "storage/table.h"

#include <string.h>

#include "common/alloc.h"
#include "storage/index.h"

/* The source of StTable.version stamps. */
static atomic_uint_fast64_t next_version = 1;

static void stamp(StTable *t)
{
    t->version = atomic_fetch_add(&next_version, 1);
}

static void chunk_free(StChunk *c)
{
    if (c == NULL) {
        return;
    }
    st_block_free(c->block);
    cm_free(c->zone);
    cm_free(c);
}

/* Pins c for the table; false with err when it cannot be loaded. */
static bool chunk_hold(StChunk *c, CmErr *err)
{
    if (c->held == NULL) {
        c->held = st_block_pin(c->block, NULL, err);
    }
    return c->held != NULL;
}

static void chunk_release(StChunk *c)
{
    if (c->held != NULL) {
        st_block_unpin(c->block);
        c->held = NULL;
    }
}

/* Moves a column's string default into the table's own arena; false on OOM. */
static bool own_default(StTable *t, StColumn *c)
{
    CmStr *s = &c->default_value.s;
    if (!c->has_default || c->default_value.is_null || c->type.id != CM_T_VARCHAR ||
        s->len <= CM_STR_INLINE) {
        return true;
    }
    char *p = cm_arena_alloc(&t->strings, s->len);
    if (p == NULL) {
        return false;
    }
    memcpy(p, s->ptr, s->len);
    *s = cm_str_make(p, s->len);
    return true;
}

StTable *st_table_new(const char *name, int n_cols, const StColumn *cols, CmErr *err)
{
    StTable *t = cm_calloc(1, sizeof *t);
    if (t == NULL) {
        goto oom;
    }
    cm_arena_init(&t->strings, 256 * 1024);
    cm_mem_res_init(&t->mem, CM_MEM_STORAGE, "table storage", NULL);
    t->name = cm_strdup(name);
    t->cols = cm_calloc((size_t)n_cols, sizeof(StColumn));
    t->types = cm_calloc((size_t)(n_cols > 0 ? n_cols : 1), sizeof(CmType));
    t->stats = st_stats_new_array(n_cols);
    if (t->name == NULL || t->cols == NULL || t->types == NULL || t->stats == NULL) {
        goto oom;
    }
    t->n_cols = n_cols;
    stamp(t);
    t->id = t->version;
    for (int i = 0; i < n_cols; i++) {
        t->types[i] = cols[i].type;
        t->cols[i] = cols[i];
        t->cols[i].name = cm_strdup(cols[i].name);
        if (t->cols[i].name == NULL || !own_default(t, &t->cols[i])) {
            goto oom;
        }
    }
    return t;
oom:
    st_table_free(t);
    cm_err_set(err, CM_OOM, -1, "out of memory creating table '%s'", name);
    return NULL;
}

static void snapshot_free(StTable *v);

typedef struct StIndexPending StIndexPending; /* a DELETE's renumbering of the indexes */
static void free_pending(StTable *t);
static void discard_pending(StTable *t);
static void apply_pending(StTable *t);

void st_table_free(StTable *t)
{
    if (t == NULL) {
        return;
    }
    if (t->is_snapshot) {
        snapshot_free(t);
        return;
    }
    st_table_unmark(t);
    for (int i = 0; i < t->n_chunks; i++) {
        chunk_free(t->chunks[i]);
    }
    cm_free(t->chunks);
    cm_free(t->starts);
    cm_free(t->types);
    cm_free(t->stats);
    for (int i = 0; i < t->n_indexes; i++) {
        st_index_free(t->indexes[i]);
    }
    cm_free(t->indexes);
    free_pending(t);
    for (int i = 0; t->cols != NULL && i < t->n_cols; i++) {
        cm_free(t->cols[i].name);
    }
    cm_free(t->cols);
    cm_free(t->name);
    cm_arena_fini(&t->strings);
    cm_mem_res_fini(&t->mem);
    cm_free(t);
}

StTable *st_table_new_like(const StTable *t, CmErr *err)
{
    StTable *n = st_table_new(t->name, t->n_cols, t->cols, err);
    for (int i = 0; n != NULL && i < t->n_indexes; i++) {
        const StIndex *ix = t->indexes[i];
        if (st_table_add_index(n, st_index_name(ix), st_index_kind(ix), st_index_n_keys(ix),
                               st_index_key_cols(ix), err) != CM_OK) {
            st_table_free(n);
            n = NULL;
        }
    }
    return n;
}

/* The record st_table_mark keeps (table.h). */
struct StTableMark {
    int64_t n_rows;      /* the table's rows then: rows are only appended after */
    uint64_t version;    /* StTable.version then */
    StColStats *stats;   /* the statistics then: shared with the table until it changes them
                            (own_stats), owned by the mark after */
    bool is_stats_stale; /* StTable.stats_stale then */
    bool is_index_cold;  /* StTable.is_index_cold then: ROLLBACK empties the indexes again */
    char *name;          /* owned: the table's name then */
    char **col_names;    /* owned: the column names then */
    int n_indexes;       /* of `indexes` */
    StIndex **indexes;   /* owned array of the indexes then; an index dropped since is kept
                            here (freed at unmark), one still the table's is the table's */
    int n_chunks;        /* of `chunks` */
    StChunk **chunks;    /* owned array: the table's chunks then (each flagged in_mark); one
                            the table let go of since is the mark's, freed at unmark */
    int *chunk_rows;     /* owned: each one's row count then (only the last grows after) */
};

static bool has_index(StIndex *const *set, int n, const StIndex *ix)
{
    for (int i = 0; i < n; i++) {
        if (set[i] == ix) {
            return true;
        }
    }
    return false;
}

static bool is_marked_index(const StTable *t, const StIndex *ix)
{
    return t->mark != NULL && has_index(t->mark->indexes, t->mark->n_indexes, ix);
}

/* Before the statistics change: a marked table gets its own copy. */
static CmStatus own_stats(StTable *t, CmErr *err)
{
    if (t->mark == NULL || t->stats != t->mark->stats) {
        return CM_OK;
    }
    StColStats *copy = st_stats_copy_array(t->stats, t->n_cols);
    if (copy == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory for the statistics of '%s'", t->name);
    }
    t->stats = copy;
    return CM_OK;
}

/* Frees the statistics t has, unless they are its mark's. */
static void drop_stats(StTable *t)
{
    if (t->mark == NULL || t->stats != t->mark->stats) {
        cm_free(t->stats);
    }
    t->stats = NULL;
}

/* Whether an index of t, or one its transaction's mark may put back, reads
 * the rows it indexed: then every chunk is held. */
/* Whether one of the n indexes ixs reads rows (st_index_reads_rows). */
static bool any_reads_rows(StIndex *const *ixs, int n)
{
    for (int i = 0; i < n; i++) {
        if (st_index_reads_rows(ixs[i])) {
            return true;
        }
    }
    return false;
}

static bool rows_needed(const StTable *t)
{
    return (!t->is_index_cold && any_reads_rows(t->indexes, t->n_indexes)) ||
           (t->mark != NULL && any_reads_rows(t->mark->indexes, t->mark->n_indexes));
}

/* Unpins the sealed chunks unless rows_needed (they become evictable). */
static void release_sealed(StTable *t)
{
    for (int i = 0; !rows_needed(t) && i < t->n_chunks; i++) {
        if (t->chunks[i]->sealed) {
            chunk_release(t->chunks[i]);
        }
    }
}

/* The indexes free their slots and turn cold (built again at the next
 * append, unless is_index_external); the sealed chunks are let go. */
static void release_indexes(StTable *t)
{
    discard_pending(t);
    for (int i = 0; i < t->n_indexes; i++) {
        st_index_release(t->indexes[i]);
    }
    t->is_index_cold = true;
    release_sealed(t);
}

/* The indexes give their memory up for good: rows [0, checked) are known
 * unique, the later ones are checked at the statement's end without them
 * (st_table_check_keys). */
static void give_up_indexes(StTable *t, int64_t checked)
{
    if (!t->is_index_external || checked < t->n_checked) {
        t->n_checked = checked;
    }
    t->is_index_external = true;
    release_indexes(t);
}

/* An index of t did not fit in memory (err is CM_OOM): outside a
 * transaction, give_up_indexes, and true with err cleared.  False, err kept,
 * otherwise: a transaction's mark must keep the indexes of BEGIN. */
static bool go_external(StTable *t, int64_t checked, CmErr *err)
{
    if (err->code != CM_OOM || t->mark != NULL) {
        return false;
    }
    give_up_indexes(t, checked);
    cm_err_init(err);
    return true;
}

/* The memory t's warm indexes keep from eviction: their slots, and the
 * chunks an index that reads rows holds (every chunk then). */
static int64_t index_memory(const StTable *t)
{
    if (t->is_index_cold) {
        return 0;
    }
    int64_t bytes = rows_needed(t) ? cm_mem_held((CmMemRes *)&t->mem) : 0;
    for (int i = 0; i < t->n_indexes; i++) {
        bytes += st_index_bytes(t->indexes[i]);
    }
    return bytes;
}

/* Whether t's warm indexes keep more than half of memory_limit (outside a
 * transaction): past that they crowd out the rest, and a load's parse
 * buffers run out before its appends do, so they give way (go_external's
 * work) even though nothing failed yet. */
static bool indexes_crowd(const StTable *t)
{
    return t->mark == NULL && 2 * index_memory(t) > cm_mem_limit();
}

/* Builds cold indexes from the rows (or renumbers them, a DELETE's pending):
 * the table holds its chunks from then on.  On failure they stay cold (and
 * empty); when they do not fit in memory, for good (go_external: every row
 * they would hold is unique, as the last statement left it). */
static CmStatus warm_indexes(StTable *t, CmErr *err)
{
    int built = 0;
    if (!t->is_index_cold || t->is_index_external) {
        return CM_OK;
    }
    if (t->pending != NULL && !any_reads_rows(t->indexes, t->n_indexes)) {
        /* renumbered without a row read */
        apply_pending(t);
        t->is_index_cold = false;
        return CM_OK;
    }
    for (int i = 0; i < t->n_chunks; i++) {
        if (!chunk_hold(t->chunks[i], err)) {
            goto fail;
        }
    }
    if (t->pending != NULL) {
        apply_pending(t);
        built = t->n_indexes;
    }
    for (; built < t->n_indexes; built++) {
        if (st_index_add_rows(t->indexes[built], t, 0, err) != CM_OK) {
            goto fail;
        }
    }
    t->is_index_cold = false;
    release_sealed(t); /* held to build the indexes; kept only if they read rows */
    return CM_OK;
fail:
    discard_pending(t);
    for (int i = 0; i < built; i++) {
        st_index_truncate(t->indexes[i], t, 0);
    }
    release_sealed(t);
    return go_external(t, t->n_rows, err) ? CM_OK : err->code;
}

/* Adds ix (owned) to t's indexes; frees it on failure. */
static CmStatus push_index(StTable *t, StIndex *ix, CmErr *err)
{
    StIndex **grown = cm_realloc(t->indexes, sizeof(StIndex *) * (size_t)(t->n_indexes + 1));
    if (grown == NULL) {
        st_index_free(ix);
        return cm_err_set(err, CM_OOM, -1, "out of memory adding an index");
    }
    t->indexes = grown;
    t->indexes[t->n_indexes++] = ix;
    return CM_OK;
}

CmStatus st_table_add_index_cold(StTable *t, const char *name, StIndexKind kind, int n_keys,
                                 const int *key_cols, CmErr *err)
{
    if (t->n_indexes > 0 && !t->is_index_cold) {
        return st_table_add_index(t, name, kind, n_keys, key_cols, err);
    }
    discard_pending(t); /* its maps are per index */
    StIndex *ix = st_index_new(name, kind, n_keys, key_cols, t->types, err);
    if (ix == NULL || push_index(t, ix, err) != CM_OK) {
        return err->code;
    }
    t->is_index_cold = true;
    return CM_OK;
}

CmStatus st_table_add_index(StTable *t, const char *name, StIndexKind kind, int n_keys,
                            const int *key_cols, CmErr *err)
{
    if (warm_indexes(t, err) != CM_OK) {
        return err->code;
    }
    if (t->is_index_external) { /* checked now, held cold with the others */
        StIndex *ix = st_index_new(name, kind, n_keys, key_cols, t->types, err);
        if (ix != NULL && st_index_check_unique(ix, t, 0, err) != CM_OK) {
            st_index_free(ix);
            return err->code;
        }
        return ix != NULL ? push_index(t, ix, err) : err->code;
    }
    StIndex **grown = cm_realloc(t->indexes, sizeof(StIndex *) * (size_t)(t->n_indexes + 1));
    if (grown == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory adding an index");
    }
    t->indexes = grown;
    /* Building reads every row (and an index that reads rows later keeps
     * the chunks in memory: release_sealed). */
    for (int i = 0; i < t->n_chunks; i++) {
        if (!chunk_hold(t->chunks[i], err)) {
            release_sealed(t);
            return err->code;
        }
    }
    StIndex *ix = st_index_new(name, kind, n_keys, key_cols, t->types, err);
    if (ix == NULL || st_index_add_rows(ix, t, 0, err) != CM_OK) {
        st_index_free(ix);
        release_sealed(t);
        return err->code;
    }
    t->indexes[t->n_indexes++] = ix;
    release_sealed(t);
    return CM_OK;
}

bool st_table_drop_index(StTable *t, const char *name)
{
    for (int i = 0; i < t->n_indexes; i++) {
        const char *ix_name = st_index_name(t->indexes[i]);
        if (ix_name != NULL && strcmp(ix_name, name) == 0) {
            /* An index the mark holds comes back at ROLLBACK with the rows it
             * holds: they stay in memory (held) until the transaction ends. */
            bool is_kept = is_marked_index(t, t->indexes[i]);
            discard_pending(t); /* its maps are per index */
            if (!is_kept) {
                st_index_free(t->indexes[i]);
            }
            memmove(&t->indexes[i], &t->indexes[i + 1],
                    sizeof(StIndex *) * (size_t)(t->n_indexes - i - 1));
            t->n_indexes--;
            t->is_index_cold = t->is_index_cold && t->n_indexes > 0;
            t->is_index_external = t->is_index_external && t->n_indexes > 0;
            if (!is_kept) {
                release_sealed(t);
            }
            return true;
        }
    }
    return false;
}

CmStatus st_table_check(const StTable *t, const CmBatch *b, CmErr *err)
{
    for (int c = 0; c < t->n_cols; c++) {
        const StColumn *col = &t->cols[c];
        const CmVec *v = &b->cols[c];
        for (int i = 0; i < b->n_rows; i++) {
            uint32_t p = v->kind == CM_VEC_CONST ? 0 : cm_batch_pos(b, i);
            if (cm_vec_is_null(v, p)) {
                if (col->not_null) {
                    return cm_err_set(err, CM_RUNTIME, -1, "NOT NULL constraint failed: %s.%s",
                                      t->name, col->name);
                }
                continue;
            }
            if (col->type.id == CM_T_VARCHAR && col->type.length >= 0) {
                const CmStr *s = &((const CmStr *)v->data)[p];
                if ((int64_t)s->len > col->type.length) {
                    return cm_err_set(err, CM_RUNTIME, -1,
                                      "value too long for type %s(%d) of column %s.%s",
                                      col->type.is_char ? "CHAR" : "VARCHAR", (int)col->type.length,
                                      t->name, col->name);
                }
            }
        }
    }
    return CM_OK;
}

/* The store dropped a MEMORY_ONLY chunk of the table `owner`. */
static void chunk_dropped(void *owner, StBlock *b)
{
    (void)b;
    atomic_store(&((StTable *)owner)->lost, true);
}

void st_table_set_level(StTable *t, StBlockLevel level)
{
    t->level = level;
}

void st_table_set_home(StTable *t, StBlockHome *home)
{
    t->home = home;
}

bool st_table_lost(const StTable *t)
{
    return atomic_load(&((StTable *)t)->lost);
}

bool st_table_key_within(const StTable *t, const int *cols, int n)
{
    bool has_key = false;
    for (int c = 0; c < t->n_cols; c++) {
        if (!t->cols[c].primary_key) {
            continue;
        }
        bool in = false;
        for (int k = 0; k < n && !in; k++) {
            in = cols[k] == c;
        }
        if (!in) {
            return false;
        }
        has_key = true;
    }
    return has_key;
}

int64_t st_table_disk_bytes(const StTable *t)
{
    int64_t n = 0;
    for (int i = 0; i < t->n_chunks; i++) {
        n += st_block_loc(t->chunks[i]->block).bytes;
    }
    return n;
}

static StChunk *chunk_new(StTable *t, CmErr *err)
{
    StChunk *c = cm_calloc(1, sizeof *c);
    if (c == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory growing table '%s'", t->name);
        return NULL;
    }
    c->block = st_block_new(t->level, t->n_cols, t->types, &t->mem,
                            t->level == ST_BLOCK_MEMORY_ONLY ? chunk_dropped : NULL, t, err);
    if (c->block == NULL) {
        cm_free(c);
        return NULL;
    }
    c->held = st_block_batch(c->block); /* the creator's pin */
    return c;
}

static CmStatus set_null(CmVec *v, int row)
{
    if (v->validity == NULL) {
        memset(v->validity_buf, 0xff, sizeof v->validity_buf);
        v->validity = v->validity_buf;
    }
    v->validity[row >> 6] &= ~((uint64_t)1 << (row & 63));
    return CM_OK;
}

/* Copies value p of v into row `row` of the chunk's batch (lists and long strings into
 * the chunk's heap). */
static CmStatus copy_value(const StTable *t, CmBatch *dst, int col, int row, const CmVec *v,
                           uint32_t p, CmErr *err)
{
    if (v->kind == CM_VEC_CONST) {
        p = 0;
    }
    CmVec *d = &dst->cols[col];
    if (cm_vec_is_null(v, p)) {
        return set_null(d, row);
    }
    if (d->validity != NULL) {
        d->validity[row >> 6] |= (uint64_t)1 << (row & 63);
    }
    size_t w = cm_type_width(t->cols[col].type);
    if (t->cols[col].type.id == CM_T_VARCHAR) {
        CmStr s = ((const CmStr *)v->data)[p];
        ((CmStr *)d->data)[row] = cm_str_copy(&dst->heap, &s, err);
        return err->code;
    }
    if (t->cols[col].type.id == CM_T_LIST) {
        CmList l = ((const CmList *)v->data)[p];
        ((CmList *)d->data)[row] =
            cm_list_copy(&dst->heap, &l, cm_type_elem(t->cols[col].type), err);
        return err->code;
    }
    memcpy((char *)d->data + w * (size_t)row, (const char *)v->data + w * p, w);
    return CM_OK;
}

/* Copies active rows [from, from + n) of b into rows [row, row + n) of the
 * chunk's batch, a column at a time (long strings and lists into the chunk's heap).
 * Appends are the inner loop of CTAS and INSERT ... SELECT: a call per value,
 * looking the column's type and width up each time, cost more than the copy. */
static CmStatus copy_rows(const StTable *t, CmBatch *dst, int row, const CmBatch *b, int from,
                          int n, CmErr *err)
{
    for (int col = 0; col < t->n_cols; col++) {
        const CmVec *v = &b->cols[col];
        CmVec *d = &dst->cols[col];
        bool is_const = v->kind == CM_VEC_CONST;
        if (t->cols[col].type.id == CM_T_VARCHAR || t->cols[col].type.id == CM_T_LIST) {
            for (int i = 0; i < n; i++) {
                if (copy_value(t, dst, col, row + i, v, cm_batch_pos(b, from + i), err) != CM_OK) {
                    return err->code;
                }
            }
            continue;
        }
        size_t w = cm_type_width(t->cols[col].type);
        char *out = (char *)d->data + w * (size_t)row;
        const char *in = v->data;
        if (!is_const && b->sel == NULL && v->validity == NULL) {
            memcpy(out, in + w * (size_t)from, w * (size_t)n);
            for (int i = 0; d->validity != NULL && i < n; i++) {
                cm_vec_set_valid(d, (uint32_t)(row + i));
            }
            continue;
        }
        for (int i = 0; i < n; i++) {
            uint32_t p = is_const ? 0 : cm_batch_pos(b, from + i);
            if (cm_vec_is_null(v, p)) {
                set_null(d, row + i);
                continue;
            }
            cm_vec_set_valid(d, (uint32_t)(row + i));
            memcpy(out + w * (size_t)i, in + w * p, w);
        }
    }
    return CM_OK;
}

/* Room for one more chunk in t's arrays; false with err on OOM. */
static bool grow_chunks(StTable *t, CmErr *err)
{
    if (t->n_chunks < t->cap_chunks) {
        return true;
    }
    int cap = t->cap_chunks ? t->cap_chunks * 2 : 8;
    StChunk **grown = cm_realloc(t->chunks, sizeof(StChunk *) * (size_t)cap);
    if (grown != NULL) {
        t->chunks = grown;
    }
    int64_t *starts = grown != NULL ? cm_realloc(t->starts, sizeof(int64_t) * (size_t)cap) : NULL;
    if (starts == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory growing table '%s'", t->name);
        return false;
    }
    t->starts = starts;
    t->cap_chunks = cap;
    return true;
}

/* Puts c after t's chunks (grow_chunks made room); its rows are the caller's to count. */
static void push_chunk(StTable *t, StChunk *c)
{
    t->starts[t->n_chunks] = t->n_rows;
    t->is_ragged |= t->n_chunks > 0 && t->chunks[t->n_chunks - 1]->n_rows < CM_BATCH_CAP;
    t->chunks[t->n_chunks++] = c;
}

/* Counts t's rows and each chunk's first row again, after chunks changed. */
static void restart(StTable *t)
{
    int64_t n = 0;
    t->is_ragged = false;
    for (int i = 0; i < t->n_chunks; i++) {
        t->starts[i] = n;
        n += t->chunks[i]->n_rows;
        t->is_ragged |= i + 1 < t->n_chunks && t->chunks[i]->n_rows < CM_BATCH_CAP;
    }
    t->n_rows = n;
}

int st_table_chunk_search(const StTable *t, int64_t r, int *off)
{
    int lo = 0, hi = t->n_chunks - 1; /* the last chunk starting at or before r */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (t->starts[mid] <= r) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    *off = (int)(r - t->starts[lo]);
    return lo;
}

/* Lets go of a chunk the table no longer has: freed, unless its transaction's
 * mark keeps it. */
static void let_go(StChunk *c)
{
    if (!c->in_mark) {
        st_table_chunk_discard(c);
    }
}

/* Makes a sealed, partly used last chunk (left by a truncate or a DELETE)
 * writable again: its rows are copied into a new chunk, which takes its
 * place.  The new chunk, or NULL with err. */
static StChunk *reopen(StTable *t, CmErr *err)
{
    StChunk *c = t->chunks[t->n_chunks - 1];
    bool own_pin = c->held == NULL;
    const CmBatch *old = c->held != NULL ? c->held : st_block_pin(c->block, NULL, err);
    if (old == NULL) {
        return NULL;
    }
    StChunk *fresh = chunk_new(t, err);
    if (fresh != NULL) {
        CmBatch *dst = (CmBatch *)fresh->held;
        CmBatch rows = *old;
        rows.sel = NULL;
        if (copy_rows(t, dst, 0, &rows, 0, c->n_rows, err) == CM_OK) {
            fresh->n_rows = c->n_rows;
            dst->n_rows = c->n_rows;
            st_block_charge(fresh->block, err);
        }
    }
    if (own_pin) {
        st_block_unpin(c->block);
    }
    if (err->code != CM_OK) {
        st_table_chunk_discard(fresh);
        return NULL;
    }
    t->chunks[t->n_chunks - 1] = fresh;
    let_go(c);
    return fresh;
}

static StChunk *tail_chunk(StTable *t, CmErr *err)
{
    if (t->n_chunks > 0 && t->chunks[t->n_chunks - 1]->n_rows < CM_BATCH_CAP) {
        StChunk *c = t->chunks[t->n_chunks - 1];
        return !c->sealed ? c : reopen(t, err);
    }
    if (!grow_chunks(t, err)) {
        return NULL;
    }
    StChunk *c = chunk_new(t, err);
    if (c != NULL) {
        push_chunk(t, c);
    }
    return c;
}

#define MIN_MAX(T)                                                                                 \
    do {                                                                                           \
        const T *vals = data;                                                                      \
        for (int i = 0; i < n; i++) {                                                              \
            if (valid == NULL || ((valid[i >> 6] >> (i & 63)) & 1)) {                              \
                *lo = vals[i] < *lo ? vals[i] : *lo;                                               \
                *hi = vals[i] > *hi ? vals[i] : *hi;                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* The smallest and largest non-NULL value of rows [0, n) of an integer column
 * (lo > hi when there is none). */
static void column_range(const CmVec *v, int n, int64_t *lo, int64_t *hi)
{
    const void *data = v->data;
    const uint64_t *valid = v->validity;
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    switch (v->type.id) {
    case CM_T_INT64:
    case CM_T_DECIMAL: /* unscaled */
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
        MIN_MAX(int64_t);
        break;
    case CM_T_INT32:
    case CM_T_DATE:
        MIN_MAX(int32_t);
        break;
    default: /* no zone: the widest range */
        *lo = INT64_MIN;
        *hi = INT64_MAX;
        break;
    }
}

/* Seals a full chunk: its zone map, then the block; the table lets go of it
 * unless an index needs it. */
static CmStatus seal(StTable *t, StChunk *c, CmErr *err)
{
    CmBatch *b = (CmBatch *)c->held;
    b->n_rows = c->n_rows;
    int64_t *zone = cm_malloc(sizeof(int64_t) * 2 * (size_t)(t->n_cols > 0 ? t->n_cols : 1));
    if (zone == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory growing table '%s'", t->name);
    }
    for (int col = 0; col < t->n_cols; col++) {
        column_range(&b->cols[col], c->n_rows, &zone[2 * col], &zone[2 * col + 1]);
    }
    if (t->home != NULL && t->level == ST_BLOCK_MEMORY_AND_DISK) {
        st_block_set_home(c->block, t->home);
    }
    if (st_block_seal(c->block, err) != CM_OK) {
        cm_free(zone);
        return err->code;
    }
    c->zone = zone;
    c->sealed = true;
    if (!rows_needed(t)) {
        chunk_release(c);
    }
    return CM_OK;
}

StChunk *st_table_chunk_from(StTable *t, const CmBatch *rows, bool sealed, CmErr *err)
{
    CM_ASSERT(rows->n_rows <= CM_BATCH_CAP);
    StChunk *c = chunk_new(t, err);
    if (c == NULL) {
        return NULL;
    }
    CmBatch *dst = (CmBatch *)c->held;
    if (copy_rows(t, dst, 0, rows, 0, rows->n_rows, err) == CM_OK) {
        c->n_rows = rows->n_rows;
        dst->n_rows = c->n_rows;
        if (st_block_charge(c->block, err) == CM_OK && (sealed || c->n_rows == CM_BATCH_CAP)) {
            seal(t, c, err);
        }
    }
    if (err->code != CM_OK) {
        st_table_chunk_discard(c);
        return NULL;
    }
    return c;
}

void st_table_chunk_discard(StChunk *c)
{
    if (c != NULL) {
        chunk_release(c);
        chunk_free(c);
    }
}

static void free_indexes(StIndex **ixs, int n)
{
    for (int i = 0; i < n; i++) {
        st_index_free(ixs[i]);
    }
    cm_free(ixs);
}

/* Empty indexes of the names, kinds and keys of t's (t->n_indexes of them),
 * or NULL with err (CM_OOM). */
static StIndex **empty_indexes(StTable *t, CmErr *err)
{
    StIndex **fresh = cm_calloc((size_t)t->n_indexes + 1, sizeof(StIndex *));
    for (int i = 0; fresh != NULL && i < t->n_indexes; i++) {
        const StIndex *ix = t->indexes[i];
        fresh[i] = st_index_new(st_index_name(ix), st_index_kind(ix), st_index_n_keys(ix),
                                st_index_key_cols(ix), t->types, err);
        if (fresh[i] == NULL) {
            free_indexes(fresh, i);
            return NULL;
        }
    }
    if (fresh == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory for the indexes of '%s'", t->name);
    }
    return fresh;
}

/* Puts `fresh` (from empty_indexes; its array freed) in place of t's indexes.
 * A marked one stays the mark's for a ROLLBACK, cut back first to the rows it
 * held at BEGIN: call this while they still lie where it indexed them. */
static void replace_indexes(StTable *t, StIndex **fresh)
{
    discard_pending(t);
    for (int i = 0; i < t->n_indexes; i++) {
        if (is_marked_index(t, t->indexes[i])) {
            st_index_truncate(t->indexes[i], t, t->mark->is_index_cold ? 0 : t->mark->n_rows);
        } else {
            st_index_free(t->indexes[i]);
        }
        t->indexes[i] = fresh[i];
    }
    cm_free(fresh);
}

/* Rows moved (a DELETE in place): t's indexes, which name rows by place,
 * give way to empty cold ones, built from the rows at the next append.
 * CM_OOM with nothing changed. */
static CmStatus cool_indexes(StTable *t, CmErr *err)
{
    if (t->n_indexes == 0 || t->is_index_cold) {
        discard_pending(t); /* a DELETE's renumbering, out of date now */
        return CM_OK;
    }
    StIndex **cold = empty_indexes(t, err);
    if (cold == NULL) {
        return err->code;
    }
    replace_indexes(t, cold);
    t->is_index_cold = true;
    return CM_OK;
}

/* Puts fresh[i] at at[i] in place of the chunk there, and the chunk there in
 * fresh[i]: done twice, nothing changed. */
static void trade_chunks(StTable *t, int n, const int *at, StChunk **fresh)
{
    for (int i = 0; i < n; i++) {
        StChunk *c = t->chunks[at[i]];
        t->chunks[at[i]] = fresh[i];
        fresh[i] = c;
    }
}

/* An UPDATE changed index keys: t's indexes are built anew from the rows
 * with fresh[i] at at[i] (every chunk held meanwhile), so that a duplicate
 * key is found now, and take the old ones' place.  On a duplicate
 * (CM_RUNTIME) or CM_OOM nothing changed. */
static CmStatus rekey_indexes(StTable *t, int n, const int *at, StChunk **fresh, CmErr *err)
{
    if (t->n_indexes == 0) {
        return CM_OK;
    }
    StIndex **ixs = empty_indexes(t, err);
    if (ixs == NULL) {
        return err->code;
    }
    trade_chunks(t, n, at, fresh);
    for (int i = 0; i < t->n_chunks && err->code == CM_OK; i++) {
        chunk_hold(t->chunks[i], err);
    }
    for (int i = 0; i < t->n_indexes && err->code == CM_OK; i++) {
        st_index_add_rows(ixs[i], t, 0, err);
    }
    trade_chunks(t, n, at, fresh); /* the old rows, for replace_indexes' cut */
    if (err->code != CM_OK) {
        free_indexes(ixs, t->n_indexes);
    } else {
        replace_indexes(t, ixs);
        t->is_index_cold = false;
    }
    release_sealed(t);
    for (int i = 0; i < n; i++) {
        if (fresh[i]->sealed && !rows_needed(t)) {
            chunk_release(fresh[i]);
        }
    }
    return err->code;
}

/* An UPDATE changed index keys of a table whose indexes do not fit in
 * memory: the keys of every row, with fresh[i] at at[i], are checked without
 * them (st_index_check_unique).  On a duplicate nothing changed. */
static CmStatus recheck_keys(StTable *t, int n, const int *at, StChunk **fresh, CmErr *err)
{
    trade_chunks(t, n, at, fresh);
    for (int i = 0; i < t->n_indexes && err->code == CM_OK; i++) {
        st_index_check_unique(t->indexes[i], t, 0, err);
    }
    trade_chunks(t, n, at, fresh);
    return err->code;
}

/* ---- patching the indexes where chunks are replaced ------------------------------------ */

/* Whether the indexes can follow an UPDATE or DELETE that replaces chunks
 * by patching (index.h: the cost of those chunks' rows)
 * rather than being built from every row: all unique and warm, and none kept
 * by a transaction's mark, which must keep the keys of BEGIN. */
static bool patchable(const StTable *t)
{
    if (t->n_indexes == 0 || t->is_index_cold) {
        return false;
    }
    for (int i = 0; i < t->n_indexes; i++) {
        if (st_index_kind(t->indexes[i]) == ST_INDEX_PLAIN || is_marked_index(t, t->indexes[i])) {
            return false;
        }
    }
    return true;
}

#define PICK_WORDS ((CM_BATCH_CAP + 63) / 64)

/* Holds the chunks at at[i] and fresh[i] (may be NULL) for a patch;
 * was_held[i] tells whether the one at at[i] was held before. */
static CmStatus hold_both(StTable *t, int n, const int *at, StChunk **fresh, bool *was_held,
                          CmErr *err)
{
    for (int i = 0; i < n && err->code == CM_OK; i++) {
        was_held[i] = t->chunks[at[i]]->held != NULL;
        if (chunk_hold(t->chunks[at[i]], err) && fresh[i] != NULL) {
            chunk_hold(fresh[i], err);
        }
    }
    return err->code;
}

/* Lets go of what hold_both held that the indexes do not need held. */
static void release_both(StTable *t, int n, const int *at, StChunk **fresh, const bool *was_held)
{
    for (int i = 0; i < n; i++) {
        StChunk *old = t->chunks[at[i]];
        if (!was_held[i] && old->sealed && !rows_needed(t)) {
            chunk_release(old);
        }
        if (fresh[i] != NULL && fresh[i]->sealed && !rows_needed(t)) {
            chunk_release(fresh[i]);
        }
    }
}

/* An UPDATE that set index keys, fresh[i] to replace the chunk at at[i]: in
 * each index the rows whose key changed lose their old key and get the new
 * one, put with the fresh chunks in place; on a duplicate (CM_RUNTIME) the
 * new keys go and the old ones come back, nothing changed.  CM_OOM before
 * anything changed. */
static CmStatus patch_keys(StTable *t, int n, const int *at, StChunk **fresh, CmErr *err)
{
    int nx = t->n_indexes;
    uint64_t *differ = cm_calloc((size_t)n * (size_t)nx * PICK_WORDS + 1, sizeof(uint64_t));
    bool *was_held = cm_calloc((size_t)n + 1, sizeof(bool));
    if (differ == NULL || was_held == NULL) {
        cm_free(differ);
        cm_free(was_held);
        return cm_err_set(err, CM_OOM, -1, "out of memory for the indexes of '%s'", t->name);
    }
#define DIFFER(k, i) (differ + ((size_t)(k) * (size_t)n + (size_t)(i)) * PICK_WORDS)
    hold_both(t, n, at, fresh, was_held, err);
    /* room for the new keys, and for the old ones put back after a duplicate */
    for (int k = 0; k < nx && err->code == CM_OK; k++) {
        int64_t changed = 0;
        for (int i = 0; i < n; i++) {
            changed += st_index_diff(t->indexes[k], t, t->chunks[at[i]], fresh[i], DIFFER(k, i));
        }
        st_index_room(t->indexes[k], t, 2 * changed, err);
    }
    if (err->code == CM_OK) {
        for (int k = 0; k < nx; k++) {
            for (int i = 0; i < n; i++) {
                st_index_forget(t->indexes[k], t, t->chunks[at[i]], t->starts[at[i]], DIFFER(k, i));
            }
        }
        trade_chunks(t, n, at, fresh);
        for (int k = 0; k < nx && err->code == CM_OK; k++) {
            for (int i = 0; i < n && err->code == CM_OK; i++) {
                st_index_put(t->indexes[k], t, t->starts[at[i]], t->chunks[at[i]]->n_rows,
                             DIFFER(k, i), err);
            }
        }
        if (err->code != CM_OK) {
            /* a duplicate: out with the new keys (a key not put is found by no row), back
             * with the old */
            for (int k = 0; k < nx; k++) {
                for (int i = 0; i < n; i++) {
                    st_index_forget(t->indexes[k], t, t->chunks[at[i]], t->starts[at[i]],
                                    DIFFER(k, i));
                }
            }
        }
        trade_chunks(t, n, at, fresh);
        CmErr again;
        cm_err_init(&again);
        for (int k = 0; k < nx && err->code != CM_OK; k++) {
            for (int i = 0; i < n; i++) {
                st_index_put(t->indexes[k], t, t->starts[at[i]], t->chunks[at[i]]->n_rows,
                             DIFFER(k, i), &again);
                CM_ASSERT(again.code == CM_OK); /* keys that were unique, in room made */
            }
        }
    }
#undef DIFFER
    release_both(t, n, at, fresh, was_held);
    cm_free(differ);
    cm_free(was_held);
    return err->code;
}

/* A DELETE's renumbering of the indexes, applied when they are next needed
 * (warm_indexes): for gap i (a chunk the DELETE replaced) and index k, map
 * maps + (k * n + i) * CM_BATCH_CAP (st_index_map_kept, st_index_close_up).
 * Deferred because a pass over every slot costs a few nanoseconds a row, and
 * DELETEs in a row would each pay it: a second one before the indexes are
 * needed gives up the first's, and they are built from the rows instead. */
struct StIndexPending {
    int n;
    StIndexGap *gaps;
    int16_t *maps;
    int64_t n_rows; /* after the DELETE */
};

/* The bytes of maps a DELETE may leave pending, beyond which the indexes
 * are built from the rows at the next append instead (a DELETE that touches
 * that many chunks costs a pass over the rows anyway). */
#define PENDING_MAX_BYTES ((size_t)4 << 20)

static void free_pending(StTable *t)
{
    if (t->pending != NULL) {
        cm_free(t->pending->gaps);
        cm_free(t->pending->maps);
        cm_free(t->pending);
        t->pending = NULL;
    }
}

/* The indexes (cold, a DELETE's renumbering pending) give up their rows and
 * the renumbering: built from the rows at the next append. */
static void discard_pending(StTable *t)
{
    if (t->pending != NULL) {
        for (int k = 0; k < t->n_indexes; k++) {
            st_index_clear(t->indexes[k]);
        }
        free_pending(t);
    }
}

/* The renumbering applied: the indexes hold t's rows again. */
static void apply_pending(StTable *t)
{
    StIndexPending *p = t->pending;
    for (int k = 0; k < t->n_indexes; k++) {
        for (int i = 0; i < p->n; i++) {
            p->gaps[i].map = p->maps + ((size_t)k * (size_t)p->n + (size_t)i) * CM_BATCH_CAP;
        }
        st_index_close_up(t->indexes[k], p->n, p->gaps, p->n_rows);
    }
    free_pending(t);
}

/* A DELETE, fresh[i] (the rows kept, or NULL) to replace the chunk at at[i],
 * of a table whose indexes are patchable and in no transaction: each index
 * keeps its slots, and the map of every replaced chunk's rows to their places
 * after is kept (t->pending); the indexes turn cold until then.  False when
 * that would keep too much, or on OOM: then cool_indexes. */
static bool defer_delete(StTable *t, int n, const int *at, StChunk **fresh)
{
    size_t n_maps = (size_t)n * (size_t)t->n_indexes;
    if (n_maps * CM_BATCH_CAP * sizeof(int16_t) > PENDING_MAX_BYTES) {
        return false;
    }
    StIndexPending *p = cm_calloc(1, sizeof *p);
    bool *was_held = cm_calloc((size_t)n + 1, sizeof(bool));
    CmErr err;
    cm_err_init(&err);
    if (p == NULL || was_held == NULL ||
        (p->gaps = cm_malloc(sizeof(StIndexGap) * ((size_t)n + 1))) == NULL ||
        (p->maps = cm_malloc(sizeof(int16_t) * n_maps * CM_BATCH_CAP + 1)) == NULL ||
        hold_both(t, n, at, fresh, was_held, &err) != CM_OK) {
        if (was_held != NULL && err.code != CM_OK) {
            release_both(t, n, at, fresh, was_held);
        }
        cm_free(was_held);
        if (p != NULL) {
            cm_free(p->gaps);
            cm_free(p->maps);
        }
        cm_free(p);
        return false;
    }
    int64_t gone = 0;
    for (int i = 0; i < n; i++) {
        int n_old = t->chunks[at[i]]->n_rows;
        p->gaps[i] = (StIndexGap){
            .start = t->starts[at[i]], .n_old = n_old, .new_start = t->starts[at[i]] - gone};
        gone += n_old - (fresh[i] != NULL ? fresh[i]->n_rows : 0);
        p->gaps[i].moved_after = gone;
    }
    for (int k = 0; k < t->n_indexes; k++) {
        for (int i = 0; i < n; i++) {
            st_index_map_kept(t->indexes[k], t, t->chunks[at[i]], fresh[i],
                              p->maps + ((size_t)k * (size_t)n + (size_t)i) * CM_BATCH_CAP);
        }
    }
    p->n = n;
    p->n_rows = t->n_rows - gone;
    t->pending = p;
    t->is_index_cold = true;
    release_both(t, n, at, fresh, was_held);
    cm_free(was_held);
    return true;
}

CmStatus st_table_swap_chunks(StTable *t, int n, const int *at, StChunk **fresh,
                              const StColStats *add, bool rekey, CmErr *err)
{
    bool moves = false;
    for (int i = 0; i < n; i++) {
        CM_ASSERT(at[i] >= 0 && at[i] < t->n_chunks && (i == 0 || at[i] > at[i - 1]));
        CM_ASSERT(fresh[i] == NULL || fresh[i]->n_rows <= t->chunks[at[i]]->n_rows);
        moves |= fresh[i] == NULL || fresh[i]->n_rows != t->chunks[at[i]]->n_rows;
    }
    CM_ASSERT(!rekey || !moves);
    if (n == 0 || own_stats(t, err) != CM_OK) {
        return err->code;
    }
    if (rekey && patchable(t)) {
        if (patch_keys(t, n, at, fresh, err) != CM_OK) {
            return err->code;
        }
    } else if (moves && patchable(t) && t->mark == NULL && defer_delete(t, n, at, fresh)) {
        /* the indexes renumbered at their next use */
    } else if (rekey && t->is_index_external) {
        if (recheck_keys(t, n, at, fresh, err) != CM_OK) {
            return err->code;
        }
    } else if ((moves && cool_indexes(t, err) != CM_OK) ||
               (rekey && rekey_indexes(t, n, at, fresh, err) != CM_OK)) {
        return err->code;
    }
    for (int i = 0; i < n; i++) {
        StChunk *old = t->chunks[at[i]];
        t->chunks[at[i]] = fresh[i];
        fresh[i] = NULL;
        let_go(old); /* in a transaction the mark keeps it, as it is, for a ROLLBACK */
    }
    if (moves) {
        int kept = 0;
        for (int ci = 0; ci < t->n_chunks; ci++) {
            if (t->chunks[ci] != NULL) {
                t->chunks[kept++] = t->chunks[ci];
            }
        }
        t->n_chunks = kept;
        restart(t);
        release_sealed(t); /* cold indexes read no rows */
    }
    for (int col = 0; add != NULL && col < t->n_cols; col++) {
        st_stats_union(&t->stats[col], &add[col]);
    }
    for (int col = 0; t->n_rows == 0 && col < t->n_cols; col++) {
        st_stats_clear(&t->stats[col]);
    }
    t->stats_stale = t->n_rows > 0; /* the values replaced or taken out are still counted */
    t->n_checked = t->n_rows;       /* a DELETE adds no key, an UPDATE was checked */
    stamp(t);
    return CM_OK;
}

static CmStatus append_once(StTable *t, const CmBatch *b, bool count, CmErr *err);

/* st_table_append, counting the rows in t's statistics when `count`.  When
 * memory runs out while the table has warm indexes (their slots, or the
 * chunks an index that reads rows holds), they give their memory up
 * (go_external) and the append is done again without them: its keys are
 * checked at the statement's end. */
static CmStatus append(StTable *t, const CmBatch *b, bool count, CmErr *err)
{
    if (b->n_rows > 0 && indexes_crowd(t)) {
        give_up_indexes(t, t->n_rows);
    }
    if (append_once(t, b, count, err) == CM_OOM && t->n_indexes > 0 && !t->is_index_cold &&
        go_external(t, t->n_rows, err)) {
        append_once(t, b, count, err);
    }
    return err->code;
}

static CmStatus append_once(StTable *t, const CmBatch *b, bool count, CmErr *err)
{
    if (b->n_rows > 0 && ((count && own_stats(t, err) != CM_OK) || warm_indexes(t, err) != CM_OK)) {
        return err->code;
    }
    int64_t start = t->n_rows;
    /* the chunk the first row goes to: the last one, unless it is full */
    int first_chunk = t->n_chunks > 0 && t->chunks[t->n_chunks - 1]->n_rows < CM_BATCH_CAP
                          ? t->n_chunks - 1
                          : t->n_chunks;
    for (int i = 0; i < b->n_rows;) {
        StChunk *c = tail_chunk(t, err);
        if (c == NULL) {
            goto fail;
        }
        int n = b->n_rows - i < CM_BATCH_CAP - c->n_rows ? b->n_rows - i : CM_BATCH_CAP - c->n_rows;
        CmBatch *dst = (CmBatch *)c->held;
        if (copy_rows(t, dst, c->n_rows, b, i, n, err) != CM_OK) {
            goto fail;
        }
        c->n_rows += n;
        dst->n_rows = c->n_rows;
        t->n_rows += n;
        i += n;
    }
    for (int i = first_chunk; i < t->n_chunks; i++) {
        if (st_block_charge(t->chunks[i]->block, err) != CM_OK) {
            goto fail;
        }
    }
    for (int i = 0; i < t->n_indexes && !t->is_index_cold; i++) {
        if (st_index_add_rows(t->indexes[i], t, start, err) != CM_OK) {
            goto fail;
        }
    }
    /* Only now are the chunks this append filled sealed: undoing it never
     * touches a sealed block's rows. */
    for (int i = first_chunk; i < t->n_chunks; i++) {
        StChunk *c = t->chunks[i];
        if (!c->sealed && c->n_rows == CM_BATCH_CAP && seal(t, c, err) != CM_OK) {
            goto fail;
        }
    }
    /* Counted only now that nothing can fail: a failed append leaves no trace. */
    for (int col = 0; count && col < t->n_cols; col++) {
        st_stats_add(&t->stats[col], &b->cols[col], b->sel, b->n_rows);
    }
    if (b->n_rows > 0) {
        stamp(t);
    }
    return CM_OK;
fail : {
    bool was_stale = t->stats_stale;   /* the statistics never saw this append's rows */
    uint64_t was_version = t->version; /* nor did anything saved: the rows are as they were */
    st_table_truncate(t, start);
    t->stats_stale = was_stale;
    t->version = was_version;
    return err->code;
}
}

CmStatus st_table_append(StTable *t, const CmBatch *b, CmErr *err)
{
    return append(t, b, true, err);
}

CmStatus st_table_append_uncounted(StTable *t, const CmBatch *b, CmErr *err)
{
    return append(t, b, false, err);
}

CmStatus st_table_add_stats(StTable *t, const StColStats *add, CmErr *err)
{
    if (own_stats(t, err) != CM_OK) {
        return err->code;
    }
    for (int col = 0; col < t->n_cols; col++) {
        st_stats_union(&t->stats[col], &add[col]);
    }
    return CM_OK;
}

CmStatus st_table_add_saved_chunk(StTable *t, int n_rows, StBlockLoc loc, const int64_t *col_bytes,
                                  const char *path, const int64_t *zone, CmErr *err)
{
    CM_ASSERT(n_rows > 0 && n_rows <= CM_BATCH_CAP && t->n_indexes == 0);
    if (!grow_chunks(t, err)) {
        return err->code;
    }
    StChunk *c = cm_calloc(1, sizeof *c);
    size_t zone_bytes = sizeof(int64_t) * 2 * (size_t)(t->n_cols > 0 ? t->n_cols : 1);
    if (c == NULL || (c->zone = cm_malloc(zone_bytes)) == NULL ||
        (c->block = st_block_new_saved(t->n_cols, t->types, &t->mem, n_rows, loc, col_bytes, path,
                                       err)) == NULL) {
        chunk_free(c);
        return cm_err_set(err, CM_OOM, -1, "out of memory opening table '%s'", t->name);
    }
    memcpy(c->zone, zone, sizeof(int64_t) * 2 * (size_t)t->n_cols);
    c->n_rows = n_rows;
    c->sealed = true;
    push_chunk(t, c);
    t->n_rows += n_rows;
    stamp(t);
    return CM_OK;
}

CmStatus st_table_reserve(StTable *t, int64_t n_more, CmErr *err)
{
    if (warm_indexes(t, err) != CM_OK) {
        return err->code;
    }
    for (int i = 0; i < t->n_indexes && !t->is_index_cold; i++) {
        if (st_index_reserve(t->indexes[i], t, t->n_rows + n_more, err) != CM_OK) {
            return go_external(t, t->n_rows, err) ? CM_OK : err->code;
        }
    }
    if (indexes_crowd(t)) {
        give_up_indexes(t, t->n_rows);
    }
    return CM_OK;
}

CmStatus st_table_check_keys(StTable *t, bool is_load, CmErr *err)
{
    if (is_load && t->mark == NULL && 4 * index_memory(t) > cm_mem_limit()) {
        /* the slots cannot be evicted: after a load, too large to keep for
         * the next append (which builds them again, or checks without them)
         * beside the other tables' that the next loads will add */
        release_indexes(t);
    }
    if (!t->is_index_external || t->n_checked >= t->n_rows) {
        return CM_OK;
    }
    for (int i = 0; i < t->n_indexes; i++) {
        if (st_index_check_unique(t->indexes[i], t, t->n_checked, err) != CM_OK) {
            return err->code;
        }
    }
    t->n_checked = t->n_rows;
    return CM_OK;
}

void st_table_truncate(StTable *t, int64_t n_rows)
{
    if (n_rows >= t->n_rows) {
        return;
    }
    discard_pending(t);
    t->n_checked = t->n_checked < n_rows ? t->n_checked : n_rows;
    for (int i = 0; i < t->n_indexes && !t->is_index_cold; i++) {
        st_index_truncate(t->indexes[i], t, n_rows);
    }
    int off = -1, keep = n_rows > 0 ? st_table_chunk_of(t, n_rows - 1, &off) + 1 : 0;
    for (int i = keep; i < t->n_chunks; i++) {
        let_go(t->chunks[i]); /* appended since any mark: never the mark's */
    }
    t->n_chunks = keep;
    if (keep > 0) {
        StChunk *c = t->chunks[keep - 1];
        c->n_rows = off + 1;
        if (!c->sealed) {
            ((CmBatch *)c->held)->n_rows = c->n_rows;
        }
    }
    restart(t);
    stamp(t);
    CmErr quiet; /* a marked table's statistics not copied: they stay, as an upper bound */
    cm_err_init(&quiet);
    bool is_cleared = n_rows == 0 && own_stats(t, &quiet) == CM_OK;
    for (int col = 0; is_cleared && col < t->n_cols; col++) {
        st_stats_clear(&t->stats[col]);
    }
    t->stats_stale = !is_cleared;
}

CmStatus st_table_analyze(StTable *t, CmErr *err)
{
    StColStats *fresh = st_stats_new_array(t->n_cols);
    if (fresh == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory analyzing table '%s'", t->name);
    }
    for (int i = 0; i < t->n_chunks; i++) {
        const StChunk *c = t->chunks[i];
        const CmBatch *b = st_block_pin(c->block, NULL, err);
        if (b == NULL) {
            cm_free(fresh);
            return err->code != CM_OK
                       ? err->code
                       : cm_err_set(err, CM_RUNTIME, -1,
                                    "the rows of '%s' were dropped from memory", t->name);
        }
        for (int col = 0; col < t->n_cols; col++) {
            st_stats_add(&fresh[col], &b->cols[col], NULL, c->n_rows);
        }
        st_block_unpin(c->block);
    }
    drop_stats(t);
    t->stats = fresh;
    t->stats_stale = false;
    /* A new version, though the rows are the same: a directory database's
     * commit saves the statistics then (the chunks keep their records). */
    stamp(t);
    return CM_OK;
}

/* A sealed chunk's block, kept by a consumer of a scan's batch (CmKeeper):
 * pinned again only while resident and only when every vector of b views
 * one of its columns as it is, so a batch an operator changed is copied. */
static bool keep_pin(void *obj, const CmBatch *b)
{
    return st_block_pin_view(obj, b);
}

static void keep_unpin(void *obj)
{
    st_block_unpin(obj);
}

static const CmKeeper chunk_keeper = {keep_pin, keep_unpin};

CmStatus st_table_scan_chunk(const StTable *t, int chunk_idx, const int *col_ids, int n_out,
                             CmBatch *out, bool *loaded, CmErr *err)
{
    const StChunk *c = t->chunks[chunk_idx];
    out->n_rows = 0;
    out->sel = NULL;
    out->keep.keeper = NULL;
    int addr_at = -1, n_ids = 0, few[32];
    for (int i = 0; i < n_out; i++) {
        addr_at = col_ids[i] == ST_ROW_ADDR(t) ? i : addr_at;
    }
    const int *ids = col_ids;
    int *many = NULL;
    if (addr_at >= 0) { /* the block holds the others */
        ids = n_out <= 32 ? few : (many = cm_malloc(sizeof(int) * (size_t)n_out));
        if (ids == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory reading '%s'", t->name);
        }
        for (int i = 0; i < n_out; i++) {
            if (i != addr_at) {
                ((int *)ids)[n_ids++] = col_ids[i];
            }
        }
    }
    const CmBatch *b = st_block_pin_cols(c->block, ids, addr_at >= 0 ? n_ids : n_out, loaded, err);
    cm_free(many);
    if (b == NULL) {
        /* Only a MEMORY_ONLY chunk (a cache's) is dropped; its owner
         * recomputes the rows before the next statement reads them. */
        return err->code != CM_OK
                   ? err->code
                   : cm_err_set(err, CM_RUNTIME, -1,
                                "the cached rows of '%s' were dropped from memory while the "
                                "statement ran (MEMORY_ONLY); run it again to recompute them",
                                t->name);
    }
    for (int i = 0; i < n_out; i++) {
        CmVec *v = &out->cols[i];
        v->kind = CM_VEC_FLAT;
        if (i == addr_at) {
            v->data = v->data_buf;
            v->validity = NULL;
            for (int r = 0; r < c->n_rows; r++) {
                ((int64_t *)v->data)[r] = (int64_t)chunk_idx * CM_BATCH_CAP + r;
            }
            continue;
        }
        v->data = b->cols[col_ids[i]].data;
        v->validity = b->cols[col_ids[i]].validity;
    }
    out->n_rows = c->n_rows;
    /* a sealed chunk never changes; the tail is still appended to */
    out->keep = (CmKeep){c->sealed ? &chunk_keeper : NULL, c->block};
    return CM_OK;
}

void st_table_unpin_chunk(const StTable *t, int chunk_idx)
{
    st_block_unpin(t->chunks[chunk_idx]->block);
}

void st_table_unpin_chunk_cold(const StTable *t, int chunk_idx)
{
    st_block_unpin_cold(t->chunks[chunk_idx]->block);
}

bool st_table_scans_cold(const StTable *t)
{
    int64_t width = 0;
    for (int c = 0; c < t->n_cols; c++) {
        width += (int64_t)cm_type_width(t->types[c]);
    }
    CmMemStats st;
    cm_mem_stats(&st);
    return t->n_rows * width > st.storage_share / 4;
}

void st_table_chunk_range(const StTable *t, int chunk_idx, int col, int64_t *lo, int64_t *hi)
{
    const StChunk *c = t->chunks[chunk_idx];
    if (col == ST_ROW_ADDR(t)) { /* no zone map */
        *lo = INT64_MIN;
        *hi = INT64_MAX;
        return;
    }
    if (c->zone != NULL) {
        *lo = c->zone[2 * col];
        *hi = c->zone[2 * col + 1];
        return;
    }
    column_range(&c->held->cols[col], c->n_rows, lo, hi); /* the tail: held */
}

/* ---- transactions ------------------------------------------------------------------------ */

void st_table_release(StTable *t)
{
    if (t != NULL && t->mark == NULL) {
        st_table_free(t);
    }
}

/* Frees the mark's own memory (names, arrays), not its indexes, statistics or chunks. */
static void mark_free(StTableMark *m, int n_cols)
{
    if (m == NULL) {
        return;
    }
    for (int c = 0; m->col_names != NULL && c < n_cols; c++) {
        cm_free(m->col_names[c]);
    }
    cm_free(m->col_names);
    cm_free(m->indexes);
    cm_free(m->name);
    cm_free(m->chunks);
    cm_free(m->chunk_rows);
    cm_free(m);
}

CmStatus st_table_mark(StTable *t, CmErr *err)
{
    CM_ASSERT(t->mark == NULL);
    discard_pending(t); /* the mark keeps the indexes as they are: cold and empty */
    StTableMark *m = cm_calloc(1, sizeof *m);
    if (m == NULL || (m->col_names = cm_calloc((size_t)t->n_cols + 1, sizeof(char *))) == NULL ||
        (m->indexes = cm_malloc(sizeof(StIndex *) * (size_t)(t->n_indexes + 1))) == NULL ||
        (m->chunks = cm_malloc(sizeof(StChunk *) * (size_t)(t->n_chunks + 1))) == NULL ||
        (m->chunk_rows = cm_malloc(sizeof(int) * (size_t)(t->n_chunks + 1))) == NULL ||
        (m->name = cm_strdup(t->name)) == NULL) {
        goto oom;
    }
    for (int c = 0; c < t->n_cols; c++) {
        if ((m->col_names[c] = cm_strdup(t->cols[c].name)) == NULL) {
            goto oom;
        }
    }
    if (t->n_indexes > 0) {
        memcpy(m->indexes, t->indexes, sizeof(StIndex *) * (size_t)t->n_indexes);
    }
    for (int i = 0; i < t->n_chunks; i++) {
        m->chunks[i] = t->chunks[i];
        m->chunk_rows[i] = t->chunks[i]->n_rows;
        t->chunks[i]->in_mark = true;
    }
    m->n_chunks = t->n_chunks;
    m->n_indexes = t->n_indexes;
    m->n_rows = t->n_rows;
    m->version = t->version;
    m->stats = t->stats;
    m->is_stats_stale = t->stats_stale;
    m->is_index_cold = t->is_index_cold;
    t->mark = m;
    return CM_OK;
oom:
    mark_free(m, t->n_cols);
    return cm_err_set(err, CM_OOM, -1, "out of memory starting a transaction on '%s'", t->name);
}

/* Puts the marked indexes back (freeing those added since) and forgets the
 * rows past the mark in each, while the chunks still hold them. */
static void restore_indexes(StTable *t, StTableMark *m)
{
    for (int i = 0; i < t->n_indexes; i++) {
        if (!has_index(m->indexes, m->n_indexes, t->indexes[i])) {
            st_index_free(t->indexes[i]);
        }
    }
    cm_free(t->indexes);
    t->indexes = m->indexes;
    t->n_indexes = m->n_indexes;
    m->indexes = NULL;
    m->n_indexes = 0;
    for (int i = 0; i < t->n_indexes && !t->is_index_cold; i++) {
        st_index_truncate(t->indexes[i], t, m->is_index_cold ? 0 : m->n_rows);
    }
}

void st_table_restore(StTable *t)
{
    StTableMark *m = t->mark;
    if (m == NULL) {
        return;
    }
    restore_indexes(t, m);
    /* The chunks made since go; the marked ones come back, each with the rows
     * it had (the last one may have had rows appended since; a truncated
     * block may hold more rows than its chunk counts). */
    for (int i = 0; i < t->n_chunks; i++) {
        let_go(t->chunks[i]);
    }
    CM_ASSERT(m->n_chunks <= t->cap_chunks); /* the arrays never shrink */
    for (int i = 0; i < m->n_chunks; i++) {
        StChunk *c = m->chunks[i];
        c->in_mark = false;
        c->n_rows = m->chunk_rows[i];
        if (!c->sealed) {
            ((CmBatch *)c->held)->n_rows = c->n_rows;
        }
        t->chunks[i] = c;
    }
    t->n_chunks = m->n_chunks;
    restart(t);
    t->is_index_cold = m->is_index_cold && t->n_indexes > 0;
    t->n_checked = t->n_rows; /* the marked rows, which the last statement before BEGIN checked */
    release_sealed(t);
    drop_stats(t);
    t->stats = m->stats;
    t->stats_stale = m->is_stats_stale;
    t->version = m->version;
    cm_free(t->name);
    t->name = m->name;
    m->name = NULL;
    for (int c = 0; c < t->n_cols; c++) {
        cm_free(t->cols[c].name);
        t->cols[c].name = m->col_names[c];
        m->col_names[c] = NULL;
    }
    mark_free(m, t->n_cols);
    t->mark = NULL;
}

/* Only what the snapshot owns: its arrays, names and shortened last chunk. */
static void snapshot_free(StTable *v)
{
    for (int c = 0; v->cols != NULL && c < v->n_cols; c++) {
        cm_free(v->cols[c].name);
    }
    cm_free(v->cols);
    cm_free(v->types);
    cm_free(v->chunks);
    cm_free(v->starts);
    cm_free(v->own_tail); /* its block and zone map are the live chunk's */
    cm_free(v->name);
    cm_free(v);
}

StTable *st_table_snapshot(const StTable *t, CmErr *err)
{
    const StTableMark *m = t->mark;
    CM_ASSERT(m != NULL);
    StTable *v = cm_calloc(1, sizeof *v);
    if (v == NULL) {
        goto oom;
    }
    v->is_snapshot = true;
    int n_chunks = m->n_chunks;
    v->name = cm_strdup(m->name);
    v->cols = cm_calloc((size_t)t->n_cols + 1, sizeof(StColumn));
    v->types = cm_calloc((size_t)t->n_cols + 1, sizeof(CmType));
    v->chunks = cm_calloc((size_t)n_chunks + 1, sizeof(StChunk *));
    v->starts = cm_calloc((size_t)n_chunks + 1, sizeof(int64_t));
    if (v->name == NULL || v->cols == NULL || v->types == NULL || v->chunks == NULL ||
        v->starts == NULL) {
        goto oom;
    }
    for (int c = 0; c < t->n_cols; c++) {
        v->n_cols = c + 1;
        v->cols[c] = t->cols[c]; /* a long default's bytes stay t's: a reader never inserts */
        v->types[c] = t->types[c];
        if ((v->cols[c].name = cm_strdup(m->col_names[c])) == NULL) {
            goto oom;
        }
    }
    memcpy(v->chunks, m->chunks, sizeof(StChunk *) * (size_t)n_chunks);
    for (int i = 0; i + 1 < n_chunks; i++) {
        CM_ASSERT(v->chunks[i]->n_rows == m->chunk_rows[i]); /* only the last one grows */
    }
    if (n_chunks > 0 && v->chunks[n_chunks - 1]->n_rows != m->chunk_rows[n_chunks - 1]) {
        /* Rows were appended to the chunk since: a copy that counts only the
         * first ones (appends never rewrite rows already there).  Not sealed, so
         * a reader copies what it keeps rather than holding on to the block. */
        const StChunk *live = v->chunks[n_chunks - 1];
        StChunk *own = cm_malloc(sizeof *own);
        if (own == NULL) {
            goto oom;
        }
        *own = *live;
        own->zone = NULL; /* no zone map, as a tail chunk: scans read it */
        own->n_rows = m->chunk_rows[n_chunks - 1];
        own->sealed = false;
        v->own_tail = own;
        v->chunks[n_chunks - 1] = own;
    }
    v->n_chunks = v->cap_chunks = n_chunks;
    restart(v);
    CM_ASSERT(v->n_rows == m->n_rows);
    v->n_indexes = m->n_indexes;
    v->indexes = m->indexes;
    v->level = t->level;
    atomic_init(&v->lost, atomic_load(&t->lost));
    v->stats = m->stats;
    v->stats_stale = m->is_stats_stale;
    v->is_index_cold = m->is_index_cold;
    v->id = t->id;
    v->version = m->version;
    return v;
oom:
    if (v != NULL) {
        snapshot_free(v);
    }
    cm_err_set(err, CM_OOM, -1, "out of memory reading '%s' as committed", t->name);
    return NULL;
}

void st_table_unmark(StTable *t)
{
    StTableMark *m = t->mark;
    if (m == NULL) {
        return;
    }
    bool had_dropped = false;
    for (int i = 0; i < m->n_indexes; i++) {
        if (!has_index(t->indexes, t->n_indexes, m->indexes[i])) {
            st_index_free(m->indexes[i]);
            had_dropped = true;
        }
    }
    if (t->stats != m->stats) {
        cm_free(m->stats);
    }
    /* The marked chunks the table let go of are the mark's to free. */
    for (int i = 0; i < t->n_chunks; i++) {
        t->chunks[i]->in_mark = false;
    }
    for (int i = 0; i < m->n_chunks; i++) {
        if (m->chunks[i]->in_mark) {
            m->chunks[i]->in_mark = false;
            st_table_chunk_discard(m->chunks[i]);
        }
    }
    mark_free(m, t->n_cols);
    t->mark = NULL;
    if (had_dropped) {
        release_sealed(t); /* the chunks were held for the dropped index */
    }
}
