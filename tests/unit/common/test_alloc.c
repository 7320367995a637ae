/*
 * test_alloc.c - unit tests for common/alloc.c's big buffers (a MiB or more:
 * mappings of their own): contents survive growing and shrinking across the
 * threshold both ways, calloc'ed ones are zero, a buffer freed on another
 * thread goes back, and the mapping is gone from the process once freed.
 * In sanitizer builds big buffers are plain malloc; the tests hold there too.
 * A thread's cache of middle-sized blocks it freed: what comes back from it,
 * and that a thread's exit empties it.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/mem.h"

#define MIB ((size_t)1 << 20)

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = (unsigned char)(i * 31 + seed);
    }
}

static bool same(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != (unsigned char)(i * 31 + seed)) {
            return false;
        }
    }
    return true;
}

Test(cm_alloc, big_buffers_keep_their_bytes_through_realloc)
{
    unsigned char *p = cm_malloc(3 * MIB + 5);
    cr_assert_not_null(p);
    cr_expect_eq((uintptr_t)p % 16, 0);
    fill(p, 3 * MIB + 5, 7);
    p = cm_realloc(p, 9 * MIB); /* grows: moved */
    cr_assert_not_null(p);
    cr_expect(same(p, 3 * MIB + 5, 7));
    fill(p, 9 * MIB, 3);
    p = cm_realloc(p, 2 * MIB); /* shrinks in place */
    cr_assert_not_null(p);
    cr_expect(same(p, 2 * MIB, 3));
    p = cm_realloc(p, 1000); /* below the threshold: a small block */
    cr_assert_not_null(p);
    cr_expect(same(p, 1000, 3));
    p = cm_realloc(p, 4 * MIB); /* and back above it */
    cr_assert_not_null(p);
    cr_expect(same(p, 1000, 3));
    cm_free(p);
}

Test(cm_alloc, big_calloc_is_zero_and_small_blocks_are_left_alone)
{
    for (int round = 0; round < 3; round++) {
        unsigned char *p = cm_calloc(5 * MIB / 8, 8);
        cr_assert_not_null(p);
        size_t nonzero = 0;
        for (size_t i = 0; i < 5 * MIB; i++) {
            nonzero += p[i] != 0;
        }
        cr_expect_eq(nonzero, 0);
        memset(p, 0xab, 5 * MIB); /* the next round must not see this */
        cm_free(p);
    }
    /* many small blocks beside big ones: none is taken for a big one */
    void *small[256];
    void *big[4];
    for (int i = 0; i < 256; i++) {
        small[i] = cm_malloc((size_t)(i + 1) * 1024);
        cr_assert_not_null(small[i]);
        fill(small[i], (size_t)(i + 1) * 1024, (unsigned)i);
    }
    for (int i = 0; i < 4; i++) {
        big[i] = cm_malloc(MIB + (size_t)i * 4096);
        cr_assert_not_null(big[i]);
        fill(big[i], MIB + (size_t)i * 4096, 99);
    }
    for (int i = 0; i < 256; i++) {
        cr_expect(same(small[i], (size_t)(i + 1) * 1024, (unsigned)i));
        cm_free(small[i]);
    }
    for (int i = 0; i < 4; i++) {
        cr_expect(same(big[i], MIB + (size_t)i * 4096, 99));
        cm_free(big[i]);
    }
}

static void *free_it(void *p)
{
    cm_free(p);
    return NULL;
}

Test(cm_alloc, a_big_buffer_freed_on_another_thread_goes_back)
{
    int64_t before = cm_mem_rss();
    unsigned char *p = cm_malloc(64 * MIB);
    cr_assert_not_null(p);
    memset(p, 1, 64 * MIB);
    int64_t touched = cm_mem_rss();
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, free_it, p), 0);
    pthread_join(t, NULL);
    if (before > 0) {
        cr_expect_geq(touched - before, (int64_t)(60 * MIB), "touched %lld", (long long)touched);
#ifndef SLUICE_NO_MIMALLOC
        /* its own mapping: unmapped at once (malloc may keep it) */
        int64_t after = cm_mem_rss();
        cr_expect_leq(after - before, (int64_t)(4 * MIB), "after %lld, before %lld",
                      (long long)after, (long long)before);
#endif
    }
}

#ifndef SLUICE_NO_MIMALLOC
/* A thread's recently freed middle-sized blocks (alloc.c, "hot") come back to
 * it for requests they fit closely, zeroed for calloc; a request well past a
 * cached block's size gets another block.  (Sanitizer builds have no cache.) */
Test(cm_alloc, a_freed_middle_block_comes_back_to_its_thread)
{
    unsigned char *p = cm_malloc(24 * 1024);
    cr_assert_not_null(p);
    fill(p, 24 * 1024, 5);
    cm_free(p);
    unsigned char *q = cm_malloc(23 * 1024);
    cr_expect_eq(q, p, "a block a little smaller reuses the one just freed");
    fill(q, 23 * 1024, 9);
    cm_free(q);
    unsigned char *z = cm_calloc(3, 8 * 1024);
    cr_assert_not_null(z);
    cr_expect_eq(z, p);
    for (size_t i = 0; i < 24 * 1024; i++) {
        cr_assert_eq(z[i], 0, "byte %zu of a reused calloc block is %d", i, z[i]);
    }
    unsigned char *w = cm_malloc(48 * 1024);
    cr_expect_neq(w, z, "twice the size is not served by a cached block");
    cm_free(w);
    cm_free(z);
    cm_alloc_collect();
}

static void *churn(void *arg)
{
    (void)arg;
    for (int round = 0; round < 100; round++) {
        void *b[40];
        for (int i = 0; i < 40; i++) {
            b[i] = cm_malloc((size_t)(16 + i) * 1024);
            memset(b[i], i, (size_t)(16 + i) * 1024);
        }
        for (int i = 0; i < 40; i++) {
            cm_free(b[i]);
        }
    }
    return NULL; /* the thread's cache is emptied as it exits */
}

/* Threads that free more than their cache holds, and exit holding some: the
 * memory goes back (resident memory does not grow with the threads). */
Test(cm_alloc, threads_that_end_give_back_their_cached_blocks)
{
    int64_t before = cm_mem_rss();
    for (int t = 0; t < 64; t++) {
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, churn, NULL), 0);
        pthread_join(th, NULL);
    }
    int64_t after = cm_mem_rss();
    if (before > 0) {
        /* 64 threads x a 4 MiB cache each, were it kept */
        cr_expect_leq(after - before, (int64_t)(32 * MIB), "after %lld, before %lld",
                      (long long)after, (long long)before);
    }
}
#endif
