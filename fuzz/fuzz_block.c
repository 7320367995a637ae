/*
 * fuzz_block.c - libFuzzer target: the shuffle block decoder (shuffle/block.h),
 * sh_block_header_unpack, sh_block_decode_stored and, on the same payload read
 * as a record of the schema's first column, sh_block_decode_column_stored (a
 * saved chunk's column record), on arbitrary bytes.
 * The input format is in block_input.h.  The payload is copied into a buffer
 * of exactly its size, 8-aligned as the store's records are, so ASan sees any
 * read past it; a header claiming more stored bytes than the input holds is cut
 * to what is there, as the store reads only what a record holds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "common/alloc.h"
#include "common/err.h"
#include "common/vec.h"
#include "fuzz/block_input.h"
#include "shuffle/block.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t g_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 + SH_DISK_HDR_BYTES) {
        return 0;
    }
    CmType types[FZ_MAX_COLS];
    int n_cols = fz_block_schema(data[0], types);
    int flags = data[1];
    const unsigned char *rec = data + 2;
    ShBlockHeader h;
    bool ok = sh_block_header_unpack(rec, &h);
    if (!ok && !(flags & FZ_KEEP_CHECK)) {
        /* The same fields with a valid magic and check word. */
        memcpy(&h.codec, rec + 4, 4);
        memcpy(&h.map_id, rec + 8, 4);
        memcpy(&h.attempt, rec + 12, 4);
        memcpy(&h.seq, rec + 16, 8);
        memcpy(&h.raw_bytes, rec + 24, 8);
        memcpy(&h.stored_bytes, rec + 32, 8);
        memcpy(&h.checksum, rec + 40, 8);
        memcpy(&h.n_rows, rec + 48, 4);
        unsigned char packed[SH_DISK_HDR_BYTES];
        sh_block_header_pack(&h, packed);
        ok = sh_block_header_unpack(packed, &h);
    }
    if (!ok) {
        return 0;
    }
    if (h.raw_bytes > FZ_MAX_RAW) {
        return 0; /* the decoder allocates what a verified header says (see block_input.h) */
    }
    size_t n = size - 2 - SH_DISK_HDR_BYTES;
    if ((uint64_t)h.stored_bytes > n) {
        h.stored_bytes = (int64_t)n;
    }
    unsigned char *stored = malloc(h.stored_bytes > 0 ? (size_t)h.stored_bytes : 1);
    if (stored == NULL) {
        abort();
    }
    memcpy(stored, rec + SH_DISK_HDR_BYTES, (size_t)h.stored_bytes);
    if (!(flags & FZ_KEEP_SUM)) {
        h.checksum = XXH64(stored, (size_t)h.stored_bytes, 0);
    }
    CmErr err;
    cm_err_init(&err);
    CmBatch out;
    ShDecoder dec;
    sh_decoder_init(&dec);
    if (cm_batch_init(&out, n_cols, types, &err) != CM_OK) {
        abort();
    }
    if (sh_block_decode_stored(&h, stored, &out, &dec, &err) == CM_OK) {
        /* Touch every decoded value, so a string pointing outside its copy is seen. */
        uint64_t sum = 0;
        for (int c = 0; c < n_cols; c++) {
            for (int i = 0; i < out.n_rows; i++) {
                if (cm_vec_is_null(&out.cols[c], (uint32_t)i)) {
                    continue;
                }
                CmValue v;
                cm_vec_get_value(&out.cols[c], (uint32_t)i, &v);
                if (types[c].id == CM_T_VARCHAR) {
                    const char *p = cm_str_data(&v.s);
                    for (uint32_t k = 0; k < v.s.len; k++) {
                        sum += (unsigned char)p[k];
                    }
                } else {
                    sum += (uint64_t)v.i;
                }
            }
        }
        g_sink += sum;
        if (out.n_rows != h.n_rows) {
            abort(); /* a decoded block has the rows its header says */
        }
    }
    /* The payload as one column's record, decoded into a vector of its own. */
    CmVec v = {0};
    CmArena heap;
    cm_arena_init(&heap, 4096);
    cm_err_init(&err);
    if (cm_vec_init(&v, types[0], &err) != CM_OK) {
        abort();
    }
    if (sh_block_decode_column_stored(&h, stored, &v, &heap, &dec, &err) == CM_OK) {
        uint64_t sum = 0;
        for (int i = 0; i < h.n_rows; i++) {
            if (cm_vec_is_null(&v, (uint32_t)i)) {
                continue;
            }
            CmValue x;
            cm_vec_get_value(&v, (uint32_t)i, &x);
            if (types[0].id == CM_T_VARCHAR) {
                const char *p = cm_str_data(&x.s);
                for (uint32_t k = 0; k < x.s.len; k++) {
                    sum += (unsigned char)p[k];
                }
            } else {
                sum += (uint64_t)x.i;
            }
        }
        g_sink += sum;
    }
    cm_vec_fini(&v);
    cm_arena_fini(&heap);
    cm_batch_fini(&out);
    sh_decoder_fini(&dec);
    free(stored);
    return 0;
}
