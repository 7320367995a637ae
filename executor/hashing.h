/*
 * hashing.h - hashing of key columns, shared by every operator that groups or
 * partitions rows (hash aggregate, shuffle write, joins), so that one key has
 * one hash everywhere.  Internal to executor/.
 */
#pragma once

#include <stdint.h>

#include "common/vec.h"

/* For every active row i of `b`: hashes[i] = hash of the key columns `keys`
 * (n_keys of them; hashes[i] = fixed seed when n_keys is 0).  Equal values of
 * the same type hash equally; NULL hashes to a fixed value; -0.0 as 0.0. */
void ex_hash_keys(const CmBatch *b, int n_keys, const int *keys, uint64_t *hashes);

/* True when key `k` of active row i of a equals that of row j of b (NULL
 * equals NULL: grouping semantics). */
int ex_key_equal(const CmVec *a, uint32_t pa, const CmVec *b, uint32_t pb);
