/*
 * demo.h - `sluice --demo`: a small generated table and a sample query on it.
 *
 * Creates the table `demo` (20 rows of id INTEGER, city VARCHAR, amount
 * DECIMAL(10,2), day DATE, ok BOOLEAN) with plain CREATE TABLE and INSERT INTO
 * ... VALUES unless it already exists, prints the sample query's text and runs
 * it through the shell's statement runner (exec.h), so it prints in the current
 * output mode.  Single-threaded.
 */
#pragma once

#include "cli/cli.h"

/* The sample query, as printed and run. */
#define CLI_DEMO_QUERY "SELECT city, count(*), sum(amount) FROM demo GROUP BY city ORDER BY city;"

/* Creates the demo table when missing and runs the sample query. */
void cli_demo_run(CliState *st);
