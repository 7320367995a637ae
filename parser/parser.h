/*
 * parser.h - SQL text to AST: a hand-written lexer feeding a Lemon grammar.
 *
 * ps_parse_next() parses one statement at a time so that a script's statements
 * run one by one and an error in one does not stop the parse of the next.
 * All nodes go into the caller's arena (see ast.h).  On a syntax error `err`
 * gets CM_SYNTAX, the byte offset of the offending token, and a message such as
 * "syntax error at or near 'selec'" or "unterminated string literal".
 * The parser is re-entrant: no global state; any number of threads may parse.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/arena.h"
#include "common/err.h"
#include "parser/ast.h"

/* Parses the statement that starts at or after sql[*off].  Skips white space,
 * comments and empty statements (";;").  On success *stmt is the statement, or
 * NULL when only white space and comments remain, and *off is moved past the
 * statement's terminating ';' (or to len).  On a syntax error *off is moved past
 * the next ';' outside quotes and comments (or to len), so that the caller can go
 * on with the next statement, and CM_SYNTAX is returned.  `sql` need not be
 * NUL-terminated.  AST nodes are in `arena`. */
CmStatus ps_parse_next(CmArena *arena, const char *sql, size_t len, size_t *off, PsStmt **stmt,
                       CmErr *err);

/* The offset just past the first ';' at or after `from` that is outside quotes
 * and comments, or len when there is none (or the rest does not lex).  Lexes
 * without allocating: a caller that cannot run a statement still skips it. */
size_t ps_skip_statement(const char *sql, size_t len, size_t from);

/* The offset of the first token at or after `from` that is not a ';' (the
 * start of the next statement), or len when only white space, comments and
 * ';' remain.  For an unterminated comment or string, its start. */
size_t ps_next_statement_off(const char *sql, size_t len, size_t from);

/* True when sql[0..len) ends with a complete statement: a ';' outside string
 * literals, quoted identifiers and comments, followed only by white space and
 * comments.  Used by the REPL to decide whether to ask for another line. */
bool ps_is_complete(const char *sql, size_t len);

/* Converts a byte offset into 1-based line and column (column counts bytes). */
void ps_line_col(const char *sql, size_t len, size_t off, int *line, int *col);
