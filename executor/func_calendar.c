/*
 * func_calendar.c - calendar functions over DATE (DuckDB's names):
 *
 *   date_trunc(part, d)     the first day of d's year, quarter, month, ISO week
 *                           (Monday) or d itself for 'day'; a DATE (DuckDB: a
 *                           TIMESTAMP at midnight; a TIMESTAMP argument goes to
 *                           func_timestamp.c)
 *   date_diff(part, a, b)   (also datediff) the part boundaries crossed from a to
 *                           b: days, months, quarters or years; for weeks, the
 *                           whole 7-day periods between them, as DuckDB
 *   make_date(y, m, d)      an error for a day that does not exist
 *   last_day(d)             the month's last day
 *   dayname(d), monthname(d)  English names
 *   strftime(d, format)     C's strftime on the date at midnight, C locale
 *   current_date            the day the statement is bound (UTC), a constant
 *
 * `part` must be a constant; prepare() reads it into e->aux once.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/datetime.h"
#include "common/value.h"
#include "executor/func_int.h"

typedef enum Part { P_DAY, P_WEEK, P_MONTH, P_QUARTER, P_YEAR, P_DECADE, P_CENTURY } Part;

static const struct {
    const char *name;
    Part part;
} PARTS[] = {{"day", P_DAY},         {"days", P_DAY},         {"week", P_WEEK},
             {"weeks", P_WEEK},      {"month", P_MONTH},      {"months", P_MONTH},
             {"quarter", P_QUARTER}, {"quarters", P_QUARTER}, {"year", P_YEAR},
             {"years", P_YEAR},      {"decade", P_DECADE},    {"century", P_CENTURY}};

/* e->args[0] as a date part, into e->aux. */
static CmStatus prepare_part(CmArena *a, ExExpr *e, CmErr *err)
{
    (void)a;
    const ExExpr *p = e->args[0];
    if (p->kind != EX_E_CONST || p->value.is_null) {
        return cm_err_set(err, CM_TYPE, p->src_off, "the date part of %s must be a constant",
                          e->name);
    }
    char part[16];
    size_t n = p->value.s.len;
    for (size_t i = 0; i < n && i < sizeof part - 1; i++) {
        char c = cm_str_data(&p->value.s)[i];
        part[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    part[n < sizeof part - 1 ? n : sizeof part - 1] = '\0';
    for (size_t i = 0; n < sizeof part && i < sizeof PARTS / sizeof PARTS[0]; i++) {
        if (strcmp(part, PARTS[i].name) == 0) {
            e->aux = PARTS[i].part;
            return CM_OK;
        }
    }
    return cm_err_set(err, CM_TYPE, p->src_off, "unknown date part '%.*s' in %s", (int)n,
                      cm_str_data(&p->value.s), e->name);
}

/* Monday = 0 */
static int64_t iso_dow(int32_t days)
{
    return ((int64_t)days % 7 + 7 + 3) % 7;
}

static int32_t trunc_to(int32_t days, Part part)
{
    int32_t y, m, d, out = days;
    cm_date_to_ymd(days, &y, &m, &d);
    switch (part) {
    case P_DAY:
        break;
    case P_WEEK:
        out = (int32_t)(days - iso_dow(days));
        break;
    case P_MONTH:
        cm_date_from_ymd(y, m, 1, &out);
        break;
    case P_QUARTER:
        cm_date_from_ymd(y, (m - 1) / 3 * 3 + 1, 1, &out);
        break;
    case P_YEAR:
        cm_date_from_ymd(y, 1, 1, &out);
        break;
    case P_DECADE:
        cm_date_from_ymd(y - ((y % 10) + 10) % 10, 1, 1, &out);
        break;
    case P_CENTURY:
        cm_date_from_ymd(y / 100 * 100, 1, 1, &out);
        break; /* DuckDB: 2000-01-01 */
    }
    return out;
}

static CmStatus trunc_k(KERNEL_ARGS)
{
    const int32_t *a = args[1]->data;
    int32_t *r = out->data;
    ex_and_validity(args + 1, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = trunc_to(a[p], (Part)e->aux);
    }
    (void)err;
    return CM_OK;
}

/* The position of a date on the part's line, so that b - a counts boundaries. */
static int64_t ordinal(int32_t days, Part part)
{
    int32_t y, m, d;
    cm_date_to_ymd(days, &y, &m, &d);
    switch (part) {
    case P_DAY:
        return days;
    case P_WEEK:
        return days; /* diff_k: whole weeks between, as DuckDB */
    case P_MONTH:
        return (int64_t)y * 12 + m;
    case P_QUARTER:
        return (int64_t)y * 4 + (m - 1) / 3;
    case P_YEAR:
        return y;
    case P_DECADE:
        return (y - ((y % 10) + 10) % 10) / 10;
    case P_CENTURY:
        return y > 0 ? (y - 1) / 100 : y / 100 - 1;
    }
    return 0;
}

static CmStatus diff_k(KERNEL_ARGS)
{
    const int32_t *a = args[1]->data, *b = args[2]->data;
    int64_t *r = out->data;
    ex_and_validity(args + 1, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = ordinal(b[p], (Part)e->aux) - ordinal(a[p], (Part)e->aux);
        r[p] = e->aux == P_WEEK ? r[p] / 7 : r[p];
    }
    (void)err;
    return CM_OK;
}

static CmStatus make_date_k(KERNEL_ARGS)
{
    const int64_t *y = args[0]->data, *m = args[1]->data, *d = args[2]->data;
    int32_t *r = out->data;
    ex_and_validity(args, 3, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p)) {
            continue;
        }
        if (y[p] < -5000000 || y[p] > 5000000 || m[p] < 1 || m[p] > 12 || d[p] < 1 || d[p] > 31 ||
            !cm_date_from_ymd((int32_t)y[p], (int32_t)m[p], (int32_t)d[p], &r[p])) {
            return cm_err_set(err, CM_RUNTIME, e->src_off,
                              "make_date: %lld-%lld-%lld is not a date", (long long)y[p],
                              (long long)m[p], (long long)d[p]);
        }
    }
    return CM_OK;
}

static CmStatus last_day_k(KERNEL_ARGS)
{
    const int32_t *a = args[0]->data;
    int32_t *r = out->data;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        int32_t y, m, d, first;
        cm_date_to_ymd(a[p], &y, &m, &d);
        cm_date_from_ymd(m == 12 ? y + 1 : y, m == 12 ? 1 : m + 1, 1, &first);
        r[p] = first - 1;
    }
    (void)err;
    return CM_OK;
}

static const char *const DAYS[7] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                    "Friday", "Saturday", "Sunday"};
static const char *const MONTHS[12] = {"January",   "February", "March",    "April",
                                       "May",       "June",     "July",     "August",
                                       "September", "October",  "November", "December"};

/* dayname (aux 0) and monthname (aux 1): the names are static, never freed. */
static CmStatus name_k(KERNEL_ARGS)
{
    const int32_t *a = args[0]->data;
    CmStr *r = out->data;
    ex_and_validity(args, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        int32_t y, m, d;
        cm_date_to_ymd(a[p], &y, &m, &d);
        const char *s = e->aux ? MONTHS[m - 1] : DAYS[iso_dow(a[p])];
        r[p] = cm_str_make(s, (uint32_t)strlen(s));
    }
    (void)err;
    return CM_OK;
}

/* strftime of a DATE: that of the TIMESTAMP at its midnight, as in DuckDB. */
static CmStatus strftime_k(KERNEL_ARGS)
{
    const int32_t *a = args[0]->data;
    const CmStr *f = args[1]->data;
    CmStr *r = out->data;
    ex_and_validity(args, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (!cm_vec_is_null(out, p) && ex_format_timestamp((int64_t)a[p] * CM_US_PER_DAY, &f[p],
                                                           heap, &r[p], e->src_off, err) != CM_OK) {
            return err->code;
        }
    }
    return CM_OK;
}

/* current_date: the day the statement is bound, UTC; folded to a constant. */
static CmStatus today_k(KERNEL_ARGS)
{
    int32_t *r = out->data;
    time_t now = time(NULL);
    (void)args;
    (void)e;
    (void)err;
    for (int i = 0; i < in->n_rows; i++) {
        r[cm_batch_pos(in, i)] = (int32_t)(now / 86400);
    }
    return CM_OK;
}

CmStatus ex_resolve_calendar(const char *name, int n_args, const CmType *types, int64_t off,
                             ExFuncMatch *m, CmErr *err)
{
    CmType date = cm_type_make(CM_T_DATE), i64 = cm_type_make(CM_T_INT64);
    CmType text = cm_type_varchar(-1, false);
    (void)types;
    (void)off;
    (void)err;
    if (!strcmp(name, "date_trunc") && n_args == 2) {
        m->arg_types[0] = text;
        m->arg_types[1] = m->result = date;
        m->kernel = trunc_k;
        m->prepare = prepare_part;
    } else if ((!strcmp(name, "date_diff") || !strcmp(name, "datediff")) && n_args == 3) {
        m->arg_types[0] = text;
        m->arg_types[1] = m->arg_types[2] = date;
        m->result = i64;
        m->kernel = diff_k;
        m->prepare = prepare_part;
    } else if (!strcmp(name, "make_date") && n_args == 3) {
        m->arg_types[0] = m->arg_types[1] = m->arg_types[2] = i64;
        m->result = date;
        m->kernel = make_date_k;
    } else if (!strcmp(name, "last_day") && n_args == 1) {
        m->arg_types[0] = m->result = date;
        m->kernel = last_day_k;
    } else if ((!strcmp(name, "dayname") || !strcmp(name, "monthname")) && n_args == 1) {
        m->arg_types[0] = date;
        m->result = text;
        m->kernel = name_k;
        m->aux = name[0] == 'm';
    } else if (!strcmp(name, "strftime") && n_args == 2) {
        /* strftime(date, format), or DuckDB's other order strftime(format, date). */
        m->swap_args = types[0].id == CM_T_VARCHAR && types[1].id == CM_T_DATE;
        m->arg_types[m->swap_args] = date;
        m->arg_types[!m->swap_args] = m->result = text;
        m->kernel = strftime_k;
    } else if ((!strcmp(name, "current_date") || !strcmp(name, "today")) && n_args == 0) {
        m->result = date;
        m->kernel = today_k;
    } else {
        return EX_NOT_MINE;
    }
    return CM_OK;
}
