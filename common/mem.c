/*
 * mem.c - the memory manager (mem.h).
 *
 * Invariant: used[p] is the sum of `held` over the consumers of pool p, and a
 * consumer is in the list exactly while it holds something; both change only
 * under `lock`.  Reservations are taken per chunk of work (a table doubling, a
 * run of rows), never per row, so one process-wide lock is cheap enough.
 */
#include "common/mem.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/thread.h"

typedef struct CmMem {
    CmMutex lock;
    bool ready;
    int64_t limit;
    int64_t used[2];
    int64_t peak[2];
    int64_t window_peak; /* execution: the most reserved since cm_mem_window_start */
    int64_t n_consumers[2];
    int64_t refusals[2];  /* per pool */
    CmMemRes *head;       /* consumers holding memory */
    CmMemEvictor evictor; /* frees storage memory for execution; may be NULL */
    int64_t evicted;      /* bytes execution took back from storage */
    CmMemMode mode;
    double storage_frac, shuffle_frac; /* shares of the limit (cm_mem_set_mode) */
    double boundary;                   /* the protected storage share: storage_frac, or AUTO's */
    CmCond released;                   /* broadcast by give() while needs wait (cm_mem_need) */
    int waiters;                       /* threads waiting on `released` */
    int64_t gives;                     /* releases so far: a waiter sees progress by it */
} CmMem;

/* cm_mem_grow keeps 1/HEADROOM_DIV of execution memory free (see there). */
#define HEADROOM_DIV 8

/* What is not reserved.  Resident memory is more than the reservations: the
 * program and its thread stacks, the batches a task has in flight, scratch
 * vectors, and what the allocator keeps of freed memory (pages shared by
 * blocks freed and blocks still live, frees from other threads waiting in
 * the owner's heap).  Sampled beside the reservations (2026-12-04), K-means'
 * GROUP BY form at 291 MiB ran for seconds at 55-77 MiB of RSS past them
 * with all of the limit reserved, 14-20 MiB of it live heap, the rest the
 * allocator's, and peaked at 350-358 MiB, over its bound of 352 (limit + 10%
 * + 32 MiB).  So the pools share out the limit less 1/UNPOOLED_DIV of it:
 * the same job with a tenth fewer reservations peaked at 330-332 MiB, in the
 * same time.  The tenth is kept at every limit, the default too, so that a
 * limit means the same thing whether it was set or not. */
#define UNPOOLED_DIV 10

/* A refused cm_mem_need waits for other threads' releases (see there) while
 * they go on: it gives up after NEED_QUIET_MS without a release, or after
 * NEED_WAIT_MS in all, and looks again every NEED_LOOK_MS meanwhile. */
#define NEED_QUIET_MS 1000
#define NEED_WAIT_MS 30000
#define NEED_LOOK_MS 100

/* The thread a consumer last grew on (CmMemRes.owner): 1, 2, ... in the
 * order threads first reserve. */
static atomic_int g_threads;
static _Thread_local int t_self;

static int self_id(void)
{
    if (t_self == 0) {
        t_self = atomic_fetch_add(&g_threads, 1) + 1;
    }
    return t_self;
}

static CmMem g_mem;
static CmMemRes g_values;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* How much of freed big buffers' mappings the allocator may keep for the
 * next ones (cm_alloc_set_keep_bytes): at the default limit a 32nd of it, 128
 * MiB at most (PageRank took as few faults as with 512 MiB, and K-means'
 * peak RSS at the default grew by 180 MB instead of 440).  Under a lower
 * limit none: PageRank at a quarter of its peak took 5% fewer faults with a
 * 16th of the limit kept, and no less time (its faults there are mimalloc's
 * small pages, given back above the release mark). */
static void keep_big_maps(int64_t limit, bool governed)
{
    int64_t keep = governed ? 0 : limit / 32;
    cm_alloc_set_keep_bytes((size_t)(keep < ((int64_t)128 << 20) ? keep : (int64_t)128 << 20));
}

static void mem_init_once(void)
{
    cm_mutex_init(&g_mem.lock);
    cm_cond_init(&g_mem.released);
    g_mem.limit = cm_mem_default_limit();
    /* keep in sync with the defaults of the settings (common/config.c) */
    g_mem.mode = CM_MEM_UNIFIED;
    g_mem.storage_frac = 0.5;
    g_mem.shuffle_frac = 0.5;
    g_mem.boundary = 0.5;
    g_mem.ready = true;
    cm_mem_res_init(&g_values, CM_MEM_EXECUTION, "value heap", NULL);
    cm_alloc_set_release(CM_ALLOC_KEEP); /* the default limit governs nothing (set_eager) */
    keep_big_maps(g_mem.limit, false);
}

static CmMem *mem(void)
{
    pthread_once(&g_once, mem_init_once);
    return &g_mem;
}

int64_t cm_mem_default_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    long page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) {
        return (int64_t)8 << 30;
    }
    return (int64_t)pages * page / 10 * 8;
}

/* ---- what the allocator keeps of freed memory -------------------------------
 *
 * Under a memory_limit below the default, resident memory is what the user
 * bounded (limit + 10% + 32 MiB is the promise the tests and bench/memory
 * check), and the allocator's free pages count in it.  Giving each freed page
 * back at once keeps RSS lowest but makes every page used again a fault: the
 * PageRank job at a quarter of its peak took 1.7M minor faults and 4.4 s of
 * system time against 7.5 s of user time, at 42 MiB resident of its 97 MiB
 * bound.  Keeping them for mimalloc's 25 ms took 68,000 faults and 1.5 s, but
 * went over the bound.  So the allocator keeps freed pages while RSS is below
 * the limit + RELEASE_ABOVE, and gives them back at once above it, until RSS
 * falls RELEASE_HYSTERESIS below that again.  RSS overshoots the mark by what
 * is allocated before the next look and what waits out the delay: TeraSort at
 * 180 MiB, with pages given back at once, peaks at about 200 MiB; kept up to
 * the limit + 16 MiB it peaked at up to 230 MiB, its bound, and up to the
 * limit + 8 MiB at 216 MiB (faults 700,000 → 300,000).  RSS is read from
 * /proc/self/statm (one pread) at most every GOVERN_EVERY_NS, by whichever
 * thread reserves memory first after that; the same samples give a query its
 * peak RSS (cm_mem_rss_span_peak), with or without a limit. */
#define GOVERN_EVERY_NS 2000000LL
#define RELEASE_ABOVE ((int64_t)8 << 20)
/* Below this RSS freed pages are kept whatever the limit: the program itself
 * (code, libraries, thread stacks, the allocator's heaps) is 10-15 MiB resident,
 * so under a limit of a few MiB, giving pages back at once could never bring
 * RSS near the limit; it only made every page used again a fault (a third of
 * the time of a query at 4 MiB was the kernel's).  The bound, limit + 10% +
 * 32 MiB, still has 8 MiB or more above it. */
#define RELEASE_FLOOR ((int64_t)24 << 20)
#define RELEASE_HYSTERESIS ((int64_t)8 << 20)

static atomic_llong g_govern_limit; /* the limit while governed, else 0 */
static atomic_llong g_govern_at;    /* cm_now_ns() of the next check */
static atomic_bool g_eager;         /* freed pages go back at once */
static atomic_int g_statm = -1;     /* /proc/self/statm, opened on first use */
static atomic_llong g_span_hwm;     /* VmHWM when the span began (cm_mem_rss_span_begin) */
static atomic_llong g_span_max;     /* the largest RSS sampled since */

/* Resident bytes now, or -1 when /proc cannot say. */
static int64_t rss_now(void)
{
    int fd = atomic_load(&g_statm);
    if (fd < 0) {
        int mine = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
        int none = -1;
        if (mine < 0) {
            return -1;
        }
        if (!atomic_compare_exchange_strong(&g_statm, &none, mine)) {
            close(mine); /* another thread opened it first */
        }
        fd = atomic_load(&g_statm);
    }
    char buf[128];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) {
        return -1;
    }
    buf[n] = '\0';
    long long size = 0, resident = 0;
    if (sscanf(buf, "%lld %lld", &size, &resident) != 2) {
        return -1;
    }
    return (int64_t)resident * sysconf(_SC_PAGESIZE);
}

/* At the default limit freed pages stay with the allocator (KEEP): a fault
 * costs 10 us on a virtual machine, and the PageRank job at its default
 * took 14.5 s instead of 19 s with them kept, its peak RSS 688 MB instead of
 * 672 MB.  Under a lower limit, resident memory decides (above). */
static void set_eager(bool eager)
{
    atomic_store(&g_eager, eager);
    bool governed = atomic_load(&g_govern_limit) != 0;
    cm_alloc_set_release(eager ? CM_ALLOC_EAGER : governed ? CM_ALLOC_DELAYED : CM_ALLOC_KEEP);
}

/* Keeps or gives back freed pages by RSS (see above); cheap when not due. */
static void govern_release(void)
{
    long long now = cm_now_ns();
    long long at = atomic_load_explicit(&g_govern_at, memory_order_relaxed);
    if (now < at || !atomic_compare_exchange_strong(&g_govern_at, &at, now + GOVERN_EVERY_NS)) {
        return;
    }
    int64_t rss = rss_now();
    long long max = atomic_load(&g_span_max);
    while (rss > max && !atomic_compare_exchange_weak(&g_span_max, &max, rss)) {
    }
    int64_t limit = atomic_load_explicit(&g_govern_limit, memory_order_relaxed);
    if (limit == 0) {
        return;
    }
    int64_t above = limit + RELEASE_ABOVE > RELEASE_FLOOR ? limit + RELEASE_ABOVE : RELEASE_FLOOR;
    bool eager = atomic_load(&g_eager);
    if (rss < 0 && !eager) {
        set_eager(true); /* cannot tell: the safe side */
    } else if (!eager && rss > above) {
        set_eager(true);
    } else if (eager && rss >= 0 && rss < above - RELEASE_HYSTERESIS) {
        set_eager(false);
    }
}

bool cm_mem_release_is_eager(void)
{
    return atomic_load(&g_eager);
}

void cm_mem_set_limit(int64_t bytes)
{
    CmMem *m = mem();
    cm_mutex_lock(&m->lock);
    m->limit = bytes > 0 ? bytes : 1;
    cm_mutex_unlock(&m->lock);
    bool governed = bytes < cm_mem_default_limit();
    long long now = governed ? (long long)(bytes > 0 ? bytes : 1) : 0;
    if (atomic_exchange(&g_govern_limit, now) != now) {
        /* A new limit (every statement sets it): start on the safe side, and
         * let the first reservation look at RSS. */
        atomic_store(&g_govern_at, 0);
        set_eager(governed);
        keep_big_maps(bytes > 0 ? bytes : 1, governed);
    }
}

int64_t cm_mem_limit(void)
{
    CmMem *m = mem();
    cm_mutex_lock(&m->lock);
    int64_t limit = m->limit;
    cm_mutex_unlock(&m->lock);
    return limit;
}

int64_t cm_mem_limit_pooling(int64_t pooled)
{
    int64_t limit = pooled / (UNPOOLED_DIV - 1) * UNPOOLED_DIV;
    while (limit - limit / UNPOOLED_DIV < pooled) {
        limit++;
    }
    return limit;
}

void cm_mem_set_mode(CmMemMode mode, double storage_fraction, double shuffle_fraction)
{
    CmMem *m = mem();
    cm_mutex_lock(&m->lock);
    if (m->mode != mode || m->storage_frac != storage_fraction ||
        m->shuffle_frac != shuffle_fraction) {
        m->mode = mode;
        m->storage_frac = storage_fraction;
        m->shuffle_frac = shuffle_fraction;
        m->boundary = storage_fraction;
    }
    cm_mutex_unlock(&m->lock);
}

void cm_mem_set_boundary(double storage_share)
{
    CmMem *m = mem();
    cm_mutex_lock(&m->lock);
    double top = m->storage_frac + m->shuffle_frac;
    m->boundary = storage_share < 0 ? 0 : storage_share > top ? top : storage_share;
    cm_mutex_unlock(&m->lock);
}

const char *cm_mem_mode_name(CmMemMode mode)
{
    return mode == CM_MEM_STATIC ? "static" : mode == CM_MEM_AUTO ? "auto" : "unified";
}

const char *cm_mem_pool_name(CmMemPool pool)
{
    return pool == CM_MEM_STORAGE ? "storage" : "execution";
}

/* ---- reservations ----------------------------------------------------------- */

void cm_mem_res_init(CmMemRes *r, CmMemPool pool, const char *what, CmMemGroup *group)
{
    memset(r, 0, sizeof *r);
    r->pool = pool;
    r->what = what;
    r->group = group;
}

static void group_add(CmMemGroup *g, int64_t bytes)
{
    for (; g != NULL; g = g->parent) {
        long long now = atomic_fetch_add(&g->used, bytes) + bytes;
        long long peak = atomic_load(&g->peak);
        while (now > peak && !atomic_compare_exchange_weak(&g->peak, &peak, now)) {
        }
    }
}

/* Adds bytes to r; under the lock. */
static void take(CmMem *m, CmMemRes *r, int64_t bytes)
{
    if (r->held == 0 && bytes > 0) {
        r->prev = NULL;
        r->next = m->head;
        if (m->head != NULL) {
            m->head->prev = r;
        }
        m->head = r;
        m->n_consumers[r->pool] += r->fixed ? 0 : 1;
    }
    r->held += bytes;
    r->owner = self_id();
    r->peak = r->held > r->peak ? r->held : r->peak;
    m->used[r->pool] += bytes;
    if (m->used[r->pool] > m->peak[r->pool]) {
        m->peak[r->pool] = m->used[r->pool];
    }
    if (r->pool == CM_MEM_EXECUTION && m->used[r->pool] > m->window_peak) {
        m->window_peak = m->used[r->pool];
    }
    group_add(r->group, bytes);
}

/* Removes bytes (<= held) from r; under the lock. */
static void give(CmMem *m, CmMemRes *r, int64_t bytes)
{
    r->held -= bytes;
    m->used[r->pool] -= bytes;
    group_add(r->group, -bytes);
    m->gives++;
    if (m->waiters > 0 && bytes > 0) {
        cm_cond_broadcast(&m->released);
    }
    if (r->held == 0 && bytes > 0) {
        if (r->prev != NULL) {
            r->prev->next = r->next;
        } else {
            m->head = r->next;
        }
        if (r->next != NULL) {
            r->next->prev = r->prev;
        }
        r->prev = r->next = NULL;
        m->n_consumers[r->pool] -= r->fixed ? 0 : 1;
    }
}

/* The part of the limit the pools share out: all of it less a tenth, which
 * stays for what is not reserved (see "What is not reserved" above). */
static int64_t pooled(const CmMem *m)
{
    return m->limit - m->limit / UNPOOLED_DIV;
}

/* Bytes of the pooled limit a share (a fraction) is; under the lock. */
static int64_t share_bytes(const CmMem *m, double frac)
{
    return (int64_t)((double)pooled(m) * frac);
}

/* UNIFIED and AUTO: the bytes both pools share. */
static int64_t region(const CmMem *m)
{
    return share_bytes(m, m->storage_frac + m->shuffle_frac);
}

/* Bytes `pool` may still take: STATIC, what its own share leaves; otherwise
 * what the shared region leaves, and for AUTO's storage no more than the
 * boundary leaves (storage that borrowed past it was evicted again by the
 * next statement's execution, round after round).  May be negative after the
 * limit was lowered.  Under the lock. */
static int64_t free_for(const CmMem *m, CmMemPool pool)
{
    if (m->mode == CM_MEM_STATIC) {
        double frac = pool == CM_MEM_STORAGE ? m->storage_frac : m->shuffle_frac;
        return share_bytes(m, frac) - m->used[pool];
    }
    int64_t all = region(m) - m->used[0] - m->used[1];
    if (m->mode == CM_MEM_AUTO && pool == CM_MEM_STORAGE) {
        int64_t own = share_bytes(m, m->boundary) - m->used[pool];
        return own < all ? own : all;
    }
    return all;
}

/* Whether `bytes` more for `pool` stay within its bounds: STATIC, the pool's
 * own share; otherwise the shared region.  Under the lock. */
static bool fits(const CmMem *m, CmMemPool pool, int64_t bytes)
{
    return free_for(m, pool) >= bytes;
}

void cm_mem_set_evictor(CmMemEvictor fn)
{
    CmMem *m = mem();
    cm_mutex_lock(&m->lock);
    m->evictor = fn;
    cm_mutex_unlock(&m->lock);
}

/* Storage memory execution leaves alone when it evicts: all of it up to the
 * floor (an unspillable need takes it all); under the lock. */
static int64_t storage_kept(const CmMem *m, bool spillable)
{
    if (m->mode == CM_MEM_STATIC) {
        return m->used[CM_MEM_STORAGE]; /* execution never takes from storage */
    }
    int64_t floor = spillable ? share_bytes(m, m->boundary) : 0;
    return m->used[CM_MEM_STORAGE] < floor ? m->used[CM_MEM_STORAGE] : floor;
}

/* After a refusal of `bytes` for execution, under the lock: asks the evictor
 * (the lock released meanwhile) for the storage memory that would let the
 * reservation fit.  True when something was freed: the caller tries again. */
static bool take_back(CmMem *m, int64_t bytes, bool spillable)
{
    int64_t over = m->used[0] + m->used[1] + bytes - region(m);
    int64_t evictable = m->used[CM_MEM_STORAGE] - storage_kept(m, spillable);
    CmMemEvictor fn = m->evictor;
    if (fn == NULL || m->mode == CM_MEM_STATIC || over <= 0 || evictable <= 0) {
        return false;
    }
    cm_mutex_unlock(&m->lock);
    int64_t freed = fn(over < evictable ? over : evictable);
    cm_mutex_lock(&m->lock);
    m->evicted += freed > 0 ? freed : 0;
    return freed > 0;
}

/* Execution memory for spillable growth: what storage cannot keep from it
 * (evictable blocks count as free); under the lock. */
static int64_t execution_bytes(const CmMem *m)
{
    return m->mode == CM_MEM_STATIC ? share_bytes(m, m->shuffle_frac)
                                    : region(m) - storage_kept(m, true);
}

int64_t cm_mem_execution_bytes(void)
{
    CmMem *m = mem();
    cm_mutex_lock(&m->lock);
    int64_t exec = execution_bytes(m);
    cm_mutex_unlock(&m->lock);
    return exec;
}

bool cm_mem_grow(CmMemRes *r, int64_t bytes)
{
    if (bytes <= 0) {
        return true;
    }
    govern_release();
    CmMem *m = mem();
    cm_mutex_lock(&m->lock);
    bool ok;
    for (;;) {
        bool share_ok = true;
        if (r->pool == CM_MEM_EXECUTION) {
            /* Spillable memory leaves an eighth of execution memory free: room
             * for what cannot spill and for the first allocations of consumers
             * that start while others hold their share.  Execution memory is
             * what storage cannot keep from it: evictable blocks count as free. */
            int64_t exec = execution_bytes(m);
            int64_t n = m->n_consumers[CM_MEM_EXECUTION] + (r->held == 0 && !r->fixed ? 1 : 0);
            int64_t share = r->shared ? exec : exec / (n > 0 ? n : 1);
            share_ok = r->held + bytes <= share &&
                       m->used[CM_MEM_EXECUTION] + bytes <= exec - exec / HEADROOM_DIV;
        }
        ok = share_ok && fits(m, r->pool, bytes);
        if (ok || !share_ok || r->pool != CM_MEM_EXECUTION || !take_back(m, bytes, true)) {
            break;
        }
    }
    if (ok) {
        take(m, r, bytes);
    } else {
        m->refusals[r->pool]++;
    }
    cm_mutex_unlock(&m->lock);
    return ok;
}

static void fmt_bytes(char *buf, size_t cap, int64_t n)
{
    if (n >= ((int64_t)1 << 30)) {
        snprintf(buf, cap, "%.1f GiB", (double)n / (double)((int64_t)1 << 30));
    } else if (n >= ((int64_t)1 << 20)) {
        snprintf(buf, cap, "%.1f MiB", (double)n / (double)((int64_t)1 << 20));
    } else if (n >= 1024) {
        snprintf(buf, cap, "%.1f KiB", (double)n / 1024.0);
    } else {
        snprintf(buf, cap, "%lld bytes", (long long)n);
    }
}

/* The OOM message: who asked, the limit, and the largest holders; under the lock. */
static CmStatus refuse(CmMem *m, const CmMemRes *r, int64_t bytes, CmErr *err)
{
    char need[32], limit[64], storage[32], other[32];
    fmt_bytes(need, sizeof need, bytes);
    fmt_bytes(limit, sizeof limit, m->limit);
    if (m->mode == CM_MEM_STATIC) {
        /* the pool's own share is what refused: say so */
        size_t n = strlen(limit);
        snprintf(limit + n, sizeof limit - n, " (static: %s %.0f%%)",
                 r->pool == CM_MEM_STORAGE ? "storage" : "execution",
                 100.0 * (r->pool == CM_MEM_STORAGE ? m->storage_frac : m->shuffle_frac));
    }
    fmt_bytes(storage, sizeof storage, m->used[CM_MEM_STORAGE]);
    const CmMemRes *big = NULL;
    for (const CmMemRes *c = m->head; c != NULL; c = c->next) {
        if (c != r && c->pool == CM_MEM_EXECUTION && (big == NULL || c->held > big->held)) {
            big = c;
        }
    }
    char held[32];
    fmt_bytes(held, sizeof held, r->held);
    if (big != NULL) {
        fmt_bytes(other, sizeof other, big->held);
        return cm_err_set(err, CM_OOM, -1,
                          "out of memory: %s needs %s more (holds %s); memory_limit %s, %s held "
                          "by the tables of this database, %s by %s",
                          r->what, need, held, limit, storage, other, big->what);
    }
    return cm_err_set(err, CM_OOM, -1,
                      "out of memory: %s needs %s more (holds %s); memory_limit %s, %s held by "
                      "the tables of this database",
                      r->what, need, held, limit, storage);
}

CmMemRes *cm_mem_values(void)
{
    pthread_once(&g_once, mem_init_once);
    return &g_values;
}

/* Whether a refused need of `bytes` for r could be met by what consumers
 * other threads grew hold, with what is free: those threads are at work and
 * release as they finish a piece of it.  Under the lock. */
static bool others_could_give(const CmMem *m, const CmMemRes *r, int64_t bytes)
{
    int64_t elsewhere = 0;
    for (const CmMemRes *c = m->head; c != NULL; c = c->next) {
        if (c != r && c->pool == r->pool && c->owner != self_id()) {
            elsewhere += c->held;
        }
    }
    int64_t free = free_for(m, r->pool);
    return elsewhere > 0 && elsewhere + (free > 0 ? free : 0) >= bytes;
}

/* Memory that cannot spill is refused at once only when waiting cannot help.
 * When other threads hold what would meet it, they are tasks of the same
 * stage working through their share (a grace join's class, a sort run), and
 * a task that failed now would fail a query that fits: two join tasks at
 * 1 MB, one holding its block while the other starts its own, is such a
 * case.  So the need waits for their releases, and gives up only when they
 * stop releasing (NEED_QUIET_MS: a holder that keeps its memory to the end
 * of the stage, a broadcast table say) or after NEED_WAIT_MS.  Waiters
 * cannot deadlock each other: each wait ends by its clock. */
CmStatus cm_mem_need(CmMemRes *r, int64_t bytes, CmErr *err)
{
    if (bytes <= 0) {
        return CM_OK;
    }
    CmMem *m = mem();
    cm_mutex_lock(&m->lock);
    CmStatus st = CM_OK;
    long long start = 0, quiet = 0;
    int64_t gives = 0;
    for (;;) {
        while (!fits(m, r->pool, bytes) && r->pool == CM_MEM_EXECUTION &&
               take_back(m, bytes, false)) {
        }
        if (fits(m, r->pool, bytes)) {
            take(m, r, bytes);
            break;
        }
        long long now = cm_now_ns();
        if (start == 0) {
            start = quiet = now;
            gives = m->gives;
        } else if (m->gives != gives) {
            quiet = now;
            gives = m->gives;
        }
        if (!others_could_give(m, r, bytes) || now - quiet > NEED_QUIET_MS * 1000000LL ||
            now - start > NEED_WAIT_MS * 1000000LL) {
            m->refusals[r->pool]++;
            st = refuse(m, r, bytes, err);
            break;
        }
        m->waiters++;
        cm_cond_timedwait(&m->released, &m->lock, NEED_LOOK_MS);
        m->waiters--;
    }
    cm_mutex_unlock(&m->lock);
    return st;
}

CmStatus cm_mem_need_total(CmMemRes *r, int64_t bytes, CmErr *err)
{
    if (bytes < r->held) {
        cm_mem_shrink(r, r->held - bytes);
        return CM_OK;
    }
    return cm_mem_need(r, bytes - r->held, err);
}

int64_t cm_mem_held(CmMemRes *r)
{
    CmMem *m = mem();
    cm_mutex_lock(&m->lock);
    int64_t held = r->held;
    cm_mutex_unlock(&m->lock);
    return held;
}

void cm_mem_shrink(CmMemRes *r, int64_t bytes)
{
    if (bytes <= 0) {
        return;
    }
    CmMem *m = mem();
    cm_mutex_lock(&m->lock);
    give(m, r, bytes < r->held ? bytes : r->held);
    cm_mutex_unlock(&m->lock);
}

void cm_mem_res_fini(CmMemRes *r)
{
    if (r->held > 0) {
        cm_mem_shrink(r, r->held);
    }
}

/* ---- reports ------------------------------------------------------------------ */

void cm_mem_window_start(void)
{
    CmMem *m = mem();
    cm_mutex_lock(&m->lock);
    m->window_peak = m->used[CM_MEM_EXECUTION];
    cm_mutex_unlock(&m->lock);
}

int64_t cm_mem_execution_need(int64_t bytes)
{
    return bytes + bytes / (HEADROOM_DIV - 1);
}

int64_t cm_mem_storage_room(void)
{
    CmMem *m = mem();
    cm_mutex_lock(&m->lock);
    int64_t room = m->mode == CM_MEM_STATIC ? share_bytes(m, m->storage_frac)
                                            : region(m) - m->used[CM_MEM_EXECUTION];
    cm_mutex_unlock(&m->lock);
    return room;
}

void cm_mem_stats(CmMemStats *out)
{
    CmMem *m = mem();
    cm_mutex_lock(&m->lock);
    out->limit = m->limit;
    out->pooled = pooled(m);
    for (int p = 0; p < 2; p++) {
        out->used[p] = m->used[p];
        out->peak[p] = m->peak[p];
        out->n_consumers[p] = m->n_consumers[p];
    }
    out->window_peak = m->window_peak;
    out->refusals[0] = m->refusals[0];
    out->refusals[1] = m->refusals[1];
    out->evicted = m->evicted;
    out->mode = m->mode;
    out->storage_fraction = m->storage_frac;
    out->shuffle_fraction = m->shuffle_frac;
    out->boundary = m->mode == CM_MEM_AUTO ? m->boundary : m->storage_frac;
    if (m->mode == CM_MEM_STATIC) {
        out->storage_share = share_bytes(m, m->storage_frac);
        out->execution_share = share_bytes(m, m->shuffle_frac);
    } else {
        out->storage_share = share_bytes(m, out->boundary);
        out->execution_share = region(m) - out->storage_share;
    }
    cm_mutex_unlock(&m->lock);
}

void cm_mem_each(void (*fn)(void *ctx, const CmMemRes *r), void *ctx)
{
    CmMem *m = mem();
    cm_mutex_lock(&m->lock);
    for (const CmMemRes *c = m->head; c != NULL; c = c->next) {
        fn(ctx, c);
    }
    cm_mutex_unlock(&m->lock);
}

/* Both are read once per statement and twice per round of a recursive CTE:
 * /proc/self/status (fopen, the kernel formatting fifty lines, fgets) took a
 * fifth of a 1-row round's time.  RSS comes from /proc/self/statm (one pread
 * on a descriptor kept open, rss_now) and the peak from getrusage. */
int64_t cm_mem_rss(void)
{
    int64_t rss = rss_now();
    return rss > 0 ? rss : 0;
}

/* The peak given the RSS just read: ru_maxrss is the high-water mark (VmHWM),
 * in KiB; the kernel updates it lazily (per-thread RSS counters are folded in
 * from time to time), so it may trail the current RSS. */
static int64_t peak_with(int64_t rss)
{
    struct rusage ru;
    int64_t hwm = getrusage(RUSAGE_SELF, &ru) == 0 ? (int64_t)ru.ru_maxrss * 1024 : 0;
    return hwm > rss ? hwm : rss;
}

int64_t cm_mem_rss_peak(void)
{
    return peak_with(cm_mem_rss());
}

void cm_mem_rss_span_begin(void)
{
    int64_t rss = cm_mem_rss();
    atomic_store(&g_span_hwm, peak_with(rss));
    atomic_store(&g_span_max, rss);
}

int64_t cm_mem_rss_span_peak(void)
{
    int64_t rss = cm_mem_rss(), hwm = peak_with(rss);
    if (hwm > atomic_load(&g_span_hwm)) {
        return hwm; /* the process's peak was reached during the span */
    }
    int64_t sampled = atomic_load(&g_span_max);
    return sampled > rss ? sampled : rss;
}
