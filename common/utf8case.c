/*
 * utf8case.c - locale-independent case mapping of UTF-8 text (see utf8case.h).
 *
 * The mappings are written as ranges rather than a 64K table: most of the
 * blocks covered are runs where upper and lower case sit at a fixed distance
 * (Latin-1, basic Greek and Cyrillic) or alternate upper/lower in adjacent
 * code points (Latin Extended-A, the rest of Cyrillic).  ASCII text, the
 * common case, takes the byte loop at the top and never decodes.
 */
#include "common/utf8case.h"

#include <stdint.h>

/* Adjacent pairs: in [lo, hi], the upper case letter is the code point with
 * parity `upper_odd` and its lower case is the next one. */
typedef struct CasePairs {
    uint16_t lo, hi;   /* inclusive range of code points, both cases */
    uint8_t upper_odd; /* 1 when the upper case letters are the odd code points */
} CasePairs;

static const CasePairs PAIRS[] = {
    {0x0100, 0x012F, 0}, {0x0132, 0x0137, 0}, {0x0139, 0x0148, 1}, {0x014A, 0x0177, 0},
    {0x0179, 0x017E, 1}, {0x0370, 0x0373, 0}, {0x0376, 0x0377, 0}, {0x03D8, 0x03EF, 0},
    {0x0460, 0x0481, 0}, {0x048A, 0x04BF, 0}, {0x04C1, 0x04CE, 1}, {0x04D0, 0x04FF, 0},
    {0x01CD, 0x01DC, 1}, {0x01DE, 0x01EF, 0}, {0x01F8, 0x021F, 0}, {0x0222, 0x0233, 0},
    {0x0246, 0x024F, 0},
};

/* Runs where lower = upper + delta, code point by code point. */
typedef struct CaseRun {
    uint16_t upper_lo, upper_hi; /* inclusive range of the upper case letters */
    int16_t delta;               /* lower case = upper case + delta */
} CaseRun;

static const CaseRun RUNS[] = {
    {0x00C0, 0x00D6, 32}, {0x00D8, 0x00DE, 32}, {0x0386, 0x0386, 38}, {0x0388, 0x038A, 37},
    {0x038C, 0x038C, 64}, {0x038E, 0x038F, 63}, {0x0391, 0x03A1, 32}, {0x03A3, 0x03AB, 32},
    {0x0400, 0x040F, 80}, {0x0410, 0x042F, 32}, {0x04C0, 0x04C0, 15},
};

/* One-way mappings that no range above covers. */
typedef struct CaseOne {
    uint16_t from, to;
} CaseOne;

/* The digraphs DŽ, LJ, NJ and DZ come in three: upper, title (ǅ) and lower. */
static const CaseOne TO_UPPER[] = {
    {0x00B5, 0x039C}, {0x00FF, 0x0178}, {0x0131, 0x0049}, {0x017F, 0x0053}, {0x03C2, 0x03A3},
    {0x01C5, 0x01C4}, {0x01C6, 0x01C4}, {0x01C8, 0x01C7}, {0x01C9, 0x01C7}, {0x01CB, 0x01CA},
    {0x01CC, 0x01CA}, {0x01F2, 0x01F1}, {0x01F3, 0x01F1},
};
static const CaseOne TO_LOWER[] = {
    {0x0130, 0x0069}, {0x0178, 0x00FF}, {0x01C4, 0x01C6}, {0x01C5, 0x01C6}, {0x01C7, 0x01C9},
    {0x01C8, 0x01C9}, {0x01CA, 0x01CC}, {0x01CB, 0x01CC}, {0x01F1, 0x01F3}, {0x01F2, 0x01F3},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static uint32_t map_code(uint32_t c, bool is_upper)
{
    const CaseOne *one = is_upper ? TO_UPPER : TO_LOWER;
    size_t n_one = is_upper ? N_OF(TO_UPPER) : N_OF(TO_LOWER);
    for (size_t i = 0; i < n_one; i++) {
        if (one[i].from == c) {
            return one[i].to;
        }
    }
    for (size_t i = 0; i < N_OF(RUNS); i++) {
        const CaseRun *r = &RUNS[i];
        if (!is_upper && c >= r->upper_lo && c <= r->upper_hi) {
            return (uint32_t)((int32_t)c + r->delta);
        }
        if (is_upper && (int32_t)c - r->delta >= r->upper_lo &&
            (int32_t)c - r->delta <= r->upper_hi) {
            return (uint32_t)((int32_t)c - r->delta);
        }
    }
    for (size_t i = 0; i < N_OF(PAIRS); i++) {
        const CasePairs *pr = &PAIRS[i];
        if (c >= pr->lo && c <= pr->hi) {
            bool is_up = (c & 1u) == pr->upper_odd;
            if (is_upper && !is_up) {
                return c - 1;
            }
            if (!is_upper && is_up) {
                return c + 1;
            }
            return c;
        }
    }
    return c;
}

size_t cm_utf8_case(const char *s, size_t n, bool is_upper, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)s[i];
        if (b < 0x80) {
            bool is_other = is_upper ? (b >= 'a' && b <= 'z') : (b >= 'A' && b <= 'Z');
            out[o++] = (char)(is_other ? b ^ 0x20 : b);
            continue;
        }
        unsigned char b2 = i + 1 < n ? (unsigned char)s[i + 1] : 0;
        if (b < 0xC2 || b > 0xDF || (b2 & 0xC0) != 0x80) {
            out[o++] = (char)b; /* 3- and 4-byte sequences and stray bytes stay */
            continue;
        }
        uint32_t c = map_code(((uint32_t)(b & 0x1F) << 6) | (b2 & 0x3F), is_upper);
        if (c < 0x80) {
            out[o++] = (char)c;
        } else {
            out[o++] = (char)(0xC0 | (c >> 6));
            out[o++] = (char)(0x80 | (c & 0x3F));
        }
        i++;
    }
    return o;
}

size_t cm_utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = p[0] < 0x80             ? 1
                 : (p[0] & 0xE0) == 0xC0 ? 2
                 : (p[0] & 0xF0) == 0xE0 ? 3
                 : (p[0] & 0xF8) == 0xF0 ? 4
                                         : 0;

    if (len == 1) {
        *cp = p[0];
        return 1;
    }
    if (len == 0 || len > n) {
        *cp = 0xFFFD;
        return 1;
    }
    uint32_t c = p[0] & (0x7Fu >> len);
    for (size_t k = 1; k < len; k++) {
        if ((p[k] & 0xC0) != 0x80) {
            *cp = 0xFFFD;
            return 1;
        }
        c = (c << 6) | (p[k] & 0x3F);
    }
    *cp = c;
    return len;
}

size_t cm_utf8_encode(uint32_t c, char *b)
{
    if (c < 0x80) {
        b[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        b[0] = (char)(0xC0 | (c >> 6));
        b[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        b[0] = (char)(0xE0 | (c >> 12));
        b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        b[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    b[0] = (char)(0xF0 | (c >> 18));
    b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    b[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    b[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}
