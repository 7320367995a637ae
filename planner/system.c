/*
 * system.c - system tables (system.h).
 */
#include "planner/system.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/alloc.h"
#include "common/mem.h"
#include "planner/bind/functions.h"
#include "planner/cache.h"
#include "planner/describe.h"
#include "planner/memmode.h"
#include "shuffle/spill.h"
#include "storage/blocks.h"
#include "storage/catalog.h"

bool pl_system_table_exists(const char *name)
{
    return strcasecmp(name, "sluice_memory") == 0 || strcasecmp(name, "sluice_cache") == 0 ||
           strcasecmp(name, "sluice_column_stats") == 0 ||
           strcasecmp(name, "sluice_settings") == 0 || strcasecmp(name, "sluice_functions") == 0;
}

/* A system table filled a row at a time: the row being written is b.n_rows. */
typedef struct Rows {
    StTable *t;
    CmBatch b;
    CmErr *err;
} Rows;

static bool rows_begin(Rows *r, const char *name, int n_cols, const StColumn *cols, CmErr *err)
{
    CmType types[16];
    CM_ASSERT(n_cols <= 16);
    for (int i = 0; i < n_cols; i++) {
        types[i] = cols[i].type;
    }
    r->err = err;
    r->t = st_table_new(name, n_cols, cols, err);
    if (r->t == NULL || cm_batch_init(&r->b, n_cols, types, err) != CM_OK) {
        st_table_free(r->t);
        return false;
    }
    return true;
}

/* Copies text into column col of the row being written. */
static void put_str(Rows *r, int col, const char *text)
{
    const char *copy = cm_arena_strdup(&r->b.heap, text);
    if (copy == NULL) {
        cm_err_set(r->err, CM_OOM, -1, "out of memory");
        return;
    }
    ((CmStr *)r->b.cols[col].data)[r->b.n_rows] = cm_str_make(copy, (uint32_t)strlen(copy));
}

/* Column col of the row being written is NULL. */
static void put_null(Rows *r, int col)
{
    if (r->b.cols[col].type.id == CM_T_VARCHAR) {
        ((CmStr *)r->b.cols[col].data)[r->b.n_rows] = cm_str_make("", 0);
    }
    cm_vec_set_null(&r->b.cols[col], (uint32_t)r->b.n_rows);
}

/* Column col (INTEGER) of the row being written is x, or NULL when x < 0. */
static void put_int(Rows *r, int col, int x)
{
    if (x < 0) {
        put_null(r, col);
        return;
    }
    ((int32_t *)r->b.cols[col].data)[r->b.n_rows] = x;
}

/* Ends the row being written; a full batch goes to the table. */
static void rows_next(Rows *r)
{
    if (++r->b.n_rows == CM_BATCH_CAP && r->err->code == CM_OK) {
        st_table_append(r->t, &r->b, r->err);
        cm_batch_reset(&r->b);
    }
}

/* The table (owned), or NULL when an error was set on the way. */
static StTable *rows_end(Rows *r)
{
    if (r->err->code == CM_OK && r->b.n_rows > 0) {
        st_table_append(r->t, &r->b, r->err);
    }
    cm_batch_fini(&r->b);
    if (r->err->code != CM_OK) {
        st_table_free(r->t);
        return NULL;
    }
    return r->t;
}

static void add_row(Rows *r, const char *pool, const char *what, int64_t bytes, int64_t peak)
{
    if (r->err->code != CM_OK) {
        return;
    }
    put_str(r, 0, pool);
    put_str(r, 1, what);
    ((int64_t *)r->b.cols[2].data)[r->b.n_rows] = bytes;
    ((int64_t *)r->b.cols[3].data)[r->b.n_rows] = peak;
    rows_next(r);
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
    Rows r;
    if (!rows_begin(&r, name, CS_N, cols, err)) {
        return NULL;
    }
    CmBatch *b = &r.b;
    for (int i = 0; cat != NULL && i < st_catalog_count(cat) && err->code == CM_OK; i++) {
        const StEntry *e = st_catalog_entry(cat, i);
        for (int c = 0; e->kind == ST_ENTRY_TABLE && c < e->table->n_cols; c++) {
            const StTable *src = e->table;
            StColStats *cs = &src->stats[c];
            uint32_t row = (uint32_t)b->n_rows;
            put_str(&r, CS_TABLE, src->name);
            put_str(&r, CS_COLUMN, src->cols[c].name);
            ((int64_t *)b->cols[CS_ROWS].data)[row] = src->n_rows;
            ((int64_t *)b->cols[CS_NULLS].data)[row] = cs->n_nulls;
            ((int64_t *)b->cols[CS_DISTINCT].data)[row] = (int64_t)llround(st_stats_ndv(cs));
            ((double *)b->cols[CS_MIN].data)[row] = cs->min;
            ((double *)b->cols[CS_MAX].data)[row] = cs->max;
            if (!cs->has_range) {
                cm_vec_set_null(&b->cols[CS_MIN], row);
                cm_vec_set_null(&b->cols[CS_MAX], row);
            }
            ((uint8_t *)b->cols[CS_STALE].data)[row] = src->stats_stale;
            rows_next(&r);
        }
    }
    return rows_end(&r);
}

/* sluice_settings: (name, value, description, input_type) of every setting. */
static StTable *settings_table(const char *name, const CmConfig *cfg, CmErr *err)
{
    if (cfg == NULL) {
        cm_err_set(err, CM_BIND, -1, "system table '%s' cannot be read here", name);
        return NULL;
    }
    StColumn cols[4] = {
        {.name = "name", .type = cm_type_varchar(-1, false)},
        {.name = "value", .type = cm_type_varchar(-1, false)},
        {.name = "description", .type = cm_type_varchar(-1, false)},
        {.name = "input_type", .type = cm_type_varchar(-1, false)},
    };
    Rows r;
    if (!rows_begin(&r, name, 4, cols, err)) {
        return NULL;
    }
    for (int i = 0; cm_config_name(i) != NULL && err->code == CM_OK; i++) {
        char value[256];
        cm_config_get(cfg, cm_config_name(i), value, (int)sizeof value);
        put_str(&r, 0, cm_config_name(i));
        put_str(&r, 1, value);
        put_str(&r, 2, cm_config_doc(i));
        put_str(&r, 3, cm_config_type(i));
        rows_next(&r);
    }
    return rows_end(&r);
}

/* ---- sluice_functions ----------------------------------------------------------------- */

enum { FN_NAME, FN_TYPE, FN_MIN, FN_MAX, FN_ALIAS, FN_N };

/* One row per entry of the function registry (planner/bind/functions.h). */
static StTable *functions_table(const char *name, CmErr *err)
{
    StColumn cols[FN_N] = {
        {.name = "function_name", .type = cm_type_varchar(-1, false)},
        {.name = "function_type", .type = cm_type_varchar(-1, false)},
        {.name = "min_args", .type = cm_type_make(CM_T_INT32)},
        {.name = "max_args", .type = cm_type_make(CM_T_INT32)},
        {.name = "alias_of", .type = cm_type_varchar(-1, false)},
    };
    Rows r;
    if (!rows_begin(&r, name, FN_N, cols, err)) {
        return NULL;
    }
    for (int i = 0; i < pl_func_count() && err->code == CM_OK; i++) {
        const PlFunc *f = pl_func_at(i);
        put_str(&r, FN_NAME, f->name);
        put_str(&r, FN_TYPE, pl_func_kind_name(f->kind));
        put_int(&r, FN_MIN, f->min_args);
        put_int(&r, FN_MAX, f->max_args); /* NULL: any number */
        if (f->alias_of != NULL) {
            put_str(&r, FN_ALIAS, f->alias_of);
        } else {
            put_null(&r, FN_ALIAS);
        }
        rows_next(&r);
    }
    return rows_end(&r);
}

/* ---- information_schema ---------------------------------------------------------------- */

bool pl_info_schema_exists(const char *name)
{
    return strcmp(name, "tables") == 0 || strcmp(name, "columns") == 0 ||
           strcmp(name, "schemata") == 0;
}

/* information_schema.schemata: the one catalog's schemas. */
static StTable *info_schemata(const char *name, CmErr *err)
{
    StColumn cols[2] = {
        {.name = "catalog_name", .type = cm_type_varchar(-1, false)},
        {.name = "schema_name", .type = cm_type_varchar(-1, false)},
    };
    static const char *const SCHEMAS[] = {"main", "information_schema"};
    Rows r;
    if (!rows_begin(&r, name, 2, cols, err)) {
        return NULL;
    }
    for (size_t i = 0; i < sizeof SCHEMAS / sizeof SCHEMAS[0]; i++) {
        put_str(&r, 0, "memory");
        put_str(&r, 1, SCHEMAS[i]);
        rows_next(&r);
    }
    return rows_end(&r);
}

/* information_schema.tables: every table and view, in creation order. */
static StTable *info_tables(const char *name, StCatalog *cat, CmErr *err)
{
    StColumn cols[5] = {
        {.name = "table_catalog", .type = cm_type_varchar(-1, false)},
        {.name = "table_schema", .type = cm_type_varchar(-1, false)},
        {.name = "table_name", .type = cm_type_varchar(-1, false)},
        {.name = "table_type", .type = cm_type_varchar(-1, false)},
        {.name = "is_insertable_into", .type = cm_type_varchar(-1, false)},
    };
    Rows r;
    if (!rows_begin(&r, name, 5, cols, err)) {
        return NULL;
    }
    for (int i = 0; cat != NULL && i < st_catalog_count(cat) && err->code == CM_OK; i++) {
        const StEntry *e = st_catalog_entry(cat, i);
        if (e->kind == ST_ENTRY_INDEX) {
            continue;
        }
        bool is_table = e->kind == ST_ENTRY_TABLE;
        put_str(&r, 0, "memory");
        put_str(&r, 1, "main");
        put_str(&r, 2, e->name);
        /* PostgreSQL's and DuckDB's: a temporary view is still a VIEW */
        put_str(&r, 3, !is_table ? "VIEW" : e->is_temp ? "LOCAL TEMPORARY" : "BASE TABLE");
        put_str(&r, 4, is_table ? "YES" : "NO");
        rows_next(&r);
    }
    return rows_end(&r);
}

enum {
    IC_CATALOG,
    IC_SCHEMA,
    IC_TABLE,
    IC_COLUMN,
    IC_ORDINAL,
    IC_DEFAULT,
    IC_NULLABLE,
    IC_TYPE,
    IC_CHAR_LEN,
    IC_PRECISION,
    IC_RADIX,
    IC_SCALE,
    IC_N
};

/* One row of information_schema.columns: column c of `table`. */
static void info_column(Rows *r, const char *table, int c, const char *col_name, CmType type,
                        const StColumn *col)
{
    char tn[64];
    cm_type_name(type, tn, sizeof tn);
    char *paren = strchr(tn, '('); /* DECIMAL(10,2) is 'DECIMAL', its digits below */
    char *close = paren != NULL ? strchr(paren, ')') : NULL;
    if (close != NULL) {
        memmove(paren, close + 1, strlen(close + 1) + 1);
    }
    put_str(r, IC_CATALOG, "memory");
    put_str(r, IC_SCHEMA, "main");
    put_str(r, IC_TABLE, table);
    put_str(r, IC_COLUMN, col_name);
    put_int(r, IC_ORDINAL, c + 1);
    char *dflt = col != NULL ? pl_default_text(col, r->err) : NULL;
    if (dflt != NULL) {
        put_str(r, IC_DEFAULT, dflt);
        cm_free(dflt);
    } else {
        put_null(r, IC_DEFAULT);
    }
    put_str(r, IC_NULLABLE, col != NULL && col->not_null ? "NO" : "YES");
    put_str(r, IC_TYPE, tn);
    put_int(r, IC_CHAR_LEN, type.id == CM_T_VARCHAR ? type.length : -1);
    /* DuckDB's: binary digits of the integers and DOUBLE, decimal ones of DECIMAL */
    int prec = -1, radix = 2, scale = 0;
    switch ((CmTypeId)type.id) {
    case CM_T_INT32:
        prec = 32;
        break;
    case CM_T_INT64:
        prec = 64;
        break;
    case CM_T_DOUBLE:
        prec = 53, scale = -1;
        break;
    case CM_T_DECIMAL:
    case CM_T_DECIMAL128:
        prec = type.precision, radix = 10, scale = type.scale;
        break;
    default:
        break;
    }
    put_int(r, IC_PRECISION, prec);
    put_int(r, IC_RADIX, prec < 0 ? -1 : radix);
    put_int(r, IC_SCALE, prec < 0 ? -1 : scale);
    rows_next(r);
}

/* information_schema.columns: the columns of every table, and of every view
 * that `shape` can bind. */
static StTable *info_columns(const char *name, StCatalog *cat, PlViewShapeFn shape, void *ctx,
                             CmErr *err)
{
    StColumn cols[IC_N] = {
        {.name = "table_catalog", .type = cm_type_varchar(-1, false)},
        {.name = "table_schema", .type = cm_type_varchar(-1, false)},
        {.name = "table_name", .type = cm_type_varchar(-1, false)},
        {.name = "column_name", .type = cm_type_varchar(-1, false)},
        {.name = "ordinal_position", .type = cm_type_make(CM_T_INT32)},
        {.name = "column_default", .type = cm_type_varchar(-1, false)},
        {.name = "is_nullable", .type = cm_type_varchar(-1, false)},
        {.name = "data_type", .type = cm_type_varchar(-1, false)},
        {.name = "character_maximum_length", .type = cm_type_make(CM_T_INT32)},
        {.name = "numeric_precision", .type = cm_type_make(CM_T_INT32)},
        {.name = "numeric_precision_radix", .type = cm_type_make(CM_T_INT32)},
        {.name = "numeric_scale", .type = cm_type_make(CM_T_INT32)},
    };
    Rows r;
    if (!rows_begin(&r, name, IC_N, cols, err)) {
        return NULL;
    }
    for (int i = 0; cat != NULL && i < st_catalog_count(cat) && err->code == CM_OK; i++) {
        const StEntry *e = st_catalog_entry(cat, i);
        if (e->kind == ST_ENTRY_TABLE) {
            for (int c = 0; c < e->table->n_cols && err->code == CM_OK; c++) {
                const StColumn *col = &e->table->cols[c];
                info_column(&r, e->name, c, col->name, col->type, col);
            }
            continue;
        }
        int n = 0;
        const char *const *names = NULL;
        const CmType *types = NULL;
        if (e->kind != ST_ENTRY_VIEW || shape == NULL || !shape(ctx, e, &n, &names, &types)) {
            continue;
        }
        for (int c = 0; c < n && err->code == CM_OK; c++) {
            info_column(&r, e->name, c, names[c], types[c], NULL);
        }
    }
    return rows_end(&r);
}

StTable *pl_info_schema_table(const char *name, StCatalog *cat, PlViewShapeFn shape, void *ctx,
                              CmErr *err)
{
    if (strcmp(name, "tables") == 0) {
        return info_tables(name, cat, err);
    }
    if (strcmp(name, "columns") == 0) {
        return info_columns(name, cat, shape, ctx, err);
    }
    return info_schemata(name, err);
}

/* The rows of the memory mode: each pool's share, and the auto mode's last move. */
static void add_mode_rows(Rows *r, const CmMemStats *st)
{
    char what[64], last[400];
    bool is_static = st->mode == CM_MEM_STATIC;
    snprintf(what, sizeof what, "%s: %s", cm_mem_mode_name(st->mode),
             is_static                 ? "storage share"
             : st->mode == CM_MEM_AUTO ? "storage boundary"
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

StTable *pl_system_table(const char *name, const PlCache *cache, const PlKeep *keep, StCatalog *cat,
                         const CmConfig *cfg, CmErr *err)
{
    if (strcasecmp(name, "sluice_cache") == 0) {
        return pl_cache_snapshot(cache, keep, name, err);
    }
    if (strcasecmp(name, "sluice_column_stats") == 0) {
        return column_stats(name, cat, err);
    }
    if (strcasecmp(name, "sluice_settings") == 0) {
        return settings_table(name, cfg, err);
    }
    if (strcasecmp(name, "sluice_functions") == 0) {
        return functions_table(name, err);
    }
    StColumn cols[4] = {
        {.name = "pool", .type = cm_type_varchar(-1, false)},
        {.name = "what", .type = cm_type_varchar(-1, false)},
        {.name = "bytes", .type = cm_type_make(CM_T_INT64)},
        {.name = "peak_bytes", .type = cm_type_make(CM_T_INT64)},
    };
    Rows r;
    if (!rows_begin(&r, name, 4, cols, err)) {
        return NULL;
    }
    static Holders holders; /* big for the stack; the binder's thread only */
    holders.n = 0;
    CmMemStats st;
    cm_mem_stats(&st);
    cm_mem_each(note_holder, &holders);
    add_row(&r, "limit", "memory_limit", st.limit, st.limit);
    add_row(&r, "limit", "shared by the pools", st.pooled, st.pooled);
    add_row(&r, "execution", "total", st.used[CM_MEM_EXECUTION], st.peak[CM_MEM_EXECUTION]);
    add_row(&r, "storage", "total", st.used[CM_MEM_STORAGE], st.peak[CM_MEM_STORAGE]);
    /* Taken before this table's own chunks exist. */
    StBlocksStats bs;
    st_blocks_stats(&bs);
    add_row(&r, "storage", "blocks in memory", bs.memory_bytes, bs.memory_bytes);
    add_row(&r, "storage", "blocks on disk", bs.disk_bytes, bs.file_bytes);
    add_row(&r, "storage", "evicted by execution", st.evicted, st.evicted);
    add_row(&r, "storage", "blocks written to the temp file", bs.temp_written, bs.temp_written);
    add_row(&r, "storage", "blocks written to data files", bs.home_written, bs.home_written);
    add_mode_rows(&r, &st);
    add_row(&r, "temp", "spill and shuffle files", sh_temp_used(), sh_temp_peak());
    add_row(&r, "process", "resident set", cm_mem_rss(), cm_mem_rss_peak());
    for (int i = 0; i < holders.n; i++) {
        add_row(&r, holders.list[i].pool, holders.list[i].what, holders.list[i].held,
                holders.list[i].peak);
    }
    return rows_end(&r);
}
