/*
 * progress.c - the running statement's progress (see progress.h).
 *
 * Invariant: `done` only grows within a statement, and stays below the
 * running stage's `stage_end` until the driver ends the stage, so a reading
 * never goes back and reaches 100% only through ex_progress_finish.  The cost
 * while a query runs is one compare-and-swap per finished task; the log (a
 * test hook) takes the lock only when it is open.
 */
#include "executor/progress.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/thread.h"

struct ExProgress {
    /* written by the driver and the workers, read by anyone */
    atomic_llong done;        /* parts per billion of the statement done */
    atomic_llong stage_start; /* where the running stage's span begins */
    atomic_llong stage_end;   /* where it ends */
    atomic_llong per_task;    /* what one finished task of it adds */
    atomic_llong spill_base;  /* bytes spilled by the stages that ended */
    atomic_llong stage_spill; /* bytes spilled by the running stage so far */
    atomic_int stage;         /* id of the running stage, -1: none */
    atomic_int n_stages;
    atomic_bool is_finished; /* the statement succeeded: done is shown uncapped */
    atomic_bool has_log;     /* log is open (read without the lock) */
    atomic_llong start_ns;
    int64_t plan_end; /* where the running plan's share ends; the driver's */
    /* guarded by lock */
    CmMutex lock;
    CmCond wake; /* signalled when the statement ends */
    char decision[96];
    FILE *log;       /* debug_progress_log, or NULL */
    bool is_running; /* the watcher goes on */
    /* set between statements */
    ExProgressFn fn;
    void *ctx;
    int64_t delay_ms; /* progress_bar_time of the running statement */
    bool has_watcher;
    CmThread watcher;
};

ExProgress *ex_progress_new(void)
{
    ExProgress *p = cm_calloc(1, sizeof *p);
    if (p == NULL) {
        return NULL;
    }
    cm_mutex_init(&p->lock);
    cm_cond_init(&p->wake);
    atomic_store(&p->stage, -1);
    p->plan_end = EX_PROGRESS_ONE;
    return p;
}

void ex_progress_free(ExProgress *p)
{
    if (p != NULL) {
        cm_cond_fini(&p->wake);
        cm_mutex_fini(&p->lock);
        cm_free(p);
    }
}

void ex_progress_set_handler(ExProgress *p, ExProgressFn fn, void *ctx)
{
    p->fn = fn;
    p->ctx = ctx;
}

/* Done work as readers see it: capped until the statement succeeded. */
static int64_t shown(ExProgress *p)
{
    int64_t done = atomic_load(&p->done);
    if (!atomic_load(&p->is_finished) && done > EX_PROGRESS_CAP) {
        done = EX_PROGRESS_CAP;
    }
    return done;
}

/* Appends the current reading to the log (a line "PPB STAGE"), or `text`
 * as a comment line when not NULL. */
static void log_reading(ExProgress *p, const char *text)
{
    if (!atomic_load(&p->has_log)) {
        return;
    }
    cm_mutex_lock(&p->lock);
    if (p->log != NULL) {
        if (text != NULL) {
            fprintf(p->log, "# %s\n", text);
        } else {
            fprintf(p->log, "%lld %d\n", (long long)shown(p), atomic_load(&p->stage));
        }
    }
    cm_mutex_unlock(&p->lock);
}

static void *watch(void *arg)
{
    ExProgress *p = arg;
    cm_mutex_lock(&p->lock);
    while (p->is_running) {
        cm_cond_timedwait(&p->wake, &p->lock, EX_PROGRESS_TICK_MS);
        if (!p->is_running) {
            break;
        }
        cm_mutex_unlock(&p->lock);
        ExProgressView v;
        ex_progress_read(p, &v);
        if (v.elapsed_ms >= p->delay_ms) {
            p->fn(p->ctx, &v);
        }
        cm_mutex_lock(&p->lock);
    }
    cm_mutex_unlock(&p->lock);
    return NULL;
}

void ex_progress_begin(ExProgress *p, const CmConfig *cfg)
{
    atomic_store(&p->done, 0);
    atomic_store(&p->stage_end, 0);
    atomic_store(&p->per_task, 0);
    atomic_store(&p->spill_base, 0);
    atomic_store(&p->stage_spill, 0);
    atomic_store(&p->stage, -1);
    atomic_store(&p->n_stages, 0);
    atomic_store(&p->is_finished, false);
    atomic_store(&p->start_ns, cm_now_ns());
    p->plan_end = EX_PROGRESS_ONE;
    p->decision[0] = '\0';
    p->delay_ms = cfg->progress_bar_time;
    if (cfg->debug_progress_log[0] != '\0') {
        p->log = fopen(cfg->debug_progress_log, "a");
        atomic_store(&p->has_log, p->log != NULL);
        log_reading(p, "begin");
    }
    p->is_running = true;
    p->has_watcher =
        p->fn != NULL && cfg->enable_progress_bar && cm_thread_start(&p->watcher, watch, p);
}

/* done = max(done, to) */
static void raise_done(ExProgress *p, int64_t to)
{
    long long cur = atomic_load(&p->done);
    while (cur < to && !atomic_compare_exchange_weak(&p->done, &cur, to)) {
    }
}

/* What is left from done to `end`, times share, as an end. */
static int64_t span_end(ExProgress *p, int64_t end, double share)
{
    int64_t done = atomic_load(&p->done);
    if (end <= done) {
        return done;
    }
    share = share < 0 ? 0 : share > 1 ? 1 : share;
    return done + (int64_t)((double)(end - done) * share);
}

int64_t ex_progress_plan_begin(ExProgress *p, double share)
{
    int64_t prev = p->plan_end;
    p->plan_end = span_end(p, prev, share);
    return prev;
}

void ex_progress_plan_end(ExProgress *p, int64_t prev_end)
{
    raise_done(p, p->plan_end);
    p->plan_end = prev_end;
    atomic_store(&p->stage, -1);
    log_reading(p, NULL);
}

void ex_progress_stage_begin(ExProgress *p, int stage_id, int n_stages, double share)
{
    atomic_store(&p->per_task, 0);
    atomic_store(&p->stage_start, atomic_load(&p->done));
    atomic_store(&p->stage_end, span_end(p, p->plan_end, share));
    atomic_store(&p->stage_spill, 0);
    atomic_store(&p->n_stages, n_stages);
    atomic_store(&p->stage, stage_id);
}

void ex_progress_advance(ExProgress *p, double fraction)
{
    int64_t start = atomic_load(&p->stage_start), end = atomic_load(&p->stage_end);
    fraction = fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
    raise_done(p, start + (int64_t)((double)(end - start) * fraction));
    log_reading(p, NULL);
}

void ex_progress_stage_tasks(ExProgress *p, int n_tasks)
{
    int64_t left = atomic_load(&p->stage_end) - atomic_load(&p->done);
    atomic_store(&p->per_task, left > 0 ? left / (n_tasks > 0 ? n_tasks : 1) : 0);
}

void ex_progress_task_done(ExProgress *p, int64_t stage_spilled)
{
    if (p == NULL) {
        return;
    }
    int64_t end = atomic_load(&p->stage_end), add = atomic_load(&p->per_task);
    long long cur = atomic_load(&p->done);
    while (cur < end) {
        long long next = cur + add < end ? cur + add : end;
        if (atomic_compare_exchange_weak(&p->done, &cur, next)) {
            break;
        }
    }
    long long spill = atomic_load(&p->stage_spill);
    while (spill < stage_spilled &&
           !atomic_compare_exchange_weak(&p->stage_spill, &spill, stage_spilled)) {
    }
    log_reading(p, NULL);
}

void ex_progress_stage_end(ExProgress *p, int64_t stage_spilled)
{
    raise_done(p, atomic_load(&p->stage_end));
    atomic_fetch_add(&p->spill_base, stage_spilled);
    atomic_store(&p->stage_spill, 0);
    log_reading(p, NULL);
}

void ex_progress_decision(ExProgress *p, const char *text)
{
    cm_mutex_lock(&p->lock);
    snprintf(p->decision, sizeof p->decision, "%s", text);
    cm_mutex_unlock(&p->lock);
    log_reading(p, text);
}

void ex_progress_finish(ExProgress *p, bool ok)
{
    cm_mutex_lock(&p->lock);
    p->is_running = false;
    cm_cond_signal(&p->wake);
    cm_mutex_unlock(&p->lock);
    if (p->has_watcher) {
        cm_thread_join(&p->watcher);
        p->has_watcher = false;
    }
    if (ok) {
        raise_done(p, EX_PROGRESS_ONE);
        atomic_store(&p->is_finished, true);
    }
    atomic_store(&p->stage, -1);
    log_reading(p, ok ? NULL : "failed");
    cm_mutex_lock(&p->lock);
    if (p->log != NULL) {
        fclose(p->log);
        p->log = NULL;
    }
    atomic_store(&p->has_log, false);
    cm_mutex_unlock(&p->lock);
}

void ex_progress_read(ExProgress *p, ExProgressView *out)
{
    out->fraction = (double)shown(p) / (double)EX_PROGRESS_ONE;
    out->stage = atomic_load(&p->stage);
    out->n_stages = atomic_load(&p->n_stages);
    out->elapsed_ms = (cm_now_ns() - atomic_load(&p->start_ns)) / 1000000;
    out->spilled_bytes = atomic_load(&p->spill_base) + atomic_load(&p->stage_spill);
    cm_mutex_lock(&p->lock);
    memcpy(out->decision, p->decision, sizeof out->decision);
    cm_mutex_unlock(&p->lock);
}
