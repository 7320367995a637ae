/*
 * shuffle.c - shuffles in a store: creation and removal, map writers and
 * commits, exact statistics, lost maps and invalidation, and the test-only
 * fault injection hooks.
 *
 * Visibility is decided at read time: a block counts only if its (map,
 * attempt) is the committed attempt of that map (`committed`, atomic so that
 * readers check it without the lock).  A writer counts its rows and bytes per
 * partition privately; at commit they replace the previous committed
 * attempt's numbers under the store lock, so the statistics always describe
 * exactly the visible blocks, whatever attempts ran or failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "shuffle/shuffle_int.h"

struct ShWriter {
    ShShuffle *sh;       /* borrowed */
    int map_id;          /* the map task */
    int attempt;         /* its attempt */
    int64_t seq;         /* next block's sequence number */
    int64_t *part_rows;  /* n_parts: this attempt's rows per partition; owned */
    int64_t *part_bytes; /* n_parts: this attempt's bytes per partition; owned */
    int64_t n_blocks;    /* blocks pushed */
    ShCompressor *cctx;  /* when blocks are compressed in memory; owned */
};

/* ---- lifecycle ----------------------------------------------------------------------- */

static void shuffle_release(ShShuffle *sh)
{
    for (int p = 0; sh->parts != NULL && p < sh->n_parts; p++) {
        ShPart *part = &sh->parts[p];
        sh_blocks_free(part->head);
        while (part->retired != NULL) {
            ShRetired *r = part->retired;
            part->retired = r->next;
            sh_blocks_free(r->head);
            cm_free(r);
        }
        for (int s = 0; s < part->n_splits; s++) {
            sh_split_fini(&part->splits[s]);
        }
        cm_free(part->splits);
    }
    cm_free(sh->parts);
    cm_free(sh->types);
    cm_free(sh->committed);
    cm_free(sh->max_attempt);
    cm_free(sh->was_committed);
    cm_free(sh->lost);
    cm_free(sh->map_part_rows);
    cm_free(sh->map_part_bytes);
    cm_free(sh->map_blocks);
    cm_free(sh);
}

ShShuffle *sh_shuffle_new(ShStore *store, int n_maps, int n_parts, int n_cols, const CmType *types,
                          CmErr *err)
{
    bool own = store == NULL;
    if (own && (store = sh_store_new(NULL, err)) == NULL) {
        return NULL;
    }
    ShShuffle *sh = cm_calloc(1, sizeof *sh);
    size_t maps = (size_t)(n_maps > 0 ? n_maps : 1), parts = (size_t)(n_parts > 0 ? n_parts : 1);
    if (sh != NULL) {
        sh->types = cm_malloc(sizeof(CmType) * (size_t)(n_cols > 0 ? n_cols : 1));
        sh->parts = cm_calloc(parts, sizeof(ShPart));
        sh->committed = cm_malloc(sizeof(atomic_int) * maps);
        sh->max_attempt = cm_malloc(sizeof(int) * maps);
        sh->was_committed = cm_calloc(maps, sizeof(bool));
        sh->lost = cm_calloc(maps, 1);
        sh->map_part_rows = cm_calloc(maps * parts, sizeof(int64_t));
        sh->map_part_bytes = cm_calloc(maps * parts, sizeof(int64_t));
        sh->map_blocks = cm_calloc(maps, sizeof(int64_t));
    }
    if (sh == NULL || !sh->types || !sh->parts || !sh->committed || !sh->max_attempt ||
        !sh->was_committed || !sh->lost || !sh->map_part_rows || !sh->map_part_bytes ||
        !sh->map_blocks) {
        if (sh != NULL) {
            shuffle_release(sh);
        }
        if (own) {
            sh_store_free(store);
        }
        cm_err_set(err, CM_OOM, -1, "out of memory creating a shuffle");
        return NULL;
    }
    sh->store = store;
    sh->owns_store = own;
    sh->n_maps = n_maps;
    sh->n_parts = n_parts;
    sh->n_cols = n_cols;
    memcpy(sh->types, types, sizeof(CmType) * (size_t)n_cols);
    for (int m = 0; m < n_maps; m++) {
        atomic_init(&sh->committed[m], -1);
        sh->max_attempt[m] = -1;
    }
    for (int p = 0; p < n_parts; p++) {
        sh->parts[p].sh = sh;
        sh->parts[p].idx = p;
        sh->parts[p].queue = SH_Q_NONE;
    }
    cm_mutex_lock(&store->lock);
    sh->id = store->next_id++;
    sh->next = store->shuffles;
    store->shuffles = sh;
    cm_mutex_unlock(&store->lock);
    return sh;
}

static void remove_files(ShShuffle *sh)
{
    static const char *const KINDS[] = {"data", "sorted", "index"};
    char path[1024];
    for (int p = 0; p < sh->n_parts; p++) {
        for (int s = 0; s < sh->parts[p].n_splits; s++) {
            for (int k = 0; k < 3; k++) {
                sh_split_path(sh, p, s, KINDS[k], path, sizeof path);
                unlink(path);
            }
        }
    }
}

void sh_shuffle_free(ShShuffle *sh)
{
    if (sh == NULL) {
        return;
    }
    ShStore *st = sh->store;
    cm_mutex_lock(&st->lock);
    sh->freeing = true;
    for (int p = 0; p < sh->n_parts; p++) {
        sh_store_dequeue(st, &sh->parts[p]);
    }
    for (int p = 0; p < sh->n_parts; p++) {
        /* Another shuffle's pusher may be flushing this partition (I3: it ends). */
        while (sh->parts[p].flushing) {
            cm_cond_wait(&st->cond, &st->lock);
        }
        sh_store_release_locked(st, sh->parts[p].mem_bytes);
    }
    for (ShShuffle **at = &st->shuffles; *at != NULL; at = &(*at)->next) {
        if (*at == sh) {
            *at = sh->next;
            break;
        }
    }
    if (st->paused && (st->used < st->resume_bytes || st->used == 0)) {
        st->paused = false;
    }
    cm_cond_broadcast(&st->cond);
    cm_mutex_unlock(&st->lock);
    remove_files(sh);
    bool own = sh->owns_store;
    shuffle_release(sh);
    if (own) {
        sh_store_free(st);
    }
}

int sh_shuffle_n_parts(const ShShuffle *sh)
{
    return sh->n_parts;
}

int sh_shuffle_n_maps(const ShShuffle *sh)
{
    return sh->n_maps;
}

CmStatus sh_shuffle_flush(ShShuffle *sh, CmErr *err)
{
    return sh_shuffle_flush_parts(sh, 0, sh->n_parts, err);
}

CmStatus sh_shuffle_flush_parts(ShShuffle *sh, int p0, int p1, CmErr *err)
{
    ShStore *st = sh->store;
    p0 = p0 < 0 ? 0 : p0;
    p1 = p1 > sh->n_parts ? sh->n_parts : p1;
    cm_mutex_lock(&st->lock);
    for (int p = p0; p < p1 && err->code == CM_OK; p++) {
        sh_store_flush_part_locked(st, &sh->parts[p], err);
    }
    cm_mutex_unlock(&st->lock);
    return err->code;
}

int sh_shuffle_n_splits(const ShShuffle *sh, int part)
{
    cm_mutex_lock(&sh->store->lock);
    int n = sh->parts[part].n_splits;
    cm_mutex_unlock(&sh->store->lock);
    return n;
}

/* ---- writers ------------------------------------------------------------------------- */

void sh_writer_abort(ShWriter *w)
{
    if (w == NULL) {
        return;
    }
    cm_free(w->part_rows);
    cm_free(w->part_bytes);
    sh_compressor_free(w->cctx);
    cm_free(w);
}

ShWriter *sh_writer_open(ShShuffle *sh, int map_id, int attempt, CmErr *err)
{
    if (map_id < 0 || map_id >= sh->n_maps || attempt < 0) {
        cm_err_set(err, CM_INTERNAL, -1, "shuffle writer for map %d of %d, attempt %d", map_id,
                   sh->n_maps, attempt);
        return NULL;
    }
    ShStore *st = sh->store;
    cm_mutex_lock(&st->lock);
    bool reused = attempt <= sh->max_attempt[map_id];
    if (!reused) {
        sh->max_attempt[map_id] = attempt;
    }
    cm_mutex_unlock(&st->lock);
    if (reused) {
        cm_err_set(err, CM_INTERNAL, -1, "attempt %d of shuffle map %d was used before", attempt,
                   map_id);
        return NULL;
    }
    ShWriter *w = cm_calloc(1, sizeof *w);
    if (w != NULL) {
        w->part_rows = cm_calloc((size_t)sh->n_parts, sizeof(int64_t));
        w->part_bytes = cm_calloc((size_t)sh->n_parts, sizeof(int64_t));
        if (st->opt.compress_in_memory && st->opt.codec != SH_CODEC_NONE) {
            w->cctx = sh_compressor_new(st->opt.codec);
        }
    }
    if (w == NULL || w->part_rows == NULL || w->part_bytes == NULL ||
        (st->opt.compress_in_memory && st->opt.codec != SH_CODEC_NONE && w->cctx == NULL)) {
        sh_writer_abort(w);
        cm_err_set(err, CM_OOM, -1, "out of memory opening a shuffle writer");
        return NULL;
    }
    w->sh = sh;
    w->map_id = map_id;
    w->attempt = attempt;
    return w;
}

CmStatus sh_writer_push(ShWriter *w, int part, const CmBatch *batch, CmErr *err)
{
    CM_ASSERT(part >= 0 && part < w->sh->n_parts);
    if (batch->n_rows == 0) {
        return CM_OK;
    }
    size_t bytes = sh_block_encoded_bytes(batch);
    ShBlock *blk =
        sh_block_encode_in(batch, bytes, sh_store_spare_take(w->sh->store, (int64_t)bytes), err);
    if (blk == NULL) {
        return err->code;
    }
    blk->hdr.map_id = w->map_id;
    blk->hdr.attempt = w->attempt;
    blk->hdr.seq = w->seq++;
    w->part_rows[part] += blk->hdr.n_rows;
    w->part_bytes[part] += blk->hdr.raw_bytes;
    w->n_blocks++;
    if (w->cctx != NULL) {
        ShBlock *small = sh_block_compress(blk, w->cctx, err);
        if (small != NULL) {
            cm_free(blk);
            blk = small;
        } else if (err->code != CM_OK) {
            cm_free(blk);
            return err->code;
        }
    }
    return sh_store_push(w->sh->store, &w->sh->parts[part], blk, err);
}

/* Takes the committed attempt of map m out of the totals.  Lock held. */
static void withdraw_locked(ShShuffle *sh, int m)
{
    for (int p = 0; p < sh->n_parts; p++) {
        size_t at = (size_t)m * (size_t)sh->n_parts + (size_t)p;
        sh->parts[p].rows -= sh->map_part_rows[at];
        sh->parts[p].bytes -= sh->map_part_bytes[at];
        sh->stats.rows -= sh->map_part_rows[at];
        sh->stats.bytes_pushed -= sh->map_part_bytes[at];
        sh->map_part_rows[at] = 0;
        sh->map_part_bytes[at] = 0;
    }
    sh->stats.blocks -= sh->map_blocks[m];
    sh->map_blocks[m] = 0;
    atomic_store(&sh->committed[m], -1);
}

CmStatus sh_writer_close(ShWriter *w, CmErr *err)
{
    ShShuffle *sh = w->sh;
    int m = w->map_id;
    cm_mutex_lock(&sh->store->lock);
    if (sh->was_committed[m]) {
        sh->stats.map_reruns++;
    }
    if (atomic_load(&sh->committed[m]) >= 0) {
        withdraw_locked(sh, m);
    }
    for (int p = 0; p < sh->n_parts; p++) {
        size_t at = (size_t)m * (size_t)sh->n_parts + (size_t)p;
        sh->map_part_rows[at] = w->part_rows[p];
        sh->map_part_bytes[at] = w->part_bytes[p];
        sh->parts[p].rows += w->part_rows[p];
        sh->parts[p].bytes += w->part_bytes[p];
        sh->stats.rows += w->part_rows[p];
        sh->stats.bytes_pushed += w->part_bytes[p];
    }
    sh->map_blocks[m] = w->n_blocks;
    sh->stats.blocks += w->n_blocks;
    sh->was_committed[m] = true;
    sh->lost[m] = 0;
    atomic_store(&sh->committed[m], w->attempt);
    cm_mutex_unlock(&sh->store->lock);
    sh_writer_abort(w);
    return CM_OK;
}

/* ---- statistics ------------------------------------------------------------------------ */

int64_t sh_shuffle_part_rows(const ShShuffle *sh, int part)
{
    cm_mutex_lock(&sh->store->lock);
    int64_t v = sh->parts[part].rows;
    cm_mutex_unlock(&sh->store->lock);
    return v;
}

int64_t sh_shuffle_part_bytes(const ShShuffle *sh, int part)
{
    cm_mutex_lock(&sh->store->lock);
    int64_t v = sh->parts[part].bytes;
    cm_mutex_unlock(&sh->store->lock);
    return v;
}

int64_t sh_shuffle_map_part_bytes(const ShShuffle *sh, int map_id, int part)
{
    cm_mutex_lock(&sh->store->lock);
    int64_t v = sh->map_part_bytes[(size_t)map_id * (size_t)sh->n_parts + (size_t)part];
    cm_mutex_unlock(&sh->store->lock);
    return v;
}

int64_t sh_shuffle_map_part_rows(const ShShuffle *sh, int map_id, int part)
{
    cm_mutex_lock(&sh->store->lock);
    int64_t v = sh->map_part_rows[(size_t)map_id * (size_t)sh->n_parts + (size_t)part];
    cm_mutex_unlock(&sh->store->lock);
    return v;
}

void sh_shuffle_stats(const ShShuffle *sh, ShShuffleStats *out)
{
    cm_mutex_lock(&sh->store->lock);
    *out = sh->stats;
    out->paused_ms = sh->paused_ns / 1000000;
    cm_mutex_unlock(&sh->store->lock);
}

/* ---- faults and re-runs ------------------------------------------------------------------ */

int sh_mark_lost_locked(ShShuffle *sh, const ShSplit *s, int64_t from, int m0, int m1)
{
    int hit = 0;
    for (int i = 0; i < s->n_pairs; i++) {
        const ShPair *q = &s->pairs[i];
        if (q->last_off < from || !sh_visible(sh, q->map_id, q->attempt)) {
            continue;
        }
        if (!sh->lost[q->map_id]) {
            sh->lost[q->map_id] = 1;
            sh->stats.lost_maps++;
        }
        hit += q->map_id >= m0 && q->map_id < m1;
    }
    return hit;
}

int sh_shuffle_lost_maps(const ShShuffle *sh, int *maps, int cap)
{
    int n = 0;
    cm_mutex_lock(&sh->store->lock);
    for (int m = 0; m < sh->n_maps; m++) {
        if (sh->lost[m]) {
            if (n < cap) {
                maps[n] = m;
            }
            n++;
        }
    }
    cm_mutex_unlock(&sh->store->lock);
    return n;
}

void sh_shuffle_invalidate_map(ShShuffle *sh, int map_id)
{
    cm_mutex_lock(&sh->store->lock);
    if (atomic_load(&sh->committed[map_id]) >= 0) {
        withdraw_locked(sh, map_id);
    }
    sh->lost[map_id] = 0;
    cm_mutex_unlock(&sh->store->lock);
}

int sh_shuffle_committed_attempt(const ShShuffle *sh, int map_id)
{
    return atomic_load(&sh->committed[map_id]);
}

int sh_shuffle_next_attempt(const ShShuffle *sh, int map_id)
{
    cm_mutex_lock(&sh->store->lock);
    int a = sh->max_attempt[map_id] + 1;
    cm_mutex_unlock(&sh->store->lock);
    return a;
}

/* ---- test-only fault injection -------------------------------------------------------------- */

/* Flushes partition `part` and seals its last split, so its files are final.  Lock held. */
static CmStatus settle_part_locked(ShShuffle *sh, int part, CmErr *err)
{
    ShPart *p = &sh->parts[part];
    if (sh_store_flush_part_locked(sh->store, p, err) != CM_OK) {
        return err->code;
    }
    if (p->n_splits > 0) {
        p->splits[p->n_splits - 1].sealed = true;
    }
    return CM_OK;
}

/* The path of the file holding split si's records now.  Lock held. */
static void current_path(const ShShuffle *sh, int part, int si, char *buf, size_t cap)
{
    int state = sh->parts[part].splits[si].state;
    sh_split_path(sh, part, si, state == SH_SPLIT_SORTED ? "sorted" : "data", buf, cap);
}

/* Finds the first record of (map, attempt) in a file of `size` bytes. */
static int64_t find_record(int fd, int64_t size, int map, int attempt, ShBlockHeader *h)
{
    unsigned char hdr[SH_DISK_HDR_BYTES];
    for (int64_t pos = 0; pos + SH_DISK_HDR_BYTES <= size;) {
        if (!sh_pread_all(fd, hdr, sizeof hdr, pos) || !sh_block_header_unpack(hdr, h)) {
            return -1;
        }
        if (h->map_id == map && h->attempt == attempt) {
            return pos;
        }
        pos += sh_block_record_bytes(h);
    }
    return -1;
}

CmStatus sh_shuffle_debug_corrupt(ShShuffle *sh, int part, int map_id, ShDamage what, CmErr *err)
{
    ShStore *st = sh->store;
    char path[1024];
    int64_t size = -1;
    int attempt = atomic_load(&sh->committed[map_id]);
    cm_mutex_lock(&st->lock);
    if (settle_part_locked(sh, part, err) == CM_OK) {
        ShPart *p = &sh->parts[part];
        for (int s = 0; s < p->n_splits && size < 0; s++) {
            for (int i = 0; i < p->splits[s].n_pairs; i++) {
                const ShPair *q = &p->splits[s].pairs[i];
                if (q->map_id == map_id && q->attempt == attempt) {
                    current_path(sh, part, s, path, sizeof path);
                    size = p->splits[s].size;
                    break;
                }
            }
        }
    }
    cm_mutex_unlock(&st->lock);
    if (err->code != CM_OK || size < 0) {
        return err->code != CM_OK
                   ? err->code
                   : cm_err_set(err, CM_INTERNAL, -1, "no block of map %d on disk in partition %d",
                                map_id, part);
    }
    int fd = open(path, O_RDWR | O_CLOEXEC);
    ShBlockHeader h;
    int64_t at = fd >= 0 ? find_record(fd, size, map_id, attempt, &h) : -1;
    unsigned char byte = 0;
    if (at >= 0) {
        at += what == SH_DAMAGE_HEADER ? 8 : SH_DISK_HDR_BYTES + h.stored_bytes / 2;
    }
    bool ok = at >= 0 && sh_pread_all(fd, &byte, 1, at);
    byte ^= 0x5a;
    ok = ok && sh_pwrite_all(fd, &byte, 1, at);
    if (fd >= 0) {
        close(fd);
    }
    return ok ? CM_OK : cm_err_set(err, CM_IO, -1, "cannot damage '%s'", path);
}

CmStatus sh_shuffle_debug_delete_file(ShShuffle *sh, int part, int split, CmErr *err)
{
    ShStore *st = sh->store;
    char path[1024];
    cm_mutex_lock(&st->lock);
    bool ok = settle_part_locked(sh, part, err) == CM_OK && split >= 0 &&
              split < sh->parts[part].n_splits;
    if (ok) {
        current_path(sh, part, split, path, sizeof path);
    }
    cm_mutex_unlock(&st->lock);
    if (!ok) {
        return err->code != CM_OK
                   ? err->code
                   : cm_err_set(err, CM_INTERNAL, -1, "partition %d has no split %d", part, split);
    }
    return unlink(path) == 0
               ? CM_OK
               : cm_err_set(err, CM_IO, -1, "cannot delete '%s': %s", path, strerror(errno));
}
