/*
 * alloc.c - heap wrappers over mimalloc (libc under sanitizers) with an
 * optional fault injector: CM_FAULT_AFTER=N fails the N-th allocation and every
 * one after it, in debug builds only, so OOM paths can be swept.
 */
#include "common/alloc.h"

#include <stdatomic.h>
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
static atomic_long fault_after = -2; /* -2: not read yet, -1: off */
static atomic_long n_allocs;

static int fault_now(void)
{
    long limit = atomic_load(&fault_after);
    if (limit == -2) {
        const char *s = getenv("CM_FAULT_AFTER");
        limit = s ? atol(s) : -1;
        atomic_store(&fault_after, limit);
    }
    return limit >= 0 && atomic_fetch_add(&n_allocs, 1) + 1 >= limit;
}
#else
#define fault_now() 0
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
