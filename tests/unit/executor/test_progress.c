/*
 * test_progress.c - the progress of a statement: spans of stages, the cap
 * below 100% while it runs, re-weighting of what remains, the handler.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <unistd.h>

#include "common/thread.h"
#include "executor/progress.h"

static ExProgress *p;
static CmConfig cfg;

static void setup(void)
{
    p = ex_progress_new();
    cr_assert(p != NULL);
    cm_config_init(&cfg);
}

static void teardown(void)
{
    ex_progress_free(p);
}

static double reading(void)
{
    ExProgressView v;
    ex_progress_read(p, &v);
    return v.fraction;
}

/* A statement whose first stage, `id`, of n_tasks tasks, takes `share`. */
static void begin_with_stage(int id, double share, int n_tasks)
{
    ex_progress_begin(p, &cfg);
    ex_progress_stage_begin(p, id, 3, share);
    ex_progress_stage_tasks(p, n_tasks);
}

/* Runs a stage of `n_tasks` tasks that gets `share` of what remains. */
static void run_stage(int id, double share, int n_tasks)
{
    ex_progress_stage_begin(p, id, 3, share);
    ex_progress_stage_tasks(p, n_tasks);
    double last = reading();
    for (int t = 0; t < n_tasks; t++) {
        ex_progress_task_done(p, 0);
        cr_assert_geq(reading(), last);
        last = reading();
    }
    ex_progress_stage_end(p, 0);
}

Test(ex_progress, stages_take_their_share_of_what_remains, .init = setup, .fini = teardown)
{
    ex_progress_begin(p, &cfg);
    int64_t outer = ex_progress_plan_begin(p, 1.0);
    run_stage(1, 0.5, 4);
    cr_assert_float_eq(reading(), 0.5, 1e-9);
    /* a rewrite made the rest look bigger: it shares the remaining half only */
    run_stage(2, 0.25, 2);
    cr_assert_float_eq(reading(), 0.625, 1e-9);
    run_stage(3, 1.0, 3);
    ex_progress_plan_end(p, outer);
    cr_assert_float_eq(reading(), 0.999, 1e-9, "100%% only once the statement ends");
    ex_progress_finish(p, true);
    cr_assert_float_eq(reading(), 1.0, 1e-12);
}

Test(ex_progress, extra_tasks_never_pass_the_stage_end, .init = setup, .fini = teardown)
{
    begin_with_stage(1, 0.5, 2);
    for (int t = 0; t < 5; t++) { /* re-runs of lost map tasks */
        ex_progress_task_done(p, 0);
    }
    cr_assert_float_eq(reading(), 0.5, 1e-9);
    ex_progress_finish(p, false);
    cr_assert_float_eq(reading(), 0.5, 1e-9, "a failed statement does not reach 100%%");
}

Test(ex_progress, sub_plans_take_a_share, .init = setup, .fini = teardown)
{
    ex_progress_begin(p, &cfg);
    int64_t outer = ex_progress_plan_begin(p, 0.5);
    ex_progress_stage_begin(p, 1, 1, 1.0);
    ex_progress_stage_tasks(p, 1);
    ex_progress_task_done(p, 0);
    ex_progress_stage_end(p, 0);
    ex_progress_plan_end(p, outer);
    cr_assert_float_eq(reading(), 0.5, 1e-9);
    outer = ex_progress_plan_begin(p, 1.0);
    ex_progress_stage_begin(p, 1, 1, 1.0);
    ex_progress_advance(p, 0.5);
    cr_assert_float_eq(reading(), 0.75, 1e-9);
    ex_progress_advance(p, 0.25); /* never back */
    cr_assert_float_eq(reading(), 0.75, 1e-9);
    ex_progress_plan_end(p, outer);
    ex_progress_finish(p, true);
    cr_assert_float_eq(reading(), 1.0, 1e-12);
}

Test(ex_progress, spill_and_decision_are_read, .init = setup, .fini = teardown)
{
    begin_with_stage(2, 0.5, 2);
    ex_progress_task_done(p, 100);
    ex_progress_task_done(p, 60); /* an older count read late */
    ex_progress_decision(p, "stage 3: join → broadcast");
    ExProgressView v;
    ex_progress_read(p, &v);
    cr_assert_eq(v.spilled_bytes, 100);
    cr_assert_eq(v.stage, 2);
    cr_assert_str_eq(v.decision, "stage 3: join → broadcast");
    ex_progress_stage_end(p, 150);
    ex_progress_read(p, &v);
    cr_assert_eq(v.spilled_bytes, 150);
    ex_progress_finish(p, true);
}

static atomic_int calls;
static atomic_int after_finish;
static atomic_bool is_finished;

static void count(void *ctx, const ExProgressView *v)
{
    (void)ctx;
    (void)v;
    atomic_fetch_add(&calls, 1);
    if (atomic_load(&is_finished)) {
        atomic_fetch_add(&after_finish, 1);
    }
}

Test(ex_progress, handler_after_the_delay_and_not_after_finish, .init = setup, .fini = teardown,
     .timeout = 20)
{
    ex_progress_set_handler(p, count, NULL);
    cfg.progress_bar_time = 0;
    ex_progress_begin(p, &cfg);
    /* Two calls come within a few hundred ms on an idle machine; under a
     * loaded one (the CI runs suites side by side on two cores) the
     * progress thread may wait its turn, so the test waits for them, up to
     * ten seconds, instead of counting what a fixed sleep saw. */
    for (int waited = 0; atomic_load(&calls) < 2 && waited < 10000; waited += 10) {
        usleep(10 * 1000);
    }
    ex_progress_finish(p, true);
    atomic_store(&is_finished, true);
    usleep(150 * 1000);
    cr_assert_geq(atomic_load(&calls), 2);
    cr_assert_eq(atomic_load(&after_finish), 0);
    /* off, and a delay longer than the statement: no call */
    atomic_store(&calls, 0);
    cfg.enable_progress_bar = false;
    ex_progress_begin(p, &cfg);
    usleep(250 * 1000);
    ex_progress_finish(p, true);
    cfg.enable_progress_bar = true;
    cfg.progress_bar_time = 60000;
    ex_progress_begin(p, &cfg);
    usleep(250 * 1000);
    ex_progress_finish(p, true);
    cr_assert_eq(atomic_load(&calls), 0);
}
