/*
 * dims_time.c - the calendar tables of tpcds_gen: date_dim (1900-01-02 ..
 * 2100-01-01, d_date_sk = Julian day number from 2415022, as dsdgen),
 * time_dim (one row per second of a day), and dbgen_version.
 *
 * Sequence columns follow dsdgen: d_month_seq = (year - 1900) * 12 + moy - 1
 * (so 1200 is January 2000), d_quarter_seq = (year - 1900) * 4 + qoy, and
 * weeks start on Sunday with week 1 holding 1900-01-02.  The "current" day is
 * 2003-01-08, the day after the last sale.  Everything is a pure function of
 * the row number; nothing here is random.
 */
#include <stdio.h>

#include "bench/tpcds/gen/gen.h"

#define DATE_SUNDAY_BEFORE_FIRST 2415020 /* 1899-12-31 */
#define DATE_CURRENT 2452648             /* 2003-01-08 */

static const char *const DAY_NAMES[7] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                         "Thursday", "Friday", "Saturday"};

/* US federal holidays: fixed dates and n-th weekdays. */
static bool is_holiday(int y, int m, int d)
{
    int dow = gen_dow(gen_jdn(y, m, d));
    int nth = (d - 1) / 7 + 1;
    bool is_last = d + 7 > gen_month_days(y, m);
    return (m == 1 && d == 1) || (m == 7 && d == 4) || (m == 11 && d == 11) ||
           (m == 12 && d == 25) || (m == 1 && dow == 1 && nth == 3) ||
           (m == 2 && dow == 1 && nth == 3) || (m == 5 && dow == 1 && is_last) ||
           (m == 9 && dow == 1 && nth == 1) || (m == 10 && dow == 1 && nth == 2) ||
           (m == 11 && dow == 4 && nth == 4);
}

static int64_t week_seq(int64_t jdn)
{
    return (jdn - DATE_SUNDAY_BEFORE_FIRST) / 7 + 1;
}

static int64_t same_day_last_year(int y, int m, int d)
{
    int last = gen_month_days(y - 1, m);
    return gen_jdn(y - 1, m, d < last ? d : last);
}

/* The d_current_* flags: day, week, month, quarter, year of DATE_CURRENT. */
static void current_flags(GenBuf *b, int64_t jdn, int y, int m)
{
    int cy, cm, cd;
    gen_civil(DATE_CURRENT, &cy, &cm, &cd);
    gen_flag(b, jdn == DATE_CURRENT);
    gen_flag(b, week_seq(jdn) == week_seq(DATE_CURRENT));
    gen_flag(b, y == cy && m == cm);
    gen_flag(b, y == cy && (m - 1) / 3 == (cm - 1) / 3);
    gen_flag(b, y == cy);
}

static void date_row(GenBuf *b, int64_t jdn)
{
    int y, m, d;
    gen_civil(jdn, &y, &m, &d);
    int dow = gen_dow(jdn);
    int qoy = (m - 1) / 3 + 1;
    int py, pm, pd;
    gen_civil(jdn - 1, &py, &pm, &pd);
    gen_int(b, jdn);
    gen_bkey(b, (uint64_t)jdn);
    gen_date(b, jdn);
    gen_int(b, (y - 1900) * 12 + m - 1);
    gen_int(b, week_seq(jdn));
    gen_int(b, (y - 1900) * 4 + qoy);
    gen_int(b, y);
    gen_int(b, dow);
    gen_int(b, m);
    gen_int(b, d);
    gen_int(b, qoy);
    gen_int(b, y);                    /* d_fy_year */
    gen_int(b, (y - 1900) * 4 + qoy); /* d_fy_quarter_seq */
    gen_int(b, week_seq(jdn));        /* d_fy_week_seq */
    gen_str(b, DAY_NAMES[dow]);
    gen_fmt(b, "%dQ%d", y, qoy);
    gen_flag(b, is_holiday(y, m, d));
    gen_flag(b, dow == 0 || dow == 6);
    gen_flag(b, is_holiday(py, pm, pd));
    gen_int(b, jdn - d + 1);                    /* d_first_dom */
    gen_int(b, jdn - d + gen_month_days(y, m)); /* d_last_dom */
    gen_int(b, same_day_last_year(y, m, d));
    gen_int(b, jdn - 91); /* d_same_day_lq */
    current_flags(b, jdn, y, m);
    gen_eol(b);
}

void gen_date_dim(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t i = first; i < end; i++) {
        date_row(b, GEN_DATE_FIRST + i);
    }
}

static const char *shift_of(int hour)
{
    return hour < 8 ? "third" : hour < 16 ? "first" : "second";
}

static const char *sub_shift_of(int hour)
{
    return hour < 6 ? "night" : hour < 12 ? "morning" : hour < 18 ? "afternoon" : "evening";
}

/* NULL outside meal hours (written as an empty field, as dsdgen does). */
static const char *meal_of(int hour)
{
    if (hour >= 6 && hour <= 8) {
        return "breakfast";
    }
    if (hour >= 11 && hour <= 13) {
        return "lunch";
    }
    if (hour >= 17 && hour <= 19) {
        return "dinner";
    }
    return NULL;
}

void gen_time_dim(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t t = first; t < end; t++) {
        int hour = (int)(t / 3600);
        gen_int(b, t);
        gen_bkey(b, (uint64_t)t + 1);
        gen_int(b, t);
        gen_int(b, hour);
        gen_int(b, t / 60 % 60);
        gen_int(b, t % 60);
        gen_str(b, hour < 12 ? "AM" : "PM");
        gen_str(b, shift_of(hour));
        gen_str(b, sub_shift_of(hour));
        gen_str(b, meal_of(hour));
        gen_eol(b);
    }
}

void gen_dbgen_version(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t i = first; i < end; i++) {
        gen_str(b, "sluice-gen 1.0");
        gen_date(b, DATE_CURRENT);
        gen_str(b, "00:00:00");
        gen_str(b, g->args);
        gen_eol(b);
    }
}
