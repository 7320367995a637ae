/*
 * value.c - text <-> value conversions for BIGINT, DOUBLE, DECIMAL, DATE and
 * BOOLEAN (contract in value.h).
 *
 * Design: every parser first trims blanks and then matches the whole remaining
 * text against a small grammar by hand, so no parser ever reads past `len` and
 * trailing garbage is always rejected.  DECIMAL is parsed exactly from the
 * digit string (never through a double), so "1.005" at scale 2 really is 101.
 * Dates use a March-based year, which puts the leap day at the end of the year
 * and makes the 400-year Gregorian cycle (146097 days) decompose into fixed
 * blocks; all date arithmetic is done in int64 so every int32 day number and
 * every year that maps to one is handled without overflow.
 * Text output assumes the C locale (the library never calls setlocale).
 */
#include "common/value.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/alloc.h"
#include "common/datetime.h"
#include "common/err.h"
#include "common/types.h"

/* ---------------------------------------------------------------------------
 * Shared helpers
 * ------------------------------------------------------------------------- */

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Narrows [*s, *s + *len) to the text between leading and trailing blanks. */
static void trim_blanks(const char **s, size_t *len)
{
    const char *p = *s;
    size_t n = *len;
    while (n > 0 && is_blank(p[0])) {
        p++;
        n--;
    }
    while (n > 0 && is_blank(p[n - 1])) {
        n--;
    }
    *s = p;
    *len = n;
}

/* ASCII case-insensitive equality of s[0..len) with the lower-case word. */
static bool equals_word(const char *s, size_t len, const char *word)
{
    size_t word_len = strlen(word);
    if (len != word_len) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') {
            c = (char)(c - 'A' + 'a');
        }
        if (c != word[i]) {
            return false;
        }
    }
    return true;
}

/* Copies a NUL-terminated literal into buf; returns its length. */
static int put_text(const char *text, char *buf)
{
    size_t n = strlen(text);
    memcpy(buf, text, n + 1);
    return (int)n;
}

/* Writes the decimal digits of v, most significant first, into digits (room
 * for 39); returns how many.  Zero gives "0". */
static int u128_digits(CmUInt128 v, char *digits)
{
    char rev[40];
    int n = 0;
    do {
        rev[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v != 0);
    for (int i = 0; i < n; i++) {
        digits[i] = rev[n - 1 - i];
    }
    return n;
}

/* Same for 64-bit magnitudes, which avoids the slow 128-bit division. */
static int u64_digits(uint64_t v, char *digits)
{
    char rev[20];
    int n = 0;
    do {
        rev[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v != 0);
    for (int i = 0; i < n; i++) {
        digits[i] = rev[n - 1 - i];
    }
    return n;
}

/* ---------------------------------------------------------------------------
 * BIGINT
 * ------------------------------------------------------------------------- */

int64_t cm_pow10(int n)
{
    static const int64_t pow10[19] = {
        INT64_C(1),
        INT64_C(10),
        INT64_C(100),
        INT64_C(1000),
        INT64_C(10000),
        INT64_C(100000),
        INT64_C(1000000),
        INT64_C(10000000),
        INT64_C(100000000),
        INT64_C(1000000000),
        INT64_C(10000000000),
        INT64_C(100000000000),
        INT64_C(1000000000000),
        INT64_C(10000000000000),
        INT64_C(100000000000000),
        INT64_C(1000000000000000),
        INT64_C(10000000000000000),
        INT64_C(100000000000000000),
        INT64_C(1000000000000000000),
    };
    CM_ASSERT(n >= 0 && n <= 18);
    if (n < 0 || n > 18) {
        return 0; /* release builds: a recognisably wrong value, never out of bounds */
    }
    return pow10[n];
}

/* |v| as unsigned, defined for INT64_MIN too. */
static uint64_t abs_u64(int64_t v)
{
    return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

int cm_fmt_int64(int64_t v, char *buf)
{
    int n = 0;
    if (v < 0) {
        buf[n++] = '-';
    }
    n += u64_digits(abs_u64(v), buf + n);
    buf[n] = '\0';
    return n;
}

bool cm_parse_int64(const char *s, size_t len, int64_t *out)
{
    trim_blanks(&s, &len);
    size_t pos = 0;
    bool is_neg = false;
    if (pos < len && (s[pos] == '+' || s[pos] == '-')) {
        is_neg = s[pos] == '-';
        pos++;
    }
    if (pos == len) {
        return false;
    }
    /* Accumulate the magnitude; a negative number may reach 2^63. */
    const uint64_t limit = is_neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t acc = 0;
    for (; pos < len; pos++) {
        if (!is_digit(s[pos])) {
            return false;
        }
        uint64_t digit = (uint64_t)(s[pos] - '0');
        if (acc > (limit - digit) / 10) {
            return false;
        }
        acc = acc * 10 + digit;
    }
    *out = is_neg ? (acc == 0 ? 0 : -(int64_t)(acc - 1) - 1) : (int64_t)acc;
    return true;
}

/* ---------------------------------------------------------------------------
 * Numeric text grammar, shared by DOUBLE and DECIMAL:
 *   [+-] ( digits [ '.' [digits] ] | '.' digits ) [ (e|E) [+-] digits ]
 * ------------------------------------------------------------------------- */

/* Exponents are clamped here: far beyond any double or int64 decimal, yet
 * small enough that exponent +/- digit counts cannot overflow int64. */
#define EXP_CLAMP INT64_C(1000000000)

typedef struct NumText {
    bool is_neg;          /* a leading '-' was present */
    const char *int_txt;  /* digits before the point (borrowed from the input) */
    size_t n_int;         /* count of them, may be 0 */
    const char *frac_txt; /* digits after the point (borrowed from the input) */
    size_t n_frac;        /* count of them, may be 0 */
    int64_t exp;          /* decimal exponent, clamped to +/-EXP_CLAMP */
} NumText;

/* Matches the exponent part "e[+-]digits" at s[*pos..len). */
static bool scan_exponent(const char *s, size_t len, size_t *pos, int64_t *exp)
{
    size_t p = *pos + 1; /* skip 'e' / 'E' */
    bool is_neg = false;
    if (p < len && (s[p] == '+' || s[p] == '-')) {
        is_neg = s[p] == '-';
        p++;
    }
    if (p == len || !is_digit(s[p])) {
        return false;
    }
    int64_t e = 0;
    for (; p < len && is_digit(s[p]); p++) {
        if (e < EXP_CLAMP) {
            e = e * 10 + (s[p] - '0');
        }
    }
    if (e > EXP_CLAMP) {
        e = EXP_CLAMP;
    }
    *exp = is_neg ? -e : e;
    *pos = p;
    return true;
}

/* Matches the whole of the (already trimmed) s[0..len) against the grammar. */
static bool scan_number(const char *s, size_t len, NumText *num)
{
    size_t pos = 0;
    memset(num, 0, sizeof *num);
    if (pos < len && (s[pos] == '+' || s[pos] == '-')) {
        num->is_neg = s[pos] == '-';
        pos++;
    }
    num->int_txt = s + pos;
    while (pos < len && is_digit(s[pos])) {
        pos++;
        num->n_int++;
    }
    num->frac_txt = s + pos;
    if (pos < len && s[pos] == '.') {
        pos++;
        num->frac_txt = s + pos;
        while (pos < len && is_digit(s[pos])) {
            pos++;
            num->n_frac++;
        }
    }
    if (num->n_int == 0 && num->n_frac == 0) {
        return false;
    }
    if (pos < len && (s[pos] == 'e' || s[pos] == 'E')) {
        if (!scan_exponent(s, len, &pos, &num->exp)) {
            return false;
        }
    }
    return pos == len;
}

/* The i-th digit of the mantissa (integer digits, then fraction digits). */
static int num_digit(const NumText *num, size_t i)
{
    char c = i < num->n_int ? num->int_txt[i] : num->frac_txt[i - num->n_int];
    return c - '0';
}

bool cm_parse_int64_round(const char *s, size_t len, int64_t *out)
{
    trim_blanks(&s, &len);
    NumText num;
    if (!scan_number(s, len, &num)) {
        return false;
    }
    /* The magnitude may reach 2^63 for a negative number, as in cm_parse_int64. */
    const uint64_t limit = num.is_neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    int64_t n_digits = (int64_t)(num.n_int + num.n_frac);
    int64_t n_whole = (int64_t)num.n_int + num.exp; /* digits before the point */
    uint64_t acc = 0;
    for (int64_t i = 0; i < n_whole; i++) {
        if (i >= n_digits && acc == 0) {
            break; /* zeros times a power of ten: stays 0 however large the exponent */
        }
        uint64_t digit = i < n_digits ? (uint64_t)num_digit(&num, (size_t)i) : 0;
        if (acc > (limit - digit) / 10) {
            return false;
        }
        acc = acc * 10 + digit;
    }
    if (n_whole >= 0 && n_whole < n_digits && num_digit(&num, (size_t)n_whole) >= 5) {
        if (acc == limit) {
            return false;
        }
        acc++;
    }
    *out = num.is_neg ? (acc == 0 ? 0 : -(int64_t)(acc - 1) - 1) : (int64_t)acc;
    return true;
}

/* ---------------------------------------------------------------------------
 * DOUBLE
 * ------------------------------------------------------------------------- */

int cm_fmt_double(double v, char *buf)
{
    if (isnan(v)) {
        return put_text("nan", buf); /* also for -nan: the sign of a NaN means nothing */
    }
    if (isinf(v)) {
        return put_text(v < 0 ? "-inf" : "inf", buf);
    }
    /* 17 significant digits always round-trip a double; fewer often do, and
     * the shortest one that does is the friendliest text. */
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(buf, CM_FMT_CAP, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) {
            break;
        }
    }
    /* "3" would read back as an integer in SQL; mark it as a double. */
    if (strpbrk(buf, ".eni") == NULL) {
        buf[n++] = '.';
        buf[n++] = '0';
        buf[n] = '\0';
    }
    return n;
}

/* Matches [+-](inf|infinity|nan), any case: the texts cm_fmt_double prints. */
static bool is_special_double(const char *s, size_t len)
{
    if (len > 0 && (s[0] == '+' || s[0] == '-')) {
        s++;
        len--;
    }
    return equals_word(s, len, "inf") || equals_word(s, len, "infinity") ||
           equals_word(s, len, "nan");
}

/* Inputs up to this long are copied to the stack for strtod; longer ones (long
 * but valid digit strings) go to the heap. */
#define DOUBLE_STACK_CAP 256

bool cm_parse_double(const char *s, size_t len, double *out)
{
    trim_blanks(&s, &len);
    NumText num;
    /* Validate first: strtod alone would also take hex floats, "nan(...)" and
     * a prefix of the text. */
    if (!scan_number(s, len, &num) && !is_special_double(s, len)) {
        return false;
    }
    char stack_buf[DOUBLE_STACK_CAP];
    char *text = stack_buf;
    if (len >= sizeof stack_buf) {
        text = cm_malloc(len + 1);
        if (text == NULL) {
            return false;
        }
    }
    memcpy(text, s, len);
    text[len] = '\0';

    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    /* Overflow of finite text is an error; underflow to 0 or a subnormal is
     * the nearest double and accepted. */
    bool is_ok = end == text + len && !(errno == ERANGE && isinf(v));
    if (text != stack_buf) {
        cm_free(text);
    }
    if (is_ok) {
        *out = v;
    }
    return is_ok;
}

/* ---------------------------------------------------------------------------
 * DECIMAL
 * ------------------------------------------------------------------------- */

/* Largest scale that keeps every output within CM_FMT_CAP: 39 digits of an
 * int128 plus sign, "0." and padding stay well below 64 bytes. */
#define FMT_SCALE_MAX 40

/* Lays out the magnitude's digits with `scale` of them after the point. */
static int place_point(const char *digits, int n_digits, bool is_neg, int scale, char *buf)
{
    CM_ASSERT(scale >= 0 && scale <= FMT_SCALE_MAX);
    if (scale < 0) {
        scale = 0;
    } else if (scale > FMT_SCALE_MAX) {
        scale = FMT_SCALE_MAX;
    }
    int n = 0;
    if (is_neg) {
        buf[n++] = '-';
    }
    if (n_digits <= scale) {
        /* Pure fraction: "0." then zero padding up to the digits. */
        buf[n++] = '0';
        buf[n++] = '.';
        memset(buf + n, '0', (size_t)(scale - n_digits));
        n += scale - n_digits;
        memcpy(buf + n, digits, (size_t)n_digits);
        n += n_digits;
    } else {
        int n_int = n_digits - scale;
        memcpy(buf + n, digits, (size_t)n_int);
        n += n_int;
        if (scale > 0) {
            buf[n++] = '.';
            memcpy(buf + n, digits + n_int, (size_t)scale);
            n += scale;
        }
    }
    buf[n] = '\0';
    return n;
}

int cm_fmt_decimal(int64_t v, int scale, char *buf)
{
    char digits[20];
    int n_digits = u64_digits(abs_u64(v), digits);
    return place_point(digits, n_digits, v < 0, scale, buf);
}

int cm_fmt_int128_decimal(CmInt128 v, int scale, char *buf)
{
    CmUInt128 mag = v < 0 ? (CmUInt128)0 - (CmUInt128)v : (CmUInt128)v;
    char digits[40];
    int n_digits = u128_digits(mag, digits);
    return place_point(digits, n_digits, v < 0, scale, buf);
}

/* acc = acc * 10^k + 0, failing when the result exceeds bound. */
static bool scale_up(uint64_t *acc, int64_t k, uint64_t bound)
{
    for (int64_t i = 0; i < k && *acc != 0; i++) {
        if (*acc > bound / 10) {
            return false;
        }
        *acc *= 10;
    }
    return true;
}

/* Magnitude of the scaled value, rounded half away from zero; false when it
 * exceeds bound.  The mantissa digits D stand for D * 10^(exp - n_frac), so
 * the scaled value is D * 10^shift with shift = exp - n_frac + scale. */
static bool decimal_magnitude(const NumText *num, int scale, uint64_t bound, uint64_t *out)
{
    int64_t n_digits = (int64_t)(num->n_int + num->n_frac);
    int64_t shift = num->exp - (int64_t)num->n_frac + scale;
    /* Digits [0, n_keep) land before the scaled point; the next one rounds. */
    int64_t n_keep = shift >= 0 ? n_digits : n_digits + shift;
    uint64_t acc = 0;
    for (int64_t i = 0; i < n_keep; i++) {
        uint64_t digit = (uint64_t)num_digit(num, (size_t)i);
        if (acc > (bound - digit) / 10) {
            return false;
        }
        acc = acc * 10 + digit;
    }
    if (shift < 0 && n_keep >= 0 && num_digit(num, (size_t)n_keep) >= 5) {
        /* The dropped tail is >= one half: away from zero means up. */
        if (acc == bound) {
            return false;
        }
        acc++;
    }
    if (shift > 0 && !scale_up(&acc, shift, bound)) {
        return false;
    }
    *out = acc;
    return true;
}

bool cm_parse_decimal(const char *s, size_t len, int precision, int scale, int64_t *out)
{
    if (precision < 1 || scale < 0 || scale > 18) {
        return false;
    }
    trim_blanks(&s, &len);
    NumText num;
    if (!scan_number(s, len, &num)) {
        return false;
    }
    /* |scaled value| < 10^precision is exactly "at most precision - scale
     * digits before the point"; beyond 18 digits int64 itself is the limit. */
    uint64_t bound = precision <= 18 ? (uint64_t)cm_pow10(precision) - 1 : (uint64_t)INT64_MAX;
    uint64_t mag = 0;
    if (!decimal_magnitude(&num, scale, bound, &mag)) {
        return false;
    }
    *out = num.is_neg ? -(int64_t)mag : (int64_t)mag;
    return true;
}

CmInt128 cm_pow10_128(int n)
{
    CM_ASSERT(n >= 0 && n <= 38);
    if (n <= 18) {
        return cm_pow10(n);
    }
    if (n <= 36) {
        return (CmInt128)cm_pow10(18) * cm_pow10(n - 18);
    }
    return (CmInt128)cm_pow10(18) * cm_pow10(18) * cm_pow10(n - 36);
}

/* The 128-bit twin of decimal_magnitude (bound below 10^38). */
static bool decimal_magnitude128(const NumText *num, int scale, CmUInt128 bound, CmUInt128 *out)
{
    int64_t n_digits = (int64_t)(num->n_int + num->n_frac);
    int64_t shift = num->exp - (int64_t)num->n_frac + scale;
    int64_t n_keep = shift >= 0 ? n_digits : n_digits + shift;
    CmUInt128 acc = 0;
    for (int64_t i = 0; i < n_keep; i++) {
        unsigned digit = (unsigned)num_digit(num, (size_t)i);
        if (acc > (bound - digit) / 10) {
            return false;
        }
        acc = acc * 10 + digit;
    }
    if (shift < 0 && n_keep >= 0 && num_digit(num, (size_t)n_keep) >= 5) {
        if (acc == bound) {
            return false;
        }
        acc++;
    }
    for (int64_t i = 0; i < shift && acc != 0; i++) {
        if (acc > bound / 10) {
            return false;
        }
        acc *= 10;
    }
    *out = acc;
    return true;
}

bool cm_parse_decimal128(const char *s, size_t len, int precision, int scale, CmInt128 *out)
{
    if (precision < 1 || precision > 38 || scale < 0 || scale > precision) {
        return false;
    }
    trim_blanks(&s, &len);
    NumText num;
    if (!scan_number(s, len, &num)) {
        return false;
    }
    CmUInt128 mag = 0;
    if (!decimal_magnitude128(&num, scale, (CmUInt128)cm_pow10_128(precision) - 1, &mag)) {
        return false;
    }
    *out = num.is_neg ? -(CmInt128)mag : (CmInt128)mag;
    return true;
}

bool cm_i128_mul_checked(CmInt128 a, CmInt128 b, int precision, CmInt128 *out)
{
    CmInt128 r;
    if (__builtin_mul_overflow(a, b, &r)) {
        return false;
    }
    CmInt128 lim = cm_pow10_128(precision);
    if (r >= lim || r <= -lim) {
        return false;
    }
    *out = r;
    return true;
}

bool cm_i128_add_checked(CmInt128 a, CmInt128 b, int precision, CmInt128 *out)
{
    CmInt128 r;
    if (__builtin_add_overflow(a, b, &r)) {
        return false;
    }
    CmInt128 lim = cm_pow10_128(precision);
    if (r >= lim || r <= -lim) {
        return false;
    }
    *out = r;
    return true;
}

/* ---------------------------------------------------------------------------
 * DATE
 *
 * A "March year" runs from March 1 to the end of February, so the optional
 * leap day is its last day.  Counting March years from 0000-03-01, the
 * 400-year cycle is 146097 days: three centuries of 36524 days and a last one
 * of 36525 (its final day is the 400-year leap day).  A century splits into
 * 24 four-year blocks of 1461 days and a last block of 1460 (or 1461 in the
 * fourth century); a block splits into three 365-day years and a last year of
 * 365 or 366.  In every case only the last part of a level is longer, which
 * is why each division below just clamps its quotient.
 * ------------------------------------------------------------------------- */

/* Days from 0000-03-01 to 1970-01-01. */
#define DAYS_0000_03_01_TO_EPOCH INT64_C(719468)
#define DAYS_PER_400_YEARS INT64_C(146097)

static bool is_leap_year(int64_t year)
{
    return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

static int days_in_month(int64_t year, int month)
{
    static const int lengths[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month == 2 && is_leap_year(year)) {
        return 29;
    }
    return lengths[month - 1];
}

/* Floor division for a positive divisor (C division truncates toward 0). */
static int64_t floor_div(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* Day within the March year of the first day of March-based month mp
 * (0 = March ... 11 = February).  The month lengths from March repeat the
 * 5-month pattern 31 30 31 30 31 = 153 days, so this is linear in mp. */
static int64_t march_month_start(int64_t mp)
{
    return (153 * mp + 2) / 5;
}

bool cm_date_from_ymd(int32_t year, int32_t month, int32_t day, int32_t *days)
{
    if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month)) {
        return false;
    }
    int64_t y = month <= 2 ? (int64_t)year - 1 : year; /* the March year */
    int64_t mp = month <= 2 ? month + 9 : month - 3;
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400; /* year of era, 0..399 */
    int64_t doy = march_month_start(mp) + day - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; /* leap days before yoe */
    int64_t result = era * DAYS_PER_400_YEARS + doe - DAYS_0000_03_01_TO_EPOCH;
    if (result < INT32_MIN || result > INT32_MAX) {
        return false;
    }
    *days = (int32_t)result;
    return true;
}

/* min(a / b, cap): the quotient, with the longer last part folded in. */
static int64_t clamped_div(int64_t a, int64_t b, int64_t cap)
{
    int64_t q = a / b;
    return q < cap ? q : cap;
}

void cm_date_to_ymd(int32_t days, int32_t *year, int32_t *month, int32_t *day)
{
    int64_t n = (int64_t)days + DAYS_0000_03_01_TO_EPOCH;
    int64_t era = floor_div(n, DAYS_PER_400_YEARS);
    int64_t rem = n - era * DAYS_PER_400_YEARS; /* day of era, 0..146096 */
    int64_t century = clamped_div(rem, 36524, 3);
    rem -= century * 36524;
    int64_t block = rem / 1461; /* at most 24: a century's last block is never longer */
    rem -= block * 1461;
    int64_t year_in_block = clamped_div(rem, 365, 3);
    int64_t doy = rem - year_in_block * 365; /* day of March year, 0..365 */

    int64_t mp = (5 * doy + 2) / 153; /* inverse of march_month_start */
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    int64_t y = era * 400 + century * 100 + block * 4 + year_in_block + (m <= 2);
    *year = (int32_t)y;
    *month = (int32_t)m;
    *day = (int32_t)(doy - march_month_start(mp) + 1);
}

/* Writes v zero-padded to at least width digits. */
static int put_padded(uint32_t v, int width, char *buf)
{
    char digits[20];
    int n_digits = u64_digits(v, digits);
    int n = 0;
    for (; n < width - n_digits; n++) {
        buf[n] = '0';
    }
    memcpy(buf + n, digits, (size_t)n_digits);
    return n + n_digits;
}

int cm_fmt_date(int32_t days, char *buf)
{
    int32_t year = 0;
    int32_t month = 0;
    int32_t day = 0;
    cm_date_to_ymd(days, &year, &month, &day);
    int n = 0;
    if (year >= 1 && year <= 9999) {
        n += put_padded((uint32_t)year, 4, buf);
    } else {
        /* Expanded ISO 8601 form; year 0 (1 BC) is non-negative, so "+". */
        buf[n++] = year < 0 ? '-' : '+';
        n += put_padded((uint32_t)abs_u64(year), 5, buf + n);
    }
    buf[n++] = '-';
    n += put_padded((uint32_t)month, 2, buf + n);
    buf[n++] = '-';
    n += put_padded((uint32_t)day, 2, buf + n);
    buf[n] = '\0';
    return n;
}

/* Reads between min_digits and max_digits digits at s[*pos..len). */
static bool scan_uint(const char *s, size_t len, size_t *pos, int min_digits, int max_digits,
                      int32_t *out)
{
    int32_t v = 0;
    int n = 0;
    while (*pos < len && is_digit(s[*pos]) && n < max_digits) {
        v = v * 10 + (s[*pos] - '0');
        (*pos)++;
        n++;
    }
    *out = v;
    return n >= min_digits;
}

static bool expect_char(const char *s, size_t len, size_t *pos, char c)
{
    if (*pos < len && s[*pos] == c) {
        (*pos)++;
        return true;
    }
    return false;
}

/* Accepts YYYY-M[M]-D[D] and, so that every cm_fmt_date output reads back,
 * the signed expanded form [+-]YYYY[YYY]-M[M]-D[D]. */
bool cm_parse_date(const char *s, size_t len, int32_t *days)
{
    trim_blanks(&s, &len);
    size_t pos = 0;
    bool is_neg = false;
    bool has_sign = pos < len && (s[pos] == '+' || s[pos] == '-');
    if (has_sign) {
        is_neg = s[pos] == '-';
        pos++;
    }
    int32_t year = 0;
    int32_t month = 0;
    int32_t day = 0;
    bool is_ok = scan_uint(s, len, &pos, 4, has_sign ? 7 : 4, &year) &&
                 expect_char(s, len, &pos, '-') && scan_uint(s, len, &pos, 1, 2, &month) &&
                 expect_char(s, len, &pos, '-') && scan_uint(s, len, &pos, 1, 2, &day) &&
                 pos == len;
    if (!is_ok) {
        return false;
    }
    return cm_date_from_ymd(is_neg ? -year : year, month, day, days);
}

/* ---------------------------------------------------------------------------
 * BOOLEAN
 * ------------------------------------------------------------------------- */

bool cm_parse_bool(const char *s, size_t len, bool *out)
{
    static const char *const true_words[] = {"true", "t", "1", "yes"};
    static const char *const false_words[] = {"false", "f", "0", "no"};
    trim_blanks(&s, &len);
    for (size_t i = 0; i < sizeof true_words / sizeof true_words[0]; i++) {
        if (equals_word(s, len, true_words[i])) {
            *out = true;
            return true;
        }
        if (equals_word(s, len, false_words[i])) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* ---- TIME ------------------------------------------------------------------ */

int cm_fmt_time(int64_t micros, char *buf)
{
    int64_t secs = micros / 1000000, frac = micros % 1000000;
    int n = snprintf(buf, CM_FMT_CAP, "%02d:%02d:%02d", (int)(secs / 3600), (int)(secs / 60 % 60),
                     (int)(secs % 60));
    if (frac != 0) {
        n += snprintf(buf + n, (size_t)(CM_FMT_CAP - n), ".%06d", (int)frac);
    }
    return n;
}

static bool two_digits(const char *s, size_t len, size_t *i, int *out)
{
    if (*i + 2 > len || !isdigit((unsigned char)s[*i]) || !isdigit((unsigned char)s[*i + 1])) {
        return false;
    }
    *out = (s[*i] - '0') * 10 + (s[*i + 1] - '0');
    *i += 2;
    return true;
}

/* One or two digits, as PostgreSQL reads the fields of a time ('1:2:3'). */
static bool time_field(const char *s, size_t len, size_t *i, int *out)
{
    if (*i < len && isdigit((unsigned char)s[*i]) &&
        (*i + 1 >= len || !isdigit((unsigned char)s[*i + 1]))) {
        *out = s[(*i)++] - '0';
        return true;
    }
    return two_digits(s, len, i, out);
}

bool cm_parse_time(const char *s, size_t len, int64_t *micros)
{
    size_t i = 0;
    while (i < len && isspace((unsigned char)s[i])) {
        i++;
    }
    while (len > i && isspace((unsigned char)s[len - 1])) {
        len--;
    }
    int h = 0, m = 0, sec = 0;
    if (!time_field(s, len, &i, &h)) {
        return false;
    }
    if (i >= len || s[i++] != ':' || !time_field(s, len, &i, &m)) {
        return false;
    }
    int64_t frac = 0;
    if (i < len && s[i] == ':') {
        i++;
        if (!time_field(s, len, &i, &sec)) {
            return false;
        }
        if (i < len && s[i] == '.') {
            int digits = 0;
            for (i++; i < len && isdigit((unsigned char)s[i]); i++, digits++) {
                if (digits < 6) {
                    frac = frac * 10 + (s[i] - '0');
                }
            }
            for (; digits < 6; digits++) {
                frac *= 10;
            }
        }
    }
    bool end_of_day = h == 24 && m == 0 && sec == 0 && frac == 0;
    if (i != len || (h > 23 && !end_of_day) || m > 59 || sec > 59) {
        return false;
    }
    *micros = ((int64_t)h * 3600 + m * 60 + sec) * 1000000 + frac;
    return true;
}

const char *cm_fmt_value(const CmValue *v, char *buf, size_t *len)
{
    int n;
    switch ((CmTypeId)v->type.id) {
    case CM_T_BOOL:
        *len = v->i ? 4 : 5;
        return v->i ? "true" : "false";
    case CM_T_VARCHAR:
        *len = v->s.len;
        return cm_str_data(&v->s);
    case CM_T_DOUBLE:
        n = cm_fmt_double(v->d, buf);
        break;
    case CM_T_DECIMAL:
        n = cm_fmt_decimal(v->i, v->type.scale, buf);
        break;
    case CM_T_DECIMAL128:
        n = cm_fmt_int128_decimal(cm_i128_get(v->h), v->type.scale, buf);
        break;
    case CM_T_DATE:
        n = cm_fmt_date((int32_t)v->i, buf);
        break;
    case CM_T_TIME:
        n = cm_fmt_time(v->i, buf);
        break;
    case CM_T_TIMESTAMP:
        n = cm_fmt_timestamp(v->i, buf);
        break;
    case CM_T_INTERVAL:
        n = cm_fmt_interval(&v->iv, buf);
        break;
    default:
        n = cm_fmt_int64(v->i, buf);
        break;
    }
    *len = (size_t)n;
    return buf;
}

/* ---------------------------------------------------------------------------
 * Lists
 * ------------------------------------------------------------------------- */

/* Appends n bytes of s at *at of buf (cap), counting what does not fit. */
static void list_put(char *buf, size_t cap, size_t *at, const char *s, size_t n)
{
    if (*at < cap) {
        size_t room = cap - *at;
        memcpy(buf + *at, s, n < room ? n : room);
    }
    *at += n;
}

/* DuckDB quotes a string element when it would not read back bare: empty,
 * NULL in any case, blank at either end, or holding list syntax. */
static bool list_needs_quotes(const char *s, size_t n)
{
    if (n == 0 || (n == 4 && strncasecmp(s, "null", 4) == 0) || isspace((unsigned char)s[0]) ||
        isspace((unsigned char)s[n - 1])) {
        return true;
    }
    for (size_t i = 0; i < n; i++) {
        if (strchr(",[]{}()\":='", s[i]) != NULL && s[i] != '\0') {
            return true;
        }
    }
    return false;
}

/* 'text' with ' and \ escaped by a backslash. */
static void list_put_quoted(char *buf, size_t cap, size_t *at, const char *s, size_t n)
{
    list_put(buf, cap, at, "'", 1);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\'' || s[i] == '\\') {
            list_put(buf, cap, at, "\\", 1);
        }
        list_put(buf, cap, at, &s[i], 1);
    }
    list_put(buf, cap, at, "'", 1);
}

size_t cm_fmt_list(const CmList *l, CmType elem, char *buf, size_t cap)
{
    size_t w = cm_type_width(elem), at = 0;
    char tmp[CM_FMT_CAP];
    list_put(buf, cap, &at, "[", 1);
    for (uint32_t k = 0; k < l->len; k++) {
        const char *p = (const char *)l->data + w * k;
        const char *text = tmp;
        size_t n = 0;
        if (k > 0) {
            list_put(buf, cap, &at, ", ", 2);
        }
        if (cm_list_is_null(l, w, k)) {
            text = "NULL";
            n = 4;
        } else {
            switch ((CmTypeId)elem.id) {
            case CM_T_BOOL:
                text = *(const uint8_t *)p ? "true" : "false";
                n = strlen(text);
                break;
            case CM_T_INT32:
                n = (size_t)cm_fmt_int64(*(const int32_t *)p, tmp);
                break;
            case CM_T_DATE:
                n = (size_t)cm_fmt_date(*(const int32_t *)p, tmp);
                break;
            case CM_T_INT64:
                n = (size_t)cm_fmt_int64(*(const int64_t *)p, tmp);
                break;
            case CM_T_TIME:
                n = (size_t)cm_fmt_time(*(const int64_t *)p, tmp);
                break;
            case CM_T_TIMESTAMP:
                n = (size_t)cm_fmt_timestamp(*(const int64_t *)p, tmp);
                break;
            case CM_T_INTERVAL:
                n = (size_t)cm_fmt_interval((const CmInterval *)p, tmp);
                break;
            case CM_T_DECIMAL:
                n = (size_t)cm_fmt_decimal(*(const int64_t *)p, elem.scale, tmp);
                break;
            case CM_T_DECIMAL128:
                n = (size_t)cm_fmt_int128_decimal(cm_i128_get(p), elem.scale, tmp);
                break;
            case CM_T_DOUBLE:
                n = (size_t)cm_fmt_double(*(const double *)p, tmp);
                break;
            case CM_T_VARCHAR:
                text = cm_str_data((const CmStr *)p);
                n = ((const CmStr *)p)->len;
                if (list_needs_quotes(text, n)) {
                    list_put_quoted(buf, cap, &at, text, n);
                    continue;
                }
                break;
            case CM_T_NULL:
            case CM_T_LIST:
                text = "NULL";
                n = 4;
                break;
            }
        }
        list_put(buf, cap, &at, text, n);
    }
    list_put(buf, cap, &at, "]", 1);
    if (cap > 0) {
        buf[at < cap ? at : cap - 1] = '\0';
    }
    return at;
}

/* An exact number (BOOL, INTEGER, BIGINT, DECIMAL of either width) as a
 * 128-bit integer and its scale; false for other types. */
bool cm_value_exact(const CmValue *in, CmInt128 *v, int *scale)
{
    switch ((CmTypeId)in->type.id) {
    case CM_T_BOOL:
    case CM_T_INT32:
    case CM_T_INT64:
        *v = in->i, *scale = 0;
        return true;
    case CM_T_DECIMAL:
        *v = in->i, *scale = in->type.scale;
        return true;
    case CM_T_DECIMAL128:
        *v = cm_i128_get(in->h), *scale = in->type.scale;
        return true;
    default:
        return false;
    }
}
