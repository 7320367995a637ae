/*
 * main.c - tpcds_gen: writes the TPC-DS tables as dsdgen-format .dat files.
 *
 *   tpcds_gen --sf SF --out DIR [--threads N] [--seed S] [--tables t1,t2]
 *
 * Each table is written in parallel chunks by gen_write_file (chunks.h), the
 * same bytes for any thread count.  Progress goes to stderr; the exit status
 * is 0 on success, 1 on any error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/tpcds/gen/chunks.h"
#include "bench/tpcds/gen/gen.h"
#include "common/alloc.h"
#include "common/thread.h"

#define DEFAULT_SEED 19620718ULL /* dsdgen's default RNG seed */

static const char USAGE[] =
    "Usage: tpcds_gen --sf SF --out DIR [--threads N] [--seed S] [--skew K] [--tables t1,...]\n"
    "Writes DIR/TABLE.dat for each table (the 24 of TPC-DS and dbgen_version by default):\n"
    "'|' after every field, empty field = NULL. The output depends only on SF and the\n"
    "seed (default 19620718), not on the thread count (default: one per core).\n"
    "--skew K (1..3) makes the sales' items, customers and dates skewed (default 0:\n"
    "uniform), for a check that does not depend on one generator's distributions.\n";

typedef struct Options {
    double sf;                   /* scale factor, > 0 */
    const char *out;             /* output directory, borrowed from argv */
    int n_threads;               /* worker threads */
    uint64_t seed;               /* PRNG seed */
    int skew;                    /* --skew, 0..3 */
    bool is_wanted[GT_N_TABLES]; /* tables to write */
} Options;

static int table_index(const char *name, size_t len)
{
    for (int i = 0; i < GT_N_TABLES; i++) {
        if (strlen(GEN_TABLES[i].name) == len && !strncmp(GEN_TABLES[i].name, name, len)) {
            return i;
        }
    }
    return -1;
}

/* Marks the tables of a comma-separated list; false on an unknown name. */
static bool parse_tables(const char *list, Options *o)
{
    memset(o->is_wanted, 0, sizeof o->is_wanted);
    while (*list) {
        size_t len = strcspn(list, ",");
        int idx = table_index(list, len);
        if (idx < 0) {
            fprintf(stderr, "tpcds_gen: unknown table '%.*s'\n", (int)len, list);
            return false;
        }
        o->is_wanted[idx] = true;
        list += len + (list[len] == ',');
    }
    return true;
}

/* Reads the value of option argv[*i]; NULL (after a message) when missing. */
static const char *value_of(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "tpcds_gen: %s needs a value\n%s", argv[*i], USAGE);
        return NULL;
    }
    return argv[++*i];
}

static bool parse_option(int argc, char **argv, int *i, Options *o)
{
    const char *a = argv[*i];
    const char *v = value_of(argc, argv, i);
    char *end = NULL;
    if (!v) {
        return false;
    }
    if (!strcmp(a, "--sf")) {
        o->sf = strtod(v, &end);
    } else if (!strcmp(a, "--out")) {
        o->out = v;
        return true;
    } else if (!strcmp(a, "--threads")) {
        o->n_threads = (int)strtol(v, &end, 10);
    } else if (!strcmp(a, "--seed")) {
        o->seed = strtoull(v, &end, 10);
    } else if (!strcmp(a, "--skew")) {
        o->skew = (int)strtol(v, &end, 10);
        if (*end == '\0' && (o->skew < 0 || o->skew > 3)) {
            fprintf(stderr, "tpcds_gen: --skew must be 0..3\n");
            return false;
        }
    } else if (!strcmp(a, "--tables")) {
        return parse_tables(v, o);
    } else {
        fprintf(stderr, "tpcds_gen: unknown option %s\n%s", a, USAGE);
        return false;
    }
    if (*end != '\0') {
        fprintf(stderr, "tpcds_gen: bad value '%s' for %s\n", v, a);
        return false;
    }
    return true;
}

/* Returns 0 to run, 1 on a bad command line, 2 after --help. */
static int parse_args(int argc, char **argv, Options *o)
{
    *o = (Options){.sf = 0, .n_threads = cm_cpu_count(), .seed = DEFAULT_SEED};
    for (int i = 0; i < GT_N_TABLES; i++) {
        o->is_wanted[i] = true;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(USAGE, stdout);
            return 2;
        }
        if (!parse_option(argc, argv, &i, o)) {
            return 1;
        }
    }
    if (!(o->sf > 0) || !o->out || o->n_threads < 1) {
        fprintf(stderr, "tpcds_gen: --sf > 0 and --out are required, --threads >= 1\n%s", USAGE);
        return 1;
    }
    return 0;
}

/* mkdir -p. */
static bool make_dirs(const char *path)
{
    char tmp[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof tmp) {
        return false;
    }
    memcpy(tmp, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (tmp[i] == '/' || tmp[i] == '\0') {
            char c = tmp[i];
            tmp[i] = '\0';
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST) {
                return false;
            }
            tmp[i] = c;
        }
    }
    return true;
}

/* The argument of table_chunk: one table of the context. */
typedef struct TableArg {
    const GenCtx *g;
    const GenTable *t;
} TableArg;

static void table_chunk(const void *arg, GenBuf *b, int64_t first, int64_t end)
{
    const TableArg *a = arg;
    a->t->fn(a->g, b, first, end);
}

static bool write_table(const GenCtx *g, const GenTable *t, int64_t n_units, const char *dir,
                        CmPool *pool, GenBuf *bufs)
{
    TableArg arg = {.g = g, .t = t};
    GenFileSpec spec = {.prog = "tpcds_gen",
                        .dir = dir,
                        .name = t->name,
                        .fn = table_chunk,
                        .arg = &arg,
                        .n_units = n_units,
                        .chunk = t->chunk};
    return gen_write_file(&spec, pool, bufs);
}

static bool write_tables(const Options *o, const GenCtx *g, CmPool *pool)
{
    int n_workers = cm_pool_size(pool);
    GenBuf *bufs = cm_calloc((size_t)n_workers, sizeof(GenBuf));
    bool is_ok = bufs != NULL;
    for (int i = 0; is_ok && i < GT_N_TABLES; i++) {
        if (o->is_wanted[i]) {
            is_ok = write_table(g, &GEN_TABLES[i], g->units[i], o->out, pool, bufs);
        }
    }
    for (int i = 0; bufs && i < n_workers; i++) {
        gen_buf_fini(&bufs[i]);
    }
    cm_free(bufs);
    return is_ok;
}

int main(int argc, char **argv)
{
    Options o;
    int rc = parse_args(argc, argv, &o);
    if (rc) {
        return rc == 2 ? 0 : 1;
    }
    if (!make_dirs(o.out)) {
        fprintf(stderr, "tpcds_gen: cannot create %s: %s\n", o.out, strerror(errno));
        return 1;
    }
    long long t0 = cm_now_ns();
    bool need[3] = {o.is_wanted[GT_STORE_SALES] || o.is_wanted[GT_STORE_RETURNS],
                    o.is_wanted[GT_CATALOG_SALES] || o.is_wanted[GT_CATALOG_RETURNS],
                    o.is_wanted[GT_WEB_SALES] || o.is_wanted[GT_WEB_RETURNS]};
    GenCtx g;
    gen_ctx_init(&g, o.sf, o.seed, need);
    g.skew = o.skew;
    if (o.skew > 0) {
        size_t n = strlen(g.args);
        snprintf(g.args + n, sizeof g.args - n, " --skew %d", o.skew);
    }
    CmPool *pool = cm_pool_new(o.n_threads);
    if (!pool) {
        fprintf(stderr, "tpcds_gen: cannot start %d threads\n", o.n_threads);
        return 1;
    }
    bool is_ok = write_tables(&o, &g, pool);
    cm_pool_free(pool);
    if (is_ok) {
        fprintf(stderr, "tpcds_gen: SF %g, seed %llu, %d threads: %.2f s\n", o.sf,
                (unsigned long long)o.seed, o.n_threads, (double)(cm_now_ns() - t0) / 1e9);
    }
    return is_ok ? 0 : 1;
}
