/*
 * csv.c - parallel parse of delimited text into a table.
 *
 * The file is read one window at a time (a bounded buffer reserved as
 * execution memory; docs/memory.md): each window ends at a record boundary and
 * the bytes of an unfinished record move to the front of the next one.  Per
 * window, pass 1 (sequential) finds chunk boundaries at record starts, about
 * chunk_bytes apart, with the line number of each, tracking quote state so a
 * newline inside quotes never splits.  Pass 2 (parallel): each chunk's records
 * are split into fields and converted by column type into batches owned by the
 * chunk.  Pass 3 (sequential): constraint checks, then append in chunk order,
 * then the window's batches are freed.  The first error in file order wins,
 * whatever the order tasks finished in; rows of earlier windows are then
 * truncated away.
 */
#include "storage/csv.h"
#include "storage/csv_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/datetime.h"
#include "common/mem.h"
#include "common/value.h"

/* A window is CHUNKS_PER_WORKER chunks per worker, a chunk CHUNK_BYTES but
 * at most a 256th of memory_limit per worker: the parsed rows of two windows
 * are held at a time (one being appended while the next is parsed), and
 * parsed rows can take more room than their text.  Several chunks per worker
 * let the workers that parse share the window with the one that appends the
 * window before.  A window without a whole record doubles (up to
 * max_line_size). */
#define CHUNK_BYTES ((size_t)128 << 10)
#define CHUNK_MIN ((size_t)4 << 10)
#define CHUNKS_PER_WORKER 4

typedef struct Chunk {
    size_t begin, end; /* byte range of whole records */
    int64_t line;      /* line number of `begin` */
    int n_batches, cap_batches;
    CmBatch **batches; /* parsed rows; owned */
    CmErr err;
} Chunk;

typedef struct Load {
    int n_bcols;               /* columns of a parsed batch (the table's, or the reader's) */
    const CmType *btypes;      /* their types */
    const char *const *bnames; /* their names, for errors */
    const StCsvOptions *opt;
    const char *path;
    const char *data;
    size_t size;
    bool is_eof;        /* data ends the input: its last record needs no newline */
    bool is_first;      /* the first window: its first record may be the header */
    size_t used;        /* find_chunks: bytes of whole records in data */
    int64_t end_line;   /* find_chunks: the line number at `used` */
    int64_t first_line; /* the line number of data[0] */
    size_t chunk_bytes;
    Chunk *chunks;
    int n_chunks, cap_chunks;
    int64_t max_line;    /* opt->max_line_size, or its default when 0 */
    char escape;         /* opt->escape, or the quote when 0 */
    int64_t skip_left;   /* lines of opt->skip still to drop at the start */
    int64_t batch_bytes; /* what one parsed batch reserves, strings aside */
    CmMemRes mem;        /* the window and its parsed batches; thread-safe */
    /* st_csv_load: the window parsed last, appended while the next one parses */
    Chunk *ready;
    int n_ready, cap_ready;
    int64_t ready_str_bytes; /* what its strings reserved */
    int64_t ready_rows;      /* > 0: the rows the table's indexes are sized for before
                                the ready window goes in (the first window's) */
    bool ready_rows_exact;   /* they are the input's rows, not an estimate */
    int64_t file_bytes;      /* the input's size when it is a regular file, else 0 */
    StColStats *stats;       /* the rows appended so far, counted apart from the table
                                (added to its statistics when the load succeeds) */
} Load;

/* ---- pass 1: chunk boundaries ------------------------------------------------------ */

static CmStatus nul_error(const char *path, int64_t line, CmErr *err)
{
    return cm_err_set(err, CM_RUNTIME, -1, "%s, line %lld: NUL byte in the input", path,
                      (long long)line);
}

static CmStatus long_line_error(const char *path, int64_t line, int64_t max, CmErr *err)
{
    return cm_err_set(err, CM_LIMIT, -1,
                      "%s, line %lld: record longer than %lld bytes "
                      "(COPY option max_line_size)",
                      path, (long long)line, (long long)max);
}

/* Cuts data[0..size) into chunks of whole records; sets ld->used to the end of
 * the last whole record (all of it at the end of the input) and ld->end_line.
 * Also checks every byte: no NUL, and no record longer than max_line_size. */
static int find_chunks(Load *ld, CmErr *err)
{
    int cap = (int)(ld->size / ld->chunk_bytes) + 2;
    if (cap > ld->cap_chunks) {
        Chunk *g = cm_realloc(ld->chunks, sizeof(Chunk) * (size_t)cap);
        if (g == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory loading '%s'", ld->path);
        }
        ld->chunks = g;
        ld->cap_chunks = cap;
    }
    ld->n_chunks = 0;
    const char *d = ld->data;
    char q = ld->opt->quote;
    int64_t max = ld->max_line;
    bool in_quotes = false;
    size_t start = 0, rec = 0; /* the chunk's and the record's first byte */
    int64_t line = ld->first_line, start_line = line, rec_line = line;
    char esc = ld->escape;
    size_t slow_until = 0; /* bytes before it hold a quote or a NUL: looked at one by one */
    for (size_t i = 0; i < ld->size; i++) {
        if (!in_quotes && i >= slow_until) {
            /* A line with no quote and no NUL holds nothing to track but its end:
             * memchr finds it far faster than the loop below. */
            const char *nl = memchr(d + i, '\n', ld->size - i);
            size_t e = nl != NULL ? (size_t)(nl - d) : ld->size;
            if ((q == 0 || memchr(d + i, q, e - i) == NULL) && memchr(d + i, '\0', e - i) == NULL) {
                i = e;
                if (i == ld->size) {
                    break;
                }
            } else {
                slow_until = e + 1;
            }
        }
        char c = d[i];
        if (in_quotes && esc != q && c == esc && i + 1 < ld->size) {
            line += d[i + 1] == '\n';
            i++; /* an escaped character inside quotes, maybe a quote */
            continue;
        }
        if (q != 0 && c == q) {
            in_quotes = !in_quotes;
        } else if (c == '\0') {
            return nul_error(ld->path, line, err);
        } else if (c == '\n') {
            line++;
            if (in_quotes) {
                continue;
            }
            if ((int64_t)(i - rec) > max) {
                return long_line_error(ld->path, rec_line, max, err);
            }
            rec = i + 1;
            rec_line = line;
            if (i + 1 - start >= ld->chunk_bytes) {
                ld->chunks[ld->n_chunks++] =
                    (Chunk){.begin = start, .end = i + 1, .line = start_line};
                start = i + 1;
                start_line = line;
            }
        }
    }
    if ((int64_t)(ld->size - rec) > max) {
        return long_line_error(ld->path, rec_line, max, err);
    }
    size_t end = ld->is_eof ? ld->size : rec; /* an unfinished record waits for more */
    if (start < end) {
        ld->chunks[ld->n_chunks++] = (Chunk){.begin = start, .end = end, .line = start_line};
    }
    ld->used = end;
    ld->end_line = ld->is_eof ? line : rec_line;
    return CM_OK;
}

/* ---- pass 2: parse ------------------------------------------------------------------- */

typedef StCsvField Field;

static CmStatus row_error(Load *ld, Chunk *c, int64_t line, int field, const char *what,
                          const Field *f)
{
    const char *col = field < ld->opt->n_cols ? ld->bnames[ld->opt->cols[field]] : "?";
    if (f != NULL) {
        const char *hint = ld->opt->hint != NULL ? ld->opt->hint : "";
        return cm_err_set(&c->err, CM_RUNTIME, -1, "%s, line %lld, column %d (%s): %s '%.*s'%s",
                          ld->path, (long long)line, field + 1, col, what,
                          (int)(f->n > 60 ? 60 : f->n), f->p, hint);
    }
    return cm_err_set(&c->err, CM_RUNTIME, -1, "%s, line %lld: %s", ld->path, (long long)line,
                      what);
}

static CmBatch *chunk_batch(Load *ld, Chunk *c)
{
    if (c->n_batches > 0 && c->batches[c->n_batches - 1]->n_rows < CM_BATCH_CAP) {
        return c->batches[c->n_batches - 1];
    }
    if (c->n_batches == c->cap_batches) {
        int cap = c->cap_batches ? c->cap_batches * 2 : 16;
        CmBatch **g = cm_realloc(c->batches, sizeof(CmBatch *) * (size_t)cap);
        if (g == NULL) {
            return NULL;
        }
        c->batches = g;
        c->cap_batches = cap;
    }
    if (cm_mem_need(&ld->mem, ld->batch_bytes, &c->err) != CM_OK) {
        return NULL;
    }
    CmBatch *b = cm_malloc(sizeof *b);
    if (b == NULL || cm_batch_init(b, ld->n_bcols, ld->btypes, &c->err) != CM_OK) {
        cm_free(b);
        return NULL;
    }
    /* Columns not loaded stay NULL. */
    for (int col = 0; col < ld->n_bcols; col++) {
        for (int r = 0; r < CM_BATCH_CAP; r++) {
            cm_vec_set_null(&b->cols[col], (uint32_t)r);
        }
    }
    c->batches[c->n_batches++] = b;
    return b;
}

/* Offset of the first byte of p[0..n) that is not valid UTF-8 (overlong forms,
 * surrogates and code points past U+10FFFF are invalid), or n. */
static size_t utf8_invalid_at(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                     : c >= 0xE0 && c <= 0xEF ? 3
                     : c >= 0xF0 && c <= 0xF4 ? 4
                                              : 0;
        if (len == 0 || i + len > n) {
            return i;
        }
        unsigned char lo = 0x80, hi = 0xBF; /* the second byte's range */
        if (c == 0xE0) {
            lo = 0xA0;
        } else if (c == 0xED) {
            hi = 0x9F;
        } else if (c == 0xF0) {
            lo = 0x90;
        } else if (c == 0xF4) {
            hi = 0x8F;
        }
        if (p[i + 1] < lo || p[i + 1] > hi) {
            return i;
        }
        for (size_t k = 2; k < len; k++) {
            if ((p[i + k] & 0xC0) != 0x80) {
                return i;
            }
        }
        i += len;
    }
    return n;
}

static bool is_null_field(const Load *ld, const Field *f)
{
    const char *ns = ld->opt->null_str;
    size_t nn = strlen(ns);
    return !f->quoted && f->n == nn && memcmp(f->p, ns, nn) == 0;
}

/* Converts one field into row `row` of column `col` of b. */
static bool convert(Load *ld, Chunk *c, CmBatch *b, int col, uint32_t row, Field *f, int64_t line,
                    int field)
{
    CmVec *v = &b->cols[col];
    CmType t = v->type;
    if (is_null_field(ld, f)) {
        cm_vec_set_null(v, row);
        return true;
    }
    int64_t i64 = 0; /* a field that does not parse leaves the slot defined */
    bool ok = true;
    switch ((CmTypeId)t.id) {
    case CM_T_INT32:
        ok = cm_parse_int64(f->p, f->n, &i64) && i64 >= INT32_MIN && i64 <= INT32_MAX;
        ((int32_t *)v->data)[row] = (int32_t)i64;
        break;
    case CM_T_INT64:
        ok = cm_parse_int64(f->p, f->n, &((int64_t *)v->data)[row]);
        break;
    case CM_T_DOUBLE:
        ok = cm_parse_double(f->p, f->n, &((double *)v->data)[row]);
        break;
    case CM_T_DECIMAL:
        ok = cm_parse_decimal(f->p, f->n, t.precision, t.scale, &((int64_t *)v->data)[row]);
        break;
    case CM_T_DECIMAL128: {
        CmInt128 x = 0; /* defined even when the field does not parse */
        ok = cm_parse_decimal128(f->p, f->n, t.precision, t.scale, &x);
        cm_i128_put((char *)v->data + 16 * (size_t)row, x);
        break;
    }
    case CM_T_DATE:
        ok = cm_parse_date(f->p, f->n, &((int32_t *)v->data)[row]);
        break;
    case CM_T_TIME:
        ok = cm_parse_time(f->p, f->n, &((int64_t *)v->data)[row]);
        break;
    case CM_T_TIMESTAMP:
        ok = cm_parse_timestamp(f->p, f->n, &((int64_t *)v->data)[row]);
        break;
    case CM_T_INTERVAL: {
        CmInterval iv = {0, 0, 0}; /* defined even when the field does not parse */
        ok = cm_parse_interval(f->p, f->n, &iv);
        ((CmInterval *)v->data)[row] = iv;
        break;
    }
    case CM_T_LIST:
        ok = false;
        break; /* no text form of a list is read yet */
    case CM_T_BOOL: {
        bool bv = false; /* not set when the field does not parse; a bool must be 0 or 1 */
        ok = cm_parse_bool(f->p, f->n, &bv);
        ((uint8_t *)v->data)[row] = bv;
        break;
    }
    case CM_T_VARCHAR: {
        char *s = cm_arena_alloc(&b->heap, f->n ? f->n : 1);
        if (s == NULL) {
            cm_err_set(&c->err, CM_OOM, -1, "out of memory loading '%s'", ld->path);
            return false;
        }
        size_t n = 0;
        char esc = ld->escape;
        for (size_t k = 0; k < f->n; k++) {
            if (f->has_escape && f->p[k] == esc && k + 1 < f->n) {
                k++; /* "" -> ", or \" -> " */
            }
            s[n++] = f->p[k];
        }
        size_t bad = utf8_invalid_at((const unsigned char *)s, n);
        if (bad < n) {
            const char *col_name = ld->bnames[ld->opt->cols[field]];
            cm_err_set(&c->err, CM_RUNTIME, -1,
                       "%s, line %lld, column %d (%s): invalid UTF-8: byte 0x%02X at offset %zu "
                       "of the field",
                       ld->path, (long long)line, field + 1, col_name, (unsigned char)s[bad], bad);
            return false;
        }
        if (t.length >= 0 && (int64_t)n > t.length) {
            row_error(ld, c, line, field, "value too long for its column:", f);
            return false;
        }
        ((CmStr *)v->data)[row] = cm_str_make(s, (uint32_t)n);
        break;
    }
    case CM_T_NULL:
        break;
    }
    if (!ok) {
        char tn[32];
        char what[64];
        snprintf(what, sizeof what, "cannot read as %s:", cm_type_name(t, tn, sizeof tn));
        row_error(ld, c, line, field, what, f);
        return false;
    }
    cm_vec_set_valid(v, row);
    return true;
}

/* With ignore_errors, forgets a row's conversion or shape error (not OOM)
 * so that parsing goes on without the row. */
static bool skip_bad_row(const Load *ld, Chunk *c)
{
    if (!ld->opt->ignore_errors || c->err.code != CM_RUNTIME) {
        return false;
    }
    cm_err_init(&c->err);
    return true;
}

static void parse_chunk(void *arg, int idx, int worker)
{
    Load *ld = arg;
    Chunk *c = &ld->chunks[idx];
    int n_cols = ld->opt->n_cols;
    Field fields[1025];
    size_t pos = c->begin;
    int64_t line = c->line;
    if (idx == 0 && ld->is_first && ld->opt->header && pos < c->end) {
        bool bad;
        int64_t extra = 0;
        st_csv_split(ld->data, &pos, c->end, ld->opt->delimiter, ld->opt->quote, ld->escape, fields,
                     1024, &extra, &bad);
        line += 1 + extra;
    }
    while (pos < c->end && c->err.code == CM_OK) {
        int64_t extra = 0;
        bool bad_quote;
        int64_t this_line = line;
        if (ld->data[pos] == '\n' ||
            (ld->data[pos] == '\r' && pos + 1 < c->end && ld->data[pos + 1] == '\n')) {
            pos += ld->data[pos] == '\n' ? 1 : 2; /* blank line */
            line++;
            continue;
        }
        int n = st_csv_split(ld->data, &pos, c->end, ld->opt->delimiter, ld->opt->quote, ld->escape,
                             fields, 1025, &extra, &bad_quote);
        line += 1 + extra;
        if (bad_quote) {
            row_error(ld, c, this_line, 0, "unterminated quoted field", NULL);
            if (skip_bad_row(ld, c)) {
                continue;
            }
            return;
        }
        /* TPC-DS .dat lines end with a delimiter: one extra, empty field. */
        if (n == n_cols + 1 && fields[n_cols].n == 0 && !fields[n_cols].quoted) {
            n = n_cols;
        }
        if (n != n_cols) {
            char what[96];
            snprintf(what, sizeof what, "expected %d fields but found %d", n_cols, n);
            row_error(ld, c, this_line, 0, what, NULL);
            if (skip_bad_row(ld, c)) {
                continue;
            }
            return;
        }
        CmBatch *b = chunk_batch(ld, c);
        if (b == NULL) {
            cm_err_set(&c->err, CM_OOM, -1, "out of memory loading '%s'", ld->path);
            return;
        }
        uint32_t row = (uint32_t)b->n_rows;
        bool is_ok = true;
        for (int k = 0; k < n_cols && is_ok; k++) {
            is_ok = convert(ld, c, b, ld->opt->cols[k], row, &fields[k], this_line, k);
        }
        if (!is_ok) {
            if (skip_bad_row(ld, c)) {
                continue; /* the row's slots are overwritten by the next row */
            }
            return;
        }
        b->n_rows++;
    }
    (void)worker;
}

/* ---- driver ---------------------------------------------------------------------------- */

/* Fills buf[*n..cap) from f, or to the end of the input (*is_eof). */
static CmStatus read_more(FILE *f, const char *path, char *buf, size_t cap, size_t *n, bool *is_eof,
                          CmErr *err)
{
    while (*n < cap) {
        size_t got = fread(buf + *n, 1, cap - *n, f);
        *n += got;
        if (got == 0) {
            if (ferror(f)) {
                return cm_err_set(err, CM_IO, -1, "cannot read '%s': %s", path, strerror(errno));
            }
            *is_eof = true;
            break;
        }
    }
    return CM_OK;
}

/* Frees the window's parsed batches and what they reserved. */
static void free_chunk_batches(Load *ld, Chunk *chunks, int n)
{
    for (int i = 0; chunks != NULL && i < n; i++) {
        for (int b = 0; b < chunks[i].n_batches; b++) {
            cm_batch_fini(chunks[i].batches[b]);
            cm_free(chunks[i].batches[b]);
        }
        cm_mem_shrink(&ld->mem, ld->batch_bytes * chunks[i].n_batches);
        cm_free(chunks[i].batches);
        chunks[i].batches = NULL;
        chunks[i].n_batches = chunks[i].cap_batches = 0;
    }
}

static void free_batches(Load *ld)
{
    free_chunk_batches(ld, ld->chunks, ld->n_chunks);
    ld->n_chunks = 0;
}

/* Reserves the string bytes of the window find_chunks cut (*str_bytes, to
 * shrink once its batches are freed): a chunk's strings are at most its bytes. */
static CmStatus reserve_strings(Load *ld, int64_t *str_bytes, CmErr *err)
{
    *str_bytes = 0;
    bool has_strings = false;
    for (int k = 0; k < ld->opt->n_cols; k++) {
        has_strings |= ld->btypes[ld->opt->cols[k]].id == CM_T_VARCHAR;
    }
    if (has_strings && cm_mem_need(&ld->mem, (int64_t)ld->used, err) != CM_OK) {
        return err->code;
    }
    *str_bytes = has_strings ? (int64_t)ld->used : 0;
    for (int i = 0; i < ld->n_chunks; i++) {
        cm_err_init(&ld->chunks[i].err);
    }
    return CM_OK;
}

/* The first error of the window's chunks, in file order, into err. */
static CmStatus chunk_errors(Load *ld, CmErr *err)
{
    for (int i = 0; i < ld->n_chunks && err->code == CM_OK; i++) {
        cm_err_copy(err, &ld->chunks[i].err);
    }
    return err->code;
}

/* Parses the chunks of the window in this thread (the streaming reader's
 * path); the first error in file order wins. */
static CmStatus parse_window(Load *ld, int64_t *str_bytes, CmErr *err)
{
    *str_bytes = 0;
    if (find_chunks(ld, err) != CM_OK || reserve_strings(ld, str_bytes, err) != CM_OK) {
        return err->code;
    }
    for (int i = 0; i < ld->n_chunks; i++) {
        parse_chunk(ld, i, 0);
        if (ld->chunks[i].err.code != CM_OK) {
            break;
        }
    }
    return chunk_errors(ld, err);
}

/* ---- st_csv_load's pipeline: one window appended while the next one parses ---------- */

/* Appends " (loading 'path')" to err's message: a constraint's message
 * names no file. */
static void name_file(CmErr *err, const char *path)
{
    snprintf(err->msg + strlen(err->msg), sizeof err->msg - strlen(err->msg), " (loading '%s')",
             path);
}

/* Checks the rows of the window parsed before (ld->ready), then appends them
 * in file order; the first error stops it.  Touches the table and ld->ready
 * only, so it runs beside the parse of the next window. */
static void append_ready(Load *ld, StTable *t, CmErr *err)
{
    for (int i = 0; i < ld->n_ready && err->code == CM_OK; i++) {
        for (int b = 0; b < ld->ready[i].n_batches && err->code == CM_OK; b++) {
            if (st_table_check(t, ld->ready[i].batches[b], err) != CM_OK) {
                name_file(err, ld->path); /* no line: find it in the file order */
            }
        }
    }
    /* Only the first window sizes the indexes, for the whole input (an
     * estimate from its share of the file's bytes when there is more): grown
     * window by window they would be rebuilt at every doubling.  A wrong
     * estimate only costs growing later. */
    if (err->code == CM_OK && ld->ready_rows > 0) {
        CmErr quiet;
        cm_err_init(&quiet);
        st_table_reserve(t, ld->ready_rows, ld->ready_rows_exact ? err : &quiet);
    }
    for (int i = 0; i < ld->n_ready && err->code == CM_OK; i++) {
        for (int b = 0; b < ld->ready[i].n_batches && err->code == CM_OK; b++) {
            if (st_table_append_uncounted(t, ld->ready[i].batches[b], err) == CM_RUNTIME) {
                name_file(err, ld->path); /* a duplicate key: which file it came from */
            }
        }
    }
}

/* Counts the rows of the ready window in ld->stats (beside append_ready). */
static void count_ready(Load *ld)
{
    for (int i = 0; i < ld->n_ready; i++) {
        for (int b = 0; b < ld->ready[i].n_batches; b++) {
            const CmBatch *batch = ld->ready[i].batches[b];
            for (int col = 0; col < ld->n_bcols; col++) {
                st_stats_add(&ld->stats[col], &batch->cols[col], batch->sel, batch->n_rows);
            }
        }
    }
}

/* Frees the ready window's batches and what they reserved. */
static void drop_ready(Load *ld)
{
    free_chunk_batches(ld, ld->ready, ld->n_ready);
    cm_mem_shrink(&ld->mem, ld->ready_str_bytes);
    ld->ready_str_bytes = 0;
    ld->n_ready = 0;
}

typedef struct Round {
    Load *ld;
    StTable *t;
    int n_first; /* tasks before the parse tasks: 2 when a window waits to be appended */
    CmErr append_err;
} Round;

/* Task 0 appends the ready window and task 1 counts its statistics (tasks
 * start in index order, so they start first); the others parse the chunks
 * of the new window. */
static void round_task(void *arg, int idx, int worker)
{
    Round *r = arg;
    if (idx == 0 && r->n_first > 0) {
        append_ready(r->ld, r->t, &r->append_err);
    } else if (idx == 1 && r->n_first > 0) {
        count_ready(r->ld);
    } else {
        parse_chunk(r->ld, idx - r->n_first, worker);
    }
}

/* Cuts the window into chunks and parses them on the pool while one task
 * appends the window parsed before; the new window then waits in ld->ready
 * for the next round (or load_flush).  Errors keep the file order: the
 * earlier window's first, then this one's parse errors. */
static CmStatus load_window(Load *ld, StTable *t, CmPool *pool, CmErr *err)
{
    Round r = {.ld = ld, .t = t, .n_first = ld->n_ready > 0 ? 2 : 0};
    cm_err_init(&r.append_err);
    CmErr parse_err;
    cm_err_init(&parse_err);
    int64_t str_bytes = 0;
    if (find_chunks(ld, &parse_err) == CM_OK &&
        reserve_strings(ld, &str_bytes, &parse_err) == CM_OK) {
        cm_pool_run(pool, r.n_first + ld->n_chunks, round_task, &r);
        chunk_errors(ld, &parse_err);
    } else if (r.n_first > 0) {
        append_ready(ld, t, &r.append_err);
        count_ready(ld);
    }
    drop_ready(ld);
    cm_err_copy(err, r.append_err.code != CM_OK ? &r.append_err : &parse_err);
    if (err->code != CM_OK) {
        free_batches(ld);
        cm_mem_shrink(&ld->mem, str_bytes);
        return err->code;
    }
    Chunk *chunks = ld->chunks;
    int cap = ld->cap_chunks;
    ld->chunks = ld->ready;
    ld->cap_chunks = ld->cap_ready;
    ld->ready = chunks;
    ld->cap_ready = cap;
    ld->n_ready = ld->n_chunks;
    ld->n_chunks = 0;
    ld->ready_str_bytes = str_bytes;
    ld->ready_rows = 0;
    ld->ready_rows_exact = ld->is_eof;
    if (ld->is_first && ld->used > 0) {
        int64_t rows = 0;
        for (int i = 0; i < ld->n_ready; i++) {
            for (int b = 0; b < ld->ready[i].n_batches; b++) {
                rows += ld->ready[i].batches[b]->n_rows;
            }
        }
        double share = ld->is_eof || ld->file_bytes <= (int64_t)ld->used
                           ? 1.0
                           : (double)ld->file_bytes / (double)ld->used * 1.05;
        ld->ready_rows = (int64_t)((double)rows * share);
    }
    return CM_OK;
}

/* Appends the window parsed last: the end of st_csv_load. */
static CmStatus load_flush(Load *ld, StTable *t, CmErr *err)
{
    append_ready(ld, t, err);
    count_ready(ld);
    drop_ready(ld);
    return err->code == CM_OK ? st_table_add_stats(t, ld->stats, err) : err->code;
}

static void load_init(Load *ld, const char *path, const StCsvOptions *opt, int n_cols,
                      const CmType *types, const char *const *names, const char *what)
{
    *ld = (Load){.opt = opt,
                 .path = path,
                 .is_first = true,
                 .first_line = 1,
                 .n_bcols = n_cols,
                 .btypes = types,
                 .bnames = names};
    ld->max_line = opt->max_line_size > 0 ? opt->max_line_size : ST_CSV_MAX_LINE_SIZE;
    ld->escape = opt->escape != 0 ? opt->escape : opt->quote;
    ld->skip_left = opt->skip;
    cm_mem_res_init(&ld->mem, CM_MEM_EXECUTION, what, NULL);
    for (int col = 0; col < n_cols; col++) {
        ld->batch_bytes += (int64_t)CM_BATCH_CAP * (cm_type_width(types[col]) + 1);
    }
}

/* Drops the lines of opt->skip still in front of the data (plain lines:
 * quotes are not looked at).  True when the rest of the window is records. */
static bool drop_skipped_lines(Load *ld)
{
    size_t at = 0;
    while (ld->skip_left > 0 && at < ld->size) {
        const char *nl = memchr(ld->data + at, '\n', ld->size - at);
        if (nl == NULL) {
            at = ld->size; /* the line goes on in the next window */
            break;
        }
        at = (size_t)(nl - ld->data) + 1;
        ld->skip_left--;
        ld->first_line++;
    }
    if (at > 0) {
        memmove((char *)ld->data, ld->data + at, ld->size - at);
        ld->size -= at;
    }
    return ld->skip_left == 0 || ld->is_eof;
}

/* True when the statement was asked to stop (StCsvOptions.interrupt). */
static bool interrupted(const StCsvOptions *opt)
{
    return opt->interrupt != NULL && atomic_load(opt->interrupt);
}

/* The window a load reads `path` through: reserves `cap` bytes of ld's
 * memory, allocates them (*buf, owned: cm_free) as ld's data and opens the
 * file (*f, owned: fclose).  On an error, what was made is in *buf and *f
 * for the caller's cleanup, the rest NULL. */
static CmStatus open_window(Load *ld, const char *path, size_t cap, char **buf, FILE **f,
                            CmErr *err)
{
    if (cm_mem_need(&ld->mem, (int64_t)cap, err) != CM_OK) {
        return err->code;
    }
    if ((*buf = cm_malloc(cap)) == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory reading '%s'", path);
    }
    if ((*f = fopen(path, "rb")) == NULL) {
        return cm_err_set(err, CM_IO, -1, "cannot open '%s': %s", path, strerror(errno));
    }
    ld->data = *buf;
    return CM_OK;
}

CmStatus st_csv_load(StTable *t, const char *path, const StCsvOptions *opt, CmPool *pool,
                     int64_t *n_rows, CmErr *err)
{
    Load ld;
    *n_rows = 0;
    if (opt->n_cols > 1024 || t->n_cols > 1024) {
        return cm_err_set(err, CM_LIMIT, -1, "COPY into more than 1024 columns is not supported");
    }
    CmType types[1024];
    const char *names[1024];
    for (int col = 0; col < t->n_cols; col++) {
        types[col] = t->cols[col].type;
        names[col] = t->cols[col].name;
    }
    load_init(&ld, path, opt, t->n_cols, types, names, "COPY parse buffers");
    size_t n_workers = (size_t)cm_pool_size(pool);
    ld.chunk_bytes = (size_t)(cm_mem_limit() / 256) / n_workers;
    ld.chunk_bytes = ld.chunk_bytes > CHUNK_BYTES ? CHUNK_BYTES
                     : ld.chunk_bytes < CHUNK_MIN ? CHUNK_MIN
                                                  : ld.chunk_bytes;
    size_t cap = ld.chunk_bytes * n_workers * CHUNKS_PER_WORKER;
    int64_t before = t->n_rows;
    int64_t consumed = 0; /* bytes of the file before the window */
    char *buf = NULL;
    FILE *f = NULL;
    if ((ld.stats = st_stats_new_array(t->n_cols)) == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory loading '%s'", path);
        goto done;
    }
    if (open_window(&ld, path, cap, &buf, &f, err) != CM_OK) {
        goto done;
    }
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode)) {
        ld.file_bytes = (int64_t)sb.st_size;
    }
    for (;;) {
        if (!interrupted(opt) && read_more(f, path, buf, cap, &ld.size, &ld.is_eof, err) == CM_OK &&
            drop_skipped_lines(&ld) && !interrupted(opt) &&
            load_window(&ld, t, pool, err) != CM_OK) {
            goto done;
        }
        if (interrupted(opt)) {
            /* Ctrl+C; a read from a pipe may have failed with EINTR first. */
            cm_err_init(err);
            cm_err_set(err, CM_CANCELLED, -1, "interrupted");
        }
        if (err->code != CM_OK) {
            goto done;
        }
        if (ld.skip_left > 0 && !ld.is_eof) {
            continue; /* the skipped lines go on past the window */
        }
        if (ld.is_eof) {
            break;
        }
        if (ld.used == 0) {
            /* No whole record yet (find_chunks stops one past max_line_size). */
            char *g = NULL;
            if (cm_mem_need(&ld.mem, (int64_t)cap, err) != CM_OK ||
                (g = cm_realloc(buf, cap * 2)) == NULL) {
                cm_err_set(err, CM_OOM, -1, "out of memory reading '%s'", path);
                goto done;
            }
            ld.data = buf = g;
            cap *= 2;
            continue;
        }
        consumed += (int64_t)ld.used;
        if (opt->on_read != NULL) {
            opt->on_read(opt->on_read_ctx, consumed);
        }
        memmove(buf, buf + ld.used, ld.size - ld.used);
        ld.size -= ld.used;
        ld.first_line = ld.end_line;
        ld.is_first = false;
    }
    if (load_flush(&ld, t, err) != CM_OK) {
        goto done;
    }
    if (st_table_check_keys(t, true, err) == CM_RUNTIME) {
        name_file(err, path); /* a duplicate key, as append_ready says it */
    }
    if (err->code != CM_OK) {
        goto done;
    }
    *n_rows = t->n_rows - before;
done:
    if (err->code != CM_OK) {
        bool was_stale = t->stats_stale; /* the statistics never counted this load's rows */
        st_table_truncate(t, before);
        t->stats_stale = was_stale;
    }
    if (f != NULL) {
        fclose(f);
    }
    free_batches(&ld);
    drop_ready(&ld);
    cm_free(ld.chunks);
    cm_free(ld.ready);
    cm_free(ld.stats);
    cm_free(buf);
    cm_mem_res_fini(&ld.mem);
    return err->code;
}

/* ---- ranges of a file for parallel scans ------------------------------------------ */

/* Adds range [begin, -1) at `line` to rg, ending the last one there, unless
 * rg is full or `begin` is too close to the last one's begin. */
static void range_add(StCsvRange *rg, int *n, int cap, int64_t begin, int64_t line,
                      int64_t range_bytes)
{
    if (*n == cap || begin - rg[*n - 1].begin < range_bytes) {
        return;
    }
    rg[*n - 1].end = begin;
    rg[(*n)++] = (StCsvRange){.begin = begin, .end = -1, .line = line};
}

CmStatus st_csv_ranges(const char *path, const StCsvOptions *opt, int64_t range_bytes,
                       int max_ranges, StCsvRange **ranges, int *n_ranges, CmErr *err)
{
    struct stat st;
    *ranges = NULL;
    *n_ranges = 0;
    range_bytes = range_bytes > 0 ? range_bytes : 1;
    bool is_split = stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size / 2 >= range_bytes &&
                    max_ranges > 1;
    int cap_ranges = is_split ? max_ranges : 1;
    int64_t est = is_split ? st.st_size / range_bytes + 1 : 1;
    cap_ranges = est < cap_ranges ? (int)est : cap_ranges;
    StCsvRange *rg = cm_malloc(sizeof *rg * (size_t)cap_ranges);
    if (rg == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory reading '%s'", path);
    }
    rg[0] = (StCsvRange){.begin = 0, .end = -1, .line = 1};
    int n = 1;
    Load ld;
    load_init(&ld, path, opt, 0, NULL, NULL, "read_csv ranges");
    /* chunks as long as a range: each chunk start is a place a range may begin */
    ld.chunk_bytes = (size_t)range_bytes;
    size_t window = (size_t)(cm_mem_limit() / 64);
    size_t cap = window > CHUNK_BYTES ? CHUNK_BYTES : window < CHUNK_MIN ? CHUNK_MIN : window;
    char *buf = NULL;
    FILE *f = NULL;
    if (!is_split) {
        goto done;
    }
    if (open_window(&ld, path, cap, &buf, &f, err) != CM_OK) {
        goto done;
    }
    int64_t base = 0; /* the file offset of buf[0] */
    while (n < cap_ranges) {
        if (read_more(f, path, buf, cap, &ld.size, &ld.is_eof, err) != CM_OK) {
            goto done;
        }
        size_t before = ld.size;
        bool is_past_skip = drop_skipped_lines(&ld);
        base += (int64_t)(before - ld.size);
        if (!is_past_skip) {
            continue; /* the skipped lines go on past the window */
        }
        CmErr content;
        cm_err_init(&content);
        if (find_chunks(&ld, &content) != CM_OK) {
            if (content.code == CM_OOM) {
                cm_err_copy(err, &content);
            }
            break; /* the reader of the last range reports it, in file order */
        }
        for (int k = 1; k < ld.n_chunks; k++) {
            range_add(rg, &n, cap_ranges, base + (int64_t)ld.chunks[k].begin, ld.chunks[k].line,
                      range_bytes);
        }
        if (ld.is_eof || ld.used == 0) {
            break; /* the end, or a record longer than the window: the rest is one range */
        }
        range_add(rg, &n, cap_ranges, base + (int64_t)ld.used, ld.end_line, range_bytes);
        memmove(buf, buf + ld.used, ld.size - ld.used);
        base += (int64_t)ld.used;
        ld.size -= ld.used;
        ld.first_line = ld.end_line;
        ld.is_first = false;
    }
done:
    if (f != NULL) {
        fclose(f);
    }
    cm_free(ld.chunks);
    cm_free(buf);
    cm_mem_res_fini(&ld.mem);
    if (err->code != CM_OK) {
        cm_free(rg);
        return err->code;
    }
    *ranges = rg;
    *n_ranges = n;
    return CM_OK;
}

/* ---- splitting a record ----------------------------------------------------------- */

int st_csv_split(const char *d, size_t *pos, size_t end, char delim, char q, char esc,
                 StCsvField *fields, int cap, int64_t *lines, bool *bad_quote)
{
    size_t i = *pos;
    int n = 0;
    *bad_quote = false;
    for (;;) {
        StCsvField f = {.p = d + i};
        if (q != 0 && i < end && d[i] == q) {
            f.quoted = true;
            size_t k = ++i;
            for (;;) {
                if (k >= end) {
                    *bad_quote = true;
                    break;
                }
                if (d[k] == esc && k + 1 < end && (esc != q || d[k + 1] == q)) {
                    f.has_escape = true; /* "" (escape = quote) or \x */
                    *lines += d[k + 1] == '\n';
                    k += 2;
                    continue;
                }
                if (d[k] == q) {
                    break;
                }
                *lines += d[k] == '\n';
                k++;
            }
            f.p = d + i;
            f.n = k - i;
            i = k < end ? k + 1 : end;
            f.has_junk = i < end && d[i] != delim && d[i] != '\n' && d[i] != '\r';
        } else {
            size_t k = i;
            while (k < end && d[k] != delim && d[k] != '\n') {
                k++;
            }
            f.n = k - i;
            if (f.n > 0 && d[k - 1] == '\r' && (k == end || d[k] == '\n')) {
                f.n--; /* CRLF line ends */
            }
            i = k;
        }
        if (n < cap) {
            fields[n] = f;
        }
        n++;
        if (i < end && d[i] == delim) {
            i++;
            continue;
        }
        while (i < end && d[i] != '\n') {
            i++; /* text after a closing quote up to the line end is ignored */
        }
        if (i < end) {
            i++;
        }
        break;
    }
    *pos = i;
    return n;
}

/* ---- the streaming reader (read_csv) ------------------------------------------------ */

struct StCsvReader {
    Load ld;
    StCsvOptions opt; /* ld.opt points here */
    int *cols;        /* opt.cols: field k fills column k; owned */
    char *path;       /* owned */
    FILE *f;
    char *buf; /* the window; owned */
    size_t cap;
    const char *prefix; /* bytes read before the file's (borrowed until free) */
    size_t n_prefix, prefix_at;
    bool has_window; /* the chunks hold a parsed window */
    bool is_done;
    int chunk_idx, batch_idx; /* the next batch to hand out */
    int64_t str_bytes;        /* reserved for the window's strings */
    int64_t left;             /* bytes of the range still to read; -1: to the end */
};

StCsvReader *st_csv_reader_new(const char *path, const StCsvOptions *opt, int n_cols,
                               const CmType *types, const char *const *names, const char *prefix,
                               size_t n_prefix, CmErr *err)
{
    StCsvReader *r = cm_calloc(1, sizeof *r);
    if (r == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory reading '%s'", path);
        return NULL;
    }
    r->opt = *opt;
    r->path = cm_malloc(strlen(path) + 1);
    r->cols = cm_malloc(sizeof(int) * (size_t)(opt->n_cols > 0 ? opt->n_cols : 1));
    load_init(&r->ld, path, &r->opt, n_cols, types, names, "read_csv buffers");
    if (r->path == NULL || r->cols == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory reading '%s'", path);
        goto done;
    }
    strcpy(r->path, path);
    r->ld.path = r->path;
    for (int k = 0; k < opt->n_cols; k++) {
        r->cols[k] = opt->cols != NULL ? opt->cols[k] : k;
    }
    r->opt.cols = r->cols;
    r->prefix = prefix;
    r->n_prefix = n_prefix;
    r->left = -1;
    size_t chunk = (size_t)(cm_mem_limit() / 64);
    r->ld.chunk_bytes = chunk > CHUNK_BYTES ? CHUNK_BYTES : chunk < CHUNK_MIN ? CHUNK_MIN : chunk;
    r->cap = r->ld.chunk_bytes;
    if (cm_mem_need(&r->ld.mem, (int64_t)r->cap, err) != CM_OK) {
        goto done;
    }
    if ((r->buf = cm_malloc(r->cap)) == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory reading '%s'", path);
        goto done;
    }
    r->ld.data = r->buf;
    if ((r->f = fopen(path, "rb")) == NULL) {
        cm_err_set(err, CM_IO, -1, "cannot open '%s': %s", path, strerror(errno));
        goto done;
    }
done:
    if (err->code != CM_OK) {
        st_csv_reader_free(r);
        return NULL;
    }
    return r;
}

/* Makes room for the next window: keeps the unfinished record, or doubles
 * the buffer when the window held no whole record. */
static CmStatus reader_advance(StCsvReader *r, CmErr *err)
{
    Load *ld = &r->ld;
    if (ld->used == 0) {
        char *g = NULL;
        if (cm_mem_need(&ld->mem, (int64_t)r->cap, err) != CM_OK ||
            (g = cm_realloc(r->buf, r->cap * 2)) == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory reading '%s'", r->path);
        }
        ld->data = r->buf = g;
        r->cap *= 2;
        return CM_OK;
    }
    memmove(r->buf, r->buf + ld->used, ld->size - ld->used);
    ld->size -= ld->used;
    ld->first_line = ld->end_line;
    ld->is_first = false;
    return CM_OK;
}

/* Fills the window from the prefix, then from the file. */
static CmStatus reader_fill(StCsvReader *r, CmErr *err)
{
    Load *ld = &r->ld;
    size_t take = r->n_prefix - r->prefix_at;
    if (take > r->cap - ld->size) {
        take = r->cap - ld->size;
    }
    if (take > 0) { /* prefix may be NULL */
        memcpy(r->buf + ld->size, r->prefix + r->prefix_at, take);
        r->prefix_at += take;
        ld->size += take;
    }
    size_t cap = r->cap;
    if (r->left >= 0 && (int64_t)(cap - ld->size) > r->left) {
        cap = ld->size + (size_t)r->left; /* the range ends at a record start */
    }
    size_t before = ld->size;
    if (read_more(r->f, r->path, r->buf, cap, &ld->size, &ld->is_eof, err) != CM_OK) {
        return err->code;
    }
    if (r->left >= 0) {
        r->left -= (int64_t)(ld->size - before);
        ld->is_eof |= r->left == 0;
    }
    return CM_OK;
}

CmStatus st_csv_reader_set_range(StCsvReader *r, const StCsvRange *rg, CmErr *err)
{
    if (fseeko(r->f, (off_t)rg->begin, SEEK_SET) != 0) {
        return cm_err_set(err, CM_IO, -1, "cannot read '%s': %s", r->path, strerror(errno));
    }
    r->left = rg->end < 0 ? -1 : rg->end - rg->begin;
    r->ld.first_line = rg->line;
    if (rg->begin > 0) {
        r->ld.is_first = false; /* the header and the skipped lines are before */
        r->ld.skip_left = 0;
    }
    return CM_OK;
}

CmStatus st_csv_reader_next(StCsvReader *r, CmBatch **out, CmErr *err)
{
    Load *ld = &r->ld;
    *out = NULL;
    while (!r->is_done) {
        if (r->has_window) {
            for (; r->chunk_idx < ld->n_chunks; r->chunk_idx++, r->batch_idx = 0) {
                Chunk *c = &ld->chunks[r->chunk_idx];
                while (r->batch_idx < c->n_batches) {
                    CmBatch *b = c->batches[r->batch_idx++];
                    if (b->n_rows > 0) {
                        *out = b;
                        return CM_OK;
                    }
                }
            }
            free_batches(ld);
            cm_mem_shrink(&ld->mem, r->str_bytes);
            r->str_bytes = 0;
            r->has_window = false;
            if (ld->is_eof) {
                r->is_done = true;
                break;
            }
            if (reader_advance(r, err) != CM_OK) {
                return err->code;
            }
        }
        if (reader_fill(r, err) != CM_OK) {
            return err->code;
        }
        if (!drop_skipped_lines(ld)) {
            continue; /* the skipped lines go on past the window */
        }
        r->chunk_idx = r->batch_idx = 0;
        r->has_window = true;
        if (parse_window(ld, &r->str_bytes, err) != CM_OK) {
            return err->code;
        }
    }
    return CM_OK;
}

void st_csv_reader_free(StCsvReader *r)
{
    if (r == NULL) {
        return;
    }
    if (r->f != NULL) {
        fclose(r->f);
    }
    free_batches(&r->ld);
    cm_free(r->ld.chunks);
    cm_free(r->buf);
    cm_free(r->cols);
    cm_free(r->path);
    cm_mem_res_fini(&r->ld.mem);
    cm_free(r);
}
