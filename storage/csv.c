/*
 * csv.c - parallel parse of delimited text into a table.
 *
 * Pass 1 (sequential): find chunk boundaries at record starts, about
 * CHUNK_BYTES apart, with the line number of each, tracking quote state so a
 * newline inside quotes never splits.  Pass 2 (parallel): each chunk's records
 * are split into fields and converted by column type into batches owned by the
 * chunk.  Pass 3 (sequential): constraint checks, then append in chunk order.
 * The first error in file order wins, whatever the order tasks finished in.
 */
#include "storage/csv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/value.h"

#define CHUNK_BYTES (1 << 20)

typedef struct Chunk {
    size_t begin, end;   /* byte range of whole records */
    int64_t line;        /* line number of `begin` */
    int n_batches, cap_batches;
    CmBatch **batches;   /* parsed rows; owned */
    CmErr err;
} Chunk;

typedef struct Load {
    const StTable *t;
    const StCsvOptions *opt;
    const char *path;
    const char *data;
    size_t size;
    Chunk *chunks;
    int n_chunks;
    CmType *types;       /* per field: the target column's type */
    int64_t max_line;    /* opt->max_line_size, or its default when 0 */
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

/* Also checks every byte: no NUL, and no record longer than max_line_size. */
static int find_chunks(Load *ld, CmErr *err)
{
    int cap = (int)(ld->size / CHUNK_BYTES) + 2;
    ld->chunks = cm_calloc((size_t)cap, sizeof(Chunk));
    if (ld->chunks == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory loading '%s'", ld->path);
    }
    const char *d = ld->data;
    char q = ld->opt->quote;
    int64_t max = ld->max_line;
    bool in_quotes = false;
    size_t start = 0, rec = 0; /* the chunk's and the record's first byte */
    int64_t line = 1, start_line = 1, rec_line = 1;
    for (size_t i = 0; i < ld->size; i++) {
        char c = d[i];
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
            if (i + 1 - start >= CHUNK_BYTES) {
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
    if (start < ld->size || ld->n_chunks == 0) {
        ld->chunks[ld->n_chunks++] = (Chunk){.begin = start, .end = ld->size, .line = start_line};
    }
    return CM_OK;
}

/* ---- pass 2: parse ------------------------------------------------------------------- */

typedef struct Field {
    const char *p;
    size_t n;
    bool quoted;
    bool has_escaped_quote; /* "" inside quotes: needs unescaping */
} Field;

static CmStatus row_error(Load *ld, Chunk *c, int64_t line, int field, const char *what,
                          const Field *f)
{
    const char *col = field < ld->opt->n_cols ? ld->t->cols[ld->opt->cols[field]].name : "?";
    if (f != NULL) {
        return cm_err_set(&c->err, CM_RUNTIME, -1, "%s, line %lld, column %d (%s): %s '%.*s'",
                          ld->path, (long long)line, field + 1, col, what,
                          (int)(f->n > 60 ? 60 : f->n), f->p);
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
    CmBatch *b = cm_malloc(sizeof *b);
    CmType types[1024];
    for (int i = 0; i < ld->t->n_cols && i < 1024; i++) {
        types[i] = ld->t->cols[i].type;
    }
    if (b == NULL || cm_batch_init(b, ld->t->n_cols, types, &c->err) != CM_OK) {
        cm_free(b);
        return NULL;
    }
    /* Columns not loaded stay NULL. */
    for (int col = 0; col < ld->t->n_cols; col++) {
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
        size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                   : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
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
static bool convert(Load *ld, Chunk *c, CmBatch *b, int col, uint32_t row, Field *f,
                    int64_t line, int field)
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
    case CM_T_INT64: ok = cm_parse_int64(f->p, f->n, &((int64_t *)v->data)[row]); break;
    case CM_T_DOUBLE: ok = cm_parse_double(f->p, f->n, &((double *)v->data)[row]); break;
    case CM_T_DECIMAL:
        ok = cm_parse_decimal(f->p, f->n, t.precision, t.scale, &((int64_t *)v->data)[row]);
        break;
    case CM_T_DATE: ok = cm_parse_date(f->p, f->n, &((int32_t *)v->data)[row]); break;
    case CM_T_TIME: ok = cm_parse_time(f->p, f->n, &((int64_t *)v->data)[row]); break;
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
        for (size_t k = 0; k < f->n; k++) {
            s[n++] = f->p[k];
            if (f->has_escaped_quote && f->p[k] == ld->opt->quote) {
                k++; /* "" -> " */
            }
        }
        size_t bad = utf8_invalid_at((const unsigned char *)s, n);
        if (bad < n) {
            const char *col_name = ld->t->cols[ld->opt->cols[field]].name;
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
    case CM_T_NULL: break;
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

/* Splits the record at *pos into fields; moves *pos past it and counts lines. */
static int split_record(const Load *ld, size_t *pos, size_t end, Field *fields, int cap,
                        int64_t *lines, bool *bad_quote)
{
    const char *d = ld->data;
    char delim = ld->opt->delimiter, q = ld->opt->quote;
    size_t i = *pos;
    int n = 0;
    *bad_quote = false;
    for (;;) {
        Field f = {.p = d + i};
        if (q != 0 && i < end && d[i] == q) {
            f.quoted = true;
            size_t k = ++i;
            for (;;) {
                if (k >= end) {
                    *bad_quote = true;
                    break;
                }
                if (d[k] == q) {
                    if (k + 1 < end && d[k + 1] == q) {
                        f.has_escaped_quote = true;
                        k += 2;
                        continue;
                    }
                    break;
                }
                *lines += d[k] == '\n';
                k++;
            }
            f.p = d + i;
            f.n = k - i;
            i = k < end ? k + 1 : end;
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

static void parse_chunk(void *arg, int idx, int worker)
{
    Load *ld = arg;
    Chunk *c = &ld->chunks[idx];
    int n_cols = ld->opt->n_cols;
    Field fields[1025];
    size_t pos = c->begin;
    int64_t line = c->line;
    if (idx == 0 && ld->opt->header && pos < c->end) {
        bool bad;
        int64_t extra = 0;
        split_record(ld, &pos, c->end, fields, 1024, &extra, &bad);
        line += 1 + extra;
    }
    while (pos < c->end && c->err.code == CM_OK) {
        int64_t extra = 0;
        bool bad_quote;
        int64_t this_line = line;
        if (ld->data[pos] == '\n' || (ld->data[pos] == '\r' && pos + 1 < c->end &&
                                       ld->data[pos + 1] == '\n')) {
            pos += ld->data[pos] == '\n' ? 1 : 2; /* blank line */
            line++;
            continue;
        }
        int n = split_record(ld, &pos, c->end, fields, 1025, &extra, &bad_quote);
        line += 1 + extra;
        if (bad_quote) {
            row_error(ld, c, this_line, 0, "unterminated quoted field", NULL);
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
            return;
        }
        CmBatch *b = chunk_batch(ld, c);
        if (b == NULL) {
            cm_err_set(&c->err, CM_OOM, -1, "out of memory loading '%s'", ld->path);
            return;
        }
        uint32_t row = (uint32_t)b->n_rows;
        for (int k = 0; k < n_cols; k++) {
            if (!convert(ld, c, b, ld->opt->cols[k], row, &fields[k], this_line, k)) {
                return;
            }
        }
        b->n_rows++;
    }
    (void)worker;
}

/* ---- driver ---------------------------------------------------------------------------- */

/* Checks the bytes data[from..to) of a stream as they arrive, so an endless
 * device fails at once: a NUL byte, or a line (counting from *line_start)
 * longer than max.  Quoted line breaks are not tracked here; pass 1 checks
 * records exactly once the whole input is read. */
static CmStatus check_stream(const char *path, const char *data, size_t from, size_t to,
                             int64_t max, size_t *line_start, int64_t *line, CmErr *err)
{
    for (size_t i = from; i < to; i++) {
        if (data[i] == '\0') {
            return nul_error(path, *line, err);
        }
        if (data[i] == '\n') {
            (*line)++;
            *line_start = i + 1;
        } else if ((int64_t)(i - *line_start) >= max) {
            return long_line_error(path, *line, max, err);
        }
    }
    return CM_OK;
}

/* Reads `path` to its end (owned; *size bytes).  A regular file's size is
 * only the first guess of the buffer's size: files in /proc report 0. */
static char *read_file(const char *path, int64_t max, size_t *size, CmErr *err)
{
    struct stat sb;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        cm_err_set(err, CM_IO, -1, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    bool is_stream = fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode);
    size_t cap = is_stream ? 64 * 1024 : (size_t)sb.st_size + 1;
    size_t n = 0, line_start = 0;
    int64_t line = 1;
    char *buf = cm_malloc(cap);
    while (buf != NULL) {
        if (n == cap) {
            char *g = cap <= SIZE_MAX / 2 ? cm_realloc(buf, cap * 2) : NULL;
            if (g == NULL) {
                cm_free(buf);
                buf = NULL;
                break;
            }
            buf = g;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0) {
            break;
        }
        if (is_stream &&
            check_stream(path, buf, n, n + got, max, &line_start, &line, err) != CM_OK) {
            break;
        }
        n += got;
    }
    if (buf == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory reading '%s'", path);
    } else if (ferror(f)) {
        cm_err_set(err, CM_IO, -1, "cannot read '%s': %s", path, strerror(errno));
    }
    fclose(f);
    if (err->code != CM_OK) {
        cm_free(buf);
        return NULL;
    }
    *size = n;
    return buf;
}

static void free_chunks(Load *ld)
{
    for (int i = 0; ld->chunks != NULL && i < ld->n_chunks; i++) {
        for (int b = 0; b < ld->chunks[i].n_batches; b++) {
            cm_batch_fini(ld->chunks[i].batches[b]);
            cm_free(ld->chunks[i].batches[b]);
        }
        cm_free(ld->chunks[i].batches);
    }
    cm_free(ld->chunks);
}

CmStatus st_csv_load(StTable *t, const char *path, const StCsvOptions *opt, CmPool *pool,
                     int64_t *n_rows, CmErr *err)
{
    Load ld = {.t = t, .opt = opt, .path = path};
    *n_rows = 0;
    if (opt->n_cols > 1024) {
        return cm_err_set(err, CM_LIMIT, -1, "COPY into more than 1024 columns is not supported");
    }
    ld.max_line = opt->max_line_size > 0 ? opt->max_line_size : ST_CSV_MAX_LINE_SIZE;
    char *data = read_file(path, ld.max_line, &ld.size, err);
    if (data == NULL) {
        return err->code;
    }
    ld.data = data;
    if (find_chunks(&ld, err) == CM_OK) {
        for (int i = 0; i < ld.n_chunks; i++) {
            cm_err_init(&ld.chunks[i].err);
        }
        cm_pool_run(pool, ld.n_chunks, parse_chunk, &ld);
        for (int i = 0; i < ld.n_chunks && err->code == CM_OK; i++) {
            cm_err_copy(err, &ld.chunks[i].err);
        }
    }
    int64_t before = t->n_rows;
    for (int i = 0; i < ld.n_chunks && err->code == CM_OK; i++) {
        for (int b = 0; b < ld.chunks[i].n_batches && err->code == CM_OK; b++) {
            if (st_table_check(t, ld.chunks[i].batches[b], err) != CM_OK) {
                /* The constraint message has no line: find it in the file order. */
                snprintf(err->msg + strlen(err->msg), sizeof err->msg - strlen(err->msg),
                         " (loading '%s')", path);
            }
        }
    }
    int64_t n_new = 0;
    for (int i = 0; i < ld.n_chunks && err->code == CM_OK; i++) {
        for (int b = 0; b < ld.chunks[i].n_batches; b++) {
            n_new += ld.chunks[i].batches[b]->n_rows;
        }
    }
    if (err->code == CM_OK) {
        st_table_reserve(t, n_new, err);
    }
    for (int i = 0; i < ld.n_chunks && err->code == CM_OK; i++) {
        for (int b = 0; b < ld.chunks[i].n_batches && err->code == CM_OK; b++) {
            st_table_append(t, ld.chunks[i].batches[b], err);
        }
    }
    if (err->code != CM_OK) {
        st_table_truncate(t, before);
    } else {
        *n_rows = t->n_rows - before;
    }
    free_chunks(&ld);
    cm_free(data);
    return err->code;
}
