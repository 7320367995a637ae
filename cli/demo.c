/*
 * demo.c - the generated demo table of `sluice --demo` (see demo.h).
 *
 * The rows are a pure function of their id, so every run makes the same table:
 * cities cycle through five names, amounts are id * 7919 mod 10000 cents, days
 * run through March 2024 and every third row is not ok.
 */
#include "cli/demo.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/exec.h"

#define CLI_DEMO_ROWS 20
#define CLI_DEMO_COLUMNS "id INTEGER, city VARCHAR, amount DECIMAL(10,2), day DATE, ok BOOLEAN"

/* Room for the CREATE and INSERT text: about 60 bytes per row, plus the head. */
#define CLI_DEMO_SQL_CAP (256 + CLI_DEMO_ROWS * 80)

/* Writes the CREATE TABLE and INSERT statements into sql[0..CLI_DEMO_SQL_CAP). */
static void build_sql(char *sql)
{
    static const char *const CITIES[] = {"Lisbon", "Oslo", "Berlin", "Paris", "Amsterdam"};
    int len = snprintf(sql, CLI_DEMO_SQL_CAP,
                       "CREATE TABLE demo (" CLI_DEMO_COLUMNS ");\nINSERT INTO demo VALUES\n");

    for (int id = 1; id <= CLI_DEMO_ROWS; id++) {
        int cents = id * 7919 % 10000;
        len += snprintf(sql + len, (size_t)(CLI_DEMO_SQL_CAP - len),
                        "  (%d, '%s', %d.%02d, DATE '2024-03-%02d', %s)%s\n", id,
                        CITIES[id * 3 % 5], cents / 100, cents % 100, id, id % 3 ? "true" : "false",
                        id < CLI_DEMO_ROWS ? "," : ";");
    }
}

void cli_demo_run(CliState *st)
{
    bool is_echo = st->is_echo; /* the query prints once, below; the load not at all */

    st->is_echo = false;
    if (sluice_table_sql(st->db, "demo") == NULL) {
        char sql[CLI_DEMO_SQL_CAP];
        build_sql(sql);
        cli_exec_text(st, sql);
    }
    printf("-- Table demo (%s), %d rows. Sample query:\n%s\n", CLI_DEMO_COLUMNS, CLI_DEMO_ROWS,
           CLI_DEMO_QUERY);
    cli_exec_text(st, CLI_DEMO_QUERY);
    st->is_echo = is_echo;
}
