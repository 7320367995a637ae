/*
 * system.c - system tables (system.h).
 */
#include "planner/system.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/mem.h"
#include "planner/cache.h"
#include "planner/memmode.h"
#include "shuffle/spill.h"
#include "storage/blocks.h"
#include "storage/catalog.h"

bool pl_system_table_exists(const char *name)
{
    return strcasecmp(name, "sluice_memory") == 0 || strcasecmp(name, "sluice_cache") == 0 ||
           strcasecmp(name, "sluice_column_stats") == 0 ||
           strcasecmp(name, "sluice_settings") == 0;
}

typedef struct Rows {
    StTable *t;
    CmBatch b;
    CmErr *err;
} Rows;

static void add_row(Rows *r, const char *pool, const char *what, int64_t bytes, int64_t peak)
{
    if (r->err->code != CM_OK) {
        return;
    }
    uint32_t i = (uint32_t)r->b.n_rows;
    const char *pool_copy = cm_arena_strdup(&r->b.heap, pool);
    const char *what_copy = cm_arena_strdup(&r->b.heap, what);
    if (pool_copy == NULL || what_copy == NULL) {
        cm_err_set(r->err, CM_OOM, -1, "out of memory");
        return;
    }
    ((CmStr *)r->b.cols[0].data)[i] = cm_str_make(pool_copy, (uint32_t)strlen(pool_copy));
    ((CmStr *)r->b.cols[1].data)[i] = cm_str_make(what_copy, (uint32_t)strlen(what_copy));
    ((int64_t *)r->b.cols[2].data)[i] = bytes;
    ((int64_t *)r->b.cols[3].data)[i] = peak;
    if (++r->b.n_rows == CM_BATCH_CAP) {
        st_table_append(r->t, &r->b, r->err);
        cm_batch_reset(&r->b);
    }
}

/* Consumers are copied out under the manager's lock, then added as rows. */
typedef struct Holder {
    char pool[16];
    char what[48];
    int64_t held, peak;
} Holder;

typedef struct Holders {
    Holder list[256];
    int n;
} Holders;

static void note_holder(void *ctx, const CmMemRes *res)
{
    Holders *h = ctx;
    if (h->n < (int)(sizeof h->list / sizeof h->list[0])) {
        Holder *x = &h->list[h->n++];
        strncpy(x->pool, cm_mem_pool_name(res->pool), sizeof x->pool - 1);
        x->pool[sizeof x->pool - 1] = '\0';
        strncpy(x->what, res->what, sizeof x->what - 1);
        x->what[sizeof x->what - 1] = '\0';
        x->held = res->held;
        x->peak = res->peak;
    }
}

/* ---- sluice_column_stats ------------------------------------------------------------- */

enum { CS_TABLE, CS_COLUMN, CS_ROWS, CS_NULLS, CS_DISTINCT, CS_MIN, CS_MAX, CS_STALE, CS_N };

static void put_str(CmBatch *b, int col, uint32_t row, const char *text, CmErr *err)
{
    const char *copy = cm_arena_strdup(&b->heap, text);
    if (copy == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return;
    }
    ((CmStr *)b->cols[col].data)[row] = cm_str_make(copy, (uint32_t)strlen(copy));
}

/* One row per column of every table: what the planner's estimates read. */
static StTable *column_stats(const char *name, StCatalog *cat, CmErr *err)
{
    StColumn cols[CS_N] = {
        {.name = "table_name", .type = cm_type_varchar(-1, false)},
        {.name = "column_name", .type = cm_type_varchar(-1, false)},
        {.name = "row_count", .type = cm_type_make(CM_T_INT64)},
        {.name = "null_count", .type = cm_type_make(CM_T_INT64)},
        {.name = "distinct_count", .type = cm_type_make(CM_T_INT64)},
        {.name = "min_value", .type = cm_type_make(CM_T_DOUBLE)},
        {.name = "max_value", .type = cm_type_make(CM_T_DOUBLE)},
        {.name = "stale", .type = cm_type_make(CM_T_BOOL)},
    };
    CmType types[CS_N];
    for (int i = 0; i < CS_N; i++) {
        types[i] = cols[i].type;
    }
    CmBatch b;
    StTable *t = st_table_new(name, CS_N, cols, err);
    if (t == NULL || cm_batch_init(&b, CS_N, types, err) != CM_OK) {
        st_table_free(t);
        return NULL;
    }
    for (int i = 0; cat != NULL && i < st_catalog_count(cat) && err->code == CM_OK; i++) {
        const StEntry *e = st_catalog_entry(cat, i);
        for (int c = 0; e->kind == ST_ENTRY_TABLE && c < e->table->n_cols; c++) {
            const StTable *src = e->table;
            StColStats *cs = &src->stats[c];
            uint32_t row = (uint32_t)b.n_rows;
            put_str(&b, CS_TABLE, row, src->name, err);
            put_str(&b, CS_COLUMN, row, src->cols[c].name, err);
            ((int64_t *)b.cols[CS_ROWS].data)[row] = src->n_rows;
            ((int64_t *)b.cols[CS_NULLS].data)[row] = cs->n_nulls;
            ((int64_t *)b.cols[CS_DISTINCT].data)[row] = (int64_t)llround(st_stats_ndv(cs));
            ((double *)b.cols[CS_MIN].data)[row] = cs->min;
            ((double *)b.cols[CS_MAX].data)[row] = cs->max;
            if (!cs->has_range) {
                cm_vec_set_null(&b.cols[CS_MIN], row);
                cm_vec_set_null(&b.cols[CS_MAX], row);
            }
            ((uint8_t *)b.cols[CS_STALE].data)[row] = src->stats_stale;
            if (++b.n_rows == CM_BATCH_CAP && err->code == CM_OK) {
                st_table_append(t, &b, err);
                cm_batch_reset(&b);
            }
        }
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

/* sluice_settings: (name, value) of every setting. */
static StTable *settings_table(const char *name, const CmConfig *cfg, CmErr *err)
{
    if (cfg == NULL) {
        cm_err_set(err, CM_BIND, -1, "system table '%s' cannot be read here", name);
        return NULL;
    }
    StColumn cols[2] = {
        {.name = "name", .type = cm_type_varchar(-1, false)},
        {.name = "value", .type = cm_type_varchar(-1, false)},
    };
    CmType types[2] = {cols[0].type, cols[1].type};
    CmBatch b;
    StTable *t = st_table_new(name, 2, cols, err);
    if (t == NULL || cm_batch_init(&b, 2, types, err) != CM_OK) {
        st_table_free(t);
        return NULL;
    }
    for (int i = 0; cm_config_name(i) != NULL && err->code == CM_OK; i++) {
        char value[256];
        cm_config_get(cfg, cm_config_name(i), value, (int)sizeof value);
        const char *n = cm_arena_strdup(&b.heap, cm_config_name(i));
        const char *v = cm_arena_strdup(&b.heap, value);
        if (n == NULL || v == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory");
            break;
        }
        ((CmStr *)b.cols[0].data)[b.n_rows] = cm_str_make(n, (uint32_t)strlen(n));
        ((CmStr *)b.cols[1].data)[b.n_rows] = cm_str_make(v, (uint32_t)strlen(v));
        if (++b.n_rows == CM_BATCH_CAP) {
            st_table_append(t, &b, err);
            cm_batch_reset(&b);
        }
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

/* The rows of the memory mode: each pool's share, and the auto mode's last move. */
static void add_mode_rows(Rows *r, const CmMemStats *st)
{
    char what[64], last[400];
    bool is_static = st->mode == CM_MEM_STATIC;
    snprintf(what, sizeof what, "%s: %s", cm_mem_mode_name(st->mode),
             is_static ? "storage share" : st->mode == CM_MEM_AUTO ? "storage boundary"
                                                                    : "storage floor");
    add_row(r, "storage", what, st->storage_share, st->storage_share);
    snprintf(what, sizeof what, "%s: %s", cm_mem_mode_name(st->mode),
             is_static ? "execution share" : "execution above the floor");
    add_row(r, "execution", what, st->execution_share, st->execution_share);
    if (st->mode == CM_MEM_AUTO && pl_memmode_last(last, sizeof last)) {
        add_row(r, "auto", last, st->storage_share, st->storage_share);
    }
}

/* ---- sluice_memory -------------------------------------------------------------------- */

StTable *pl_system_table(const char *name, const PlCache *cache, StCatalog *cat,
                         const CmConfig *cfg, CmErr *err)
{
    if (strcasecmp(name, "sluice_cache") == 0) {
        return pl_cache_snapshot(cache, name, err);
    }
    if (strcasecmp(name, "sluice_column_stats") == 0) {
        return column_stats(name, cat, err);
    }
    if (strcasecmp(name, "sluice_settings") == 0) {
        return settings_table(name, cfg, err);
    }
    StColumn cols[4] = {
        {.name = "pool", .type = cm_type_varchar(-1, false)},
        {.name = "what", .type = cm_type_varchar(-1, false)},
        {.name = "bytes", .type = cm_type_make(CM_T_INT64)},
        {.name = "peak_bytes", .type = cm_type_make(CM_T_INT64)},
    };
    CmType types[4] = {cols[0].type, cols[1].type, cols[2].type, cols[3].type};
    Rows r = {.err = err};
    r.t = st_table_new(name, 4, cols, err);
    if (r.t == NULL || cm_batch_init(&r.b, 4, types, err) != CM_OK) {
        st_table_free(r.t);
        return NULL;
    }
    static Holders holders; /* big for the stack; the binder's thread only */
    holders.n = 0;
    CmMemStats st;
    cm_mem_stats(&st);
    cm_mem_each(note_holder, &holders);
    add_row(&r, "limit", "memory_limit", st.limit, st.limit);
    add_row(&r, "execution", "total", st.used[CM_MEM_EXECUTION], st.peak[CM_MEM_EXECUTION]);
    add_row(&r, "storage", "total", st.used[CM_MEM_STORAGE], st.peak[CM_MEM_STORAGE]);
    /* Taken before this table's own chunks exist. */
    StBlocksStats bs;
    st_blocks_stats(&bs);
    add_row(&r, "storage", "blocks in memory", bs.memory_bytes, bs.memory_bytes);
    add_row(&r, "storage", "blocks on disk", bs.disk_bytes, bs.file_bytes);
    add_row(&r, "storage", "evicted by execution", st.evicted, st.evicted);
    add_mode_rows(&r, &st);
    add_row(&r, "temp", "spill and shuffle files", sh_temp_used(), sh_temp_peak());
    add_row(&r, "process", "resident set", cm_mem_rss(), cm_mem_rss_peak());
    for (int i = 0; i < holders.n; i++) {
        add_row(&r, holders.list[i].pool, holders.list[i].what, holders.list[i].held,
                holders.list[i].peak);
    }
    if (err->code == CM_OK && r.b.n_rows > 0) {
        st_table_append(r.t, &r.b, err);
    }
    cm_batch_fini(&r.b);
    if (err->code != CM_OK) {
        st_table_free(r.t);
        return NULL;
    }
    return r.t;
}
