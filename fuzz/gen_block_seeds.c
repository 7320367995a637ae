/*
 * gen_block_seeds.c - writes seed inputs for fuzz_block into a directory:
 * blocks the encoder really makes (every schema of block_input.h; 0, 1, 3, 70
 * and CM_BATCH_CAP rows; with and without NULLs; short and long strings),
 * each as an uncompressed record and, where zstd pays, a compressed one.
 *   gen_block_seeds DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/err.h"
#include "common/vec.h"
#include "fuzz/block_input.h"
#include "shuffle/block.h"

static void fill(CmBatch *b, int n_rows, bool nulls)
{
    static const char *const words[] = {
        "", "a", "abcd", "inline12", "a string past the inline size", "\xc3\xa9t\xc3\xa9"};
    cm_batch_reset(b);
    for (int c = 0; c < b->n_cols; c++) {
        CmVec *v = &b->cols[c];
        for (int i = 0; i < n_rows; i++) {
            CmValue val = {.type = v->type};
            if (v->type.id == CM_T_VARCHAR) {
                const char *w = words[(i + c) % 6];
                val.s = cm_str_make(w, (uint32_t)strlen(w));
            } else if (v->type.id == CM_T_DOUBLE) {
                val.d = i * 0.25 - 3;
            } else if (v->type.id == CM_T_BOOL) {
                val.i = i & 1;
            } else {
                val.i = (int64_t)i * 7919 - 100;
            }
            cm_vec_set_value(v, (uint32_t)i, &val);
            if (nulls && (i + c) % 3 == 0) {
                cm_vec_set_null(v, (uint32_t)i);
            }
        }
    }
    b->n_rows = n_rows;
}

static void write_seed(const char *dir, int schema, const char *tag, const ShBlock *blk,
                       ShCompressor *cctx)
{
    size_t cap = SH_DISK_HDR_BYTES + SH_ALIGN8(sh_compress_bound((size_t)blk->hdr.raw_bytes) + 8) + 8;
    unsigned char *rec = cm_malloc(cap);
    if (rec == NULL) {
        exit(1);
    }
    int64_t n = sh_block_lay_record(blk, cctx, rec);
    char path[512];
    snprintf(path, sizeof path, "%s/block-s%d-%s%s", dir, schema, tag, cctx == NULL                                       ? ""
             : sh_compressor_codec(cctx) == SH_BLOCK_CODEC_ZSTD ? "-zstd"
                                                                : "-lz4");
    FILE *f = fopen(path, "wb");
    unsigned char pre[2] = {(unsigned char)schema, FZ_KEEP_CHECK | FZ_KEEP_SUM};
    if (f == NULL || fwrite(pre, 1, 2, f) != 2 || fwrite(rec, 1, (size_t)n, f) != (size_t)n ||
        fclose(f) != 0) {
        fprintf(stderr, "gen_block_seeds: cannot write %s\n", path);
        exit(1);
    }
    cm_free(rec);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_block_seeds DIR\n");
        return 2;
    }
    static const int row_counts[] = {0, 1, 3, 70, CM_BATCH_CAP};
    ShCompressor *zstd = sh_compressor_new(SH_BLOCK_CODEC_ZSTD);
    ShCompressor *lz4 = sh_compressor_new(SH_BLOCK_CODEC_LZ4);
    if (zstd == NULL || lz4 == NULL) {
        return 1;
    }
    for (int s = 0; s < FZ_N_SCHEMAS; s++) {
        CmType types[FZ_MAX_COLS];
        int n_cols = fz_block_schema(s, types);
        CmErr err;
        cm_err_init(&err);
        CmBatch b;
        if (cm_batch_init(&b, n_cols, types, &err) != CM_OK) {
            return 1;
        }
        for (size_t r = 0; r < sizeof row_counts / sizeof row_counts[0]; r++) {
            for (int nulls = 0; nulls < 2; nulls++) {
                int rows = row_counts[r] < CM_BATCH_CAP ? row_counts[r] : CM_BATCH_CAP;
                fill(&b, rows, nulls);
                ShBlock *blk = sh_block_encode(&b, &err);
                if (blk == NULL) {
                    return 1;
                }
                char tag[32];
                snprintf(tag, sizeof tag, "r%d%s", rows, nulls ? "-nulls" : "");
                if (rows <= 70) {
                    write_seed(argv[1], s, tag, blk, NULL); /* big raw blocks: compressed only */
                }
                write_seed(argv[1], s, tag, blk, zstd);
                write_seed(argv[1], s, tag, blk, lz4);
                cm_free(blk);
            }
        }
        cm_batch_fini(&b);
    }
    sh_compressor_free(zstd);
    sh_compressor_free(lz4);
    return 0;
}
