/*
 * dot.h - the dot commands of the `sluice` shell (.help, .mode, .read, ...).
 *
 * exec.c calls cli_dot_run for a line that starts with '.' while no statement is
 * pending, in the REPL and in scripts alike.  A command changes the CliState
 * (mode, headers, timer, null text, .maxrows, .maxwidth), redirects results
 * (.once, .output), prints catalog information or settings (.tables, .schema,
 * .show), loads a CSV file (.import, a thin layer over COPY FROM) or runs
 * another unit (.read).  A bad command or argument is an
 * `Error: ` line that counts as a failed statement.  Single-threaded.
 */
#pragma once

#include <stdio.h>

#include "cli/cli.h"

/* Runs one dot command line (NUL-terminated, no line end; borrowed for the call). */
void cli_dot_run(CliState *st, const char *line);

/* Prints the list of dot commands to out. */
void cli_dot_help(FILE *out);
