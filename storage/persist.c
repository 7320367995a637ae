/*
 * persist.c - the directory database: the lock, the data files, commit by
 * manifest swap, and loading at open (contract in persist.h).
 *
 * A commit never writes into a file the current manifest names: new rows go
 * to new files (<id>.tbl, ids from the manifest's next_file_id), and the old
 * files are unlinked only once the new manifest is durable.  Errors name the
 * file involved.
 */
#include "storage/persist.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/thread.h"
#include "shuffle/block.h"
#include "storage/persist_int.h"

#define MANIFEST "MANIFEST"
#define MANIFEST_TMP "MANIFEST.tmp"
#define LOCK_FILE "sluice.lock"

/* A data file open for reading: saved blocks (st_block_new_saved) borrow fd and path. */
typedef struct PmFile {
    uint64_t id;
    int fd;
    char *path; /* owned */
} PmFile;

struct StPersist {
    char *dir; /* owned */
    bool is_readonly;
    int lock_fd;
    uint64_t generation;   /* of the manifest on disk */
    uint64_t next_file_id; /* ids below it may name files */
    PmSaved *saved;        /* owned: the rows the manifest on disk names, one per table */
    int n_saved;
    PmBuf last;    /* the manifest on disk, for telling that nothing changed */
    PmFile *files; /* owned: the data files open for reading (saved blocks read them) */
    int n_files, cap_files;
    PmHome *home; /* owned; NULL when read-only: where evicted chunks go */
};

/* "<dir>/<name>" in buf. */
static const char *path_in(const StPersist *p, const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", p->dir, name);
    return buf;
}

static void file_name(uint64_t id, char out[32])
{
    snprintf(out, 32, "%08llu.tbl", (unsigned long long)id);
}

static CmStatus io_error(CmErr *err, const char *what, const char *path)
{
    return cm_err_set(err, CM_IO, -1, "cannot %s '%s': %s", what, path,
                      errno ? strerror(errno) : "short read or write");
}

static CmStatus fsync_dir(const StPersist *p, CmErr *err)
{
    int fd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return io_error(err, "sync the database directory", p->dir);
    }
    close(fd);
    return CM_OK;
}

/* ---- writing a table's rows ----------------------------------------------------------- */

/* Chunks encoded at once, in parallel, before they are written in order. */
#define ROUND_CHUNKS 64

/* One chunk's records, one per column, laid out by a task. */
typedef struct Encoded {
    int chunk_idx;
    PmRecBuf buf;  /* reused across rounds: the records back to back */
    int64_t bytes; /* of all the records; 0 on failure (err) */
    CmErr err;
} Encoded;

typedef struct Writer {
    StPersist *p;
    const StTable *t;
    PmSaved *s;
    uint64_t file_id; /* of the file written, once opened; else 0 */
    int fd;
    char path[4096];
    int64_t off;
    CmPool *pool;        /* borrowed; NULL: one thread */
    ShCompressor **cctx; /* owned: one per worker id, made on first use */
    int n_cctx;
    Encoded enc[ROUND_CHUNKS];
    int n_enc;
} Writer;

/* Creates the writer's new data file and writes its header. */
static CmStatus writer_open(Writer *w, CmErr *err)
{
    w->file_id = w->p->next_file_id++;
    char name[32];
    file_name(w->file_id, name);
    path_in(w->p, name, w->path, sizeof w->path);
    w->off = PM_DATA_HDR_BYTES;
    errno = 0;
    w->fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (w->fd < 0 || !pm_write_data_header(w->fd)) {
        return io_error(err, "create", w->path);
    }
    return CM_OK;
}

/* Syncs and closes the writer's file; with `failed`, removes it instead. */
static void writer_close(Writer *w, bool failed, CmErr *err)
{
    if (w->fd >= 0) {
        if (!failed && fsync(w->fd) != 0) {
            io_error(err, "sync", w->path);
            failed = true;
        }
        close(w->fd);
    }
    if (failed && w->file_id != 0) {
        unlink(w->path);
    }
    for (int i = 0; i < w->n_cctx; i++) {
        sh_compressor_free(w->cctx[i]);
    }
    cm_free(w->cctx);
    for (int i = 0; i < ROUND_CHUNKS; i++) {
        cm_free(w->enc[i].buf.rec);
    }
}

/* Encodes chunk e->chunk_idx of the table into e, and its zones into w->s.
 * A task: any worker, one Encoded each. */
static void encode_task(void *arg, int task_idx, int worker_id)
{
    Writer *w = arg;
    Encoded *e = &w->enc[task_idx];
    const StTable *t = w->t;
    const StChunk *c = t->chunks[e->chunk_idx];
    e->bytes = 0;
    if (w->cctx[worker_id] == NULL &&
        (w->cctx[worker_id] = sh_compressor_new(SH_BLOCK_CODEC_ZSTD)) == NULL) {
        cm_err_set(&e->err, CM_OOM, -1, "out of memory saving table '%s'", t->name);
        return;
    }
    const CmBatch *held = st_block_pin(c->block, NULL, &e->err);
    if (held == NULL) {
        cm_err_set(&e->err, CM_RUNTIME, -1, "the rows of '%s' were dropped from memory", t->name);
        return;
    }
    CmBatch view = *held;
    view.n_rows = c->n_rows; /* a truncated sealed block holds more: not the table's */
    view.sel = NULL;
    PmZone *zones = &w->s->zones[(size_t)e->chunk_idx * (size_t)t->n_cols];
    for (int col = 0; col < t->n_cols; col++) {
        pm_zone_of(&view.cols[col], t->types[col], c->n_rows, &zones[col]);
    }
    e->bytes = pm_lay_columns(&e->buf, &view, w->cctx[worker_id], zones, &e->err);
    st_block_unpin(c->block);
}

/* Encodes the round's chunks (in parallel on w->pool) and writes their records
 * in order to w's file (opened on first use); fills their PmChunks. */
static CmStatus flush_round(Writer *w, CmErr *err)
{
    if (w->n_enc == 0) {
        return CM_OK;
    }
    if (w->file_id == 0 && writer_open(w, err) != CM_OK) {
        return err->code;
    }
    int n_workers = w->pool != NULL ? cm_pool_size(w->pool) + 1 : 1;
    if (w->cctx == NULL) {
        if ((w->cctx = cm_calloc((size_t)n_workers, sizeof(ShCompressor *))) == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory saving table '%s'", w->t->name);
        }
        w->n_cctx = n_workers;
    }
    for (int i = 0; i < w->n_enc; i++) {
        cm_err_init(&w->enc[i].err);
    }
    if (w->pool != NULL && w->n_enc > 1) {
        cm_pool_run(w->pool, w->n_enc, encode_task, w);
    } else {
        for (int i = 0; i < w->n_enc; i++) {
            encode_task(w, i, n_workers - 1);
        }
    }
    for (int i = 0; i < w->n_enc && err->code == CM_OK; i++) {
        Encoded *e = &w->enc[i];
        if (e->err.code != CM_OK) {
            return cm_err_set(err, e->err.code, -1, "%s", e->err.msg);
        }
        errno = 0;
        if (!sh_pwrite_all(w->fd, e->buf.rec, (size_t)e->bytes, w->off)) {
            return io_error(err, "write", w->path);
        }
        const StChunk *c = w->t->chunks[e->chunk_idx];
        w->s->chunks[e->chunk_idx] = (PmChunk){.file_id = w->file_id,
                                               .n_rows = c->n_rows,
                                               .offset = w->off,
                                               .bytes = e->bytes,
                                               .block = c->block,
                                               .was_sealed = c->sealed};
        w->off += e->bytes;
    }
    w->n_enc = 0;
    return err->code;
}

/* Queues chunk ci to be written; writes a full round. */
static CmStatus write_chunk(Writer *w, int ci, CmErr *err)
{
    w->enc[w->n_enc++].chunk_idx = ci;
    return w->n_enc == ROUND_CHUNKS ? flush_round(w, err) : CM_OK;
}

/* Writes the table's statistics as one record of w's file (opened on first use). */
static CmStatus write_stats(Writer *w, PmSaved *s, CmErr *err)
{
    PmBuf b = {0};
    pm_stats_encode(w->t->stats, w->t->n_cols, &b);
    static const unsigned char pad[8];
    int64_t bytes = (int64_t)b.n;
    pm_buf_put(&b, pad, (size_t)(SH_ALIGN8(bytes) - bytes));
    if (b.is_oom) {
        pm_buf_fini(&b);
        return cm_err_set(err, CM_OOM, -1, "out of memory saving table '%s'", w->t->name);
    }
    if (w->file_id == 0 && writer_open(w, err) != CM_OK) {
        pm_buf_fini(&b);
        return err->code;
    }
    errno = 0;
    if (!sh_pwrite_all(w->fd, b.p, b.n, w->off)) {
        pm_buf_fini(&b);
        return io_error(err, "write", w->path);
    }
    s->stats = (PmChunk){.file_id = w->file_id, .offset = w->off, .bytes = bytes};
    s->is_stats_stale = w->t->stats_stale;
    w->off += (int64_t)b.n;
    pm_buf_fini(&b);
    return CM_OK;
}

/* Data file `id` when it is open for reading, else NULL. */
static const PmFile *open_file(const StPersist *p, uint64_t id)
{
    for (int i = 0; i < p->n_files; i++) {
        if (p->files[i].id == id) {
            return &p->files[i];
        }
    }
    return NULL;
}

/* The record of chunk oi of `old`, and its n_cols zones, kept in *s as chunk ci. */
static void keep_record(PmSaved *s, int ci, const PmSaved *old, int oi, int n_cols)
{
    s->chunks[ci] = old->chunks[oi];
    memcpy(&s->zones[(size_t)ci * (size_t)n_cols], &old->zones[(size_t)oi * (size_t)n_cols],
           sizeof(PmZone) * (size_t)n_cols);
}

/* The chunks of a table's last save, by block, to find those still there
 * wherever they are now (a DELETE in place moves them up). */
typedef struct SavedAt {
    uintptr_t block;
    int idx;
} SavedAt;

static int cmp_saved_at(const void *a, const void *b)
{
    uintptr_t x = ((const SavedAt *)a)->block, y = ((const SavedAt *)b)->block;
    return x < y ? -1 : x > y;
}

/* old's chunks sorted by block (owned), or NULL (none, or no memory: then
 * every chunk is written again). */
static SavedAt *saved_by_block(const PmSaved *old)
{
    SavedAt *at = old != NULL ? cm_malloc(sizeof(SavedAt) * (size_t)(old->n_chunks + 1)) : NULL;
    for (int i = 0; at != NULL && i < old->n_chunks; i++) {
        at[i] = (SavedAt){.block = (uintptr_t)old->chunks[i].block, .idx = i};
    }
    if (at != NULL) {
        qsort(at, (size_t)old->n_chunks, sizeof(SavedAt), cmp_saved_at);
    }
    return at;
}

/* The place in `old` (the same table's last save) of chunk c, unchanged, or
 * -1: it was sealed then, and a sealed chunk never changes. */
static int kept_chunk(const PmSaved *old, const SavedAt *by_block, const StChunk *c)
{
    if (by_block == NULL || !c->sealed) {
        return -1;
    }
    SavedAt key = {.block = (uintptr_t)c->block};
    const SavedAt *hit =
        bsearch(&key, by_block, (size_t)old->n_chunks, sizeof(SavedAt), cmp_saved_at);
    const PmChunk *o = hit != NULL ? &old->chunks[hit->idx] : NULL;
    return o != NULL && o->was_sealed && o->n_rows == c->n_rows ? hit->idx : -1;
}

/* Describes t's rows in *s: chunks kept from `old` (t's last save, or NULL)
 * keep their records; the others go to one new data file, fsynced.
 * *new_file is its id (0: none was needed). */
static CmStatus write_table(StPersist *p, const StTable *t, const PmSaved *old, CmPool *pool,
                            PmSaved *s, uint64_t *new_file, CmErr *err)
{
    memset(s, 0, sizeof *s);
    *new_file = 0;
    s->table_id = t->id;
    s->version = t->version;
    s->n_rows = t->n_rows;
    s->n_cols = t->n_cols;
    s->chunks = cm_calloc((size_t)t->n_chunks + 1, sizeof(PmChunk));
    s->zones = cm_calloc((size_t)t->n_chunks * (size_t)t->n_cols + 1, sizeof(PmZone));
    if (s->chunks == NULL || s->zones == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory saving table '%s'", t->name);
    }
    s->n_chunks = t->n_chunks;
    Writer w = {.p = p, .t = t, .s = s, .fd = -1, .pool = pool};
    SavedAt *by_block = saved_by_block(old);
    for (int ci = 0; ci < t->n_chunks && err->code == CM_OK; ci++) {
        int oi = kept_chunk(old, by_block, t->chunks[ci]);
        if (oi >= 0) {
            keep_record(s, ci, old, oi, t->n_cols);
        } else if (p->home != NULL &&
                   pm_home_record(p->home, t->chunks[ci], t->n_cols, &s->chunks[ci],
                                  &s->zones[(size_t)ci * (size_t)t->n_cols])) {
            /* evicted before this commit: written then, where it is kept */
        } else {
            write_chunk(&w, ci, err);
        }
    }
    cm_free(by_block);
    if (err->code == CM_OK) {
        flush_round(&w, err);
    }
    if (t->n_rows > 0 && err->code == CM_OK) {
        write_stats(&w, s, err);
    }
    writer_close(&w, err->code != CM_OK, err);
    *new_file = err->code == CM_OK ? w.file_id : 0;
    return err->code;
}

/* ---- commit ------------------------------------------------------------------------- */

typedef struct NewSet {
    const StPersist *p;
    PmSaved *saved; /* owned: one per table of the catalog */
    int n_saved;
    uint64_t *new_files; /* the data files this commit wrote */
    int n_new_files;
} NewSet;

static const PmSaved *find_saved(const PmSaved *set, int n, uint64_t version)
{
    for (int i = 0; i < n; i++) {
        if (set[i].version == version) {
            return &set[i];
        }
    }
    return NULL;
}

static const PmSaved *find_table(const PmSaved *set, int n, uint64_t table_id)
{
    for (int i = 0; i < n; i++) {
        if (set[i].table_id == table_id) {
            return &set[i];
        }
    }
    return NULL;
}

static const PmSaved *saved_of(void *ctx, const StTable *t)
{
    const NewSet *ns = ctx;
    return find_saved(ns->saved, ns->n_saved, t->version);
}

/* Copies a PmSaved (its arrays too); false on OOM. */
static bool saved_copy(const PmSaved *from, PmSaved *to)
{
    *to = *from;
    size_t nz = (size_t)from->n_chunks * (size_t)from->n_cols + 1;
    to->chunks = cm_malloc(sizeof(PmChunk) * (size_t)(from->n_chunks + 1));
    to->zones = cm_malloc(sizeof(PmZone) * nz);
    if (to->chunks == NULL || to->zones == NULL) {
        pm_saved_fini(to);
        return false;
    }
    memcpy(to->chunks, from->chunks, sizeof(PmChunk) * (size_t)from->n_chunks);
    memcpy(to->zones, from->zones, sizeof(PmZone) * (nz - 1));
    return true;
}

static void unlink_file(const StPersist *p, uint64_t id)
{
    char name[32], path[4096];
    file_name(id, name);
    unlink(path_in(p, name, path, sizeof path));
}

static void newset_free(NewSet *ns, bool unlink_new)
{
    for (int i = 0; unlink_new && i < ns->n_new_files; i++) {
        unlink_file(ns->p, ns->new_files[i]);
    }
    for (int i = 0; i < ns->n_saved; i++) {
        pm_saved_fini(&ns->saved[i]);
    }
    cm_free(ns->saved);
    cm_free(ns->new_files);
}

/* Fills ns with the saved rows of every table of cat, writing the changed ones. */
static CmStatus build_set(StPersist *p, StCatalog *cat, CmPool *pool, NewSet *ns, CmErr *err)
{
    int n = st_catalog_count(cat);
    ns->saved = cm_calloc((size_t)n + 1, sizeof(PmSaved));
    ns->new_files = cm_calloc((size_t)n + 1, sizeof(uint64_t));
    if (ns->saved == NULL || ns->new_files == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory saving the database");
    }
    for (int i = 0; i < n; i++) {
        const StEntry *e = st_catalog_entry(cat, i);
        if (e->kind != ST_ENTRY_TABLE || e->is_temp) {
            continue;
        }
        const StTable *t = e->table;
        const PmSaved *same = find_saved(p->saved, p->n_saved, t->version);
        PmSaved *s = &ns->saved[ns->n_saved++];
        uint64_t *new_file = &ns->new_files[ns->n_new_files];
        if (same != NULL) {
            if (!saved_copy(same, s)) {
                return cm_err_set(err, CM_OOM, -1, "out of memory saving the database");
            }
        } else if (write_table(p, t, find_table(p->saved, p->n_saved, t->id), pool, s, new_file,
                               err) != CM_OK) {
            return err->code;
        }
        ns->n_new_files += *new_file != 0;
    }
    return CM_OK;
}

/* Writes bytes to MANIFEST.tmp, fsyncs it, renames it over MANIFEST, fsyncs the directory. */
static CmStatus swap_manifest(const StPersist *p, const PmBuf *m, CmErr *err)
{
    char tmp[4096], final[4096];
    path_in(p, MANIFEST_TMP, tmp, sizeof tmp);
    path_in(p, MANIFEST, final, sizeof final);
    errno = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || !sh_pwrite_all(fd, m->p, m->n, 0) || fsync(fd) != 0) {
        io_error(err, "write", tmp);
        if (fd >= 0) {
            close(fd);
        }
        unlink(tmp);
        return err->code;
    }
    close(fd);
    if (rename(tmp, final) != 0) {
        io_error(err, "replace", final);
        unlink(tmp);
        return err->code;
    }
    return fsync_dir(p, err);
}

/* True when some chunk or statistics record of `set` lies in file `id`. */
static bool names_file(const PmSaved *set, int n, uint64_t id)
{
    for (int i = 0; i < n; i++) {
        if (set[i].stats.file_id == id) {
            return true;
        }
        for (int ci = 0; ci < set[i].n_chunks; ci++) {
            if (set[i].chunks[ci].file_id == id) {
                return true;
            }
        }
    }
    return false;
}

/* Forgets file id: its descriptor (no block reads it any more: the tables
 * whose chunks lay there are gone) and, unless `keep`, the file.  Never the
 * home's file, which stays open while p is. */
static void drop_file(StPersist *p, uint64_t id, bool keep)
{
    if (p->home != NULL && id == pm_home_id(p->home)) {
        return;
    }
    for (int i = 0; i < p->n_files; i++) {
        if (p->files[i].id == id) {
            close(p->files[i].fd);
            cm_free(p->files[i].path);
            p->files[i] = p->files[--p->n_files];
            break;
        }
    }
    if (!keep) {
        unlink_file(p, id); /* a second unlink of one file fails harmlessly */
    }
}

/* Unlinks the files of the old set that ns no longer names. */
static void drop_old_files(StPersist *p, const NewSet *ns)
{
    for (int i = 0; i < p->n_saved; i++) {
        const PmSaved *o = &p->saved[i];
        for (int ci = -1; ci < o->n_chunks; ci++) {
            uint64_t id = ci < 0 ? o->stats.file_id : o->chunks[ci].file_id;
            if (id != 0 && !names_file(ns->saved, ns->n_saved, id)) {
                drop_file(p, id, false);
            }
        }
    }
}

/* The bytes of two manifests past their generation and next id, checksum excluded. */
static bool same_entries(const PmBuf *a, const PmBuf *b)
{
    const size_t skip = 16 + 16, tail = 8;
    return a->n == b->n && a->n >= skip + tail &&
           memcmp(a->p + skip, b->p + skip, a->n - skip - tail) == 0;
}

static const PmFile *file_for(StPersist *p, uint64_t id, CmErr *err);

/* After a commit: each sealed chunk it wrote to a new data file (but a sealed
 * last one, which a truncate may have cut shorter than its block) becomes a
 * saved block over its records there (st_block_set_saved), as if the
 * database had been opened since.  Under memory pressure it is then dropped,
 * not written to the temp file a second time, and the next commit keeps its
 * record while the chunk is still there (kept_chunk).  The file stays open for reading while a
 * manifest names it, as the files of an open are.  Best effort: a chunk that cannot be adopted (the
 * file does not open, no memory) stays an ordinary block. */
static void adopt_written(StPersist *p, StCatalog *cat, const NewSet *ns)
{
    for (int i = 0; i < st_catalog_count(cat); i++) {
        const StEntry *e = st_catalog_entry(cat, i);
        const StTable *t = e->kind == ST_ENTRY_TABLE && !e->is_temp ? e->table : NULL;
        const PmSaved *s = t != NULL ? find_saved(p->saved, p->n_saved, t->version) : NULL;
        int64_t *col_bytes =
            s != NULL ? cm_malloc(sizeof(int64_t) * (size_t)(t->n_cols + 1)) : NULL;
        for (int ci = 0; col_bytes != NULL && ci < t->n_chunks && ci < s->n_chunks; ci++) {
            const PmChunk *pc = &s->chunks[ci];
            const StChunk *c = t->chunks[ci];
            int rows;
            bool by_column, is_new = false;
            for (int k = 0; k < ns->n_new_files && !is_new; k++) {
                is_new = ns->new_files[k] == pc->file_id;
            }
            /* a sealed last chunk may be a truncated block holding more rows */
            bool is_whole = c->n_rows == CM_BATCH_CAP || ci + 1 < t->n_chunks;
            if (!is_new || pc->block != c->block || !c->sealed || !is_whole ||
                pc->n_rows != c->n_rows || st_block_saved(c->block, &rows, &by_column) != NULL ||
                st_block_level(c->block) != ST_BLOCK_MEMORY_AND_DISK) {
                continue;
            }
            CmErr quiet;
            cm_err_init(&quiet);
            const PmFile *f = file_for(p, pc->file_id, &quiet);
            for (int col = 0; col < t->n_cols; col++) {
                col_bytes[col] = s->zones[(size_t)ci * (size_t)t->n_cols + (size_t)col].bytes;
            }
            if (f != NULL) {
                StBlockLoc loc = {.fd = f->fd, .offset = pc->offset, .bytes = pc->bytes};
                st_block_set_saved(c->block, c->n_rows, loc, col_bytes, f->path, &quiet);
            }
        }
        cm_free(col_bytes);
    }
}

CmStatus st_persist_commit(StPersist *p, const StCatalog *ccat, CmPool *pool, CmErr *err)
{
    StCatalog *cat = (StCatalog *)ccat; /* read only */
    CM_ASSERT(!p->is_readonly);
    NewSet ns = {.p = p};
    PmBuf m = {0};
    bool is_committed = false;
    if (build_set(p, cat, pool, &ns, err) != CM_OK ||
        pm_manifest_encode(cat, p->generation + 1, p->next_file_id, saved_of, &ns, &m, err) !=
            CM_OK) {
        goto done;
    }
    if (ns.n_new_files == 0 && same_entries(&m, &p->last)) {
        goto done; /* nothing changed: nothing to write */
    }
    bool names_home = p->home != NULL && names_file(ns.saved, ns.n_saved, pm_home_id(p->home));
    if ((names_home && pm_home_sync(p->home, err) != CM_OK) || swap_manifest(p, &m, err) != CM_OK) {
        goto done;
    }
    is_committed = true;
    if (p->home != NULL) {
        pm_home_forget(p->home); /* the records kept are found by block from now on */
    }
    drop_old_files(p, &ns);
    for (int i = 0; i < p->n_saved; i++) {
        pm_saved_fini(&p->saved[i]);
    }
    cm_free(p->saved);
    p->saved = ns.saved;
    p->n_saved = ns.n_saved;
    ns.saved = NULL;
    ns.n_saved = 0;
    p->generation++;
    pm_buf_fini(&p->last);
    p->last = m;
    m = (PmBuf){0};
    adopt_written(p, cat, &ns);
done:
    newset_free(&ns, !is_committed);
    pm_buf_fini(&m);
    return err->code;
}

/* ---- opening ------------------------------------------------------------------------ */

static CmStatus check_data_header(int fd, const char *path, CmErr *err)
{
    unsigned char hdr[PM_DATA_HDR_BYTES];
    uint32_t version = 0;
    errno = 0;
    if (!sh_pread_all(fd, hdr, sizeof hdr, 0) || memcmp(hdr, PM_DATA_MAGIC, 8) != 0) {
        return errno ? io_error(err, "read", path)
                     : cm_err_set(err, CM_IO, -1, "'%s' is not a Sluice data file (damaged)", path);
    }
    memcpy(&version, hdr + 8, 4);
    return pm_check_version(version, path, err);
}

/* Data file `id`, opened (and its header checked) on first use; NULL with err. */
static const PmFile *file_for(StPersist *p, uint64_t id, CmErr *err)
{
    const PmFile *open_already = open_file(p, id);
    if (open_already != NULL) {
        return open_already;
    }
    if (p->n_files == p->cap_files) {
        int cap = p->cap_files ? p->cap_files * 2 : 16;
        PmFile *grown = cm_realloc(p->files, sizeof(PmFile) * (size_t)cap);
        if (grown == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory opening the database");
            return NULL;
        }
        p->files = grown;
        p->cap_files = cap;
    }
    char name[32], path[4096];
    file_name(id, name);
    path_in(p, name, path, sizeof path);
    PmFile f = {.id = id, .fd = -1, .path = cm_strdup(path)};
    errno = 0;
    if (f.path == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory opening the database");
    } else if ((f.fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        io_error(err, "open", path);
    } else {
        check_data_header(f.fd, path, err);
    }
    if (err->code != CM_OK) {
        if (f.fd >= 0) {
            close(f.fd);
        }
        cm_free(f.path);
        return NULL;
    }
    p->files[p->n_files] = f;
    return &p->files[p->n_files++];
}

/* Reads the statistics record of s into t->stats. */
static CmStatus load_stats(StPersist *p, StTable *t, const PmSaved *s, CmErr *err)
{
    const PmFile *f = file_for(p, s->stats.file_id, err);
    if (f == NULL) {
        return err->code;
    }
    unsigned char *buf = cm_malloc((size_t)s->stats.bytes);
    if (buf == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory opening the database");
    }
    errno = 0;
    if (!sh_pread_all(f->fd, buf, (size_t)s->stats.bytes, s->stats.offset)) {
        errno ? io_error(err, "read", f->path)
              : cm_err_set(err, CM_IO, -1, "'%s' is truncated", f->path);
    } else if (!pm_stats_decode(buf, (size_t)s->stats.bytes, t->n_cols, t->stats)) {
        cm_err_set(err, CM_IO, -1, "'%s' is damaged: the statistics at offset %lld are wrong",
                   f->path, (long long)s->stats.offset);
    }
    cm_free(buf);
    t->stats_stale = s->is_stats_stale;
    return err->code;
}

/* PmLoadFn: t's chunks become saved blocks over the records (read on first
 * pin), with their zone maps; the statistics are read now. */
static CmStatus load_rows(void *ctx, StTable *t, const PmSaved *s, CmErr *err)
{
    StPersist *p = ctx;
    if (s->n_cols != t->n_cols) {
        return cm_err_set(err, CM_INTERNAL, -1, "saved rows do not match table '%s'", t->name);
    }
    int64_t *zone = cm_malloc(sizeof(int64_t) * 3 * (size_t)t->n_cols);
    if (zone == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory opening the database");
    }
    int64_t *col_bytes = zone + 2 * t->n_cols;
    for (int i = 0; i < s->n_chunks && err->code == CM_OK; i++) {
        const PmChunk *c = &s->chunks[i];
        const PmFile *f = file_for(p, c->file_id, err);
        if (f == NULL) {
            break;
        }
        if (c->n_rows > CM_BATCH_CAP) { /* chunks may be shorter: a DELETE leaves them so */
            cm_err_set(err, CM_IO, -1, "the chunks of table '%s' do not fit this build's %d rows",
                       t->name, CM_BATCH_CAP);
            break;
        }
        bool is_by_column = false; /* version 3: a record per column (manifest.c checked them) */
        for (int col = 0; col < t->n_cols; col++) {
            const PmZone *z = &s->zones[(size_t)i * (size_t)t->n_cols + (size_t)col];
            zone[2 * col] = z->min;
            zone[2 * col + 1] = z->max;
            col_bytes[col] = z->bytes;
            is_by_column |= z->bytes > 0;
        }
        StBlockLoc loc = {.fd = f->fd, .offset = c->offset, .bytes = c->bytes};
        st_table_add_saved_chunk(t, c->n_rows, loc, is_by_column ? col_bytes : NULL, f->path, zone,
                                 err);
    }
    cm_free(zone);
    if (err->code == CM_OK && s->stats.file_id != 0) {
        load_stats(p, t, s, err);
    }
    return err->code;
}

/* Reads the whole of path into *out (owned); *missing when it does not exist. */
static CmStatus read_file(const char *path, PmBuf *out, bool *missing, CmErr *err)
{
    *missing = false;
    errno = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *missing = errno == ENOENT;
        return *missing ? CM_OK : io_error(err, "open", path);
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        close(fd);
        return io_error(err, "read", path);
    }
    out->p = cm_malloc((size_t)sb.st_size + 1);
    if (out->p == NULL) {
        close(fd);
        return cm_err_set(err, CM_OOM, -1, "out of memory reading '%s'", path);
    }
    out->n = out->cap = (size_t)sb.st_size;
    bool is_ok = sh_pread_all(fd, out->p, out->n, 0);
    close(fd);
    return is_ok ? CM_OK : io_error(err, "read", path);
}

/* True for names a database directory may hold besides MANIFEST. */
static bool is_own_file(const char *name, uint64_t *id)
{
    char *end = NULL;
    *id = 0;
    if (strcmp(name, LOCK_FILE) == 0 || strcmp(name, MANIFEST_TMP) == 0) {
        return true;
    }
    if (name[0] < '0' || name[0] > '9') {
        return false;
    }
    *id = strtoull(name, &end, 10);
    return end != NULL && strcmp(end, ".tbl") == 0;
}

/* Unlinks what no manifest names: MANIFEST.tmp and data files of no table.
 * With `check_only`, fails instead when the directory holds a foreign file
 * (a directory that is not a database yet must be empty of others). */
static CmStatus sweep(StPersist *p, bool check_only, CmErr *err)
{
    DIR *d = opendir(p->dir);
    if (d == NULL) {
        return io_error(err, "list", p->dir);
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL && err->code == CM_OK) {
        const char *n = de->d_name;
        uint64_t id = 0;
        if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0 || strcmp(n, MANIFEST) == 0) {
            continue;
        }
        if (!is_own_file(n, &id)) {
            if (check_only) {
                cm_err_set(err, CM_IO, -1,
                           "'%s' is not a Sluice database: it has no MANIFEST and holds other "
                           "files ('%s')",
                           p->dir, n);
            }
            continue;
        }
        bool is_live = strcmp(n, LOCK_FILE) == 0;
        is_live |= id != 0 && names_file(p->saved, p->n_saved, id);
        if (!is_live && !check_only && !p->is_readonly) {
            char path[4096];
            unlink(path_in(p, n, path, sizeof path));
        }
    }
    closedir(d);
    return err->code;
}

static CmStatus take_lock(StPersist *p, CmErr *err)
{
    char path[4096];
    path_in(p, LOCK_FILE, path, sizeof path);
    errno = 0;
    p->lock_fd = open(path, (p->is_readonly ? O_RDONLY : O_RDWR | O_CREAT) | O_CLOEXEC, 0644);
    if (p->lock_fd < 0 && p->is_readonly && errno == ENOENT) {
        return cm_err_set(err, CM_IO, -1, "cannot open '%s' read-only: it is not a Sluice database",
                          p->dir);
    }
    if (p->lock_fd < 0) {
        return io_error(err, "open the lock file", path);
    }
    if (flock(p->lock_fd, (p->is_readonly ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK) {
            return cm_err_set(err, CM_IO, -1,
                              "database '%s' is in use: another process has it open%s (lock "
                              "file '%s')",
                              p->dir, p->is_readonly ? " for writing" : "", path);
        }
        return io_error(err, "lock", path);
    }
    return CM_OK;
}

/* ---- compaction at open ------------------------------------------------------------ */

typedef struct SavedSet {
    const PmSaved *saved;
    int n;
} SavedSet;

static const PmSaved *saved_in_set(void *ctx, const StTable *t)
{
    const SavedSet *set = ctx;
    return find_saved(set->saved, set->n, t->version);
}

/* Rewrites the mostly dead data files (pm_compact) that manifest m, just
 * decoded into cat and p->saved, names: copies the live records, points
 * p->saved at the copies, then commits a manifest encoded from cat and them
 * (m becomes it) and removes the old files.  True when it did: cat's blocks
 * still read the old files, so the caller builds the tables again from the
 * new m.  Best effort: false leaves m, p->saved and the files as they were,
 * and the open goes on. */
static bool compact(StPersist *p, StCatalog *cat, PmBuf *m)
{
    CmErr err;
    cm_err_init(&err);
    int n_gone = 0;
    uint64_t next_id = p->next_file_id, *gone = NULL;
    PmBuf out = {0};
    if (!pm_compact(p->dir, p->saved, p->n_saved, next_id, &gone, &n_gone)) {
        return false;
    }
    SavedSet set = {p->saved, p->n_saved};
    bool is_done = pm_manifest_encode(cat, p->generation + 1, next_id + 1, saved_in_set, &set, &out,
                                      &err) == CM_OK &&
                   swap_manifest(p, &out, &err) == CM_OK;
    if (!is_done) {
        unlink_file(p, next_id); /* p->saved names it: the caller decodes m again */
    }
    for (int i = 0; is_done && i < n_gone; i++) {
        unlink_file(p, gone[i]);
    }
    if (is_done) {
        PmBuf old = *m;
        *m = out;
        out = old;
    }
    pm_buf_fini(&out);
    cm_free(gone);
    return true;
}

/* Empties cat and forgets what a decode of the manifest filled in p: its
 * saved sets and the data files its blocks read. */
static void forget(StPersist *p, StCatalog *cat)
{
    while (st_catalog_count(cat) > 0) {
        st_catalog_drop(cat, st_catalog_entry(cat, st_catalog_count(cat) - 1)->name);
    }
    for (int i = 0; i < p->n_saved; i++) {
        pm_saved_fini(&p->saved[i]);
    }
    cm_free(p->saved);
    p->saved = NULL;
    p->n_saved = 0;
    while (p->n_files > 0) {
        drop_file(p, p->files[0].id, true);
    }
}

/* Loads MANIFEST into cat, or makes the directory a database when it has none. */
static CmStatus load(StPersist *p, StCatalog *cat, CmErr *err)
{
    char path[4096];
    path_in(p, MANIFEST, path, sizeof path);
    PmBuf m = {0};
    bool missing = false;
    if (read_file(path, &m, &missing, err) != CM_OK) {
        return err->code;
    }
    if (missing) {
        if (p->is_readonly) {
            return cm_err_set(err, CM_IO, -1,
                              "cannot open '%s' read-only: it is not a Sluice database (no "
                              "MANIFEST)",
                              p->dir);
        }
        p->next_file_id = 1;
        if (sweep(p, true, err) != CM_OK) {
            return err->code;
        }
        return st_persist_commit(p, cat, NULL, err); /* an empty manifest: now a database */
    }
    pm_manifest_decode(m.p, m.n, path, cat, load_rows, p, &p->saved, &p->n_saved, &p->generation,
                       &p->next_file_id, err);
    if (err->code == CM_OK && !p->is_readonly && pm_compact_wanted(p->dir, p->saved, p->n_saved)) {
        if (compact(p, cat, &m)) {
            /* the tables are built again once the files are rewritten: the
             * blocks of these read the old ones */
            forget(p, cat);
            pm_manifest_decode(m.p, m.n, path, cat, load_rows, p, &p->saved, &p->n_saved,
                               &p->generation, &p->next_file_id, err);
        }
    }
    if (err->code != CM_OK) {
        pm_buf_fini(&m);
        return err->code;
    }
    p->last = m;
    return CM_OK;
}

/* Makes p's home (a file id no manifest has named) and gives it to the
 * tables of cat, whose chunks sealed from now on go there when evicted. */
static CmStatus give_home(StPersist *p, StCatalog *cat, CmErr *err)
{
    uint64_t id = p->next_file_id++;
    char name[32], path[4096];
    file_name(id, name);
    if ((p->home = pm_home_new(path_in(p, name, path, sizeof path), id)) == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory opening '%s'", p->dir);
    }
    for (int i = 0; i < st_catalog_count(cat); i++) {
        const StEntry *e = st_catalog_entry(cat, i);
        if (e->kind == ST_ENTRY_TABLE) {
            st_table_set_home(e->table, pm_home_base(p->home));
        }
    }
    return CM_OK;
}

StPersist *st_persist_open(const char *dir, bool readonly, StCatalog *cat, CmErr *err)
{
    StPersist *p = cm_calloc(1, sizeof *p);
    if (p == NULL || (p->dir = cm_strdup(dir)) == NULL) {
        cm_free(p);
        cm_err_set(err, CM_OOM, -1, "out of memory opening '%s'", dir);
        return NULL;
    }
    p->is_readonly = readonly;
    p->lock_fd = -1;
    struct stat sb;
    errno = 0;
    if (!readonly && mkdir(dir, 0755) != 0 && errno != EEXIST) {
        io_error(err, "create the database directory", dir);
    } else if (stat(dir, &sb) != 0) {
        io_error(err, "open the database", dir);
    } else if (!S_ISDIR(sb.st_mode)) {
        cm_err_set(err, CM_IO, -1, "cannot open '%s': a database is a directory, this is a file",
                   dir);
    } else if (take_lock(p, err) == CM_OK && load(p, cat, err) == CM_OK &&
               sweep(p, false, err) == CM_OK && !readonly) {
        give_home(p, cat, err);
    }
    if (err->code != CM_OK) {
        while (st_catalog_count(cat) > 0) {
            st_catalog_drop(cat, st_catalog_entry(cat, st_catalog_count(cat) - 1)->name);
        }
        st_persist_close(p);
        return NULL;
    }
    return p;
}

bool st_persist_readonly(const StPersist *p)
{
    return p->is_readonly;
}

const char *st_persist_dir(const StPersist *p)
{
    return p->dir;
}

StBlockHome *st_persist_home(StPersist *p)
{
    return p != NULL && p->home != NULL ? pm_home_base(p->home) : NULL;
}

void st_persist_close(StPersist *p)
{
    if (p == NULL) {
        return;
    }
    if (p->lock_fd >= 0) {
        close(p->lock_fd); /* releases the flock */
    }
    for (int i = 0; i < p->n_files; i++) {
        close(p->files[i].fd);
        cm_free(p->files[i].path);
    }
    cm_free(p->files);
    /* kept when the manifest on disk names records there */
    pm_home_free(p->home, p->home != NULL && names_file(p->saved, p->n_saved, pm_home_id(p->home)));
    for (int i = 0; i < p->n_saved; i++) {
        pm_saved_fini(&p->saved[i]);
    }
    cm_free(p->saved);
    pm_buf_fini(&p->last);
    cm_free(p->dir);
    cm_free(p);
}
