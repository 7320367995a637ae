/*
 * aqe.h - adaptive execution: after each stage that wrote a shuffle, the
 * stages not yet started are rewritten from the real map output statistics.
 *
 * Rules (each behind a setting, see docs/aqe.md): switch a partitioned join
 * whose build side turned out small to a broadcast join, merging the probe
 * side's exchange away when it has not run yet; coalesce contiguous small
 * reduce partitions up to the advisory size.  Every decision is recorded in
 * the plan (EXPLAIN ANALYZE shows them).  Called by the driver thread between
 * stages, when no task runs.
 */
#pragma once

#include "executor/op.h"
#include "planner/physical.h"

/* Applies the adaptive rules after stage `done` finished.  CM_OOM (in err)
 * when a rule could not allocate its rewrite or its record: the plan may be
 * half rewritten and must not run on. */
CmStatus pl_aqe_after_stage(PlStagePlan *plan, int done, const ExQuery *q, CmErr *err);
