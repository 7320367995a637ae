/*
 * block.c - column serialization of batches into shuffle blocks.
 * Encoding does two passes: size, then write, so each block is one allocation.
 */
#include "shuffle/block.h"

#include <string.h>

#include "common/alloc.h"
#include "common/hash.h"

static size_t column_size(const CmBatch *b, int c)
{
    const CmVec *v = &b->cols[c];
    size_t n = (size_t)b->n_rows;
    size_t size = 8; /* the flag, padded so the arrays after it stay aligned */
    if (v->validity != NULL) {
        size += ((n + 63) / 64) * 8;
    }
    if (v->type.id == CM_T_VARCHAR) {
        size += n * 4;
        for (int i = 0; i < b->n_rows; i++) {
            uint32_t p = v->kind == CM_VEC_CONST ? 0 : cm_batch_pos(b, i);
            if (!cm_vec_is_null(v, p)) {
                size += ((const CmStr *)v->data)[p].len;
            }
        }
    } else {
        size += n * cm_type_width(v->type);
    }
    return size;
}

static unsigned char *encode_column(const CmBatch *b, int c, unsigned char *out)
{
    const CmVec *v = &b->cols[c];
    int n = b->n_rows;
    memset(out, 0, 8);
    out[0] = v->validity != NULL;
    out += 8;
    if (v->validity != NULL) {
        size_t words = ((size_t)n + 63) / 64;
        uint64_t *bits = (uint64_t *)out;
        memset(bits, 0, words * 8);
        for (int i = 0; i < n; i++) {
            uint32_t p = v->kind == CM_VEC_CONST ? 0 : cm_batch_pos(b, i);
            if (!cm_vec_is_null(v, p)) {
                bits[i >> 6] |= (uint64_t)1 << (i & 63);
            }
        }
        out += words * 8;
    }
    if (v->type.id == CM_T_VARCHAR) {
        uint32_t *lens = (uint32_t *)out;
        unsigned char *bytes = out + (size_t)n * 4;
        for (int i = 0; i < n; i++) {
            uint32_t p = v->kind == CM_VEC_CONST ? 0 : cm_batch_pos(b, i);
            if (cm_vec_is_null(v, p)) {
                lens[i] = 0;
                continue;
            }
            const CmStr *s = &((const CmStr *)v->data)[p];
            lens[i] = s->len;
            memcpy(bytes, cm_str_data(s), s->len);
            bytes += s->len;
        }
        return bytes;
    }
    size_t w = cm_type_width(v->type);
    if (b->sel == NULL && v->kind == CM_VEC_FLAT) {
        memcpy(out, v->data, w * (size_t)n);
        return out + w * (size_t)n;
    }
    for (int i = 0; i < n; i++) {
        uint32_t p = v->kind == CM_VEC_CONST ? 0 : cm_batch_pos(b, i);
        memcpy(out, (const char *)v->data + w * p, w);
        out += w;
    }
    return out;
}

ShBlock *sh_block_encode(const CmBatch *b, CmErr *err)
{
    size_t size = 0;
    for (int c = 0; c < b->n_cols; c++) {
        size += (column_size(b, c) + 7) & ~(size_t)7;
    }
    ShBlock *blk = cm_malloc(sizeof(ShBlock) + size);
    if (blk == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory encoding a shuffle block");
        return NULL;
    }
    memset(&blk->hdr, 0, sizeof blk->hdr);
    blk->next = NULL;
    unsigned char *p = blk->payload;
    for (int c = 0; c < b->n_cols; c++) {
        unsigned char *end = encode_column(b, c, p);
        size_t used = (size_t)(end - p);
        size_t padded = (used + 7) & ~(size_t)7;
        memset(end, 0, padded - used);
        p += padded;
    }
    blk->hdr.n_rows = b->n_rows;
    blk->hdr.raw_bytes = (int64_t)size;
    blk->hdr.stored_bytes = (int64_t)size;
    blk->hdr.checksum = XXH64(blk->payload, size, 0);
    return blk;
}

static const unsigned char *decode_column(const unsigned char *in, int n, CmVec *v,
                                          CmArena *heap, CmErr *err)
{
    const unsigned char *start = in;
    bool has_bits = in[0] != 0;
    in += 8;
    v->validity = NULL;
    if (has_bits) {
        size_t words = ((size_t)n + 63) / 64;
        memcpy(v->validity_buf, in, words * 8);
        v->validity = v->validity_buf;
        in += words * 8;
    }
    if (v->type.id == CM_T_VARCHAR) {
        const uint32_t *lens = (const uint32_t *)in;
        const unsigned char *bytes = in + (size_t)n * 4;
        size_t total = 0;
        for (int i = 0; i < n; i++) {
            total += lens[i];
        }
        char *copy = total ? cm_arena_alloc(heap, total) : NULL;
        if (total && copy == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory decoding a shuffle block");
            return NULL;
        }
        if (total) {
            memcpy(copy, bytes, total);
        }
        CmStr *out = v->data;
        size_t at = 0;
        for (int i = 0; i < n; i++) {
            out[i] = cm_str_make(copy + at, lens[i]);
            at += lens[i];
        }
        in = bytes + total;
    } else {
        size_t w = cm_type_width(v->type);
        memcpy(v->data, in, w * (size_t)n);
        in += w * (size_t)n;
    }
    size_t used = (size_t)(in - start);
    return start + ((used + 7) & ~(size_t)7);
}

CmStatus sh_block_decode(const ShBlock *blk, CmBatch *out, CmErr *err)
{
    cm_batch_reset(out);
    if (XXH64(blk->payload, (size_t)blk->hdr.stored_bytes, 0) != blk->hdr.checksum) {
        return cm_err_set(err, CM_IO, -1, "shuffle block of map %d failed its checksum",
                          blk->hdr.map_id);
    }
    const unsigned char *p = blk->payload;
    for (int c = 0; c < out->n_cols; c++) {
        p = decode_column(p, blk->hdr.n_rows, &out->cols[c], &out->heap, err);
        if (p == NULL) {
            return err->code;
        }
    }
    out->n_rows = blk->hdr.n_rows;
    return CM_OK;
}
