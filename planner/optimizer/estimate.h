/*
 * estimate.h - cardinality estimates of logical plan nodes from the column
 * statistics tables keep (storage/stats.h), with the form-based guesses of
 * pl_selectivity as the fallback where no statistics reach.
 *
 * Columns are traced down to the base table they come from (through
 * filters, column projections, joins, aggregate keys, sorts, limits and
 * windows); a column's estimate is its table's distinct count, null fraction
 * and range, with the distinct count capped by the rows of the filters,
 * aggregates and limits it passes (not of joins: estimate.c says why).  Formulas
 * (docs/statistics.md): a range by linear interpolation over [min, max], an equality 1/ndv (or, for
 * a value far more common than the rest, its share from the column's frequency sketch), IS NULL the
 * null fraction, AND the product (ranges on one column intersected first), OR 1 - prod(1 - s), an
 * equi-join |L||R|/max(ndv_l, ndv_r), a GROUP BY the product of its keys' ndvs capped by its input.
 *
 * A PlEst remembers each node's row estimate by address: use one only while
 * the nodes it has seen do not change.  Single-threaded (the planner's).
 */
#pragma once

#include <stdbool.h>

#include "planner/plan.h"
#include "storage/stats.h"

typedef struct PlEst PlEst;

/* What is known about one output column of a node. */
typedef struct PlColEst {
    bool known;       /* from statistics: ndv and null_frac hold */
    double ndv;       /* distinct non-NULL values, >= 1 */
    double null_frac; /* share of NULLs, 0..1 */
    bool has_range;   /* lo, hi hold: the column's values are numbers in [lo, hi] */
    bool integral;    /* its values are integers (INTEGER, BIGINT, DATE) */
    double lo, hi;
    double table_rows; /* rows of the table it comes from (caps a composite key's ndv) */
    bool via_join;     /* it passed through a join (whose rows do not cap its ndv) */
    /* The base column's statistics while the values keep their frequencies
     * (not past a filter on the column itself, nor an aggregate's key), for
     * an equality with a frequent value; else NULL.  `type` is its type. */
    StColStats *stats;
    CmType type;
} PlColEst;

/* Owned (pl_est_free); NULL on OOM, which every call below accepts (it then
 * remembers nothing). */
PlEst *pl_est_new(void);
void pl_est_free(PlEst *e);

/* Estimated output rows of n, >= 0. */
double pl_est_rows(PlEst *e, const PlNode *n);

/* Estimated bytes of one output row of n: its columns' widths, a string
 * counted as its 16-byte header plus 16 bytes of text. */
double pl_est_row_width(const PlNode *n);

/* What is known about output column `col` of n. */
void pl_est_column(PlEst *e, const PlNode *n, int col, PlColEst *out);

/* The share of n's rows (0..1) that satisfy every one of conj[0..n_conj),
 * whose column c is n's column c - col_off. */
double pl_est_conjuncts(PlEst *e, const PlNode *n, int col_off, ExExpr *const *conj, int n_conj);

/* Rows of an equi-join of l_rows and r_rows rows on n_keys keys whose
 * columns' estimates are lk[k] and rk[k]; false (nothing written) when a
 * key's statistics are unknown. */
bool pl_est_join(double l_rows, double r_rows, int n_keys, const PlColEst *lk, const PlColEst *rk,
                 double *rows);
