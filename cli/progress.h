/*
 * progress.h - the shell's progress bar.
 *
 * When stderr (else stdout) is a terminal, a statement that runs longer than
 * progress_bar_time shows one line, redrawn in place with \r every 100 ms:
 * the share done, the running stage, the elapsed time, the bytes spilled (when
 * any) and the last adaptive decision.  The line is erased when the statement
 * ends, before anything else prints; off a terminal nothing is drawn at all.
 * The engine calls the drawing handler from its own thread (api/sluice.h:
 * sluice_set_progress_handler); it touches only st->progress and writes with
 * write(2), and the shell's thread reads that state only between statements.
 */
#pragma once

#include "cli/cli.h"

/* Picks the terminal to draw on (none: no handler) and sets the handler. */
void cli_progress_install(CliState *st);

/* Brackets a statement: begin flushes what the shell printed to the bar's
 * terminal, so that the bar comes after it; end erases the bar if it was drawn. */
void cli_progress_begin(CliState *st);
void cli_progress_end(CliState *st);

/* The bar's line for p, at most `cols` terminal columns, into buf (NUL
 * terminated); returns its length in bytes.  For the handler and tests. */
size_t cli_progress_format(const SluiceProgress *p, int cols, char *buf, size_t cap);
