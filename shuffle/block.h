/*
 * block.h - the block format of the shuffle store (internal to shuffle/).
 *
 * Payload layout, per column in order: a flag byte (1 = has a validity
 * bitmap), the bitmap (ceil(rows/64) words) when flagged, then the values:
 * fixed-width types as a packed array; strings as a uint32 length array
 * followed by all bytes concatenated.  Rows are compacted (the selection is
 * applied while encoding).  The checksum is xxh64 of the payload.
 */
#pragma once

#include <stdint.h>

#include "common/err.h"
#include "common/vec.h"

typedef struct ShBlockHeader {
    int32_t map_id;
    int32_t attempt;
    int64_t seq;          /* per-writer sequence number */
    int32_t n_rows;
    int32_t codec;        /* 0 = none */
    int64_t raw_bytes;    /* payload bytes before compression */
    int64_t stored_bytes; /* payload bytes as stored */
    uint64_t checksum;    /* xxh64 of the stored payload */
} ShBlockHeader;

typedef struct ShBlock {
    ShBlockHeader hdr;
    struct ShBlock *next; /* in its partition's list */
    unsigned char payload[];
} ShBlock;

/* Encodes the active rows of b into a new block (owned; cm_free). */
ShBlock *sh_block_encode(const CmBatch *b, CmErr *err);
/* Decodes a block into out (reset first; strings copied into out->heap). */
CmStatus sh_block_decode(const ShBlock *blk, CmBatch *out, CmErr *err);
