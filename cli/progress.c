/*
 * progress.c - the shell's progress bar (see progress.h).
 *
 * The line is " 45% ▕█████▍     ▏ stage 3/7 · 12.3 s · spilled 1.2 GB · stage 3:
 * join → broadcast", cut to the terminal's width.  The share is rounded down,
 * so 100% shows only when the engine says the statement is done.
 */
#include "cli/progress.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define BAR_CELLS 30 /* the bar's width on a terminal of 100 columns or more */

/* Eighths of a cell, from 1/8 to a full block. */
static const char *const EIGHTHS[] = {"▏", "▎", "▍", "▌", "▋", "▊", "▉", "█"};

/* "1.2 GB": bytes in the largest unit that keeps a number >= 1. */
static void format_bytes(int64_t bytes, char *buf, size_t cap)
{
    static const char *const units[] = {"bytes", "KB", "MB", "GB", "TB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
}

/* Appends the bar of `cells` cells filled to `fraction`. */
static size_t put_bar(double fraction, int cells, char *buf, size_t at, size_t cap)
{
    int eighths = (int)(fraction * cells * 8);
    at += (size_t)snprintf(buf + at, cap - at, "▕");
    for (int cell = 0; cell < cells && at < cap; cell++) {
        int left = eighths - cell * 8;
        const char *piece = left >= 8 ? EIGHTHS[7] : left > 0 ? EIGHTHS[left - 1] : " ";
        at += (size_t)snprintf(buf + at, cap - at, "%s", piece);
    }
    if (at < cap) {
        at += (size_t)snprintf(buf + at, cap - at, "▏");
    }
    return at < cap ? at : cap - 1;
}

/* Cuts buf to `cols` terminal columns (a UTF-8 character is one column: the
 * line holds no wide ones). */
static size_t cut_to_columns(char *buf, size_t len, int cols)
{
    int seen = 0;
    for (size_t i = 0; i < len; i++) {
        if (((unsigned char)buf[i] & 0xC0) != 0x80 && seen++ == cols) {
            buf[i] = '\0';
            return i;
        }
    }
    return len;
}

size_t cli_progress_format(const SluiceProgress *p, int cols, char *buf, size_t cap)
{
    int percent = (int)(p->fraction * 100);
    int cells = cols >= 100 ? BAR_CELLS : cols >= 70 ? 20 : cols >= 50 ? 10 : 0;
    size_t at = (size_t)snprintf(buf, cap, "%3d%% ", percent > 100 ? 100 : percent);
    if (cells > 0) {
        at = put_bar(p->fraction, cells, buf, at, cap);
    }
    if (p->stage > 0 && at < cap) {
        at += (size_t)snprintf(buf + at, cap - at, " stage %d/%d ·", p->stage, p->n_stages);
    }
    if (at < cap) {
        at += (size_t)snprintf(buf + at, cap - at, " %.1f s", (double)p->elapsed_ms / 1000);
    }
    if (p->spilled_bytes > 0 && at < cap) {
        char bytes[32];
        format_bytes(p->spilled_bytes, bytes, sizeof bytes);
        at += (size_t)snprintf(buf + at, cap - at, " · spilled %s", bytes);
    }
    if (p->decision[0] != '\0' && at < cap) {
        at += (size_t)snprintf(buf + at, cap - at, " · %s", p->decision);
    }
    at = at < cap ? at : cap - 1;
    return cut_to_columns(buf, at, cols);
}

/* The handler: redraws the line in place. */
static void draw(void *ctx, const SluiceProgress *p)
{
    CliProgress *bar = ctx;
    struct winsize size;
    int cols = ioctl(bar->fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? size.ws_col : 80;
    char line[1024];
    line[0] = '\r';
    /* one column short of the width: a line that fills it wraps on some terminals */
    size_t n = 1 + cli_progress_format(p, cols - 1, line + 1, sizeof line - 8);
    memcpy(line + n, "\033[K", 3); /* erase what a longer line left */
    if (write(bar->fd, line, n + 3) > 0) {
        bar->is_drawn = true;
    }
}

void cli_progress_install(CliState *st)
{
    st->progress.fd = isatty(STDERR_FILENO)   ? STDERR_FILENO
                      : isatty(STDOUT_FILENO) ? STDOUT_FILENO
                                              : -1;
    st->progress.is_drawn = false;
    if (st->progress.fd >= 0) {
        sluice_set_progress_handler(st->db, draw, &st->progress);
    }
}

void cli_progress_begin(CliState *st)
{
    if (st->progress.fd >= 0) {
        fflush(st->progress.fd == STDOUT_FILENO ? stdout : stderr);
    }
}

void cli_progress_end(CliState *st)
{
    if (st->progress.is_drawn) {
        static const char erase[] = "\r\033[K";
        (void)!write(st->progress.fd, erase, sizeof erase - 1);
        st->progress.is_drawn = false;
    }
}
