/*
 * test_blocks.c - unit tests for storage/blocks.c: pins, LRU order, evict and
 * reload with strings and NULLs, MEMORY_ONLY drops, DISK_ONLY, reuse of freed
 * disk space, eviction under memory_limit and for execution memory, and many
 * threads pinning at once.  Criterion runs each test in its own process, so
 * the process-wide store and limit start fresh in each.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "common/alloc.h"
#include "common/mem.h"
#include "storage/blocks.h"

static CmErr err;
static CmMemRes res;
static CmType types[3];

static void setup(void)
{
    cm_err_init(&err);
    cm_mem_res_init(&res, CM_MEM_STORAGE, "test blocks", NULL);
    types[0] = cm_type_make(CM_T_INT64);
    types[1] = cm_type_varchar(-1, false);
    types[2] = cm_type_make(CM_T_DOUBLE);
}

TestSuite(st_blocks, .init = setup);

/* Row r of block `id`: k = id * 1000 + r; s = a string of length r % 40
 * (long ones in the heap); d = NULL when r % 5 == 2. */
static int text_of(int id, int r, char *buf)
{
    int len = r % 40;
    for (int k = 0; k < len; k++) {
        buf[k] = (char)('a' + (id + r + k) % 26);
    }
    return len;
}

/* A sealed block of n rows, unpinned. */
static StBlock *make_block(int id, int n, StBlockLevel level, StBlockDropped dropped, void *owner)
{
    StBlock *b = st_block_new(level, 3, types, &res, dropped, owner, &err);
    cr_assert_not_null(b, "%s", err.msg);
    CmBatch *batch = st_block_batch(b);
    for (int r = 0; r < n; r++) {
        char buf[64];
        int len = text_of(id, r, buf);
        ((int64_t *)batch->cols[0].data)[r] = id * 1000 + r;
        CmStr s = cm_str_make(buf, (uint32_t)len);
        ((CmStr *)batch->cols[1].data)[r] = cm_str_copy(&batch->heap, &s, &err);
        if (r % 5 == 2) {
            cm_vec_set_null(&batch->cols[2], (uint32_t)r);
        } else {
            ((double *)batch->cols[2].data)[r] = r * 0.25;
        }
    }
    batch->n_rows = n;
    cr_assert_eq(st_block_charge(b, &err), CM_OK);
    cr_assert_eq(st_block_seal(b, &err), CM_OK, "%s", err.msg);
    st_block_unpin(b);
    return b;
}

static void check_batch(const CmBatch *batch, int id, int n)
{
    cr_assert_eq(batch->n_rows, n);
    for (int r = 0; r < n; r++) {
        char buf[64];
        int len = text_of(id, r, buf);
        cr_assert_eq(((const int64_t *)batch->cols[0].data)[r], id * 1000 + r);
        const CmStr *s = &((const CmStr *)batch->cols[1].data)[r];
        cr_assert_eq(s->len, (uint32_t)len);
        cr_assert_eq(memcmp(cm_str_data(s), buf, (size_t)len), 0);
        cr_assert_eq(cm_vec_is_null(&batch->cols[2], (uint32_t)r), r % 5 == 2);
        if (r % 5 != 2) {
            cr_assert_eq(((const double *)batch->cols[2].data)[r], r * 0.25);
        }
    }
}

static int n_rows(void)
{
    return CM_BATCH_CAP < 50 ? CM_BATCH_CAP : 50;
}

Test(st_blocks, pin_unpin_keeps_a_block_in_memory)
{
    StBlock *b = make_block(1, n_rows(), ST_BLOCK_MEMORY_AND_DISK, NULL, NULL);
    const CmBatch *x = st_block_pin(b, NULL, &err);
    cr_assert_not_null(x);
    /* a pinned block is not evictable */
    cr_expect_eq(st_blocks_evict(1 << 30), 0);
    cr_expect(st_block_resident(b));
    check_batch(x, 1, n_rows());
    st_block_unpin(b);
    cr_expect_gt(st_blocks_evict(1 << 30), 0, "unpinned: evictable");
    cr_expect_not(st_block_resident(b));
    st_block_free(b);
    cr_expect_eq(res.held, 0, "everything reserved is released");
}

Test(st_blocks, evict_and_reload_round_trip)
{
    int n = n_rows();
    StBlock *b = make_block(7, n, ST_BLOCK_MEMORY_AND_DISK, NULL, NULL);
    int64_t held = res.held;
    cr_assert_gt(held, 0);
    cr_assert_eq(st_blocks_evict(1), held);
    cr_expect_eq(res.held, 0, "an evicted block holds no memory");
    StBlockLoc loc = st_block_loc(b);
    cr_expect_gt(loc.bytes, 0, "written to the disk tier");
    bool loaded = false;
    const CmBatch *x = st_block_pin(b, &loaded, &err);
    cr_assert_not_null(x, "%s", err.msg);
    cr_expect(loaded);
    check_batch(x, 7, n);
    st_block_unpin(b);
    /* evicted again: the disk copy is still good, nothing more is written */
    st_blocks_evict(1);
    cr_expect_eq(st_block_loc(b).offset, loc.offset);
    StBlocksStats s;
    st_blocks_stats(&s);
    cr_expect_eq(s.evictions, 2);
    cr_expect_eq(s.loads, 1);
    cr_expect_eq(s.disk_bytes, loc.bytes);
    x = st_block_pin(b, &loaded, &err);
    cr_assert_not_null(x);
    check_batch(x, 7, n);
    st_block_free(b);
    st_blocks_stats(&s);
    cr_expect_eq(s.n_blocks, 0);
    cr_expect_eq(s.disk_bytes, 0);
    cr_expect_eq(res.held, 0);
}

Test(st_blocks, lru_order_evicts_the_least_recently_unpinned)
{
    StBlock *b[3];
    for (int i = 0; i < 3; i++) {
        b[i] = make_block(i, n_rows(), ST_BLOCK_MEMORY_AND_DISK, NULL, NULL);
    }
    /* use 0 again: 1 is now the least recently used, then 2 */
    cr_assert_not_null(st_block_pin(b[0], NULL, &err));
    st_block_unpin(b[0]);
    st_blocks_evict(1);
    cr_expect_not(st_block_resident(b[1]));
    cr_expect(st_block_resident(b[0]));
    cr_expect(st_block_resident(b[2]));
    st_blocks_evict(1);
    cr_expect_not(st_block_resident(b[2]));
    cr_expect(st_block_resident(b[0]));
    for (int i = 0; i < 3; i++) {
        st_block_free(b[i]);
    }
}

Test(st_blocks, a_cold_unpin_is_evicted_first)
{
    StBlock *b[3];
    for (int i = 0; i < 3; i++) {
        b[i] = make_block(i, n_rows(), ST_BLOCK_MEMORY_AND_DISK, NULL, NULL);
    }
    /* 0 is the least recently unpinned; 2, unpinned last but cold, goes first */
    cr_assert_not_null(st_block_pin(b[2], NULL, &err));
    st_block_unpin_cold(b[2]);
    st_blocks_evict(1);
    cr_expect_not(st_block_resident(b[2]));
    cr_expect(st_block_resident(b[0]));
    cr_expect(st_block_resident(b[1]));
    /* a second pin keeps it pinned: the cold unpin only drops the first */
    cr_assert_not_null(st_block_pin(b[1], NULL, &err));
    cr_assert_not_null(st_block_pin(b[1], NULL, &err));
    st_block_unpin_cold(b[1]);
    st_blocks_evict(1);
    cr_expect(st_block_resident(b[1]), "still pinned");
    cr_expect_not(st_block_resident(b[0]));
    st_block_unpin(b[1]);
    for (int i = 0; i < 3; i++) {
        st_block_free(b[i]);
    }
}

Test(st_blocks, unsealed_blocks_are_not_evicted)
{
    StBlock *b = st_block_new(ST_BLOCK_MEMORY_AND_DISK, 3, types, &res, NULL, NULL, &err);
    cr_assert_not_null(b);
    st_block_unpin(b);
    cr_expect_eq(st_blocks_evict(1 << 30), 0);
    cr_expect(st_block_resident(b));
    st_block_free(b);
}

static int n_dropped;
static StBlock *last_dropped;

static void on_drop(void *owner, StBlock *b)
{
    n_dropped += *(int *)owner;
    last_dropped = b;
}

Test(st_blocks, memory_only_is_dropped_and_the_owner_told)
{
    int weight = 1;
    StBlock *b = make_block(3, n_rows(), ST_BLOCK_MEMORY_ONLY, on_drop, &weight);
    cr_assert_gt(st_blocks_evict(1), 0);
    cr_expect_eq(n_dropped, 1);
    cr_expect_eq(last_dropped, b);
    cr_expect_eq(st_block_loc(b).bytes, 0, "never written");
    CmErr e;
    cm_err_init(&e);
    cr_expect_null(st_block_pin(b, NULL, &e), "a dropped block cannot be pinned");
    cr_expect_eq(e.code, CM_OK, "and that is not an error");
    StBlocksStats s;
    st_blocks_stats(&s);
    cr_expect_eq(s.drops, 1);
    cr_expect_eq(s.disk_bytes, 0);
    st_block_free(b);
}

Test(st_blocks, disk_only_lives_in_memory_only_while_pinned)
{
    StBlock *b = make_block(4, n_rows(), ST_BLOCK_DISK_ONLY, NULL, NULL);
    cr_expect_not(st_block_resident(b), "written and let go at once");
    cr_expect_gt(st_block_loc(b).bytes, 0);
    cr_expect_eq(res.held, 0);
    bool loaded;
    const CmBatch *x = st_block_pin(b, &loaded, &err);
    cr_assert_not_null(x);
    cr_expect(loaded);
    cr_expect_gt(res.held, 0);
    check_batch(x, 4, n_rows());
    st_block_unpin(b);
    cr_expect_not(st_block_resident(b));
    cr_expect_eq(res.held, 0);
    st_block_free(b);
}

Test(st_blocks, freed_disk_space_is_reused)
{
    StBlock *b[4];
    for (int i = 0; i < 4; i++) {
        b[i] = make_block(10 + i, n_rows(), ST_BLOCK_DISK_ONLY, NULL, NULL);
    }
    StBlocksStats s;
    st_blocks_stats(&s);
    int64_t file = s.file_bytes;
    StBlockLoc second = st_block_loc(b[1]);
    st_block_free(b[1]);
    /* fewer rows, a smaller record: the freed extent takes it */
    StBlock *again = make_block(11, n_rows() / 2, ST_BLOCK_DISK_ONLY, NULL, NULL);
    cr_expect_leq(st_block_loc(again).bytes, second.bytes);
    cr_expect_eq(st_block_loc(again).offset, second.offset);
    st_blocks_stats(&s);
    cr_expect_eq(s.file_bytes, file, "the file did not grow");
    /* freeing the last record gives the tail of the file back */
    st_block_free(b[3]);
    st_blocks_stats(&s);
    cr_expect_lt(s.file_bytes, file);
    const CmBatch *x = st_block_pin(again, NULL, &err);
    cr_assert_not_null(x);
    check_batch(x, 11, n_rows() / 2);
    st_block_unpin(again);
    st_block_free(again);
    st_block_free(b[0]);
    st_block_free(b[2]);
    st_blocks_stats(&s);
    cr_expect_eq(s.file_bytes, 0);
    cr_expect_eq(s.disk_bytes, 0);
}

/* What the consumer `what` holds now (0 when it holds nothing). */
typedef struct Held {
    const char *what;
    int64_t bytes;
} Held;

static void add_held(void *ctx, const CmMemRes *r)
{
    Held *h = ctx;
    if (strcmp(r->what, h->what) == 0) {
        h->bytes += r->held;
    }
}

static int64_t held_by(const char *what)
{
    Held h = {.what = what, .bytes = 0};
    cm_mem_each(add_held, &h);
    return h.bytes;
}

/* An evicted block's column buffers and its string heap's one chunk wait,
 * reserved as "block buffers", for the next block made or read back that
 * wants their sizes, which takes them: a table read back chunk by chunk does
 * not fault in new pages for each (blocks.c, the pool).  A buffer is a buffer:
 * the heap's 16 KiB chunk may serve an 8-byte column of 2048 rows. */
Test(st_blocks, an_evicted_blocks_column_buffers_serve_the_next_block)
{
    StBlock *a = make_block(0, n_rows(), ST_BLOCK_MEMORY_AND_DISK, NULL, NULL);
    const CmBatch *x = st_block_pin(a, NULL, &err);
    cr_assert_not_null(x, "%s", err.msg);
    void *bufs[4];
    for (int i = 0; i < 3; i++) {
        bufs[i] = x->cols[i].data;
    }
    bool one_chunk = x->heap.head != NULL && x->heap.n_bytes <= 1024;
    bufs[3] = x->heap.head; /* the string heap's chunk (a few short strings) */
    st_block_unpin(a);
    cr_assert_eq(held_by("block buffers"), 0);
    cr_assert_gt(st_blocks_evict(1), 0);
    cr_assert_not(st_block_resident(a));
    int64_t cols = 0;
    for (int i = 0; i < 3; i++) {
        cols += (int64_t)cm_type_width(types[i]) * CM_BATCH_CAP;
    }
    cr_expect_geq(held_by("block buffers"), cols, "the evicted vectors are kept, and counted");
    StBlock *b = st_block_new(ST_BLOCK_MEMORY_AND_DISK, 3, types, &res, NULL, NULL, &err);
    cr_assert_not_null(b, "%s", err.msg);
    const CmBatch *y = st_block_batch(b);
    for (int i = 0; i < 3; i++) {
        int found = 0;
        for (int k = 0; k < 4; k++) {
            found += y->cols[i].data == bufs[k];
        }
        cr_expect_eq(found, 1, "column %d is on one of the evicted block's buffers", i);
    }
    cr_expect(y->cols[0].data != y->cols[2].data && y->cols[0].data != y->cols[1].data);
    /* the evicted block reads back whole, its heap on the buffer left over */
    x = st_block_pin(a, NULL, &err);
    cr_assert_not_null(x, "%s", err.msg);
    check_batch(x, 0, n_rows());
    if (one_chunk && CM_BATCH_CAP == 2048) {
        cr_expect_eq(held_by("block buffers"), 0, "all taken, and no longer counted there");
    }
    st_block_unpin(a);
    st_block_free(a);
    st_block_free(b);
    cr_expect_eq(res.held, 0);
}

Test(st_blocks, a_reservation_past_the_limit_evicts_first)
{
    StBlock *b[8];
    b[0] = make_block(0, n_rows(), ST_BLOCK_MEMORY_AND_DISK, NULL, NULL);
    int64_t one = res.held;
    /* a loaded block may be larger (its heap holds every string's bytes) */
    st_blocks_evict(1);
    cr_assert_not_null(st_block_pin(b[0], NULL, &err));
    int64_t big = res.held;
    st_block_unpin(b[0]);
    int64_t limit = 3 * big + one / 2; /* room for three blocks, not four */
    cm_mem_set_limit(cm_mem_limit_pooling(limit));
    for (int i = 1; i < 8; i++) {
        b[i] = make_block(i, n_rows(), ST_BLOCK_MEMORY_AND_DISK, NULL, NULL);
        cr_expect_leq(res.held, limit);
    }
    cr_expect_not(st_block_resident(b[0]), "the oldest went to disk");
    cr_expect(st_block_resident(b[7]));
    for (int i = 0; i < 8; i++) {
        const CmBatch *x = st_block_pin(b[i], NULL, &err);
        cr_assert_not_null(x, "%s", err.msg);
        check_batch(x, i, n_rows());
        st_block_unpin(b[i]);
    }
    /* nothing evictable: pinned blocks stay, the new one is refused */
    for (int i = 0; i < 3; i++) {
        cr_assert_not_null(st_block_pin(b[5 + i], NULL, &err));
    }
    CmErr e;
    cm_err_init(&e);
    cr_expect_null(st_block_new(ST_BLOCK_MEMORY_AND_DISK, 3, types, &res, NULL, NULL, &e));
    cr_expect_eq(e.code, CM_OOM);
    cr_expect(strstr(e.msg, "out of memory: test blocks needs") != NULL, "%s", e.msg);
    for (int i = 0; i < 8; i++) {
        st_block_free(b[i]);
    }
}

Test(st_blocks, execution_memory_evicts_storage)
{
    StBlock *b[6];
    b[0] = make_block(0, n_rows(), ST_BLOCK_MEMORY_AND_DISK, NULL, NULL);
    int64_t one = res.held;
    cm_mem_set_limit(cm_mem_limit_pooling(one * 6 + one / 2));
    for (int i = 1; i < 6; i++) {
        b[i] = make_block(i, n_rows(), ST_BLOCK_MEMORY_AND_DISK, NULL, NULL);
    }
    cr_assert_eq(res.held, one * 6, "the blocks fill the limit");
    CmMemRes exec;
    cm_mem_res_init(&exec, CM_MEM_EXECUTION, "test operator", NULL);
    /* memory that cannot spill takes all it needs from storage */
    cr_expect_eq(cm_mem_need(&exec, one * 4, &err), CM_OK, "%s", err.msg);
    cr_expect_leq(res.held, one * 2);
    CmMemStats ms;
    cm_mem_stats(&ms);
    cr_expect_geq(ms.evicted, one * 4);
    cm_mem_res_fini(&exec);
    /* spillable memory leaves storage half of the limit */
    for (int i = 0; i < 6; i++) {
        cr_assert_not_null(st_block_pin(b[i], NULL, &err));
        st_block_unpin(b[i]);
    }
    cr_expect_geq(res.held, one * 5, "loaded back (a loaded heap is packed tighter)");
    cr_expect(cm_mem_grow(&exec, one));
    cr_expect_not(cm_mem_grow(&exec, one * 4), "storage keeps half");
    cr_expect_geq(res.held, one * 3);
    cm_mem_res_fini(&exec);
    for (int i = 0; i < 6; i++) {
        st_block_free(b[i]);
    }
}

/* Blocks evicted for execution (the manager's evictor, st_blocks_evict) give
 * their pages back at once, even while the allocator keeps freed pages
 * (common/alloc.h, cm_cold_free); in mimalloc builds with 2048-row chunks. */
Test(st_blocks, blocks_evicted_for_execution_leave_the_process)
{
    enum { N = 400 };
    static StBlock *b[N];
    cm_alloc_set_release(CM_ALLOC_KEEP);
    int64_t before = cm_mem_rss();
    for (int i = 0; i < N; i++) {
        b[i] = make_block(i, CM_BATCH_CAP, ST_BLOCK_MEMORY_AND_DISK, NULL, NULL);
    }
    int64_t held = res.held, made = cm_mem_rss();
    cr_assert_gt(st_blocks_evict(INT64_MAX), 0);
    int64_t after = cm_mem_rss();
    cr_expect_eq(res.held, 0);
#if !defined(SLUICE_NO_MIMALLOC)
    if (CM_BATCH_CAP == 2048 && before > 0) {
        /* 400 blocks of 64 KiB of vectors (19 MB of them go: the buffer pool
         * keeps 2 MiB, and the first page of each buffer comes back when it is
         * freed) and about 40 KiB of strings, whose heaps of several chunks
         * are freed plainly (blocks.c, batch_release: TeraSort's sort reuses
         * their pages) */
        cr_expect_geq(made - before, held * 3 / 4, "made %lld, before %lld, held %lld",
                      (long long)made, (long long)before, (long long)held);
        cr_expect_geq(made - after, held / 4, "made %lld, after %lld, held %lld", (long long)made,
                      (long long)after, (long long)held);
    }
#else
    (void)before;
    (void)held;
    (void)made;
    (void)after;
#endif
    for (int i = 0; i < N; i += 37) {
        const CmBatch *x = st_block_pin(b[i], NULL, &err);
        cr_assert_not_null(x, "%s", err.msg);
        check_batch(x, i, CM_BATCH_CAP);
        st_block_unpin(b[i]);
    }
    for (int i = 0; i < N; i++) {
        st_block_free(b[i]);
    }
}

enum { N_THREADS = 4, N_BLOCKS = 16, N_ROUNDS = 200 };
static StBlock *shared[N_BLOCKS];

static void *pinner(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < N_ROUNDS; i++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 8) % N_BLOCKS);
        CmErr e;
        cm_err_init(&e);
        const CmBatch *x = st_block_pin(shared[k], NULL, &e);
        if (x == NULL) {
            return (void *)1;
        }
        if (((const int64_t *)x->cols[0].data)[x->n_rows - 1] != k * 1000 + x->n_rows - 1) {
            st_block_unpin(shared[k]);
            return (void *)2;
        }
        if (i % 7 == 0) {
            st_blocks_evict(1);
        }
        st_block_unpin(shared[k]);
    }
    return NULL;
}

Test(st_blocks, many_threads_pin_and_evict)
{
    for (int i = 0; i < N_BLOCKS; i++) {
        shared[i] = make_block(i, n_rows(), ST_BLOCK_MEMORY_AND_DISK, NULL, NULL);
    }
    /* Room for half, and for two loaded blocks a thread: a block loaded back
     * can take more than when it was made (in the 3-row build 616 bytes
     * against about 380, a heap chunk for three short strings), and a pin
     * that finds every other block pinned or in flight cannot wait for them
     * (they are on the same reservation).  Loads still evict each other. */
    int64_t half = res.held / 2;
    st_blocks_evict(res.held);
    cr_assert_not_null(st_block_pin(shared[0], NULL, &err), "%s", err.msg);
    int64_t loaded = res.held;
    st_block_unpin(shared[0]);
    int64_t room = 2 * N_THREADS * loaded > half ? 2 * N_THREADS * loaded : half;
    cr_assert_lt(room, loaded * N_BLOCKS, "not every block fits");
    cm_mem_set_limit(cm_mem_limit_pooling(room));
    pthread_t th[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        pthread_create(&th[i], NULL, pinner, (void *)(uintptr_t)(i + 1));
    }
    for (int i = 0; i < N_THREADS; i++) {
        void *ret;
        pthread_join(th[i], &ret);
        cr_expect_null(ret, "thread %d: %p", i, ret);
    }
    StBlocksStats s;
    st_blocks_stats(&s);
    cr_expect_gt(s.loads, 0);
    for (int i = 0; i < N_BLOCKS; i++) {
        const CmBatch *x = st_block_pin(shared[i], NULL, &err);
        cr_assert_not_null(x, "%s", err.msg);
        check_batch(x, i, n_rows());
        st_block_unpin(shared[i]);
        st_block_free(shared[i]);
    }
    cr_expect_eq(res.held, 0);
}

/* ---- saved blocks in column records (st_block_new_saved with col_bytes) ------------- */

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "shuffle/block.h"

static char saved_path[64];

/* Block `id`'s n rows written to a new file, each column a record of its own
 * back to back from offset 8; the file's fd, and each record's bytes. */
static int write_columns(int id, int n, int64_t col_bytes[3])
{
    StBlock *src = make_block(id, n, ST_BLOCK_MEMORY_AND_DISK, NULL, NULL);
    const CmBatch *x = st_block_pin(src, NULL, &err);
    cr_assert_not_null(x);
    snprintf(saved_path, sizeof saved_path, "/tmp/sluice-test-cols-XXXXXX");
    int fd = mkstemp(saved_path);
    cr_assert_geq(fd, 0);
    int64_t off = 8;
    for (int c = 0; c < 3; c++) {
        CmBatch one = {.n_rows = n, .n_cols = 1, .cols = &x->cols[c]};
        ShBlock *blk = sh_block_encode_packed(&one, &err);
        cr_assert_not_null(blk);
        unsigned char *rec = cm_malloc(SH_DISK_HDR_BYTES + (size_t)blk->hdr.stored_bytes + 8);
        col_bytes[c] = sh_block_lay_record(blk, NULL, rec);
        cr_assert(sh_pwrite_all(fd, rec, (size_t)col_bytes[c], off));
        off += col_bytes[c];
        cm_free(rec);
        cm_free(blk);
    }
    st_block_unpin(src);
    st_block_free(src);
    return fd;
}

static StBlock *saved_columns(int fd, int n, const int64_t col_bytes[3])
{
    StBlockLoc loc = {.fd = fd, .offset = 8, .bytes = col_bytes[0] + col_bytes[1] + col_bytes[2]};
    StBlock *b = st_block_new_saved(3, types, &res, n, loc, col_bytes, saved_path, &err);
    cr_assert_not_null(b, "%s", err.msg);
    return b;
}

Test(st_blocks, a_column_block_loads_only_the_columns_pinned)
{
    int n = n_rows();
    int64_t col_bytes[3];
    int fd = write_columns(3, n, col_bytes);
    StBlock *b = saved_columns(fd, n, col_bytes);
    cr_expect_not(st_block_resident(b));
    int only_d = 2, k_and_s[2] = {0, 1};
    bool loaded = false;
    const CmBatch *x = st_block_pin_cols(b, &only_d, 1, &loaded, &err);
    cr_assert_not_null(x, "%s", err.msg);
    cr_expect(loaded);
    cr_expect_null(x->cols[0].data, "a column not asked for is not read");
    cr_expect_null(x->cols[1].data);
    int64_t one_col = res.held;
    for (int r = 0; r < n; r++) {
        cr_expect_eq(cm_vec_is_null(&x->cols[2], (uint32_t)r), r % 5 == 2);
    }
    /* a second reader asks for the others while the first holds its pin */
    const CmBatch *y = st_block_pin_cols(b, k_and_s, 2, &loaded, &err);
    cr_assert_eq(y, x, "the same batch, grown");
    cr_expect(loaded);
    cr_expect_gt(res.held, one_col);
    check_batch(y, 3, n);
    /* all there now: nothing to read */
    cr_assert_not_null(st_block_pin(b, &loaded, &err));
    cr_expect_not(loaded);
    st_block_unpin(b);
    st_block_unpin(b);
    st_block_unpin(b);
    cr_expect_gt(st_blocks_evict(1 << 30), 0);
    cr_expect_eq(res.held, 0, "eviction drops every column");
    /* a count reads no column */
    cr_assert_not_null(x = st_block_pin_cols(b, NULL, 0, &loaded, &err));
    cr_expect_not(loaded);
    cr_expect_eq(x->n_rows, n);
    cr_expect_null(x->cols[0].data);
    st_block_unpin(b);
    cr_assert_not_null(x = st_block_pin(b, &loaded, &err));
    cr_expect(loaded);
    check_batch(x, 3, n);
    StBlocksStats s;
    st_blocks_stats(&s);
    cr_expect_eq(s.disk_bytes, 0, "a saved block writes nothing to the disk tier");
    st_block_free(b);
    cr_expect_eq(res.held, 0);
    close(fd);
    unlink(saved_path);
}

Test(st_blocks, a_damaged_column_record_fails_only_its_readers)
{
    int n = n_rows();
    int64_t col_bytes[3];
    int fd = write_columns(4, n, col_bytes);
    /* a byte of the string column's payload */
    unsigned char byte;
    int64_t at = 8 + col_bytes[0] + SH_DISK_HDR_BYTES + 4;
    cr_assert(sh_pread_all(fd, &byte, 1, at));
    byte ^= 0x40;
    cr_assert(sh_pwrite_all(fd, &byte, 1, at));
    StBlock *b = saved_columns(fd, n, col_bytes);
    int k = 0, s = 1;
    const CmBatch *x = st_block_pin_cols(b, &k, 1, NULL, &err);
    cr_assert_not_null(x, "%s", err.msg);
    cr_expect_null(st_block_pin_cols(b, &s, 1, NULL, &err));
    cr_expect_eq(err.code, CM_IO);
    cr_expect(strstr(err.msg, saved_path) != NULL && strstr(err.msg, "column 2") != NULL, "%s",
              err.msg);
    for (int r = 0; r < n; r++) {
        cr_expect_eq(((const int64_t *)x->cols[0].data)[r], 4000 + r, "the read column stays");
    }
    cr_expect_null(x->cols[1].data);
    st_block_unpin(b);
    st_block_free(b);
    cr_expect_eq(res.held, 0);
    close(fd);
    unlink(saved_path);
}

/* Threads pin one column each of the same blocks, under eviction. */
#define COL_BLOCKS 8
static StBlock *col_shared[COL_BLOCKS];

static void *column_pinner(void *arg)
{
    int seed = (int)(uintptr_t)arg;
    CmErr e;
    cm_err_init(&e);
    for (int i = 0; i < 400; i++) {
        int bi = (seed * 7 + i) % COL_BLOCKS, col = (seed + i) % 3;
        const CmBatch *x = st_block_pin_cols(col_shared[bi], &col, 1, NULL, &e);
        if (x == NULL) {
            return (void *)1;
        }
        for (int r = 0; r < n_rows(); r++) {
            bool ok = col != 0 || ((const int64_t *)x->cols[0].data)[r] == 5000 + r;
            ok = ok && (col != 2 || cm_vec_is_null(&x->cols[2], (uint32_t)r) == (r % 5 == 2));
            ok = ok && (col != 1 || x->cols[1].data != NULL);
            if (!ok) {
                st_block_unpin(col_shared[bi]);
                return (void *)2;
            }
        }
        st_block_unpin(col_shared[bi]);
        if (i % 16 == seed % 16) {
            st_blocks_evict(1 << 20);
        }
    }
    return NULL;
}

Test(st_blocks, threads_pin_columns_of_the_same_blocks)
{
    int n = n_rows();
    int64_t col_bytes[3];
    int fd = write_columns(5, n, col_bytes);
    for (int i = 0; i < COL_BLOCKS; i++) {
        col_shared[i] = saved_columns(fd, n, col_bytes);
    }
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        pthread_create(&th[i], NULL, column_pinner, (void *)(uintptr_t)(i + 1));
    }
    for (int i = 0; i < 4; i++) {
        void *ret;
        pthread_join(th[i], &ret);
        cr_expect_null(ret, "thread %d: %p", i, ret);
    }
    for (int i = 0; i < COL_BLOCKS; i++) {
        const CmBatch *x = st_block_pin(col_shared[i], NULL, &err);
        cr_assert_not_null(x, "%s", err.msg);
        check_batch(x, 5, n);
        st_block_unpin(col_shared[i]);
        st_block_free(col_shared[i]);
    }
    cr_expect_eq(res.held, 0);
    close(fd);
    unlink(saved_path);
}

Test(st_blocks, a_view_pins_again_only_while_it_views_the_columns)
{
    int n = n_rows();
    int64_t col_bytes[3];
    int fd = write_columns(6, n, col_bytes);
    StBlock *b = saved_columns(fd, n, col_bytes);
    int k = 0;
    const CmBatch *x = st_block_pin_cols(b, &k, 1, NULL, &err);
    cr_assert_not_null(x, "%s", err.msg);
    CmVec cols[1];
    memset(cols, 0, sizeof cols);
    CmBatch view = {.n_rows = n, .n_cols = 1, .cols = cols};
    cm_vec_reference(&cols[0], &x->cols[0]);
    cr_expect(st_block_pin_view(b, &view), "a view of a loaded column");
    st_block_unpin(b);
    int64_t other[CM_BATCH_CAP];
    cols[0].data = other;
    cr_expect_not(st_block_pin_view(b, &view), "a changed vector is not the block's");
    cm_vec_reference(&cols[0], &x->cols[0]);
    st_block_unpin(b);
    st_blocks_evict(1 << 30);
    cr_expect_not(st_block_pin_view(b, &view), "an evicted block is not pinned again");
    st_block_free(b);
    cr_expect_eq(res.held, 0);
    close(fd);
    unlink(saved_path);
}
