/*
 * chunks.c - the parallel, ordered writer of a generated table file
 * (chunks.h has the contract).
 */
#include "bench/tpcds/gen/chunks.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* One file being written: shared by the pool's tasks. */
typedef struct Job {
    const GenFileSpec *spec;
    GenBuf *bufs;   /* one per worker, indexed by worker id */
    FILE *f;        /* the .tmp file; written under mu */
    CmMutex mu;     /* guards the fields below */
    CmCond turn;    /* signalled when next changes */
    int next;       /* the chunk whose turn it is to be written */
    int64_t n_rows; /* rows written */
    bool is_failed; /* a chunk ran out of memory or a write failed */
} Job;

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
    const GenFileSpec *s = j->spec;
    GenBuf *b = &j->bufs[worker_id];
    int64_t first = (int64_t)task_idx * s->chunk;
    int64_t end = first + s->chunk < s->n_units ? first + s->chunk : s->n_units;
    b->len = 0;
    s->fn(s->arg, b, first, end);
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

bool gen_write_file(const GenFileSpec *spec, CmPool *pool, GenBuf *bufs)
{
    char path[4200], tmp[4210];
    snprintf(path, sizeof path, "%s/%s.dat", spec->dir, spec->name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    long long t0 = cm_now_ns();
    Job j = {.spec = spec, .bufs = bufs, .f = fopen(tmp, "wb")};
    if (!j.f) {
        fprintf(stderr, "%s: cannot write %s: %s\n", spec->prog, tmp, strerror(errno));
        return false;
    }
    int64_t n_tasks = (spec->n_units + spec->chunk - 1) / spec->chunk;
    cm_mutex_init(&j.mu);
    cm_cond_init(&j.turn);
    cm_pool_run(pool, (int)n_tasks, run_chunk, &j);
    cm_cond_fini(&j.turn);
    cm_mutex_fini(&j.mu);
    long size = ftell(j.f);
    bool is_ok = fclose(j.f) == 0 && !j.is_failed && rename(tmp, path) == 0;
    if (!is_ok) {
        fprintf(stderr, "%s: failed to write %s (out of memory or disk?)\n", spec->prog, path);
        remove(tmp);
        return false;
    }
    fprintf(stderr, "%-24s %12lld rows %10.1f MB %7.2f s\n", spec->name, (long long)j.n_rows,
            (double)size / 1e6, (double)(cm_now_ns() - t0) / 1e9);
    return true;
}
