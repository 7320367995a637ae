/*
 * explain.h - statements run under an EXPLAIN prefix: `.explain on` and
 * `.timeline FILE` of the `sluice` shell.
 *
 * The shell rewrites the next statement of a buffer by inserting a prefix
 * ("EXPLAIN " or "EXPLAIN (ANALYZE, FORMAT HTML) ") just before its first
 * token, on the same line, so that the engine's line numbers still hold; the
 * offsets it reports (where the statement ends, where an error is) are mapped
 * back into the caller's buffer.  `.explain on` prints each statement's plan
 * (EXPLAIN's lines, the statement not yet run) ahead of its result; statements
 * EXPLAIN does not take (DDL, INSERT, ...) print no plan.  `.timeline FILE`
 * runs the next statement under EXPLAIN (ANALYZE, FORMAT HTML) and writes the
 * timeline to FILE instead of printing the statement's rows.
 * Single-threaded, like the rest of the shell.
 */
#pragma once

#include <stddef.h>
#include <stdio.h>

#include "cli/cli.h"

#define CLI_TIMELINE_PREFIX "EXPLAIN (ANALYZE, FORMAT HTML) "

/* Runs the statement whose first token is at sql[tok] (of the buffer
 * sql[0..len)) as prefix followed by it; as sluice_exec_next otherwise:
 * *off moves past the statement, err->offset is into sql. */
int cli_explain_exec(CliState *st, const char *prefix, const char *sql, size_t len, size_t tok,
                     size_t *off, SluiceResult **res, SluiceError *err);

/* The plan of the statement at sql[tok..len) as EXPLAIN prints it, or NULL
 * when EXPLAIN does not apply (or fails: the statement itself will then
 * report its error).  Owned (sluice_result_free). */
SluiceResult *cli_explain_plan(CliState *st, const char *sql, size_t len, size_t tok);

/* Prints each row of the one-column result res to out, one line each. */
void cli_explain_print(const SluiceResult *res, FILE *out);

/* Writes res's one cell (the HTML timeline) to the file at path.  Returns
 * false after an `Error: ` line. */
bool cli_explain_write(CliState *st, const SluiceResult *res, const char *path);
