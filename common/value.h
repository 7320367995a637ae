/*
 * value.h - text <-> value conversions for the scalar types, shared by the
 * binder (literals, casts), the CSV reader and the result printer.
 *
 * Printing rules (the CLI contract depends on them exactly):
 *   DOUBLE  shortest text that reads back to the same double ("0.1", "2.5",
 *           "1e+20", "-0.0" as "-0.0", integral values as "3.0"), "inf", "-inf", "nan";
 *   DECIMAL the scaled integer with exactly `scale` digits after the point
 *           ("12.30", "-0.05", "7" for scale 0);
 *   DATE    YYYY-MM-DD (years 0001-9999; others as +/-YYYYY-MM-DD);
 *   TIMESTAMP and INTERVAL: see datetime.h;
 *   BOOLEAN "true"/"false".
 * Dates are days since 1970-01-01 (proleptic Gregorian).  Parsers accept
 * leading/trailing blanks, reject anything else and never read past `len`.
 * All functions are pure and thread-safe.
 */
#pragma once

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/types.h"

/* DOUBLE's order in SQL, total: -0 equals 0, and NaN equals NaN and sorts after
 * +Infinity, as in PostgreSQL and DuckDB.  Comparisons, min/max, sorting and
 * grouping all use it, so that NaN (0.0 / 0, 'nan') is one value everywhere. */
static inline int cm_f64_cmp(double x, double y)
{
    if (isnan(x) || isnan(y)) {
        return isnan(x) - isnan(y);
    }
    return (x > y) - (x < y);
}

/* The bits that stand for x in hashes and packed keys: one zero and one NaN, so
 * that values cm_f64_cmp calls equal hash alike. */
static inline uint64_t cm_f64_key_bits(double x)
{
    double d = x == 0 ? 0.0 : isnan(x) ? NAN : x;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits;
}

/* Room for any formatted scalar, NUL included. */
#define CM_FMT_CAP 96 /* the longest INTERVAL text is about 75 */

/* Each writes a NUL-terminated text into buf (cap >= CM_FMT_CAP) and returns
 * its length. */
int cm_fmt_int64(int64_t v, char *buf);
int cm_fmt_double(double v, char *buf);
int cm_fmt_decimal(int64_t v, int scale, char *buf);
int cm_fmt_int128_decimal(CmInt128 v, int scale, char *buf);
int cm_fmt_date(int32_t days, char *buf);

struct CmValue;
/* The text of a non-NULL value as results show it: in buf (cap >= CM_FMT_CAP)
 * for a fixed-width type, or the VARCHAR's own bytes (not NUL-terminated);
 * *len receives the length. A LIST is cm_fmt_list's. */
const char *cm_fmt_value(const struct CmValue *v, char *buf, size_t *len);
/* A LIST as DuckDB prints it: "[1, 2, NULL]", "[a, b]" (strings bare), "[]".
 * Writes at most cap bytes (NUL included, when cap > 0) and returns the
 * length of the whole text, as snprintf does. */
size_t cm_fmt_list(const CmList *l, CmType elem, char *buf, size_t cap);

/* An exact number (BOOL, INTEGER, BIGINT, DECIMAL of either width) as a
 * 128-bit integer and its scale; false for other types. */
bool cm_value_exact(const struct CmValue *in, CmInt128 *v, int *scale);

/* TIME: "HH:MM:SS" with ".ffffff" when there are microseconds. */
int cm_fmt_time(int64_t micros, char *buf);
/* "H:M[:S[.ffffff]]" with one- or two-digit fields, 0 <= time <= 24:00:00
 * (24:00:00 is the end of the day, as in PostgreSQL). */
bool cm_parse_time(const char *s, size_t len, int64_t *micros);

/* Days since the epoch of a calendar date; false when the date does not exist. */
bool cm_date_from_ymd(int32_t year, int32_t month, int32_t day, int32_t *days);
void cm_date_to_ymd(int32_t days, int32_t *year, int32_t *month, int32_t *day);

/* Parsers: true on success.  cm_parse_int64 fails on overflow. */
bool cm_parse_int64(const char *s, size_t len, int64_t *out);
/* Any decimal number ("12.5", "-1e3") rounded half away from zero to an
 * integer, exactly (no detour through DOUBLE); false when the text is not a
 * number or the rounded value is outside BIGINT. */
bool cm_parse_int64_round(const char *s, size_t len, int64_t *out);
bool cm_parse_double(const char *s, size_t len, double *out);
/* "YYYY-MM-DD" (also with 1-digit month/day). */
bool cm_parse_date(const char *s, size_t len, int32_t *days);
/* "true"/"false"/"t"/"f"/"1"/"0"/"yes"/"no", any case. */
bool cm_parse_bool(const char *s, size_t len, bool *out);

/* Parses a decimal number ("12.345", "-1", "1e2", ".5") into a value scaled by
 * 10^scale, rounding half away from zero beyond `scale` digits.  Fails (false)
 * when the text is not a number or the result needs more than `precision`
 * digits. */
bool cm_parse_decimal(const char *s, size_t len, int precision, int scale, int64_t *out);

/* 10^n for 0 <= n <= 18. */
int64_t cm_pow10(int n);
/* 10^n for 0 <= n <= 38. */
CmInt128 cm_pow10_128(int n);

/* cm_parse_decimal for DECIMAL(precision <= 38, scale): the scaled value in
 * 128 bits, |value| < 10^precision. */
bool cm_parse_decimal128(const char *s, size_t len, int precision, int scale, CmInt128 *out);
/* a * b and a + b when the result has at most `precision` (<= 38) digits:
 * false, *out untouched, otherwise (never a wrapped value). */
bool cm_i128_mul_checked(CmInt128 a, CmInt128 b, int precision, CmInt128 *out);
bool cm_i128_add_checked(CmInt128 a, CmInt128 b, int precision, CmInt128 *out);

/* An exact sum in 128 bits kept as two int64 halves (an aggregate's or a
 * window's sum of an exact type): `lo` wraps and `hi` counts the wraps, so
 * adding a BIGINT costs one add and its overflow flag. */
static inline CmInt128 cm_wide_sum_get(int64_t lo, int64_t hi)
{
    return (CmInt128)hi * ((CmInt128)1 << 64) + lo;
}

static inline void cm_wide_sum_set(int64_t *lo, int64_t *hi, CmInt128 v)
{
    *lo = (int64_t)(uint64_t)v;
    *hi = (int64_t)((v - *lo) / ((CmInt128)1 << 64));
}

static inline void cm_wide_sum_add(int64_t *lo, int64_t *hi, int64_t x)
{
    if (__builtin_add_overflow(*lo, x, lo)) {
        *hi += x < 0 ? -1 : 1;
    }
}
