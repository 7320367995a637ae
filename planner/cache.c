/*
 * cache.c - cached intermediate results (cache.h, docs/cache.md).
 *
 * Fingerprints.  fp_node() writes a plan in pre-order, each node's own fields
 * then its inputs, so the bytes of every subtree are one contiguous range of
 * the root's bytes; it records each node's range.  Two subtrees give the same
 * rows when their ranges hold the same bytes: everything that decides a row
 * is written (kinds, types, column ids, constants with their type, kernels,
 * catalog table names with their column types), and every variable-length
 * part is preceded by its length, so no two different plans write the same
 * bytes.  Matching compares a range's hash with each entry's, then the bytes:
 * a hash collision cannot give a false match.  A scan of a table outside the
 * catalog (a system table snapshot, a WITH RECURSIVE result) makes its
 * subtree and every ancestor unmatchable, since its rows are the statement's.
 */
#include "planner/cache.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/alloc.h"
#include "common/hash.h"
#include "common/mem.h"
#include "common/thread.h"
#include "common/value.h"
#include "parser/parser.h"
#include "planner/memmode.h"
#include "planner/optimizer/estimate.h"
#include "planner/optimizer/prune.h"

typedef enum SourceKind { SRC_TABLE, SRC_VIEW, SRC_QUERY } SourceKind;
typedef enum EntryState { ST_PENDING, ST_MATERIALIZED, ST_INVALIDATED } EntryState;

struct PlCacheEntry {
    char *name;     /* owned: the name given to CACHE TABLE */
    SourceKind src; /* how to bind the plan again */
    char *src_sql;  /* owned: SRC_QUERY's SELECT text */
    PlCacheLevel level;
    bool is_lazy;
    EntryState state;
    bool has_computed; /* rows were computed once: the next computing is a recompute */
    bool is_busy;      /* being materialized: not a candidate for its own plan */
    int64_t lost_room; /* MEMORY_ONLY rows that did not fit even while computed:
                          cm_mem_storage_room() then; 0 when they fit */
    StTable *table;    /* owned: the rows (empty unless MATERIALIZED) */
    unsigned char *fp; /* owned: the plan's fingerprint bytes */
    size_t fp_len;
    uint64_t fp_hash;
    int n_deps;
    char **deps;         /* owned: tables and views whose change concerns the rows */
    uint64_t deps_stamp; /* MATERIALIZED: what the deps were when the rows were computed */
    int64_t hits, misses, recomputes, invalidations;
    PlCacheEntry *next;
};

typedef struct CacheView {
    StEntry view; /* kind VIEW: name and view_sql owned */
    struct CacheView *next;
} CacheView;

struct PlCache {
    PlCacheEntry *entries; /* oldest first: the first equal entry is used */
    CacheView *views;
    /* While an entry's plan is bound: the cache views its binding reads. */
    char **rec;
    int n_rec, cap_rec;
    bool is_recording;
};

/* ---- fingerprints ------------------------------------------------------------------- */

typedef struct FpRec {
    const PlNode *node;
    size_t start, end; /* its bytes in Fp.buf */
    int end_idx;       /* the record after its subtree's */
    bool is_ok;        /* matchable */
    uint64_t hash;
} FpRec;

typedef struct Fp {
    CmArena *arena;
    StCatalog *cat;
    unsigned char *buf; /* owned (cm_free) */
    size_t len, cap;
    FpRec *recs; /* in the arena */
    int n_recs, cap_recs;
    char **deps; /* catalog tables read, in the arena */
    int n_deps, cap_deps;
    bool is_oom;
} Fp;

static void put(Fp *f, const void *p, size_t n)
{
    if (f->is_oom) {
        return;
    }
    if (f->len + n > f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 1024;
        while (cap < f->len + n) {
            cap *= 2;
        }
        unsigned char *nb = cm_realloc(f->buf, cap);
        if (nb == NULL) {
            f->is_oom = true;
            return;
        }
        f->buf = nb;
        f->cap = cap;
    }
    memcpy(f->buf + f->len, p, n);
    f->len += n;
}

static void put_i64(Fp *f, int64_t v)
{
    put(f, &v, sizeof v);
}

static void put_str(Fp *f, const char *s)
{
    put_i64(f, s ? (int64_t)strlen(s) : -1);
    if (s != NULL) {
        put(f, s, strlen(s));
    }
}

/* Field by field: the struct has padding. */
static void put_type(Fp *f, CmType t)
{
    unsigned char b[4] = {t.id, t.precision, t.scale, t.is_char};
    put(f, b, sizeof b);
    put_i64(f, t.length);
}

static void put_ints(Fp *f, int n, const int *v)
{
    put_i64(f, n);
    for (int i = 0; i < n; i++) {
        put_i64(f, v[i]);
    }
}

static void put_value(Fp *f, const CmValue *v)
{
    put_type(f, v->type);
    put_i64(f, v->is_null);
    if (v->is_null) {
        return;
    }
    if (v->type.id == CM_T_VARCHAR) {
        put_i64(f, v->s.len);
        put(f, cm_str_data(&v->s), v->s.len);
    } else if (v->type.id == CM_T_LIST) {
        /* the text tells lists apart: strings that could be misread are quoted */
        char text[256];
        size_t n = cm_fmt_list(&v->l, cm_type_elem(v->type), text, sizeof text);
        put_i64(f, (int64_t)n);
        put(f, text, n < sizeof text ? n : sizeof text - 1);
    } else if (v->type.id == CM_T_DOUBLE) {
        put(f, &v->d, sizeof v->d);
    } else if (v->type.id == CM_T_DECIMAL128) {
        put(f, v->h, sizeof v->h); /* all 16 bytes: i is only the low half */
    } else if (v->type.id == CM_T_INTERVAL) {
        put_i64(f, v->iv.months);
        put_i64(f, v->iv.days);
        put_i64(f, v->iv.micros);
    } else {
        put_i64(f, v->i);
    }
}

/* Expressions are at most about 1000 levels deep (the binder's limit). */
static void put_expr(Fp *f, const ExExpr *e)
{
    if (e == NULL) {
        put_i64(f, -1);
        return;
    }
    put_i64(f, e->kind);
    put_type(f, e->type);
    switch (e->kind) {
    case EX_E_COLUMN:
        put_i64(f, e->col);
        break;
    case EX_E_CONST:
        put_value(f, &e->value);
        put_str(f, e->name);
        break;
    default:
        put(f, &e->kernel, sizeof e->kernel);
        put_str(f, e->name);
        put_i64(f, e->aux);
        put_i64(f, e->has_else);
        break;
    }
    put_i64(f, e->n_args);
    for (int i = 0; i < e->n_args; i++) {
        put_expr(f, e->args[i]);
    }
}

static void put_sort_keys(Fp *f, int n, const ExSortKey *k)
{
    put_i64(f, n);
    for (int i = 0; i < n; i++) {
        put_i64(f, k[i].col);
        put_i64(f, k[i].desc * 2 + k[i].nulls_first);
    }
}

static void add_dep(Fp *f, const char *name)
{
    for (int i = 0; i < f->n_deps; i++) {
        if (strcmp(f->deps[i], name) == 0) {
            return;
        }
    }
    if (f->n_deps == f->cap_deps) {
        int cap = f->cap_deps ? f->cap_deps * 2 : 8;
        char **d = cm_arena_alloc(f->arena, sizeof(char *) * (size_t)cap);
        if (d == NULL) {
            f->is_oom = true;
            return;
        }
        if (f->n_deps > 0) {
            memcpy(d, f->deps, sizeof(char *) * (size_t)f->n_deps);
        }
        f->deps = d;
        f->cap_deps = cap;
    }
    f->deps[f->n_deps++] = (char *)name;
}

/* A scanned table is matchable when it is the catalog's table of its name. */
static bool put_table(Fp *f, const PlNode *n)
{
    StEntry *e = st_catalog_find(f->cat, n->table->name);
    if (e == NULL || e->kind != ST_ENTRY_TABLE || e->table != n->table) {
        return false;
    }
    put_str(f, n->table->name);
    add_dep(f, n->table->name);
    put_ints(f, n->n_cols, n->col_ids);
    return true;
}

static void put_window(Fp *f, const ExWindowSpec *w)
{
    put_i64(f, w->fn);
    put_i64(f, w->arg);
    put_type(f, w->arg_type);
    put_type(f, w->type);
    put_ints(f, w->n_part, w->part);
    put_sort_keys(f, w->n_order, w->order);
    put_i64(f, w->rows);
    put_i64(f, w->start);
    put_i64(f, w->end);
    put_i64(f, w->start_off);
    put_i64(f, w->end_off);
}

/* The node's own fields; false when it reads rows outside the catalog. */
static bool put_fields(Fp *f, const PlNode *n)
{
    put_i64(f, n->kind);
    put_i64(f, n->n_cols);
    for (int i = 0; i < n->n_cols; i++) {
        put_type(f, n->types[i]);
    }
    switch (n->kind) {
    case PL_GET:
        return put_table(f, n);
    case PL_VALUES:
        put_i64(f, n->n_rows);
        for (int i = 0; i < n->n_rows * n->n_cols; i++) {
            put_expr(f, n->exprs[i]);
        }
        break;
    case PL_CSV:
        return false; /* the files may change under a cached result */
    case PL_SERIES:
        put_i64(f, n->series_start);
        put_i64(f, n->series_step);
        put_i64(f, (int64_t)n->series_rows);
        put_i64(f, n->series_type.id);
        put_i64(f, n->series_is_cal ? n->series_cal.months : 0);
        put_i64(f, n->series_is_cal ? n->series_cal.days : 0);
        put_i64(f, n->series_is_cal ? n->series_cal.micros : 0);
        break;
    case PL_FILTER:
        put_expr(f, n->pred);
        break;
    case PL_PROJECT:
        for (int i = 0; i < n->n_cols; i++) {
            put_expr(f, n->exprs[i]);
        }
        break;
    case PL_AGGREGATE:
        put_i64(f, n->n_keys);
        put_i64(f, n->n_aggs);
        for (int i = 0; i < n->n_aggs; i++) {
            put_i64(f, n->aggs[i].fn);
            put_i64(f, n->aggs[i].arg);
            put_type(f, n->aggs[i].arg_type);
            put_type(f, n->aggs[i].type);
            put_i64(f, n->aggs[i].distinct);
            put_sort_keys(f, n->aggs[i].n_order, n->aggs[i].order);
        }
        put_i64(f, n->empty_set_key);
        put_i64(f, n->empty_set_id);
        break;
    case PL_SORT:
        put_sort_keys(f, n->n_sort_keys, n->sort_keys);
        put_i64(f, n->limit);
        put_i64(f, n->offset);
        break;
    case PL_LIMIT:
        put_i64(f, n->limit);
        put_i64(f, n->offset);
        break;
    case PL_JOIN:
        put_i64(f, n->join_type);
        put_ints(f, n->n_join_keys, n->left_keys);
        put_ints(f, n->n_join_keys, n->right_keys);
        put_expr(f, n->residual);
        put_i64(f, (int64_t)n->join_null_eq);
        put_i64(f, n->join_mark_plain);
        break;
    case PL_UNION:
        put_i64(f, n->n_inputs);
        break;
    case PL_WINDOW:
        put_window(f, n->win);
        break;
    case PL_UNNEST:
        put_i64(f, n->unnest_col);
        break;
    case PL_EXPAND:
        put_i64(f, n->n_sets);
        for (int i = 0; i < n->n_sets; i++) {
            put_i64(f, (int64_t)n->set_masks[i]);
        }
        put_i64(f, n->n_set_keys);
        put_i64(f, n->gid_col);
        break;
    }
    return true;
}

static bool fp_node(Fp *f, const PlNode *n);

static bool fp_input(Fp *f, const PlNode *n)
{
    put_i64(f, n != NULL);
    return n == NULL || fp_node(f, n);
}

static bool fp_node(Fp *f, const PlNode *n)
{
    if (f->n_recs == f->cap_recs) {
        int cap = f->cap_recs ? f->cap_recs * 2 : 32;
        FpRec *r = cm_arena_alloc(f->arena, sizeof(FpRec) * (size_t)cap);
        if (r == NULL) {
            f->is_oom = true;
            return false;
        }
        if (f->n_recs > 0) {
            memcpy(r, f->recs, sizeof(FpRec) * (size_t)f->n_recs);
        }
        f->recs = r;
        f->cap_recs = cap;
    }
    int idx = f->n_recs++;
    size_t start = f->len;
    bool is_ok = put_fields(f, n);
    is_ok &= fp_input(f, n->child);
    is_ok &= fp_input(f, n->right);
    for (int i = 0; n->kind == PL_UNION && i < n->n_inputs; i++) {
        is_ok &= fp_node(f, n->inputs[i]);
    }
    f->recs[idx] = (FpRec){.node = n,
                           .start = start,
                           .end = f->len,
                           .end_idx = f->n_recs,
                           .is_ok = is_ok && !f->is_oom};
    return is_ok;
}

/* Fingerprints every subtree of root; false on OOM (err set). */
static bool fp_plan(Fp *f, const PlNode *root, CmErr *err)
{
    fp_node(f, root);
    if (f->is_oom) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return false;
    }
    for (int i = 0; i < f->n_recs; i++) {
        FpRec *r = &f->recs[i];
        r->hash = r->is_ok ? cm_hash_bytes(f->buf + r->start, r->end - r->start) : 0;
    }
    return true;
}

bool pl_cache_same_plan(PlCacheCtx *ctx, const PlNode *a, const PlNode *b)
{
    Fp fa = {.arena = ctx->arena, .cat = ctx->cat};
    Fp fb = {.arena = ctx->arena, .cat = ctx->cat};
    bool same = fp_node(&fa, a) && fp_node(&fb, b) && !fa.is_oom && !fb.is_oom &&
                fa.len == fb.len && memcmp(fa.buf, fb.buf, fa.len) == 0;
    cm_free(fa.buf);
    cm_free(fb.buf);
    return same;
}

/* ---- entries ------------------------------------------------------------------------ */

static const char *const LEVEL_NAMES[] = {"NONE", "MEMORY_ONLY", "MEMORY_AND_DISK", "DISK_ONLY"};

PlCache *pl_cache_new(CmErr *err)
{
    PlCache *c = cm_calloc(1, sizeof *c);
    if (c == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    return c;
}

static void entry_free(PlCacheEntry *e)
{
    cm_free(e->name);
    cm_free(e->src_sql);
    st_table_free(e->table);
    cm_free(e->fp);
    for (int i = 0; i < e->n_deps; i++) {
        cm_free(e->deps[i]);
    }
    cm_free(e->deps);
    cm_free(e);
}

static void view_free(CacheView *v)
{
    cm_free(v->view.name);
    cm_free(v->view.view_sql);
    cm_free(v);
}

static void clear_rec(PlCache *c)
{
    for (int i = 0; i < c->n_rec; i++) {
        cm_free(c->rec[i]);
    }
    c->n_rec = 0;
}

void pl_cache_free(PlCache *c)
{
    if (c == NULL) {
        return;
    }
    while (c->entries != NULL) {
        PlCacheEntry *next = c->entries->next;
        entry_free(c->entries);
        c->entries = next;
    }
    while (c->views != NULL) {
        CacheView *next = c->views->next;
        view_free(c->views);
        c->views = next;
    }
    clear_rec(c);
    cm_free(c->rec);
    cm_free(c);
}

static PlCacheEntry *find_entry(PlCache *c, const char *name)
{
    for (PlCacheEntry *e = c->entries; e != NULL; e = e->next) {
        if (strcmp(e->name, name) == 0) {
            return e;
        }
    }
    return NULL;
}

static CacheView *find_view(PlCache *c, const char *name)
{
    for (CacheView *v = c ? c->views : NULL; v != NULL; v = v->next) {
        if (strcmp(v->view.name, name) == 0) {
            return v;
        }
    }
    return NULL;
}

const StTable *pl_cache_rows(PlCache *c, const char *name)
{
    const PlCacheEntry *e = c != NULL ? find_entry(c, name) : NULL;
    return e != NULL && e->state == ST_MATERIALIZED ? e->table : NULL;
}

StEntry *pl_cache_view(PlCache *c, const char *name)
{
    CacheView *v = find_view(c, name);
    if (v == NULL) {
        return NULL;
    }
    if (c->is_recording && c->n_rec < 64) {
        if (c->n_rec == c->cap_rec) {
            int cap = c->cap_rec ? c->cap_rec * 2 : 8;
            char **r = cm_realloc(c->rec, sizeof(char *) * (size_t)cap);
            if (r == NULL) {
                return &v->view; /* the dependency is lost: a recompute reports the view */
            }
            c->rec = r;
            c->cap_rec = cap;
        }
        char *copy = cm_strdup(name);
        if (copy != NULL) {
            c->rec[c->n_rec++] = copy;
        }
    }
    return &v->view;
}

static void unlink_entry(PlCache *c, PlCacheEntry *e)
{
    for (PlCacheEntry **p = &c->entries; *p != NULL; p = &(*p)->next) {
        if (*p == e) {
            *p = e->next;
            entry_free(e);
            return;
        }
    }
}

/* ---- binding an entry's plan ----------------------------------------------------------- */

/* Parses SELECT text into a query; NULL with err. */
static const PsSelect *parse_select(PlCacheCtx *ctx, const char *sql, const char *what)
{
    size_t pos = 0;
    PsStmt *stmt = NULL;
    CmErr perr;
    cm_err_init(&perr);
    if (ps_parse_next(ctx->arena, sql, strlen(sql), &pos, &stmt, &perr) != CM_OK || stmt == NULL ||
        stmt->kind != PS_ST_SELECT) {
        if (perr.code == CM_OOM) {
            cm_err_set(ctx->err, CM_OOM, -1, "%s", perr.msg);
        } else {
            cm_err_set(ctx->err, CM_BIND, -1, "the query of '%s' no longer parses", what);
        }
        return NULL;
    }
    return stmt->select;
}

/* Binds an entry's plan, recording the cache views it reads. */
static PlNode *bind_source(PlCacheCtx *ctx, SourceKind src, const char *name, const char *sql,
                           const PsSelect *sel)
{
    PlBinder b = {
        .arena = ctx->arena, .cat = ctx->cat, .sql = sql, .cache = ctx->cache, .err = ctx->err};
    StEntry *e = src == SRC_QUERY ? NULL : st_catalog_find(ctx->cat, name);
    if (src != SRC_QUERY && e == NULL) {
        cm_err_set(ctx->err, CM_BIND, -1, "unknown table or view '%s'", name);
        return NULL;
    }
    if (src == SRC_TABLE) {
        return pl_bind_scan(&b, e->table);
    }
    if (src == SRC_VIEW) {
        b.sql = e->view_sql;
        sel = parse_select(ctx, e->view_sql, name);
    } else if (sel == NULL) {
        sel = parse_select(ctx, sql, name);
    }
    if (sel == NULL) {
        return NULL;
    }
    bool was_recording = ctx->cache->is_recording;
    ctx->cache->is_recording = true;
    PlNode *n = pl_bind_select(&b, sel);
    ctx->cache->is_recording = was_recording;
    return n;
}

static PlNode *bind_entry(PlCacheCtx *ctx, const PlCacheEntry *e)
{
    PlNode *n = bind_source(ctx, e->src, e->name, e->src_sql, NULL);
    if (n == NULL) {
        ctx->err->off = -1; /* the entry's text is not the statement's */
    }
    return n;
}

static void note_event(PlCacheCtx *ctx, const char *what, const PlCacheEntry *e, int64_t rows)
{
    if (ctx->n_events < (int)(sizeof ctx->events / sizeof ctx->events[0])) {
        /* rows < 0: none to tell */
        const char *line = rows < 0 ? cm_arena_printf(ctx->arena, "%s %s", what, e->name)
                                    : cm_arena_printf(ctx->arena, "%s %s (%lld rows)", what,
                                                      e->name, (long long)rows);
        if (line != NULL) {
            ctx->events[ctx->n_events++] = line;
        }
    }
}

/* An empty table of the plan's columns, named for the entry (EXPLAIN shows it). */
static StTable *empty_table(const char *name, const PlNode *root, CmErr *err)
{
    StColumn *cols = cm_calloc((size_t)root->n_cols + 1, sizeof *cols);
    if (cols == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    for (int i = 0; i < root->n_cols; i++) {
        cols[i].name = (char *)(root->names[i] ? root->names[i] : ""); /* any subtree's */
        cols[i].type = root->types[i];
    }
    StTable *t = st_table_new(name, root->n_cols, cols, err);
    cm_free(cols);
    return t;
}

/* A run's rows go straight to their table (PlRunFn): never a whole result in
 * memory beside it. */
static CmStatus append_rows(void *table, const CmBatch *b, CmErr *err)
{
    StTable *t = table;
    CmBatch view = *b;
    view.n_cols = t->n_cols; /* the plan's columns, in the table's order */
    return st_table_append(t, &view, err);
}

/* The state of e's dependencies in `cat`: each table's id and version, each
 * view's text.  The cache is shared by the connections of a database, and while
 * one has a transaction open the others read the committed state (a snapshot
 * of the catalog whose tables have the committed versions): rows computed on
 * one side are not the other's, though no write invalidated them in between. */
static uint64_t deps_stamp(const PlCacheEntry *e, StCatalog *cat)
{
    uint64_t h = 0;
    for (int i = 0; i < e->n_deps; i++) {
        const StEntry *d = st_catalog_find(cat, e->deps[i]);
        h = cm_hash_combine(h, (uint64_t)i);
        if (d != NULL && d->table != NULL) {
            h = cm_hash_combine(cm_hash_combine(h, d->table->id), d->table->version);
        } else if (d != NULL && d->view_sql != NULL) {
            h = cm_hash_combine(h, cm_hash_bytes(d->view_sql, strlen(d->view_sql)));
        }
    }
    return h;
}

static CmStatus materialize(PlCacheCtx *ctx, PlCacheEntry *e)
{
    e->is_busy = true;
    StTable *t = NULL;
    PlNode *root = bind_entry(ctx, e);
    if (root != NULL && (root = pl_cache_use(ctx, root)) != NULL &&
        (t = st_table_new_like(e->table, ctx->err)) != NULL) {
        st_table_set_level(t, e->level == PL_CACHE_MEMORY_ONLY ? ST_BLOCK_MEMORY_ONLY
                              : e->level == PL_CACHE_DISK_ONLY ? ST_BLOCK_DISK_ONLY
                                                               : ST_BLOCK_MEMORY_AND_DISK);
        ctx->run(ctx->run_ctx, ctx->arena, root, append_rows, t, ctx->err);
    }
    e->is_busy = false;
    if (ctx->err->code == CM_OK && t == NULL) {
        cm_err_set(ctx->err, CM_INTERNAL, -1, "cached query '%s' gave no result", e->name);
    }
    if (ctx->err->code != CM_OK) {
        st_table_free(t);
        return ctx->err->code;
    }
    st_table_free(e->table);
    e->table = t;
    e->deps_stamp = deps_stamp(e, ctx->cat);
    e->lost_room = st_table_lost(t) ? cm_mem_storage_room() : 0;
    e->recomputes += e->has_computed;
    e->has_computed = true;
    e->state = ST_MATERIALIZED;
    note_event(ctx, "write", e, t->n_rows);
    return CM_OK;
}

StTable *pl_cache_entry_rows(PlCacheCtx *ctx, PlCacheEntry *e)
{
    /* MEMORY_ONLY rows the block store dropped are computed again, as Spark
     * recomputes a lost cached partition from its lineage; but not rows that
     * did not fit even while they were computed, until storage has more room
     * than it had then: computing them only to see them dropped again cost
     * PageRank's rounds twice their work (its 240 MB of edges at a 90 MB
     * share).  The caller computes them where they stand (cached_scan). */
    bool is_lost = e->state == ST_MATERIALIZED && st_table_lost(e->table);
    if (is_lost && e->lost_room > 0 && cm_mem_storage_room() <= e->lost_room) {
        return e->table;
    }
    long long t0 = cm_now_ns();
    bool is_other_state = e->state == ST_MATERIALIZED && e->deps_stamp != deps_stamp(e, ctx->cat);
    if ((e->state != ST_MATERIALIZED || is_lost || is_other_state) &&
        materialize(ctx, e) != CM_OK) {
        return NULL;
    }
    if (is_lost) {
        /* a cache miss memory caused: the auto memory mode weighs it */
        pl_memmode_note_recompute(cm_now_ns() - t0);
    }
    return e->table;
}

/* ---- matching ----------------------------------------------------------------------------- */

static bool same_types(const StTable *t, const PlNode *n)
{
    if (t->n_cols != n->n_cols) {
        return false;
    }
    for (int i = 0; i < n->n_cols; i++) {
        CmType a = t->cols[i].type, b = n->types[i];
        if (a.id != b.id || a.precision != b.precision || a.scale != b.scale ||
            a.is_char != b.is_char || a.length != b.length) {
            return false;
        }
    }
    return true;
}

static PlCacheEntry *match(PlCache *c, const Fp *f, const FpRec *r)
{
    size_t len = r->end - r->start;
    for (PlCacheEntry *e = c->entries; e != NULL; e = e->next) {
        if (!e->is_busy && e->fp_hash == r->hash && e->fp_len == len &&
            memcmp(e->fp, f->buf + r->start, len) == 0) {
            return e;
        }
    }
    return NULL;
}

/* The scan replacing `n` by the rows of `e`; NULL when it cannot (err set or not). */
static PlNode *cached_scan(PlCacheCtx *ctx, PlCacheEntry *e, const PlNode *n)
{
    bool had_rows = e->state == ST_MATERIALIZED;
    if (ctx->is_in_place && e->level == PL_CACHE_MEMORY_ONLY) {
        e->misses += !ctx->is_plan_only;
        note_event(ctx, "dropped while read, computed in place:", e, -1);
        return NULL;
    }
    StTable *t = ctx->is_plan_only ? e->table : pl_cache_entry_rows(ctx, e);
    if (t == NULL || !same_types(t, n)) {
        return NULL;
    }
    if (!ctx->is_plan_only && st_table_lost(t)) {
        /* MEMORY_ONLY rows that storage could not keep even while they were
         * computed (larger than its share): this use computes the subtree where
         * it stands, as Spark computes a partition it could not cache; the next
         * use tries to keep them again */
        e->misses++;
        note_event(ctx, "did not fit, computed in place:", e, t->n_rows);
        return NULL;
    }
    PlNode *g = pl_node_new(ctx->arena, PL_GET, n->n_cols);
    int *ids = cm_arena_alloc(ctx->arena, sizeof(int) * (size_t)(n->n_cols + 1));
    if (g == NULL || ids == NULL) {
        cm_err_set(ctx->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n->n_cols; i++) {
        ids[i] = i;
        g->types[i] = n->types[i];
        g->names[i] = n->names[i];
    }
    g->table = t;
    g->col_ids = ids;
    g->cache_name = e->name;
    if (!ctx->is_plan_only) {
        e->hits += had_rows;
        e->misses += !had_rows;
        if (e->level == PL_CACHE_MEMORY_ONLY) {
            int cap = (int)(sizeof ctx->memory_only_read / sizeof ctx->memory_only_read[0]);
            if (ctx->n_memory_only_reads < cap) {
                ctx->memory_only_read[ctx->n_memory_only_reads] = e;
            }
            ctx->n_memory_only_reads++;
        }
        note_event(ctx, "read", e, t->n_rows);
    }
    return g;
}

static PlNode *subst(PlCacheCtx *ctx, const Fp *f, int *idx, PlNode *n)
{
    /* The walk visits the nodes in the fingerprint's order; a node reached
     * twice (a shared subtree) could break that, and then nothing more is
     * replaced rather than a node compared with another's bytes. */
    if (*idx < 0 || *idx >= f->n_recs || f->recs[*idx].node != n) {
        *idx = -1;
        return n;
    }
    const FpRec *r = &f->recs[*idx];
    PlCacheEntry *e = r->is_ok ? match(ctx->cache, f, r) : NULL;
    if (e != NULL && e->level == PL_CACHE_NONE) {
        e->misses += !ctx->is_plan_only; /* kept nothing: computed where it stands */
    } else if (e != NULL) {
        PlNode *g = cached_scan(ctx, e, n);
        if (g != NULL || ctx->err->code != CM_OK) {
            *idx = r->end_idx;
            return g;
        }
    }
    (*idx)++;
    if (n->child != NULL && (n->child = subst(ctx, f, idx, n->child)) == NULL) {
        return NULL;
    }
    if (n->right != NULL && (n->right = subst(ctx, f, idx, n->right)) == NULL) {
        return NULL;
    }
    for (int i = 0; n->kind == PL_UNION && i < n->n_inputs; i++) {
        if ((n->inputs[i] = subst(ctx, f, idx, n->inputs[i])) == NULL) {
            return NULL;
        }
    }
    return n;
}

PlNode *pl_cache_use(PlCacheCtx *ctx, PlNode *root)
{
    if (ctx->cache == NULL || ctx->cache->entries == NULL) {
        return root;
    }
    Fp f = {.arena = ctx->arena, .cat = ctx->cat};
    PlNode *out = NULL;
    if (fp_plan(&f, root, ctx->err)) {
        int idx = 0;
        out = subst(ctx, &f, &idx, root);
    }
    cm_free(f.buf);
    return out;
}

/* ---- shared subtrees of one statement ------------------------------------------------- */

/* The node's own expressions call a volatile function (random()). */
static bool node_volatile(const PlNode *n)
{
    int n_exprs = n->kind == PL_VALUES    ? n->n_rows * n->n_cols
                  : n->kind == PL_PROJECT ? n->n_cols
                                          : 0;
    for (int i = 0; i < n_exprs; i++) {
        if (ex_expr_is_volatile(n->exprs[i])) {
            return true;
        }
    }
    return ex_expr_is_volatile(n->kind == PL_FILTER ? n->pred
                               : n->kind == PL_JOIN ? n->residual
                                                    : NULL);
}

/* What pl_cache_share knows of one fingerprint record. */
typedef struct ShareRec {
    bool is_heavy;    /* the subtree has a join or an aggregate */
    bool is_volatile; /* ... or a volatile function */
    bool is_covered;  /* inside an occurrence already replaced */
    double work;      /* rows entering its operators (a GET: the rows it reads) */
    double rows;      /* its estimated output */
    int shared;       /* k + 1 when it is an occurrence of ctx->shared[k] */
} ShareRec;

static bool same_range(const Fp *f, const FpRec *a, const FpRec *b)
{
    return a->hash == b->hash && a->end - a->start == b->end - b->start &&
           memcmp(f->buf + a->start, f->buf + b->start, a->end - a->start) == 0;
}

/* Per record, from the leaves up: a record's children are the records from
 * idx + 1, each followed by the one after its subtree. */
static void share_props(const Fp *f, ShareRec *sr)
{
    for (int i = f->n_recs - 1; i >= 0; i--) {
        const FpRec *r = &f->recs[i];
        const PlNode *n = r->node;
        ShareRec *p = &sr[i];
        p->rows = pl_estimate(n);
        p->is_heavy = n->kind == PL_JOIN || n->kind == PL_AGGREGATE;
        p->is_volatile = node_volatile(n);
        p->work = n->kind == PL_GET ? p->rows : 0;
        for (int j = i + 1; j < r->end_idx; j = f->recs[j].end_idx) {
            p->is_heavy |= sr[j].is_heavy;
            p->is_volatile |= sr[j].is_volatile;
            p->work += sr[j].work + sr[j].rows; /* its own work, and its rows entering n */
        }
    }
}

/* Worth computing once, for a repeated subtree that may be shared at all
 * (share_pick has checked it is matchable, heavy, not volatile and not inside
 * one shared already): the cost rule of docs/cache.md ("Shared subtrees"). */
static bool is_worth_sharing(const ShareRec *p)
{
    return p->work > p->rows;
}

/* Whether computing once still pays when the rows do not stay in memory.  A
 * shared result larger than a quarter of memory_limit is mostly written to the
 * disk tier and read back by each use: about 1 + uses passes over its rows,
 * each costing about a row of work (encode, compress, write; read, decode).
 * Recomputing costs the subtree's work at each use but the first.  So an
 * expanding join shared twice (K-means' distance of every point to every
 * centroid: 20M rows from 2M, 400 MB at a 301 MB limit) is computed at each
 * use, where writing it took longer than the two computations. */
static bool is_past_memory(const PlNode *n, const ShareRec *p)
{
    return p->rows * pl_est_row_width(n) > (double)cm_mem_limit() / 4;
}

static bool pays_past_memory(const PlNode *n, const ShareRec *p, int uses)
{
    if (!is_past_memory(n, p)) {
        return true;
    }
    return p->work * (uses - 1) > p->rows * (1 + uses);
}

/* Notes, for EXPLAIN, a repeated subtree the cost rule computes at each use;
 * not one inside a subtree already noted (its occurrences repeat it anyway). */
static void note_declined(PlCacheCtx *ctx, const Fp *f, const ShareRec *sr, int i, int uses,
                          bool *is_quiet)
{
    if (is_quiet[i] || ctx->n_declined == PL_MAX_DECLINED) {
        return;
    }
    const FpRec *r = &f->recs[i];
    ctx->declined[ctx->n_declined++] =
        (PlDeclined){.plan = (PlNode *)r->node,
                     .uses = uses,
                     .work = sr[i].work,
                     .rows = sr[i].rows,
                     .is_past_memory = is_past_memory(r->node, &sr[i])};
    for (int j = 0; j < f->n_recs; j++) { /* each occurrence and what it holds */
        if (f->recs[j].is_ok && same_range(f, r, &f->recs[j])) {
            for (int k = j; k < f->recs[j].end_idx; k++) {
                is_quiet[k] = true;
            }
        }
    }
}

static void cover(const Fp *f, ShareRec *sr, int idx, bool is_first)
{
    int end = is_first ? idx + 1 : f->recs[idx].end_idx;
    for (int i = idx; i < end; i++) {
        sr[i].is_covered = true;
    }
}

/* Picks the shared subtrees, largest first; an occurrence's node gets
 * sr[].shared.  Repeated subtrees the cost rule leaves go to ctx->declined. */
static void share_pick(PlCacheCtx *ctx, const Fp *f, ShareRec *sr, int *order, bool *is_quiet)
{
    for (int i = 0; i < f->n_recs; i++) {
        order[i] = i;
    }
    /* Insertion sort by length, longest first; stable, so the first
     * occurrence in pre-order is the one computed. */
    for (int i = 1; i < f->n_recs; i++) {
        int k = order[i], j = i;
        size_t len = f->recs[k].end - f->recs[k].start;
        while (j > 0 && f->recs[order[j - 1]].end - f->recs[order[j - 1]].start < len) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = k;
    }
    for (int a = 0; a < f->n_recs && ctx->n_shared < PL_MAX_SHARED; a++) {
        int i = order[a];
        const FpRec *r = &f->recs[i];
        const ShareRec *p = &sr[i];
        if (!r->is_ok || !p->is_heavy || p->is_volatile || p->is_covered) {
            continue;
        }
        int uses = 0;
        for (int j = 0; j < f->n_recs; j++) {
            uses += !sr[j].is_covered && f->recs[j].is_ok && same_range(f, r, &f->recs[j]);
        }
        if (uses < 2) {
            continue;
        }
        if (!is_worth_sharing(p) || !pays_past_memory(r->node, p, uses)) {
            note_declined(ctx, f, sr, i, uses, is_quiet);
            continue;
        }
        int k = ctx->n_shared++;
        ctx->shared[k] = (PlShared){.plan = (PlNode *)f->recs[i].node, .uses = uses};
        for (int j = 0; j < f->n_recs; j++) {
            if (j != i && !sr[j].is_covered && f->recs[j].is_ok &&
                same_range(f, &f->recs[i], &f->recs[j])) {
                sr[j].shared = k + 1;
                cover(f, sr, j, false);
            }
        }
        /* The computed occurrence's inside may still share with the rest. */
        sr[i].shared = k + 1;
        cover(f, sr, i, true);
    }
}

static int shared_of(const Fp *f, const ShareRec *sr, const PlNode *n)
{
    for (int i = 0; i < f->n_recs; i++) {
        if (f->recs[i].node == n && sr[i].shared > 0) {
            return sr[i].shared;
        }
    }
    return 0;
}

static PlNode *share_replace(PlCacheCtx *ctx, const Fp *f, const ShareRec *sr, PlNode *n);

static bool share_inputs(PlCacheCtx *ctx, const Fp *f, const ShareRec *sr, PlNode *n)
{
    if (n->child != NULL && (n->child = share_replace(ctx, f, sr, n->child)) == NULL) {
        return false;
    }
    if (n->right != NULL && (n->right = share_replace(ctx, f, sr, n->right)) == NULL) {
        return false;
    }
    for (int i = 0; n->kind == PL_UNION && i < n->n_inputs; i++) {
        if ((n->inputs[i] = share_replace(ctx, f, sr, n->inputs[i])) == NULL) {
            return false;
        }
    }
    return true;
}

/* `n`, or the scan of the shared rows it is an occurrence of. */
static PlNode *share_replace(PlCacheCtx *ctx, const Fp *f, const ShareRec *sr, PlNode *n)
{
    int k = shared_of(f, sr, n);
    if (k == 0) {
        return share_inputs(ctx, f, sr, n) ? n : NULL;
    }
    const PlShared *s = &ctx->shared[k - 1];
    PlNode *g = pl_node_new(ctx->arena, PL_GET, n->n_cols);
    int *ids = cm_arena_alloc(ctx->arena, sizeof(int) * (size_t)(n->n_cols + 1));
    if (g == NULL || ids == NULL) {
        cm_err_set(ctx->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n->n_cols; i++) {
        ids[i] = i;
        g->types[i] = n->types[i];
        g->names[i] = n->names[i];
    }
    g->table = s->table;
    g->col_ids = ids;
    g->shared_id = k;
    return g;
}

/* Marks in need[k - 1] the columns of shared table #k that the scans in n
 * read. */
static void mark_shared_reads(const PlNode *n, bool **need)
{
    if (n == NULL) {
        return;
    }
    if (n->kind == PL_GET && n->shared_id > 0) {
        for (int i = 0; i < n->n_cols; i++) {
            need[n->shared_id - 1][n->col_ids[i]] = true;
        }
    }
    mark_shared_reads(n->child, need);
    mark_shared_reads(n->right, need);
    for (int i = 0; i < n->n_inputs; i++) {
        mark_shared_reads(n->inputs[i], need);
    }
}

/* Each scan of shared table #k (k from 1) under n becomes a projection of the
 * scan's columns over a scan of `table`, the narrow table that holds only
 * the columns map[] gives a place (-1: not held, read as NULL: no scan reads
 * it once pruned).  In place: a projection node is copied over the scan's.
 * A plan may reach one node by two paths (a subquery's plan used twice), so
 * a scan that already reads `table` is left alone: rewritten twice, its
 * columns would be mapped twice. */
static bool slim_scans(PlCacheCtx *ctx, PlNode *n, int k, const int *map, StTable *table)
{
    if (n == NULL) {
        return true;
    }
    if (n->kind == PL_GET && n->shared_id == k && n->table != table) {
        PlNode *g = pl_node_new(ctx->arena, PL_GET, table->n_cols);
        PlNode *p = pl_node_new(ctx->arena, PL_PROJECT, n->n_cols);
        int *ids = cm_arena_alloc(ctx->arena, sizeof(int) * (size_t)(table->n_cols + 1));
        ExExpr **exprs = cm_arena_alloc(ctx->arena, sizeof(ExExpr *) * (size_t)(n->n_cols + 1));
        if (g == NULL || p == NULL || ids == NULL || exprs == NULL) {
            return false;
        }
        for (int j = 0; j < table->n_cols; j++) {
            ids[j] = j;
            g->types[j] = table->types[j];
            g->names[j] = table->cols[j].name;
        }
        g->table = table;
        g->col_ids = ids;
        g->shared_id = k;
        for (int i = 0; i < n->n_cols; i++) {
            int at = map[n->col_ids[i]];
            CmValue null = {.type = n->types[i], .is_null = true};
            exprs[i] = at >= 0 ? ex_expr_column(ctx->arena, at, n->types[i])
                               : ex_expr_const(ctx->arena, &null);
            if (exprs[i] == NULL) {
                return false;
            }
        }
        p->types = n->types;
        p->names = n->names;
        p->exprs = exprs;
        p->child = g;
        *n = *p;
        return true;
    }
    if (!slim_scans(ctx, n->child, k, map, table) || !slim_scans(ctx, n->right, k, map, table)) {
        return false;
    }
    for (int i = 0; i < n->n_inputs; i++) {
        if (!slim_scans(ctx, n->inputs[i], k, map, table)) {
            return false;
        }
    }
    return true;
}

/* Shared plan #k+1 computing only the columns need[] marks, into a table of
 * only those (at least one: a table needs a column to count its rows), and
 * every scan of it under root and the shared plans from `first` reading that
 * table (slim_scans).  A column no scan reads used to be a NULL constant in
 * a table as wide as the plan, one NULL per row and column to append, count
 * and store (TPC-DS q01 on some plans: a shared join of 50 columns, 3 of them
 * read).  false with ctx->err set. */
static bool share_keep(PlCacheCtx *ctx, PlNode *root, int first, int k, const bool *need)
{
    PlShared *s = &ctx->shared[k];
    PlNode *plan = s->plan;
    int n_need = 0;
    int *map = cm_arena_alloc(ctx->arena, sizeof(int) * (size_t)(plan->n_cols + 1));
    if (map == NULL) {
        cm_err_set(ctx->err, CM_OOM, -1, "out of memory");
        return false;
    }
    for (int i = 0; i < plan->n_cols; i++) {
        map[i] = need[i] || (i == 0 && !memchr(need, true, (size_t)plan->n_cols)) ? n_need++ : -1;
    }
    if (n_need == plan->n_cols) {
        return true;
    }
    PlNode *proj = pl_node_new(ctx->arena, PL_PROJECT, n_need);
    ExExpr **exprs = cm_arena_alloc(ctx->arena, sizeof(ExExpr *) * (size_t)(n_need + 1));
    if (proj == NULL || exprs == NULL) {
        cm_err_set(ctx->err, CM_OOM, -1, "out of memory");
        return false;
    }
    for (int i = 0; i < plan->n_cols; i++) {
        if (map[i] >= 0) {
            proj->types[map[i]] = plan->types[i];
            proj->names[map[i]] = plan->names[i];
            if ((exprs[map[i]] = ex_expr_column(ctx->arena, i, plan->types[i])) == NULL) {
                cm_err_set(ctx->err, CM_OOM, -1, "out of memory");
                return false;
            }
        }
    }
    proj->exprs = exprs;
    proj->child = plan;
    StTable *table = empty_table(s->table->name, proj, ctx->err);
    if (table == NULL) {
        return false;
    }
    st_table_set_level(table, ST_BLOCK_MEMORY_AND_DISK);
    st_table_free(s->table);
    s->table = table;
    s->plan = proj;
    for (int j = first - 1; j < ctx->n_shared; j++) {
        if (!slim_scans(ctx, j < first ? root : ctx->shared[j].plan, k + 1, map, table)) {
            cm_err_set(ctx->err, CM_OOM, -1, "out of memory");
            return false;
        }
    }
    return true;
}

/* The shared plans [first, n_shared) computing only the columns that some
 * scan of them reads once root and the shared plans are pruned (pl_prune,
 * which the physical plan applies anyway): the others become NULL constants,
 * so that a shared join reads and carries only what its uses need, not every
 * column of its tables (TPC-H q21: lineitem's 16 columns for 3 read).  A plan
 * nested in another comes after it (pl_cache_share picks the largest first),
 * so what a plan needs is known before it is pruned. */
static bool share_narrow(PlCacheCtx *ctx, PlNode *root, int first)
{
    bool *need[PL_MAX_SHARED] = {0};
    for (int k = first; k < ctx->n_shared; k++) {
        size_t n = (size_t)ctx->shared[k].plan->n_cols + 1;
        if ((need[k] = cm_arena_zalloc(ctx->arena, sizeof(bool) * n)) == NULL) {
            cm_err_set(ctx->err, CM_OOM, -1, "out of memory");
            return false;
        }
    }
    for (int k = first - 1; k < ctx->n_shared; k++) {
        if (k >= first && !share_keep(ctx, root, first, k, need[k])) {
            return false;
        }
        PlNode *p = pl_prune(ctx->arena, k < first ? root : ctx->shared[k].plan, ctx->err);
        if (p == NULL) {
            return false;
        }
        mark_shared_reads(p, need);
    }
    return true;
}

/* Runs shared[k]'s plan into its table. */
static CmStatus share_compute(PlCacheCtx *ctx, PlShared *s)
{
    return ctx->run(ctx->run_ctx, ctx->arena, s->plan, append_rows, s->table, ctx->err);
}

PlNode *pl_cache_share(PlCacheCtx *ctx, PlNode *root)
{
    if (!ctx->is_reusing || root == NULL) {
        return root;
    }
    int first = ctx->n_shared;
    Fp f = {.arena = ctx->arena, .cat = ctx->cat};
    PlNode *out = NULL;
    if (!fp_plan(&f, root, ctx->err)) {
        goto done;
    }
    ShareRec *sr = cm_arena_alloc(ctx->arena, sizeof(ShareRec) * (size_t)f.n_recs);
    int *order = cm_arena_alloc(ctx->arena, sizeof(int) * (size_t)f.n_recs);
    bool *is_quiet = cm_arena_zalloc(ctx->arena, sizeof(bool) * (size_t)f.n_recs);
    if (sr == NULL || order == NULL || is_quiet == NULL) {
        cm_err_set(ctx->err, CM_OOM, -1, "out of memory");
        goto done;
    }
    memset(sr, 0, sizeof(ShareRec) * (size_t)f.n_recs);
    share_props(&f, sr);
    share_pick(ctx, &f, sr, order, is_quiet);
    for (int k = first; k < ctx->n_shared; k++) {
        char name[16];
        snprintf(name, sizeof name, "#%d", k + 1);
        if ((ctx->shared[k].table = empty_table(name, ctx->shared[k].plan, ctx->err)) == NULL) {
            goto done;
        }
        st_table_set_level(ctx->shared[k].table, ST_BLOCK_MEMORY_AND_DISK);
    }
    /* Every plan's occurrences of the others become scans, then the plans run
     * smallest first: a later pick is never larger, so one nested in another
     * is computed before it. */
    for (int k = first; k < ctx->n_shared; k++) {
        if (!share_inputs(ctx, &f, sr, ctx->shared[k].plan)) {
            goto done;
        }
    }
    if ((out = share_replace(ctx, &f, sr, root)) == NULL ||
        (ctx->n_shared > first && !share_narrow(ctx, out, first))) {
        out = NULL;
        goto done;
    }
    for (int k = ctx->n_shared - 1; k >= first && !ctx->is_plan_only; k--) {
        if (share_compute(ctx, &ctx->shared[k]) != CM_OK) {
            out = NULL;
            goto done;
        }
        if (ctx->n_events < (int)(sizeof ctx->events / sizeof ctx->events[0])) {
            const char *line = cm_arena_printf(
                ctx->arena, "shared #%d computed once (%lld rows), used %d times", k + 1,
                (long long)ctx->shared[k].table->n_rows, ctx->shared[k].uses);
            if (line != NULL) {
                ctx->events[ctx->n_events++] = line;
            }
        }
    }
done:
    cm_free(f.buf);
    return out;
}

void pl_cache_ctx_fini(PlCacheCtx *ctx)
{
    for (int k = 0; k < ctx->n_shared; k++) {
        st_table_free(ctx->shared[k].table);
        ctx->shared[k].table = NULL;
    }
    ctx->n_shared = 0;
}

bool pl_cache_ctx_lost_rows(const PlCacheCtx *ctx)
{
    if (ctx->n_memory_only_reads == 0 || ctx->is_in_place || ctx->cache == NULL) {
        return false;
    }
    /* the entries it read (all MEMORY_ONLY ones when it read more than are kept) */
    int n = (int)(sizeof ctx->memory_only_read / sizeof ctx->memory_only_read[0]);
    for (const PlCacheEntry *e = ctx->cache->entries; e != NULL; e = e->next) {
        bool is_read = ctx->n_memory_only_reads > n;
        for (int i = 0; i < ctx->n_memory_only_reads && i < n; i++) {
            is_read = is_read || ctx->memory_only_read[i] == e;
        }
        if (is_read && e->level == PL_CACHE_MEMORY_ONLY && e->state == ST_MATERIALIZED &&
            st_table_lost(e->table)) {
            return true;
        }
    }
    return false;
}

/* ---- statements ----------------------------------------------------------------------- */

/* The text of a key or value: a string literal, or a name. */
static const char *option_text(const PsExpr *x)
{
    return x->kind == PS_EX_STRING ? x->str : x->name;
}

static CmStatus read_options(PlCacheCtx *ctx, const PsStmt *a, PlCacheLevel *level)
{
    *level = PL_CACHE_MEMORY_AND_DISK;
    for (int i = 0; a->options != NULL && i + 1 < a->options->n; i += 2) {
        const PsExpr *k = a->options->items[i], *v = a->options->items[i + 1];
        if (strcasecmp(option_text(k), "storagelevel") != 0) {
            return cm_err_set(ctx->err, CM_BIND, k->src_off,
                              "unknown CACHE TABLE option '%s' (the one option is storageLevel)",
                              option_text(k));
        }
        int found = -1;
        for (int l = 0; l < 4 && found < 0; l++) {
            found = strcasecmp(v->str, LEVEL_NAMES[l]) == 0 ? l : -1;
        }
        if (found < 0) {
            return cm_err_set(ctx->err, CM_BIND, v->src_off,
                              "unknown storage level '%s': use NONE, MEMORY_ONLY, "
                              "MEMORY_AND_DISK or DISK_ONLY",
                              v->str);
        }
        *level = (PlCacheLevel)found;
    }
    return CM_OK;
}

static char **copy_names(char **from, int n)
{
    char **to = cm_calloc((size_t)n + 1, sizeof(char *));
    for (int i = 0; to != NULL && i < n; i++) {
        if ((to[i] = cm_strdup(from[i])) == NULL) {
            for (int k = 0; k < i; k++) {
                cm_free(to[k]);
            }
            cm_free(to);
            return NULL;
        }
    }
    return to;
}

/* Fingerprint, dependencies and empty table of a new entry from its bound plan. */
static CmStatus fill_entry(PlCacheCtx *ctx, PlCacheEntry *e, const PlNode *root)
{
    Fp f = {.arena = ctx->arena, .cat = ctx->cat};
    for (int i = 0; i < root->n_cols; i++) {
        if (root->types[i].id == CM_T_NULL) {
            cm_free(f.buf);
            return cm_err_set(ctx->err, CM_TYPE, -1,
                              "cannot cache '%s': column '%s' has no type (cast its NULL)", e->name,
                              root->names[i]);
        }
    }
    if (fp_plan(&f, root, ctx->err) && !f.recs[0].is_ok) {
        cm_err_set(ctx->err, CM_BIND, -1,
                   "cannot cache '%s': its query reads a system table or a WITH RECURSIVE "
                   "result",
                   e->name);
    }
    for (int i = 0; i < ctx->cache->n_rec && ctx->err->code == CM_OK; i++) {
        add_dep(&f, ctx->cache->rec[i]);
    }
    if (e->src != SRC_QUERY && ctx->err->code == CM_OK) {
        add_dep(&f, e->name);
    }
    if (ctx->err->code == CM_OK && !f.is_oom) {
        e->fp = f.buf;
        f.buf = NULL;
        e->fp_len = f.recs[0].end;
        e->fp_hash = f.recs[0].hash;
        if ((e->deps = copy_names(f.deps, f.n_deps)) != NULL) {
            e->n_deps = f.n_deps;
            e->table = empty_table(e->name, root, ctx->err);
        }
    }
    cm_free(f.buf);
    if (ctx->err->code == CM_OK && (f.is_oom || e->deps == NULL)) {
        cm_err_set(ctx->err, CM_OOM, -1, "out of memory");
    }
    return ctx->err->code;
}

/* Spark's CacheTableAsSelect: a temporary view of the query, which must be new. */
static CmStatus add_view(PlCacheCtx *ctx, const char *name, const char *select_sql)
{
    CacheView *v = cm_calloc(1, sizeof *v);
    if (v == NULL || (v->view.name = cm_strdup(name)) == NULL ||
        (v->view.view_sql = cm_strdup(select_sql)) == NULL) {
        if (v != NULL) {
            view_free(v);
        }
        return cm_err_set(ctx->err, CM_OOM, -1, "out of memory");
    }
    v->view.kind = ST_ENTRY_VIEW;
    v->next = ctx->cache->views;
    ctx->cache->views = v;
    return CM_OK;
}

/* Removes and frees the temporary view `name`, if there is one. */
static void remove_view(PlCache *c, const char *name)
{
    for (CacheView **p = &c->views; *p != NULL; p = &(*p)->next) {
        if (strcmp((*p)->view.name, name) == 0) {
            CacheView *v = *p;
            *p = v->next;
            view_free(v);
            return;
        }
    }
}

static CmStatus cache_stmt(PlCacheCtx *ctx, const PsStmt *a, const char *sql)
{
    PlCache *c = ctx->cache;
    PlCacheLevel level;
    if (read_options(ctx, a, &level) != CM_OK) {
        return ctx->err->code;
    }
    StEntry *cat_entry = st_catalog_find(ctx->cat, a->name);
    CacheView *view = find_view(c, a->name);
    if (a->select != NULL && (cat_entry != NULL || view != NULL)) {
        return cm_err_set(ctx->err, CM_BIND, a->name_off,
                          "cannot create the temporary view '%s': a %s of that name exists",
                          a->name, view != NULL ? "temporary view" : "table or view");
    }
    PlCacheEntry *e = find_entry(c, a->name);
    if (e != NULL) {
        /* Spark: caching what is cached already keeps the entry as it is. */
        return a->is_lazy || e->level == PL_CACHE_NONE || pl_cache_entry_rows(ctx, e) != NULL
                   ? CM_OK
                   : ctx->err->code;
    }
    if (a->select == NULL && view == NULL &&
        (cat_entry == NULL || cat_entry->kind == ST_ENTRY_INDEX)) {
        return cm_err_set(ctx->err, CM_BIND, a->name_off, "unknown table or view '%s'", a->name);
    }
    if ((e = cm_calloc(1, sizeof *e)) == NULL || (e->name = cm_strdup(a->name)) == NULL) {
        cm_free(e);
        return cm_err_set(ctx->err, CM_OOM, -1, "out of memory");
    }
    e->level = level;
    e->is_lazy = a->is_lazy;
    e->src = view != NULL || a->select != NULL   ? SRC_QUERY
             : cat_entry->kind == ST_ENTRY_TABLE ? SRC_TABLE
                                                 : SRC_VIEW;
    const char *text = a->select != NULL ? cm_arena_strndup(ctx->arena, sql + a->select->src_off,
                                                            (size_t)a->select->src_len)
                       : view != NULL    ? view->view.view_sql
                                         : NULL;
    if (e->src == SRC_QUERY && (text == NULL || (e->src_sql = cm_strdup(text)) == NULL)) {
        entry_free(e);
        return cm_err_set(ctx->err, CM_OOM, -1, "out of memory");
    }
    clear_rec(c);
    PlNode *root = bind_source(ctx, e->src, e->name, a->select ? sql : e->src_sql, a->select);
    if (root == NULL || fill_entry(ctx, e, root) != CM_OK ||
        (a->select != NULL && add_view(ctx, a->name, e->src_sql) != CM_OK)) {
        clear_rec(c);
        entry_free(e);
        return ctx->err->code;
    }
    clear_rec(c);
    PlCacheEntry **tail = &c->entries;
    while (*tail != NULL) {
        tail = &(*tail)->next;
    }
    *tail = e;
    /* A failed statement leaves nothing behind: when computing the rows fails
     * (out of memory, an error in the query), the entry and the temporary view
     * of CACHE TABLE AS go again.  Spark would keep the view it made first;
     * here a statement is all or nothing, and the same CACHE TABLE can run
     * again. */
    if (!e->is_lazy && e->level != PL_CACHE_NONE && materialize(ctx, e) != CM_OK) {
        unlink_entry(c, e);
        if (a->select != NULL) {
            remove_view(c, a->name);
        }
    }
    return ctx->err->code;
}

CmStatus pl_cache_exec(PlCacheCtx *ctx, const PsStmt *a, const char *sql)
{
    PlCache *c = ctx->cache;
    if (a->kind == PS_ST_CACHE) {
        return cache_stmt(ctx, a, sql);
    }
    if (a->kind == PS_ST_CLEAR_CACHE) {
        /* Spark: CLEAR CACHE drops the cached data; temporary views stay. */
        while (c->entries != NULL) {
            unlink_entry(c, c->entries);
        }
        return CM_OK;
    }
    /* UNCACHE: the entry goes; a temporary view of CACHE TABLE AS stays (Spark). */
    PlCacheEntry *e = find_entry(c, a->name);
    if (e != NULL) {
        unlink_entry(c, e);
        return CM_OK;
    }
    if (a->if_exists || find_view(c, a->name) != NULL || st_catalog_find(ctx->cat, a->name)) {
        return CM_OK;
    }
    return cm_err_set(ctx->err, CM_BIND, a->name_off, "unknown table or view '%s'", a->name);
}

/* ---- writes and drops ------------------------------------------------------------------ */

static bool reads(const PlCacheEntry *e, const char *name)
{
    for (int i = 0; i < e->n_deps; i++) {
        if (strcmp(e->deps[i], name) == 0) {
            return true;
        }
    }
    return false;
}

/* Drops an entry's rows: recomputed on next use. */
static void drop_rows(PlCacheEntry *e)
{
    e->invalidations++;
    if (e->state == ST_MATERIALIZED) {
        CmErr err;
        cm_err_init(&err);
        StTable *t = st_table_new_like(e->table, &err);
        if (t == NULL) { /* keeps the old table's schema for EXPLAIN: rows are not read */
            st_table_truncate(e->table, 0);
        } else {
            st_table_free(e->table);
            e->table = t;
        }
        e->state = ST_INVALIDATED;
    }
}

/* Drops the rows of the entries reading `name`, or the entries themselves. */
static void invalidate(PlCache *c, const char *name, bool is_dropped)
{
    for (PlCacheEntry *e = c->entries, *next; e != NULL; e = next) {
        next = e->next;
        if (!reads(e, name)) {
            continue;
        }
        if (is_dropped) {
            unlink_entry(c, e);
            continue;
        }
        drop_rows(e);
    }
}

CmStatus pl_cache_before(PlCache *c, StCatalog *cat, const PsStmt *a, bool *is_done, CmErr *err)
{
    *is_done = false;
    const char *target = a->kind == PS_ST_INSERT || a->kind == PS_ST_UPDATE ||
                                 a->kind == PS_ST_DELETE || (a->kind == PS_ST_COPY && !a->is_to)
                             ? a->table
                             : NULL;
    if (target != NULL && a->schema.schema == NULL && st_catalog_find(cat, target) == NULL &&
        find_view(c, target) != NULL) {
        return cm_err_set(err, CM_BIND, a->src_off,
                          "cannot write to '%s': it is a temporary view (CACHE TABLE AS)", target);
    }
    bool is_create = a->kind == PS_ST_CREATE_TABLE || a->kind == PS_ST_CREATE_VIEW ||
                     a->kind == PS_ST_CREATE_INDEX;
    if (is_create && find_view(c, a->name) != NULL && !a->if_not_exists) {
        return cm_err_set(err, CM_BIND, a->src_off,
                          "table or view '%s' already exists (a temporary view)", a->name);
    }
    *is_done = is_create && find_view(c, a->name) != NULL;
    CacheView *v = a->kind == PS_ST_DROP && strcmp(a->object, "index") != 0 &&
                           a->schema.schema == NULL && st_catalog_find(cat, a->name) == NULL
                       ? find_view(c, a->name)
                       : NULL;
    if (v != NULL) {
        /* Spark: dropping the temporary view uncaches it and what reads it. */
        PlCacheEntry *e = find_entry(c, a->name);
        if (e != NULL) {
            unlink_entry(c, e);
        }
        invalidate(c, a->name, true);
        remove_view(c, a->name);
        *is_done = true;
    }
    return CM_OK;
}

void pl_cache_invalidate(PlCache *c, const char *name, bool is_dropped)
{
    invalidate(c, name, is_dropped);
}

void pl_cache_invalidate_all(PlCache *c)
{
    for (PlCacheEntry *e = c->entries; e != NULL; e = e->next) {
        drop_rows(e);
    }
}

void pl_cache_after(PlCache *c, const PsStmt *a)
{
    switch (a->kind) {
    case PS_ST_INSERT:
    case PS_ST_UPDATE:
    case PS_ST_DELETE:
        invalidate(c, a->table, false);
        break;
    case PS_ST_COPY:
        if (!a->is_to) {
            invalidate(c, a->table, false);
        }
        break;
    case PS_ST_DROP:
        if (strcmp(a->object, "index") != 0) {
            invalidate(c, a->name, true);
        }
        break;
    case PS_ST_ALTER:
        invalidate(c, a->table, true);
        break;
    case PS_ST_CREATE_TABLE:
    case PS_ST_CREATE_VIEW:
        if (a->or_replace) {
            invalidate(c, a->name, true);
        }
        break;
    default:
        break;
    }
}

/* ---- sluice_cache --------------------------------------------------------------------- */

static const char *const STATE_NAMES[] = {"pending", "materialized", "invalidated"};

/* One row: name, level, lazy, state, then rows, memory_bytes, disk_bytes,
 * hits, misses, recomputes, invalidations. */
static CmStatus put_row(StTable *t, CmBatch *b, const char *const text[3], bool is_lazy,
                        const int64_t nums[7], CmErr *err)
{
    uint32_t i = (uint32_t)b->n_rows;
    int text_col[3] = {0, 1, 3};
    for (int k = 0; k < 3; k++) {
        const char *copy = cm_arena_strdup(&b->heap, text[k]);
        if (copy == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory");
        }
        ((CmStr *)b->cols[text_col[k]].data)[i] = cm_str_make(copy, (uint32_t)strlen(copy));
    }
    ((uint8_t *)b->cols[2].data)[i] = is_lazy;
    for (int k = 0; k < 7; k++) {
        ((int64_t *)b->cols[4 + k].data)[i] = nums[k];
    }
    if (++b->n_rows == CM_BATCH_CAP) {
        st_table_append(t, b, err);
        cm_batch_reset(b);
    }
    return err->code;
}

static CmStatus put_entry(StTable *t, CmBatch *b, const PlCacheEntry *e, CmErr *err)
{
    const char *text[3] = {e->name, LEVEL_NAMES[e->level], STATE_NAMES[e->state]};
    bool has_rows = e->state == ST_MATERIALIZED;
    int64_t nums[7] = {has_rows ? e->table->n_rows : 0,
                       has_rows ? e->table->mem.held : 0,
                       has_rows ? st_table_disk_bytes(e->table) : 0,
                       e->hits,
                       e->misses,
                       e->recomputes,
                       e->invalidations};
    return put_row(t, b, text, e->is_lazy, nums, err);
}

/* A partitioned form kept across statements (planner/keep.h): on disk only. */
static CmStatus put_kept(StTable *t, CmBatch *b, const PlKeepInfo *k, CmErr *err)
{
    const char *text[3] = {k->name, LEVEL_NAMES[PL_CACHE_DISK_ONLY], "partitioned"};
    int64_t nums[7] = {k->rows, 0, k->disk_bytes, k->hits, 0, 0, 0};
    return put_row(t, b, text, false, nums, err);
}

StTable *pl_cache_snapshot(const PlCache *c, const PlKeep *keep, const char *name, CmErr *err)
{
    enum { N_COLS = 11 };
    static const char *const names[N_COLS] = {"name",   "level",        "lazy",         "state",
                                              "rows",   "memory_bytes", "disk_bytes",   "hits",
                                              "misses", "recomputes",   "invalidations"};
    StColumn cols[N_COLS];
    CmType types[N_COLS];
    memset(cols, 0, sizeof cols);
    for (int k = 0; k < N_COLS; k++) {
        types[k] = k == 0 || k == 1 || k == 3 ? cm_type_varchar(-1, false)
                   : k == 2                   ? cm_type_make(CM_T_BOOL)
                                              : cm_type_make(CM_T_INT64);
        cols[k].name = (char *)names[k];
        cols[k].type = types[k];
    }
    CmBatch b;
    StTable *t = st_table_new(name, N_COLS, cols, err);
    if (t == NULL || cm_batch_init(&b, N_COLS, types, err) != CM_OK) {
        st_table_free(t);
        return NULL;
    }
    for (const PlCacheEntry *e = c ? c->entries : NULL; e != NULL && err->code == CM_OK;
         e = e->next) {
        put_entry(t, &b, e, err);
    }
    PlKeepInfo kept[PL_KEEP_MAX];
    int n_kept = pl_keep_list(keep, kept, PL_KEEP_MAX);
    for (int i = 0; i < n_kept && err->code == CM_OK; i++) {
        put_kept(t, &b, &kept[i], err);
    }
    if (err->code == CM_OK && b.n_rows > 0) {
        st_table_append(t, &b, err);
    }
    cm_batch_fini(&b);
    if (err->code != CM_OK) {
        st_table_free(t);
        return NULL;
    }
    return t;
}
