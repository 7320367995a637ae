/*
 * store.c - the store of one query: memory budget, flow control, flushing of
 * partition buffers into split files, and the query's temp directory.
 *
 * Design.  A pushed block joins its partition's buffer and counts against
 * `used`.  A partition with a buffer sits in one of two FIFO flush queues:
 * FULL (buffer >= flush_bytes) or SMALL.  Nothing is written while `used` is
 * below the low watermark (resume_ratio): data that fits stays in memory.
 * Above it, each push also flushes one queued partition (FULL first), which
 * keeps usage near the low watermark.  At the high watermark (pause_ratio) the
 * store pauses: every pusher stops pushing and works off the flush queues
 * until usage falls below the low watermark (hysteresis), then all resume.
 * There is no flusher thread: the threads that push are the flushers, so
 * compression runs on as many cores as there are pushers.
 *
 * Why it cannot deadlock (every worker may be a pusher; nothing else flushes):
 *   I1  every byte in `used` is a block in the buffer of a live partition;
 *       flushed blocks are uncounted even while a reader still holds them.
 *   I2  a partition with a buffer is queued (claimable) or `flushing`: claimed
 *       by exactly one thread that is running the flush now.
 *   I3  a flush holds no lock during its I/O and never waits, so it ends; when
 *       it ends it lowers `used` by what it wrote (or records an I/O error)
 *       and broadcasts `cond`.
 *   I4  a paused pusher first claims queued work; it waits on `cond` only when
 *       nothing is claimable, which by I1 and I2 means in_flight > 0 (or used
 *       is 0, and then it resumes instead).  So every wait ends with a
 *       broadcast from a flush that is already running.
 *   I5  paused implies used > 0: the store resumes below the low watermark or
 *       when nothing is buffered, whatever the ratios.
 * Readers wait only for a running flush of the partition they snapshot (I3);
 * sorting never makes anyone wait (reader.c); a failed flush puts its blocks
 * back and sets io_err, which releases every paused pusher with CM_IO.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/hash.h"
#include "shuffle/shuffle_int.h"
#include "shuffle/spill.h"

#define WRITE_BUF_BYTES (1 << 20)          /* records are gathered into writes this large */
#define SPARE_MAX_BYTES ((int64_t)4 << 20) /* the most flushed blocks kept (ShStore.spare) */
/* Blocks kept at most, and the least a kept one allocates: a push looks
 * through the list under the store's lock, and small blocks come from the
 * allocator's small pages, which are cheap to fault in again.  Unbounded, the
 * 3-row batches of the tiny build kept thousands of 100-byte blocks, and the
 * memory suite took four times as long. */
#define SPARE_MAX_BLOCKS 64
#define SPARE_MIN_BYTES ((int64_t)4096)

/* ---- options and lifecycle ------------------------------------------------------ */

void sh_store_options_init(ShStoreOptions *o, const CmConfig *cfg)
{
    CmConfig defaults;
    if (cfg == NULL) {
        cm_config_init(&defaults);
        cfg = &defaults;
    }
    memset(o, 0, sizeof *o);
    o->codec = cfg->shuffle_compression == CM_COMPRESSION_NONE   ? SH_CODEC_NONE
               : cfg->shuffle_compression == CM_COMPRESSION_ZSTD ? SH_CODEC_ZSTD
               : cfg->shuffle_compression == CM_COMPRESSION_LZ4  ? SH_CODEC_LZ4
                                                                 : SH_CODEC_AUTO;
    o->compress_in_memory = false;
    /* The store's buffers are the cheapest memory to give back (a flush), so
     * they get at most an eighth of memory_limit, leaving the rest to the
     * operators whose spills cost more. */
    o->memory_limit = cfg->shuffle_memory_limit < cfg->memory_limit / 8 ? cfg->shuffle_memory_limit
                                                                        : cfg->memory_limit / 8;
    o->pause_ratio = cfg->shuffle_pause_ratio;
    o->resume_ratio = cfg->shuffle_resume_ratio;
    o->split_threshold = cfg->shuffle_split_threshold;
    o->flush_bytes = 0;
    snprintf(o->temp_directory, sizeof o->temp_directory, "%s", cfg->temp_directory);
    o->max_temp = cfg->max_temp_directory_size;
}

ShStore *sh_store_new(const CmConfig *cfg, CmErr *err)
{
    ShStoreOptions o;
    sh_store_options_init(&o, cfg);
    return sh_store_new_opts(&o, err);
}

ShStore *sh_store_new_opts(const ShStoreOptions *o, CmErr *err)
{
    ShStore *st = cm_calloc(1, sizeof *st);
    if (st == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory creating a shuffle store");
        return NULL;
    }
    st->opt = *o;
    int64_t limit = o->memory_limit > 0 ? o->memory_limit : 1;
    double pause = o->pause_ratio > 0 && o->pause_ratio <= 1 ? o->pause_ratio : 1;
    double resume = o->resume_ratio >= 0 && o->resume_ratio <= pause ? o->resume_ratio : pause;
    st->pause_bytes = (int64_t)((double)limit * pause);
    st->resume_bytes = (int64_t)((double)limit * resume);
    st->pause_bytes = st->pause_bytes > 0 ? st->pause_bytes : 1;
    st->flush_bytes = o->flush_bytes > 0 ? o->flush_bytes : limit / 16;
    st->flush_bytes = st->flush_bytes < 1024        ? 1024
                      : st->flush_bytes > (1 << 20) ? (1 << 20)
                                                    : st->flush_bytes;
    if (st->opt.split_threshold <= 0) {
        st->opt.split_threshold = INT64_MAX;
    }
    st->stats.memory_limit = limit;
    st->spare_cap = limit / 8 < SPARE_MAX_BYTES ? limit / 8 : SPARE_MAX_BYTES;
    cm_mem_res_init(&st->mem, CM_MEM_EXECUTION, "shuffle store", NULL);
    st->q_head[0] = st->q_head[1] = st->q_tail[0] = st->q_tail[1] = NULL;
    cm_err_init(&st->io_err);
    cm_mutex_init(&st->lock);
    cm_cond_init(&st->cond);
    return st;
}

/* Removes the directory and anything left in it (only files of ours live there). */
static void remove_dir(const char *dir)
{
    if (dir[0] == '\0') {
        return;
    }
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        char path[1024];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                unlink(path);
            }
        }
        closedir(d);
    }
    rmdir(dir);
}

void sh_store_free(ShStore *st)
{
    if (st == NULL) {
        return;
    }
    while (st->shuffles != NULL) {
        ShShuffle *sh = st->shuffles;
        sh->owns_store = false; /* we are freeing the store already */
        sh_shuffle_free(sh);
    }
    remove_dir(st->dir);
    while (st->cctx_free != NULL) {
        ShCctx *c = st->cctx_free;
        st->cctx_free = c->next;
        sh_compressor_free(c->cctx);
        cm_free(c->buf);
        cm_free(c);
    }
    sh_blocks_free(st->spare);
    cm_cond_fini(&st->cond);
    cm_mutex_fini(&st->lock);
    cm_mem_res_fini(&st->mem);
    if (st->temp_charged > 0) {
        sh_temp_charge(-st->temp_charged, 0, st->opt.temp_directory, NULL);
    }
    cm_free(st);
}

void sh_store_stats(ShStore *st, ShStoreStats *out)
{
    cm_mutex_lock(&st->lock);
    *out = st->stats;
    out->used = st->used;
    out->paused_ms = st->paused_ns / 1000000;
    cm_mutex_unlock(&st->lock);
}

const char *sh_store_directory(ShStore *st)
{
    return st->dir;
}

/* ---- files ------------------------------------------------------------------------- */

void sh_split_path(const ShShuffle *sh, int part, int split, const char *kind, char *buf,
                   size_t cap)
{
    snprintf(buf, cap, "%s/sh%d-p%d-s%d.%s", sh->store->dir, sh->id, part, split, kind);
}

/* Makes the query's directory on first need.  Lock held. */
static CmStatus ensure_dir_locked(ShStore *st, CmErr *err)
{
    if (st->dir[0] != '\0') {
        return CM_OK;
    }
    const char *base = st->opt.temp_directory[0] ? st->opt.temp_directory : ".";
    char tmpl[sizeof st->dir];
    int n = snprintf(tmpl, sizeof tmpl, "%s/sluice-shuffle-%ld-XXXXXX", base, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof tmpl - 64) {
        return cm_err_set(err, CM_IO, -1, "temp_directory '%s' is too long", base);
    }
    mkdir(base, 0700); /* may exist already */
    if (mkdtemp(tmpl) == NULL) {
        return cm_err_set(err, CM_IO, -1, "cannot create a shuffle directory in '%s': %s", base,
                          strerror(errno));
    }
    memcpy(st->dir, tmpl, (size_t)n + 1);
    return CM_OK;
}

void sh_blocks_free(ShBlock *b)
{
    while (b != NULL) {
        ShBlock *next = b->next;
        cm_free(b);
        b = next;
    }
}

/* ---- split pairs -------------------------------------------------------------------- */

static uint32_t pair_hash(int32_t map, int32_t attempt)
{
    return (uint32_t)cm_hash_u64(((uint64_t)(uint32_t)map << 32) | (uint32_t)attempt);
}

/* Makes room for `extra` more pairs; false on OOM (nothing changed). */
static bool split_reserve(ShSplit *s, int extra)
{
    int want = s->n_pairs + extra;
    if (want > s->cap_pairs) {
        int cap = s->cap_pairs ? s->cap_pairs : 8;
        while (cap < want) {
            cap *= 2;
        }
        ShPair *pairs = cm_realloc(s->pairs, sizeof(ShPair) * (size_t)cap);
        if (pairs == NULL) {
            return false;
        }
        s->pairs = pairs;
        s->cap_pairs = cap;
    }
    int n_slots = s->slots ? s->slot_mask + 1 : 0;
    if (want * 2 > n_slots) {
        int cap = n_slots ? n_slots : 16;
        while (cap < want * 2) {
            cap *= 2;
        }
        int32_t *slots = cm_calloc((size_t)cap, sizeof(int32_t));
        if (slots == NULL) {
            return false;
        }
        for (int i = 0; i < s->n_pairs; i++) {
            uint32_t h = pair_hash(s->pairs[i].map_id, s->pairs[i].attempt) & (uint32_t)(cap - 1);
            while (slots[h] != 0) {
                h = (h + 1) & (uint32_t)(cap - 1);
            }
            slots[h] = i + 1;
        }
        cm_free(s->slots);
        s->slots = slots;
        s->slot_mask = cap - 1;
    }
    return true;
}

/* Adds a run of records of (map, attempt); room was reserved. */
static void split_add_run(ShSplit *s, int32_t map, int32_t attempt, int64_t first, int64_t last,
                          int64_t bytes)
{
    uint32_t h = pair_hash(map, attempt) & (uint32_t)s->slot_mask;
    while (s->slots[h] != 0) {
        ShPair *q = &s->pairs[s->slots[h] - 1];
        if (q->map_id == map && q->attempt == attempt) {
            q->first_off = first < q->first_off ? first : q->first_off;
            q->last_off = last > q->last_off ? last : q->last_off;
            q->bytes += bytes;
            return;
        }
        h = (h + 1) & (uint32_t)s->slot_mask;
    }
    s->pairs[s->n_pairs] = (ShPair){map, attempt, first, last, bytes};
    s->slots[h] = ++s->n_pairs;
}

void sh_split_fini(ShSplit *s)
{
    cm_free(s->pairs);
    cm_free(s->slots);
    memset(s, 0, sizeof *s);
}

/* ---- flush queues (store lock) ------------------------------------------------------ */

void sh_store_dequeue(ShStore *st, ShPart *p)
{
    if (p->queue == SH_Q_NONE) {
        return;
    }
    int q = p->queue;
    if (p->q_prev != NULL) {
        p->q_prev->q_next = p->q_next;
    } else {
        st->q_head[q] = p->q_next;
    }
    if (p->q_next != NULL) {
        p->q_next->q_prev = p->q_prev;
    } else {
        st->q_tail[q] = p->q_prev;
    }
    p->q_prev = p->q_next = NULL;
    p->queue = SH_Q_NONE;
}

/* Puts p in the queue its buffer calls for (I2). */
static void requeue(ShStore *st, ShPart *p)
{
    int want = p->flushing || p->n_blocks == 0 || p->sh->freeing ? SH_Q_NONE
               : p->mem_bytes >= st->flush_bytes                 ? SH_Q_FULL
                                                                 : SH_Q_SMALL;
    if (want == p->queue) {
        return;
    }
    sh_store_dequeue(st, p);
    if (want == SH_Q_NONE) {
        return;
    }
    p->queue = want;
    p->q_prev = st->q_tail[want];
    if (st->q_tail[want] != NULL) {
        st->q_tail[want]->q_next = p;
    } else {
        st->q_head[want] = p;
    }
    st->q_tail[want] = p;
}

/* Claims the next partition to flush, FULL before SMALL; NULL when none. */
static ShPart *claim(ShStore *st)
{
    ShPart *p = st->q_head[SH_Q_FULL] ? st->q_head[SH_Q_FULL] : st->q_head[SH_Q_SMALL];
    if (p != NULL) {
        sh_store_dequeue(st, p);
        p->flushing = true;
    }
    return p;
}

static void give_cctx(ShStore *st, ShCctx *c)
{
    if (c == NULL) {
        return;
    }
    cm_mutex_lock(&st->lock);
    c->next = st->cctx_free;
    st->cctx_free = c;
    cm_mutex_unlock(&st->lock);
}

static void *take_cctx(ShStore *st)
{
    cm_mutex_lock(&st->lock);
    ShCctx *c = st->cctx_free;
    if (c != NULL) {
        st->cctx_free = c->next;
    }
    cm_mutex_unlock(&st->lock);
    if (c == NULL) {
        c = cm_calloc(1, sizeof *c);
        if (c != NULL && st->opt.codec != SH_CODEC_NONE &&
            (c->cctx = sh_compressor_new(st->opt.codec)) == NULL) {
            cm_free(c);
            c = NULL;
        }
    }
    if (c != NULL && c->buf == NULL && (c->buf = cm_malloc(WRITE_BUF_BYTES)) == NULL) {
        give_cctx(st, c);
        c = NULL;
    }
    return c;
}

/* ---- flushing ---------------------------------------------------------------------- */

/* Where one block landed. */
typedef struct FlushRec {
    int32_t map_id, attempt;
    int64_t off, bytes;
} FlushRec;

static int rec_cmp(const void *a, const void *b)
{
    const FlushRec *x = a, *y = b;
    if (x->map_id != y->map_id) {
        return x->map_id < y->map_id ? -1 : 1;
    }
    if (x->attempt != y->attempt) {
        return x->attempt < y->attempt ? -1 : 1;
    }
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Lays out one block's record at rec (room: header + padded bound). */
static int64_t lay_record(ShStore *st, ShCctx *cc, const ShBlock *b, unsigned char *rec)
{
    return sh_block_lay_record(b, cc->cctx, rec);
}

/* Room a block's record may need before compression is tried. */
static size_t record_room(const ShBlock *b, bool compress)
{
    size_t payload = (size_t)b->hdr.stored_bytes;
    if (compress && b->hdr.codec == SH_BLOCK_CODEC_NONE) {
        size_t bound = sh_compress_bound((size_t)b->hdr.raw_bytes);
        payload = bound > payload ? bound : payload;
    }
    return SH_DISK_HDR_BYTES + ((payload + 7) & ~(size_t)7);
}

/* Writes the records of `list` at `off` of `path`.  Unlocked.  recs[i] gets
 * block i's place; *written the bytes. */
static CmStatus write_blocks(ShStore *st, const char *path, const ShBlock *list, int64_t off,
                             FlushRec *recs, int64_t *written, CmErr *err)
{
    bool compress = st->opt.codec != SH_CODEC_NONE;
    ShCctx *cc = take_cctx(st);
    unsigned char *buf = cc != NULL ? cc->buf : NULL;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    int64_t pos = off;
    size_t fill = 0;
    int i = 0;
    if (cc == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory flushing a shuffle partition");
        goto done;
    }
    if (fd < 0) {
        cm_err_set(err, CM_IO, -1, "cannot write shuffle file '%s': %s", path, strerror(errno));
        goto done;
    }
    for (const ShBlock *b = list; b != NULL; b = b->next, i++) {
        size_t room = record_room(b, compress);
        unsigned char *rec = buf + fill;
        unsigned char *big = NULL;
        if (fill + room > WRITE_BUF_BYTES) {
            if (fill > 0 && !sh_pwrite_all(fd, buf, fill, pos)) {
                goto io_error;
            }
            pos += (int64_t)fill;
            fill = 0;
            rec = buf;
            if (room > WRITE_BUF_BYTES && (rec = big = cm_malloc(room)) == NULL) {
                cm_err_set(err, CM_OOM, -1, "out of memory flushing a shuffle partition");
                goto done;
            }
        }
        int64_t len = lay_record(st, cc, b, rec);
        recs[i] = (FlushRec){b->hdr.map_id, b->hdr.attempt, pos + (int64_t)fill, len};
        if (big != NULL) {
            bool ok = sh_pwrite_all(fd, big, (size_t)len, pos);
            cm_free(big);
            if (!ok) {
                goto io_error;
            }
            pos += len;
        } else {
            fill += (size_t)len;
        }
    }
    if (fill > 0 && !sh_pwrite_all(fd, buf, fill, pos)) {
        goto io_error;
    }
    pos += (int64_t)fill;
    *written = pos - off;
    goto done;
io_error:
    cm_err_set(err, CM_IO, -1, "cannot write shuffle file '%s': %s", path,
               errno ? strerror(errno) : "short write");
done:
    if (fd >= 0 && close(fd) != 0) {
        cm_err_set(err, CM_IO, -1, "cannot write shuffle file '%s': %s", path, strerror(errno));
    }
    give_cctx(st, cc);
    return err->code;
}

/* Picks the split a flush of p appends to, starting one if needed.  Lock held. */
static CmStatus target_split(ShStore *st, ShPart *p, int *si, bool *is_new, CmErr *err)
{
    *is_new = p->n_splits == 0 || p->splits[p->n_splits - 1].sealed;
    if (*is_new) {
        if (p->n_splits == p->cap_splits) {
            int cap = p->cap_splits ? p->cap_splits * 2 : 4;
            ShSplit *splits = cm_realloc(p->splits, sizeof(ShSplit) * (size_t)cap);
            if (splits == NULL) {
                return cm_err_set(err, CM_OOM, -1, "out of memory starting a shuffle split");
            }
            p->splits = splits;
            p->cap_splits = cap;
        }
        ShSplit *s = &p->splits[p->n_splits++];
        memset(s, 0, sizeof *s);
        s->state = SH_SPLIT_RAW;
        s->damaged_at = -1;
    }
    *si = p->n_splits - 1;
    return CM_OK;
}

/* Records where the records went; false on OOM (nothing changed).  Lock held. */
static bool add_recs(ShSplit *s, FlushRec *recs, int64_t n)
{
    qsort(recs, (size_t)n, sizeof *recs, rec_cmp);
    int distinct = 0;
    for (int64_t i = 0; i < n; i++) {
        distinct += i == 0 || recs[i].map_id != recs[i - 1].map_id ||
                    recs[i].attempt != recs[i - 1].attempt;
    }
    if (!split_reserve(s, distinct)) {
        return false;
    }
    for (int64_t i = 0; i < n;) {
        int64_t j = i, bytes = 0;
        while (j < n && recs[j].map_id == recs[i].map_id && recs[j].attempt == recs[i].attempt) {
            bytes += recs[j++].bytes;
        }
        split_add_run(s, recs[i].map_id, recs[i].attempt, recs[i].off, recs[j - 1].off, bytes);
        i = j;
    }
    return true;
}

/* Lowers `used` by bytes, the unreserved part first; returns the part the
 * reservation holds, for the caller to shrink (or keep).  Lock held. */
static int64_t lower_used_locked(ShStore *st, int64_t bytes)
{
    st->used -= bytes;
    int64_t from_unreserved = bytes < st->unreserved ? bytes : st->unreserved;
    st->unreserved -= from_unreserved;
    return bytes - from_unreserved;
}

/* Lowers `used` by the bytes of the flushed blocks of `list`, keeping those
 * that fit beside the spare blocks (and were reserved), freeing the rest.
 * Lock held. */
static void release_keeping_locked(ShStore *st, ShBlock *list, int64_t bytes)
{
    int64_t reserved = lower_used_locked(st, bytes); /* what mem holds for these blocks */
    while (list != NULL) {
        ShBlock *next = list->next;
        if (st->spare_bytes + list->cap <= st->spare_cap && list->cap <= reserved &&
            list->cap >= SPARE_MIN_BYTES && st->n_spare < SPARE_MAX_BLOCKS) {
            reserved -= list->cap;
            st->spare_bytes += list->cap;
            st->n_spare++;
            list->next = st->spare;
            st->spare = list;
        } else {
            cm_free(list);
        }
        list = next;
    }
    cm_mem_shrink(&st->mem, reserved);
}

void sh_store_trim(ShStore *st)
{
    cm_mutex_lock(&st->lock);
    ShBlock *spare = st->spare;
    int64_t bytes = st->spare_bytes;
    st->spare = NULL;
    st->spare_bytes = 0;
    st->n_spare = 0;
    cm_mem_shrink(&st->mem, bytes);
    cm_mutex_unlock(&st->lock);
    sh_blocks_free(spare);
}

ShBlock *sh_store_spare_take(ShStore *st, int64_t bytes)
{
    ShBlock *got = NULL;
    cm_mutex_lock(&st->lock);
    for (ShBlock **at = &st->spare; *at != NULL; at = &(*at)->next) {
        if ((*at)->cap >= bytes && (*at)->cap - bytes <= bytes / 4) {
            got = *at;
            *at = got->next;
            st->spare_bytes -= got->cap;
            st->n_spare--;
            st->stats.blocks_reused++;
            cm_mem_shrink(&st->mem, got->cap);
            break;
        }
    }
    cm_mutex_unlock(&st->lock);
    return got;
}

/* Ends a flush: publishes it or puts the blocks back.  Lock held. */
static void finish_flush(ShStore *st, ShPart *p, ShBlock *list, ShBlock *last, int64_t n,
                         int64_t bytes, int si, bool is_new, int64_t written, FlushRec *recs,
                         ShRetired *node, CmErr *err)
{
    ShShuffle *sh = p->sh;
    ShSplit *s = si >= 0 ? &p->splits[si] : NULL;
    if (err->code == CM_OK && !add_recs(s, recs, n)) {
        cm_err_set(err, CM_OOM, -1, "out of memory flushing a shuffle partition");
    }
    if (err->code == CM_OK) {
        s->size += written;
        s->sealed = s->size >= st->opt.split_threshold;
        sh->stats.spilled_bytes += written;
        sh->stats.splits += is_new;
        sh->stats.files += is_new;
        st->stats.spilled_bytes += written;
        st->stats.flushes++;
        if (p->pins > 0) {
            sh_store_release_locked(st, bytes);
            node->head = list;
            node->next = p->retired;
            p->retired = node;
            node = NULL;
        } else {
            release_keeping_locked(st, list, bytes);
        }
    } else {
        last->next = p->head; /* back in front: the buffer keeps push order */
        p->head = list;
        p->tail = p->tail ? p->tail : last;
        p->n_blocks += n;
        p->mem_bytes += bytes;
        if (s != NULL && is_new) {
            char path[1024];
            sh_split_path(sh, p->idx, si, "data", path, sizeof path);
            unlink(path);
            sh_split_fini(s);
            p->n_splits--;
        }
        cm_err_copy(&st->io_err, err);
    }
    cm_free(node);
    p->flushing = false;
    requeue(st, p);
    st->in_flight--;
    if (st->paused && (st->used < st->resume_bytes || st->used == 0)) {
        st->paused = false;
    }
    cm_cond_broadcast(&st->cond);
}

/* Flushes the buffer of p, which the caller claimed (flushing set, dequeued).
 * Lock held on entry and on return; released during the write (I3). */
static CmStatus flush_claimed(ShStore *st, ShPart *p, CmErr *err)
{
    ShBlock *list = p->head, *last = p->tail;
    int64_t n = p->n_blocks, bytes = p->mem_bytes;
    p->head = p->tail = NULL;
    p->n_blocks = 0;
    p->mem_bytes = 0;
    st->in_flight++;
    int si = -1;
    bool is_new = false;
    int64_t written = 0;
    char path[1024];
    FlushRec *recs = NULL;
    /* Readers snapshot only between flushes, so pins cannot grow meanwhile. */
    ShRetired *node = p->pins > 0 ? cm_malloc(sizeof *node) : NULL;
    if (p->pins > 0 && node == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory flushing a shuffle partition");
    } else if (ensure_dir_locked(st, err) == CM_OK &&
               target_split(st, p, &si, &is_new, err) == CM_OK) {
        int64_t off = p->splits[si].size;
        sh_split_path(p->sh, p->idx, si, "data", path, sizeof path);
        cm_mutex_unlock(&st->lock);
        recs = cm_malloc(sizeof(FlushRec) * (size_t)n);
        /* Charged at the buffer's size first, then at what was written. */
        if (recs == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory flushing a shuffle partition");
        } else if (sh_temp_charge(bytes, st->opt.max_temp, st->opt.temp_directory, err) == CM_OK) {
            write_blocks(st, path, list, off, recs, &written, err);
            sh_temp_charge(written - bytes, 0, st->opt.temp_directory, err);
        }
        cm_mutex_lock(&st->lock);
        st->temp_charged += written;
    }
    finish_flush(st, p, list, last, n, bytes, si, is_new, written, recs, node, err);
    cm_free(recs);
    return err->code;
}

CmStatus sh_store_flush_part_locked(ShStore *st, ShPart *p, CmErr *err)
{
    while (p->flushing) {
        cm_cond_wait(&st->cond, &st->lock);
    }
    if (p->n_blocks == 0) {
        return CM_OK;
    }
    sh_store_dequeue(st, p);
    p->flushing = true;
    return flush_claimed(st, p, err);
}

/* ---- pushing and flow control -------------------------------------------------------- */

void sh_store_release_locked(ShStore *st, int64_t bytes)
{
    cm_mem_shrink(&st->mem, lower_used_locked(st, bytes));
}

void sh_store_set_mem_group(ShStore *st, CmMemGroup *group)
{
    cm_mutex_lock(&st->lock);
    st->mem.group = group;
    cm_mutex_unlock(&st->lock);
}

/* A paused pusher: flush queued partitions, or wait for running flushes, until
 * the store resumes (I4).  Lock held. */
static CmStatus pause_locked(ShStore *st, ShShuffle *sh, CmErr *err)
{
    long long start = cm_now_ns();
    sh->stats.pauses++;
    st->stats.pauses++;
    while (st->paused && st->io_err.code == CM_OK) {
        ShPart *q = claim(st);
        if (q != NULL) {
            CmErr e;
            cm_err_init(&e);
            flush_claimed(st, q, &e); /* a failure lands in io_err */
            continue;
        }
        if (st->in_flight == 0) {
            st->paused = false; /* nothing buffered is left to wait for (I5) */
            cm_cond_broadcast(&st->cond);
            break;
        }
        cm_cond_wait(&st->cond, &st->lock);
    }
    long long ns = cm_now_ns() - start;
    sh->paused_ns += ns;
    st->paused_ns += ns;
    if (st->paused && st->io_err.code != CM_OK) {
        cm_err_copy(err, &st->io_err);
        return err->code;
    }
    return CM_OK;
}

CmStatus sh_store_push(ShStore *st, ShPart *p, ShBlock *blk, CmErr *err)
{
    int64_t cost = blk->cap;
    blk->next = NULL;
    cm_mutex_lock(&st->lock);
    if (p->tail != NULL) {
        p->tail->next = blk;
    } else {
        p->head = blk;
    }
    p->tail = blk;
    p->n_blocks++;
    p->mem_bytes += cost;
    st->used += cost;
    st->stats.peak_used = st->used > st->stats.peak_used ? st->used : st->stats.peak_used;
    requeue(st, p);
    CmStatus rc = CM_OK;
    bool refused = !cm_mem_grow(&st->mem, cost);
    if (refused) {
        st->unreserved += cost;
    }
    if (!st->paused && (st->used >= st->pause_bytes || (refused && st->used > cost))) {
        st->paused = true;
    }
    if (st->paused) {
        rc = pause_locked(st, p->sh, err);
    } else if (st->used >= st->resume_bytes && st->io_err.code == CM_OK) {
        ShPart *q = claim(st);
        if (q != NULL) {
            CmErr e;
            cm_err_init(&e);
            flush_claimed(st, q, &e); /* a failure lands in io_err; memory still holds it */
        }
    }
    cm_mutex_unlock(&st->lock);
    return rc;
}
