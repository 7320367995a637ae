/*
 * test_store.c - unit tests for the shuffle store under pressure: budgets of
 * a few KB with many concurrent pushers (common/thread.h pool), tiny split
 * thresholds, zstd on disk or in memory, sort on read for every map range,
 * concurrent skew readers of one partition, injected corruption and deleted
 * files reported as lost maps and repaired by re-run attempts, failing disks,
 * and the files being removed.  Every row written is checked to be read
 * exactly once with its content, by a hit count per row and a sum of content
 * hashes.  Every threaded test has a timeout, which is also the deadlock check.
 *
 * Rows: (id BIGINT, s VARCHAR, d DOUBLE, n INTEGER); id = map * STRIDE + j,
 * the partition is a hash of the id, the rest derives from the id (s is 0..39
 * bytes, n is NULL when id % 7 == 3).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/hash.h"
#include "common/thread.h"
#include "shuffle/block.h"
#include "shuffle/shuffle.h"
#include "shuffle/shuffle_int.h"

enum { STRIDE = 1000000, MAX_MAPS = 32, MAX_ROWS = 4000 };

static CmType types[4];

static void setup(void)
{
    types[0] = cm_type_make(CM_T_INT64);
    types[1] = cm_type_varchar(-1, false);
    types[2] = cm_type_make(CM_T_DOUBLE);
    types[3] = cm_type_make(CM_T_INT32);
}

TestSuite(sh_store, .init = setup);

/* Criterion's runner (the parent process) leaks a few bytes of its own with
 * --jobs 2 (see Snaipe/Criterion#515), and LeakSanitizer would fail the whole
 * binary for it in -DSLUICE_SANITIZE=ON builds.  Suppressed in the runner
 * only: tests run in child processes (BXFI_MAP set), where every leak is
 * still reported. */
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void);
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void)
{
    return getenv("BXFI_MAP") == NULL ? "leak:libcriterion.so\n" : "";
}

/* ---- rows --------------------------------------------------------------------------- */

static int text_of(int64_t id, char *buf)
{
    int len = (int)(id * 7 % 40);
    for (int k = 0; k < len; k++) {
        buf[k] = (char)('a' + (id / 3 + k * 5) % 26);
    }
    return len;
}

static bool n_null(int64_t id)
{
    return id % 7 == 3;
}

/* The hash of a row's content, as the reader must see it. */
static uint64_t row_hash(int64_t id, const char *s, uint32_t len, double d, bool null, int32_t n)
{
    uint64_t h = cm_hash_u64((uint64_t)id);
    h = cm_hash_combine(h, XXH3_64bits(s, len));
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    h = cm_hash_combine(h, bits);
    return cm_hash_combine(h, null ? 0x77 : (uint64_t)(uint32_t)n);
}

static uint64_t expected_hash(int64_t id)
{
    char buf[48];
    int len = text_of(id, buf);
    return row_hash(id, buf, (uint32_t)len, (double)id * 0.5, n_null(id), (int32_t)(id % 1000));
}

static void add_row(CmBatch *b, int64_t id)
{
    char buf[48];
    int len = text_of(id, buf);
    uint32_t r = (uint32_t)b->n_rows;
    ((int64_t *)b->cols[0].data)[r] = id;
    ((CmStr *)b->cols[1].data)[r] =
        cm_str_make(cm_arena_strndup(&b->heap, buf, (size_t)len), (uint32_t)len);
    ((double *)b->cols[2].data)[r] = (double)id * 0.5;
    if (n_null(id)) {
        cm_vec_set_null(&b->cols[3], r);
    } else {
        cm_vec_set_valid(&b->cols[3], r);
        ((int32_t *)b->cols[3].data)[r] = (int32_t)(id % 1000);
    }
    b->n_rows++;
}

/* ---- a run: maps written, reads checked ------------------------------------------------ */

typedef struct Run {
    ShStore *st;
    ShShuffle *sh;
    int n_maps, n_parts, rows; /* rows per map */
    int push_rows;             /* rows per pushed block */
    atomic_int failures;       /* writers or readers that failed */
    atomic_int io_failures;    /* of which with CM_IO */
    /* what readers saw */
    atomic_uchar hits[MAX_MAPS * MAX_ROWS];
    atomic_ullong hash_sum; /* sum of content hashes of rows read */
    atomic_llong n_read;
    atomic_int bad;           /* wrong partition, map range or content */
    atomic_flag has_msg;      /* msg is taken */
    char msg[CM_ERR_MSG_CAP]; /* the first failure's message */
    int m0, m1;               /* the map range readers use */
} Run;

static int part_of(const Run *run, int64_t id)
{
    return (int)((cm_hash_u64((uint64_t)id) >> 32) % (uint64_t)run->n_parts);
}

static ShStore *store_new(int64_t limit, int64_t split, int codec, bool in_memory)
{
    ShStoreOptions o;
    sh_store_options_init(&o, NULL);
    o.memory_limit = limit;
    o.split_threshold = split;
    o.codec = codec;
    o.compress_in_memory = in_memory;
    CmErr err;
    cm_err_init(&err);
    ShStore *st = sh_store_new_opts(&o, &err);
    cr_assert_not_null(st, "%s", err.msg);
    return st;
}

static Run *run_new(ShStore *st, int n_maps, int n_parts, int rows)
{
    cr_assert(n_maps <= MAX_MAPS && rows <= MAX_ROWS);
    Run *run = cm_calloc(1, sizeof *run);
    cr_assert_not_null(run);
    CmErr err;
    cm_err_init(&err);
    run->st = st;
    run->sh = sh_shuffle_new(st, n_maps, n_parts, 4, types, &err);
    cr_assert_not_null(run->sh, "%s", err.msg);
    run->n_maps = n_maps;
    run->n_parts = n_parts;
    run->rows = rows;
    run->push_rows = CM_BATCH_CAP < 37 ? CM_BATCH_CAP : 37;
    run->m1 = n_maps;
    return run;
}

static void run_free(Run *run)
{
    sh_shuffle_free(run->sh);
    sh_store_free(run->st);
    cm_free(run);
}

static void reset_seen(Run *run)
{
    for (int k = 0; k < MAX_MAPS * MAX_ROWS; k++) {
        atomic_store(&run->hits[k], 0);
    }
    atomic_store(&run->hash_sum, 0);
    atomic_store(&run->n_read, 0);
    atomic_store(&run->bad, 0);
    atomic_store(&run->failures, 0);
    atomic_store(&run->io_failures, 0);
    atomic_flag_clear(&run->has_msg);
    run->msg[0] = '\0';
}

/* Writes map `map` (attempt) through per-partition buffers; commits. */
static CmStatus write_map(Run *run, int map, int attempt, CmErr *err)
{
    ShWriter *w = sh_writer_open(run->sh, map, attempt, err);
    if (w == NULL) {
        return err->code;
    }
    CmBatch *bufs = cm_calloc((size_t)run->n_parts, sizeof(CmBatch));
    for (int p = 0; p < run->n_parts; p++) {
        cm_batch_init(&bufs[p], 4, types, err);
    }
    for (int j = 0; j < run->rows && err->code == CM_OK; j++) {
        int64_t id = (int64_t)map * STRIDE + j;
        CmBatch *b = &bufs[part_of(run, id)];
        add_row(b, id);
        if (b->n_rows == run->push_rows) {
            sh_writer_push(w, part_of(run, id), b, err);
            cm_batch_reset(b);
        }
    }
    for (int p = 0; p < run->n_parts && err->code == CM_OK; p++) {
        if (bufs[p].n_rows > 0) {
            sh_writer_push(w, p, &bufs[p], err);
        }
    }
    for (int p = 0; p < run->n_parts; p++) {
        cm_batch_fini(&bufs[p]);
    }
    cm_free(bufs);
    if (err->code != CM_OK) {
        sh_writer_abort(w);
        return err->code;
    }
    return sh_writer_close(w, err);
}

static void write_task(void *arg, int task_idx, int worker_id)
{
    Run *run = arg;
    CmErr err;
    cm_err_init(&err);
    if (write_map(run, task_idx, 0, &err) != CM_OK) {
        if (!atomic_flag_test_and_set(&run->has_msg)) {
            memcpy(run->msg, err.msg, sizeof run->msg);
        }
        atomic_fetch_add(&run->failures, 1);
        atomic_fetch_add(&run->io_failures, err.code == CM_IO);
    }
}

/* Reads partitions [p0, p1) of maps [m0, m1) into the run's counters. */
static CmStatus read_range(Run *run, int p0, int p1, int m0, int m1, CmErr *err)
{
    ShReader *r = sh_reader_open(run->sh, p0, p1, m0, m1, err);
    if (r == NULL) {
        return err->code;
    }
    CmBatch b;
    cm_batch_init(&b, 4, types, err);
    bool eof = false;
    while (sh_reader_next(r, &b, &eof, err) == CM_OK && !eof) {
        for (int i = 0; i < b.n_rows; i++) {
            uint32_t pos = cm_batch_pos(&b, i);
            int64_t id = ((int64_t *)b.cols[0].data)[pos];
            int map = (int)(id / STRIDE), j = (int)(id % STRIDE);
            if (id < 0 || map >= run->n_maps || j >= run->rows) {
                atomic_fetch_add(&run->bad, 1);
                continue;
            }
            int p = part_of(run, id);
            if (p < p0 || p >= p1 || map < m0 || map >= m1) {
                atomic_fetch_add(&run->bad, 1);
            }
            const CmStr *s = &((CmStr *)b.cols[1].data)[pos];
            bool null = cm_vec_is_null(&b.cols[3], pos);
            uint64_t h = row_hash(id, cm_str_data(s), s->len, ((double *)b.cols[2].data)[pos], null,
                                  null ? 0 : ((int32_t *)b.cols[3].data)[pos]);
            if (h != expected_hash(id)) {
                atomic_fetch_add(&run->bad, 1);
            }
            atomic_fetch_add(&run->hash_sum, h);
            atomic_fetch_add(&run->hits[map * MAX_ROWS + j], 1);
            atomic_fetch_add(&run->n_read, 1);
        }
    }
    cm_batch_fini(&b);
    sh_reader_close(r);
    return err->code;
}

static void read_task(void *arg, int task_idx, int worker_id)
{
    Run *run = arg;
    CmErr err;
    cm_err_init(&err);
    if (read_range(run, task_idx, task_idx + 1, run->m0, run->m1, &err) != CM_OK) {
        if (!atomic_flag_test_and_set(&run->has_msg)) {
            memcpy(run->msg, err.msg, sizeof run->msg);
        }
        atomic_fetch_add(&run->failures, 1);
        atomic_fetch_add(&run->io_failures, err.code == CM_IO);
    }
}

static void write_all(CmPool *pool, Run *run)
{
    cm_pool_run(pool, run->n_maps, write_task, run);
    cr_assert_eq(atomic_load(&run->failures), 0, "%s", run->msg);
}

/* Every row of maps [m0, m1) read exactly once with its content; nothing else. */
static void check_exactly_once(Run *run, int m0, int m1)
{
    uint64_t want = 0;
    int64_t n = 0, wrong = 0;
    int first = -1;
    cr_assert_eq(atomic_load(&run->bad), 0, "rows from the wrong place or with wrong content");
    for (int m = 0; m < run->n_maps; m++) {
        for (int j = 0; j < run->rows; j++) {
            int expect = m >= m0 && m < m1;
            if (atomic_load(&run->hits[m * MAX_ROWS + j]) != expect) {
                first = wrong++ == 0 ? m * MAX_ROWS + j : first;
            }
            if (expect) {
                want += expected_hash((int64_t)m * STRIDE + j);
                n++;
            }
        }
    }
    cr_assert_eq(wrong, 0, "%lld rows not read exactly once; first: map %d row %d read %d times",
                 (long long)wrong, first / MAX_ROWS, first % MAX_ROWS,
                 first >= 0 ? atomic_load(&run->hits[first]) : 0);
    cr_assert_eq(atomic_load(&run->n_read), n);
    cr_assert_eq(atomic_load(&run->hash_sum), want);
}

static void read_all_check(CmPool *pool, Run *run, int m0, int m1)
{
    reset_seen(run);
    run->m0 = m0;
    run->m1 = m1;
    cm_pool_run(pool, run->n_parts, read_task, run);
    cr_assert_eq(atomic_load(&run->failures), 0, "maps [%d, %d): %s", m0, m1, run->msg);
    check_exactly_once(run, m0, m1);
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        return -1;
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        n += e->d_name[0] != '.';
    }
    closedir(d);
    return n;
}

/* ---- flow control, push aggregation, split -------------------------------------------- */

Test(sh_store, data_that_fits_stays_in_memory, .timeout = 60)
{
    CmPool *pool = cm_pool_new(4);
    Run *run = run_new(store_new(64 << 20, 1 << 20, SH_CODEC_ZSTD, false), 8, 8, 1500);
    write_all(pool, run);
    read_all_check(pool, run, 0, run->n_maps);
    ShShuffleStats s;
    sh_shuffle_stats(run->sh, &s);
    cr_expect_eq(s.files, 0);
    cr_expect_eq(s.spilled_bytes, 0);
    cr_expect_eq(s.pauses, 0);
    cr_expect_str_eq(sh_store_directory(run->st), "", "no directory until something is flushed");
    run_free(run);
    cm_pool_free(pool);
}

/* 8 threads push 16 maps into 16 partitions with a 4 KB budget and 8 KB
 * splits: pushers pause and flush themselves; nothing is lost or doubled. */
static void tiny_budget(int codec, bool in_memory)
{
    CmPool *pool = cm_pool_new(8);
    Run *run = run_new(store_new(4096, 8192, codec, in_memory), 16, 16, 2000);
    write_all(pool, run);
    read_all_check(pool, run, 0, run->n_maps);
    ShShuffleStats s;
    sh_shuffle_stats(run->sh, &s);
    ShStoreStats ss;
    sh_store_stats(run->st, &ss);
    cr_expect_gt(s.pauses, 0, "a 4 KB budget must pause pushers");
    cr_expect_gt(s.spilled_bytes, 0);
    cr_expect_gt(s.splits, 16, "8 KB splits: partitions hold several");
    cr_expect_geq(s.files, s.splits);
    cr_expect_eq(s.rows, 16 * 2000);
    cr_expect_eq(s.sorted_on_read, 0, "partition reads do not sort");
    /* Over the pause mark, each of 8 pushers holds at most one more block. */
    cr_expect_leq(ss.peak_used, 4096 + 8 * 4096, "peak %lld", (long long)ss.peak_used);
    cr_expect_leq(ss.used, 4096, "what stays buffered is under the budget");
    if (codec == SH_CODEC_ZSTD && CM_BATCH_CAP >= 37) {
        /* (3-row blocks of CM_BATCH_CAP=3 builds are too small to shrink.) */
        cr_expect_lt(s.spilled_bytes, s.bytes_pushed, "zstd shrinks the files");
    }
    run_free(run);
    cm_pool_free(pool);
}

/* Blocks written out are kept, reserved, for the next pushes to encode into:
 * a second shuffle's pushes reuse the first one's, what is read back is still
 * every row once with its content, and the store's reservation is its
 * buffered blocks plus the kept ones.  Blocks of a few rows (the 3-row
 * build's) are not kept.  Whether the pushes of one shuffle meet a flush
 * depends on thread timing, so the flushes here are explicit. */
Test(sh_store, flushed_blocks_are_encoded_into_again, .timeout = 60)
{
    CmPool *pool = cm_pool_new(2);
    CmErr err;
    cm_err_init(&err);
    Run *run = run_new(store_new(1 << 20, 1 << 20, SH_CODEC_LZ4, false), 8, 4, 3000);
    run->push_rows = CM_BATCH_CAP < 200 ? CM_BATCH_CAP : 200; /* blocks of about 6 KB */
    write_all(pool, run);
    ShStore *st = run->st;
    cr_assert_eq(sh_shuffle_flush(run->sh, &err), CM_OK, "%s", err.msg);
    if (CM_BATCH_CAP < 200) {
        cr_expect_eq(st->spare_bytes, 0, "blocks of %d rows are too small to keep", CM_BATCH_CAP);
        read_all_check(pool, run, 0, run->n_maps);
        run_free(run);
        cm_pool_free(pool);
        return;
    }
    cr_assert_gt(st->spare_bytes, 0, "flushes keep blocks");
    /* a second shuffle of the same store encodes into them */
    Run *again = run_new(st, 8, 4, 3000);
    again->push_rows = run->push_rows;
    write_all(pool, again);
    ShStoreStats stats;
    sh_store_stats(st, &stats);
    cr_expect_gt(stats.blocks_reused, 0, "pushes take kept blocks");
    cr_assert_eq(sh_shuffle_flush(again->sh, &err), CM_OK, "%s", err.msg);
    read_all_check(pool, again, 0, again->n_maps);
    sh_shuffle_free(again->sh);
    cm_free(again);
    cr_assert_gt(st->spare_bytes, 0, "flushes keep blocks");
    cr_expect_leq(st->n_spare, 64);
    cr_expect_leq(st->spare_bytes, st->spare_cap);
    cr_expect_eq(st->mem.held, st->used - st->unreserved + st->spare_bytes);
    /* a kept block of a size near one kept is handed out, its reservation with it */
    int64_t cap = st->spare->cap, before = st->spare_bytes, held = st->mem.held;
    ShBlock *b = sh_store_spare_take(st, cap - cap / 8);
    cr_assert_not_null(b);
    cr_expect_geq(b->cap, cap - cap / 8);
    cr_expect_eq(st->spare_bytes, before - b->cap);
    cr_expect_eq(st->mem.held, held - b->cap);
    cr_expect_null(sh_store_spare_take(st, 64 * cap), "none is that large");
    cm_free(b);
    read_all_check(pool, run, 0, run->n_maps);
    run_free(run);
    cm_pool_free(pool);
}

/* Flushing some partitions writes those only: the others stay buffered, the
 * store's use and reservation fall by what was written, and every row is
 * still read once. */
Test(sh_store, flushing_some_partitions, .timeout = 60)
{
    CmPool *pool = cm_pool_new(2);
    CmErr err;
    cm_err_init(&err);
    Run *run = run_new(store_new(64 << 20, 64 << 20, SH_CODEC_LZ4, false), 4, 4, 2000);
    write_all(pool, run);
    ShStore *st = run->st;
    ShShuffle *sh = run->sh;
    int64_t rest = sh->parts[2].mem_bytes + sh->parts[3].mem_bytes;
    cr_assert_gt(sh->parts[0].n_blocks, 0, "a store this large flushes nothing by itself");
    cr_assert_eq(sh_shuffle_flush_parts(sh, 0, 2, &err), CM_OK, "%s", err.msg);
    cr_expect_eq(sh->parts[0].n_blocks + sh->parts[1].n_blocks, 0);
    cr_expect_gt(sh->parts[2].n_blocks, 0);
    cr_expect_gt(sh->parts[3].n_blocks, 0);
    cr_expect_eq(st->used, rest, "what is left buffered is partitions 2 and 3");
    cr_expect_eq(st->mem.held, st->used - st->unreserved + st->spare_bytes);
    cr_assert_eq(sh_shuffle_flush_parts(sh, -5, 99, &err), CM_OK, "a range past the ends is cut");
    cr_expect_eq(st->used, 0);
    read_all_check(pool, run, 0, run->n_maps);
    run_free(run);
    cm_pool_free(pool);
}

Test(sh_store, tiny_budget_many_pushers_zstd, .timeout = 120)
{
    tiny_budget(SH_CODEC_ZSTD, false);
}

Test(sh_store, tiny_budget_many_pushers_uncompressed, .timeout = 120)
{
    tiny_budget(SH_CODEC_NONE, false);
}

Test(sh_store, tiny_budget_compressed_in_memory, .timeout = 120)
{
    tiny_budget(SH_CODEC_ZSTD, true);
}

/* More pushers than threads, every worker a pusher, and ratios at the edges:
 * the store must neither hang nor lose rows. */
Test(sh_store, edge_ratios_do_not_hang, .timeout = 120)
{
    static const double ratios[][2] = {{0.01, 0.0}, {0.5, 0.5}, {1.0, 0.0}, {0.9, 0.95}};
    CmPool *pool = cm_pool_new(6);
    for (int k = 0; k < 4; k++) {
        ShStoreOptions o;
        sh_store_options_init(&o, NULL);
        o.memory_limit = 2048;
        o.split_threshold = 4096;
        o.pause_ratio = ratios[k][0];
        o.resume_ratio = ratios[k][1];
        CmErr err;
        cm_err_init(&err);
        Run *run = run_new(sh_store_new_opts(&o, &err), 12, 5, 700);
        write_all(pool, run);
        read_all_check(pool, run, 0, run->n_maps);
        run_free(run);
    }
    cm_pool_free(pool);
}

/* Readers of a committed map while other maps push into the same partitions
 * under a tiny budget: flushes retire buffers readers hold. */
typedef struct Mixed {
    Run *run;
    atomic_int bad_reads;
} Mixed;

static void mixed_task(void *arg, int task_idx, int worker_id)
{
    Mixed *mx = arg;
    Run *run = mx->run;
    CmErr err;
    cm_err_init(&err);
    if (task_idx < 4) {
        if (write_map(run, 1 + task_idx, 0, &err) != CM_OK) {
            atomic_fetch_add(&run->failures, 1);
        }
        return;
    }
    for (int rep = 0; rep < 10; rep++) {
        int64_t n = 0;
        ShReader *r = sh_reader_open(run->sh, 0, run->n_parts, 0, 1, &err);
        CmBatch b;
        cm_batch_init(&b, 4, types, &err);
        bool eof = false;
        while (sh_reader_next(r, &b, &eof, &err) == CM_OK && !eof) {
            for (int i = 0; i < b.n_rows; i++) {
                int64_t id = ((int64_t *)b.cols[0].data)[i];
                n += id / STRIDE == 0 ? 1 : 1000000;
            }
        }
        if (err.code != CM_OK || n != run->rows) {
            atomic_fetch_add(&mx->bad_reads, 1);
        }
        cm_batch_fini(&b);
        sh_reader_close(r);
    }
}

Test(sh_store, reads_while_others_push_under_pressure, .timeout = 120)
{
    CmPool *pool = cm_pool_new(6);
    Run *run = run_new(store_new(4096, 6000, SH_CODEC_ZSTD, false), 5, 6, 1200);
    CmErr err;
    cm_err_init(&err);
    cr_assert_eq(write_map(run, 0, 0, &err), CM_OK, "%s", err.msg);
    Mixed mx = {.run = run};
    atomic_init(&mx.bad_reads, 0);
    cm_pool_run(pool, 6, mixed_task, &mx);
    cr_expect_eq(atomic_load(&run->failures), 0);
    cr_expect_eq(atomic_load(&mx.bad_reads), 0);
    read_all_check(pool, run, 0, run->n_maps);
    run_free(run);
    cm_pool_free(pool);
}

/* A stage that reads shuffle A and writes shuffle B in the same tiny store, on
 * every worker: readers pin A's buffers while pushing into B pauses. */
typedef struct Chain {
    Run *a, *b;
    atomic_int failures;
} Chain;

static void chain_task(void *arg, int task_idx, int worker_id)
{
    Chain *c = arg;
    CmErr err;
    cm_err_init(&err);
    ShReader *r = sh_reader_open(c->a->sh, task_idx, task_idx + 1, 0, c->a->n_maps, &err);
    ShWriter *w = sh_writer_open(c->b->sh, task_idx, 0, &err);
    CmBatch in;
    cm_batch_init(&in, 4, types, &err);
    bool eof = false;
    while (err.code == CM_OK && sh_reader_next(r, &in, &eof, &err) == CM_OK && !eof) {
        /* Re-partition by id + 1 into B: same rows, other places. */
        sh_writer_push(w, (int)(((int64_t *)in.cols[0].data)[0] % c->b->n_parts), &in, &err);
    }
    cm_batch_fini(&in);
    sh_reader_close(r);
    if (err.code != CM_OK) {
        sh_writer_abort(w);
        atomic_fetch_add(&c->failures, 1);
        return;
    }
    sh_writer_close(w, &err);
}

Test(sh_store, read_one_shuffle_while_writing_another, .timeout = 120)
{
    CmPool *pool = cm_pool_new(8);
    ShStore *st = store_new(3000, 5000, SH_CODEC_ZSTD, false);
    Run *a = run_new(st, 8, 8, 1500);
    write_all(pool, a);
    Run *b = run_new(st, 8, 3, 1500);
    Chain c = {.a = a, .b = b};
    atomic_init(&c.failures, 0);
    cm_pool_run(pool, 8, chain_task, &c);
    cr_assert_eq(atomic_load(&c.failures), 0);
    /* B holds A's rows, each once (partition checks do not apply). */
    reset_seen(b);
    CmErr err;
    cm_err_init(&err);
    ShReader *r = sh_reader_open(b->sh, 0, 3, 0, 8, &err);
    CmBatch in;
    cm_batch_init(&in, 4, types, &err);
    bool eof = false;
    int64_t n = 0;
    while (sh_reader_next(r, &in, &eof, &err) == CM_OK && !eof) {
        for (int i = 0; i < in.n_rows; i++) {
            int64_t id = ((int64_t *)in.cols[0].data)[i];
            atomic_fetch_add(&b->hits[(id / STRIDE) * MAX_ROWS + id % STRIDE], 1);
            n++;
        }
    }
    cr_assert_eq(err.code, CM_OK, "%s", err.msg);
    cr_expect_eq(n, 8 * 1500);
    int wrong = 0;
    for (int k = 0; k < 8; k++) {
        for (int j = 0; j < 1500; j++) {
            wrong += atomic_load(&b->hits[k * MAX_ROWS + j]) != 1;
        }
    }
    cr_assert_eq(wrong, 0, "%d rows not read exactly once", wrong);
    cm_batch_fini(&in);
    sh_reader_close(r);
    sh_shuffle_free(a->sh);
    sh_shuffle_free(b->sh);
    sh_store_free(st);
    cm_free(a);
    cm_free(b);
    cm_pool_free(pool);
}

/* ---- sort on read ------------------------------------------------------------------------ */

Test(sh_store, every_map_range_reads_exactly_its_maps, .timeout = 120)
{
    CmPool *pool = cm_pool_new(4);
    Run *run = run_new(store_new(4096, 6000, SH_CODEC_ZSTD, false), 7, 4, 900);
    write_all(pool, run);
    int64_t splits = 0;
    for (int p = 0; p < run->n_parts; p++) {
        splits += sh_shuffle_n_splits(run->sh, p);
    }
    for (int m0 = 0; m0 <= run->n_maps; m0++) {
        for (int m1 = m0; m1 <= run->n_maps; m1++) {
            read_all_check(pool, run, m0, m1);
        }
    }
    ShShuffleStats s;
    sh_shuffle_stats(run->sh, &s);
    cr_expect_gt(s.sorted_on_read, 0, "map-range reads sort splits");
    cr_expect_leq(s.sorted_on_read, s.splits, "each split is sorted at most once");
    cr_expect_eq(s.files, s.splits + 2 * s.sorted_on_read, "data files, sorted files, indexes");
    run_free(run);
    cm_pool_free(pool);
}

/* One skewed partition of many splits, read by 8 concurrent map-range readers. */
typedef struct Skew {
    Run *run;
    int width;
} Skew;

static void skew_task(void *arg, int task_idx, int worker_id)
{
    Skew *k = arg;
    CmErr err;
    cm_err_init(&err);
    int m0 = task_idx * k->width;
    if (read_range(k->run, 0, 1, m0, m0 + k->width, &err) != CM_OK) {
        atomic_fetch_add(&k->run->failures, 1);
    }
}

Test(sh_store, concurrent_skew_readers_sort_each_split_once, .timeout = 120)
{
    CmPool *pool = cm_pool_new(8);
    Run *run = run_new(store_new(4096, 5000, SH_CODEC_ZSTD, false), 16, 1, 1500);
    write_all(pool, run);
    int n_splits = sh_shuffle_n_splits(run->sh, 0);
    cr_assert_gt(n_splits, 8, "%d splits", n_splits);
    reset_seen(run);
    Skew k = {.run = run, .width = 2};
    cm_pool_run(pool, 8, skew_task, &k);
    cr_assert_eq(atomic_load(&run->failures), 0);
    check_exactly_once(run, 0, 16);
    ShShuffleStats s;
    sh_shuffle_stats(run->sh, &s);
    cr_expect_gt(s.sorted_on_read, 0);
    cr_expect_leq(s.sorted_on_read, n_splits);
    /* And again: now every read uses the indexes. */
    read_all_check(pool, run, 3, 11);
    run_free(run);
    cm_pool_free(pool);
}

/* ---- faults and re-runs ---------------------------------------------------------------------- */

static int lost_maps(Run *run, int *maps)
{
    return sh_shuffle_lost_maps(run->sh, maps, MAX_MAPS);
}

/* Reads everything, expecting CM_IO. */
static void read_expect_io(CmPool *pool, Run *run, int m0, int m1)
{
    reset_seen(run);
    run->m0 = m0;
    run->m1 = m1;
    cm_pool_run(pool, run->n_parts, read_task, run);
    cr_assert_gt(atomic_load(&run->io_failures), 0, "the reader did not notice");
    cr_assert_eq(atomic_load(&run->bad), 0);
}

/* Invalidates every lost map and re-runs it with a new attempt. */
static int rerun_lost(Run *run)
{
    int maps[MAX_MAPS];
    int n = lost_maps(run, maps);
    CmErr err;
    cm_err_init(&err);
    for (int i = 0; i < n; i++) {
        sh_shuffle_invalidate_map(run->sh, maps[i]);
        int attempt = sh_shuffle_next_attempt(run->sh, maps[i]);
        cr_assert_gt(attempt, 0);
        cr_assert_eq(write_map(run, maps[i], attempt, &err), CM_OK, "%s", err.msg);
        cr_assert_eq(sh_shuffle_committed_attempt(run->sh, maps[i]), attempt);
    }
    cr_expect_eq(lost_maps(run, maps), 0);
    return n;
}

static void check_stats_exact(Run *run)
{
    ShShuffleStats s;
    sh_shuffle_stats(run->sh, &s);
    cr_expect_eq(s.rows, (int64_t)run->n_maps * run->rows, "no double count after re-runs");
    int64_t rows = 0;
    for (int p = 0; p < run->n_parts; p++) {
        int64_t part = 0;
        for (int m = 0; m < run->n_maps; m++) {
            part += sh_shuffle_map_part_rows(run->sh, m, p);
        }
        cr_expect_eq(sh_shuffle_part_rows(run->sh, p), part);
        rows += part;
    }
    cr_expect_eq(rows, s.rows);
}

Test(sh_store, corrupt_payload_loses_one_map_and_a_rerun_repairs, .timeout = 120)
{
    CmPool *pool = cm_pool_new(4);
    Run *run = run_new(store_new(1 << 20, 1 << 20, SH_CODEC_ZSTD, false), 6, 4, 800);
    write_all(pool, run);
    CmErr err;
    cm_err_init(&err);
    cr_assert_eq(sh_shuffle_debug_corrupt(run->sh, 2, 3, SH_DAMAGE_PAYLOAD, &err), CM_OK, "%s",
                 err.msg);
    read_expect_io(pool, run, 0, run->n_maps);
    int maps[MAX_MAPS];
    cr_assert_eq(lost_maps(run, maps), 1);
    cr_expect_eq(maps[0], 3);
    /* A map range that leaves map 3 out is fine meanwhile. */
    read_all_check(pool, run, 4, 6);
    cr_assert_eq(rerun_lost(run), 1);
    read_all_check(pool, run, 0, run->n_maps);
    read_all_check(pool, run, 2, 5);
    check_stats_exact(run);
    ShShuffleStats s;
    sh_shuffle_stats(run->sh, &s);
    cr_expect_eq(s.map_reruns, 1);
    cr_expect_eq(s.lost_maps, 1);
    run_free(run);
    cm_pool_free(pool);
}

Test(sh_store, corrupt_header_loses_the_rest_of_its_split, .timeout = 120)
{
    CmPool *pool = cm_pool_new(4);
    Run *run = run_new(store_new(4096, 1 << 20, SH_CODEC_NONE, false), 6, 3, 700);
    write_all(pool, run);
    CmErr err;
    cm_err_init(&err);
    cr_assert_eq(sh_shuffle_debug_corrupt(run->sh, 1, 2, SH_DAMAGE_HEADER, &err), CM_OK, "%s",
                 err.msg);
    read_expect_io(pool, run, 0, run->n_maps);
    int maps[MAX_MAPS];
    int n = lost_maps(run, maps);
    bool has2 = false;
    for (int i = 0; i < n; i++) {
        has2 = has2 || maps[i] == 2;
    }
    cr_expect(has2, "the damaged block's map is reported (%d lost)", n);
    cr_assert_eq(rerun_lost(run), n);
    read_all_check(pool, run, 0, run->n_maps);
    read_all_check(pool, run, 1, 4);
    check_stats_exact(run);
    run_free(run);
    cm_pool_free(pool);
}

Test(sh_store, deleted_file_loses_its_maps_and_reruns_repair, .timeout = 120)
{
    CmPool *pool = cm_pool_new(4);
    Run *run = run_new(store_new(4096, 6000, SH_CODEC_ZSTD, false), 8, 4, 900);
    write_all(pool, run);
    CmErr err;
    cm_err_init(&err);
    cr_assert_gt(sh_shuffle_n_splits(run->sh, 1), 1);
    cr_assert_eq(sh_shuffle_debug_delete_file(run->sh, 1, 0, &err), CM_OK, "%s", err.msg);
    read_expect_io(pool, run, 0, run->n_maps);
    int maps[MAX_MAPS];
    int n = lost_maps(run, maps);
    cr_assert_gt(n, 0);
    cr_assert_eq(rerun_lost(run), n);
    read_all_check(pool, run, 0, run->n_maps);
    check_stats_exact(run);
    run_free(run);
    cm_pool_free(pool);
}

Test(sh_store, deleted_sorted_file_is_noticed_by_range_reads, .timeout = 120)
{
    CmPool *pool = cm_pool_new(4);
    Run *run = run_new(store_new(4096, 5000, SH_CODEC_ZSTD, false), 8, 2, 900);
    write_all(pool, run);
    read_all_check(pool, run, 2, 5); /* sorts */
    ShShuffleStats s;
    sh_shuffle_stats(run->sh, &s);
    cr_assert_gt(s.sorted_on_read, 0);
    CmErr err;
    cm_err_init(&err);
    for (int k = 0; k < sh_shuffle_n_splits(run->sh, 0); k++) {
        cr_assert_eq(sh_shuffle_debug_delete_file(run->sh, 0, k, &err), CM_OK, "%s", err.msg);
    }
    read_expect_io(pool, run, 2, 5);
    cr_assert_eq(rerun_lost(run) > 0, true);
    /* Splits without maps 2..4 were not read, so a full read may find more
     * lost maps: re-run rounds as a scheduler would, until a read succeeds. */
    for (int round = 0; round < 3; round++) {
        reset_seen(run);
        run->m0 = 0;
        run->m1 = run->n_maps;
        cm_pool_run(pool, run->n_parts, read_task, run);
        if (atomic_load(&run->failures) == 0) {
            break;
        }
        cr_assert_eq(atomic_load(&run->failures), atomic_load(&run->io_failures));
        cr_assert_gt(rerun_lost(run), 0);
    }
    read_all_check(pool, run, 0, run->n_maps);
    read_all_check(pool, run, 2, 5);
    check_stats_exact(run);
    run_free(run);
    cm_pool_free(pool);
}

Test(sh_store, reused_attempt_is_refused)
{
    Run *run = run_new(store_new(1 << 20, 1 << 20, SH_CODEC_ZSTD, false), 2, 2, 10);
    CmErr err;
    cm_err_init(&err);
    cr_assert_eq(write_map(run, 0, 0, &err), CM_OK);
    cr_expect_null(sh_writer_open(run->sh, 0, 0, &err));
    cr_expect_eq(err.code, CM_INTERNAL);
    cr_expect_eq(sh_shuffle_next_attempt(run->sh, 0), 1);
    cr_expect_eq(sh_shuffle_next_attempt(run->sh, 1), 0);
    run_free(run);
}

/* ---- files and failures -----------------------------------------------------------------------
 */

Test(sh_store, files_are_removed_when_freed, .timeout = 60)
{
    CmPool *pool = cm_pool_new(4);
    Run *run = run_new(store_new(4096, 5000, SH_CODEC_ZSTD, false), 4, 4, 800);
    write_all(pool, run);
    read_all_check(pool, run, 1, 3);
    char dir[600];
    snprintf(dir, sizeof dir, "%s", sh_store_directory(run->st));
    cr_assert_neq(dir[0], '\0');
    cr_expect_gt(count_files(dir), 0);
    sh_shuffle_free(run->sh);
    cr_expect_eq(count_files(dir), 0, "the shuffle's files go with it");
    sh_store_free(run->st);
    struct stat sb;
    cr_expect_neq(stat(dir, &sb), 0, "the query's directory goes with the store");
    cm_free(run);
    cm_pool_free(pool);
}

/* A directory that cannot be made: pushers that need the disk fail with CM_IO
 * instead of waiting forever. */
Test(sh_store, failing_disk_fails_pushers_without_hanging, .timeout = 60)
{
    CmPool *pool = cm_pool_new(4);
    ShStoreOptions o;
    sh_store_options_init(&o, NULL);
    o.memory_limit = 2048;
    snprintf(o.temp_directory, sizeof o.temp_directory, "/dev/null/nowhere");
    CmErr err;
    cm_err_init(&err);
    Run *run = run_new(sh_store_new_opts(&o, &err), 8, 4, 1000);
    cm_pool_run(pool, run->n_maps, write_task, run);
    cr_expect_gt(atomic_load(&run->io_failures), 0);
    cr_expect_eq(atomic_load(&run->failures), atomic_load(&run->io_failures));
    run_free(run);
    cm_pool_free(pool);
}

/* The default store of a CmConfig follows its settings. */
Test(sh_store, options_follow_the_settings)
{
    CmConfig cfg;
    cm_config_init(&cfg);
    CmErr err;
    cm_err_init(&err);
    cr_assert_eq(cm_config_set(&cfg, "shuffle_compression", "none", &err), CM_OK);
    cr_assert_eq(cm_config_set(&cfg, "shuffle_memory_limit", "64KB", &err), CM_OK);
    cr_assert_eq(cm_config_set(&cfg, "temp_directory", "/tmp/x", &err), CM_OK);
    ShStoreOptions o;
    sh_store_options_init(&o, &cfg);
    cr_expect_eq(o.codec, SH_CODEC_NONE);
    cr_expect_eq(o.memory_limit, 64 * 1024);
    cr_expect_float_eq(o.pause_ratio, 0.85, 1e-9);
    cr_expect_float_eq(o.resume_ratio, 0.70, 1e-9);
    cr_expect_str_eq(o.temp_directory, "/tmp/x");
    ShStore *st = sh_store_new(&cfg, &err);
    cr_assert_not_null(st);
    ShStoreStats ss;
    sh_store_stats(st, &ss);
    cr_expect_eq(ss.memory_limit, 64 * 1024);
    sh_store_free(st);
}
