/*
 * output.h - how the `sluice` shell prints a query result, in each output mode.
 *
 * The last step of the shell's dataflow: exec.c hands over each materialized
 * SluiceResult and this module writes it to a stream in the current CliMode
 * (box, table, csv, tsv, json, markdown, line).  Values print as
 * sluice_result_text returns them, escaped in the columnar and line modes (see
 * output.c); NULL prints as CliState.null_text, except in json (null) and in csv
 * while no null text was set (an empty field, as COPY TO writes it).  Box follows
 * CliState.max_rows and max_width.  A result with zero columns prints nothing.  Stateless apart from the
 * CliState it reads; single-threaded.
 */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "cli/cli.h"

/* Looks up a mode by its name ("box", "csv", ...). Returns false for an unknown name. */
bool cli_output_mode_parse(const char *name, CliMode *mode);

/* The name of a mode. Static storage. */
const char *cli_output_mode_name(CliMode mode);

/* The names of all modes, separated by '|', for help and error messages. Static storage. */
const char *cli_output_mode_list(void);

/* Prints res (borrowed) to out in st->mode. Does not flush. */
void cli_output_result(const CliState *st, const SluiceResult *res, FILE *out);

/* Display width in terminal columns of text[0..len) as printed raw (a CJK
 * character or an emoji takes two, a combining mark none), for the caret under
 * an error. */
size_t cli_output_width(const char *text, size_t len);
