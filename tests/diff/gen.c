/*
 * gen.c - the differential test's string buffer, PRNG and random database.
 *
 * A database is 2-4 tables of 1-5 columns (INTEGER or VARCHAR) and 0-60 rows.
 * Integers come from small per-column ranges (so equality joins find
 * partners) and strings are 0-3 letters from {a, b, c} (lower case only, see
 * KNOWN_DIFFS.md on LIKE); each column has its own NULL rate.  The same
 * script is run by both engines.
 */
#include "gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* DfBuf                                                                     */
/* ------------------------------------------------------------------------ */

static void buf_reserve(DfBuf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap) {
        return;
    }
    size_t cap = b->cap > 0 ? b->cap : 256;
    while (cap < need) {
        cap *= 2;
    }
    char *data = realloc(b->data, cap);
    if (data == NULL) {
        fputs("diff_runner: out of memory\n", stderr);
        exit(2);
    }
    b->data = data;
    b->cap = cap;
}

void df_buf_puts(DfBuf *b, const char *s)
{
    size_t n = strlen(s);
    buf_reserve(b, n);
    memcpy(b->data + b->len, s, n + 1);
    b->len += n;
}

void df_buf_printf(DfBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0) {
        return;
    }
    buf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void df_buf_reset(DfBuf *b)
{
    b->len = 0;
    if (b->data != NULL) {
        b->data[0] = '\0';
    }
}

void df_buf_fini(DfBuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

const char *df_buf_str(const DfBuf *b)
{
    return b->data != NULL ? b->data : "";
}

/* ------------------------------------------------------------------------ */
/* DfRng                                                                     */
/* ------------------------------------------------------------------------ */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void df_rng_init(DfRng *rng, uint64_t seed, uint64_t stream)
{
    rng->state = mix64(seed ^ mix64(stream + 0x9e3779b97f4a7c15ULL));
}

uint64_t df_rng_next(DfRng *rng)
{
    rng->state += 0x9e3779b97f4a7c15ULL;
    return mix64(rng->state);
}

int df_rng_range(DfRng *rng, int lo, int hi)
{
    uint64_t span = (uint64_t)((int64_t)hi - lo + 1);
    return lo + (int)(df_rng_next(rng) % span);
}

bool df_rng_chance(DfRng *rng, int percent)
{
    return df_rng_range(rng, 0, 99) < percent;
}

/* ------------------------------------------------------------------------ */
/* Database                                                                  */
/* ------------------------------------------------------------------------ */

/* How one column's values are drawn. */
typedef struct ColDist {
    int lo, hi;       /* integer range, or string length range */
    int null_percent; /* share of NULLs */
    int n_letters;    /* strings: letters used, from "abc" */
} ColDist;

/* A name of two letters and a digit that differs from the first n_used names. */
static void random_name(DfRng *rng, char name[DF_NAME_CAP], char (*used)[DF_NAME_CAP], int n_used)
{
    for (;;) {
        snprintf(name, DF_NAME_CAP, "%c%c%d", 'a' + df_rng_range(rng, 0, 25),
                 'a' + df_rng_range(rng, 0, 25), df_rng_range(rng, 0, 9));
        bool is_dup = false;
        for (int idx = 0; idx < n_used; idx++) {
            is_dup = is_dup || strcmp(used[idx], name) == 0;
        }
        if (!is_dup) {
            return;
        }
    }
}

static void gen_table_shape(DfRng *rng, DfTable *t)
{
    char names[DF_MAX_COLS][DF_NAME_CAP];
    t->n_cols = df_rng_range(rng, 1, DF_MAX_COLS);
    bool has_int = false;
    for (int col_idx = 0; col_idx < t->n_cols; col_idx++) {
        DfColumn *c = &t->cols[col_idx];
        random_name(rng, names[col_idx], names, col_idx);
        memcpy(c->name, names[col_idx], DF_NAME_CAP);
        c->type = df_rng_chance(rng, 60) ? DF_INT : DF_STR;
        has_int = has_int || c->type == DF_INT;
    }
    if (!has_int) {
        t->cols[df_rng_range(rng, 0, t->n_cols - 1)].type = DF_INT;
    }
    int size_pick = df_rng_range(rng, 0, 19);
    t->n_rows = size_pick == 0   ? 0
                : size_pick <= 2 ? df_rng_range(rng, 1, 3)
                                 : df_rng_range(rng, 4, 60);
}

static ColDist draw_dist(DfRng *rng, DfType type)
{
    static const int null_rates[] = {0, 10, 15, 15, 30};
    ColDist d;
    d.null_percent = null_rates[df_rng_range(rng, 0, 4)];
    d.n_letters = df_rng_range(rng, 2, 3);
    if (type == DF_INT) {
        static const int highs[] = {3, 8, 12, 20};
        d.lo = df_rng_chance(rng, 25) ? -3 : 0;
        d.hi = highs[df_rng_range(rng, 0, 3)];
    } else {
        d.lo = 0;
        d.hi = 3;
    }
    return d;
}

static void put_value(DfRng *rng, const ColDist *d, DfType type, DfBuf *out)
{
    if (df_rng_chance(rng, d->null_percent)) {
        df_buf_puts(out, "NULL");
    } else if (type == DF_INT) {
        df_buf_printf(out, "%d", df_rng_range(rng, d->lo, d->hi));
    } else {
        char text[8];
        int len = df_rng_range(rng, d->lo, d->hi);
        for (int idx = 0; idx < len; idx++) {
            text[idx] = (char)('a' + df_rng_range(rng, 0, d->n_letters - 1));
        }
        text[len] = '\0';
        df_buf_printf(out, "'%s'", text);
    }
}

static void put_create(const DfTable *t, DfBuf *script)
{
    df_buf_printf(script, "CREATE TABLE %s (", t->name);
    for (int col_idx = 0; col_idx < t->n_cols; col_idx++) {
        const DfColumn *c = &t->cols[col_idx];
        df_buf_printf(script, "%s%s %s", col_idx > 0 ? ", " : "", c->name,
                      c->type == DF_INT ? "INTEGER" : "VARCHAR(10)");
    }
    df_buf_puts(script, ");\n");
}

/* INSERTs of up to 20 rows each. */
static void put_rows(DfRng *rng, const DfTable *t, DfBuf *script)
{
    ColDist dists[DF_MAX_COLS];
    for (int col_idx = 0; col_idx < t->n_cols; col_idx++) {
        dists[col_idx] = draw_dist(rng, t->cols[col_idx].type);
    }
    for (int row_idx = 0; row_idx < t->n_rows; row_idx++) {
        bool is_first = row_idx % 20 == 0;
        df_buf_puts(script, is_first ? "INSERT INTO " : ",\n    ");
        if (is_first) {
            df_buf_printf(script, "%s VALUES\n    ", t->name);
        }
        df_buf_puts(script, "(");
        for (int col_idx = 0; col_idx < t->n_cols; col_idx++) {
            df_buf_puts(script, col_idx > 0 ? ", " : "");
            put_value(rng, &dists[col_idx], t->cols[col_idx].type, script);
        }
        df_buf_puts(script, ")");
        if (row_idx % 20 == 19 || row_idx == t->n_rows - 1) {
            df_buf_puts(script, ";\n");
        }
    }
}

void df_gen_database(DfRng *rng, DfSchema *schema, DfBuf *script)
{
    char names[DF_MAX_TABLES][DF_NAME_CAP];
    schema->n_tables = df_rng_range(rng, 2, DF_MAX_TABLES);
    for (int tab_idx = 0; tab_idx < schema->n_tables; tab_idx++) {
        DfTable *t = &schema->tables[tab_idx];
        random_name(rng, names[tab_idx], names, tab_idx);
        memcpy(t->name, names[tab_idx], DF_NAME_CAP);
        gen_table_shape(rng, t);
        put_create(t, script);
        put_rows(rng, t, script);
    }
}
