/*
 * reader.c - reading a partition range [p0, p1), optionally only maps [m0, m1).
 *
 * Design.  A reader takes each partition in turn.  It first snapshots the
 * partition under the store lock, after any running flush of it has ended:
 * the buffered blocks (head and count; the partition is pinned so that a
 * later flush keeps them alive) and the splits, whose last one it seals.
 * Invariant: every block is, at the snapshot, in exactly one of the buffer or
 * a sealed split of the snapshot, and sealed splits never change content
 * (sorting only reorders), so each block is read exactly once whatever flushes
 * or sorts run meanwhile; blocks flushed later go to splits the snapshot does
 * not list.  Every block is checked against the committed attempt of its map.
 *
 * Splits are visited in a rotated order: a map-range reader starts at the
 * partition's next ticket, so readers of one skewed partition start on
 * different splits.  A map-range read of a split that holds other maps too
 * sorts it once (sort.c) and then reads only the index range of [m0, m1).  A
 * split another reader is sorting is put back at the end of the order once;
 * if it is still being sorted then, it is scanned as it is (its raw file
 * lives until the sort publishes), so no reader ever waits on a sort.
 *
 * An in-order reader (sh_reader_open_in_order) returns each map's blocks in
 * the order they were pushed.  A partition's flushes take its whole buffer
 * to the current split, and a split is sealed before the next begins, so
 * write order is: the splits in index order, then the buffer.  It reads them
 * so, with no rotation, and scans a split another reader is sorting as it is
 * instead of putting it back (sorting is stable within a map in any case).
 *
 * Faults: a record whose header fails its check, a short file or a missing
 * file damages the split from that offset on (ShSplit.damaged_at); a payload
 * that fails its checksum loses that block's map.  The reader records the lost
 * maps, keeps checking the rest of its range without decoding, and returns
 * CM_IO at the end.  Later reads skip the damaged region, and succeed once the
 * maps it held have been re-run (their old attempts are no longer visible).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "shuffle/shuffle_int.h"

#define READ_BUF_BYTES (256 * 1024)

struct ShReader {
    ShShuffle *sh;      /* borrowed */
    int p0, p1, m0, m1; /* the ranges read */
    bool map_range;     /* [m0, m1) leaves out some maps */
    bool in_order;      /* each map's blocks in push order (see the design note) */
    int part;           /* partition being read; p1 when done */
    bool in_part;       /* part's snapshot is taken */
    /* the snapshot of `part` */
    ShBlock *mem_next; /* next buffered block to look at */
    int64_t mem_left;  /* buffered blocks of the snapshot not looked at */
    bool pinned;       /* part->pins counts this reader */
    int *order;        /* splits to visit; deferred ones again at the end; owned */
    uint8_t *deferred; /* per split: put back once already; owned */
    int n_order;       /* entries in order */
    int order_pos;     /* next entry to visit */
    int cap_splits;    /* splits order and deferred have room for (order: twice) */
    /* the file being read */
    int fd;             /* -1 when none */
    int split;          /* its split */
    bool sorted;        /* a sorted file: damage in it covers the whole split */
    bool filter;        /* records of maps outside [m0, m1) may come */
    int64_t pos, end;   /* next record's offset, end of the range */
    unsigned char *buf; /* a window of the file; owned, 8-aligned */
    size_t cap;         /* bytes of buf */
    int64_t buf_off;    /* file offset of buf[0], always a record's offset */
    size_t buf_len;     /* valid bytes in buf */
    ShDecoder dec;      /* decompression state */
    CmErr fail;         /* first loss found; from then on blocks are only checked */
};

ShReader *sh_reader_open(ShShuffle *sh, int p0, int p1, int m0, int m1, CmErr *err)
{
    ShReader *r = cm_calloc(1, sizeof *r);
    if (r == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory opening a shuffle reader");
        return NULL;
    }
    r->sh = sh;
    r->p0 = p0 < 0 ? 0 : p0;
    r->p1 = p1 > sh->n_parts ? sh->n_parts : p1;
    r->m0 = m0 < 0 ? 0 : m0;
    r->m1 = m1 > sh->n_maps ? sh->n_maps : m1;
    r->map_range = r->m0 > 0 || r->m1 < sh->n_maps;
    r->part = r->m0 < r->m1 ? r->p0 : r->p1;
    r->fd = -1;
    sh_decoder_init(&r->dec);
    cm_err_init(&r->fail);
    return r;
}

ShReader *sh_reader_open_in_order(ShShuffle *sh, int p0, int p1, int m0, int m1, CmErr *err)
{
    ShReader *r = sh_reader_open(sh, p0, p1, m0, m1, err);
    if (r != NULL) {
        r->in_order = true;
    }
    return r;
}

static void close_file(ShReader *r)
{
    if (r->fd >= 0) {
        close(r->fd);
        r->fd = -1;
    }
    r->buf_len = 0;
}

/* Drops the pin on the partition's buffer, freeing flushed buffers no reader holds. */
static void unpin(ShReader *r)
{
    if (!r->pinned) {
        return;
    }
    ShStore *st = r->sh->store;
    ShPart *p = &r->sh->parts[r->part];
    ShRetired *retired = NULL;
    cm_mutex_lock(&st->lock);
    if (--p->pins == 0) {
        retired = p->retired;
        p->retired = NULL;
    }
    cm_mutex_unlock(&st->lock);
    while (retired != NULL) {
        ShRetired *next = retired->next;
        sh_blocks_free(retired->head);
        cm_free(retired);
        retired = next;
    }
    r->pinned = false;
    r->mem_left = 0;
    r->mem_next = NULL;
}

void sh_reader_close(ShReader *r)
{
    if (r == NULL) {
        return;
    }
    close_file(r);
    unpin(r);
    sh_decoder_fini(&r->dec);
    cm_free(r->buf);
    cm_free(r->order);
    cm_free(r->deferred);
    cm_free(r);
}

/* ---- faults ---------------------------------------------------------------------------- */

/* A block's payload failed: its map is lost. */
static void lose_block(ShReader *r, const ShBlockHeader *h, const CmErr *why)
{
    ShShuffle *sh = r->sh;
    cm_mutex_lock(&sh->store->lock);
    if (sh_visible(sh, h->map_id, h->attempt) && !sh->lost[h->map_id]) {
        sh->lost[h->map_id] = 1;
        sh->stats.lost_maps++;
    }
    cm_mutex_unlock(&sh->store->lock);
    cm_err_set(&r->fail, CM_IO, -1, "shuffle %d partition %d: %s; map %d is lost", sh->id, r->part,
               why->msg, h->map_id);
}

/* Records from `at` on (all of it when whole) of split si are unreadable. */
static void damage(ShReader *r, int si, int64_t at, bool whole, const char *why)
{
    ShShuffle *sh = r->sh;
    cm_mutex_lock(&sh->store->lock);
    ShSplit *s = &sh->parts[r->part].splits[si];
    int64_t from = whole ? 0 : at;
    if (s->damaged_at < 0 || from < s->damaged_at) {
        s->damaged_at = from;
    }
    s->sealed = true;
    int hit = sh_mark_lost_locked(sh, s, s->damaged_at, r->m0, r->m1);
    cm_mutex_unlock(&sh->store->lock);
    if (hit > 0) {
        cm_err_set(&r->fail, CM_IO, -1,
                   "shuffle %d partition %d split %d: %s at byte %lld; blocks of %d map%s lost",
                   sh->id, r->part, si, why, (long long)at, hit, hit == 1 ? " are" : "s are");
    }
}

/* ---- partitions ----------------------------------------------------------------------- */

/* Takes the snapshot of r->part (see the design note). */
static CmStatus start_part(ShReader *r, CmErr *err)
{
    ShStore *st = r->sh->store;
    ShPart *p = &r->sh->parts[r->part];
    cm_mutex_lock(&st->lock);
    while (p->flushing) {
        cm_cond_wait(&st->cond, &st->lock); /* a running flush ends (store.c, I3) */
    }
    int n = p->n_splits;
    if (n > r->cap_splits) {
        int *order = cm_realloc(r->order, sizeof(int) * (size_t)n * 2);
        r->order = order != NULL ? order : r->order;
        uint8_t *deferred = order != NULL ? cm_realloc(r->deferred, (size_t)n) : NULL;
        r->deferred = deferred != NULL ? deferred : r->deferred;
        if (order == NULL || deferred == NULL) {
            cm_mutex_unlock(&st->lock);
            return cm_err_set(err, CM_OOM, -1, "out of memory reading a shuffle");
        }
        r->cap_splits = n;
    }
    if (n > 0) {
        p->splits[n - 1].sealed = true;
    }
    r->mem_next = p->head;
    r->mem_left = p->n_blocks;
    if (r->mem_left > 0) {
        p->pins++;
        r->pinned = true;
    }
    unsigned start = r->map_range && !r->in_order && n > 0 ? p->start_ticket++ % (unsigned)n : 0;
    cm_mutex_unlock(&st->lock);
    for (int i = 0; i < n; i++) {
        r->order[i] = (int)((start + (unsigned)i) % (unsigned)n);
        r->deferred[i] = 0;
    }
    r->n_order = n;
    r->order_pos = 0;
    r->in_part = true;
    return CM_OK;
}

typedef enum Plan { PLAN_SKIP, PLAN_READ, PLAN_AGAIN } Plan;

/* Decides how to read split si; store lock held (released while sorting).
 * PLAN_READ fills path, *lo, *hi, *sorted, *use_index. */
static Plan plan_split(ShReader *r, int si, char *path, size_t cap, int64_t *lo, int64_t *hi,
                       bool *sorted, bool *use_index)
{
    ShShuffle *sh = r->sh;
    ShPart *p = &sh->parts[r->part];
    ShSplit *s = &p->splits[si];
    bool any_in = false, any_out = false;
    for (int i = 0; i < s->n_pairs; i++) {
        bool in = s->pairs[i].map_id >= r->m0 && s->pairs[i].map_id < r->m1;
        any_in = any_in || (in && sh_visible(sh, s->pairs[i].map_id, s->pairs[i].attempt));
        any_out = any_out || !in;
    }
    *lo = 0;
    *hi = s->size;
    *use_index = false;
    if (s->damaged_at >= 0) {
        int hit = sh_mark_lost_locked(sh, s, s->damaged_at, r->m0, r->m1);
        if (hit > 0) {
            cm_err_set(&r->fail, CM_IO, -1,
                       "shuffle %d partition %d split %d is damaged; blocks of %d map%s lost",
                       sh->id, r->part, si, hit, hit == 1 ? " are" : "s are");
        }
        if (hit > 0 || s->damaged_at == 0 || s->state != SH_SPLIT_RAW || !any_in) {
            return PLAN_SKIP;
        }
        *hi = s->damaged_at; /* the records before the damage are fine */
    } else if (!any_in) {
        return PLAN_SKIP;
    } else if (r->map_range && any_out && s->state == SH_SPLIT_RAW) {
        s->state = SH_SPLIT_SORTING;
        bool fallback = false;
        CmErr e;
        cm_err_init(&e);
        if (sh_sort_split_locked(sh->store, p, si, &fallback, &e) != CM_OK) {
            return PLAN_AGAIN; /* damaged: decide again from damaged_at */
        }
        s = &p->splits[si];
        *use_index = !fallback;
    } else if (r->map_range && any_out && s->state == SH_SPLIT_SORTING && !r->deferred[si] &&
               !r->in_order) {
        r->deferred[si] = 1;
        r->order[r->n_order++] = si;
        return PLAN_SKIP;
    } else if (r->map_range && any_out && s->state == SH_SPLIT_SORTED) {
        *use_index = true;
    }
    *sorted = s->state == SH_SPLIT_SORTED;
    sh_split_path(sh, r->part, si, *sorted ? "sorted" : "data", path, cap);
    return PLAN_READ;
}

/* Opens split si of the current partition for reading, or skips it. */
static void open_split(ShReader *r, int si)
{
    ShShuffle *sh = r->sh;
    char path[1024];
    int64_t lo, hi;
    bool sorted = false, use_index = false;
    Plan plan;
    int fd = -1, open_errno = 0;
    cm_mutex_lock(&sh->store->lock);
    do {
        plan = plan_split(r, si, path, sizeof path, &lo, &hi, &sorted, &use_index);
    } while (plan == PLAN_AGAIN);
    if (plan == PLAN_READ) {
        /* Opened under the lock: a sorter unlinks the raw file only after
         * publishing, and this descriptor keeps it readable. */
        fd = open(path, O_RDONLY | O_CLOEXEC);
        open_errno = errno;
    }
    cm_mutex_unlock(&sh->store->lock);
    if (plan == PLAN_SKIP) {
        return;
    }
    if (fd < 0) {
        damage(r, si, 0, true, open_errno == ENOENT ? "the file is missing" : strerror(open_errno));
        return;
    }
    if (use_index && !sh_sort_index_range(sh, r->part, si, r->m0, r->m1, &lo, &hi)) {
        lo = 0; /* no usable index: scan the sorted file whole */
    }
    r->fd = fd;
    r->split = si;
    r->sorted = sorted;
    r->filter = r->map_range;
    r->pos = lo;
    r->end = hi;
    r->buf_len = 0;
}

/* ---- records ------------------------------------------------------------------------------ */

/* Makes [off, off + n) of the file available in buf: 1, 0 on a short file,
 * -1 on OOM. */
static int window(ShReader *r, int64_t off, size_t n, CmErr *err)
{
    if (off >= r->buf_off && off + (int64_t)n <= r->buf_off + (int64_t)r->buf_len) {
        return 1;
    }
    if (n > r->cap || r->buf == NULL) {
        size_t cap = r->cap ? r->cap : READ_BUF_BYTES;
        while (cap < n) {
            cap *= 2;
        }
        unsigned char *buf = cm_malloc(cap);
        if (buf == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory reading a shuffle");
            return -1;
        }
        cm_free(r->buf);
        r->buf = buf;
        r->cap = cap;
    }
    int64_t want = r->end - off < (int64_t)r->cap ? r->end - off : (int64_t)r->cap;
    size_t got = 0;
    while (got < (size_t)want) {
        ssize_t k = pread(r->fd, r->buf + got, (size_t)want - got, (off_t)(off + (int64_t)got));
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            break;
        }
        got += (size_t)k;
    }
    r->buf_off = off;
    r->buf_len = got;
    return got >= n ? 1 : 0;
}

/* The file ended or went bad at `at`. */
static int file_damage(ShReader *r, int64_t at, const char *why)
{
    damage(r, r->split, at, r->sorted, why);
    close_file(r);
    return 0;
}

/* Decodes a wanted block, or only checks it once the reader failed.  1 with
 * a block in out, 0 to go on, -1 on a hard error. */
static int take_block(ShReader *r, const ShBlockHeader *h, const unsigned char *stored,
                      CmBatch *out, CmErr *err)
{
    CmErr e;
    cm_err_init(&e);
    if (r->fail.code != CM_OK) {
        if (!sh_block_verify(h, stored)) {
            cm_err_set(&e, CM_IO, -1, "a block failed its checksum");
            lose_block(r, h, &e);
        }
        return 0;
    }
    if (sh_block_decode_stored(h, stored, out, &r->dec, &e) == CM_OK) {
        return 1;
    }
    if (e.code == CM_IO) {
        lose_block(r, h, &e);
        return 0;
    }
    cm_err_copy(err, &e);
    return -1;
}

/* The next wanted block of the open file: 1 with a block in out, 0 when the
 * range is done (the file is closed), -1 on a hard error. */
static int next_file_block(ShReader *r, CmBatch *out, CmErr *err)
{
    while (r->pos < r->end) {
        int64_t at = r->pos;
        int w = r->end - at >= SH_DISK_HDR_BYTES ? window(r, at, SH_DISK_HDR_BYTES, err) : 0;
        if (w <= 0) {
            return w < 0 ? -1 : file_damage(r, at, "the file is truncated");
        }
        ShBlockHeader h;
        if (!sh_block_header_unpack(r->buf + (at - r->buf_off), &h)) {
            return file_damage(r, at, "a block header is damaged");
        }
        int64_t len = sh_block_record_bytes(&h);
        if (len > r->end - at) {
            return file_damage(r, at, "the file is truncated");
        }
        r->pos = at + len;
        bool in = h.map_id >= r->m0 && h.map_id < r->m1;
        if (!sh_visible(r->sh, h.map_id, h.attempt) || (r->filter && !in)) {
            continue;
        }
        if ((w = window(r, at, (size_t)len, err)) <= 0) {
            return w < 0 ? -1 : file_damage(r, at, "the file is truncated");
        }
        int got = take_block(r, &h, r->buf + (at - r->buf_off) + SH_DISK_HDR_BYTES, out, err);
        if (got != 0) {
            return got;
        }
    }
    close_file(r);
    return 0;
}

/* The next wanted block of the buffer snapshot; unpins at its end. */
static int next_mem_block(ShReader *r, CmBatch *out, CmErr *err)
{
    while (r->mem_left > 0) {
        ShBlock *b = r->mem_next;
        /* Only the snapshot's last block can be a tail whose next is written. */
        r->mem_next = --r->mem_left > 0 ? b->next : NULL;
        bool in = b->hdr.map_id >= r->m0 && b->hdr.map_id < r->m1;
        if (!in || !sh_visible(r->sh, b->hdr.map_id, b->hdr.attempt)) {
            continue;
        }
        int got = take_block(r, &b->hdr, b->payload, out, err);
        if (got != 0) {
            return got;
        }
    }
    unpin(r);
    return 0;
}

CmStatus sh_reader_next(ShReader *r, CmBatch *out, bool *eof, CmErr *err)
{
    *eof = false;
    for (;;) {
        int got = 0;
        if (r->in_part && r->mem_left > 0 && !r->in_order) {
            got = next_mem_block(r, out, err);
        } else if (r->fd >= 0) {
            got = next_file_block(r, out, err);
        } else if (r->in_part && r->order_pos < r->n_order) {
            open_split(r, r->order[r->order_pos++]);
        } else if (r->in_part && r->mem_left > 0) {
            got = next_mem_block(r, out, err); /* in order: the buffer after the splits */
        } else if (r->in_part) {
            unpin(r);
            r->in_part = false;
            r->part++;
        } else if (r->part < r->p1) {
            got = start_part(r, err) == CM_OK ? 0 : -1;
        } else {
            cm_batch_reset(out);
            *eof = true;
            if (r->fail.code != CM_OK) {
                cm_err_copy(err, &r->fail);
                return err->code;
            }
            return CM_OK;
        }
        if (got > 0) {
            return CM_OK;
        }
        if (got < 0) {
            return err->code;
        }
    }
}
