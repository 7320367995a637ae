/*
 * shuffle.c - the in-memory shuffle store.
 *
 * Each partition keeps a singly linked list of blocks in push order, guarded by
 * its own mutex (pushers of different partitions never contend).  Visibility
 * is decided at read time: a block counts only if its (map, attempt) is the
 * committed attempt of that map.  Statistics are accumulated per writer and
 * added under the shuffle lock at commit, so they count committed data only.
 */
#include "shuffle/shuffle.h"

#include <string.h>

#include "common/alloc.h"
#include "common/thread.h"
#include "shuffle/block.h"

typedef struct ShPart {
    CmMutex lock;       /* guards head/tail */
    ShBlock *head, *tail;
    int64_t rows;       /* committed, guarded by the shuffle lock */
    int64_t bytes;      /* committed, guarded by the shuffle lock */
} ShPart;

struct ShShuffle {
    int n_maps, n_parts, n_cols;
    CmType *types;           /* n_cols; owned */
    ShPart *parts;           /* n_parts; owned */
    CmMutex lock;            /* guards committed, map_part_bytes and the part counters */
    int *committed;          /* per map: committed attempt or -1 */
    int64_t *map_part_bytes; /* n_maps x n_parts */
    int64_t blocks;
};

struct ShWriter {
    ShShuffle *sh;
    int map_id, attempt;
    int64_t seq;
    int64_t *part_rows;  /* n_parts: this attempt's output */
    int64_t *part_bytes; /* n_parts */
    int64_t n_blocks;
};

struct ShReader {
    ShShuffle *sh;
    int p0, p1, m0, m1;
    int part;          /* partition being read */
    ShBlock *next;     /* next block of `part` to look at */
};

ShShuffle *sh_shuffle_new(int n_maps, int n_parts, int n_cols, const CmType *types, CmErr *err)
{
    ShShuffle *sh = cm_calloc(1, sizeof *sh);
    if (sh == NULL) {
        goto oom;
    }
    cm_mutex_init(&sh->lock);
    sh->n_maps = n_maps;
    sh->n_parts = n_parts;
    sh->n_cols = n_cols;
    sh->types = cm_malloc(sizeof(CmType) * (size_t)(n_cols ? n_cols : 1));
    sh->parts = cm_calloc((size_t)n_parts, sizeof(ShPart));
    sh->committed = cm_malloc(sizeof(int) * (size_t)n_maps);
    sh->map_part_bytes = cm_calloc((size_t)n_maps * (size_t)n_parts, sizeof(int64_t));
    if (!sh->types || !sh->parts || !sh->committed || !sh->map_part_bytes) {
        goto oom;
    }
    memcpy(sh->types, types, sizeof(CmType) * (size_t)n_cols);
    for (int p = 0; p < n_parts; p++) {
        cm_mutex_init(&sh->parts[p].lock);
    }
    for (int m = 0; m < n_maps; m++) {
        sh->committed[m] = -1;
    }
    return sh;
oom:
    if (sh != NULL) {
        cm_free(sh->types);
        cm_free(sh->parts);
        cm_free(sh->committed);
        cm_free(sh->map_part_bytes);
        cm_mutex_fini(&sh->lock);
        cm_free(sh);
    }
    cm_err_set(err, CM_OOM, -1, "out of memory creating a shuffle");
    return NULL;
}

void sh_shuffle_free(ShShuffle *sh)
{
    if (sh == NULL) {
        return;
    }
    for (int p = 0; p < sh->n_parts; p++) {
        ShBlock *b = sh->parts[p].head;
        while (b != NULL) {
            ShBlock *next = b->next;
            cm_free(b);
            b = next;
        }
        cm_mutex_fini(&sh->parts[p].lock);
    }
    cm_free(sh->parts);
    cm_free(sh->types);
    cm_free(sh->committed);
    cm_free(sh->map_part_bytes);
    cm_mutex_fini(&sh->lock);
    cm_free(sh);
}

int sh_shuffle_n_parts(const ShShuffle *sh) { return sh->n_parts; }
int sh_shuffle_n_maps(const ShShuffle *sh) { return sh->n_maps; }

ShWriter *sh_writer_open(ShShuffle *sh, int map_id, int attempt, CmErr *err)
{
    ShWriter *w = cm_calloc(1, sizeof *w);
    if (w != NULL) {
        w->part_rows = cm_calloc((size_t)sh->n_parts, sizeof(int64_t));
        w->part_bytes = cm_calloc((size_t)sh->n_parts, sizeof(int64_t));
    }
    if (w == NULL || w->part_rows == NULL || w->part_bytes == NULL) {
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
    if (batch->n_rows == 0) {
        return CM_OK;
    }
    ShBlock *blk = sh_block_encode(batch, err);
    if (blk == NULL) {
        return err->code;
    }
    blk->hdr.map_id = w->map_id;
    blk->hdr.attempt = w->attempt;
    blk->hdr.seq = w->seq++;
    ShPart *p = &w->sh->parts[part];
    cm_mutex_lock(&p->lock);
    if (p->tail != NULL) {
        p->tail->next = blk;
    } else {
        p->head = blk;
    }
    p->tail = blk;
    cm_mutex_unlock(&p->lock);
    w->part_rows[part] += blk->hdr.n_rows;
    w->part_bytes[part] += blk->hdr.stored_bytes;
    w->n_blocks++;
    return CM_OK;
}

CmStatus sh_writer_close(ShWriter *w, CmErr *err)
{
    ShShuffle *sh = w->sh;
    cm_mutex_lock(&sh->lock);
    sh->committed[w->map_id] = w->attempt;
    for (int p = 0; p < sh->n_parts; p++) {
        sh->parts[p].rows += w->part_rows[p];
        sh->parts[p].bytes += w->part_bytes[p];
        sh->map_part_bytes[(size_t)w->map_id * (size_t)sh->n_parts + (size_t)p] = w->part_bytes[p];
    }
    sh->blocks += w->n_blocks;
    cm_mutex_unlock(&sh->lock);
    cm_free(w->part_rows);
    cm_free(w->part_bytes);
    cm_free(w);
    return CM_OK;
}

void sh_writer_abort(ShWriter *w)
{
    if (w == NULL) {
        return;
    }
    cm_free(w->part_rows);
    cm_free(w->part_bytes);
    cm_free(w);
}

ShReader *sh_reader_open(ShShuffle *sh, int p0, int p1, int m0, int m1, CmErr *err)
{
    ShReader *r = cm_calloc(1, sizeof *r);
    if (r == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory opening a shuffle reader");
        return NULL;
    }
    r->sh = sh;
    r->p0 = p0;
    r->p1 = p1;
    r->m0 = m0;
    r->m1 = m1;
    r->part = p0;
    r->next = p0 < p1 ? sh->parts[p0].head : NULL;
    return r;
}

static bool visible(const ShShuffle *sh, const ShReader *r, const ShBlock *b)
{
    int m = b->hdr.map_id;
    return m >= r->m0 && m < r->m1 && sh->committed[m] == b->hdr.attempt;
}

CmStatus sh_reader_next(ShReader *r, CmBatch *out, bool *eof, CmErr *err)
{
    ShShuffle *sh = r->sh;
    while (r->part < r->p1) {
        while (r->next != NULL) {
            ShBlock *b = r->next;
            r->next = b->next;
            if (visible(sh, r, b)) {
                *eof = false;
                return sh_block_decode(b, out, err);
            }
        }
        r->part++;
        r->next = r->part < r->p1 ? sh->parts[r->part].head : NULL;
    }
    cm_batch_reset(out);
    *eof = true;
    return CM_OK;
}

void sh_reader_close(ShReader *r)
{
    cm_free(r);
}

int64_t sh_shuffle_part_rows(const ShShuffle *sh, int part) { return sh->parts[part].rows; }
int64_t sh_shuffle_part_bytes(const ShShuffle *sh, int part) { return sh->parts[part].bytes; }

int64_t sh_shuffle_map_part_bytes(const ShShuffle *sh, int map_id, int part)
{
    return sh->map_part_bytes[(size_t)map_id * (size_t)sh->n_parts + (size_t)part];
}

void sh_shuffle_stats(const ShShuffle *sh, ShShuffleStats *out)
{
    memset(out, 0, sizeof *out);
    for (int p = 0; p < sh->n_parts; p++) {
        out->rows += sh->parts[p].rows;
        out->bytes_pushed += sh->parts[p].bytes;
    }
    out->blocks = sh->blocks;
}
