/*
 * csv_sniff.c - guesses how a delimited text file is written, from a sample
 * of its first records, following DuckDB's sniffer (docs/conformance.md):
 *
 * 1. Dialect.  Every candidate (delimiter , | ; TAB; quote " ' or none;
 *    escape: the quote itself, i.e. a doubled quote, or a backslash) splits
 *    the sample; a candidate that leaves a quote open, or has text between a
 *    closing quote and the next delimiter, is out.  The winner splits the
 *    records into more than one field if any candidate does, then has the
 *    most records with the sample's most frequent field count, then the
 *    most fields, then comes first in that order.
 * 2. Types.  Each column keeps the set of candidate types every sampled value
 *    parses as (a value with blanks around it parses only as VARCHAR; an
 *    unquoted null string says nothing) and takes the first left, in the
 *    order of TYPE_CANDIDATES; a column without a value is VARCHAR.
 * 3. Header.  The first record is a header when every column is VARCHAR, or
 *    when one of its values does not parse as its column's type.  Otherwise it
 *    is data and its values join the sets.
 * Everything a user fixed (delimiter, quote, escape, header, types) is taken
 * as given and only the rest is guessed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/datetime.h"
#include "common/value.h"
#include "storage/csv.h"
#include "storage/csv_int.h"

/* The sample's bytes are bounded: a sample of long records stops early. */
#define SAMPLE_MAX_BYTES ((size_t)8 << 20)
#define SNIFF_MAX_COLS 1024

/* ---- type candidates ---------------------------------------------------------------- */

static bool parse_bool_word(const char *s, size_t n)
{
    static const char *const words[] = {"true", "false", "t", "f"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (strlen(words[i]) == n && strncasecmp(s, words[i], n) == 0) {
            return true;
        }
    }
    return false;
}

static bool parse_bigint(const char *s, size_t n)
{
    int64_t v;
    return cm_parse_int64(s, n, &v);
}

static bool parse_double(const char *s, size_t n)
{
    double v;
    return cm_parse_double(s, n, &v);
}

static bool parse_date(const char *s, size_t n)
{
    int32_t v;
    return cm_parse_date(s, n, &v);
}

static bool parse_time(const char *s, size_t n)
{
    int64_t v;
    return cm_parse_time(s, n, &v);
}

static bool parse_timestamp(const char *s, size_t n)
{
    int64_t v;
    return cm_parse_timestamp(s, n, &v);
}

/* The candidates from narrowest to widest, as DuckDB orders them (BOOLEAN,
 * BIGINT, DOUBLE, TIME, DATE, TIMESTAMP, VARCHAR).  A new type is one entry,
 * put where DuckDB has it; VARCHAR, which takes anything, stays last. */
static const struct {
    CmTypeId id;
    bool (*parses)(const char *s, size_t n);
} TYPE_CANDIDATES[] = {
    {CM_T_BOOL, parse_bool_word},
    {CM_T_INT64, parse_bigint},
    {CM_T_DOUBLE, parse_double},
    {CM_T_TIME, parse_time},
    {CM_T_DATE, parse_date},
    {CM_T_TIMESTAMP, parse_timestamp},
    {CM_T_VARCHAR, NULL},
};
#define N_CANDIDATES ((int)(sizeof TYPE_CANDIDATES / sizeof TYPE_CANDIDATES[0]))

/* The candidates a value parses as, one bit each. */
static uint32_t candidates_of(const StCsvField *f)
{
    uint32_t mask = 1u << (N_CANDIDATES - 1); /* VARCHAR */
    if (f->n == 0 || f->p[0] == ' ' || f->p[0] == '\t' || f->p[f->n - 1] == ' ' ||
        f->p[f->n - 1] == '\t') {
        return mask;
    }
    for (int i = 0; i < N_CANDIDATES - 1; i++) {
        if (TYPE_CANDIDATES[i].parses(f->p, f->n)) {
            mask |= 1u << i;
        }
    }
    return mask;
}

/* Whether a value parses as type t (the header test against a user's type). */
static bool parses_as(const StCsvField *f, CmType t)
{
    /* a given INTEGER or DECIMAL column (read_csv's columns, COPY's table)
     * is judged by the candidate that holds it */
    CmTypeId id = cm_type_is_integer(t)   ? CM_T_INT64
                  : cm_type_is_decimal(t) ? CM_T_DOUBLE
                                          : (CmTypeId)t.id;
    for (int i = 0; i < N_CANDIDATES; i++) {
        if (TYPE_CANDIDATES[i].id == id) {
            return (candidates_of(f) >> i) & 1;
        }
    }
    return true; /* a type the sniffer does not know: no evidence either way */
}

/* ---- the sample ----------------------------------------------------------------------- */

CmStatus st_csv_sample(const char *path, int64_t n_lines, CmArena *a, char **data, size_t *size,
                       bool *is_eof, CmErr *err)
{
    *data = NULL;
    *size = 0;
    *is_eof = false;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        return cm_err_set(err, CM_IO, -1, "cannot open '%s': %s", path, strerror(errno));
    }
    size_t cap = (size_t)64 << 10, n = 0;
    char *buf = cm_malloc(cap);
    int64_t lines = 0;
    while (buf != NULL && !*is_eof && lines <= n_lines && n < SAMPLE_MAX_BYTES) {
        if (n == cap) {
            char *g = cm_realloc(buf, cap * 2);
            if (g == NULL) {
                break;
            }
            buf = g;
            cap *= 2;
        }
        /* Plain read(2), no stdio buffer: what is not sampled stays in a pipe. */
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            cm_err_set(err, CM_IO, -1, "cannot read '%s': %s", path, strerror(errno));
            break;
        }
        *is_eof = got == 0;
        for (ssize_t i = 0; i < got; i++) {
            lines += buf[n + (size_t)i] == '\n';
        }
        n += (size_t)got;
    }
    close(fd);
    if (buf == NULL || (err->code == CM_OK && (*data = cm_arena_alloc(a, n ? n : 1)) == NULL)) {
        cm_err_set(err, CM_OOM, -1, "out of memory reading '%s'", path);
    }
    if (err->code == CM_OK) {
        memcpy(*data, buf, n);
        *size = n;
    }
    cm_free(buf);
    return err->code;
}

/* ---- dialect -------------------------------------------------------------------------- */

typedef struct Records {
    int n;            /* records split */
    int n_cols;       /* the most frequent field count */
    int n_consistent; /* records with n_cols fields */
    bool is_bad;      /* a quote stays open */
} Records;

/* Where the sample's whole records end: past its skipped lines, and before a
 * record the sample cuts (unless the sample is the whole input). */
static void sample_bounds(const char *d, size_t size, bool is_eof, int64_t skip, size_t *begin,
                          size_t *end)
{
    size_t b = 0;
    for (int64_t i = 0; i < skip && b < size; i++) {
        const char *nl = memchr(d + b, '\n', size - b);
        b = nl ? (size_t)(nl - d) + 1 : size;
    }
    size_t e = size;
    if (!is_eof) {
        while (e > b && d[e - 1] != '\n') {
            e--;
        }
    }
    *begin = b;
    *end = e;
}

static bool is_blank_line(const char *d, size_t pos, size_t end)
{
    return d[pos] == '\n' || (d[pos] == '\r' && pos + 1 < end && d[pos + 1] == '\n');
}

/* Splits up to max_rows records with one dialect and counts their fields. */
static void count_fields(const char *d, size_t begin, size_t end, char delim, char q, char esc,
                         int64_t max_rows, Records *out)
{
    enum { MAX_TRACKED = 64, MAX_FIELDS = 256 };
    int counts[MAX_TRACKED + 1] = {0};
    StCsvField fields[MAX_FIELDS];
    *out = (Records){0};
    size_t pos = begin;
    while (pos < end && out->n < max_rows) {
        if (is_blank_line(d, pos, end)) {
            pos += d[pos] == '\n' ? 1 : 2;
            continue;
        }
        int64_t lines = 0;
        bool bad = false;
        int n = st_csv_split(d, &pos, end, delim, q, esc, fields, MAX_FIELDS, &lines, &bad);
        for (int k = 0; k < n && k < MAX_FIELDS; k++) {
            bad |= fields[k].has_junk; /* "a"b: the quote did not close the field */
        }
        if (bad) {
            out->is_bad = true;
            return;
        }
        counts[n > MAX_TRACKED ? MAX_TRACKED : n]++;
        out->n++;
    }
    for (int c = 1; c <= MAX_TRACKED; c++) {
        if (counts[c] > out->n_consistent) {
            out->n_consistent = counts[c];
            out->n_cols = c;
        }
    }
}

static void sniff_dialect(const char *d, size_t begin, size_t end, StCsvSniff *s)
{
    static const char delims[] = {',', '|', ';', '\t'};
    static const char quotes[] = {'"', '\'', 0};
    Records best = {0};
    bool has_best = false;
    char bd = ',', bq = '"', be = '"';
    for (int di = 0; di < (s->has_delim ? 1 : 4); di++) {
        char delim = s->has_delim ? s->delimiter : delims[di];
        for (int qi = 0; qi < (s->has_quote ? 1 : 3); qi++) {
            char q = s->has_quote ? s->quote : quotes[qi];
            char escs[2] = {q, '\\'};
            int n_esc = s->has_escape ? 1 : q == 0 ? 1 : 2;
            for (int ei = 0; ei < n_esc; ei++) {
                char esc = s->has_escape ? s->escape : escs[ei];
                Records r;
                count_fields(d, begin, end, delim, q, esc == 0 ? q : esc, s->sample_size, &r);
                if (r.is_bad) {
                    continue;
                }
                /* One column is the last resort (DuckDB's single_column_before):
                 * a quoted line break gives every dialect that cannot split the
                 * records one more, so it must not outrank a real split. */
                bool is_multi = r.n_cols > 1, is_best_multi = best.n_cols > 1;
                if (!has_best || (is_multi && !is_best_multi) ||
                    (is_multi == is_best_multi &&
                     (r.n_consistent > best.n_consistent ||
                      (r.n_consistent == best.n_consistent && r.n_cols > best.n_cols)))) {
                    best = r;
                    has_best = true;
                    bd = delim;
                    bq = q;
                    be = esc;
                }
            }
        }
    }
    s->delimiter = bd;
    s->quote = bq;
    s->escape = be;
    s->n_cols = best.n_cols > 0 ? best.n_cols : 1;
}

/* ---- types and header ------------------------------------------------------------------- */

static bool is_null_value(const StCsvField *f, const char *null_str)
{
    return !f->quoted && f->n == strlen(null_str) && memcmp(f->p, null_str, f->n) == 0;
}

/* The header's name for column i: its unescaped text, or columnN when empty. */
static const char *header_name(const StCsvField *f, char esc, CmArena *a)
{
    char *s = cm_arena_alloc(a, f->n + 1);
    if (s == NULL) {
        return NULL;
    }
    size_t n = 0;
    for (size_t k = 0; k < f->n; k++) {
        if (f->has_escape && f->p[k] == esc && k + 1 < f->n) {
            k++;
        }
        s[n++] = f->p[k];
    }
    s[n] = '\0';
    return s;
}

/* DuckDB's generated names: column0, column1, ... with the index padded to
 * the digits of the last one (column00 .. column10 for 11 columns). */
static const char *generated_name(int idx, int n_cols, CmArena *a)
{
    int width = 1;
    for (int x = n_cols - 1; x >= 10; x /= 10) {
        width++;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "column%0*d", width > 8 ? 8 : width, idx);
    return cm_arena_strdup(a, buf);
}

/* Makes names unique as DuckDB does: a repeated name gets _1, _2, ... */
static bool is_name_taken(const char *const *names, int n, const char *name)
{
    for (int j = 0; j < n; j++) {
        if (strcasecmp(names[j], name) == 0) {
            return true;
        }
    }
    return false;
}

static bool dedup_names(const char **names, int n, CmArena *a)
{
    for (int i = 1; i < n; i++) {
        const char *base = names[i];
        for (int suffix = 1; is_name_taken(names, i, names[i]); suffix++) {
            char buf[80];
            snprintf(buf, sizeof buf, "%.60s_%d", base, suffix);
            if ((names[i] = cm_arena_strdup(a, buf)) == NULL) {
                return false;
            }
        }
    }
    return true;
}

CmStatus st_csv_sniff(const char *d, size_t size, bool is_eof, StCsvSniff *s, CmArena *a,
                      CmErr *err)
{
    size_t begin, end;
    sample_bounds(d, size, is_eof, s->skip, &begin, &end);
    sniff_dialect(d, begin, end, s); /* with everything fixed: just the field count */
    if (s->escape == 0) {
        s->escape = s->quote;
    }
    int n_cols = s->n_fixed > 0 ? s->n_fixed : s->n_cols;
    if (n_cols > SNIFF_MAX_COLS) {
        return cm_err_set(err, CM_LIMIT, -1, "more than %d columns in a CSV file",
                          SNIFF_MAX_COLS);
    }
    s->n_cols = n_cols;
    uint32_t *mask = cm_arena_alloc(a, sizeof(uint32_t) * (size_t)n_cols);
    bool *has_value = cm_arena_zalloc(a, sizeof(bool) * (size_t)n_cols);
    StCsvField *first = cm_arena_zalloc(a, sizeof(StCsvField) * (size_t)n_cols);
    StCsvField *fields = cm_arena_alloc(a, sizeof(StCsvField) * (size_t)n_cols);
    s->types = cm_arena_alloc(a, sizeof(CmType) * (size_t)n_cols);
    s->names = cm_arena_alloc(a, sizeof(char *) * (size_t)n_cols);
    if (!mask || !has_value || !first || !fields || !s->types || !s->names) {
        return cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    for (int c = 0; c < n_cols; c++) {
        mask[c] = (1u << N_CANDIDATES) - 1;
    }
    /* Record 0 may be the header; the others, with the right field count,
     * narrow the types. */
    size_t pos = begin;
    int n_first = -1;
    int64_t n_rows = 0;
    while (pos < end && n_rows < s->sample_size) {
        if (is_blank_line(d, pos, end)) {
            pos += d[pos] == '\n' ? 1 : 2;
            continue;
        }
        int64_t lines = 0;
        bool bad = false;
        StCsvField *into = n_first < 0 ? first : fields;
        int n = st_csv_split(d, &pos, end, s->delimiter, s->quote, s->escape, into, n_cols,
                             &lines, &bad);
        if (bad) {
            break;
        }
        if (n_first < 0) {
            n_first = n;
            continue;
        }
        n_rows++;
        for (int c = 0; c < n_cols && n == n_cols; c++) {
            if (!is_null_value(&fields[c], s->null_str)) {
                mask[c] &= candidates_of(&fields[c]);
                has_value[c] = true;
            }
        }
    }
    /* Only a first record: it is data unless nothing in it is typed. */
    if (n_rows == 0 && n_first == n_cols && !(s->has_header && s->header)) {
        for (int c = 0; c < n_cols; c++) {
            if (!is_null_value(&first[c], s->null_str)) {
                mask[c] &= candidates_of(&first[c]);
                has_value[c] = true;
            }
        }
    }
    for (int c = 0; c < n_cols && s->n_fixed == 0; c++) {
        int k = 0;
        while (has_value[c] && !((mask[c] >> k) & 1)) {
            k++;
        }
        s->types[c] = cm_type_make(has_value[c] ? TYPE_CANDIDATES[k].id : CM_T_VARCHAR);
    }
    if (s->n_fixed > 0) {
        memcpy(s->types, s->fixed, sizeof(CmType) * (size_t)n_cols);
    }
    if (!s->has_header) {
        bool all_varchar = true, differs = false;
        for (int c = 0; c < n_cols; c++) {
            all_varchar &= s->types[c].id == CM_T_VARCHAR;
            if (n_first == n_cols && !is_null_value(&first[c], s->null_str) &&
                !parses_as(&first[c], s->types[c])) {
                differs = true;
            }
        }
        s->header = n_first == n_cols && (all_varchar || differs);
        if (n_first >= 0 && n_first != n_cols) {
            s->header = false;
        }
    }
    /* A first record that is data narrows the types it did not decide. */
    if (!s->header && n_first == n_cols && n_rows > 0 && s->n_fixed == 0) {
        for (int c = 0; c < n_cols; c++) {
            if (!is_null_value(&first[c], s->null_str)) {
                uint32_t m = (has_value[c] ? mask[c] : (1u << N_CANDIDATES) - 1) &
                             candidates_of(&first[c]);
                int k = 0;
                while (!((m >> k) & 1)) {
                    k++;
                }
                s->types[c] = cm_type_make(TYPE_CANDIDATES[k].id);
            }
        }
    }
    for (int c = 0; c < n_cols; c++) {
        bool has_name = s->header && c < n_first && first[c].n > 0;
        s->names[c] = has_name ? header_name(&first[c], s->escape, a)
                               : generated_name(c, n_cols, a);
        if (s->names[c] == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory");
        }
    }
    if (!dedup_names(s->names, n_cols, a)) {
        return cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    return CM_OK;
}
