/*
 * mem.h - the memory manager: one budget for the process.
 *
 * `memory_limit` (default 80% of physical memory) less a tenth, which stays
 * for what is not reserved (the program, batches in flight, the allocator's
 * slack; mem.c), is split between two pools: EXECUTION, what running queries hold (hash tables,
 * sort runs, window partitions, shuffle buffers, rows waiting to be appended, COPY chunks), and
 * STORAGE, what outlives a query (the tables of the in-memory database; the
 * cache and table pages once they exist).  How the limit is split is the
 * memory mode (cm_mem_set_mode; docs/memory.md, "Memory modes"): STATIC gives
 * each pool a fixed share (storage_fraction, shuffle_fraction of the limit)
 * that neither passes; UNIFIED (the default, Spark >= 1.6) lets each pool use
 * whatever the other does not hold, within (storage + shuffle) x limit; AUTO is
 * unified with a protected storage floor that a controller in the planner
 * moves between statements (cm_mem_set_boundary), which storage never passes
 * (execution still uses what storage does not hold).  Below, unified.  Storage is made of blocks
 * (storage/blocks.h) that can be evicted to disk or dropped, so execution takes
 * memory back from it: when an execution reservation would pass the limit, the
 * manager calls the evictor the block store registered (cm_mem_set_evictor),
 * outside its lock, and tries again.  Spillable growth (cm_mem_grow) evicts
 * storage down to a floor of storage_fraction x limit (Spark's storageFraction): tables
 * that fit in it stay while operators spill, and scans have room to pin; memory that cannot spill
 * (cm_mem_need) may evict every unpinned block.  Storage never evicts execution: a storage
 * reservation past the limit evicts other storage blocks or fails.
 *
 * Every large allocation is first a reservation.  A consumer (one operator in
 * one task, or one shared structure) owns a CmMemRes and grows it before it
 * allocates.  cm_mem_grow may refuse; the consumer then spills (frees what it
 * holds into temp files) and carries on with less.  It refuses when spillable
 * memory would leave less than an eighth of execution memory free (room for
 * what cannot spill and for consumers that start late), or when the consumer
 * would hold more than 1/N of the execution memory with N consumers holding
 * some: a consumer that starts late still gets its share as the others spill.  cm_mem_need is for
 * memory that cannot be spilled: it ignores the fair share and turns a refusal into CM_OOM, with a
 * message naming the consumer, what it asked for, the limit and what holds the rest. Small
 * allocations (batches, scratch arenas, plans) stay outside, in the tenth of the limit the
 * pools leave (docs/memory.md measures how much). Thread-safe: every call takes the manager's one
 * lock; a CmMemRes may be grown from several threads.  Nothing here allocates.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"

typedef enum CmMemPool { CM_MEM_EXECUTION = 0, CM_MEM_STORAGE = 1 } CmMemPool;

/* How the limit is split between the pools (the setting memory_mode). */
typedef enum CmMemMode { CM_MEM_UNIFIED = 0, CM_MEM_STATIC = 1, CM_MEM_AUTO = 2 } CmMemMode;

/* What a set of consumers reserves (an operator's tasks; a query), for
 * EXPLAIN ANALYZE.  Counts go to the parent too. */
typedef struct CmMemGroup {
    atomic_llong used;         /* bytes reserved now */
    atomic_llong peak;         /* the most reserved at once */
    struct CmMemGroup *parent; /* borrowed, may be NULL */
} CmMemGroup;

/* A consumer's reservation.  Fields are written under the manager's lock. */
typedef struct CmMemRes {
    const char *what; /* names the consumer in messages and reports; static */
    CmMemPool pool;
    CmMemGroup *group; /* the query it counts for; borrowed, may be NULL */
    int64_t held;      /* bytes reserved now */
    int64_t peak;      /* the most this consumer held */
    bool fixed;        /* set after init: buffers sized once, held from the consumer's start to
                          its end, not a share of the pool: not among the consumers a fair
                          share divides execution memory by */
    bool shared;       /* set after init: one reservation that serves every task of a stage
                          (a broadcast join's table), so it may take execution memory up to
                          the headroom rather than a 1/N slice beside the tasks it serves */
    int owner;         /* the thread it last grew on (mem.c's numbering) */
    struct CmMemRes *prev, *next; /* in the manager's list while held > 0 */
} CmMemRes;

/* ---- the limit ---------------------------------------------------------------- */

/* 80% of physical memory. */
int64_t cm_mem_default_limit(void);
/* Sets the process's limit (bytes, > 0).  Holdings above a lowered limit stay
 * until released; new reservations are refused meanwhile. */
void cm_mem_set_limit(int64_t bytes);
/* Whether freed memory goes back to the system at once.  Under a limit below
 * the default the manager decides by resident memory, looked at when memory
 * is reserved: freed pages are kept (the allocator's short delay) while RSS is
 * under the limit + 8 MiB, and given back at once above it. */
bool cm_mem_release_is_eager(void);
int64_t cm_mem_limit(void);
/* The smallest limit whose pooled part (the limit less the tenth the pools
 * leave for what is not reserved) is at least `pooled` bytes. */
int64_t cm_mem_limit_pooling(int64_t pooled);
/* Sets the mode and the shares of the limit (each in [0, 1], their sum <= 1;
 * the settings validate them).  STATIC: storage may hold storage_fraction of
 * the limit and execution shuffle_fraction, and neither takes from the other.
 * UNIFIED: both pools share (storage + shuffle) of the limit; spillable
 * execution evicts storage down to storage_fraction.  AUTO: as UNIFIED with
 * the floor at the boundary.  When any of the three changes, the boundary
 * starts again at storage_fraction. */
void cm_mem_set_mode(CmMemMode mode, double storage_fraction, double shuffle_fraction);
/* AUTO: the protected storage share (a fraction of the limit, clamped to
 * [0, storage + shuffle]); the planner's controller moves it. */
void cm_mem_set_boundary(double storage_share);
/* "static", "unified" or "auto". */
const char *cm_mem_mode_name(CmMemMode mode);

/* ---- reservations ----------------------------------------------------------- */

void cm_mem_res_init(CmMemRes *r, CmMemPool pool, const char *what, CmMemGroup *group);
/* Releases everything r holds. */
void cm_mem_res_fini(CmMemRes *r);
/* Reserves `bytes` more for r, within the pool and r's fair share; false when
 * refused (nothing changes): the caller spills or gives up. */
bool cm_mem_grow(CmMemRes *r, int64_t bytes);
/* Reserves `bytes` more for memory that cannot be spilled: within the limit,
 * fair share ignored.  When refused while consumers on other threads hold
 * what would meet it, waits for their releases (seconds at most; mem.c);
 * CM_OOM with the message described above when refused in the end. */
CmStatus cm_mem_need(CmMemRes *r, int64_t bytes, CmErr *err);
/* Makes r hold `bytes` in all (grows through cm_mem_need, or shrinks). */
CmStatus cm_mem_need_total(CmMemRes *r, int64_t bytes, CmErr *err);
/* The execution memory spillable growth may count on now: the pool's bound
 * less the storage it cannot evict (in UNIFIED, storage above the protected
 * floor counts as free).  A consumer sizing its slice from it sees the memory
 * it will be granted, not only what is unused at the moment. */
int64_t cm_mem_execution_bytes(void);
/* The execution memory a statement that held at most `bytes` of it needs:
 * `bytes` plus the headroom cm_mem_grow keeps free above spillable growth.
 * What a move of the boundary toward storage must leave to execution. */
int64_t cm_mem_execution_need(int64_t bytes);
/* Storage memory there is room for now: STATIC the storage share; UNIFIED
 * and AUTO the shared region less what execution holds.  What a cached
 * result that did not fit compares against before it is tried again. */
int64_t cm_mem_storage_room(void);
/* Releases `bytes` of what r holds (at most what it holds). */
void cm_mem_shrink(CmMemRes *r, int64_t bytes);
/* r->held read under the manager's lock: for a reservation other threads
 * grow or shrink (a table's, whose chunks any thread evicts). */
int64_t cm_mem_held(CmMemRes *r);

/* The consumer of the bytes of string and list values that expression
 * nodes make (execution pool, "value heap"): shared by every thread, grown
 * only with cm_mem_need, since values cannot spill.  The nodes' heaps reserve
 * through it (cm_arena_reserve_through). */
CmMemRes *cm_mem_values(void);

/* Frees storage memory: evicts unpinned blocks until about `bytes` are
 * released (or none is left), returns the bytes released.  Called without the
 * manager's lock, from any thread; it may call cm_mem_shrink. */
typedef int64_t (*CmMemEvictor)(int64_t bytes);
/* Registers the evictor execution reservations call (one for the process; the
 * block store registers itself when it starts). */
void cm_mem_set_evictor(CmMemEvictor fn);

/* ---- reports ------------------------------------------------------------------ */

typedef struct CmMemStats {
    int64_t limit;
    int64_t pooled;         /* what the pools share out: the limit less a tenth, kept for what
                               is not reserved (mem.c) */
    int64_t used[2];        /* per pool, bytes reserved now */
    int64_t peak[2];        /* per pool, the most reserved since start (or reset) */
    int64_t window_peak;    /* execution: the most reserved since cm_mem_window_start */
    int64_t n_consumers[2]; /* consumers holding memory now */
    int64_t refusals[2];    /* per pool, reservations refused (spills or evictions asked for) */
    int64_t evicted;        /* storage bytes execution took back through the evictor */
    CmMemMode mode;
    double storage_fraction, shuffle_fraction; /* as set (cm_mem_set_mode) */
    double boundary;         /* AUTO: the protected storage share now; else storage_fraction */
    int64_t storage_share;   /* bytes: STATIC the storage cap, else the protected floor */
    int64_t execution_share; /* bytes: STATIC the execution cap, else the region less the floor */
} CmMemStats;

void cm_mem_stats(CmMemStats *out);
/* Starts a window over execution memory: CmMemStats.window_peak is the most
 * it holds from now on.  A statement's own demand (the auto controller). */
void cm_mem_window_start(void);
/* Calls fn for every consumer holding memory now, under the lock: fn must not
 * call back into this module. */
void cm_mem_each(void (*fn)(void *ctx, const CmMemRes *r), void *ctx);
/* Pool name: "execution" or "storage". */
const char *cm_mem_pool_name(CmMemPool pool);

/* Resident set size now and the process's peak (VmRSS, VmHWM of
 * /proc/self/status), in bytes; 0 when unknown. */
int64_t cm_mem_rss(void);
int64_t cm_mem_rss_peak(void);
/* The peak RSS of a span of work (a query).  The process's high-water mark is
 * never reset: getrusage's ru_maxrss, /usr/bin/time and the program that
 * embeds Sluice read it, and resetting it (clear_refs) made them report the
 * last query's peak as the whole run's.  So when VmHWM rose during the span,
 * the span's peak is VmHWM, exactly; otherwise the span stayed under an
 * earlier peak, and its peak is the largest RSS sampled during it (a
 * reservation samples RSS at most every 2 ms), a lower bound.  One span at a
 * time in a process. */
void cm_mem_rss_span_begin(void);
int64_t cm_mem_rss_span_peak(void);
