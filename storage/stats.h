/*
 * stats.h - per-column statistics of a table: null count, min and max, and
 * a distinct-count sketch (HyperLogLog), for the planner's estimates
 * (planner/estimate.h).
 *
 * A table keeps one StColStats per column (StTable.stats).  st_table_append
 * adds each appended batch once the append has succeeded, one column at a
 * time over the batch's active rows, so the statistics are maintained by
 * COPY, INSERT and CREATE TABLE AS at the price of one hash per value.  Rows
 * cannot be taken out of a sketch: a truncate to a non-zero row count (a
 * failed statement undoing its appends) keeps the statistics as an upper
 * bound and marks them stale; ANALYZE (st_table_analyze) recomputes them from
 * the chunks.  UPDATE and DELETE build a new table, whose statistics are
 * fresh.  The values hashed are the engine's (common/hash.h), so equal keys
 * count once.  Not thread-safe: tables are written between queries only.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/vec.h"

#define ST_HLL_BITS 12 /* 4096 registers (4 KB a column): about 1.6% standard error */
#define ST_HLL_REGS (1 << ST_HLL_BITS)

typedef struct StColStats {
    int64_t n_values;          /* rows counted (null or not) */
    int64_t n_nulls;           /* of them NULL */
    bool has_range;            /* min/max hold (a numeric or DATE column with a non-NULL value) */
    double min, max;           /* logical values: a DECIMAL unscaled, a DATE in days */
    double ndv;                /* st_stats_ndv's answer for the registers as they are; < 0:
                                  not computed since the last change */
    uint8_t hll[ST_HLL_REGS];  /* per register the largest rank seen (0: none) */
} StColStats;

/* Empties s. */
void st_stats_reset(StColStats *s);

/* Counts the active rows of v (positions sel[0..n), or 0..n when sel is NULL;
 * a CONST vector counts its value n times).  Vectorized per type. */
void st_stats_add(StColStats *s, const CmVec *v, const uint32_t *sel, int n);

/* Adds another sketch of the same kind: its registers (ST_HLL_REGS bytes) and
 * the n non-NULL values it counted (approx_count_distinct's partial states). */
void st_stats_merge(StColStats *s, const uint8_t *hll, int64_t n_values);

/* The estimated number of distinct non-NULL values, between 0 and the
 * number of non-NULL values counted.  Remembered until the next change (the
 * planner asks often): call it where the table may be written, not from
 * workers. */
double st_stats_ndv(StColStats *s);

/* A column value as a double for range estimates: DECIMAL unscaled, DATE in
 * days, TIME in microseconds; false for types without an order we estimate
 * (VARCHAR, BOOLEAN). */
bool st_stats_numeric(CmType type, const void *data, uint32_t pos, double *out);
