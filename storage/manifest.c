/*
 * manifest.c - the bytes of MANIFEST: the catalog and where each table's rows
 * are saved, encoded and decoded (docs/storage.md, "MANIFEST").
 *
 * The decoder trusts nothing: every length and count is checked against the
 * bytes left and against the schema (column indexes, type ids), so that a
 * damaged manifest whose checksum happens to pass still fails cleanly.
 */
#include <string.h>

#include "common/alloc.h"
#include "common/arena.h"
#include "common/hash.h"
#include "storage/index.h"
#include "storage/persist_int.h"

#define NULL_STR 0xFFFFFFFFu
#define MAX_COLS 100000u

/* ---- writing ------------------------------------------------------------------------ */

void pm_buf_put(PmBuf *b, const void *p, size_t n)
{
    if (b->is_oom || n == 0) {
        return;
    }
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + n) {
            cap *= 2;
        }
        unsigned char *q = cm_realloc(b->p, cap);
        if (q == NULL) {
            b->is_oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

void pm_buf_fini(PmBuf *b)
{
    cm_free(b->p);
    memset(b, 0, sizeof *b);
}

static void put_u8(PmBuf *b, uint8_t v)
{
    pm_buf_put(b, &v, 1);
}
static void put_u32(PmBuf *b, uint32_t v)
{
    pm_buf_put(b, &v, 4);
}
static void put_u64(PmBuf *b, uint64_t v)
{
    pm_buf_put(b, &v, 8);
}
static void put_i64(PmBuf *b, int64_t v)
{
    pm_buf_put(b, &v, 8);
}
static void put_str(PmBuf *b, const char *s)
{
    if (s == NULL) {
        put_u32(b, NULL_STR);
        return;
    }
    size_t n = strlen(s);
    put_u32(b, (uint32_t)n);
    pm_buf_put(b, s, n);
}

static void put_type(PmBuf *b, CmType t)
{
    put_u8(b, t.id);
    put_u8(b, t.precision);
    put_u8(b, t.scale);
    put_u8(b, t.is_char);
    put_u32(b, (uint32_t)t.length);
    put_u8(b, t.child);
}

static CmStatus put_column(PmBuf *b, const StTable *t, const StColumn *c, CmErr *err)
{
    put_str(b, c->name);
    put_type(b, c->type);
    put_u8(b, (uint8_t)(c->not_null | c->primary_key << 1 | c->has_default << 2));
    if (!c->has_default) {
        return CM_OK;
    }
    const CmValue *v = &c->default_value;
    put_u8(b, v->is_null);
    if (v->is_null) {
        return CM_OK;
    }
    if (c->type.id == CM_T_LIST) {
        return cm_err_set(err, CM_RUNTIME, -1,
                          "cannot save table '%s': the DEFAULT of a list column '%s' cannot be "
                          "saved yet",
                          t->name, c->name);
    }
    if (c->type.id == CM_T_VARCHAR) {
        put_u32(b, v->s.len);
        pm_buf_put(b, cm_str_data(&v->s), v->s.len);
    } else {
        pm_buf_put(b, v->h, sizeof v->h); /* every other value fits the union's 16 bytes */
    }
    return CM_OK;
}

static void put_chunk_loc(PmBuf *b, const PmChunk *c)
{
    put_u64(b, c->file_id);
    put_u32(b, (uint32_t)c->n_rows);
    put_i64(b, c->offset);
    put_i64(b, c->bytes);
}

static void put_saved(PmBuf *b, const PmSaved *s)
{
    put_i64(b, s->n_rows);
    put_u32(b, (uint32_t)s->n_chunks);
    for (int i = 0; i < s->n_chunks; i++) {
        put_chunk_loc(b, &s->chunks[i]);
        for (int col = 0; col < s->n_cols; col++) {
            const PmZone *z = &s->zones[(size_t)i * (size_t)s->n_cols + (size_t)col];
            put_i64(b, z->min);
            put_i64(b, z->max);
            put_i64(b, z->n_nulls);
            put_i64(b, z->bytes);
        }
    }
    put_u8(b, s->is_stats_stale);
    put_chunk_loc(b, &s->stats);
}

void pm_stats_encode(const StColStats *stats, int n_cols, PmBuf *out)
{
    size_t start = out->n;
    for (int c = 0; c < n_cols; c++) {
        const StColStats *st = &stats[c];
        put_i64(out, st->n_values);
        put_i64(out, st->n_nulls);
        put_u64(out, st->has_range);
        pm_buf_put(out, &st->min, 8);
        pm_buf_put(out, &st->max, 8);
        pm_buf_put(out, st->hll, ST_HLL_REGS);
    }
    if (!out->is_oom) {
        put_u64(out, XXH64(out->p + start, out->n - start, 0));
    }
}

bool pm_stats_decode(const unsigned char *p, size_t n, int n_cols, StColStats *out)
{
    size_t per = 40 + ST_HLL_REGS;
    uint64_t sum = 0;
    if (n != per * (size_t)n_cols + 8) {
        return false;
    }
    memcpy(&sum, p + n - 8, 8);
    if (XXH64(p, n - 8, 0) != sum) {
        return false;
    }
    for (int c = 0; c < n_cols; c++) {
        const unsigned char *q = p + per * (size_t)c;
        uint64_t has_range = 0;
        memcpy(&out[c].n_values, q, 8);
        memcpy(&out[c].n_nulls, q + 8, 8);
        memcpy(&has_range, q + 16, 8);
        memcpy(&out[c].min, q + 24, 8);
        memcpy(&out[c].max, q + 32, 8);
        memcpy(out[c].hll, q + 40, ST_HLL_REGS);
        out[c].has_range = has_range != 0;
        out[c].ndv = -1;
    }
    return true;
}

static CmStatus put_table(PmBuf *b, const StTable *t, const PmSaved *s, CmErr *err)
{
    put_u32(b, (uint32_t)t->n_cols);
    for (int c = 0; c < t->n_cols; c++) {
        if (put_column(b, t, &t->cols[c], err) != CM_OK) {
            return err->code;
        }
    }
    put_u32(b, (uint32_t)t->n_indexes);
    for (int i = 0; i < t->n_indexes; i++) {
        const StIndex *ix = t->indexes[i];
        put_str(b, st_index_name(ix));
        put_u8(b, (uint8_t)st_index_kind(ix));
        put_u32(b, (uint32_t)st_index_n_keys(ix));
        for (int k = 0; k < st_index_n_keys(ix); k++) {
            put_u32(b, (uint32_t)st_index_key_cols(ix)[k]);
        }
    }
    put_saved(b, s);
    return CM_OK;
}

/* True when e is saved: not temporary, nor an index of a temporary table. */
static bool is_saved(StCatalog *cat, const StEntry *e)
{
    if (e->kind == ST_ENTRY_INDEX) {
        const StEntry *t = st_catalog_find(cat, e->index_table);
        return t == NULL || !t->is_temp;
    }
    return !e->is_temp;
}

CmStatus pm_manifest_encode(const StCatalog *ccat, uint64_t generation, uint64_t next_file_id,
                            const PmSaved *(*saved_of)(void *ctx, const StTable *t), void *ctx,
                            PmBuf *out, CmErr *err)
{
    StCatalog *cat = (StCatalog *)ccat; /* the catalog's lookups are not const; nothing changes */
    uint32_t version = PM_FORMAT_VERSION, zero = 0, n_saved = 0;
    pm_buf_put(out, PM_MANIFEST_MAGIC, 8);
    put_u32(out, version);
    put_u32(out, zero);
    put_u64(out, generation);
    put_u64(out, next_file_id);
    for (int i = 0; i < st_catalog_count(cat); i++) {
        n_saved += is_saved(cat, st_catalog_entry(cat, i));
    }
    put_u32(out, n_saved);
    for (int i = 0; i < st_catalog_count(cat); i++) {
        const StEntry *e = st_catalog_entry(cat, i);
        if (!is_saved(cat, e)) {
            continue;
        }
        put_u8(out, (uint8_t)e->kind);
        put_str(out, e->name);
        put_str(out, e->create_sql);
        if (e->kind == ST_ENTRY_TABLE) {
            if (put_table(out, e->table, saved_of(ctx, e->table), err) != CM_OK) {
                return err->code;
            }
        } else if (e->kind == ST_ENTRY_VIEW) {
            put_str(out, e->view_sql);
            put_u32(out, (uint32_t)e->n_view_cols);
            for (int c = 0; c < e->n_view_cols; c++) {
                put_str(out, e->view_cols[c]);
            }
        } else {
            put_str(out, e->index_table);
        }
    }
    if (!out->is_oom) {
        put_u64(out, XXH64(out->p, out->n, 0));
    }
    return out->is_oom ? cm_err_set(err, CM_OOM, -1, "out of memory saving the catalog") : CM_OK;
}

/* ---- reading ------------------------------------------------------------------------ */

typedef struct Reader {
    const unsigned char *p;
    size_t n, off;
    bool is_bad;      /* read past the end, or a value out of range */
    CmArena *arena;   /* the decoded strings */
    uint32_t version; /* of the manifest read */
} Reader;

static void get(Reader *r, void *dst, size_t n)
{
    if (r->is_bad || n > r->n - r->off) {
        r->is_bad = true;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, r->p + r->off, n);
    r->off += n;
}
static uint8_t get_u8(Reader *r)
{
    uint8_t v;
    get(r, &v, 1);
    return v;
}
static uint32_t get_u32(Reader *r)
{
    uint32_t v;
    get(r, &v, 4);
    return v;
}
static uint64_t get_u64(Reader *r)
{
    uint64_t v;
    get(r, &v, 8);
    return v;
}
static int64_t get_i64(Reader *r)
{
    int64_t v;
    get(r, &v, 8);
    return v;
}
/* In r's arena; NULL for a NULL string, or "" when bad. */
static char *get_str(Reader *r)
{
    uint32_t n = get_u32(r);
    if (n == NULL_STR) {
        return NULL;
    }
    if (r->is_bad || n > r->n - r->off) {
        r->is_bad = true;
        return "";
    }
    char *s = cm_arena_strndup(r->arena, (const char *)r->p + r->off, n);
    r->off += n;
    if (s == NULL) {
        r->is_bad = true; /* reported as damage would be wrong: the caller checks OOM first */
        return "";
    }
    return s;
}
/* A string that must be there. */
static char *get_name(Reader *r)
{
    char *s = get_str(r);
    if (s == NULL) {
        r->is_bad = true;
        return "";
    }
    return s;
}

static CmType get_type(Reader *r)
{
    CmType t = {0};
    t.id = get_u8(r);
    t.precision = get_u8(r);
    t.scale = get_u8(r);
    t.is_char = get_u8(r);
    t.length = (int32_t)get_u32(r);
    t.child = get_u8(r);
    if (t.id > CM_T_DECIMAL128 || t.child > CM_T_DECIMAL128) {
        r->is_bad = true;
    }
    return t;
}

static void get_column(Reader *r, StColumn *c)
{
    c->name = get_name(r);
    c->type = get_type(r);
    uint8_t flags = get_u8(r);
    c->not_null = flags & 1;
    c->primary_key = (flags >> 1) & 1;
    c->has_default = (flags >> 2) & 1;
    c->default_value = (CmValue){.type = c->type, .is_null = true};
    if (!c->has_default || (c->default_value.is_null = get_u8(r)) != 0) {
        return;
    }
    if (c->type.id == CM_T_LIST) {
        r->is_bad = true; /* never written */
    } else if (c->type.id == CM_T_VARCHAR) {
        uint32_t n = get_u32(r);
        if (r->is_bad || n > r->n - r->off) {
            r->is_bad = true;
            return;
        }
        c->default_value.s = cm_str_make((const char *)r->p + r->off, n); /* copied by the table */
        r->off += n;
    } else {
        get(r, c->default_value.h, sizeof c->default_value.h);
    }
}

typedef struct IndexDef {
    char *name;
    StIndexKind kind;
    int n_keys;
    int *keys;
} IndexDef;

static IndexDef *get_indexes(Reader *r, int n_cols, int *n_out)
{
    uint32_t n = get_u32(r);
    if (n > MAX_COLS || n > r->n - r->off) {
        r->is_bad = true;
        return NULL;
    }
    IndexDef *defs = cm_arena_zalloc(r->arena, sizeof(IndexDef) * (n + 1));
    for (uint32_t i = 0; defs != NULL && i < n && !r->is_bad; i++) {
        IndexDef *d = &defs[i];
        d->name = get_str(r);
        d->kind = (StIndexKind)get_u8(r);
        uint32_t nk = get_u32(r);
        if (d->kind > ST_INDEX_PRIMARY || nk == 0 || nk > (uint32_t)n_cols ||
            (d->keys = cm_arena_alloc(r->arena, sizeof(int) * nk)) == NULL) {
            r->is_bad = true;
            break;
        }
        d->n_keys = (int)nk;
        for (uint32_t k = 0; k < nk; k++) {
            uint32_t col = get_u32(r);
            r->is_bad |= col >= (uint32_t)n_cols;
            d->keys[k] = (int)col;
        }
    }
    r->is_bad |= defs == NULL;
    *n_out = r->is_bad ? 0 : (int)n;
    return defs;
}

static void get_saved(Reader *r, int n_cols, PmSaved *s)
{
    s->n_cols = n_cols;
    s->n_rows = get_i64(r);
    uint32_t n = get_u32(r);
    size_t per_col = r->version >= 3 ? 32 : 24; /* version 3 adds each column's record bytes */
    size_t per_chunk = 28 + per_col * (size_t)n_cols;
    if (r->is_bad || n > (r->n - r->off) / per_chunk) {
        r->is_bad = true;
        return;
    }
    s->chunks = cm_calloc(n + 1, sizeof(PmChunk));
    s->zones = cm_calloc((size_t)n * (size_t)n_cols + 1, sizeof(PmZone));
    if (s->chunks == NULL || s->zones == NULL) {
        r->is_bad = true;
        return;
    }
    s->n_chunks = (int)n;
    int64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        PmChunk *c = &s->chunks[i];
        c->file_id = get_u64(r);
        c->n_rows = (int32_t)get_u32(r);
        c->offset = get_i64(r);
        c->bytes = get_i64(r);
        r->is_bad |=
            c->file_id == 0 || c->n_rows <= 0 || c->offset < PM_DATA_HDR_BYTES || c->bytes <= 0;
        total += c->n_rows;
        int64_t sum = 0;
        int n_zero = 0;
        for (int col = 0; col < n_cols; col++) {
            PmZone *z = &s->zones[(size_t)i * (size_t)n_cols + (size_t)col];
            z->min = get_i64(r);
            z->max = get_i64(r);
            z->n_nulls = get_i64(r);
            z->bytes = per_col == 32 ? get_i64(r) : 0;
            r->is_bad |= z->bytes < 0 || z->bytes % 8 != 0 || z->bytes > c->bytes;
            sum += z->bytes;
            n_zero += z->bytes == 0;
        }
        /* one record (every column's bytes 0), or one per column filling it */
        r->is_bad |= n_zero != n_cols && (n_zero != 0 || sum != c->bytes);
    }
    r->is_bad |= total != s->n_rows;
    s->is_stats_stale = get_u8(r) != 0;
    s->stats.file_id = get_u64(r);
    s->stats.n_rows = (int32_t)get_u32(r);
    s->stats.offset = get_i64(r);
    s->stats.bytes = get_i64(r);
    r->is_bad |= s->stats.file_id != 0 && (s->stats.offset < PM_DATA_HDR_BYTES ||
                                           s->stats.bytes <= 0 || s->stats.bytes > (1 << 30));
}

typedef struct Decoder {
    Reader r;
    StCatalog *cat;
    PmLoadFn load;
    void *ctx;
    PmSaved *saved; /* grown as tables are read */
    int n_saved, cap_saved;
    CmErr *err;
} Decoder;

static PmSaved *next_saved(Decoder *d)
{
    if (d->n_saved == d->cap_saved) {
        int cap = d->cap_saved ? d->cap_saved * 2 : 8;
        PmSaved *s = cm_realloc(d->saved, sizeof(PmSaved) * (size_t)cap);
        if (s == NULL) {
            return NULL;
        }
        d->saved = s;
        d->cap_saved = cap;
    }
    PmSaved *s = &d->saved[d->n_saved++];
    memset(s, 0, sizeof *s);
    return s;
}

static CmStatus get_table(Decoder *d, const char *name, const char *create_sql)
{
    Reader *r = &d->r;
    uint32_t n_cols = get_u32(r);
    if (n_cols == 0 || n_cols > MAX_COLS || n_cols > r->n - r->off) {
        r->is_bad = true;
        return CM_OK;
    }
    StColumn *cols = cm_arena_zalloc(r->arena, sizeof(StColumn) * n_cols);
    if (cols == NULL) {
        return cm_err_set(d->err, CM_OOM, -1, "out of memory opening the database");
    }
    for (uint32_t c = 0; c < n_cols && !r->is_bad; c++) {
        get_column(r, &cols[c]);
    }
    int n_idx = 0;
    IndexDef *idx = get_indexes(r, (int)n_cols, &n_idx);
    PmSaved *s = next_saved(d);
    if (s == NULL) {
        return cm_err_set(d->err, CM_OOM, -1, "out of memory opening the database");
    }
    get_saved(r, (int)n_cols, s);
    if (r->is_bad) {
        return CM_OK;
    }
    StTable *t = st_table_new(name, (int)n_cols, cols, d->err);
    if (t == NULL || d->load(d->ctx, t, s, d->err) != CM_OK) {
        st_table_free(t);
        return d->err->code;
    }
    for (int i = 0; i < n_idx; i++) {
        if (st_table_add_index_cold(t, idx[i].name, idx[i].kind, idx[i].n_keys, idx[i].keys,
                                    d->err) != CM_OK) {
            st_table_free(t);
            return d->err->code;
        }
    }
    pm_saved_bind(s, t);
    return st_catalog_add_table(d->cat, t, create_sql, false, d->err);
}

static CmStatus get_view(Decoder *d, const char *name, const char *create_sql)
{
    Reader *r = &d->r;
    char *sql = get_name(r);
    uint32_t n = get_u32(r);
    if (n > MAX_COLS || n > r->n - r->off) {
        r->is_bad = true;
        return CM_OK;
    }
    char **cols = cm_arena_zalloc(r->arena, sizeof(char *) * (n + 1));
    for (uint32_t c = 0; cols != NULL && c < n; c++) {
        cols[c] = get_name(r);
    }
    if (cols == NULL) {
        return cm_err_set(d->err, CM_OOM, -1, "out of memory opening the database");
    }
    if (r->is_bad) {
        return CM_OK;
    }
    return st_catalog_add_view(d->cat, name, sql, (int)n, (const char *const *)cols, create_sql,
                               false, d->err);
}

static CmStatus get_entry(Decoder *d)
{
    Reader *r = &d->r;
    uint8_t kind = get_u8(r);
    char *name = get_name(r);
    char *create_sql = get_str(r);
    if (create_sql == NULL) {
        create_sql = "";
    }
    if (r->is_bad || st_catalog_find(d->cat, name) != NULL) {
        r->is_bad = true;
        return CM_OK;
    }
    switch (kind) {
    case ST_ENTRY_TABLE:
        return get_table(d, name, create_sql);
    case ST_ENTRY_VIEW:
        return get_view(d, name, create_sql);
    case ST_ENTRY_INDEX: {
        char *table = get_name(r);
        if (r->is_bad) {
            return CM_OK;
        }
        return st_catalog_add_index(d->cat, name, table, create_sql, d->err);
    }
    default:
        r->is_bad = true;
        return CM_OK;
    }
}

CmStatus pm_check_version(uint32_t version, const char *name, CmErr *err)
{
    if (version < PM_FORMAT_OLDEST || version > PM_FORMAT_VERSION) {
        return cm_err_set(err, CM_IO, -1,
                          "'%s' has storage format version %u; this Sluice reads versions %d to %d",
                          name, version, PM_FORMAT_OLDEST, PM_FORMAT_VERSION);
    }
    return CM_OK;
}

/* Checks the header and checksum; false with err set. */
static bool check_header(const unsigned char *p, size_t n, const char *name, CmErr *err)
{
    uint32_t version = 0;
    uint64_t sum = 0;
    if (n < 8 + 4 + 4 + 8 + 8 + 4 + 8 || memcmp(p, PM_MANIFEST_MAGIC, 8) != 0) {
        cm_err_set(err, CM_IO, -1, "'%s' is not a Sluice manifest (damaged or truncated)", name);
        return false;
    }
    memcpy(&version, p + 8, 4);
    if (pm_check_version(version, name, err) != CM_OK) {
        return false;
    }
    memcpy(&sum, p + n - 8, 8);
    if (XXH64(p, n - 8, 0) != sum) {
        cm_err_set(err, CM_IO, -1, "'%s' is damaged: its checksum does not match", name);
        return false;
    }
    return true;
}

CmStatus pm_manifest_decode(const unsigned char *p, size_t n, const char *name, StCatalog *cat,
                            PmLoadFn load, void *ctx, PmSaved **saved, int *n_saved,
                            uint64_t *generation, uint64_t *next_file_id, CmErr *err)
{
    *saved = NULL;
    *n_saved = 0;
    if (!check_header(p, n, name, err)) {
        return err->code;
    }
    CmArena arena;
    cm_arena_init(&arena, 64 * 1024);
    Decoder d = {.r = {.p = p, .n = n - 8, .off = 16, .arena = &arena},
                 .cat = cat,
                 .load = load,
                 .ctx = ctx,
                 .err = err};
    memcpy(&d.r.version, p + 8, 4); /* checked by check_header */
    *generation = get_u64(&d.r);
    *next_file_id = get_u64(&d.r);
    uint32_t n_entries = get_u32(&d.r);
    for (uint32_t i = 0; i < n_entries && !d.r.is_bad && err->code == CM_OK; i++) {
        get_entry(&d);
    }
    if (err->code == CM_OK && (d.r.is_bad || d.r.off != d.r.n)) {
        cm_err_set(err, CM_IO, -1, "'%s' is damaged: its contents are malformed", name);
    }
    cm_arena_fini(&arena);
    if (err->code != CM_OK) {
        for (int i = 0; i < d.n_saved; i++) {
            pm_saved_fini(&d.saved[i]);
        }
        cm_free(d.saved);
        return err->code;
    }
    *saved = d.saved;
    *n_saved = d.n_saved;
    return CM_OK;
}

void pm_saved_bind(PmSaved *s, const StTable *t)
{
    s->table_id = t->id;
    s->version = t->version;
    for (int i = 0; i < s->n_chunks && i < t->n_chunks; i++) {
        s->chunks[i].block = t->chunks[i]->block;
        s->chunks[i].was_sealed = t->chunks[i]->sealed;
    }
}

void pm_saved_fini(PmSaved *s)
{
    cm_free(s->chunks);
    cm_free(s->zones);
    memset(s, 0, sizeof *s);
}
