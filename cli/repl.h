/*
 * repl.h - the interactive read-eval-print loop of the `sluice` shell.
 *
 * Used when stdin is a terminal and no -c or -f was given.  Lines come from
 * libedit (history in ~/.sluice_history, prompt "sluice> ", continuation
 * "   ...> " while a statement is incomplete) and go through the same CliFeed as
 * scripts do (exec.h), so statements, dot commands and errors behave alike.
 * Single-threaded.
 */
#pragma once

#include "cli/cli.h"

/* Reads and runs lines until end of input (Ctrl-D), .quit or .exit. */
void cli_repl_run(CliState *st);
