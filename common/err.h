/*
 * err.h - status codes and the sticky error record (CmErr).
 *
 * Every fallible function returns CmStatus and takes `CmErr *err` as its last
 * parameter.  cm_err_set() is sticky: the first error wins and later calls do
 * nothing, so a cleanup path can never overwrite the root cause.  The message
 * lives in a fixed buffer so that an out-of-memory error can still be reported.
 * `off`/`len` locate the error in the SQL text (-1 when unknown); the CLI turns
 * them into "line L, column C" and a caret.  Library code never prints.
 * Thread-safety: a CmErr belongs to one thread; cross-thread errors are copied
 * into the query's global state under its lock.
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum CmStatus {
    CM_OK = 0,
    CM_SYNTAX,    /* the SQL text does not parse */
    CM_BIND,      /* unknown or ambiguous name, wrong argument count */
    CM_TYPE,      /* operands of incompatible types */
    CM_RUNTIME,   /* overflow, division by zero, bad cast, constraint */
    CM_LIMIT,     /* a built-in limit was exceeded */
    CM_IO,        /* a file could not be read or written */
    CM_OOM,       /* a reservation or allocation was refused */
    CM_CANCELLED, /* another worker failed first */
    CM_INTERNAL,  /* a bug: an invariant did not hold */
} CmStatus;

#define CM_ERR_MSG_CAP 256

typedef struct CmErr {
    CmStatus code;             /* CM_OK while no error was recorded */
    int64_t off;               /* byte offset in the SQL text, -1 if unknown */
    int64_t len;               /* byte length of the offending text, -1 if unknown */
    char msg[CM_ERR_MSG_CAP];  /* NUL-terminated message, without "Error: " */
} CmErr;

/* Resets `err` to "no error". */
void cm_err_init(CmErr *err);

/* Records an error unless one is already recorded (first error wins).
 * Returns `code`, so `return cm_err_set(...)` reads naturally. */
CmStatus cm_err_set(CmErr *err, CmStatus code, int64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Same as cm_err_set with a va_list. */
CmStatus cm_err_setv(CmErr *err, CmStatus code, int64_t off, const char *fmt, va_list ap);

/* Copies `src` into `dst` unless `dst` already holds an error. */
void cm_err_copy(CmErr *dst, const CmErr *src);

/* A short name for the status class, e.g. "Syntax", "Binder", "Runtime". */
const char *cm_status_name(CmStatus code);

/* Prints the message to stderr and aborts: only for impossible states. */
_Noreturn void cm_panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifndef NDEBUG
#define CM_ASSERT(cond)                                                                     \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            cm_panic("assertion failed: %s (%s:%d)", #cond, __FILE__, __LINE__);            \
        }                                                                                   \
    } while (0)
#else
#define CM_ASSERT(cond) ((void)0)
#endif
