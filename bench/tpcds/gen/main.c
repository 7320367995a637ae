/*
 * main.c - tpcds_gen: writes the TPC-DS tables as dsdgen-format .dat files.
 *
 *   tpcds_gen --sf SF --out DIR [--threads N] [--seed S] [--tables t1,t2]
 *
 * Each table is cut into chunks of units; the worker pool generates chunks
 * into per-worker buffers, and each chunk is appended to DIR/TABLE.dat.tmp
 * only when all chunks before it have been (a turn counter under a mutex),
 * so the file is the same bytes for any thread count.  A finished file is
 * renamed to TABLE.dat; on error the temporary file is removed.  Progress
 * goes to stderr; the exit status is 0 on success, 1 on any error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/tpcds/gen/gen.h"
#include "common/alloc.h"
#include "common/thread.h"

#define DEFAULT_SEED 19620718ULL /* dsdgen's default RNG seed */

static const char USAGE[] =
    "Usage: tpcds_gen --sf SF --out DIR [--threads N] [--seed S] [--tables t1,t2,...]\n"
    "Writes DIR/TABLE.dat for each table (the 24 of TPC-DS and dbgen_version by default):\n"
    "'|' after every field, empty field = NULL. The output depends only on SF and the\n"
    "seed (default 19620718), not on the thread count (default: one per core).\n";

typedef struct Options {
    double sf;                   /* scale factor, > 0 */
    const char *out;             /* output directory, borrowed from argv */
    int n_threads;               /* worker threads */
    uint64_t seed;               /* PRNG seed */
    bool is_wanted[GT_N_TABLES]; /* tables to write */
} Options;

/* One table being written: shared by the pool's tasks. */
typedef struct Job {
    const GenCtx *g;   /* read-only */
    const GenTable *t; /* the table */
    int64_t n_units;   /* units of the table */
    GenBuf *bufs;      /* one per worker, indexed by worker id */
    FILE *f;           /* the .tmp file; written under mu */
    CmMutex mu;        /* guards the fields below */
    CmCond turn;       /* signalled when next changes */
    int next;          /* the chunk whose turn it is to be written */
    int64_t n_rows;    /* rows written */
    bool is_failed;    /* a chunk ran out of memory or a write failed */
} Job;

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

static int64_t count_rows(const GenBuf *b)
{
    int64_t n = 0;
    const char *p = b->data;
    const char *end = b->data + b->len;
    while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        n++;
        p++;
    }
    return n;
}

/* A pool task: generates chunk task_idx, then appends it when its turn comes. */
static void run_chunk(void *arg, int task_idx, int worker_id)
{
    Job *j = arg;
    GenBuf *b = &j->bufs[worker_id];
    int64_t first = (int64_t)task_idx * j->t->chunk;
    int64_t end = first + j->t->chunk < j->n_units ? first + j->t->chunk : j->n_units;
    b->len = 0;
    j->t->fn(j->g, b, first, end);
    int64_t n_rows = count_rows(b);

    cm_mutex_lock(&j->mu);
    while (j->next != task_idx) {
        cm_cond_wait(&j->turn, &j->mu);
    }
    if (!j->is_failed && (b->is_oom || fwrite(b->data, 1, b->len, j->f) != b->len)) {
        j->is_failed = true;
    }
    j->n_rows += n_rows;
    j->next++;
    cm_cond_broadcast(&j->turn);
    cm_mutex_unlock(&j->mu);
}

/* Generates every chunk of job j into j->f on the pool. */
static void run_job(Job *j, CmPool *pool)
{
    int64_t n_tasks = (j->n_units + j->t->chunk - 1) / j->t->chunk;
    cm_mutex_init(&j->mu);
    cm_cond_init(&j->turn);
    cm_pool_run(pool, (int)n_tasks, run_chunk, j);
    cm_cond_fini(&j->turn);
    cm_mutex_fini(&j->mu);
}

static bool write_table(const GenCtx *g, const GenTable *t, int64_t n_units, const char *dir,
                        CmPool *pool, GenBuf *bufs)
{
    char path[4200], tmp[4210];
    snprintf(path, sizeof path, "%s/%s.dat", dir, t->name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    long long t0 = cm_now_ns();
    Job j = {.g = g, .t = t, .n_units = n_units, .bufs = bufs, .f = fopen(tmp, "wb")};
    if (!j.f) {
        fprintf(stderr, "tpcds_gen: cannot write %s: %s\n", tmp, strerror(errno));
        return false;
    }
    run_job(&j, pool);
    long size = ftell(j.f);
    bool is_ok = fclose(j.f) == 0 && !j.is_failed && rename(tmp, path) == 0;
    if (!is_ok) {
        fprintf(stderr, "tpcds_gen: failed to write %s (out of memory or disk?)\n", path);
        remove(tmp);
        return false;
    }
    fprintf(stderr, "%-24s %12lld rows %10.1f MB %7.2f s\n", t->name, (long long)j.n_rows,
            (double)size / 1e6, (double)(cm_now_ns() - t0) / 1e9);
    return true;
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
