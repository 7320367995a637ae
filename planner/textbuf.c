/*
 * textbuf.c - the planner's growing text buffer (see textbuf.h).
 */
#include "planner/textbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"

void pl_text_put(PlTextBuf *t, const char *s, size_t n)
{
    if (t->is_oom || n == 0) {
        return;
    }
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->cap ? t->cap * 2 : 4096) + n;
        char *grown = cm_realloc(t->buf, cap);
        if (grown == NULL) {
            t->is_oom = true;
            return;
        }
        t->buf = grown;
        t->cap = cap;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

void pl_text_lit(PlTextBuf *t, const char *s)
{
    pl_text_put(t, s, strlen(s));
}

void pl_text_printf(PlTextBuf *t, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if ((size_t)n < sizeof tmp) {
        pl_text_put(t, tmp, (size_t)n);
        return;
    }
    char *big = cm_malloc((size_t)n + 1);
    if (big == NULL) {
        t->is_oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    pl_text_put(t, big, (size_t)n);
    cm_free(big);
}

char *pl_text_take(PlTextBuf *t)
{
    char *out = t->is_oom ? NULL : t->buf;
    if (t->is_oom) {
        cm_free(t->buf);
    }
    *t = (PlTextBuf){0};
    return out;
}
