/*
 * sluice.c - the embedding API over the planner's session.
 *
 * Errors are translated to SluiceError with line and column computed from the
 * byte offset.  Result text is formatted on first access, one cell at a time,
 * into an arena owned by the result, so printing a large result costs one
 * pointer per cell and nothing for cells never read.
 */
#include "api/sluice.h"

#include <stdio.h>
#include <string.h>

#include "api/api_int.h"
#include "common/alloc.h"
#include "common/value.h"
#include "parser/parser.h"
#include "planner/session.h"

/* SluiceCode's SQL classes are CmStatus's. */
_Static_assert(SLUICE_SYNTAX == (int)CM_SYNTAX && SLUICE_BIND == (int)CM_BIND &&
                   SLUICE_TYPE == (int)CM_TYPE && SLUICE_RUNTIME == (int)CM_RUNTIME &&
                   SLUICE_LIMIT == (int)CM_LIMIT && SLUICE_IO == (int)CM_IO &&
                   SLUICE_OOM == (int)CM_OOM && SLUICE_CANCELLED == (int)CM_CANCELLED &&
                   SLUICE_INTERNAL == (int)CM_INTERNAL,
               "keep SluiceCode in sync with CmStatus");

void api_to_error(const CmErr *e, const char *sql, size_t len, SluiceError *out)
{
    if (out == NULL) {
        return;
    }
    memset(out, 0, sizeof *out);
    out->code = e->code;
    out->offset = e->off;
    snprintf(out->message, sizeof out->message, "%s", e->msg);
    if (e->off >= 0 && sql != NULL && (size_t)e->off <= len) {
        ps_line_col(sql, len, (size_t)e->off, &out->line, &out->column);
    }
}

/* A connection over `shared`, with `session` (taken over). */
static SluiceDb *connection_new(SluiceDatabase *shared, PlSession *session, CmErr *e)
{
    SluiceDb *db = cm_calloc(1, sizeof *db);
    if (db == NULL) {
        cm_err_set(e, CM_OOM, -1, "out of memory opening a connection");
        return NULL;
    }
    db->shared = shared;
    db->session = session;
    atomic_fetch_add(&shared->n_conns, 1);
    return db;
}

SluiceDb *sluice_open(const char *path, SluiceError *err)
{
    return sluice_open_flags(path, 0, err);
}

SluiceDb *sluice_open_flags(const char *path, unsigned flags, SluiceError *err)
{
    CmErr e;
    cm_err_init(&e);
    bool is_dir = path != NULL && strcmp(path, ":memory:") != 0;
    if (!is_dir && (flags & SLUICE_OPEN_READONLY) != 0) {
        cm_err_set(&e, CM_IO, -1, "a read-only open needs a database directory");
        api_to_error(&e, NULL, 0, err);
        return NULL;
    }
    SluiceDatabase *shared = cm_calloc(1, sizeof *shared);
    SluiceDb *db = NULL;
    if (shared != NULL && (shared->owner = pl_session_new(&e)) != NULL) {
        cm_mutex_init(&shared->lock);
        if (!is_dir || pl_session_attach(shared->owner, path, (flags & SLUICE_OPEN_READONLY) != 0,
                                         &e) == CM_OK) {
            db = connection_new(shared, shared->owner, &e);
        }
        if (db == NULL) {
            cm_mutex_fini(&shared->lock);
            pl_session_free(shared->owner);
        }
    }
    if (db == NULL) {
        cm_free(shared);
        cm_err_set(&e, CM_OOM, -1, "out of memory opening a database");
        api_to_error(&e, NULL, 0, err);
        return NULL;
    }
    if (err != NULL) {
        memset(err, 0, sizeof *err);
    }
    return db;
}

SluiceDb *sluice_connect(SluiceDb *first, SluiceError *err)
{
    CmErr e;
    cm_err_init(&e);
    PlSession *session = pl_session_new_shared(first->shared->owner, &e);
    SluiceDb *db = session != NULL ? connection_new(first->shared, session, &e) : NULL;
    if (db == NULL) {
        pl_session_free(session);
        api_to_error(&e, NULL, 0, err);
        return NULL;
    }
    if (err != NULL) {
        memset(err, 0, sizeof *err);
    }
    return db;
}

void sluice_close(SluiceDb *db)
{
    if (db == NULL) {
        return;
    }
    SluiceDatabase *shared = db->shared;
    /* its transaction ends now, also when its session (the owner's) outlives it */
    cm_mutex_lock(&shared->lock); /* the catalog is shared: as a statement would */
    pl_session_rollback(db->session);
    cm_mutex_unlock(&shared->lock);
    if (db->session != shared->owner) {
        pl_session_free(db->session);
    }
    cm_free(db);
    /* The owner's session holds the catalog: it goes with the last connection. */
    if (atomic_fetch_sub(&shared->n_conns, 1) == 1) {
        pl_session_free(shared->owner);
        cm_mutex_fini(&shared->lock);
        cm_free(shared);
    }
}

SluiceResult *api_result_wrap(PlResult *r)
{
    SluiceResult *out = cm_calloc(1, sizeof *out);
    if (out == NULL) {
        pl_result_free(r);
        return NULL;
    }
    out->r = r;
    cm_arena_init(&out->text_arena, 64 * 1024);
    return out;
}

/* Fails with SLUICE_MISUSE while db streams. */
static int check_idle(SluiceDb *db, SluiceError *err)
{
    return atomic_load(&db->is_streaming) ? api_misuse(err) : 0;
}

int api_misuse(SluiceError *err)
{
    if (err != NULL) {
        memset(err, 0, sizeof *err);
        err->code = SLUICE_MISUSE;
        err->offset = -1;
        snprintf(err->message, sizeof err->message,
                 "a streaming result is open on this connection: free it first");
    }
    return SLUICE_MISUSE;
}

int api_exec(SluiceDb *db, const char *sql, size_t len, size_t *off, const PlExecOpts *opts,
             SluiceResult **res, SluiceError *err)
{
    CmErr e;
    cm_err_init(&e);
    *res = NULL;
    if (err != NULL) {
        memset(err, 0, sizeof *err);
    }
    if (check_idle(db, err) != 0) {
        *off = ps_skip_statement(sql, len, *off);
        return SLUICE_MISUSE;
    }
    /* The wrapper first: once a statement has changed the database, nothing may
     * fail and report it as not done. */
    SluiceResult *out = cm_calloc(1, sizeof *out);
    if (out == NULL) {
        *off = ps_skip_statement(sql, len, *off);
        cm_err_set(&e, CM_OOM, -1, "out of memory");
        api_to_error(&e, NULL, 0, err);
        return e.code;
    }
    PlResult *r = NULL;
    cm_mutex_lock(&db->shared->lock);
    CmStatus rc = pl_session_exec_opts(db->session, sql, len, off, opts, &r, &e);
    cm_mutex_unlock(&db->shared->lock);
    if (rc != CM_OK || r == NULL) {
        cm_free(out);
        api_to_error(&e, sql, len, err);
        return e.code;
    }
    out->r = r;
    cm_arena_init(&out->text_arena, 64 * 1024);
    *res = out;
    return 0;
}

int sluice_exec_next(SluiceDb *db, const char *sql, size_t len, size_t *off, SluiceResult **res,
                     SluiceError *err)
{
    return api_exec(db, sql, len, off, NULL, res, err);
}

int sluice_exec(SluiceDb *db, const char *sql, SluiceResult **res, SluiceError *err)
{
    size_t len = strlen(sql), off = 0;
    SluiceResult *last = NULL;
    int rc = 0;
    while (off < len) {
        SluiceResult *r = NULL;
        rc = sluice_exec_next(db, sql, len, &off, &r, err);
        if (rc != 0) {
            break;
        }
        if (r != NULL) {
            sluice_result_free(last);
            last = r;
        }
    }
    if (res != NULL && rc == 0) {
        *res = last;
    } else {
        sluice_result_free(last);
        if (res != NULL) {
            *res = NULL;
        }
    }
    return rc;
}

void sluice_interrupt(SluiceDb *db)
{
    if (db != NULL) {
        pl_session_interrupt(db->session);
    }
}

int sluice_in_transaction(SluiceDb *db)
{
    return db != NULL && pl_session_in_transaction(db->session);
}

_Static_assert(sizeof((SluiceProgress *)0)->decision == sizeof((ExProgressView *)0)->decision,
               "the decision text is copied whole");

/* The session's progress reading, as the API's struct. */
static void on_progress(void *ctx, const ExProgressView *v)
{
    SluiceDb *db = ctx;
    SluiceProgress p = {.fraction = v->fraction,
                        .stage = v->stage,
                        .n_stages = v->n_stages,
                        .elapsed_ms = v->elapsed_ms,
                        .spilled_bytes = v->spilled_bytes};
    memcpy(p.decision, v->decision, sizeof p.decision);
    db->progress_fn(db->progress_ctx, &p);
}

void sluice_set_progress_handler(SluiceDb *db, SluiceProgressFn fn, void *ctx)
{
    db->progress_fn = fn;
    db->progress_ctx = ctx;
    pl_session_set_progress(db->session, fn != NULL ? on_progress : NULL, db);
}

bool sluice_complete(const char *sql, size_t len)
{
    return ps_is_complete(sql, len);
}

int sluice_set(SluiceDb *db, const char *name, const char *value, SluiceError *err)
{
    CmErr e;
    cm_err_init(&e);
    if (check_idle(db, err) != 0) {
        return SLUICE_MISUSE;
    }
    if (pl_session_set(db->session, name, value, &e) != CM_OK) {
        api_to_error(&e, NULL, 0, err);
        return e.code;
    }
    return 0;
}

int sluice_result_error(const SluiceResult *res, SluiceError *err)
{
    const CmErr *e = res->r->rows != NULL ? ex_result_read_err(res->r->rows) : NULL;
    if (e == NULL || e->code == CM_OK) {
        if (err != NULL) {
            memset(err, 0, sizeof *err);
        }
        return 0;
    }
    api_to_error(e, NULL, 0, err);
    return e->code;
}

int sluice_result_column_count(const SluiceResult *res)
{
    return res->r->rows ? res->r->n_cols : 0;
}

const char *sluice_result_column_name(const SluiceResult *res, int col)
{
    return res->r->names[col];
}

SluiceType sluice_result_column_type(const SluiceResult *res, int col)
{
    return api_type_of(ex_result_type(res->r->rows, col));
}

SluiceType api_type_of(CmType t)
{
    switch ((CmTypeId)t.id) {
    case CM_T_NULL:
        return SLUICE_NULLTYPE;
    case CM_T_BOOL:
        return SLUICE_BOOLEAN;
    case CM_T_INT32:
        return SLUICE_INTEGER;
    case CM_T_INT64:
        return SLUICE_BIGINT;
    case CM_T_DOUBLE:
        return SLUICE_DOUBLE;
    case CM_T_DECIMAL:
    case CM_T_DECIMAL128:
        return SLUICE_DECIMAL;
    case CM_T_VARCHAR:
        return SLUICE_VARCHAR;
    case CM_T_DATE:
        return SLUICE_DATE;
    case CM_T_TIME:
        return SLUICE_TIME;
    case CM_T_LIST:
        return SLUICE_LIST;
    case CM_T_TIMESTAMP:
        return SLUICE_TIMESTAMP;
    case CM_T_INTERVAL:
        return SLUICE_INTERVAL;
    }
    return SLUICE_NULLTYPE;
}

bool sluice_result_column_decimal(const SluiceResult *res, int col, int *precision, int *scale)
{
    CmType t = ex_result_type(res->r->rows, col);
    bool is_decimal = cm_type_is_decimal(t);
    *precision = is_decimal ? t.precision : 0;
    *scale = is_decimal ? t.scale : 0;
    return is_decimal;
}

int64_t sluice_result_row_count(const SluiceResult *res)
{
    return res->r->rows ? ex_result_n_rows(res->r->rows) : 0;
}

void api_cell(const SluiceResult *res, int64_t row, int col, CmValue *v)
{
    uint32_t pos;
    const CmBatch *b = ex_result_row_batch(res->r->rows, row, &pos);
    if (b == NULL) {
        memset(v, 0, sizeof *v);
        v->is_null = true;
        return;
    }
    cm_vec_get_value(&b->cols[col], pos, v);
}

bool sluice_result_is_null(const SluiceResult *res, int64_t row, int col)
{
    CmValue v;
    api_cell(res, row, col, &v);
    return v.is_null;
}

static const char *format(SluiceResult *res, const CmValue *v)
{
    if (v->type.id == CM_T_NULL) {
        return NULL;
    }
    if (v->type.id == CM_T_LIST) {
        CmType elem = cm_type_elem(v->type);
        size_t n = cm_fmt_list(&v->l, elem, NULL, 0);
        char *text = cm_arena_alloc(&res->text_arena, n + 1);
        if (text != NULL) {
            cm_fmt_list(&v->l, elem, text, n + 1);
        }
        return text;
    }
    char buf[CM_FMT_CAP];
    size_t n;
    const char *text = cm_fmt_value(v, buf, &n);
    return cm_arena_strndup(&res->text_arena, text, n);
}

const char *sluice_result_text(const SluiceResult *cres, int64_t row, int col)
{
    SluiceResult *res = (SluiceResult *)cres; /* the text cache is not part of the value */
    int n_cols = res->r->n_cols;
    if (res->text == NULL) {
        int64_t n = sluice_result_row_count(res) * n_cols;
        res->text = cm_calloc((size_t)(n ? n : 1), sizeof(char *));
        if (res->text == NULL) {
            return NULL;
        }
    }
    const char **slot = &res->text[row * n_cols + col];
    if (*slot == NULL) {
        CmValue v;
        api_cell(res, row, col, &v);
        if (v.is_null) {
            return NULL;
        }
        *slot = format(res, &v);
    }
    return *slot;
}

int64_t sluice_result_text_into(const SluiceResult *res, int64_t row, int col, char *buf,
                                size_t cap)
{
    CmValue v;
    api_cell(res, row, col, &v);
    if (v.is_null || v.type.id == CM_T_NULL) {
        return -1;
    }
    if (v.type.id == CM_T_LIST) {
        return (int64_t)cm_fmt_list(&v.l, cm_type_elem(v.type), buf, cap);
    }
    char tmp[CM_FMT_CAP];
    size_t n;
    const char *text = cm_fmt_value(&v, tmp, &n);
    if (cap > 0) {
        size_t k = n < cap - 1 ? n : cap - 1;
        memcpy(buf, text, k);
        buf[k] = '\0';
    }
    return (int64_t)n;
}

int64_t sluice_result_changes(const SluiceResult *res)
{
    return res->r->changes;
}

void sluice_result_free(SluiceResult *res)
{
    if (res != NULL) {
        pl_result_free(res->r);
        cm_free(res->text);
        cm_arena_fini(&res->text_arena);
        cm_free(res);
    }
}

/* The catalog is read under the database lock, against the DDL of other
 * connections; not while this connection streams: its stream holds the lock
 * then, and only reads. */
static bool lock_catalog(SluiceDb *db)
{
    bool is_locking = !atomic_load(&db->is_streaming);
    if (is_locking) {
        cm_mutex_lock(&db->shared->lock);
    }
    return is_locking;
}

static void unlock_catalog(SluiceDb *db, bool is_locking)
{
    if (is_locking) {
        cm_mutex_unlock(&db->shared->lock);
    }
}

/* The catalog's entries as db sees them: while another connection has a
 * transaction open, those it committed last (its statements read them). */
static int n_visible(SluiceDb *db)
{
    StCatalog *cat = pl_session_catalog(db->session);
    return pl_session_in_transaction(db->session) ? st_catalog_count(cat)
                                                  : st_catalog_committed_count(cat);
}

static StEntry *visible(SluiceDb *db, int idx)
{
    StCatalog *cat = pl_session_catalog(db->session);
    return pl_session_in_transaction(db->session) ? st_catalog_entry(cat, idx)
                                                  : st_catalog_committed_entry(cat, idx);
}

/* The idx-th table or view (indexes are not listed). */
static StEntry *nth_relation(SluiceDb *db, int idx)
{
    for (int i = 0; i < n_visible(db); i++) {
        StEntry *e = visible(db, i);
        if (e->kind != ST_ENTRY_INDEX && idx-- == 0) {
            return e;
        }
    }
    return NULL;
}

int sluice_table_count(SluiceDb *db)
{
    bool is_locking = lock_catalog(db);
    int n = 0;
    while (nth_relation(db, n) != NULL) {
        n++;
    }
    unlock_catalog(db, is_locking);
    return n;
}

const char *sluice_table_name(SluiceDb *db, int idx)
{
    bool is_locking = lock_catalog(db);
    StEntry *e = nth_relation(db, idx);
    unlock_catalog(db, is_locking);
    return e ? e->name : NULL;
}

const char *sluice_table_sql(SluiceDb *db, const char *name)
{
    bool is_locking = lock_catalog(db);
    StEntry *e = NULL;
    for (int i = 0; e == NULL && name != NULL && i < n_visible(db); i++) {
        e = strcmp(visible(db, i)->name, name) == 0 ? visible(db, i) : NULL;
    }
    unlock_catalog(db, is_locking);
    return e && e->kind != ST_ENTRY_INDEX ? e->create_sql : NULL;
}

const char *sluice_version(void)
{
    return "0.1.0";
}
