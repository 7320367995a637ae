/*
 * test_mem.c - the memory manager: limit, fair share, refusals, the OOM
 * message, and the query group's peak.  The manager is process-wide, so each
 * test sets its own limit and releases everything it took.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/mem.h"

static void big_limit(void)
{
    cm_mem_set_limit((int64_t)1 << 30);
}

TestSuite(cm_mem, .init = big_limit);

Test(cm_mem, grow_within_limit_and_release)
{
    cm_mem_set_limit(1000);
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
    cm_mem_set_limit(1000);
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
