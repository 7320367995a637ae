/*
 * slt_runner.c - runs sqllogictest files against libsluice.
 *
 * Usage: slt_runner [--threads N] [--set NAME=VALUE]... [--db DIR [--reopen]] [--verbose]
 *                   [--stop-on-fail] PATH...
 * (--set applies a setting to every file's database, e.g. shuffle_memory_limit=64KB.
 * --db runs each file on a new directory database under DIR, removed after it;
 * --reopen also closes and reopens it after each "statement ok" but SET/RESET,
 * so that every query reads what was saved; the runner's settings are applied
 * again, the file's own SETs and TEMP tables are not kept.)
 * A PATH is a .test file or a directory searched recursively for *.test
 * (each directory's files in name order, then its subdirectories in name
 * order).  Every file runs on a fresh in-memory database (sluice_open(NULL))
 * with the setting threads = N (default 1).  Each failing record prints
 * "FAIL file:line: reason" and a short expected/actual excerpt; the last line
 * is "N passed, M failed" (plus ", K skipped" when records were skipped).  The
 * exit status is 0 iff nothing failed and at least one record passed.
 *
 * The format is SQLite's sqllogictest (see /work/shared/tools/slt_run.py):
 * lines starting with '#' are dropped everywhere; records are separated by
 * blank lines; "skipif DB" / "onlyif DB" prefix lines (our name is "sluice";
 * "tiny-batches" also matches in a build with batches under 64 rows, and
 * "reopen" with --reopen);
 * "statement ok|error"; "query TYPES [nosort|rowsort|valuesort] [LABEL]" with
 * the expected values after a "----" line; "hash-threshold N" (default 8);
 * "halt".  Values render by the type letter: I as an integer (integer text as
 * is, a decimal or double text truncated toward zero, other text by its
 * integer prefix as sqlite3_column_int does, BOOLEAN as 1/0), R as "%.3f" (at
 * most 16 significant digits, as SQLite's printf), T as the text with '' shown
 * as "(empty)" and bytes outside 0x20..0x7e as '@'; NULL is "NULL" for every
 * letter.  rowsort sorts rows and valuesort sorts values (strcmp).  A result
 * is "N values hashing to MD5", the MD5 of each value followed by '\n'; equal
 * labels in one file must hash equally.
 *
 * Extensions for Sluice's own tests (tests/sql/README.md):
 *  1. "statement error" may be followed by "----" and an expected message.
 *     The error, rendered "line L, column C: MESSAGE" (just "MESSAGE" when it
 *     has no position), must contain that text; so error tests check both the
 *     message and the caret position.
 *  2. Expected query values may be written one row per line with the values
 *     separated by TABs (DuckDB style) as well as one value per line; every
 *     expected line is split on TABs (a rendered value never holds a TAB).
 *  3. An expected result is compared as a hash exactly when it is a single
 *     "N values hashing to MD5" line; otherwise value by value, even past the
 *     hash threshold (SQLite's runner would require the hash there).
 *  4. I-typed integers are not wrapped to 32 bits, so BIGINT results compare
 *     exactly.
 *  5. Placeholders: in a record's SQL and in an expected error message,
 *     __TESTDIR__ becomes the absolute directory of the .test file being run
 *     and __TMPDIR__ a temporary directory (under $TMPDIR, else /tmp) that the
 *     runner creates on first use and removes, with everything in it, when
 *     the run ends; there is one per run, shared by all files.
 * A record's SQL may hold several statements; they run in order with
 * sluice_exec_next() up to the first error, and a query checks the result of
 * the last one.  The test code may use plain malloc: libsluice does not export
 * the cm_ allocator.
 */
#define _POSIX_C_SOURCE 200809L

#include "api/sluice.h"
#include "md5.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENGINE_NAME "sluice"
#define DEFAULT_HASH_THRESHOLD 8
#define LABEL_CAP 21        /* labels are cut to 20 characters, as in SQLite */
#define HASH_TEXT_CAP 96    /* "N values hashing to <32 hex digits>" */
#define MAX_SHOWN_LINES 12  /* lines of expected/actual values in a failure */
#define MAX_SHOWN_CHARS 160 /* characters of one shown line */
#define MAX_WORDS 8         /* words of a record's command line that matter */
#define TESTDIR_MARK "__TESTDIR__"
#define TMPDIR_MARK "__TMPDIR__"

/* ------------------------------------------------------------------------ */
/* Small containers                                                          */
/* ------------------------------------------------------------------------ */

/* A growable byte string, always NUL-terminated once something was added. */
typedef struct Buf {
    char *data; /* owned */
    size_t len; /* bytes used, without the NUL */
    size_t cap; /* bytes allocated */
} Buf;

/* A growable array of borrowed string pointers. */
typedef struct PtrVec {
    const char **items; /* owned array; the strings are borrowed */
    size_t n;           /* items used */
    size_t cap;         /* items allocated */
} PtrVec;

static void *xrealloc(void *ptr, size_t size)
{
    void *p = realloc(ptr, size > 0 ? size : 1);
    if (p == NULL) {
        fputs("slt_runner: out of memory\n", stderr);
        exit(2);
    }
    return p;
}

/* Grows an array of `elem` byte items so that `need` fit; returns the array. */
static void *grow(void *items, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) {
        return items;
    }
    size_t new_cap = *cap > 0 ? *cap : 64;
    while (new_cap < need) {
        new_cap *= 2;
    }
    *cap = new_cap;
    return xrealloc(items, new_cap * elem);
}

static void buf_add(Buf *b, const char *s, size_t n)
{
    b->data = grow(b->data, &b->cap, b->len + n + 1, 1);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static void buf_puts(Buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

static void buf_putc(Buf *b, char c)
{
    buf_add(b, &c, 1);
}

static void buf_reset(Buf *b)
{
    b->len = 0;
    if (b->data != NULL) {
        b->data[0] = '\0';
    }
}

static void ptrvec_push(PtrVec *v, const char *s)
{
    v->items = grow(v->items, &v->cap, v->n + 1, sizeof v->items[0]);
    v->items[v->n++] = s;
}

/* ------------------------------------------------------------------------ */
/* Scripts and records                                                       */
/* ------------------------------------------------------------------------ */

typedef struct Line {
    char *text; /* into Script.data; "" for an all-blank line */
    int no;     /* 1-based line number in the file */
} Line;

typedef struct Label {
    char name[LABEL_CAP];     /* the label, cut to 20 characters */
    char hash[HASH_TEXT_CAP]; /* the first result seen with this label */
} Label;

/* One test file being run. */
typedef struct Script {
    const char *path;    /* borrowed from the path list */
    char *data;          /* owned file contents, split into lines in place */
    Line *lines;         /* owned */
    size_t n_lines;      /* lines in the file */
    size_t next_line;    /* first line not yet read into a record */
    Line *group;         /* owned: non-comment lines of the current record */
    size_t n_group;      /* lines in `group` */
    size_t cap_group;    /* lines allocated for `group` */
    int hash_threshold;  /* set by "hash-threshold N" */
    Label *labels;       /* owned */
    size_t n_labels;     /* labels seen so far in this file */
    size_t cap_labels;   /* labels allocated */
    SluiceDb *db;        /* owned, fresh per file */
    const char *db_path; /* with --db: its directory (the runner's buffer), else NULL */
    bool is_reopen;      /* --reopen: "skipif reopen" applies */
    char *test_dir;      /* owned: absolute directory of the file, for __TESTDIR__ */
} Script;

typedef enum RecKind {
    REC_STATEMENT,
    REC_QUERY,
    REC_HASH_THRESHOLD,
    REC_HALT,
    REC_UNKNOWN, /* unknown command: reported, and the file stops */
} RecKind;

typedef enum SortMode { SORT_NONE, SORT_ROWS, SORT_VALUES } SortMode;

/* A parsed record; its pointers borrow from the Script. */
typedef struct Record {
    RecKind kind;          /* what the command line says */
    int no;                /* line number of the command line */
    bool is_skipped;       /* by skipif/onlyif */
    bool expect_ok;        /* statement ok (true) or error (false) */
    const char *types;     /* query: type letters */
    SortMode sort;         /* query: sort mode */
    char label[LABEL_CAP]; /* query: "" when none */
    int threshold;         /* hash-threshold: its argument */
    const char *bad;       /* why the record is malformed, or NULL */
    const Line *sql;       /* lines of the SQL text */
    size_t n_sql;
    const Line *expect; /* lines after "----" */
    size_t n_expect;
    bool has_sep; /* a "----" line was present */
} Record;

/* Reads the whole file and splits it into lines; false (errno set) on failure. */
static bool script_load(Script *s)
{
    FILE *f = fopen(s->path, "rb");
    if (f == NULL) {
        return false;
    }
    Buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        buf_add(&b, chunk, n);
    }
    bool is_ok = !ferror(f);
    fclose(f);
    if (b.len == 0 || b.data[b.len - 1] != '\n') {
        buf_putc(&b, '\n'); /* now every line, the last too, ends with '\n' */
    }
    s->data = b.data;
    size_t cap = 0;
    char *end = s->data + b.len;
    for (char *p = s->data; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        *nl = '\0';
        if (nl > p && nl[-1] == '\r') {
            nl[-1] = '\0';
        }
        s->lines = grow(s->lines, &cap, s->n_lines + 1, sizeof s->lines[0]);
        s->lines[s->n_lines].text = p[strspn(p, " \t\r\v\f")] == '\0' ? nl : p;
        s->lines[s->n_lines].no = (int)s->n_lines + 1;
        s->n_lines++;
        p = nl + 1;
    }
    return is_ok;
}

static void script_free(Script *s)
{
    free(s->data);
    free(s->lines);
    free(s->group);
    free(s->labels);
    free(s->test_dir);
}

/* Collects the next record's non-comment lines into s->group; false at EOF. */
static bool read_group(Script *s)
{
    s->n_group = 0;
    for (; s->next_line < s->n_lines; s->next_line++) {
        Line *ln = &s->lines[s->next_line];
        if (ln->text[0] == '\0') {
            if (s->n_group > 0) {
                break;
            }
            continue;
        }
        if (ln->text[0] == '#') {
            continue; /* a comment neither ends a record nor belongs to it */
        }
        s->group = grow(s->group, &s->cap_group, s->n_group + 1, sizeof s->group[0]);
        s->group[s->n_group++] = *ln;
    }
    return s->n_group > 0;
}

/* Splits a copy of `line` into words; returns how many (at most MAX_WORDS). */
static size_t split_words(const char *line, char *copy, size_t cap, char **words)
{
    snprintf(copy, cap, "%s", line);
    size_t n = 0;
    char *save = NULL;
    for (char *w = strtok_r(copy, " \t", &save); w != NULL && n < MAX_WORDS;
         w = strtok_r(NULL, " \t", &save)) {
        words[n++] = w;
    }
    if (n == 0) {
        words[0] = copy; /* only blanks within the copied prefix: one empty word */
        copy[0] = '\0';
    }
    return n;
}

/* Parses "query TYPES [SORT] [LABEL]"; the words live in the group's line. */
static void parse_query_words(Record *rec, char **words, size_t n_words)
{
    rec->kind = REC_QUERY;
    rec->types = n_words > 1 ? words[1] : "";
    const char *sort = n_words > 2 ? words[2] : "nosort";
    snprintf(rec->label, sizeof rec->label, "%s", n_words > 3 ? words[3] : "");
    if (strcmp(sort, "nosort") == 0) {
        rec->sort = SORT_NONE;
    } else if (strcmp(sort, "rowsort") == 0) {
        rec->sort = SORT_ROWS;
    } else if (strcmp(sort, "valuesort") == 0) {
        rec->sort = SORT_VALUES;
    } else {
        rec->bad = "unknown sort method";
    }
    if (rec->types[0] == '\0') {
        rec->bad = "missing type string";
    } else if (rec->types[strspn(rec->types, "TIR")] != '\0') {
        rec->bad = "unknown type character in type string";
    }
}

/* Splits the record body at its "----" line, if any. */
static void split_body(Record *rec, const Line *body, size_t n_body, bool may_have_sep)
{
    rec->sql = body;
    rec->n_sql = n_body;
    for (size_t idx = 0; may_have_sep && idx < n_body; idx++) {
        if (strcmp(body[idx].text, "----") == 0) {
            rec->n_sql = idx;
            rec->has_sep = true;
            rec->expect = body + idx + 1;
            rec->n_expect = n_body - idx - 1;
            break;
        }
    }
}

/* Applies skipif/onlyif lines; returns the index of the command line. */
static size_t parse_conditions(const Script *s, Record *rec)
{
    size_t idx = 0;
    for (; idx < s->n_group; idx++) {
        char copy[256];
        char *words[MAX_WORDS];
        size_t n = split_words(s->group[idx].text, copy, sizeof copy, words);
        bool is_skipif = strcmp(words[0], "skipif") == 0;
        if (!is_skipif && strcmp(words[0], "onlyif") != 0) {
            break;
        }
        /* "tiny-batches" names the 3-row-batch build: records whose premise is
         * a memory size per row (each 3-row chunk is a block with its own
         * headers there) skip it.  "reopen" names a --reopen run: records
         * that read session state (a cache, a SET, a TEMP object) skip it. */
        bool is_match =
            n > 1 && (strcasecmp(words[1], ENGINE_NAME) == 0 ||
                      (strcasecmp(words[1], "tiny-batches") == 0 && CM_BATCH_CAP < 64) ||
                      (strcasecmp(words[1], "reopen") == 0 && s->is_reopen));
        if (is_skipif == is_match) {
            rec->is_skipped = true;
        }
    }
    return idx;
}

/* Parses the current group; false when it held only conditions. */
static bool parse_record(Script *s, Record *rec, char *copy, size_t cap)
{
    memset(rec, 0, sizeof *rec);
    size_t head = parse_conditions(s, rec);
    if (head >= s->n_group) {
        return false;
    }
    char *words[MAX_WORDS];
    size_t n_words = split_words(s->group[head].text, copy, cap, words);
    const Line *body = s->group + head + 1;
    size_t n_body = s->n_group - head - 1;
    rec->no = s->group[head].no;
    if (strcmp(words[0], "statement") == 0) {
        rec->kind = REC_STATEMENT;
        const char *arg = n_words > 1 ? words[1] : "";
        rec->expect_ok = strcmp(arg, "ok") == 0;
        if (!rec->expect_ok && strcmp(arg, "error") != 0) {
            rec->bad = "statement argument should be 'ok' or 'error'";
        }
        split_body(rec, body, n_body, !rec->expect_ok);
    } else if (strcmp(words[0], "query") == 0) {
        parse_query_words(rec, words, n_words);
        split_body(rec, body, n_body, true);
    } else if (strcmp(words[0], "hash-threshold") == 0) {
        rec->kind = REC_HASH_THRESHOLD;
        rec->threshold = n_words > 1 ? atoi(words[1]) : 0;
    } else if (strcmp(words[0], "halt") == 0) {
        rec->kind = REC_HALT;
    } else {
        rec->kind = REC_UNKNOWN;
        rec->bad = "unknown record type";
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* Rendering values by type letter                                           */
/* ------------------------------------------------------------------------ */

/* The parts of a decimal number [+-]?(D+[.D*]|.D+)([eE][+-]?D+)? at text. */
typedef struct NumScan {
    size_t len;           /* bytes of the number, 0 when text is not one */
    bool is_neg;          /* a leading '-' */
    bool has_exp;         /* an exponent part */
    const char *int_part; /* the digits before the '.', borrowed */
    size_t n_int;         /* how many */
} NumScan;

static NumScan scan_number(const char *text)
{
    NumScan num = {0};
    const char *p = text;
    num.is_neg = *p == '-';
    p += *p == '-' || *p == '+';
    num.int_part = p;
    num.n_int = strspn(p, "0123456789");
    p += num.n_int;
    size_t n_frac = 0;
    if (*p == '.') {
        n_frac = strspn(p + 1, "0123456789");
        if (num.n_int > 0 || n_frac > 0) {
            p += 1 + n_frac;
        }
    }
    if (num.n_int == 0 && n_frac == 0) {
        return num;
    }
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        q += *q == '-' || *q == '+';
        size_t n_exp = strspn(q, "0123456789");
        if (n_exp > 0) {
            p = q + n_exp;
            num.has_exp = true;
        }
    }
    num.len = (size_t)(p - text);
    return num;
}

static const char *skip_space(const char *p)
{
    return p + strspn(p, " \t\n\r\v\f");
}

/* Returns +1/-1 when text is [+-]inf or [+-]infinity (any case), else 0. */
static int inf_sign(const char *text)
{
    const char *p = skip_space(text);
    int sign = *p == '-' ? -1 : 1;
    p += *p == '-' || *p == '+';
    size_t n = strncasecmp(p, "infinity", 8) == 0 ? 8 : strncasecmp(p, "inf", 3) == 0 ? 3 : 0;
    return n > 0 && *skip_space(p + n) == '\0' ? sign : 0;
}

static bool is_true_text(const char *text)
{
    return strcasecmp(text, "true") == 0 || strcasecmp(text, "t") == 0 || strcmp(text, "1") == 0;
}

/* Appends an integer given by sign and digits, without leading zeros. */
static void put_int_digits(Buf *out, bool is_neg, const char *digits, size_t n)
{
    while (n > 0 && *digits == '0') {
        digits++;
        n--;
    }
    if (n == 0) {
        buf_putc(out, '0');
        return;
    }
    if (is_neg) {
        buf_putc(out, '-');
    }
    buf_add(out, digits, n);
}

/* Appends trunc(x), clamped to the int64 range (NaN gives 0). */
static void put_truncated(Buf *out, double x)
{
    char tmp[32];
    long long v = 0;
    if (x >= 9223372036854775807.0) {
        v = INT64_MAX;
    } else if (x <= -9223372036854775808.0) {
        v = INT64_MIN;
    } else if (!isnan(x)) {
        v = (long long)x; /* conversion truncates toward zero */
    }
    snprintf(tmp, sizeof tmp, "%lld", v);
    buf_puts(out, tmp);
}

/* The I rendering (see the header comment). */
static void render_int(Buf *out, const char *text, SluiceType type)
{
    if (type == SLUICE_BOOLEAN) {
        buf_putc(out, is_true_text(text) ? '1' : '0');
        return;
    }
    const char *p = skip_space(text);
    NumScan num = scan_number(p);
    if (num.len > 0 && *skip_space(p + num.len) == '\0') {
        if (num.has_exp) {
            put_truncated(out, strtod(p, NULL));
        } else {
            put_int_digits(out, num.is_neg, num.int_part, num.n_int);
        }
        return;
    }
    int sign = inf_sign(p);
    if (sign != 0) {
        put_truncated(out, sign * HUGE_VAL);
        return;
    }
    bool is_neg = *p == '-'; /* other text: its integer prefix, as SQLite reads it */
    p += *p == '-' || *p == '+';
    put_int_digits(out, is_neg, p, strspn(p, "0123456789"));
}

/* Appends |x| >= 1e13 with 16 significant digits and three decimals, the way
 * SQLite's printf shows "%.3f" of large values. */
static void put_wide_real(Buf *out, double x)
{
    char sci[40];
    snprintf(sci, sizeof sci, "%.15e", fabs(x)); /* d.ddddddddddddddde+XX */
    char digits[16];
    digits[0] = sci[0];
    memcpy(digits + 1, sci + 2, 15);
    int n_int = atoi(sci + 18) + 1; /* digits before the point, >= 14 */
    if (x < 0) {
        buf_putc(out, '-');
    }
    if (n_int >= 16) {
        buf_add(out, digits, 16);
        for (int idx = 16; idx < n_int; idx++) {
            buf_putc(out, '0');
        }
        buf_puts(out, ".000");
        return;
    }
    buf_add(out, digits, (size_t)n_int);
    buf_putc(out, '.');
    buf_add(out, digits + n_int, (size_t)(16 - n_int));
    for (int idx = 16 - n_int; idx < 3; idx++) {
        buf_putc(out, '0');
    }
}

/* The value of text as sqlite3_column_double() would read it. */
static double text_to_double(const char *text, SluiceType type)
{
    if (type == SLUICE_BOOLEAN) {
        return is_true_text(text) ? 1.0 : 0.0;
    }
    const char *p = skip_space(text);
    NumScan num = scan_number(p);
    if (num.len > 0) {
        char tmp[128];
        if (num.len < sizeof tmp) {
            memcpy(tmp, p, num.len);
            tmp[num.len] = '\0';
            return strtod(tmp, NULL);
        }
        return strtod(p, NULL);
    }
    int sign = inf_sign(p);
    if (sign != 0) {
        return sign * HUGE_VAL;
    }
    return strncasecmp(p, "nan", 3) == 0 ? (double)NAN : 0.0;
}

/* The R rendering: "%.3f" of the value. */
static void render_real(Buf *out, const char *text, SluiceType type)
{
    double x = text_to_double(text, type);
    char tmp[64];
    if (isnan(x)) {
        buf_puts(out, "NaN");
    } else if (isinf(x)) {
        buf_puts(out, x < 0 ? "-Inf" : "Inf");
    } else if (x == 0.0) {
        buf_puts(out, "0.000");
    } else if (fabs(x) >= 1e13) {
        put_wide_real(out, x);
    } else {
        snprintf(tmp, sizeof tmp, "%.3f", x);
        buf_puts(out, tmp);
    }
}

/* The T rendering: '' as (empty), unprintable bytes as '@'. */
static void render_text(Buf *out, const char *text)
{
    if (text[0] == '\0') {
        buf_puts(out, "(empty)");
        return;
    }
    size_t start = out->len;
    buf_puts(out, text);
    for (char *p = out->data + start; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c > 0x7e) {
            *p = '@';
        }
    }
}

/* ------------------------------------------------------------------------ */
/* The runner                                                                */
/* ------------------------------------------------------------------------ */

#define MAX_SETTINGS 16

typedef struct Options {
    const char *threads; /* value for sluice_set(db, "threads", ...) */
    int n_settings;
    const char *settings[MAX_SETTINGS]; /* NAME=VALUE, applied to every database */
    bool is_verbose;                    /* print each file and its counts */
    bool is_stop_on_fail;               /* stop the whole run at the first failure */
    const char *db_dir;                 /* --db: directory databases go under it; NULL: in memory */
    bool is_reopen; /* --reopen: reopen the database after each statement that writes */
} Options;

/* Totals and scratch space reused by every record (no allocation per value). */
typedef struct Runner {
    Options opts;                    /* from the command line */
    long n_passed;                   /* records that passed, over all files */
    long n_failed;                   /* records (or files) that failed */
    long n_skipped;                  /* records skipped by skipif/onlyif */
    bool is_stopped;                 /* --stop-on-fail saw a failure */
    Buf sql;                         /* SQL text of the current record */
    Buf values;                      /* rendered values of the current result, NUL-separated */
    size_t *offsets;                 /* owned: start of each value in `values` */
    size_t cap_offsets;              /* entries allocated for `offsets` */
    PtrVec actual;                   /* the rendered values, in compared order */
    PtrVec scratch;                  /* rowsort's output order */
    PtrVec expected;                 /* expected values, borrowed from the script */
    Buf expected_msg;                /* statement error: the expected message */
    Buf detail;                      /* text shown under a FAIL line */
    char actual_hash[HASH_TEXT_CAP]; /* "N values hashing to MD5" of `actual` */
    char actual_hex[33];             /* its MD5 part */
    Buf subst;                       /* scratch for replacing the placeholders */
    char *tmp_dir;                   /* owned: the run's __TMPDIR__, NULL until used */
    bool is_tmp_failed;              /* creating tmp_dir failed (reported once) */
} Runner;

/* A row of the current result for rowsort. */
typedef struct Row {
    const char **values; /* borrowed from Runner.actual */
    size_t n_cols;       /* values in the row */
} Row;

static void record_fail(Runner *r, const Script *s, int line_no, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prints "FAIL file:line: reason", the SQL and r->detail; counts the failure. */
static void record_fail(Runner *r, const Script *s, int line_no, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s:%d: ", s->path, line_no);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    const char *sql = r->sql.len > 0 ? r->sql.data : "";
    for (int n_shown = 0; *sql != '\0' && n_shown < 6; n_shown++) {
        size_t n = strcspn(sql, "\n");
        printf("    %.*s%s\n", (int)(n < MAX_SHOWN_CHARS ? n : MAX_SHOWN_CHARS), sql,
               n > MAX_SHOWN_CHARS ? "..." : "");
        sql += n + (sql[n] == '\n');
    }
    if (r->detail.len > 0) {
        fputs(r->detail.data, stdout);
    }
    r->n_failed++;
    r->is_stopped = r->opts.is_stop_on_fail;
}

/* Joins the record's SQL lines with '\n' into r->sql. */
static void join_lines(Buf *out, const Line *lines, size_t n)
{
    buf_reset(out);
    buf_add(out, "", 0);
    for (size_t idx = 0; idx < n; idx++) {
        if (idx > 0) {
            buf_putc(out, '\n');
        }
        buf_puts(out, lines[idx].text);
    }
}

/* Sets s->test_dir to the absolute directory holding s->path (not
 * canonicalized: "./" and ".." parts of a relative path stay). */
static void set_test_dir(Script *s)
{
    Buf b = {0};
    if (s->path[0] != '/') {
        char *cwd = getcwd(NULL, 0);
        if (cwd == NULL) {
            return; /* then __TESTDIR__ stays as written and the SQL fails visibly */
        }
        buf_puts(&b, cwd);
        buf_putc(&b, '/');
        free(cwd);
    }
    buf_puts(&b, s->path);
    char *slash = strrchr(b.data, '/'); /* there is one: the path is absolute */
    if (slash == b.data) {
        slash[1] = '\0'; /* a file in "/" */
    } else {
        *slash = '\0';
    }
    s->test_dir = b.data;
}

/* The run's temporary directory, created on first use; NULL when that fails. */
static const char *get_tmp_dir(Runner *r)
{
    if (r->tmp_dir == NULL && !r->is_tmp_failed) {
        const char *base = getenv("TMPDIR");
        Buf b = {0};
        buf_puts(&b, base != NULL && base[0] == '/' ? base : "/tmp");
        buf_puts(&b, "/slt_runner.XXXXXX");
        if (mkdtemp(b.data) == NULL) {
            fprintf(stderr, "slt_runner: cannot create a temporary directory: %s\n",
                    strerror(errno));
            r->is_tmp_failed = true;
            free(b.data);
        } else {
            r->tmp_dir = b.data;
        }
    }
    return r->tmp_dir;
}

/* Removes path and, when it is a directory, everything under it. */
static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *ent;
        while (d != NULL && (ent = readdir(d)) != NULL) {
            if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) {
                continue;
            }
            Buf child = {0};
            buf_puts(&child, path);
            buf_putc(&child, '/');
            buf_puts(&child, ent->d_name);
            remove_tree(child.data);
            free(child.data);
        }
        if (d != NULL) {
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* Replaces __TESTDIR__ and __TMPDIR__ in text (in place, through r->subst). */
static void substitute(Runner *r, const Script *s, Buf *text)
{
    if (text->data == NULL || strstr(text->data, "__") == NULL) {
        return;
    }
    buf_reset(&r->subst);
    buf_add(&r->subst, "", 0);
    const char *p = text->data;
    while (*p != '\0') {
        size_t n_test = sizeof TESTDIR_MARK - 1;
        size_t n_tmp = sizeof TMPDIR_MARK - 1;
        const char *tmp = NULL;
        if (strncmp(p, TESTDIR_MARK, n_test) == 0 && s->test_dir != NULL) {
            buf_puts(&r->subst, s->test_dir);
            p += n_test;
        } else if (strncmp(p, TMPDIR_MARK, n_tmp) == 0 && (tmp = get_tmp_dir(r)) != NULL) {
            buf_puts(&r->subst, tmp);
            p += n_tmp;
        } else {
            buf_putc(&r->subst, *p++);
        }
    }
    Buf swap = *text;
    *text = r->subst;
    r->subst = swap;
}

/* Runs every statement of sql; keeps the last result (owned) in *out. */
static int exec_sql(SluiceDb *db, const Buf *sql, SluiceResult **out, SluiceError *err)
{
    size_t off = 0;
    *out = NULL;
    while (off < sql->len) {
        size_t before = off;
        SluiceResult *res = NULL;
        memset(err, 0, sizeof *err);
        int rc = sluice_exec_next(db, sql->data, sql->len, &off, &res, err);
        err->message[sizeof err->message - 1] = '\0';
        if (rc != 0) {
            sluice_result_free(res);
            sluice_result_free(*out);
            *out = NULL;
            if (err->message[0] == '\0') {
                snprintf(err->message, sizeof err->message, "error %d without a message", rc);
            }
            return rc;
        }
        if (res == NULL) {
            break;
        }
        sluice_result_free(*out);
        *out = res;
        if (off <= before) {
            snprintf(err->message, sizeof err->message, "sluice_exec_next did not advance");
            sluice_result_free(*out);
            *out = NULL;
            return -1;
        }
    }
    return 0;
}

static void format_error(const SluiceError *err, char *out, size_t cap)
{
    if (err->line > 0) {
        snprintf(out, cap, "line %d, column %d: %s", err->line, err->column, err->message);
    } else {
        snprintf(out, cap, "%s", err->message);
    }
}

static void run_statement(Runner *r, Script *s, const Record *rec)
{
    SluiceResult *res = NULL;
    SluiceError err;
    char got[400];
    int rc = exec_sql(s->db, &r->sql, &res, &err);
    sluice_result_free(res);
    format_error(&err, got, sizeof got);
    if (rec->expect_ok) {
        if (rc != 0) {
            record_fail(r, s, rec->no, "statement failed: %s", got);
            return;
        }
    } else if (rc == 0) {
        record_fail(r, s, rec->no, "statement succeeded but an error was expected");
        return;
    } else if (rec->has_sep) {
        join_lines(&r->expected_msg, rec->expect, rec->n_expect);
        substitute(r, s, &r->expected_msg);
        if (strstr(got, r->expected_msg.data) == NULL) {
            record_fail(r, s, rec->no, "wrong error: expected a message containing '%s', got '%s'",
                        r->expected_msg.data, got);
            return;
        }
    }
    r->n_passed++;
}

/* Renders every value of res by its type letter into r->actual (row major). */
static void render_result(Runner *r, const SluiceResult *res, const char *types)
{
    int n_cols = sluice_result_column_count(res);
    int64_t n_rows = sluice_result_row_count(res);
    size_t n_vals = 0;
    buf_reset(&r->values);
    for (int64_t row_idx = 0; row_idx < n_rows; row_idx++) {
        for (int col_idx = 0; col_idx < n_cols; col_idx++) {
            r->offsets = grow(r->offsets, &r->cap_offsets, n_vals + 1, sizeof r->offsets[0]);
            r->offsets[n_vals++] = r->values.len;
            const char *text = sluice_result_text(res, row_idx, col_idx);
            SluiceType type = sluice_result_column_type(res, col_idx);
            if (text == NULL || sluice_result_is_null(res, row_idx, col_idx)) {
                buf_puts(&r->values, "NULL");
            } else if (types[col_idx] == 'I') {
                render_int(&r->values, text, type);
            } else if (types[col_idx] == 'R') {
                render_real(&r->values, text, type);
            } else {
                render_text(&r->values, text);
            }
            buf_add(&r->values, "", 1); /* keep the NUL as the separator */
        }
    }
    r->actual.n = 0;
    for (size_t idx = 0; idx < n_vals; idx++) {
        ptrvec_push(&r->actual, r->values.data + r->offsets[idx]);
    }
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int compare_rows(const void *a, const void *b)
{
    const Row *ra = a;
    const Row *rb = b;
    for (size_t col_idx = 0; col_idx < ra->n_cols; col_idx++) {
        int cmp = strcmp(ra->values[col_idx], rb->values[col_idx]);
        if (cmp != 0) {
            return cmp;
        }
    }
    return 0;
}

/* Applies rowsort (strcmp column by column) or valuesort to r->actual. */
static void sort_values(Runner *r, SortMode sort, size_t n_cols)
{
    if (r->actual.n < 2) {
        return; /* also keeps a NULL array away from qsort */
    }
    if (sort == SORT_VALUES) {
        qsort(r->actual.items, r->actual.n, sizeof r->actual.items[0], compare_strings);
        return;
    }
    if (sort != SORT_ROWS) {
        return;
    }
    size_t n_rows = r->actual.n / n_cols;
    Row *rows = xrealloc(NULL, n_rows * sizeof rows[0]);
    for (size_t row_idx = 0; row_idx < n_rows; row_idx++) {
        rows[row_idx].values = r->actual.items + row_idx * n_cols;
        rows[row_idx].n_cols = n_cols;
    }
    qsort(rows, n_rows, sizeof rows[0], compare_rows);
    r->scratch.n = 0;
    for (size_t row_idx = 0; row_idx < n_rows; row_idx++) {
        for (size_t col_idx = 0; col_idx < n_cols; col_idx++) {
            ptrvec_push(&r->scratch, rows[row_idx].values[col_idx]);
        }
    }
    free(rows);
    PtrVec tmp = r->actual;
    r->actual = r->scratch;
    r->scratch = tmp;
}

/* Sets r->actual_hash to "N values hashing to MD5" of r->actual. */
static void hash_values(Runner *r)
{
    Md5Ctx ctx;
    md5_init(&ctx);
    for (size_t idx = 0; idx < r->actual.n; idx++) {
        md5_update(&ctx, r->actual.items[idx], strlen(r->actual.items[idx]));
        md5_update(&ctx, "\n", 1);
    }
    unsigned char digest[MD5_DIGEST_LEN];
    md5_final(&ctx, digest);
    md5_hex(digest, r->actual_hex);
    snprintf(r->actual_hash, sizeof r->actual_hash, "%zu values hashing to %s", r->actual.n,
             r->actual_hex);
}

/* True when line is "N values hashing to MD5" (or "1 value ..."). */
static bool parse_hash_line(const char *line, unsigned long *n_vals, char hex[33])
{
    char word[16];
    char tail[2];
    int n_read = sscanf(line, "%lu %15s hashing to %32[0-9a-f]%1s", n_vals, word, hex, tail);
    return n_read == 3 && strlen(hex) == 32 &&
           (strcmp(word, "values") == 0 || strcmp(word, "value") == 0);
}

/* Splits the expected lines on TABs into r->expected (in place). */
static void split_expected(Runner *r, const Record *rec)
{
    r->expected.n = 0;
    for (size_t idx = 0; idx < rec->n_expect; idx++) {
        char *p = rec->expect[idx].text;
        for (;;) {
            char *tab = strchr(p, '\t');
            ptrvec_push(&r->expected, p);
            if (tab == NULL) {
                break;
            }
            *tab = '\0';
            p = tab + 1;
        }
    }
}

/* Appends up to MAX_SHOWN_LINES lines of `n_per_line` values each to r->detail. */
static void show_values(Runner *r, const char *title, const PtrVec *vals, size_t n_per_line)
{
    char head[128];
    snprintf(head, sizeof head, "  %s (%zu values):\n", title, vals->n);
    buf_puts(&r->detail, head);
    size_t n_lines = (vals->n + n_per_line - 1) / n_per_line;
    for (size_t line_idx = 0; line_idx < n_lines && line_idx < MAX_SHOWN_LINES; line_idx++) {
        size_t start = r->detail.len;
        buf_puts(&r->detail, "    ");
        for (size_t k = 0; k < n_per_line && line_idx * n_per_line + k < vals->n; k++) {
            buf_puts(&r->detail, k > 0 ? "\t" : "");
            buf_puts(&r->detail, vals->items[line_idx * n_per_line + k]);
        }
        if (r->detail.len - start > MAX_SHOWN_CHARS) {
            r->detail.len = start + MAX_SHOWN_CHARS;
            buf_puts(&r->detail, "...");
        }
        buf_putc(&r->detail, '\n');
    }
    if (n_lines > MAX_SHOWN_LINES) {
        snprintf(head, sizeof head, "    ... (%zu more lines)\n", n_lines - MAX_SHOWN_LINES);
        buf_puts(&r->detail, head);
    }
}

/* Checks a labelled result against the first one with the same label. */
static bool label_agrees(Script *s, const Record *rec, const char *hash)
{
    for (size_t idx = 0; idx < s->n_labels; idx++) {
        if (strcmp(s->labels[idx].name, rec->label) == 0) {
            return strcmp(s->labels[idx].hash, hash) == 0;
        }
    }
    s->labels = grow(s->labels, &s->cap_labels, s->n_labels + 1, sizeof s->labels[0]);
    Label *lab = &s->labels[s->n_labels++];
    snprintf(lab->name, sizeof lab->name, "%s", rec->label);
    snprintf(lab->hash, sizeof lab->hash, "%s", hash);
    return true;
}

/* Compares r->actual with the record's expected values or hash. */
static void check_result(Runner *r, Script *s, const Record *rec, size_t n_cols)
{
    hash_values(r);
    split_expected(r, rec);
    unsigned long n_want = 0;
    char want_hex[33];
    bool is_hash = r->expected.n == 1 && parse_hash_line(r->expected.items[0], &n_want, want_hex);
    bool is_ok;
    if (is_hash) {
        is_ok = n_want == r->actual.n && strcmp(r->actual_hex, want_hex) == 0;
    } else {
        is_ok = r->expected.n == r->actual.n;
        for (size_t idx = 0; is_ok && idx < r->actual.n; idx++) {
            is_ok = strcmp(r->expected.items[idx], r->actual.items[idx]) == 0;
        }
    }
    if (is_ok && rec->label[0] != '\0' && !label_agrees(s, rec, r->actual_hash)) {
        record_fail(r, s, rec->no, "labeled result [%s] does not agree with previous values",
                    rec->label);
        return;
    }
    if (is_ok) {
        r->n_passed++;
        return;
    }
    show_values(r, "expected", &r->expected, n_cols);
    show_values(r, "actual", &r->actual, n_cols);
    int ht = s->hash_threshold;
    if (is_hash || (ht > 0 && r->actual.n > (size_t)ht)) {
        buf_puts(&r->detail, "    ");
        buf_puts(&r->detail, r->actual_hash);
        buf_putc(&r->detail, '\n');
    }
    record_fail(r, s, rec->no, is_hash ? "wrong result hash" : "wrong result");
}

static void run_query(Runner *r, Script *s, const Record *rec)
{
    SluiceResult *res = NULL;
    SluiceError err;
    char got[400];
    int rc = exec_sql(s->db, &r->sql, &res, &err);
    size_t n_types = strlen(rec->types);
    if (rc != 0) {
        format_error(&err, got, sizeof got);
        record_fail(r, s, rec->no, "query failed: %s", got);
    } else if (res == NULL) {
        record_fail(r, s, rec->no, "query has no SQL statement");
    } else if ((size_t)sluice_result_column_count(res) != n_types) {
        record_fail(r, s, rec->no, "expected %zu columns, got %d", n_types,
                    sluice_result_column_count(res));
    } else {
        render_result(r, res, rec->types);
        sort_values(r, rec->sort, n_types);
        check_result(r, s, rec, n_types);
    }
    sluice_result_free(res);
}

/* Runs the records of an opened script until EOF, halt or --stop-on-fail. */
static bool open_db(Runner *r, Script *s);

/* True for a statement after which --reopen reopens: one that may write,
 * outside a transaction (a reopen would discard it). */
static bool is_reopen_point(const Runner *r, const Script *s, const Record *rec, const char *sql)
{
    if (s->db != NULL && sluice_in_transaction(s->db)) {
        return false;
    }
    while (*sql == ' ' || *sql == '\n' || *sql == '\t') {
        sql++;
    }
    return r->opts.is_reopen && rec->kind == REC_STATEMENT && rec->expect_ok &&
           strncasecmp(sql, "SET", 3) != 0 && strncasecmp(sql, "RESET", 5) != 0;
}

static void run_records(Runner *r, Script *s)
{
    Record rec;
    char copy[512]; /* the command line's words */
    while (!r->is_stopped && read_group(s)) {
        if (!parse_record(s, &rec, copy, sizeof copy)) {
            continue;
        }
        bool is_sql = rec.kind == REC_STATEMENT || rec.kind == REC_QUERY;
        if (rec.is_skipped) {
            r->n_skipped += is_sql;
            continue;
        }
        buf_reset(&r->detail);
        join_lines(&r->sql, rec.sql, rec.n_sql);
        substitute(r, s, &r->sql);
        if (rec.bad != NULL) {
            record_fail(r, s, rec.no, "%s", rec.bad);
            if (rec.kind == REC_UNKNOWN) {
                return;
            }
        } else if (rec.kind == REC_HASH_THRESHOLD) {
            s->hash_threshold = rec.threshold;
        } else if (rec.kind == REC_HALT) {
            return;
        } else if (rec.kind == REC_STATEMENT) {
            run_statement(r, s, &rec);
            if (is_reopen_point(r, s, &rec, r->sql.data)) {
                sluice_close(s->db);
                s->db = NULL;
                if (!open_db(r, s)) {
                    return;
                }
            }
        } else {
            run_query(r, s, &rec);
        }
    }
}

/* Removes directory `path` and the files in it (a database's are flat). */
static void remove_dir(const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL) {
        return;
    }
    struct dirent *de;
    char file[4096];
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
            snprintf(file, sizeof file, "%s/%s", path, de->d_name);
            unlink(file);
        }
    }
    closedir(d);
    rmdir(path);
}

/* Opens s->db (in memory, or the directory s->db_path) and applies the
 * runner's settings; false after recording a failure. */
static bool open_db(Runner *r, Script *s)
{
    SluiceError err = {0};
    if ((s->db = sluice_open(s->db_path, &err)) == NULL) {
        record_fail(r, s, 0, "cannot open the database: %s", err.message);
        return false;
    }
    if (sluice_set(s->db, "threads", r->opts.threads, &err) != 0) {
        record_fail(r, s, 0, "cannot set threads = %s: %s", r->opts.threads, err.message);
    }
    for (int i = 0; i < r->opts.n_settings; i++) {
        char name[128];
        const char *eq = strchr(r->opts.settings[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - r->opts.settings[i]), r->opts.settings[i]);
        if (sluice_set(s->db, name, eq + 1, &err) != 0) {
            record_fail(r, s, 0, "cannot set %s: %s", r->opts.settings[i], err.message);
        }
    }
    return true;
}

static void run_file(Runner *r, const char *path)
{
    Script s = {.path = path, .hash_threshold = DEFAULT_HASH_THRESHOLD};
    long n_passed = r->n_passed, n_failed = r->n_failed, n_skipped = r->n_skipped;
    buf_reset(&r->sql);
    buf_reset(&r->detail);
    if (r->opts.is_verbose) {
        printf("RUN %s\n", path);
    }
    static long n_files;
    char db_path[4096];
    if (r->opts.db_dir != NULL) {
        snprintf(db_path, sizeof db_path, "%s/slt%ld_%ld", r->opts.db_dir, (long)getpid(),
                 n_files++);
        remove_dir(db_path);
        s.db_path = db_path;
        s.is_reopen = r->opts.is_reopen;
    }
    if (!script_load(&s)) {
        record_fail(r, &s, 0, "cannot read the file: %s", strerror(errno));
    } else if (open_db(r, &s)) {
        set_test_dir(&s);
        run_records(r, &s);
        sluice_close(s.db);
    }
    if (s.db_path != NULL) {
        remove_dir(s.db_path);
        s.db_path = NULL;
    }
    script_free(&s);
    if (r->opts.is_verbose) {
        printf("%s: %ld passed, %ld failed, %ld skipped\n", path, r->n_passed - n_passed,
               r->n_failed - n_failed, r->n_skipped - n_skipped);
    }
}

/* ------------------------------------------------------------------------ */
/* Finding the test files                                                    */
/* ------------------------------------------------------------------------ */

typedef struct PathList {
    char **items; /* owned strings */
    size_t n;     /* paths used */
    size_t cap;   /* paths allocated */
} PathList;

static void pathlist_push(PathList *list, char *path)
{
    list->items = grow(list->items, &list->cap, list->n + 1, sizeof list->items[0]);
    list->items[list->n++] = path;
}

static char *join_path(const char *dir, const char *name)
{
    size_t n_dir = strlen(dir);
    bool has_slash = n_dir > 0 && dir[n_dir - 1] == '/';
    char *path = xrealloc(NULL, n_dir + strlen(name) + 2);
    sprintf(path, "%s%s%s", dir, has_slash ? "" : "/", name);
    return path;
}

static int compare_paths(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_test_name(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".test") == 0;
}

/* Adds dir's *.test files in name order, then those of its subdirectories. */
static void collect_dir(const char *dir, PathList *out)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        return;
    }
    PathList entries = {0};
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (strcmp(ent->d_name, ".") != 0 && strcmp(ent->d_name, "..") != 0) {
            pathlist_push(&entries, join_path(dir, ent->d_name));
        }
    }
    closedir(d);
    if (entries.n > 1) {
        qsort(entries.items, entries.n, sizeof entries.items[0], compare_paths);
    }
    for (int pass = 0; pass < 2; pass++) { /* files first, then directories */
        for (size_t idx = 0; idx < entries.n; idx++) {
            struct stat st;
            char *path = entries.items[idx];
            if (path == NULL || stat(path, &st) != 0) {
                continue;
            }
            if (pass == 0 && S_ISREG(st.st_mode) && is_test_name(path)) {
                pathlist_push(out, path);
                entries.items[idx] = NULL;
            } else if (pass == 1 && S_ISDIR(st.st_mode)) {
                collect_dir(path, out);
            }
        }
    }
    for (size_t idx = 0; idx < entries.n; idx++) {
        free(entries.items[idx]);
    }
    free(entries.items);
}

/* A directory contributes its tests; anything else is run as a test file. */
static void collect_path(const char *path, PathList *out)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        collect_dir(path, out);
    } else {
        pathlist_push(out, strdup(path));
    }
}

/* ------------------------------------------------------------------------ */
/* Command line                                                              */
/* ------------------------------------------------------------------------ */

static int usage(const char *msg)
{
    fprintf(stderr,
            "slt_runner: %s\n"
            "usage: slt_runner [--threads N] [--set NAME=VALUE]... [--db DIR [--reopen]] "
            "[--verbose] [--stop-on-fail] PATH...\n",
            msg);
    return 2;
}

/* Parses the options; returns the index of the first PATH, or -1 on error. */
static int parse_args(int argc, char **argv, Options *opts)
{
    int idx = 1;
    for (; idx < argc && strncmp(argv[idx], "--", 2) == 0; idx++) {
        const char *arg = argv[idx];
        if (strcmp(arg, "--") == 0) {
            return idx + 1;
        } else if (strcmp(arg, "--verbose") == 0) {
            opts->is_verbose = true;
        } else if (strcmp(arg, "--stop-on-fail") == 0) {
            opts->is_stop_on_fail = true;
        } else if (strcmp(arg, "--threads") == 0 && idx + 1 < argc) {
            opts->threads = argv[++idx];
        } else if (strncmp(arg, "--threads=", 10) == 0) {
            opts->threads = arg + 10;
        } else if (strcmp(arg, "--db") == 0 && idx + 1 < argc) {
            opts->db_dir = argv[++idx];
        } else if (strcmp(arg, "--reopen") == 0) {
            opts->is_reopen = true;
        } else if (strcmp(arg, "--set") == 0 && idx + 1 < argc && opts->n_settings < MAX_SETTINGS &&
                   strchr(argv[idx + 1], '=') != NULL) {
            opts->settings[opts->n_settings++] = argv[++idx];
        } else {
            return -1;
        }
    }
    char *end;
    long n = strtol(opts->threads, &end, 10);
    return *end == '\0' && n >= 1 && n <= 4096 ? idx : -1;
}

static void runner_free(Runner *r)
{
    free(r->sql.data);
    free(r->values.data);
    free(r->offsets);
    free(r->actual.items);
    free(r->scratch.items);
    free(r->expected.items);
    free(r->expected_msg.data);
    free(r->detail.data);
    free(r->subst.data);
    if (r->tmp_dir != NULL) {
        remove_tree(r->tmp_dir);
        free(r->tmp_dir);
    }
}

int main(int argc, char **argv)
{
    Runner r = {.opts = {.threads = "1"}};
    int first = parse_args(argc, argv, &r.opts);
    if (first < 0) {
        return usage("bad option");
    }
    if (first >= argc) {
        return usage("no test path given");
    }
    if (!md5_self_check()) {
        fputs("slt_runner: MD5 self-check failed\n", stderr);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep FAIL lines if the engine crashes */
    PathList files = {0};
    for (int idx = first; idx < argc; idx++) {
        collect_path(argv[idx], &files);
    }
    for (size_t idx = 0; idx < files.n && !r.is_stopped; idx++) {
        run_file(&r, files.items[idx]);
    }
    printf("%ld passed, %ld failed", r.n_passed, r.n_failed);
    if (r.n_skipped > 0) {
        printf(", %ld skipped", r.n_skipped);
    }
    printf("\n");
    for (size_t idx = 0; idx < files.n; idx++) {
        free(files.items[idx]);
    }
    free(files.items);
    runner_free(&r);
    return r.n_failed == 0 && r.n_passed > 0 ? 0 : 1;
}
