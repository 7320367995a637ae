/*
 * timeline.h - the stage timeline of a run: EXPLAIN (ANALYZE, FORMAT HTML).
 *
 * Writes one self-contained HTML document (inline SVG and CSS, no script, no
 * font, no URL: it opens offline and fetches nothing) from a plan that has
 * run: one lane per stage that ran, with a bar per task on a shared time axis
 * (one row per worker thread, from the stages' ExTaskSpan records), the
 * shuffle each stage writes (rows, bytes), its spills and cache reads, the
 * adaptive decisions with their numbers, and the plan as first built and as
 * run (the text EXPLAIN's lines).  The numbers are those EXPLAIN (ANALYZE,
 * FORMAT JSON) reports, read from the same counters.
 *
 * Contract for tools and tests: each lane is one `<rect class="lane"
 * data-stage="ID">` whose fill is the lane's colour, and each task one
 * `<rect class="task">` inside that lane's rows, of the lane's bar colour.
 * Called on the statement's thread after the run; reads the plan only.
 */
#pragma once

#include "planner/physical.h"

typedef struct PlTimelineIn {
    const PlStagePlan *plan;    /* has run (EXPLAIN ANALYZE) */
    const PlStagePlan *initial; /* as first built, when the adaptive rules changed it; or NULL */
    const char *sql;            /* the statement, shown as the title; may be NULL */
    int n_notes;                /* more lines to show (cache reads and writes) */
    const char *const *notes;
} PlTimelineIn;

/* The HTML document.  Owned (cm_free); NULL on OOM. */
char *pl_timeline_html(const PlTimelineIn *in);
