/*
 * func_date.c - date functions: extract/date_part fields, the year/month/day
 * shorthands, and adding days or calendar months (an end-of-month date stays
 * within the shorter month: Jan 31 + 1 month = Feb 28/29, as in PostgreSQL).
 * A TIME has the fields hour..microsecond and epoch (seconds since midnight);
 * a DATE has them too, as midnight (0), as DuckDB reads a DATE as a timestamp.
 */
#include <string.h>

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

/* date + n months, clamping the day to the target month's length. */
static bool add_months(int32_t days, int64_t months, int32_t *out)
{
    int32_t y, m, d;
    cm_date_to_ymd(days, &y, &m, &d);
    int64_t total = (int64_t)y * 12 + (m - 1) + months;
    int64_t ny = total >= 0 ? total / 12 : -((-total + 11) / 12);
    int32_t nm = (int32_t)(total - ny * 12) + 1;
    if (ny < -5000000 || ny > 5000000) {
        return false;
    }
    while (d > 28 && !cm_date_from_ymd((int32_t)ny, nm, d, out)) {
        d--;
    }
    return cm_date_from_ymd((int32_t)ny, nm, d, out);
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
