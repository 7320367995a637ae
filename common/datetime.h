/*
 * datetime.h - TIMESTAMP and INTERVAL values: text forms, parsing and the
 * checked arithmetic the executor's kernels and the binder share.
 *
 * A TIMESTAMP is int64 microseconds since 1970-01-01 00:00:00 (no time zone,
 * proleptic Gregorian, as DuckDB's TIMESTAMP); its day is floor(ts / day), so
 * the time of day is never negative.  An INTERVAL (CmInterval, types.h) keeps
 * months, days and microseconds apart as PostgreSQL and DuckDB do: adding one
 * adds the months first (clamping the day to the month's length), then the
 * days, then the microseconds.  Every operation that could leave int64 (or a
 * part's int32) returns false instead of wrapping; callers turn that into an
 * error.  All functions are pure and thread-safe.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/types.h"
#include "common/value.h"

#define CM_US_PER_SEC 1000000LL
#define CM_US_PER_MIN (60 * CM_US_PER_SEC)
#define CM_US_PER_HOUR (60 * CM_US_PER_MIN)
#define CM_US_PER_DAY (24 * CM_US_PER_HOUR)

/* days * one day + time_us; false when it leaves int64. */
bool cm_ts_make(int64_t days, int64_t time_us, int64_t *ts);
/* The day (floor) and the microseconds since that day's midnight. */
void cm_ts_split(int64_t ts, int32_t *days, int64_t *time_us);

/* The current time (UTC) as a TIMESTAMP. */
int64_t cm_ts_now(void);

/* "YYYY-MM-DD HH:MM:SS" with ".f" (trailing zeros dropped) when the seconds
 * have a fraction, as DuckDB prints it; in buf (cap >= CM_FMT_CAP). */
int cm_fmt_timestamp(int64_t ts, char *buf);
/* "YYYY-MM-DD", optionally followed by ' ' or 'T' and a time as cm_parse_time
 * reads it (digits past microseconds are dropped, as DuckDB), and optionally
 * 'Z' or "UTC".  Blanks around are allowed. */
bool cm_parse_timestamp(const char *s, size_t len, int64_t *ts);

/* DuckDB's text of an interval: "1 year 2 months 3 days 04:05:06.7",
 * "-1 day -10:00:00", "00:00:00" for zero; in buf (cap >= CM_FMT_CAP). */
int cm_fmt_interval(const CmInterval *iv, char *buf);
/* Parts "<number> <unit>" (years, months, weeks, days, hours, ... as DuckDB
 * names them, singular, plural or abbreviated; the number may have a
 * fraction, carried to the smaller parts), "[-]H:MM[:SS[.f]]" and a bare
 * number of seconds, optionally ending in "ago" (negated).  False on anything
 * else or when a part overflows. */
bool cm_parse_interval(const char *s, size_t len, CmInterval *out);
/* n of a unit ("day", "hours", "ms", ...) as an interval; false for an
 * unknown unit or overflow. */
bool cm_interval_of_unit(int64_t n, const char *unit, size_t unit_len, CmInterval *out);

/* The interval's length in microseconds with a month as 30 days: the order
 * and equality of intervals (PostgreSQL's interval_cmp_value). */
CmInt128 cm_interval_span(const CmInterval *iv);
int cm_interval_cmp(const CmInterval *a, const CmInterval *b);

/* date + months, the day clamped to the target month's length; false out of range. */
bool cm_date_add_months(int32_t days, int64_t months, int32_t *out);
/* ts + sign * iv (sign is 1 or -1); false out of range. */
bool cm_ts_add_interval(int64_t ts, const CmInterval *iv, int sign, int64_t *out);
/* a + sign * b part by part, and iv * k; false when a part overflows. */
bool cm_interval_add(const CmInterval *a, const CmInterval *b, int sign, CmInterval *out);
bool cm_interval_mul(const CmInterval *iv, int64_t k, CmInterval *out);
/* a - b as days and microseconds (no months), as DuckDB; false on overflow. */
bool cm_ts_diff(int64_t a, int64_t b, CmInterval *out);
