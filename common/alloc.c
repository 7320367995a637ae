/*
 * alloc.c - heap wrappers over mimalloc (libc under sanitizers) with an
 * optional fault injector, in debug builds only, so OOM paths can be swept:
 * CM_FAULT_AFTER=N fails the N-th allocation of the process and every one after
 * it; cm_alloc_fault_arm fails a window of allocations counted from the call.
 */
#include "common/alloc.h"

#include <execinfo.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef SLUICE_NO_MIMALLOC
#include <mimalloc.h>
#define RAW_MALLOC mi_malloc
#define RAW_CALLOC mi_calloc
#define RAW_REALLOC mi_realloc
#define RAW_FREE mi_free
#else
#define RAW_MALLOC malloc
#define RAW_CALLOC calloc
#define RAW_REALLOC realloc
#define RAW_FREE free
#endif

static atomic_int g_release; /* the CmAllocRelease in force */

#ifndef NDEBUG
/* Allocations are numbered from 1 since the process started (or since the
 * last cm_alloc_fault_arm); those numbered fault_after..fault_last fail. */
static atomic_long fault_after = -2; /* -2: not read yet, -1: off */
static atomic_long fault_last = LONG_MAX;
static atomic_long n_allocs;
static atomic_long n_faults;

static int fault_now(void)
{
    long limit = atomic_load(&fault_after);
    if (limit == -2) {
        const char *s = getenv("CM_FAULT_AFTER");
        limit = s ? atol(s) : -1;
        atomic_store(&fault_after, limit);
    }
    if (limit < 0) {
        return 0;
    }
    long i = atomic_fetch_add(&n_allocs, 1) + 1;
    if (i < limit || i > atomic_load(&fault_last)) {
        return 0;
    }
    atomic_fetch_add(&n_faults, 1);
    if (getenv("CM_FAULT_TRACE") != NULL) {
        /* where the failed allocation was asked for, to stderr */
        void *frames[32];
        int n = backtrace(frames, 32);
        fprintf(stderr, "cm_alloc: allocation %ld fails here:\n", i);
        backtrace_symbols_fd(frames, n, 2);
    }
    return 1;
}

bool cm_alloc_fault_arm(long nth, long count)
{
    atomic_store(&fault_after, -1);
    atomic_store(&n_allocs, 0);
    atomic_store(&n_faults, 0);
    atomic_store(&fault_last, count < 0 || nth > LONG_MAX - count ? LONG_MAX : nth + count - 1);
    atomic_store(&fault_after, nth > 0 ? nth : LONG_MAX);
    return true;
}

void cm_alloc_fault_disarm(void)
{
    atomic_store(&fault_after, -1);
}

long cm_alloc_fault_allocs(void)
{
    return atomic_load(&n_allocs);
}

long cm_alloc_fault_hits(void)
{
    return atomic_load(&n_faults);
}
#else
#define fault_now() 0

bool cm_alloc_fault_arm(long nth, long count)
{
    (void)nth;
    (void)count;
    return false;
}

void cm_alloc_fault_disarm(void) {}

long cm_alloc_fault_allocs(void)
{
    return 0;
}

long cm_alloc_fault_hits(void)
{
    return 0;
}
#endif

/* ---- big buffers: their own mappings, in huge pages ------------------------------
 *
 * A page fault is dear on a virtual machine: 10.7 us per 4 KiB page on the
 * one this was measured on (2.8 s to touch 1 GiB), against 0.06 s per GiB
 * in 2 MiB pages.  Hash tables, sort buffers and shuffle buffers are built
 * anew by every statement, and mimalloc gives a large block back to the
 * system when it is freed (whatever its decommit delay), so each build
 * faulted all of its pages in again: the PageRank job took 1.4M faults and
 * 10 s of system time beside 22 s of user time.  So a buffer of BIG_MIN
 * bytes or more gets a mapping of its own, aligned to 2 MiB and advised
 * MADV_HUGEPAGE (used when transparent huge pages are `madvise` or
 * `always`; 4 KiB pages otherwise, as before).  Its 2 MiB stretches are
 * faulted in at once; the tail past the last whole one is in small pages,
 * so nothing is resident that was not asked for.  Freeing unmaps it, so the
 * memory goes back at once, whichever thread frees it.  A header before the
 * buffer holds the mapping's size and a check word; a mimalloc block is never
 * mistaken for one, since the word is the buffer's address scrambled.
 * Sanitizer builds (SLUICE_NO_MIMALLOC) leave big buffers to malloc, so that
 * ASan watches them too. */
#ifndef SLUICE_NO_MIMALLOC
#define BIG_MIN ((size_t)1 << 20)
#define HUGE_PAGE ((size_t)2 << 20)
#define BIG_HDR 64 /* keeps the buffer 64-byte aligned */
#define BIG_CHECK 0x5a17ce0b16b0f0e5ULL

typedef struct BigHdr {
    size_t map_bytes; /* the mapping, header included */
    uint64_t check;   /* BIG_CHECK ^ the buffer's address */
} BigHdr;

/* The system's page size, read once. */
static size_t page_bytes(void)
{
    static atomic_size_t page;
    size_t n = atomic_load_explicit(&page, memory_order_relaxed);
    if (n == 0) {
        n = (size_t)sysconf(_SC_PAGESIZE);
        atomic_store_explicit(&page, n, memory_order_relaxed);
    }
    return n;
}

static BigHdr *big_hdr(void *p)
{
    return (BigHdr *)((char *)p - BIG_HDR);
}

/* Kept mappings.  Huge pages are advice: on the machine measured the kernel
 * mostly had none to give, and the PageRank job still took 518,000 faults
 * (4.5 s of system time in an 11.6 s job), two thirds of them in the hash
 * aggregates' direct indexes, slots and group arrays, which every task of
 * every statement builds anew.  So a freed big buffer's mapping is kept, up
 * to BIG_KEEP_N of them and keep_cap bytes in all (the memory manager sets
 * it from the limit), and the next big buffer that fits in one (at most
 * twice its size) takes it: its pages are resident already, and zeroing them
 * is a tenth of faulting them in.  CM_ALLOC_EAGER (resident memory past the
 * release mark under a memory_limit) keeps none, and switching to it unmaps
 * what is kept (cm_alloc_set_release), as does a lower cap. */
#define BIG_KEEP_N 32
static size_t keep_cap; /* at most this many bytes kept (cm_alloc_set_keep_bytes) */
static pthread_mutex_t keep_lock = PTHREAD_MUTEX_INITIALIZER;
static BigHdr *keep_map[BIG_KEEP_N]; /* kept mappings, check word 0 */
static int keep_n;
static size_t keep_bytes; /* their map_bytes in all */

/* A kept mapping of bytes..2*bytes bytes, the smallest, taken out; NULL when none. */
static BigHdr *keep_take(size_t bytes)
{
    BigHdr *h = NULL;
    pthread_mutex_lock(&keep_lock);
    int best = -1;
    for (int i = 0; i < keep_n; i++) {
        size_t b = keep_map[i]->map_bytes;
        if (b >= bytes && b / 2 <= bytes && (best < 0 || b < keep_map[best]->map_bytes)) {
            best = i;
        }
    }
    if (best >= 0) {
        h = keep_map[best];
        keep_map[best] = keep_map[--keep_n];
        keep_bytes -= h->map_bytes;
    }
    pthread_mutex_unlock(&keep_lock);
    return h;
}

/* Keeps the mapping of h when memory is kept and there is room; false otherwise. */
static bool keep_give(BigHdr *h)
{
    bool kept = false;
    if (atomic_load(&g_release) == CM_ALLOC_EAGER) {
        return false;
    }
    pthread_mutex_lock(&keep_lock);
    if (keep_n < BIG_KEEP_N && keep_bytes + h->map_bytes <= keep_cap) {
        keep_map[keep_n++] = h;
        keep_bytes += h->map_bytes;
        kept = true;
    }
    pthread_mutex_unlock(&keep_lock);
    return kept;
}

/* Unmaps every kept mapping. */
static void keep_drop_all(void)
{
    pthread_mutex_lock(&keep_lock);
    while (keep_n > 0) {
        BigHdr *h = keep_map[--keep_n];
        munmap(h, h->map_bytes);
    }
    keep_bytes = 0;
    pthread_mutex_unlock(&keep_lock);
}

/* A big buffer of n bytes, zeroed when `zero` (a new mapping is). */
static void *big_alloc(size_t n, bool zero)
{
    if (n > SIZE_MAX - BIG_HDR - 2 * HUGE_PAGE) {
        return NULL;
    }
    size_t page = page_bytes();
    size_t bytes = (n + BIG_HDR + page - 1) / page * page;
    BigHdr *kept = keep_take(bytes);
    if (kept != NULL) {
        void *p = (char *)kept + BIG_HDR;
        kept->check = BIG_CHECK ^ (uintptr_t)p;
        if (zero) {
            memset(p, 0, n);
        }
        return p;
    }
    size_t span = bytes + HUGE_PAGE;
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        return NULL;
    }
    /* the mapping starts at a 2 MiB boundary: the rest of the span goes back */
    char *base = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (base > raw) {
        munmap(raw, (size_t)(base - raw));
    }
    size_t tail = span - (size_t)(base - raw) - bytes;
    if (tail > 0) {
        munmap(base + bytes, tail);
    }
    if (bytes >= HUGE_PAGE) {
        madvise(base, bytes / HUGE_PAGE * HUGE_PAGE, MADV_HUGEPAGE); /* advice: may do nothing */
    }
    void *p = base + BIG_HDR;
    *big_hdr(p) = (BigHdr){.map_bytes = bytes, .check = BIG_CHECK ^ (uintptr_t)p};
    return p;
}

/* Whether p (from this allocator) is a big buffer.  The BIG_HDR bytes
 * before a mimalloc block are mapped (its page's neighbour or the segment's
 * header), so reading them is safe. */
static bool is_big(void *p)
{
    return ((uintptr_t)p & (HUGE_PAGE - 1)) == BIG_HDR &&
           big_hdr(p)->check == (BIG_CHECK ^ (uintptr_t)p);
}

static void big_free(void *p)
{
    BigHdr *h = big_hdr(p);
    size_t bytes = h->map_bytes;
    h->check = 0;
    if (!keep_give(h)) {
        munmap(h, bytes);
    }
}
#endif

void *cm_malloc(size_t n)
{
    if (fault_now()) {
        return NULL;
    }
#ifndef SLUICE_NO_MIMALLOC
    if (n >= BIG_MIN) {
        return big_alloc(n, false);
    }
#endif
    return RAW_MALLOC(n ? n : 1);
}

void *cm_calloc(size_t count, size_t size)
{
    if (fault_now()) {
        return NULL;
    }
#ifndef SLUICE_NO_MIMALLOC
    if (count != 0 && size != 0 && size <= SIZE_MAX / count && count * size >= BIG_MIN) {
        return big_alloc(count * size, true);
    }
#endif
    return RAW_CALLOC(count ? count : 1, size ? size : 1);
}

void *cm_realloc(void *p, size_t n)
{
    if (fault_now()) {
        return NULL;
    }
#ifndef SLUICE_NO_MIMALLOC
    if (p == NULL && n >= BIG_MIN) {
        return big_alloc(n, false);
    }
    bool big = p != NULL && is_big(p);
    if (p != NULL && (n >= BIG_MIN || big)) {
        size_t have = big ? big_hdr(p)->map_bytes - BIG_HDR : mi_usable_size(p);
        if (big && n >= BIG_MIN && n <= have) {
            return p; /* shrinks, or grows within its last page */
        }
        void *q = n >= BIG_MIN ? big_alloc(n, false) : RAW_MALLOC(n ? n : 1);
        if (q != NULL) {
            memcpy(q, p, have < n ? have : n);
            cm_free(p);
        }
        return q;
    }
#endif
    return RAW_REALLOC(p, n ? n : 1);
}

void cm_cold_add(CmColdFree *c, void *p)
{
    if (p == NULL) {
        return;
    }
    if (c->n == CM_COLD_MAX) {
        cm_cold_free(c);
    }
    c->p[c->n++] = p;
}

#ifndef SLUICE_NO_MIMALLOC
static int cmp_addr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}
#endif

void cm_cold_free(CmColdFree *c)
{
#ifndef SLUICE_NO_MIMALLOC
    /* The whole of each block goes, merged with the blocks right after it:
     * mimalloc writes its free-list link into a block's first word when it is
     * freed (below), which faults that one page in again; keeping the first
     * page instead would leave gaps that no call can span. */
    size_t page = page_bytes();
    qsort(c->p, (size_t)c->n, sizeof c->p[0], cmp_addr);
    for (int i = 0; i < c->n;) {
        if (is_big(c->p[i])) {
            i++;
            continue;
        }
        uintptr_t lo = (uintptr_t)c->p[i];
        uintptr_t hi = lo + mi_usable_size(c->p[i]);
        for (i++; i < c->n && (uintptr_t)c->p[i] == hi && !is_big(c->p[i]); i++) {
            hi += mi_usable_size(c->p[i]);
        }
        lo = (lo + page - 1) & ~(uintptr_t)(page - 1);
        hi &= ~(uintptr_t)(page - 1);
        if (hi > lo) {
            (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
        }
    }
#endif
    for (int i = 0; i < c->n; i++) {
        cm_free(c->p[i]);
    }
    c->n = 0;
}

void cm_alloc_collect(void)
{
#ifndef SLUICE_NO_MIMALLOC
    mi_collect(false);
#endif
}

void cm_alloc_set_keep_bytes(size_t bytes)
{
#ifndef SLUICE_NO_MIMALLOC
    pthread_mutex_lock(&keep_lock);
    keep_cap = bytes;
    bool over = keep_bytes > bytes;
    pthread_mutex_unlock(&keep_lock);
    if (over) {
        keep_drop_all();
    }
#else
    (void)bytes;
#endif
}

void cm_alloc_set_release(CmAllocRelease how)
{
#ifndef SLUICE_NO_MIMALLOC
    /* mimalloc 2.0 reads both options each time it could decommit; its
     * default delay is 25 ms */
    mi_option_set_enabled(mi_option_allow_decommit, how != CM_ALLOC_KEEP);
    mi_option_set(mi_option_decommit_delay, how == CM_ALLOC_EAGER ? 0 : 25);
#endif
    atomic_store(&g_release, (int)how);
#ifndef SLUICE_NO_MIMALLOC
    if (how == CM_ALLOC_EAGER) {
        keep_drop_all();
    }
#endif
}

void cm_free(void *p)
{
#ifndef SLUICE_NO_MIMALLOC
    if (p != NULL && is_big(p)) {
        big_free(p);
        return;
    }
#endif
    RAW_FREE(p);
}

char *cm_strndup(const char *s, size_t n)
{
    char *d = cm_malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *cm_strdup(const char *s)
{
    return cm_strndup(s, strlen(s));
}

/* ---- the stash of freed buffers (alloc.h) ------------------------------------------ */

#define STASH_SLOTS 16
#define STASH_BYTES ((size_t)4 << 20)
typedef struct Stash {
    void *buf[STASH_SLOTS];
    size_t bytes[STASH_SLOTS];
    size_t total; /* the bytes of buf[0..n) */
    int n;
} Stash;
static pthread_key_t stash_key;
static pthread_once_t stash_once = PTHREAD_ONCE_INIT;
static bool stash_ok;

static __thread Stash tl_stash;

/* At the thread's end (the key only carries this destructor). */
static void stash_free(void *p)
{
    Stash *s = p;
    for (int i = 0; i < s->n; i++) {
        cm_free(s->buf[i]);
    }
    s->n = 0;
    s->total = 0;
}

static void stash_init(void)
{
    stash_ok = pthread_key_create(&stash_key, stash_free) == 0;
}

static Stash *stash(bool make)
{
    pthread_once(&stash_once, stash_init);
    if (!stash_ok) {
        return NULL;
    }
    Stash *s = pthread_getspecific(stash_key);
    if (s == NULL && make) {
        s = pthread_setspecific(stash_key, &tl_stash) == 0 ? &tl_stash : NULL;
    }
    return s;
}

void *cm_stash_take(size_t bytes)
{
    Stash *s = stash(false);
    for (int i = 0; s != NULL && i < s->n; i++) {
        if (s->bytes[i] == bytes) {
            void *p = s->buf[i];
            s->total -= bytes;
            s->n--;
            s->buf[i] = s->buf[s->n];
            s->bytes[i] = s->bytes[s->n];
            return p;
        }
    }
    return cm_malloc(bytes);
}

void cm_stash_give(void *p, size_t bytes)
{
    if (p == NULL) {
        return;
    }
    /* EAGER: resident memory is past the limit's mark, and a buffer kept
     * idle is memory the bound counts */
    bool keep = bytes <= CM_STASH_MAX_BYTES && atomic_load(&g_release) != CM_ALLOC_EAGER;
    Stash *s = keep ? stash(true) : NULL;
    if (s == NULL || s->n == STASH_SLOTS || s->total + bytes > STASH_BYTES) {
        cm_free(p);
        return;
    }
    s->total += bytes;
    s->buf[s->n] = p;
    s->bytes[s->n++] = bytes;
}
