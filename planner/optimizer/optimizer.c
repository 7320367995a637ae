/*
 * optimizer.c - the rewrites of a bound plan, in order (optimizer.h).
 */
#include "planner/optimizer/optimizer.h"

#include "planner/optimizer/merge.h"

PlNode *pl_optimize(PlCacheCtx *ctx, PlNode *root)
{
    root = root ? pl_cache_use(ctx, root) : NULL;
    root = root ? pl_merge_scalar_aggs(ctx, root) : NULL;
    return root ? pl_cache_share(ctx, root) : NULL;
}
