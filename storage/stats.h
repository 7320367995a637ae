/*
 * stats.h - per-column statistics of a table: null count, min and max, and
 * a distinct-count sketch (HyperLogLog), and, for a table's columns, a
 * frequency sketch (Count-Min) that finds the values much more common than
 * the rest, for the planner's estimates (planner/optimizer/estimate.h).
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
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/vec.h"

#define ST_HLL_BITS 12 /* 4096 registers (4 KB a column): about 1.6% standard error */
#define ST_HLL_REGS (1 << ST_HLL_BITS)

#define ST_CMS_DEPTH 2   /* rows of counters, each indexed by other bits of the hash */
#define ST_CMS_WIDTH 512 /* counters a row, a power of two (8 KB a column) */

/* A Count-Min sketch of a column's non-NULL values: each value adds 1 to one
 * counter per row, picked by its hash.  A counter over-counts by the values
 * that share it, so a value's count is read as its smallest counter less that
 * row's typical (median) counter: close for a value far more common than the
 * rest (`k = 0` where 90% of the rows are 0), noise for the others.  Sums do
 * not depend on the order rows arrive in, so parallel loads give the same
 * sketch, and plans stay deterministic. */
typedef struct StFreq {
    int64_t n;                   /* values counted */
    int64_t noise[ST_CMS_DEPTH]; /* the median counter of each row; < 0: not computed since
                                    the last change */
    double heavy_n;              /* of n, counted as frequent values (st_stats_freq); */
    int heavy_values;            /* how many such values (counters over the threshold) */
    uint64_t cells[ST_CMS_DEPTH][ST_CMS_WIDTH];
} StFreq;

typedef struct StColStats {
    int64_t n_values;         /* rows counted (null or not) */
    int64_t n_nulls;          /* of them NULL */
    bool has_range;           /* min/max hold (a numeric or DATE column with a non-NULL value) */
    double min, max;          /* logical values: a DECIMAL unscaled, a DATE in days */
    double ndv;               /* st_stats_ndv's answer for the registers as they are; < 0:
                                 not computed since the last change */
    uint8_t hll[ST_HLL_REGS]; /* per register the largest rank seen (0: none) */
    StFreq *freq;             /* NULL, or the frequency sketch (a table's columns have one:
                                 st_stats_new_array) */
} StColStats;

/* n zeroed statistics, each with a frequency sketch, in one allocation
 * (cm_free the result); NULL on OOM. */
StColStats *st_stats_new_array(int n);

/* A copy of such an array of n (its frequency sketches too), in one
 * allocation (cm_free the result); NULL on OOM. */
StColStats *st_stats_copy_array(const StColStats *s, int n);

/* Makes s empty statistics without a frequency sketch (s may be
 * uninitialized). */
void st_stats_reset(StColStats *s);

/* Empties s, keeping its frequency sketch (emptied too). */
void st_stats_clear(StColStats *s);

/* Counts the active rows of v (positions sel[0..n), or 0..n when sel is NULL;
 * a CONST vector counts its value n times).  Vectorized per type. */
void st_stats_add(StColStats *s, const CmVec *v, const uint32_t *sel, int n);

/* Adds another sketch of the same kind: its registers (ST_HLL_REGS bytes) and
 * the n non-NULL values it counted (approx_count_distinct's partial states). */
void st_stats_merge(StColStats *s, const uint8_t *hll, int64_t n_values);

/* Adds everything `from` counted (its registers, counts, range and
 * frequency sketch) to s, as if s had counted those rows itself: the
 * statistics of a bulk load counted apart from the table and added once it
 * succeeded.  The same result whatever the order of the rows. */
void st_stats_union(StColStats *s, const StColStats *from);
/* The estimated number of distinct non-NULL values, between 0 and the
 * number of non-NULL values counted.  Remembered until the next change (the
 * planner asks often): call it where the table may be written, not from
 * workers. */
double st_stats_ndv(StColStats *s);

/* The hash st_stats_add gives a value, for st_stats_freq: an integer of any
 * width, DATE, TIME, TIMESTAMP or DECIMAL (unscaled) by its int64 value, a
 * DOUBLE by its bits, a VARCHAR by its bytes. */
uint64_t st_stats_hash_int(int64_t x);
uint64_t st_stats_hash_double(double x);
uint64_t st_stats_hash_str(const char *s, size_t n);

/* The share of s's non-NULL values that equal the value of hash h, when that
 * value is frequent: counted far above the average frequency (4 times the
 * rows per distinct value) and above the sketch's noise.  Otherwise -1; then
 * st_stats_rare_share is the better estimate.  -1 without a sketch. */
double st_stats_freq(StColStats *s, uint64_t h);

/* The share of the non-NULL values that one value which is not frequent
 * holds on average: what the frequent values leave, spread over the other
 * distinct values ((n - heavy) / (ndv - heavy values) / n); 1/ndv without a
 * sketch or without frequent values. */
double st_stats_rare_share(StColStats *s);

/* A column value as a double for range estimates: DECIMAL unscaled, DATE in
 * days, TIME in microseconds; false for types without an order we estimate
 * (VARCHAR, BOOLEAN). */
bool st_stats_numeric(CmType type, const void *data, uint32_t pos, double *out);
