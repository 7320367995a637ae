/*
 * memmode.c - the memory modes per statement and the auto controller
 * (memmode.h).
 *
 * The rule, once per statement in the auto mode: spill = the time the
 * statement spent in spill files; miss = the time it spent loading evicted
 * blocks back and recomputing dropped cached rows.  If spill > 1.25 x miss,
 * the storage floor goes down a step (execution may evict more of the cache
 * before it spills); if miss > 1.25 x spill, it goes up a step (execution
 * spills sooner and leaves the cache alone); otherwise it stays.  Time, not
 * bytes, is what both sides pay in the same unit.  The step is small and
 * bounded so that one odd statement moves little and the split converges over
 * an iterative script's rounds.
 *
 * A move toward storage never takes what the statement's execution held or
 * asked for: none when an execution reservation was refused (its peak is then
 * what it was granted, not what it wanted), and none past the floor that
 * still leaves the region room for its peak and the headroom spillable growth
 * keeps (an eighth; mem.c).  Spill time alone undercounts what a starved
 * operator pays: PageRank's rounds at half their working set spilled 45 MB in
 * 90 ms once the floor passed their join and aggregates, and took 0.86 s
 * instead of 0.33 s, while the misses that pushed the floor up cost 25 ms; the
 * controller swung between the two floors and the job took 1.5x unified's
 * time.  Invariant: `last` describes the move of the last statement since the
 * mode and shares were last changed.
 */
#include "planner/memmode.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "common/mem.h"
#include "common/thread.h"
#include "shuffle/spill.h"
#include "storage/blocks.h"

#define STEP 0.05   /* of the pooled memory, per statement */
#define BAND 1.25   /* one side must pay this many times the other for a move */
#define MARGIN 0.10 /* the boundary keeps this share of the pooled memory from each end */

typedef struct Ctl {
    CmMutex lock;
    CmMemMode mode; /* as last applied, to see when it changes */
    double storage, shuffle;
    bool has_last;
    char last[400]; /* the last decision, for sluice_memory */
} Ctl;

static Ctl g_ctl;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static atomic_llong g_recomputes, g_recompute_ns;

static void ctl_init(void)
{
    cm_mutex_init(&g_ctl.lock);
    g_ctl.mode = CM_MEM_UNIFIED;
    g_ctl.storage = g_ctl.shuffle = 0.5;
}

static Ctl *ctl(void)
{
    pthread_once(&g_once, ctl_init);
    return &g_ctl;
}

void pl_memmode_apply(const CmConfig *cfg)
{
    Ctl *c = ctl();
    CmMemMode mode = (CmMemMode)cfg->memory_mode;
    cm_mutex_lock(&c->lock);
    if (c->mode != mode || c->storage != cfg->storage_fraction ||
        c->shuffle != cfg->shuffle_fraction) {
        c->mode = mode;
        c->storage = cfg->storage_fraction;
        c->shuffle = cfg->shuffle_fraction;
        c->has_last = false;
    }
    cm_mutex_unlock(&c->lock);
    cm_mem_set_mode(mode, cfg->storage_fraction, cfg->shuffle_fraction);
}

void pl_memmode_observe(PlMemObs *out)
{
    cm_mem_window_start();
    CmMemStats ms;
    cm_mem_stats(&ms);
    out->refusals = ms.refusals[CM_MEM_EXECUTION];
    sh_spill_totals(&out->spill_bytes, &out->spill_ns);
    StBlocksStats bs;
    st_blocks_stats(&bs);
    out->miss_loads = bs.miss_loads;
    out->miss_load_ns = bs.miss_load_ns;
    out->recomputes = atomic_load(&g_recomputes);
    out->recompute_ns = atomic_load(&g_recompute_ns);
}

void pl_memmode_note_recompute(int64_t ns)
{
    atomic_fetch_add(&g_recomputes, 1);
    atomic_fetch_add(&g_recompute_ns, ns);
}

static void fmt_bytes(char *buf, size_t cap, int64_t n)
{
    if (n >= ((int64_t)1 << 20)) {
        snprintf(buf, cap, "%.1f MiB", (double)n / (double)((int64_t)1 << 20));
    } else if (n >= 1024) {
        snprintf(buf, cap, "%.1f KiB", (double)n / 1024.0);
    } else {
        snprintf(buf, cap, "%lld bytes", (long long)n);
    }
}

/* "spilled 1.2 MiB in 3.1 ms; cache misses: 2 blocks loaded back, 0 recomputes in 0.4 ms" */
static void fmt_costs(char *buf, size_t cap, const PlMemObs *d)
{
    char spilled[32];
    fmt_bytes(spilled, sizeof spilled, d->spill_bytes);
    snprintf(buf, cap,
             "spilled %s in %.1f ms; cache misses: %lld blocks loaded back, %lld recomputes in "
             "%.1f ms",
             spilled, (double)d->spill_ns / 1e6, (long long)d->miss_loads, (long long)d->recomputes,
             (double)(d->miss_load_ns + d->recompute_ns) / 1e6);
}

/* Which way a statement that paid `spill` and `miss` (ns) pushes the boundary:
 * -1 toward execution, +1 toward storage, 0 neither. */
static int direction(int64_t spill, int64_t miss)
{
    return (double)spill > BAND * (double)miss ? -1 : (double)miss > BAND * (double)spill ? 1 : 0;
}

/* The boundary after a push in direction `dir`, within the bounds. */
static double next_boundary(double now, double top, int dir)
{
    double lo = MARGIN < top / 2 ? MARGIN : top / 2;
    double hi = top - lo;
    double next = now + dir * STEP;
    next = next < lo ? lo : next > hi ? hi : next;
    /* a move that the bounds cut to nothing (or less) keeps the boundary */
    return (next - now) * (next - now) < 1e-12 ? now : next;
}

const char *pl_memmode_step(const PlMemObs *start, CmArena *arena)
{
    CmMemStats ms;
    cm_mem_stats(&ms);
    PlMemObs now, d;
    pl_memmode_observe(&now);
    d.spill_bytes = now.spill_bytes - start->spill_bytes;
    d.spill_ns = now.spill_ns - start->spill_ns;
    d.miss_loads = now.miss_loads - start->miss_loads;
    d.miss_load_ns = now.miss_load_ns - start->miss_load_ns;
    d.recomputes = now.recomputes - start->recomputes;
    d.recompute_ns = now.recompute_ns - start->recompute_ns;
    char costs[160];
    fmt_costs(costs, sizeof costs, &d);
    if (ms.mode == CM_MEM_STATIC) {
        return arena == NULL
                   ? NULL
                   : cm_arena_printf(arena,
                                     "static, storage %.0f%% and execution %.0f%% of "
                                     "pooled memory (%s)",
                                     100 * ms.storage_fraction, 100 * ms.shuffle_fraction, costs);
    }
    if (ms.mode != CM_MEM_AUTO) {
        return NULL;
    }
    double before = ms.boundary;
    double top = ms.storage_fraction + ms.shuffle_fraction;
    int dir = direction(d.spill_ns, d.miss_load_ns + d.recompute_ns);
    double after = next_boundary(before, top, dir);
    bool held = false; /* a move toward storage stopped by execution's demand */
    if (after > before && ms.pooled > 0) {
        bool refused = ms.refusals[CM_MEM_EXECUTION] > start->refusals;
        double room = top - (double)cm_mem_execution_need(ms.window_peak) / (double)ms.pooled;
        if (refused || after > room) {
            after = !refused && room > before ? room : before;
            held = after == before;
        }
    }
    const char *why = dir == 0         ? "kept"
                      : held           ? "cache misses cost more, but execution holds the rest"
                      : after < before ? "spilling cost more: toward execution"
                      : after > before ? "cache misses cost more: toward storage"
                      : dir < 0        ? "spilling cost more, at the bound"
                                       : "cache misses cost more, at the bound";
    char line[400];
    snprintf(line, sizeof line, "auto, storage boundary %.0f%% -> %.0f%% of pooled memory (%s; %s)",
             100 * before, 100 * after, why, costs);
    if (after != before) {
        cm_mem_set_boundary(after);
    }
    if (d.spill_ns > 0 || d.miss_load_ns + d.recompute_ns > 0) {
        /* statements that paid nothing (a SET, a read of sluice_memory) leave
         * the last decision shown */
        Ctl *c = ctl();
        cm_mutex_lock(&c->lock);
        snprintf(c->last, sizeof c->last, "%s", line + strlen("auto, "));
        c->has_last = true;
        cm_mutex_unlock(&c->lock);
    }
    return arena == NULL ? NULL : cm_arena_printf(arena, "%s", line);
}

bool pl_memmode_last(char *buf, size_t cap)
{
    Ctl *c = ctl();
    cm_mutex_lock(&c->lock);
    bool has = c->has_last;
    if (has) {
        snprintf(buf, cap, "%s", c->last);
    }
    cm_mutex_unlock(&c->lock);
    return has;
}
