/*
 * thread.h - mutexes, condition variables and the worker pool.
 *
 * pthreads are used only through this header.  The pool runs a parallel-for:
 * cm_pool_run() hands task indexes 0..n_tasks-1 to the pool's workers (and to
 * the calling thread, which works too) and returns when all have finished.
 * Tasks are taken in index order by an atomic counter, so a stage's tasks start
 * in order.  One cm_pool_run at a time per pool (the caller holds the pool).
 * The worker id (0..n_workers, the caller being n_workers) is the one
 * thread-local; tasks use it to pick their per-worker state.
 * CmThread is one plain background thread, for work that is not a task.
 */
#pragma once

#include <pthread.h>
#include <stdbool.h>

typedef struct CmMutex {
    pthread_mutex_t m;
} CmMutex;

typedef struct CmCond {
    pthread_cond_t c;
} CmCond;

void cm_mutex_init(CmMutex *m);
void cm_mutex_fini(CmMutex *m);
void cm_mutex_lock(CmMutex *m);
void cm_mutex_unlock(CmMutex *m);
void cm_cond_init(CmCond *c);
void cm_cond_fini(CmCond *c);
void cm_cond_wait(CmCond *c, CmMutex *m);
/* Waits at most ms milliseconds; false when the time ran out. */
bool cm_cond_timedwait(CmCond *c, CmMutex *m, int ms);
void cm_cond_signal(CmCond *c);
void cm_cond_broadcast(CmCond *c);

/* A thread of its own, for work that must go on while its starter does
 * something else (the API's streaming results, the progress watcher).  Same
 * stack size as the pool's workers. */
typedef struct CmThread {
    pthread_t tid;
} CmThread;

/* Starts fn(arg) on a new thread; false when it could not be started. */
bool cm_thread_start(CmThread *t, void *(*fn)(void *), void *arg);
void cm_thread_join(CmThread *t);

typedef struct CmPool CmPool;

/* fn(arg, task_idx, worker_id) */
typedef void (*CmTaskFn)(void *arg, int task_idx, int worker_id);

/* A pool of n_threads - 1 background threads (the caller is the n-th worker).
 * Owned; NULL on failure. */
CmPool *cm_pool_new(int n_threads);
void cm_pool_free(CmPool *pool);
/* Total workers including the caller. */
int cm_pool_size(const CmPool *pool);
/* Runs fn for every task index on the pool and waits for all of them. */
void cm_pool_run(CmPool *pool, int n_tasks, CmTaskFn fn, void *arg);

/* Number of online CPUs (at least 1). */
int cm_cpu_count(void);
/* Monotonic clock in nanoseconds. */
long long cm_now_ns(void);
