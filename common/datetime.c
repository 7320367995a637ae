/*
 * datetime.c - TIMESTAMP and INTERVAL text forms and checked arithmetic.
 *
 * Overflow is detected with the compiler's checked builtins on every step
 * that can leave its type, so no caller ever sees a wrapped value.
 */
#include "common/datetime.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static int64_t floor_div64(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

bool cm_ts_make(int64_t days, int64_t time_us, int64_t *ts)
{
    /* in 128 bits: the earliest day's midnight is below INT64_MIN while
     * moments later that day are not */
    CmInt128 r = (CmInt128)days * CM_US_PER_DAY + time_us;
    if (r < INT64_MIN || r > INT64_MAX) {
        return false;
    }
    *ts = (int64_t)r;
    return true;
}

int64_t cm_ts_now(void)
{
    struct timespec tp;
    clock_gettime(CLOCK_REALTIME, &tp);
    return (int64_t)tp.tv_sec * CM_US_PER_SEC + tp.tv_nsec / 1000;
}

void cm_ts_split(int64_t ts, int32_t *days, int64_t *time_us)
{
    /* remainder first: floor(ts / day) * day is below INT64_MIN for the
     * earliest timestamps */
    int64_t d = ts / CM_US_PER_DAY, t = ts % CM_US_PER_DAY;
    if (t < 0) {
        t += CM_US_PER_DAY;
        d--;
    }
    *days = (int32_t)d; /* |ts| / day < 2^27 */
    *time_us = t;
}

/* ".f" of the microseconds with trailing zeros dropped; 0 writes nothing. */
static int fmt_fraction(int64_t us, char *buf)
{
    if (us == 0) {
        return 0;
    }
    char digits[8];
    snprintf(digits, sizeof digits, "%06d", (int)us);
    int n = 6;
    while (digits[n - 1] == '0') {
        n--;
    }
    buf[0] = '.';
    memcpy(buf + 1, digits, (size_t)n);
    buf[n + 1] = '\0';
    return n + 1;
}

int cm_fmt_timestamp(int64_t ts, char *buf)
{
    int32_t days;
    int64_t t;
    cm_ts_split(ts, &days, &t);
    int n = cm_fmt_date(days, buf);
    int64_t secs = t / CM_US_PER_SEC;
    n += snprintf(buf + n, (size_t)(CM_FMT_CAP - n), " %02d:%02d:%02d", (int)(secs / 3600),
                  (int)(secs / 60 % 60), (int)(secs % 60));
    n += fmt_fraction(t % CM_US_PER_SEC, buf + n);
    return n;
}

static void trim(const char **s, size_t *len)
{
    while (*len > 0 && isspace((unsigned char)**s)) {
        (*s)++;
        (*len)--;
    }
    while (*len > 0 && isspace((unsigned char)(*s)[*len - 1])) {
        (*len)--;
    }
}

bool cm_parse_timestamp(const char *s, size_t len, int64_t *ts)
{
    trim(&s, &len);
    if (len >= 1 && (s[len - 1] == 'Z' || s[len - 1] == 'z')) {
        len--;
    } else if (len >= 3 && strncasecmp(s + len - 3, "UTC", 3) == 0) {
        len -= 3;
        while (len > 0 && s[len - 1] == ' ') {
            len--;
        }
    }
    size_t date_end = 1; /* past a leading sign of an expanded year */
    while (date_end < len && s[date_end] != ' ' && s[date_end] != 'T') {
        date_end++;
    }
    if (date_end > len) {
        return false;
    }
    int32_t days;
    if (!cm_parse_date(s, date_end, &days)) {
        return false;
    }
    int64_t t = 0;
    if (date_end < len) {
        const char *tp = s + date_end + 1;
        size_t tn = len - date_end - 1;
        /* cm_parse_time keeps 6 fraction digits and drops the rest */
        if (tn == 0 || isspace((unsigned char)*tp) || !cm_parse_time(tp, tn, &t)) {
            return false;
        }
    }
    return cm_ts_make(days, t, ts);
}

/* ---- INTERVAL ------------------------------------------------------------------ */

static int put_part(char *buf, int n, int64_t v, const char *unit)
{
    return n + snprintf(buf + n, (size_t)(CM_FMT_CAP - n), "%s%lld %s%s", n ? " " : "",
                        (long long)v, unit, v == 1 || v == -1 ? "" : "s");
}

int cm_fmt_interval(const CmInterval *iv, char *buf)
{
    int n = 0;
    buf[0] = '\0';
    int32_t years = iv->months / 12, months = iv->months % 12;
    if (years != 0) {
        n = put_part(buf, n, years, "year");
    }
    if (months != 0) {
        n = put_part(buf, n, months, "month");
    }
    if (iv->days != 0) {
        n = put_part(buf, n, iv->days, "day");
    }
    if (iv->micros != 0 || n == 0) {
        uint64_t us = iv->micros < 0 ? 0 - (uint64_t)iv->micros : (uint64_t)iv->micros;
        uint64_t secs = us / CM_US_PER_SEC;
        n += snprintf(buf + n, (size_t)(CM_FMT_CAP - n), "%s%s%02llu:%02d:%02d", n ? " " : "",
                      iv->micros < 0 ? "-" : "", (unsigned long long)(secs / 3600),
                      (int)(secs / 60 % 60), (int)(secs % 60));
        n += fmt_fraction((int64_t)(us % CM_US_PER_SEC), buf + n);
    }
    return n;
}

typedef enum UnitKind { U_MONTHS, U_DAYS, U_MICROS } UnitKind;

static const struct {
    const char *name;
    UnitKind kind;
    int64_t mult;
} UNITS[] = {
    {"millennium", U_MONTHS, 12000}, {"millennia", U_MONTHS, 12000},
    {"millenniums", U_MONTHS, 12000}, {"century", U_MONTHS, 1200},
    {"centuries", U_MONTHS, 1200},   {"decade", U_MONTHS, 120},
    {"decades", U_MONTHS, 120},      {"year", U_MONTHS, 12},
    {"years", U_MONTHS, 12},         {"y", U_MONTHS, 12},
    {"yr", U_MONTHS, 12},            {"yrs", U_MONTHS, 12},
    {"quarter", U_MONTHS, 3},        {"quarters", U_MONTHS, 3},
    {"month", U_MONTHS, 1},          {"months", U_MONTHS, 1},
    {"mon", U_MONTHS, 1},            {"mons", U_MONTHS, 1},
    {"week", U_DAYS, 7},             {"weeks", U_DAYS, 7},
    {"w", U_DAYS, 7},                {"day", U_DAYS, 1},
    {"days", U_DAYS, 1},             {"d", U_DAYS, 1},
    {"hour", U_MICROS, CM_US_PER_HOUR}, {"hours", U_MICROS, CM_US_PER_HOUR},
    {"h", U_MICROS, CM_US_PER_HOUR}, {"hr", U_MICROS, CM_US_PER_HOUR},
    {"hrs", U_MICROS, CM_US_PER_HOUR}, {"minute", U_MICROS, CM_US_PER_MIN},
    {"minutes", U_MICROS, CM_US_PER_MIN}, {"min", U_MICROS, CM_US_PER_MIN},
    {"mins", U_MICROS, CM_US_PER_MIN}, {"m", U_MICROS, CM_US_PER_MIN},
    {"second", U_MICROS, CM_US_PER_SEC}, {"seconds", U_MICROS, CM_US_PER_SEC},
    {"sec", U_MICROS, CM_US_PER_SEC}, {"secs", U_MICROS, CM_US_PER_SEC},
    {"s", U_MICROS, CM_US_PER_SEC},  {"millisecond", U_MICROS, 1000},
    {"milliseconds", U_MICROS, 1000}, {"ms", U_MICROS, 1000},
    {"msec", U_MICROS, 1000},        {"msecs", U_MICROS, 1000},
    {"microsecond", U_MICROS, 1},    {"microseconds", U_MICROS, 1},
    {"us", U_MICROS, 1},             {"usec", U_MICROS, 1},
    {"usecs", U_MICROS, 1},
};

static int find_unit(const char *u, size_t n)
{
    for (size_t i = 0; i < sizeof UNITS / sizeof UNITS[0]; i++) {
        if (strlen(UNITS[i].name) == n && strncasecmp(UNITS[i].name, u, n) == 0) {
            return (int)i;
        }
    }
    return -1;
}

static bool add32(int32_t *acc, int64_t v)
{
    int64_t r;
    if (__builtin_add_overflow((int64_t)*acc, v, &r) || r < INT32_MIN || r > INT32_MAX) {
        return false;
    }
    *acc = (int32_t)r;
    return true;
}

/* whole units plus a fraction in [0, 1) (both of the number's sign), carried
 * down: months to 30-day days, days to microseconds. */
static bool add_units(CmInterval *iv, int unit, int64_t whole, double frac)
{
    int64_t mult = UNITS[unit].mult, w;
    if (__builtin_mul_overflow(whole, mult, &w)) {
        return false;
    }
    double f = frac * (double)mult;
    switch (UNITS[unit].kind) {
    case U_MONTHS: {
        double fm = trunc(f), fd = (f - fm) * 30, fdd = trunc(fd);
        return add32(&iv->months, w + (int64_t)fm) && add32(&iv->days, (int64_t)fdd) &&
               !__builtin_add_overflow(iv->micros, (int64_t)llround((fd - fdd) * CM_US_PER_DAY),
                                       &iv->micros);
    }
    case U_DAYS: {
        double fd = trunc(f);
        return add32(&iv->days, w + (int64_t)fd) &&
               !__builtin_add_overflow(iv->micros, (int64_t)llround((f - fd) * CM_US_PER_DAY),
                                       &iv->micros);
    }
    case U_MICROS:
        return !__builtin_add_overflow(iv->micros, w, &iv->micros) &&
               !__builtin_add_overflow(iv->micros, (int64_t)llround(f), &iv->micros);
    }
    return false;
}

bool cm_interval_of_unit(int64_t n, const char *unit, size_t unit_len, CmInterval *out)
{
    int u = find_unit(unit, unit_len);
    memset(out, 0, sizeof *out);
    return u >= 0 && add_units(out, u, n, 0);
}

/* "[-]H:MM[:SS[.f]]" at s[*i..len) with the sign already read; into micros. */
static bool parse_clock(const char *s, size_t len, size_t *i, bool neg, int64_t *micros)
{
    int64_t h = 0;
    size_t start = *i;
    while (*i < len && isdigit((unsigned char)s[*i]) && *i - start < 12) {
        h = h * 10 + (s[(*i)++] - '0');
    }
    size_t rest = *i;
    while (rest < len && s[rest] != ' ') {
        rest++;
    }
    int64_t t;
    /* minutes and seconds as cm_parse_time reads them, after a 0 hour */
    char tmp[40];
    size_t tn = rest - *i;
    if (*i == start || tn + 1 >= sizeof tmp || s[*i] != ':') {
        return false;
    }
    tmp[0] = '0';
    memcpy(tmp + 1, s + *i, tn);
    if (!cm_parse_time(tmp, tn + 1, &t) || t >= CM_US_PER_HOUR) {
        return false;
    }
    int64_t v;
    if (__builtin_mul_overflow(h, CM_US_PER_HOUR, &v) || __builtin_add_overflow(v, t, &v)) {
        return false;
    }
    *micros = neg ? -v : v;
    *i = rest;
    return true;
}

bool cm_parse_interval(const char *s, size_t len, CmInterval *out)
{
    CmInterval iv = {0, 0, 0};
    size_t i = 0;
    int parts = 0;
    bool ago = false;
    trim(&s, &len);
    while (i < len) {
        if (s[i] == ' ') {
            i++;
            continue;
        }
        if (ago) {
            return false; /* "ago" ends the text */
        }
        if (len - i >= 3 && strncasecmp(s + i, "ago", 3) == 0 && (len - i == 3 || s[i + 3] == ' ') &&
            parts > 0) {
            ago = true;
            i += 3;
            continue;
        }
        bool neg = false;
        if (s[i] == '+' || s[i] == '-') {
            neg = s[i++] == '-';
        }
        size_t num = i;
        while (i < len && isdigit((unsigned char)s[i])) {
            i++;
        }
        if (i < len && s[i] == ':') {
            int64_t us;
            i = num;
            if (!parse_clock(s, len, &i, neg, &us) ||
                __builtin_add_overflow(iv.micros, us, &iv.micros)) {
                return false;
            }
            parts++;
            continue;
        }
        int64_t whole = 0;
        for (size_t k = num; k < i; k++) {
            if (__builtin_mul_overflow(whole, 10, &whole) ||
                __builtin_add_overflow(whole, s[k] - '0', &whole)) {
                return false;
            }
        }
        double frac = 0, scale = 0.1;
        bool has_digits = i > num;
        if (i < len && s[i] == '.') {
            for (i++; i < len && isdigit((unsigned char)s[i]); i++, scale /= 10) {
                frac += (s[i] - '0') * scale;
                has_digits = true;
            }
        }
        if (!has_digits) {
            return false;
        }
        while (i < len && s[i] == ' ') {
            i++;
        }
        size_t u = i;
        while (i < len && isalpha((unsigned char)s[i])) {
            i++;
        }
        /* a bare number is seconds, when it is the whole text ('5'), as DuckDB */
        bool bare = u == i && parts == 0 && i == len;
        int unit = bare ? find_unit("second", 6) : u == i ? -1 : find_unit(s + u, i - u);
        if (unit < 0 || (i < len && s[i] != ' ') ||
            !add_units(&iv, unit, neg ? -whole : whole, neg ? -frac : frac)) {
            return false;
        }
        parts++;
    }
    if (parts == 0) {
        return false;
    }
    if (ago) {
        CmInterval z = {0, 0, 0};
        if (!cm_interval_add(&z, &iv, -1, &iv)) {
            return false;
        }
    }
    *out = iv;
    return true;
}

CmInt128 cm_interval_span(const CmInterval *iv)
{
    return ((CmInt128)iv->months * 30 + iv->days) * CM_US_PER_DAY + iv->micros;
}

int cm_interval_cmp(const CmInterval *a, const CmInterval *b)
{
    CmInt128 x = cm_interval_span(a), y = cm_interval_span(b);
    return (x > y) - (x < y);
}

bool cm_date_add_months(int32_t days, int64_t months, int32_t *out)
{
    int32_t y, m, d;
    cm_date_to_ymd(days, &y, &m, &d);
    if (months < -120000000 || months > 120000000) {
        return false;
    }
    int64_t total = (int64_t)y * 12 + (m - 1) + months;
    int64_t ny = floor_div64(total, 12);
    int32_t nm = (int32_t)(total - ny * 12) + 1;
    if (ny < -5000000 || ny > 5000000) {
        return false;
    }
    while (d > 28 && !cm_date_from_ymd((int32_t)ny, nm, d, out)) {
        d--;
    }
    return cm_date_from_ymd((int32_t)ny, nm, d, out);
}

bool cm_ts_add_interval(int64_t ts, const CmInterval *iv, int sign, int64_t *out)
{
    int32_t days;
    int64_t t;
    cm_ts_split(ts, &days, &t);
    if (iv->months != 0 && !cm_date_add_months(days, (int64_t)sign * iv->months, &days)) {
        return false;
    }
    int64_t us;
    if (!cm_ts_make((int64_t)days + (int64_t)sign * iv->days, t, &us)) {
        return false;
    }
    if (sign < 0) {
        return !__builtin_sub_overflow(us, iv->micros, out);
    }
    return !__builtin_add_overflow(us, iv->micros, out);
}

bool cm_interval_add(const CmInterval *a, const CmInterval *b, int sign, CmInterval *out)
{
    CmInterval r = *a;
    if (!add32(&r.months, (int64_t)sign * b->months) || !add32(&r.days, (int64_t)sign * b->days)) {
        return false;
    }
    if (sign < 0 ? __builtin_sub_overflow(a->micros, b->micros, &r.micros)
                 : __builtin_add_overflow(a->micros, b->micros, &r.micros)) {
        return false;
    }
    *out = r;
    return true;
}

bool cm_interval_mul(const CmInterval *iv, int64_t k, CmInterval *out)
{
    int64_t m, d;
    CmInterval r;
    if (__builtin_mul_overflow((int64_t)iv->months, k, &m) || m < INT32_MIN || m > INT32_MAX ||
        __builtin_mul_overflow((int64_t)iv->days, k, &d) || d < INT32_MIN || d > INT32_MAX ||
        __builtin_mul_overflow(iv->micros, k, &r.micros)) {
        return false;
    }
    r.months = (int32_t)m;
    r.days = (int32_t)d;
    *out = r;
    return true;
}

bool cm_ts_diff(int64_t a, int64_t b, CmInterval *out)
{
    int64_t us;
    if (__builtin_sub_overflow(a, b, &us)) {
        return false;
    }
    out->months = 0;
    out->days = (int32_t)(us / CM_US_PER_DAY);
    out->micros = us % CM_US_PER_DAY;
    return true;
}
