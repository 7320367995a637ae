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
 *   sluice_functions  every function a query can call by name, from the
 *                   binder's registry (planner/bind/functions.h): function_name,
 *                   function_type ('scalar', 'aggregate', 'window', 'table'),
 *                   min_args, max_args (NULL: any number), alias_of (the
 *                   function it is another name of, or NULL).
 *
 * information_schema.tables, .columns and .schemata, PostgreSQL's and
 * DuckDB's views of the catalog (docs/conformance.md), are made the same way
 * when a query names them in the schema information_schema.
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
typedef struct PlKeep PlKeep;

/* True when `name` is a system table. */
bool pl_system_table_exists(const char *name);
/* A new table with the current contents of system table `name` (owned:
 * st_table_free), `cache`, `keep`, `cat` and `cfg` being the session's (may be
 * NULL: a table that needs one is then an error or empty); NULL with err. */
StTable *pl_system_table(const char *name, const PlCache *cache, const PlKeep *keep, StCatalog *cat,
                         const CmConfig *cfg, CmErr *err);

/* True when `name` is a view of information_schema (tables, columns, schemata). */
bool pl_info_schema_exists(const char *name);
/* The output names and types of view `e` (in the caller's arena, until the
 * statement ends), or false when it does not bind now. */
typedef bool (*PlViewShapeFn)(void *ctx, const StEntry *e, int *n_cols,
                              const char *const **names, const CmType **types);
/* A new table with the rows of information_schema.`name` for catalog `cat`
 * (owned: st_table_free), a view's columns found by `shape` (NULL: views have
 * none listed); NULL with err. */
StTable *pl_info_schema_table(const char *name, StCatalog *cat, PlViewShapeFn shape, void *ctx,
                              CmErr *err);
