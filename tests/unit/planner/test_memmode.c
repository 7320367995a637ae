/*
 * test_memmode.c - the auto controller (planner/memmode.h): a statement whose
 * cache misses cost more than its spills moves the storage boundary up a step,
 * but never into the execution memory the statement held or asked for.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/arena.h"
#include "common/config.h"
#include "common/mem.h"
#include "planner/memmode.h"

static CmArena arena;

static void setup(void)
{
    cm_arena_init(&arena, 0);
    CmConfig cfg;
    cm_config_init(&cfg);
    cfg.memory_mode = CM_MEM_AUTO;
    cfg.storage_fraction = 0.5;
    cfg.shuffle_fraction = 0.5;
    cm_mem_set_limit((int64_t)100 << 20);
    pl_memmode_apply(&cfg);
}

static void teardown(void)
{
    cm_arena_fini(&arena);
}

TestSuite(pl_memmode, .init = setup, .fini = teardown);

static double boundary(void)
{
    CmMemStats ms;
    cm_mem_stats(&ms);
    return ms.boundary;
}

/* One statement that spent 10 ms recomputing dropped cached rows and spilled
 * nothing, while its execution held `held` of the pooled memory at its peak
 * and, when `refused`, was refused a reservation once.  The controller's line. */
static const char *statement(double held, bool refused)
{
    PlMemObs start;
    pl_memmode_observe(&start);
    CmMemStats ms;
    cm_mem_stats(&ms);
    CmMemRes r;
    cm_mem_res_init(&r, CM_MEM_EXECUTION, "test", NULL);
    CmErr err;
    cm_err_init(&err);
    cr_assert_eq(cm_mem_need(&r, (int64_t)(held * (double)ms.pooled), &err), CM_OK);
    if (refused) {
        cr_assert(!cm_mem_grow(&r, ms.pooled));
    }
    cm_mem_res_fini(&r);
    pl_memmode_note_recompute(10 * 1000 * 1000);
    const char *line = pl_memmode_step(&start, &arena);
    cr_assert_not_null(line);
    return line;
}

Test(pl_memmode, misses_move_the_floor_up_a_step)
{
    const char *line = statement(0.1, false);
    cr_assert_float_eq(boundary(), 0.55, 1e-9);
    cr_assert(strstr(line, "cache misses cost more: toward storage") != NULL, "%s", line);
}

/* 0.45 held, with its eighth of headroom, leaves the floor at most 0.486:
 * below where it is, so it stays */
Test(pl_memmode, not_into_what_execution_held)
{
    const char *line = statement(0.45, false);
    cr_assert_float_eq(boundary(), 0.5, 1e-9);
    cr_assert(strstr(line, "but execution holds the rest") != NULL, "%s", line);
}

/* 0.40 held leaves room up to 1 - 0.40 x 8/7 = 0.543: part of the step */
Test(pl_memmode, up_to_what_execution_held)
{
    statement(0.40, false);
    cr_assert_float_eq(boundary(), 1 - 0.40 * 8 / 7, 1e-6);
}

/* a refusal means execution wanted more than its peak shows */
Test(pl_memmode, not_after_a_refusal)
{
    const char *line = statement(0.1, true);
    cr_assert_float_eq(boundary(), 0.5, 1e-9);
    cr_assert(strstr(line, "but execution holds the rest") != NULL, "%s", line);
}
