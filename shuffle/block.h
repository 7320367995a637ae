/*
 * block.h - the block format of the shuffle store; spill files and the block
 * store (storage/blocks.h) write the same records.
 *
 * Payload layout, per column in order: an 8-byte flag word (byte 0: 1 = has
 * a validity bitmap; byte 1: the encoding, byte 2 its bits a value, both 0
 * for the plain form: shuffle/colpack.h), the bitmap (ceil(rows/64) words)
 * when flagged, then the values; in the plain form fixed-width types as a
 * packed array, strings as a uint32 length array followed by all bytes
 * concatenated.  Rows are compacted (the selection is
 * applied while encoding).  Each column is padded to 8 bytes.  The checksum is
 * xxh64 of the payload as stored (after compression, when the codec is lz4
 * or zstd).
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
enum { SH_BLOCK_CODEC_NONE = 0, SH_BLOCK_CODEC_ZSTD = 1, SH_BLOCK_CODEC_LZ4 = 2 };

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

typedef struct ShCompressor ShCompressor;

typedef struct ShBlock {
    ShBlockHeader hdr;       /* describes payload */
    struct ShBlock *next;    /* in its partition's buffer; written only while this is the tail */
    int64_t cap;             /* bytes of its allocation, this header included */
    unsigned char payload[]; /* stored_bytes bytes, 8-aligned */
} ShBlock;

/* Decompression state of one reader: a zstd context (created on first zstd
 * block) and a growing buffer for decompressed payloads.  Owned by one thread. */
typedef struct ShDecoder {
    void *dctx;         /* ZSTD_DCtx, or NULL until a compressed block is seen */
    unsigned char *buf; /* decompressed payload; owned, 8-aligned */
    size_t cap;         /* bytes of buf */
} ShDecoder;

/* Encodes the active rows of b into a new uncompressed block (owned; cm_free). */
ShBlock *sh_block_encode(const CmBatch *b, CmErr *err);
/* The same with each column in the light encoding of colpack.h that makes it
 * smallest (frame of reference, dictionary, or plain): for blocks that are
 * kept (a directory database's chunks).  Never more bytes than
 * sh_block_encode's; every decoder reads both. */
ShBlock *sh_block_encode_packed(const CmBatch *b, CmErr *err);
/* The bytes of the allocation sh_block_encode makes for b; and the encoding
 * of b, whose allocation is `bytes` (sh_block_encoded_bytes), into blk, an
 * allocation of at least that many (blk->cap), or into a new one when blk is
 * NULL (NULL with err on OOM). */
size_t sh_block_encoded_bytes(const CmBatch *b);
ShBlock *sh_block_encode_in(const CmBatch *b, size_t bytes, ShBlock *blk, CmErr *err);
/* The same into a buffer of *bytes bytes from this thread's stash (alloc.h),
 * to be given back with cm_stash_give(blk, *bytes): for a block laid out at
 * once and dropped (a spill file's), whose fresh pages were faulted in again
 * for every batch.  NULL with err. */
ShBlock *sh_block_encode_stashed(const CmBatch *b, size_t *bytes, CmErr *err);
/* Decodes a block into out (reset first; strings copied into out->heap).
 * CM_IO when the checksum fails or the payload is malformed. */
CmStatus sh_block_decode(const ShBlock *blk, CmBatch *out, CmErr *err);

/* True when `stored` (h->stored_bytes bytes) matches h->checksum. */
bool sh_block_verify(const ShBlockHeader *h, const unsigned char *stored);
/* Verifies, decompresses (through dec) and decodes a stored payload into out. */
CmStatus sh_block_decode_stored(const ShBlockHeader *h, const unsigned char *stored, CmBatch *out,
                                ShDecoder *dec, CmErr *err);
/* Decodes a stored payload of exactly one column (a block encoded from a
 * batch of one column: a saved chunk's column record, storage/blocks.h) into
 * v, whose buffer holds CM_BATCH_CAP values of its type, copying its strings
 * into heap.  Nothing else is touched, so other columns of the batch v
 * belongs to may be read meanwhile.  CM_IO as sh_block_decode_stored. */
CmStatus sh_block_decode_column_stored(const ShBlockHeader *h, const unsigned char *stored,
                                       CmVec *v, CmArena *heap, ShDecoder *dec, CmErr *err);
void sh_decoder_init(ShDecoder *dec);
void sh_decoder_fini(ShDecoder *dec);

/* Lays out the on-disk record of an uncompressed block at rec, which has room
 * for the header and the padded larger of the payload and
 * sh_compress_bound(payload): compressed by c when c is not NULL and it pays.
 * Returns the record's bytes. */
int64_t sh_block_lay_record(const ShBlock *b, ShCompressor *c, unsigned char *rec);
/* Bytes of the on-disk record of a block with header h (header + padded payload). */
int64_t sh_block_record_bytes(const ShBlockHeader *h);
/* Packs h into out, with its check word. */
void sh_block_header_pack(const ShBlockHeader *h, unsigned char out[SH_DISK_HDR_BYTES]);
/* Unpacks a header; false when its magic, check word or fields are wrong. */
bool sh_block_header_unpack(const unsigned char *in, ShBlockHeader *h);

/* What a compressor may be asked for besides a stored codec: LZ4 when it pays
 * (below).  Never stored in a header. */
enum { SH_COMPRESS_AUTO = 3 };

/* A compressor for one codec: SH_BLOCK_CODEC_LZ4 (~2x zstd's speed to
 * compress and ~3x to decompress, for about 60% of its ratio on shuffle
 * payloads), SH_BLOCK_CODEC_ZSTD (level 1: smaller files) or SH_COMPRESS_AUTO.
 * Its memory comes from cm_malloc; one thread at a time uses it.  NULL on
 * OOM.
 *
 * AUTO compresses with LZ4 only while it saves time: the process keeps the
 * measured cost of writing a byte (sh_pwrite_all) and of compressing and
 * decompressing one (with the ratio got), and a block is compressed when the
 * codec's cost is under the time its saved bytes would take to write and read
 * back (with a 25% bias towards compressing: smaller temp files are worth a
 * little).  Into the page cache a write costs a fraction of LZ4's time, so
 * blocks go as they are; to a busy or slow disk they are compressed.  One
 * block in 16 is compressed whatever the estimate, so that the codec's cost
 * stays measured; DuckDB's temp files choose the same way (its PR #14465). */
ShCompressor *sh_compressor_new(int codec);
void sh_compressor_free(ShCompressor *c);
int sh_compressor_codec(const ShCompressor *c);
/* Worst-case compressed size of n bytes, for either codec. */
size_t sh_compress_bound(size_t n);
/* Payloads under this many bytes are never compressed. */
#define SH_MIN_COMPRESS_BYTES 128
/* Compresses src[0..n) into dst (cap >= sh_compress_bound(n)); returns the
 * compressed size, or 0 when n is under SH_MIN_COMPRESS_BYTES or compression
 * failed or did not make it smaller. */
size_t sh_compress(ShCompressor *c, void *dst, size_t cap, const void *src, size_t n);
/* A compressed copy of an uncompressed block (owned), or NULL when compression
 * does not pay (the caller keeps blk) or memory is short (err is then set). */
ShBlock *sh_block_compress(const ShBlock *blk, ShCompressor *c, CmErr *err);

/* The codec of spill files and of the block store's disk tier
 * (SH_BLOCK_CODEC_* or SH_COMPRESS_AUTO; NONE: stored as encoded).  One for
 * the process: each statement applies its session's shuffle_compression
 * (planner/session.c), as it does memory_limit.  AUTO until set. */
void sh_disk_codec_set(int codec);
int sh_disk_codec(void);

/* pwrite of exactly n bytes (retried on EINTR; false on an error).  The time
 * it takes feeds SH_COMPRESS_AUTO's estimate of a written byte's cost. */
bool sh_pwrite_all(int fd, const void *buf, size_t n, int64_t off);
/* Adds a write of bytes that took ns to SH_COMPRESS_AUTO's estimate: for a
 * writer that does not go through sh_pwrite_all, and for tests, which need a
 * cost that does not depend on the machine's load. */
void sh_auto_note_write(int64_t bytes, int64_t ns);
/* pread of exactly n bytes (retried on EINTR); false on an error, with errno
 * set, or on a short file, with errno 0. */
bool sh_pread_all(int fd, void *buf, size_t n, int64_t off);
