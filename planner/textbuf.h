/*
 * textbuf.h - a growing text buffer for the planner's documents: EXPLAIN's
 * JSON (explain.c) and the HTML stage timeline (timeline.c).
 *
 * Appends never fail visibly: the first allocation failure sets is_oom and
 * later appends do nothing, so a writer checks once at the end.  buf is
 * NUL-terminated whenever len > 0, and owned (cm_free) by whoever holds the
 * PlTextBuf.  Not thread-safe; one writer at a time.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct PlTextBuf {
    char *buf; /* owned; NULL until the first append */
    size_t len, cap;
    bool is_oom;
} PlTextBuf;

void pl_text_put(PlTextBuf *t, const char *s, size_t n);
void pl_text_lit(PlTextBuf *t, const char *s);
void pl_text_printf(PlTextBuf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The text, owned by the caller from now on (t is emptied); NULL on OOM or
 * when nothing was written. */
char *pl_text_take(PlTextBuf *t);
