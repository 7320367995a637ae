/*
 * stmt.c - prepared statements: one statement's text, checked once, and the
 * values bound to its parameters.
 *
 * The statement is parsed again at every execution (it is cheap next to
 * running it, and sees the catalog as it is then); the values go to the
 * binder, which turns each parameter into a constant of the value's type.
 * Text values are copies owned by the statement, kept until bound again.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/api_int.h"
#include "common/alloc.h"
#include "parser/parser.h"

struct SluiceStmt {
    SluiceDb *db; /* borrowed: the connection it runs on */
    char *sql;    /* owned copy */
    size_t len;
    int n_params;
    CmValue *values; /* n_params; VARCHAR bytes in texts[i] */
    bool *is_bound;  /* n_params */
    char **texts;    /* n_params owned copies of text values, or NULL */
    SluiceError err; /* the last bind error */
};

int api_check_one(const char *sql, size_t len, int *n_params, CmErr *err)
{
    CmArena arena;
    cm_arena_init(&arena, 16 * 1024);
    size_t off = 0;
    PsStmt *ast = NULL;
    if (ps_parse_next(&arena, sql, len, &off, &ast, err) == CM_OK) {
        size_t next = ps_next_statement_off(sql, len, off);
        if (ast == NULL) {
            cm_err_set(err, CM_SYNTAX, -1, "no statement to prepare");
        } else if (next < len) {
            cm_err_set(err, CM_SYNTAX, (int64_t)next,
                       "only one statement can be prepared; a second begins here");
        } else {
            *n_params = ast->n_params;
        }
    }
    cm_arena_fini(&arena);
    return err->code;
}

int sluice_prepare(SluiceDb *db, const char *sql, SluiceStmt **stmt, SluiceError *err)
{
    CmErr e;
    cm_err_init(&e);
    *stmt = NULL;
    size_t len = strlen(sql);
    int n = 0;
    if (api_check_one(sql, len, &n, &e) != CM_OK) {
        api_to_error(&e, sql, len, err);
        return e.code;
    }
    SluiceStmt *st = cm_calloc(1, sizeof *st);
    size_t slots = (size_t)(n > 0 ? n : 1);
    if (st == NULL || (st->sql = cm_malloc(len + 1)) == NULL ||
        (st->values = cm_calloc(slots, sizeof *st->values)) == NULL ||
        (st->is_bound = cm_calloc(slots, sizeof *st->is_bound)) == NULL ||
        (st->texts = cm_calloc(slots, sizeof *st->texts)) == NULL) {
        sluice_finalize(st);
        cm_err_set(&e, CM_OOM, -1, "out of memory");
        api_to_error(&e, NULL, 0, err);
        return e.code;
    }
    memcpy(st->sql, sql, len + 1);
    st->len = len;
    st->n_params = n;
    st->db = db;
    *stmt = st;
    api_to_error(&e, NULL, 0, err);
    return 0;
}

int sluice_stmt_param_count(const SluiceStmt *stmt)
{
    return stmt->n_params;
}

__attribute__((format(printf, 3, 4))) static int stmt_fail(SluiceStmt *stmt, int code,
                                                           const char *fmt, ...)
{
    memset(&stmt->err, 0, sizeof stmt->err);
    stmt->err.code = code;
    stmt->err.offset = -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(stmt->err.message, sizeof stmt->err.message, fmt, ap);
    va_end(ap);
    return code;
}

/* The slot of parameter idx, emptied, or NULL with the statement's error set. */
static CmValue *slot(SluiceStmt *stmt, int idx, int *rc)
{
    if (atomic_load(&stmt->db->is_streaming)) {
        *rc = stmt_fail(stmt, SLUICE_MISUSE,
                        "cannot bind $%d: a streaming result is open on the connection", idx);
        return NULL;
    }
    if (idx < 1 || idx > stmt->n_params) {
        *rc = stmt_fail(stmt, SLUICE_RANGE,
                        "parameter index %d is out of range: the statement has %d", idx,
                        stmt->n_params);
        return NULL;
    }
    *rc = 0;
    cm_free(stmt->texts[idx - 1]);
    stmt->texts[idx - 1] = NULL;
    stmt->is_bound[idx - 1] = true;
    CmValue *v = &stmt->values[idx - 1];
    memset(v, 0, sizeof *v);
    return v;
}

int sluice_bind_int64(SluiceStmt *stmt, int idx, int64_t value)
{
    int rc;
    CmValue *v = slot(stmt, idx, &rc);
    if (v != NULL) {
        v->type = cm_type_make(CM_T_INT64);
        v->i = value;
    }
    return rc;
}

int sluice_bind_double(SluiceStmt *stmt, int idx, double value)
{
    int rc;
    CmValue *v = slot(stmt, idx, &rc);
    if (v != NULL) {
        v->type = cm_type_make(CM_T_DOUBLE);
        v->d = value;
    }
    return rc;
}

int sluice_bind_bool(SluiceStmt *stmt, int idx, bool value)
{
    int rc;
    CmValue *v = slot(stmt, idx, &rc);
    if (v != NULL) {
        v->type = cm_type_make(CM_T_BOOL);
        v->i = value;
    }
    return rc;
}

int sluice_bind_null(SluiceStmt *stmt, int idx)
{
    int rc;
    CmValue *v = slot(stmt, idx, &rc);
    if (v != NULL) {
        v->type = cm_type_make(CM_T_NULL);
        v->is_null = true;
    }
    return rc;
}

int sluice_bind_date(SluiceStmt *stmt, int idx, int32_t days)
{
    int rc;
    CmValue *v = slot(stmt, idx, &rc);
    if (v != NULL) {
        v->type = cm_type_make(CM_T_DATE);
        v->i = days;
    }
    return rc;
}

int sluice_bind_decimal(SluiceStmt *stmt, int idx, int64_t value, int scale)
{
    if (scale < 0 || scale > 18) {
        return stmt_fail(stmt, SLUICE_RANGE,
                         "cannot bind $%d: a DECIMAL's scale is 0 to 18, not %d", idx, scale);
    }
    int rc;
    CmValue *v = slot(stmt, idx, &rc);
    if (v != NULL) {
        v->type = cm_type_decimal(18, scale);
        v->i = value;
    }
    return rc;
}

int sluice_bind_text(SluiceStmt *stmt, int idx, const char *value, int64_t len)
{
    size_t n = len < 0 ? strlen(value) : (size_t)len;
    if (n > UINT32_MAX) {
        return stmt_fail(stmt, SLUICE_LIMIT, "cannot bind $%d: text longer than 4 GiB", idx);
    }
    char *copy = cm_malloc(n + 1);
    if (copy == NULL) {
        return stmt_fail(stmt, SLUICE_OOM, "out of memory binding $%d", idx);
    }
    if (n > 0) {
        memcpy(copy, value, n);
    }
    copy[n] = '\0';
    int rc;
    CmValue *v = slot(stmt, idx, &rc);
    if (v == NULL) {
        cm_free(copy);
        return rc;
    }
    stmt->texts[idx - 1] = copy;
    v->type = cm_type_varchar(-1, false);
    v->s = cm_str_make(copy, (uint32_t)n);
    return rc;
}

int sluice_clear_bindings(SluiceStmt *stmt)
{
    for (int i = 0; i < stmt->n_params; i++) {
        cm_free(stmt->texts[i]);
        stmt->texts[i] = NULL;
        stmt->is_bound[i] = false;
    }
    return 0;
}

int sluice_reset(SluiceStmt *stmt)
{
    memset(&stmt->err, 0, sizeof stmt->err);
    return 0;
}

int sluice_stmt_error(const SluiceStmt *stmt, SluiceError *err)
{
    if (err != NULL) {
        *err = stmt->err;
    }
    return stmt->err.code;
}

/* The options that hand the statement's values to the binder. */
static PlExecOpts exec_opts(const SluiceStmt *stmt, PlParams *p)
{
    *p = (PlParams){.n = stmt->n_params, .values = stmt->values, .is_bound = stmt->is_bound};
    return (PlExecOpts){.params = p};
}

int sluice_execute(SluiceStmt *stmt, SluiceResult **res, SluiceError *err)
{
    PlParams p;
    PlExecOpts o = exec_opts(stmt, &p);
    size_t off = 0;
    return api_exec(stmt->db, stmt->sql, stmt->len, &off, &o, res, err);
}

int sluice_execute_stream(SluiceStmt *stmt, SluiceStream **out, SluiceError *err)
{
    PlParams p;
    PlExecOpts o = exec_opts(stmt, &p);
    return api_stream_start(stmt->db, stmt->sql, stmt->len, &o, out, err);
}

void sluice_finalize(SluiceStmt *stmt)
{
    if (stmt == NULL) {
        return;
    }
    for (int i = 0; stmt->texts != NULL && i < stmt->n_params; i++) {
        cm_free(stmt->texts[i]);
    }
    cm_free(stmt->texts);
    cm_free(stmt->is_bound);
    cm_free(stmt->values);
    cm_free(stmt->sql);
    cm_free(stmt);
}
