/*
 * ast_dump.h - prints parser ASTs as compact S-expressions for the parser's
 * unit tests, e.g. "select 1 + 2 * 3" -> "(select ((+ 1 (* 2 3))))".
 * Test-only code: not part of any library.  The format is documented at the
 * top of ast_dump.c.  Results are NUL-terminated strings in the given arena.
 */
#pragma once

#include "common/arena.h"
#include "parser/ast.h"

/* In arena: the statement as an S-expression. */
const char *dump_stmt(CmArena *arena, const PsStmt *stmt);

/* In arena: one expression as an S-expression. */
const char *dump_expr(CmArena *arena, const PsExpr *expr);
