/*
 * csv_scan.c - the source of the table functions read_csv and read_csv_auto:
 * the records of one or more delimited text files, in file order, parsed by
 * the COPY parser (storage/csv.h) one window at a time, so a scan holds one
 * window of text and its rows however large the files are.  One task reads
 * the files one after another (rows come out in file order, as DuckDB
 * returns them).  The binder has already sniffed the dialect and the types;
 * a value that does not fit its column's type is an error naming the file,
 * the line and the column.  With `filename`, a last VARCHAR column holds the
 * path each row came from.
 */
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "executor/ops.h"

typedef struct CsvScanSpec {
    int n_files;
    const char **files;    /* paths, in reading order; in the query arena */
    StCsvOptions opt;      /* opt.n_cols fields fill the first columns */
    const char **names;    /* output column names, for errors */
    bool has_filename;     /* the last column is the file's path */
    const char *prefix;    /* bytes the sniffer took from files[0] (a pipe), or NULL */
    size_t n_prefix;
} CsvScanSpec;

typedef struct CsvScanLocal {
    int file_idx;          /* the file being read */
    StCsvReader *reader;   /* of files[file_idx], or NULL before it is opened */
} CsvScanLocal;

static int csv_n_tasks(ExOp *op, ExQuery *q)
{
    (void)op;
    (void)q;
    return 1;
}

static void *csv_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    (void)op;
    (void)task;
    CsvScanLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
    }
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

static ExOpResult csv_pull(ExOp *op, void *local, const CmBatch **out, CmErr *err)
{
    CsvScanSpec *s = op->spec;
    CsvScanLocal *l = local;
    *out = NULL;
    while (l->file_idx < s->n_files) {
        const char *path = s->files[l->file_idx];
        if (l->reader == NULL) {
            bool is_first = l->file_idx == 0;
            l->reader = st_csv_reader_new(path, &s->opt, op->n_cols, op->types, s->names,
                                          is_first ? s->prefix : NULL, is_first ? s->n_prefix : 0,
                                          err);
            if (l->reader == NULL) {
                return EX_DONE;
            }
        }
        CmBatch *b = NULL;
        if (st_csv_reader_next(l->reader, &b, err) != CM_OK) {
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
        l->file_idx++;
    }
    return EX_DONE;
}

static void csv_explain(const ExOp *op, char *buf, size_t cap)
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
