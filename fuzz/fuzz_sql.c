/*
 * fuzz_sql.c - libFuzzer target: the SQL front end (parse, bind, plan).
 *
 * The input is SQL text (not NUL-terminated, so ASan sees any read past its
 * end).  Each input gets a fresh session holding a fixed schema (tables of
 * every type, constraints, views, an index; no rows: planning needs none).
 * Its statements, up to MAX_STMTS, are parsed one by one.  CREATE TABLE
 * (without AS), CREATE VIEW, CREATE INDEX and DROP go through the session, so
 * an input can make the names it queries; they touch only empty tables (a
 * view over WITH RECURSIVE is left out: creating it runs the recursion).  The
 * queries (SELECT, EXPLAIN, CREATE TABLE AS, INSERT ... SELECT,
 * UPDATE (as the expressions of an UPDATE in place too), DELETE, CACHE ... AS)
 * are bound, planned into stages and explained,
 * but never run, so no input can start a scan or a long computation.  WITH
 * RECURSIVE is not materialized (that runs the anchor): a recursive reference
 * binds as an unknown name.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/config.h"
#include "common/err.h"
#include "parser/parser.h"
#include "planner/bind/binder.h"
#include "planner/physical.h"
#include "planner/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MAX_STMTS 8

/* The memory limit keeps a value the fuzzer asks for (repeat(' x ', 1073741823):
 * 3 GB) under libFuzzer's -rss_limit_mb: accounted heaps refuse it, as they
 * would past any user's limit, instead of the fuzzer reporting out-of-memory. */
static const char SCHEMA[] =
    "SET memory_limit = '512MB';"
    "CREATE TABLE t1(i INTEGER, b BIGINT, d DOUBLE, m DECIMAL(10,2), s VARCHAR, c CHAR(4),"
    " dt DATE, tm TIME, f BOOLEAN);"
    "CREATE TABLE t2(id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, t1_i INTEGER DEFAULT 0,"
    " UNIQUE (name));"
    "CREATE TABLE t3(k BIGINT, v VARCHAR);"
    "CREATE VIEW v1 AS SELECT i, s, dt FROM t1 WHERE f;"
    "CREATE VIEW v2(n, total) AS SELECT name, sum(i) FROM t2 JOIN t1 ON t1.i = t2.t1_i GROUP BY "
    "name;"
    "CREATE INDEX t1_i ON t1(i);";

static CmConfig g_cfg;

/* A session with the schema; aborts on failure (the schema is fixed). */
static PlSession *new_session(void)
{
    CmErr err;
    cm_err_init(&err);
    PlSession *s = pl_session_new(&err);
    size_t off = 0, len = strlen(SCHEMA);
    while (s != NULL && off < len) {
        PlResult *res = NULL;
        if (pl_session_exec(s, SCHEMA, len, &off, &res, &err) != CM_OK) {
            fprintf(stderr, "fuzz_sql: schema: %s\n", err.msg);
            abort();
        }
        pl_result_free(res);
    }
    if (s == NULL) {
        abort();
    }
    return s;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    cm_config_init(&g_cfg);
    return 0;
}

static void ignore_line(void *ctx, const char *line)
{
    (void)ctx;
    (void)line;
}

static PlNode *bind_stmt(PlSession *s, PlBinder *b, const PsStmt *st)
{
    switch (st->kind) {
    case PS_ST_SELECT:
    case PS_ST_CREATE_VIEW:
    case PS_ST_CREATE_TABLE:
    case PS_ST_INSERT:
    case PS_ST_CACHE:
        return st->select != NULL ? pl_bind_select(b, st->select) : NULL;
    case PS_ST_EXPLAIN:
        return st->inner != NULL ? bind_stmt(s, b, st->inner) : NULL;
    case PS_ST_UPDATE:
    case PS_ST_DELETE: {
        StEntry *e = st_catalog_find(pl_session_catalog(s), st->table);
        if (e == NULL || e->kind != ST_ENTRY_TABLE) {
            return NULL;
        }
        /* the expressions of an UPDATE or DELETE in place, then the plan by address */
        ExExpr *pred;
        ExExpr **set = cm_arena_zalloc(b->arena, sizeof(ExExpr *) * (size_t)(e->table->n_cols + 1));
        bool *in_plan = cm_arena_zalloc(b->arena, sizeof(bool) * (size_t)(e->table->n_cols + 1));
        if (set == NULL || in_plan == NULL ||
            (!pl_bind_update_values(b, e->table, st, &pred, set) && b->err->code != CM_OK)) {
            return NULL;
        }
        b->update_target = st->from != NULL ? e->table : NULL;
        return pl_bind_changes(b, e->table, st, in_plan);
    }
    default:
        return NULL;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *sql = (const char *)data;
    PlSession *s = new_session();
    CmArena arena;
    cm_arena_init(&arena, 0);
    size_t off = 0;
    for (int n = 0; n < MAX_STMTS && off < size; n++) {
        CmErr err;
        cm_err_init(&err);
        PsStmt *st = NULL;
        size_t before = off;
        CmStatus rc = ps_parse_next(&arena, sql, size, &off, &st, &err);
        if (off <= before) {
            abort(); /* the parser always moves on: callers loop until off == len */
        }
        if (rc != CM_OK || st == NULL) {
            continue;
        }
        bool is_ddl = (st->kind == PS_ST_CREATE_TABLE && st->select == NULL) ||
                      st->kind == PS_ST_CREATE_INDEX || st->kind == PS_ST_DROP ||
                      (st->kind == PS_ST_CREATE_VIEW && !st->select->recursive);
        if (is_ddl) {
            PlResult *res = NULL;
            pl_session_exec(s, sql, size, &before, &res, &err);
            pl_result_free(res);
            cm_arena_reset(&arena);
            continue;
        }
        PlTemp *keep = NULL;
        PlBinder b = {
            .arena = &arena, .cat = pl_session_catalog(s), .sql = sql, .keep = &keep, .err = &err};
        PlNode *root = bind_stmt(s, &b, st);
        if (root != NULL) {
            PlStagePlan plan;
            memset(&plan, 0, sizeof plan);
            if (pl_physical_plan(&arena, root, &g_cfg, NULL, &plan, &err) == CM_OK) {
                pl_explain_plan(&plan, false, ignore_line, NULL);
            }
            pl_stage_plan_fini(&plan);
        }
        pl_temps_free(keep);
        cm_arena_reset(&arena);
    }
    cm_arena_fini(&arena);
    pl_session_free(s);
    return 0;
}
