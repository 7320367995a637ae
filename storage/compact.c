/*
 * compact.c - the data files an open rewrites (persist_int.h, pm_compact).
 *
 * A data file keeps every record written into it until the manifest names
 * none of them: the chunks an UPDATE replaced and the tail chunks an INSERT
 * wrote again stay in it as dead copies as long as one chunk there is still
 * live.  pm_compact copies the live records of each file that is mostly dead
 * into one new file, byte for byte (a record is placed only by its offset
 * and length: nothing in it is decoded or re-encoded), and points the saved
 * sets at the copies.  The caller then swaps in a manifest naming them and
 * removes the old files; a crash before the swap leaves the new file an
 * orphan, one after it leaves the old ones orphans, and the next open sweeps
 * orphans either way.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "shuffle/block.h"
#include "storage/persist_int.h"

/* A file is rewritten when its live records are under half its bytes, and it
 * has at least this many: a small file's waste is not worth the writes. */
#define COMPACT_MIN_BYTES ((int64_t)1 << 20)

typedef struct FileUse {
    uint64_t id;
    int64_t live; /* bytes of the records the manifest names */
    int fd;       /* open for the copy when `moved`, else -1 */
    bool moved;
} FileUse;

typedef struct Compactor {
    const char *dir;
    FileUse *use;
    int n_use, cap_use;
    int fd; /* the new file */
    int64_t off;
    unsigned char *buf;
    size_t cap_buf;
    bool failed;
} Compactor;

static void data_path(const char *dir, uint64_t id, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%08llu.tbl", dir, (unsigned long long)id);
}

static FileUse *use_of(Compactor *c, uint64_t id)
{
    for (int i = 0; i < c->n_use; i++) {
        if (c->use[i].id == id) {
            return &c->use[i];
        }
    }
    if (c->n_use == c->cap_use) {
        int cap = c->cap_use ? 2 * c->cap_use : 16;
        FileUse *grown = cm_realloc(c->use, sizeof(FileUse) * (size_t)cap);
        if (grown == NULL) {
            c->failed = true;
            return NULL;
        }
        c->use = grown;
        c->cap_use = cap;
    }
    c->use[c->n_use] = (FileUse){.id = id, .fd = -1};
    return &c->use[c->n_use++];
}

static void count(Compactor *c, const PmChunk *loc)
{
    FileUse *u = loc->file_id != 0 ? use_of(c, loc->file_id) : NULL;
    if (u != NULL) {
        u->live += loc->bytes;
    }
}

/* Counts the live bytes of every file `saved` names. */
static void count_all(Compactor *c, const PmSaved *saved, int n_saved)
{
    for (int i = 0; i < n_saved; i++) {
        for (int ci = 0; ci < saved[i].n_chunks; ci++) {
            count(c, &saved[i].chunks[ci]);
        }
        count(c, &saved[i].stats);
    }
}

/* Whether file u is mostly dead and large enough to rewrite. */
static bool is_wasteful(const Compactor *c, const FileUse *u)
{
    char path[4096];
    data_path(c->dir, u->id, path, sizeof path);
    struct stat sb;
    return stat(path, &sb) == 0 && sb.st_size >= COMPACT_MIN_BYTES && 2 * u->live < sb.st_size;
}

bool pm_compact_wanted(const char *dir, const PmSaved *saved, int n_saved)
{
    Compactor c = {.dir = dir};
    count_all(&c, saved, n_saved);
    bool any = false;
    for (int i = 0; i < c.n_use && !c.failed && !any; i++) {
        any = is_wasteful(&c, &c.use[i]);
    }
    cm_free(c.use);
    return any;
}

/* Marks the files worth rewriting (mostly dead, of the version written now)
 * and opens them; false when there is none. */
static bool pick(Compactor *c)
{
    bool any = false;
    for (int i = 0; i < c->n_use; i++) {
        FileUse *u = &c->use[i];
        char path[4096];
        data_path(c->dir, u->id, path, sizeof path);
        unsigned char hdr[PM_DATA_HDR_BYTES];
        uint32_t version = 0;
        if (!is_wasteful(c, u)) {
            continue;
        }
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && sh_pread_all(fd, hdr, sizeof hdr, 0) && memcmp(hdr, PM_DATA_MAGIC, 8) == 0) {
            memcpy(&version, hdr + 8, 4);
        }
        if (version != PM_FORMAT_VERSION) {
            if (fd >= 0) {
                close(fd);
            }
            continue; /* a damaged file is left for its reader to report */
        }
        u->fd = fd;
        u->moved = any = true;
    }
    return any;
}

/* Copies the record at *loc into the new file, when its file is moved, and
 * points loc at the copy. */
static void move(Compactor *c, PmChunk *loc, uint64_t new_id)
{
    FileUse *u = loc->file_id != 0 && !c->failed ? use_of(c, loc->file_id) : NULL;
    if (u == NULL || !u->moved) {
        return;
    }
    if ((size_t)loc->bytes > c->cap_buf) {
        cm_free(c->buf);
        c->cap_buf = (size_t)loc->bytes;
        if ((c->buf = cm_malloc(c->cap_buf)) == NULL) {
            c->failed = true;
            return;
        }
    }
    if (!sh_pread_all(u->fd, c->buf, (size_t)loc->bytes, loc->offset) ||
        !sh_pwrite_all(c->fd, c->buf, (size_t)loc->bytes, c->off)) {
        c->failed = true;
        return;
    }
    loc->file_id = new_id;
    loc->offset = c->off;
    c->off += loc->bytes;
}

bool pm_compact(const char *dir, PmSaved *saved, int n_saved, uint64_t new_id, uint64_t **gone,
                int *n_gone)
{
    Compactor c = {.dir = dir, .fd = -1, .off = PM_DATA_HDR_BYTES};
    PmSaved *moved = cm_calloc((size_t)n_saved + 1, sizeof(PmSaved));
    *gone = NULL;
    *n_gone = 0;
    count_all(&c, saved, n_saved);
    char path[4096];
    data_path(dir, new_id, path, sizeof path);
    bool is_made = false;
    if (moved != NULL && !c.failed && pick(&c)) {
        unsigned char hdr[PM_DATA_HDR_BYTES] = {0};
        uint32_t version = PM_FORMAT_VERSION;
        memcpy(hdr, PM_DATA_MAGIC, 8);
        memcpy(hdr + 8, &version, 4);
        c.fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        is_made = c.fd >= 0;
        c.failed = !is_made || !sh_pwrite_all(c.fd, hdr, sizeof hdr, 0);
        /* the copies go to `moved` first: `saved` changes only when all are made */
        for (int i = 0; i < n_saved && !c.failed; i++) {
            moved[i] = saved[i];
            moved[i].chunks = cm_malloc(sizeof(PmChunk) * (size_t)(saved[i].n_chunks + 1));
            if (moved[i].chunks == NULL) {
                c.failed = true;
                break;
            }
            memcpy(moved[i].chunks, saved[i].chunks, sizeof(PmChunk) * (size_t)saved[i].n_chunks);
            for (int ci = 0; ci < saved[i].n_chunks; ci++) {
                move(&c, &moved[i].chunks[ci], new_id);
            }
            move(&c, &moved[i].stats, new_id);
        }
        c.failed |= fsync(c.fd) != 0;
    }
    bool ok = is_made && !c.failed &&
              (*gone = cm_malloc(sizeof(uint64_t) * (size_t)(c.n_use + 1))) != NULL;
    for (int i = 0; moved != NULL && i < n_saved; i++) {
        if (ok) {
            cm_free(saved[i].chunks);
            saved[i].chunks = moved[i].chunks;
            saved[i].stats = moved[i].stats;
        } else {
            cm_free(moved[i].chunks);
        }
    }
    for (int i = 0; i < c.n_use; i++) {
        if (c.use[i].fd >= 0) {
            close(c.use[i].fd);
        }
        if (ok && c.use[i].moved) {
            (*gone)[(*n_gone)++] = c.use[i].id;
        }
    }
    if (c.fd >= 0) {
        close(c.fd);
    }
    if (is_made && !ok) {
        unlink(path);
    }
    cm_free(moved);
    cm_free(c.buf);
    cm_free(c.use);
    return ok;
}
