/*
 * optimizer.h - the second of planning's three steps: binding (binder.h)
 * gives a logical plan, the optimizer rewrites it, and the physical planner
 * (physical.h) cuts it into stages and runs them.  The statement driver
 * (session.h) calls the three in turn and is none of them.
 *
 * pl_optimize runs the rewrites of a bound plan in this order:
 *   1. pl_cache_use (cache.h): subtrees equal to a cached plan become scans
 *      of its rows;
 *   2. pl_merge_scalar_aggs (merge.h): one-row aggregates over the same rows
 *      but for a filter become one aggregate;
 *   3. pl_cache_share (cache.h): subtrees that occur twice are computed once.
 * Pruning the columns no one reads (prune.h) runs later, in the physical
 * planner, on the plan it is handed.  Two decisions are the binder's,
 * because they shape the plan it builds: selectivity and row estimates
 * (estimate.h), and the order of a FROM clause's joins (bind_join.c's greedy
 * order, or the cheaper tree of join_order.h).
 */
#pragma once

#include "planner/cache.h"
#include "planner/plan.h"

/* The optimized plan of root (rewritten in place where a rewrite applies);
 * NULL with ctx->err set on failure (OOM, or a cached or shared subtree that
 * could not be computed). */
PlNode *pl_optimize(PlCacheCtx *ctx, PlNode *root);
