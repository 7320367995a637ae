/*
 * test_util.h - helpers shared by the parser's unit tests: parse one statement
 * into the suite's arena and compare its S-expression (see ast_dump.c), parse
 * an expression, or expect an error at an offset.
 * Each test file defines the arena the helpers use (`test_arena`) and sets it
 * up and down with its suite's .init/.fini.
 */
#pragma once

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "ast_dump.h"
#include "parser/parser.h"

extern CmArena test_arena;

/* The only statement of sql; fails the test on an error or a second statement. */
static inline PsStmt *parse_one(const char *sql)
{
    size_t len = strlen(sql);
    size_t off = 0;
    PsStmt *stmt = NULL;
    CmErr err;
    cm_err_init(&err);
    CmStatus rc = ps_parse_next(&test_arena, sql, len, &off, &stmt, &err);
    cr_assert_eq(rc, CM_OK, "%s\n-> %s at %lld", sql, err.msg, (long long)err.off);
    cr_assert_not_null(stmt, "%s: no statement", sql);
    PsStmt *more = NULL;
    rc = ps_parse_next(&test_arena, sql, len, &off, &more, &err);
    cr_assert(rc == CM_OK && more == NULL, "%s: more than one statement", sql);
    return stmt;
}

/* The statement's S-expression. */
static inline const char *sexp(const char *sql)
{
    return dump_stmt(&test_arena, parse_one(sql));
}

/* The first select-list expression of "select <expr>". */
static inline const PsExpr *expr_node(const char *expr)
{
    char sql[4096];
    snprintf(sql, sizeof sql, "select %s", expr);
    PsStmt *stmt = parse_one(sql);
    cr_assert_eq(stmt->kind, PS_ST_SELECT);
    const PsTarget *t = stmt->select->targets->items[0];
    return t->expr;
}

/* The S-expression of "select <expr>"'s first expression. */
static inline const char *expr_sexp(const char *expr)
{
    return dump_expr(&test_arena, expr_node(expr));
}

/* Parses sql expecting `code`; returns the error. */
static inline CmErr parse_err(const char *sql, CmStatus code)
{
    size_t off = 0;
    PsStmt *stmt = NULL;
    CmErr err;
    cm_err_init(&err);
    CmStatus rc = ps_parse_next(&test_arena, sql, strlen(sql), &off, &stmt, &err);
    cr_assert_eq(rc, code, "%s: got %d (%s), want %d", sql, rc, err.msg, code);
    cr_assert_eq(err.code, code);
    cr_assert_null(stmt);
    return err;
}

#define CHECK(sql, want) cr_assert_str_eq(sexp(sql), (want), "%s", (sql))
#define CHECK_EXPR(expr, want) cr_assert_str_eq(expr_sexp(expr), (want), "%s", (expr))

/* A syntax error at byte `at` whose message is `msg`. */
#define CHECK_ERR(sql, at, want_msg)                                                               \
    do {                                                                                           \
        CmErr e_ = parse_err((sql), CM_SYNTAX);                                                    \
        cr_assert_eq(e_.off, (at), "%s: error at %lld, want %d (%s)", (sql), (long long)e_.off,    \
                     (at), e_.msg);                                                                \
        cr_assert_str_eq(e_.msg, (want_msg), "%s", (sql));                                         \
    } while (0)

/* The text a span covers. */
static inline const char *span_text(const char *sql, int64_t off, int64_t len)
{
    return cm_arena_strndup(&test_arena, sql + off, (size_t)len);
}
