/*
 * block.h - the block format of the shuffle store; spill files and the block
 * store (storage/blocks.h) write the same records.
 *
 * Payload layout, per column in order: a flag byte (1 = has a validity
 * bitmap), the bitmap (ceil(rows/64) words) when flagged, then the values:
 * fixed-width types as a packed array; strings as a uint32 length array
 * followed by all bytes concatenated.  Rows are compacted (the selection is
 * applied while encoding).  Each column is padded to 8 bytes.  The checksum is
 * xxh64 of the payload as stored (after compression when codec is zstd).
 *
 * On disk a block is a record: a 56-byte packed header (its own check word
 * covers every header field, so a damaged header is told from a damaged
 * payload) followed by the stored payload, padded to 8 bytes so that every
 * record, and every uncompressed payload, starts 8-aligned in its file.
 * Records use the host's byte order: the files never leave the machine.
 * All functions are pure or use only the caller's objects: thread-safe.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/vec.h"

/* Codecs of a stored payload (ShBlockHeader.codec); keep in sync with shuffle.h. */
enum { SH_BLOCK_CODEC_NONE = 0, SH_BLOCK_CODEC_ZSTD = 1 };

/* Bytes of a packed on-disk header. */
#define SH_DISK_HDR_BYTES 56

/* Rounds n up to a multiple of 8. */
#define SH_ALIGN8(n) (((n) + 7) & ~(int64_t)7)

typedef struct ShBlockHeader {
    int32_t map_id;       /* map task that pushed the block */
    int32_t attempt;      /* attempt of that map task */
    int64_t seq;          /* per-writer sequence number */
    int32_t n_rows;       /* rows in the block, <= CM_BATCH_CAP */
    int32_t codec;        /* SH_BLOCK_CODEC_* of the stored payload */
    int64_t raw_bytes;    /* payload bytes before compression */
    int64_t stored_bytes; /* payload bytes as stored */
    uint64_t checksum;    /* xxh64 of the stored payload */
} ShBlockHeader;

typedef struct ShBlock {
    ShBlockHeader hdr;       /* describes payload */
    struct ShBlock *next;    /* in its partition's buffer; written only while this is the tail */
    unsigned char payload[]; /* stored_bytes bytes, 8-aligned */
} ShBlock;

/* Decompression state of one reader: a zstd context (created on first use) and
 * a growing buffer for decompressed payloads.  Owned by one thread. */
typedef struct ShDecoder {
    void *dctx;         /* ZSTD_DCtx, or NULL until a compressed block is seen */
    unsigned char *buf; /* decompressed payload; owned, 8-aligned */
    size_t cap;         /* bytes of buf */
} ShDecoder;

/* Encodes the active rows of b into a new uncompressed block (owned; cm_free). */
ShBlock *sh_block_encode(const CmBatch *b, CmErr *err);
/* Decodes a block into out (reset first; strings copied into out->heap).
 * CM_IO when the checksum fails or the payload is malformed. */
CmStatus sh_block_decode(const ShBlock *blk, CmBatch *out, CmErr *err);

/* True when `stored` (h->stored_bytes bytes) matches h->checksum. */
bool sh_block_verify(const ShBlockHeader *h, const unsigned char *stored);
/* Verifies, decompresses (through dec) and decodes a stored payload into out. */
CmStatus sh_block_decode_stored(const ShBlockHeader *h, const unsigned char *stored, CmBatch *out,
                                ShDecoder *dec, CmErr *err);
void sh_decoder_init(ShDecoder *dec);
void sh_decoder_fini(ShDecoder *dec);

/* Lays out the on-disk record of an uncompressed block at rec, which has room
 * for the header and the padded larger of the payload and its zstd bound:
 * compressed (with cctx at `level`) when cctx is not NULL and it pays.
 * Returns the record's bytes. */
int64_t sh_block_lay_record(const ShBlock *b, void *cctx, int level, unsigned char *rec);
/* Bytes of the on-disk record of a block with header h (header + padded payload). */
int64_t sh_block_record_bytes(const ShBlockHeader *h);
/* Packs h into out, with its check word. */
void sh_block_header_pack(const ShBlockHeader *h, unsigned char out[SH_DISK_HDR_BYTES]);
/* Unpacks a header; false when its magic, check word or fields are wrong. */
bool sh_block_header_unpack(const unsigned char *in, ShBlockHeader *h);

/* zstd compression contexts (heap through cm_malloc).  A context is used by
 * one thread at a time. */
void *sh_zstd_cctx_new(void);
void sh_zstd_cctx_free(void *cctx);
/* Worst-case compressed size of n bytes. */
size_t sh_zstd_bound(size_t n);
/* Payloads under this many bytes are never compressed. */
#define SH_MIN_COMPRESS_BYTES 128
/* Compresses src[0..n) into dst (cap >= sh_zstd_bound(n)); returns the
 * compressed size, or 0 when n is under SH_MIN_COMPRESS_BYTES or compression
 * failed or did not make it smaller. */
size_t sh_zstd_compress(void *cctx, int level, void *dst, size_t cap, const void *src, size_t n);
/* A compressed copy of an uncompressed block (owned), or NULL when compression
 * does not pay (the caller keeps blk) or memory is short (err is then set). */
ShBlock *sh_block_compress(const ShBlock *blk, void *cctx, int level, CmErr *err);
