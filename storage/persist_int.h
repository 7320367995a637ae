/*
 * persist_int.h - what persist.c (files, lock, commit) and manifest.c (the
 * manifest's bytes) share; never included outside storage/.
 *
 * A PmSaved describes the rows of one table as saved: which StTable.version
 * they are, the data file, and where each chunk's record lies in it.  The
 * manifest is encoded from the catalog plus one PmSaved per table, and
 * decoded back into a catalog, calling a loader for each table's rows.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "shuffle/block.h"
#include "storage/blocks.h"
#include "storage/catalog.h"

/* The format version of MANIFEST and of the data files written
 * (docs/storage.md), and the oldest one read: version 2 data files may hold
 * light column encodings (shuffle/colpack.h), which version 1 never has;
 * version 3 writes each column of a chunk as a record of its own, and its
 * manifest gives each one's bytes (a chunk kept from an older file stays
 * one record). */
#define PM_FORMAT_VERSION 3
#define PM_FORMAT_OLDEST 1
#define PM_MANIFEST_MAGIC "SLUICEMF"
#define PM_DATA_MAGIC "SLUICETB"
/* Bytes of a data file's header: magic, version, zero word. */
#define PM_DATA_HDR_BYTES 16

/* CM_OK when `version`, read from the file `name` (MANIFEST or a data file), is
 * one this Sluice reads; else CM_IO naming the file and the versions read. */
CmStatus pm_check_version(uint32_t version, const char *name, CmErr *err);

typedef struct PmChunk {
    uint64_t file_id; /* its data file <file_id>.tbl */
    int32_t n_rows;
    int64_t offset; /* of its record in the data file */
    int64_t bytes;  /* of the record */
    /* In memory only: the table chunk saved (block and whether sealed then),
     * so that a later commit of the same table keeps the record of a sealed
     * chunk that is still there instead of writing it again. */
    const StBlock *block;
    bool was_sealed;
} PmChunk;

/* Per column chunk: smallest and largest value (integers, dates, times,
 * timestamps and short decimals, as int64; min > max when unknown or all
 * NULL), the count of NULLs, and the bytes of the column's record (0 when
 * the chunk is one record of all its columns, as version 1 and 2 write it). */
typedef struct PmZone {
    int64_t min, max, n_nulls;
    int64_t bytes;
} PmZone;

typedef struct PmSaved {
    uint64_t table_id; /* StTable.id of the table saved */
    uint64_t version;  /* StTable.version of the rows saved */
    int64_t n_rows;
    int n_cols;
    int n_chunks;
    PmChunk *chunks; /* owned */
    PmZone *zones;   /* owned: n_chunks * n_cols, chunk-major */
    PmChunk stats;   /* the statistics record (file_id 0: none); n_rows unused */
    bool is_stats_stale;
} PmSaved;

/* A growing byte buffer; `is_oom` sticks once an append failed. */
typedef struct PmBuf {
    unsigned char *p; /* owned */
    size_t n, cap;
    bool is_oom;
} PmBuf;

void pm_buf_put(PmBuf *b, const void *p, size_t n);
void pm_buf_fini(PmBuf *b);

/* The statistics of n_cols columns as a record (docs/storage.md); appended to out. */
void pm_stats_encode(const StColStats *stats, int n_cols, PmBuf *out);
/* Decodes such a record into out (n_cols of them); false when it is damaged. */
bool pm_stats_decode(const unsigned char *p, size_t n, int n_cols, StColStats *out);

/* Points the in-memory fields of s (loaded into t) at t's chunks. */
void pm_saved_bind(PmSaved *s, const StTable *t);

/* Loads the rows `saved` describes into t (empty, no indexes yet; they are
 * added after, cold: st_table_add_index_cold). */
typedef CmStatus (*PmLoadFn)(void *ctx, StTable *t, const PmSaved *saved, CmErr *err);

/* Appends the manifest of `cat` (temporary entries left out) to out: the
 * header, `generation`, `next_file_id`, the entries, and the checksum.
 * saved_of(ctx, t) gives the PmSaved of each table.  CM_OOM, or CM_RUNTIME
 * for a value that cannot be saved. */
CmStatus pm_manifest_encode(const StCatalog *cat, uint64_t generation, uint64_t next_file_id,
                            const PmSaved *(*saved_of)(void *ctx, const StTable *t), void *ctx,
                            PmBuf *out, CmErr *err);

/* Decodes a manifest (`name` for errors) into cat (empty), calling load for
 * each table before its indexes are added; fills *saved (owned, n_saved of
 * them, versions those of the new tables), *generation and *next_file_id.
 * CM_IO naming `name` when the manifest is damaged or of another version. */
CmStatus pm_manifest_decode(const unsigned char *p, size_t n, const char *name, StCatalog *cat,
                            PmLoadFn load, void *ctx, PmSaved **saved, int *n_saved,
                            uint64_t *generation, uint64_t *next_file_id, CmErr *err);

void pm_saved_fini(PmSaved *s);

/* ---- a chunk's records (home.c) ---- */

/* A buffer that a chunk's records are laid out in, reused from chunk to chunk. */
typedef struct PmRecBuf {
    unsigned char *rec; /* owned */
    size_t cap;
} PmRecBuf;

/* Writes a data file's header (magic, PM_FORMAT_VERSION) at the start of fd;
 * false (errno set) on a write error. */
bool pm_write_data_header(int fd);

/* The smallest and largest value and the NULL count of the first n values of
 * v (of `type`) in z; z->bytes untouched. */
void pm_zone_of(const CmVec *v, CmType type, int n, PmZone *z);

/* Lays out each column of b as a record of its own (a block of one column,
 * compressed by c when it pays), back to back in buf, and its bytes in
 * zones[col].bytes: a scan then reads only the columns it needs.  Returns
 * the bytes of all, or 0 with err. */
int64_t pm_lay_columns(PmRecBuf *buf, const CmBatch *b, ShCompressor *c, PmZone *zones, CmErr *err);

/* ---- the home of evicted chunks (home.c) ----
 *
 * The StBlockHome of a writable database's tables (st_table_set_home): a
 * sealed chunk evicted before its commit is written, as the commit would
 * write it, to data file <id>.tbl of the directory, created on the first
 * eviction, and becomes a saved block over those records.  The commit then
 * keeps each such record (pm_home_record), syncing the file
 * (pm_home_sync) before the manifest that names it is swapped in; so a load
 * larger than memory writes each chunk once.  The file stays open, and
 * takes more records, for the life of the StPersist (a block may read it
 * however manifests come to name it): a manifest names the records a
 * commit kept, the others (of statements that failed, rows later replaced)
 * are dead bytes until an open compacts the file or, when no manifest names
 * it, sweeps it. */
typedef struct PmHome PmHome;

/* The home writing data file `id` at `path` (copied).  Owned; NULL on OOM. */
PmHome *pm_home_new(const char *path, uint64_t id);
StBlockHome *pm_home_base(PmHome *h);
uint64_t pm_home_id(const PmHome *h);
/* The descriptor (-1 before the first write) and path of the file. */
int pm_home_fd(const PmHome *h);
const char *pm_home_path(const PmHome *h);
/* When c's block is a record the home wrote of exactly c's rows, fills *pc
 * (block, was_sealed set) and the n_cols zones, and returns true. */
bool pm_home_record(PmHome *h, const StChunk *c, int n_cols, PmChunk *pc, PmZone *zones);
/* Syncs the file (nothing when it was never written); CM_IO naming it. */
CmStatus pm_home_sync(PmHome *h, CmErr *err);
/* Forgets the records written so far: after a commit, which named those it
 * kept (its saved set finds them by block from then on); the others are
 * never kept. */
void pm_home_forget(PmHome *h);
/* Closes the file, and removes it unless `keep` (a manifest names it). */
void pm_home_free(PmHome *h, bool keep);

/* Compaction (compact.c): when some data file of directory `dir` holds
 * under half live bytes (records `saved` names) and at least 1 MiB, copies
 * the live records of every such file into a new data file `new_id`,
 * fsynced, points `saved` at the copies and returns true with the ids of
 * the files no longer named in *gone (owned, *n_gone of them).  False, with
 * `saved` and the directory as they were, when there is nothing to do or a
 * read or write failed (compaction is never needed for correctness). */
bool pm_compact(const char *dir, PmSaved *saved, int n_saved, uint64_t new_id, uint64_t **gone,
                int *n_gone);
/* Whether pm_compact would find a file to rewrite (a stat per file). */
bool pm_compact_wanted(const char *dir, const PmSaved *saved, int n_saved);
