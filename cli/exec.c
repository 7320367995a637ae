/*
 * exec.c - the statement runner of the `sluice` shell (see exec.h).
 *
 * Invariant: a CliFeed's buffer starts at the beginning of a line of its unit,
 * so a position the engine reports relative to the buffer (line, column) maps
 * to the unit by adding buf_line - 1 to the line alone.  A buffer is run as a
 * whole: every statement in it runs, one sluice_exec_next call each, and the
 * buffer empties.  Blank and `--` comment lines fed while nothing is pending are
 * dropped, so they never hold back a dot command.
 */
#include "cli/exec.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/dot.h"
#include "cli/explain.h"
#include "cli/interrupt.h"
#include "cli/output.h"
#include "cli/progress.h"

/* Wall-clock and CPU time at the start of a statement, for .timer. */
typedef struct CliClock {
    struct timespec real; /* CLOCK_MONOTONIC */
    struct rusage usage;  /* RUSAGE_SELF: every thread of the process, workers included */
} CliClock;

/* ---------------------------------------------------------------- failures */

static void mark_failed(CliState *st)
{
    st->has_failed = true;
    if (st->is_bail && !st->is_interactive) {
        st->is_done = true;
    }
}

/* Flushes the result stream, so whatever goes to stderr next comes after it. */
static void flush_out(CliState *st)
{
    fflush(st->out != NULL ? st->out : stdout);
    fflush(stdout);
}

void cli_exec_error(CliState *st, const char *fmt, ...)
{
    va_list ap;

    flush_out(st);
    fputs("Error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    mark_failed(st);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static void put_spaces(FILE *out, size_t count)
{
    for (size_t idx = 0; idx < count; idx++) {
        fputc(' ', out);
    }
}

/* Start of the line holding byte `pos` of sql. */
static size_t line_start_at(const char *sql, size_t pos)
{
    while (pos > 0 && sql[pos - 1] != '\n') {
        pos--;
    }
    return pos;
}

/* Start of the 1-based line `line` of sql[0..len), or len when it has fewer lines. */
static size_t line_start_of(const char *sql, size_t len, int line)
{
    size_t pos = 0;

    for (int line_idx = 1; line_idx < line; line_idx++) {
        const char *nl = memchr(sql + pos, '\n', len - pos);
        if (nl == NULL) {
            return len;
        }
        pos = (size_t)(nl - sql) + 1;
    }
    return pos;
}

/* Where an error is, as the shell reports it. */
typedef struct CliPos {
    size_t start; /* byte offset of its line's start in the buffer */
    size_t end;   /* byte offset of its line's end (before "\r\n" or "\n") */
    size_t caret; /* byte offset of the error, start <= caret <= end */
    int line;     /* 1-based line in the buffer */
    int column;   /* 1-based, in characters (not bytes) */
} CliPos;

/* Locates err in the buffer sql[0..len). */
static void locate(const SluiceError *err, const char *sql, size_t len, CliPos *pos)
{
    if (err->offset >= 0 && (uint64_t)err->offset <= len) {
        pos->caret = (size_t)err->offset;
        pos->start = line_start_at(sql, pos->caret);
    } else {
        pos->start = line_start_of(sql, len, err->line);
        pos->caret = pos->start + (size_t)(err->column > 0 ? err->column - 1 : 0);
    }
    pos->end = pos->start;
    while (pos->end < len && sql[pos->end] != '\n') {
        pos->end++;
    }
    if (pos->end > pos->start && sql[pos->end - 1] == '\r') {
        pos->end--;
    }
    pos->caret = pos->caret > pos->end ? pos->end : pos->caret;
    pos->line = err->line;
    pos->column = 1;
    for (size_t at = pos->start; at < pos->caret; at++) {
        pos->column += ((unsigned char)sql[at] & 0xC0) != 0x80; /* UTF-8 lead bytes only */
    }
}

/* Prints the source line holding the error and a caret under its position. Tabs
 * stay tabs and the caret is indented by the display width of the text before
 * it (a CJK character takes two columns), so it lines up on a terminal. */
static void print_caret(const char *sql, const CliPos *pos)
{
    fprintf(stderr, "  %.*s\n  ", (int)(pos->end - pos->start), sql + pos->start);
    size_t from = pos->start;
    for (size_t at = pos->start; at <= pos->caret; at++) {
        if (at == pos->caret || sql[at] == '\t') {
            put_spaces(stderr, cli_output_width(sql + from, at - from));
            if (at < pos->caret) {
                fputc('\t', stderr);
            }
            from = at + 1;
        }
    }
    fputs("^\n", stderr);
}

/* The offset of the first token at or after sql[off]: white space and comments skipped. */
static size_t skip_blank(const char *sql, size_t len, size_t off)
{
    for (;;) {
        while (off < len && is_space(sql[off])) {
            off++;
        }
        if (off + 1 < len && sql[off] == '-' && sql[off + 1] == '-') {
            while (off < len && sql[off] != '\n') {
                off++;
            }
        } else if (off + 1 < len && sql[off] == '/' && sql[off + 1] == '*') {
            const char *close = NULL;
            for (size_t at = off + 2; at + 1 < len && close == NULL; at++) {
                close = sql[at] == '*' && sql[at + 1] == '/' ? sql + at : NULL;
            }
            off = close != NULL ? (size_t)(close - sql) + 2 : len;
        } else {
            return off;
        }
    }
}

/* Reports an engine error for the statement at sql[stmt..) of the buffer
 * sql[0..len) of feed.  The line counts from the start of the unit, from the
 * statement's first line in the REPL, and a file names itself. */
static void report_error(CliState *st, const CliFeed *feed, const SluiceError *err, const char *sql,
                         size_t len, size_t stmt)
{
    CliPos pos;

    if (err->line <= 0) {
        cli_exec_error(st, "%s", err->message);
        return;
    }
    locate(err, sql, len, &pos);
    int line = feed->buf_line + pos.line - 1;
    if (feed->is_repl) {
        int stmt_line = 1;
        for (size_t at = 0; at < skip_blank(sql, len, stmt); at++) {
            stmt_line += sql[at] == '\n';
        }
        line = pos.line >= stmt_line ? pos.line - stmt_line + 1 : 1;
    }
    flush_out(st);
    if (feed->path != NULL) {
        fprintf(stderr, "Error: %s:%d:%d: %s\n", feed->path, line, pos.column, err->message);
    } else {
        fprintf(stderr, "Error: line %d, column %d: %s\n", line, pos.column, err->message);
    }
    print_caret(sql, &pos);
    mark_failed(st);
}

/* ---------------------------------------------------------------- statements */

static void clock_start(CliClock *clock)
{
    clock_gettime(CLOCK_MONOTONIC, &clock->real);
    getrusage(RUSAGE_SELF, &clock->usage);
}

static double timeval_diff(struct timeval from, struct timeval to)
{
    return (double)(to.tv_sec - from.tv_sec) + (double)(to.tv_usec - from.tv_usec) / 1e6;
}

static void clock_report(CliState *st, const CliClock *clock)
{
    CliClock now;

    clock_start(&now);
    double real = (double)(now.real.tv_sec - clock->real.tv_sec) +
                  (double)(now.real.tv_nsec - clock->real.tv_nsec) / 1e9;
    flush_out(st);
    fprintf(stderr, "Run Time: real %.3f user %.3f sys %.3f\n", real,
            timeval_diff(clock->usage.ru_utime, now.usage.ru_utime),
            timeval_diff(clock->usage.ru_stime, now.usage.ru_stime));
}

/* Prints a statement's text as written, without the white space around it. */
static void echo_statement(FILE *out, const char *text, size_t len)
{
    while (len > 0 && is_space(text[0])) {
        text++;
        len--;
    }
    while (len > 0 && is_space(text[len - 1])) {
        len--;
    }
    fprintf(out, "%.*s\n", (int)len, text);
}

/* Keeps the text of the statement that ran, for .edit (out of memory keeps none). */
static void remember_statement(CliState *st, const char *text, size_t len)
{
    while (len > 0 && is_space(text[len - 1])) {
        len--;
    }
    free(st->last_sql);
    st->last_sql = strndup(text, len);
}

/* Runs the statement at sql[*off..len) and prints its outcome. Returns false when
 * only white space and comments remained (nothing ran).  --echo prints the text
 * once the engine has said where the statement ends (*off), still ahead of the
 * statement's result or error.  A pending .once file takes this statement's
 * output and is closed after it; a pending .timeline file takes its timeline
 * (the statement runs under EXPLAIN (ANALYZE, FORMAT HTML)).  Under .explain
 * on, its plan prints first. */
static bool run_next(CliState *st, const CliFeed *feed, const char *sql, size_t len, size_t *off)
{
    SluiceResult *res = NULL;
    SluiceError err;
    CliClock clock;
    size_t start = *off;

    memset(&err, 0, sizeof err);
    size_t tok = skip_blank(sql, len, start);
    SluiceResult *plan = st->is_explain ? cli_explain_plan(st, sql, len, tok) : NULL;
    char *timeline = tok < len ? st->timeline_path : NULL;
    st->timeline_path = timeline != NULL ? NULL : st->timeline_path;
    clock_start(&clock);
    cli_progress_begin(st);
    cli_interrupt_begin();
    int rc = timeline != NULL
                 ? cli_explain_exec(st, CLI_TIMELINE_PREFIX, sql, len, tok, off, &res, &err)
                 : sluice_exec_next(st->db, sql, len, off, &res, &err);
    cli_progress_end(st);
    if (cli_interrupt_end() && !st->is_interactive) {
        st->is_done = true; /* an interrupted script stops (main exits 130) */
        st->is_interrupted = true;
    }
    if (rc == 0 && res == NULL) {
        sluice_result_free(plan);
        st->timeline_path = timeline; /* nothing ran: still for the next statement */
        return false;
    }
    if (*off <= start || *off > len) {
        *off = len; /* no progress: never loop on the same text */
    }
    remember_statement(st, sql + tok, *off > tok ? *off - tok : 0);
    FILE *out = st->once != NULL ? st->once : st->out;
    if (st->is_echo) {
        echo_statement(out, sql + start, *off - start);
    }
    if (plan != NULL) {
        cli_explain_print(plan, out);
        sluice_result_free(plan);
    }
    if (rc != 0) {
        report_error(st, feed, &err, sql, len, start);
    } else if (timeline != NULL) {
        cli_explain_write(st, res, timeline);
    } else {
        cli_output_result(st, res, out);
        if (sluice_result_error(res, &err) != 0) {
            report_error(st, feed, &err, sql, len, start);
        }
    }
    sluice_result_free(res);
    if (st->once != NULL) {
        if (fclose(st->once) != 0) {
            st->once = NULL;
            cli_exec_error(st, "cannot write the .once file: %s", strerror(errno));
        }
        st->once = NULL;
    }
    flush_out(st);
    if (st->is_timer) {
        clock_report(st, &clock);
    }
    free(timeline);
    return true;
}

/* Runs every statement of the buffer of feed. */
static void run_buffer(CliState *st, const CliFeed *feed)
{
    size_t off = 0;

    while (off < feed->len && !st->is_done) {
        if (!run_next(st, feed, feed->buf, feed->len, &off)) {
            break;
        }
    }
}

/* ---------------------------------------------------------------- feeding lines */

void cli_exec_feed_init(CliFeed *feed)
{
    memset(feed, 0, sizeof *feed);
}

void cli_exec_feed_fini(CliFeed *feed)
{
    free(feed->buf);
    memset(feed, 0, sizeof *feed);
}

bool cli_exec_feed_is_pending(const CliFeed *feed)
{
    return feed->len > 0;
}

static void feed_append(CliFeed *feed, const char *line, size_t len)
{
    if (feed->len + len + 1 > feed->cap) {
        size_t cap = feed->cap ? feed->cap : 256;
        while (cap < feed->len + len + 1) {
            cap *= 2;
        }
        char *buf = realloc(feed->buf, cap);
        if (buf == NULL) {
            fputs("sluice: out of memory\n", stderr);
            exit(1);
        }
        feed->buf = buf;
        feed->cap = cap;
    }
    memcpy(feed->buf + feed->len, line, len);
    feed->len += len;
    feed->buf[feed->len] = '\0';
}

/* True for a line that is blank or only a `--` comment. */
static bool is_idle_line(const char *line, size_t len)
{
    size_t pos = 0;

    while (pos < len && is_space(line[pos])) {
        pos++;
    }
    return pos == len || (pos + 1 < len && line[pos] == '-' && line[pos + 1] == '-');
}

/* Runs a dot command line (without its line end). */
static void run_dot(CliState *st, const char *line, size_t len)
{
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) {
        len--;
    }
    char *cmd = malloc(len + 1);
    if (cmd == NULL) {
        cli_exec_error(st, "out of memory");
        return;
    }
    memcpy(cmd, line, len);
    cmd[len] = '\0';
    flush_out(st);
    cli_dot_run(st, cmd);
    free(cmd);
    flush_out(st);
}

static void feed_run(CliState *st, CliFeed *feed)
{
    run_buffer(st, feed);
    feed->len = 0;
}

void cli_exec_feed_line(CliState *st, CliFeed *feed, const char *line, size_t len)
{
    feed->n_lines++;
    if (feed->len == 0) {
        if (len > 0 && line[0] == '.') {
            run_dot(st, line, len);
            return;
        }
        if (is_idle_line(line, len)) {
            return;
        }
        feed->buf_line = feed->n_lines;
    }
    feed_append(feed, line, len);
    /* Only a line with a ';' can complete a statement: this keeps a long
     * multi-line statement from being rescanned at every line. */
    if (memchr(line, ';', len) != NULL && sluice_complete(feed->buf, feed->len)) {
        feed_run(st, feed);
    }
}

void cli_exec_feed_finish(CliState *st, CliFeed *feed)
{
    if (feed->len > 0 && !st->is_done) {
        feed_run(st, feed);
    }
    feed->len = 0;
}

/* ---------------------------------------------------------------- units */

void cli_exec_text(CliState *st, const char *text)
{
    CliFeed feed;

    cli_exec_feed_init(&feed);
    while (*text != '\0' && !st->is_done) {
        const char *nl = strchr(text, '\n');
        size_t len = nl ? (size_t)(nl - text) + 1 : strlen(text);
        cli_exec_feed_line(st, &feed, text, len);
        text += len;
    }
    cli_exec_feed_finish(st, &feed);
    cli_exec_feed_fini(&feed);
}

/* Runs the lines of fp; path names the file in error positions (NULL: stdin). */
static void run_stream(CliState *st, FILE *fp, const char *path)
{
    CliFeed feed;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;

    cli_exec_feed_init(&feed);
    feed.path = path;
    while (!st->is_done && (len = getline(&line, &cap, fp)) >= 0) {
        cli_exec_feed_line(st, &feed, line, (size_t)len);
    }
    if (!st->is_interactive && cli_interrupt_take() > 0) {
        st->is_interrupted = true; /* Ctrl+C between statements: the rest does not run */
        st->is_done = true;
    } else {
        cli_exec_feed_finish(st, &feed);
    }
    cli_exec_feed_fini(&feed);
    free(line);
}

void cli_exec_stream(CliState *st, FILE *fp)
{
    run_stream(st, fp, NULL);
}

void cli_exec_file(CliState *st, const char *path)
{
    if (st->read_depth >= CLI_MAX_READ_DEPTH) {
        cli_exec_error(st, "cannot open '%s': files nested more than %d deep", path,
                       CLI_MAX_READ_DEPTH);
        return;
    }
    FILE *fp = fopen(path, "r");
    struct stat info;
    if (fp == NULL || (fstat(fileno(fp), &info) == 0 && S_ISDIR(info.st_mode))) {
        cli_exec_error(st, "cannot open '%s': %s", path, strerror(fp ? EISDIR : errno));
        if (fp != NULL) {
            fclose(fp);
        }
        return;
    }
    st->read_depth++;
    run_stream(st, fp, path);
    st->read_depth--;
    fclose(fp);
}

/* ---------------------------------------------------------------- output files */

bool cli_exec_output_open(CliState *st, const char *path, bool is_once)
{
    FILE *fp = fopen(path, "w");

    if (fp == NULL) {
        cli_exec_error(st, "cannot open '%s': %s", path, strerror(errno));
        return false;
    }
    if (is_once) {
        if (st->once != NULL) {
            fclose(st->once); /* a second .once before any statement replaces the first */
        }
        st->once = fp;
        return true;
    }
    char *name = strdup(path);
    if (name == NULL) {
        fclose(fp);
        cli_exec_error(st, "out of memory");
        return false;
    }
    cli_exec_output_close(st);
    st->out = fp;
    st->out_path = name;
    return true;
}

void cli_exec_output_close(CliState *st)
{
    if (st->out_path == NULL) {
        return;
    }
    int rc = fclose(st->out);
    st->out = stdout;
    if (rc != 0) {
        cli_exec_error(st, "cannot write '%s': %s", st->out_path, strerror(errno));
    }
    free(st->out_path);
    st->out_path = NULL;
}
