/*
 * home.c - a chunk's column records, and the data file that a directory
 * database's chunks go to when evicted before their commit (contract in
 * persist_int.h).
 *
 * The records are laid out here for both writers: the commit (persist.c),
 * which encodes many chunks at once on the session's workers, and the home,
 * which encodes one chunk on the evicting thread.  Both give the same bytes,
 * so a record the home wrote is as good as one the commit would write.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/thread.h"
#include "storage/persist_int.h"

static bool has_range(CmTypeId id)
{
    return id == CM_T_BOOL || id == CM_T_INT32 || id == CM_T_DATE || id == CM_T_INT64 ||
           id == CM_T_DECIMAL || id == CM_T_TIME || id == CM_T_TIMESTAMP;
}

void pm_zone_of(const CmVec *v, CmType type, int n, PmZone *z)
{
    z->min = 1;
    z->max = 0;
    z->n_nulls = 0;
    bool is_first = true;
    for (int i = 0; i < n; i++) {
        if (cm_vec_is_null(v, (uint32_t)i)) {
            z->n_nulls++;
            continue;
        }
        if (!has_range(type.id)) {
            continue;
        }
        int64_t x = type.id == CM_T_BOOL                            ? ((const uint8_t *)v->data)[i]
                    : type.id == CM_T_INT32 || type.id == CM_T_DATE ? ((const int32_t *)v->data)[i]
                                                                    : ((const int64_t *)v->data)[i];
        if (is_first || x < z->min) {
            z->min = x;
        }
        if (is_first || x > z->max) {
            z->max = x;
        }
        is_first = false;
    }
}

bool pm_write_data_header(int fd)
{
    unsigned char hdr[PM_DATA_HDR_BYTES] = {0};
    uint32_t version = PM_FORMAT_VERSION;
    memcpy(hdr, PM_DATA_MAGIC, 8);
    memcpy(hdr + 8, &version, 4);
    return sh_pwrite_all(fd, hdr, sizeof hdr, 0);
}

int64_t pm_lay_columns(PmRecBuf *buf, const CmBatch *b, ShCompressor *c, PmZone *zones, CmErr *err)
{
    int64_t used = 0;
    for (int col = 0; col < b->n_cols; col++) {
        CmBatch one = {.n_rows = b->n_rows, .n_cols = 1, .cols = &b->cols[col]};
        ShBlock *blk = sh_block_encode_packed(&one, err);
        if (blk == NULL) {
            return 0;
        }
        size_t bound = sh_compress_bound((size_t)blk->hdr.raw_bytes);
        size_t stored = (size_t)blk->hdr.stored_bytes;
        size_t need = (size_t)used + SH_DISK_HDR_BYTES +
                      (size_t)SH_ALIGN8((int64_t)(bound > stored ? bound : stored));
        if (need > buf->cap) {
            size_t cap = need > 2 * buf->cap ? need : 2 * buf->cap;
            unsigned char *grown = cm_realloc(buf->rec, cap);
            if (grown == NULL) {
                cm_free(blk);
                cm_err_set(err, CM_OOM, -1, "out of memory saving a table");
                return 0;
            }
            buf->rec = grown;
            buf->cap = cap;
        }
        zones[col].bytes = sh_block_lay_record(blk, c, buf->rec + used);
        used += zones[col].bytes;
        cm_free(blk);
    }
    return used;
}

/* ---- the home ----------------------------------------------------------------------- */

/* A record the home wrote: its place, rows, and the zones of its columns. */
typedef struct HomeRec {
    int64_t offset, bytes;
    int n_rows, n_cols;
    size_t zone_at; /* its first zone in PmHome.zones */
} HomeRec;

struct PmHome {
    StBlockHome base; /* first: the store calls write with it */
    CmMutex lock;     /* guards everything below: evictions write from any thread */
    uint64_t id;
    char *path; /* owned; borrowed by the blocks written */
    int fd;     /* -1 until the first write */
    int64_t off;
    bool is_dirty; /* written since the last sync */
    ShCompressor *cctx;
    PmRecBuf buf;
    HomeRec *recs; /* owned; by offset (written in that order) */
    int n_recs, cap_recs;
    PmZone *zones; /* owned */
    size_t n_zones, cap_zones;
};

static CmStatus io_error(CmErr *err, const char *what, const char *path)
{
    return cm_err_set(err, CM_IO, -1, "cannot %s '%s': %s", what, path,
                      errno ? strerror(errno) : "short write");
}

/* Creates the file and writes its header (under the lock). */
static CmStatus home_create(PmHome *h, CmErr *err)
{
    errno = 0;
    h->fd = open(h->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (h->fd < 0 || !pm_write_data_header(h->fd)) {
        io_error(err, "create", h->path);
        if (h->fd >= 0) {
            close(h->fd);
            unlink(h->path);
            h->fd = -1;
        }
        return err->code;
    }
    h->off = PM_DATA_HDR_BYTES;
    return CM_OK;
}

/* Room for one more record of n_cols zones (under the lock); false on OOM. */
static bool home_room(PmHome *h, int n_cols)
{
    if (h->n_recs == h->cap_recs) {
        int cap = h->cap_recs ? 2 * h->cap_recs : 64;
        HomeRec *grown = cm_realloc(h->recs, sizeof(HomeRec) * (size_t)cap);
        if (grown == NULL) {
            return false;
        }
        h->recs = grown;
        h->cap_recs = cap;
    }
    if (h->n_zones + (size_t)n_cols > h->cap_zones) {
        size_t cap = h->cap_zones ? 2 * h->cap_zones : 1024;
        cap = cap < h->n_zones + (size_t)n_cols ? h->n_zones + (size_t)n_cols : cap;
        PmZone *grown = cm_realloc(h->zones, sizeof(PmZone) * cap);
        if (grown == NULL) {
            return false;
        }
        h->zones = grown;
        h->cap_zones = cap;
    }
    return true;
}

/* StBlockHome.write: the batch's records appended to the file.  One writer
 * at a time: evictions are rare next to the work that causes them, and the
 * encoding here is work the commit no longer does. */
static CmStatus home_write(StBlockHome *base, const CmBatch *batch, StBlockLoc *loc,
                           int64_t *col_bytes, const char **path, CmErr *err)
{
    PmHome *h = (PmHome *)base;
    cm_mutex_lock(&h->lock);
    if (h->fd < 0 && home_create(h, err) != CM_OK) {
        goto done;
    }
    if (h->cctx == NULL && (h->cctx = sh_compressor_new(SH_BLOCK_CODEC_ZSTD)) == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory saving a table");
        goto done;
    }
    if (!home_room(h, batch->n_cols)) {
        cm_err_set(err, CM_OOM, -1, "out of memory saving a table");
        goto done;
    }
    PmZone *zones = &h->zones[h->n_zones];
    for (int col = 0; col < batch->n_cols; col++) {
        pm_zone_of(&batch->cols[col], batch->cols[col].type, batch->n_rows, &zones[col]);
    }
    int64_t bytes = pm_lay_columns(&h->buf, batch, h->cctx, zones, err);
    if (bytes == 0) {
        goto done;
    }
    errno = 0;
    if (!sh_pwrite_all(h->fd, h->buf.rec, (size_t)bytes, h->off)) {
        io_error(err, "write", h->path);
        goto done;
    }
    h->recs[h->n_recs++] = (HomeRec){.offset = h->off,
                                     .bytes = bytes,
                                     .n_rows = batch->n_rows,
                                     .n_cols = batch->n_cols,
                                     .zone_at = h->n_zones};
    h->n_zones += (size_t)batch->n_cols;
    for (int col = 0; col < batch->n_cols; col++) {
        col_bytes[col] = zones[col].bytes;
    }
    *loc = (StBlockLoc){.fd = h->fd, .offset = h->off, .bytes = bytes};
    *path = h->path;
    h->off += bytes;
    h->is_dirty = true;
done:
    if (h->buf.cap > ((size_t)4 << 20)) { /* a chunk of long strings: not kept */
        cm_free(h->buf.rec);
        h->buf = (PmRecBuf){0};
    }
    cm_mutex_unlock(&h->lock);
    return err->code;
}

PmHome *pm_home_new(const char *path, uint64_t id)
{
    PmHome *h = cm_calloc(1, sizeof *h);
    if (h == NULL || (h->path = cm_strdup(path)) == NULL) {
        cm_free(h);
        return NULL;
    }
    h->base.write = home_write;
    h->id = id;
    h->fd = -1;
    cm_mutex_init(&h->lock);
    return h;
}

StBlockHome *pm_home_base(PmHome *h)
{
    return &h->base;
}

uint64_t pm_home_id(const PmHome *h)
{
    return h->id;
}

int pm_home_fd(const PmHome *h)
{
    return h->fd;
}

const char *pm_home_path(const PmHome *h)
{
    return h->path;
}

bool pm_home_record(PmHome *h, const StChunk *c, int n_cols, PmChunk *pc, PmZone *zones)
{
    int rows;
    bool by_column;
    if (st_block_saved(c->block, &rows, &by_column) != h->path || rows != c->n_rows || !by_column) {
        return false;
    }
    StBlockLoc loc = st_block_loc(c->block);
    bool found = false;
    cm_mutex_lock(&h->lock);
    int lo = 0, hi = h->n_recs;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (h->recs[mid].offset < loc.offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    const HomeRec *r = lo < h->n_recs ? &h->recs[lo] : NULL;
    if (r != NULL && r->offset == loc.offset && r->bytes == loc.bytes && r->n_cols == n_cols &&
        r->n_rows == c->n_rows) {
        *pc = (PmChunk){.file_id = h->id,
                        .n_rows = c->n_rows,
                        .offset = r->offset,
                        .bytes = r->bytes,
                        .block = c->block,
                        .was_sealed = c->sealed};
        memcpy(zones, &h->zones[r->zone_at], sizeof(PmZone) * (size_t)n_cols);
        found = true;
    }
    cm_mutex_unlock(&h->lock);
    return found;
}

CmStatus pm_home_sync(PmHome *h, CmErr *err)
{
    cm_mutex_lock(&h->lock);
    errno = 0;
    if (h->fd >= 0 && h->is_dirty) {
        if (fsync(h->fd) != 0) {
            io_error(err, "sync", h->path);
        } else {
            h->is_dirty = false;
        }
    }
    cm_mutex_unlock(&h->lock);
    return err->code;
}

void pm_home_forget(PmHome *h)
{
    cm_mutex_lock(&h->lock);
    h->n_recs = 0;
    h->n_zones = 0;
    cm_mutex_unlock(&h->lock);
}

void pm_home_free(PmHome *h, bool keep)
{
    if (h == NULL) {
        return;
    }
    if (h->fd >= 0) {
        close(h->fd);
        if (!keep) {
            unlink(h->path);
        }
    }
    sh_compressor_free(h->cctx);
    cm_free(h->buf.rec);
    cm_free(h->recs);
    cm_free(h->zones);
    cm_free(h->path);
    cm_mutex_fini(&h->lock);
    cm_free(h);
}
