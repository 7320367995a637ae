/*
 * system.h - system tables: read-only views of the engine's state, made as a
 * table when a query names them and no table of that name exists.
 *
 *   sluice_memory   the memory manager's pools and what holds memory now:
 *                   (pool, what, bytes, peak_bytes); pools are `limit`,
 *                   `execution`, `storage`, `temp` (spill and shuffle files)
 *                   and `process` (RSS), then one row per consumer.
 *
 *                   Then the memory mode's shares and the auto mode's last
 *                   decision (planner/memmode.h).
 *
 *   sluice_settings every setting (name, value), as SET takes it.
 *
 *   sluice_cache    one row per cache entry (planner/cache.h): name, level, lazy,
 *                   state, rows, memory_bytes, disk_bytes, hits, misses,
 *                   recomputes, invalidations.
 *
 *   sluice_column_stats  one row per column of every table: table_name,
 *                   column_name, row_count, null_count, distinct_count (the
 *                   HyperLogLog estimate), min_value, max_value (DOUBLE;
 *                   NULL for strings and booleans), stale (rows were undone
 *                   since: an upper bound until ANALYZE); storage/stats.h.
 *
 * The table is a snapshot taken when the statement binds.  Not thread-safe:
 * the binder's thread only.
 */
#pragma once

#include <stdbool.h>

#include "common/config.h"
#include "common/err.h"
#include "storage/catalog.h"
#include "storage/table.h"

typedef struct PlCache PlCache;

/* True when `name` is a system table. */
bool pl_system_table_exists(const char *name);
/* A new table with the current contents of system table `name` (owned:
 * st_table_free), `cache`, `cat` and `cfg` being the session's (may be NULL: a
 * table that needs one is then an error or empty); NULL with err. */
StTable *pl_system_table(const char *name, const PlCache *cache, StCatalog *cat,
                         const CmConfig *cfg, CmErr *err);
