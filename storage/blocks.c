/*
 * blocks.c - the tiered block store (blocks.h).
 *
 * Invariants, under g.lock: a block is on the LRU list exactly when it is
 * sealed, resident, unpinned and in state IDLE (most recently unpinned at the
 * head); memory_bytes is the sum of mem_bytes over resident blocks.  A block
 * in state LOADING or EVICTING is owned by the thread doing the I/O, which
 * runs without the lock; a pinner that finds it so waits on g.cond.  Disk
 * writes are serialized by g.io_lock (one compression context); the file's
 * extents are handed out under g.lock.
 */
#define _GNU_SOURCE
#include "storage/blocks.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/thread.h"
#include "shuffle/block.h"
#include "shuffle/spill.h"

typedef enum BlockState { IDLE, LOADING, EVICTING } BlockState;

struct StBlock {
    StBlockLevel level;
    int n_cols;
    CmType *types; /* owned */
    CmMemRes *res; /* borrowed: where mem_bytes is reserved */
    StBlockDropped dropped;
    void *owner;
    CmBatch *batch;       /* owned; NULL when not resident */
    int64_t mem_bytes;    /* reserved on res for batch */
    StBlockLoc loc;       /* the disk copy; bytes 0 when none */
    int64_t heap_bytes;   /* its batch's string heap when last evicted (heap.n_bytes): a
                             load gives the heap one buffer of about that size (heap_class) */
    StBlockHome *home;    /* borrowed: where its first eviction writes it, or NULL */
    const char *saved_in; /* a saved block's file (st_block_new_saved): its copy is a record
                             there, not an extent of the store's file; else NULL */
    int saved_rows;       /* a saved block's rows: every record it reads must hold them */
    int64_t *col_off;     /* a saved block in column records: n_cols + 1 offsets, from
                             loc.offset, of each column's record (the last: its end); owned.
                             NULL: one record of every column */
    bool *col_load;       /* with col_off: the columns the thread LOADING it reads; owned */
    int pins;
    bool sealed;
    bool gone;  /* a MEMORY_ONLY block that was dropped */
    bool freed; /* st_block_free came while another thread did I/O on it */
    BlockState state;
    bool in_lru;
    StBlock *lru_prev, *lru_next;
};

/* What one load needs besides the batch: a decompression context (a zstd one
 * is costly to make) and the buffer the record is read into.  Both are kept
 * for the next load: a table scanned at a quarter of its size evicts and
 * reads back a block for every block it pins, and a buffer made and freed
 * each time is pages given back and faulted in again. */
typedef struct Loader {
    ShDecoder dec;
    unsigned char *rec; /* owned */
    size_t cap;
} Loader;

/* The pool of column buffers kept from evicted blocks (pool_keep). */
#define POOL_BYTES ((int64_t)2 << 20)
#define POOL_BUFS 256

/* Read and write buffers larger than this are not kept. */
#define KEEP_BUF_BYTES ((size_t)1 << 20)

typedef struct Extent {
    int64_t offset, bytes;
} Extent;

typedef struct Store {
    CmMutex lock;
    CmCond cond;       /* a block's I/O ended */
    StBlock *lru_head; /* most recently unpinned */
    StBlock *lru_tail; /* the next to evict */
    StBlocksStats stats;
    /* the disk tier */
    char dir[256];
    int64_t max_temp;
    int fd;            /* -1 until the first write */
    int64_t file_size; /* bytes of the file, free extents included */
    Extent *free_ext;  /* owned; sorted by offset, adjacent ones merged */
    int n_free, cap_free;
    bool evict_on_unpin; /* SLUICE_EVICT_ON_UNPIN=1: evict every block as soon as it is
                            unpinned (a test setting: a stale pointer to a block's data
                            then reads freed memory, which ASan reports) */
    CmMutex pool_lock;   /* guards the pool of kept column buffers */
    CmMemRes pool_res;   /* storage memory: the bytes of the pool's buffers */
    int n_pool;
    int64_t pool_bytes;
    void *pool_buf[POOL_BUFS];
    size_t pool_size[POOL_BUFS];
    Loader *loaders[8]; /* idle decompression contexts and read buffers, for the next loads */
    int n_loaders;
    CmMutex io_lock;     /* serializes writers: one compression context */
    ShCompressor *cctx;  /* of the disk codec when it was last used; owned, under io_lock */
    unsigned char *wrec; /* the record being written, kept for the next; under io_lock */
    size_t wrec_cap;
} Store;

static Store g;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void store_init(void)
{
    cm_mutex_init(&g.lock);
    cm_mutex_init(&g.io_lock);
    cm_mutex_init(&g.pool_lock);
    cm_mem_res_init(&g.pool_res, CM_MEM_STORAGE, "block buffers", NULL);
    cm_cond_init(&g.cond);
    g.fd = -1;
    const char *tmp = getenv("TMPDIR");
    snprintf(g.dir, sizeof g.dir, "%s", tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    const char *eager = getenv("SLUICE_EVICT_ON_UNPIN");
    g.evict_on_unpin = eager != NULL && strcmp(eager, "1") == 0;
    cm_mem_set_evictor(st_blocks_evict);
}

static Store *store(void)
{
    pthread_once(&g_once, store_init);
    return &g;
}

void st_blocks_configure(const char *temp_dir, int64_t max_temp)
{
    Store *s = store();
    cm_mutex_lock(&s->lock);
    if (s->fd < 0) {
        snprintf(s->dir, sizeof s->dir, "%s", temp_dir);
    }
    s->max_temp = max_temp;
    cm_mutex_unlock(&s->lock);
}

void st_blocks_temp(char *dir, size_t cap, int64_t *max_temp)
{
    Store *s = store();
    cm_mutex_lock(&s->lock);
    snprintf(dir, cap, "%s", s->dir);
    *max_temp = s->max_temp;
    cm_mutex_unlock(&s->lock);
}

/* ---- memory ------------------------------------------------------------------------- */

/* A block's string heap grows by chunks of this size: small, since a block's
 * strings are few when batches are (a 3-row build has thousands of blocks). */
#define HEAP_CHUNK                                                                                 \
    (CM_BATCH_CAP * 8 < 256 ? 256 : CM_BATCH_CAP * 8 > 16384 ? 16384 : CM_BATCH_CAP * 8)

static size_t column_bytes(CmType type)
{
    return cm_type_width(type) * CM_BATCH_CAP;
}

/* The bytes of a block's batch before any string is added. */
static int64_t fixed_bytes(const StBlock *b)
{
    int64_t n = (int64_t)sizeof(CmBatch) + (int64_t)sizeof(CmVec) * b->n_cols;
    for (int i = 0; i < b->n_cols; i++) {
        n += (int64_t)column_bytes(b->types[i]);
    }
    return n;
}

/* Bytes block b's batch holds: its vectors and arrays (fixed_bytes), and its
 * string heap (what it handed out, and the unused end of its newest chunk). */
static int64_t batch_bytes(const StBlock *b, const CmBatch *batch)
{
    int64_t heap = (int64_t)batch->heap.n_bytes;
    return fixed_bytes(b) + (heap > 0 ? heap + HEAP_CHUNK : 0);
}

/* Evicts least recently used blocks until `bytes` are released or none is
 * left (st_blocks_evict); with `cold` their pages go back at once
 * (batch_release). */
static int64_t evict_some(int64_t bytes, bool cold);

/* Reserves `bytes` more on res, evicting unpinned blocks while the limit is in
 * the way: the block that needs them takes the freed buffers.  Called without
 * the lock. */
static CmStatus reserve(CmMemRes *res, int64_t bytes, CmErr *err)
{
    while (!cm_mem_grow(res, bytes)) {
        if (evict_some(bytes, false) == 0) {
            return cm_mem_need(res, bytes, err); /* for its message, or a late fit */
        }
    }
    return CM_OK;
}

static void lru_remove(Store *s, StBlock *b)
{
    if (!b->in_lru) {
        return;
    }
    if (b->lru_prev != NULL) {
        b->lru_prev->lru_next = b->lru_next;
    } else {
        s->lru_head = b->lru_next;
    }
    if (b->lru_next != NULL) {
        b->lru_next->lru_prev = b->lru_prev;
    } else {
        s->lru_tail = b->lru_prev;
    }
    b->lru_prev = b->lru_next = NULL;
    b->in_lru = false;
}

/* Puts b at the evicting end (st_block_unpin_cold). */
static void lru_push_tail(Store *s, StBlock *b)
{
    b->lru_next = NULL;
    b->lru_prev = s->lru_tail;
    if (s->lru_tail != NULL) {
        s->lru_tail->lru_next = b;
    } else {
        s->lru_head = b;
    }
    s->lru_tail = b;
    b->in_lru = true;
}

static void lru_push(Store *s, StBlock *b)
{
    b->lru_prev = NULL;
    b->lru_next = s->lru_head;
    if (s->lru_head != NULL) {
        s->lru_head->lru_prev = b;
    } else {
        s->lru_tail = b;
    }
    s->lru_head = b;
    b->in_lru = true;
}

/* ---- column buffers kept from evicted blocks for the next blocks made -------------- */

/* A table scanned through a fraction of its size evicts a block for every block
 * it loads (PageRank's edges, 240 MB at a 173 MiB limit: 3,747 chunks a round),
 * and freeing the evicted block's vectors and allocating the loaded block's gave
 * the pages back and faulted them in again, at 10 us a 4 KiB page here.  So an
 * evicted block's column buffers go to a small pool that the next block made
 * takes them from.  The pool's bytes are storage memory, reserved on its own
 * consumer ("block buffers"), and at most POOL_BYTES.  A block's vectors are
 * reserved before they are allocated, so that the blocks evicted for them come
 * first. */
/* Keeps buf, a column buffer of `bytes`, when the pool has room under cap. */
static bool pool_keep(Store *s, void *buf, size_t bytes, int64_t cap)
{
    cm_mutex_lock(&s->pool_lock);
    bool kept = s->n_pool < POOL_BUFS && s->pool_bytes + (int64_t)bytes <= cap &&
                cm_mem_grow(&s->pool_res, (int64_t)bytes);
    if (kept) {
        s->pool_buf[s->n_pool] = buf;
        s->pool_size[s->n_pool++] = bytes;
        s->pool_bytes += (int64_t)bytes;
    }
    cm_mutex_unlock(&s->pool_lock);
    return kept;
}

/* A kept buffer of `bytes`, or NULL. */
static void *pool_take(Store *s, size_t bytes)
{
    void *buf = NULL;
    cm_mutex_lock(&s->pool_lock);
    for (int i = s->n_pool - 1; i >= 0; i--) {
        if (s->pool_size[i] == bytes) {
            buf = s->pool_buf[i];
            s->n_pool--;
            s->pool_buf[i] = s->pool_buf[s->n_pool];
            s->pool_size[i] = s->pool_size[s->n_pool];
            s->pool_bytes -= (int64_t)bytes;
            cm_mem_shrink(&s->pool_res, (int64_t)bytes);
            break;
        }
    }
    cm_mutex_unlock(&s->pool_lock);
    return buf;
}

/* Frees the pool's buffers; returns their bytes.  For the evictor, when no
 * block is left to evict. */
static int64_t pool_drain(Store *s)
{
    void *bufs[POOL_BUFS];
    cm_mutex_lock(&s->pool_lock);
    int n = s->n_pool;
    int64_t bytes = s->pool_bytes;
    memcpy(bufs, s->pool_buf, sizeof(void *) * (size_t)n);
    s->n_pool = 0;
    s->pool_bytes = 0;
    cm_mem_shrink(&s->pool_res, bytes);
    cm_mutex_unlock(&s->pool_lock);
    for (int i = 0; i < n; i++) {
        cm_free(bufs[i]);
    }
    return bytes;
}

/* The buffer a loaded block's string heap gets, for heap_bytes of strings:
 * rounded up to a multiple of HEAP_CHUNK (batch_bytes' slack; 16 KiB for
 * batches of 2048 rows, 256 bytes for 3-row ones), so that blocks of about
 * the same text share a size in the pool. */
static size_t heap_class(int64_t heap_bytes)
{
    const size_t step = HEAP_CHUNK;
    return heap_bytes > 0 ? ((size_t)heap_bytes + 64 + step - 1) / step * step : 0;
}

/* A batch of b's columns, on kept buffers where the pool has them, and its
 * heap on one buffer of heap_class(b->heap_bytes) when b was resident before. */
static CmBatch *batch_new(Store *s, const StBlock *b, CmErr *err)
{
    CmBatch *batch = cm_calloc(1, sizeof *batch);
    if (batch == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory allocating a block");
        return NULL;
    }
    cm_arena_init(&batch->heap, HEAP_CHUNK);
    /* a block's rows are all active: no selection, so no selection buffer */
    batch->cols = cm_calloc((size_t)(b->n_cols > 0 ? b->n_cols : 1), sizeof(CmVec));
    if (batch->cols == NULL) {
        goto oom;
    }
    for (int i = 0; i < b->n_cols; i++) {
        CmVec *v = &batch->cols[i];
        size_t bytes = column_bytes(b->types[i]);
        v->type = b->types[i];
        if ((v->data_buf = pool_take(s, bytes)) == NULL &&
            (v->data_buf = cm_malloc(bytes)) == NULL) {
            goto oom;
        }
        v->data = v->data_buf;
        batch->n_cols = i + 1;
    }
    size_t hb = heap_class(b->heap_bytes);
    void *heap = hb > 0 ? pool_take(s, hb) : NULL;
    if (heap == NULL && hb > 0) {
        heap = cm_malloc(hb); /* NULL: the heap makes its chunks as it goes */
    }
    if (heap != NULL) {
        cm_arena_adopt(&batch->heap, heap, hb);
    }
    return batch;
oom:
    cm_batch_fini(batch);
    cm_free(batch);
    cm_err_set(err, CM_OOM, -1, "out of memory allocating a block");
    return NULL;
}

static void batch_free(CmBatch *batch)
{
    if (batch != NULL) {
        cm_batch_fini(batch);
        cm_free(batch);
    }
}

/* batch_free for an evicted batch, whose reservation is already released: its
 * column buffers go to the pool while it has room; with `cold` (not NULL),
 * those that do not go to it, to have their pages given back at once.  A
 * string heap of several chunks is freed plainly: giving those back too made
 * TeraSort at 448 MiB fault twice as often (5.3-5.6 -> 7.5 s), its sort
 * taking the freed pages at once in blocks of its own. */
static void batch_release(Store *s, CmBatch *batch, CmColdFree *cold)
{
    if (batch == NULL) {
        return;
    }
    /* under SLUICE_EVICT_ON_UNPIN freed at once, so that ASan sees a stale read */
    int64_t cap = s->evict_on_unpin ? 0 : cm_mem_limit() / 64;
    cap = cap < POOL_BYTES ? cap : POOL_BYTES;
    for (int i = 0; i < batch->n_cols && (cap > 0 || cold != NULL); i++) {
        CmVec *v = &batch->cols[i];
        if (v->data_buf == NULL) {
            continue;
        }
        if (pool_keep(s, v->data_buf, column_bytes(v->type), cap)) {
            v->data_buf = NULL;
        } else if (cold != NULL) {
            cm_cold_add(cold, v->data_buf);
            v->data_buf = NULL;
        }
    }
    size_t hb;
    void *heap = cap > 0 || cold != NULL ? cm_arena_disown(&batch->heap, &hb) : NULL;
    if (heap != NULL && !(cap > 0 && pool_keep(s, heap, hb, cap))) {
        if (cold != NULL) {
            cm_cold_add(cold, heap);
        } else {
            cm_free(heap);
        }
    }
    batch_free(batch);
}

/* ---- the disk tier ------------------------------------------------------------------- */

/* Opens the file on first use; under the lock. */
static CmStatus open_file(Store *s, CmErr *err)
{
    if (s->fd >= 0) {
        return CM_OK;
    }
    /* An unnamed file: gone when closed, whatever happens to the process. */
    s->fd = open(s->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (s->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        char path[300];
        snprintf(path, sizeof path, "%s/sluice-blocks-XXXXXX", s->dir);
        s->fd = mkostemp(path, O_CLOEXEC);
        if (s->fd >= 0) {
            unlink(path);
        }
    }
    if (s->fd < 0) {
        return cm_err_set(err, CM_IO, -1, "cannot create the block file in temp_directory '%s': %s",
                          s->dir, strerror(errno));
    }
    return CM_OK;
}

/* An extent of `bytes` for a new record: the first free one large enough (the
 * rest stays free), else the end of the file, charged to max_temp.  Under the
 * lock. */
static CmStatus alloc_extent(Store *s, int64_t bytes, int64_t *offset, CmErr *err)
{
    for (int i = 0; i < s->n_free; i++) {
        Extent *e = &s->free_ext[i];
        if (e->bytes >= bytes) {
            *offset = e->offset;
            e->offset += bytes;
            e->bytes -= bytes;
            if (e->bytes == 0) {
                memmove(e, e + 1, sizeof(Extent) * (size_t)(s->n_free - i - 1));
                s->n_free--;
            }
            return CM_OK;
        }
    }
    if (sh_temp_charge(bytes, s->max_temp, s->dir, err) != CM_OK) {
        return err->code;
    }
    *offset = s->file_size;
    s->file_size += bytes;
    s->stats.file_bytes = s->file_size;
    return CM_OK;
}

/* Gives an extent back: merged with its free neighbours; the file's free tail
 * is cut off (and uncharged).  Under the lock. */
static void free_extent(Store *s, int64_t offset, int64_t bytes)
{
    if (bytes <= 0) {
        return;
    }
    int i = 0;
    while (i < s->n_free && s->free_ext[i].offset < offset) {
        i++;
    }
    bool left = i > 0 && s->free_ext[i - 1].offset + s->free_ext[i - 1].bytes == offset;
    bool right = i < s->n_free && offset + bytes == s->free_ext[i].offset;
    if (left && right) {
        s->free_ext[i - 1].bytes += bytes + s->free_ext[i].bytes;
        memmove(&s->free_ext[i], &s->free_ext[i + 1], sizeof(Extent) * (size_t)(s->n_free - i - 1));
        s->n_free--;
        i--;
    } else if (left) {
        s->free_ext[--i].bytes += bytes;
    } else if (right) {
        s->free_ext[i].offset = offset;
        s->free_ext[i].bytes += bytes;
    } else {
        if (s->n_free == s->cap_free) {
            int cap = s->cap_free ? s->cap_free * 2 : 16;
            Extent *grown = cm_realloc(s->free_ext, sizeof(Extent) * (size_t)cap);
            if (grown == NULL) {
                return; /* the extent is lost until the process ends: only space */
            }
            s->free_ext = grown;
            s->cap_free = cap;
        }
        memmove(&s->free_ext[i + 1], &s->free_ext[i], sizeof(Extent) * (size_t)(s->n_free - i));
        s->free_ext[i] = (Extent){offset, bytes};
        s->n_free++;
    }
    Extent *e = &s->free_ext[i];
    if (e->offset + e->bytes == s->file_size) {
        /* the free tail of the file goes back to the file system */
        s->file_size = e->offset;
        s->stats.file_bytes = s->file_size;
        CmErr ignored;
        cm_err_init(&ignored);
        sh_temp_charge(-e->bytes, 0, s->dir, &ignored);
        if (ftruncate(s->fd, (off_t)s->file_size) != 0) {
            /* the space stays used until the file closes; nothing is wrong */
        }
        s->n_free--;
    }
}

/* Writes b's batch as one record (b is EVICTING or being sealed: nobody
 * changes it meanwhile).  Called without the lock. */
static CmStatus write_block(Store *s, StBlock *b, CmErr *err)
{
    CmStatus st = CM_OK;
    unsigned char *rec = NULL;
    ShBlock *blk = sh_block_encode(b->batch, err);
    if (blk == NULL) {
        return err->code;
    }
    cm_mutex_lock(&s->io_lock);
    int codec = sh_disk_codec();
    if (s->cctx != NULL &&
        (codec == SH_BLOCK_CODEC_NONE || sh_compressor_codec(s->cctx) != codec)) {
        sh_compressor_free(s->cctx);
        s->cctx = NULL;
    }
    if (s->cctx == NULL && codec != SH_BLOCK_CODEC_NONE &&
        (s->cctx = sh_compressor_new(codec)) == NULL) {
        st = cm_err_set(err, CM_OOM, -1, "out of memory writing a block");
        goto done;
    }
    size_t bound = sh_compress_bound((size_t)blk->hdr.raw_bytes);
    size_t stored = (size_t)blk->hdr.stored_bytes;
    size_t need = SH_DISK_HDR_BYTES + (size_t)SH_ALIGN8((int64_t)(bound > stored ? bound : stored));
    if (need > s->wrec_cap) {
        cm_free(s->wrec);
        s->wrec_cap = 0;
        if ((s->wrec = cm_malloc(need)) == NULL) {
            st = cm_err_set(err, CM_OOM, -1, "out of memory writing a block");
            goto done;
        }
        s->wrec_cap = need;
    }
    rec = s->wrec;
    int64_t bytes = sh_block_lay_record(blk, s->cctx, rec);
    int64_t offset = 0;
    cm_mutex_lock(&s->lock);
    st = open_file(s, err);
    if (st == CM_OK) {
        st = alloc_extent(s, bytes, &offset, err);
    }
    int fd = s->fd;
    cm_mutex_unlock(&s->lock);
    if (st != CM_OK) {
        goto done;
    }
    if (!sh_pwrite_all(fd, rec, (size_t)bytes, offset)) {
        int e = errno;
        cm_mutex_lock(&s->lock);
        free_extent(s, offset, bytes);
        cm_mutex_unlock(&s->lock);
        st = cm_err_set(err, CM_IO, -1, "cannot write the block file in temp_directory '%s': %s",
                        s->dir, e ? strerror(e) : "short write");
        goto done;
    }
    cm_mutex_lock(&s->lock);
    b->loc = (StBlockLoc){.fd = fd, .offset = offset, .bytes = bytes};
    s->stats.disk_bytes += bytes;
    s->stats.temp_written += bytes;
    cm_mutex_unlock(&s->lock);
done:
    if (s->wrec_cap > KEEP_BUF_BYTES) {
        cm_free(s->wrec);
        s->wrec = NULL;
        s->wrec_cap = 0;
    }
    cm_mutex_unlock(&s->io_lock);
    cm_free(blk);
    return st;
}

static void loader_free(Loader *ld)
{
    sh_decoder_fini(&ld->dec);
    cm_free(ld->rec);
    cm_free(ld);
}

/* A loader for one load whose record is `bytes` long: an idle one, or a new
 * one; NULL when memory is short. */
static Loader *loader_take(Store *s, size_t bytes)
{
    Loader *ld = NULL;
    cm_mutex_lock(&s->lock);
    if (s->n_loaders > 0) {
        ld = s->loaders[--s->n_loaders];
    }
    cm_mutex_unlock(&s->lock);
    if (ld == NULL && (ld = cm_calloc(1, sizeof *ld)) != NULL) {
        sh_decoder_init(&ld->dec);
    }
    if (ld != NULL && bytes > ld->cap) {
        cm_free(ld->rec);
        ld->cap = 0;
        if ((ld->rec = cm_malloc(bytes)) != NULL) {
            ld->cap = bytes;
        }
    }
    if (ld != NULL && ld->rec == NULL) {
        loader_free(ld);
        ld = NULL;
    }
    return ld;
}

static void loader_give(Store *s, Loader *ld)
{
    if (ld == NULL) {
        return;
    }
    if (ld->cap > KEEP_BUF_BYTES) {
        cm_free(ld->rec);
        ld->rec = NULL;
        ld->cap = 0;
    }
    cm_mutex_lock(&s->lock);
    bool kept = s->n_loaders < (int)(sizeof s->loaders / sizeof s->loaders[0]);
    if (kept) {
        s->loaders[s->n_loaders++] = ld;
    }
    cm_mutex_unlock(&s->lock);
    if (!kept) {
        loader_free(ld);
    }
}

/* Reads b's record back into a new batch.  Called without the lock. */
static CmBatch *read_block(Store *s, const StBlock *b, CmErr *err)
{
    CmBatch *batch = NULL;
    Loader *ld = loader_take(s, (size_t)b->loc.bytes);
    if (ld == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory reading a block");
        goto done;
    }
    unsigned char *rec = ld->rec;
    ShDecoder *dec = &ld->dec;
    ShBlockHeader h;
    if (!sh_pread_all(b->loc.fd, rec, (size_t)b->loc.bytes, b->loc.offset)) {
        if (b->saved_in != NULL) {
            cm_err_set(err, CM_IO, -1, "cannot read '%s': %s", b->saved_in,
                       errno ? strerror(errno) : "it is truncated");
        } else {
            cm_err_set(err, CM_IO, -1, "cannot read the block file in temp_directory '%s': %s",
                       s->dir, errno ? strerror(errno) : "short read");
        }
        goto done;
    }
    if (!sh_block_header_unpack(rec, &h) || sh_block_record_bytes(&h) != b->loc.bytes ||
        (b->saved_in != NULL && h.n_rows != b->saved_rows)) {
        if (b->saved_in != NULL) {
            cm_err_set(err, CM_IO, -1, "'%s' is damaged: the record at offset %lld is wrong",
                       b->saved_in, (long long)b->loc.offset);
        } else {
            cm_err_set(err, CM_IO, -1, "a block in the block file in '%s' is damaged", s->dir);
        }
        goto done;
    }
    batch = batch_new(s, b, err);
    CmErr inner;
    cm_err_init(&inner);
    if (batch != NULL &&
        sh_block_decode_stored(&h, rec + SH_DISK_HDR_BYTES, batch, dec, &inner) != CM_OK) {
        if (b->saved_in != NULL && inner.code == CM_IO) {
            cm_err_set(err, CM_IO, -1,
                       "'%s' is damaged: the record at offset %lld fails its checksum or does not "
                       "decode",
                       b->saved_in, (long long)b->loc.offset);
        } else {
            cm_err_set(err, inner.code, -1, "%s", inner.msg);
        }
        batch_free(batch);
        batch = NULL;
    }
done:
    loader_give(s, ld);
    return batch;
}

/* ---- saved blocks in column records ------------------------------------------------- */

/* A saved block whose columns are records of their own (st_block_new_saved
 * with col_bytes) is loaded a column at a time: a scan pins it with the
 * columns it reads (st_block_pin_cols), and only those are read and decoded.
 * Its batch is made empty on the first pin (every vector typed, none with a
 * buffer) and gains columns on later pins while others read the ones it has:
 * a load writes only vectors nobody reads yet and appends to the heap, whose
 * older bytes never move.  Eviction drops the batch whole.  A column is
 * held when its vector has data (written only while the block is LOADING,
 * read under the lock once it is IDLE, or by its pinners).  Its memory is
 * measured by what it holds (cols_batch_bytes). */

static int64_t shell_bytes(const StBlock *b)
{
    return (int64_t)sizeof(CmBatch) + (int64_t)sizeof(CmVec) * b->n_cols;
}

/* Bytes a column block's batch holds: its vectors, the arrays of the columns
 * loaded, its string heap (as batch_bytes counts it). */
static int64_t cols_batch_bytes(const StBlock *b, const CmBatch *batch)
{
    int64_t n = shell_bytes(b);
    for (int i = 0; i < b->n_cols; i++) {
        n += batch->cols[i].data != NULL ? (int64_t)column_bytes(b->types[i]) : 0;
    }
    int64_t heap = (int64_t)batch->heap.n_bytes;
    return n + (heap > 0 ? heap + HEAP_CHUNK : 0);
}

/* A batch of b's columns, typed, none loaded; NULL with err on OOM. */
static CmBatch *batch_shell(const StBlock *b, CmErr *err)
{
    CmBatch *batch = cm_calloc(1, sizeof *batch);
    if (batch == NULL ||
        (batch->cols = cm_calloc((size_t)(b->n_cols > 0 ? b->n_cols : 1), sizeof(CmVec))) == NULL) {
        cm_free(batch);
        cm_err_set(err, CM_OOM, -1, "out of memory allocating a block");
        return NULL;
    }
    cm_arena_init(&batch->heap, HEAP_CHUNK);
    batch->n_cols = b->n_cols;
    batch->n_rows = b->saved_rows;
    for (int i = 0; i < b->n_cols; i++) {
        batch->cols[i].type = b->types[i];
    }
    return batch;
}

/* The error for column `col`'s record of saved block b, which is damaged. */
static CmStatus damaged_column(const StBlock *b, int col, CmErr *err)
{
    return cm_err_set(err, CM_IO, -1,
                      "'%s' is damaged: the record of column %d at offset %lld fails its checksum "
                      "or does not decode",
                      b->saved_in, col + 1, (long long)(b->loc.offset + b->col_off[col]));
}

/* Decodes column k's record at rec (bytes long) into batch; CM_OK or err. */
static CmStatus decode_saved_column(Store *s, StBlock *b, CmBatch *batch, int k,
                                    const unsigned char *rec, int64_t bytes, ShDecoder *dec,
                                    CmErr *err)
{
    ShBlockHeader h;
    if (!sh_block_header_unpack(rec, &h) || sh_block_record_bytes(&h) != bytes ||
        h.n_rows != b->saved_rows) {
        return damaged_column(b, k, err);
    }
    CmVec *v = &batch->cols[k];
    size_t cb = column_bytes(b->types[k]);
    if ((v->data_buf = pool_take(s, cb)) == NULL && (v->data_buf = cm_malloc(cb)) == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory loading a block");
    }
    v->data = v->data_buf;
    v->kind = CM_VEC_FLAT;
    CmErr inner;
    cm_err_init(&inner);
    if (sh_block_decode_column_stored(&h, rec + SH_DISK_HDR_BYTES, v, &batch->heap, dec, &inner) !=
        CM_OK) {
        cm_vec_fini(v);
        v->validity = NULL;
        return inner.code == CM_IO ? damaged_column(b, k, err)
                                   : cm_err_set(err, inner.code, -1, "%s", inner.msg);
    }
    return CM_OK;
}

/* Reads the columns b->col_load marks into batch: each run of adjacent
 * records with one pread.  b is LOADING (this thread alone writes its
 * batch's missing columns).  Called without the lock.  On failure the
 * columns read before it stay in the batch (load_columns takes them out). */
static CmStatus read_columns(Store *s, StBlock *b, CmBatch *batch, CmErr *err)
{
    for (int c = 0; c < b->n_cols;) {
        if (!b->col_load[c]) {
            c++;
            continue;
        }
        int e = c + 1;
        while (e < b->n_cols && b->col_load[e]) {
            e++;
        }
        int64_t off = b->col_off[c], bytes = b->col_off[e] - off;
        Loader *ld = loader_take(s, (size_t)bytes);
        if (ld == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory reading a block");
        }
        CmStatus st = CM_OK;
        errno = 0;
        if (!sh_pread_all(b->loc.fd, ld->rec, (size_t)bytes, b->loc.offset + off)) {
            st = cm_err_set(err, CM_IO, -1, "cannot read '%s': %s", b->saved_in,
                            errno ? strerror(errno) : "it is truncated");
        }
        for (int k = c; k < e && st == CM_OK; k++) {
            st = decode_saved_column(s, b, batch, k, ld->rec + (b->col_off[k] - off),
                                     b->col_off[k + 1] - b->col_off[k], &ld->dec, err);
        }
        loader_give(s, ld);
        if (st != CM_OK) {
            return st;
        }
        c = e;
    }
    return CM_OK;
}

/* st_block_pin_cols for a column block b, which this thread made LOADING
 * (b->col_load: the columns to read; none with a new batch is fine).
 * Returns the batch, whose bytes are then *bytes (b->mem_bytes is the
 * caller's to set, under the lock), or NULL with err. */
static CmBatch *load_columns(Store *s, StBlock *b, bool *any_read, int64_t *bytes, CmErr *err)
{
    CmBatch *batch = b->batch;
    bool is_new = batch == NULL;
    int64_t before = b->mem_bytes;
    int64_t need = is_new ? shell_bytes(b) : 0;
    bool *added = b->col_load; /* what this call reads: the batch afterwards tells what it got */
    *any_read = false;
    for (int i = 0; i < b->n_cols; i++) {
        need += added[i] ? (int64_t)column_bytes(b->types[i]) : 0;
        *any_read |= added[i];
    }
    CmStatus st = reserve(b->res, need, err);
    bool granted = st == CM_OK;
    if (granted && is_new && (batch = batch_shell(b, err)) == NULL) {
        st = err->code;
    }
    if (st == CM_OK) {
        st = read_columns(s, b, batch, err);
    }
    int64_t after = st == CM_OK ? cols_batch_bytes(b, batch) : 0;
    if (st == CM_OK && after > before + need) {
        st = reserve(b->res, after - (before + need), err);
    } else if (st == CM_OK && after < before + need) {
        cm_mem_shrink(b->res, before + need - after);
    }
    if (st != CM_OK) {
        if (granted) {
            cm_mem_shrink(b->res, need);
        }
        /* The columns read now go again (their strings stay in the heap,
         * unreserved, until the block is evicted: a failed load is rare). */
        for (int i = 0; batch != NULL && i < b->n_cols; i++) {
            if (added[i] && batch->cols[i].data != NULL) {
                cm_vec_fini(&batch->cols[i]);
                batch->cols[i].validity = NULL;
            }
        }
        if (is_new) {
            batch_free(batch);
        }
        return NULL;
    }
    *bytes = after;
    return batch;
}

/* ---- blocks ------------------------------------------------------------------------ */

static int64_t evict_one(Store *s, StBlock *only, CmColdFree *cold);

/* DISK_ONLY: in memory only while pinned.  Frees b's batch (it is on disk)
 * when nobody pins it; LRU order does not apply.  Called without the lock. */
static void unload_if_idle(Store *s, StBlock *b)
{
    cm_mutex_lock(&s->lock);
    if (!b->in_lru || b->pins != 0 || b->state != IDLE || b->loc.bytes == 0) {
        cm_mutex_unlock(&s->lock);
        return;
    }
    lru_remove(s, b);
    CmBatch *batch = b->batch;
    int64_t bytes = b->mem_bytes;
    b->batch = NULL;
    b->mem_bytes = 0;
    s->stats.n_resident--;
    s->stats.memory_bytes -= bytes;
    s->stats.evictions++;
    cm_mutex_unlock(&s->lock);
    cm_mem_shrink(b->res, bytes);
    batch_release(s, batch, NULL);
}

StBlock *st_block_new(StBlockLevel level, int n_cols, const CmType *types, CmMemRes *res,
                      StBlockDropped dropped, void *owner, CmErr *err)
{
    Store *s = store();
    StBlock *b = cm_calloc(1, sizeof *b);
    if (b == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory allocating a block");
        return NULL;
    }
    b->level = level;
    b->n_cols = n_cols;
    b->res = res;
    b->dropped = dropped;
    b->owner = owner;
    b->pins = 1;
    b->types = cm_malloc(sizeof(CmType) * (size_t)(n_cols > 0 ? n_cols : 1));
    if (b->types == NULL) {
        cm_free(b);
        cm_err_set(err, CM_OOM, -1, "out of memory allocating a block");
        return NULL;
    }
    memcpy(b->types, types, sizeof(CmType) * (size_t)n_cols);
    int64_t bytes = fixed_bytes(b);
    /* reserved first: the blocks it evicts leave their buffers in the pool */
    CmStatus st = reserve(res, bytes, err);
    if (st == CM_OK && (b->batch = batch_new(s, b, err)) == NULL) {
        cm_mem_shrink(res, bytes);
        st = err->code;
    }
    if (st != CM_OK) {
        cm_free(b->types);
        cm_free(b);
        return NULL;
    }
    b->mem_bytes = bytes;
    cm_mutex_lock(&s->lock);
    s->stats.n_blocks++;
    s->stats.n_resident++;
    s->stats.memory_bytes += bytes;
    cm_mutex_unlock(&s->lock);
    return b;
}

static void block_free_arrays(StBlock *b)
{
    cm_free(b->types);
    cm_free(b->col_off);
    cm_free(b->col_load);
}

/* A saved block's column records (col_bytes[i] bytes each, back to back):
 * their n_cols + 1 offsets and the flags of a load, in *col_off and
 * *col_load (owned); both NULL when col_bytes is.  False on OOM (nothing
 * allocated). */
static bool column_layout(int n_cols, const int64_t *col_bytes, int64_t **col_off, bool **col_load)
{
    *col_off = NULL;
    *col_load = NULL;
    if (col_bytes == NULL) {
        return true;
    }
    size_t n = (size_t)(n_cols > 0 ? n_cols : 1);
    if ((*col_off = cm_malloc(sizeof(int64_t) * (n + 1))) == NULL ||
        (*col_load = cm_calloc(n, sizeof(bool))) == NULL) {
        cm_free(*col_off);
        *col_off = NULL;
        return false;
    }
    for (int i = 0; i <= n_cols; i++) {
        (*col_off)[i] = i == 0 ? 0 : (*col_off)[i - 1] + col_bytes[i - 1];
    }
    return true;
}

StBlock *st_block_new_saved(int n_cols, const CmType *types, CmMemRes *res, int n_rows,
                            StBlockLoc loc, const int64_t *col_bytes, const char *path, CmErr *err)
{
    Store *s = store();
    StBlock *b = cm_calloc(1, sizeof *b);
    size_t n = (size_t)(n_cols > 0 ? n_cols : 1);
    bool ok = b != NULL && (b->types = cm_malloc(sizeof(CmType) * n)) != NULL &&
              column_layout(n_cols, col_bytes, &b->col_off, &b->col_load);
    if (!ok) {
        if (b != NULL) {
            block_free_arrays(b);
        }
        cm_free(b);
        cm_err_set(err, CM_OOM, -1, "out of memory allocating a block");
        return NULL;
    }
    b->saved_rows = n_rows;
    memcpy(b->types, types, sizeof(CmType) * (size_t)n_cols);
    b->level = ST_BLOCK_MEMORY_AND_DISK;
    b->n_cols = n_cols;
    b->res = res;
    b->loc = loc;
    b->saved_in = path;
    b->sealed = true;
    cm_mutex_lock(&s->lock);
    s->stats.n_blocks++;
    cm_mutex_unlock(&s->lock);
    return b;
}

const char *st_block_saved(const StBlock *b, int *n_rows, bool *by_column)
{
    *n_rows = b->saved_rows;
    *by_column = b->col_off != NULL;
    return b->saved_in;
}

/* Frees b's extent in the store's file, if it has one (under the lock). */
static void drop_extent(Store *s, StBlock *b)
{
    if (b->loc.bytes > 0 && b->saved_in == NULL) {
        s->stats.disk_bytes -= b->loc.bytes;
        free_extent(s, b->loc.offset, b->loc.bytes);
        b->loc = (StBlockLoc){0};
    }
}

/* Makes b a saved block over n_rows rows at loc of `path`, in column records
 * at col_off (owned from now on; NULL: one record); its extent in the
 * store's file, if any, is freed.  Under the lock. */
static void make_saved(Store *s, StBlock *b, int n_rows, StBlockLoc loc, int64_t *col_off,
                       bool *col_load, const char *path)
{
    drop_extent(s, b);
    b->loc = loc;
    b->saved_in = path;
    b->saved_rows = n_rows;
    b->col_off = col_off;
    b->col_load = col_load;
}

CmStatus st_block_set_saved(StBlock *b, int n_rows, StBlockLoc loc, const int64_t *col_bytes,
                            const char *path, CmErr *err)
{
    CM_ASSERT(b->sealed && b->saved_in == NULL && b->level == ST_BLOCK_MEMORY_AND_DISK);
    int64_t *col_off;
    bool *col_load;
    if (!column_layout(b->n_cols, col_bytes, &col_off, &col_load)) {
        return cm_err_set(err, CM_OOM, -1, "out of memory allocating a block");
    }
    Store *s = store();
    cm_mutex_lock(&s->lock);
    while (b->state != IDLE) {
        cm_cond_wait(&s->cond, &s->lock);
    }
    make_saved(s, b, n_rows, loc, col_off, col_load, path);
    cm_mutex_unlock(&s->lock);
    return CM_OK;
}

void st_block_set_home(StBlock *b, StBlockHome *home)
{
    CM_ASSERT(!b->sealed && b->level == ST_BLOCK_MEMORY_AND_DISK);
    b->home = home;
}

/* Writes EVICTING block b to its home; it becomes a saved block over the
 * records there.  Called without the lock. */
static CmStatus write_home(Store *s, StBlock *b, CmErr *err)
{
    size_t n = (size_t)(b->n_cols > 0 ? b->n_cols : 1);
    int64_t *col_bytes = cm_malloc(sizeof(int64_t) * n);
    int64_t *col_off = NULL;
    bool *col_load = NULL;
    StBlockLoc loc;
    const char *path;
    if (col_bytes == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory writing a block");
    }
    if (b->home->write(b->home, b->batch, &loc, col_bytes, &path, err) == CM_OK &&
        !column_layout(b->n_cols, col_bytes, &col_off, &col_load)) {
        cm_err_set(err, CM_OOM, -1, "out of memory writing a block");
    }
    cm_free(col_bytes);
    if (err->code != CM_OK) {
        return err->code;
    }
    cm_mutex_lock(&s->lock);
    make_saved(s, b, b->batch->n_rows, loc, col_off, col_load, path);
    s->stats.home_written += loc.bytes;
    cm_mutex_unlock(&s->lock);
    return CM_OK;
}

CmBatch *st_block_batch(StBlock *b)
{
    return b->batch;
}

CmStatus st_block_charge(StBlock *b, CmErr *err)
{
    CM_ASSERT(!b->sealed && b->batch != NULL);
    int64_t bytes = batch_bytes(b, b->batch);
    if (bytes <= b->mem_bytes) {
        return CM_OK;
    }
    if (reserve(b->res, bytes - b->mem_bytes, err) != CM_OK) {
        return err->code;
    }
    Store *s = store();
    cm_mutex_lock(&s->lock);
    s->stats.memory_bytes += bytes - b->mem_bytes;
    b->mem_bytes = bytes;
    cm_mutex_unlock(&s->lock);
    return CM_OK;
}

CmStatus st_block_seal(StBlock *b, CmErr *err)
{
    CM_ASSERT(b->batch != NULL);
    if (b->sealed) {
        return CM_OK;
    }
    Store *s = store();
    if (b->level == ST_BLOCK_DISK_ONLY && write_block(s, b, err) != CM_OK) {
        return err->code;
    }
    cm_mutex_lock(&s->lock);
    b->sealed = true;
    if (b->pins == 0) {
        lru_push(s, b);
    }
    cm_mutex_unlock(&s->lock);
    if (b->level == ST_BLOCK_DISK_ONLY) {
        unload_if_idle(s, b);
    }
    return CM_OK;
}

bool st_block_sealed(const StBlock *b)
{
    return b->sealed;
}

/* The start of a pin: takes the lock (held on return), counts the pin, takes
 * b off the LRU list and waits for any I/O on it to end; *loaded false. */
static void pin_idle(Store *s, StBlock *b, bool *loaded)
{
    if (loaded != NULL) {
        *loaded = false;
    }
    cm_mutex_lock(&s->lock);
    b->pins++;
    lru_remove(s, b);
    while (b->state != IDLE) {
        cm_cond_wait(&s->cond, &s->lock);
    }
}

const CmBatch *st_block_pin_cols(StBlock *b, const int *cols, int n, bool *loaded, CmErr *err)
{
    if (b->col_off == NULL) {
        return st_block_pin(b, loaded, err);
    }
    Store *s = store();
    pin_idle(s, b, loaded);
    bool load = b->batch == NULL;
    memset(b->col_load, 0, sizeof(bool) * (size_t)b->n_cols);
    for (int i = 0; i < (n >= 0 ? n : b->n_cols); i++) {
        int c = n >= 0 ? cols[i] : i;
        CM_ASSERT(c >= 0 && c < b->n_cols);
        if (b->batch == NULL || b->batch->cols[c].data == NULL) {
            b->col_load[c] = true;
            load = true;
        }
    }
    if (!load) {
        cm_mutex_unlock(&s->lock);
        return b->batch;
    }
    b->state = LOADING;
    cm_mutex_unlock(&s->lock);
    long long t0 = cm_now_ns();
    bool any_read = false;
    int64_t before = b->mem_bytes, after = 0;
    CmBatch *batch = load_columns(s, b, &any_read, &after, err);
    cm_mutex_lock(&s->lock);
    b->state = IDLE;
    if (batch != NULL) {
        if (b->batch == NULL) {
            b->batch = batch;
            s->stats.n_resident++;
        }
        b->mem_bytes = after;
        s->stats.memory_bytes += after - before;
        if (any_read) {
            s->stats.loads++;
            s->stats.miss_loads++;
            s->stats.miss_load_ns += cm_now_ns() - t0;
        }
    } else {
        b->pins--;
    }
    cm_cond_broadcast(&s->cond);
    cm_mutex_unlock(&s->lock);
    if (loaded != NULL) {
        *loaded = batch != NULL && any_read;
    }
    return batch;
}

const CmBatch *st_block_pin(StBlock *b, bool *loaded, CmErr *err)
{
    if (b->col_off != NULL) {
        return st_block_pin_cols(b, NULL, -1, loaded, err);
    }
    Store *s = store();
    pin_idle(s, b, loaded);
    if (b->batch != NULL || b->gone) {
        const CmBatch *out = b->batch;
        if (out == NULL) {
            b->pins--; /* a dropped block: nothing to pin */
        }
        cm_mutex_unlock(&s->lock);
        return out;
    }
    /* Evicted: this thread loads it; pinners meanwhile wait. */
    b->state = LOADING;
    cm_mutex_unlock(&s->lock);
    CmBatch *batch = NULL;
    int64_t bytes = 0;
    CmStatus st = CM_OK;
    long long t0 = cm_now_ns();
    /* the vectors and the heap's buffer first: the blocks evicted for them
     * leave their buffers in the pool */
    int64_t fixed = fixed_bytes(b) + (int64_t)heap_class(b->heap_bytes);
    st = reserve(b->res, fixed, err);
    bool granted = st == CM_OK;
    if (granted && (batch = read_block(s, b, err)) == NULL) {
        st = err->code;
    }
    if (st == CM_OK) {
        bytes = batch_bytes(b, batch);
        if (bytes > fixed) {
            st = reserve(b->res, bytes - fixed, err);
        } else if (bytes < fixed) {
            cm_mem_shrink(b->res, fixed - bytes); /* the heap's buffer was more than it held */
        }
    }
    if (st != CM_OK && granted) {
        cm_mem_shrink(b->res, fixed);
    }
    cm_mutex_lock(&s->lock);
    b->state = IDLE;
    if (st == CM_OK) {
        b->batch = batch;
        b->mem_bytes = bytes;
        s->stats.n_resident++;
        s->stats.memory_bytes += bytes;
        s->stats.loads++;
        if (b->level != ST_BLOCK_DISK_ONLY) {
            s->stats.miss_loads++;
            s->stats.miss_load_ns += cm_now_ns() - t0;
        }
    } else {
        b->pins--;
    }
    cm_cond_broadcast(&s->cond);
    cm_mutex_unlock(&s->lock);
    if (st != CM_OK) {
        batch_free(batch);
        return NULL;
    }
    if (loaded != NULL) {
        *loaded = true;
    }
    return batch;
}

bool st_block_pin_view(StBlock *b, const CmBatch *view)
{
    Store *s = store();
    cm_mutex_lock(&s->lock);
    /* IDLE under the lock: no load is adding a column meanwhile */
    const CmBatch *cb = b->state == IDLE ? b->batch : NULL;
    bool same = cb != NULL && view->n_rows <= cb->n_rows;
    for (int i = 0; i < view->n_cols && same; i++) {
        const CmVec *v = &view->cols[i];
        same = false;
        for (int j = 0; j < cb->n_cols && !same; j++) {
            same = v->kind == CM_VEC_FLAT && v->data != NULL && v->data == cb->cols[j].data &&
                   v->validity == cb->cols[j].validity;
        }
    }
    if (same) {
        b->pins++;
        lru_remove(s, b);
    }
    cm_mutex_unlock(&s->lock);
    return same;
}

static void unpin(StBlock *b, bool cold)
{
    Store *s = store();
    cm_mutex_lock(&s->lock);
    CM_ASSERT(b->pins > 0);
    bool disk_only = false, evict = false;
    if (--b->pins == 0 && b->sealed && b->batch != NULL && b->state == IDLE) {
        if (cold) {
            lru_push_tail(s, b);
        } else {
            lru_push(s, b);
        }
        disk_only = b->level == ST_BLOCK_DISK_ONLY;
        evict = s->evict_on_unpin && !disk_only;
    }
    cm_mutex_unlock(&s->lock);
    if (disk_only) {
        unload_if_idle(s, b);
    } else if (evict) {
        evict_one(s, b, NULL);
    }
}

void st_block_unpin(StBlock *b)
{
    unpin(b, false);
}

void st_block_unpin_cold(StBlock *b)
{
    unpin(b, true);
}

void st_block_free(StBlock *b)
{
    if (b == NULL) {
        return;
    }
    Store *s = store();
    cm_mutex_lock(&s->lock);
    while (b->state != IDLE) {
        cm_cond_wait(&s->cond, &s->lock);
    }
    lru_remove(s, b);
    s->stats.n_blocks--;
    if (b->batch != NULL) {
        s->stats.n_resident--;
        s->stats.memory_bytes -= b->mem_bytes;
    }
    drop_extent(s, b);
    cm_mutex_unlock(&s->lock);
    batch_free(b->batch);
    cm_mem_shrink(b->res, b->mem_bytes);
    block_free_arrays(b);
    cm_free(b);
}

bool st_block_resident(const StBlock *b)
{
    Store *s = store();
    cm_mutex_lock(&s->lock);
    bool r = b->batch != NULL;
    cm_mutex_unlock(&s->lock);
    return r;
}

StBlockLevel st_block_level(const StBlock *b)
{
    return b->level;
}

StBlockLoc st_block_loc(const StBlock *b)
{
    return b->loc;
}

/* ---- eviction --------------------------------------------------------------------- */

/* Evicts the LRU block (or `only`); returns the bytes released: 0 when it was
 * pinned while being written (it stays; try the next), -1 when there is none
 * or it could not be written (the disk is full: stop).  The buffers the pool
 * does not keep go to `cold` when it is not NULL (batch_release). */
static int64_t evict_one(Store *s, StBlock *only, CmColdFree *cold)
{
    cm_mutex_lock(&s->lock);
    StBlock *b = only != NULL ? (only->in_lru ? only : NULL) : s->lru_tail;
    if (b == NULL) {
        cm_mutex_unlock(&s->lock);
        return -1;
    }
    lru_remove(s, b);
    b->state = EVICTING;
    bool write = b->level == ST_BLOCK_MEMORY_AND_DISK && b->loc.bytes == 0;
    cm_mutex_unlock(&s->lock);
    CmErr err;
    cm_err_init(&err);
    if (write && b->home != NULL && write_home(s, b, &err) != CM_OK) {
        cm_err_init(&err); /* the temp file then, as any block */
        b->home = NULL;
    }
    CmStatus st = write && b->home == NULL ? write_block(s, b, &err) : CM_OK;
    cm_mutex_lock(&s->lock);
    b->state = IDLE;
    CmBatch *batch = NULL;
    int64_t bytes = 0;
    bool drop = false;
    if (st != CM_OK || b->pins > 0) {
        /* kept: pinned meanwhile, or it could not be written (the disk is
         * full: the block stays in memory and the reservation fails) */
        if (b->pins == 0) {
            lru_push(s, b);
        }
    } else {
        batch = b->batch;
        bytes = b->mem_bytes;
        b->heap_bytes = (int64_t)batch->heap.n_bytes;
        b->batch = NULL;
        b->mem_bytes = 0;
        s->stats.n_resident--;
        s->stats.memory_bytes -= bytes;
        s->stats.evictions++;
        if (b->level == ST_BLOCK_MEMORY_ONLY) {
            b->gone = true;
            s->stats.drops++;
            drop = true;
        }
    }
    StBlockDropped dropped = b->dropped;
    void *owner = b->owner;
    CmMemRes *res = b->res;
    cm_cond_broadcast(&s->cond);
    cm_mutex_unlock(&s->lock);
    if (batch == NULL) {
        return st == CM_OK ? 0 : -1;
    }
    cm_mem_shrink(res, bytes);
    batch_release(s, batch, cold);
    if (drop && dropped != NULL) {
        dropped(owner, b);
    }
    return bytes;
}

CmStatus st_blocks_reserve(CmMemRes *res, int64_t bytes, CmErr *err)
{
    return reserve(res, bytes, err);
}

static int64_t evict_some(int64_t bytes, bool cold)
{
    Store *s = store();
    CmColdFree gather = {0};
    int64_t freed = 0;
    while (freed < bytes) {
        int64_t n = evict_one(s, NULL, cold ? &gather : NULL);
        if (n < 0) {
            freed += pool_drain(s); /* no block is left: the pool goes too */
            break;
        }
        freed += n;
    }
    if (cold) {
        cm_cold_free(&gather);
    }
    return freed;
}

int64_t st_blocks_evict(int64_t bytes)
{
    return evict_some(bytes, true);
}

void st_blocks_stats(StBlocksStats *out)
{
    Store *s = store();
    cm_mutex_lock(&s->lock);
    *out = s->stats;
    cm_mutex_unlock(&s->lock);
}
