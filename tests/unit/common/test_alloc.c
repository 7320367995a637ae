/*
 * test_alloc.c - unit tests for common/alloc.c's big buffers (a MiB or more:
 * mappings of their own): contents survive growing and shrinking across the
 * threshold both ways, calloc'ed ones are zero, a buffer freed on another
 * thread goes back, and the mapping is gone from the process once freed.
 * In sanitizer builds big buffers are plain malloc; the tests hold there too.
 * Also cm_free_cold: freed buffers whose pages go back at once.
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

/* Kept mappings: a freed big buffer's mapping is handed to the next big
 * buffer that fits; a calloc'ed one is still zero, and the eager release mode
 * gives every kept mapping back. */
Test(cm_alloc, kept_mappings_are_reused_zeroed_and_given_back)
{
    cm_alloc_set_release(CM_ALLOC_KEEP);
    cm_alloc_set_keep_bytes(128 * MIB);
    for (int round = 0; round < 3; round++) {
        unsigned char *p = cm_malloc(6 * MIB);
        cr_assert_not_null(p);
        fill(p, 6 * MIB, (unsigned)round);
        cm_free(p);
        unsigned char *z = cm_calloc(5 * MIB + 17, 1); /* fits in the kept 6 MiB */
        cr_assert_not_null(z);
        bool zero = true;
        for (size_t i = 0; i < 5 * MIB + 17; i++) {
            zero = zero && z[i] == 0;
        }
        cr_expect(zero, "a calloc'ed buffer from a kept mapping is not zero");
        fill(z, 5 * MIB + 17, 5);
        z = cm_realloc(z, 11 * MIB); /* grows past it: moved, bytes kept */
        cr_assert_not_null(z);
        cr_expect(same(z, 5 * MIB + 17, 5));
        cm_free(z);
    }
    int64_t before = cm_mem_rss();
    unsigned char *big = cm_malloc(64 * MIB);
    cr_assert_not_null(big);
    memset(big, 1, 64 * MIB);
    cm_free(big);
    cm_alloc_set_release(CM_ALLOC_EAGER);
#ifndef SLUICE_NO_MIMALLOC
    int64_t after = cm_mem_rss();
    if (before > 0) {
        cr_expect_leq(after - before, (int64_t)(4 * MIB), "after %lld, before %lld",
                      (long long)after, (long long)before);
    }
#else
    (void)before;
#endif
    cm_alloc_set_keep_bytes(0);
    cm_alloc_set_release(CM_ALLOC_KEEP);
}

/* Cold frees (cm_cold_add, cm_cold_free): the pages of freed buffers leave
 * the process at once, even while the allocator keeps freed pages (KEEP), and
 * the allocator hands the same memory out again intact, calloc'ed buffers
 * zero (its free list lives in the blocks' first words). */
Test(cm_alloc, cold_buffers_give_their_pages_back_at_once)
{
    enum { N = 4000, SZ = 16 * 1024 };
    cm_alloc_set_release(CM_ALLOC_KEEP);
    static unsigned char *bufs[N];
    static CmColdFree cold;
    int64_t before = cm_mem_rss();
    for (int i = 0; i < N; i++) {
        bufs[i] = cm_malloc(SZ);
        cr_assert_not_null(bufs[i]);
        memset(bufs[i], 7, SZ);
    }
    int64_t touched = cm_mem_rss();
    for (int i = 0; i < N; i++) {
        cm_cold_add(&cold, bufs[i]); /* frees a full batch of CM_COLD_MAX as it goes */
    }
    cm_cold_free(&cold);
    cr_assert_eq(cold.n, 0);
    int64_t after = cm_mem_rss();
#ifndef SLUICE_NO_MIMALLOC
    if (before > 0) {
        /* 62.5 MiB touched; of each 16 KiB buffer at least 3 pages of 4 go */
        cr_expect_geq(touched - before, (int64_t)(60 * MIB), "touched %lld, before %lld",
                      (long long)touched, (long long)before);
        cr_expect_geq(touched - after, (int64_t)(40 * MIB), "touched %lld, after %lld",
                      (long long)touched, (long long)after);
    }
#else
    (void)before;
    (void)touched;
    (void)after;
#endif
    unsigned char *big = cm_malloc(2 * MIB); /* a big buffer in a batch is simply freed */
    cr_assert_not_null(big);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            size_t sz = i % 3 == 0 ? 100 : SZ; /* small ones too: neighbours of other sizes */
            bufs[i] = round == 0 ? cm_malloc(sz) : cm_calloc(1, sz);
            cr_assert_not_null(bufs[i]);
            if (round == 1) {
                bool zero = true;
                for (size_t j = 0; j < sz; j++) {
                    zero = zero && bufs[i][j] == 0;
                }
                cr_assert(zero, "a calloc'ed buffer after cold frees is not zero");
            }
            fill(bufs[i], sz, (unsigned)i);
        }
        for (int i = 0; i < N; i++) {
            cr_assert(same(bufs[i], i % 3 == 0 ? 100 : SZ, (unsigned)i));
            cm_cold_add(&cold, bufs[i]);
        }
        if (round == 1) {
            cm_cold_add(&cold, big);
        }
        cm_cold_free(&cold);
    }
}
