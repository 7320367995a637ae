/*
 * test_mem.c - the memory manager: limit, fair share, refusals, the OOM
 * message, and the query group's peak.  The manager is process-wide, so each
 * test sets its own limit and releases everything it took.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "common/alloc.h"
#include "common/arena.h"
#include "common/mem.h"
#include "common/thread.h"

static void big_limit(void)
{
    cm_mem_set_limit((int64_t)1 << 30);
}

TestSuite(cm_mem, .init = big_limit);

/* Sets the limit whose pooled part (the limit less the tenth the pools leave
 * for what is not reserved) is `pooled`: the tests below count in it. */
static void pool_limit(int64_t pooled)
{
    cm_mem_set_limit(cm_mem_limit_pooling(pooled));
    CmMemStats st;
    cm_mem_stats(&st);
    cr_assert_eq(st.pooled, pooled);
}

Test(cm_mem, the_pools_share_the_limit_less_a_tenth)
{
    cm_mem_set_limit(1000);
    CmMemStats st;
    cm_mem_stats(&st);
    cr_expect_eq(st.limit, 1000);
    cr_expect_eq(st.pooled, 900);
    CmMemRes r;
    cm_mem_res_init(&r, CM_MEM_EXECUTION, "test consumer", NULL);
    CmErr err;
    cm_err_init(&err);
    cr_expect_eq(cm_mem_need(&r, 900, &err), CM_OK);
    cr_expect_eq(cm_mem_need(&r, 1, &err), CM_OOM, "the last tenth is not reserved");
    cr_expect(strstr(err.msg, "memory_limit 1000 bytes") != NULL, "%s", err.msg);
    cm_mem_res_fini(&r);
}

Test(cm_mem, grow_within_limit_and_release)
{
    pool_limit(1000);
    CmMemRes r;
    cm_mem_res_init(&r, CM_MEM_EXECUTION, "test consumer", NULL);
    cr_assert(cm_mem_grow(&r, 600));
    cr_expect_eq(r.held, 600);
    cr_expect(!cm_mem_grow(&r, 500), "over the limit is refused");
    cr_expect_eq(r.held, 600, "a refusal changes nothing");
    cr_expect(!cm_mem_grow(&r, 300), "an eighth stays free for what cannot spill");
    cr_expect(cm_mem_grow(&r, 275));
    CmErr err;
    cm_err_init(&err);
    cr_expect_eq(cm_mem_need(&r, 125, &err), CM_OK, "need may use the headroom");
    cr_expect_eq(r.peak, 1000);
    CmMemStats st;
    cm_mem_stats(&st);
    cr_expect_eq(st.used[CM_MEM_EXECUTION], 1000);
    cr_expect_eq(st.n_consumers[CM_MEM_EXECUTION], 1);
    cm_mem_res_fini(&r);
    cm_mem_stats(&st);
    cr_expect_eq(st.used[CM_MEM_EXECUTION], 0);
    cr_expect_eq(st.n_consumers[CM_MEM_EXECUTION], 0);
}

Test(cm_mem, fair_share_between_consumers)
{
    pool_limit(1000);
    CmMemRes a, b;
    cm_mem_res_init(&a, CM_MEM_EXECUTION, "a", NULL);
    cm_mem_res_init(&b, CM_MEM_EXECUTION, "b", NULL);
    cr_assert(cm_mem_grow(&a, 300));
    /* With two consumers each may hold up to half. */
    cr_expect(cm_mem_grow(&b, 500));
    cr_expect(!cm_mem_grow(&b, 1), "b is at its share");
    cr_expect(!cm_mem_grow(&a, 200), "the headroom is kept");
    cr_expect(cm_mem_grow(&a, 75));
    /* need ignores the share and the headroom, not the limit */
    CmErr err;
    cm_err_init(&err);
    cr_expect_eq(cm_mem_need(&b, 125, &err), CM_OK);
    cr_expect_eq(cm_mem_need(&b, 1, &err), CM_OOM);
    cm_mem_res_fini(&a);
    cm_mem_res_fini(&b);
}

/* A thread that holds memory and releases it after a while. */
typedef struct Holder {
    CmMemRes res;
    int64_t bytes;
    int release_after_ms; /* < 0: never (the test releases it) */
    atomic_bool holding;
} Holder;

static void *hold_then_release(void *arg)
{
    Holder *h = arg;
    CmErr err;
    cm_err_init(&err);
    cr_assert_eq(cm_mem_need(&h->res, h->bytes, &err), CM_OK);
    atomic_store(&h->holding, true);
    if (h->release_after_ms >= 0) {
        struct timespec d = {0, (long)h->release_after_ms * 1000000L};
        nanosleep(&d, NULL);
        cm_mem_shrink(&h->res, h->bytes);
    }
    return NULL;
}

static double since_ms(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* cm_mem_need of `bytes` for a new consumer `me`, timed (*ms). */
static CmStatus timed_need(CmMemRes *me, int64_t bytes, CmErr *err, double *ms)
{
    cm_mem_res_init(me, CM_MEM_EXECUTION, "join block", NULL);
    cm_err_init(err);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CmStatus st = cm_mem_need(me, bytes, err);
    *ms = since_ms(&t0);
    return st;
}

Test(cm_mem, a_need_waits_for_another_threads_release)
{
    pool_limit(1000);
    Holder h = {.bytes = 800, .release_after_ms = 200};
    cm_mem_res_init(&h.res, CM_MEM_EXECUTION, "other task", NULL);
    CmThread t;
    cr_assert(cm_thread_start(&t, hold_then_release, &h));
    while (!atomic_load(&h.holding)) {
    }
    CmMemRes me;
    CmErr err;
    double ms;
    cr_expect_eq(timed_need(&me, 500, &err, &ms), CM_OK, "%s", err.msg);
    cr_expect_geq(ms, 100.0, "granted only once the other thread released");
    cm_thread_join(&t);
    cm_mem_res_fini(&me);
    cm_mem_res_fini(&h.res);
}

Test(cm_mem, a_need_no_release_can_meet_is_refused_at_once)
{
    pool_limit(1000);
    CmMemRes mine, me;
    cm_mem_res_init(&mine, CM_MEM_EXECUTION, "this thread's sort", NULL);
    cm_mem_res_init(&me, CM_MEM_EXECUTION, "join block", NULL);
    CmErr err;
    cm_err_init(&err);
    cr_assert_eq(cm_mem_need(&mine, 800, &err), CM_OK);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_expect_eq(cm_mem_need(&me, 500, &err), CM_OOM, "held by this thread: no wait");
    cr_expect_eq(cm_mem_need(&me, 2000, &err), CM_OOM, "over the limit: no wait");
    cr_expect_lt(since_ms(&t0), 50.0);
    cm_mem_res_fini(&mine);
}

Test(cm_mem, a_need_gives_up_when_other_threads_stop_releasing)
{
    pool_limit(1000);
    Holder h = {.bytes = 800, .release_after_ms = -1};
    cm_mem_res_init(&h.res, CM_MEM_EXECUTION, "broadcast table", NULL);
    CmThread t;
    cr_assert(cm_thread_start(&t, hold_then_release, &h));
    cm_thread_join(&t);
    CmMemRes me;
    CmErr err;
    double ms;
    cr_expect_eq(timed_need(&me, 500, &err, &ms), CM_OOM);
    cr_expect_geq(ms, 900.0, "waited for a release that did not come");
    cr_expect(strstr(err.msg, "800 bytes by broadcast table") != NULL, "%s", err.msg);
    cm_mem_res_fini(&h.res);
}

Test(cm_mem, fixed_buffers_take_no_share)
{
    pool_limit(1000);
    CmMemRes stages, agg;
    cm_mem_res_init(&stages, CM_MEM_EXECUTION, "stages", NULL);
    stages.fixed = true;
    cm_mem_res_init(&agg, CM_MEM_EXECUTION, "agg", NULL);
    cr_assert(cm_mem_grow(&stages, 100));
    CmMemStats st;
    cm_mem_stats(&st);
    cr_expect_eq(st.n_consumers[CM_MEM_EXECUTION], 0, "fixed buffers are not a consumer");
    /* alone among the consumers, agg may take all but the headroom (875) less
     * what the buffers hold; with the buffers counted it would stop at 500 */
    cr_expect(cm_mem_grow(&agg, 700));
    cr_expect(cm_mem_grow(&agg, 75));
    cr_expect(!cm_mem_grow(&agg, 1), "the headroom is kept");
    cm_mem_res_fini(&stages);
    cm_mem_res_fini(&agg);
    cm_mem_stats(&st);
    cr_expect_eq(st.used[CM_MEM_EXECUTION], 0);
}

Test(cm_mem, shared_table_takes_more_than_a_slice)
{
    pool_limit(1000);
    CmMemRes task[3], table, other;
    for (int i = 0; i < 3; i++) {
        cm_mem_res_init(&task[i], CM_MEM_EXECUTION, "task", NULL);
        cr_assert(cm_mem_grow(&task[i], 100));
    }
    cm_mem_res_init(&other, CM_MEM_EXECUTION, "other", NULL);
    cm_mem_res_init(&table, CM_MEM_EXECUTION, "broadcast table", NULL);
    table.shared = true;
    /* beside three tasks a consumer's slice is 1000 / 4 = 250; the table that
     * serves them all may take what the headroom (875) leaves: 575 */
    cr_expect(!cm_mem_grow(&other, 400), "a task's slice is a quarter");
    cr_expect(cm_mem_grow(&table, 400));
    cr_expect(cm_mem_grow(&table, 175));
    cr_expect(!cm_mem_grow(&table, 1), "the headroom is kept");
    for (int i = 0; i < 3; i++) {
        cm_mem_res_fini(&task[i]);
    }
    cm_mem_res_fini(&table);
    cm_mem_res_fini(&other);
    CmMemStats st;
    cm_mem_stats(&st);
    cr_expect_eq(st.used[CM_MEM_EXECUTION], 0);
}

Test(cm_mem, oom_message_names_consumer_limit_and_holders)
{
    cm_mem_set_limit(64 << 20);
    CmMemRes table, join;
    cm_mem_res_init(&table, CM_MEM_STORAGE, "table", NULL);
    cm_mem_res_init(&join, CM_MEM_EXECUTION, "hash join build", NULL);
    CmErr err;
    cm_err_init(&err);
    cr_assert_eq(cm_mem_need(&table, 52 << 20, &err), CM_OK);
    cr_expect_eq(cm_mem_need(&join, 48 << 20, &err), CM_OOM);
    cr_expect(strstr(err.msg, "hash join build needs 48.0 MiB") != NULL, "%s", err.msg);
    cr_expect(strstr(err.msg, "memory_limit 64.0 MiB") != NULL, "%s", err.msg);
    cr_expect(strstr(err.msg, "52.0 MiB held by the tables") != NULL, "%s", err.msg);
    cm_mem_res_fini(&table);
    cm_mem_res_fini(&join);
}

Test(cm_mem, group_keeps_the_query_peak)
{
    CmMemGroup g = {0};
    CmMemRes a, b;
    cm_mem_res_init(&a, CM_MEM_EXECUTION, "a", &g);
    cm_mem_res_init(&b, CM_MEM_EXECUTION, "b", &g);
    cr_assert(cm_mem_grow(&a, 100));
    cr_assert(cm_mem_grow(&b, 50));
    cm_mem_shrink(&a, 100);
    cr_assert(cm_mem_grow(&b, 10));
    cr_expect_eq(atomic_load(&g.used), 60);
    cr_expect_eq(atomic_load(&g.peak), 150);
    cm_mem_res_fini(&a);
    cm_mem_res_fini(&b);
    cr_expect_eq(atomic_load(&g.used), 0);
}

Test(cm_mem, default_limit_is_most_of_physical_memory)
{
    cr_expect_gt(cm_mem_default_limit(), (int64_t)64 << 20);
    int64_t rss = cm_mem_rss(); /* read first: the peak read after it is at least it */
    cr_expect_gt(rss, 0);
    cr_expect_geq(cm_mem_rss_peak(), rss);
}

/* Touches `mb` MiB of fresh pages and gives them back to the kernel. */
static void spike(int mb)
{
    size_t n = (size_t)mb << 20;
    char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(p != MAP_FAILED);
    memset(p, 1, n);
    munmap(p, n);
}

/* A query's peak RSS must not come from resetting the process's high-water
 * mark: ru_maxrss (what /usr/bin/time and bench/memory read) would then tell
 * the last query's peak as the whole run's. */
Test(cm_mem, a_span_reports_its_own_peak_and_leaves_the_process_peak_alone)
{
    int64_t mib = (int64_t)1 << 20;
    spike(96);
    int64_t before = cm_mem_rss_peak();
    cr_assert_geq(before, 96 * mib);
    cm_mem_rss_span_begin();
    int64_t quiet = cm_mem_rss_span_peak();
    cr_expect_lt(quiet, before - 64 * mib, "a span after the spike does not report it");
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    cr_expect_geq((int64_t)ru.ru_maxrss * 1024, 96 * mib, "the process's peak is kept");
    cr_expect_geq(cm_mem_rss_peak(), before);
    cm_mem_rss_span_begin();
    spike(160);
    cr_expect_geq(cm_mem_rss_span_peak(), 160 * mib, "a new process peak is the span's, exactly");
}

/* ---- memory modes ------------------------------------------------------------- */

static CmMemRes g_blocks; /* stands for the block store's storage */
static int n_evictions;

static int64_t fake_evict(int64_t bytes)
{
    n_evictions++;
    int64_t n = bytes < g_blocks.held ? bytes : g_blocks.held;
    cm_mem_shrink(&g_blocks, n);
    return n;
}

Test(cm_mem, static_shares_are_hard_and_nothing_is_evicted)
{
    pool_limit(1000);
    cm_mem_set_mode(CM_MEM_STATIC, 0.3, 0.6);
    cm_mem_set_evictor(fake_evict);
    n_evictions = 0;
    cm_mem_res_init(&g_blocks, CM_MEM_STORAGE, "blocks", NULL);
    CmMemRes e;
    cm_mem_res_init(&e, CM_MEM_EXECUTION, "exec", NULL);
    CmErr err;
    cm_err_init(&err);
    cr_expect(cm_mem_grow(&g_blocks, 300));
    cr_expect(!cm_mem_grow(&g_blocks, 1), "storage stops at its share");
    cr_expect(cm_mem_grow(&e, 525), "execution's share less its headroom");
    cr_expect(!cm_mem_grow(&e, 1));
    cr_expect_eq(cm_mem_need(&e, 75, &err), CM_OK);
    cr_expect_eq(cm_mem_need(&e, 1, &err), CM_OOM, "not past the share, with 100 bytes free");
    cr_expect(strstr(err.msg, "(static: execution 60%)") != NULL, "%s", err.msg);
    cr_expect_eq(n_evictions, 0, "execution never takes from storage");
    CmMemStats st;
    cm_mem_stats(&st);
    cr_expect_eq(st.storage_share, 300);
    cr_expect_eq(st.execution_share, 600);
    cm_mem_res_fini(&e);
    cm_mem_res_fini(&g_blocks);
    cm_mem_set_evictor(NULL);
}

Test(cm_mem, unified_evicts_storage_down_to_its_floor)
{
    pool_limit(1000);
    cm_mem_set_mode(CM_MEM_UNIFIED, 0.2, 0.8);
    cm_mem_set_evictor(fake_evict);
    n_evictions = 0;
    cm_mem_res_init(&g_blocks, CM_MEM_STORAGE, "blocks", NULL);
    CmMemRes e;
    cm_mem_res_init(&e, CM_MEM_EXECUTION, "exec", NULL);
    cr_expect(cm_mem_grow(&g_blocks, 700), "storage borrows what execution does not hold");
    cr_expect(cm_mem_grow(&e, 500), "execution evicts storage to fit");
    cr_expect_eq(g_blocks.held, 500);
    cr_expect(cm_mem_grow(&e, 200));
    cr_expect_eq(g_blocks.held, 300);
    cr_expect(!cm_mem_grow(&e, 150), "spillable growth stops at the floor and headroom");
    cr_expect(g_blocks.held >= 200, "the floor is kept");
    CmErr err;
    cm_err_init(&err);
    cr_expect_eq(cm_mem_need(&e, 250, &err), CM_OK, "what cannot spill takes the floor too");
    cr_expect_leq(g_blocks.held, 50);
    cm_mem_res_fini(&e);
    cm_mem_res_fini(&g_blocks);
    cm_mem_set_evictor(NULL);
}

Test(cm_mem, execution_bytes_count_storage_above_the_floor_as_free)
{
    pool_limit(1000);
    cm_mem_set_mode(CM_MEM_UNIFIED, 0.2, 0.8);
    cm_mem_set_evictor(fake_evict);
    cm_mem_res_init(&g_blocks, CM_MEM_STORAGE, "blocks", NULL);
    cr_expect_eq(cm_mem_execution_bytes(), 1000, "no storage: the whole region");
    cr_expect(cm_mem_grow(&g_blocks, 700));
    /* 700 held, but only the floor (200) is kept from execution: an operator
     * sizing its slice from the unused 300 would spill with 500 to spare */
    cr_expect_eq(cm_mem_execution_bytes(), 800);
    cm_mem_shrink(&g_blocks, 600);
    cr_expect_eq(cm_mem_execution_bytes(), 900, "under the floor, storage keeps what it holds");
    cm_mem_set_mode(CM_MEM_STATIC, 0.3, 0.6);
    cr_expect_eq(cm_mem_execution_bytes(), 600, "static: execution's own share");
    cm_mem_set_mode(CM_MEM_UNIFIED, 0.5, 0.5);
    cm_mem_res_fini(&g_blocks);
    cm_mem_set_evictor(NULL);
}

Test(cm_mem, auto_boundary_moves_the_floor_and_restarts_with_the_mode)
{
    pool_limit(1000);
    cm_mem_set_mode(CM_MEM_AUTO, 0.5, 0.5);
    cm_mem_set_boundary(0.3);
    CmMemStats st;
    cm_mem_stats(&st);
    cr_expect_eq(st.storage_share, 300);
    cr_expect_eq(st.execution_share, 700);
    cm_mem_set_boundary(2.0);
    cm_mem_stats(&st);
    cr_expect_eq(st.storage_share, 1000, "clamped to the region");
    cm_mem_set_mode(CM_MEM_AUTO, 0.4, 0.5);
    cm_mem_stats(&st);
    cr_expect_eq(st.storage_share, 400, "a new split starts at storage_fraction");
    cm_mem_set_mode(CM_MEM_UNIFIED, 0.5, 0.5);
}

#ifndef SLUICE_NO_MIMALLOC
#include <mimalloc.h>

/* Under a limit below the default, freed memory goes back to the system at
 * once until the manager has seen resident memory low enough (below); at the
 * default it waits the allocator's delay, to be reused without faulting it in
 * again. */
Test(cm_mem, a_tight_limit_releases_freed_memory_at_once)
{
    cm_mem_set_limit(64 << 20);
    cr_expect_eq(mi_option_get(mi_option_decommit_delay), 0);
    cm_mem_set_limit(cm_mem_default_limit());
    cr_expect_gt(mi_option_get(mi_option_decommit_delay), 0);
}

/* Under a tight limit the manager looks at resident memory when memory is
 * reserved (at most every 2 ms): past the limit + 8 MiB freed pages go back
 * at once, and once RSS is 8 MiB below that again they wait the allocator's
 * delay.  A statement setting the same limit again changes nothing.  Only
 * with mimalloc: the sanitizers' allocators keep freed memory in quarantine,
 * so RSS does not fall when it is freed. */
Test(cm_mem, freed_memory_goes_back_at_once_only_when_resident_memory_is_high)
{
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 5 * 1000 * 1000};
    CmMemRes r;
    cm_mem_res_init(&r, CM_MEM_EXECUTION, "test consumer", NULL);
    cm_mem_set_limit(16 << 20); /* released at once above 24 MiB, kept below 16 */
    cr_expect(cm_mem_release_is_eager(), "a new tight limit starts on the safe side");
    size_t n = (size_t)48 << 20;
    char *big = cm_malloc(n);
    cr_assert_not_null(big);
    memset(big, 1, n); /* resident */
    nanosleep(&pause, NULL);
    cm_mem_grow(&r, 1);
    cm_mem_shrink(&r, 1);
    cr_expect(cm_mem_release_is_eager(), "48 MiB resident, over 24 MiB");
    cm_mem_set_limit(16 << 20);
    cr_expect(cm_mem_release_is_eager(), "the same limit again keeps the state");
    cm_free(big);
    nanosleep(&pause, NULL);
    cm_mem_grow(&r, 1);
    cm_mem_shrink(&r, 1);
    cr_expect(!cm_mem_release_is_eager(), "48 MiB given back: freed pages may wait (RSS %lld)",
              (long long)cm_mem_rss());
    cm_mem_set_limit(cm_mem_default_limit());
    cr_expect(!cm_mem_release_is_eager(), "the default limit never releases at once");
}
#endif

/* An accounted arena reserves its chunks beyond the free allowance before it
 * allocates them, fails cleanly with the manager's message when refused, and
 * gives everything back on reset and fini. */
Test(cm_mem, accounted_arena_reserves_past_its_allowance)
{
    cm_mem_set_limit(4 << 20);
    CmMemRes res;
    cm_mem_res_init(&res, CM_MEM_EXECUTION, "value heap", NULL);
    CmErr refusal;
    cm_err_init(&refusal);
    CmArena a;
    cm_arena_init(&a, 16 * 1024);
    cm_arena_reserve_through(&a, &res, &refusal);

    for (int i = 0; i < 8; i++) { /* 128 KiB: within the allowance */
        cr_assert_not_null(cm_arena_alloc(&a, 10000));
    }
    cr_assert_eq(res.held, 0);
    cr_assert_not_null(cm_arena_alloc(&a, 1 << 20)); /* past it: reserved */
    cr_assert_gt(res.held, (1 << 20) - (int64_t)CM_ARENA_FREE_BYTES);
    cr_assert_leq(res.held, (int64_t)a.held);

    cr_assert_null(cm_arena_alloc(&a, 8 << 20)); /* past the limit: refused */
    cr_assert_eq(refusal.code, CM_OOM);
    cr_assert(strstr(refusal.msg, "out of memory: value heap needs") != NULL, "%s", refusal.msg);
    cr_assert_not_null(cm_arena_alloc(&a, 100)); /* the arena still works */
    cr_assert_leq(res.held, (int64_t)a.held);

    cm_arena_reset(&a); /* one default chunk is kept: under the allowance */
    cr_assert_eq(res.held, 0);
    cr_assert_not_null(cm_arena_alloc(&a, 2 << 20));
    cr_assert_gt(res.held, 0);
    cm_arena_fini(&a);
    cr_assert_eq(res.held, 0);
    cr_assert_eq(a.held, 0);
    cm_mem_res_fini(&res);
    cm_mem_set_limit(cm_mem_default_limit());
}
