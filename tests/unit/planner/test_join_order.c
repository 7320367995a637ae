/*
 * test_join_order.c - the join enumerator (planner/optimizer/join_order.h) on
 * hand-made graphs: the rows of a subset do not depend on how its leaves
 * join, a subset that falls apart is the product of its parts, a bridge to a
 * selective table is joined before the weaker filters a greedy order takes
 * first, and a graph whose leaves are not all joined has no tree.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/optimizer/join_order.h"

static PlJoinGraph g;
static PlJoinOrder *o;

static void setup(void)
{
    memset(&g, 0, sizeof g);
    o = malloc(sizeof *o);
    cr_assert(o != NULL);
}

static void teardown(void)
{
    free(o);
}

TestSuite(pl_join_order, .init = setup, .fini = teardown);

static int add_leaf(double rows)
{
    g.rows[g.n_leaves] = rows;
    g.width[g.n_leaves] = 16;
    return g.n_leaves++;
}

/* An equality between a column of leaf a with ndv_a distinct values and
 * one of leaf b with ndv_b, in class cls. */
static void add_key(int a, double ndv_a, int b, double ndv_b, int cls)
{
    PlJoKey *k = &g.keys[g.n_keys++];
    memset(k, 0, sizeof *k);
    k->a = a;
    k->b = b;
    k->cls = cls;
    k->ka = (PlColEst){.known = true, .ndv = ndv_a, .table_rows = g.rows[a]};
    k->kb = (PlColEst){.known = true, .ndv = ndv_b, .table_rows = g.rows[b]};
}

/* The tree's leaves joined into subset s, in build order: the probe part's
 * first, as the planner builds them. */
static uint32_t first_build(uint32_t s)
{
    uint32_t p = o->probe[s];
    return (s & (s - 1)) == 0 ? 0 : ((p & (p - 1)) ? first_build(p) : s ^ p);
}

Test(pl_join_order, star_rows_do_not_depend_on_order)
{
    int f = add_leaf(1e6), d1 = add_leaf(1000), d2 = add_leaf(100);
    add_key(f, 1000, d1, 1000, 0);
    add_key(f, 100, d2, 100, 1);
    cr_assert(pl_jo_best(&g, o));
    uint32_t all = 7;
    /* each dimension's key covers the fact's values: every fact row meets one */
    cr_assert_float_eq(o->rows[all], 1e6, 1);
    cr_assert_float_eq(o->rows[(1u << f) | (1u << d1)], 1e6, 1);
    /* the two dimensions alone have no equality: a cross product */
    cr_assert_float_eq(o->rows[(1u << d1) | (1u << d2)], 1e5, 1);
    /* the fact streams: it probes, the dimensions are built */
    cr_assert(o->cost[all] > 0);
    uint32_t top = o->probe[all], last = all ^ top;
    cr_assert(last == (1u << d1) || last == (1u << d2), "a dimension is built last (%x)", last);
    cr_assert_eq(o->probe[top], 1u << f, "the fact probes the other first (%x)", o->probe[top]);
}

/* One class over three leaves (a.x = b.x, b.x = c.x): the class counts once,
 * whichever leaf is added last. */
Test(pl_join_order, one_class_counts_once)
{
    int a = add_leaf(1e5), b = add_leaf(1e4), c = add_leaf(1e3);
    add_key(a, 1e3, b, 1e3, 7);
    add_key(b, 1e3, c, 1e3, 7);
    add_key(a, 1e3, c, 1e3, 7);
    cr_assert(pl_jo_best(&g, o));
    /* |a||b|/1e3 = 1e6, then c on x: 1e6 x 1e3 / 1e3 */
    cr_assert_float_eq(o->rows[(1u << a) | (1u << b)], 1e6, 1);
    cr_assert_float_eq(o->rows[7], 1e6, 1);
}

/* f joins three weak filters (each keeps 80%) and, through a bridge c, a
 * table d that keeps one row in a thousand: the tree joins c with d first
 * and f probes it before the weak filters, at well under half the cost of
 * the greedy order (the filters first, then c, then d). */
Test(pl_join_order, bridge_before_weak_filters)
{
    int f = add_leaf(4e6), b1 = add_leaf(800), b2 = add_leaf(800), c = add_leaf(1e5),
        d = add_leaf(1);
    add_key(f, 1000, b1, 800, 0);
    add_key(f, 1000, b2, 800, 1);
    add_key(f, 1e5, c, 1e5, 2);
    add_key(c, 1000, d, 1, 3);
    cr_assert(pl_jo_best(&g, o));
    uint32_t all = 31, cd = (1u << c) | (1u << d);
    cr_assert_eq(first_build(all), cd, "f first meets c joined with d (got %x)", first_build(all));
    uint64_t probe[4] = {1u << f, (1u << f) | (1u << b1), (1u << f) | (1u << b1) | (1u << b2),
                         all & ~(1u << d)};
    uint64_t build[4] = {1u << b1, 1u << b2, 1u << c, 1u << d};
    double greedy = pl_jo_cost(&g, o, probe, build, 4);
    cr_assert(o->cost[all] < 0.5 * greedy, "tree %.0f, greedy %.0f", o->cost[all], greedy);
    cr_assert(fabs(o->rows[all] - 4e6 * 0.8 * 0.8 / 1000) < 100, "rows %.1f", o->rows[all]);
}

Test(pl_join_order, unconnected_leaves_have_no_tree)
{
    int a = add_leaf(10), b = add_leaf(10);
    add_leaf(10);
    add_key(a, 10, b, 10, 0);
    cr_assert(!pl_jo_best(&g, o));
    cr_assert(o->cost[7] < 0);
    cr_assert(o->cost[3] >= 0);
}

/* Without statistics, keys covering a side's primary key bound the rows. */
Test(pl_join_order, primary_key_without_statistics)
{
    int f = add_leaf(1e6), d = add_leaf(500), e = add_leaf(20);
    add_key(f, 0, d, 0, 0);
    add_key(d, 0, e, 0, 1);
    g.keys[0].ka.known = g.keys[0].kb.known = false;
    g.keys[1].ka.known = g.keys[1].kb.known = false;
    g.pk_rows[f][d] = 1000; /* d keeps 500 of its 1000 keys */
    cr_assert(pl_jo_best(&g, o));
    cr_assert_float_eq(o->rows[(1u << f) | (1u << d)], 5e5, 1);
    /* no key covered: the larger side */
    cr_assert_float_eq(o->rows[(1u << d) | (1u << e)], 500, 1e-6);
}

Test(pl_join_order, probe_cost_grows_past_the_caches)
{
    cr_assert_float_eq(pl_jo_probe_cost(1000), 1, 1e-9);
    cr_assert(pl_jo_probe_cost(1e6) > 1);
    cr_assert_float_eq(pl_jo_probe_cost(1e12), 4, 1e-9);
}
