/*
 * test_bloom.c - unit tests for executor/bloom.c: every inserted hash passes
 * (no false negatives), other hashes pass at about the rate 16 bits a key
 * allows, the size follows the estimate within its bounds, an empty filter
 * passes nothing, and a refused reservation leaves no filter.
 */
#include <criterion/criterion.h>

#include "common/alloc.h"
#include "common/hash.h"
#include "executor/bloom.h"

static uint64_t key_hash(uint64_t i)
{
    return cm_hash_u64(i); /* what ex_hash_keys gives a BIGINT key */
}

static void init(ExBloom *b, double rows)
{
    memset(b, 0, sizeof *b);
    cm_mem_res_init(&b->res, CM_MEM_EXECUTION, "bloom filter", NULL);
    b->want_rows = rows;
}

Test(bloom, no_false_negatives_and_few_false_positives)
{
    enum { N = 100000, BATCH = 1000 };
    ExBloom b;
    init(&b, N);
    cr_assert(ex_bloom_alloc(&b));
    cr_assert_geq(b.n_words * 64, (uint64_t)N * 16, "16 bits a key");
    uint64_t h[BATCH];
    bool keep[BATCH];
    for (int at = 0; at < N; at += BATCH) {
        for (int i = 0; i < BATCH; i++) {
            h[i] = key_hash((uint64_t)(at + i) * 2); /* the even keys */
        }
        ex_bloom_insert(&b, h, BATCH);
    }
    int64_t passed_even = 0, passed_odd = 0;
    for (int at = 0; at < N; at += BATCH) {
        for (int i = 0; i < BATCH; i++) {
            h[i] = key_hash((uint64_t)(at + i) * 2);
        }
        passed_even += ex_bloom_probe(&b, h, BATCH, keep);
        for (int i = 0; i < BATCH; i++) {
            cr_assert(keep[i], "inserted key %d dropped", (at + i) * 2);
            h[i] = key_hash((uint64_t)(at + i) * 2 + 1);
        }
        passed_odd += ex_bloom_probe(&b, h, BATCH, keep);
    }
    cr_assert_eq(passed_even, N);
    /* three bits of one word at 16 bits a key: about 1% */
    cr_assert_lt(passed_odd, N / 50, "false positives: %lld of %d", (long long)passed_odd, N);
    ex_bloom_free(&b);
    cr_assert_null(b.words);
    cr_assert_eq(b.res.held, 0);
}

Test(bloom, empty_filter_passes_nothing)
{
    ExBloom b;
    init(&b, 10);
    cr_assert(ex_bloom_alloc(&b));
    cr_assert_eq(b.n_words, 1024, "the smallest filter: 8 KiB");
    uint64_t h[64];
    bool keep[64];
    for (int i = 0; i < 64; i++) {
        h[i] = key_hash((uint64_t)i);
    }
    cr_assert_eq(ex_bloom_probe(&b, h, 64, keep), 0);
    ex_bloom_free(&b);
}

Test(bloom, size_is_bounded)
{
    ExBloom b;
    init(&b, 1e12);
    cr_assert(ex_bloom_alloc(&b));
    cr_assert_leq(b.n_words, (uint64_t)1 << 22, "at most 32 MiB");
    cr_assert_leq((int64_t)(b.n_words * 8), cm_mem_limit() / 32 + 8192);
    cr_assert_eq(b.res.held, (int64_t)(b.n_words * 8), "its bytes are reserved");
    ex_bloom_free(&b);
    ex_bloom_free(&b); /* twice is harmless */
}

Test(bloom, refused_reservation_leaves_no_filter)
{
    int64_t limit = cm_mem_limit();
    cm_mem_set_limit(4096); /* less than the smallest filter */
    ExBloom b;
    init(&b, 1000);
    bool got = ex_bloom_alloc(&b);
    cm_mem_set_limit(limit);
    cr_assert_not(got);
    cr_assert_null(b.words);
    cr_assert_eq(b.res.held, 0);
    ex_bloom_free(&b);
}
