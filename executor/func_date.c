/*
 * func_date.c - date functions: extract/date_part fields, the year/month/day
 * shorthands, and adding days or calendar months (an end-of-month date stays
 * within the shorter month: Jan 31 + 1 month = Feb 28/29, as in PostgreSQL).
 * A TIME has the fields hour..microsecond and epoch (seconds since midnight);
 * a DATE has them too, as midnight (0), as DuckDB reads a DATE as a timestamp.
 * A TIMESTAMP has every field (epoch in seconds with the fraction, a DOUBLE);
 * an INTERVAL has its parts' fields as DuckDB reads them (year is months / 12,
 * second the seconds within the minute, epoch counts a year as 365.25 days).
 */
#include <string.h>

#include "common/datetime.h"
#include "common/value.h"
#include "executor/func_int.h"

typedef enum DateField {
    F_YEAR, F_MONTH, F_DAY, F_QUARTER, F_DOW, F_DOY, F_WEEK, F_EPOCH, F_DECADE, F_CENTURY,
    F_HOUR, F_MINUTE, F_SECOND, F_MILLISECOND, F_MICROSECOND,
} DateField;

static const struct {
    const char *name;
    DateField field;
} FIELDS[] = {{"year", F_YEAR},       {"month", F_MONTH},     {"day", F_DAY},
              {"quarter", F_QUARTER}, {"dow", F_DOW},         {"dayofweek", F_DOW},
              {"doy", F_DOY},         {"dayofyear", F_DOY},   {"week", F_WEEK},
              {"epoch", F_EPOCH},     {"decade", F_DECADE},   {"century", F_CENTURY},
              {"hour", F_HOUR},       {"minute", F_MINUTE},   {"second", F_SECOND},
              {"millisecond", F_MILLISECOND},                 {"microsecond", F_MICROSECOND}};

static int64_t field_of(int32_t days, DateField f)
{
    int32_t y, m, d;
    cm_date_to_ymd(days, &y, &m, &d);
    switch (f) {
    case F_YEAR: return y;
    case F_MONTH: return m;
    case F_DAY: return d;
    case F_QUARTER: return (m - 1) / 3 + 1;
    case F_DOW: return ((int64_t)days % 7 + 7 + 4) % 7; /* 1970-01-01 was a Thursday; Sunday = 0 */
    case F_DOY: {
        int32_t jan1;
        cm_date_from_ymd(y, 1, 1, &jan1);
        return days - jan1 + 1;
    }
    case F_WEEK: {
        /* ISO 8601 week: the week with the year's first Thursday is week 1. */
        int64_t dow = (((int64_t)days % 7 + 7 + 3) % 7); /* Monday = 0 */
        int32_t thursday = (int32_t)(days - dow + 3), ty, tm, td, jan1;
        cm_date_to_ymd(thursday, &ty, &tm, &td);
        cm_date_from_ymd(ty, 1, 1, &jan1);
        return (thursday - jan1) / 7 + 1;
    }
    case F_EPOCH: return (int64_t)days * 86400;
    case F_DECADE: return y / 10;
    case F_CENTURY: return y > 0 ? (y - 1) / 100 + 1 : y / 100 - 1;
    case F_HOUR:
    case F_MINUTE:
    case F_SECOND:
    case F_MILLISECOND:
    case F_MICROSECOND: return 0;
    }
    return 0;
}

/* The field of a time of day in microseconds; -1 for a field a TIME lacks. */
static int64_t time_field_of(int64_t us, DateField f)
{
    switch (f) {
    case F_HOUR: return us / 3600000000;
    case F_MINUTE: return us / 60000000 % 60;
    case F_SECOND: return us / 1000000 % 60;
    case F_MILLISECOND: return us / 1000 % 60000;
    case F_MICROSECOND: return us % 60000000;
    default: return -1;
    }
}

static CmStatus extract_k(KERNEL_ARGS)
{
    const int32_t *a = args[e->n_args - 1]->data;
    int64_t *r = out->data;
    ex_and_validity(args + e->n_args - 1, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = field_of(a[p], (DateField)e->aux);
    }
    return CM_OK;
}

static CmStatus extract_time_k(KERNEL_ARGS)
{
    const int64_t *a = args[e->n_args - 1]->data;
    int64_t *r = out->data;
    ex_and_validity(args + e->n_args - 1, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = time_field_of(a[p], (DateField)e->aux);
    }
    return CM_OK;
}

/* epoch of a TIME: seconds since midnight with the fraction, as DuckDB. */
static CmStatus time_epoch_k(KERNEL_ARGS)
{
    const int64_t *a = args[e->n_args - 1]->data;
    double *r = out->data;
    ex_and_validity(args + e->n_args - 1, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = (double)a[p] / 1e6;
    }
    return CM_OK;
}

static CmStatus extract_ts_k(KERNEL_ARGS)
{
    const int64_t *a = args[e->n_args - 1]->data;
    int64_t *r = out->data;
    ex_and_validity(args + e->n_args - 1, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        int32_t days;
        int64_t t;
        cm_ts_split(a[p], &days, &t);
        int64_t f = time_field_of(t, (DateField)e->aux);
        r[p] = f >= 0 ? f : field_of(days, (DateField)e->aux);
    }
    return CM_OK;
}

/* The field of an interval; -1 for one it lacks (dow, doy, week). */
static int64_t interval_field_of(const CmInterval *iv, DateField f)
{
    int64_t years = iv->months / 12;
    switch (f) {
    case F_YEAR: return years;
    case F_MONTH: return iv->months % 12;
    case F_DAY: return iv->days;
    case F_QUARTER: return iv->months % 12 / 3 + 1;
    case F_DECADE: return years / 10;
    case F_CENTURY: return years / 100;
    case F_HOUR: return iv->micros / CM_US_PER_HOUR;
    case F_MINUTE: return iv->micros % CM_US_PER_HOUR / CM_US_PER_MIN;
    case F_SECOND: return iv->micros % CM_US_PER_MIN / CM_US_PER_SEC;
    case F_MILLISECOND: return iv->micros % CM_US_PER_MIN / 1000;
    case F_MICROSECOND: return iv->micros % CM_US_PER_MIN;
    default: return -1;
    }
}

static CmStatus extract_iv_k(KERNEL_ARGS)
{
    const CmInterval *a = args[e->n_args - 1]->data;
    int64_t *r = out->data;
    ex_and_validity(args + e->n_args - 1, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        r[p] = interval_field_of(&a[p], (DateField)e->aux);
    }
    return CM_OK;
}

/* epoch of a TIMESTAMP (seconds since 1970) or an INTERVAL (its length in
 * seconds, a year as 365.25 days and a month as 30, as DuckDB). */
static CmStatus epoch_dt_k(KERNEL_ARGS)
{
    double *r = out->data;
    const CmVec *v = args[e->n_args - 1];
    ex_and_validity(args + e->n_args - 1, 1, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (v->type.id == CM_T_TIMESTAMP) {
            r[p] = (double)((const int64_t *)v->data)[p] / 1e6;
            continue;
        }
        const CmInterval *iv = &((const CmInterval *)v->data)[p];
        double days = (double)(iv->months / 12) * 365.25 + (double)(iv->months % 12) * 30 + iv->days;
        r[p] = days * 86400.0 + (double)iv->micros / 1e6;
    }
    return CM_OK;
}

/* extract of a TIMESTAMP or INTERVAL field: the kernel for FIELDS[i]. */
static CmStatus resolve_dt_field(const char *name, DateField f, CmType t, int64_t off,
                                 ExFuncMatch *m, CmErr *err)
{
    m->arg_types[0] = t;
    m->result = cm_type_make(CM_T_INT64);
    m->aux = f;
    if (f == F_EPOCH) {
        m->result = cm_type_make(CM_T_DOUBLE);
        m->kernel = epoch_dt_k;
    } else if (t.id == CM_T_TIMESTAMP) {
        m->kernel = extract_ts_k;
    } else {
        CmInterval zero = {0, 0, 0};
        if (interval_field_of(&zero, f) < 0) {
            return cm_err_set(err, CM_BIND, off, "an INTERVAL has no field %s", name);
        }
        m->kernel = extract_iv_k;
    }
    return CM_OK;
}

/* date + n months, clamping the day to the target month's length. */
static bool add_months(int32_t days, int64_t months, int32_t *out)
{
    return cm_date_add_months(days, months, out);
}

static CmStatus add_months_k(KERNEL_ARGS)
{
    const int32_t *a = args[0]->data;
    const int64_t *n = args[1]->data;
    int32_t *r = out->data;
    ex_and_validity(args, 2, out);
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (!cm_vec_is_null(out, p) && !add_months(a[p], e->aux ? -n[p] : n[p], &r[p])) {
            return cm_err_set(err, CM_RUNTIME, e->src_off, "date out of range");
        }
    }
    return CM_OK;
}

CmStatus ex_resolve_date(const char *name, int n_args, const CmType *types, int64_t off,
                         ExFuncMatch *m, CmErr *err)
{
    CmType date = cm_type_make(CM_T_DATE), i64 = cm_type_make(CM_T_INT64);
    if (!strcmp(name, "add_months") || !strcmp(name, "sub_months")) {
        if (n_args != 2) {
            return EX_NOT_MINE;
        }
        m->arg_types[0] = m->result = date;
        m->arg_types[1] = i64;
        m->kernel = add_months_k;
        m->aux = name[0] == 's';
        return CM_OK;
    }
    /* year(d), month(d), ...: the shorthands of extract. */
    for (size_t i = 0; n_args == 1 && i < sizeof FIELDS / sizeof FIELDS[0]; i++) {
        if (!strcmp(name, FIELDS[i].name) &&
            (types[0].id == CM_T_TIMESTAMP || types[0].id == CM_T_INTERVAL)) {
            return resolve_dt_field(name, FIELDS[i].field, types[0], off, m, err);
        }
        if (!strcmp(name, FIELDS[i].name) && types[0].id == CM_T_TIME) {
            if (FIELDS[i].field == F_EPOCH) {
                m->arg_types[0] = types[0];
                m->result = cm_type_make(CM_T_DOUBLE);
                m->kernel = time_epoch_k;
                return CM_OK;
            }
            if (time_field_of(0, FIELDS[i].field) < 0) {
                return cm_err_set(err, CM_BIND, off, "a TIME has no field %s", name);
            }
            m->arg_types[0] = types[0];
            m->result = i64;
            m->kernel = extract_time_k;
            m->aux = FIELDS[i].field;
            return CM_OK;
        }
        if (!strcmp(name, FIELDS[i].name)) {
            m->arg_types[0] = date;
            m->result = i64;
            m->kernel = extract_k;
            m->aux = FIELDS[i].field;
            return CM_OK;
        }
    }
    return EX_NOT_MINE;
}

int ex_date_field(const char *name)
{
    for (size_t i = 0; i < sizeof FIELDS / sizeof FIELDS[0]; i++) {
        if (!strcmp(name, FIELDS[i].name)) {
            return (int)FIELDS[i].field;
        }
    }
    return -1;
}

ExKernel ex_extract_kernel(void)
{
    return extract_k;
}
