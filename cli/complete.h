/*
 * complete.h - Tab completion in the REPL of the `sluice` shell.
 *
 * Tab completes the word before the cursor with SQL keywords (in the case the
 * word was typed in), table and view names, and the column names of every
 * table and view, through libedit's readline interface.  Names are read from
 * the catalog at each Tab, so tables created in the session complete at once.
 * libedit's completion callback takes no argument: the CliState it reads is
 * kept in this module (the only state besides interrupt.c's outside CliState),
 * set once by cli_complete_install.  Single-threaded, like the REPL.
 */
#pragma once

#include "cli/cli.h"

/* Makes Tab complete from st's database (st borrowed for the REPL's life). */
void cli_complete_install(CliState *st);
