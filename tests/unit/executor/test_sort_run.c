/*
 * test_sort_run.c - unit tests for executor/sort_run.c, the external sort, on
 * hand-built batches: under a memory limit far below the input it writes
 * sorted runs, merges them (in several passes when the fan-in is small) and
 * returns exactly the stable in-memory order; a limit cuts the runs; an input
 * that fits stays in memory; an unwritable temp directory is a clean CM_IO;
 * on two threads (the sort and the output's gathering) the order is the same;
 * the chunks of a table fed as a scan hands them over are kept in place,
 * pinned, until the sorter lets go of them; presorted rows keep their order.
 *
 * Columns: 0 a BIGINT (few values, NULL when idx % 7 == 3), 1 b VARCHAR (short
 * and out-of-line strings), 2 idx BIGINT (input position, for stability).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "ex_test_util.h"
#include "executor/sort_run.h"
#include "storage/blocks.h"
#include "storage/table.h"

static CmArena arena;
static CmErr err;
static CmType types[3];
static ExQuery query;
static ExOp *op;
static int n_threads; /* the sorters' (ex_sorter_set_threads) */

static const char *WORDS[] = {"delta", "alpha", "a much longer string, out of line", "",
                              "a much longer string, out of lineZ", "Zulu"};

static void setup(void)
{
    cm_arena_init(&arena, 0);
    cm_err_init(&err);
    types[0] = cm_type_make(CM_T_INT64);
    types[1] = cm_type_varchar(-1, false);
    types[2] = cm_type_make(CM_T_INT64);
    memset(&query, 0, sizeof query);
    cm_config_init(&query.config);
    n_threads = 1;
    ExSortKey none = {0};
    op = ex_sort_new(&arena, 1, &none, 3, types, -1, &err);
    cr_assert_not_null(op);
}

static void teardown(void)
{
    cm_mem_set_limit(cm_mem_default_limit());
    cm_arena_fini(&arena);
}

TestSuite(ex_sorter, .init = setup, .fini = teardown);

static int64_t key_a(int64_t i)
{
    return (int64_t)((uint32_t)(i * 2654435761u) >> 20) % 13;
}

static ExResult *make_input(int n)
{
    Rows rows;
    rows_init(&rows, 3, types);
    for (int i = 0; i < n; i++) {
        CmValue v[3] = {i % 7 == 3 ? v_null(types[0]) : v_i64(key_a(i)),
                        v_str(WORDS[(i * 7 + i / 3) % 6]), v_i64(i)};
        rows_add(&rows, v);
    }
    return rows_done(&rows);
}

/* Keys: a DESC NULLS FIRST, then b ASC; ties by input position. */
static const ExSortKey KEYS[] = {{.col = 0, .desc = true, .nulls_first = true},
                                 {.col = 1, .desc = false, .nulls_first = false}};

static int ref_cmp(const void *x, const void *y)
{
    int64_t i = *(const int64_t *)x, j = *(const int64_t *)y;
    bool ni = i % 7 == 3, nj = j % 7 == 3;
    if (ni != nj) {
        return ni ? -1 : 1;
    }
    if (!ni) {
        int64_t ai = key_a(i), aj = key_a(j);
        if (ai != aj) {
            return ai > aj ? -1 : 1;
        }
    }
    int c = strcmp(WORDS[(i * 7 + i / 3) % 6], WORDS[(j * 7 + j / 3) % 6]);
    if (c != 0) {
        return c;
    }
    return (i > j) - (i < j);
}

/* Feeds `in` in slices of `slice` rows (as a selection over its batches). */
static CmStatus feed(ExSorter *s, const ExResult *in, int slice)
{
    uint32_t sel[CM_BATCH_CAP];
    for (int b = 0; b < ex_result_n_batches(in); b++) {
        const CmBatch *batch = ex_result_batch(in, b);
        for (int at = 0; at < batch->n_rows; at += slice) {
            CmBatch view = *batch;
            view.n_rows = batch->n_rows - at < slice ? batch->n_rows - at : slice;
            for (int i = 0; i < view.n_rows; i++) {
                sel[i] = (uint32_t)(at + i);
            }
            view.sel = sel;
            if (ex_sorter_add(s, &view, &err) != CM_OK) {
                return err.code;
            }
        }
    }
    return CM_OK;
}

/* Finishes s, fed the n rows of make_input, and checks its output against
 * the reference order, keeping `limit`. */
static void check_output(ExSorter *s, int n, int64_t limit, bool expect_spill)
{
    cr_assert_eq(ex_sorter_finish(s, &err), CM_OK, "%s", err.msg);
    const CmBatch *const *batches;
    const ExRowRef *order;
    int64_t n_order;
    cr_assert_eq(ex_sorter_in_memory(s, &batches, &order, &n_order), !expect_spill);

    int64_t *ref = cm_malloc(sizeof(int64_t) * (size_t)n);
    for (int i = 0; i < n; i++) {
        ref[i] = i;
    }
    qsort(ref, (size_t)n, sizeof *ref, ref_cmp);
    int64_t want = limit >= 0 && limit < n ? limit : n;

    CmBatch out;
    cr_assert_eq(cm_batch_init(&out, 3, types, &err), CM_OK);
    int64_t got = 0;
    bool has_more = true;
    while (has_more) {
        cr_assert_eq(ex_sorter_next(s, &out, &has_more, &err), CM_OK, "%s", err.msg);
        for (int r = 0; r < out.n_rows; r++, got++) {
            cr_assert_lt(got, want);
            int64_t idx = ((const int64_t *)out.cols[2].data)[r];
            cr_assert_eq(idx, ref[got], "row %lld: idx %lld, expected %lld", (long long)got,
                         (long long)idx, (long long)ref[got]);
            const CmStr *b = &((const CmStr *)out.cols[1].data)[r];
            const char *w = WORDS[(idx * 7 + idx / 3) % 6];
            cr_assert(b->len == strlen(w) && memcmp(cm_str_data(b), w, b->len) == 0);
            cr_assert_eq(cm_vec_is_null(&out.cols[0], (uint32_t)r), idx % 7 == 3);
        }
    }
    cr_assert_eq(got, want);
    cm_batch_fini(&out);
    cm_free(ref);
}

/* Sorts n rows fed in slices, keeping `limit`; checks the output against the
 * reference order.  Returns the runs written. */
static int check_sort(int n, int slice, int64_t limit, bool expect_spill)
{
    ExResult *in = make_input(n);
    ExSorter *s = ex_sorter_new(op, &query, "test sort", 3, types, 2, KEYS, limit, &err);
    cr_assert_not_null(s, "%s", err.msg);
    ex_sorter_set_threads(s, n_threads);
    cr_assert_eq(feed(s, in, slice), CM_OK, "%s", err.msg);
    check_output(s, n, limit, expect_spill);
    int n_runs = ex_sorter_n_runs(s);
    ex_sorter_free(s);
    ex_result_free(in);
    return n_runs;
}

/* A table holding the rows of `in` (make_input's columns). */
static StTable *table_of(const ExResult *in)
{
    StColumn cols[3] = {{.name = "a", .type = types[0]},
                        {.name = "b", .type = types[1]},
                        {.name = "idx", .type = types[2]}};
    StTable *t = st_table_new("t", 3, cols, &err);
    cr_assert_not_null(t);
    for (int b = 0; b < ex_result_n_batches(in); b++) {
        cr_assert_eq(st_table_append(t, ex_result_batch(in, b), &err), CM_OK, "%s", err.msg);
    }
    return t;
}

/* Sorts the n rows of make_input from a table's chunks, as a scan hands them
 * over: every chunk but the odd ones (fed through a selection, so copied)
 * and the tail (still appended to) is kept in place, pinned, so the parts
 * alternate between kept and copied rows and the order must still be the
 * input's on ties.  While the sorter holds them the kept chunks stay when
 * everything else is evicted; once it is freed, nothing stays pinned. */
static void check_kept_chunks(int n, bool expect_spill)
{
    ExResult *in = make_input(n);
    StTable *t = table_of(in);
    ExSorter *s = ex_sorter_new(op, &query, "test sort", 3, types, 2, KEYS, -1, &err);
    cr_assert_not_null(s, "%s", err.msg);
    CmBatch scan;
    cr_assert_eq(cm_batch_init(&scan, 3, types, &err), CM_OK);
    const int col_ids[3] = {0, 1, 2};
    uint32_t sel[CM_BATCH_CAP];
    for (int c = 0; c < t->n_chunks; c++) {
        cr_assert_eq(st_table_scan_chunk(t, c, col_ids, 3, &scan, NULL, &err), CM_OK);
        cr_assert_eq(scan.keep.keeper != NULL, t->chunks[c]->sealed);
        CmBatch view = scan;
        if (c % 2 == 1) {
            for (int i = 0; i < scan.n_rows; i++) {
                sel[i] = (uint32_t)i;
            }
            view.sel = sel;
        }
        cr_assert_eq(ex_sorter_add(s, &view, &err), CM_OK, "%s", err.msg);
        st_table_unpin_chunk(t, c);
    }
    st_blocks_evict(INT64_MAX);
    int n_kept = 0;
    for (int c = 0; c < t->n_chunks; c++) {
        bool kept = c % 2 == 0 && t->chunks[c]->sealed;
        bool resident = st_block_resident(t->chunks[c]->block);
        n_kept += kept && resident;
        /* a run written lets go of the chunks kept before it */
        cr_assert(resident == (kept || !t->chunks[c]->sealed) || (expect_spill && !resident),
                  "chunk %d", c);
    }
    cr_assert_gt(n_kept, 0);
    cr_assert_eq(ex_sorter_n_runs(s) > 0, expect_spill);
    check_output(s, n, -1, expect_spill);
    ex_sorter_free(s);
    st_blocks_evict(INT64_MAX);
    for (int c = 0; c < t->n_chunks; c++) {
        cr_assert_eq(st_block_resident(t->chunks[c]->block), !t->chunks[c]->sealed, "chunk %d", c);
    }
    scan.keep.keeper = NULL;
    for (int i = 0; i < 3; i++) { /* the vectors viewed the table: nothing of theirs to free */
        scan.cols[i].data = scan.cols[i].data_buf;
    }
    cm_batch_fini(&scan);
    st_table_free(t);
    ex_result_free(in);
}

Test(ex_sorter, keeps_table_chunks_in_place_in_input_order)
{
    check_kept_chunks(5 * CM_BATCH_CAP + CM_BATCH_CAP / 3, false);
}

Test(ex_sorter, kept_chunks_spill_with_the_copied_rows)
{
    cm_mem_set_limit(2 * 1024 * 1024);
    check_kept_chunks(40000, true);
}

/* A kept pin is refused when the batch no longer views its chunk as it is. */
Test(ex_sorter, a_changed_scan_batch_is_not_kept)
{
    ExResult *in = make_input(2 * CM_BATCH_CAP);
    StTable *t = table_of(in);
    cr_assert(t->chunks[0]->sealed);
    CmBatch scan;
    cr_assert_eq(cm_batch_init(&scan, 3, types, &err), CM_OK);
    void *bufs[3] = {scan.cols[0].data_buf, scan.cols[1].data_buf, scan.cols[2].data_buf};
    const int col_ids[3] = {0, 1, 2};
    cr_assert_eq(st_table_scan_chunk(t, 0, col_ids, 3, &scan, NULL, &err), CM_OK);
    CmKeep kept;
    CmBatch changed = scan;
    CmVec vecs[3];
    memcpy(vecs, scan.cols, sizeof vecs);
    changed.cols = vecs;
    vecs[2].data = bufs[2]; /* a vector replaced by an operator */
    cr_assert_not(cm_batch_keep(&changed, &kept));
    vecs[2] = scan.cols[2];
    vecs[1].kind = CM_VEC_CONST;
    cr_assert_not(cm_batch_keep(&changed, &kept));
    cr_assert(cm_batch_keep(&scan, &kept));
    st_table_unpin_chunk(t, 0);
    st_blocks_evict(INT64_MAX);
    cr_assert(st_block_resident(t->chunks[0]->block)); /* the kept pin */
    cm_keep_drop(&kept);
    cr_assert_null(kept.keeper);
    cm_keep_drop(&kept); /* a dropped one is fine */
    st_blocks_evict(INT64_MAX);
    cr_assert_not(st_block_resident(t->chunks[0]->block));
    for (int i = 0; i < 3; i++) {
        scan.cols[i].data = bufs[i];
    }
    cm_batch_fini(&scan);
    st_table_free(t);
    ex_result_free(in);
}

Test(ex_sorter, fits_in_memory_without_spilling)
{
    cr_assert_eq(check_sort(5000, 97, -1, false), 0);
    cr_assert_eq(atomic_load(&op->spilled_bytes), 0);
}

/* Past the rows that make the sort and the gathering of its output parallel. */
Test(ex_sorter, two_threads_sort_and_gather_in_memory, .timeout = 60)
{
    n_threads = 2;
    cr_assert_eq(check_sort(50000, 1000, -1, false), 0);
    check_sort(50000, 1000, 20000, false);
}

Test(ex_sorter, two_threads_sort_spilled_runs, .timeout = 60)
{
    n_threads = 2;
    cm_mem_set_limit(4 * 1024 * 1024);
    int n_runs = check_sort(120000, 1000, -1, true);
    cr_assert_gt(n_runs, 1);
}

Test(ex_sorter, spills_runs_and_merges_them_stably)
{
    cm_mem_set_limit(256 * 1024);
    int n_runs = check_sort(20000, 50, -1, true);
    cr_assert_gt(n_runs, 2);
    cr_assert_gt(atomic_load(&op->spilled_bytes), 0);
    cr_assert_eq(atomic_load(&op->spill_files), n_runs);
}

/* 16KB: a run holds a few hundred rows, so there are more runs than the
 * fan-in the memory allows (and than EX_SORTER_MAX_FANIN): passes merge them. */
Test(ex_sorter, merges_many_runs_in_passes)
{
    cm_mem_set_limit(16 * 1024);
    int n_runs = check_sort(40000, 50, -1, true);
    cr_assert_gt(n_runs, EX_SORTER_MAX_FANIN);
}

Test(ex_sorter, limit_cuts_the_runs)
{
    cm_mem_set_limit(64 * 1024);
    check_sort(20000, 50, 37, true);
}

Test(ex_sorter, limit_past_a_quarter_of_the_rows)
{
    cm_mem_set_limit(64 * 1024);
    check_sort(8000, 50, 5000, true);
}

Test(ex_sorter, unwritable_temp_directory_is_an_io_error)
{
    cm_mem_set_limit(16 * 1024);
    snprintf(query.config.temp_directory, sizeof query.config.temp_directory,
             "/nonexistent/sluice-spill");
    ExResult *in = make_input(5000);
    ExSorter *s = ex_sorter_new(op, &query, "test sort", 3, types, 2, KEYS, -1, &err);
    cr_assert_not_null(s);
    cr_assert_eq(feed(s, in, 50), CM_IO);
    cr_assert(strstr(err.msg, "/nonexistent/sluice-spill") != NULL, "%s", err.msg);
    ex_sorter_free(s);
    ex_result_free(in);
}

Test(ex_sorter, compare_rows_orders_nulls_and_directions)
{
    ExResult *in = make_input(10);
    const CmBatch *b = ex_result_batch(in, 0);
    if (b->n_rows < 4) {
        ex_result_free(in);
        return; /* 3-row batches: rows 3 and 0 are in different batches */
    }
    ExSortKey nf = {.col = 0, .desc = false, .nulls_first = true};
    ExSortKey nl = {.col = 0, .desc = false, .nulls_first = false};
    /* row 3 is NULL in column a */
    cr_assert_lt(ex_sort_compare_rows(&nf, 1, b, 3, b, 0), 0);
    cr_assert_gt(ex_sort_compare_rows(&nl, 1, b, 3, b, 0), 0);
    cr_assert_eq(ex_sort_compare_rows(&nl, 1, b, 3, b, 3), 0);
    ex_result_free(in);
}

/* Presorted (a window after one on the same keys): the rows keep the order
 * they came in.  In memory they come scrambled, which a sort would change,
 * so the output in arrival order shows nothing was sorted; through spilled
 * runs and their merge (by key, then run) they come in key order, as the
 * contract asks, and leave in it. */
static void check_presorted(int n, bool expect_spill)
{
    int64_t *idx = cm_malloc(sizeof(int64_t) * (size_t)n);
    for (int i = 0; i < n; i++) {
        idx[i] = i;
    }
    if (expect_spill) {
        qsort(idx, (size_t)n, sizeof *idx, ref_cmp);
    }
    Rows rows;
    rows_init(&rows, 3, types);
    for (int k = 0; k < n; k++) {
        int64_t i = idx[k];
        CmValue v[3] = {i % 7 == 3 ? v_null(types[0]) : v_i64(key_a(i)),
                        v_str(WORDS[(i * 7 + i / 3) % 6]), v_i64(i)};
        rows_add(&rows, v);
    }
    ExResult *in = rows_done(&rows);
    ExSorter *s = ex_sorter_new(op, &query, "test sort", 3, types, 2, KEYS, -1, &err);
    cr_assert_not_null(s, "%s", err.msg);
    ex_sorter_set_presorted(s);
    cr_assert_eq(feed(s, in, 100), CM_OK, "%s", err.msg);
    cr_assert_eq(ex_sorter_finish(s, &err), CM_OK, "%s", err.msg);
    const CmBatch *const *batches;
    const ExRowRef *order;
    int64_t n_order;
    cr_assert_eq(ex_sorter_in_memory(s, &batches, &order, &n_order), !expect_spill);
    cr_assert(!expect_spill || ex_sorter_n_runs(s) > 1);
    CmBatch out;
    cr_assert_eq(cm_batch_init(&out, 3, types, &err), CM_OK);
    int64_t got = 0;
    for (bool more = true; more;) {
        cr_assert_eq(ex_sorter_next(s, &out, &more, &err), CM_OK, "%s", err.msg);
        for (int r = 0; r < out.n_rows; r++, got++) {
            cr_assert_eq(((const int64_t *)out.cols[2].data)[r], idx[got]);
        }
    }
    cr_assert_eq(got, n);
    cm_batch_fini(&out);
    ex_sorter_free(s);
    ex_result_free(in);
    cm_free(idx);
}

Test(ex_sorter, presorted_rows_keep_their_order_in_memory)
{
    check_presorted(3 * CM_BATCH_CAP + 17, false);
}

Test(ex_sorter, presorted_rows_keep_their_order_through_runs)
{
    cm_mem_set_limit(2 * 1024 * 1024);
    check_presorted(40000, true);
}
