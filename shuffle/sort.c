/*
 * sort.c - sort on read: a sealed split rewritten with its records grouped by
 * map id, plus an index of each map's byte range.
 *
 * Design: streaming, in bounded memory.  The split's pair table already says
 * how many record bytes each map has in it, so every map's range in the
 * sorted file is known before any data is read (prefix sums in map order).
 * One sequential pass over the raw file then copies each record to its map's
 * cursor.  Memory: one read buffer and one cursor per map present, whatever
 * the split's size (which split_threshold bounds, and with it the time a sort
 * takes).  Records are copied verbatim, so payload checksums stay valid and a
 * damaged payload is still caught by the reader that decodes it.
 * The sort runs in the reader that claimed the split (state SORTING) and
 * publishes under the store lock: state SORTED, then the raw file is
 * unlinked (readers that opened it before keep their descriptor).
 *
 * Index file: a 16-byte header (magic u32, entry count u32, xxh64 of the
 * entries u64), then per map in ascending order (map i32, pad i32, offset i64,
 * length i64).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/hash.h"
#include "shuffle/shuffle_int.h"

#define SORT_BUF_BYTES (1 << 20)
#define INDEX_MAGIC 0x31494853u /* "SHI1" */

typedef struct MapRange {
    int32_t map_id; /* the map */
    int32_t pad;    /* 0 */
    int64_t off;    /* first byte of its records in the sorted file */
    int64_t len;    /* bytes of its records */
} MapRange;

typedef struct IndexHeader {
    uint32_t magic; /* INDEX_MAGIC */
    uint32_t n;     /* entries */
    uint64_t check; /* xxh64 of the entries */
} IndexHeader;

/* A window over the raw file. */
typedef struct Window {
    int fd;             /* the raw file */
    unsigned char *buf; /* SORT_BUF_BYTES; owned by the sort */
    int64_t off;        /* file offset of buf[0] */
    size_t len;         /* valid bytes */
    int64_t end;        /* bytes of the split */
} Window;

static int pair_cmp(const void *a, const void *b)
{
    const ShPair *x = a, *y = b;
    return x->map_id < y->map_id ? -1 : x->map_id > y->map_id;
}

/* Makes [off, off + n) available when n fits the buffer. */
static bool window_get(Window *w, int64_t off, size_t n)
{
    if (off >= w->off && off + (int64_t)n <= w->off + (int64_t)w->len) {
        return true;
    }
    if (n > SORT_BUF_BYTES) {
        return false;
    }
    int64_t want = w->end - off < SORT_BUF_BYTES ? w->end - off : SORT_BUF_BYTES;
    w->off = off;
    w->len = 0;
    if (want < (int64_t)n || !sh_pread_all(w->fd, w->buf, (size_t)want, off)) {
        return false;
    }
    w->len = (size_t)want;
    return true;
}

/* Copies len bytes at `from` of the raw file to `to` of the sorted one. */
static bool copy_record(Window *w, int out, int64_t from, int64_t len, int64_t to)
{
    if (window_get(w, from, (size_t)len)) {
        return sh_pwrite_all(out, w->buf + (from - w->off), (size_t)len, to);
    }
    w->len = 0; /* a record bigger than the buffer: copy it in pieces */
    for (int64_t done = 0; done < len;) {
        size_t k = len - done < SORT_BUF_BYTES ? (size_t)(len - done) : SORT_BUF_BYTES;
        if (!sh_pread_all(w->fd, w->buf, k, from + done) ||
            !sh_pwrite_all(out, w->buf, k, to + done)) {
            return false;
        }
        done += (int64_t)k;
    }
    return true;
}

static MapRange *find_range(MapRange *r, int n, int32_t map)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (r[mid].map_id < map) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < n && r[lo].map_id == map ? &r[lo] : NULL;
}

/* Builds the map ranges from the pairs (sorted here).  Returns how many. */
static int build_ranges(ShPair *pairs, int n_pairs, MapRange *ranges)
{
    qsort(pairs, (size_t)n_pairs, sizeof *pairs, pair_cmp);
    int n = 0;
    int64_t off = 0;
    for (int i = 0; i < n_pairs; i++) {
        if (n == 0 || ranges[n - 1].map_id != pairs[i].map_id) {
            ranges[n++] = (MapRange){pairs[i].map_id, 0, off, 0};
        }
        ranges[n - 1].len += pairs[i].bytes;
        off += pairs[i].bytes;
    }
    return n;
}

/* The copying pass.  Returns -1 when done, else the offset of the first
 * unreadable record; *io_ok false when writing failed. */
static int64_t copy_pass(Window *w, int out, MapRange *ranges, int n_ranges, int64_t *cursor,
                         bool *io_ok)
{
    for (int64_t pos = 0; pos < w->end;) {
        ShBlockHeader h;
        if (w->end - pos < SH_DISK_HDR_BYTES || !window_get(w, pos, SH_DISK_HDR_BYTES) ||
            !sh_block_header_unpack(w->buf + (pos - w->off), &h)) {
            return pos;
        }
        int64_t len = sh_block_record_bytes(&h);
        MapRange *r = find_range(ranges, n_ranges, h.map_id);
        if (len > w->end - pos || r == NULL) {
            return pos;
        }
        int64_t *c = &cursor[r - ranges];
        if (*c + len > r->off + r->len) {
            return pos;
        }
        if (!copy_record(w, out, pos, len, *c)) {
            *io_ok = false; /* a read failing here is damage too: told apart below */
            return pos;
        }
        *c += len;
        pos += len;
    }
    return -1;
}

static bool write_index(const char *path, const MapRange *ranges, int n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        return false;
    }
    IndexHeader h = {INDEX_MAGIC, (uint32_t)n, XXH64(ranges, sizeof(MapRange) * (size_t)n, 0)};
    bool ok = sh_pwrite_all(fd, &h, sizeof h, 0) &&
              sh_pwrite_all(fd, ranges, sizeof(MapRange) * (size_t)n, sizeof h);
    return close(fd) == 0 && ok;
}

/* Sorts the raw file; see sh_sort_split_locked for the outcome.  Unlocked. */
static bool sort_files(const char *data, const char *sorted, const char *index, int64_t size,
                       ShPair *pairs, int n_pairs, int64_t *bad_at)
{
    MapRange *ranges = cm_malloc(sizeof(MapRange) * (size_t)(n_pairs ? n_pairs : 1));
    int64_t *cursor = cm_malloc(sizeof(int64_t) * (size_t)(n_pairs ? n_pairs : 1));
    Window w = {.fd = -1, .buf = cm_malloc(SORT_BUF_BYTES), .end = size};
    int out = -1;
    bool ok = false;
    if (ranges == NULL || cursor == NULL || w.buf == NULL) {
        goto done;
    }
    int n = build_ranges(pairs, n_pairs, ranges);
    for (int i = 0; i < n; i++) {
        cursor[i] = ranges[i].off;
    }
    w.fd = open(data, O_RDONLY | O_CLOEXEC);
    if (w.fd < 0) {
        *bad_at = errno == ENOENT ? 0 : -1;
        goto done;
    }
    out = open(sorted, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0) {
        goto done;
    }
    bool io_ok = true;
    int64_t bad = copy_pass(&w, out, ranges, n, cursor, &io_ok);
    if (bad >= 0) {
        /* A write failure is not damage; a short read of a sealed file is. */
        unsigned char probe;
        bool readable = sh_pread_all(w.fd, &probe, 1, bad);
        *bad_at = io_ok || !readable ? bad : -1;
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (cursor[i] != ranges[i].off + ranges[i].len) {
            goto done; /* the pair table disagrees with the file: scan it instead */
        }
    }
    ok = write_index(index, ranges, n);
done:
    if (out >= 0 && close(out) != 0) {
        ok = false;
    }
    if (w.fd >= 0) {
        close(w.fd);
    }
    cm_free(w.buf);
    cm_free(cursor);
    cm_free(ranges);
    return ok;
}

CmStatus sh_sort_split_locked(ShStore *st, ShPart *p, int si, bool *fallback, CmErr *err)
{
    ShShuffle *sh = p->sh;
    ShSplit *s = &p->splits[si];
    int64_t size = s->size;
    int n_pairs = s->n_pairs;
    ShPair *pairs = cm_malloc(sizeof(ShPair) * (size_t)(n_pairs ? n_pairs : 1));
    if (pairs != NULL) {
        memcpy(pairs, s->pairs, sizeof(ShPair) * (size_t)n_pairs);
    }
    char data[1024], sorted[1024], index[1024];
    sh_split_path(sh, p->idx, si, "data", data, sizeof data);
    sh_split_path(sh, p->idx, si, "sorted", sorted, sizeof sorted);
    sh_split_path(sh, p->idx, si, "index", index, sizeof index);
    cm_mutex_unlock(&st->lock);
    int64_t bad_at = -1;
    bool ok = pairs != NULL && sort_files(data, sorted, index, size, pairs, n_pairs, &bad_at);
    cm_free(pairs);
    cm_mutex_lock(&st->lock);
    s = &p->splits[si]; /* a flush may have grown the array meanwhile */
    if (ok) {
        s->state = SH_SPLIT_SORTED;
        unlink(data);
        sh->stats.sorted_on_read++;
        sh->stats.files += 2;
    } else {
        s->state = SH_SPLIT_RAW;
        unlink(sorted);
        unlink(index);
        if (bad_at >= 0 && (s->damaged_at < 0 || bad_at < s->damaged_at)) {
            s->damaged_at = bad_at;
        }
    }
    cm_cond_broadcast(&st->cond);
    *fallback = !ok;
    if (bad_at >= 0) {
        return cm_err_set(err, CM_IO, -1,
                          "shuffle %d partition %d split %d is damaged at byte %lld", sh->id,
                          p->idx, si, (long long)bad_at);
    }
    return CM_OK;
}

bool sh_sort_index_range(const ShShuffle *sh, int part, int si, int m0, int m1, int64_t *lo,
                         int64_t *hi)
{
    char path[1024];
    sh_split_path(sh, part, si, "index", path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    IndexHeader h;
    MapRange *r = NULL;
    bool ok =
        sh_pread_all(fd, &h, sizeof h, 0) && h.magic == INDEX_MAGIC && h.n <= (uint32_t)sh->n_maps;
    if (ok) {
        r = cm_malloc(sizeof(MapRange) * (size_t)(h.n ? h.n : 1));
        ok = r != NULL && sh_pread_all(fd, r, sizeof(MapRange) * h.n, sizeof h) &&
             XXH64(r, sizeof(MapRange) * h.n, 0) == h.check;
    }
    close(fd);
    if (ok) {
        int first = 0, last = (int)h.n;
        while (first < (int)h.n && r[first].map_id < m0) {
            first++;
        }
        while (last > first && r[last - 1].map_id >= m1) {
            last--;
        }
        *lo = first < last ? r[first].off : 0;
        *hi = first < last ? r[last - 1].off + r[last - 1].len : 0;
    }
    cm_free(r);
    return ok;
}
