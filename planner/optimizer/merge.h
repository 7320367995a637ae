/*
 * merge.h - scalar aggregates over the same rows but for one filter, computed
 * in one pass.
 *
 * A cross join of one-row aggregates (no GROUP BY) whose inputs are the same
 * plan except for a chain of filters at one place, TPC-DS q88's eight counts
 * of store sales by half-hour:
 *
 *     (SELECT count(*) FROM ss, t, ... WHERE ... AND t.hour = 8) s1,
 *     (SELECT count(*) FROM ss, t, ... WHERE ... AND t.hour = 9) s2, ...
 *
 * or scalar subqueries in a select list (TPC-DS q9's buckets: each is SCALAR
 * over a one-row aggregate, cross joined with the FROM clause, whose other
 * relations stay as they are), becomes one aggregate over that plan with the
 * filter `p1 OR p2 OR ...`, each
 * aggregate reading only its own rows (`count(CASE WHEN p1 THEN 1 END)`), as
 * FILTER clauses do.  The rows are read and joined once instead of once per
 * subquery.  It holds when the filtered rows reach the aggregate unchanged but
 * for columns added or dropped: through filters, sorts, projections and inner
 * joins (either side), and the probe side of semi and anti joins; and for the
 * aggregates that skip NULLs (count, sum, min, max, avg), where an aggregate
 * over none of its rows is the aggregate over no rows.  A filter on the far
 * side of an outer join, below a LIMIT or an aggregate, is left alone.
 */
#pragma once

#include "planner/cache.h"
#include "planner/plan.h"

/* Rewrites every such cross join under root (with ctx->is_reusing; the plan is
 * matched by the cache's fingerprints, ctx->cat).  Returns the new root, root
 * itself when nothing applies; NULL with ctx->err set on OOM. */
PlNode *pl_merge_scalar_aggs(PlCacheCtx *ctx, PlNode *root);
