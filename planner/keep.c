/*
 * keep.c - the partitioned forms kept across statements (keep.h).
 *
 * A fixed array of entries, each a key that was seen (sh == NULL) or kept
 * (sh and its store owned).  Least recently used leaves first when a new key
 * needs a place.  Keys are compared field by field: there are at most 16, and
 * a statement asks about a handful of exchanges.
 */
#include "planner/keep.h"

#include <stdio.h>
#include <string.h>

#include "common/alloc.h"

typedef struct Entry {
    bool is_used;
    PlKeepKey key;
    char table[128]; /* the table's name, for the sweep */
    char what[256];  /* "table (cols; hash on keys, n partitions)" */
    ShStore *store;  /* kept: owned, with sh */
    ShShuffle *sh;
    int64_t hits;
    uint64_t last; /* the keeper's clock at the last use */
} Entry;

struct PlKeep {
    PlKeepCurrentFn is_current;
    void *ctx;
    uint64_t clock;
    Entry e[PL_KEEP_MAX];
};

PlKeep *pl_keep_new(PlKeepCurrentFn is_current, void *ctx)
{
    PlKeep *k = cm_calloc(1, sizeof *k);
    if (k != NULL) {
        k->is_current = is_current;
        k->ctx = ctx;
    }
    return k;
}

/* Frees e's shuffle, and its store when no other entry keeps a shuffle in it
 * (the exchanges one statement kept share its store). */
static void drop(PlKeep *k, Entry *e)
{
    ShStore *st = e->store;
    sh_shuffle_free(e->sh);
    memset(e, 0, sizeof *e);
    for (int i = 0; st != NULL && i < PL_KEEP_MAX; i++) {
        st = k->e[i].store == st ? NULL : st;
    }
    sh_store_free(st);
}

void pl_keep_clear(PlKeep *k)
{
    for (int i = 0; k != NULL && i < PL_KEEP_MAX; i++) {
        drop(k, &k->e[i]);
    }
}

void pl_keep_free(PlKeep *k)
{
    pl_keep_clear(k);
    cm_free(k);
}

static bool same_key(const PlKeepKey *a, const PlKeepKey *b)
{
    return a->table_id == b->table_id && a->version == b->version && a->n_cols == b->n_cols &&
           a->n_keys == b->n_keys && a->n_parts == b->n_parts &&
           memcmp(a->cols, b->cols, sizeof(int) * (size_t)a->n_cols) == 0 &&
           memcmp(a->keys, b->keys, sizeof(int) * (size_t)a->n_keys) == 0;
}

static Entry *find(PlKeep *k, const PlKeepKey *key)
{
    for (int i = 0; i < PL_KEEP_MAX; i++) {
        if (k->e[i].is_used && same_key(&k->e[i].key, key)) {
            return &k->e[i];
        }
    }
    return NULL;
}

bool pl_keep_eligible(const PlKeep *k, const char *name, const StTable *t)
{
    return k != NULL && name != NULL && strlen(name) < sizeof((Entry *)0)->table &&
           k->is_current(k->ctx, name, t->id, t->version);
}

ShShuffle *pl_keep_find(PlKeep *k, const PlKeepKey *key)
{
    Entry *e = k != NULL ? find(k, key) : NULL;
    return e != NULL ? e->sh : NULL;
}

/* The least recently used entry (a kept one when `kept_only`) that is not
 * kept in store `st` (the statement's, which the caller still writes into),
 * or NULL. */
static Entry *oldest(PlKeep *k, const ShStore *st, bool kept_only)
{
    Entry *old = NULL;
    for (int i = 0; i < PL_KEEP_MAX; i++) {
        Entry *e = &k->e[i];
        if (e->is_used && (e->sh != NULL || !kept_only) && e->store != st &&
            (old == NULL || e->last < old->last)) {
            old = e;
        }
    }
    return old;
}

/* A free entry, or the least recently used one (oldest), dropped; NULL when
 * every entry is kept in `st`. */
static Entry *take_slot(PlKeep *k, const ShStore *st)
{
    for (int i = 0; i < PL_KEEP_MAX; i++) {
        if (!k->e[i].is_used) {
            return &k->e[i];
        }
    }
    Entry *old = oldest(k, st, false);
    if (old != NULL) {
        drop(k, old);
    }
    return old;
}

static int64_t disk_bytes(const ShShuffle *sh)
{
    ShShuffleStats s;
    sh_shuffle_stats(sh, &s);
    return s.spilled_bytes;
}

/* Makes room for `bytes` more under `cap` by dropping the least recently
 * used kept entries, never one in store `st` (what this statement keeps);
 * false when that is not enough. */
static bool make_room(PlKeep *k, int64_t bytes, int64_t cap, const ShStore *st)
{
    for (;;) {
        int64_t held = 0;
        for (int i = 0; i < PL_KEEP_MAX; i++) {
            held += k->e[i].sh != NULL ? disk_bytes(k->e[i].sh) : 0;
        }
        if (held + bytes <= cap) {
            return true;
        }
        Entry *old = oldest(k, st, true);
        if (old == NULL) {
            return false;
        }
        drop(k, old);
    }
}

/* Whether w's shuffle is kept: its key was seen before (else it is
 * remembered now), the whole shuffle went to disk (no full disk), and its
 * files fit in `cap` beside what is kept (its payload, an upper bound of
 * them but for the framing of small blocks, is checked before writing). */
static bool offer(PlKeep *k, const PlKeepWrote *w, ShStore *st, int64_t cap)
{
    if (w->sh == NULL || !k->is_current(k->ctx, w->table, w->key->table_id, w->key->version)) {
        return false;
    }
    Entry *e = find(k, w->key);
    if (e != NULL && e->sh != NULL) {
        return false; /* kept already (the statement did not plan with it) */
    }
    if (e == NULL) {
        if ((e = take_slot(k, st)) == NULL) {
            return false;
        }
        e->is_used = true; /* the first time: remember the key only */
        e->key = *w->key;
        snprintf(e->table, sizeof e->table, "%s", w->table);
        snprintf(e->what, sizeof e->what, "%s", w->what);
        e->last = k->clock;
        return false;
    }
    e->last = k->clock;
    if (w->filtered) {
        return false;
    }
    CmErr err;
    cm_err_init(&err);
    ShShuffleStats s;
    sh_shuffle_stats(w->sh, &s); /* a payload past the cap is not written at all */
    if (s.bytes_pushed > cap || sh_shuffle_flush(w->sh, &err) != CM_OK) {
        return false;
    }
    int64_t bytes = disk_bytes(w->sh);
    if (bytes > cap || !make_room(k, bytes, cap, st)) {
        return false;
    }
    e->store = st;
    e->sh = w->sh;
    return true;
}

void pl_keep_done(PlKeep *k, bool ok, int n_used, PlKeepKey *const *used, int n_wrote,
                  const PlKeepWrote *wrote, ShStore *st, int64_t cap)
{
    if (k != NULL) {
        k->clock++;
    }
    for (int i = 0; k != NULL && i < n_used; i++) {
        Entry *e = find(k, used[i]);
        if (e != NULL && ok) {
            e->hits++;
            e->last = k->clock;
        } else if (e != NULL) {
            drop(k, e); /* a kept file may be what failed: never read it again */
        }
    }
    bool is_kept = false;
    for (int i = 0; i < n_wrote; i++) {
        if (k != NULL && ok && offer(k, &wrote[i], st, cap)) {
            is_kept = true;
        } else {
            sh_shuffle_free(wrote[i].sh);
        }
    }
    if (is_kept) {
        sh_store_trim(st); /* the freed shuffles' blocks it would reuse */
    } else {
        sh_store_free(st);
    }
}

void pl_keep_sweep(PlKeep *k)
{
    for (int i = 0; k != NULL && i < PL_KEEP_MAX; i++) {
        Entry *e = &k->e[i];
        if (e->is_used && !k->is_current(k->ctx, e->table, e->key.table_id, e->key.version)) {
            drop(k, e);
        }
    }
}

int pl_keep_list(const PlKeep *k, PlKeepInfo *out, int cap)
{
    const Entry *order[PL_KEEP_MAX];
    int n = 0;
    for (int i = 0; k != NULL && i < PL_KEEP_MAX; i++) {
        if (k->e[i].is_used && k->e[i].sh != NULL) {
            int at = n++;
            for (; at > 0 && order[at - 1]->last > k->e[i].last; at--) {
                order[at] = order[at - 1];
            }
            order[at] = &k->e[i];
        }
    }
    for (int i = 0; i < n && i < cap; i++) {
        ShShuffleStats s;
        sh_shuffle_stats(order[i]->sh, &s); /* rows */
        out[i] = (PlKeepInfo){.name = order[i]->what,
                              .rows = s.rows,
                              .disk_bytes = disk_bytes(order[i]->sh),
                              .hits = order[i]->hits};
    }
    return n;
}
