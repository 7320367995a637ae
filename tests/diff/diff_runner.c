/*
 * diff_runner.c - the differential test: random queries on Sluice and on
 * SQLite (linked as a library), results compared as multisets.
 *
 * Usage: diff_runner [--seed S] [--count N] [--threads T] [--verbose]
 *                    [--sql-out FILE] [--only Q] [--no-workarounds] [--avoid NAME]...
 *                    [--set NAME=VALUE]...
 * --set applies a Sluice setting before each database is loaded (up to
 * MAX_SETS of them): broadcast_threshold=0 makes every join partitioned, so
 * that the exchanges and their runtime filters meet every query shape.
 * Queries are numbered 0..N-1.  Every QUERIES_PER_DB queries start on a fresh
 * random database (both engines in memory, same DDL and INSERTs); database E
 * is drawn from stream 2E of the seed and query Q from stream 2Q+1, so any
 * single query can be re-run alone with --only Q (same seed, same flags).
 * Each query runs on SQLite first (a query past SQLite's step budget is
 * skipped), then on Sluice with the setting threads = T.  Both answers are
 * normalized (result.h) and sorted; a failure is different rows or an error on
 * one side only, and prints the seed, the query index, the SQL, both results
 * (shortened) and the known-bug constructs the query contains.  --sql-out
 * writes a script that rebuilds each failing query's database and runs the
 * query, for both `sluice` and `sqlite3`.  Errors on both sides pass and are
 * counted.  The last line is "N passed, M failed"; the exit status is 1 on
 * failures, 2 on a usage or setup error.
 *
 * Workarounds (KNOWN_DIFFS.md, "Open engine bugs"): the generator avoids the
 * constructs of DF_AVOID_DEFAULT; --no-workarounds clears them and each
 * --avoid NAME (after it) adds one.  A crash names the query that was running;
 * under the sanitizers run with --verbose (each query is printed first).
 */
#include "api/sluice.h"
#include "gen.h"
#include "result.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define QUERIES_PER_DB 100        /* queries per random database */
#define SQLITE_STEP_BUDGET 200000 /* thousands of VM steps before a query is skipped */
#define SHOWN_ROWS 6              /* rows of each result shown around a difference */
#define SHOWN_CHARS 160           /* characters of one shown row */
#define NAMES_CAP 160             /* a comma-separated list of workaround names */

#define MAX_SETS 8

typedef struct Options {
    uint64_t seed;       /* --seed */
    long first;          /* index of the first query */
    long count;          /* queries to run */
    const char *threads; /* --threads, as SQL text for sluice_set */
    bool is_verbose;     /* --verbose: each query before it runs, then its outcome */
    const char *sql_out; /* --sql-out file, or NULL */
    unsigned avoid;      /* DF_AVOID_* constructs the generator does not write */
    int n_sets;
    const char *sets[MAX_SETS]; /* --set NAME=VALUE, as given */
} Options;

typedef struct Stats {
    long n_equal;        /* same multiset of rows */
    long n_both_error;   /* an error on both sides */
    long n_skipped;      /* SQLite ran out of its step budget */
    long n_mismatch;     /* different rows */
    long n_sluice_error; /* an error only in Sluice */
    long n_sqlite_error; /* an error only in SQLite */
    long n_unexplained;  /* failures without any known-bug construct */
    long n_rows;         /* rows compared in equal results */
    long n_dbs;          /* databases built */
} Stats;

/* Both engines holding the same database. */
typedef struct Engines {
    sqlite3 *lite;      /* owned */
    SluiceDb *sluice;   /* owned */
    DfSchema schema;    /* the current database's tables */
    DfBuf script;       /* its DDL and INSERTs */
    long epoch;         /* its number (query index / QUERIES_PER_DB), -1 for none */
    long written_epoch; /* the last epoch written to --sql-out, -1 for none */
    DfSchema written;   /* that epoch's schema (its tables are dropped first) */
    FILE *sql_out;      /* the --sql-out file, or NULL */
} Engines;

/* One generated query. */
typedef struct Query {
    long idx;        /* its number */
    const char *sql; /* its text (borrowed) */
    unsigned used;   /* DF_AVOID_* constructs it contains */
} Query;

/* The query running now, for the crash handler (set before each run). */
static const char *g_crash_sql;
static char g_crash_head[96];

/* The DF_AVOID_* flags by their command-line names (KNOWN_DIFFS.md). */
static const struct {
    const char *name;
    unsigned flag;
} AVOID_NAMES[] = {
    {"sub-in-agg-select", DF_AVOID_SUB_IN_AGG_SELECT},
    {"agg-in-left", DF_AVOID_AGG_IN_LEFT},
    {"corr-in", DF_AVOID_CORR_IN},
    {"outer2", DF_AVOID_OUTER2},
    {"corr-set-op", DF_AVOID_CORR_SET_OP},
    {"exists-agg", DF_AVOID_EXISTS_AGG},
};
#define N_AVOID_NAMES (sizeof AVOID_NAMES / sizeof AVOID_NAMES[0])

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */

static int usage(void)
{
    fputs("usage: diff_runner [--seed S] [--count N] [--threads T] [--verbose]\n"
          "                   [--sql-out FILE] [--only Q] [--no-workarounds] [--avoid NAME]...\n"
          "                   [--set NAME=VALUE]...\n"
          "NAME: sub-in-agg-select agg-in-left corr-in outer2 corr-set-op exists-agg\n",
          stderr);
    return 2;
}

static bool parse_number(const char *text, unsigned long long *v)
{
    char *end = NULL;
    *v = strtoull(text, &end, 10);
    return text[0] >= '0' && text[0] <= '9' && *end == '\0';
}

/* The DF_AVOID_* flag named on the command line, 0 if unknown. */
static unsigned avoid_flag(const char *name)
{
    for (size_t idx = 0; idx < N_AVOID_NAMES; idx++) {
        if (strcmp(AVOID_NAMES[idx].name, name) == 0) {
            return AVOID_NAMES[idx].flag;
        }
    }
    return 0;
}

/* Writes the names of the flags in `flags`, comma-separated, into text. */
static void avoid_names(unsigned flags, char *text, size_t cap)
{
    text[0] = '\0';
    for (size_t idx = 0; idx < N_AVOID_NAMES; idx++) {
        if ((flags & AVOID_NAMES[idx].flag) != 0) {
            size_t len = strlen(text);
            snprintf(text + len, cap - len, "%s%s", len > 0 ? ", " : "", AVOID_NAMES[idx].name);
        }
    }
}

/* The options that give the generator `flags` again: "" for the defaults,
 * else " --no-workarounds --avoid NAME ...". */
static void avoid_options(unsigned flags, char *text, size_t cap)
{
    text[0] = '\0';
    if (flags == DF_AVOID_DEFAULT) {
        return;
    }
    snprintf(text, cap, " --no-workarounds");
    for (size_t idx = 0; idx < N_AVOID_NAMES; idx++) {
        if ((flags & AVOID_NAMES[idx].flag) != 0) {
            size_t len = strlen(text);
            snprintf(text + len, cap - len, " --avoid %s", AVOID_NAMES[idx].name);
        }
    }
}

/* Takes one "--name value" option; false if it is not a known one. */
static bool parse_valued(const char *arg, const char *val, Options *opts)
{
    unsigned long long n = 0;
    if (strcmp(arg, "--seed") == 0 && parse_number(val, &n)) {
        opts->seed = n;
    } else if (strcmp(arg, "--count") == 0 && parse_number(val, &n)) {
        opts->count = (long)n;
    } else if (strcmp(arg, "--only") == 0 && parse_number(val, &n)) {
        opts->first = (long)n;
        opts->count = 1;
    } else if (strcmp(arg, "--threads") == 0 && parse_number(val, &n) && n > 0) {
        opts->threads = val;
    } else if (strcmp(arg, "--sql-out") == 0) {
        opts->sql_out = val;
    } else if (strcmp(arg, "--avoid") == 0 && avoid_flag(val) != 0) {
        opts->avoid |= avoid_flag(val);
    } else if (strcmp(arg, "--set") == 0 && strchr(val, '=') != NULL && opts->n_sets < MAX_SETS) {
        opts->sets[opts->n_sets++] = val;
    } else {
        return false;
    }
    return true;
}

static bool parse_options(int argc, char **argv, Options *opts)
{
    *opts = (Options){1, 0, 1000, "1", false, NULL, DF_AVOID_DEFAULT, 0, {NULL}};
    for (int arg_idx = 1; arg_idx < argc; arg_idx++) {
        const char *arg = argv[arg_idx];
        if (strcmp(arg, "--verbose") == 0) {
            opts->is_verbose = true;
        } else if (strcmp(arg, "--no-workarounds") == 0) {
            opts->avoid = 0;
        } else if (arg_idx + 1 >= argc || !parse_valued(arg, argv[arg_idx + 1], opts)) {
            return false;
        } else {
            arg_idx++;
        }
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* Databases                                                                 */
/* ------------------------------------------------------------------------ */

static void close_engines(Engines *e)
{
    sqlite3_close(e->lite);
    sluice_close(e->sluice);
    e->lite = NULL;
    e->sluice = NULL;
}

/* Runs the database script on Sluice statement by statement. */
static bool load_sluice(Engines *e, const Options *opts)
{
    SluiceError err;
    memset(&err, 0, sizeof err);
    e->sluice = sluice_open(NULL, &err);
    if (e->sluice == NULL || sluice_set(e->sluice, "threads", opts->threads, &err) != 0) {
        fprintf(stderr, "diff_runner: sluice setup: %s\n", err.message);
        return false;
    }
    for (int i = 0; i < opts->n_sets; i++) {
        char name[64];
        const char *eq = strchr(opts->sets[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - opts->sets[i]), opts->sets[i]);
        if (sluice_set(e->sluice, name, eq + 1, &err) != 0) {
            fprintf(stderr, "diff_runner: --set %s: %s\n", opts->sets[i], err.message);
            return false;
        }
    }
    const char *sql = df_buf_str(&e->script);
    size_t off = 0;
    while (off < e->script.len) {
        SluiceResult *res = NULL;
        if (sluice_exec_next(e->sluice, sql, e->script.len, &off, &res, &err) != 0) {
            fprintf(stderr, "diff_runner: sluice rejected the database: %s\n", err.message);
            return false;
        }
        sluice_result_free(res);
    }
    return true;
}

static bool open_epoch(Engines *e, const Options *opts, long epoch)
{
    close_engines(e);
    df_buf_reset(&e->script);
    DfRng rng;
    df_rng_init(&rng, opts->seed, 2 * (uint64_t)epoch);
    df_gen_database(&rng, &e->schema, &e->script);
    e->epoch = epoch;
    char *msg = NULL;
    if (sqlite3_open(":memory:", &e->lite) != SQLITE_OK ||
        sqlite3_exec(e->lite, df_buf_str(&e->script), NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "diff_runner: sqlite rejected the database: %s\n",
                msg != NULL ? msg : sqlite3_errmsg(e->lite));
        sqlite3_free(msg);
        return false;
    }
    return load_sluice(e, opts);
}

/* ------------------------------------------------------------------------ */
/* Reporting                                                                 */
/* ------------------------------------------------------------------------ */

static void show_result(const char *engine, const DfResult *res, size_t around)
{
    if (res->status != DF_OK) {
        printf("  %s: error: %s\n", engine, res->message);
        return;
    }
    printf("  %s: %zu row%s\n", engine, res->n_rows, res->n_rows == 1 ? "" : "s");
    size_t start = around > 2 ? around - 2 : 0;
    for (size_t row_idx = start; row_idx < res->n_rows && row_idx < start + SHOWN_ROWS; row_idx++) {
        const char *row = res->rows[row_idx];
        printf("    %s%zu: %.*s%s\n", row_idx == around ? "*" : " ", row_idx, SHOWN_CHARS, row,
               strlen(row) > SHOWN_CHARS ? "..." : "");
    }
}

static void write_rows_comment(FILE *f, const char *engine, const DfResult *res)
{
    if (res->status != DF_OK) {
        fprintf(f, "-- %s: error: %s\n", engine, res->message);
        return;
    }
    fprintf(f, "-- %s: %zu rows (sorted, normalized)\n", engine, res->n_rows);
    for (size_t row_idx = 0; row_idx < res->n_rows && row_idx < 20; row_idx++) {
        fprintf(f, "--   %s\n", res->rows[row_idx]);
    }
}

/* Appends a script that rebuilds the database (once per epoch) and runs the query. */
static void write_repro(Engines *e, const Options *opts, const Query *q, const DfResult *lite,
                        const DfResult *slu)
{
    FILE *f = e->sql_out;
    if (e->written_epoch != e->epoch) {
        for (int tab_idx = 0; e->written_epoch >= 0 && tab_idx < e->written.n_tables; tab_idx++) {
            fprintf(f, "DROP TABLE %s;\n", e->written.tables[tab_idx].name);
        }
        fprintf(f, "-- database %ld of seed %llu\n%s\n", e->epoch, (unsigned long long)opts->seed,
                df_buf_str(&e->script));
        e->written_epoch = e->epoch;
        e->written = e->schema;
    }
    char flags[NAMES_CAP * 2];
    avoid_options(opts->avoid, flags, sizeof flags);
    fprintf(f, "-- FAIL seed %llu query %ld (diff_runner --seed %llu --only %ld%s)\n",
            (unsigned long long)opts->seed, q->idx, (unsigned long long)opts->seed, q->idx, flags);
    write_rows_comment(f, "sqlite", lite);
    write_rows_comment(f, "sluice", slu);
    fprintf(f, "%s;\n\n", q->sql);
    fflush(f);
}

static const char *failure_kind(const DfResult *lite, const DfResult *slu)
{
    if (lite->status == DF_OK && slu->status != DF_OK) {
        return "error only in sluice";
    }
    if (lite->status != DF_OK) {
        return "error only in sqlite";
    }
    return "different rows";
}

static void report_failure(Engines *e, const Options *opts, const Query *q, const DfResult *lite,
                           const DfResult *slu, size_t diff_row)
{
    char known[NAMES_CAP];
    avoid_names(q->used, known, sizeof known);
    printf("FAIL seed %llu query %ld (database %ld, threads %s): %s",
           (unsigned long long)opts->seed, q->idx, e->epoch, opts->threads,
           failure_kind(lite, slu));
    printf(known[0] != '\0' ? " [known-bug constructs: %s]\n" : "%s\n", known);
    printf("  sql: %s;\n", q->sql);
    show_result("sqlite", lite, diff_row);
    show_result("sluice", slu, diff_row);
    char flags[NAMES_CAP * 2];
    avoid_options(opts->avoid, flags, sizeof flags);
    printf("  rerun: diff_runner --seed %llu --only %ld --threads %s%s",
           (unsigned long long)opts->seed, q->idx, opts->threads, flags);
    for (int i = 0; i < opts->n_sets; i++) {
        printf(" --set %s", opts->sets[i]);
    }
    printf(" --verbose\n");
    if (e->sql_out != NULL) {
        write_repro(e, opts, q, lite, slu);
    }
}

/* On a crash, names the query that was running (write(2) only), then dies. */
static void on_crash(int sig)
{
    if (g_crash_sql != NULL) {
        ssize_t n = write(STDOUT_FILENO, g_crash_head, strlen(g_crash_head));
        n += write(STDOUT_FILENO, g_crash_sql, strlen(g_crash_sql));
        n += write(STDOUT_FILENO, ";\n", 2);
        (void)n;
    }
    raise(sig);
}

static void install_crash_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash;
    sa.sa_flags = (int)SA_RESETHAND;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGABRT, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
}

static void print_summary(const Options *opts, const Stats *st)
{
    long n_failed = st->n_mismatch + st->n_sluice_error + st->n_sqlite_error;
    char avoided[NAMES_CAP];
    avoid_names(opts->avoid, avoided, sizeof avoided);
    printf("diff_runner: seed %llu, threads %s, queries %ld..%ld on %ld database%s\n",
           (unsigned long long)opts->seed, opts->threads, opts->first,
           opts->first + opts->count - 1, st->n_dbs, st->n_dbs == 1 ? "" : "s");
    printf("  constructs avoided (open bugs): %s\n", avoided[0] != '\0' ? avoided : "none");
    printf("  equal results: %ld (%ld rows)\n", st->n_equal, st->n_rows);
    printf("  errors on both sides: %ld\n", st->n_both_error);
    printf("  skipped (sqlite step budget): %ld\n", st->n_skipped);
    printf("  failed: %ld different rows, %ld error only in sluice, %ld error only in sqlite\n",
           st->n_mismatch, st->n_sluice_error, st->n_sqlite_error);
    printf("  failed without any known-bug construct: %ld\n", st->n_unexplained);
    printf("%ld passed, %ld failed\n", st->n_equal + st->n_both_error, n_failed);
}

/* ------------------------------------------------------------------------ */
/* The loop                                                                  */
/* ------------------------------------------------------------------------ */

/* Compares the answers of one query, counts it, and reports a failure. */
static void judge(Engines *e, const Options *opts, Stats *st, const Query *q, DfResult *lite,
                  DfResult *slu)
{
    size_t diff_row = 0;
    bool is_lite_ok = lite->status == DF_OK;
    bool is_slu_ok = slu->status == DF_OK;
    if (!is_lite_ok && !is_slu_ok) {
        st->n_both_error++;
        if (opts->is_verbose) {
            printf("  -> both error: sqlite: %s | sluice: %s\n", lite->message, slu->message);
        }
        return;
    }
    if (is_lite_ok && is_slu_ok) {
        df_result_sort(lite);
        df_result_sort(slu);
        if (df_result_equal(lite, slu, &diff_row)) {
            st->n_equal++;
            st->n_rows += (long)lite->n_rows;
            if (opts->is_verbose) {
                printf("  -> ok, %zu rows\n", lite->n_rows);
            }
            return;
        }
        st->n_mismatch++;
    } else if (is_lite_ok) {
        st->n_sluice_error++;
    } else {
        st->n_sqlite_error++;
    }
    st->n_unexplained += q->used == 0;
    report_failure(e, opts, q, lite, slu, diff_row);
}

static void run_engines(Engines *e, const Options *opts, Stats *st, const Query *q)
{
    DfResult lite = {0}, slu = {0};
    if (opts->is_verbose) {
        printf("[%ld] %s;\n", q->idx, q->sql);
    }
    df_run_sqlite(e->lite, q->sql, SQLITE_STEP_BUDGET, &lite);
    if (lite.status == DF_INTERRUPTED) {
        st->n_skipped++;
        if (opts->is_verbose) {
            printf("  -> skipped: sqlite step budget\n");
        }
    } else {
        snprintf(g_crash_head, sizeof g_crash_head,
                 "CRASH seed %llu query %ld threads %s: ", (unsigned long long)opts->seed, q->idx,
                 opts->threads);
        g_crash_sql = q->sql;
        fflush(stdout);
        df_run_sluice(e->sluice, q->sql, &slu);
        g_crash_sql = NULL;
        judge(e, opts, st, q, &lite, &slu);
    }
    df_result_fini(&lite);
    df_result_fini(&slu);
}

static bool run_query(Engines *e, const Options *opts, Stats *st, long query_idx)
{
    long epoch = query_idx / QUERIES_PER_DB;
    if (epoch != e->epoch) {
        if (!open_epoch(e, opts, epoch)) {
            return false;
        }
        st->n_dbs++;
    }
    DfRng rng;
    DfBuf sql = {0};
    df_rng_init(&rng, opts->seed, 2 * (uint64_t)query_idx + 1);
    Query q;
    q.idx = query_idx;
    q.used = df_gen_query(&rng, &e->schema, opts->avoid, &sql);
    q.sql = df_buf_str(&sql);
    run_engines(e, opts, st, &q);
    df_buf_fini(&sql);
    return true;
}

int main(int argc, char **argv)
{
    Options opts;
    if (!parse_options(argc, argv, &opts)) {
        return usage();
    }
    Engines e;
    memset(&e, 0, sizeof e);
    e.epoch = -1;
    e.written_epoch = -1;
    if (opts.sql_out != NULL && (e.sql_out = fopen(opts.sql_out, "w")) == NULL) {
        perror(opts.sql_out);
        return 2;
    }
    Stats st;
    memset(&st, 0, sizeof st);
    install_crash_handler();
    bool is_ok = true;
    for (long query_idx = opts.first; is_ok && query_idx < opts.first + opts.count; query_idx++) {
        is_ok = run_query(&e, &opts, &st, query_idx);
        fflush(stdout);
    }
    close_engines(&e);
    df_buf_fini(&e.script);
    if (e.sql_out != NULL) {
        fclose(e.sql_out);
    }
    print_summary(&opts, &st);
    if (!is_ok) {
        return 2;
    }
    return st.n_mismatch + st.n_sluice_error + st.n_sqlite_error > 0 ? 1 : 0;
}
