/*
 * progress.h - the planner's part of a statement's progress: how much of
 * what remains each stage of a plan gets (executor/progress.h counts it).
 *
 * A stage's work is estimated from the rows and bytes of its inputs: exact
 * for the shuffles already written (the statistics the adaptive rules read),
 * the planner's estimates of the writing stage's output otherwise, and the
 * source's estimate for a scan.  When a stage starts, it gets its work's
 * share of the work of every stage not yet run, as the plan stands then, so
 * the adaptive optimizer's rewrites re-weight only what remains.  Called by
 * the driver thread between stages.
 */
#pragma once

#include "executor/progress.h"
#include "planner/physical.h"

/* Estimated work of stage s of plan, run by `workers` workers: bytes read
 * plus a cost per row, >= 1. */
double pl_progress_stage_work(const PlStagePlan *plan, const ExStage *s, int workers);

/* Stage i of plan starts: its share of what remains goes to p (NULL: nothing). */
void pl_progress_stage_begin(const PlStagePlan *plan, int i, int workers, ExProgress *p);

/* Tells p of the adaptive decisions plan->decisions[from..n_decisions), each
 * as one short line ("stage 3: join → broadcast"). */
void pl_progress_decisions(const PlStagePlan *plan, int from, ExProgress *p);
