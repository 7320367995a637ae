/*
 * alloc.c - heap wrappers over mimalloc (libc under sanitizers) with an
 * optional fault injector, in debug builds only, so OOM paths can be swept:
 * CM_FAULT_AFTER=N fails the N-th allocation of the process and every one after
 * it; cm_alloc_fault_arm fails a window of allocations counted from the call.
 */
#include "common/alloc.h"

#include <execinfo.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void *cm_malloc(size_t n)
{
    return fault_now() ? NULL : RAW_MALLOC(n ? n : 1);
}

void *cm_calloc(size_t count, size_t size)
{
    return fault_now() ? NULL : RAW_CALLOC(count ? count : 1, size ? size : 1);
}

void *cm_realloc(void *p, size_t n)
{
    return fault_now() ? NULL : RAW_REALLOC(p, n ? n : 1);
}

void cm_alloc_collect(void)
{
#ifndef SLUICE_NO_MIMALLOC
    mi_collect(false);
#endif
}

void cm_alloc_set_eager_release(bool eager)
{
#ifndef SLUICE_NO_MIMALLOC
    /* mimalloc 2.0's default is 25 ms */
    mi_option_set(mi_option_decommit_delay, eager ? 0 : 25);
#else
    (void)eager;
#endif
}

void cm_free(void *p)
{
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
