/*
 * test_hash.c - unit tests for common/hash.h: the 64-bit mixer is a bijection
 * that spreads nearby keys, byte hashing depends on every byte and on the
 * length, and combining is order-sensitive.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

Test(cm_hash, mixer_has_no_collisions_on_consecutive_keys)
{
    enum { N = 100000 };
    uint64_t *h = malloc(sizeof(uint64_t) * N);
    cr_assert_not_null(h);
    for (uint64_t i = 0; i < N; i++) {
        h[i] = cm_hash_u64(i);
    }
    qsort(h, N, sizeof h[0], cmp_u64);
    for (int i = 1; i < N; i++) {
        cr_assert_neq(h[i], h[i - 1]);
    }
    free(h);
}

Test(cm_hash, mixer_spreads_low_bits)
{
    /* Consecutive keys must fill 16 buckets of the high bits roughly evenly
     * (the shuffle partitions on the high half of the hash). */
    int buckets[16] = {0};
    for (uint64_t i = 0; i < 16000; i++) {
        buckets[(cm_hash_u64(i) >> 32) % 16]++;
    }
    for (int b = 0; b < 16; b++) {
        cr_expect(buckets[b] > 800 && buckets[b] < 1200, "bucket %d has %d", b, buckets[b]);
    }
    cr_expect_eq(cm_hash_u64(0), 0, "splitmix64's finalizer maps 0 to 0");
    cr_expect_neq(cm_hash_u64(1), 1);
}

Test(cm_hash, bytes_depend_on_content_and_length)
{
    const char *a = "hello world";
    cr_expect_eq(cm_hash_bytes(a, 11), cm_hash_bytes("hello world", 11));
    cr_expect_neq(cm_hash_bytes(a, 11), cm_hash_bytes("hello worle", 11));
    cr_expect_neq(cm_hash_bytes(a, 11), cm_hash_bytes(a, 10));
    cr_expect_neq(cm_hash_bytes("", 0), cm_hash_bytes("\0", 1));
    /* Same bytes at different addresses hash the same. */
    char *copy = strdup(a);
    cr_expect_eq(cm_hash_bytes(copy, 11), cm_hash_bytes(a, 11));
    free(copy);
}

Test(cm_hash, combine_is_order_sensitive)
{
    uint64_t x = cm_hash_u64(1), y = cm_hash_u64(2);
    cr_expect_neq(cm_hash_combine(x, y), cm_hash_combine(y, x));
    cr_expect_neq(cm_hash_combine(x, y), cm_hash_combine(x, x));
    cr_expect_eq(cm_hash_combine(x, y), cm_hash_combine(x, y));
    cr_expect_neq(cm_hash_combine(x, CM_HASH_NULL), cm_hash_combine(CM_HASH_NULL, x));
}
