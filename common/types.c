/*
 * types.c - logical type helpers.
 */
#include "common/types.h"

#include <stdio.h>

int cm_str_cmp(const CmStr *a, const CmStr *b)
{
    uint32_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(cm_str_data(a), cm_str_data(b), n);
    if (c != 0) {
        return c;
    }
    return a->len < b->len ? -1 : a->len > b->len;
}

CmType cm_type_make(CmTypeId id)
{
    CmType t = {.id = (uint8_t)id, .length = -1};
    if (id == CM_T_DECIMAL) {
        t.precision = 18;
        t.scale = 3;
    }
    return t;
}

CmType cm_type_decimal(int precision, int scale)
{
    CmType t = {.id = precision > 18 ? CM_T_DECIMAL128 : CM_T_DECIMAL,
                .precision = (uint8_t)precision,
                .scale = (uint8_t)scale,
                .length = -1};
    return t;
}

CmType cm_type_varchar(int32_t length, bool is_char)
{
    CmType t = {.id = CM_T_VARCHAR, .is_char = is_char, .length = length};
    return t;
}

CmType cm_type_list(CmType elem)
{
    CmType t = {.id = CM_T_LIST, .precision = elem.precision, .scale = elem.scale,
                .length = -1, .child = elem.id};
    return t;
}

CmType cm_type_elem(CmType list)
{
    if (list.child == CM_T_DECIMAL || list.child == CM_T_DECIMAL128) {
        return cm_type_decimal(list.precision, list.scale);
    }
    return cm_type_make((CmTypeId)list.child);
}

size_t cm_type_width(CmType t)
{
    switch ((CmTypeId)t.id) {
    case CM_T_NULL:
    case CM_T_BOOL: return 1;
    case CM_T_INT32:
    case CM_T_DATE: return 4;
    case CM_T_INT64:
    case CM_T_DECIMAL:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
    case CM_T_DOUBLE: return 8;
    case CM_T_INTERVAL: return sizeof(CmInterval);
    case CM_T_DECIMAL128:
        return sizeof(CmInt128);
    case CM_T_VARCHAR: return sizeof(CmStr);
    case CM_T_LIST: return sizeof(CmList);
    }
    return 8;
}

bool cm_type_eq(CmType a, CmType b)
{
    if (a.id != b.id) {
        return false;
    }
    if (a.id == CM_T_LIST) {
        return cm_type_eq(cm_type_elem(a), cm_type_elem(b));
    }
    if (cm_type_is_decimal(a)) {
        return a.precision == b.precision && a.scale == b.scale;
    }
    return true;
}

bool cm_type_is_numeric(CmType t)
{
    return t.id == CM_T_INT32 || t.id == CM_T_INT64 || t.id == CM_T_DOUBLE ||
           t.id == CM_T_DECIMAL || t.id == CM_T_DECIMAL128;
}

bool cm_type_is_integer(CmType t)
{
    return t.id == CM_T_INT32 || t.id == CM_T_INT64;
}

const char *cm_type_name(CmType t, char *buf, size_t cap)
{
    switch ((CmTypeId)t.id) {
    case CM_T_NULL: snprintf(buf, cap, "NULL"); break;
    case CM_T_BOOL: snprintf(buf, cap, "BOOLEAN"); break;
    case CM_T_INT32: snprintf(buf, cap, "INTEGER"); break;
    case CM_T_INT64: snprintf(buf, cap, "BIGINT"); break;
    case CM_T_DOUBLE: snprintf(buf, cap, "DOUBLE"); break;
    case CM_T_DECIMAL:
    case CM_T_DECIMAL128:
        snprintf(buf, cap, "DECIMAL(%d,%d)", t.precision, t.scale);
        break;
    case CM_T_DATE: snprintf(buf, cap, "DATE"); break;
    case CM_T_TIME: snprintf(buf, cap, "TIME"); break;
    case CM_T_TIMESTAMP: snprintf(buf, cap, "TIMESTAMP"); break;
    case CM_T_INTERVAL: snprintf(buf, cap, "INTERVAL"); break;
    case CM_T_VARCHAR:
        if (t.length >= 0) {
            snprintf(buf, cap, "%s(%d)", t.is_char ? "CHAR" : "VARCHAR", (int)t.length);
        } else {
            snprintf(buf, cap, "VARCHAR");
        }
        break;
    case CM_T_LIST: {
        char elem[32];
        cm_type_name(cm_type_elem(t), elem, sizeof elem);
        snprintf(buf, cap, "%s[]", elem);
        break;
    }
    }
    return buf;
}
