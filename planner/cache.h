/*
 * cache.h - the cache of reused intermediate results, with Spark SQL's
 * statements: CACHE [LAZY] TABLE name [OPTIONS ('storageLevel' 'L')] [AS q],
 * UNCACHE TABLE [IF EXISTS] name, CLEAR CACHE (docs/cache.md).
 *
 * A cache entry keeps the fingerprint of a bound logical plan (a pre-order
 * serialization of every node and expression that decides the rows: kinds,
 * types, column ids, constants, kernels, tables by catalog name; never names
 * of output columns or SQL offsets) and the plan's rows in an StTable it owns.
 * After a statement binds, pl_cache_use() walks its plan from the top and
 * replaces the first subtree equal to an entry (hash first, then the bytes)
 * by a scan of the entry's rows, as Spark's CacheManager.useCachedData does.
 * `CACHE TABLE name AS q` also makes `name` a temporary view of q, which the
 * binder finds through pl_cache_view(); its plan is q's, so it matches.
 *
 * An entry remembers how to rebuild its plan (its source: a table, a view or
 * the query's text) and the catalog tables it reads.  A write to one of them
 * drops its rows (recomputed on next use); dropping one drops the entry.
 * pl_cache_entry_rows() is the one way to the rows: it materializes them when
 * missing (never computed, invalidated, or, later, evicted from MEMORY_ONLY).
 *
 * One cache per session, used by the session's thread only.  Plans and rows
 * scanned by a statement stay valid until the statement ends: entries change
 * only in pl_cache_exec(), pl_cache_before() and pl_cache_after().
 */
#pragma once

#include <stdbool.h>

#include "common/arena.h"
#include "common/err.h"
#include "parser/ast.h"
#include "planner/bind/binder.h"
#include "planner/keep.h"
#include "planner/plan.h"
#include "storage/catalog.h"
#include "storage/table.h"

typedef struct PlCache PlCache;
typedef struct PlCacheEntry PlCacheEntry;

/* Spark's storage levels that the cache accepts (docs/cache.md). */
typedef enum PlCacheLevel {
    PL_CACHE_NONE,            /* nothing kept: every use recomputes */
    PL_CACHE_MEMORY_ONLY,     /* evicted blocks are recomputed from the plan */
    PL_CACHE_MEMORY_AND_DISK, /* the default */
    PL_CACHE_DISK_ONLY,
} PlCacheLevel;

/* A subtree that occurs more than once in a statement's plan, computed once
 * into a statement-lifetime table (pl_cache_share). */
typedef struct PlShared {
    PlNode *plan;   /* the subtree, with its own shared subtrees replaced */
    int uses;       /* occurrences replaced by a scan of `table` */
    StTable *table; /* owned: the rows, named "#k"; freed by pl_cache_ctx_fini */
} PlShared;

#define PL_MAX_SHARED 16

/* A subtree that occurs twice or more and that the cost rule computes at each
 * use (docs/cache.md, "Shared subtrees"), for EXPLAIN: its estimated work
 * (rows entering its operators) and rows, and whether its rows would pass a
 * quarter of memory_limit. */
typedef struct PlDeclined {
    PlNode *plan; /* the first occurrence (borrowed from the statement's plan) */
    int uses;
    double work, rows;
    bool is_past_memory;
} PlDeclined;

#define PL_MAX_DECLINED 8

/* What one statement lends the cache: where to bind and how to run a plan. */
typedef struct PlCacheCtx {
    PlCache *cache;
    StCatalog *cat;
    CmArena *arena; /* the statement's query arena */
    PlRunFn run;    /* runs a plan to its rows (the session's runner) */
    void *run_ctx;
    bool is_plan_only;       /* EXPLAIN without ANALYZE: scan what is there, compute nothing,
                                count nothing */
    int n_events;            /* cache reads and writes of the statement, for EXPLAIN ANALYZE */
    const char *events[16];  /* in the query arena */
    bool is_reusing;         /* setting subplan_reuse: pl_cache_share shares subtrees */
    bool is_in_place;        /* MEMORY_ONLY entries are computed where they stand, not read
                                (the second run of a statement whose rows were dropped) */
    int n_memory_only_reads; /* scans of MEMORY_ONLY entries' rows the statement planned */
    PlCacheEntry *memory_only_read[8]; /* the first 8 of their entries (borrowed) */
    int n_shared;                      /* shared subtrees of the statement, #1 first */
    PlShared shared[PL_MAX_SHARED];
    int n_declined; /* repeated subtrees computed at each use, largest first */
    PlDeclined declined[PL_MAX_DECLINED];
    CmErr *err;
} PlCacheCtx;

/* Owned; NULL with err on OOM. */
PlCache *pl_cache_new(CmErr *err);
void pl_cache_free(PlCache *c);

/* Runs CACHE TABLE, UNCACHE TABLE or CLEAR CACHE (`sql` is the text a's offsets
 * refer to).  CM_BIND with the offset of the name, option or level at fault. */
CmStatus pl_cache_exec(PlCacheCtx *ctx, const PsStmt *a, const char *sql);

/* Replaces, top down, each subtree of `root` equal to a cached plan by a scan
 * of its rows (materialized first unless ctx->is_plan_only) and returns the
 * new root; NULL with ctx->err set when materializing failed. */
PlNode *pl_cache_use(PlCacheCtx *ctx, PlNode *root);

/* Finds the subtrees of `root` that occur at least twice (same fingerprint,
 * same bytes) and are worth computing once: they contain a join or an
 * aggregate, the rows flowing through their operators outnumber the rows
 * they give, and they read no table outside the catalog (WITH RECURSIVE
 * results, system tables, cached rows) and call no volatile function.
 * Largest first; each is computed once into ctx->shared[k] (unless
 * ctx->is_plan_only: then the table stays empty) and every occurrence becomes
 * a scan of it.  Returns the new root (root itself when ctx->is_reusing is
 * false); NULL with ctx->err set when computing failed. */
PlNode *pl_cache_share(PlCacheCtx *ctx, PlNode *root);

/* True when a and b compute the same rows by their fingerprints: the same
 * operators over the same catalog tables (a scan of rows outside the catalog
 * or a volatile call is never the same); false on OOM too. */
bool pl_cache_same_plan(PlCacheCtx *ctx, const PlNode *a, const PlNode *b);

/* Frees the statement's shared tables (the statement has ended). */
void pl_cache_ctx_fini(PlCacheCtx *ctx);

/* After a statement failed: true when it read the rows of a MEMORY_ONLY
 * entry and the block store has dropped some of them (the failure may be the
 * scan that found a chunk gone).  The session then runs the statement again
 * with ctx->is_in_place, as Spark recomputes a lost cached partition from its
 * lineage inside the job. */
bool pl_cache_ctx_lost_rows(const PlCacheCtx *ctx);

/* The rows of `e`, computed now when missing; borrowed until the entry
 * changes (never within the statement); NULL with ctx->err. */
StTable *pl_cache_entry_rows(PlCacheCtx *ctx, PlCacheEntry *e);

/* The rows entry `name` holds now (borrowed), or NULL: no such entry, or its
 * rows are not computed.  `c` may be NULL. */
const StTable *pl_cache_rows(PlCache *c, const char *name);

/* The temporary view `name` made by CACHE TABLE name AS q, as a view entry
 * for the binder (borrowed until the view is dropped), or NULL.  `c` may be NULL. */
StEntry *pl_cache_view(PlCache *c, const char *name);

/* Before a statement runs: refuses writes to a cache's temporary view and
 * names that clash with one (CREATE), and drops the view for DROP TABLE/VIEW
 * of its name (*is_done then: the statement has nothing left to do). */
CmStatus pl_cache_before(PlCache *c, StCatalog *cat, const PsStmt *a, bool *is_done, CmErr *err);

/* After a statement succeeded: invalidates the entries reading the table it
 * wrote (INSERT, UPDATE, DELETE, COPY FROM) and drops those reading a table
 * or view it dropped. */
void pl_cache_after(PlCache *c, const PsStmt *a);

/* ROLLBACK (planner/session.c): the entries reading `name` lose their rows
 * (recomputed on next use), or go when `is_dropped` (the name is gone). */
void pl_cache_invalidate(PlCache *c, const char *name, bool is_dropped);
/* Every entry loses its rows. */
void pl_cache_invalidate_all(PlCache *c);

/* The system table sluice_cache: one row per entry, then one per partitioned
 * form `keep` has kept (state "partitioned"; keep may be NULL).  Owned
 * (st_table_free); NULL with err. */
StTable *pl_cache_snapshot(const PlCache *c, const PlKeep *keep, const char *name, CmErr *err);
