/*
 * test_datetime.c - unit tests for common/datetime.c: TIMESTAMP and INTERVAL
 * text forms (written out literally: the CLI contract depends on them),
 * parsing, the span order of intervals, and the overflow checks of the
 * arithmetic at the ends of the int64 range.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "common/datetime.h"

static const char *fmt_ts(int64_t ts)
{
    static char buf[CM_FMT_CAP];
    cm_fmt_timestamp(ts, buf);
    return buf;
}

static const char *fmt_iv(int32_t months, int32_t days, int64_t micros)
{
    static char buf[CM_FMT_CAP];
    CmInterval iv = {months, days, micros};
    cm_fmt_interval(&iv, buf);
    return buf;
}

static bool parse_ts(const char *s, int64_t *ts)
{
    return cm_parse_timestamp(s, strlen(s), ts);
}

static bool parse_iv(const char *s, CmInterval *iv)
{
    return cm_parse_interval(s, strlen(s), iv);
}

Test(cm_datetime, timestamp_text)
{
    cr_expect_str_eq(fmt_ts(0), "1970-01-01 00:00:00");
    cr_expect_str_eq(fmt_ts(-1), "1969-12-31 23:59:59.999999");
    cr_expect_str_eq(fmt_ts(500000), "1970-01-01 00:00:00.5");
    cr_expect_str_eq(fmt_ts(86400LL * 1000000 + 3723000010), "1970-01-02 01:02:03.00001");
    int64_t ts;
    cr_assert(parse_ts(" 2000-02-29T23:59:59.1234567 ", &ts));
    cr_expect_str_eq(fmt_ts(ts), "2000-02-29 23:59:59.123456");
    cr_assert(parse_ts("2000-01-01", &ts));
    cr_expect_str_eq(fmt_ts(ts), "2000-01-01 00:00:00");
    cr_assert(parse_ts("2000-01-01 10:00:00Z", &ts));
    cr_expect_str_eq(fmt_ts(ts), "2000-01-01 10:00:00");
    cr_expect_not(parse_ts("2000-02-30 00:00:00", &ts));
    cr_expect_not(parse_ts("2000-01-01 10:00:00+02", &ts));
    cr_expect_not(parse_ts("2000-01-01x", &ts));
    cr_expect_not(parse_ts("", &ts));
}

Test(cm_datetime, interval_text)
{
    cr_expect_str_eq(fmt_iv(0, 0, 0), "00:00:00");
    cr_expect_str_eq(fmt_iv(14, 3, 14706700000), "1 year 2 months 3 days 04:05:06.7");
    cr_expect_str_eq(fmt_iv(-1, -1, -1), "-1 month -1 day -00:00:00.000001");
    cr_expect_str_eq(fmt_iv(0, 0, 36 * CM_US_PER_HOUR), "36:00:00");
    /* the widest text fits CM_FMT_CAP */
    cr_expect_str_eq(fmt_iv(INT32_MIN, INT32_MIN, INT64_MIN),
                     "-178956970 years -8 months -2147483648 days -2562047788:00:54.775808");
    CmInterval iv;
    cr_assert(parse_iv("1 year 2 mons -3 d 04:05:06.7", &iv));
    cr_expect_eq(iv.months, 14);
    cr_expect_eq(iv.days, -3);
    cr_expect_eq(iv.micros, 14706700000);
    cr_assert(parse_iv("1.5 months ago", &iv));
    cr_expect_eq(iv.months, -1);
    cr_expect_eq(iv.days, -15);
    cr_assert(parse_iv("5", &iv));
    cr_expect_eq(iv.micros, 5000000);
    cr_expect_not(parse_iv("1 day 5", &iv));
    cr_expect_not(parse_iv("ago", &iv));
    cr_expect_not(parse_iv("1 fortnight", &iv));
    cr_expect_not(parse_iv("3000000000 days", &iv));
    cr_expect_not(parse_iv("99999999999 hours", &iv));
}

Test(cm_datetime, interval_order)
{
    CmInterval month = {1, 0, 0}, days30 = {0, 30, 0}, day = {0, 1, 0};
    CmInterval hours24 = {0, 0, 24 * CM_US_PER_HOUR}, neg = {0, -1, 0};
    cr_expect_eq(cm_interval_cmp(&month, &days30), 0);
    cr_expect_eq(cm_interval_cmp(&day, &hours24), 0);
    cr_expect_lt(cm_interval_cmp(&neg, &day), 0);
    cr_expect_gt(cm_interval_cmp(&month, &day), 0);
}

Test(cm_datetime, overflow_is_reported)
{
    int64_t out;
    CmInterval day = {0, 1, 0}, us = {0, 0, 1}, big = {INT32_MAX, 0, 0};
    cr_expect_not(cm_ts_add_interval(INT64_MAX - 10, &day, 1, &out));
    cr_expect_not(cm_ts_add_interval(INT64_MAX, &us, 1, &out));
    cr_expect_not(cm_ts_add_interval(INT64_MIN, &us, -1, &out));
    cr_expect_not(cm_ts_add_interval(0, &big, 1, &out));
    cr_assert(cm_ts_add_interval(0, &us, -1, &out));
    cr_expect_eq(out, -1);
    CmInterval r, max_days = {0, INT32_MAX, 0};
    cr_expect_not(cm_interval_add(&max_days, &day, 1, &r));
    cr_expect_not(cm_interval_mul(&day, INT64_MAX, &r));
    cr_expect_not(cm_ts_diff(INT64_MAX, -1, &r));
    cr_assert(cm_ts_diff(0, 86400LL * 1000000 + 1, &r));
    cr_expect_eq(r.days, -1);
    cr_expect_eq(r.micros, -1);
    cr_expect_not(cm_ts_make(INT32_MAX, 0, &out));
    /* the earliest moments: their day's midnight is out of range, they are not */
    CmInterval hour = {0, 0, CM_US_PER_HOUR};
    cr_assert(cm_ts_add_interval(INT64_MIN + 1, &hour, 1, &out));
    cr_expect_eq(out, INT64_MIN + 1 + CM_US_PER_HOUR);
    int32_t days;
    int64_t t;
    cm_ts_split(INT64_MIN, &days, &t);
    cr_assert(cm_ts_make(days, t, &out));
    cr_expect_eq(out, INT64_MIN);
}

Test(cm_datetime, months_clamp)
{
    int32_t jan31, out, y, m, d;
    cm_date_from_ymd(2001, 1, 31, &jan31);
    cr_assert(cm_date_add_months(jan31, 1, &out));
    cm_date_to_ymd(out, &y, &m, &d);
    cr_expect(y == 2001 && m == 2 && d == 28);
    cr_assert(cm_date_add_months(jan31, -13, &out));
    cm_date_to_ymd(out, &y, &m, &d);
    cr_expect(y == 1999 && m == 12 && d == 31);
    cr_expect_not(cm_date_add_months(jan31, INT64_MAX, &out));
}
