/*
 * prune.h - projection pruning of a bound logical plan (see prune.c): every
 * node keeps only the columns read above it.  The root keeps all its columns.
 * Rewrites the plan in place (nodes in arena `a`); NULL with err on OOM.
 */
#pragma once

#include "common/arena.h"
#include "common/err.h"
#include "planner/plan.h"

PlNode *pl_prune(CmArena *a, PlNode *root, CmErr *err);
