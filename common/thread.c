/*
 * thread.c - pthread wrappers and the parallel-for worker pool.
 *
 * Invariant: a job is published under `lock` with a new generation number;
 * workers sleep on `wake` until the generation changes, then pull task indexes
 * from `next_task` until it passes n_tasks; the last to finish signals `done`.
 */
#include "common/thread.h"

#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/err.h"

void cm_mutex_init(CmMutex *m)
{
    pthread_mutex_init(&m->m, NULL);
}
void cm_mutex_fini(CmMutex *m)
{
    pthread_mutex_destroy(&m->m);
}
void cm_mutex_lock(CmMutex *m)
{
    pthread_mutex_lock(&m->m);
}
void cm_mutex_unlock(CmMutex *m)
{
    pthread_mutex_unlock(&m->m);
}
void cm_cond_init(CmCond *c)
{
    pthread_cond_init(&c->c, NULL);
}
void cm_cond_fini(CmCond *c)
{
    pthread_cond_destroy(&c->c);
}
void cm_cond_wait(CmCond *c, CmMutex *m)
{
    pthread_cond_wait(&c->c, &m->m);
}
void cm_cond_signal(CmCond *c)
{
    pthread_cond_signal(&c->c);
}

bool cm_cond_timedwait(CmCond *c, CmMutex *m, int ms)
{
    struct timespec at;
    clock_gettime(CLOCK_REALTIME, &at);
    at.tv_sec += ms / 1000;
    at.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (at.tv_nsec >= 1000000000L) {
        at.tv_sec++;
        at.tv_nsec -= 1000000000L;
    }
    return pthread_cond_timedwait(&c->c, &m->m, &at) == 0;
}
void cm_cond_broadcast(CmCond *c)
{
    pthread_cond_broadcast(&c->c);
}

#define CM_THREAD_STACK_SIZE ((size_t)8 << 20) /* bytes of each worker's stack */
#define IDLE_COLLECT_MS 100                    /* an idle worker collects its heap this often... */
#define IDLE_COLLECT_ROUNDS 600                /* ...for a minute after its last job */

typedef struct PoolThread {
    CmPool *pool;
    int worker_id;
    pthread_t tid;
} PoolThread;

struct CmPool {
    int n_threads;       /* workers including the caller */
    PoolThread *threads; /* n_threads - 1 background threads */
    CmMutex lock;
    CmCond wake; /* guarded by lock: a new job or shutdown */
    CmCond done; /* guarded by lock: the job finished */
    /* guarded by lock */
    unsigned long generation;
    bool shutdown;
    int n_busy; /* background workers still in the current job */
    /* the current job: written under lock before the generation changes */
    CmTaskFn fn;
    void *arg;
    int n_tasks;
    atomic_int next_task;
};

static void run_tasks(CmPool *pool, int worker_id)
{
    for (;;) {
        int t = atomic_fetch_add(&pool->next_task, 1);
        if (t >= pool->n_tasks) {
            return;
        }
        pool->fn(pool->arg, t, worker_id);
    }
}

static void *worker_main(void *p)
{
    PoolThread *self = p;
    CmPool *pool = self->pool;
    unsigned long seen = 0;
    int idle_rounds = IDLE_COLLECT_ROUNDS; /* none before the first job */
    cm_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->shutdown && pool->generation == seen) {
            /* Idle, but the memory this worker allocated (result and table
             * blocks) is still being freed by the caller's thread: collect it
             * now and then for a while after each job (cm_alloc_collect). */
            if (idle_rounds >= IDLE_COLLECT_ROUNDS) {
                cm_cond_wait(&pool->wake, &pool->lock);
            } else if (!cm_cond_timedwait(&pool->wake, &pool->lock, IDLE_COLLECT_MS)) {
                idle_rounds++;
                cm_mutex_unlock(&pool->lock);
                cm_alloc_collect();
                cm_mutex_lock(&pool->lock);
            }
        }
        idle_rounds = 0;
        if (pool->shutdown) {
            break;
        }
        seen = pool->generation;
        cm_mutex_unlock(&pool->lock);
        run_tasks(pool, self->worker_id);
        cm_mutex_lock(&pool->lock);
        if (--pool->n_busy == 0) {
            cm_cond_signal(&pool->done);
        }
    }
    cm_mutex_unlock(&pool->lock);
    return NULL;
}

/* Starts fn(arg).  The stack is set, not left to the C library (RLIMIT_STACK
 * with glibc, 128 KiB with musl): it must hold the recursion over expression
 * trees as deep as the binder's limit (PL_MAX_EXPR_DEPTH), which takes under
 * 1 MiB even with ASan's larger frames. */
static bool spawn(pthread_t *tid, void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_attr_t *attr_p = NULL;
    if (pthread_attr_init(&attr) == 0) {
        attr_p = &attr;
        (void)pthread_attr_setstacksize(&attr, CM_THREAD_STACK_SIZE);
    }
    bool is_started = pthread_create(tid, attr_p, fn, arg) == 0;
    if (attr_p != NULL) {
        pthread_attr_destroy(attr_p);
    }
    return is_started;
}

bool cm_thread_start(CmThread *t, void *(*fn)(void *), void *arg)
{
    return spawn(&t->tid, fn, arg);
}

void cm_thread_join(CmThread *t)
{
    (void)pthread_join(t->tid, NULL);
}

CmPool *cm_pool_new(int n_threads)
{
    if (n_threads < 1) {
        n_threads = 1;
    }
    CmPool *pool = cm_calloc(1, sizeof *pool);
    if (pool == NULL) {
        return NULL;
    }
    pool->n_threads = n_threads;
    cm_mutex_init(&pool->lock);
    cm_cond_init(&pool->wake);
    cm_cond_init(&pool->done);
    pool->threads = cm_calloc((size_t)n_threads, sizeof(PoolThread));
    if (pool->threads == NULL) {
        cm_pool_free(pool);
        return NULL;
    }
    for (int i = 0; i < n_threads - 1; i++) {
        pool->threads[i].pool = pool;
        pool->threads[i].worker_id = i;
        if (!spawn(&pool->threads[i].tid, worker_main, &pool->threads[i])) {
            pool->n_threads = i + 1; /* the ones started, plus the caller */
            cm_pool_free(pool);
            return NULL;
        }
    }
    return pool;
}

void cm_pool_free(CmPool *pool)
{
    if (pool == NULL) {
        return;
    }
    if (pool->threads != NULL) {
        cm_mutex_lock(&pool->lock);
        pool->shutdown = true;
        cm_cond_broadcast(&pool->wake);
        cm_mutex_unlock(&pool->lock);
        for (int i = 0; i < pool->n_threads - 1; i++) {
            pthread_join(pool->threads[i].tid, NULL);
        }
        cm_free(pool->threads);
    }
    cm_cond_fini(&pool->done);
    cm_cond_fini(&pool->wake);
    cm_mutex_fini(&pool->lock);
    cm_free(pool);
}

int cm_pool_size(const CmPool *pool)
{
    return pool->n_threads;
}

void cm_pool_run(CmPool *pool, int n_tasks, CmTaskFn fn, void *arg)
{
    if (n_tasks <= 0) {
        return;
    }
    if (n_tasks == 1) {
        /* Waking the workers for one task costs more than the task when it is
         * small (a recursive CTE runs a few one-task stages per round); the
         * caller runs it, as the worker it would have been anyway. */
        fn(arg, 0, pool->n_threads - 1);
        return;
    }
    cm_mutex_lock(&pool->lock);
    pool->fn = fn;
    pool->arg = arg;
    pool->n_tasks = n_tasks;
    atomic_store(&pool->next_task, 0);
    pool->n_busy = pool->n_threads - 1;
    pool->generation++;
    cm_cond_broadcast(&pool->wake);
    cm_mutex_unlock(&pool->lock);
    run_tasks(pool, pool->n_threads - 1);
    cm_mutex_lock(&pool->lock);
    while (pool->n_busy > 0) {
        cm_cond_wait(&pool->done, &pool->lock);
    }
    cm_mutex_unlock(&pool->lock);
}

int cm_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

long long cm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
