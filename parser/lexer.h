/*
 * lexer.h - the hand-written SQL tokenizer (internal to parser/).
 *
 * The lexer turns SQL text into tokens that are (offset, length) slices of the
 * text; it never copies or allocates.  Token codes are the PS_TK_* values that
 * Lemon generates from grammar.y (in the build tree's gen/grammar.h); code 0
 * means end of input.  Keywords are matched case-insensitively against a sorted
 * table; a word that is not a keyword is PS_TK_ID, and so is a "quoted"
 * identifier.  A character the grammar has no use for becomes PS_TK_ILLEGAL so
 * that the grammar reports it as a syntax error at that token.  Only
 * unterminated strings, quoted identifiers and block comments are lexer errors.
 * Stateless and re-entrant.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* One token: a slice of the SQL text. */
typedef struct PsToken {
    int type;    /* PS_TK_* code, 0 at end of input */
    int64_t off; /* byte offset of the first character in the SQL text */
    int64_t len; /* bytes; 0 at end of input */
} PsToken;

/* Scans the token that starts at or after sql[off], skipping white space and
 * comments.  At the end of the text *tok gets type 0, offset `len` and length 0.
 * Returns CM_SYNTAX with the offset of its start for an unterminated string
 * literal, quoted identifier or block comment. */
CmStatus ps_lexer_next(const char *sql, size_t len, size_t off, PsToken *tok, CmErr *err);

/* The token code of the keyword s[0..n) (any case), or 0 when it is not one. */
int ps_lexer_keyword(const char *s, size_t n);

/* A name for a token code, for tests and diagnostics: the upper-case keyword
 * ("SELECT"), or "ID", "STRING", "INTEGER", "FLOAT", "SEMI", "EOF", ...
 * Static storage. */
const char *ps_lexer_token_name(int type);

/* The keyword table, for tests: its size and the upper-case name of entry idx
 * (in the sorted order the binary search relies on).  Static storage. */
int ps_lexer_n_keywords(void);
const char *ps_lexer_keyword_at(int idx);
