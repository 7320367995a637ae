/*
 * dot.c - the dot commands of the `sluice` shell (see dot.h).
 *
 * A command line is split into words like a shell would, minus escapes: white
 * space separates words, and '...' or "..." quotes one word (so `.nullvalue ''`
 * sets an empty null text).  Each command is a row of CMDS: its name, how many
 * arguments it takes, its handler and its help line.  What a command prints
 * goes where results go (CliState.out), as in sqlite3.
 */
#include "cli/dot.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/edit.h"
#include "cli/exec.h"
#include "cli/interrupt.h"
#include "cli/output.h"
#include "cli/progress.h"

#define CLI_DOT_MAX_WORDS 8

typedef struct CliDotCmd {
    const char *name; /* without the '.' */
    int min_args;     /* arguments, not counting the name */
    int max_args;
    void (*run)(CliState *st, char **args); /* args holds max_args entries, NULL-padded */
    const char *usage;                      /* e.g. ".mode MODE" */
    const char *help;                       /* one line for .help */
} CliDotCmd;

/* Parses on/off (also true/false, yes/no, 1/0). Returns false for anything else. */
static bool parse_switch(const char *word, bool *value)
{
    static const char *const ON[] = {"on", "true", "yes", "1"};
    static const char *const OFF[] = {"off", "false", "no", "0"};

    for (size_t idx = 0; idx < sizeof ON / sizeof ON[0]; idx++) {
        if (strcasecmp(word, ON[idx]) == 0 || strcasecmp(word, OFF[idx]) == 0) {
            *value = strcasecmp(word, ON[idx]) == 0;
            return true;
        }
    }
    return false;
}

static void set_switch(CliState *st, const char *word, const char *usage, bool *flag)
{
    if (!parse_switch(word, flag)) {
        cli_exec_error(st, "usage: %s", usage);
    }
}

/* ---------------------------------------------------------------- handlers */

static void run_help(CliState *st, char **args)
{
    (void)st;
    (void)args;
    cli_dot_help(st->out);
}

static void run_quit(CliState *st, char **args)
{
    (void)args;
    st->is_done = true;
}

static int compare_names(const void *lhs, const void *rhs)
{
    return strcmp(*(const char *const *)lhs, *(const char *const *)rhs);
}

/* The tables and views, sorted by name, one per line. */
static void run_tables(CliState *st, char **args)
{
    (void)args;
    int n_tables = sluice_table_count(st->db);
    const char **names = calloc((size_t)(n_tables > 0 ? n_tables : 1), sizeof *names);

    if (names == NULL) {
        cli_exec_error(st, "out of memory");
        return;
    }
    for (int table_idx = 0; table_idx < n_tables; table_idx++) {
        names[table_idx] = sluice_table_name(st->db, table_idx);
    }
    qsort(names, (size_t)n_tables, sizeof *names, compare_names);
    for (int table_idx = 0; table_idx < n_tables; table_idx++) {
        fprintf(st->out, "%s\n", names[table_idx]);
    }
    free(names);
}

static void put_schema(FILE *out, const char *sql)
{
    size_t len = strlen(sql);

    while (len > 0 && strchr(" \t\r\n", sql[len - 1]) != NULL) {
        len--;
    }
    fprintf(out, "%.*s%s\n", (int)len, sql, len > 0 && sql[len - 1] == ';' ? "" : ";");
}

/* The CREATE statement of one table, or of all in creation order. */
static void run_schema(CliState *st, char **args)
{
    if (args[0] != NULL) {
        const char *sql = sluice_table_sql(st->db, args[0]);
        if (sql == NULL) {
            cli_exec_error(st, "no such table: %s", args[0]);
        } else {
            put_schema(st->out, sql);
        }
        return;
    }
    int n_tables = sluice_table_count(st->db);
    for (int table_idx = 0; table_idx < n_tables; table_idx++) {
        const char *sql = sluice_table_sql(st->db, sluice_table_name(st->db, table_idx));
        if (sql != NULL) {
            put_schema(st->out, sql);
        }
    }
}

static void run_timer(CliState *st, char **args)
{
    set_switch(st, args[0], ".timer on|off", &st->is_timer);
}

static void run_headers(CliState *st, char **args)
{
    set_switch(st, args[0], ".headers on|off", &st->has_header);
}

static void run_bail(CliState *st, char **args)
{
    set_switch(st, args[0], ".bail on|off", &st->is_bail);
}

static void run_echo(CliState *st, char **args)
{
    set_switch(st, args[0], ".echo on|off", &st->is_echo);
}

static void run_mode(CliState *st, char **args)
{
    if (args[0] == NULL) {
        fprintf(st->out, "current output mode: %s\n", cli_output_mode_name(st->mode));
    } else if (!cli_output_mode_parse(args[0], &st->mode)) {
        cli_exec_error(st, "unknown mode '%s'; use one of %s", args[0], cli_output_mode_list());
    }
}

static void run_nullvalue(CliState *st, char **args)
{
    char *text = strdup(args[0]);

    if (text == NULL) {
        cli_exec_error(st, "out of memory");
        return;
    }
    free(st->null_text);
    st->null_text = text;
    st->has_null_text = true;
}

static void run_read(CliState *st, char **args)
{
    cli_exec_file(st, args[0]);
}

/* Parses a count: digits only, at most max. Returns false for anything else. */
static bool parse_count(const char *word, long long max, long long *value)
{
    char *end;

    if (word[0] < '0' || word[0] > '9') {
        return false;
    }
    errno = 0;
    *value = strtoll(word, &end, 10);
    return *end == '\0' && errno == 0 && *value <= max;
}

static void run_maxrows(CliState *st, char **args)
{
    long long value;

    if (args[0] == NULL) {
        fprintf(st->out, "%" PRId64 "\n", st->max_rows);
    } else if (!parse_count(args[0], INT64_MAX, &value)) {
        cli_exec_error(st, "usage: .maxrows N (0 shows every row)");
    } else {
        st->max_rows = value;
    }
}

static void run_maxwidth(CliState *st, char **args)
{
    long long value;

    if (args[0] == NULL && st->max_width == CLI_MAX_WIDTH_TERMINAL) {
        fputs("auto\n", st->out);
    } else if (args[0] == NULL) {
        fprintf(st->out, "%d\n", st->max_width);
    } else if (strcmp(args[0], "auto") == 0) {
        st->max_width = CLI_MAX_WIDTH_TERMINAL;
    } else if (!parse_count(args[0], INT_MAX, &value)) {
        cli_exec_error(st, "usage: .maxwidth N|auto (0: no limit)");
    } else {
        st->max_width = (int)value;
    }
}

static void run_explain(CliState *st, char **args)
{
    set_switch(st, args[0], ".explain on|off", &st->is_explain);
}

/* `.timeline FILE`: the next statement's timeline goes to FILE; `.timeline
 * off` forgets a pending one. */
static void run_timeline(CliState *st, char **args)
{
    free(st->timeline_path);
    st->timeline_path = NULL;
    if (strcmp(args[0], "off") != 0 && (st->timeline_path = strdup(args[0])) == NULL) {
        cli_exec_error(st, "out of memory");
    }
}

static void run_edit(CliState *st, char **args)
{
    (void)args;
    cli_edit_run(st);
}

static void run_once(CliState *st, char **args)
{
    cli_exec_output_open(st, args[0], true);
}

static void run_output(CliState *st, char **args)
{
    if (args[0] == NULL) {
        cli_exec_output_close(st);
    } else {
        cli_exec_output_open(st, args[0], false);
    }
}

/* `.import FILE TABLE` is `COPY TABLE FROM 'FILE'`: the CSV reader and its errors
 * are COPY's.  TABLE is SQL text (it may be qualified or quoted); FILE is a word,
 * quoted here as a string literal. */
static void run_import(CliState *st, char **args)
{
    size_t len = strlen(args[0]) * 2 + strlen(args[1]) + 32;
    char *sql = malloc(len);
    SluiceError err;
    SluiceResult *res = NULL;

    if (sql == NULL) {
        cli_exec_error(st, "out of memory");
        return;
    }
    size_t at = (size_t)snprintf(sql, len, "COPY %s FROM '", args[1]);
    for (const char *ch = args[0]; *ch != '\0'; ch++) {
        if (*ch == '\'') {
            sql[at++] = '\'';
        }
        sql[at++] = *ch;
    }
    snprintf(sql + at, len - at, "'");
    memset(&err, 0, sizeof err);
    cli_progress_begin(st);
    cli_interrupt_begin(); /* Ctrl+C stops a long load as it stops a COPY */
    int rc = sluice_exec(st->db, sql, &res, &err);
    cli_progress_end(st);
    if (cli_interrupt_end() && !st->is_interactive) {
        st->is_done = true;
        st->is_interrupted = true;
    }
    if (rc != 0) {
        cli_exec_error(st, "%s", err.message);
    }
    sluice_result_free(res);
    free(sql);
}

static const char *on_off(bool flag)
{
    return flag ? "on" : "off";
}

/* The shell's settings, one per line, names right-aligned (sqlite3's .show). */
static void run_show(CliState *st, char **args)
{
    (void)args;
    FILE *out = st->out;

    fprintf(out, "%12s: %s\n", "bail", on_off(st->is_bail));
    fprintf(out, "%12s: %s\n", "echo", on_off(st->is_echo));
    fprintf(out, "%12s: %s\n", "explain", on_off(st->is_explain));
    fprintf(out, "%12s: %s\n", "headers", on_off(st->has_header));
    fprintf(out, "%12s: %" PRId64 "\n", "maxrows", st->max_rows);
    if (st->max_width == CLI_MAX_WIDTH_TERMINAL) {
        fprintf(out, "%12s: auto\n", "maxwidth");
    } else {
        fprintf(out, "%12s: %d\n", "maxwidth", st->max_width);
    }
    fprintf(out, "%12s: %s\n", "mode", cli_output_mode_name(st->mode));
    fprintf(out, "%12s: \"%s\"%s\n", "nullvalue", st->null_text,
            st->has_null_text ? "" : " (csv: empty)");
    fprintf(out, "%12s: %s\n", "output", st->out_path != NULL ? st->out_path : "stdout");
    fprintf(out, "%12s: %s\n", "timeline", st->timeline_path != NULL ? st->timeline_path : "off");
    fprintf(out, "%12s: %s\n", "timer", on_off(st->is_timer));
}

static const CliDotCmd CMDS[] = {
    {"bail", 1, 1, run_bail, ".bail on|off", "Stop after the first error"},
    {"echo", 1, 1, run_echo, ".echo on|off", "Print each statement before running it"},
    {"edit", 0, 0, run_edit, ".edit", "Edit the last statement in $EDITOR, then run it"},
    {"exit", 0, 0, run_quit, ".exit", "Exit the shell"},
    {"explain", 1, 1, run_explain, ".explain on|off",
     "Print each statement's plan before its result"},
    {"headers", 1, 1, run_headers, ".headers on|off", "Print column names in csv and tsv mode"},
    {"help", 0, 0, run_help, ".help", "Show this message"},
    {"import", 2, 2, run_import, ".import FILE TABLE", "Load the CSV file FILE into TABLE (COPY)"},
    {"maxrows", 0, 1, run_maxrows, ".maxrows N",
     "Box: show the first and last rows of longer results (0: all)"},
    {"maxwidth", 0, 1, run_maxwidth, ".maxwidth N|auto",
     "Box: fit tables in N columns (0: no limit; auto: the terminal)"},
    {"mode", 0, 1, run_mode, ".mode MODE", "Set the output mode (box|table|csv|tsv|json|...)"},
    {"nullvalue", 1, 1, run_nullvalue, ".nullvalue TEXT", "Print NULL as TEXT (default NULL)"},
    {"once", 1, 1, run_once, ".once FILE", "Send the next statement's result to FILE"},
    {"output", 0, 1, run_output, ".output [FILE]", "Send results to FILE, or to stdout again"},
    {"quit", 0, 0, run_quit, ".quit", "Exit the shell"},
    {"read", 1, 1, run_read, ".read FILE", "Run the statements and commands in FILE"},
    {"schema", 0, 1, run_schema, ".schema [TABLE]", "Show the CREATE statements"},
    {"show", 0, 0, run_show, ".show", "Show the current settings"},
    {"tables", 0, 0, run_tables, ".tables", "List the tables and views"},
    {"timeline", 1, 1, run_timeline, ".timeline FILE|off",
     "Write the next statement's stage timeline (HTML) to FILE"},
    {"timer", 1, 1, run_timer, ".timer on|off", "Print the run time of each statement"},
};

/* ---------------------------------------------------------------- dispatch */

void cli_dot_help(FILE *out)
{
    for (size_t cmd_idx = 0; cmd_idx < sizeof CMDS / sizeof CMDS[0]; cmd_idx++) {
        fprintf(out, "%-18s %s\n", CMDS[cmd_idx].usage, CMDS[cmd_idx].help);
    }
}

/* Splits text (modified in place) into at most CLI_DOT_MAX_WORDS words. Returns
 * the number of words, or -1 when there are more. */
static int split_words(char *text, char **words)
{
    int n_words = 0;

    for (;;) {
        text += strspn(text, " \t\r\n");
        if (*text == '\0') {
            return n_words;
        }
        if (n_words == CLI_DOT_MAX_WORDS) {
            return -1;
        }
        char quote = *text == '\'' || *text == '"' ? *text : '\0';
        text += quote != '\0';
        words[n_words++] = text;
        char *end = quote != '\0' ? strchr(text, quote) : text + strcspn(text, " \t\r\n");
        text = end != NULL ? end : text + strlen(text);
        if (*text != '\0') {
            *text++ = '\0';
        }
    }
}

static const CliDotCmd *find_cmd(const char *name)
{
    for (size_t cmd_idx = 0; cmd_idx < sizeof CMDS / sizeof CMDS[0]; cmd_idx++) {
        if (strcmp(CMDS[cmd_idx].name, name) == 0) {
            return &CMDS[cmd_idx];
        }
    }
    return NULL;
}

void cli_dot_run(CliState *st, const char *line)
{
    char *words[CLI_DOT_MAX_WORDS + 1] = {NULL};
    char *text = strdup(line);

    if (text == NULL) {
        cli_exec_error(st, "out of memory");
        return;
    }
    int n_words = split_words(text, words);
    const CliDotCmd *cmd = n_words > 0 ? find_cmd(words[0] + 1) : NULL;
    if (cmd == NULL) {
        cli_exec_error(st, "unknown command: \"%s\"; enter \".help\" for help",
                       n_words > 0 ? words[0] : line);
    } else if (n_words - 1 < cmd->min_args || n_words - 1 > cmd->max_args) {
        cli_exec_error(st, "usage: %s", cmd->usage);
    } else {
        cmd->run(st, words + 1);
    }
    free(text);
}
