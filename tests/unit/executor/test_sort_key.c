/*
 * test_sort_key.c - unit tests for executor/sort_key.c: on random rows
 * (integers, doubles with -0, NaN and infinities, booleans, strings sharing
 * prefixes longer than the encoded one, NULLs everywhere) and random ORDER BY
 * lists, ex_sort_refs gives exactly the order of a comparison sort by
 * ex_sort_compare_rows and then input position.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "ex_test_util.h"
#include "executor/sort_key.h"

#define N_COLS 6
#define N_ROWS 3000
/* Enough rows for ex_sort_refs to sort on several threads. */
#define PAR_ROWS 40000

static CmType types[N_COLS];
static char words[PAR_ROWS][40]; /* the strings' bytes, alive for the whole test */

static void setup(void)
{
    types[0] = cm_type_make(CM_T_INT32);
    types[1] = cm_type_make(CM_T_INT64);
    types[2] = cm_type_make(CM_T_DOUBLE);
    types[3] = cm_type_varchar(-1, false);
    types[4] = cm_type_make(CM_T_BOOL);
    types[5] = cm_type_varchar(-1, false);
}

TestSuite(ex_sort_key, .init = setup);

static CmValue random_value(int col, int row, unsigned *seed)
{
    if (rand_r(seed) % 6 == 0) {
        return v_null(types[col]);
    }
    static const double DOUBLES[] = {0.0, -0.0, 1.5, -1.5, INFINITY, -INFINITY, NAN, 1e300};
    switch (col) {
    case 0: return v_i32((int32_t)(rand_r(seed) % 9 - 4) * 500000000);
    case 1: return v_i64((int64_t)(rand_r(seed) % 5 - 2) * INT64_C(3000000000000000000));
    case 2: return v_f64(DOUBLES[rand_r(seed) % 8]);
    case 4: return v_bool(rand_r(seed) % 2);
    default: {
        /* A shared prefix of 0 to 30 bytes, then up to 3 bytes of a small alphabet. */
        char *w = words[row];
        int n = (int)(rand_r(seed) % 31);
        memset(w, 'p', (size_t)n);
        int tail = (int)(rand_r(seed) % 4);
        for (int i = 0; i < tail; i++) {
            w[n++] = "ab~"[rand_r(seed) % 3];
        }
        w[n] = '\0';
        return v_str(w);
    }
    }
}

typedef struct Ctx {
    const ExSortKey *keys;
    int n_keys;
    const CmBatch *const *batches;
} Ctx;

static int full_cmp(const void *x, const void *y, void *arg)
{
    const Ctx *c = arg;
    const ExRowRef *a = x, *b = y;
    int d = ex_sort_compare_rows(c->keys, c->n_keys, c->batches[a->batch], a->row,
                                 c->batches[b->batch], b->row);
    if (d != 0) {
        return d;
    }
    if (a->batch != b->batch) {
        return a->batch < b->batch ? -1 : 1;
    }
    return (a->row > b->row) - (a->row < b->row);
}

/* n_trials random ORDER BY lists over n_rows random rows, each sorted by
 * ex_sort_refs on n_threads threads and checked against the comparison sort. */
static void check_random_sorts(int n_rows, int n_trials, int n_threads)
{
    unsigned seed = 12345;
    Rows rows;
    rows_init(&rows, N_COLS, types);
    for (int r = 0; r < n_rows; r++) {
        CmValue v[N_COLS];
        for (int c = 0; c < N_COLS; c++) {
            v[c] = random_value(c, r, &seed);
        }
        /* Column 5 repeats column 3's string or is NULL: long-prefix keys after a string. */
        v[5] = r % 3 == 0 ? v_null(types[5]) : v[3];
        rows_add(&rows, v);
    }
    ExResult *res = rows_done(&rows);
    int n_batches = ex_result_n_batches(res);
    const CmBatch **batches = cm_malloc(sizeof *batches * (size_t)n_batches);
    ExRowRef *got = cm_malloc(sizeof *got * (size_t)n_rows),
             *want = cm_malloc(sizeof *want * (size_t)n_rows);
    cr_assert(batches != NULL && got != NULL && want != NULL);
    int n = 0;
    for (int b = 0; b < n_batches; b++) {
        batches[b] = ex_result_batch(res, b);
        for (int r = 0; r < batches[b]->n_rows; r++) {
            want[n++] = (ExRowRef){.batch = (uint32_t)b, .row = (uint32_t)r};
        }
    }
    cr_assert_eq(n, n_rows);
    for (int trial = 0; trial < n_trials; trial++) {
        ExSortKey keys[8];
        int n_keys = 1 + (int)(rand_r(&seed) % 8);
        for (int k = 0; k < n_keys; k++) {
            keys[k] = (ExSortKey){.col = (int)(rand_r(&seed) % N_COLS),
                                  .desc = rand_r(&seed) % 2,
                                  .nulls_first = rand_r(&seed) % 2};
        }
        /* Sort a random subset (a top-N's survivors are any refs). */
        int m = trial % 4 == 0 ? n_rows / 7 : n_rows;
        for (int i = 0; i < m; i++) {
            got[i] = want[(i * (trial % 4 == 0 ? 7 : 1)) % n_rows];
        }
        memcpy(want, got, sizeof *got * (size_t)m);
        Ctx ctx = {.keys = keys, .n_keys = n_keys, .batches = batches};
        qsort_r(want, (size_t)m, sizeof *want, full_cmp, &ctx);
        CmErr err;
        cm_err_init(&err);
        cr_assert_eq(ex_sort_refs(types, keys, n_keys, batches, got, m, n_threads, &err), CM_OK,
                     "%s", err.msg);
        for (int i = 0; i < m; i++) {
            cr_assert(got[i].batch == want[i].batch && got[i].row == want[i].row,
                      "trial %d (%d keys, first on column %d): row %d differs", trial, n_keys,
                      keys[0].col, i);
        }
        /* Back to input order for the next trial. */
        n = 0;
        for (int b = 0; b < n_batches; b++) {
            for (int r = 0; r < batches[b]->n_rows; r++) {
                want[n++] = (ExRowRef){.batch = (uint32_t)b, .row = (uint32_t)r};
            }
        }
    }
    cm_free(batches);
    cm_free(got);
    cm_free(want);
    ex_result_free(res);
}

Test(ex_sort_key, random_rows_sort_as_the_full_comparison)
{
    check_random_sorts(N_ROWS, 200, 1);
}

/* Past the rows a parallel sort needs: the threads' buckets and slices give
 * the same order (duplicates, NULLs, DESC and long common prefixes). */
Test(ex_sort_key, parallel_sort_equals_the_full_comparison, .timeout = 120)
{
    check_random_sorts(PAR_ROWS, 12, 2);
    check_random_sorts(PAR_ROWS, 4, 3);
}
