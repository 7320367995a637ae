/*
 * md5.h - MD5 message digest (RFC 1321) for the SQL logic test runner.
 *
 * sqllogictest compares large results as "N values hashing to <md5>", the MD5
 * of every rendered value followed by '\n'.  This is a small streaming
 * implementation written from the RFC's description; it is used only by
 * tests/sqllogic/ and is not a security primitive.  A Md5Ctx is plain caller
 * storage (no heap); each context belongs to one thread.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MD5_DIGEST_LEN 16

typedef struct Md5Ctx {
    uint32_t state[4];       /* A, B, C, D of the running digest */
    uint64_t n_bytes;        /* message length so far, in bytes */
    unsigned char block[64]; /* pending input; n_bytes % 64 bytes are used */
} Md5Ctx;

/* Starts a new digest in caller-provided storage. */
void md5_init(Md5Ctx *ctx);

/* Adds `len` bytes of `data` (borrowed for the call) to the digest. */
void md5_update(Md5Ctx *ctx, const void *data, size_t len);

/* Pads the message, writes the 16-byte digest, and leaves `ctx` unusable
 * until md5_init() is called again. */
void md5_final(Md5Ctx *ctx, unsigned char digest[MD5_DIGEST_LEN]);

/* Writes the digest as 32 lower-case hex digits and a NUL into `hex`. */
void md5_hex(const unsigned char digest[MD5_DIGEST_LEN], char hex[33]);

/* Checks the implementation against the test suite of RFC 1321 (appendix
 * A.5); true when every digest matches. */
bool md5_self_check(void);
