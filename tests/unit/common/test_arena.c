/*
 * test_arena.c - unit tests for common/arena.c: 16-byte alignment, requests
 * larger than a chunk, reset and reuse, and the string helpers.  Every block
 * handed out is filled with a pattern and checked again later, so that two
 * blocks overlapping (or a chunk freed too early, under ASan) is caught.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/arena.h"

#ifndef SLUICE_NO_MIMALLOC
#include <mimalloc.h>
#define usable_size mi_usable_size
#else
#include <malloc.h>
#define usable_size malloc_usable_size
#endif

static CmArena arena;

static void setup(void)
{
    cm_arena_init(&arena, 4096);
}

static void teardown(void)
{
    cm_arena_fini(&arena);
}

TestSuite(cm_arena, .init = setup, .fini = teardown);

/* Fills p[0..n) with a pattern derived from `seed`. */
static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = (unsigned char)(seed * 31u + i * 7u);
    }
}

static bool check(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != (unsigned char)(seed * 31u + i * 7u)) {
            return false;
        }
    }
    return true;
}

Test(cm_arena, default_chunk_size_is_64k)
{
    CmArena a;
    cm_arena_init(&a, 0);
    cr_expect_eq(a.chunk_size, 64 * 1024);
    cr_expect_null(a.head);
    cr_expect_eq(a.n_bytes, 0);
    cm_arena_fini(&a);
}

Test(cm_arena, every_allocation_is_16_byte_aligned)
{
    /* Odd sizes on purpose, with chunk changes and big blocks mixed in. */
    static const size_t sizes[] = {1, 3, 7, 15, 16, 17, 31, 33, 100, 1023, 1025, 5000, 1, 2};
    for (int round = 0; round < 50; round++) {
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            void *p = cm_arena_alloc(&arena, sizes[i]);
            cr_assert_not_null(p);
            cr_assert_eq((uintptr_t)p % 16, 0, "size %zu gave %p", sizes[i], p);
        }
    }
}

Test(cm_arena, blocks_do_not_overlap_and_keep_their_contents)
{
    enum { N = 400 };
    unsigned char *blocks[N];
    size_t sizes[N];
    for (int i = 0; i < N; i++) {
        /* Mostly small, every 37th bigger than a quarter chunk (own chunk). */
        sizes[i] = i % 37 == 0 ? 3000 + (size_t)i : 1 + (size_t)(i * 13) % 200;
        blocks[i] = cm_arena_alloc(&arena, sizes[i]);
        cr_assert_not_null(blocks[i]);
        fill(blocks[i], sizes[i], (unsigned)i);
    }
    for (int i = 0; i < N; i++) {
        cr_assert(check(blocks[i], sizes[i], (unsigned)i), "block %d was overwritten", i);
    }
}

Test(cm_arena, n_bytes_counts_rounded_sizes)
{
    cm_arena_alloc(&arena, 1);
    cr_expect_eq(arena.n_bytes, 16);
    cm_arena_alloc(&arena, 16);
    cr_expect_eq(arena.n_bytes, 32);
    cm_arena_alloc(&arena, 17);
    cr_expect_eq(arena.n_bytes, 64);
}

Test(cm_arena, big_allocation_gets_its_own_chunk_and_head_keeps_filling)
{
    unsigned char *small1 = cm_arena_alloc(&arena, 32);
    cr_assert_not_null(small1);
    CmArenaChunk *head = arena.head;

    /* Far more than a chunk: must still succeed, and in one piece. */
    size_t big_n = 1 << 20;
    unsigned char *big = cm_arena_alloc(&arena, big_n);
    cr_assert_not_null(big);
    fill(big, big_n, 99);
    cr_expect_eq(arena.head, head, "a big block must not replace the chunk being filled");

    /* The next small block comes from the same chunk, right after small1. */
    unsigned char *small2 = cm_arena_alloc(&arena, 32);
    cr_expect_eq(small2, small1 + 32);
    cr_expect(check(big, big_n, 99));
}

Test(cm_arena, big_allocation_into_empty_arena)
{
    size_t n = 3 * 4096;
    unsigned char *p = cm_arena_alloc(&arena, n);
    cr_assert_not_null(p);
    fill(p, n, 5);
    unsigned char *q = cm_arena_alloc(&arena, 100);
    cr_assert_not_null(q);
    fill(q, 100, 6);
    cr_expect(check(p, n, 5));
    cr_expect(check(q, 100, 6));
}

Test(cm_arena, reset_empties_and_allocation_keeps_working)
{
    for (int round = 0; round < 20; round++) {
        unsigned char *ptrs[64];
        for (int i = 0; i < 64; i++) {
            size_t n = i % 10 == 0 ? 2048 : 100;
            ptrs[i] = cm_arena_alloc(&arena, n);
            cr_assert_not_null(ptrs[i]);
            fill(ptrs[i], n, (unsigned)(round * 64 + i));
        }
        for (int i = 0; i < 64; i++) {
            size_t n = i % 10 == 0 ? 2048 : 100;
            cr_assert(check(ptrs[i], n, (unsigned)(round * 64 + i)));
        }
        cm_arena_reset(&arena);
        cr_assert_eq(arena.n_bytes, 0);
    }
}

Test(cm_arena, reset_keeps_one_default_chunk)
{
    for (int i = 0; i < 100; i++) {
        cm_arena_alloc(&arena, 500); /* several 4 KiB chunks */
    }
    cm_arena_alloc(&arena, 100000); /* and a big one */
    cm_arena_reset(&arena);
    cr_assert_not_null(arena.head);
    /* The kept chunk is reused: the first block after reset starts a fresh
     * chunk's data, and a second small one follows it directly. */
    unsigned char *a = cm_arena_alloc(&arena, 16);
    unsigned char *b = cm_arena_alloc(&arena, 16);
    cr_expect_eq(b, a + 16);
}

Test(cm_arena, reset_of_empty_and_fini_twice_are_harmless)
{
    CmArena a;
    cm_arena_init(&a, 0);
    cm_arena_reset(&a);
    cr_expect_null(a.head);
    cr_expect_not_null(cm_arena_alloc(&a, 10));
    cm_arena_fini(&a);
    cm_arena_fini(&a);
    cr_expect_null(a.head);
}

Test(cm_arena, zalloc_zeroes_recycled_memory)
{
    unsigned char *p = cm_arena_alloc(&arena, 256);
    memset(p, 0xAB, 256);
    cm_arena_reset(&arena);
    unsigned char *z = cm_arena_zalloc(&arena, 256);
    cr_assert_not_null(z);
    for (int i = 0; i < 256; i++) {
        cr_assert_eq(z[i], 0, "byte %d not zeroed", i);
    }
}

Test(cm_arena, strdup_and_strndup_copy)
{
    char src[] = "hello, arena";
    char *d = cm_arena_strdup(&arena, src);
    cr_assert_not_null(d);
    cr_expect_neq(d, src);
    src[0] = 'X';
    cr_expect_str_eq(d, "hello, arena");

    char *n = cm_arena_strndup(&arena, "abcdef", 3);
    cr_expect_str_eq(n, "abc");
    char *e = cm_arena_strndup(&arena, "abc", 0);
    cr_expect_str_eq(e, "");
    char *empty = cm_arena_strdup(&arena, "");
    cr_expect_str_eq(empty, "");
}

Test(cm_arena, strndup_copies_embedded_bytes_and_terminates)
{
    const char bytes[5] = {'a', '\0', 'b', 'c', 'd'};
    char *d = cm_arena_strndup(&arena, bytes, 5);
    cr_assert_not_null(d);
    cr_expect_eq(memcmp(d, bytes, 5), 0);
    cr_expect_eq(d[5], '\0');
}

Test(cm_arena, printf_formats)
{
    char *s = cm_arena_printf(&arena, "%s-%d-%05.1f", "x", 42, 3.14159);
    cr_assert_not_null(s);
    cr_expect_str_eq(s, "x-42-003.1");
    char *empty = cm_arena_printf(&arena, "%s", "");
    cr_expect_str_eq(empty, "");
}

Test(cm_arena, printf_longer_than_a_chunk)
{
    char *long_text = cm_arena_printf(&arena, "%10000d|", 7);
    cr_assert_not_null(long_text);
    cr_expect_eq(strlen(long_text), 10001);
    cr_expect_eq(long_text[9999], '7');
    cr_expect_eq(long_text[10000], '|');
    cr_expect_eq(long_text[0], ' ');
}

/* Regression (was a bug): cm_arena_alloc rounds `n` up with (n + 15) & ~15 without an overflow
 * check, so a request within 15 bytes of SIZE_MAX wraps to 0 bytes and a
 * non-NULL pointer is returned instead of NULL ("NULL when the heap refuses").
 * A caller computing a size that overflows would then write past the block. */
Test(cm_arena, huge_request_is_refused)
{
    cr_expect_null(cm_arena_alloc(&arena, SIZE_MAX));
    cr_expect_null(cm_arena_alloc(&arena, SIZE_MAX - 8));
}

/* A chunk of the default size is one allocation of chunk_size bytes, its
 * header included: the allocator rounds a request up to its size class, so
 * 16 KiB plus a header would cost 20 KiB in mimalloc, memory that no one
 * counts (table blocks reserve their heap's n_bytes). */
Test(cm_arena, default_chunk_is_chunk_size_bytes)
{
    size_t sizes[] = {4096, 16384, 65536};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        CmArena a;
        cm_arena_init(&a, sizes[i]);
        cr_assert_not_null(cm_arena_alloc(&a, 16));
        cr_assert_leq(usable_size(a.head), sizes[i] + 16, "chunk of %zu: %zu usable", sizes[i],
                      usable_size(a.head));
        cm_arena_reset(&a);
        CmArenaChunk *kept = a.head;
        cr_assert_not_null(cm_arena_alloc(&a, 16));
        cr_assert_eq(a.head, kept, "reset keeps the default-size chunk");
        cm_arena_fini(&a);
    }
}

/* A reset keeps the default-size chunks it frees from the head (up to
 * CM_ARENA_SPARE_BYTES), and the next round of the same allocations lands in
 * them: an arena reset per batch does not give its memory back and take it
 * again.  The blocks of the second round are the first round's, in some order. */
Test(cm_arena, reset_keeps_spare_chunks_and_the_next_round_reuses_them)
{
    enum { N = 40 }; /* 40 x 1000 bytes: ten 4 KiB chunks */
    unsigned char *first[N];
    for (int i = 0; i < N; i++) {
        first[i] = cm_arena_alloc(&arena, 1000);
        fill(first[i], 1000, (unsigned)i);
    }
    cm_arena_reset(&arena);
    cr_expect_gt(arena.spare_bytes, 0);
    cr_expect_leq(arena.spare_bytes, CM_ARENA_SPARE_BYTES);
    int reused = 0;
    for (int i = 0; i < N; i++) {
        unsigned char *p = cm_arena_alloc(&arena, 1000);
        fill(p, 1000, (unsigned)(100 + i));
        for (int k = 0; k < N; k++) {
            reused += p == first[k];
        }
    }
    cr_expect_eq(reused, N, "every block of the second round is one of the first's");
    cr_expect_eq(arena.spare_bytes, 0, "the spares are in use again");
}

/* The spare list is bounded: a round of 4 MiB in 4 KiB chunks keeps at most
 * CM_ARENA_SPARE_BYTES of them (fini frees the rest, under ASan's eye). */
Test(cm_arena, spare_chunks_are_bounded)
{
    for (int i = 0; i < 4096; i++) {
        cm_arena_alloc(&arena, 1000);
    }
    cm_arena_reset(&arena);
    cr_expect_leq(arena.spare_bytes, CM_ARENA_SPARE_BYTES);
    cr_expect_gt(arena.spare_bytes, CM_ARENA_SPARE_BYTES / 2);
}

/* adopt gives an empty arena a caller's buffer as its chunk; disown takes
 * the only chunk back out, as the block store does with a block's heap. */
Test(cm_arena, adopt_then_disown_hands_a_buffer_round)
{
    CmArena a;
    cm_arena_init(&a, 4096);
    void *mem = cm_malloc(64 * 1024);
    cr_assert_not_null(mem);
    cm_arena_adopt(&a, mem, 64 * 1024);
    unsigned char *p = cm_arena_alloc(&a, 60000); /* fits the adopted chunk */
    cr_assert_not_null(p);
    cr_expect(p > (unsigned char *)mem && p < (unsigned char *)mem + 64 * 1024);
    fill(p, 60000, 7);
    cr_expect(check(p, 60000, 7));
    size_t bytes = 0;
    void *back = cm_arena_disown(&a, &bytes);
    cr_expect_eq(back, mem);
    cr_expect_eq(bytes, (size_t)64 * 1024);
    cr_expect_null(a.head);
    cr_expect_eq(a.n_bytes, 0);
    /* an arena of two chunks keeps them */
    cm_arena_alloc(&a, 3000);
    cm_arena_alloc(&a, 3000);
    cr_expect_null(cm_arena_disown(&a, &bytes));
    cm_arena_fini(&a);
    cm_free(back);
}
