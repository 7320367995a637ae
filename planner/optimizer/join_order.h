/*
 * join_order.h - cost-based join enumeration over a join graph: dynamic
 * programming over its connected subsets (DPsub: every subset of up to
 * PL_JO_MAX_LEAVES leaves, split every way into two connected parts joined
 * by an equality), bushy trees included.
 *
 * The caller (bind_join.c) describes the inner joins of one FROM clause as a
 * graph: each leaf's rows after its own conditions, the column equalities
 * between leaves with their columns' estimates (optimizer/estimate.h), and
 * the masks of the other conditions that span leaves.  From it this module
 * estimates the rows of every subset of leaves and costs a hash join of two
 * subsets; the caller compares the best tree's cost with the cost of the
 * order it would build otherwise (pl_jo_cost of its steps) and builds the
 * cheaper.  Nothing here reads or builds plan nodes.
 *
 * The rows of a subset do not depend on the order its leaves join in: they
 * are the rows of the subset less its highest leaf, times that leaf's rows,
 * times the selectivity of the equalities between the two (pl_est_join over
 * all of them at once, so a composite key is one key; equalities of one
 * class - a.x = b.x, b.x = c.x - counted once).  Without statistics, a pair
 * whose equalities cover one side's primary key gives each row of the other
 * side at most one match; otherwise the larger side's rows.  Each other
 * condition across leaves keeps half.
 *
 * The cost of a hash join with probe side P and build side B: P's rows times
 * the cost of a probe into B's table (pl_jo_probe_cost: tables past the
 * caches cost more per probe), B's rows times twice that (inserting), both
 * sides' rows again when B is too large to broadcast (both are exchanged),
 * and a quarter per output row.  A tree costs the sum over its joins.  Scans
 * cost the same in every order, so they do not count.
 *
 * Single-threaded, no allocation but the PlJoinOrder the caller owns.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/config.h"
#include "planner/optimizer/estimate.h"

#define PL_JO_MAX_LEAVES 12 /* past this the caller orders greedily */
#define PL_JO_MAX_KEYS 64
#define PL_JO_MAX_OTHER 64

/* One column equality between leaves a and b. */
typedef struct PlJoKey {
    int a, b;
    PlColEst ka, kb; /* the columns' estimates in their leaves (known false: none) */
    int cls;         /* keys whose columns are equal through other keys share a class */
} PlJoKey;

typedef struct PlJoinGraph {
    int n_leaves;
    double rows[PL_JO_MAX_LEAVES];  /* after the leaf's own conditions */
    double width[PL_JO_MAX_LEAVES]; /* bytes of a row of the leaf */
    /* pk_rows[i][j] > 0: the equalities between i and j cover j's primary key,
     * whose table has that many rows (each row of i meets at most one of j) */
    double pk_rows[PL_JO_MAX_LEAVES][PL_JO_MAX_LEAVES];
    int n_keys;
    PlJoKey keys[PL_JO_MAX_KEYS];
    /* leaves joined by an equality of expressions (no estimates): edges too */
    uint16_t expr_edges[PL_JO_MAX_LEAVES];
    int n_other;
    uint16_t other[PL_JO_MAX_OTHER]; /* masks of the other conditions across leaves */
    const CmConfig *cfg;             /* for the broadcast size */
} PlJoinGraph;

/* The best tree: for each subset s of two or more leaves in it, probe[s] is
 * the part that probes (the rest is built into the hash table). */
typedef struct PlJoinOrder {
    double rows[1 << PL_JO_MAX_LEAVES]; /* each subset's estimated rows */
    double cost[1 << PL_JO_MAX_LEAVES]; /* the best tree's cost; < 0: not connected */
    uint16_t probe[1 << PL_JO_MAX_LEAVES];
} PlJoinOrder;

/* Fills o for graph g (2 <= n_leaves <= PL_JO_MAX_LEAVES).  False when the
 * leaves are not all connected by equalities (a cross product is left to the
 * caller's order); o->cost[all] is then < 0. */
bool pl_jo_best(const PlJoinGraph *g, PlJoinOrder *o);

/* The cost of the tree whose joins are probe[k] with build[k], k < n (each a
 * subset of the leaves; o from pl_jo_best, whose rows hold for any subset). */
double pl_jo_cost(const PlJoinGraph *g, const PlJoinOrder *o, const uint64_t *probe,
                  const uint64_t *build, int n);

/* What probing a hash table of about `rows` costs per probe, relative to one
 * that stays in the caches: 1 up to 2 MiB (~32 bytes a row), then a quarter
 * more for every doubling, at most 4. */
double pl_jo_probe_cost(double rows);
