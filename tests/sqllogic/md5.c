/*
 * md5.c - MD5 (RFC 1321), written from the RFC's description.
 *
 * The message is processed in 64-byte blocks, each read as sixteen
 * little-endian 32-bit words.  Every block runs four rounds of sixteen steps
 * over the state (A, B, C, D); step i mixes one word chosen by the round's
 * index rule, the sine-derived constant T[i] = floor(2^32 * |sin(i + 1)|) and
 * a left rotation by the round's shift for that step.  Padding appends a 0x80
 * byte, zeros up to 56 mod 64, and the bit length as a little-endian 64-bit
 * number.  Invariant: ctx->block holds the n_bytes % 64 bytes not yet mixed.
 */
#include "md5.h"

#include <string.h>

/* T[i] = floor(2^32 * |sin(i + 1)|), i = 0..63 (RFC 1321, section 3.4). */
static const uint32_t T[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};

/* Left-rotation amounts: four per round, used cyclically within the round. */
static const unsigned SHIFT[4][4] = {
    {7, 12, 17, 22},
    {5, 9, 14, 20},
    {4, 11, 16, 23},
    {6, 10, 15, 21},
};

static uint32_t rotl(uint32_t x, unsigned s)
{
    return (x << s) | (x >> (32 - s));
}

/* The auxiliary function of `round` (F, G, H, I) and the word index of step i. */
static uint32_t mix(unsigned round, unsigned i, uint32_t b, uint32_t c, uint32_t d,
                    unsigned *word_idx)
{
    switch (round) {
    case 0:
        *word_idx = i;
        return (b & c) | (~b & d);
    case 1:
        *word_idx = (5 * i + 1) % 16;
        return (b & d) | (c & ~d);
    case 2:
        *word_idx = (3 * i + 5) % 16;
        return b ^ c ^ d;
    default:
        *word_idx = (7 * i) % 16;
        return c ^ (b | ~d);
    }
}

static void transform(uint32_t state[4], const unsigned char block[64])
{
    uint32_t x[16];
    for (unsigned w = 0; w < 16; w++) {
        const unsigned char *p = block + 4 * w;
        x[w] = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
               ((uint32_t)p[3] << 24);
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    for (unsigned i = 0; i < 64; i++) {
        unsigned round = i / 16;
        unsigned word_idx;
        uint32_t f = mix(round, i, b, c, d, &word_idx);
        uint32_t next_b = b + rotl(a + f + x[word_idx] + T[i], SHIFT[round][i % 4]);
        a = d;
        d = c;
        c = b;
        b = next_b;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
}

void md5_init(Md5Ctx *ctx)
{
    ctx->state[0] = 0x67452301;
    ctx->state[1] = 0xefcdab89;
    ctx->state[2] = 0x98badcfe;
    ctx->state[3] = 0x10325476;
    ctx->n_bytes = 0;
}

void md5_update(Md5Ctx *ctx, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t used = (size_t)(ctx->n_bytes % 64);
    ctx->n_bytes += len;
    if (used > 0) {
        size_t take = 64 - used < len ? 64 - used : len;
        memcpy(ctx->block + used, p, take);
        p += take;
        len -= take;
        if (used + take < 64) {
            return;
        }
        transform(ctx->state, ctx->block);
    }
    for (; len >= 64; p += 64, len -= 64) {
        transform(ctx->state, p);
    }
    if (len > 0) {
        memcpy(ctx->block, p, len);
    }
}

void md5_final(Md5Ctx *ctx, unsigned char digest[MD5_DIGEST_LEN])
{
    uint64_t n_bits = ctx->n_bytes * 8;
    static const unsigned char pad[64] = {0x80};
    size_t used = (size_t)(ctx->n_bytes % 64);
    size_t n_pad = used < 56 ? 56 - used : 120 - used;
    md5_update(ctx, pad, n_pad);
    unsigned char len_le[8];
    for (unsigned i = 0; i < 8; i++) {
        len_le[i] = (unsigned char)(n_bits >> (8 * i));
    }
    md5_update(ctx, len_le, 8);
    for (unsigned i = 0; i < 16; i++) {
        digest[i] = (unsigned char)(ctx->state[i / 4] >> (8 * (i % 4)));
    }
}

void md5_hex(const unsigned char digest[MD5_DIGEST_LEN], char hex[33])
{
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < MD5_DIGEST_LEN; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 0xf];
    }
    hex[32] = '\0';
}

bool md5_self_check(void)
{
    /* RFC 1321, appendix A.5. */
    static const char *const cases[][2] = {
        {"", "d41d8cd98f00b204e9800998ecf8427e"},
        {"a", "0cc175b9c0f1b6a831c399e269772661"},
        {"abc", "900150983cd24fb0d6963f7d28e17f72"},
        {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
        {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
        {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
         "d174ab98d277d9f5a5611c2c9f419d9f"},
        {"12345678901234567890123456789012345678901234567890"
         "123456789012345678901234567890",
         "57edf4a22be3c955ac49da2e2107b67a"},
    };
    for (size_t case_idx = 0; case_idx < sizeof cases / sizeof cases[0]; case_idx++) {
        const char *msg = cases[case_idx][0];
        /* Feed byte by byte as well as whole, to cover the block buffering. */
        for (int is_bytewise = 0; is_bytewise < 2; is_bytewise++) {
            Md5Ctx ctx;
            md5_init(&ctx);
            size_t len = strlen(msg);
            for (size_t off = 0; off < len; off += is_bytewise ? 1 : len) {
                md5_update(&ctx, msg + off, is_bytewise ? 1 : len);
            }
            unsigned char digest[MD5_DIGEST_LEN];
            char hex[33];
            md5_final(&ctx, digest);
            md5_hex(digest, hex);
            if (strcmp(hex, cases[case_idx][1]) != 0) {
                return false;
            }
        }
    }
    return true;
}
