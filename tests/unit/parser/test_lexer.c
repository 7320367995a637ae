/*
 * test_lexer.c - unit tests of the SQL tokenizer (parser/lexer.c): token
 * kinds, slices, literals, comments, operators, keywords and lexer errors.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "parser/lexer.h"

#define MAX_TOKENS 64

typedef struct Lexed {
    int n; /* tokens before the end of input */
    PsToken toks[MAX_TOKENS];
    CmStatus rc; /* CM_OK, or the error that stopped the scan */
    CmErr err;
} Lexed;

/* Lexes the whole string into `out`. */
static void lex_all(const char *sql, Lexed *out)
{
    size_t len = strlen(sql);
    size_t pos = 0;
    memset(out, 0, sizeof *out);
    cm_err_init(&out->err);
    while (out->n < MAX_TOKENS) {
        PsToken tok;
        out->rc = ps_lexer_next(sql, len, pos, &tok, &out->err);
        if (out->rc != CM_OK || tok.type == 0) {
            return;
        }
        out->toks[out->n++] = tok;
        pos = (size_t)(tok.off + tok.len);
    }
}

/* Space-separated token names of sql, e.g. "SELECT INTEGER SEMI". */
static const char *names(const char *sql)
{
    static char buf[1024];
    Lexed lx;
    lex_all(sql, &lx);
    cr_assert_eq(lx.rc, CM_OK, "%s: %s", sql, lx.err.msg);
    buf[0] = '\0';
    for (int idx = 0; idx < lx.n; idx++) {
        if (idx > 0) {
            strcat(buf, " ");
        }
        strcat(buf, ps_lexer_token_name(lx.toks[idx].type));
    }
    return buf;
}

/* The text of token idx of sql. */
static const char *text(const char *sql, int idx)
{
    static char buf[256];
    Lexed lx;
    lex_all(sql, &lx);
    cr_assert(idx < lx.n, "%s has only %d tokens", sql, lx.n);
    snprintf(buf, sizeof buf, "%.*s", (int)lx.toks[idx].len, sql + lx.toks[idx].off);
    return buf;
}

Test(ps_lexer, empty_and_blank_input)
{
    cr_assert_str_eq(names(""), "");
    cr_assert_str_eq(names("  \t\n\r "), "");
    cr_assert_str_eq(names("-- only a comment"), "");
    cr_assert_str_eq(names("/* block */ -- line\n"), "");
}

Test(ps_lexer, end_token_is_at_len)
{
    PsToken tok;
    CmErr err;
    cm_err_init(&err);
    cr_assert_eq(ps_lexer_next("abc   ", 6, 3, &tok, &err), CM_OK);
    cr_assert_eq(tok.type, 0);
    cr_assert_eq(tok.off, 6);
    cr_assert_eq(tok.len, 0);
}

Test(ps_lexer, slices_have_offsets_and_lengths)
{
    Lexed lx;
    lex_all("select  a1,\n\"Q\" from t;", &lx);
    cr_assert_eq(lx.n, 7);
    int64_t want[7][2] = {{0, 6}, {8, 2}, {10, 1}, {12, 3}, {16, 4}, {21, 1}, {22, 1}};
    for (int idx = 0; idx < 7; idx++) {
        cr_assert_eq(lx.toks[idx].off, want[idx][0], "token %d", idx);
        cr_assert_eq(lx.toks[idx].len, want[idx][1], "token %d", idx);
    }
}

Test(ps_lexer, keywords_are_case_insensitive)
{
    cr_assert_str_eq(names("SELECT select SeLeCt"), "SELECT SELECT SELECT");
    cr_assert_str_eq(names("from WHERE Group by"), "FROM WHERE GROUP BY");
    cr_assert_str_eq(names("selects fromage _select"), "ID ID ID");
}

Test(ps_lexer, keyword_table_is_sorted_and_complete)
{
    int n = ps_lexer_n_keywords();
    cr_assert_gt(n, 50);
    for (int idx = 0; idx < n; idx++) {
        const char *kw = ps_lexer_keyword_at(idx);
        if (idx > 0) {
            cr_assert_lt(strcmp(ps_lexer_keyword_at(idx - 1), kw), 0, "%s out of order", kw);
        }
        int code = ps_lexer_keyword(kw, strlen(kw));
        cr_assert_neq(code, 0, "%s not found", kw);
        cr_assert_str_eq(ps_lexer_token_name(code), kw);
    }
    cr_assert_eq(ps_lexer_keyword("selectx", 7), 0);
    cr_assert_eq(ps_lexer_keyword("", 0), 0);
    cr_assert_eq(ps_lexer_keyword("a_very_long_identifier_name", 27), 0);
}

Test(ps_lexer, identifiers)
{
    cr_assert_str_eq(names("a _b c1 d$e f_2$"), "ID ID ID ID ID");
    cr_assert_str_eq(text("x  ab$c_1 ", 1), "ab$c_1");
    cr_assert_str_eq(names("caf\xc3\xa9"), "ID"); /* UTF-8 letters */
}

Test(ps_lexer, quoted_identifiers)
{
    cr_assert_str_eq(names("\"Select\" \"a b\" \"x\"\"y\""), "ID ID ID");
    cr_assert_str_eq(text("\"x\"\"y\" z", 0), "\"x\"\"y\"");
    cr_assert_str_eq(names("\"\""), "ILLEGAL"); /* zero-length */
}

Test(ps_lexer, strings)
{
    cr_assert_str_eq(names("'abc' '' 'it''s'"), "STRING STRING STRING");
    cr_assert_str_eq(text("'it''s' x", 0), "'it''s'");
    cr_assert_str_eq(text("'a;b' x", 0), "'a;b'");
    cr_assert_str_eq(text("'--x' y", 0), "'--x'");
}

Test(ps_lexer, integers_and_decimals)
{
    cr_assert_str_eq(names("0 42 123456789012345678901234567890"), "INTEGER INTEGER INTEGER");
    cr_assert_str_eq(names("1.5 .5 1. 1e10 1.5E-3 2e+7"), "FLOAT FLOAT FLOAT FLOAT FLOAT FLOAT");
    cr_assert_str_eq(text("1.5E-3)", 0), "1.5E-3");
    cr_assert_str_eq(text(".5+1", 0), ".5");
}

Test(ps_lexer, number_followed_by_letters_is_illegal)
{
    cr_assert_str_eq(names("12abc"), "ILLEGAL");
    cr_assert_str_eq(names("1e"), "ILLEGAL");
    cr_assert_str_eq(text("1ex 2", 0), "1ex");
}

Test(ps_lexer, dot_is_an_operator_unless_a_digit_follows)
{
    cr_assert_str_eq(names("t.a"), "ID DOT ID");
    cr_assert_str_eq(names("t.*"), "ID DOT STAR");
    cr_assert_str_eq(names("x.5"), "ID FLOAT");
}

Test(ps_lexer, operators)
{
    cr_assert_str_eq(names("+ - * / % || = == <> != < <= > >="),
                     "PLUS MINUS STAR SLASH PERCENT CONCAT EQ EQ NE NE LT LE GT GE");
    cr_assert_str_eq(names("( ) , . ; :: & | << >> ~"),
                     "LP RP COMMA DOT SEMI DCOLON BITAND BITOR SHL SHR TILDE");
    cr_assert_str_eq(names("a::int"), "ID DCOLON ID");
    cr_assert_str_eq(names("1<>2"), "INTEGER NE INTEGER");
    /* struct literals: {'a': 1} */
    cr_assert_str_eq(names("{'a': 1}"), "LBRACE STRING COLON INTEGER RBRACE");
}

Test(ps_lexer, unknown_characters_are_illegal_tokens)
{
    cr_assert_str_eq(names("a ! b"), "ID ILLEGAL ID");
    cr_assert_str_eq(names("?"), "PARAM");
    cr_assert_str_eq(names("$x"), "ILLEGAL ID");
    cr_assert_str_eq(names("@"), "ILLEGAL");
}

Test(ps_lexer, comments)
{
    cr_assert_str_eq(names("a -- comment ; b\nc"), "ID ID");
    cr_assert_str_eq(names("a /* ; ' \" */ b"), "ID ID");
    cr_assert_str_eq(names("a/**/b"), "ID ID");
    cr_assert_str_eq(names("1 - -1"), "INTEGER MINUS MINUS INTEGER");
    cr_assert_str_eq(names("1--1"), "INTEGER");
    cr_assert_str_eq(names("a /*/ b */ c"), "ID ID");
}

Test(ps_lexer, unterminated_string)
{
    Lexed lx;
    lex_all("select 'abc", &lx);
    cr_assert_eq(lx.rc, CM_SYNTAX);
    cr_assert_eq(lx.err.off, 7);
    cr_assert_str_eq(lx.err.msg, "unterminated string literal");
    lex_all("'it''s", &lx);
    cr_assert_eq(lx.rc, CM_SYNTAX);
    cr_assert_eq(lx.err.off, 0);
}

Test(ps_lexer, unterminated_quoted_identifier)
{
    Lexed lx;
    lex_all("select \"abc", &lx);
    cr_assert_eq(lx.rc, CM_SYNTAX);
    cr_assert_eq(lx.err.off, 7);
    cr_assert_str_eq(lx.err.msg, "unterminated quoted identifier");
}

Test(ps_lexer, unterminated_block_comment)
{
    Lexed lx;
    lex_all("select 1 /* never closed *", &lx);
    cr_assert_eq(lx.rc, CM_SYNTAX);
    cr_assert_eq(lx.err.off, 9);
    cr_assert_str_eq(lx.err.msg, "unterminated /* comment");
    cr_assert_eq(lx.n, 2);
}

Test(ps_lexer, text_need_not_be_nul_terminated)
{
    const char sql[] = {'s', 'e', 'l', 'e', 'c', 't', ' ', '1', '2', 'x'};
    PsToken tok;
    CmErr err;
    cm_err_init(&err);
    cr_assert_eq(ps_lexer_next(sql, 9, 6, &tok, &err), CM_OK);
    cr_assert_str_eq(ps_lexer_token_name(tok.type), "INTEGER");
    cr_assert_eq(tok.off, 7);
    cr_assert_eq(tok.len, 2);
    cr_assert_eq(ps_lexer_next(sql, 2, 0, &tok, &err), CM_OK);
    cr_assert_str_eq(ps_lexer_token_name(tok.type), "ID");
    cr_assert_eq(tok.len, 2);
    const char quote[] = {'\'', 'a', '\''};
    cr_assert_eq(ps_lexer_next(quote, 2, 0, &tok, &err), CM_SYNTAX);
}

Test(ps_lexer, token_names)
{
    cr_assert_str_eq(ps_lexer_token_name(0), "EOF");
    cr_assert_str_eq(ps_lexer_token_name(ps_lexer_keyword("not", 3)), "NOT");
    cr_assert_str_eq(ps_lexer_token_name(-5), "?");
}

Test(ps_lexer, parameters)
{
    cr_assert_str_eq(names("a = ? and b = $12"), "ID EQ PARAM AND ID EQ PARAM");
    cr_assert_str_eq(text("a = $12", 2), "$12");
    cr_assert_str_eq(names("a$1 $"), "ID ILLEGAL");
}
