/*
 * block.c - column serialization of batches into shuffle blocks, the packed
 * on-disk record header, and lz4 or zstd compression of payloads.
 * Encoding does two passes: size, then write, so each block is one allocation.
 * Decoding checks every length against the payload's end, so even a payload
 * that passed its checksum by accident cannot make it read out of bounds.
 * A LIST column is its rows' element counts and null flags, then each row's
 * list block (elements and bitmap, as in memory, padded to 8 bytes), then the
 * bytes of the long VARCHAR elements; decoding copies the blocks into the
 * batch's heap and points the lists (and long elements) at the copy.
 */
#include "shuffle/block.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <lz4.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_customMem: contexts allocate through cm_malloc */
#include <zstd.h>

#include "common/alloc.h"
#include "common/hash.h"
#include "common/thread.h"
#include "shuffle/colpack.h"

/* ---- LIST columns ------------------------------------------------------------- */

static const CmList *list_at(const CmBatch *b, const CmVec *v, int i)
{
    uint32_t p = v->kind == CM_VEC_CONST ? 0 : cm_batch_pos(b, i);
    static const CmList empty = {0};
    return cm_vec_is_null(v, p) ? &empty : &((const CmList *)v->data)[p];
}

static size_t list_block(const CmList *l, size_t w)
{
    return (cm_list_bytes(l->len, w, l->has_nulls) + 7) & ~(size_t)7;
}

static size_t list_column_size(const CmBatch *b, const CmVec *v)
{
    CmType elem = cm_type_elem(v->type);
    size_t w = cm_type_width(elem);
    size_t size = (size_t)b->n_rows * 8;
    for (int i = 0; i < b->n_rows; i++) {
        const CmList *l = list_at(b, v, i);
        size += list_block(l, w);
        for (uint32_t k = 0; elem.id == CM_T_VARCHAR && k < l->len; k++) {
            uint32_t len = ((const CmStr *)l->data)[k].len;
            if (!cm_list_is_null(l, w, k) && len > CM_STR_INLINE) {
                size += len;
            }
        }
    }
    return size;
}

static unsigned char *encode_list_column(const CmBatch *b, const CmVec *v, unsigned char *out)
{
    CmType elem = cm_type_elem(v->type);
    size_t w = cm_type_width(elem);
    int n = b->n_rows;
    uint32_t *lens = (uint32_t *)out;
    uint32_t *flags = lens + n;
    out += (size_t)n * 8;
    for (int i = 0; i < n; i++) {
        const CmList *l = list_at(b, v, i);
        lens[i] = l->len;
        flags[i] = l->has_nulls;
        size_t bytes = list_block(l, w);
        if (l->len > 0) {
            memcpy(out, l->data, cm_list_bytes(l->len, w, l->has_nulls));
        }
        memset(out + cm_list_bytes(l->len, w, l->has_nulls), 0,
               bytes - cm_list_bytes(l->len, w, l->has_nulls));
        for (uint32_t k = 0; elem.id == CM_T_VARCHAR && k < l->len; k++) {
            CmStr *s = (CmStr *)out + k;
            if (cm_list_is_null(l, w, k)) {
                *s = cm_str_make(NULL, 0);
            } else if (s->len > CM_STR_INLINE) {
                s->ptr = NULL; /* the bytes follow the blocks; no address on disk */
            }
        }
        out += bytes;
    }
    for (int i = 0; elem.id == CM_T_VARCHAR && i < n; i++) {
        const CmList *l = list_at(b, v, i);
        for (uint32_t k = 0; k < l->len; k++) {
            const CmStr *s = &((const CmStr *)l->data)[k];
            if (!cm_list_is_null(l, w, k) && s->len > CM_STR_INLINE) {
                memcpy(out, s->ptr, s->len);
                out += s->len;
            }
        }
    }
    return out;
}

/* Points the decoded VARCHAR elements of the lists at their bytes [*at, end);
 * false when they run past end. */
static bool fix_list_strings(CmList *lists, int n, size_t w, const char **at, const char *end)
{
    for (int i = 0; i < n; i++) {
        CmStr *s = (CmStr *)lists[i].data;
        for (uint32_t k = 0; k < lists[i].len; k++) {
            if (cm_list_is_null(&lists[i], w, k)) {
                s[k] = cm_str_make(NULL, 0);
            } else if (s[k].len > CM_STR_INLINE) {
                if ((size_t)(end - *at) < s[k].len) {
                    return false;
                }
                s[k] = cm_str_make(*at, s[k].len);
                *at += s[k].len;
            }
        }
    }
    return true;
}

static const unsigned char *decode_list_column(const unsigned char *in, const unsigned char *end,
                                               int n, CmVec *v, CmArena *heap, CmErr *err)
{
    CmType elem = cm_type_elem(v->type);
    size_t w = cm_type_width(elem);
    if ((size_t)(end - in) < (size_t)n * 8) {
        return NULL;
    }
    const uint32_t *lens = (const uint32_t *)in;
    const uint32_t *flags = lens + n;
    in += (size_t)n * 8;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        CmList l = {.len = lens[i], .has_nulls = flags[i] != 0};
        total += list_block(&l, w);
        if (flags[i] > 1 || total > (size_t)(end - in)) {
            return NULL;
        }
    }
    /* The long elements' bytes, counted from the blocks' lengths. */
    size_t rest = 0;
    const unsigned char *blk = in;
    for (int i = 0; elem.id == CM_T_VARCHAR && i < n; i++) {
        CmList l = {.len = lens[i], .has_nulls = flags[i], .data = blk};
        for (uint32_t k = 0; k < l.len; k++) {
            uint32_t len = ((const CmStr *)blk)[k].len;
            rest += !cm_list_is_null(&l, w, k) && len > CM_STR_INLINE ? len : 0;
        }
        blk += list_block(&l, w);
    }
    if (rest > (size_t)(end - in) - total) {
        return NULL;
    }
    char *copy = total + rest ? cm_arena_alloc(heap, total + rest) : NULL;
    if (total + rest && copy == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory decoding a shuffle block");
        return NULL;
    }
    if (total + rest) {
        memcpy(copy, in, total + rest);
    }
    CmList *out = v->data;
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        out[i] =
            (CmList){.len = lens[i], .has_nulls = flags[i], .data = lens[i] ? copy + at : NULL};
        at += list_block(&out[i], w);
    }
    if (elem.id == CM_T_VARCHAR) {
        const char *bytes = copy + total;
        if (!fix_list_strings(out, n, w, &bytes, copy + total + rest)) {
            return NULL;
        }
    }
    return in + total + rest;
}

static size_t column_size(const CmBatch *b, int c)
{
    const CmVec *v = &b->cols[c];
    size_t n = (size_t)b->n_rows;
    size_t size = 8; /* the flag, padded so the arrays after it stay aligned */
    if (v->validity != NULL) {
        size += ((n + 63) / 64) * 8;
    }
    if (v->type.id == CM_T_LIST) {
        size += list_column_size(b, v);
    } else if (v->type.id == CM_T_VARCHAR) {
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

/* Writes column c; `packed`: in a light encoding (colpack.h) when one is smaller. */
static unsigned char *encode_column(const CmBatch *b, int c, bool packed, unsigned char *out)
{
    const CmVec *v = &b->cols[c];
    int n = b->n_rows;
    unsigned char *flag = out;
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
    if (packed) {
        size_t plain = column_size(b, c) - (size_t)(out - flag);
        unsigned char *end = sh_colpack_encode(b, c, plain, flag, out);
        if (end != NULL) {
            return end;
        }
    }
    if (v->type.id == CM_T_LIST) {
        return encode_list_column(b, v, out);
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

static size_t encoded_size(const CmBatch *b)
{
    size_t size = 0;
    for (int c = 0; c < b->n_cols; c++) {
        size += (column_size(b, c) + 7) & ~(size_t)7;
    }
    return size;
}

static ShBlock *encode_into(const CmBatch *b, ShBlock *blk, size_t size, bool packed);

ShBlock *sh_block_encode(const CmBatch *b, CmErr *err)
{
    return sh_block_encode_in(b, sh_block_encoded_bytes(b), NULL, err);
}

ShBlock *sh_block_encode_packed(const CmBatch *b, CmErr *err)
{
    size_t bytes = sh_block_encoded_bytes(b);
    ShBlock *blk = cm_malloc(bytes);
    if (blk == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory encoding a block");
        return NULL;
    }
    blk->cap = (int64_t)bytes;
    return encode_into(b, blk, bytes - sizeof(ShBlock), true);
}

size_t sh_block_encoded_bytes(const CmBatch *b)
{
    return sizeof(ShBlock) + encoded_size(b);
}

ShBlock *sh_block_encode_in(const CmBatch *b, size_t bytes, ShBlock *blk, CmErr *err)
{
    if (blk == NULL) {
        if ((blk = cm_malloc(bytes)) == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory encoding a shuffle block");
            return NULL;
        }
        blk->cap = (int64_t)bytes;
    }
    CM_ASSERT((size_t)blk->cap >= bytes);
    return encode_into(b, blk, bytes - sizeof(ShBlock), false);
}

ShBlock *sh_block_encode_stashed(const CmBatch *b, size_t *bytes, CmErr *err)
{
    size_t size = encoded_size(b);
    size_t n = sizeof(ShBlock) + size;
    if (n <= CM_STASH_MAX_BYTES) {
        n = (size_t)1 << (64 - __builtin_clzll(n - 1)); /* a power of two, to be taken again */
    }
    ShBlock *blk = n <= CM_STASH_MAX_BYTES ? cm_stash_take(n) : cm_malloc(n);
    if (blk == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory encoding a shuffle block");
        return NULL;
    }
    *bytes = n;
    blk->cap = (int64_t)n;
    return encode_into(b, blk, size, false);
}

/* Encodes b into blk's payload, which has room for `size` bytes (the plain
 * form's); the packed form may use fewer. */
static ShBlock *encode_into(const CmBatch *b, ShBlock *blk, size_t size, bool packed)
{
    memset(&blk->hdr, 0, sizeof blk->hdr);
    blk->next = NULL;
    blk->hdr.codec = SH_BLOCK_CODEC_NONE;
    unsigned char *p = blk->payload;
    for (int c = 0; c < b->n_cols; c++) {
        unsigned char *end = encode_column(b, c, packed, p);
        size_t used = (size_t)(end - p);
        size_t padded = (used + 7) & ~(size_t)7;
        memset(end, 0, padded - used);
        p += padded;
    }
    CM_ASSERT((size_t)(p - blk->payload) <= size);
    size = (size_t)(p - blk->payload);
    blk->hdr.n_rows = b->n_rows;
    blk->hdr.raw_bytes = (int64_t)size;
    blk->hdr.stored_bytes = (int64_t)size;
    blk->hdr.checksum = XXH64(blk->payload, size, 0);
    return blk;
}

/* ---- decoding ---------------------------------------------------------------- */

static CmStatus malformed(CmErr *err, const ShBlockHeader *h)
{
    return cm_err_set(err, CM_IO, -1, "shuffle block of map %d is malformed", h->map_id);
}

/* Decodes one column of n rows from in (not past end) into v; NULL on error. */
static const unsigned char *decode_column(const unsigned char *in, const unsigned char *end, int n,
                                          CmVec *v, CmArena *heap, CmErr *err)
{
    const unsigned char *start = in;
    if (end - in < 8) {
        return NULL;
    }
    bool has_bits = in[0] != 0;
    int enc = in[1], bits = in[2];
    in += 8;
    v->validity = NULL;
    if (has_bits) {
        size_t words = ((size_t)n + 63) / 64;
        if ((size_t)(end - in) < words * 8) {
            return NULL;
        }
        memcpy(v->validity_buf, in, words * 8);
        v->validity = v->validity_buf;
        in += words * 8;
    }
    if (enc != SH_COL_PLAIN) {
        if ((in = sh_colpack_decode(enc, bits, in, end, n, v, heap, err)) == NULL) {
            return NULL;
        }
    } else if (v->type.id == CM_T_LIST) {
        if ((in = decode_list_column(in, end, n, v, heap, err)) == NULL) {
            return NULL;
        }
    } else if (v->type.id == CM_T_VARCHAR) {
        if ((size_t)(end - in) < (size_t)n * 4) {
            return NULL;
        }
        const uint32_t *lens = (const uint32_t *)in;
        const unsigned char *bytes = in + (size_t)n * 4;
        size_t total = 0;
        for (int i = 0; i < n; i++) {
            total += lens[i];
        }
        if ((size_t)(end - bytes) < total) {
            return NULL;
        }
        char *copy = total ? cm_arena_alloc(heap, total) : NULL;
        if (total && copy == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory decoding a shuffle block");
            return NULL;
        }
        if (total) {
            memcpy(copy, bytes, total);
        }
        /* All strings empty: no copy, and NULL + 0 is undefined in C. */
        const char *base = copy != NULL ? copy : "";
        CmStr *out = v->data;
        size_t at = 0;
        for (int i = 0; i < n; i++) {
            out[i] = cm_str_make(base + at, lens[i]);
            at += lens[i];
        }
        in = bytes + total;
    } else {
        size_t w = cm_type_width(v->type);
        if ((size_t)(end - in) < w * (size_t)n) {
            return NULL;
        }
        memcpy(v->data, in, w * (size_t)n);
        in += w * (size_t)n;
    }
    size_t used = (size_t)(in - start);
    size_t padded = (used + 7) & ~(size_t)7;
    return (size_t)(end - start) < padded ? end : start + padded;
}

/* Decodes an uncompressed payload of h->raw_bytes bytes. */
static CmStatus decode_raw(const ShBlockHeader *h, const unsigned char *p, CmBatch *out, CmErr *err)
{
    if (h->n_rows < 0 || h->n_rows > CM_BATCH_CAP) {
        return malformed(err, h);
    }
    const unsigned char *end = p + h->raw_bytes;
    for (int c = 0; c < out->n_cols; c++) {
        p = decode_column(p, end, h->n_rows, &out->cols[c], &out->heap, err);
        if (p == NULL) {
            cm_batch_reset(out);
            return err->code != CM_OK ? err->code : malformed(err, h);
        }
    }
    out->n_rows = h->n_rows;
    return CM_OK;
}

bool sh_block_verify(const ShBlockHeader *h, const unsigned char *stored)
{
    return XXH64(stored, (size_t)h->stored_bytes, 0) == h->checksum;
}

struct ShCompressor {
    int codec;   /* SH_BLOCK_CODEC_LZ4, SH_BLOCK_CODEC_ZSTD or SH_COMPRESS_AUTO */
    void *state; /* LZ4's state (LZ4_sizeofState bytes) or a ZSTD_CCtx */
};

/* The codec a block compressed by c is stored with. */
static int stored_codec(const ShCompressor *c)
{
    return c->codec == SH_BLOCK_CODEC_ZSTD ? SH_BLOCK_CODEC_ZSTD : SH_BLOCK_CODEC_LZ4;
}

/* ---- what SH_COMPRESS_AUTO measures (block.h) ------------------------------------ */

/* Process-wide sums, halved when they grow large so that they follow the
 * machine's present state (a page cache that fills, a disk that gets busy).
 * Races between updates lose a sample at worst: they are estimates. */
typedef struct AutoStats {
    atomic_llong write_ns, write_bytes;       /* sh_pwrite_all */
    atomic_llong comp_ns, comp_raw, comp_out; /* LZ4 under AUTO */
    atomic_llong decomp_ns, decomp_raw;       /* LZ4 blocks read */
    atomic_ullong tick;                       /* blocks AUTO was asked about */
} AutoStats;

static AutoStats g_auto;

#define AUTO_DECAY_BYTES ((long long)1 << 30)

static void note(atomic_llong *ns_sum, atomic_llong *bytes_sum, long long bytes, long long ns)
{
    atomic_fetch_add_explicit(ns_sum, ns, memory_order_relaxed);
    if (atomic_fetch_add_explicit(bytes_sum, bytes, memory_order_relaxed) + bytes >
        AUTO_DECAY_BYTES) {
        atomic_store(bytes_sum, atomic_load(bytes_sum) / 2);
        atomic_store(ns_sum, atomic_load(ns_sum) / 2);
    }
}

static void note_compress(long long raw, long long out, long long ns)
{
    atomic_fetch_add_explicit(&g_auto.comp_out, out, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_auto.comp_ns, ns, memory_order_relaxed);
    if (atomic_fetch_add_explicit(&g_auto.comp_raw, raw, memory_order_relaxed) + raw >
        AUTO_DECAY_BYTES) {
        atomic_store(&g_auto.comp_raw, atomic_load(&g_auto.comp_raw) / 2);
        atomic_store(&g_auto.comp_out, atomic_load(&g_auto.comp_out) / 2);
        atomic_store(&g_auto.comp_ns, atomic_load(&g_auto.comp_ns) / 2);
    }
}

static void note_decompress(long long raw, long long ns)
{
    note(&g_auto.decomp_ns, &g_auto.decomp_raw, raw, ns);
}

/* Nanoseconds per byte of a sum, or -1 with under 1 MB of evidence. */
static double per_byte(atomic_llong *ns_sum, atomic_llong *bytes_sum)
{
    long long bytes = atomic_load_explicit(bytes_sum, memory_order_relaxed);
    long long ns = atomic_load_explicit(ns_sum, memory_order_relaxed);
    return bytes < ((long long)1 << 20) ? -1.0 : (double)ns / (double)bytes;
}

/* Whether AUTO compresses the next block (block.h). */
static bool auto_pays(void)
{
    if (atomic_fetch_add_explicit(&g_auto.tick, 1, memory_order_relaxed) % 16 == 0) {
        return true;
    }
    double w = per_byte(&g_auto.write_ns, &g_auto.write_bytes);
    double c = per_byte(&g_auto.comp_ns, &g_auto.comp_raw);
    double d = per_byte(&g_auto.decomp_ns, &g_auto.decomp_raw);
    long long out = atomic_load_explicit(&g_auto.comp_out, memory_order_relaxed);
    if (w < 0 || c < 0 || out <= 0) {
        return true; /* nothing measured yet: compress, and measure */
    }
    double kept = (double)out / (double)atomic_load(&g_auto.comp_raw); /* stored / raw */
    /* Per raw byte: writing and reading back the bytes saved (a read costs
     * about a write: both copy through the page cache) against the codec. */
    return c + (d > 0 ? d : c / 4) <= 1.25 * 2.0 * w * (1.0 - kept);
}

bool sh_pwrite_all(int fd, const void *buf, size_t n, int64_t off)
{
    const char *p = buf;
    long long t0 = cm_now_ns();
    long long total = (long long)n;
    while (n > 0) {
        ssize_t r = pwrite(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return false;
        }
        p += r;
        n -= (size_t)r;
        off += r;
    }
    sh_auto_note_write(total, cm_now_ns() - t0);
    return true;
}

void sh_auto_note_write(int64_t bytes, int64_t ns)
{
    note(&g_auto.write_ns, &g_auto.write_bytes, bytes, ns);
}

bool sh_pread_all(int fd, void *buf, size_t n, int64_t off)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            errno = r == 0 ? 0 : errno;
            return false;
        }
        p += r;
        n -= (size_t)r;
        off += r;
    }
    return true;
}

static void *zstd_alloc(void *opaque, size_t n)
{
    return cm_malloc(n);
}

static void zstd_free(void *opaque, void *p)
{
    cm_free(p);
}

static const ZSTD_customMem ZSTD_MEM = {zstd_alloc, zstd_free, NULL};

void sh_decoder_init(ShDecoder *dec)
{
    memset(dec, 0, sizeof *dec);
}

void sh_decoder_fini(ShDecoder *dec)
{
    ZSTD_freeDCtx(dec->dctx);
    cm_free(dec->buf);
    memset(dec, 0, sizeof *dec);
}

/* The payload of a stored block, checked and decompressed (into dec's
 * buffer when compressed); NULL with err. */
static const unsigned char *raw_payload(const ShBlockHeader *h, const unsigned char *stored,
                                        ShDecoder *dec, CmErr *err)
{
    if (!sh_block_verify(h, stored)) {
        cm_err_set(err, CM_IO, -1, "shuffle block of map %d failed its checksum", h->map_id);
        return NULL;
    }
    if (h->codec == SH_BLOCK_CODEC_NONE) {
        if (h->raw_bytes != h->stored_bytes) {
            malformed(err, h);
            return NULL;
        }
        return stored;
    }
    /* The writer compresses only non-empty payloads (sh_block_lay_record). */
    if ((h->codec != SH_BLOCK_CODEC_ZSTD && h->codec != SH_BLOCK_CODEC_LZ4) || h->raw_bytes <= 0 ||
        h->raw_bytes > INT32_MAX || h->stored_bytes > INT32_MAX) {
        malformed(err, h);
        return NULL;
    }
    if (h->codec == SH_BLOCK_CODEC_ZSTD && dec->dctx == NULL &&
        (dec->dctx = ZSTD_createDCtx_advanced(ZSTD_MEM)) == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory decompressing a shuffle block");
        return NULL;
    }
    if (dec->cap < (size_t)h->raw_bytes) {
        size_t cap = dec->cap ? dec->cap : 64 * 1024;
        while (cap < (size_t)h->raw_bytes) {
            cap *= 2;
        }
        unsigned char *buf = cm_malloc(cap);
        if (buf == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory decompressing a shuffle block");
            return NULL;
        }
        cm_free(dec->buf);
        dec->buf = buf;
        dec->cap = cap;
    }
    if (h->codec == SH_BLOCK_CODEC_LZ4) {
        long long t0 = cm_now_ns();
        int n = LZ4_decompress_safe((const char *)stored, (char *)dec->buf, (int)h->stored_bytes,
                                    (int)h->raw_bytes);
        if (n != (int)h->raw_bytes) {
            malformed(err, h);
            return NULL;
        }
        note_decompress(h->raw_bytes, cm_now_ns() - t0);
    } else {
        size_t n = ZSTD_decompressDCtx(dec->dctx, dec->buf, (size_t)h->raw_bytes, stored,
                                       (size_t)h->stored_bytes);
        if (ZSTD_isError(n) || n != (size_t)h->raw_bytes) {
            malformed(err, h);
            return NULL;
        }
    }
    return dec->buf;
}

CmStatus sh_block_decode_stored(const ShBlockHeader *h, const unsigned char *stored, CmBatch *out,
                                ShDecoder *dec, CmErr *err)
{
    cm_batch_reset(out);
    const unsigned char *raw = raw_payload(h, stored, dec, err);
    return raw != NULL ? decode_raw(h, raw, out, err) : err->code;
}

CmStatus sh_block_decode_column_stored(const ShBlockHeader *h, const unsigned char *stored,
                                       CmVec *v, CmArena *heap, ShDecoder *dec, CmErr *err)
{
    if (h->n_rows < 0 || h->n_rows > CM_BATCH_CAP) {
        return malformed(err, h);
    }
    const unsigned char *raw = raw_payload(h, stored, dec, err);
    if (raw == NULL) {
        return err->code;
    }
    const unsigned char *end = raw + h->raw_bytes;
    const unsigned char *p = decode_column(raw, end, h->n_rows, v, heap, err);
    if (p == NULL || p != end) {
        return err->code != CM_OK ? err->code : malformed(err, h);
    }
    return CM_OK;
}

CmStatus sh_block_decode(const ShBlock *blk, CmBatch *out, CmErr *err)
{
    if (blk->hdr.codec == SH_BLOCK_CODEC_NONE) {
        cm_batch_reset(out);
        if (!sh_block_verify(&blk->hdr, blk->payload)) {
            return cm_err_set(err, CM_IO, -1, "shuffle block of map %d failed its checksum",
                              blk->hdr.map_id);
        }
        return decode_raw(&blk->hdr, blk->payload, out, err);
    }
    ShDecoder dec;
    sh_decoder_init(&dec);
    CmStatus st = sh_block_decode_stored(&blk->hdr, blk->payload, out, &dec, err);
    sh_decoder_fini(&dec);
    return st;
}

/* ---- the on-disk record header ------------------------------------------------ */

#define HDR_MAGIC 0x31424853u /* "SHB1" */
#define HDR_SEED 0x5348u
#define MAX_PAYLOAD ((int64_t)1 << 40)

/* Packed layout: magic u32 @0, codec i32 @4, map i32 @8, attempt i32 @12,
 * seq i64 @16, raw i64 @24, stored i64 @32, checksum u64 @40, rows i32 @48,
 * check u32 @52 (low half of xxh64 over bytes [0, 52)). */
void sh_block_header_pack(const ShBlockHeader *h, unsigned char out[SH_DISK_HDR_BYTES])
{
    uint32_t magic = HDR_MAGIC;
    memcpy(out + 0, &magic, 4);
    memcpy(out + 4, &h->codec, 4);
    memcpy(out + 8, &h->map_id, 4);
    memcpy(out + 12, &h->attempt, 4);
    memcpy(out + 16, &h->seq, 8);
    memcpy(out + 24, &h->raw_bytes, 8);
    memcpy(out + 32, &h->stored_bytes, 8);
    memcpy(out + 40, &h->checksum, 8);
    memcpy(out + 48, &h->n_rows, 4);
    uint32_t check = (uint32_t)XXH64(out, 52, HDR_SEED);
    memcpy(out + 52, &check, 4);
}

bool sh_block_header_unpack(const unsigned char *in, ShBlockHeader *h)
{
    uint32_t magic, check;
    memcpy(&magic, in, 4);
    memcpy(&check, in + 52, 4);
    if (magic != HDR_MAGIC || check != (uint32_t)XXH64(in, 52, HDR_SEED)) {
        return false;
    }
    memcpy(&h->codec, in + 4, 4);
    memcpy(&h->map_id, in + 8, 4);
    memcpy(&h->attempt, in + 12, 4);
    memcpy(&h->seq, in + 16, 8);
    memcpy(&h->raw_bytes, in + 24, 8);
    memcpy(&h->stored_bytes, in + 32, 8);
    memcpy(&h->checksum, in + 40, 8);
    memcpy(&h->n_rows, in + 48, 4);
    return h->map_id >= 0 && h->attempt >= 0 && h->n_rows >= 0 && h->raw_bytes >= 0 &&
           h->raw_bytes <= MAX_PAYLOAD && h->stored_bytes >= 0 && h->stored_bytes <= MAX_PAYLOAD &&
           (h->codec == SH_BLOCK_CODEC_NONE || h->codec == SH_BLOCK_CODEC_ZSTD ||
            h->codec == SH_BLOCK_CODEC_LZ4);
}

int64_t sh_block_lay_record(const ShBlock *b, ShCompressor *c, unsigned char *rec)
{
    ShBlockHeader h = b->hdr;
    unsigned char *payload = rec + SH_DISK_HDR_BYTES;
    size_t size = 0;
    if (c != NULL && h.codec == SH_BLOCK_CODEC_NONE && h.raw_bytes > 0) {
        size = sh_compress(c, payload, sh_compress_bound((size_t)h.raw_bytes), b->payload,
                           (size_t)h.raw_bytes);
    }
    if (size > 0) {
        h.codec = stored_codec(c);
        h.stored_bytes = (int64_t)size;
        h.checksum = XXH64(payload, size, 0);
    } else {
        memcpy(payload, b->payload, (size_t)h.stored_bytes);
    }
    int64_t padded = SH_ALIGN8(h.stored_bytes);
    memset(payload + h.stored_bytes, 0, (size_t)(padded - h.stored_bytes));
    sh_block_header_pack(&h, rec);
    return SH_DISK_HDR_BYTES + padded;
}

int64_t sh_block_record_bytes(const ShBlockHeader *h)
{
    return SH_DISK_HDR_BYTES + SH_ALIGN8(h->stored_bytes);
}

/* ---- compression ------------------------------------------------------------------ */

static atomic_int g_disk_codec = SH_COMPRESS_AUTO;

void sh_disk_codec_set(int codec)
{
    atomic_store(&g_disk_codec, codec);
}

int sh_disk_codec(void)
{
    return atomic_load(&g_disk_codec);
}

ShCompressor *sh_compressor_new(int codec)
{
    CM_ASSERT(codec == SH_BLOCK_CODEC_LZ4 || codec == SH_BLOCK_CODEC_ZSTD ||
              codec == SH_COMPRESS_AUTO);
    ShCompressor *c = cm_malloc(sizeof *c);
    if (c == NULL) {
        return NULL;
    }
    c->codec = codec;
    c->state = codec != SH_BLOCK_CODEC_ZSTD ? cm_malloc((size_t)LZ4_sizeofState())
                                            : (void *)ZSTD_createCCtx_advanced(ZSTD_MEM);
    if (c->state == NULL) {
        cm_free(c);
        return NULL;
    }
    return c;
}

void sh_compressor_free(ShCompressor *c)
{
    if (c == NULL) {
        return;
    }
    if (c->codec == SH_BLOCK_CODEC_ZSTD) {
        ZSTD_freeCCtx(c->state);
    } else {
        cm_free(c->state);
    }
    cm_free(c);
}

int sh_compressor_codec(const ShCompressor *c)
{
    return c->codec;
}

size_t sh_compress_bound(size_t n)
{
    size_t z = ZSTD_compressBound(n);
    size_t l = n <= (size_t)LZ4_MAX_INPUT_SIZE ? (size_t)LZ4_compressBound((int)n) : 0;
    return z > l ? z : l;
}

size_t sh_compress(ShCompressor *c, void *dst, size_t cap, const void *src, size_t n)
{
    /* A tiny payload cannot win back a frame's header, and the call's setup
     * (microseconds for zstd) would dominate a flush of many small blocks. */
    if (n < SH_MIN_COMPRESS_BYTES) {
        return 0;
    }
    if (c->codec != SH_BLOCK_CODEC_ZSTD) {
        bool is_auto = c->codec == SH_COMPRESS_AUTO;
        if (n > (size_t)LZ4_MAX_INPUT_SIZE || (is_auto && !auto_pays())) {
            return 0;
        }
        int cap_i = cap > (size_t)INT32_MAX ? INT32_MAX : (int)cap;
        long long t0 = is_auto ? cm_now_ns() : 0;
        int r = LZ4_compress_fast_extState(c->state, src, dst, (int)n, cap_i, 1);
        if (is_auto) {
            note_compress((long long)n, r > 0 ? r : (long long)n, cm_now_ns() - t0);
        }
        return r <= 0 || (size_t)r >= n ? 0 : (size_t)r;
    }
    size_t r = ZSTD_compressCCtx(c->state, dst, cap, src, n, 1);
    return ZSTD_isError(r) || r >= n ? 0 : r;
}

ShBlock *sh_block_compress(const ShBlock *blk, ShCompressor *cc, CmErr *err)
{
    size_t n = (size_t)blk->hdr.raw_bytes;
    size_t bound = sh_compress_bound(n);
    ShBlock *c = cm_malloc(sizeof(ShBlock) + bound);
    if (c == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory compressing a shuffle block");
        return NULL;
    }
    size_t size = sh_compress(cc, c->payload, bound, blk->payload, n);
    if (size == 0) {
        cm_free(c);
        return NULL;
    }
    ShBlock *shrunk = cm_realloc(c, sizeof(ShBlock) + size);
    c = shrunk != NULL ? shrunk : c;
    c->cap = (int64_t)(sizeof(ShBlock) + (shrunk != NULL ? size : bound));
    c->hdr = blk->hdr;
    c->hdr.codec = stored_codec(cc);
    c->hdr.stored_bytes = (int64_t)size;
    c->hdr.checksum = XXH64(c->payload, size, 0);
    c->next = NULL;
    return c;
}
