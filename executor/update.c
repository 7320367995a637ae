/*
 * update.c - UPDATE in place (executor/update.h).  The chunks are split into
 * runs of contiguous chunks, one task each, on the session's workers; each
 * worker has its own expression states and batches (a lane).  A chunk's
 * WHERE columns are pinned (a directory database reads just those records)
 * and the WHERE evaluated; only a chunk with a match is pinned whole for its
 * copy.  After an error the workers still finish the chunks before it, so
 * the error reported is always the first chunk's, whatever the threads.
 */
#include <stdatomic.h>
#include <string.h>

#include "common/alloc.h"
#include "executor/ops.h"
#include "executor/update.h"

typedef struct Lane {
    ExExprState *pred;
    ExExprState **set; /* per column, or NULL */
    CmBatch in_narrow, in_wide;
    CmVec *cols;     /* a copy's columns: views of in_wide's, or of `merged` */
    CmVec *merged;   /* per column set: its old values with the new ones at the rows picked */
    StColStats *add; /* the new values' statistics */
    int n_fresh, cap_fresh;
    int *at;
    StChunk **fresh;
    int64_t changes;
    CmErr err;
    int err_chunk; /* where err was set */
} Lane;

typedef struct Updater {
    StTable *t;
    int n_cols;
    int *all;     /* 0 .. n_cols - 1 */
    int n_narrow; /* the columns the WHERE reads */
    int *narrow;  /* their table columns */
    CmType *narrow_types;
    const ExExpr *pred; /* over the narrow columns, or NULL */
    int n_zoned;        /* table columns whose range the WHERE bounds */
    int *zoned;
    int64_t *zone_lo, *zone_hi; /* per zoned column: the values a row needs to match */
    ExExpr *const *set;         /* over all columns */
    bool is_delete;             /* the rows picked go: a copy holds the others */
    int n_lanes;
    Lane *lanes;
    int chunks_per_task;
    const atomic_bool *interrupt; /* or NULL */
    atomic_int first_err;         /* the lowest chunk that failed, or INT_MAX */
} Updater;

static CmStatus oom(CmErr *err)
{
    return cm_err_set(err, CM_OOM, -1, "out of memory updating rows");
}

/* Marks in `used` the columns e reads. */
static void mark_columns(const ExExpr *e, bool *used)
{
    if (e->kind == EX_E_COLUMN) {
        used[e->col] = true;
    }
    for (int i = 0; i < e->n_args; i++) {
        mark_columns(e->args[i], used);
    }
}

static void lane_fini(const Updater *u, Lane *l)
{
    for (int i = 0; i < l->n_fresh; i++) {
        st_table_chunk_discard(l->fresh[i]);
    }
    cm_free(l->fresh);
    cm_free(l->at);
    cm_free(l->add);
    cm_free(l->cols);
    for (int c = 0; l->set != NULL && c < u->n_cols; c++) {
        ex_expr_state_free(l->set[c]);
        if (l->merged != NULL && u->set[c] != NULL) {
            cm_vec_fini(&l->merged[c]);
        }
    }
    cm_free(l->merged);
    cm_free(l->set);
    ex_expr_state_free(l->pred);
    cm_batch_fini(&l->in_narrow);
    cm_batch_fini(&l->in_wide);
}

static CmStatus lane_init(const Updater *u, Lane *l, CmErr *err)
{
    int n = u->n_cols;
    cm_err_init(&l->err);
    l->set = cm_calloc((size_t)n + 1, sizeof(ExExprState *));
    l->add = st_stats_new_array(n);
    l->cols = cm_calloc((size_t)n + 1, sizeof(CmVec));
    l->merged = cm_calloc((size_t)n + 1, sizeof(CmVec));
    if (l->set == NULL || l->add == NULL || l->cols == NULL || l->merged == NULL) {
        return oom(err);
    }
    for (int c = 0; c < n; c++) {
        if (u->set[c] != NULL && (cm_vec_init(&l->merged[c], u->t->types[c], err) != CM_OK ||
                                  (l->set[c] = ex_expr_state_new(u->set[c], err)) == NULL)) {
            return err->code;
        }
    }
    if (u->pred != NULL &&
        ((l->pred = ex_expr_state_new(u->pred, err)) == NULL ||
         cm_batch_init(&l->in_narrow, u->n_narrow, u->narrow_types, err) != CM_OK)) {
        return err->code;
    }
    return cm_batch_init(&l->in_wide, n, u->t->types, err);
}

/* The column ranges the conjuncts of pred (the binder's CASE WHEN w THEN
 * TRUE ELSE FALSE END, or w) bound, as a scan's WHERE does (ex_zone_range):
 * a chunk whose zone map has no value in one of them has no row to change. */
static void zone_ranges(Updater *u, const ExExpr *pred)
{
    if (pred->kind == EX_E_CASE && pred->n_args == 3) {
        pred = pred->args[0];
    }
    const ExExpr *const *conj;
    int n_conj = ex_conjuncts(&pred, &conj);
    for (int i = 0; i < n_conj; i++) {
        int col, z = 0;
        int64_t lo, hi;
        if (!ex_zone_range(conj[i], &col, &lo, &hi)) {
            continue;
        }
        while (z < u->n_zoned && u->zoned[z] != col) {
            z++;
        }
        if (z == u->n_zoned) {
            u->zoned[u->n_zoned++] = col;
            u->zone_lo[z] = INT64_MIN;
            u->zone_hi[z] = INT64_MAX;
        }
        u->zone_lo[z] = lo > u->zone_lo[z] ? lo : u->zone_lo[z];
        u->zone_hi[z] = hi < u->zone_hi[z] ? hi : u->zone_hi[z];
    }
}

/* True when chunk ci's zone maps show that no row of it can match. */
static bool chunk_excluded(const Updater *u, int ci)
{
    for (int z = 0; z < u->n_zoned; z++) {
        int64_t lo, hi;
        st_table_chunk_range(u->t, ci, u->zoned[z], &lo, &hi);
        if (u->zone_lo[z] > u->zone_hi[z] || lo > hi || hi < u->zone_lo[z] || lo > u->zone_hi[z]) {
            return true;
        }
    }
    return false;
}

static void updater_fini(Updater *u)
{
    for (int i = 0; u->lanes != NULL && i < u->n_lanes; i++) {
        lane_fini(u, &u->lanes[i]);
    }
    cm_free(u->lanes);
    cm_free(u->zoned);
    cm_free(u->zone_lo);
    cm_free(u->zone_hi);
    cm_free(u->narrow_types);
    cm_free(u->narrow);
    cm_free(u->all);
}

static CmStatus updater_init(Updater *u, StTable *t, const ExExpr *pred, ExExpr *const *set,
                             int n_lanes, CmArena *a, CmErr *err)
{
    int n = t->n_cols;
    u->t = t;
    u->n_cols = n;
    u->set = set;
    atomic_init(&u->first_err, INT32_MAX);
    bool *used = cm_calloc((size_t)n + 1, sizeof(bool));
    int *map = cm_calloc((size_t)n + 1, sizeof(int));
    u->all = cm_calloc((size_t)n + 1, sizeof(int));
    u->narrow = cm_calloc((size_t)n + 1, sizeof(int));
    u->narrow_types = cm_calloc((size_t)n + 1, sizeof(CmType));
    u->lanes = cm_calloc((size_t)n_lanes, sizeof(Lane));
    u->zoned = cm_calloc((size_t)n + 1, sizeof(int));
    u->zone_lo = cm_calloc((size_t)n + 1, sizeof(int64_t));
    u->zone_hi = cm_calloc((size_t)n + 1, sizeof(int64_t));
    if (used == NULL || map == NULL || u->all == NULL || u->narrow == NULL ||
        u->narrow_types == NULL || u->lanes == NULL || u->zoned == NULL || u->zone_lo == NULL ||
        u->zone_hi == NULL) {
        goto fail;
    }
    u->n_lanes = n_lanes;
    for (int c = 0; c < n; c++) {
        u->all[c] = c;
    }
    if (pred != NULL) {
        zone_ranges(u, pred);
        mark_columns(pred, used);
        for (int c = 0; c < n; c++) {
            map[c] = used[c] ? u->n_narrow : -1;
            if (used[c]) {
                u->narrow_types[u->n_narrow] = t->types[c];
                u->narrow[u->n_narrow++] = c;
            }
        }
        /* the WHERE over the columns it reads, in their order */
        if ((u->pred = ex_expr_remap(a, pred, map)) == NULL) {
            goto fail;
        }
    }
    for (int i = 0; i < n_lanes; i++) {
        if (lane_init(u, &u->lanes[i], err) != CM_OK) {
            goto fail;
        }
    }
    cm_free(used);
    cm_free(map);
    return CM_OK;
fail:
    cm_free(used);
    cm_free(map);
    return err->code != CM_OK ? err->code : oom(err);
}

/* Unpins chunk ci, cold when this pin loaded it and the table is too large to
 * stay (as a scan does). */
static void unpin(const StTable *t, int ci, bool loaded)
{
    if (loaded && st_table_scans_cold(t)) {
        st_table_unpin_chunk_cold(t, ci);
    } else {
        st_table_unpin_chunk(t, ci);
    }
}

/* The rows of chunk ci the WHERE matches, into `hit` (positions); their
 * number, or -1 with l->err. */
static int matches(const Updater *u, Lane *l, int ci, uint32_t *hit)
{
    int n_rows = u->t->chunks[ci]->n_rows;
    if (u->pred == NULL) {
        for (int i = 0; i < n_rows; i++) {
            hit[i] = (uint32_t)i;
        }
        return n_rows;
    }
    if (chunk_excluded(u, ci)) {
        return 0;
    }
    bool loaded = false;
    if (st_table_scan_chunk(u->t, ci, u->narrow, u->n_narrow, &l->in_narrow, &loaded, &l->err) !=
        CM_OK) {
        return -1;
    }
    const CmVec *v = ex_expr_eval(l->pred, &l->in_narrow, &l->err);
    int n_hit = 0;
    if (v != NULL) {
        const uint8_t *yes = v->data;
        for (int i = 0; i < n_rows; i++) {
            if (yes[v->kind == CM_VEC_CONST ? 0 : i] != 0) {
                hit[n_hit++] = (uint32_t)i;
            }
        }
    }
    unpin(u->t, ci, loaded);
    return v != NULL ? n_hit : -1;
}

/* Column m: the n old values, with the new ones at the rows picked: v's
 * value at the same position, or, `packed`, v's i-th value at hit[i]. */
static void merge_column(CmVec *m, const CmVec *old, const CmVec *v, const uint32_t *hit, int n_hit,
                         int n, bool packed)
{
    size_t w = cm_type_width(m->type);
    m->kind = CM_VEC_FLAT;
    memcpy(m->data, old->data, w * (size_t)n);
    m->validity = NULL;
    if (old->validity != NULL) {
        memcpy(m->validity_buf, old->validity, sizeof m->validity_buf);
        m->validity = m->validity_buf;
    }
    for (int i = 0; i < n_hit; i++) {
        uint32_t p = hit[i], q = v->kind == CM_VEC_CONST ? 0 : packed ? (uint32_t)i : p;
        if (cm_vec_is_null(v, q)) {
            cm_vec_set_null(m, p);
            continue;
        }
        cm_vec_set_valid(m, p);
        memcpy((char *)m->data + w * p, (const char *)v->data + w * q, w);
    }
}

/* Room for one more (place, chunk) in the arrays at, fresh of n entries, cap
 * allocated; false on OOM (they are unchanged). */
static bool room_for_one(int n, int *cap, int **at, StChunk ***fresh)
{
    if (n < *cap) {
        return true;
    }
    int grown_cap = *cap ? 2 * *cap : 16;
    StChunk **f = cm_realloc(*fresh, sizeof(StChunk *) * (size_t)grown_cap);
    if (f != NULL) {
        *fresh = f;
    }
    int *a = f != NULL ? cm_realloc(*at, sizeof(int) * (size_t)grown_cap) : NULL;
    if (a == NULL) {
        return false;
    }
    *at = a;
    *cap = grown_cap;
    return true;
}

/* A DELETE's copy of chunk ci of t without its rows at places gone[0..n_gone)
 * (ascending), sealed, into *fresh: NULL when no row is left.  The chunk is
 * read into `view` (t's columns `all`).  In place and by address alike. */
static CmStatus copy_without(StTable *t, int ci, const uint32_t *gone, int n_gone, const int *all,
                             CmBatch *view, StChunk **fresh, CmErr *err)
{
    const StChunk *c = t->chunks[ci];
    uint32_t rest[CM_BATCH_CAP];
    int n_rest = 0;
    for (int i = 0, k = 0; i < c->n_rows; i++) {
        if (k < n_gone && gone[k] == (uint32_t)i) {
            k++;
        } else {
            rest[n_rest++] = (uint32_t)i;
        }
    }
    *fresh = NULL;
    if (n_rest == 0) {
        return CM_OK;
    }
    bool loaded = false;
    if (st_table_scan_chunk(t, ci, all, t->n_cols, view, &loaded, err) != CM_OK) {
        return err->code;
    }
    CmBatch rows = *view;
    rows.sel = rest;
    rows.n_rows = n_rest;
    *fresh = st_table_chunk_from(t, &rows, true, err);
    unpin(t, ci, loaded);
    return err->code;
}

/* Copies chunk ci with the new values of its rows into a fresh chunk of the
 * lane's, and counts the values of the `hit` rows in its statistics; for a
 * DELETE, without the `hit` rows (copy_without). */
static CmStatus copy_chunk(const Updater *u, Lane *l, int ci, const uint32_t *hit, int n_hit)
{
    CmErr *err = &l->err;
    if (!room_for_one(l->n_fresh, &l->cap_fresh, &l->at, &l->fresh)) {
        return oom(err);
    }
    if (u->is_delete) {
        StChunk *fresh;
        if (copy_without(u->t, ci, hit, n_hit, u->all, &l->in_wide, &fresh, err) == CM_OK) {
            l->at[l->n_fresh] = ci;
            l->fresh[l->n_fresh++] = fresh;
        }
        return err->code;
    }
    bool loaded = false;
    if (st_table_scan_chunk(u->t, ci, u->all, u->n_cols, &l->in_wide, &loaded, err) != CM_OK) {
        return err->code;
    }
    CmBatch rows = l->in_wide, picked = l->in_wide;
    rows.cols = l->cols;
    picked.sel = (uint32_t *)hit;
    picked.n_rows = n_hit;
    for (int c = 0; c < u->n_cols; c++) {
        const CmVec *v = l->set[c] != NULL ? ex_expr_eval(l->set[c], &picked, err) : NULL;
        if (l->set[c] != NULL && v == NULL) {
            break;
        }
        if (v != NULL) {
            merge_column(&l->merged[c], &l->in_wide.cols[c], v, hit, n_hit, rows.n_rows, false);
        }
        l->cols[c] = v != NULL ? l->merged[c] : l->in_wide.cols[c];
    }
    StChunk *fresh = NULL;
    if (err->code == CM_OK && st_table_check(u->t, &rows, err) == CM_OK &&
        (fresh = st_table_chunk_from(u->t, &rows, u->t->chunks[ci]->sealed, err)) != NULL) {
        for (int c = 0; c < u->n_cols; c++) {
            if (l->set[c] != NULL) {
                st_stats_add(&l->add[c], &l->merged[c], hit, n_hit);
            }
        }
        l->at[l->n_fresh] = ci;
        l->fresh[l->n_fresh++] = fresh;
    }
    unpin(u->t, ci, loaded);
    return err->code;
}

/* CmTaskFn: one run of chunks. */
static void update_task(void *arg, int task_idx, int worker_id)
{
    Updater *u = arg;
    Lane *l = &u->lanes[worker_id];
    int from = task_idx * u->chunks_per_task;
    int to =
        from + u->chunks_per_task < u->t->n_chunks ? from + u->chunks_per_task : u->t->n_chunks;
    uint32_t hit[CM_BATCH_CAP];
    for (int ci = from; ci < to && ci < atomic_load(&u->first_err); ci++) {
        int n_hit = -1;
        if (u->interrupt != NULL && atomic_load(u->interrupt)) {
            cm_err_set(&l->err, CM_CANCELLED, -1, "interrupted");
        } else {
            n_hit = matches(u, l, ci, hit);
        }
        if (n_hit < 0 || (n_hit > 0 && copy_chunk(u, l, ci, hit, n_hit) != CM_OK)) {
            l->err_chunk = ci;
            int seen = atomic_load(&u->first_err);
            while (ci < seen && !atomic_compare_exchange_weak(&u->first_err, &seen, ci)) {
            }
            return; /* a lane keeps its first error: its later chunks come after it */
        }
        l->changes += n_hit;
    }
}

/* ex_update_in_place and, with is_delete (set all NULL), ex_delete_in_place. */
static CmStatus in_place(StTable *t, const ExExpr *pred, ExExpr *const *set, bool is_delete,
                         bool rekey, CmPool *pool, const atomic_bool *interrupt, int64_t *changes,
                         CmErr *err)
{
    *changes = 0;
    Updater u = {.interrupt = interrupt, .is_delete = is_delete};
    CmArena a;
    cm_arena_init(&a, 4096);
    int n_lanes = cm_pool_size(pool);
    if (updater_init(&u, t, pred, set, n_lanes, &a, err) == CM_OK && t->n_chunks > 0) {
        int want = n_lanes * 4;
        u.chunks_per_task = (t->n_chunks + want - 1) / want;
        cm_pool_run(pool, (t->n_chunks + u.chunks_per_task - 1) / u.chunks_per_task, update_task,
                    &u);
        /* the error of the first chunk that failed */
        int first = atomic_load(&u.first_err);
        for (int i = 0; i < n_lanes && first < INT32_MAX; i++) {
            if (u.lanes[i].err.code != CM_OK && u.lanes[i].err_chunk == first) {
                *err = u.lanes[i].err;
            }
        }
    }
    int n_fresh = 0;
    for (int i = 0; err->code == CM_OK && i < n_lanes; i++) {
        n_fresh += u.lanes[i].n_fresh;
    }
    int *at = err->code == CM_OK ? cm_malloc(sizeof(int) * (size_t)(n_fresh + 1)) : NULL;
    StChunk **fresh = at != NULL ? cm_malloc(sizeof(StChunk *) * (size_t)(n_fresh + 1)) : NULL;
    /* each place's lane and entry, for gathering them in place order */
    int *from = fresh != NULL ? cm_malloc(sizeof(int) * 2 * (size_t)(t->n_chunks + 1)) : NULL;
    if (err->code == CM_OK && from == NULL) {
        oom(err);
    }
    if (err->code == CM_OK) {
        /* the lanes' chunks and statistics, gathered */
        for (int ci = 0; ci < t->n_chunks; ci++) {
            from[2 * ci] = -1;
        }
        for (int i = 0; i < n_lanes; i++) {
            for (int k = 0; k < u.lanes[i].n_fresh; k++) {
                from[2 * u.lanes[i].at[k]] = i;
                from[2 * u.lanes[i].at[k] + 1] = k;
            }
        }
        n_fresh = 0;
        for (int ci = 0; ci < t->n_chunks; ci++) {
            if (from[2 * ci] >= 0) {
                at[n_fresh] = ci;
                fresh[n_fresh++] = u.lanes[from[2 * ci]].fresh[from[2 * ci + 1]];
            }
        }
        for (int i = 0; i < n_lanes; i++) {
            Lane *l = &u.lanes[i];
            l->n_fresh = 0; /* fresh's now */
            *changes += l->changes;
            for (int c = 0; i > 0 && c < t->n_cols; c++) {
                st_stats_union(&u.lanes[0].add[c], &l->add[c]);
            }
        }
        st_table_swap_chunks(t, n_fresh, at, fresh, is_delete ? NULL : u.lanes[0].add, rekey, err);
        for (int i = 0; i < n_fresh; i++) {
            st_table_chunk_discard(fresh[i]); /* NULL once in t */
        }
    }
    if (err->code != CM_OK) {
        *changes = 0;
    }
    cm_free(from);
    cm_free(fresh);
    cm_free(at);
    updater_fini(&u);
    cm_arena_fini(&a);
    return err->code;
}

CmStatus ex_update_in_place(StTable *t, const ExExpr *pred, ExExpr *const *set, bool rekey,
                            CmPool *pool, const atomic_bool *interrupt, int64_t *changes,
                            CmErr *err)
{
    return in_place(t, pred, set, false, rekey, pool, interrupt, changes, err);
}

CmStatus ex_delete_in_place(StTable *t, const ExExpr *pred, CmPool *pool,
                            const atomic_bool *interrupt, int64_t *changes, CmErr *err)
{
    ExExpr **none = cm_calloc((size_t)t->n_cols + 1, sizeof(ExExpr *));
    if (none == NULL) {
        return oom(err);
    }
    in_place(t, pred, none, true, false, pool, interrupt, changes, err);
    cm_free(none);
    return err->code;
}

/* ---- by address: the rows a plan picked (ExChanges) ------------------------------------- */

struct ExChanges {
    StTable *t;
    bool is_delete;
    bool rekey;       /* an UPDATE of index keys (st_table_swap_chunks) */
    StTable *stage;   /* an UPDATE's new rows for the chunk `cur`, in address order */
    StTable *written; /* RETURNING's rows, or NULL (borrowed) */
    int cur;          /* the chunk the rows staged are in, or -1 */
    int64_t last;     /* the last address taken, or -1 */
    int n_off;
    uint32_t off[CM_BATCH_CAP]; /* their places in it, ascending */
    int *all;                   /* 0 .. n_cols - 1 */
    int n_in;                   /* t's columns in the plan's rows, after the address: */
    int *in_col;                /* which, in table order */
    CmBatch old, staged;        /* views of chunk `cur` and of the stage's rows */
    CmVec *merged;              /* per column in the plan: the old values with the new ones */
    CmVec *cols;                /* a copy's columns: `merged`, or views of `old` */
    StColStats *add;            /* the new values' statistics */
    int n_fresh, cap_fresh;
    int *at;
    StChunk **fresh;
    int64_t changes;
};

void ex_changes_free(ExChanges *c)
{
    if (c == NULL) {
        return;
    }
    for (int i = 0; i < c->n_fresh; i++) {
        st_table_chunk_discard(c->fresh[i]);
    }
    for (int col = 0; c->merged != NULL && col < c->t->n_cols; col++) {
        cm_vec_fini(&c->merged[col]);
    }
    cm_free(c->merged);
    cm_free(c->cols);
    cm_free(c->in_col);
    cm_batch_fini(&c->old);
    cm_batch_fini(&c->staged);
    st_table_free(c->stage);
    cm_free(c->add);
    cm_free(c->all);
    cm_free(c->at);
    cm_free(c->fresh);
    cm_free(c);
}

ExChanges *ex_changes_new(StTable *t, bool is_delete, bool rekey, const bool *in_plan,
                          StTable *written, CmErr *err)
{
    int n = t->n_cols;
    ExChanges *c = cm_calloc(1, sizeof *c);
    if (c == NULL) {
        oom(err);
        return NULL;
    }
    c->t = t;
    c->is_delete = is_delete;
    c->rekey = rekey;
    c->written = written;
    c->cur = -1;
    c->last = -1;
    c->all = cm_calloc((size_t)n + 1, sizeof(int));
    c->in_col = cm_calloc((size_t)n + 1, sizeof(int));
    c->merged = cm_calloc((size_t)n + 1, sizeof(CmVec));
    c->cols = cm_calloc((size_t)n + 1, sizeof(CmVec));
    c->add = st_stats_new_array(n);
    StColumn *in_cols = cm_calloc((size_t)n + 1, sizeof(StColumn));
    CmType *in_types = cm_calloc((size_t)n + 1, sizeof(CmType));
    if (c->all == NULL || c->in_col == NULL || c->merged == NULL || c->cols == NULL ||
        c->add == NULL || in_cols == NULL || in_types == NULL) {
        oom(err);
        goto fail;
    }
    for (int col = 0; col < n; col++) {
        c->all[col] = col;
        if (in_plan[col]) { /* the old values merged with the new: columns in the plan */
            in_cols[c->n_in] = t->cols[col];
            in_types[c->n_in] = t->types[col];
            c->in_col[c->n_in++] = col;
            if (cm_vec_init(&c->merged[col], t->types[col], err) != CM_OK) {
                goto fail;
            }
        }
    }
    if (cm_batch_init(&c->old, n, t->types, err) != CM_OK ||
        cm_batch_init(&c->staged, c->n_in, in_types, err) != CM_OK ||
        (!is_delete && (c->stage = st_table_new(t->name, c->n_in, in_cols, err)) == NULL)) {
        goto fail;
    }
    cm_free(in_cols);
    cm_free(in_types);
    return c;
fail:
    cm_free(in_cols);
    cm_free(in_types);
    ex_changes_free(c);
    return NULL;
}

/* The copy of chunk c->cur with its rows staged: without them (DELETE; none
 * when no row is left) or with their new values (UPDATE). */
static CmStatus flush(ExChanges *c, CmErr *err)
{
    if (c->cur < 0) {
        return CM_OK;
    }
    StTable *t = c->t;
    const StChunk *ch = t->chunks[c->cur];
    if (!room_for_one(c->n_fresh, &c->cap_fresh, &c->at, &c->fresh)) {
        return oom(err);
    }
    StChunk *fresh = NULL;
    bool loaded = false, is_staged = false;
    if (c->is_delete) {
        if (copy_without(t, c->cur, c->off, c->n_off, c->all, &c->old, &fresh, err) != CM_OK) {
            return err->code;
        }
    } else {
        if (st_table_scan_chunk(t, c->cur, c->all, t->n_cols, &c->old, &loaded, err) != CM_OK) {
            return err->code;
        }
        CmBatch rows = c->old;
        if (st_table_scan_chunk(c->stage, 0, c->all, c->n_in, &c->staged, NULL, err) == CM_OK) {
            is_staged = true;
            for (int col = 0, k = 0; col < t->n_cols; col++) {
                c->cols[col] = c->old.cols[col]; /* a view: not in the plan, not changed */
                if (k < c->n_in && c->in_col[k] == col) {
                    merge_column(&c->merged[col], &c->old.cols[col], &c->staged.cols[k], c->off,
                                 c->n_off, ch->n_rows, true);
                    st_stats_add(&c->add[col], &c->staged.cols[k], NULL, c->n_off);
                    c->cols[col] = c->merged[col];
                    k++;
                }
            }
            rows.cols = c->cols;
        }
        if (err->code == CM_OK && st_table_check(t, &rows, err) == CM_OK) {
            fresh = st_table_chunk_from(t, &rows, ch->sealed, err);
        }
        if (is_staged) {
            st_table_unpin_chunk(c->stage, 0);
        }
        unpin(t, c->cur, loaded);
        if (fresh == NULL) {
            return err->code;
        }
    }
    c->at[c->n_fresh] = c->cur;
    c->fresh[c->n_fresh++] = fresh;
    c->changes += c->n_off;
    c->n_off = 0;
    c->cur = -1;
    if (c->stage != NULL) {
        st_table_truncate(c->stage, 0);
    }
    return CM_OK;
}

CmStatus ex_changes_add(ExChanges *c, const CmBatch *b, CmErr *err)
{
    CmBatch view = *b;
    view.cols = b->cols + 1; /* t's columns in the plan, after the address */
    view.n_cols = c->n_in;
    uint32_t run[CM_BATCH_CAP];
    for (int i = 0; i < b->n_rows;) {
        /* a run of rows of one chunk */
        int n_run = 0;
        for (; i < b->n_rows; i++) {
            uint32_t p = cm_batch_pos(b, i);
            int64_t addr =
                ((const int64_t *)b->cols[0].data)[b->cols[0].kind == CM_VEC_CONST ? 0 : p];
            int ci = (int)(addr / CM_BATCH_CAP);
            if (addr <= c->last || ci >= c->t->n_chunks ||
                addr % CM_BATCH_CAP >= c->t->chunks[ci]->n_rows) {
                return cm_err_set(err, CM_INTERNAL, -1, "row addresses out of order for '%s'",
                                  c->t->name);
            }
            if (ci != c->cur && n_run > 0) {
                break;
            }
            if (ci != c->cur && flush(c, err) != CM_OK) {
                return err->code;
            }
            c->cur = ci;
            c->last = addr;
            c->off[c->n_off++] = (uint32_t)(addr % CM_BATCH_CAP);
            run[n_run++] = p;
        }
        CmBatch rows = view;
        rows.sel = run;
        rows.n_rows = n_run;
        if ((!c->is_delete && st_table_append(c->stage, &rows, err) != CM_OK) ||
            (c->written != NULL && st_table_append(c->written, &rows, err) != CM_OK)) {
            return err->code;
        }
    }
    return CM_OK;
}

CmStatus ex_changes_apply(ExChanges *c, int64_t *changes, CmErr *err)
{
    *changes = 0;
    if (flush(c, err) != CM_OK ||
        st_table_swap_chunks(c->t, c->n_fresh, c->at, c->fresh, c->is_delete ? NULL : c->add,
                             c->rekey, err) != CM_OK) {
        return err->code;
    }
    *changes = c->changes;
    return CM_OK;
}
