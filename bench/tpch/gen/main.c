/*
 * main.c - tpch_gen: writes the eight TPC-H tables as '|'-terminated text.
 *
 *   tpch_gen --sf SF --out DIR [--threads N] [--seed S] [--tables t1,t2]
 *
 * Each table is written in parallel chunks by gen_write_file (tpcds_gen's
 * chunks.h), the same bytes for any thread count.  Progress goes to stderr;
 * the exit status is 0 on success, 1 on any error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/tpcds/gen/chunks.h"
#include "bench/tpch/gen/tpch.h"
#include "common/alloc.h"
#include "common/thread.h"

#define DEFAULT_SEED 19940422ULL

static const char USAGE[] =
    "Usage: tpch_gen --sf SF --out DIR [--threads N] [--seed S] [--tables t1,t2,...]\n"
    "Writes DIR/TABLE.dat for the 8 TPC-H tables (or the listed ones): '|' after every\n"
    "field. SF >= 0.01. The output depends only on SF and the seed (default 19940422),\n"
    "not on the thread count (default: one per core).\n";

typedef struct Options {
    double sf;
    const char *out; /* borrowed from argv */
    int n_threads;
    uint64_t seed;
    bool is_wanted[TPCH_N_TABLES];
} Options;

static bool parse_tables(const char *list, Options *o)
{
    memset(o->is_wanted, 0, sizeof o->is_wanted);
    while (*list) {
        size_t len = strcspn(list, ",");
        int idx = -1;
        for (int i = 0; i < TPCH_N_TABLES; i++) {
            const char *name = TPCH_TABLES[i].name;
            if (strlen(name) == len && !strncmp(name, list, len)) {
                idx = i;
            }
        }
        if (idx < 0) {
            fprintf(stderr, "tpch_gen: unknown table '%.*s'\n", (int)len, list);
            return false;
        }
        o->is_wanted[idx] = true;
        list += len + (list[len] == ',');
    }
    return true;
}

static bool parse_option(const char *a, const char *v, Options *o)
{
    char *end = NULL;
    if (!strcmp(a, "--sf")) {
        o->sf = strtod(v, &end);
    } else if (!strcmp(a, "--out")) {
        o->out = v;
        return true;
    } else if (!strcmp(a, "--threads")) {
        o->n_threads = (int)strtol(v, &end, 10);
    } else if (!strcmp(a, "--seed")) {
        o->seed = strtoull(v, &end, 10);
    } else if (!strcmp(a, "--tables")) {
        return parse_tables(v, o);
    } else {
        fprintf(stderr, "tpch_gen: unknown option %s\n%s", a, USAGE);
        return false;
    }
    if (*end != '\0') {
        fprintf(stderr, "tpch_gen: bad value '%s' for %s\n", v, a);
        return false;
    }
    return true;
}

/* Returns 0 to run, 1 on a bad command line, 2 after --help. */
static int parse_args(int argc, char **argv, Options *o)
{
    *o = (Options){.n_threads = cm_cpu_count(), .seed = DEFAULT_SEED};
    for (int i = 0; i < TPCH_N_TABLES; i++) {
        o->is_wanted[i] = true;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(USAGE, stdout);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "tpch_gen: %s needs a value\n%s", argv[i], USAGE);
            return 1;
        }
        if (!parse_option(argv[i], argv[i + 1], o)) {
            return 1;
        }
        i++;
    }
    if (!(o->sf >= 0.01) || !o->out || o->n_threads < 1) {
        fprintf(stderr, "tpch_gen: --sf >= 0.01 and --out are required, --threads >= 1\n%s", USAGE);
        return 1;
    }
    return 0;
}

/* The argument of table_chunk: table t of the context. */
typedef struct TableArg {
    const TpchCtx *g;
    int t;
} TableArg;

static void table_chunk(const void *arg, GenBuf *b, int64_t first, int64_t end)
{
    const TableArg *a = arg;
    TPCH_TABLES[a->t].fn(a->g, b, first, end);
}

static bool write_table(const TpchCtx *g, int t, const char *dir, CmPool *pool, GenBuf *bufs)
{
    TableArg arg = {.g = g, .t = t};
    GenFileSpec spec = {.prog = "tpch_gen",
                        .dir = dir,
                        .name = TPCH_TABLES[t].name,
                        .fn = table_chunk,
                        .arg = &arg,
                        .n_units = tpch_units(g, t),
                        .chunk = TPCH_TABLES[t].chunk};
    return gen_write_file(&spec, pool, bufs);
}

static bool write_tables(const Options *o, const TpchCtx *g, CmPool *pool)
{
    int n_workers = cm_pool_size(pool);
    GenBuf *bufs = cm_calloc((size_t)n_workers, sizeof(GenBuf));
    bool is_ok = bufs != NULL;
    for (int t = 0; is_ok && t < TPCH_N_TABLES; t++) {
        if (o->is_wanted[t]) {
            is_ok = write_table(g, t, o->out, pool, bufs);
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
    if (mkdir(o.out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "tpch_gen: cannot create %s: %s\n", o.out, strerror(errno));
        return 1;
    }
    long long t0 = cm_now_ns();
    TpchCtx g;
    tpch_ctx_init(&g, o.sf, o.seed);
    CmPool *pool = cm_pool_new(o.n_threads);
    if (!pool) {
        fprintf(stderr, "tpch_gen: cannot start %d threads\n", o.n_threads);
        return 1;
    }
    bool is_ok = write_tables(&o, &g, pool);
    cm_pool_free(pool);
    if (is_ok) {
        fprintf(stderr, "tpch_gen: SF %g, seed %llu, %d threads: %.2f s\n", o.sf,
                (unsigned long long)o.seed, o.n_threads, (double)(cm_now_ns() - t0) / 1e9);
    }
    return is_ok ? 0 : 1;
}
