/*
 * func_timestamp.c - TIMESTAMP and INTERVAL operators and functions (DuckDB's
 * names and answers):
 *
 *   ts +/- interval, date +/- interval     a TIMESTAMP (a DATE is its midnight)
 *   interval + ts, interval + date
 *   ts - ts                                an INTERVAL of days and microseconds
 *   interval +/- interval, interval * integer, integer * interval, -interval
 *   (now() and current_timestamp are constants the binder makes: bind_expr.c)
 *   date_trunc(part, ts)                   a TIMESTAMP (a DATE still gives a DATE)
 *   date_diff(part, a, b)                  part boundaries crossed from a to b
 *   date_add(ts, interval)                 ts + interval
 *   epoch(ts), epoch_ms(ts), epoch_us(ts)  seconds (DOUBLE), ms and us (BIGINT)
 *   epoch_ms(n), make_timestamp(us)        the TIMESTAMP n ms / us after 1970
 *   to_timestamp(seconds)                  DOUBLE seconds since 1970
 *   make_timestamp(y, m, d, h, mi, s)      an error for a moment that does not exist
 *   strftime(ts, fmt), strptime(text, fmt) C's conversions plus %f (microseconds)
 *   age(a, b)                              years, months and days from b to a
 *
 * Every result outside the TIMESTAMP range, and every INTERVAL part that would
 * leave its integer, is an error naming the operator; nothing wraps.
 */
#define _GNU_SOURCE /* strptime */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/datetime.h"
#include "common/value.h"
#include "executor/func_int.h"

static CmStatus out_of_range(const ExExpr *e, CmErr *err)
{
    return cm_err_set(err, CM_RUNTIME, e->src_off, "timestamp or interval out of range in '%s'",
                      e->name);
}

/* A binary kernel that may fail, over rows where both sides are valid. */
#define TS_BINARY(NAME, TA, TB, TR, BODY)                                                          \
    static CmStatus NAME(KERNEL_ARGS)                                                              \
    {                                                                                              \
        const TA *a = args[0]->data;                                                               \
        const TB *b = args[1]->data;                                                               \
        TR *r = out->data;                                                                         \
        (void)heap;                                                                                \
        ex_and_validity(args, 2, out);                                                             \
        for (int i = 0; i < in->n_rows; i++) {                                                     \
            uint32_t p = cm_batch_pos(in, i);                                                      \
            if (cm_vec_is_null(out, p)) {                                                          \
                continue;                                                                          \
            }                                                                                      \
            if (!(BODY)) {                                                                         \
                return out_of_range(e, err);                                                       \
            }                                                                                      \
        }                                                                                          \
        return CM_OK;                                                                              \
    }

/* e->aux is the sign of the interval (1 or -1) */
TS_BINARY(ts_add_iv, int64_t, CmInterval, int64_t,
          cm_ts_add_interval(a[p], &b[p], (int)e->aux, &r[p]))
TS_BINARY(ts_sub_ts, int64_t, int64_t, CmInterval, cm_ts_diff(a[p], b[p], &r[p]))
TS_BINARY(iv_add_iv, CmInterval, CmInterval, CmInterval,
          cm_interval_add(&a[p], &b[p], (int)e->aux, &r[p]))
TS_BINARY(iv_mul_i64, CmInterval, int64_t, CmInterval, cm_interval_mul(&a[p], b[p], &r[p]))

static CmStatus iv_neg(KERNEL_ARGS)
{
    const CmInterval *a = args[0]->data;
    CmInterval *r = out->data, zero = {0, 0, 0};
    (void)heap;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (!cm_vec_is_null(out, p) && !cm_interval_add(&zero, &a[p], -1, &r[p])) {
            return out_of_range(e, err);
        }
    }
    return CM_OK;
}

static bool is_dt(CmType t)
{
    return t.id == CM_T_TIMESTAMP || t.id == CM_T_INTERVAL;
}

CmStatus ex_resolve_ts_arith(char op, const CmType *t, int64_t off, ExFuncMatch *m, CmErr *err)
{
    CmType ts = cm_type_make(CM_T_TIMESTAMP), iv = cm_type_make(CM_T_INTERVAL);
    CmType i64 = cm_type_make(CM_T_INT64);
    if (op == 'n') {
        m->arg_types[0] = m->result = iv;
        m->kernel = iv_neg;
        return CM_OK;
    }
    if (!is_dt(t[0]) && !is_dt(t[1])) {
        return EX_NOT_MINE;
    }
    bool when0 = t[0].id == CM_T_TIMESTAMP || t[0].id == CM_T_DATE;
    bool when1 = t[1].id == CM_T_TIMESTAMP || t[1].id == CM_T_DATE;
    m->aux = 1;
    if (when0 && t[1].id == CM_T_INTERVAL && (op == '+' || op == '-')) {
        m->arg_types[0] = m->result = ts;
        m->arg_types[1] = iv;
        m->kernel = ts_add_iv;
        m->aux = op == '+' ? 1 : -1;
        return CM_OK;
    }
    if (t[0].id == CM_T_INTERVAL && when1 && op == '+') {
        m->arg_types[0] = iv;
        m->arg_types[1] = m->result = ts;
        m->kernel = ts_add_iv;
        m->swap_args = true;
        return CM_OK;
    }
    if (when0 && when1 && op == '-') {
        m->arg_types[0] = m->arg_types[1] = ts;
        m->result = iv;
        m->kernel = ts_sub_ts;
        return CM_OK;
    }
    if (t[0].id == CM_T_INTERVAL && t[1].id == CM_T_INTERVAL && (op == '+' || op == '-')) {
        m->arg_types[0] = m->arg_types[1] = m->result = iv;
        m->kernel = iv_add_iv;
        m->aux = op == '+' ? 1 : -1;
        return CM_OK;
    }
    if (op == '*' && ((t[0].id == CM_T_INTERVAL && cm_type_is_integer(t[1])) ||
                      (cm_type_is_integer(t[0]) && t[1].id == CM_T_INTERVAL))) {
        m->swap_args = t[1].id == CM_T_INTERVAL;
        m->arg_types[m->swap_args ? 1 : 0] = m->result = iv;
        m->arg_types[m->swap_args ? 0 : 1] = i64;
        m->kernel = iv_mul_i64;
        return CM_OK;
    }
    char a[32], b[32];
    return cm_err_set(err, CM_TYPE, off, "no operator %c for types %s and %s", op,
                      cm_type_name(t[0], a, sizeof a), cm_type_name(t[1], b, sizeof b));
}

/* ---- parts: date_trunc and date_diff ---------------------------------------------- */

typedef enum Part {
    P_MICROS,
    P_MILLIS,
    P_SECOND,
    P_MINUTE,
    P_HOUR,
    P_DAY,
    P_WEEK,
    P_MONTH,
    P_QUARTER,
    P_YEAR,
    P_DECADE,
    P_CENTURY,
    P_MILLENNIUM,
} Part;

static const struct {
    const char *name;
    Part part;
} PARTS[] = {
    {"microsecond", P_MICROS},
    {"microseconds", P_MICROS},
    {"us", P_MICROS},
    {"millisecond", P_MILLIS},
    {"milliseconds", P_MILLIS},
    {"ms", P_MILLIS},
    {"second", P_SECOND},
    {"seconds", P_SECOND},
    {"s", P_SECOND},
    {"minute", P_MINUTE},
    {"minutes", P_MINUTE},
    {"m", P_MINUTE},
    {"hour", P_HOUR},
    {"hours", P_HOUR},
    {"h", P_HOUR},
    {"day", P_DAY},
    {"days", P_DAY},
    {"d", P_DAY},
    {"week", P_WEEK},
    {"weeks", P_WEEK},
    {"w", P_WEEK},
    {"month", P_MONTH},
    {"months", P_MONTH},
    {"quarter", P_QUARTER},
    {"quarters", P_QUARTER},
    {"year", P_YEAR},
    {"years", P_YEAR},
    {"y", P_YEAR},
    {"decade", P_DECADE},
    {"decades", P_DECADE},
    {"century", P_CENTURY},
    {"centuries", P_CENTURY},
    {"millennium", P_MILLENNIUM},
};

/* e->args[0], a constant part name, into e->aux. */
static CmStatus prepare_part(CmArena *a, ExExpr *e, CmErr *err)
{
    (void)a;
    const ExExpr *p = e->args[0];
    if (p->kind != EX_E_CONST || p->value.is_null) {
        return cm_err_set(err, CM_TYPE, p->src_off, "the date part of %s must be a constant",
                          e->name);
    }
    const char *s = cm_str_data(&p->value.s);
    size_t n = p->value.s.len;
    for (size_t i = 0; i < sizeof PARTS / sizeof PARTS[0]; i++) {
        if (strlen(PARTS[i].name) == n && strncasecmp(PARTS[i].name, s, n) == 0) {
            e->aux = PARTS[i].part;
            return CM_OK;
        }
    }
    return cm_err_set(err, CM_TYPE, p->src_off, "unknown date part '%.*s' in %s", (int)n, s,
                      e->name);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static const int64_t PART_US[] = {1, 1000, CM_US_PER_SEC, CM_US_PER_MIN, CM_US_PER_HOUR};

/* The start of ts's part into *out; false when it lies before the earliest
 * TIMESTAMP. */
static bool trunc_ts(int64_t ts, Part part, int64_t *out)
{
    if (part <= P_HOUR) {
        int64_t r = ts % PART_US[part];
        return !__builtin_sub_overflow(ts, r < 0 ? r + PART_US[part] : r, out);
    }
    int32_t days, y, m, d, day;
    int64_t t;
    cm_ts_split(ts, &days, &t);
    cm_date_to_ymd(days, &y, &m, &d);
    day = days;
    switch (part) {
    case P_WEEK:
        day = (int32_t)(days - ((int64_t)days % 7 + 7 + 3) % 7);
        break;
    case P_MONTH:
        cm_date_from_ymd(y, m, 1, &day);
        break;
    case P_QUARTER:
        cm_date_from_ymd(y, (m - 1) / 3 * 3 + 1, 1, &day);
        break;
    case P_YEAR:
        cm_date_from_ymd(y, 1, 1, &day);
        break;
    case P_DECADE:
        cm_date_from_ymd(y - ((y % 10) + 10) % 10, 1, 1, &day);
        break;
    /* DuckDB's centuries and millennia start at years divisible by 100 and 1000 */
    case P_CENTURY:
        cm_date_from_ymd(y / 100 * 100, 1, 1, &day);
        break;
    case P_MILLENNIUM:
        cm_date_from_ymd(y / 1000 * 1000, 1, 1, &day);
        break;
    default:
        break;
    }
    return cm_ts_make(day, 0, out);
}

static CmStatus trunc_ts_k(KERNEL_ARGS)
{
    const int64_t *a = args[1]->data;
    int64_t *r = out->data;
    (void)heap;
    ex_and_validity(args + 1, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (!trunc_ts(a[p], (Part)e->aux, &r[p]) && !cm_vec_is_null(out, p)) {
            return out_of_range(e, err);
        }
    }
    return CM_OK;
}

/* The position of ts on the part's line, so that b - a counts the boundaries
 * crossed; weeks are whole 7-day spans between the days, as DuckDB. */
static int64_t ordinal(int64_t ts, Part part)
{
    if (part <= P_HOUR) {
        return floor_div(ts, PART_US[part]);
    }
    int32_t days, y, m, d;
    int64_t t;
    cm_ts_split(ts, &days, &t);
    cm_date_to_ymd(days, &y, &m, &d);
    switch (part) {
    case P_DAY:
    case P_WEEK:
        return days;
    case P_MONTH:
        return (int64_t)y * 12 + m;
    case P_QUARTER:
        return (int64_t)y * 4 + (m - 1) / 3;
    case P_YEAR:
        return y;
    case P_DECADE:
        return floor_div(y, 10);
    case P_CENTURY:
        return y > 0 ? (y - 1) / 100 : y / 100 - 1;
    case P_MILLENNIUM:
        return y > 0 ? (y - 1) / 1000 : y / 1000 - 1;
    default:
        return 0;
    }
}

static CmStatus diff_ts_k(KERNEL_ARGS)
{
    const int64_t *a = args[1]->data, *b = args[2]->data;
    int64_t *r = out->data;
    (void)heap;
    ex_and_validity(args + 1, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        if (__builtin_sub_overflow(ordinal(b[p], (Part)e->aux), ordinal(a[p], (Part)e->aux),
                                   &r[p])) {
            return out_of_range(e, err);
        }
        r[p] = e->aux == P_WEEK ? r[p] / 7 : r[p];
    }
    return CM_OK;
}

/* ---- epoch, conversions ------------------------------------------------------------ */

/* epoch_ms (aux 1000) and epoch_us (aux 1) of a TIMESTAMP: truncated toward
 * zero, as DuckDB. */
static CmStatus epoch_int_k(KERNEL_ARGS)
{
    const int64_t *a = args[0]->data;
    int64_t *r = out->data;
    (void)heap;
    (void)err;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = a[p] / e->aux;
    }
    return CM_OK;
}

/* epoch_ms(n) (aux 1000) and make_timestamp(us) (aux 1): n units after 1970. */
static CmStatus from_epoch_k(KERNEL_ARGS)
{
    const int64_t *a = args[0]->data;
    int64_t *r = out->data;
    (void)heap;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (!cm_vec_is_null(out, p) && __builtin_mul_overflow(a[p], e->aux, &r[p])) {
            return out_of_range(e, err);
        }
    }
    return CM_OK;
}

/* to_timestamp(seconds): rounded to the microsecond; NaN and infinities fail. */
static CmStatus to_timestamp_k(KERNEL_ARGS)
{
    const double *a = args[0]->data;
    int64_t *r = out->data;
    (void)heap;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        double us = nearbyint(a[p] * 1e6);
        if (!(us >= -9.2e18 && us <= 9.2e18)) {
            return out_of_range(e, err);
        }
        r[p] = (int64_t)us;
    }
    return CM_OK;
}

static CmStatus make_ts_k(KERNEL_ARGS)
{
    const int64_t *y = args[0]->data, *mo = args[1]->data, *d = args[2]->data;
    const int64_t *h = args[3]->data, *mi = args[4]->data;
    const double *s = args[5]->data;
    int64_t *r = out->data;
    (void)heap;
    ex_and_validity(args, 6, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        int32_t days;
        double us = nearbyint(s[p] * 1e6);
        bool ok =
            y[p] >= -5000000 && y[p] <= 5000000 && mo[p] >= 1 && mo[p] <= 12 && d[p] >= 1 &&
            d[p] <= 31 && h[p] >= 0 && h[p] < 24 && mi[p] >= 0 && mi[p] < 60 && us >= 0 &&
            us < 60e6 && cm_date_from_ymd((int32_t)y[p], (int32_t)mo[p], (int32_t)d[p], &days) &&
            cm_ts_make(days, h[p] * CM_US_PER_HOUR + mi[p] * CM_US_PER_MIN + (int64_t)us, &r[p]);
        if (!ok) {
            return cm_err_set(err, CM_RUNTIME, e->src_off,
                              "make_timestamp: %lld-%lld-%lld %lld:%lld:%g is not a timestamp",
                              (long long)y[p], (long long)mo[p], (long long)d[p], (long long)h[p],
                              (long long)mi[p], s[p]);
        }
    }
    return CM_OK;
}

/* ---- strftime, strptime ------------------------------------------------------------- */

/* fmt (n bytes) with each %f replaced by the 6-digit microseconds, NUL-ended
 * in buf; false when it does not fit. */
static bool expand_micros(const char *fmt, size_t n, int64_t us, char *buf, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (fmt[i] == '%' && i + 1 < n && fmt[i + 1] == 'f') {
            if (o + 7 > cap) {
                return false;
            }
            o += (size_t)snprintf(buf + o, cap - o, "%06d", (int)us);
            i++;
            continue;
        }
        if (fmt[i] == '%' && i + 1 < n && o + 2 < cap) {
            buf[o++] = fmt[i++]; /* %% stays %% for strftime */
        }
        if (o + 1 >= cap) {
            return false;
        }
        buf[o++] = fmt[i];
    }
    buf[o] = '\0';
    return true;
}

CmStatus ex_format_timestamp(int64_t ts, const CmStr *fmt, CmArena *heap, CmStr *out, int64_t off,
                             CmErr *err)
{
    char spec[512], buf[512];
    int32_t days, y, m, d, jan1;
    int64_t t;
    cm_ts_split(ts, &days, &t);
    if (!expand_micros(cm_str_data(fmt), fmt->len, t % CM_US_PER_SEC, spec, sizeof spec)) {
        return cm_err_set(err, CM_RUNTIME, off, "strftime: the format is too long");
    }
    cm_date_to_ymd(days, &y, &m, &d);
    cm_date_from_ymd(y, 1, 1, &jan1);
    int64_t secs = t / CM_US_PER_SEC;
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = m - 1,
                    .tm_mday = d,
                    .tm_hour = (int)(secs / 3600),
                    .tm_min = (int)(secs / 60 % 60),
                    .tm_sec = (int)(secs % 60),
                    .tm_wday = (int)(((int64_t)days % 7 + 7 + 4) % 7),
                    .tm_yday = days - jan1};
    size_t n = strftime(buf, sizeof buf, spec, &tm);
    if (n == 0 && spec[0] != '\0') {
        return cm_err_set(err, CM_RUNTIME, off, "strftime: the result is too long");
    }
    char *s = cm_arena_alloc(heap, n ? n : 1);
    if (s == NULL) {
        return cm_err_set(err, CM_OOM, off, "out of memory");
    }
    memcpy(s, buf, n);
    *out = cm_str_make(s, (uint32_t)n);
    return CM_OK;
}

static CmStatus strftime_ts_k(KERNEL_ARGS)
{
    const int64_t *a = args[0]->data;
    const CmStr *f = args[1]->data;
    CmStr *r = out->data;
    ex_and_validity(args, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (!cm_vec_is_null(out, p) &&
            ex_format_timestamp(a[p], &f[p], heap, &r[p], e->src_off, err) != CM_OK) {
            return err->code;
        }
    }
    return CM_OK;
}

/* Reads text by fmt with C's strptime, a %f at a time: each %f takes 1 to 6
 * digits as the fraction of the second (more digits are dropped). */
static bool parse_by_format(const char *text, const char *fmt, int64_t *out)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_mday = 1;
    int64_t frac = 0;
    char seg[512];
    const char *at = text;
    while (at != NULL) {
        const char *pct = strstr(fmt, "%f");
        size_t n = pct ? (size_t)(pct - fmt) : strlen(fmt);
        memcpy(seg, fmt, n);
        seg[n] = '\0';
        at = strptime(at, seg, &tm);
        if (at == NULL || pct == NULL) {
            break;
        }
        int digits = 0;
        for (frac = 0; *at >= '0' && *at <= '9'; at++, digits++) {
            frac = digits < 6 ? frac * 10 + (*at - '0') : frac;
        }
        if (digits == 0) {
            return false;
        }
        for (; digits < 6; digits++) {
            frac *= 10;
        }
        fmt = pct + 2;
    }
    int32_t days;
    if (at == NULL || *at != '\0' ||
        !cm_date_from_ymd(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, &days)) {
        return false;
    }
    return cm_ts_make(days,
                      (int64_t)tm.tm_hour * CM_US_PER_HOUR + tm.tm_min * CM_US_PER_MIN +
                          (int64_t)tm.tm_sec * CM_US_PER_SEC + frac,
                      out);
}

static CmStatus strptime_k(KERNEL_ARGS)
{
    const CmStr *a = args[0]->data, *f = args[1]->data;
    int64_t *r = out->data;
    (void)heap;
    ex_and_validity(args, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        char text[256], fmt[256];
        if (a[p].len >= sizeof text || f[p].len >= sizeof fmt) {
            return cm_err_set(err, CM_RUNTIME, e->src_off, "strptime: the text is too long");
        }
        memcpy(text, cm_str_data(&a[p]), a[p].len);
        text[a[p].len] = '\0';
        memcpy(fmt, cm_str_data(&f[p]), f[p].len);
        fmt[f[p].len] = '\0';
        if (!parse_by_format(text, fmt, &r[p])) {
            return cm_err_set(err, CM_RUNTIME, e->src_off,
                              "could not parse string '%s' according to format '%s'", text, fmt);
        }
    }
    return CM_OK;
}

/* ---- age --------------------------------------------------------------------------- */

/* a - b in years, months, days and time, borrowing from the larger parts as
 * PostgreSQL's age() does (a day borrowed is the length of b's month). */
static bool age_of(int64_t a, int64_t b, CmInterval *out)
{
    bool neg = a < b;
    if (neg) {
        int64_t t = a;
        a = b;
        b = t;
    }
    int32_t da, db, ya, ma, dya, yb, mb, dyb;
    int64_t ta, tb;
    cm_ts_split(a, &da, &ta);
    cm_ts_split(b, &db, &tb);
    cm_date_to_ymd(da, &ya, &ma, &dya);
    cm_date_to_ymd(db, &yb, &mb, &dyb);
    int64_t t = ta - tb, d = dya - dyb, m = ma - mb, y = (int64_t)ya - yb;
    if (t < 0) {
        t += CM_US_PER_DAY;
        d--;
    }
    if (d < 0) {
        static const int LEN[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        bool leap = (yb % 4 == 0 && yb % 100 != 0) || yb % 400 == 0;
        d += LEN[mb - 1] + (mb == 2 && leap);
        m--;
    }
    if (m < 0) {
        m += 12;
        y--;
    }
    if (y * 12 + m > INT32_MAX) {
        return false;
    }
    out->months = (int32_t)(neg ? -(y * 12 + m) : y * 12 + m);
    out->days = (int32_t)(neg ? -d : d);
    out->micros = neg ? -t : t;
    return true;
}

static CmStatus age_k(KERNEL_ARGS)
{
    const int64_t *a = args[0]->data, *b = args[1]->data;
    CmInterval *r = out->data;
    (void)heap;
    ex_and_validity(args, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (!cm_vec_is_null(out, p) && !age_of(a[p], b[p], &r[p])) {
            return out_of_range(e, err);
        }
    }
    return CM_OK;
}

/* ---- resolution -------------------------------------------------------------------- */

static bool has_ts(int n_args, const CmType *types)
{
    for (int i = 0; i < n_args; i++) {
        if (types[i].id == CM_T_TIMESTAMP) {
            return true;
        }
    }
    return false;
}

CmStatus ex_resolve_timestamp(const char *name, int n_args, const CmType *types, int64_t off,
                              ExFuncMatch *m, CmErr *err)
{
    CmType ts = cm_type_make(CM_T_TIMESTAMP), i64 = cm_type_make(CM_T_INT64);
    CmType text = cm_type_varchar(-1, false), f64 = cm_type_make(CM_T_DOUBLE);
    (void)off;
    (void)err;
    if (!strcmp(name, "date_trunc") && n_args == 2 && types[1].id == CM_T_TIMESTAMP) {
        m->arg_types[0] = text;
        m->arg_types[1] = m->result = ts;
        m->kernel = trunc_ts_k;
        m->prepare = prepare_part;
    } else if ((!strcmp(name, "date_diff") || !strcmp(name, "datediff")) && n_args == 3 &&
               has_ts(2, types + 1)) {
        m->arg_types[0] = text;
        m->arg_types[1] = m->arg_types[2] = ts;
        m->result = i64;
        m->kernel = diff_ts_k;
        m->prepare = prepare_part;
    } else if (!strcmp(name, "date_add") && n_args == 2) {
        m->arg_types[0] = m->result = ts;
        m->arg_types[1] = cm_type_make(CM_T_INTERVAL);
        m->kernel = ts_add_iv;
        m->aux = 1;
    } else if ((!strcmp(name, "epoch_ms") || !strcmp(name, "epoch_us")) && n_args == 1 &&
               (types[0].id == CM_T_TIMESTAMP || types[0].id == CM_T_DATE ||
                (types[0].id == CM_T_NULL && name[6] == 'u'))) {
        /* epoch_us has no other overload: a NULL is a TIMESTAMP (epoch_ms(NULL)
         * is the integer one below) */
        m->arg_types[0] = ts;
        m->result = i64;
        m->kernel = epoch_int_k;
        m->aux = name[6] == 'm' ? 1000 : 1;
    } else if ((!strcmp(name, "epoch_ms") && n_args == 1) ||
               (!strcmp(name, "make_timestamp") && n_args == 1)) {
        m->arg_types[0] = i64;
        m->result = ts;
        m->kernel = from_epoch_k;
        m->aux = name[0] == 'e' ? 1000 : 1;
    } else if (!strcmp(name, "to_timestamp") && n_args == 1) {
        m->arg_types[0] = f64;
        m->result = ts;
        m->kernel = to_timestamp_k;
    } else if (!strcmp(name, "make_timestamp") && n_args == 6) {
        for (int i = 0; i < 5; i++) {
            m->arg_types[i] = i64;
        }
        m->arg_types[5] = f64;
        m->result = ts;
        m->kernel = make_ts_k;
    } else if (!strcmp(name, "strftime") && n_args == 2 && types[0].id == CM_T_TIMESTAMP) {
        m->arg_types[0] = ts;
        m->arg_types[1] = m->result = text;
        m->kernel = strftime_ts_k;
    } else if (!strcmp(name, "strftime") && n_args == 2 && types[0].id == CM_T_VARCHAR &&
               types[1].id == CM_T_TIMESTAMP) {
        /* DuckDB's other order, strftime(format, timestamp). */
        m->arg_types[0] = m->result = text;
        m->arg_types[1] = ts;
        m->swap_args = true;
        m->kernel = strftime_ts_k;
    } else if (!strcmp(name, "strptime") && n_args == 2) {
        m->arg_types[0] = m->arg_types[1] = text;
        m->result = ts;
        m->kernel = strptime_k;
    } else if (!strcmp(name, "age") && n_args == 2) {
        m->arg_types[0] = m->arg_types[1] = ts;
        m->result = cm_type_make(CM_T_INTERVAL);
        m->kernel = age_k;
    } else {
        return EX_NOT_MINE;
    }
    return CM_OK;
}
