/*
 * test_table.c - unit tests for storage/table.c: appends across chunk
 * boundaries, NULLs, string ownership (long strings outlive the source
 * batch), truncate, the NOT NULL and VARCHAR(n) checks, and scan_chunk
 * views.  Row counts are derived from CM_BATCH_CAP (CI also builds it as 3).
 * Row r of the generated data: id = r, name = a string of length r % 30
 * (short and long ones), score = NULL when r % 7 == 3, else r * 0.5.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/table.h"

/* Chunk idx's batch: pinned and unpinned at once (nothing evicts in these
 * tests, so it stays valid); allocates nothing for a resident chunk. */
static const CmBatch *chunk_of(const StTable *t, int64_t idx)
{
    CmErr e;
    cm_err_init(&e);
    const CmBatch *b = st_block_pin(t->chunks[idx]->block, NULL, &e);
    st_block_unpin(t->chunks[idx]->block);
    return b;
}

static CmErr err;
static StTable *table;
static CmType types[3];

static void setup(void)
{
    cm_err_init(&err);
    types[0] = cm_type_make(CM_T_INT64);
    types[1] = cm_type_varchar(-1, false);
    types[2] = cm_type_make(CM_T_DOUBLE);
    StColumn cols[3] = {
        {.name = "id", .type = types[0], .not_null = true, .primary_key = true},
        {.name = "name", .type = types[1]},
        {.name = "score", .type = types[2]},
    };
    table = st_table_new("t", 3, cols, &err);
    cr_assert_not_null(table);
}

static void teardown(void)
{
    st_table_free(table);
}

TestSuite(st_table, .init = setup, .fini = teardown);

/* The text of row r's name, into buf (>= 32 bytes); returns its length. */
static int name_of(int64_t r, char *buf)
{
    int len = (int)(r % 30);
    for (int k = 0; k < len; k++) {
        buf[k] = (char)('a' + (r + k) % 26);
    }
    buf[len] = '\0';
    return len;
}

static bool score_is_null(int64_t r)
{
    return r % 7 == 3;
}

/* Appends rows [from, to) in batches of up to CM_BATCH_CAP rows whose
 * strings live in the batch heap, freeing each batch right after. */
static void append_rows(int64_t from, int64_t to)
{
    while (from < to) {
        CmBatch b;
        cr_assert_eq(cm_batch_init(&b, 3, types, &err), CM_OK);
        int n = 0;
        for (; n < CM_BATCH_CAP && from < to; n++, from++) {
            char buf[32];
            int len = name_of(from, buf);
            char *heap_copy = cm_arena_strndup(&b.heap, buf, (size_t)len);
            ((int64_t *)b.cols[0].data)[n] = from;
            ((CmStr *)b.cols[1].data)[n] = cm_str_make(heap_copy, (uint32_t)len);
            if (score_is_null(from)) {
                cm_vec_set_null(&b.cols[2], (uint32_t)n);
            } else {
                ((double *)b.cols[2].data)[n] = (double)from * 0.5;
            }
        }
        b.n_rows = n;
        cr_assert_eq(st_table_append(table, &b, &err), CM_OK, "%s", err.msg);
        /* Scribble over the source before freeing it. */
        for (int i = 0; i < n; i++) {
            CmStr *s = &((CmStr *)b.cols[1].data)[i];
            if (s->len > CM_STR_INLINE) {
                memset((char *)s->ptr, '#', s->len);
            }
        }
        cm_batch_fini(&b);
    }
}

/* Reads every row through scan_chunk and checks it against the generator. */
static void check_rows(int64_t n_rows)
{
    cr_assert_eq(table->n_rows, n_rows);
    cr_assert_eq(table->n_chunks, (int)((n_rows + CM_BATCH_CAP - 1) / CM_BATCH_CAP));
    CmBatch view;
    cr_assert_eq(cm_batch_init(&view, 3, types, &err), CM_OK);
    void *own[3];
    for (int c = 0; c < 3; c++) {
        own[c] = view.cols[c].data;
    }
    int ids[3] = {0, 1, 2};
    int64_t r = 0;
    for (int ch = 0; ch < table->n_chunks; ch++) {
        cr_assert_eq(st_table_scan_chunk(table, ch, ids, 3, &view, NULL, &err), CM_OK);
        st_table_unpin_chunk(table, ch); /* nothing evicts here: the view stays valid */
        cr_assert_null(view.sel);
        if (ch + 1 < table->n_chunks) {
            cr_assert_eq(view.n_rows, CM_BATCH_CAP, "every chunk but the last is full");
        }
        for (int i = 0; i < view.n_rows; i++, r++) {
            cr_assert_eq(((int64_t *)view.cols[0].data)[i], r);
            char buf[32];
            int len = name_of(r, buf);
            const CmStr *s = &((const CmStr *)view.cols[1].data)[i];
            cr_assert_eq(s->len, (uint32_t)len, "row %lld", (long long)r);
            cr_assert_eq(memcmp(cm_str_data(s), buf, (size_t)len), 0, "row %lld name",
                         (long long)r);
            cr_assert_eq(cm_vec_is_null(&view.cols[2], (uint32_t)i), score_is_null(r), "row %lld",
                         (long long)r);
            if (!score_is_null(r)) {
                cr_assert_eq(((double *)view.cols[2].data)[i], (double)r * 0.5);
            }
        }
    }
    cr_assert_eq(r, n_rows);
    /* scan_chunk borrowed the table's arrays: give the batch its own back. */
    for (int c = 0; c < 3; c++) {
        view.cols[c].data = own[c];
        view.cols[c].validity = NULL;
    }
    cm_batch_fini(&view);
}

Test(st_table, new_table_copies_columns)
{
    cr_expect_str_eq(table->name, "t");
    cr_expect_eq(table->n_cols, 3);
    cr_expect_str_eq(table->cols[1].name, "name");
    cr_expect(table->cols[0].not_null);
    cr_expect(table->cols[0].primary_key);
    cr_expect_not(table->cols[2].not_null);
    cr_expect_eq(table->n_rows, 0);
    cr_expect_eq(table->n_chunks, 0);

    char colname[] = "mutable";
    StColumn c = {.name = colname, .type = cm_type_make(CM_T_INT32)};
    StTable *t2 = st_table_new("t2", 1, &c, &err);
    cr_assert_not_null(t2);
    colname[0] = 'X';
    cr_expect_str_eq(t2->cols[0].name, "mutable");
    st_table_free(t2);
}

Test(st_table, append_one_chunk)
{
    append_rows(0, CM_BATCH_CAP);
    check_rows(CM_BATCH_CAP);
}

Test(st_table, append_across_chunk_boundaries)
{
    int64_t n = 5 * (int64_t)CM_BATCH_CAP + 2;
    append_rows(0, n);
    check_rows(n);
}

Test(st_table, many_small_appends_fill_chunks)
{
    /* Batches of one row: each append lands in the tail chunk until full. */
    int64_t n = 2 * (int64_t)CM_BATCH_CAP + 1;
    for (int64_t r = 0; r < n; r++) {
        append_rows(r, r + 1);
    }
    check_rows(n);
}

Test(st_table, many_chunks_grow_the_chunk_array)
{
    /* More than the initial 8 chunk slots, several times over. */
    int64_t n = 40 * (int64_t)CM_BATCH_CAP + 1;
    append_rows(0, n);
    check_rows(n);
}

Test(st_table, append_follows_the_selection)
{
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 3, types, &err), CM_OK);
    int n = CM_BATCH_CAP;
    for (int i = 0; i < n; i++) {
        ((int64_t *)b.cols[0].data)[i] = 100 + i;
        ((CmStr *)b.cols[1].data)[i] = cm_str_make("s", 1);
        ((double *)b.cols[2].data)[i] = i;
    }
    /* Active rows: the last, then the first. */
    b.sel_buf[0] = (uint32_t)(n - 1);
    b.sel_buf[1] = 0;
    b.sel = b.sel_buf;
    b.n_rows = 2;
    cr_assert_eq(st_table_append(table, &b, &err), CM_OK);
    cr_assert_eq(table->n_rows, 2);
    const int64_t *ids = chunk_of(table, 0)->cols[0].data;
    cr_expect_eq(ids[0], 100 + n - 1);
    cr_expect_eq(ids[1], 100);
    cm_batch_fini(&b);
}

Test(st_table, nulls_after_valid_rows_and_back)
{
    /* A NULL arriving after valid rows creates the bitmap; a later valid row
     * in the same chunk must stay valid. */
    append_rows(0, 3); /* row 3 (NULL score) comes next */
    append_rows(3, 5);
    check_rows(5);
    const CmBatch *c = chunk_of(table, table->n_chunks - 1);
    cr_expect_not_null(c->cols[2].validity);
    cr_expect_null(c->cols[0].validity, "a column without NULLs keeps no bitmap");
}

Test(st_table, long_strings_survive_the_source_batch)
{
    /* append_rows scribbles over and frees each source batch. */
    int64_t n = 3 * (int64_t)CM_BATCH_CAP;
    if (n < 60) {
        n = 60; /* all lengths 0..29, twice */
    }
    append_rows(0, n);
    check_rows(n);
}

Test(st_table, truncate_restores_count_and_content)
{
    int64_t n = 2 * (int64_t)CM_BATCH_CAP + 1;
    append_rows(0, n);
    int64_t extra = 3 * (int64_t)CM_BATCH_CAP;
    append_rows(n, n + extra);
    st_table_truncate(table, n);
    check_rows(n);
    /* Appending after a truncate continues at the right place, and rows that
     * were truncated leave no trace (NULL bits included). */
    append_rows(n, n + extra);
    check_rows(n + extra);
}

Test(st_table, truncate_inside_a_chunk_then_append)
{
    int64_t n = 2 * (int64_t)CM_BATCH_CAP;
    append_rows(0, n);
    /* Cut to just after row 3 (NULL score): rows 4.. were valid. */
    st_table_truncate(table, 4 < n ? 4 : n - 1);
    int64_t kept = table->n_rows;
    cr_assert_lt(kept, n);
    append_rows(kept, n + 1);
    check_rows(n + 1);
}

Test(st_table, truncate_to_zero_and_noop)
{
    append_rows(0, (int64_t)CM_BATCH_CAP + 1);
    st_table_truncate(table, table->n_rows + 5); /* nothing to drop */
    cr_expect_eq(table->n_rows, CM_BATCH_CAP + 1);
    st_table_truncate(table, 0);
    cr_expect_eq(table->n_rows, 0);
    cr_expect_eq(table->n_chunks, 0);
    append_rows(0, 4);
    check_rows(4);
}

Test(st_table, truncate_at_exact_chunk_boundary)
{
    append_rows(0, 3 * (int64_t)CM_BATCH_CAP);
    st_table_truncate(table, CM_BATCH_CAP);
    cr_expect_eq(table->n_chunks, 1);
    check_rows(CM_BATCH_CAP);
    append_rows(CM_BATCH_CAP, 2 * (int64_t)CM_BATCH_CAP + 1);
    check_rows(2 * (int64_t)CM_BATCH_CAP + 1);
}

/* ---- chunks in the block store: eviction to disk --------------------------------- */

Test(st_table, evicted_chunks_read_back_with_their_strings)
{
    int64_t n = 4 * (int64_t)CM_BATCH_CAP + 1;
    append_rows(0, n);
    int64_t held = table->mem.held;
    cr_assert_gt(st_blocks_evict(INT64_MAX), 0);
    cr_expect_lt(table->mem.held, held, "sealed chunks left memory");
    cr_expect(st_block_resident(table->chunks[table->n_chunks - 1]->block), "the tail stays");
    cr_expect_not(st_block_resident(table->chunks[0]->block));
    StBlocksStats before;
    st_blocks_stats(&before);
    check_rows(n);
    StBlocksStats after;
    st_blocks_stats(&after);
    cr_expect_geq(after.loads - before.loads, 4);
    append_rows(n, n + CM_BATCH_CAP);
    check_rows(n + CM_BATCH_CAP);
}

Test(st_table, truncate_into_an_evicted_chunk_then_append)
{
    int64_t n = 3 * (int64_t)CM_BATCH_CAP;
    append_rows(0, n);
    st_blocks_evict(INT64_MAX);
    /* into the middle of sealed, evicted chunk 1 (row 3 of the data is a NULL) */
    int64_t cut = (int64_t)CM_BATCH_CAP + (CM_BATCH_CAP > 4 ? 4 : 1);
    st_table_truncate(table, cut);
    check_rows(cut);
    append_rows(cut, n + 2);
    check_rows(n + 2);
}

Test(st_table, zone_maps_skip_without_loading)
{
    int64_t n = 3 * (int64_t)CM_BATCH_CAP;
    append_rows(0, n);
    st_blocks_evict(INT64_MAX);
    StBlocksStats before;
    st_blocks_stats(&before);
    for (int ch = 0; ch < 3; ch++) {
        int64_t lo, hi;
        st_table_chunk_range(table, ch, 0, &lo, &hi);
        cr_expect_eq(lo, (int64_t)ch * CM_BATCH_CAP);
        cr_expect_eq(hi, (int64_t)(ch + 1) * CM_BATCH_CAP - 1);
    }
    StBlocksStats after;
    st_blocks_stats(&after);
    cr_expect_eq(after.loads, before.loads, "nothing was loaded");
}

Test(st_table, a_table_larger_than_the_limit)
{
    append_rows(0, CM_BATCH_CAP);
    int64_t one = table->mem.held; /* about a chunk */
    cm_mem_set_limit(one * 4);
    int64_t n = 20 * (int64_t)CM_BATCH_CAP;
    append_rows(CM_BATCH_CAP, n);
    cr_expect_leq(table->mem.held, one * 4);
    check_rows(n);
    cm_mem_set_limit(cm_mem_default_limit());
}

Test(st_table, scan_chunk_selects_and_reorders_columns)
{
    int64_t n = (int64_t)CM_BATCH_CAP + 2;
    append_rows(0, n);
    CmType out_types[2] = {types[2], types[0]};
    CmBatch view;
    cr_assert_eq(cm_batch_init(&view, 2, out_types, &err), CM_OK);
    void *own[2] = {view.cols[0].data, view.cols[1].data};
    view.sel = view.sel_buf; /* scan must clear a stale selection */
    view.cols[0].kind = CM_VEC_CONST;
    int ids[2] = {2, 0};
    cr_assert_eq(st_table_scan_chunk(table, 1, ids, 2, &view, NULL, &err), CM_OK);
    st_table_unpin_chunk(table, 1);
    cr_expect_eq(view.n_rows, 2);
    cr_expect_null(view.sel);
    cr_expect_eq(view.cols[0].kind, CM_VEC_FLAT);
    cr_expect_eq(view.cols[0].data, chunk_of(table, 1)->cols[2].data, "a view, not a copy");
    cr_expect_eq(view.cols[1].data, chunk_of(table, 1)->cols[0].data);
    cr_expect_eq(((int64_t *)view.cols[1].data)[0], CM_BATCH_CAP);
    cr_expect_eq(((int64_t *)view.cols[1].data)[1], CM_BATCH_CAP + 1);
    view.cols[0].data = own[0];
    view.cols[1].data = own[1];
    view.cols[0].validity = view.cols[1].validity = NULL;
    cm_batch_fini(&view);
}

Test(st_table, append_const_vector)
{
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 3, types, &err), CM_OK);
    ((int64_t *)b.cols[0].data)[0] = 9;
    b.cols[0].kind = CM_VEC_CONST;
    const char *text = "a constant longer than 12";
    ((CmStr *)b.cols[1].data)[0] = cm_str_make(text, (uint32_t)strlen(text));
    b.cols[1].kind = CM_VEC_CONST;
    cm_vec_set_null(&b.cols[2], 0);
    b.cols[2].kind = CM_VEC_CONST;
    b.n_rows = CM_BATCH_CAP;
    cr_assert_eq(st_table_append(table, &b, &err), CM_OK);
    cm_batch_fini(&b);
    const CmBatch *c = chunk_of(table, 0);
    for (int i = 0; i < CM_BATCH_CAP; i++) {
        cr_expect_eq(((int64_t *)c->cols[0].data)[i], 9);
        const CmStr *s = &((CmStr *)c->cols[1].data)[i];
        cr_expect_eq(s->len, strlen(text));
        cr_expect_neq(cm_str_data(s), text, "copied into the table's arena");
        cr_expect_eq(memcmp(cm_str_data(s), text, s->len), 0);
        cr_expect_not_null(c->cols[2].validity);
        cr_expect_eq((c->cols[2].validity[i >> 6] >> (i & 63)) & 1, 0);
    }
}

Test(st_table, truncated_null_does_not_stick_to_the_next_row)
{
    /* Row 3 has a NULL score; cut it off and append a row with a valid score
     * in its place: the stale bit must not survive. */
    append_rows(0, 4);
    st_table_truncate(table, 3);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 3, types, &err), CM_OK);
    ((int64_t *)b.cols[0].data)[0] = 3;
    ((CmStr *)b.cols[1].data)[0] = cm_str_make("", 0);
    ((double *)b.cols[2].data)[0] = 8.25;
    b.n_rows = 1;
    cr_assert_eq(st_table_append(table, &b, &err), CM_OK);
    cm_batch_fini(&b);
    int64_t r = 3;
    const CmBatch *c = chunk_of(table, r / CM_BATCH_CAP);
    int i = (int)(r % CM_BATCH_CAP);
    bool valid = c->cols[2].validity == NULL || ((c->cols[2].validity[i >> 6] >> (i & 63)) & 1);
    cr_expect(valid, "row 3 must be valid now");
    cr_expect_eq(((double *)c->cols[2].data)[i], 8.25);
}

/* ---- a failed append leaves the table as it was ---------------------------------- */

/* In its own suite, without .init: the fault injector of common/alloc.c reads
 * CM_FAULT_AFTER at the first allocation of the process, so nothing may be
 * allocated before the forked children set it. */
TestSuite(st_table_oom);

enum { HUGE_LEN = 100000 };

/* Row r of the fault test: like the generator above, but row `huge` carries
 * a string of HUGE_LEN bytes (more than a quarter of the table's string arena
 * chunk, so copying it needs an allocation of its own). */
static int oom_name(int64_t r, int64_t huge, char *buf, const char **out)
{
    static char big[HUGE_LEN];
    if (r == huge) {
        memset(big, 'h', sizeof big);
        big[0] = (char)('0' + r % 10);
        *out = big;
        return HUGE_LEN;
    }
    *out = buf;
    return name_of(r, buf);
}

/* Fills b with rows [from, to) (to - from <= CM_BATCH_CAP). */
static void oom_fill(CmBatch *b, int64_t from, int64_t to, int64_t huge)
{
    cm_batch_reset(b);
    for (int64_t r = from; r < to; r++) {
        uint32_t i = (uint32_t)(r - from);
        static char bufs[CM_BATCH_CAP][32];
        const char *text;
        int len = oom_name(r, huge, bufs[i], &text);
        ((int64_t *)b->cols[0].data)[i] = r;
        ((CmStr *)b->cols[1].data)[i] = cm_str_make(text, (uint32_t)len);
        if (score_is_null(r)) {
            cm_vec_set_null(&b->cols[2], i);
        } else {
            cm_vec_set_valid(&b->cols[2], i);
            ((double *)b->cols[2].data)[i] = (double)r * 0.5;
        }
    }
    b->n_rows = (int)(to - from);
}

/* Checks t holds exactly rows [0, n) without allocating (the injector may be
 * refusing everything by now). */
static bool oom_rows_ok(const StTable *t, int64_t n, int64_t huge)
{
    if (t->n_rows != n || t->n_chunks != (int)((n + CM_BATCH_CAP - 1) / CM_BATCH_CAP)) {
        return false;
    }
    for (int64_t r = 0; r < n; r++) {
        const CmBatch *c = chunk_of(t, r / CM_BATCH_CAP);
        int i = (int)(r % CM_BATCH_CAP);
        char buf[32];
        const char *text;
        int len = oom_name(r, huge, buf, &text);
        const CmStr *s = &((const CmStr *)c->cols[1].data)[i];
        bool null = c->cols[2].validity != NULL && !((c->cols[2].validity[i >> 6] >> (i & 63)) & 1);
        if (((const int64_t *)c->cols[0].data)[i] != r || s->len != (uint32_t)len ||
            memcmp(cm_str_data(s), text, (size_t)len) != 0 || null != score_is_null(r) ||
            (!null && ((const double *)c->cols[2].data)[i] != (double)r * 0.5)) {
            return false;
        }
    }
    return true;
}

enum {
    OOM_DONE = 0,
    OOM_ROLLED_BACK = 1,
    OOM_EARLY = 2,
    OOM_BAD_ROLLBACK = 3,
    OOM_BAD_DONE = 4,
    OOM_BAD_STATUS = 5
};

/* Runs in a forked child: allocation `k` and all after it fail. */
static int oom_child(int k)
{
    char val[16];
    snprintf(val, sizeof val, "%d", k);
    setenv("CM_FAULT_AFTER", val, 1);
    CmErr e;
    cm_err_init(&e);
    CmType ty[3] = {cm_type_make(CM_T_INT64), cm_type_varchar(-1, false),
                    cm_type_make(CM_T_DOUBLE)};
    StColumn cols[3] = {{.name = "id", .type = ty[0]},
                        {.name = "name", .type = ty[1]},
                        {.name = "score", .type = ty[2]}};
    StTable *t = st_table_new("t", 3, cols, &e);
    CmBatch b;
    if (t == NULL || cm_batch_init(&b, 3, ty, &e) != CM_OK) {
        return OOM_EARLY;
    }
    /* A full chunk and one row, then one batch that crosses into a third
     * chunk, with the huge string after the boundary. */
    int64_t prefix = (int64_t)CM_BATCH_CAP + 1, end = prefix + CM_BATCH_CAP;
    int64_t huge = end - 1;
    oom_fill(&b, 0, CM_BATCH_CAP, huge);
    if (st_table_append(t, &b, &e) != CM_OK) {
        return OOM_EARLY;
    }
    oom_fill(&b, CM_BATCH_CAP, prefix, huge);
    if (st_table_append(t, &b, &e) != CM_OK) {
        return OOM_EARLY;
    }
    oom_fill(&b, prefix, end, huge);
    if (st_table_append(t, &b, &e) == CM_OK) {
        return oom_rows_ok(t, end, huge) ? OOM_DONE : OOM_BAD_DONE;
    }
    if (e.code != CM_OOM) {
        return OOM_BAD_STATUS;
    }
    return oom_rows_ok(t, prefix, huge) ? OOM_ROLLED_BACK : OOM_BAD_ROLLBACK;
}

static int run_child(int k)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        _exit(oom_child(k));
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "child for fault %d died (signal %d)", k,
              WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return WEXITSTATUS(status);
}

Test(st_table_oom, failed_append_leaves_the_table_unchanged, .timeout = 60)
{
    if (run_child(1) != OOM_EARLY) {
        cr_skip_test("fault injection is compiled out (NDEBUG build)");
    }
    int rolled_back = 0;
    for (int k = 2; k < 2000; k++) {
        int rc = run_child(k);
        cr_assert(rc == OOM_DONE || rc == OOM_ROLLED_BACK || rc == OOM_EARLY,
                  "fault at allocation %d: child result %d", k, rc);
        rolled_back += rc == OOM_ROLLED_BACK;
        if (rc == OOM_DONE) {
            cr_log_info("faults rolled back: %d of %d", rolled_back, k - 1);
            cr_expect_gt(rolled_back, 0, "no fault ever hit the last append");
            return;
        }
    }
    cr_assert_fail("the append never completed");
}

/* ---- st_table_check ----------------------------------------------------------- */

static StTable *checked_table(void)
{
    StColumn cols[3] = {
        {.name = "k", .type = cm_type_make(CM_T_INT32), .not_null = true},
        {.name = "v", .type = cm_type_varchar(5, false)},
        {.name = "c", .type = cm_type_varchar(3, true)},
    };
    StTable *t = st_table_new("chk", 3, cols, &err);
    cr_assert_not_null(t);
    return t;
}

static void init_check_batch(CmBatch *b, const StTable *t)
{
    CmType ct[3] = {t->cols[0].type, t->cols[1].type, t->cols[2].type};
    cr_assert_eq(cm_batch_init(b, 3, ct, &err), CM_OK);
    b->n_rows = 1;
    ((int32_t *)b->cols[0].data)[0] = 1;
    ((CmStr *)b->cols[1].data)[0] = cm_str_make("abcde", 5);
    ((CmStr *)b->cols[2].data)[0] = cm_str_make("xyz", 3);
}

Test(st_table, check_accepts_valid_rows)
{
    StTable *t = checked_table();
    CmBatch b;
    init_check_batch(&b, t);
    cm_vec_set_null(&b.cols[1], 0); /* NULL in a nullable column is fine */
    cr_expect_eq(st_table_check(t, &b, &err), CM_OK, "%s", err.msg);
    cm_batch_fini(&b);
    st_table_free(t);
}

Test(st_table, check_not_null)
{
    StTable *t = checked_table();
    CmBatch b;
    init_check_batch(&b, t);
    cm_vec_set_null(&b.cols[0], 0);
    cr_expect_eq(st_table_check(t, &b, &err), CM_RUNTIME);
    cr_expect_str_eq(err.msg, "NOT NULL constraint failed: chk.k");
    cm_batch_fini(&b);
    st_table_free(t);
}

Test(st_table, check_varchar_length)
{
    StTable *t = checked_table();
    CmBatch b;
    init_check_batch(&b, t);
    ((CmStr *)b.cols[1].data)[0] = cm_str_make("abcdef", 6);
    cr_expect_eq(st_table_check(t, &b, &err), CM_RUNTIME);
    cr_expect_str_eq(err.msg, "value too long for type VARCHAR(5) of column chk.v");
    cm_batch_fini(&b);
    st_table_free(t);
}

Test(st_table, check_char_length)
{
    StTable *t = checked_table();
    CmBatch b;
    init_check_batch(&b, t);
    const char *long_text = "abcdefghijklmnopq"; /* long, out-of-line */
    ((CmStr *)b.cols[2].data)[0] = cm_str_make(long_text, 17);
    cr_expect_eq(st_table_check(t, &b, &err), CM_RUNTIME);
    cr_expect_str_eq(err.msg, "value too long for type CHAR(3) of column chk.c");
    cm_batch_fini(&b);
    st_table_free(t);
}

Test(st_table, check_only_looks_at_active_rows)
{
    if (CM_BATCH_CAP < 2) {
        cr_skip_test("needs two rows per batch");
    }
    StTable *t = checked_table();
    CmBatch b;
    init_check_batch(&b, t);
    /* Physical row 1 violates both constraints but is not selected. */
    cm_vec_set_null(&b.cols[0], 1);
    ((CmStr *)b.cols[1].data)[1] = cm_str_make("too long!", 9);
    b.sel_buf[0] = 0;
    b.sel = b.sel_buf;
    b.n_rows = 1;
    cr_expect_eq(st_table_check(t, &b, &err), CM_OK, "%s", err.msg);
    /* Selected, it fails. */
    b.sel_buf[0] = 1;
    cr_expect_eq(st_table_check(t, &b, &err), CM_RUNTIME);
    cm_batch_fini(&b);
    st_table_free(t);
}

Test(st_table, check_exact_length_is_accepted)
{
    StTable *t = checked_table();
    CmBatch b;
    init_check_batch(&b, t);
    ((CmStr *)b.cols[1].data)[0] = cm_str_make("12345", 5);
    ((CmStr *)b.cols[2].data)[0] = cm_str_make("", 0);
    cr_expect_eq(st_table_check(t, &b, &err), CM_OK, "%s", err.msg);
    cm_batch_fini(&b);
    st_table_free(t);
}

Test(st_table, check_then_append_leaves_failed_table_unchanged)
{
    /* The INSERT path: check first; a failing batch is never appended. */
    StTable *t = checked_table();
    CmBatch b;
    init_check_batch(&b, t);
    cr_assert_eq(st_table_check(t, &b, &err), CM_OK);
    cr_assert_eq(st_table_append(t, &b, &err), CM_OK);
    cm_vec_set_null(&b.cols[0], 0);
    cr_expect_eq(st_table_check(t, &b, &err), CM_RUNTIME);
    cr_expect_eq(t->n_rows, 1);
    cm_batch_fini(&b);
    st_table_free(t);
}

/* A copy of chunk ci with every id negated (st_table_chunk_from), not in the
 * table yet; with `first`, only the first id changed, to *first. */
static StChunk *copy_of(int ci, const int64_t *first)
{
    const CmBatch *b = chunk_of(table, ci);
    CmVec ids;
    cr_assert_eq(cm_vec_init(&ids, types[0], &err), CM_OK);
    for (int i = 0; i < table->chunks[ci]->n_rows; i++) {
        int64_t id = ((const int64_t *)b->cols[0].data)[i];
        ((int64_t *)ids.data)[i] = first == NULL ? -id : i == 0 ? *first : id;
    }
    CmVec cols[3] = {ids, b->cols[1], b->cols[2]};
    CmBatch rows = *b;
    rows.cols = cols;
    rows.n_rows = table->chunks[ci]->n_rows;
    rows.sel = NULL;
    StChunk *c = st_table_chunk_from(table, &rows, table->chunks[ci]->sealed, &err);
    cr_assert_not_null(c, "%s", err.msg);
    cm_vec_fini(&ids);
    return c;
}

static StChunk *negated_copy(int ci)
{
    return copy_of(ci, NULL);
}

static int64_t id_at(int ci, int i)
{
    return ((const int64_t *)chunk_of(table, ci)->cols[0].data)[i];
}

Test(st_table, swapped_chunks_replace_values_in_place)
{
    int64_t n = 3 * (int64_t)CM_BATCH_CAP + 2;
    append_rows(0, n);
    uint64_t version = table->version;
    int at[2] = {1, 3};
    StChunk *fresh[2] = {negated_copy(1), negated_copy(3)};
    cr_assert(fresh[0]->sealed && !fresh[1]->sealed, "a full copy is sealed, the tail's is not");
    cr_assert_eq(st_table_swap_chunks(table, 2, at, fresh, NULL, false, &err), CM_OK);
    cr_assert(fresh[0] == NULL && fresh[1] == NULL, "the table took them");
    cr_assert_neq(table->version, version);
    cr_assert(table->stats_stale);
    cr_assert_eq(id_at(0, 0), 0);
    cr_assert_eq(id_at(1, 0), -(int64_t)CM_BATCH_CAP);
    cr_assert_eq(id_at(3, 1), -(3 * (int64_t)CM_BATCH_CAP + 1));
    /* the tail's copy takes appends */
    append_rows(n, n + 2);
    cr_assert_eq(table->n_rows, n + 2);
    cr_assert_eq(id_at(3, 2), 3 * (int64_t)CM_BATCH_CAP + 2);
}

Test(st_table, restore_puts_back_replaced_chunks)
{
    int64_t n = 2 * (int64_t)CM_BATCH_CAP + 1;
    append_rows(0, n);
    uint64_t version = table->version;
    cr_assert_eq(st_table_mark(table, &err), CM_OK);
    int at[2] = {0, 2};
    StChunk *fresh[2] = {negated_copy(0), negated_copy(2)};
    cr_assert_eq(st_table_swap_chunks(table, 2, at, fresh, NULL, false, &err), CM_OK);
    append_rows(n, n + 2 * (int64_t)CM_BATCH_CAP); /* into the replaced tail, and on */
    /* the same place twice: the second copy holds the first's negated ids */
    StChunk *again = negated_copy(0);
    cr_assert_eq(st_table_swap_chunks(table, 1, at, &again, NULL, false, &err), CM_OK);
    cr_assert_eq(id_at(0, 1), 1);
    st_table_restore(table);
    cr_assert_eq(table->version, version);
    check_rows(n);
    append_rows(n, n + 5);
    check_rows(n + 5);
}

Test(st_table, commit_keeps_swapped_chunks)
{
    int64_t n = 2 * (int64_t)CM_BATCH_CAP;
    append_rows(0, n);
    cr_assert_eq(st_table_mark(table, &err), CM_OK);
    int at = 1;
    StChunk *fresh = negated_copy(1);
    cr_assert_eq(st_table_swap_chunks(table, 1, &at, &fresh, NULL, false, &err), CM_OK);
    st_table_unmark(table); /* frees the chunk taken out */
    cr_assert_eq(id_at(1, 0), -(int64_t)CM_BATCH_CAP);
    cr_assert_eq(table->n_rows, n);
}

/* ---- DELETE in place: chunks shorter than CM_BATCH_CAP, or gone ---------------------- */

/* The rows a test deletes: half of chunk 1, all of chunk 2. */
static bool gone(int64_t id)
{
    return (id / CM_BATCH_CAP == 1 && id % 2 == 0) || id / CM_BATCH_CAP == 2;
}

/* Deletes the rows of [0, n) that `gone` picks, as ex_delete_in_place does:
 * each chunk with such a row gives way to a sealed copy of the others, or
 * to none. */
static void delete_gone(void)
{
    int n = table->n_chunks, n_fresh = 0;
    int *at = calloc((size_t)n, sizeof(int));
    StChunk **fresh = calloc((size_t)n, sizeof(StChunk *));
    for (int ci = 0; ci < n; ci++) {
        const CmBatch *b = chunk_of(table, ci);
        uint32_t rest[CM_BATCH_CAP];
        int n_rest = 0, rows = table->chunks[ci]->n_rows;
        for (int i = 0; i < rows; i++) {
            if (!gone(((const int64_t *)b->cols[0].data)[i])) {
                rest[n_rest++] = (uint32_t)i;
            }
        }
        if (n_rest == rows) {
            continue;
        }
        CmBatch kept = *b;
        kept.sel = rest;
        kept.n_rows = n_rest;
        at[n_fresh] = ci;
        fresh[n_fresh] = n_rest > 0 ? st_table_chunk_from(table, &kept, true, &err) : NULL;
        cr_assert(n_rest == 0 || fresh[n_fresh] != NULL, "%s", err.msg);
        cr_assert(fresh[n_fresh] == NULL || fresh[n_fresh]->sealed, "a DELETE's copy is sealed");
        n_fresh++;
    }
    cr_assert_eq(st_table_swap_chunks(table, n_fresh, at, fresh, NULL, false, &err), CM_OK, "%s",
                 err.msg);
    free(at);
    free(fresh);
}

/* The ids of t are those of [0, n) that `gone` leaves (all when by_gone is
 * false), in order, read through scan_chunk, and each row is where
 * st_table_chunk_of finds it; the names and scores match the generator. */
static void check_ids(const StTable *t, int64_t n, bool by_gone)
{
    int64_t want = 0;
    for (int64_t id = 0; id < n; id++) {
        want += !(by_gone && gone(id));
    }
    cr_assert_eq(t->n_rows, want);
    int64_t r = 0, id = 0;
    for (int ci = 0; ci < t->n_chunks; ci++) {
        const CmBatch *b = chunk_of(t, ci);
        cr_assert_gt(t->chunks[ci]->n_rows, 0, "no chunk is empty");
        for (int i = 0; i < t->chunks[ci]->n_rows; i++, r++, id++) {
            while (by_gone && gone(id)) {
                id++;
            }
            cr_assert_eq(((const int64_t *)b->cols[0].data)[i], id, "row %lld", (long long)r);
            char buf[32];
            int len = name_of(id, buf);
            CmStr s = ((const CmStr *)b->cols[1].data)[i];
            cr_assert(s.len == (uint32_t)len && memcmp(cm_str_data(&s), buf, (size_t)len) == 0);
            cr_assert_eq(cm_vec_is_null(&b->cols[2], (uint32_t)i), score_is_null(id));
            int off = -1;
            cr_assert_eq(st_table_chunk_of(t, r, &off), ci);
            cr_assert_eq(off, i);
        }
    }
    cr_assert_eq(r, want);
}

static void add_primary_key(void)
{
    int key = 0;
    cr_assert_eq(st_table_add_index(table, NULL, ST_INDEX_PRIMARY, 1, &key, &err), CM_OK);
}

/* Appends id `id` alone; the status. */
static CmStatus append_id(int64_t id)
{
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 3, types, &err), CM_OK);
    ((int64_t *)b.cols[0].data)[0] = id;
    ((CmStr *)b.cols[1].data)[0] = cm_str_make("", 0);
    cm_vec_set_null(&b.cols[2], 0);
    b.n_rows = 1;
    cm_err_init(&err);
    CmStatus st = st_table_append(table, &b, &err);
    cm_batch_fini(&b);
    return st;
}

/* A copy of chunk ci whose first id is `id`, the others as they are. */
static StChunk *rekeyed_copy(int ci, int64_t id)
{
    return copy_of(ci, &id);
}

Test(st_table, rekeyed_swap_builds_the_indexes_or_changes_nothing)
{
    int64_t n = 3 * (int64_t)CM_BATCH_CAP + 5;
    append_rows(0, n);
    add_primary_key();
    uint64_t version = table->version;
    /* id 1 of chunk 0 collides with another row's key: refused, as it was */
    int at = 2;
    StChunk *fresh = rekeyed_copy(2, 1);
    StChunk *before = table->chunks[2];
    cr_assert_eq(st_table_swap_chunks(table, 1, &at, &fresh, NULL, true, &err), CM_RUNTIME);
    cr_assert_not_null(fresh, "the caller keeps the copy refused");
    st_table_chunk_discard(fresh);
    cr_assert(table->chunks[2] == before);
    cr_assert_eq(table->version, version);
    check_rows(n);
    cr_assert_eq(append_id(1), CM_RUNTIME, "the old indexes stay");
    /* a free key: taken, and the old one freed */
    cm_err_init(&err);
    fresh = rekeyed_copy(2, -7);
    cr_assert_eq(st_table_swap_chunks(table, 1, &at, &fresh, NULL, true, &err), CM_OK, "%s",
                 err.msg);
    cr_assert_null(fresh);
    cr_assert_neq(table->version, version);
    cr_assert_eq(id_at(2, 0), -7);
    cr_assert_eq(append_id(-7), CM_RUNTIME, "the new key is in the index");
    cr_assert_eq(append_id(2 * CM_BATCH_CAP), CM_OK, "the old key is free: %s", err.msg);
}

Test(st_table, delete_in_place_leaves_short_chunks)
{
    int64_t n = 4 * (int64_t)CM_BATCH_CAP + 1;
    append_rows(0, n);
    add_primary_key();
    uint64_t version = table->version;
    delete_gone();
    cr_assert(table->is_ragged);
    cr_assert_eq(table->n_chunks, 4, "the chunk left empty is gone");
    cr_assert(table->stats_stale);
    cr_assert_neq(table->version, version);
    check_ids(table, n, true);
    /* appends go on at the tail; the indexes, cold since, are renumbered first */
    append_rows(n, n + CM_BATCH_CAP + 1);
    check_ids(table, n + CM_BATCH_CAP + 1, true);
    cr_assert_eq(append_id(2 * CM_BATCH_CAP), CM_OK, "a deleted key is free again");
    cr_assert_eq(append_id(0), CM_RUNTIME, "a key still there is not: %s", err.msg);
    cr_assert_eq(append_id(2 * CM_BATCH_CAP), CM_RUNTIME);
    st_table_truncate(table, table->n_rows - 1);
    check_ids(table, n + CM_BATCH_CAP + 1, true);
    st_table_truncate(table, 1);
    check_ids(table, 1, true);
    cr_assert(!table->is_ragged);
}

Test(st_table, delete_in_place_of_every_row)
{
    int64_t n = 2 * (int64_t)CM_BATCH_CAP + 1;
    append_rows(0, n);
    int at[3] = {0, 1, 2};
    StChunk *none[3] = {NULL, NULL, NULL};
    cr_assert_eq(st_table_swap_chunks(table, 3, at, none, NULL, false, &err), CM_OK);
    cr_assert_eq(table->n_rows, 0);
    cr_assert_eq(table->n_chunks, 0);
    cr_assert(!table->stats_stale, "no row left: the statistics are exact again");
    append_rows(0, n);
    check_rows(n);
}

Test(st_table, restore_undoes_delete_in_place)
{
    int64_t n = 4 * (int64_t)CM_BATCH_CAP + 1;
    append_rows(0, n);
    add_primary_key();
    uint64_t version = table->version;
    cr_assert_eq(st_table_mark(table, &err), CM_OK);
    append_rows(n, n + 2); /* into the tail, indexed, before the rows move */
    delete_gone();
    append_rows(n + 2, n + 2 * CM_BATCH_CAP);
    check_ids(table, n + 2 * CM_BATCH_CAP, true);
    /* the committed rows, as another connection reads them meanwhile */
    StTable *seen = st_table_snapshot(table, &err);
    cr_assert_not_null(seen);
    check_ids(seen, n, false);
    st_table_free(seen);
    st_table_restore(table);
    cr_assert_eq(table->version, version);
    check_rows(n);
    cr_assert_eq(append_id(2 * CM_BATCH_CAP), CM_RUNTIME, "the index holds the rows back: %s",
                 err.msg);
    cr_assert_eq(append_id(n), CM_OK, "and no row appended in the transaction: %s", err.msg);
}

Test(st_table, commit_keeps_delete_in_place)
{
    int64_t n = 4 * (int64_t)CM_BATCH_CAP + 1;
    append_rows(0, n);
    cr_assert_eq(st_table_mark(table, &err), CM_OK);
    delete_gone();
    st_table_unmark(table); /* frees the chunks taken out */
    check_ids(table, n, true);
    delete_gone(); /* nothing left to take out */
    check_ids(table, n, true);
}

/* ---- indexes patched where chunks are replaced ------------------------------------------ */

#include "storage/index.h"

/* A copy of chunk ci (st_table_chunk_from) of the rows keep[i] picks, with
 * id new_id[i] where it is >= 0; NULL when none is kept. */
static StChunk *patched_copy(int ci, const bool *keep, const int64_t *new_id)
{
    const CmBatch *b = chunk_of(table, ci);
    int n = table->chunks[ci]->n_rows;
    CmVec ids;
    cr_assert_eq(cm_vec_init(&ids, types[0], &err), CM_OK);
    uint32_t sel[CM_BATCH_CAP];
    int k = 0;
    for (int i = 0; i < n; i++) {
        int64_t id = ((const int64_t *)b->cols[0].data)[i];
        ((int64_t *)ids.data)[i] = new_id[i] >= 0 ? new_id[i] : id;
        if (keep[i]) {
            sel[k++] = (uint32_t)i;
        }
    }
    StChunk *c = NULL;
    if (k > 0) {
        CmVec cols[3] = {ids, b->cols[1], b->cols[2]};
        CmBatch rows = *b;
        rows.cols = cols;
        rows.n_rows = k;
        rows.sel = k < n ? sel : NULL;
        c = st_table_chunk_from(table, &rows, table->chunks[ci]->sealed || k < n, &err);
        cr_assert_not_null(c, "%s", err.msg);
    }
    cm_vec_fini(&ids);
    return c;
}

/* Every row's id, and its (name, id), found by the indexes at its own row;
 * each id of `gone` found nowhere.  The indexes are made current first (a
 * DELETE leaves them cold, its renumbering pending). */
static void check_indexes(const int64_t *gone, int n_gone)
{
    cr_assert_eq(st_table_reserve(table, 0, &err), CM_OK, "%s", err.msg);
    cr_assert(!table->is_index_cold);
    CmVec key[2];
    cr_assert_eq(cm_vec_init(&key[0], types[1], &err), CM_OK);
    cr_assert_eq(cm_vec_init(&key[1], types[0], &err), CM_OK);
    int64_t r = 0, found[2];
    for (int ci = 0; ci < table->n_chunks; ci++) {
        const CmBatch *b = chunk_of(table, ci);
        for (int i = 0; i < table->chunks[ci]->n_rows; i++, r++) {
            ((int64_t *)key[1].data)[0] = ((const int64_t *)b->cols[0].data)[i];
            ((CmStr *)key[0].data)[0] = ((const CmStr *)b->cols[1].data)[i];
            cr_assert_eq(st_index_lookup(table->indexes[0], table, &key[1], 0, found, 2), 1,
                         "row %lld's id", (long long)r);
            cr_assert_eq(found[0], r);
            cr_assert_eq(st_index_lookup(table->indexes[1], table, key, 0, found, 2), 1);
            cr_assert_eq(found[0], r, "row %lld's (name, id)", (long long)r);
        }
    }
    for (int g = 0; g < n_gone; g++) {
        ((int64_t *)key[1].data)[0] = gone[g];
        cr_assert_eq(st_index_lookup(table->indexes[0], table, &key[1], 0, found, 2), 0,
                     "id %lld is gone", (long long)gone[g]);
    }
    cm_vec_fini(&key[0]);
    cm_vec_fini(&key[1]);
}

/* Random DELETEs (rows taken out of chunks, chunks emptied) and UPDATEs of
 * the key (new ids, sometimes one that another row holds, which must fail
 * with nothing changed) through st_table_swap_chunks; after most of them
 * (the others leave a DELETE's renumbering pending for the next one to give
 * up, or an UPDATE to find the indexes cold), every row is found by both
 * indexes (one keyed, one reading rows) at its place, and the keys taken out
 * or changed are not. */
Test(st_table, patched_indexes_follow_deletes_and_key_updates)
{
    append_rows(0, 6 * (int64_t)CM_BATCH_CAP + 7);
    add_primary_key();
    int nkeys[2] = {1, 0};
    cr_assert_eq(st_table_add_index(table, "nx", ST_INDEX_UNIQUE, 2, nkeys, &err), CM_OK);
    srand(7);
    int64_t gone[4096], next_id = 1000000000;
    int n_gone = 0;
    for (int round = 0; round < 40 && table->n_chunks > 0; round++) {
        bool is_delete = rand() % 2 == 0;
        int at[3], n = 0;
        for (int ci = rand() % table->n_chunks; ci < table->n_chunks && n < 3;
             ci += 1 + rand() % 3) {
            at[n++] = ci;
        }
        StChunk *fresh[3];
        bool want_dup = !is_delete && rand() % 4 == 0;
        int gone_before = n_gone;
        int64_t taken = ((const int64_t *)chunk_of(table, 0)->cols[0].data)[0];
        for (int i = 0; i < n; i++) {
            bool keep[CM_BATCH_CAP];
            int64_t new_id[CM_BATCH_CAP];
            const CmBatch *b = chunk_of(table, at[i]);
            int rows = table->chunks[at[i]]->n_rows;
            bool all = rand() % 5 == 0;
            for (int j = 0; j < rows; j++) {
                int64_t id = ((const int64_t *)b->cols[0].data)[j];
                keep[j] = !is_delete || (!all && rand() % 3 != 0);
                new_id[j] = !is_delete && rand() % 3 == 0 ? next_id++ : -1;
                if (want_dup && i == n - 1 && j == rows - 1 && at[0] > 0) {
                    new_id[j] = taken; /* chunk 0's first row keeps its id */
                }
                if (n_gone < 4096 && (!keep[j] || (new_id[j] >= 0 && new_id[j] != taken))) {
                    gone[n_gone++] = id;
                }
            }
            fresh[i] = patched_copy(at[i], keep, new_id);
        }
        uint64_t version = table->version;
        int64_t n_rows = table->n_rows;
        CmStatus st = st_table_swap_chunks(table, n, at, fresh, NULL, !is_delete, &err);
        if (want_dup && at[0] > 0) {
            cr_assert_eq(st, CM_RUNTIME, "a duplicate id refused");
            cr_assert_eq(table->version, version);
            cr_assert_eq(table->n_rows, n_rows);
            for (int i = 0; i < n; i++) {
                st_table_chunk_discard(fresh[i]);
            }
            n_gone = gone_before; /* nothing changed: the ids noted are still there */
        } else {
            cr_assert_eq(st, CM_OK, "%s", err.msg);
        }
        cm_err_init(&err);
        if (rand() % 3 != 0) { /* else the next statement finds them cold */
            check_indexes(gone, n_gone);
        }
    }
    check_indexes(gone, n_gone);
    append_rows(2000000000, 2000000000 + 3 * (int64_t)CM_BATCH_CAP + 1);
    int at = table->n_chunks - 2;
    /* a key another row holds: refused, nothing changed */
    int at_dup = table->n_chunks - 3;
    StChunk *dup = rekeyed_copy(at_dup, ((const int64_t *)chunk_of(table, at)->cols[0].data)[0]);
    cr_assert_eq(st_table_swap_chunks(table, 1, &at_dup, &dup, NULL, true, &err), CM_RUNTIME);
    st_table_chunk_discard(dup);
    cm_err_init(&err);
    check_indexes(gone, n_gone);
    /* two DELETEs before the indexes are needed: the second gives up the first's
     * renumbering, and they are built from the rows */
    for (int round = 0; round < 2; round++) {
        bool keep[CM_BATCH_CAP];
        int64_t same[CM_BATCH_CAP];
        const CmBatch *b = chunk_of(table, at);
        for (int j = 0; j < table->chunks[at]->n_rows; j++) {
            keep[j] = j % 2 == 0;
            same[j] = -1;
            if (!keep[j] && n_gone < 4096) {
                gone[n_gone++] = ((const int64_t *)b->cols[0].data)[j];
            }
        }
        StChunk *fresh = patched_copy(at, keep, same);
        cr_assert_eq(st_table_swap_chunks(table, 1, &at, &fresh, NULL, false, &err), CM_OK);
        cr_assert(table->is_index_cold);
    }
    check_indexes(gone, n_gone);
    /* the indexes keep working for appends */
    cr_assert_eq(append_id(next_id + 1), CM_OK, "%s", err.msg);
    cr_assert_eq(append_id(next_id + 1), CM_RUNTIME);
}
