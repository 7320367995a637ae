/*
 * block_input.h - the input format of fuzz_block, shared with the seed
 * generator (gen_block_seeds.c).
 *
 * An input is: one byte choosing the batch schema (mod FZ_N_SCHEMAS), one flag
 * byte, a 56-byte on-disk record header (shuffle/block.h) and the stored
 * payload.  Flags: FZ_KEEP_CHECK leaves the header's check word as given (else
 * the target packs the header's fields again, so that damaged fields get past
 * the check word), FZ_KEEP_SUM leaves the payload checksum as given (else the
 * target sets it to the payload's xxh64: a random payload never passes a
 * checksum, and decoding must be safe even when one passes by accident).
 * A header whose raw size passes FZ_MAX_RAW is skipped: for a compressed
 * payload the decoder allocates the raw size its verified header states (up to
 * the 1 TiB unpack accepts), as a real block of CM_BATCH_CAP long strings may
 * need, and libFuzzer would report that allocation rather than a bug.
 */
#pragma once

#include "common/types.h"

enum { FZ_KEEP_CHECK = 1, FZ_KEEP_SUM = 2 };

#define FZ_N_SCHEMAS 4
#define FZ_MAX_COLS 6
#define FZ_MAX_RAW ((int64_t)64 << 20)

static inline int fz_block_schema(int which, CmType *types)
{
    switch (which % FZ_N_SCHEMAS) {
    case 0:
        types[0] = cm_type_make(CM_T_INT32);
        return 1;
    case 1:
        types[0] = cm_type_make(CM_T_INT64);
        types[1] = cm_type_varchar(-1, false);
        return 2;
    case 2:
        types[0] = cm_type_varchar(-1, false);
        types[1] = cm_type_varchar(-1, false);
        types[2] = cm_type_make(CM_T_BOOL);
        return 3;
    default:
        types[0] = cm_type_make(CM_T_DOUBLE);
        types[1] = cm_type_decimal(12, 2);
        types[2] = cm_type_make(CM_T_DATE);
        types[3] = cm_type_make(CM_T_TIME);
        types[4] = cm_type_make(CM_T_INT32);
        types[5] = cm_type_varchar(-1, false);
        return 6;
    }
}
