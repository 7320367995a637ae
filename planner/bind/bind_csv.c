/*
 * bind_csv.c - the table functions read_csv(path, option = value, ...) and
 * read_csv_auto (the same function), and FROM 'file.csv'.
 *
 * Binding decides everything the scan needs: the files (a glob pattern is
 * expanded here, in name order), the dialect, the header and the column names
 * and types.  What the options leave open is sniffed from a sample of the
 * first file (storage/csv.h, st_csv_sniff); each further file must have as
 * many columns, and the same names when there is a header.  A pipe such as
 * /dev/stdin can be read only once: the bytes the sniffer took become the
 * scan's prefix.  Option values are literals (strings, numbers, booleans,
 * [lists] and {'name': value} structs), as DuckDB's are in practice.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parser/parser.h"
#include "planner/bind/binder_int.h"

#define CSV_MAX_FILES 4096

/* What the options say; has_* when the user gave it. */
typedef struct CsvArgs {
    const PsExpr *path; /* the first argument */
    StCsvSniff sn;      /* delimiter, quote, escape, header, skip, ... */
    bool auto_detect, all_varchar, filename, ignore_errors;
    int64_t max_line_size;
    const PsExpr *columns;  /* struct_pack of names and types, or NULL */
    const PsExpr *types;    /* struct_pack by name or list_value by position */
    const char *types_name; /* the option's name as written (types, dtypes, ...) */
} CsvArgs;

/* ---- literal option values ---- */

static bool is_func(const PsExpr *e, const char *name)
{
    return e->kind == PS_EX_FUNC && strcmp(e->name, name) == 0;
}

static bool opt_string(PlBinder *b, const char *opt, const PsExpr *v, const char **out)
{
    if (v->kind != PS_EX_STRING) {
        cm_err_set(b->err, CM_BIND, v->src_off, "option '%s' of read_csv needs a string", opt);
        return false;
    }
    *out = v->str;
    return true;
}

static bool opt_bool(PlBinder *b, const char *opt, const PsExpr *v, bool *out)
{
    if (v->kind != PS_EX_BOOL && !(v->kind == PS_EX_INT && (v->ival == 0 || v->ival == 1))) {
        cm_err_set(b->err, CM_BIND, v->src_off, "option '%s' of read_csv needs true or false", opt);
        return false;
    }
    *out = v->ival != 0;
    return true;
}

static bool opt_int(PlBinder *b, const char *opt, const PsExpr *v, int64_t min, int64_t *out)
{
    bool is_neg = v->kind == PS_EX_UNARY && v->op == PS_OP_NEG && v->left->kind == PS_EX_INT;
    const PsExpr *lit = is_neg ? v->left : v;
    if (lit->kind != PS_EX_INT || (is_neg ? -lit->ival : lit->ival) < min) {
        cm_err_set(b->err, CM_BIND, v->src_off,
                   "option '%s' of read_csv needs an integer of at least %lld", opt,
                   (long long)min);
        return false;
    }
    *out = is_neg ? -lit->ival : lit->ival;
    return true;
}

/* A one-character option (delim, quote, escape); '' is none where allowed.
 * '\t' written as backslash-t is a tab, as DuckDB reads it. */
static bool opt_char(PlBinder *b, const char *opt, const PsExpr *v, bool may_be_empty, char *out)
{
    const char *s;
    if (!opt_string(b, opt, v, &s)) {
        return false;
    }
    if (strcmp(s, "\\t") == 0) {
        *out = '\t';
        return true;
    }
    if (v->str_len > 1 || (v->str_len == 0 && !may_be_empty) || s[0] == '\n' || s[0] == '\r') {
        cm_err_set(b->err, CM_BIND, v->src_off, "option '%s' of read_csv must be one character%s",
                   opt, may_be_empty ? " or empty" : "");
        return false;
    }
    *out = s[0];
    return true;
}

/* A type name as a string: 'INTEGER', 'DECIMAL(10,2)', parsed as SQL parses it. */
static bool type_of_string(PlBinder *b, const PsExpr *v, CmType *out)
{
    if (v->kind != PS_EX_STRING) {
        cm_err_set(b->err, CM_BIND, v->src_off, "a column type of read_csv must be a string");
        return false;
    }
    char *sql = cm_arena_alloc(b->arena, (size_t)v->str_len + 32);
    if (sql == NULL) {
        cm_err_set(b->err, CM_OOM, -1, "out of memory");
        return false;
    }
    snprintf(sql, (size_t)v->str_len + 32, "SELECT CAST(NULL AS %s)", v->str);
    size_t off = 0;
    PsStmt *st = NULL;
    CmErr perr;
    cm_err_init(&perr);
    bool is_ok = ps_parse_next(b->arena, sql, strlen(sql), &off, &st, &perr) == CM_OK &&
                 st != NULL && st->kind == PS_ST_SELECT && off == strlen(sql) &&
                 st->select->kind == PS_SEL_SIMPLE && st->select->targets->n == 1 &&
                 ((PsTarget *)st->select->targets->items[0])->expr->kind == PS_EX_CAST;
    if (is_ok) {
        const PsExpr *cast = ((PsTarget *)st->select->targets->items[0])->expr;
        is_ok = pl_type_from_ast(cast->type, out, &perr) == CM_OK;
    }
    if (!is_ok) {
        cm_err_set(b->err, CM_TYPE, v->src_off, "unknown column type '%s' in read_csv", v->str);
    }
    return is_ok;
}

/* ---- the arguments ---- */

static bool set_option(PlBinder *b, CsvArgs *a, const char *name, const PsExpr *v)
{
    StCsvSniff *s = &a->sn;
    if (!strcmp(name, "delim") || !strcmp(name, "sep") || !strcmp(name, "delimiter")) {
        s->has_delim = true;
        return opt_char(b, name, v, false, &s->delimiter);
    }
    if (!strcmp(name, "quote")) {
        s->has_quote = true;
        return opt_char(b, name, v, true, &s->quote);
    }
    if (!strcmp(name, "escape")) {
        s->has_escape = true;
        return opt_char(b, name, v, true, &s->escape);
    }
    if (!strcmp(name, "header")) {
        s->has_header = true;
        return opt_bool(b, name, v, &s->header);
    }
    if (!strcmp(name, "nullstr") || !strcmp(name, "null_str") || !strcmp(name, "null")) {
        return opt_string(b, name, v, &s->null_str);
    }
    if (!strcmp(name, "skip")) {
        if (!opt_int(b, name, v, 0, &s->skip)) {
            return false;
        }
        s->skip = s->skip > INT64_MAX / 4 ? INT64_MAX / 4 : s->skip; /* no overflow below */
        return true;
    }
    if (!strcmp(name, "sample_size")) {
        if (!opt_int(b, name, v, -1, &s->sample_size)) {
            return false;
        }
        if (s->sample_size == 0) {
            cm_err_set(b->err, CM_BIND, v->src_off,
                       "option 'sample_size' of read_csv must be -1 (all) or positive");
            return false;
        }
        s->sample_size = s->sample_size < 0 ? INT64_MAX / 2 : s->sample_size;
        return true;
    }
    if (!strcmp(name, "max_line_size")) {
        return opt_int(b, name, v, 1, &a->max_line_size);
    }
    if (!strcmp(name, "auto_detect")) {
        return opt_bool(b, name, v, &a->auto_detect);
    }
    if (!strcmp(name, "all_varchar")) {
        return opt_bool(b, name, v, &a->all_varchar);
    }
    if (!strcmp(name, "filename")) {
        return opt_bool(b, name, v, &a->filename);
    }
    if (!strcmp(name, "ignore_errors")) {
        return opt_bool(b, name, v, &a->ignore_errors);
    }
    if (!strcmp(name, "columns")) {
        if (!is_func(v, "struct_pack")) {
            cm_err_set(b->err, CM_BIND, v->src_off,
                       "option 'columns' of read_csv needs {'name': 'TYPE', ...}");
            return false;
        }
        a->columns = v;
        return true;
    }
    if (!strcmp(name, "types") || !strcmp(name, "dtypes") || !strcmp(name, "column_types")) {
        if (!is_func(v, "struct_pack") && !is_func(v, "list_value")) {
            cm_err_set(b->err, CM_BIND, v->src_off,
                       "option '%s' of read_csv needs {'name': 'TYPE', ...} or ['TYPE', ...]",
                       name);
            return false;
        }
        a->types = v;
        a->types_name = name;
        return true;
    }
    return false; /* unknown: the caller says so */
}

static bool parse_args(PlBinder *b, const PsFrom *f, CsvArgs *a)
{
    const char *seen_names[64]; /* options given, to catch a repeated one */
    int n_seen = 0;
    for (int i = 0; f->args != NULL && i < f->args->n; i++) {
        const PsExpr *e = f->args->items[i];
        bool is_named = e->kind == PS_EX_BINARY && e->op == PS_OP_EQ &&
                        e->left->kind == PS_EX_COLUMN && e->left->qualifier == NULL;
        if (!is_named) {
            if (i > 0) {
                cm_err_set(b->err, CM_BIND, e->src_off,
                           "read_csv takes one file argument; options are written name = value");
                return false;
            }
            a->path = e;
            continue;
        }
        const char *name = e->left->name;
        for (int k = 0; k < n_seen; k++) {
            if (strcmp(seen_names[k], name) == 0) {
                cm_err_set(b->err, CM_BIND, e->left->src_off,
                           "option '%s' of read_csv is given twice", name);
                return false;
            }
        }
        if (n_seen < 64) {
            seen_names[n_seen++] = name;
        }
        if (!set_option(b, a, name, e->right)) {
            if (b->err->code == CM_OK) {
                cm_err_set(b->err, CM_BIND, e->left->src_off, "unknown option '%s' of read_csv",
                           name);
            }
            return false;
        }
    }
    if (a->path == NULL) {
        cm_err_set(b->err, CM_BIND, f->src_off, "read_csv needs a file name");
        return false;
    }
    return true;
}

/* Impossible combinations, named by their options. */
static bool check_combinations(PlBinder *b, const PsFrom *f, const CsvArgs *a)
{
    const StCsvSniff *s = &a->sn;
    const char *msg = NULL;
    if (a->columns != NULL && a->types != NULL) {
        msg =
            "read_csv options 'columns' and 'types' cannot be combined: 'columns' gives the types";
    } else if (a->all_varchar && a->columns != NULL) {
        msg = "read_csv options 'all_varchar' and 'columns' cannot be combined: 'columns' gives "
              "the types";
    } else if (!a->auto_detect && a->columns == NULL) {
        msg = "read_csv with auto_detect = false needs the 'columns' option";
    } else if (s->has_delim && s->has_quote && s->quote != 0 && s->delimiter == s->quote) {
        msg = "read_csv options 'delim' and 'quote' cannot be the same character";
    } else if (s->has_delim && s->has_escape && s->escape != 0 && s->delimiter == s->escape) {
        msg = "read_csv options 'delim' and 'escape' cannot be the same character";
    }
    if (msg != NULL) {
        cm_err_set(b->err, CM_BIND, f->src_off, "%s", msg);
        return false;
    }
    return true;
}

/* ---- files ---- */

static int cmp_paths(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static bool add_file(PlBinder *b, const char ***files, int *n, int *cap, const char *path)
{
    if (*n == *cap) {
        int ncap = *cap ? *cap * 2 : 8;
        const char **g = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)ncap);
        if (g == NULL) {
            return false;
        }
        if (*n > 0) {
            memcpy(g, *files, sizeof(char *) * (size_t)*n);
        }
        *files = g;
        *cap = ncap;
    }
    if (((*files)[(*n)++] = cm_arena_strdup(b->arena, path)) == NULL) {
        return false;
    }
    return true;
}

/* One path or pattern: a pattern (with * ? or [) is every match, in name
 * order, and matching nothing is an error. */
static bool expand_path(PlBinder *b, const PsExpr *e, const char ***files, int *n, int *cap)
{
    if (e->kind != PS_EX_STRING) {
        cm_err_set(b->err, CM_BIND, e->src_off, "the file of read_csv must be a string");
        return false;
    }
    const char *p = e->str;
    if (strpbrk(p, "*?[") == NULL) {
        if (!add_file(b, files, n, cap, p)) {
            cm_err_set(b->err, CM_OOM, -1, "out of memory");
            return false;
        }
        return true;
    }
    glob_t g;
    int rc = glob(p, 0, NULL, &g);
    if (rc == GLOB_NOMATCH || (rc == 0 && g.gl_pathc == 0)) {
        globfree(&g);
        cm_err_set(b->err, CM_IO, e->src_off, "no files match '%s'", p);
        return false;
    }
    if (rc != 0) {
        globfree(&g);
        cm_err_set(b->err, CM_IO, e->src_off, "cannot read the files of '%s'", p);
        return false;
    }
    /* glob sorts by the locale's collation; name order is by bytes */
    qsort(g.gl_pathv, g.gl_pathc, sizeof(char *), cmp_paths);
    bool is_ok = true;
    for (size_t i = 0; i < g.gl_pathc && is_ok; i++) {
        is_ok = add_file(b, files, n, cap, g.gl_pathv[i]);
    }
    globfree(&g);
    if (!is_ok) {
        cm_err_set(b->err, CM_OOM, -1, "out of memory");
    }
    return is_ok;
}

static bool collect_files(PlBinder *b, const CsvArgs *a, const char ***files, int *n)
{
    int cap = 0;
    *n = 0;
    if (is_func(a->path, "list_value")) {
        for (int i = 0; a->path->args != NULL && i < a->path->args->n; i++) {
            if (!expand_path(b, a->path->args->items[i], files, n, &cap)) {
                return false;
            }
        }
        if (*n == 0) {
            cm_err_set(b->err, CM_BIND, a->path->src_off, "read_csv needs a file name");
            return false;
        }
    } else if (!expand_path(b, a->path, files, n, &cap)) {
        return false;
    }
    if (*n > CSV_MAX_FILES) {
        cm_err_set(b->err, CM_LIMIT, a->path->src_off, "read_csv reads at most %d files",
                   CSV_MAX_FILES);
        return false;
    }
    return true;
}

/* ---- columns ---- */

/* The columns option: names and types, fixed. */
static bool fixed_columns(PlBinder *b, const CsvArgs *a, StCsvSniff *s, const char ***names)
{
    const PsList *l = a->columns->args;
    int n = l != NULL ? l->n / 2 : 0;
    if (n == 0) {
        cm_err_set(b->err, CM_BIND, a->columns->src_off, "option 'columns' of read_csv is empty");
        return false;
    }
    CmType *types = cm_arena_alloc(b->arena, sizeof(CmType) * (size_t)n);
    *names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)n);
    if (types == NULL || *names == NULL) {
        cm_err_set(b->err, CM_OOM, -1, "out of memory");
        return false;
    }
    for (int i = 0; i < n; i++) {
        const PsExpr *k = l->items[2 * i];
        if (k->kind != PS_EX_STRING && k->kind != PS_EX_COLUMN) {
            cm_err_set(b->err, CM_BIND, k->src_off, "a column name of read_csv must be a string");
            return false;
        }
        (*names)[i] = k->kind == PS_EX_STRING ? k->str : k->name;
        if (!type_of_string(b, l->items[2 * i + 1], &types[i])) {
            return false;
        }
    }
    s->n_fixed = n;
    s->fixed = types;
    return true;
}

/* The types option over sniffed columns: by name ({'a': 'INT'}) or by
 * position (['INT', ...]). */
static bool apply_types(PlBinder *b, const CsvArgs *a, StCsvSniff *s)
{
    const PsList *l = a->types->args;
    bool by_name = is_func(a->types, "struct_pack");
    int n = l == NULL ? 0 : by_name ? l->n / 2 : l->n;
    if (!by_name && n > s->n_cols) {
        cm_err_set(b->err, CM_BIND, a->types->src_off,
                   "option '%s' of read_csv gives %d types for %d columns", a->types_name, n,
                   s->n_cols);
        return false;
    }
    for (int i = 0; i < n; i++) {
        int col = i;
        if (by_name) {
            const PsExpr *k = l->items[2 * i];
            const char *name = k->kind == PS_EX_STRING   ? k->str
                               : k->kind == PS_EX_COLUMN ? k->name
                                                         : NULL;
            col = -1;
            for (int c = 0; name != NULL && c < s->n_cols && col < 0; c++) {
                col = strcasecmp(s->names[c], name) == 0 ? c : -1;
            }
            if (col < 0) {
                cm_err_set(
                    b->err, CM_BIND, k->src_off,
                    "option '%s' of read_csv names column '%s', which the file does not have",
                    a->types_name, name != NULL ? name : "?");
                return false;
            }
        }
        if (!type_of_string(b, l->items[by_name ? 2 * i + 1 : i], &s->types[col])) {
            return false;
        }
    }
    return true;
}

/* A further file of a glob must have the first file's columns. */
static bool check_same_columns(PlBinder *b, const CsvArgs *a, const StCsvSniff *first,
                               const char *path)
{
    char *data;
    size_t size;
    bool is_eof;
    if (st_csv_sample(path, first->skip + 2, b->arena, &data, &size, &is_eof, b->err) != CM_OK) {
        return false;
    }
    StCsvSniff s = *first;
    s.has_delim = s.has_quote = s.has_escape = s.has_header = true;
    s.n_fixed = 0;
    s.sample_size = 1;
    if (st_csv_sniff(data, size, is_eof, &s, b->arena, b->err) != CM_OK) {
        return false;
    }
    if (size == 0) {
        return true; /* an empty file has no rows either way */
    }
    int n_fields = first->n_cols;
    bool is_same = s.n_cols == n_fields;
    for (int c = 0; is_same && first->header && c < n_fields; c++) {
        is_same = strcmp(s.names[c], first->names[c]) == 0;
    }
    if (!is_same) {
        cm_err_set(b->err, CM_BIND, a->path->src_off,
                   "'%s' does not have the columns of the first file read (read_csv needs the "
                   "same columns in every file)",
                   path);
        return false;
    }
    return true;
}

PlNode *pl_bind_read_csv(PlBinder *b, const PsFrom *f)
{
    CsvArgs a = {.auto_detect = true};
    a.sn = (StCsvSniff){
        .delimiter = ',', .quote = '"', .null_str = "", .sample_size = ST_CSV_SNIFF_SAMPLE};
    const char **files = NULL;
    int n_files = 0;
    if (!parse_args(b, f, &a) || !check_combinations(b, f, &a) ||
        !collect_files(b, &a, &files, &n_files)) {
        return NULL;
    }
    StCsvSniff *s = &a.sn;
    const char **fixed_names = NULL;
    if (a.columns != NULL && !fixed_columns(b, &a, s, &fixed_names)) {
        return NULL;
    }
    if (!a.auto_detect) {
        s->has_delim = s->has_quote = s->has_escape = s->has_header = true;
    }
    char *sample = NULL;
    size_t n_sample = 0;
    bool is_eof = false;
    if (st_csv_sample(files[0], s->sample_size + s->skip + 1, b->arena, &sample, &n_sample, &is_eof,
                      b->err) != CM_OK ||
        st_csv_sniff(sample, n_sample, is_eof, s, b->arena, b->err) != CM_OK) {
        b->err->off = b->err->off < 0 ? a.path->src_off : b->err->off;
        return NULL;
    }
    if (fixed_names != NULL) {
        s->names = fixed_names;
    }
    /* all_varchar, then the types given (DuckDB lets types override it) */
    for (int c = 0; a.all_varchar && c < s->n_cols; c++) {
        s->types[c] = cm_type_make(CM_T_VARCHAR);
    }
    if (a.types != NULL && !apply_types(b, &a, s)) {
        return NULL;
    }
    for (int i = 1; i < n_files; i++) {
        if (!check_same_columns(b, &a, s, files[i])) {
            return NULL;
        }
    }
    int n_cols = s->n_cols + (a.filename ? 1 : 0);
    PlNode *n = pl_node_new(b->arena, PL_CSV, n_cols);
    PlCsv *csv = n ? cm_arena_zalloc(b->arena, sizeof *csv) : NULL;
    if (csv == NULL) {
        cm_err_set(b->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    for (int c = 0; c < s->n_cols; c++) {
        n->types[c] = s->types[c];
        n->names[c] = s->names[c];
    }
    if (a.filename) {
        n->types[n_cols - 1] = cm_type_make(CM_T_VARCHAR);
        n->names[n_cols - 1] = "filename";
    }
    csv->n_files = n_files;
    csv->files = files;
    csv->has_filename = a.filename;
    csv->opt = (StCsvOptions){
        .delimiter = s->delimiter,
        .quote = s->quote,
        .escape = s->escape,
        .header = s->header,
        .skip = s->skip,
        .null_str = s->null_str,
        .max_line_size = a.max_line_size,
        .n_cols = s->n_cols,
        .ignore_errors = a.ignore_errors,
        .hint = a.columns != NULL || a.all_varchar
                    ? NULL
                    : " (the column's type was detected from a sample: give it with the "
                      "types option, or read every column as VARCHAR with all_varchar = true)"};
    /* A pipe cannot be read again: the scan first replays what was sampled. */
    struct stat st;
    if (stat(files[0], &st) != 0 || !S_ISREG(st.st_mode)) {
        csv->prefix = sample;
        csv->n_prefix = n_sample;
    }
    /* Rows: the bytes of the files over the sample's bytes per line. */
    int64_t lines = 0, bytes = 0;
    for (size_t i = 0; i < n_sample; i++) {
        lines += sample[i] == '\n';
    }
    for (int i = 0; i < n_files; i++) {
        bytes += stat(files[i], &st) == 0 && S_ISREG(st.st_mode) ? (int64_t)st.st_size : 0;
    }
    csv->est_rows = lines > 0 ? (double)bytes * (double)lines / (double)n_sample : 1;
    n->csv = csv;
    return n;
}
