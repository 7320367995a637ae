/*
 * out.c - the .dat field writers of tpcds_gen: integers, decimals, dates,
 * strings and business keys, each followed by '|', appended to a GenBuf.
 *
 * The buffer grows by doubling through cm_realloc.  A failed growth sets
 * is_oom and every later write is dropped, so callers check once per chunk.
 * Numbers are formatted by hand (no printf on the hot path).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench/tpcds/gen/gen.h"
#include "common/alloc.h"

void gen_buf_fini(GenBuf *b)
{
    cm_free(b->data);
    *b = (GenBuf){0};
}

bool gen_buf_room(GenBuf *b, size_t n)
{
    if (b->is_oom) {
        return false;
    }
    if (b->len + n <= b->cap) {
        return true;
    }
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->len + n) {
        cap *= 2;
    }
    char *data = cm_realloc(b->data, cap);
    if (!data) {
        b->is_oom = true;
        return false;
    }
    b->data = data;
    b->cap = cap;
    return true;
}

void gen_null(GenBuf *b)
{
    if (gen_buf_room(b, 1)) {
        b->data[b->len++] = '|';
    }
}

void gen_eol(GenBuf *b)
{
    if (gen_buf_room(b, 1)) {
        b->data[b->len++] = '\n';
    }
}

/* Writes the decimal digits of v (any sign) at p; returns the bytes written. */
static size_t put_u64(char *p, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) {
        p[i] = tmp[n - 1 - i];
    }
    return n;
}

void gen_int(GenBuf *b, int64_t v)
{
    if (v == GEN_NULL) {
        gen_null(b);
        return;
    }
    if (!gen_buf_room(b, 24)) {
        return;
    }
    char *p = b->data + b->len;
    size_t n = 0;
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        p[n++] = '-';
        u = 0 - u;
    }
    n += put_u64(p + n, u);
    p[n++] = '|';
    b->len += n;
}

void gen_dec(GenBuf *b, int64_t cents)
{
    if (cents == GEN_NULL) {
        gen_null(b);
        return;
    }
    if (!gen_buf_room(b, 26)) {
        return;
    }
    char *p = b->data + b->len;
    size_t n = 0;
    uint64_t u = (uint64_t)cents;
    if (cents < 0) {
        p[n++] = '-';
        u = 0 - u;
    }
    n += put_u64(p + n, u / 100);
    p[n++] = '.';
    p[n++] = (char)('0' + u % 100 / 10);
    p[n++] = (char)('0' + u % 10);
    p[n++] = '|';
    b->len += n;
}

void gen_str(GenBuf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (!gen_buf_room(b, n + 1)) {
        return;
    }
    memcpy(b->data + b->len, s ? s : "", n);
    b->data[b->len + n] = '|';
    b->len += n + 1;
}

void gen_flag(GenBuf *b, bool is_yes)
{
    gen_str(b, is_yes ? "Y" : "N");
}

void gen_date(GenBuf *b, int64_t jdn)
{
    if (jdn == GEN_NULL) {
        gen_null(b);
        return;
    }
    if (!gen_buf_room(b, 16)) {
        return;
    }
    int y, m, d;
    gen_civil(jdn, &y, &m, &d);
    char *p = b->data + b->len;
    p[0] = (char)('0' + y / 1000);
    p[1] = (char)('0' + y / 100 % 10);
    p[2] = (char)('0' + y / 10 % 10);
    p[3] = (char)('0' + y % 10);
    p[4] = '-';
    p[5] = (char)('0' + m / 10);
    p[6] = (char)('0' + m % 10);
    p[7] = '-';
    p[8] = (char)('0' + d / 10);
    p[9] = (char)('0' + d % 10);
    p[10] = '|';
    b->len += 11;
}

/* dsdgen's business key: 16 letters A-P, one per nibble, low nibble first
 * from the 9th letter (key 1 is AAAAAAAABAAAAAAA). */
void gen_bkey(GenBuf *b, uint64_t key)
{
    if (!gen_buf_room(b, 17)) {
        return;
    }
    char *p = b->data + b->len;
    for (int i = 0; i < 8; i++) {
        p[i] = (char)('A' + ((key >> (32 + 4 * i)) & 15));
        p[8 + i] = (char)('A' + ((key >> (4 * i)) & 15));
    }
    p[16] = '|';
    b->len += 17;
}

void gen_fmt(GenBuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) {
        n = 0;
    }
    tmp[sizeof tmp - 1] = '\0';
    gen_str(b, tmp);
}
