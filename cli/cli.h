/*
 * cli.h - the state shared by every part of the `sluice` command-line shell.
 *
 * The shell sits on top of the embedding API (api/sluice.h) and is the only
 * part of Sluice that prints.  All of its mutable state lives in one CliState,
 * created by main.c and passed by pointer to the statement runner (exec.c), the
 * result printer (output.c), the dot commands (dot.c), the REPL (repl.c) and the
 * demo (demo.c); there is no other global mutable state.  The shell is
 * single-threaded: the engine runs each statement on its own worker pool, and
 * calls the progress bar's handler (progress.c) on a thread of its own, which
 * touches only CliProgress.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "api/sluice.h"

/* Output modes of query results (--mode, .mode). Keep in sync with output.c's names. */
typedef enum CliMode {
    CLI_MODE_BOX,      /* Unicode box-drawing table, the default on a terminal */
    CLI_MODE_TABLE,    /* ASCII +---+ table */
    CLI_MODE_CSV,      /* RFC 4180 comma-separated values */
    CLI_MODE_TSV,      /* tab-separated raw values, the default when stdout is not a terminal */
    CLI_MODE_JSON,     /* an array of objects, one row per line */
    CLI_MODE_MARKDOWN, /* | a | b | pipe table */
    CLI_MODE_LINE,     /* `name = value`, one column per line */
} CliMode;

/* .maxrows on a terminal, as DuckDB's shell: the first 20 and the last 20 rows. */
#define CLI_MAX_ROWS_TTY 40

/* .maxwidth's value while it follows the terminal's width (the default). */
#define CLI_MAX_WIDTH_TERMINAL (-1)

/* The nesting bound of .read, so a file that reads itself fails instead of recursing. */
#define CLI_MAX_READ_DEPTH 16

/* The progress bar (progress.c): written by the engine's progress thread while
 * a statement runs, read by the shell only between statements. */
typedef struct CliProgress {
    int fd;        /* the terminal it draws on, -1: none (no handler set) */
    bool is_drawn; /* a bar is on the screen and must be erased */
} CliProgress;

typedef struct CliState {
    SluiceDb *db;         /* owned; opened by main.c before any statement runs */
    CliMode mode;         /* how results print */
    bool has_header;      /* csv/tsv print a header row (other modes ignore it) */
    bool is_timer;        /* print "Run Time: ..." on stderr after each statement */
    bool is_bail;         /* stop at the first error */
    bool is_echo;         /* print each statement's text before its result */
    bool is_interactive;  /* reading from the REPL (affects nothing printed by statements) */
    bool has_failed;      /* some statement or command failed: the exit status is 1 */
    bool is_done;         /* .quit/.exit, or an error under --bail: stop reading input */
    bool is_interrupted;  /* Ctrl+C stopped a statement outside the REPL: exit 130 */
    char *null_text;      /* owned; what NULL prints as in every mode but json */
    bool has_null_text;   /* null_text was set (--nullvalue, .nullvalue): csv prints it too */
    int64_t max_rows;     /* box: a longer result shows its first and last rows; 0 = all */
    int max_width;        /* box: the widest table, in columns; 0 = no limit, or
                           * CLI_MAX_WIDTH_TERMINAL: the terminal's width (none off a terminal) */
    FILE *out;            /* where results and listings go: stdout, or the .output file */
    char *out_path;       /* owned; the .output file's name, NULL for stdout (out is owned then) */
    FILE *once;           /* owned; the .once file, taking the next statement's result, or NULL */
    int read_depth;       /* how many .read files are open right now */
    bool is_explain;      /* .explain on: print each statement's plan before its result */
    char *timeline_path;  /* owned; the .timeline file for the next statement, or NULL */
    char *last_sql;       /* owned; the text of the last statement run (for .edit), or NULL */
    CliProgress progress; /* the progress bar of the running statement */
} CliState;
