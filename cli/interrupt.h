/*
 * interrupt.h - Ctrl+C in the `sluice` shell.
 *
 * SIGINT while a statement runs interrupts it (sluice_interrupt): the
 * statement fails with "interrupted" within a batch or so, and the database
 * is as it was before it.  In the REPL the shell then goes on with its tables
 * and history; at the prompt Ctrl+C drops the line being typed, and a second
 * Ctrl+C at an empty prompt ends the shell.  Outside the REPL (-c, -f, a
 * script on stdin) an interrupted run stops and exits with status 130, as
 * shells expect of a program killed by SIGINT.
 * The signal handler needs state outside CliState: the database to interrupt
 * and the count of signals.  It is the shell's only global mutable state,
 * written by the handler and read here.
 */
#pragma once

#include <stdbool.h>

#include "cli/cli.h"

/* Installs the SIGINT handler for st's database (st->db open). */
void cli_interrupt_install(CliState *st);

/* Brackets a statement: between begin and end a SIGINT interrupts it.
 * cli_interrupt_end returns true when one did. */
void cli_interrupt_begin(void);
bool cli_interrupt_end(void);

/* Signals seen between statements since the last call, and resets the count. */
int cli_interrupt_take(void);
