/*
 * exec.h - the statement runner of the `sluice` shell: input units in, results out.
 *
 * Every input unit (the -c text, a -f or .read file, stdin, the REPL) is fed one
 * line at a time into a CliFeed.  A line starting with '.' while no statement is
 * pending is a dot command (dot.c).  Other lines accumulate until the text forms a
 * complete statement (sluice_complete); then each statement in it runs at once
 * through sluice_exec_next, its result prints (output.c) and stdout is flushed,
 * so a driver writing one statement at a time sees each answer before the next.
 * Results go to CliState.out (stdout or the .output file), or to the .once file
 * for the next statement.  Errors go to stderr as `Error: line L, column C:
 * MESSAGE` plus the source line and a caret, with L counted from the start of
 * the unit (-c text, stdin), or from the statement's first line in the REPL; an
 * error in a -f or .read file is `Error: FILE:L:C: MESSAGE`.  C counts
 * characters, not bytes.  The result stream is always flushed before anything
 * goes to stderr, so merged streams keep statement order.
 * Single-threaded, like the rest of the shell.
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/cli.h"

/* The pending statement text of one input unit.  Storage the caller provides. */
typedef struct CliFeed {
    char *buf;        /* owned; the pending text, always whole lines */
    size_t len;       /* bytes used in buf */
    size_t cap;       /* bytes allocated for buf */
    int n_lines;      /* lines of the unit fed so far */
    int buf_line;     /* 1-based line number, in the unit, of the first line in buf */
    const char *path; /* borrowed; the file the unit reads (-f, .read), else NULL */
    bool is_repl;     /* the REPL's unit: error lines count from the statement's start */
} CliFeed;

void cli_exec_feed_init(CliFeed *feed);
void cli_exec_feed_fini(CliFeed *feed);

/* True when part of a statement is waiting for more lines (the REPL's "...>"). */
bool cli_exec_feed_is_pending(const CliFeed *feed);

/* Feeds one line of len bytes (with or without its '\n'; borrowed for the call).
 * Runs a dot command, or the pending statements once they are complete. */
void cli_exec_feed_line(CliState *st, CliFeed *feed, const char *line, size_t len);

/* End of the unit: runs whatever text is still pending (an unterminated last
 * statement runs as is, or fails with the engine's error). */
void cli_exec_feed_finish(CliState *st, CliFeed *feed);

/* Runs a whole unit: a NUL-terminated text (-c), an open stream read line by
 * line (stdin), or the file at path (-f, .read; "cannot open" is an error). */
void cli_exec_text(CliState *st, const char *text);
void cli_exec_stream(CliState *st, FILE *fp);
void cli_exec_file(CliState *st, const char *path);

/* Sends results to the file at path (truncated) until cli_exec_output_close, or
 * with is_once only the next statement's.  Returns false after an `Error: `. */
bool cli_exec_output_open(CliState *st, const char *path, bool is_once);

/* Closes the .output file, if any: results go to stdout again. */
void cli_exec_output_close(CliState *st);

/* Reports a failure without a position: flushes stdout, prints `Error: ` and
 * the formatted message as one line on stderr, marks the run failed and, under
 * --bail outside the REPL, stops reading input. */
void cli_exec_error(CliState *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
