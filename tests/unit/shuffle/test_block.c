/*
 * test_block.c - unit tests for shuffle/block.c (internal block format):
 * encode/decode round trips of every type with a selection vector, NULLs,
 * constant vectors and long strings; the header fields; and checksum
 * verification (a flipped payload byte makes decoding fail with CM_IO); the
 * LZ4 and zstd codecs, and AUTO's choice between LZ4 and none.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/hash.h"
#include "shuffle/block.h"

enum { N_COLS = 7 };

static CmErr err;
static CmType types[N_COLS];
static CmBatch in, out;
static char texts[CM_BATCH_CAP][48];

static void setup(void)
{
    cm_err_init(&err);
    types[0] = cm_type_make(CM_T_BOOL);
    types[1] = cm_type_make(CM_T_INT32);
    types[2] = cm_type_make(CM_T_INT64);
    types[3] = cm_type_make(CM_T_DOUBLE);
    types[4] = cm_type_decimal(12, 2);
    types[5] = cm_type_varchar(-1, false);
    types[6] = cm_type_make(CM_T_DATE);
    cr_assert_eq(cm_batch_init(&in, N_COLS, types, &err), CM_OK);
    cr_assert_eq(cm_batch_init(&out, N_COLS, types, &err), CM_OK);
}

static void teardown(void)
{
    cm_batch_fini(&in);
    cm_batch_fini(&out);
}

TestSuite(sh_block, .init = setup, .fini = teardown);

/* Physical row i: column c is NULL when (i + c) % 4 == 1; values from i. */
static bool is_null_at(int i, int c)
{
    return (i + c) % 4 == 1;
}

static int text_len(int i)
{
    return (i * 7) % 40; /* 0..39: inline and out-of-line */
}

static void fill_input(int n)
{
    for (int i = 0; i < n; i++) {
        ((uint8_t *)in.cols[0].data)[i] = (uint8_t)(i % 2);
        ((int32_t *)in.cols[1].data)[i] = -1000 * i - 7;
        ((int64_t *)in.cols[2].data)[i] = (int64_t)i * 1000000007LL;
        ((double *)in.cols[3].data)[i] = i * 0.25 - 3;
        ((int64_t *)in.cols[4].data)[i] = 12345 + i;
        int len = text_len(i);
        for (int k = 0; k < len; k++) {
            texts[i][k] = (char)('A' + (i * 3 + k) % 26);
        }
        ((CmStr *)in.cols[5].data)[i] = cm_str_make(texts[i], (uint32_t)len);
        ((int32_t *)in.cols[6].data)[i] = 18000 + i;
        for (int c = 0; c < N_COLS; c++) {
            if (is_null_at(i, c)) {
                cm_vec_set_null(&in.cols[c], (uint32_t)i);
            }
        }
    }
    in.n_rows = n;
}

/* Checks decoded row `row` of `out` against physical input row i (whose
 * source text may have been destroyed since: compare with regenerated text). */
static void check_row(int row, int i)
{
    for (int c = 0; c < N_COLS; c++) {
        cr_assert_eq(cm_vec_is_null(&out.cols[c], (uint32_t)row), is_null_at(i, c), "row %d col %d",
                     row, c);
    }
    if (!is_null_at(i, 0)) {
        cr_assert_eq(((uint8_t *)out.cols[0].data)[row], i % 2);
    }
    if (!is_null_at(i, 1)) {
        cr_assert_eq(((int32_t *)out.cols[1].data)[row], -1000 * i - 7);
    }
    if (!is_null_at(i, 2)) {
        cr_assert_eq(((int64_t *)out.cols[2].data)[row], (int64_t)i * 1000000007LL);
    }
    if (!is_null_at(i, 3)) {
        cr_assert_eq(((double *)out.cols[3].data)[row], i * 0.25 - 3);
    }
    if (!is_null_at(i, 4)) {
        cr_assert_eq(((int64_t *)out.cols[4].data)[row], 12345 + i);
    }
    if (!is_null_at(i, 5)) {
        const CmStr *s = &((CmStr *)out.cols[5].data)[row];
        cr_assert_eq(s->len, (uint32_t)text_len(i), "row %d", row);
        for (uint32_t k = 0; k < s->len; k++) {
            cr_assert_eq(cm_str_data(s)[k], (char)('A' + (i * 3 + (int)k) % 26));
        }
    }
    if (!is_null_at(i, 6)) {
        cr_assert_eq(((int32_t *)out.cols[6].data)[row], 18000 + i);
    }
}

Test(sh_block, round_trip_all_types_with_nulls)
{
    int n = CM_BATCH_CAP;
    fill_input(n);
    ShBlock *blk = sh_block_encode(&in, &err);
    cr_assert_not_null(blk, "%s", err.msg);
    cr_expect_eq(blk->hdr.n_rows, n);
    cr_expect_eq(blk->hdr.codec, 0);
    cr_expect_eq(blk->hdr.raw_bytes, blk->hdr.stored_bytes);
    cr_expect_eq(blk->hdr.checksum, XXH64(blk->payload, (size_t)blk->hdr.stored_bytes, 0));
    cr_expect_null(blk->next);
    cr_assert_eq(sh_block_decode(blk, &out, &err), CM_OK, "%s", err.msg);
    cr_assert_eq(out.n_rows, n);
    cr_expect_null(out.sel);
    memset(texts, '?', sizeof texts); /* decoded strings must be copies */
    for (int i = 0; i < n; i++) {
        check_row(i, i);
    }
    cm_free(blk);
}

Test(sh_block, selection_is_applied_while_encoding)
{
    int n = CM_BATCH_CAP;
    fill_input(n);
    /* Active rows: every other physical row, backwards. */
    int n_sel = 0;
    for (int i = n - 1; i >= 0; i -= 2) {
        in.sel_buf[n_sel++] = (uint32_t)i;
    }
    in.sel = in.sel_buf;
    in.n_rows = n_sel;
    ShBlock *blk = sh_block_encode(&in, &err);
    cr_assert_not_null(blk);
    cr_assert_eq(blk->hdr.n_rows, n_sel);
    cr_assert_eq(sh_block_decode(blk, &out, &err), CM_OK, "%s", err.msg);
    cm_free(blk); /* the decoded batch must not point into the block */
    cr_assert_eq(out.n_rows, n_sel);
    for (int r = 0; r < n_sel; r++) {
        check_row(r, (int)in.sel_buf[r]);
    }
}

Test(sh_block, selection_encodes_fewer_bytes)
{
    int n = CM_BATCH_CAP;
    fill_input(n);
    ShBlock *all = sh_block_encode(&in, &err);
    in.sel_buf[0] = 0;
    in.sel = in.sel_buf;
    in.n_rows = 1;
    ShBlock *one = sh_block_encode(&in, &err);
    cr_assert_not_null(all);
    cr_assert_not_null(one);
    cr_expect_lt(one->hdr.stored_bytes, all->hdr.stored_bytes);
    cm_free(all);
    cm_free(one);
}

Test(sh_block, columns_without_nulls_stay_without_bitmap)
{
    int n = CM_BATCH_CAP;
    for (int i = 0; i < n; i++) {
        ((int64_t *)in.cols[2].data)[i] = i;
        ((CmStr *)in.cols[5].data)[i] = cm_str_make("", 0);
    }
    in.n_rows = n;
    ShBlock *blk = sh_block_encode(&in, &err);
    cr_assert_not_null(blk);
    cr_assert_eq(sh_block_decode(blk, &out, &err), CM_OK);
    for (int c = 0; c < N_COLS; c++) {
        cr_expect_null(out.cols[c].validity, "column %d", c);
    }
    for (int i = 0; i < n; i++) {
        cr_expect_eq(((int64_t *)out.cols[2].data)[i], i);
        cr_expect_eq(((CmStr *)out.cols[5].data)[i].len, 0);
    }
    cm_free(blk);
}

Test(sh_block, all_null_string_column)
{
    int n = CM_BATCH_CAP;
    for (int i = 0; i < n; i++) {
        cm_vec_set_null(&in.cols[5], (uint32_t)i);
    }
    in.n_rows = n;
    ShBlock *blk = sh_block_encode(&in, &err);
    cr_assert_not_null(blk);
    cr_assert_eq(sh_block_decode(blk, &out, &err), CM_OK);
    for (int i = 0; i < n; i++) {
        cr_expect(cm_vec_is_null(&out.cols[5], (uint32_t)i));
    }
    cm_free(blk);
}

Test(sh_block, const_vectors_are_expanded)
{
    int n = CM_BATCH_CAP;
    ((int64_t *)in.cols[2].data)[0] = 77;
    in.cols[2].kind = CM_VEC_CONST;
    const char *text = "a constant string of some length";
    ((CmStr *)in.cols[5].data)[0] = cm_str_make(text, (uint32_t)strlen(text));
    in.cols[5].kind = CM_VEC_CONST;
    cm_vec_set_null(&in.cols[1], 0);
    in.cols[1].kind = CM_VEC_CONST;
    in.n_rows = n;
    ShBlock *blk = sh_block_encode(&in, &err);
    cr_assert_not_null(blk);
    cr_assert_eq(sh_block_decode(blk, &out, &err), CM_OK);
    for (int i = 0; i < n; i++) {
        cr_expect_eq(((int64_t *)out.cols[2].data)[i], 77);
        const CmStr *s = &((CmStr *)out.cols[5].data)[i];
        cr_expect_eq(s->len, strlen(text));
        cr_expect_eq(memcmp(cm_str_data(s), text, s->len), 0);
        cr_expect(cm_vec_is_null(&out.cols[1], (uint32_t)i));
    }
    cr_expect_eq(out.cols[2].kind, CM_VEC_FLAT);
    cm_free(blk);
}

Test(sh_block, empty_batch)
{
    in.n_rows = 0;
    ShBlock *blk = sh_block_encode(&in, &err);
    cr_assert_not_null(blk);
    cr_expect_eq(blk->hdr.n_rows, 0);
    out.n_rows = 5 > CM_BATCH_CAP ? CM_BATCH_CAP : 5;
    cr_assert_eq(sh_block_decode(blk, &out, &err), CM_OK);
    cr_expect_eq(out.n_rows, 0);
    cm_free(blk);
}

Test(sh_block, decode_resets_the_output_first)
{
    fill_input(CM_BATCH_CAP);
    ShBlock *blk = sh_block_encode(&in, &err);
    cr_assert_not_null(blk);
    /* Leave stale state in out: a selection and a NULL everywhere. */
    out.sel_buf[0] = 0;
    out.sel = out.sel_buf;
    for (int c = 0; c < N_COLS; c++) {
        for (uint32_t p = 0; p < CM_BATCH_CAP; p++) {
            cm_vec_set_null(&out.cols[c], p);
        }
    }
    cr_assert_eq(sh_block_decode(blk, &out, &err), CM_OK);
    cr_expect_null(out.sel);
    for (int i = 0; i < CM_BATCH_CAP; i++) {
        check_row(i, i);
    }
    cm_free(blk);
}

Test(sh_block, every_flipped_payload_byte_fails_with_cm_io)
{
    fill_input(CM_BATCH_CAP);
    ShBlock *blk = sh_block_encode(&in, &err);
    cr_assert_not_null(blk);
    int64_t size = blk->hdr.stored_bytes;
    cr_assert_gt(size, 0);
    /* Flip one bit in each of a spread of positions (first, last, middle...). */
    int64_t step = size / 17 + 1;
    for (int64_t at = 0; at < size; at += step) {
        for (int last = 0; last < 2; last++) {
            int64_t pos = last ? size - 1 : at;
            blk->payload[pos] ^= 0x10;
            CmErr e;
            cm_err_init(&e);
            cr_assert_eq(sh_block_decode(blk, &out, &e), CM_IO, "byte %lld", (long long)pos);
            cr_expect(strstr(e.msg, "checksum") != NULL, "message: %s", e.msg);
            blk->payload[pos] ^= 0x10;
        }
    }
    /* Restored: it decodes again. */
    cr_assert_eq(sh_block_decode(blk, &out, &err), CM_OK, "%s", err.msg);
    check_row(0, 0);
    cm_free(blk);
}

Test(sh_block, corrupted_checksum_field_fails)
{
    in.n_rows = 1;
    ((int64_t *)in.cols[2].data)[0] = 5;
    ((CmStr *)in.cols[5].data)[0] = cm_str_make("x", 1);
    ShBlock *blk = sh_block_encode(&in, &err);
    cr_assert_not_null(blk);
    blk->hdr.map_id = 6;
    blk->hdr.checksum ^= 1;
    cr_expect_eq(sh_block_decode(blk, &out, &err), CM_IO);
    cr_expect(strstr(err.msg, "map 6") != NULL, "message: %s", err.msg);
    cm_free(blk);
}

/* ---- LIST columns ------------------------------------------------------------------- */

/* Row i of a list batch: INTEGER[] of i % 5 elements (element 1 NULL when i is odd),
 * VARCHAR[] of long and short strings; both NULL when i % 7 == 3. */
static void fill_lists(CmBatch *b, CmArena *heap, int n)
{
    for (int i = 0; i < n; i++) {
        uint32_t len = (uint32_t)(i % 5);
        bool nulls = i % 2 == 1 && len > 1;
        char *d = cm_arena_zalloc(heap, cm_list_bytes(len, 4, nulls) + 8);
        for (uint32_t k = 0; k < len; k++) {
            ((int32_t *)d)[k] = i * 10 + (int32_t)k;
        }
        if (nulls) {
            uint64_t *bits = (uint64_t *)(d + cm_list_bits_off(len, 4));
            bits[0] = ~(uint64_t)2;
        }
        ((CmList *)b->cols[0].data)[i] = (CmList){.len = len, .has_nulls = nulls, .data = d};
        CmStr *s = cm_arena_zalloc(heap, sizeof(CmStr) * 2);
        char *text = cm_arena_alloc(heap, 40);
        snprintf(text, 40, "a string longer than twelve %d", i);
        s[0] = cm_str_make(text, (uint32_t)strlen(text));
        s[1] = cm_str_make(text, 3);
        ((CmList *)b->cols[1].data)[i] = (CmList){.len = 2, .data = s};
        if (i % 7 == 3) {
            cm_vec_set_null(&b->cols[0], (uint32_t)i);
            cm_vec_set_null(&b->cols[1], (uint32_t)i);
        }
    }
    b->n_rows = n;
}

Test(sh_block, list_columns_round_trip_through_a_selection)
{
    CmType lt[2] = {cm_type_list(cm_type_make(CM_T_INT32)), cm_type_list(cm_type_varchar(-1, false))};
    CmBatch li, lo;
    CmArena heap;
    cm_arena_init(&heap, 0);
    cr_assert_eq(cm_batch_init(&li, 2, lt, &err), CM_OK);
    cr_assert_eq(cm_batch_init(&lo, 2, lt, &err), CM_OK);
    int n = CM_BATCH_CAP;
    fill_lists(&li, &heap, n);
    int n_sel = 0;
    for (int i = n - 1; i >= 0; i -= 2) {
        li.sel_buf[n_sel++] = (uint32_t)i;
    }
    li.sel = li.sel_buf;
    li.n_rows = n_sel;
    ShBlock *blk = sh_block_encode(&li, &err);
    cr_assert_not_null(blk, "%s", err.msg);
    cm_arena_fini(&heap); /* decoded lists must be copies */
    cr_assert_eq(sh_block_decode(blk, &lo, &err), CM_OK, "%s", err.msg);
    cr_assert_eq(lo.n_rows, n_sel);
    for (int r = 0; r < n_sel; r++) {
        int i = (int)li.sel_buf[r];
        cr_assert_eq(cm_vec_is_null(&lo.cols[0], (uint32_t)r), i % 7 == 3);
        if (i % 7 == 3) {
            continue;
        }
        const CmList *a = &((const CmList *)lo.cols[0].data)[r];
        cr_assert_eq(a->len, (uint32_t)(i % 5), "row %d", r);
        for (uint32_t k = 0; k < a->len; k++) {
            bool is_null = i % 2 == 1 && a->len > 1 && k == 1;
            cr_assert_eq(cm_list_is_null(a, 4, k), is_null);
            if (!is_null) {
                cr_assert_eq(((const int32_t *)a->data)[k], i * 10 + (int32_t)k);
            }
        }
        const CmList *s = &((const CmList *)lo.cols[1].data)[r];
        char want[40];
        snprintf(want, sizeof want, "a string longer than twelve %d", i);
        cr_assert_eq(s->len, 2);
        const CmStr *e = s->data;
        cr_assert_eq(e[0].len, strlen(want));
        cr_assert_eq(memcmp(cm_str_data(&e[0]), want, e[0].len), 0);
        cr_assert_eq(e[1].len, 3);
        cr_assert_eq(memcmp(cm_str_data(&e[1]), "a s", 3), 0);
    }
    /* A list length past the payload (checksum made to match) is malformed, not a read
     * out of bounds. */
    size_t bitmap = blk->payload[0] != 0 ? ((size_t)n_sel + 63) / 64 * 8 : 0;
    uint32_t *lens = (uint32_t *)(blk->payload + 8 + bitmap);
    lens[0] = 1u << 30;
    blk->hdr.checksum = XXH64(blk->payload, (size_t)blk->hdr.stored_bytes, 0);
    cm_err_init(&err);
    cr_expect_eq(sh_block_decode(blk, &lo, &err), CM_IO);
    cm_free(blk);
    cm_batch_fini(&li);
    cm_batch_fini(&lo);
}

/* Lays b out as a record through c, reads the header back and decodes it. */
static int64_t through_record(const ShBlock *b, ShCompressor *c, ShBlockHeader *h)
{
    size_t room = SH_DISK_HDR_BYTES +
                  (size_t)SH_ALIGN8((int64_t)sh_compress_bound((size_t)b->hdr.raw_bytes) + 8);
    unsigned char *rec = cm_malloc(room);
    cr_assert_not_null(rec);
    int64_t bytes = sh_block_lay_record(b, c, rec);
    cr_assert(sh_block_header_unpack(rec, h));
    cr_assert_eq(bytes, sh_block_record_bytes(h));
    ShDecoder dec;
    sh_decoder_init(&dec);
    cr_assert_eq(sh_block_decode_stored(h, rec + SH_DISK_HDR_BYTES, &out, &dec, &err), CM_OK,
                 "%s", err.msg);
    sh_decoder_fini(&dec);
    cm_free(rec);
    return bytes;
}

Test(sh_block, each_codec_round_trips_records_and_in_memory_blocks)
{
    fill_input(CM_BATCH_CAP);
    ShBlock *blk = sh_block_encode(&in, &err);
    cr_assert_not_null(blk);
    static const int codecs[] = {SH_BLOCK_CODEC_LZ4, SH_BLOCK_CODEC_ZSTD};
    for (int k = 0; k < 2; k++) {
        ShCompressor *c = sh_compressor_new(codecs[k]);
        cr_assert_not_null(c);
        cr_expect_eq(sh_compressor_codec(c), codecs[k]);
        ShBlockHeader h;
        int64_t bytes = through_record(blk, c, &h);
        /* Only a payload too small or incompressible is stored raw. */
        if (CM_BATCH_CAP >= 64) {
            cr_expect_eq(h.codec, codecs[k]);
            cr_expect_lt(bytes, sh_block_record_bytes(&blk->hdr));
        }
        for (int i = 0; i < CM_BATCH_CAP; i++) {
            check_row(i, i);
        }
        ShBlock *small = sh_block_compress(blk, c, &err);
        if (small != NULL) {
            cr_expect_eq(small->hdr.codec, codecs[k]);
            cr_assert_eq(sh_block_decode(small, &out, &err), CM_OK, "%s", err.msg);
            check_row(CM_BATCH_CAP - 1, CM_BATCH_CAP - 1);
            /* A flipped byte of a compressed payload fails its checksum. */
            small->payload[small->hdr.stored_bytes / 2] ^= 1;
            CmErr e;
            cm_err_init(&e);
            cr_expect_eq(sh_block_decode(small, &out, &e), CM_IO);
            cm_free(small);
        }
        sh_compressor_free(c);
    }
    cm_free(blk);
}

/* A payload the header calls LZ4 that is not: a clean CM_IO, never a read
 * past the end (the checksum is made to match, as a damaged file can). */
Test(sh_block, a_malformed_lz4_payload_is_an_error)
{
    fill_input(CM_BATCH_CAP);
    ShBlock *blk = sh_block_encode(&in, &err);
    cr_assert_not_null(blk);
    ShBlockHeader h = blk->hdr;
    h.codec = SH_BLOCK_CODEC_LZ4;
    h.stored_bytes = 64;
    unsigned char junk[64];
    memset(junk, 0xf0, sizeof junk);
    h.checksum = XXH64(junk, sizeof junk, 0);
    ShDecoder dec;
    sh_decoder_init(&dec);
    cr_expect_eq(sh_block_decode_stored(&h, junk, &out, &dec, &err), CM_IO);
    sh_decoder_fini(&dec);
    cm_free(blk);
}

/* AUTO: with nothing measured it compresses (and measures); once writes are
 * measured far cheaper than LZ4 it stores most blocks raw, one in 16 still
 * compressed so that the estimate stays fresh. */
Test(sh_block, auto_compresses_only_while_it_pays)
{
    fill_input(CM_BATCH_CAP);
    ShBlock *blk = sh_block_encode(&in, &err);
    cr_assert_not_null(blk);
    if (blk->hdr.raw_bytes < SH_MIN_COMPRESS_BYTES) {
        cm_free(blk);
        return; /* 3-row batches: nothing is ever compressed */
    }
    ShCompressor *c = sh_compressor_new(SH_COMPRESS_AUTO);
    cr_assert_not_null(c);
    ShBlockHeader h;
    /* Enough compressions to be measured (1 MB), all compressed: no writes yet. */
    int n_first = (int)((2 << 20) / blk->hdr.raw_bytes) + 2;
    for (int i = 0; i < n_first; i++) {
        through_record(blk, c, &h);
        cr_expect_eq(h.codec, SH_BLOCK_CODEC_LZ4, "block %d", i);
    }
    /* Writes measured at 100 GB/s: far cheaper than LZ4 on any machine.  (A
     * real write's time depends on the machine's load, which a test must not.) */
    sh_auto_note_write(64 << 20, (64 << 20) / 100);
    int n_compressed = 0;
    for (int i = 0; i < 160; i++) {
        through_record(blk, c, &h);
        n_compressed += h.codec == SH_BLOCK_CODEC_LZ4;
        check_row(CM_BATCH_CAP - 1, CM_BATCH_CAP - 1);
    }
    /* Only the one-in-16 probes remain compressed. */
    cr_expect_geq(n_compressed, 10);
    cr_expect_leq(n_compressed, 40, "compressed %d of 160", n_compressed);
    /* Writes that turn slow (a busy disk: 1 us a byte) outweigh what the
     * cheap ones measured, and every block is compressed again. */
    sh_auto_note_write(64 << 20, (int64_t)(64 << 20) * 1000);
    for (int i = 0; i < 32; i++) {
        through_record(blk, c, &h);
        cr_expect_eq(h.codec, SH_BLOCK_CODEC_LZ4, "block %d after slow writes", i);
    }
    /* sh_pwrite_all writes every byte, at its offset. */
    char path[] = "/tmp/sluice_auto_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    unlink(path);
    static unsigned char chunk[1 << 16], back[1 << 16];
    for (size_t i = 0; i < sizeof chunk; i++) {
        chunk[i] = (unsigned char)(i * 7);
    }
    cr_assert(sh_pwrite_all(fd, chunk, sizeof chunk, 4096));
    cr_assert(sh_pread_all(fd, back, sizeof back, 4096));
    cr_expect_eq(memcmp(chunk, back, sizeof chunk), 0);
    cr_expect_not(sh_pread_all(fd, back, sizeof back, 8192), "a short file is an error");
    close(fd);
    sh_compressor_free(c);
    cm_free(blk);
}
