/*
 * test_errors.c - parser unit tests (suite ps_parse) for syntax errors and
 * their offsets, multi-statement scripts with ps_parse_next and recovery after
 * an error, ps_is_complete, ps_line_col, nesting limits and, in builds with
 * fault injection, out-of-memory handling.
 */
#include <stdlib.h>

#include "test_util.h"

#include <criterion/parameterized.h>

/* ======================================================================== */
/* syntax errors                                                             */
/* ======================================================================== */

Test(ps_parse, error_on_misspelled_keyword)
{
    CmErr err = parse_err("selec 1", CM_SYNTAX);
    cr_assert_eq(err.off, 0);
    cr_assert_eq(err.len, 5);
    cr_assert_str_eq(err.msg, "syntax error at or near 'selec'");
}

Test(ps_parse, error_at_end_of_input)
{
    CmErr err = parse_err("select 1 +", CM_SYNTAX);
    cr_assert_eq(err.off, 10);
    cr_assert_str_eq(err.msg, "syntax error at end of input");
    CHECK_ERR("select (1", 9, "syntax error at end of input");
    CHECK_ERR("select a from", 13, "syntax error at end of input");
    CHECK_ERR("select 1 +   -- trailing comment", 32, "syntax error at end of input");
}

Test(ps_parse, error_at_semicolon)
{
    CHECK_ERR("select 1 +;", 10, "syntax error at or near ';'");
    CHECK_ERR("select ;", 7, "syntax error at or near ';'");
}

Test(ps_parse, lexer_errors)
{
    CHECK_ERR("select 'abc", 7, "unterminated string literal");
    CHECK_ERR("select \"abc", 7, "unterminated quoted identifier");
    CHECK_ERR("select 1 /* x", 9, "unterminated /* comment");
    CHECK_ERR("select 1 ! 2", 9, "syntax error at or near '!'");
    CHECK_ERR("select 12abc", 7, "syntax error at or near '12abc'");
    CHECK_ERR("select \"\" from t", 7, "syntax error at or near '\"\"'");
}

Test(ps_parse, errors_inside_statements)
{
    CHECK_ERR("select * from t where a = = 1", 26, "syntax error at or near '='");
    CHECK_ERR("select a b c", 11, "syntax error at or near 'c'");
    CHECK_ERR("select * from t left join u", 27, "syntax error at end of input");
    CHECK_ERR("select * from t join u", 22, "syntax error at end of input");
    CHECK_ERR("create table t ()", 16, "syntax error at or near ')'");
    CHECK_ERR("insert into t", 13, "syntax error at end of input");
    CHECK_ERR("update t set", 12, "syntax error at end of input");
    CHECK_ERR("drop table", 10, "syntax error at end of input");
    CHECK_ERR("select case end", 12, "syntax error at or near 'end'");
    CHECK_ERR("select a from t order a", 22, "syntax error at or near 'a'");
    CHECK_ERR("select from t", 7, "syntax error at or near 'from'");
    CHECK_ERR("select * from t where select", 22, "syntax error at or near 'select'");
    CHECK_ERR("foo", 0, "syntax error at or near 'foo'");
}

Test(ps_parse, reserved_words_are_not_names)
{
    CHECK_ERR("select from from t", 7, "syntax error at or near 'from'");
    CHECK_ERR("create table t (select int)", 16, "syntax error at or near 'select'");
    CHECK_ERR("select * from order", 14, "syntax error at or near 'order'");
}

Test(ps_parse, long_tokens_are_cut_in_messages)
{
    char sql[300];
    memset(sql, 'x', sizeof sql);
    memcpy(sql, "select 1 1", 10); /* "1xxx.." is one bad token */
    sql[sizeof sql - 1] = '\0';
    CmErr err = parse_err(sql, CM_SYNTAX);
    cr_assert_eq(err.off, 9);
    cr_assert_eq(err.len, 290);
    cr_assert_lt(strlen(err.msg), 120);
}

Test(ps_parse, error_keeps_the_first_error)
{
    CmErr err;
    cm_err_init(&err);
    cm_err_set(&err, CM_IO, 3, "earlier");
    size_t off = 0;
    PsStmt *stmt = NULL;
    const char *sql = "selec 1";
    cr_assert_neq(ps_parse_next(&test_arena, sql, strlen(sql), &off, &stmt, &err), CM_OK);
    cr_assert_str_eq(err.msg, "earlier");
}

Test(ps_parse, deep_nesting_is_a_limit_error)
{
    enum { DEPTH = 2000 };
    char *sql = cm_arena_alloc(&test_arena, 2 * DEPTH + 16);
    strcpy(sql, "select ");
    size_t n = strlen(sql);
    memset(sql + n, '(', DEPTH);
    sql[n + DEPTH] = '1';
    memset(sql + n + DEPTH + 1, ')', DEPTH);
    sql[n + 2 * DEPTH + 1] = '\0';
    CmErr err = parse_err(sql, CM_LIMIT);
    cr_assert_str_eq(err.msg, "statement is nested too deeply");
    cr_assert_gt(err.off, 7);
    /* moderately deep nesting still parses */
    CHECK_EXPR("((((((((((((((((((((1))))))))))))))))))))", "1");
}

/* ======================================================================== */
/* scripts                                                                   */
/* ======================================================================== */

typedef struct Step {
    CmStatus rc;
    PsStmt *stmt;
    size_t off;
    CmErr err;
} Step;

/* Parses the next statement of sql from *off. */
static Step step(const char *sql, size_t *off)
{
    Step s;
    cm_err_init(&s.err);
    s.stmt = NULL;
    s.rc = ps_parse_next(&test_arena, sql, strlen(sql), off, &s.stmt, &s.err);
    s.off = *off;
    return s;
}

Test(ps_parse, script_of_statements)
{
    const char *sql = "create table t (a int); insert into t values (1);\nselect a from t;";
    size_t off = 0;
    Step s = step(sql, &off);
    cr_assert_eq(s.rc, CM_OK);
    cr_assert_eq(s.stmt->kind, PS_ST_CREATE_TABLE);
    cr_assert_eq(off, 23);
    s = step(sql, &off);
    cr_assert_eq(s.stmt->kind, PS_ST_INSERT);
    cr_assert_str_eq(span_text(sql, s.stmt->src_off, s.stmt->src_len), "insert into t values (1)");
    s = step(sql, &off);
    cr_assert_eq(s.stmt->kind, PS_ST_SELECT);
    cr_assert_eq(off, strlen(sql));
    s = step(sql, &off);
    cr_assert_eq(s.rc, CM_OK);
    cr_assert_null(s.stmt);
}

Test(ps_parse, script_without_final_semicolon)
{
    const char *sql = "select 1; select 2";
    size_t off = 0;
    cr_assert_eq(step(sql, &off).stmt->kind, PS_ST_SELECT);
    cr_assert_eq(off, 9);
    Step s = step(sql, &off);
    cr_assert_not_null(s.stmt);
    cr_assert_eq(off, strlen(sql));
    cr_assert_str_eq(span_text(sql, s.stmt->src_off, s.stmt->src_len), "select 2");
}

Test(ps_parse, empty_statements_and_comments_are_skipped)
{
    const char *sql = " ;; -- nothing\n ; /* x */ select 1 ;; ; -- end";
    size_t off = 0;
    Step s = step(sql, &off);
    cr_assert_eq(s.rc, CM_OK);
    cr_assert_not_null(s.stmt);
    cr_assert_str_eq(span_text(sql, s.stmt->src_off, s.stmt->src_len), "select 1");
    s = step(sql, &off);
    cr_assert_eq(s.rc, CM_OK);
    cr_assert_null(s.stmt);
    cr_assert_eq(off, strlen(sql));
}

Test(ps_parse, empty_script)
{
    size_t off = 0;
    Step s = step("", &off);
    cr_assert_eq(s.rc, CM_OK);
    cr_assert_null(s.stmt);
    cr_assert_eq(off, 0);
}

Test(ps_parse, recovery_after_an_error_in_the_middle)
{
    const char *sql = "select 1; selec 2; select 3";
    size_t off = 0;
    cr_assert_eq(step(sql, &off).rc, CM_OK);
    Step s = step(sql, &off);
    cr_assert_eq(s.rc, CM_SYNTAX);
    cr_assert_eq(s.err.off, 10);
    cr_assert_null(s.stmt);
    cr_assert_eq(off, 18);
    s = step(sql, &off);
    cr_assert_eq(s.rc, CM_OK);
    cr_assert_str_eq(span_text(sql, s.stmt->src_off, s.stmt->src_len), "select 3");
}

Test(ps_parse, recovery_skips_semicolons_in_quotes_and_comments)
{
    const char *sql = "select 1 + 'x;y' 'z;' /* ; */ -- ;\n ; select 2";
    size_t off = 0;
    Step s = step(sql, &off);
    cr_assert_eq(s.rc, CM_SYNTAX);
    cr_assert_eq(s.err.off, 17);
    cr_assert_eq(off, 37);
    s = step(sql, &off);
    cr_assert_eq(s.rc, CM_OK);
    cr_assert_eq(s.stmt->select->kind, PS_SEL_SIMPLE);
}

Test(ps_parse, recovery_when_the_error_is_the_semicolon)
{
    const char *sql = "select 1 +; select 2;";
    size_t off = 0;
    Step s = step(sql, &off);
    cr_assert_eq(s.rc, CM_SYNTAX);
    cr_assert_eq(off, 11);
    s = step(sql, &off);
    cr_assert_eq(s.rc, CM_OK);
    cr_assert_eq(off, strlen(sql));
}

Test(ps_parse, unterminated_string_consumes_the_rest)
{
    const char *sql = "select 1; select 'abc; select 3";
    size_t off = 0;
    cr_assert_eq(step(sql, &off).rc, CM_OK);
    Step s = step(sql, &off);
    cr_assert_eq(s.rc, CM_SYNTAX);
    cr_assert_eq(s.err.off, 17);
    cr_assert_eq(off, strlen(sql));
}

Test(ps_parse, error_at_end_of_script)
{
    const char *sql = "select 1; select";
    size_t off = 0;
    cr_assert_eq(step(sql, &off).rc, CM_OK);
    Step s = step(sql, &off);
    cr_assert_eq(s.rc, CM_SYNTAX);
    cr_assert_str_eq(s.err.msg, "syntax error at end of input");
    cr_assert_eq(s.err.off, 16);
    cr_assert_eq(off, strlen(sql));
}

Test(ps_parse, text_need_not_be_nul_terminated)
{
    const char sql[] = "select 1; select 2";
    size_t off = 0;
    PsStmt *stmt = NULL;
    CmErr err;
    cm_err_init(&err);
    /* only "select 1; sel" is visible: the second statement is cut off */
    cr_assert_eq(ps_parse_next(&test_arena, sql, 13, &off, &stmt, &err), CM_OK);
    cr_assert_eq(off, 9);
    cr_assert_eq(ps_parse_next(&test_arena, sql, 13, &off, &stmt, &err), CM_SYNTAX);
    cr_assert_str_eq(err.msg, "syntax error at or near 'sel'");
    cr_assert_eq(off, 13);
}

/* ======================================================================== */
/* ps_is_complete and ps_line_col                                            */
/* ======================================================================== */

static bool complete(const char *sql)
{
    return ps_is_complete(sql, strlen(sql));
}

Test(ps_parse, is_complete)
{
    cr_assert(complete("select 1;"));
    cr_assert(complete("select 1;  \n"));
    cr_assert(complete("select 1; -- done"));
    cr_assert(complete("select 1; /* done */"));
    cr_assert(complete(";"));
    cr_assert(complete("select 1; select 2;"));
    cr_assert_not(complete(""));
    cr_assert_not(complete("select 1"));
    cr_assert_not(complete("select 1; select 2"));
    cr_assert_not(complete("select ';'"));
    cr_assert_not(complete("select ';"));
    cr_assert_not(complete("select \";\""));
    cr_assert_not(complete("select 1 -- ;"));
    cr_assert_not(complete("select 1 /* ; */"));
    cr_assert_not(complete("select 1; /* unterminated"));
    cr_assert_not(complete("select 'it''s;'"));
}

Test(ps_parse, line_col)
{
    const char *sql = "select 1,\n  b\n\nfrom t";
    size_t len = strlen(sql);
    int line = 0;
    int col = 0;
    ps_line_col(sql, len, 0, &line, &col);
    cr_assert(line == 1 && col == 1);
    ps_line_col(sql, len, 7, &line, &col);
    cr_assert(line == 1 && col == 8);
    ps_line_col(sql, len, 12, &line, &col);
    cr_assert(line == 2 && col == 3, "%d:%d", line, col);
    ps_line_col(sql, len, 15, &line, &col);
    cr_assert(line == 4 && col == 1, "%d:%d", line, col);
    ps_line_col(sql, len, len, &line, &col);
    cr_assert(line == 4 && col == 7, "%d:%d", line, col);
    ps_line_col(sql, len, len + 100, &line, &col);
    cr_assert(line == 4 && col == 7);
}

/* ======================================================================== */
/* out of memory (needs a build with fault injection: no NDEBUG)             */
/* ======================================================================== */

#ifndef NDEBUG
/* Fails the n-th heap allocation and every later one; each case runs in its
 * own process, so the allocator reads CM_FAULT_AFTER afresh. */
static void oom_case(int n)
{
    char value[16];
    snprintf(value, sizeof value, "%d", n);
    setenv("CM_FAULT_AFTER", value, 1);
    CmArena arena;
    cm_arena_init(&arena, 256);
    const char *sql = "with w (x) as (select a, sum(b) over (partition by c order by d) "
                      "from t join u using (k) where e in (1, 2, 3) and f like 'x%' "
                      "group by rollup(a, b)) select x::decimal(7,2), 'it''s', -1.5, "
                      "case when x then 1 else 2 end from w, v order by 1 limit 5; "
                      "insert into t (a, b) values (1, 2), (3, 4);";
    size_t off = 0;
    size_t len = strlen(sql);
    while (off < len) {
        PsStmt *stmt = NULL;
        CmErr err;
        cm_err_init(&err);
        CmStatus rc = ps_parse_next(&arena, sql, len, &off, &stmt, &err);
        cr_assert(rc == CM_OK || rc == CM_OOM, "fault %d: %d %s", n, rc, err.msg);
        cr_assert(rc == CM_OK || stmt == NULL);
    }
    cm_arena_fini(&arena);
}

ParameterizedTestParameters(ps_parse, out_of_memory_is_reported)
{
    static int faults[60];
    for (int idx = 0; idx < 60; idx++) {
        faults[idx] = idx + 1;
    }
    return cr_make_param_array(int, faults, 60);
}

ParameterizedTest(int *fault, ps_parse, out_of_memory_is_reported)
{
    oom_case(*fault);
}
#endif
