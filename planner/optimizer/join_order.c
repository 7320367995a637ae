/*
 * join_order.c - dynamic programming over the connected subsets of a join
 * graph (join_order.h says what is estimated and costed).
 */
#include "planner/optimizer/join_order.h"

#include <math.h>

#define BUILD_FACTOR 2.0    /* inserting a row costs about two probes */
#define EXCHANGE_FACTOR 1.0 /* writing and reading a row of an exchange */
#define OUTPUT_FACTOR 0.25  /* a row of a join's output */
#define OTHER_SHARE 0.5     /* the share another condition across leaves keeps */
#define WIDTH_CAP 40.0      /* bytes of a leaf's row once the columns no one reads are gone */

double pl_jo_probe_cost(double rows)
{
    double bytes = rows * 32, c = 1;
    for (double b = 2048.0 * 1024; b < bytes && c < 4; b *= 2) {
        c += 0.25;
    }
    return c;
}

static int highest(uint32_t s)
{
    return 31 - __builtin_clz(s);
}

/* The rows of rest joined with leaf h (not in rest), whose rows are
 * o->rows[rest] and g->rows[h]. */
static double add_leaf(const PlJoinGraph *g, const PlJoinOrder *o, uint32_t rest, int h)
{
    double l = o->rows[rest], r = g->rows[h];
    PlColEst lk[PL_JO_MAX_KEYS], rk[PL_JO_MAX_KEYS];
    int n = 0, cls[PL_JO_MAX_KEYS];
    bool multi = (rest & (rest - 1)) != 0;
    for (int k = 0; k < g->n_keys; k++) {
        const PlJoKey *key = &g->keys[k];
        const PlColEst *mine, *theirs;
        if (key->a == h && ((rest >> key->b) & 1)) {
            mine = &key->ka;
            theirs = &key->kb;
        } else if (key->b == h && ((rest >> key->a) & 1)) {
            mine = &key->kb;
            theirs = &key->ka;
        } else {
            continue;
        }
        /* One key per class: the class's columns are already equal within
         * rest; the one with the fewest values there stands for them. */
        int at = 0;
        while (at < n && cls[at] != key->cls) {
            at++;
        }
        if (at == n) {
            n++;
        } else if (!(theirs->known && lk[at].known && theirs->ndv < lk[at].ndv)) {
            continue;
        }
        cls[at] = key->cls;
        lk[at] = *theirs;
        lk[at].via_join |= multi;
        rk[at] = *mine;
    }
    double rows;
    if (n > 0 && pl_est_join(l, r, n, lk, rk, &rows)) {
        /* estimated from the columns' statistics */
    } else if (n > 0 || (g->expr_edges[h] & rest)) {
        rows = fmax(l, r);
        for (int j = 0; j < g->n_leaves; j++) {
            if ((rest >> j) & 1) {
                rows = g->pk_rows[j][h] > 0 ? fmin(rows, l * r / g->pk_rows[j][h]) : rows;
                rows = g->pk_rows[h][j] > 0 ? fmin(rows, l * r / g->pk_rows[h][j]) : rows;
            }
        }
    } else {
        rows = l * r;
    }
    uint32_t all = rest | (uint32_t)1 << h;
    for (int c = 0; c < g->n_other; c++) {
        uint32_t m = g->other[c];
        rows *= (m >> h) & 1 && (m & ~all) == 0 && (m & rest) ? OTHER_SHARE : 1;
    }
    return rows;
}

/* Bytes of a row of subset s, its leaves' rows side by side. */
static double width_of(const PlJoinGraph *g, uint32_t s)
{
    double w = 0;
    for (int i = 0; i < g->n_leaves; i++) {
        w += (s >> i) & 1 ? fmin(g->width[i], WIDTH_CAP) : 0;
    }
    return w;
}

static double join_cost(const PlJoinGraph *g, const PlJoinOrder *o, uint32_t p, uint32_t b)
{
    double pr = o->rows[p], br = o->rows[b], pc = pl_jo_probe_cost(br);
    double cost = pr * pc + BUILD_FACTOR * br * pc + OUTPUT_FACTOR * o->rows[p | b];
    if (g->cfg != NULL) {
        double bb = br * width_of(g, b), pb = pr * width_of(g, p);
        if (bb > (double)cm_config_broadcast_bytes_for(g->cfg, bb, pb)) {
            cost += EXCHANGE_FACTOR * (pr + br);
        }
    }
    return cost;
}

/* Does an equality join a leaf of s to one of t? */
static bool adjacent(const PlJoinGraph *g, const uint16_t *adj, uint32_t s, uint32_t t)
{
    for (int i = 0; i < g->n_leaves; i++) {
        if ((s >> i) & 1 && (adj[i] & t)) {
            return true;
        }
    }
    return false;
}

/* The leaves of s connected to its lowest one. */
static uint32_t component(const uint16_t *adj, uint32_t s)
{
    uint32_t c = s & -s, grown;
    do {
        grown = c;
        for (uint32_t m = c; m != 0; m &= m - 1) {
            c |= adj[__builtin_ctz(m)] & s;
        }
    } while (c != grown);
    return c;
}

/* The rows of subset s (its proper subsets' known).  A subset that falls
 * apart is the product of its parts; a connected one joins, to the rest, its
 * highest leaf whose removal leaves the rest connected, so that the keys
 * between the two are equalities of one join, never of a cross product
 * (whose composite key would look as selective as its tables are large). */
static double subset_rows(const PlJoinGraph *g, const PlJoinOrder *o, const uint16_t *adj,
                          uint32_t s)
{
    uint32_t c = component(adj, s);
    if (c != s) {
        return o->rows[c] * o->rows[s ^ c];
    }
    for (int h = highest(s);; h--) {
        uint32_t rest = s & ~((uint32_t)1 << h);
        if ((s >> h) & 1 && component(adj, rest) == rest) {
            return add_leaf(g, o, rest, h);
        }
    }
}

bool pl_jo_best(const PlJoinGraph *g, PlJoinOrder *o)
{
    int n = g->n_leaves;
    uint32_t all = ((uint32_t)1 << n) - 1;
    uint16_t adj[PL_JO_MAX_LEAVES];
    for (int i = 0; i < n; i++) {
        adj[i] = g->expr_edges[i];
    }
    for (int k = 0; k < g->n_keys; k++) {
        adj[g->keys[k].a] |= (uint16_t)(1u << g->keys[k].b);
        adj[g->keys[k].b] |= (uint16_t)(1u << g->keys[k].a);
    }
    o->rows[0] = 1;
    o->cost[0] = -1;
    for (uint32_t s = 1; s <= all; s++) {
        int h = highest(s);
        uint32_t rest = s & ~((uint32_t)1 << h);
        o->rows[s] = rest == 0 ? g->rows[h] : subset_rows(g, o, adj, s);
        o->cost[s] = rest == 0 ? 0 : -1;
        o->probe[s] = (uint16_t)s;
        if (rest == 0) {
            continue;
        }
        /* every split into two connected parts that an equality joins */
        for (uint32_t p = (s - 1) & s; p != 0; p = (p - 1) & s) {
            uint32_t b = s ^ p;
            if (o->cost[p] < 0 || o->cost[b] < 0 || !adjacent(g, adj, p, b)) {
                continue;
            }
            double c = o->cost[p] + o->cost[b] + join_cost(g, o, p, b);
            if (o->cost[s] < 0 || c < o->cost[s]) {
                o->cost[s] = c;
                o->probe[s] = (uint16_t)p;
            }
        }
    }
    return o->cost[all] >= 0;
}

double pl_jo_cost(const PlJoinGraph *g, const PlJoinOrder *o, const uint64_t *probe,
                  const uint64_t *build, int n)
{
    double cost = 0;
    for (int k = 0; k < n; k++) {
        cost += join_cost(g, o, (uint32_t)probe[k], (uint32_t)build[k]);
    }
    return cost;
}
