/*
 * shuffle_bench.c - push and read throughput of the shuffle store, beside the
 * memcpy bandwidth of the same machine measured in the same run.
 *
 * Data: fixed-seed rows (id BIGINT, qty INTEGER, price DOUBLE, name VARCHAR of
 * 6..29 bytes from a small vocabulary, day DATE), pre-built as 64 batches that
 * every map task pushes round-robin into the partitions.  Scenarios: all in
 * memory; a budget of a tenth of the data, uncompressed and zstd; zstd in
 * memory; and map-range reads (a skew split), first sorting, then sorted.
 * Throughput is encoded bytes (bytes_pushed) per second, GB = 1e9 bytes.
 * Files go to --dir (default: $TMPDIR or /tmp), so "disk" is mostly the page
 * cache on a machine with free memory.  Prints a markdown table.
 *
 * What is read is checked against what was pushed, per partition: every timed
 * read pass by row count, and one more, untimed pass (so that hashing does not
 * slow the figures) by an order-independent checksum, the sum of a hash of
 * every value of every row.  A mismatch, or a push or read that failed, is
 * reported on stderr and in the table ("FAILED") and makes the program exit 1,
 * so that a fast but wrong store never produces a figure that looks good.
 *
 *   shuffle_bench [--mb N] [--threads T] [--maps M] [--parts P] [--dir D] [--only K]
 *
 * Never run by ctest; see bench/RESULTS.md.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/hash.h"
#include "common/thread.h"
#include "shuffle/shuffle.h"

enum { N_BATCHES = 64, N_COLS = 5 };

/* What a partition holds: rows and the sum of their row hashes (wrapping). */
typedef struct PartSum {
    atomic_llong rows;
    atomic_ullong sum;
} PartSum;

typedef struct Bench {
    int64_t data_bytes;            /* encoded bytes to push in total */
    int threads;                   /* pool size */
    int n_maps;                    /* map tasks */
    int n_parts;                   /* partitions */
    char dir[256];                 /* temp directory */
    int only;                      /* run only scenario `only` (1-based), 0: all */
    CmPool *pool;                  /* the workers */
    CmType types[N_COLS];          /* the row type */
    CmBatch batches[N_BATCHES];    /* the input, read-only while pushing */
    uint64_t batch_sum[N_BATCHES]; /* sum of the row hashes of each batch */
    int64_t batch_bytes;           /* encoded bytes of one batch (about) */
    int64_t pushes_per_map;        /* batches each map pushes */
} Bench;

typedef struct Job {
    Bench *b;            /* the benchmark */
    ShShuffle *sh;       /* the shuffle of this scenario */
    int ranges;          /* map ranges per partition for range reads (0: whole) */
    atomic_int failures; /* tasks that failed */
    atomic_llong rows;   /* rows read */
    bool hash;           /* this read pass sums row hashes too */
    PartSum *pushed;     /* per partition, what the maps pushed (n_parts); owned */
    PartSum *read;       /* per partition, what this read pass got (n_parts); owned */
} Job;

static const char *const WORDS[] = {"alpha", "bravo", "charlie", "delta",  "echo", "foxtrot",
                                    "golf",  "hotel", "india",   "juliet", "kilo", "lima"};

/* A hash of active row i of bt over all its columns (keep in step with the
 * row type built by build_batches). */
static uint64_t row_hash(const CmBatch *bt, int i)
{
    uint32_t pos = cm_batch_pos(bt, i);
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int c = 0; c < N_COLS; c++) {
        const CmVec *v = &bt->cols[c];
        uint32_t at = v->kind == CM_VEC_CONST ? 0 : pos;
        uint64_t x;
        if (cm_vec_is_null(v, at)) {
            x = 0x5bd1e995;
        } else if (c == 0) {
            x = (uint64_t)((const int64_t *)v->data)[at];
        } else if (c == 1 || c == 4) {
            x = (uint64_t)(uint32_t)((const int32_t *)v->data)[at];
        } else if (c == 2) {
            memcpy(&x, &((const double *)v->data)[at], sizeof x);
        } else {
            const CmStr *str = &((const CmStr *)v->data)[at];
            x = cm_hash_bytes(cm_str_data(str), str->len);
        }
        h = cm_hash_combine(h, cm_hash_u64(x));
    }
    return h;
}

static uint64_t batch_sum(const CmBatch *bt)
{
    uint64_t sum = 0;
    for (int i = 0; i < bt->n_rows; i++) {
        sum += row_hash(bt, i);
    }
    return sum;
}

static void build_batches(Bench *b)
{
    CmErr err;
    cm_err_init(&err);
    b->types[0] = cm_type_make(CM_T_INT64);
    b->types[1] = cm_type_make(CM_T_INT32);
    b->types[2] = cm_type_make(CM_T_DOUBLE);
    b->types[3] = cm_type_varchar(-1, false);
    b->types[4] = cm_type_make(CM_T_DATE);
    uint64_t seed = 20240601;
    for (int k = 0; k < N_BATCHES; k++) {
        CmBatch *bt = &b->batches[k];
        cm_batch_init(bt, N_COLS, b->types, &err);
        for (int i = 0; i < CM_BATCH_CAP; i++) {
            seed = cm_hash_u64(seed + 1);
            ((int64_t *)bt->cols[0].data)[i] = (int64_t)k * CM_BATCH_CAP + i;
            ((int32_t *)bt->cols[1].data)[i] = (int32_t)(seed % 100);
            ((double *)bt->cols[2].data)[i] = (double)(seed % 100000) / 100.0;
            char name[32];
            int n = snprintf(name, sizeof name, "%s-%s-%u", WORDS[seed % 12],
                             WORDS[(seed >> 8) % 12], (unsigned)((seed >> 16) % 1000));
            ((CmStr *)bt->cols[3].data)[i] =
                cm_str_make(cm_arena_strndup(&bt->heap, name, (size_t)n), (uint32_t)n);
            ((int32_t *)bt->cols[4].data)[i] = 19000 + (int32_t)((seed >> 24) % 2000);
        }
        bt->n_rows = CM_BATCH_CAP;
        b->batch_sum[k] = batch_sum(bt);
    }
    /* id 8 + qty 4 + price 8 + name (4 + ~15) + day 4, plus column flags */
    b->batch_bytes = (int64_t)CM_BATCH_CAP * 43 + N_COLS * 8;
    b->pushes_per_map = b->data_bytes / b->batch_bytes / b->n_maps + 1;
}

static void push_task(void *arg, int map, int worker_id)
{
    Job *j = arg;
    Bench *b = j->b;
    CmErr err;
    cm_err_init(&err);
    ShWriter *w = sh_writer_open(j->sh, map, 0, &err);
    for (int64_t i = 0; w != NULL && i < b->pushes_per_map && err.code == CM_OK; i++) {
        int part = (int)((i + map) % b->n_parts);
        int k = (int)((i * 7 + map) % N_BATCHES);
        if (sh_writer_push(w, part, &b->batches[k], &err) == CM_OK) {
            atomic_fetch_add(&j->pushed[part].rows, b->batches[k].n_rows);
            atomic_fetch_add(&j->pushed[part].sum, b->batch_sum[k]);
        }
    }
    if (w == NULL || err.code != CM_OK) {
        fprintf(stderr, "push: %s\n", err.msg);
        sh_writer_abort(w);
        atomic_fetch_add(&j->failures, 1);
        return;
    }
    if (sh_writer_close(w, &err) != CM_OK) {
        fprintf(stderr, "push: %s\n", err.msg);
        atomic_fetch_add(&j->failures, 1);
    }
}

static void read_task(void *arg, int task, int worker_id)
{
    Job *j = arg;
    Bench *b = j->b;
    CmErr err;
    cm_err_init(&err);
    int part = j->ranges ? task / j->ranges : task;
    int m0 = 0, m1 = b->n_maps;
    if (j->ranges) {
        int k = task % j->ranges;
        m0 = b->n_maps * k / j->ranges;
        m1 = b->n_maps * (k + 1) / j->ranges;
    }
    ShReader *r = sh_reader_open(j->sh, part, part + 1, m0, m1, &err);
    CmBatch out;
    cm_batch_init(&out, N_COLS, b->types, &err);
    bool eof = false;
    int64_t rows = 0;
    uint64_t sum = 0;
    while (r != NULL && sh_reader_next(r, &out, &eof, &err) == CM_OK && !eof) {
        rows += out.n_rows;
        sum += j->hash ? batch_sum(&out) : 0;
    }
    atomic_fetch_add(&j->read[part].rows, rows);
    atomic_fetch_add(&j->read[part].sum, sum);
    if (r == NULL || err.code != CM_OK) {
        fprintf(stderr, "read: %s\n", err.msg);
        atomic_fetch_add(&j->failures, 1);
    }
    atomic_fetch_add(&j->rows, rows);
    cm_batch_fini(&out);
    sh_reader_close(r);
}

static double gbps(int64_t bytes, long long ns)
{
    return ns > 0 ? (double)bytes / (double)ns : 0;
}

/* ---- memcpy bandwidth ---------------------------------------------------------- */

typedef struct Copy {
    char *src, *dst; /* buffers */
    size_t bytes;    /* per task */
} Copy;

static void copy_task(void *arg, int task, int worker_id)
{
    Copy *c = arg;
    memcpy(c->dst + (size_t)task * c->bytes, c->src + (size_t)task * c->bytes, c->bytes);
}

/* Best of 5 copies of `bytes`, split over `tasks` pool tasks. */
static double memcpy_gbps(CmPool *pool, size_t bytes, int tasks)
{
    Copy c = {cm_malloc(bytes), cm_malloc(bytes), bytes / (size_t)tasks};
    if (c.src == NULL || c.dst == NULL) {
        return 0;
    }
    memset(c.src, 1, bytes);
    memset(c.dst, 2, bytes);
    long long best = -1;
    for (int rep = 0; rep < 5; rep++) {
        long long t0 = cm_now_ns();
        cm_pool_run(pool, tasks, copy_task, &c);
        long long ns = cm_now_ns() - t0;
        best = best < 0 || ns < best ? ns : best;
    }
    cm_free(c.src);
    cm_free(c.dst);
    return gbps((int64_t)(c.bytes * (size_t)tasks), best);
}

/* ---- scenarios ------------------------------------------------------------------- */

typedef struct Scenario {
    const char *name; /* table row label */
    int codec;        /* SH_CODEC_* */
    bool in_memory;   /* compress in memory */
    int budget_div;   /* budget = data / budget_div, or 2 x data when 0 */
    int ranges;       /* map ranges per partition in the read (0: whole) */
} Scenario;

/* Compares what pass `what` read with what was pushed, partition by
 * partition (checksums only when the pass hashed); returns the partitions
 * that differ, each reported on stderr. */
static int check_read(const Bench *b, const Job *j, const char *scenario, const char *what)
{
    int bad = 0;
    for (int p = 0; p < b->n_parts; p++) {
        long long rows = atomic_load(&j->read[p].rows), want = atomic_load(&j->pushed[p].rows);
        unsigned long long sum = atomic_load(&j->read[p].sum);
        unsigned long long want_sum = atomic_load(&j->pushed[p].sum);
        if (rows != want || (j->hash && sum != want_sum)) {
            fprintf(stderr,
                    "shuffle_bench: %s, %s: partition %d read %lld rows (checksum %016llx), "
                    "pushed %lld rows (checksum %016llx)\n",
                    scenario, what, p, rows, j->hash ? sum : 0ULL, want, j->hash ? want_sum : 0ULL);
            bad++;
        }
    }
    return bad;
}

static void clear_sums(PartSum *s, int n)
{
    for (int p = 0; p < n; p++) {
        atomic_store(&s[p].rows, 0);
        atomic_store(&s[p].sum, 0);
    }
}

/* Runs one scenario and prints its table row; false when it failed or read
 * something else than was pushed. */
static bool run_scenario(Bench *b, const Scenario *sc)
{
    ShStoreOptions o;
    sh_store_options_init(&o, NULL);
    o.codec = sc->codec;
    o.compress_in_memory = sc->in_memory;
    o.memory_limit = sc->budget_div ? b->data_bytes / sc->budget_div : 2 * b->data_bytes;
    o.split_threshold = (int64_t)256 << 20;
    snprintf(o.temp_directory, sizeof o.temp_directory, "%s", b->dir);
    CmErr err;
    cm_err_init(&err);
    ShStore *st = sh_store_new_opts(&o, &err);
    Job j = {.b = b,
             .sh = st ? sh_shuffle_new(st, b->n_maps, b->n_parts, N_COLS, b->types, &err) : NULL};
    j.pushed = cm_calloc((size_t)b->n_parts, sizeof(PartSum));
    j.read = cm_calloc((size_t)b->n_parts, sizeof(PartSum));
    if (j.sh == NULL || j.pushed == NULL || j.read == NULL) {
        fprintf(stderr, "shuffle_bench: %s: %s\n", sc->name, err.code ? err.msg : "out of memory");
        cm_free(j.pushed);
        cm_free(j.read);
        sh_store_free(st);
        return false;
    }
    clear_sums(j.pushed, b->n_parts);
    atomic_init(&j.failures, 0);
    atomic_init(&j.rows, 0);
    long long t0 = cm_now_ns();
    cm_pool_run(b->pool, b->n_maps, push_task, &j);
    long long push_ns = cm_now_ns() - t0;
    ShShuffleStats s;
    sh_shuffle_stats(j.sh, &s);
    j.ranges = sc->ranges;
    long long read_ns[2] = {0, 0};
    int bad = 0;
    int n_tasks = b->n_parts * (sc->ranges ? sc->ranges : 1);
    for (int pass = 0; pass < (sc->ranges ? 2 : 1); pass++) {
        clear_sums(j.read, b->n_parts);
        t0 = cm_now_ns();
        cm_pool_run(b->pool, n_tasks, read_task, &j);
        read_ns[pass] = cm_now_ns() - t0;
        bad += check_read(b, &j, sc->name, pass == 0 ? "timed read" : "second timed read");
    }
    j.hash = true;
    clear_sums(j.read, b->n_parts);
    cm_pool_run(b->pool, n_tasks, read_task, &j);
    bad += check_read(b, &j, sc->name, "checksum read");
    bool failed = bad > 0 || atomic_load(&j.failures) > 0;
    ShShuffleStats after;
    sh_shuffle_stats(j.sh, &after);
    ShStoreStats ss;
    sh_store_stats(st, &ss);
    printf("| %s | %s | %lld MiB | %.0f MiB | %.2f | %.2f", sc->name,
           sc->codec == SH_CODEC_ZSTD ? "zstd" : "none", (long long)(o.memory_limit >> 20),
           (double)ss.peak_used / (1 << 20), gbps(s.bytes_pushed, push_ns),
           gbps(s.bytes_pushed, read_ns[0]));
    if (sc->ranges) {
        printf(" (sorting); %.2f (sorted)", gbps(s.bytes_pushed, read_ns[1]));
    }
    printf(" | %.0f | %lld | %lld | %lld | %lld |%s\n", (double)after.spilled_bytes / (1 << 20),
           (long long)after.files, (long long)after.sorted_on_read, (long long)s.pauses,
           (long long)s.paused_ms, failed ? " FAILED" : "");
    fflush(stdout);
    sh_shuffle_free(j.sh);
    sh_store_free(st);
    cm_free(j.pushed);
    cm_free(j.read);
    return !failed;
}

int main(int argc, char **argv)
{
    Bench *b = cm_calloc(1, sizeof *b);
    b->data_bytes = (int64_t)512 << 20;
    b->threads = cm_cpu_count();
    b->n_maps = 8;
    b->n_parts = 16;
    const char *tmp = getenv("TMPDIR");
    snprintf(b->dir, sizeof b->dir, "%s", tmp ? tmp : "/tmp");
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--mb") == 0) {
            b->data_bytes = (int64_t)atoll(argv[i + 1]) << 20;
        } else if (strcmp(argv[i], "--threads") == 0) {
            b->threads = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "--maps") == 0) {
            b->n_maps = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "--parts") == 0) {
            b->n_parts = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "--only") == 0) {
            b->only = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "--dir") == 0) {
            snprintf(b->dir, sizeof b->dir, "%s", argv[i + 1]);
        } else {
            fprintf(stderr,
                    "usage: %s [--mb N] [--threads T] [--maps M] [--parts P] [--dir D] "
                    "[--only K]\n",
                    argv[0]);
            return 2;
        }
    }
    b->pool = cm_pool_new(b->threads);
    build_batches(b);
    double copy1 = memcpy_gbps(b->pool, (size_t)256 << 20, 1);
    double copy_n = memcpy_gbps(b->pool, (size_t)256 << 20, b->threads);
    printf("shuffle_bench: %lld MiB encoded, %d threads, %d maps, %d partitions, CM_BATCH_CAP "
           "%d, files in %s\n\n",
           (long long)(b->data_bytes >> 20), b->threads, b->n_maps, b->n_parts, CM_BATCH_CAP,
           b->dir);
    printf("memcpy (256 MiB, best of 5): %.2f GB/s on 1 thread, %.2f GB/s on %d threads\n\n", copy1,
           copy_n, b->threads);
    printf("| scenario | codec on disk | budget | peak held | push GB/s | read GB/s | spilled MiB "
           "| files | sorted | pauses | paused ms |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    static const Scenario SCENARIOS[] = {
        {"in memory", SH_CODEC_NONE, false, 0, 0},
        {"in memory, zstd in memory", SH_CODEC_ZSTD, true, 0, 0},
        {"budget 1/10", SH_CODEC_NONE, false, 10, 0},
        {"budget 1/10", SH_CODEC_ZSTD, false, 10, 0},
        {"budget 1/10, map-range reads (4 per partition)", SH_CODEC_ZSTD, false, 10, 4},
    };
    int n_failed = 0;
    for (size_t k = 0; k < sizeof SCENARIOS / sizeof SCENARIOS[0]; k++) {
        if (b->only == 0 || b->only == (int)k + 1) {
            n_failed += !run_scenario(b, &SCENARIOS[k]);
        }
    }
    for (int k = 0; k < N_BATCHES; k++) {
        cm_batch_fini(&b->batches[k]);
    }
    cm_pool_free(b->pool);
    cm_free(b);
    if (n_failed > 0) {
        fprintf(stderr,
                "shuffle_bench: %d scenario(s) FAILED: what was read is not what was "
                "pushed, or a task failed (see above)\n",
                n_failed);
        return 1;
    }
    return 0;
}
