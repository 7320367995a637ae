/*
 * spill.c - spill files (spill.h).
 *
 * Records are laid in a write buffer (header + payload, compressed when that
 * makes it smaller) and written with pwrite when the buffer fills.  Reading
 * preads a window of at least SPILL_READ_BYTES from the next record on and
 * takes records from it while they lie inside: a partitioned spill writes a
 * few rows per file at a time, and a pread for each header and each payload
 * of those (98,000 of 2.7 KB on average in a PageRank job at a quarter of its
 * memory) cost more system time than the reading itself.  The file is read
 * front to back once, unless a reader seeks (sh_spill_seek).  The
 * temp-space counter is charged before each write and released when the file
 * is freed.
 */
#define _GNU_SOURCE
#include "shuffle/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/thread.h"
#include "shuffle/block.h"
#include "shuffle/shuffle_int.h"

/* The write buffer: small, since an operator may write many files at once
 * (a partitioned spill), and the buffers sit outside its reservation. */
#define SPILL_BUF_BYTES (64 * 1024)
/* The least a read fetches: records past the next one come with it.  A sort
 * merge keeps one file open per run, so this stays modest. */
#define SPILL_READ_BYTES (32 * 1024)

struct ShSpill {
    int fd;
    char dir[256]; /* for messages, and the pool of emptied files */
    bool poolable; /* dir is whole: the file may go to the pool */
    int64_t max_temp;
    int64_t size; /* bytes written to the file */
    int64_t rows;
    int64_t read_pos;   /* next record to read; -1 while writing */
    unsigned char *buf; /* write buffer, then read window; owned */
    size_t fill, cap;
    int64_t win_pos;    /* reading: file offset of buf[0] */
    size_t win_len;     /* ... and the bytes of the file buf holds from there */
    ShCompressor *cctx; /* while writing, when the disk codec compresses; owned */
    ShDecoder dec;
    int64_t seq;
};

static atomic_llong g_temp_used;
static atomic_llong g_temp_peak;
static atomic_llong g_spill_bytes; /* bytes written to spill files, since start */
static atomic_llong g_spill_ns;    /* time in sh_spill_append/read/rewind, since start */

void sh_spill_totals(int64_t *bytes, int64_t *ns)
{
    *bytes = atomic_load(&g_spill_bytes);
    *ns = atomic_load(&g_spill_ns);
}

int64_t sh_temp_used(void)
{
    return atomic_load(&g_temp_used);
}

int64_t sh_temp_peak(void)
{
    return atomic_load(&g_temp_peak);
}

void sh_temp_peak_reset(void)
{
    atomic_store(&g_temp_peak, atomic_load(&g_temp_used));
}

CmStatus sh_temp_charge(int64_t bytes, int64_t max_temp, const char *dir, CmErr *err)
{
    long long now = atomic_fetch_add(&g_temp_used, bytes) + bytes;
    if (bytes > 0 && max_temp > 0 && now > max_temp) {
        atomic_fetch_sub(&g_temp_used, bytes);
        return cm_err_set(err, CM_IO, -1,
                          "temp files would pass max_temp_directory_size (%lld bytes) in '%s'",
                          (long long)max_temp, dir);
    }
    long long peak = atomic_load(&g_temp_peak);
    while (now > peak && !atomic_compare_exchange_weak(&g_temp_peak, &peak, now)) {
    }
    return CM_OK;
}

/* Emptied spill files kept open for the next sh_spill_new in the same
 * directory: creating an unnamed file on ext4 allocates an inode (a scan of
 * the inode bitmap) and closing it frees one, which took a tenth of the time
 * of the spilling tests, where sorts and partitioned spills make thousands of
 * small files; an emptied file is reused for nothing but a truncate.  The
 * files are unnamed and empty: nothing shows in the directory, nothing of a
 * statement's data stays. */
#define POOL_FILES 32
static struct {
    pthread_mutex_t lock;
    pid_t pid; /* whose files: a forked child shares its parent's (the same files) */
    int n;
    int fd[POOL_FILES];
    char dir[POOL_FILES][256];
} g_pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int pool_take(const char *dir)
{
    int fd = -1;
    pthread_mutex_lock(&g_pool.lock);
    if (g_pool.pid != getpid()) {
        g_pool.n = 0; /* the parent's: not ours to write (left open, as the parent's) */
        g_pool.pid = getpid();
    }
    for (int i = g_pool.n - 1; i >= 0; i--) {
        if (strcmp(g_pool.dir[i], dir) == 0) {
            fd = g_pool.fd[i];
            g_pool.n--;
            g_pool.fd[i] = g_pool.fd[g_pool.n];
            memcpy(g_pool.dir[i], g_pool.dir[g_pool.n], sizeof g_pool.dir[i]);
            break;
        }
    }
    pthread_mutex_unlock(&g_pool.lock);
    return fd;
}

/* Keeps fd (emptied) for reuse, or closes it. */
static void pool_give(int fd, const char *dir)
{
    bool kept = false;
    if (ftruncate(fd, 0) == 0) {
        pthread_mutex_lock(&g_pool.lock);
        if (g_pool.pid != getpid()) {
            g_pool.n = 0;
            g_pool.pid = getpid();
        }
        if (g_pool.n < POOL_FILES) {
            g_pool.fd[g_pool.n] = fd;
            snprintf(g_pool.dir[g_pool.n], sizeof g_pool.dir[0], "%s", dir);
            g_pool.n++;
            kept = true;
        }
        pthread_mutex_unlock(&g_pool.lock);
    }
    if (!kept) {
        close(fd);
    }
}

ShSpill *sh_spill_new(const char *dir, int64_t max_temp, CmErr *err)
{
    ShSpill *s = cm_calloc(1, sizeof *s);
    if (s == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory creating a spill file");
        return NULL;
    }
    s->fd = -1;
    s->read_pos = -1;
    s->max_temp = max_temp;
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    s->poolable = strlen(dir) < sizeof s->dir - 1;
    sh_decoder_init(&s->dec);
    /* An unnamed file: gone when closed, whatever happens to the process. */
    s->fd = pool_take(dir);
    if (s->fd < 0) {
        s->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    }
    if (s->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        char path[300];
        snprintf(path, sizeof path, "%s/sluice-spill-XXXXXX", dir);
        s->fd = mkostemp(path, O_CLOEXEC);
        if (s->fd >= 0) {
            unlink(path);
        }
    }
    if (s->fd < 0) {
        cm_err_set(err, CM_IO, -1, "cannot create a spill file in temp_directory '%s': %s", dir,
                   strerror(errno));
        sh_spill_free(s);
        return NULL;
    }
    return s;
}

static CmStatus write_out(ShSpill *s, CmErr *err)
{
    if (s->fill == 0) {
        return CM_OK;
    }
    if (sh_temp_charge((int64_t)s->fill, s->max_temp, s->dir, err) != CM_OK) {
        return err->code;
    }
    if (!sh_pwrite_all(s->fd, s->buf, s->fill, s->size)) {
        sh_temp_charge(-(int64_t)s->fill, 0, s->dir, err);
        return cm_err_set(err, CM_IO, -1, "cannot write a spill file in temp_directory '%s': %s",
                          s->dir, errno ? strerror(errno) : "short write");
    }
    s->size += (int64_t)s->fill;
    atomic_fetch_add(&g_spill_bytes, (long long)s->fill);
    s->fill = 0;
    return CM_OK;
}

/* Replaces the buffer (its bytes not kept) by one of at least n and `least`
 * bytes: a power of two up to CM_STASH_MAX_BYTES, most often one another file
 * of this thread gave back (alloc.h), since a new buffer's pages were faulted
 * in again for every file.  False on OOM. */
static bool new_buf(ShSpill *s, size_t n, size_t least)
{
    size_t cap = n > least ? n : least;
    if (cap <= CM_STASH_MAX_BYTES) {
        cap = (size_t)1 << (64 - __builtin_clzll(cap - 1));
    }
    cm_stash_give(s->buf, s->cap);
    s->buf = cap <= CM_STASH_MAX_BYTES ? cm_stash_take(cap) : cm_malloc(cap);
    s->cap = s->buf != NULL ? cap : 0;
    return s->buf != NULL;
}

/* Makes the buffer hold at least n bytes (after writing out what it holds).
 * The buffer is made on first use, so an open file that holds nothing in
 * memory costs little: an operator may keep many runs open. */
static CmStatus room(ShSpill *s, size_t n, CmErr *err)
{
    if (s->fill + n <= s->cap) {
        return CM_OK;
    }
    if (write_out(s, err) != CM_OK) {
        return err->code;
    }
    if (n > s->cap && !new_buf(s, n, SPILL_BUF_BYTES)) {
        return cm_err_set(err, CM_OOM, -1, "out of memory writing a spill file");
    }
    return CM_OK;
}

static CmStatus spill_append_untimed(ShSpill *s, const CmBatch *b, CmErr *err)
{
    if (b->n_rows == 0) {
        return CM_OK;
    }
    CM_ASSERT(s->read_pos < 0);
    size_t blk_bytes = 0;
    ShBlock *blk = sh_block_encode_stashed(b, &blk_bytes, err);
    if (blk == NULL) {
        return err->code;
    }
    int codec = sh_disk_codec();
    if (s->cctx == NULL && codec != SH_BLOCK_CODEC_NONE &&
        (s->cctx = sh_compressor_new(codec)) == NULL) {
        cm_stash_give(blk, blk_bytes);
        return cm_err_set(err, CM_OOM, -1, "out of memory writing a spill file");
    }
    blk->hdr.seq = s->seq++;
    size_t bound = sh_compress_bound((size_t)blk->hdr.raw_bytes);
    size_t stored = (size_t)blk->hdr.stored_bytes;
    size_t max_payload = bound > stored ? bound : stored;
    if (room(s, SH_DISK_HDR_BYTES + SH_ALIGN8((int64_t)max_payload), err) != CM_OK) {
        cm_stash_give(blk, blk_bytes);
        return err->code;
    }
    s->fill += (size_t)sh_block_lay_record(blk, s->cctx, s->buf + s->fill);
    cm_stash_give(blk, blk_bytes);
    s->rows += b->n_rows;
    return CM_OK;
}

static CmStatus spill_rewind_untimed(ShSpill *s, CmErr *err)
{
    if (s->read_pos < 0) {
        if (write_out(s, err) != CM_OK) {
            return err->code;
        }
        /* Writing is over: the compressor and the write buffer go; reading
         * makes a buffer of one record when it starts. */
        sh_compressor_free(s->cctx);
        s->cctx = NULL;
        cm_stash_give(s->buf, s->cap);
        s->buf = NULL;
        s->cap = 0;
    }
    s->read_pos = 0;
    s->win_len = 0;
    return CM_OK;
}

/* Makes the file's bytes [pos, pos + n) readable in s->buf (pos + n <= size),
 * reading from pos as far as SPILL_READ_BYTES or the end of the file when
 * they are not there yet.  A window starts at a record, and records are
 * multiples of 8 bytes, so every payload in it is 8-aligned. */
static CmStatus window(ShSpill *s, int64_t pos, size_t n, CmErr *err)
{
    if (pos >= s->win_pos && pos + (int64_t)n <= s->win_pos + (int64_t)s->win_len) {
        return CM_OK;
    }
    size_t want = n > SPILL_READ_BYTES ? n : SPILL_READ_BYTES;
    if ((int64_t)want > s->size - pos) {
        want = (size_t)(s->size - pos);
    }
    s->win_len = 0;
    if (want > s->cap && !new_buf(s, want, SPILL_READ_BYTES)) {
        return cm_err_set(err, CM_OOM, -1, "out of memory reading a spill file");
    }
    if (!sh_pread_all(s->fd, s->buf, want, pos)) {
        return cm_err_set(err, CM_IO, -1, "cannot read a spill file in '%s': %s", s->dir,
                          errno ? strerror(errno) : "short read");
    }
    s->win_pos = pos;
    s->win_len = want;
    return CM_OK;
}

static CmStatus spill_read_untimed(ShSpill *s, CmBatch *out, bool *eof, CmErr *err)
{
    cm_batch_reset(out);
    *eof = false;
    if (s->read_pos < 0 && spill_rewind_untimed(s, err) != CM_OK) {
        return err->code;
    }
    if (s->read_pos >= s->size) {
        *eof = true;
        return CM_OK;
    }
    ShBlockHeader h;
    if (s->read_pos + SH_DISK_HDR_BYTES > s->size) {
        return cm_err_set(err, CM_IO, -1, "a spill file in '%s' is damaged", s->dir);
    }
    if (window(s, s->read_pos, SH_DISK_HDR_BYTES, err) != CM_OK) {
        return err->code;
    }
    if (!sh_block_header_unpack(s->buf + (s->read_pos - s->win_pos), &h) || h.stored_bytes < 0 ||
        s->read_pos + sh_block_record_bytes(&h) > s->size) {
        return cm_err_set(err, CM_IO, -1, "a spill file in '%s' is damaged", s->dir);
    }
    int64_t rec = sh_block_record_bytes(&h);
    if (window(s, s->read_pos, (size_t)rec, err) != CM_OK) {
        return err->code;
    }
    const unsigned char *payload = s->buf + (s->read_pos - s->win_pos) + SH_DISK_HDR_BYTES;
    s->read_pos += rec;
    return sh_block_decode_stored(&h, payload, out, &s->dec, err);
}

int64_t sh_spill_tell(const ShSpill *s)
{
    return s->read_pos;
}

void sh_spill_seek(ShSpill *s, int64_t pos)
{
    s->read_pos = pos;
}

int64_t sh_spill_rows(const ShSpill *s)
{
    return s->rows;
}

int64_t sh_spill_bytes(const ShSpill *s)
{
    return s->size + (int64_t)(s->read_pos < 0 ? s->fill : 0);
}

void sh_spill_free(ShSpill *s)
{
    if (s == NULL) {
        return;
    }
    if (s->fd >= 0 && s->poolable) {
        pool_give(s->fd, s->dir);
    } else if (s->fd >= 0) {
        close(s->fd);
    }
    if (s->size > 0) {
        atomic_fetch_sub(&g_temp_used, s->size);
    }
    sh_decoder_fini(&s->dec);
    sh_compressor_free(s->cctx);
    cm_stash_give(s->buf, s->cap);
    cm_free(s);
}

/* ---- the entry points, timed for sh_spill_totals ----------------------------------- */

CmStatus sh_spill_append(ShSpill *s, const CmBatch *b, CmErr *err)
{
    long long t0 = cm_now_ns();
    CmStatus st = spill_append_untimed(s, b, err);
    atomic_fetch_add(&g_spill_ns, cm_now_ns() - t0);
    return st;
}

CmStatus sh_spill_rewind(ShSpill *s, CmErr *err)
{
    long long t0 = cm_now_ns();
    CmStatus st = spill_rewind_untimed(s, err);
    atomic_fetch_add(&g_spill_ns, cm_now_ns() - t0);
    return st;
}

CmStatus sh_spill_read(ShSpill *s, CmBatch *out, bool *eof, CmErr *err)
{
    long long t0 = cm_now_ns();
    CmStatus st = spill_read_untimed(s, out, eof, err);
    atomic_fetch_add(&g_spill_ns, cm_now_ns() - t0);
    return st;
}
