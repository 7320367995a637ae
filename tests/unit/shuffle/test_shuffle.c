/*
 * test_shuffle.c - unit tests for shuffle/shuffle.c: 8 map tasks write
 * concurrently (on a common/thread.h pool) into 16 partitions, then readers
 * check that every row comes back exactly once with its content, that the
 * per-partition and per-(map, partition) statistics add up, that map-range
 * reads return only those maps, and that only a map's committed attempt is
 * visible (aborted, uncommitted and superseded attempts are not).
 *
 * Rows: (id BIGINT, payload VARCHAR, opt INTEGER).  id = map * ID_STRIDE + j;
 * the partition is a hash of the id; payload is derived from the id (0..39
 * bytes, so inline and out-of-line); opt is NULL when id % 5 == 0.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <string.h>

#include "common/alloc.h"
#include "common/hash.h"
#include "common/thread.h"
#include "shuffle/block.h"
#include "shuffle/shuffle.h"

enum { N_MAPS = 8, N_PARTS = 16, ROWS_PER_MAP = 3001, ID_STRIDE = 100000, N_THREADS = 8 };

static CmType types[3];

static void setup(void)
{
    types[0] = cm_type_make(CM_T_INT64);
    types[1] = cm_type_varchar(-1, false);
    types[2] = cm_type_make(CM_T_INT32);
}

TestSuite(sh_shuffle, .init = setup);

static int part_of(int64_t id)
{
    return (int)((cm_hash_u64((uint64_t)id) >> 32) % N_PARTS);
}

static int payload_of(int64_t id, char *buf)
{
    int len = (int)(id % 40);
    for (int k = 0; k < len; k++) {
        buf[k] = (char)('a' + (id + k * 7) % 26);
    }
    return len;
}

static bool opt_is_null(int64_t id)
{
    return id % 5 == 0;
}

static int32_t opt_of(int64_t id)
{
    return (int32_t)(id % 1000) - 500;
}

/* Appends row `id` to b, its payload bytes in b's heap. */
static void add_row(CmBatch *b, int64_t id)
{
    char buf[48];
    int len = payload_of(id, buf);
    char *copy = cm_arena_strndup(&b->heap, buf, (size_t)len);
    uint32_t r = (uint32_t)b->n_rows;
    ((int64_t *)b->cols[0].data)[r] = id;
    ((CmStr *)b->cols[1].data)[r] = cm_str_make(copy, (uint32_t)len);
    if (opt_is_null(id)) {
        cm_vec_set_null(&b->cols[2], r);
    } else {
        cm_vec_set_valid(&b->cols[2], r);
        ((int32_t *)b->cols[2].data)[r] = opt_of(id);
    }
    b->n_rows++;
}

/* What the writers did, to check the store against. */
typedef struct Expect {
    int64_t rows[N_MAPS][N_PARTS];
    int64_t bytes[N_MAPS][N_PARTS]; /* stored bytes of the blocks pushed */
    int64_t blocks[N_MAPS];
} Expect;

typedef struct WriteJob {
    ShShuffle *sh;
    int attempt;
    int64_t first_j, n_rows; /* j range of every map */
    Expect *expect;
    atomic_int failures;
} WriteJob;

/* Pushes b into `part`, recording the encoded size it must be counted with. */
static CmStatus push(ShWriter *w, int map, int part, CmBatch *b, Expect *ex, CmErr *err)
{
    if (ex != NULL) {
        ShBlock *probe = sh_block_encode(b, err);
        if (probe == NULL) {
            return err->code;
        }
        ex->bytes[map][part] += probe->hdr.stored_bytes;
        ex->rows[map][part] += b->n_rows;
        ex->blocks[map]++;
        cm_free(probe);
    }
    CmStatus st = sh_writer_push(w, part, b, err);
    cm_batch_reset(b); /* the block must not depend on the batch's heap */
    return st;
}

/* Writes map `map`'s rows [first_j, first_j + n_rows) through buffers per
 * partition (pushed when full and at the end).  Commits unless `abort_it`. */
static CmStatus write_map(ShShuffle *sh, int map, int attempt, int64_t first_j, int64_t n_rows,
                          bool abort_it, Expect *ex, CmErr *err)
{
    ShWriter *w = sh_writer_open(sh, map, attempt, err);
    if (w == NULL) {
        return err->code;
    }
    CmBatch bufs[N_PARTS];
    for (int p = 0; p < N_PARTS; p++) {
        if (cm_batch_init(&bufs[p], 3, types, err) != CM_OK) {
            return err->code;
        }
    }
    for (int64_t j = first_j; j < first_j + n_rows && err->code == CM_OK; j++) {
        int64_t id = (int64_t)map * ID_STRIDE + j;
        int p = part_of(id);
        add_row(&bufs[p], id);
        if (bufs[p].n_rows == CM_BATCH_CAP) {
            push(w, map, p, &bufs[p], ex, err);
        }
    }
    for (int p = 0; p < N_PARTS && err->code == CM_OK; p++) {
        if (bufs[p].n_rows > 0) {
            push(w, map, p, &bufs[p], ex, err);
        }
    }
    for (int p = 0; p < N_PARTS; p++) {
        cm_batch_fini(&bufs[p]);
    }
    if (abort_it || err->code != CM_OK) {
        sh_writer_abort(w);
        return err->code;
    }
    return sh_writer_close(w, err);
}

static void write_task(void *arg, int task_idx, int worker_id)
{
    WriteJob *job = arg;
    CmErr err;
    cm_err_init(&err);
    if (write_map(job->sh, task_idx, job->attempt, job->first_j, job->n_rows, false, job->expect,
                  &err) != CM_OK) {
        atomic_fetch_add(&job->failures, 1);
    }
}

/* What readers saw. */
typedef struct Seen {
    atomic_uchar hits[N_MAPS * ROWS_PER_MAP];
    atomic_llong rows[N_MAPS][N_PARTS];
    atomic_llong id_sum;
    atomic_int bad_part;    /* row read from a partition it does not hash to */
    atomic_int bad_content; /* payload or opt wrong */
    atomic_int bad_id;      /* id out of the written range */
    atomic_int failures;
} Seen;

typedef struct ReadJob {
    ShShuffle *sh;
    int m0, m1;
    Seen *seen;
} ReadJob;

/* Reads partitions [p0, p1) of maps [m0, m1) into `seen`. */
static CmStatus read_parts(ShShuffle *sh, int p0, int p1, int m0, int m1, Seen *seen, CmErr *err)
{
    ShReader *r = sh_reader_open(sh, p0, p1, m0, m1, err);
    if (r == NULL) {
        return err->code;
    }
    CmBatch b;
    if (cm_batch_init(&b, 3, types, err) != CM_OK) {
        sh_reader_close(r);
        return err->code;
    }
    for (;;) {
        bool eof = false;
        if (sh_reader_next(r, &b, &eof, err) != CM_OK || eof) {
            break;
        }
        for (int i = 0; i < b.n_rows; i++) {
            uint32_t pos = cm_batch_pos(&b, i);
            int64_t id = ((int64_t *)b.cols[0].data)[pos];
            int map = (int)(id / ID_STRIDE);
            int64_t j = id % ID_STRIDE;
            if (id < 0 || map >= N_MAPS || j >= ROWS_PER_MAP) {
                atomic_fetch_add(&seen->bad_id, 1);
                continue;
            }
            int p = part_of(id);
            if (p < p0 || p >= p1 || map < m0 || map >= m1) {
                atomic_fetch_add(&seen->bad_part, 1);
            }
            char buf[48];
            int len = payload_of(id, buf);
            const CmStr *s = &((CmStr *)b.cols[1].data)[pos];
            bool ok = !cm_vec_is_null(&b.cols[1], pos) && s->len == (uint32_t)len &&
                      memcmp(cm_str_data(s), buf, (size_t)len) == 0;
            ok = ok && cm_vec_is_null(&b.cols[2], pos) == opt_is_null(id);
            ok = ok && (opt_is_null(id) || ((int32_t *)b.cols[2].data)[pos] == opt_of(id));
            if (!ok) {
                atomic_fetch_add(&seen->bad_content, 1);
            }
            atomic_fetch_add(&seen->hits[map * ROWS_PER_MAP + j], 1);
            atomic_fetch_add(&seen->rows[map][p], 1);
            atomic_fetch_add(&seen->id_sum, id);
        }
    }
    cm_batch_fini(&b);
    sh_reader_close(r);
    return err->code;
}

static void read_task(void *arg, int task_idx, int worker_id)
{
    ReadJob *job = arg;
    CmErr err;
    cm_err_init(&err);
    if (read_parts(job->sh, task_idx, task_idx + 1, job->m0, job->m1, job->seen, &err) != CM_OK) {
        atomic_fetch_add(&job->seen->failures, 1);
    }
}

static Seen *seen_new(void)
{
    Seen *s = cm_calloc(1, sizeof(Seen));
    cr_assert_not_null(s);
    return s;
}

static ShShuffle *new_shuffle(void)
{
    CmErr err;
    cm_err_init(&err);
    ShShuffle *sh = sh_shuffle_new(NULL, N_MAPS, N_PARTS, 3, types, &err);
    cr_assert_not_null(sh, "%s", err.msg);
    return sh;
}

/* Runs all maps concurrently on `pool`, all rows of each map. */
static void write_all(CmPool *pool, ShShuffle *sh, Expect *ex)
{
    WriteJob job = {.sh = sh, .attempt = 0, .first_j = 0, .n_rows = ROWS_PER_MAP, .expect = ex};
    atomic_init(&job.failures, 0);
    cm_pool_run(pool, N_MAPS, write_task, &job);
    cr_assert_eq(atomic_load(&job.failures), 0);
}

static void read_all(CmPool *pool, ShShuffle *sh, int m0, int m1, Seen *seen)
{
    ReadJob job = {.sh = sh, .m0 = m0, .m1 = m1, .seen = seen};
    cm_pool_run(pool, N_PARTS, read_task, &job);
    cr_assert_eq(atomic_load(&seen->failures), 0);
    cr_expect_eq(atomic_load(&seen->bad_id), 0);
    cr_expect_eq(atomic_load(&seen->bad_part), 0);
    cr_expect_eq(atomic_load(&seen->bad_content), 0);
}

static int64_t expected_id_sum(int m0, int m1)
{
    int64_t sum = 0;
    for (int m = m0; m < m1; m++) {
        for (int64_t j = 0; j < ROWS_PER_MAP; j++) {
            sum += (int64_t)m * ID_STRIDE + j;
        }
    }
    return sum;
}

Test(sh_shuffle, shape)
{
    ShShuffle *sh = new_shuffle();
    cr_expect_eq(sh_shuffle_n_maps(sh), N_MAPS);
    cr_expect_eq(sh_shuffle_n_parts(sh), N_PARTS);
    ShShuffleStats st;
    sh_shuffle_stats(sh, &st);
    cr_expect_eq(st.rows, 0);
    cr_expect_eq(st.blocks, 0);
    cr_expect_eq(st.bytes_pushed, 0);
    for (int p = 0; p < N_PARTS; p++) {
        cr_expect_eq(sh_shuffle_part_rows(sh, p), 0);
    }
    sh_shuffle_free(sh);
}

Test(sh_shuffle, concurrent_writers_every_row_read_once, .timeout = 30)
{
    CmPool *pool = cm_pool_new(N_THREADS);
    cr_assert_not_null(pool);
    ShShuffle *sh = new_shuffle();
    Expect *ex = cm_calloc(1, sizeof(Expect));
    write_all(pool, sh, ex);

    Seen *seen = seen_new();
    read_all(pool, sh, 0, N_MAPS, seen);
    for (int k = 0; k < N_MAPS * ROWS_PER_MAP; k++) {
        cr_assert_eq(atomic_load(&seen->hits[k]), 1, "row map %d j %d read %d times",
                     k / ROWS_PER_MAP, k % ROWS_PER_MAP, atomic_load(&seen->hits[k]));
    }
    cr_expect_eq(atomic_load(&seen->id_sum), expected_id_sum(0, N_MAPS));

    /* Rows per (map, partition) as read equal what was pushed. */
    for (int m = 0; m < N_MAPS; m++) {
        for (int p = 0; p < N_PARTS; p++) {
            cr_assert_eq(atomic_load(&seen->rows[m][p]), ex->rows[m][p], "map %d part %d", m, p);
        }
    }
    sh_shuffle_free(sh);
    cm_free(seen);
    cm_free(ex);
    cm_pool_free(pool);
}

Test(sh_shuffle, statistics_add_up, .timeout = 30)
{
    CmPool *pool = cm_pool_new(N_THREADS);
    ShShuffle *sh = new_shuffle();
    Expect *ex = cm_calloc(1, sizeof(Expect));
    write_all(pool, sh, ex);

    int64_t total_rows = 0, total_bytes = 0, total_blocks = 0;
    for (int p = 0; p < N_PARTS; p++) {
        int64_t rows = 0, bytes = 0;
        for (int m = 0; m < N_MAPS; m++) {
            rows += ex->rows[m][p];
            bytes += ex->bytes[m][p];
            cr_expect_eq(sh_shuffle_map_part_bytes(sh, m, p), ex->bytes[m][p], "map %d part %d", m,
                         p);
        }
        cr_expect_gt(rows, 0, "16 partitions of 24000 hashed ids: none is empty");
        cr_expect_eq(sh_shuffle_part_rows(sh, p), rows, "part %d", p);
        cr_expect_eq(sh_shuffle_part_bytes(sh, p), bytes, "part %d", p);
        total_rows += rows;
        total_bytes += bytes;
    }
    for (int m = 0; m < N_MAPS; m++) {
        total_blocks += ex->blocks[m];
    }
    cr_expect_eq(total_rows, (int64_t)N_MAPS * ROWS_PER_MAP);
    ShShuffleStats st;
    sh_shuffle_stats(sh, &st);
    cr_expect_eq(st.rows, total_rows);
    cr_expect_eq(st.bytes_pushed, total_bytes);
    cr_expect_eq(st.blocks, total_blocks);
    sh_shuffle_free(sh);
    cm_free(ex);
    cm_pool_free(pool);
}

Test(sh_shuffle, map_range_reads_only_those_maps, .timeout = 30)
{
    CmPool *pool = cm_pool_new(N_THREADS);
    ShShuffle *sh = new_shuffle();
    write_all(pool, sh, NULL);
    static const int ranges[][2] = {{2, 5}, {0, 1}, {7, 8}, {3, 3}};
    for (int k = 0; k < 4; k++) {
        int m0 = ranges[k][0], m1 = ranges[k][1];
        Seen *seen = seen_new();
        read_all(pool, sh, m0, m1, seen); /* bad_part also flags maps outside */
        for (int m = 0; m < N_MAPS; m++) {
            for (int j = 0; j < ROWS_PER_MAP; j++) {
                int expect = m >= m0 && m < m1;
                cr_assert_eq(atomic_load(&seen->hits[m * ROWS_PER_MAP + j]), expect,
                             "range [%d,%d) map %d row %d", m0, m1, m, j);
            }
        }
        cr_expect_eq(atomic_load(&seen->id_sum), expected_id_sum(m0, m1));
        cm_free(seen);
    }
    sh_shuffle_free(sh);
    cm_pool_free(pool);
}

Test(sh_shuffle, one_reader_over_a_partition_range)
{
    ShShuffle *sh = new_shuffle();
    CmErr err;
    cm_err_init(&err);
    for (int m = 0; m < N_MAPS; m++) {
        cr_assert_eq(write_map(sh, m, 0, 0, 200, false, NULL, &err), CM_OK, "%s", err.msg);
    }
    Seen *seen = seen_new();
    cr_assert_eq(read_parts(sh, 4, 12, 0, N_MAPS, seen, &err), CM_OK);
    cr_expect_eq(atomic_load(&seen->bad_part), 0);
    cr_expect_eq(atomic_load(&seen->bad_content), 0);
    for (int m = 0; m < N_MAPS; m++) {
        for (int j = 0; j < 200; j++) {
            int p = part_of((int64_t)m * ID_STRIDE + j);
            cr_assert_eq(atomic_load(&seen->hits[m * ROWS_PER_MAP + j]), p >= 4 && p < 12);
        }
    }
    cm_free(seen);
    /* An empty partition range is at its end at once. */
    ShReader *r = sh_reader_open(sh, 3, 3, 0, N_MAPS, &err);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 3, types, &err), CM_OK);
    bool eof = false;
    cr_expect_eq(sh_reader_next(r, &b, &eof, &err), CM_OK);
    cr_expect(eof);
    cr_expect_eq(b.n_rows, 0);
    sh_reader_close(r);
    cm_batch_fini(&b);
    sh_shuffle_free(sh);
}

Test(sh_shuffle, reading_twice_gives_the_same_rows)
{
    ShShuffle *sh = new_shuffle();
    CmErr err;
    cm_err_init(&err);
    cr_assert_eq(write_map(sh, 0, 0, 0, 500, false, NULL, &err), CM_OK);
    for (int round = 0; round < 2; round++) {
        Seen *seen = seen_new();
        cr_assert_eq(read_parts(sh, 0, N_PARTS, 0, N_MAPS, seen, &err), CM_OK);
        cr_expect_eq(atomic_load(&seen->id_sum), 500LL * 499 / 2);
        cr_expect_eq(atomic_load(&seen->bad_content), 0);
        cm_free(seen);
    }
    sh_shuffle_free(sh);
}

Test(sh_shuffle, uncommitted_writer_is_invisible)
{
    ShShuffle *sh = new_shuffle();
    CmErr err;
    cm_err_init(&err);
    ShWriter *w = sh_writer_open(sh, 2, 0, &err);
    cr_assert_not_null(w);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 3, types, &err), CM_OK);
    add_row(&b, 2 * ID_STRIDE + 1);
    cr_assert_eq(sh_writer_push(w, part_of(2 * ID_STRIDE + 1), &b, &err), CM_OK);
    cm_batch_reset(&b);

    Seen *seen = seen_new();
    cr_assert_eq(read_parts(sh, 0, N_PARTS, 0, N_MAPS, seen, &err), CM_OK);
    cr_expect_eq(atomic_load(&seen->id_sum), 0, "blocks of an open writer were read");
    ShShuffleStats st;
    sh_shuffle_stats(sh, &st);
    cr_expect_eq(st.rows, 0);
    cr_expect_eq(st.blocks, 0);
    cm_free(seen);

    cr_assert_eq(sh_writer_close(w, &err), CM_OK);
    seen = seen_new();
    cr_assert_eq(read_parts(sh, 0, N_PARTS, 0, N_MAPS, seen, &err), CM_OK);
    cr_expect_eq(atomic_load(&seen->id_sum), 2 * ID_STRIDE + 1);
    sh_shuffle_stats(sh, &st);
    cr_expect_eq(st.rows, 1);
    cr_expect_eq(st.blocks, 1);
    cm_free(seen);
    cm_batch_fini(&b);
    sh_shuffle_free(sh);
}

Test(sh_shuffle, empty_push_makes_no_block)
{
    ShShuffle *sh = new_shuffle();
    CmErr err;
    cm_err_init(&err);
    ShWriter *w = sh_writer_open(sh, 0, 0, &err);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 3, types, &err), CM_OK);
    cr_assert_eq(sh_writer_push(w, 0, &b, &err), CM_OK);
    cr_assert_eq(sh_writer_close(w, &err), CM_OK);
    ShShuffleStats st;
    sh_shuffle_stats(sh, &st);
    cr_expect_eq(st.blocks, 0);
    cr_expect_eq(sh_shuffle_part_bytes(sh, 0), 0);
    cm_batch_fini(&b);
    sh_shuffle_free(sh);
}

/* Map 3 attempt 0 writes rows j in [0, 300) and aborts; attempt 1 writes
 * j in [1000, 1100) and commits.  Other maps write j in [0, 50). */
Test(sh_shuffle, aborted_attempt_is_invisible, .timeout = 30)
{
    ShShuffle *sh = new_shuffle();
    CmErr err;
    cm_err_init(&err);
    Expect *ex = cm_calloc(1, sizeof(Expect));
    for (int m = 0; m < N_MAPS; m++) {
        if (m != 3) {
            cr_assert_eq(write_map(sh, m, 0, 0, 50, false, ex, &err), CM_OK);
        }
    }
    cr_assert_eq(write_map(sh, 3, 0, 0, 300, true, NULL, &err), CM_OK);
    cr_assert_eq(write_map(sh, 3, 1, 1000, 100, false, ex, &err), CM_OK);

    Seen *seen = seen_new();
    cr_assert_eq(read_parts(sh, 0, N_PARTS, 0, N_MAPS, seen, &err), CM_OK);
    for (int j = 0; j < ROWS_PER_MAP; j++) {
        int expect = j >= 1000 && j < 1100;
        cr_assert_eq(atomic_load(&seen->hits[3 * ROWS_PER_MAP + j]), expect, "map 3 row %d", j);
    }
    int64_t expect_sum = 0;
    for (int m = 0; m < N_MAPS; m++) {
        for (int j = m == 3 ? 1000 : 0; j < (m == 3 ? 1100 : 50); j++) {
            expect_sum += (int64_t)m * ID_STRIDE + j;
        }
    }
    cr_expect_eq(atomic_load(&seen->id_sum), expect_sum);

    ShShuffleStats st;
    sh_shuffle_stats(sh, &st);
    cr_expect_eq(st.rows, 7 * 50 + 100);
    int64_t blocks = 0;
    for (int m = 0; m < N_MAPS; m++) {
        blocks += ex->blocks[m];
        for (int p = 0; p < N_PARTS; p++) {
            cr_expect_eq(sh_shuffle_map_part_bytes(sh, m, p), ex->bytes[m][p]);
        }
    }
    cr_expect_eq(st.blocks, blocks);
    for (int p = 0; p < N_PARTS; p++) {
        int64_t rows = 0;
        for (int m = 0; m < N_MAPS; m++) {
            rows += ex->rows[m][p];
        }
        cr_expect_eq(sh_shuffle_part_rows(sh, p), rows);
    }
    cm_free(seen);
    cm_free(ex);
    sh_shuffle_free(sh);
}

/* A first attempt that died without closing or aborting (its blocks stay in
 * the lists) and a retry that commits: only the retry is read. */
Test(sh_shuffle, abandoned_attempt_then_retry)
{
    ShShuffle *sh = new_shuffle();
    CmErr err;
    cm_err_init(&err);
    ShWriter *dead = sh_writer_open(sh, 5, 0, &err);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 3, types, &err), CM_OK);
    for (int j = 0; j < 40; j++) {
        add_row(&b, 5 * ID_STRIDE + j);
        if (b.n_rows == CM_BATCH_CAP) {
            cr_assert_eq(sh_writer_push(dead, 0, &b, &err), CM_OK);
            cm_batch_reset(&b);
        }
    }
    if (b.n_rows > 0) {
        cr_assert_eq(sh_writer_push(dead, 0, &b, &err), CM_OK);
    }
    cm_batch_fini(&b);
    cr_assert_eq(write_map(sh, 5, 1, 0, 40, false, NULL, &err), CM_OK);
    Seen *seen = seen_new();
    cr_assert_eq(read_parts(sh, 0, N_PARTS, 0, N_MAPS, seen, &err), CM_OK);
    for (int j = 0; j < 40; j++) {
        cr_assert_eq(atomic_load(&seen->hits[5 * ROWS_PER_MAP + j]), 1, "row %d", j);
    }
    /* The dead attempt pushed everything to partition 0; the retry hashed. */
    cr_expect_eq(atomic_load(&seen->bad_part), 0);
    ShShuffleStats st;
    sh_shuffle_stats(sh, &st);
    cr_expect_eq(st.rows, 40);
    sh_writer_abort(dead);
    cm_free(seen);
    sh_shuffle_free(sh);
}

/* Regression: when two attempts of one map both commit (a speculative re-run
 * that finishes after the first), readers see only the last committed attempt,
 * and sh_writer_close used to add each attempt's rows and bytes to the
 * partition counters and the block count again, so part_rows/part_bytes/stats
 * double-counted while map_part_bytes (assigned, not added) did not.  A commit
 * now replaces the previous committed attempt's numbers. */
Test(sh_shuffle, second_committed_attempt_does_not_double_count)
{
    ShShuffle *sh = new_shuffle();
    CmErr err;
    cm_err_init(&err);
    Expect *first = cm_calloc(1, sizeof(Expect));
    Expect *second = cm_calloc(1, sizeof(Expect));
    cr_assert_eq(write_map(sh, 1, 0, 0, 100, false, first, &err), CM_OK);
    cr_assert_eq(write_map(sh, 1, 1, 0, 100, false, second, &err), CM_OK);

    Seen *seen = seen_new();
    cr_assert_eq(read_parts(sh, 0, N_PARTS, 0, N_MAPS, seen, &err), CM_OK);
    for (int j = 0; j < 100; j++) {
        cr_assert_eq(atomic_load(&seen->hits[ROWS_PER_MAP + j]), 1, "row %d", j);
    }
    ShShuffleStats st;
    sh_shuffle_stats(sh, &st);
    cr_expect_eq(st.rows, 100);
    cr_expect_eq(st.blocks, second->blocks[1]);
    for (int p = 0; p < N_PARTS; p++) {
        cr_expect_eq(sh_shuffle_part_rows(sh, p), atomic_load(&seen->rows[1][p]), "part %d", p);
        cr_expect_eq(sh_shuffle_part_bytes(sh, p), sh_shuffle_map_part_bytes(sh, 1, p), "part %d",
                     p);
    }
    cm_free(seen);
    cm_free(first);
    cm_free(second);
    sh_shuffle_free(sh);
}

/* Readers of a committed map while other maps are still pushing into the same
 * partitions: each read sees exactly the committed map's rows.  (Readers take
 * a snapshot of each partition under the store lock and check the committed
 * attempts atomically, so this is race-free under TSan too.) */
typedef struct MixedJob {
    ShShuffle *sh;
    atomic_int bad_reads;
    atomic_int failures;
} MixedJob;

static void mixed_task(void *arg, int task_idx, int worker_id)
{
    MixedJob *job = arg;
    CmErr err;
    cm_err_init(&err);
    if (task_idx < 3) {
        /* Writers of maps 1..3. */
        if (write_map(job->sh, 1 + task_idx, 0, 0, ROWS_PER_MAP, false, NULL, &err) != CM_OK) {
            atomic_fetch_add(&job->failures, 1);
        }
        return;
    }
    for (int rep = 0; rep < 20; rep++) {
        Seen *seen = cm_calloc(1, sizeof(Seen));
        if (seen == NULL || read_parts(job->sh, 0, N_PARTS, 0, 1, seen, &err) != CM_OK) {
            atomic_fetch_add(&job->failures, 1);
            cm_free(seen);
            return;
        }
        if (atomic_load(&seen->id_sum) != expected_id_sum(0, 1) ||
            atomic_load(&seen->bad_content) != 0 || atomic_load(&seen->bad_part) != 0) {
            atomic_fetch_add(&job->bad_reads, 1);
        }
        cm_free(seen);
    }
}

Test(sh_shuffle, reads_of_committed_maps_while_others_write, .timeout = 30)
{
    CmPool *pool = cm_pool_new(6);
    ShShuffle *sh = new_shuffle();
    CmErr err;
    cm_err_init(&err);
    cr_assert_eq(write_map(sh, 0, 0, 0, ROWS_PER_MAP, false, NULL, &err), CM_OK);
    MixedJob job = {.sh = sh};
    atomic_init(&job.bad_reads, 0);
    atomic_init(&job.failures, 0);
    cm_pool_run(pool, 6, mixed_task, &job);
    cr_expect_eq(atomic_load(&job.failures), 0);
    cr_expect_eq(atomic_load(&job.bad_reads), 0);
    /* Afterwards everything is there. */
    Seen *seen = seen_new();
    read_all(pool, sh, 0, 4, seen);
    cr_expect_eq(atomic_load(&seen->id_sum), expected_id_sum(0, 4));
    cm_free(seen);
    sh_shuffle_free(sh);
    cm_pool_free(pool);
}

Test(sh_shuffle, types_are_copied)
{
    CmType local[3] = {types[0], types[1], types[2]};
    CmErr err;
    cm_err_init(&err);
    ShShuffle *sh = sh_shuffle_new(NULL, 1, 1, 3, local, &err);
    cr_assert_not_null(sh);
    local[0] = cm_type_make(CM_T_BOOL);
    local[1] = cm_type_make(CM_T_BOOL);
    ShWriter *w = sh_writer_open(sh, 0, 0, &err);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 3, types, &err), CM_OK);
    for (int64_t id = 0; id < 30; id++) {
        add_row(&b, id);
        if (b.n_rows == CM_BATCH_CAP || id == 29) {
            cr_assert_eq(sh_writer_push(w, 0, &b, &err), CM_OK);
            cm_batch_reset(&b);
        }
    }
    cr_assert_eq(sh_writer_close(w, &err), CM_OK);
    ShReader *r = sh_reader_open(sh, 0, 1, 0, 1, &err);
    int64_t sum = 0;
    bool eof = false;
    while (sh_reader_next(r, &b, &eof, &err) == CM_OK && !eof) {
        for (int i = 0; i < b.n_rows; i++) {
            sum += ((int64_t *)b.cols[0].data)[i];
        }
    }
    cr_expect_eq(err.code, CM_OK);
    cr_expect_eq(sum, 30 * 29 / 2);
    sh_reader_close(r);
    cm_batch_fini(&b);
    sh_shuffle_free(sh);
}
