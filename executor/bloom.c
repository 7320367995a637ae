/*
 * bloom.c - the runtime join filter (bloom.h).
 */
#include "executor/bloom.h"

#include "common/alloc.h"

#define BITS_PER_ROW 16
#define MIN_WORDS ((uint64_t)1 << 10) /* 8 KiB */
#define MAX_WORDS ((uint64_t)1 << 22) /* 32 MiB */
#define LIMIT_DIV 32

/* Spreads a key hash's bits: the shuffle takes the partition from its high
 * half and hash tables their slots from its low bits, so within a partition
 * both are alike; the product by an odd constant mixes every bit into the top
 * ones, which pick the word, and the bits below them pick the three bits. */
static inline uint64_t mix(uint64_t h)
{
    h ^= h >> 29;
    return h * 0x9E3779B97F4A7C15ull;
}

static inline uint64_t mask_of(uint64_t x)
{
    return ((uint64_t)1 << (x & 63)) | ((uint64_t)1 << ((x >> 6) & 63)) |
           ((uint64_t)1 << ((x >> 12) & 63));
}

bool ex_bloom_alloc(ExBloom *b)
{
    double want = b->want_rows * BITS_PER_ROW / 64;
    int64_t cap = cm_mem_limit() / LIMIT_DIV / 8;
    uint64_t n = MIN_WORDS;
    while (n < MAX_WORDS && (double)n < want && (int64_t)(n * 2) <= cap) {
        n *= 2;
    }
    atomic_store(&b->ready, false);
    atomic_store(&b->checked, 0);
    atomic_store(&b->dropped, 0);
    if (!cm_mem_grow(&b->res, (int64_t)(n * sizeof(uint64_t)))) {
        return false;
    }
    b->words = cm_calloc(n, sizeof(uint64_t));
    if (b->words == NULL) {
        cm_mem_res_fini(&b->res);
        return false;
    }
    b->n_words = n;
    b->shift = 64 - __builtin_ctzll(n); /* n is a power of two */
    return true;
}

void ex_bloom_free(ExBloom *b)
{
    if (b == NULL || b->words == NULL) {
        return; /* never allocated, or refused: nothing is held */
    }
    cm_free((void *)b->words);
    b->words = NULL;
    b->n_words = 0;
    cm_mem_res_fini(&b->res);
}

void ex_bloom_insert(ExBloom *b, const uint64_t *hashes, int n)
{
    for (int i = 0; i < n; i++) {
        uint64_t x = mix(hashes[i]), m = mask_of(x);
        _Atomic uint64_t *w = &b->words[x >> b->shift];
        /* a key met before (most are, on a build side with repeated keys)
         * costs a load, not a locked write */
        if ((atomic_load_explicit(w, memory_order_relaxed) & m) != m) {
            atomic_fetch_or_explicit(w, m, memory_order_relaxed);
        }
    }
}

int ex_bloom_probe(const ExBloom *b, const uint64_t *hashes, int n, bool *keep)
{
    enum { AHEAD = 8 };
    uint64_t xs[AHEAD];
    int kept = 0;
    /* the words are far apart in a filter past the caches: each is fetched
     * AHEAD rows before it is tested */
    for (int i = 0; i < n && i < AHEAD; i++) {
        xs[i] = mix(hashes[i]);
        __builtin_prefetch((const void *)&b->words[xs[i] >> b->shift]);
    }
    for (int i = 0; i < n; i++) {
        uint64_t x = xs[i % AHEAD];
        if (i + AHEAD < n) {
            uint64_t y = mix(hashes[i + AHEAD]);
            xs[i % AHEAD] = y;
            __builtin_prefetch((const void *)&b->words[y >> b->shift]);
        }
        uint64_t m = mask_of(x);
        keep[i] = (atomic_load_explicit(&b->words[x >> b->shift], memory_order_relaxed) & m) == m;
        kept += keep[i];
    }
    return kept;
}
