/*
 * persist.h - a directory database: the catalog and every table's rows saved
 * in DBDIR so that they survive the process, a crash included.
 *
 * Layout (docs/storage.md has the byte format): DBDIR/MANIFEST names every
 * entry of the catalog (tables with their columns, defaults and indexes,
 * views, index entries) and, per table chunk, its record in a data file
 * DBDIR/<id>.tbl (a checksummed block record, shuffle/block.h) with min, max
 * and NULL count per column.  DBDIR/sluice.lock is held with flock:
 * exclusively by the one writer, shared by read-only opens.
 *
 * Commit is copy-on-write: the tables whose rows changed since the last
 * commit (StTable.version) get a new data file, fsynced, holding their chunks
 * except those of the same table (StTable.id) saved sealed before, which keep
 * their records.  Then a new manifest goes to MANIFEST.tmp, is fsynced and
 * renamed over MANIFEST, and the directory is fsynced.  Files the new
 * manifest no longer names are removed afterwards; files no manifest names (a
 * crash's leftovers) are removed at open.  So at any instant the directory
 * holds the last committed state, whole.  Temporary tables are never saved.
 *
 * Open reads the manifest and the statistics, not the rows: each chunk is a
 * saved block of the block store over its record (st_block_new_saved), read
 * on first pin, and the indexes are cold (built at the first append).  The
 * data files stay open (their descriptors are the blocks') until their
 * tables are gone from the manifest, or st_persist_close.  A wrong version or
 * a bad checksum is a CM_IO error naming the file, at open for the manifest
 * and the files' headers, at first read for a record.  One thread at a time
 * per StPersist; the blocks may be read by any.
 */
#pragma once

#include <stdbool.h>

#include "common/err.h"
#include "common/thread.h"
#include "storage/catalog.h"

typedef struct StPersist StPersist;

/* Opens the database in directory `dir` (created, and made a database, when
 * missing or empty; unless `readonly`) and loads it into `cat`, which must be
 * empty.  Takes the lock (CM_IO naming the directory when another process
 * holds it) and removes orphaned files (not when readonly).  Owned; NULL with
 * err on failure (cat is then left empty). */
StPersist *st_persist_open(const char *dir, bool readonly, StCatalog *cat, CmErr *err);

/* Makes the state of `cat` the database's committed state: writes the changed
 * tables and the manifest as above (nothing at all when nothing changed),
 * encoding and compressing chunks on `pool`'s workers (NULL: this thread).
 * CM_IO on a write error: the directory then still holds the previous state.
 * Not on a read-only database. */
CmStatus st_persist_commit(StPersist *p, const StCatalog *cat, CmPool *pool, CmErr *err);

bool st_persist_readonly(const StPersist *p);
/* Borrowed until st_persist_close. */
const char *st_persist_dir(const StPersist *p);
/* Where the chunks of the database's tables go when evicted before their
 * commit (st_table_set_home; storage/persist_int.h): give it to each table
 * the catalog will save, so that a load larger than memory writes its chunks
 * once.  Borrowed until st_persist_close; NULL when p is NULL or read-only. */
StBlockHome *st_persist_home(StPersist *p);

/* Releases the lock; NULL is accepted.  Writes nothing. */
void st_persist_close(StPersist *p);
