/*
 * csv_scan.c - the source of the table functions read_csv and read_csv_auto:
 * the records of one or more delimited text files, parsed by the COPY parser
 * (storage/csv.h) one window at a time, so a task holds one window of text
 * and its rows however large the files are.  The binder has already sniffed
 * the dialect and the types; a value that does not fit its column's type is
 * an error naming the file, the line and the column.  With `filename`, a last
 * VARCHAR column holds the path each row came from.
 *
 * Parallel: global_init cuts each regular file into byte ranges of about
 * read_csv_range_size bytes at record starts (st_csv_ranges, COPY's
 * quote-aware pass, which also gives each range its first line number), and
 * each task reads consecutive ranges: one range of a large file, or several
 * small files.  Tasks are in file order, and the result sink (and the gather
 * before a final LIMIT) keep task order, so rows come out in file order, as
 * DuckDB returns them.  A pipe (the sniffer's prefix, /dev/stdin) cannot be
 * read twice or seeked: a scan with one is a single task reading the files in
 * turn, as before.
 *
 * Errors in file order: a task whose input fails (a bad value, a NUL byte, an
 * unterminated quote...) first parses every range before its own; if one of
 * those fails, that error is reported instead.  So whichever task fails first
 * in time, the error is the first in the files, as a single reader's would be.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "executor/ops.h"

typedef struct CsvScanSpec {
    int n_files;
    const char **files; /* paths, in reading order; in the query arena */
    StCsvOptions opt;   /* opt.n_cols fields fill the first columns */
    const char **names; /* output column names, for errors */
    bool has_filename;  /* the last column is the file's path */
    const char *prefix; /* bytes the sniffer took from files[0] (a pipe), or NULL */
    size_t n_prefix;
} CsvScanSpec;

/* A range of one file. */
typedef struct CsvPart {
    int file_idx;
    StCsvRange rg; /* begin 0, end -1: the whole file */
} CsvPart;

/* Immutable once global_init returns: no lock. */
typedef struct CsvScanGlobal {
    int n_parts;
    CsvPart *parts; /* in file order; owned */
    int n_tasks;
    int *first; /* task t reads parts [first[t], first[t + 1]); owned, n_tasks + 1 */
} CsvScanGlobal;

typedef struct CsvScanLocal {
    ExQuery *query;
    int part_idx;        /* the part being read */
    int part_end;        /* one past the task's last part */
    int part_first;      /* the task's first part */
    StCsvReader *reader; /* of parts[part_idx], or NULL before it is opened */
} CsvScanLocal;

#define CSV_MAX_RANGES 4096 /* per file */

static void csv_global_fini(ExOp *op)
{
    CsvScanGlobal *g = op->global;
    if (g != NULL) {
        cm_free(g->parts);
        cm_free(g->first);
        cm_free(g);
        op->global = NULL;
    }
}

/* Appends file f's ranges (one when it cannot be split) to g->parts. */
static CmStatus add_file(const CsvScanSpec *s, CsvScanGlobal *g, int f, bool is_split,
                         int64_t range_bytes, int *cap, CmErr *err)
{
    StCsvRange whole = {.begin = 0, .end = -1, .line = 1};
    StCsvRange *rg = &whole;
    int n = 1;
    if (is_split &&
        st_csv_ranges(s->files[f], &s->opt, range_bytes, CSV_MAX_RANGES, &rg, &n, err) != CM_OK) {
        return err->code;
    }
    if (g->n_parts + n > *cap) {
        int new_cap = (g->n_parts + n) * 2;
        CsvPart *grown = cm_realloc(g->parts, sizeof *grown * (size_t)new_cap);
        if (grown == NULL) {
            if (rg != &whole) {
                cm_free(rg);
            }
            return cm_err_set(err, CM_OOM, -1, "out of memory");
        }
        g->parts = grown;
        *cap = new_cap;
    }
    for (int i = 0; i < n; i++) {
        g->parts[g->n_parts++] = (CsvPart){.file_idx = f, .rg = rg[i]};
    }
    if (rg != &whole) {
        cm_free(rg);
    }
    return CM_OK;
}

/* Groups parts into tasks: a range of a split file alone, whole files
 * together until they reach range_bytes. */
static CmStatus make_tasks(const CsvScanSpec *s, CsvScanGlobal *g, int64_t range_bytes, CmErr *err)
{
    g->first = cm_malloc(sizeof(int) * (size_t)(g->n_parts + 1));
    if (g->first == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    int64_t bytes = 0; /* of the open task */
    for (int i = 0; i < g->n_parts; i++) {
        const CsvPart *p = &g->parts[i];
        bool is_range = p->rg.begin > 0 || p->rg.end >= 0;
        struct stat st;
        int64_t size = !is_range && stat(s->files[p->file_idx], &st) == 0 ? st.st_size : 0;
        if (i == 0 || is_range || bytes >= range_bytes) {
            g->first[g->n_tasks++] = i;
            bytes = 0;
        }
        bytes += is_range ? range_bytes : size;
    }
    g->first[g->n_tasks] = g->n_parts;
    return CM_OK;
}

static CmStatus csv_global_init(ExOp *op, ExQuery *q, CmErr *err)
{
    const CsvScanSpec *s = op->spec;
    CsvScanGlobal *g = cm_calloc(1, sizeof *g);
    if (g == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    op->global = g;
    /* A pipe is read once, in order, by one task. */
    bool is_split = s->prefix == NULL;
    for (int f = 0; f < s->n_files && is_split; f++) {
        struct stat st;
        is_split = stat(s->files[f], &st) == 0 && S_ISREG(st.st_mode);
    }
    int64_t range_bytes = q->config.read_csv_range_size;
    int cap = 0;
    for (int f = 0; f < s->n_files; f++) {
        if (add_file(s, g, f, is_split, range_bytes, &cap, err) != CM_OK) {
            return err->code;
        }
    }
    if (!is_split) {
        g->first = cm_malloc(sizeof(int) * 2);
        if (g->first == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory");
        }
        g->n_tasks = 1;
        g->first[0] = 0;
        g->first[1] = g->n_parts;
        return CM_OK;
    }
    return make_tasks(s, g, range_bytes, err);
}

static int csv_n_tasks(ExOp *op, ExQuery *q)
{
    (void)q;
    const CsvScanGlobal *g = op->global;
    return g->n_tasks;
}

static void *csv_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    const CsvScanGlobal *g = op->global;
    CsvScanLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    l->query = task->query;
    l->part_idx = l->part_first = g->first[task->task_idx];
    l->part_end = g->first[task->task_idx + 1];
    return l;
}

static void csv_local_fini(ExOp *op, void *local)
{
    (void)op;
    CsvScanLocal *l = local;
    if (l != NULL) {
        st_csv_reader_free(l->reader);
        cm_free(l);
    }
}

/* A reader of part p (owned), or NULL with err. */
static StCsvReader *open_part(ExOp *op, int p, CmErr *err)
{
    const CsvScanSpec *s = op->spec;
    const CsvScanGlobal *g = op->global;
    const CsvPart *part = &g->parts[p];
    bool has_prefix = part->file_idx == 0 && part->rg.begin == 0;
    StCsvReader *r =
        st_csv_reader_new(s->files[part->file_idx], &s->opt, op->n_cols, op->types, s->names,
                          has_prefix ? s->prefix : NULL, has_prefix ? s->n_prefix : 0, err);
    bool is_range = part->rg.begin > 0 || part->rg.end >= 0;
    if (r != NULL && is_range && st_csv_reader_set_range(r, &part->rg, err) != CM_OK) {
        st_csv_reader_free(r);
        return NULL;
    }
    return r;
}

/* err is the failure of a part after `first`: when a part before it fails
 * too, its error replaces err (the first error in the files wins). */
static void earlier_error(ExOp *op, ExQuery *q, int first, CmErr *err)
{
    if (err->code != CM_RUNTIME && err->code != CM_LIMIT) {
        return; /* not about the content of the files */
    }
    CmErr e;
    cm_err_init(&e);
    for (int p = 0; p < first && e.code == CM_OK; p++) {
        StCsvReader *r = open_part(op, p, &e);
        CmBatch *b = NULL;
        while (r != NULL && st_csv_reader_next(r, &b, &e) == CM_OK && b != NULL) {
            CmErr check;
            cm_err_init(&check);
            if (ex_query_check(q, &check) != CM_OK) {
                st_csv_reader_free(r);
                return; /* another task failed: its error is the query's */
            }
        }
        st_csv_reader_free(r);
    }
    if (e.code != CM_OK) {
        cm_err_init(err);
        cm_err_copy(err, &e);
    }
}

static ExOpResult csv_pull(ExOp *op, void *local, const CmBatch **out, CmErr *err)
{
    CsvScanSpec *s = op->spec;
    const CsvScanGlobal *g = op->global;
    CsvScanLocal *l = local;
    *out = NULL;
    while (l->part_idx < l->part_end) {
        const char *path = s->files[g->parts[l->part_idx].file_idx];
        CmBatch *b = NULL;
        if (l->reader == NULL) {
            l->reader = open_part(op, l->part_idx, err);
        }
        if (l->reader == NULL || st_csv_reader_next(l->reader, &b, err) != CM_OK) {
            earlier_error(op, l->query, l->part_first, err);
            return EX_DONE;
        }
        if (b != NULL) {
            if (s->has_filename) {
                CmVec *v = &b->cols[op->n_cols - 1];
                CmStr name = cm_str_make(path, (uint32_t)strlen(path));
                for (int r = 0; r < b->n_rows; r++) {
                    ((CmStr *)v->data)[r] = name;
                    cm_vec_set_valid(v, (uint32_t)r);
                }
            }
            *out = b;
            return EX_HAVE_MORE;
        }
        st_csv_reader_free(l->reader);
        l->reader = NULL;
        l->part_idx++;
    }
    return EX_DONE;
}

static void csv_explain(const ExOp *op, const char *const *in_names, char *buf, size_t cap)
{
    const CsvScanSpec *s = op->spec;
    if (s->n_files == 1) {
        snprintf(buf, cap, "%s", s->files[0]);
    } else {
        snprintf(buf, cap, "%s and %d more file%s", s->files[0], s->n_files - 1,
                 s->n_files == 2 ? "" : "s");
    }
}

static const ExOpVt CSV_SCAN_VT = {
    .name = "READ_CSV",
    .global_init = csv_global_init,
    .global_fini = csv_global_fini,
    .n_tasks = csv_n_tasks,
    .local_init = csv_local_init,
    .local_fini = csv_local_fini,
    .pull = csv_pull,
    .explain = csv_explain,
};

ExOp *ex_csv_scan_new(CmArena *a, int n_files, const char **files, const StCsvOptions *opt,
                      int n_cols, const CmType *types, const char **names, bool has_filename,
                      const char *prefix, size_t n_prefix, CmErr *err)
{
    CsvScanSpec *s = cm_arena_zalloc(a, sizeof *s);
    ExOp *op = s ? ex_op_new(a, &CSV_SCAN_VT, s, n_cols, types) : NULL;
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    s->n_files = n_files;
    s->files = files;
    s->opt = *opt;
    s->names = names;
    s->has_filename = has_filename;
    s->prefix = prefix;
    s->n_prefix = n_prefix;
    return op;
}
