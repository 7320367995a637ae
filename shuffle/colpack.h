/*
 * colpack.h - light column encodings of block payloads that are kept: the
 * chunks of a directory database (storage/persist.c, sh_block_encode_packed).
 * Spill files and shuffle blocks are written plain (they live seconds; the
 * encoding's time would not pay), but every reader decodes all three.
 *
 * A column of a payload starts with an 8-byte flag word (shuffle/block.h):
 * byte 0 says whether a validity bitmap follows, byte 1 is the encoding
 * (SH_COL_*), byte 2 its bits per value.  After the bitmap:
 *
 * - SH_COL_PLAIN: the values as block.h describes.
 * - SH_COL_FOR (BOOLEAN and every integer-like type: INTEGER, DATE, BIGINT,
 *   TIME, TIMESTAMP, DECIMAL(p <= 18)): frame of reference.  An int64
 *   reference (the smallest valid value), then each row's value less the
 *   reference in `bits` bits, packed little-end first into 64-bit words
 *   (ceil(rows * bits / 64) of them).  0 bits is a constant column: no words.
 *   A NULL row is stored as the reference.
 * - SH_COL_DICT (VARCHAR): a dictionary of the distinct valid strings, in
 *   first-seen order: u32 count, u32 0, count u32 lengths, their bytes
 *   (padded to 8), then each row's code (its string's place) packed in
 *   `bits` bits as above.  A NULL row has code 0.
 *
 * An encoding is chosen per column and chunk, and only when it is smaller
 * than the plain form; it never makes a payload larger than
 * sh_block_encoded_bytes says.  Decoding checks every count and code against
 * the payload's end and the dictionary: a damaged payload is an error, never
 * a read out of bounds.  Pure functions: thread-safe.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/err.h"
#include "common/vec.h"

enum { SH_COL_PLAIN = 0, SH_COL_FOR = 1, SH_COL_DICT = 2 };

/* Writes column c of b (its n_rows active rows) at `out`, just after the
 * column's flag word and bitmap, in a light encoding when one is smaller
 * than `plain_bytes` (the plain form's bytes after the bitmap), and sets
 * flag[1] and flag[2].  Returns the end of what it wrote, or NULL when no
 * encoding pays (nothing is written: the caller writes the plain form). */
unsigned char *sh_colpack_encode(const CmBatch *b, int c, size_t plain_bytes, unsigned char *flag,
                                 unsigned char *out);

/* Decodes n rows of encoding `enc` with `bits` bits a value from in (not past
 * end) into v (its validity already set) and heap; returns the end of what it
 * read, or NULL when the payload is malformed (err set on OOM only). */
const unsigned char *sh_colpack_decode(int enc, int bits, const unsigned char *in,
                                       const unsigned char *end, int n, CmVec *v, CmArena *heap,
                                       CmErr *err);
