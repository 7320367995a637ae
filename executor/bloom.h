/*
 * bloom.h - runtime join filters: a Bloom filter over the key hashes of a
 * partitioned join's build side, which the probe side's shuffle writer asks
 * before it exchanges a row.
 *
 * A partitioned INNER or SEMI join drops every probe row without a partner,
 * but only after both sides were hashed, written to the shuffle store and read
 * back.  Stages run one at a time in plan order and the build side's stage
 * comes first, so its writer can note the hash of every key it writes
 * (ex_hash_keys: the hash it partitions by, computed anyway) and the probe
 * side's writer, running later, drops the rows whose hash the filter has
 * never seen before it stages them.  No false negatives: a dropped row cannot
 * match.  False positives only cost what the filter would have saved.
 *
 * The filter is blocked: each hash sets three bits of one 64-bit word, so a
 * probe is one memory access.  It is sized from the planner's estimate of the
 * build rows (16 bits a row, a power of two of words, within [8 KiB, 32 MiB]
 * and a 32nd of memory_limit) and its bytes are reserved as execution memory;
 * when the reservation is refused there is no filter, which is only a missed
 * chance.  Every build task sets bits with atomic ORs.
 *
 * The filter is usable once `ready`: set by the build writer's finalize, after
 * every task of its stage has inserted.  A probe writer that finds it not ready
 * (the build stage did not run: its partitioned form was kept by an earlier
 * statement) exchanges every row, as without a filter.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/mem.h"

typedef struct ExBloom {
    _Atomic uint64_t *words; /* n_words (a power of two); NULL: no filter */
    uint64_t n_words;
    int shift;        /* 64 - log2(n_words): a mixed hash's top bits pick the word */
    double want_rows; /* the planner's estimate of the build rows, for sizing */
    int from_stage;   /* the build side's stage id, for EXPLAIN */
    atomic_bool ready;
    CmMemRes res; /* the words */
    /* what the probe side's writers did, for EXPLAIN ANALYZE */
    atomic_llong checked, dropped;
} ExBloom;

/* Allocates the words for about b->want_rows keys, reserving their bytes
 * through `res` (initialised by the caller as a consumer of the build writer);
 * false leaves b without a filter.  Clears ready and the counters. */
bool ex_bloom_alloc(ExBloom *b);
/* Frees the words and their reservation; b stays without a filter. */
void ex_bloom_free(ExBloom *b);
/* Sets the bits of hashes[0..n). */
void ex_bloom_insert(ExBloom *b, const uint64_t *hashes, int n);
/* keep[i] = whether hashes[i] may be in the filter, for i in [0, n); returns
 * how many may. */
int ex_bloom_probe(const ExBloom *b, const uint64_t *hashes, int n, bool *keep);
