/*
 * parse.c - the parser's driver and public entry points (parser.h).
 *
 * ps_parse_next() pulls tokens from the lexer and pushes them into the Lemon
 * parser for one statement: up to and including its ';' (or the end of the
 * text), then the end-of-input token.  Before each token it records in the
 * parse context the end of the previous token (`prev_end`): every reduction
 * triggered by this token ends there, which is how nodes get their spans.
 * NOT directly followed by BETWEEN, IN, LIKE or ILIKE is passed as NOT_LA so
 * that the grammar can give it the precedence of those operators, and NOT NULL
 * right after the end of an expression as one NOTNULL token (see next_token).
 * After an error the driver stops feeding the parser and skips to just past
 * the next ';' outside quotes and comments, where the caller can resume.
 * The Lemon parser object is heap-allocated per statement (through cm_malloc)
 * and always freed before returning; AST nodes are in the caller's arena.
 */
#include "parser/parser.h"

#include <string.h>

#include "common/alloc.h"
#include "grammar.h"
#include "parser/lexer.h"
#include "parser/parse_int.h"

/* ---- lists (declared in ast.h) ------------------------------------------- */

PsList *ps_list_append(CmArena *arena, PsList *list, void *item)
{
    if (list == NULL) {
        list = cm_arena_zalloc(arena, sizeof(PsList));
        if (list == NULL) {
            return NULL;
        }
    }
    if (list->n == list->cap) {
        int cap = list->cap == 0 ? 4 : list->cap * 2;
        void **items = cm_arena_alloc(arena, (size_t)cap * sizeof(void *));
        if (items == NULL) {
            return NULL;
        }
        if (list->n > 0) {
            memcpy(items, list->items, (size_t)list->n * sizeof(void *));
        }
        list->items = items;
        list->cap = cap;
    }
    list->items[list->n++] = item;
    return list;
}

/* ---- the driver ---------------------------------------------------------- */

/* The offset just past the first ';' at or after `from` that is outside quotes
 * and comments, or len when there is none (or the rest does not lex). */
size_t ps_skip_statement(const char *sql, size_t len, size_t from)
{
    size_t pos = from;
    for (;;) {
        PsToken tok;
        CmErr ignored;
        cm_err_init(&ignored);
        if (ps_lexer_next(sql, len, pos, &tok, &ignored) != CM_OK || tok.type == 0) {
            return len;
        }
        pos = (size_t)(tok.off + tok.len);
        if (tok.type == PS_TK_SEMI) {
            return pos;
        }
    }
}

size_t ps_next_statement_off(const char *sql, size_t len, size_t from)
{
    size_t pos = from;
    for (;;) {
        PsToken tok;
        CmErr ignored;
        cm_err_init(&ignored);
        if (ps_lexer_next(sql, len, pos, &tok, &ignored) != CM_OK) {
            return pos;
        }
        if (tok.type != PS_TK_SEMI) {
            return (size_t)tok.off; /* len at the end */
        }
        pos = (size_t)(tok.off + tok.len);
    }
}

/* True when a token of this type can end an expression (so that a NOT after
 * it is infix or postfix, never a prefix NOT). */
static bool ends_expr(int type)
{
    switch (type) {
    case PS_TK_ID:
    case PS_TK_STRING:
    case PS_TK_INTEGER:
    case PS_TK_FLOAT:
    case PS_TK_PARAM:
    case PS_TK_RP:
    case PS_TK_NULL:
    case PS_TK_TRUE:
    case PS_TK_FALSE:
    case PS_TK_END:
        return true;
    default:
        return ps_grammarFallback(type) == PS_TK_ID;
    }
}

/* Lexes the token at pos.  NOT becomes NOT_LA before BETWEEN, IN, LIKE or
 * ILIKE; NOT NULL after the end of an expression (prev_type) becomes a single
 * NOTNULL token. */
static CmStatus next_token(const char *sql, size_t len, size_t pos, int prev_type, PsToken *tok,
                           CmErr *err)
{
    if (ps_lexer_next(sql, len, pos, tok, err) != CM_OK) {
        return CM_SYNTAX;
    }
    if (tok->type != PS_TK_NOT) {
        return CM_OK;
    }
    PsToken next;
    CmErr ignored;
    cm_err_init(&ignored);
    if (ps_lexer_next(sql, len, (size_t)(tok->off + tok->len), &next, &ignored) != CM_OK) {
        return CM_OK; /* the error shows when `next` is read for real */
    }
    if (next.type == PS_TK_BETWEEN || next.type == PS_TK_IN || next.type == PS_TK_LIKE ||
        next.type == PS_TK_ILIKE) {
        tok->type = PS_TK_NOT_LA;
    } else if (next.type == PS_TK_NULL && ends_expr(prev_type)) {
        tok->type = PS_TK_NOTNULL;
        tok->len = next.off + next.len - tok->off;
    }
    return CM_OK;
}

/* Where to go on after an error at tok: past the statement's ';'. */
static size_t resume_point(const PsParse *ps, PsToken tok)
{
    if (tok.type == 0) {
        return ps->len;
    }
    if (tok.type == PS_TK_SEMI) {
        return (size_t)(tok.off + 1);
    }
    return ps_skip_statement(ps->sql, ps->len, (size_t)tok.off);
}

/* Feeds the statement whose first token is `first` into the parser.  On
 * success *end is the offset after its ';' (or len) and *last_end the end of
 * its last token before the ';'.  On failure *end is where to resume. */
static CmStatus feed_statement(void *parser, PsParse *ps, PsToken first, size_t *end,
                               int64_t *last_end)
{
    PsToken tok = first;
    int64_t prev_end = first.off;
    bool is_after_semi = false;
    for (;;) {
        ps->prev_end = prev_end;
        ps->cur_off = tok.off;
        ps_grammar(parser, tok.type, tok);
        if (ps->is_failed) {
            *end = resume_point(ps, tok);
            return ps->rc;
        }
        if (tok.type == 0) {
            if (!is_after_semi) {
                *end = ps->len;
                *last_end = prev_end;
            }
            return CM_OK;
        }
        if (tok.type == PS_TK_SEMI) {
            *last_end = prev_end;
            *end = (size_t)(tok.off + 1);
            is_after_semi = true;
            tok.type = 0;
            tok.off = tok.off + 1;
            tok.len = 0;
            continue; /* the end-of-input token completes the parse */
        }
        prev_end = tok.off + tok.len;
        if (next_token(ps->sql, ps->len, (size_t)prev_end, tok.type, &tok, ps->err) != CM_OK) {
            *end = ps->len; /* an unterminated literal or comment runs to the end */
            return CM_SYNTAX;
        }
    }
}

CmStatus ps_parse_next(CmArena *arena, const char *sql, size_t len, size_t *off, PsStmt **stmt,
                       CmErr *err)
{
    *stmt = NULL;
    PsToken first;
    size_t pos = *off;
    for (;;) { /* skip empty statements */
        if (next_token(sql, len, pos, 0, &first, err) != CM_OK) {
            *off = len;
            return CM_SYNTAX;
        }
        if (first.type != PS_TK_SEMI) {
            break;
        }
        pos = (size_t)(first.off + 1);
    }
    if (first.type == 0) {
        *off = len;
        return CM_OK;
    }
    PsParse ps;
    memset(&ps, 0, sizeof ps);
    ps.arena = arena;
    ps.sql = sql;
    ps.len = len;
    ps.err = err;
    void *parser = ps_grammarAlloc(cm_malloc, &ps);
    if (parser == NULL) {
        *off = ps_skip_statement(sql, len, (size_t)first.off);
        return cm_err_set(err, CM_OOM, first.off, "out of memory while parsing");
    }
    size_t end = len;
    int64_t last_end = first.off;
    CmStatus rc = feed_statement(parser, &ps, first, &end, &last_end);
    ps_grammarFree(parser, cm_free);
    *off = end;
    if (rc != CM_OK) {
        return rc;
    }
    if (ps.stmt == NULL) {
        return cm_err_set(err, CM_INTERNAL, first.off, "parser accepted no statement");
    }
    ps.stmt->src_off = first.off;
    ps.stmt->src_len = last_end - first.off;
    ps.stmt->n_params = ps.n_params;
    *stmt = ps.stmt;
    return CM_OK;
}

/* ---- helpers for the REPL and error display ------------------------------ */

bool ps_is_complete(const char *sql, size_t len)
{
    size_t pos = 0;
    int last = 0;
    for (;;) {
        PsToken tok;
        CmErr ignored;
        cm_err_init(&ignored);
        if (ps_lexer_next(sql, len, pos, &tok, &ignored) != CM_OK) {
            return false; /* inside a string, quoted name or comment */
        }
        if (tok.type == 0) {
            return last == PS_TK_SEMI;
        }
        last = tok.type;
        pos = (size_t)(tok.off + tok.len);
    }
}

void ps_line_col(const char *sql, size_t len, size_t off, int *line, int *col)
{
    if (off > len) {
        off = len;
    }
    int n_lines = 1;
    size_t line_start = 0;
    for (size_t idx = 0; idx < off; idx++) {
        if (sql[idx] == '\n') {
            n_lines++;
            line_start = idx + 1;
        }
    }
    *line = n_lines;
    *col = (int)(off - line_start) + 1;
}
