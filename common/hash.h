/*
 * hash.h - the hash functions of the engine: xxh3 for bytes, a 64-bit mixer
 * for fixed-width keys, and a combiner for multi-column keys.  Every hash
 * table and the hash partitioner use these, so a key hashes the same in the
 * partial aggregate, the exchange and the final aggregate.  Pure functions.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static inline uint64_t cm_hash_bytes(const void *p, size_t n)
{
    return XXH3_64bits(p, n);
}

/* A bijective 64-bit mixer (the finalizer of splitmix64). */
static inline uint64_t cm_hash_u64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static inline uint64_t cm_hash_combine(uint64_t h, uint64_t v)
{
    return cm_hash_u64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

/* The hash of a NULL key component. */
#define CM_HASH_NULL 0x5bd1e9955bd1e995ULL
