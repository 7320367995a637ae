/*
 * main.c - the entry point of the `sluice` shell: options, then the driver.
 *
 * Parses the command line (options may come before or after DBPATH), opens the
 * database, applies --threads, and then runs, in this order: the --demo, every
 * -c and -f in command-line order, and, when there were none, either the REPL
 * (stdin is a terminal) or stdin as a script.  The exit status is 1 when any
 * statement or command failed, or on a bad command line, else 0.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/demo.h"
#include "cli/exec.h"
#include "cli/interrupt.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "cli/repl.h"

/* One -c text or -f file, run in command-line order. */
typedef struct CliUnit {
    bool is_file;    /* -f FILE rather than -c SQL */
    const char *arg; /* borrowed from argv */
} CliUnit;

/* What the command line asks for beyond the CliState settings. */
typedef struct CliArgs {
    const char *db_path; /* borrowed from argv; NULL for an in-memory database */
    const char *threads; /* borrowed from argv; NULL for the engine default */
    CliUnit *units;      /* owned; argc entries, n_units used */
    int n_units;         /* -c and -f seen so far */
    bool is_demo;        /* --demo */
    bool is_readonly;    /* --readonly */
    bool is_exit;        /* --help or --version printed: exit 0 without running */
} CliArgs;

static const char USAGE[] =
    "Usage: sluice [OPTIONS] [DBPATH]\n"
    "Runs SQL on the Sluice database in the directory DBPATH (in memory without one):\n"
    "interactively when stdin is a terminal, else the script read from stdin.\n"
    "\n"
    "Options:\n"
    "  -c SQL            run the statements in SQL and exit\n"
    "  -f FILE           run the script FILE and exit\n"
    "  --bail            stop at the first error\n"
    "  --echo            print each statement before its result\n"
    "  --threads N       run queries on N worker threads (default: one per core)\n"
    "  --mode MODE       output mode: box|table|csv|tsv|json|markdown|line\n"
    "                    (default: box on a terminal, tsv otherwise)\n"
    "  --header          print column names in csv and tsv mode\n"
    "  --no-header       do not print them (the default)\n"
    "  --nullvalue TEXT  print NULL as TEXT (default NULL)\n"
    "  --timer           print each statement's run time on stderr\n"
    "  --demo            create a small table `demo` and run a sample query on it\n"
    "  --readonly        open DBPATH read-only (other read-only processes may share it)\n"
    "  --version         print the version and exit\n"
    "  --help            print this help and exit\n";

/* Prints a command-line error and the usage on stderr. Returns 1, the exit status. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs("sluice: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n", stderr);
    fputs(USAGE, stderr);
    return 1;
}

static bool is_digits(const char *text)
{
    return *text != '\0' && strspn(text, "0123456789") == strlen(text);
}

/* Applies an option that takes a value. Returns 0, or 1 after a usage error. */
static int apply_valued(CliState *st, CliArgs *args, const char *name, const char *value)
{
    if (strcmp(name, "-c") == 0 || strcmp(name, "-f") == 0) {
        args->units[args->n_units].is_file = name[1] == 'f';
        args->units[args->n_units++].arg = value;
    } else if (strcmp(name, "--threads") == 0) {
        if (!is_digits(value)) {
            return usage_error("--threads needs a number of threads, not '%s'", value);
        }
        args->threads = value;
    } else if (strcmp(name, "--mode") == 0) {
        if (!cli_output_mode_parse(value, &st->mode)) {
            return usage_error("--mode: unknown mode '%s' (use %s)", value, cli_output_mode_list());
        }
    } else { /* --nullvalue */
        char *text = strdup(value);
        if (text == NULL) {
            return usage_error("%s: out of memory", name);
        }
        free(st->null_text);
        st->null_text = text;
        st->has_null_text = true;
    }
    return 0;
}

/* Applies an option without a value. Returns 0, or 1 after a usage error. */
static int apply_flag(CliState *st, CliArgs *args, const char *name)
{
    if (strcmp(name, "--bail") == 0) {
        st->is_bail = true;
    } else if (strcmp(name, "--echo") == 0) {
        st->is_echo = true;
    } else if (strcmp(name, "--header") == 0 || strcmp(name, "--no-header") == 0) {
        st->has_header = name[2] == 'h';
    } else if (strcmp(name, "--timer") == 0) {
        st->is_timer = true;
    } else if (strcmp(name, "--demo") == 0) {
        args->is_demo = true;
    } else if (strcmp(name, "--readonly") == 0) {
        args->is_readonly = true;
    } else if (strcmp(name, "--version") == 0) {
        printf("sluice %s\n", sluice_version());
        args->is_exit = true;
    } else if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        fputs(USAGE, stdout);
        args->is_exit = true;
    } else {
        return usage_error("unknown option '%s'", name);
    }
    return 0;
}

static bool takes_value(const char *name)
{
    static const char *const VALUED[] = {"-c", "-f", "--threads", "--mode", "--nullvalue"};

    for (size_t idx = 0; idx < sizeof VALUED / sizeof VALUED[0]; idx++) {
        if (strcmp(name, VALUED[idx]) == 0) {
            return true;
        }
    }
    return false;
}

/* Handles the option at argv[*arg_idx] (--name=value allowed for long options),
 * moving *arg_idx past its value. Returns 0, or 1 after a usage error. */
static int parse_option(CliState *st, CliArgs *args, int argc, char **argv, int *arg_idx)
{
    char name[64];
    const char *arg = argv[*arg_idx];
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);

    if (name_len >= sizeof name) {
        return usage_error("unknown option '%s'", arg);
    }
    memcpy(name, arg, name_len);
    name[name_len] = '\0';
    if (!takes_value(name)) {
        return eq ? usage_error("option '%s' takes no value", name) : apply_flag(st, args, name);
    }
    if (eq != NULL) {
        return apply_valued(st, args, name, eq + 1);
    }
    if (*arg_idx + 1 >= argc) {
        return usage_error("option '%s' needs an argument", name);
    }
    *arg_idx += 1;
    return apply_valued(st, args, name, argv[*arg_idx]);
}

/* Parses the command line into st and args. Returns 0, or 1 after a usage error. */
static int parse_args(CliState *st, CliArgs *args, int argc, char **argv)
{
    bool is_options_done = false;

    for (int arg_idx = 1; arg_idx < argc && !args->is_exit; arg_idx++) {
        const char *arg = argv[arg_idx];
        int rc = 0;
        if (!is_options_done && strcmp(arg, "--") == 0) {
            is_options_done = true;
        } else if (!is_options_done && arg[0] == '-' && arg[1] != '\0') {
            rc = parse_option(st, args, argc, argv, &arg_idx);
        } else if (args->db_path == NULL) {
            args->db_path = arg;
        } else {
            rc = usage_error("unexpected argument '%s' (only one DBPATH)", arg);
        }
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* Opens the database and applies --threads. Returns false after printing an error. */
static bool open_db(CliState *st, const CliArgs *args)
{
    SluiceError err;

    memset(&err, 0, sizeof err);
    st->db = sluice_open_flags(args->db_path, args->is_readonly ? SLUICE_OPEN_READONLY : 0, &err);
    if (st->db == NULL) {
        cli_exec_error(st, "%s", err.message);
        return false;
    }
    if (args->threads != NULL && sluice_set(st->db, "threads", args->threads, &err) != 0) {
        cli_exec_error(st, "%s", err.message);
        return false;
    }
    return true;
}

/* Runs the demo, the -c and -f units, and else the REPL or the stdin script. */
static void run(CliState *st, const CliArgs *args)
{
    bool is_tty_in = isatty(STDIN_FILENO);

    if (args->is_demo) {
        cli_demo_run(st);
    }
    for (int unit_idx = 0; unit_idx < args->n_units && !st->is_done; unit_idx++) {
        if (args->units[unit_idx].is_file) {
            cli_exec_file(st, args->units[unit_idx].arg);
        } else {
            cli_exec_text(st, args->units[unit_idx].arg);
        }
    }
    if (args->n_units > 0 || st->is_done) {
        return;
    }
    if (is_tty_in) {
        cli_repl_run(st);
    } else if (!args->is_demo) {
        cli_exec_stream(st, stdin);
    }
}

int main(int argc, char **argv)
{
    CliState st;
    CliArgs args;
    int rc;

    memset(&st, 0, sizeof st);
    memset(&args, 0, sizeof args);
    st.mode = isatty(STDOUT_FILENO) ? CLI_MODE_BOX : CLI_MODE_TSV;
    st.max_rows = isatty(STDOUT_FILENO) ? CLI_MAX_ROWS_TTY : 0;
    st.max_width = CLI_MAX_WIDTH_TERMINAL;
    st.out = stdout;
    st.null_text = strdup("NULL");
    args.units = calloc((size_t)argc, sizeof *args.units);
    if (st.null_text == NULL || args.units == NULL) {
        fputs("sluice: out of memory\n", stderr);
        return 1;
    }
    rc = parse_args(&st, &args, argc, argv);
    if (rc == 0 && !args.is_exit && open_db(&st, &args)) {
        cli_interrupt_install(&st);
        cli_progress_install(&st);
        run(&st, &args);
    }
    if (rc == 0 && st.has_failed) {
        rc = 1;
    }
    if (!st.is_interactive && cli_interrupt_take() > 0) {
        st.is_interrupted = true;
    }
    if (st.is_interrupted) {
        rc = 130;
    }
    cli_exec_output_close(&st);
    if (st.once != NULL) {
        fclose(st.once); /* a .once that no statement used */
    }
    fflush(stdout);
    sluice_close(st.db);
    free(st.null_text);
    free(st.timeline_path);
    free(st.last_sql);
    free(args.units);
    return rc;
}
