/*
 * value.c - typed access to result cells: int64, double, decimal, date,
 * string.
 *
 * Conversions are exact or refused (SLUICE_TYPE), as sluice.h documents: a
 * client that asks for an int64 never gets a truncated fraction.  NULL is
 * SLUICE_NULL with a zero value.  Strings handed out are copied into the
 * result's text arena, since a result in block mode may move the batch that
 * holds them.
 */
#include <math.h>
#include <string.h>

#include "api/api_int.h"
#include "common/value.h"

/* The cell's value: SLUICE_OK, SLUICE_NULL or SLUICE_RANGE. */
static int get(const SluiceResult *res, int64_t row, int col, CmValue *v)
{
    if (col < 0 || col >= sluice_result_column_count(res) || row < 0 ||
        row >= sluice_result_row_count(res)) {
        return SLUICE_RANGE;
    }
    api_cell(res, row, col, v);
    return v->is_null || v->type.id == CM_T_NULL ? SLUICE_NULL : SLUICE_OK;
}

int sluice_result_int64(const SluiceResult *res, int64_t row, int col, int64_t *out)
{
    CmValue v;
    *out = 0;
    int rc = get(res, row, col, &v);
    if (rc != SLUICE_OK) {
        return rc;
    }
    CmInt128 x;
    int scale;
    if (cm_value_exact(&v, &x, &scale)) {
        CmInt128 unit = cm_pow10_128(scale);
        if (x % unit != 0 || x / unit < INT64_MIN || x / unit > INT64_MAX) {
            return SLUICE_TYPE;
        }
        *out = (int64_t)(x / unit);
        return SLUICE_OK;
    }
    /* 2^63 is the first double past BIGINT */
    if (v.type.id == CM_T_DOUBLE && v.d == floor(v.d) && v.d >= -9223372036854775808.0 &&
        v.d < 9223372036854775808.0) {
        *out = (int64_t)v.d;
        return SLUICE_OK;
    }
    return SLUICE_TYPE;
}

int sluice_result_double(const SluiceResult *res, int64_t row, int col, double *out)
{
    CmValue v;
    *out = 0;
    int rc = get(res, row, col, &v);
    if (rc != SLUICE_OK) {
        return rc;
    }
    CmInt128 x;
    int scale;
    if (cm_value_exact(&v, &x, &scale)) {
        *out = (double)x / (double)cm_pow10_128(scale);
        return SLUICE_OK;
    }
    if (v.type.id == CM_T_DOUBLE) {
        *out = v.d;
        return SLUICE_OK;
    }
    return SLUICE_TYPE;
}

int sluice_result_decimal(const SluiceResult *res, int64_t row, int col, int64_t *value, int *scale)
{
    CmValue v;
    *value = 0;
    *scale = 0;
    int rc = get(res, row, col, &v);
    if (rc != SLUICE_OK) {
        return rc;
    }
    CmInt128 x;
    int s;
    if (v.type.id == CM_T_BOOL || !cm_value_exact(&v, &x, &s)) {
        return SLUICE_TYPE;
    }
    if (x < INT64_MIN || x > INT64_MAX) {
        return SLUICE_RANGE;
    }
    *value = (int64_t)x;
    *scale = s;
    return SLUICE_OK;
}

int sluice_result_date(const SluiceResult *res, int64_t row, int col, int32_t *days)
{
    CmValue v;
    *days = 0;
    int rc = get(res, row, col, &v);
    if (rc != SLUICE_OK) {
        return rc;
    }
    if (v.type.id != CM_T_DATE) {
        return SLUICE_TYPE;
    }
    *days = (int32_t)v.i;
    return SLUICE_OK;
}

const char *sluice_result_string(const SluiceResult *cres, int64_t row, int col, size_t *len)
{
    SluiceResult *res = (SluiceResult *)cres; /* the arena is not part of the value */
    CmValue v;
    *len = 0;
    if (get(res, row, col, &v) != SLUICE_OK) {
        return NULL;
    }
    if (v.type.id != CM_T_VARCHAR) {
        const char *text = sluice_result_text(res, row, col);
        *len = text != NULL ? strlen(text) : 0;
        return text;
    }
    char *copy = cm_arena_alloc(&res->text_arena, (size_t)v.s.len + 1);
    if (copy == NULL) {
        return NULL;
    }
    if (v.s.len > 0) {
        memcpy(copy, cm_str_data(&v.s), v.s.len);
    }
    copy[v.s.len] = '\0';
    *len = v.s.len;
    return copy;
}
