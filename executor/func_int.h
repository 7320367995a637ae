/*
 * func_int.h - shared by the kernel files of executor/ (func.c, func_string.c,
 * func_text.c, func_math.c, ...).  Never included outside executor/.
 */
#pragma once

#include "executor/func.h"

#define KERNEL_ARGS                                                                                \
    const ExExpr *e, const CmBatch *in, const CmVec *const *args, CmVec *out, CmArena *heap,       \
        CmErr *err

/* Code points in the UTF-8 text s[0..n) (continuation bytes not counted). */
size_t ex_utf8_len(const char *s, size_t n);
/* Byte offset of code point k (0-based) of s[0..n), or n. */
size_t ex_utf8_offset(const char *s, size_t n, int64_t k);

/* out validity = AND of the arguments' validity (positions line up). */
void ex_and_validity(const CmVec *const *args, int n, CmVec *out);

/* strftime: ts (microseconds since 1970) formatted by C's strftime, each %f
 * being the microseconds (6 digits); the text goes into heap.  CM_RUNTIME
 * (at off) when the format or the result passes 500 bytes. */
CmStatus ex_format_timestamp(int64_t ts, const CmStr *fmt, CmArena *heap, CmStr *out, int64_t off,
                             CmErr *err);

/* Resolvers of the function families; each returns CM_OK with *m filled, or
 * CM_BIND when `name` is not one of its functions (nothing set in err), or an
 * error for a known function with wrong arguments. */
typedef CmStatus (*ExResolver)(const char *name, int n_args, const CmType *types, int64_t off,
                               ExFuncMatch *m, CmErr *err);
CmStatus ex_resolve_string(const char *name, int n_args, const CmType *types, int64_t off,
                           ExFuncMatch *m, CmErr *err);
CmStatus ex_resolve_date(const char *name, int n_args, const CmType *types, int64_t off,
                         ExFuncMatch *m, CmErr *err);
CmStatus ex_resolve_text(const char *name, int n_args, const CmType *types, int64_t off,
                         ExFuncMatch *m, CmErr *err);
CmStatus ex_resolve_misc(const char *name, int n_args, const CmType *types, int64_t off,
                         ExFuncMatch *m, CmErr *err);
CmStatus ex_resolve_format(const char *name, int n_args, const CmType *types, int64_t off,
                           ExFuncMatch *m, CmErr *err);
CmStatus ex_resolve_regex(const char *name, int n_args, const CmType *types, int64_t off,
                          ExFuncMatch *m, CmErr *err);
CmStatus ex_resolve_list(const char *name, int n_args, const CmType *types, int64_t off,
                         ExFuncMatch *m, CmErr *err);
CmStatus ex_resolve_math(const char *name, int n_args, const CmType *types, int64_t off,
                         ExFuncMatch *m, CmErr *err);
CmStatus ex_resolve_timestamp(const char *name, int n_args, const CmType *types, int64_t off,
                              ExFuncMatch *m, CmErr *err);
/* + - * over TIMESTAMP, INTERVAL and DATE with INTERVAL (op 'n' is unary minus
 * of an INTERVAL); EX_NOT_MINE when no operand is one of them. */
CmStatus ex_resolve_ts_arith(char op, const CmType *t, int64_t off, ExFuncMatch *m, CmErr *err);
CmStatus ex_resolve_calendar(const char *name, int n_args, const CmType *types, int64_t off,
                             ExFuncMatch *m, CmErr *err);

/* "not this family": the resolver did not recognize the name. */
#define EX_NOT_MINE ((CmStatus)-1)
