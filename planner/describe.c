/*
 * describe.c - the rows of SHOW TABLES and DESCRIBE (describe.h).
 */
#include "planner/describe.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/value.h"
#include "storage/index.h"

const char *const pl_describe_names[PL_DESCRIBE_COLS] = {
    "column_name", "column_type", "null", "key", "default", "extra",
};

/* Rows of VARCHAR columns appended one at a time; a NULL cell is a NULL pointer. */
typedef struct Rows {
    ExResult *r;
    CmBatch b;
    int n_cols;
    CmErr *err;
} Rows;

static bool rows_init(Rows *rows, int n_cols, CmErr *err)
{
    CmType t[PL_DESCRIBE_COLS];
    for (int i = 0; i < n_cols; i++) {
        t[i] = cm_type_varchar(-1, false);
    }
    rows->n_cols = n_cols;
    rows->err = err;
    rows->r = ex_result_new(n_cols, t, err);
    if (rows->r == NULL) {
        return false;
    }
    if (cm_batch_init(&rows->b, n_cols, t, err) != CM_OK) {
        ex_result_free(rows->r);
        return false;
    }
    return true;
}

/* Appends one row; the texts are copied into the batch's heap. */
static void rows_add(Rows *rows, const char *const *cells, const size_t *lens)
{
    if (rows->err->code != CM_OK) {
        return;
    }
    cm_batch_reset(&rows->b);
    for (int c = 0; c < rows->n_cols; c++) {
        CmVec *v = &rows->b.cols[c];
        if (cells[c] == NULL) {
            cm_vec_set_null(v, 0);
            continue;
        }
        char *copy = cm_arena_strndup(&rows->b.heap, cells[c], lens[c]);
        if (copy == NULL) {
            cm_err_set(rows->err, CM_OOM, -1, "out of memory");
            return;
        }
        ((CmStr *)v->data)[0] = cm_str_make(copy, (uint32_t)lens[c]);
    }
    rows->b.n_rows = 1;
    ex_result_append(rows->r, &rows->b, rows->err);
}

static ExResult *rows_done(Rows *rows)
{
    cm_batch_fini(&rows->b);
    if (rows->err->code != CM_OK) {
        ex_result_free(rows->r);
        return NULL;
    }
    return rows->r;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

ExResult *pl_show_tables(StCatalog *cat, CmErr *err)
{
    int n = st_catalog_count(cat);
    const char **names = cm_malloc(sizeof(char *) * (size_t)(n + 1));
    Rows rows;
    if (names == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        const StEntry *e = st_catalog_entry(cat, i);
        if (e->kind != ST_ENTRY_INDEX) {
            names[k++] = e->name;
        }
    }
    qsort(names, (size_t)k, sizeof *names, by_name);
    if (rows_init(&rows, 1, err)) {
        for (int i = 0; i < k; i++) {
            size_t len = strlen(names[i]);
            rows_add(&rows, &names[i], &len);
        }
    }
    cm_free(names);
    return err->code == CM_OK ? rows_done(&rows) : NULL;
}

/* 'PRI' or 'UNI' when column c is part of a key of t, else NULL. */
static const char *key_of(const StTable *t, int c)
{
    const char *key = NULL;
    for (int i = 0; i < t->n_indexes; i++) {
        StIndexKind kind = st_index_kind(t->indexes[i]);
        const int *cols = st_index_key_cols(t->indexes[i]);
        for (int k = 0; kind != ST_INDEX_PLAIN && k < st_index_n_keys(t->indexes[i]); k++) {
            if (cols[k] == c) {
                key = kind == ST_INDEX_PRIMARY ? "PRI" : key ? key : "UNI";
            }
        }
    }
    return key;
}

/* s[0..*len) as an SQL string literal ('it''s'), malloc'ed; *len updated. */
static char *sql_quote(const char *s, size_t *len)
{
    char *out = cm_malloc(2 * *len + 3);
    size_t w = 0;
    if (out == NULL) {
        return NULL;
    }
    out[w++] = '\'';
    for (size_t i = 0; i < *len; i++) {
        if (s[i] == '\'') {
            out[w++] = '\'';
        }
        out[w++] = s[i];
    }
    out[w++] = '\'';
    out[w] = '\0';
    *len = w;
    return out;
}

char *pl_default_text(const StColumn *col, CmErr *err)
{
    char dflt[CM_FMT_CAP];
    size_t len = 4;
    const char *text = "NULL";
    if (!col->has_default) {
        return NULL;
    }
    if (!col->default_value.is_null) {
        text = cm_fmt_value(&col->default_value, dflt, &len);
    }
    char *out = col->type.id == CM_T_VARCHAR && !col->default_value.is_null
                    ? sql_quote(text, &len)
                    : cm_malloc(len + 1);
    if (out == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    if (col->type.id != CM_T_VARCHAR || col->default_value.is_null) {
        memcpy(out, text, len);
        out[len] = '\0';
    }
    return out;
}

ExResult *pl_describe(int n, const char *const *names, const CmType *types, const StTable *t,
                      CmErr *err)
{
    Rows rows;
    if (!rows_init(&rows, PL_DESCRIBE_COLS, err)) {
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        char type[64];
        const StColumn *col = t != NULL && i < t->n_cols ? &t->cols[i] : NULL;
        const char *cells[PL_DESCRIBE_COLS] = {names[i], cm_type_name(types[i], type, sizeof type),
                                               col && col->not_null ? "NO" : "YES",
                                               col ? key_of(t, i) : NULL, NULL, NULL};
        size_t lens[PL_DESCRIBE_COLS] = {0};
        for (int c = 0; c < PL_DESCRIBE_COLS; c++) {
            lens[c] = cells[c] ? strlen(cells[c]) : 0;
        }
        char *text = col != NULL ? pl_default_text(col, err) : NULL;
        cells[4] = text;
        lens[4] = text ? strlen(text) : 0;
        rows_add(&rows, cells, lens);
        cm_free(text);
    }
    return rows_done(&rows);
}
