/*
 * test_thread.c - unit tests for common/thread.c: the parallel-for pool runs
 * every task index exactly once, hands out worker ids in range and never to
 * two running tasks at once, and survives many runs; plus mutex/condition
 * basics and the clock.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <string.h>

#include "common/thread.h"

enum { N_TASKS = 1000, MAX_WORKERS = 16 };

typedef struct Counts {
    atomic_int hits[N_TASKS];
    atomic_int busy[MAX_WORKERS]; /* 1 while a task of that worker id runs */
    atomic_int bad_worker;        /* worker id out of range */
    atomic_int shared_worker;     /* two tasks ran under one worker id at once */
    atomic_int by_worker[MAX_WORKERS];
    int n_workers;
} Counts;

static void count_task(void *arg, int task_idx, int worker_id)
{
    Counts *c = arg;
    if (worker_id < 0 || worker_id >= c->n_workers) {
        atomic_fetch_add(&c->bad_worker, 1);
        return;
    }
    if (atomic_exchange(&c->busy[worker_id], 1) != 0) {
        atomic_fetch_add(&c->shared_worker, 1);
    }
    atomic_fetch_add(&c->hits[task_idx], 1);
    atomic_fetch_add(&c->by_worker[worker_id], 1);
    /* A little work, so that tasks overlap in time. */
    volatile unsigned x = (unsigned)task_idx;
    for (int i = 0; i < 200; i++) {
        x = x * 1103515245u + 12345u;
    }
    atomic_store(&c->busy[worker_id], 0);
}

static void init_counts(Counts *c, int n_workers)
{
    memset(c, 0, sizeof *c);
    c->n_workers = n_workers;
}

static void run_and_check(int n_threads)
{
    CmPool *pool = cm_pool_new(n_threads);
    cr_assert_not_null(pool);
    cr_assert_eq(cm_pool_size(pool), n_threads);
    static Counts c;
    init_counts(&c, n_threads);
    cm_pool_run(pool, N_TASKS, count_task, &c);
    for (int t = 0; t < N_TASKS; t++) {
        cr_assert_eq(atomic_load(&c.hits[t]), 1, "task %d ran %d times with %d threads", t,
                     atomic_load(&c.hits[t]), n_threads);
    }
    cr_expect_eq(atomic_load(&c.bad_worker), 0);
    cr_expect_eq(atomic_load(&c.shared_worker), 0);
    int total = 0;
    for (int w = 0; w < n_threads; w++) {
        total += atomic_load(&c.by_worker[w]);
    }
    cr_expect_eq(total, N_TASKS);
    cm_pool_free(pool);
}

Test(cm_thread, every_task_once_with_1_thread, .timeout = 30)
{
    run_and_check(1);
}

Test(cm_thread, every_task_once_with_2_threads, .timeout = 30)
{
    run_and_check(2);
}

Test(cm_thread, every_task_once_with_4_threads, .timeout = 30)
{
    run_and_check(4);
}

Test(cm_thread, single_thread_runs_on_the_caller_in_order, .timeout = 30)
{
    CmPool *pool = cm_pool_new(1);
    cr_assert_not_null(pool);
    static Counts c;
    init_counts(&c, 1);
    cm_pool_run(pool, 10, count_task, &c);
    cr_expect_eq(atomic_load(&c.by_worker[0]), 10, "the caller is worker 0 of a 1-pool");
    cm_pool_free(pool);
}

Test(cm_thread, pool_size_is_at_least_one, .timeout = 30)
{
    CmPool *pool = cm_pool_new(0);
    cr_assert_not_null(pool);
    cr_expect_eq(cm_pool_size(pool), 1);
    static Counts c;
    init_counts(&c, 1);
    cm_pool_run(pool, 5, count_task, &c);
    for (int t = 0; t < 5; t++) {
        cr_expect_eq(atomic_load(&c.hits[t]), 1);
    }
    cm_pool_free(pool);
}

typedef struct Order {
    atomic_int next; /* order in which tasks started */
    int started[64];
} Order;

static void record_order(void *arg, int task_idx, int worker_id)
{
    Order *o = arg;
    o->started[atomic_fetch_add(&o->next, 1)] = task_idx;
}

Test(cm_thread, tasks_start_in_index_order_on_one_thread, .timeout = 30)
{
    CmPool *pool = cm_pool_new(1);
    static Order o;
    memset(&o, 0, sizeof o);
    cm_pool_run(pool, 64, record_order, &o);
    for (int i = 0; i < 64; i++) {
        cr_assert_eq(o.started[i], i);
    }
    cm_pool_free(pool);
}

Test(cm_thread, zero_tasks_return_at_once, .timeout = 30)
{
    CmPool *pool = cm_pool_new(2);
    static Counts c;
    init_counts(&c, 2);
    cm_pool_run(pool, 0, count_task, &c);
    cm_pool_run(pool, -3, count_task, &c);
    for (int t = 0; t < N_TASKS; t++) {
        cr_assert_eq(atomic_load(&c.hits[t]), 0);
    }
    /* And the pool still works afterwards. */
    cm_pool_run(pool, 3, count_task, &c);
    cr_expect_eq(atomic_load(&c.hits[2]), 1);
    cm_pool_free(pool);
}

typedef struct SumJob {
    atomic_llong sum;
    int round;
} SumJob;

static void sum_task(void *arg, int task_idx, int worker_id)
{
    SumJob *j = arg;
    atomic_fetch_add(&j->sum, (long long)task_idx * 7 + j->round);
}

Test(cm_thread, pool_reuse_across_many_runs, .timeout = 30)
{
    CmPool *pool = cm_pool_new(4);
    cr_assert_not_null(pool);
    for (int round = 0; round < 500; round++) {
        /* Vary the task count, including fewer tasks than workers. */
        int n = 1 + (round * 37) % 120;
        SumJob j = {.round = round};
        atomic_init(&j.sum, 0);
        cm_pool_run(pool, n, sum_task, &j);
        long long expect = 7LL * n * (n - 1) / 2 + (long long)round * n;
        cr_assert_eq(atomic_load(&j.sum), expect, "round %d with %d tasks", round, n);
    }
    cm_pool_free(pool);
}

Test(cm_thread, many_pools_created_and_freed, .timeout = 30)
{
    for (int i = 0; i < 50; i++) {
        CmPool *pool = cm_pool_new(1 + i % 4);
        cr_assert_not_null(pool);
        SumJob j = {.round = 0};
        atomic_init(&j.sum, 0);
        cm_pool_run(pool, 10, sum_task, &j);
        cr_assert_eq(atomic_load(&j.sum), 7LL * 45);
        cm_pool_free(pool);
    }
    cm_pool_free(NULL);
}

/* ---- mutex and condition variable --------------------------------------------- */

typedef struct Handoff {
    CmMutex lock;
    CmCond cond;
    long long counter; /* guarded by lock */
    int turn;          /* guarded by lock: which task index may go next */
} Handoff;

static void locked_add(void *arg, int task_idx, int worker_id)
{
    Handoff *h = arg;
    for (int i = 0; i < 1000; i++) {
        cm_mutex_lock(&h->lock);
        h->counter++;
        cm_mutex_unlock(&h->lock);
    }
}

Test(cm_thread, mutex_protects_a_counter, .timeout = 30)
{
    CmPool *pool = cm_pool_new(4);
    static Handoff h;
    memset(&h, 0, sizeof h);
    cm_mutex_init(&h.lock);
    cm_pool_run(pool, 40, locked_add, &h);
    cr_expect_eq(h.counter, 40000);
    cm_mutex_fini(&h.lock);
    cm_pool_free(pool);
}

/* Two tasks alternate strictly through a condition variable: task 0 may
 * only act on even turns, task 1 on odd ones. */
static void ping_pong(void *arg, int task_idx, int worker_id)
{
    Handoff *h = arg;
    for (int i = 0; i < 200; i++) {
        cm_mutex_lock(&h->lock);
        while (h->turn % 2 != task_idx) {
            cm_cond_wait(&h->cond, &h->lock);
        }
        h->counter += task_idx == 0 ? 1 : 1000;
        h->turn++;
        cm_cond_broadcast(&h->cond);
        cm_mutex_unlock(&h->lock);
    }
}

Test(cm_thread, condition_variable_hands_over_turns, .timeout = 30)
{
    CmPool *pool = cm_pool_new(2);
    static Handoff h;
    memset(&h, 0, sizeof h);
    cm_mutex_init(&h.lock);
    cm_cond_init(&h.cond);
    cm_pool_run(pool, 2, ping_pong, &h);
    cr_expect_eq(h.turn, 400);
    cr_expect_eq(h.counter, 200 + 200 * 1000);
    cm_cond_fini(&h.cond);
    cm_mutex_fini(&h.lock);
    cm_pool_free(pool);
}

Test(cm_thread, cpu_count_and_clock)
{
    cr_expect_geq(cm_cpu_count(), 1);
    long long a = cm_now_ns();
    volatile unsigned x = 0;
    for (int i = 0; i < 100000; i++) {
        x += (unsigned)i;
    }
    long long b = cm_now_ns();
    cr_expect_geq(b, a, "the clock is monotonic");
    cr_expect_gt(a, 0);
}
