/*
 * err.c - the sticky error record and the panic path.
 */
#include "common/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cm_err_init(CmErr *err)
{
    err->code = CM_OK;
    err->off = -1;
    err->len = -1;
    err->msg[0] = '\0';
}

CmStatus cm_err_setv(CmErr *err, CmStatus code, int64_t off, const char *fmt, va_list ap)
{
    if (err == NULL || err->code != CM_OK) {
        return code;
    }
    err->code = code;
    err->off = off;
    err->len = -1;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return code;
}

CmStatus cm_err_set(CmErr *err, CmStatus code, int64_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cm_err_setv(err, code, off, fmt, ap);
    va_end(ap);
    return code;
}

void cm_err_copy(CmErr *dst, const CmErr *src)
{
    if (dst->code == CM_OK && src->code != CM_OK) {
        *dst = *src;
    }
}

const char *cm_status_name(CmStatus code)
{
    switch (code) {
    case CM_OK: return "OK";
    case CM_SYNTAX: return "Syntax";
    case CM_BIND: return "Binder";
    case CM_TYPE: return "Type";
    case CM_RUNTIME: return "Runtime";
    case CM_LIMIT: return "Limit";
    case CM_IO: return "IO";
    case CM_OOM: return "Out of memory";
    case CM_CANCELLED: return "Cancelled";
    case CM_INTERNAL: return "Internal";
    }
    return "Unknown";
}

_Noreturn void cm_panic(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sluice: panic: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}
