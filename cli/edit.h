/*
 * edit.h - `.edit` of the `sluice` shell: the last statement in an editor.
 *
 * Writes the text of the last statement run (CliState.last_sql; nothing when
 * none ran yet) to a new temp file, runs the editor on it through the shell
 * ($EDITOR, else $VISUAL, else vi; the variable may hold arguments, as
 * `code -w`), and once the editor exits 0 runs what was saved as a unit of
 * its own, as `.read` would.  A failing editor runs nothing.  The temp file
 * is removed.  Single-threaded; the terminal is the editor's while it runs.
 */
#pragma once

#include "cli/cli.h"

void cli_edit_run(CliState *st);
