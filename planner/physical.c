/*
 * physical.c - physical planning: logical plan -> pipelines -> stages.
 *
 * The builder walks the logical plan bottom up, keeping one open pipeline
 * (a source and the operators appended so far).  An exchange closes the open
 * pipeline into a stage whose sink writes a shuffle, and opens a new pipeline
 * reading it.  `single` tracks whether the open pipeline runs as one task,
 * which decides whether an ORDER BY or LIMIT needs a gather first.
 */
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "executor/ops.h"
#include "planner/aqe/aqe.h"
#include "planner/bind/binder_int.h"
#include "planner/optimizer/estimate.h"
#include "planner/optimizer/prune.h"
#include "planner/physical.h"
#include "planner/progress.h"

#define MAX_PIPE_OPS 512
#define MAX_STAGES 4096 /* plans duplicate a subtree a correlated subquery reads twice */

typedef struct Pipe {
    ExOp *source;
    const PlNode *scan_node; /* the GET the source scans, or NULL */
    int n_ops;
    ExOp *ops[MAX_PIPE_OPS];
    bool single;              /* runs as one task */
    const PlNode *keyed_for;  /* the aggregate whose keys the pipe's rows are partitioned on
                                 (a union read for it, build_union), or NULL */
    const PlNode *union_read; /* the union whose inputs the source reads one after the
                                 other, each task its part of each (build_union), or NULL */
    /* While the pipe's top is hashed_top (its source, or a WINDOW after it,
     * which keeps its input's columns where they were): its rows are hash
     * partitioned on columns hashed[0..n_hashed), so a window partitioned on
     * those (and maybe more) needs no exchange of its own. */
    const ExOp *hashed_top;
    int n_hashed;
    int hashed[8];
    const ExWindowSpec *sorted_by; /* when hashed_top is a WINDOW: its spec (its output is
                                      in (part, order) order in each task) */
    int n_deps;
    ExStage *deps[64];
} Pipe;

typedef struct Builder {
    CmArena *a;
    const CmConfig *cfg;
    PlStagePlan *plan;
    PlEst *est; /* row estimates of the (pruned, unchanging) plan; may be NULL */
    CmErr *err;
    /* A union an aggregate reads through projections of plain columns: its
     * inputs are exchanged on the aggregate's keys (union columns keyed_cols)
     * so that each task aggregates whole groups (keyed_union_for). */
    const PlNode *keyed_union;
    const PlNode *keyed_union_for;
    int *keyed_cols;
} Builder;

static const ExOp *pipe_top(const Pipe *p)
{
    return p->n_ops > 0 ? p->ops[p->n_ops - 1] : p->source;
}

static bool append(Builder *bld, Pipe *p, ExOp *op)
{
    if (op == NULL) {
        return false;
    }
    if (p->n_ops == MAX_PIPE_OPS) {
        cm_err_set(bld->err, CM_LIMIT, -1, "query too complex: pipeline too long");
        return false;
    }
    p->ops[p->n_ops++] = op;
    return true;
}

/* op, named for EXPLAIN by `names` (its output columns' names, or NULL). */
static ExOp *named(ExOp *op, const char *const *names)
{
    if (op != NULL) {
        op->names = names;
    }
    return op;
}

static ExStage *close_stage(Builder *bld, Pipe *p, ExOp *sink, const char *exchange)
{
    PlStagePlan *plan = bld->plan;
    if (sink == NULL) {
        return NULL;
    }
    if (plan->n_stages == MAX_STAGES) {
        cm_err_set(bld->err, CM_LIMIT, -1, "query too complex: too many stages");
        return NULL;
    }
    ExStage *s = cm_arena_zalloc(bld->a, sizeof *s);
    ExOp **ops = cm_arena_alloc(bld->a, sizeof(ExOp *) * (size_t)(p->n_ops + 1));
    ExStage **deps = cm_arena_alloc(bld->a, sizeof(ExStage *) * (size_t)(p->n_deps + 1));
    if (s == NULL || ops == NULL || deps == NULL) {
        cm_err_set(bld->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    memcpy(ops, p->ops, sizeof(ExOp *) * (size_t)p->n_ops);
    memcpy(deps, p->deps, sizeof(ExStage *) * (size_t)p->n_deps);
    s->id = plan->n_stages + 1;
    s->source = p->source;
    s->n_ops = p->n_ops;
    s->ops = ops;
    s->sink = sink;
    s->n_deps = p->n_deps;
    s->deps = deps;
    s->exchange = exchange;
    plan->stages[plan->n_stages++] = s;
    return s;
}

/* The partitioned form that closing p into a hash exchange on `keys` writes,
 * in *key, when it can be kept across statements (planner/keep.h): p is a
 * bare scan of a current table (its exchange is the table's rows, placed by
 * the keys alone).  *table is the name the keeper knows the table by. */
static bool keep_key(const Builder *bld, const Pipe *p, int n_keys, const int *keys, int n_parts,
                     PlKeepKey *key, const char **table)
{
    const PlNode *n = p->scan_node;
    if (bld->plan->keep == NULL || !bld->cfg->exchange_reuse || n == NULL || p->n_ops > 0 ||
        p->source == NULL || !ex_op_is_scan(p->source) || n_keys <= 0 ||
        n_keys > PL_KEEP_MAX_KEYS || n->n_cols > PL_KEEP_MAX_COLS || n->shared_id > 0) {
        return false;
    }
    *table = n->cache_name != NULL ? n->cache_name : n->table->name;
    if (!pl_keep_eligible(bld->plan->keep, *table, n->table)) {
        return false;
    }
    memset(key, 0, sizeof *key);
    key->table_id = n->table->id;
    key->version = n->table->version;
    key->n_cols = n->n_cols;
    memcpy(key->cols, n->col_ids, sizeof(int) * (size_t)n->n_cols);
    key->n_keys = n_keys;
    memcpy(key->keys, keys, sizeof(int) * (size_t)n_keys);
    key->n_parts = n_parts;
    return true;
}

/* Names of columns cols[0..n) of p's top, "a, b" (in the query arena). */
static const char *col_list(Builder *bld, const Pipe *p, int n, const int *cols)
{
    const char *const *names = pipe_top(p)->names;
    const char *s = "";
    for (int i = 0; i < n && s != NULL; i++) {
        int c = cols != NULL ? cols[i] : i;
        s = cm_arena_printf(bld->a, "%s%s%s", s, i ? ", " : "",
                            names != NULL && names[c] != NULL ? names[c] : "?");
    }
    return s;
}

/* "table (a, b; hash on a, 8 partitions)", for sluice_cache and EXPLAIN. */
static const char *keep_what(Builder *bld, const Pipe *p, const char *table, int n_keys,
                             const int *keys, int n_parts)
{
    const char *cols = col_list(bld, p, pipe_top(p)->n_cols, NULL);
    const char *on = col_list(bld, p, n_keys, keys);
    return cols && on ? cm_arena_printf(bld->a, "%s (%s; hash on %s, %d partitions)", table, cols,
                                        on, n_parts)
                      : NULL;
}

/* Stage s writes `slot` from pipe p: when a keeper holds its partitioned form,
 * the slot gets the kept shuffle and s does not run; otherwise the exchange is
 * offered to the keeper after the run (the first PL_KEEP_PER_PLAN of a plan). */
static void note_keep(Builder *bld, const Pipe *p, ExStage *s, ShShuffle **slot, int n_keys,
                      const int *keys, int n_parts)
{
    PlStagePlan *plan = bld->plan;
    PlKeepKey key;
    const char *table = NULL;
    if (!keep_key(bld, p, n_keys, keys, n_parts, &key, &table)) {
        return;
    }
    ShShuffle *kept = pl_keep_find(plan->keep, &key);
    if (kept == NULL && plan->n_keep_wrote == PL_KEEP_PER_PLAN) {
        return;
    }
    PlKeepKey *copy = cm_arena_alloc(bld->a, sizeof *copy);
    const char *what = keep_what(bld, p, table, n_keys, keys, n_parts);
    if (copy == NULL || what == NULL) {
        return; /* nothing kept or read: the stage runs */
    }
    *copy = key;
    if (kept == NULL) {
        plan->keep_wrote[plan->n_keep_wrote] =
            (PlKeepWrote){.key = copy, .table = table, .what = what};
        plan->keep_slot[plan->n_keep_wrote++] = slot;
    } else if (plan->n_keep_used < PL_KEEP_PER_PLAN) {
        plan->keep_used[plan->n_keep_used] = copy;
        plan->keep_borrowed[plan->n_keep_used++] = slot;
        *slot = kept;
        s->done = s->skipped = true;
        s->kept = what;
    }
}

/* Closes the open pipeline into a stage writing a new shuffle on `keys`. */
static ExStage *close_to_shuffle(Builder *bld, Pipe *p, int n_keys, const int *keys, int n_parts,
                                 ShShuffle ***slot_out)
{
    PlStagePlan *plan = bld->plan;
    if (plan->n_shuffles == MAX_STAGES) {
        cm_err_set(bld->err, CM_LIMIT, -1, "query too complex: too many exchanges");
        return NULL;
    }
    ShShuffle **slot = &plan->shuffles[plan->n_shuffles++];
    const ExOp *top = pipe_top(p);
    ExOp *w = named(ex_shuffle_write_new(bld->a, slot, n_parts, n_keys, keys, top->n_cols,
                                         top->types, bld->err),
                    top->names);
    const char *desc = n_keys ? cm_arena_printf(bld->a, "hash exchange, %d partitions", n_parts)
                       : n_parts == 1 ? "gather"
                                      : cm_arena_printf(bld->a, "exchange, %d partitions", n_parts);
    *slot_out = slot;
    ExStage *s = close_stage(bld, p, w, desc);
    if (s != NULL) {
        s->shuffle = slot;
        note_keep(bld, p, s, slot, n_keys, keys, n_parts);
    }
    return s;
}

/* Closes the open pipeline into a shuffle on `keys` and opens its reader. */
static bool exchange(Builder *bld, Pipe *p, int n_keys, const int *keys, int n_parts)
{
    ShShuffle **slot = NULL;
    const ExOp *top = pipe_top(p);
    ExStage *s = close_to_shuffle(bld, p, n_keys, keys, n_parts, &slot);
    ExOp *r =
        s ? named(ex_shuffle_read_new(bld->a, slot, top->n_cols, top->types, bld->err), top->names)
          : NULL;
    if (r == NULL) {
        return false;
    }
    memset(p, 0, sizeof *p);
    p->source = r;
    p->single = n_parts == 1;
    p->deps[p->n_deps++] = s;
    if (n_keys > 0 && n_keys <= (int)(sizeof p->hashed / sizeof p->hashed[0])) {
        p->hashed_top = r;
        p->n_hashed = n_keys;
        memcpy(p->hashed, keys, sizeof(int) * (size_t)n_keys);
    }
    return true;
}

/* Whether rows as window `prev` emits them (by its partition keys, then its
 * order keys, in each task) are in the order window w sorts by: the same
 * partition keys, and w's order keys the first of prev's. */
static bool sorted_for(const ExWindowSpec *prev, const ExWindowSpec *w)
{
    return prev->n_part == w->n_part && w->n_order <= prev->n_order &&
           memcmp(prev->part, w->part, sizeof(int) * (size_t)w->n_part) == 0 &&
           ex_sort_keys_equal(prev->order, w->order, w->n_order);
}

/* Whether the pipe's rows are hash partitioned on columns part[0..n), in
 * any order: then every row of one PARTITION BY value is in one task already.
 * Partitioned on fewer of them would do too, but fewer keys may have few
 * values: PARTITION BY a, c after PARTITION BY a with two values of a ran
 * 10% slower in the stage of a than exchanged on (a, c). */
static bool hashed_within(const Pipe *p, int n, const int *part)
{
    if (p->hashed_top == NULL || p->hashed_top != pipe_top(p) || n == 0 || n != p->n_hashed) {
        return false;
    }
    for (int i = 0; i < p->n_hashed; i++) {
        bool found = false;
        for (int k = 0; k < n && !found; k++) {
            found = part[k] == p->hashed[i];
        }
        if (!found) {
            return false;
        }
    }
    return true;
}

static bool build(Builder *bld, const PlNode *n, Pipe *p);

static bool build_aggregate(Builder *bld, const PlNode *n, Pipe *p);

/* An aggregate with no keys whose aggregates are all DISTINCT over one column
 * x (count(DISTINCT x), sum(DISTINCT x) ...) would hold every value of x in
 * one set, which cannot spill by partition.  It runs instead as GROUP BY x
 * (which spills like any grouping) and then the same aggregates, without
 * DISTINCT, over its rows: the rewrite Spark and DuckDB use.  False when the
 * node does not qualify (*done false) or on error. */
static bool build_distinct_ungrouped(Builder *bld, const PlNode *n, Pipe *p, bool *done)
{
    *done = false;
    if (n->n_keys != 0 || n->n_aggs == 0 || n->empty_set_key >= 0 || n->aggs[0].arg < 0) {
        return true;
    }
    /* The binder gives each aggregate its own argument column: the same
     * expression twice is the same x. */
    const PlNode *c = n->child;
    bool has_distinct = false;
    for (int a = 0; a < n->n_aggs; a++) {
        int arg = n->aggs[a].arg, arg0 = n->aggs[0].arg;
        bool same = arg == arg0 || (c != NULL && c->kind == PL_PROJECT && arg >= 0 &&
                                    pl_expr_equal(c->exprs[arg], c->exprs[arg0]));
        if (n->aggs[a].n_order > 0) {
            return true; /* its order is not its argument's (string_agg casts it) */
        }
        /* min and max are the same with or without DISTINCT (the binder may drop it) */
        bool minmax = n->aggs[a].fn == EX_AGG_MIN || n->aggs[a].fn == EX_AGG_MAX;
        if (!same || !(n->aggs[a].distinct || minmax)) {
            return true;
        }
        has_distinct |= n->aggs[a].distinct;
    }
    if (!has_distinct) {
        return true;
    }
    *done = true;
    int *x = cm_arena_alloc(bld->a, sizeof(int));
    int *zero = cm_arena_alloc(bld->a, sizeof(int));
    CmType *x_type = cm_arena_alloc(bld->a, sizeof(CmType));
    ExAggSpec *aggs = cm_arena_alloc(bld->a, sizeof(ExAggSpec) * (size_t)n->n_aggs);
    if (x == NULL || zero == NULL || x_type == NULL || aggs == NULL) {
        cm_err_set(bld->err, CM_OOM, -1, "out of memory");
        return false;
    }
    *x = n->aggs[0].arg;
    *zero = 0;
    *x_type = n->aggs[0].arg_type;
    if (p->single) {
        if (!append(bld, p,
                    ex_hash_agg_new(bld->a, EX_AGG_SINGLE, 1, x, x_type, 0, NULL, bld->err))) {
            return false;
        }
    } else if (!append(bld, p,
                       ex_hash_agg_new(bld->a, EX_AGG_PARTIAL, 1, x, x_type, 0, NULL, bld->err)) ||
               !exchange(bld, p, 1, zero, (int)bld->cfg->shuffle_partitions) ||
               !append(bld, p,
                       ex_hash_agg_new(bld->a, EX_AGG_FINAL, 1, zero, x_type, 0, NULL, bld->err))) {
        return false;
    }
    PlNode outer = *n;
    for (int a = 0; a < n->n_aggs; a++) {
        aggs[a] = n->aggs[a];
        aggs[a].distinct = false;
        aggs[a].arg = 0;
    }
    outer.aggs = aggs;
    return build_aggregate(bld, &outer, p);
}

/* Is aggregate a's argument the same expression as column x of n's child? */
static bool same_arg(const PlNode *n, int a, int x)
{
    int arg = n->aggs[a].arg;
    const PlNode *c = n->child;
    return arg >= 0 && (arg == x || (c != NULL && c->kind == PL_PROJECT &&
                                     pl_expr_equal(c->exprs[arg], c->exprs[x])));
}

/* Whether plain aggregate g gives the same value when computed per group of
 * some column and then again over the groups' values: count, min and max,
 * and sum of an exact type (a DOUBLE sum would round in another order). */
static bool regroups(const ExAggSpec *g)
{
    return !g->distinct && g->n_order == 0 &&
           (g->fn == EX_AGG_COUNT_STAR || g->fn == EX_AGG_COUNT || g->fn == EX_AGG_MIN ||
            g->fn == EX_AGG_MAX || (g->fn == EX_AGG_SUM && g->arg_type.id != CM_T_DOUBLE));
}

/* The two aggregates of the DISTINCT rewrites below: `inner` over p's rows,
 * then n's with its aggregates replaced by `outer_aggs` over inner's rows. */
static bool build_two_level(Builder *bld, const PlNode *inner, const PlNode *n,
                            ExAggSpec *outer_aggs, Pipe *p)
{
    if (!build_aggregate(bld, inner, p)) {
        return false;
    }
    PlNode outer = *n;
    outer.child = NULL;
    outer.aggs = outer_aggs;
    return build_aggregate(bld, &outer, p);
}

/* build_distinct_expand's case of one DISTINCT expression x beside plain
 * aggregates that all regroup (count(*), count(DISTINCT x) ...): GROUP BY x
 * computing the plain ones, then over its rows f(x) for the DISTINCT ones
 * (x's NULL group is ignored as DISTINCT ignores NULL), sums of the counts
 * (0 over no groups) and min, max and sum again of the others.  Each row goes
 * through one grouping on x instead of two on (set, x).  group: per
 * aggregate, 0 for those over x, -1 for the plain ones.  False on error. */
static bool build_distinct_by_x(Builder *bld, const PlNode *n, Pipe *p, int x, const int *group)
{
    int n_cols = 1;
    ExExpr **exprs = cm_arena_alloc(bld->a, sizeof(ExExpr *) * (size_t)(n->n_aggs + 1));
    CmType *types = cm_arena_alloc(bld->a, sizeof(CmType) * (size_t)(n->n_aggs + 1));
    ExAggSpec *inner_aggs = cm_arena_alloc(bld->a, sizeof(ExAggSpec) * (size_t)n->n_aggs);
    ExAggSpec *outer_aggs = cm_arena_alloc(bld->a, sizeof(ExAggSpec) * (size_t)n->n_aggs);
    if (exprs == NULL || types == NULL || inner_aggs == NULL || outer_aggs == NULL) {
        cm_err_set(bld->err, CM_OOM, -1, "out of memory");
        return false;
    }
    int a0 = 0;
    while (group[a0] != 0) {
        a0++;
    }
    types[0] = n->aggs[a0].arg_type;
    exprs[0] = ex_expr_column(bld->a, x, types[0]);
    int n_inner = 0;
    for (int a = 0; a < n->n_aggs; a++) {
        const ExAggSpec *g = &n->aggs[a];
        outer_aggs[a] = *g;
        outer_aggs[a].distinct = false;
        if (group[a] == 0) {
            outer_aggs[a].arg = 0;
            continue;
        }
        inner_aggs[n_inner] = *g;
        if (g->arg >= 0) {
            types[n_cols] = g->arg_type;
            exprs[n_cols] = ex_expr_column(bld->a, g->arg, g->arg_type);
            inner_aggs[n_inner].arg = n_cols++;
        }
        bool is_count = g->fn == EX_AGG_COUNT || g->fn == EX_AGG_COUNT_STAR;
        outer_aggs[a].fn = is_count ? EX_AGG_SUM_COUNT : g->fn;
        outer_aggs[a].arg = 1 + n_inner;
        outer_aggs[a].arg_type = g->type;
        n_inner++;
    }
    for (int c = 0; c < n_cols; c++) {
        if (exprs[c] == NULL) {
            cm_err_set(bld->err, CM_OOM, -1, "out of memory");
            return false;
        }
    }
    CmType *inner_types = cm_arena_alloc(bld->a, sizeof(CmType) * (size_t)(1 + n_inner));
    if (inner_types == NULL) {
        cm_err_set(bld->err, CM_OOM, -1, "out of memory");
        return false;
    }
    inner_types[0] = types[0];
    for (int i = 0; i < n_inner; i++) {
        inner_types[1 + i] = inner_aggs[i].type;
    }
    if (!append(bld, p, ex_project_new(bld->a, n_cols, exprs, bld->err))) {
        return false;
    }
    PlNode inner = {.kind = PL_AGGREGATE,
                    .n_cols = 1 + n_inner,
                    .types = inner_types,
                    .n_keys = 1,
                    .n_aggs = n_inner,
                    .aggs = inner_aggs,
                    .empty_set_key = -1};
    return build_two_level(bld, &inner, n, outer_aggs, p);
}

/* An aggregate with no keys whose DISTINCT aggregates are over several
 * expressions x_1..x_k, or stand beside plain ones (count(DISTINCT a),
 * sum(b)), would keep one set per expression in its one group.  It runs
 * instead as Spark's Expand rewrite: each row goes out once per x_j (only x_j
 * kept, the rest NULL, set number j) and once for the plain aggregates (only
 * their arguments kept, set number k); a GROUP BY (set, x_1..x_k) computing
 * the plain aggregates dedups every x_j and spills like any grouping; then
 * the outer aggregates read its rows: f(x_j) without DISTINCT for the
 * DISTINCT ones (x_j is NULL outside set j), the plain values through max
 * (NULL outside set k) and counts through a sum whose empty value is 0.
 * Holistic aggregates and scalar subqueries keep the one-group plan.  False
 * on error; *done false when n does not qualify. */
static bool build_distinct_expand(Builder *bld, const PlNode *n, Pipe *p, bool *done)
{
    *done = false;
    if (n->n_keys != 0 || n->n_aggs == 0 || n->empty_set_key >= 0 || n->n_aggs > 60) {
        return true;
    }
    int xs[64], n_x = 0, n_plain = 0;
    int group[64]; /* per aggregate: its x (0..n_x-1), or -1 for a plain one */
    for (int a = 0; a < n->n_aggs; a++) {
        const ExAggSpec *g = &n->aggs[a];
        /* (arg_min/arg_max read two columns: the rewrite moves one) */
        if (ex_agg_is_holistic(g->fn) || g->fn == EX_AGG_SCALAR || g->fn == EX_AGG_SUM_COUNT ||
            g->fn == EX_AGG_ARG_MIN || g->fn == EX_AGG_ARG_MAX) {
            return true;
        }
        group[a] = -1;
        if (!g->distinct) {
            continue;
        }
        for (int j = 0; j < n_x && group[a] < 0; j++) {
            group[a] = same_arg(n, a, xs[j]) ? j : -1;
        }
        if (group[a] < 0) {
            xs[n_x] = g->arg;
            group[a] = n_x++;
        }
    }
    for (int a = 0; a < n->n_aggs; a++) {
        /* min and max are the same with or without DISTINCT */
        bool minmax = n->aggs[a].fn == EX_AGG_MIN || n->aggs[a].fn == EX_AGG_MAX;
        for (int j = 0; j < n_x && group[a] < 0 && minmax; j++) {
            group[a] = same_arg(n, a, xs[j]) ? j : -1;
        }
        n_plain += group[a] < 0;
    }
    if (n_x == 0 || (n_x == 1 && n_plain == 0)) {
        return true; /* nothing DISTINCT, or build_distinct_ungrouped's case */
    }
    *done = true;
    bool by_x = n_x == 1;
    for (int a = 0; a < n->n_aggs; a++) {
        by_x = by_x && (group[a] == 0 || regroups(&n->aggs[a]));
    }
    if (by_x) {
        return build_distinct_by_x(bld, n, p, xs[0], group);
    }
    /* Columns: the set number, x_1..x_k, one argument per plain aggregate (a
     * constant 1 for count(*)). */
    int n_cols = 1 + n_x + n_plain;
    int n_sets = n_x + (n_plain > 0);
    ExExpr **exprs = cm_arena_alloc(bld->a, sizeof(ExExpr *) * (size_t)n_cols);
    CmType *types = cm_arena_alloc(bld->a, sizeof(CmType) * (size_t)n_cols);
    uint64_t *masks = cm_arena_alloc(bld->a, sizeof(uint64_t) * (size_t)n_sets);
    ExAggSpec *inner_aggs = cm_arena_alloc(bld->a, sizeof(ExAggSpec) * (size_t)(n_plain + 1));
    ExAggSpec *outer_aggs = cm_arena_alloc(bld->a, sizeof(ExAggSpec) * (size_t)n->n_aggs);
    CmType *inner_types = cm_arena_alloc(bld->a, sizeof(CmType) * (size_t)(n_cols + 1));
    if (exprs == NULL || types == NULL || masks == NULL || inner_aggs == NULL ||
        outer_aggs == NULL || inner_types == NULL) {
        cm_err_set(bld->err, CM_OOM, -1, "out of memory");
        return false;
    }
    CmType int64 = cm_type_make(CM_T_INT64);
    CmValue zero = {.type = int64, .i = 0}, one = {.type = int64, .i = 1};
    exprs[0] = ex_expr_const(bld->a, &zero);
    types[0] = int64;
    for (int j = 0; j < n_x; j++) {
        int a = 0;
        while (group[a] != j) {
            a++;
        }
        types[1 + j] = n->aggs[a].arg_type;
        exprs[1 + j] = ex_expr_column(bld->a, xs[j], types[1 + j]);
        masks[j] = (uint64_t)1 << (1 + j);
    }
    if (n_plain > 0) {
        masks[n_x] = 0;
    }
    int at = 1 + n_x, i = 0;
    for (int a = 0; a < n->n_aggs; a++) {
        const ExAggSpec *g = &n->aggs[a];
        outer_aggs[a] = *g;
        outer_aggs[a].distinct = false;
        if (group[a] >= 0) {
            outer_aggs[a].arg = 1 + group[a];
            continue;
        }
        bool is_star = g->arg < 0;
        types[at] = is_star ? int64 : g->arg_type;
        exprs[at] =
            is_star ? ex_expr_const(bld->a, &one) : ex_expr_column(bld->a, g->arg, g->arg_type);
        masks[n_x] |= (uint64_t)1 << at;
        inner_aggs[i] = *g;
        inner_aggs[i].fn = is_star ? EX_AGG_COUNT : g->fn;
        inner_aggs[i].arg = at;
        inner_aggs[i].arg_type = types[at];
        bool is_count = g->fn == EX_AGG_COUNT || g->fn == EX_AGG_COUNT_STAR;
        outer_aggs[a].fn = is_count ? EX_AGG_SUM_COUNT : EX_AGG_MAX;
        outer_aggs[a].arg = at;
        outer_aggs[a].arg_type = g->type;
        at++;
        i++;
    }
    for (int c = 0; c < n_cols; c++) {
        if (exprs[c] == NULL) {
            cm_err_set(bld->err, CM_OOM, -1, "out of memory");
            return false;
        }
    }
    if (!append(bld, p, ex_project_new(bld->a, n_cols, exprs, bld->err)) ||
        !append(bld, p, ex_expand_new(bld->a, n_sets, masks, n_cols, 0, n_cols, types, bld->err))) {
        return false;
    }
    /* The GROUP BY (set, x_1..x_k): keys first, then the plain aggregates. */
    PlNode inner = {.kind = PL_AGGREGATE,
                    .n_keys = 1 + n_x,
                    .n_aggs = n_plain,
                    .aggs = inner_aggs,
                    .empty_set_key = -1};
    memcpy(inner_types, types, sizeof(CmType) * (size_t)(1 + n_x));
    for (int k = 0; k < n_plain; k++) {
        inner_types[1 + n_x + k] = inner_aggs[k].type;
    }
    inner.n_cols = n_cols;
    inner.types = inner_types;
    return build_two_level(bld, &inner, n, outer_aggs, p);
}

/* Whether aggregates x and y of n have the same ORDER BY inside their calls
 * (the binder gives each its own key columns: equal expressions are equal). */
static bool same_order(const PlNode *n, const ExAggSpec *x, const ExAggSpec *y)
{
    bool same = x->n_order == y->n_order;
    for (int k = 0; same && k < x->n_order; k++) {
        const PlNode *c = n->child;
        int xc = x->order[k].col, yc = y->order[k].col;
        same = x->order[k].desc == y->order[k].desc &&
               x->order[k].nulls_first == y->order[k].nulls_first &&
               (xc == yc ||
                (c != NULL && c->kind == PL_PROJECT && pl_expr_equal(c->exprs[xc], c->exprs[yc])));
    }
    return same;
}

/* The ORDER BY class of each aggregate of n into cls (the first aggregate
 * with that ORDER BY; those without one join the first class); the number of
 * classes. */
static int order_classes(const PlNode *n, int *cls)
{
    int n_cls = 0, first = -1;
    for (int a = 0; a < n->n_aggs; a++) {
        cls[a] = -1;
        if (n->aggs[a].n_order == 0) {
            continue;
        }
        for (int b = 0; b < a && cls[a] < 0; b++) {
            if (n->aggs[b].n_order > 0 && cls[b] == b && same_order(n, &n->aggs[a], &n->aggs[b])) {
                cls[a] = b;
            }
        }
        if (cls[a] < 0) {
            cls[a] = a;
            n_cls++;
            first = first < 0 ? a : first;
        }
    }
    for (int a = 0; a < n->n_aggs; a++) {
        cls[a] = cls[a] < 0 ? first : cls[a];
    }
    return n_cls;
}

/* A grouped aggregate whose calls have different ORDER BYs
 * (string_agg(x ORDER BY a), list(y ORDER BY b)) cannot be fed by one sort.
 * It becomes one aggregate per ORDER BY, each over its own run of the input
 * (the child is built once per aggregate), joined on all the keys with NULL
 * matching NULL (each side has exactly one row per group, the empty grouping
 * set's included), then a projection puts the columns back in n's order.
 * NULL when n is not such a node (or has more keys than a join can match
 * NULL-safe) or on error (bld->err set). */
static PlNode *split_orders(Builder *bld, const PlNode *n)
{
    if (n->n_keys == 0 || n->n_keys > 64 || n->n_aggs < 2) {
        return NULL;
    }
    int *cls = cm_arena_alloc(bld->a, sizeof(int) * (size_t)n->n_aggs);
    int *out_col = cm_arena_alloc(bld->a, sizeof(int) * (size_t)n->n_aggs);
    if (cls == NULL || out_col == NULL) {
        cm_err_set(bld->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    if (order_classes(n, cls) < 2) {
        return NULL;
    }
    PlNode *joined = NULL;
    int width = 0; /* columns of `joined` */
    for (int c = 0; c < n->n_aggs; c++) {
        if (cls[c] != c) {
            continue;
        }
        int n_aggs = 0;
        for (int a = 0; a < n->n_aggs; a++) {
            n_aggs += cls[a] == c;
        }
        PlNode *agg = pl_node_new(bld->a, PL_AGGREGATE, n->n_keys + n_aggs);
        ExAggSpec *aggs = cm_arena_alloc(bld->a, sizeof(ExAggSpec) * (size_t)n_aggs);
        if (agg == NULL || aggs == NULL) {
            cm_err_set(bld->err, CM_OOM, -1, "out of memory");
            return NULL;
        }
        PlNode keep = *agg; /* its own type and name arrays */
        *agg = *n;
        agg->n_cols = keep.n_cols;
        agg->types = keep.types;
        agg->names = keep.names;
        agg->aggs = aggs;
        agg->n_aggs = 0;
        for (int k = 0; k < n->n_keys; k++) {
            agg->types[k] = n->types[k];
            agg->names[k] = n->names != NULL ? n->names[k] : "key";
        }
        for (int a = 0; a < n->n_aggs; a++) {
            if (cls[a] == c) {
                int at = n->n_keys + agg->n_aggs;
                agg->types[at] = n->types[n->n_keys + a];
                agg->names[at] = n->names != NULL ? n->names[n->n_keys + a] : "agg";
                out_col[a] = (joined == NULL ? 0 : width) + at;
                aggs[agg->n_aggs++] = n->aggs[a];
            }
        }
        if (joined == NULL) {
            joined = agg;
            width = agg->n_cols;
            continue;
        }
        PlNode *j = pl_node_new(bld->a, PL_JOIN, width + agg->n_cols);
        int *lk = cm_arena_alloc(bld->a, sizeof(int) * (size_t)n->n_keys);
        int *rk = cm_arena_alloc(bld->a, sizeof(int) * (size_t)n->n_keys);
        if (j == NULL || lk == NULL || rk == NULL) {
            cm_err_set(bld->err, CM_OOM, -1, "out of memory");
            return NULL;
        }
        for (int k = 0; k < n->n_keys; k++) {
            lk[k] = rk[k] = k;
        }
        memcpy(j->types, joined->types, sizeof(CmType) * (size_t)width);
        memcpy(j->types + width, agg->types, sizeof(CmType) * (size_t)agg->n_cols);
        for (int k = 0; k < width + agg->n_cols; k++) {
            j->names[k] = k < width ? joined->names[k] : agg->names[k - width];
        }
        j->child = joined;
        j->right = agg;
        j->join_type = EX_JOIN_INNER;
        j->n_join_keys = n->n_keys;
        j->left_keys = lk;
        j->right_keys = rk;
        j->join_null_eq = n->n_keys == 64 ? ~(uint64_t)0 : ((uint64_t)1 << n->n_keys) - 1;
        joined = j;
        width += agg->n_cols;
    }
    PlNode *proj = pl_node_new(bld->a, PL_PROJECT, n->n_cols);
    ExExpr **exprs = cm_arena_alloc(bld->a, sizeof(ExExpr *) * (size_t)n->n_cols);
    if (proj == NULL || exprs == NULL) {
        cm_err_set(bld->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    for (int c = 0; c < n->n_cols; c++) {
        int from = c < n->n_keys ? c : out_col[c - n->n_keys];
        exprs[c] = ex_expr_column(bld->a, from, n->types[c]);
        if (exprs[c] == NULL) {
            cm_err_set(bld->err, CM_OOM, -1, "out of memory");
            return NULL;
        }
        proj->types[c] = n->types[c];
        proj->names[c] = n->names != NULL ? n->names[c] : "col";
    }
    proj->exprs = exprs;
    proj->child = joined;
    return proj;
}

/* Grouped, with an ORDER BY inside a call (string_agg(x ORDER BY y)): the
 * rows, exchanged on the keys, are sorted by (keys, that ORDER BY) with the
 * external sort, so that the aggregate sees each group's rows together and in
 * order (ex_hash_agg_new).  Different ORDER BYs were split apart before
 * (split_orders).  False on error. */
static bool sort_for_order(Builder *bld, const PlNode *n, Pipe *p)
{
    int first = -1;
    for (int a = 0; a < n->n_aggs; a++) {
        if (n->aggs[a].n_order == 0) {
            continue;
        }
        if (first < 0) {
            first = a;
            continue;
        }
        if (!same_order(n, &n->aggs[first], &n->aggs[a])) {
            cm_err_set(bld->err, CM_BIND, -1,
                       "aggregates with different ORDER BY inside their "
                       "calls in one GROUP BY of more than 64 keys are not supported");
            return false;
        }
    }
    if (first < 0) {
        return true;
    }
    const ExAggSpec *x = &n->aggs[first];
    ExSortKey *keys = cm_arena_alloc(bld->a, sizeof(ExSortKey) * (size_t)(n->n_keys + x->n_order));
    if (keys == NULL) {
        cm_err_set(bld->err, CM_OOM, -1, "out of memory");
        return false;
    }
    for (int k = 0; k < n->n_keys; k++) {
        keys[k] = (ExSortKey){.col = k};
    }
    memcpy(keys + n->n_keys, x->order, sizeof(ExSortKey) * (size_t)x->n_order);
    const ExOp *top = pipe_top(p);
    return append(bld, p,
                  named(ex_sort_new(bld->a, n->n_keys + x->n_order, keys, top->n_cols, top->types,
                                    -1, bld->err),
                        top->names));
}

/* The names of the PARTIAL half's output: n's keys, then each aggregate's
 * name on each of its state columns, by which the FINAL half shows it.  NULL
 * when n has none (or on OOM: only EXPLAIN loses them). */
static const char **partial_names(Builder *bld, const PlNode *n)
{
    CmType state[3];
    int n_cols = n->n_keys;
    for (int a = 0; a < n->n_aggs; a++) {
        n_cols += ex_agg_partial_types(&n->aggs[a], state);
    }
    const char **names =
        n->names != NULL ? cm_arena_alloc(bld->a, sizeof(char *) * (size_t)n_cols) : NULL;
    if (names == NULL) {
        return NULL;
    }
    memcpy(names, n->names, sizeof(char *) * (size_t)n->n_keys);
    for (int a = 0, at = n->n_keys; a < n->n_aggs; a++) {
        for (int s = ex_agg_partial_types(&n->aggs[a], state); s > 0; s--) {
            names[at++] = n->names[n->n_keys + a];
        }
    }
    return names;
}

/* Whether side-tagged aggregate n (INTERSECT, EXCEPT) reads its union's
 * first input before the second in every task: p's source is that union's
 * read (through projections only, which keep the order), the tag is a plain
 * BIGINT sum and the union has its two inputs.  Then the right side's rows
 * need only find the groups the left side started. */
static bool reads_sides_in_order(const PlNode *n, const Pipe *p)
{
    if (!n->is_side_tagged || n->n_keys == 0 || n->n_aggs == 0 || n->empty_set_key >= 0 ||
        n->aggs[0].fn != EX_AGG_SUM_COUNT || n->aggs[0].distinct || n->aggs[0].arg < 0 ||
        n->aggs[0].arg_type.id != CM_T_INT64) {
        return false;
    }
    const PlNode *c = n->child;
    while (c != NULL && c->kind == PL_PROJECT) {
        c = c->child;
    }
    return c != NULL && c == p->union_read && c->n_inputs == 2;
}

static bool build_aggregate(Builder *bld, const PlNode *n, Pipe *p)
{
    bool rewritten;
    if (!build_distinct_ungrouped(bld, n, p, &rewritten) || rewritten) {
        return !rewritten || bld->err->code == CM_OK;
    }
    if (!build_distinct_expand(bld, n, p, &rewritten) || rewritten) {
        return !rewritten || bld->err->code == CM_OK;
    }
    int *keys = cm_arena_alloc(bld->a, sizeof(int) * (size_t)(n->n_keys + 1));
    CmType *key_types = cm_arena_alloc(bld->a, sizeof(CmType) * (size_t)(n->n_keys + 1));
    if (keys == NULL || key_types == NULL) {
        cm_err_set(bld->err, CM_OOM, -1, "out of memory");
        return false;
    }
    for (int k = 0; k < n->n_keys; k++) {
        keys[k] = k;
        key_types[k] = n->types[k];
    }
    bool distinct = false;
    for (int a = 0; a < n->n_aggs; a++) {
        /* first(x ORDER BY y) too: a partial first would see only its task's rows */
        distinct = distinct || n->aggs[a].distinct || ex_agg_is_holistic(n->aggs[a].fn) ||
                   n->aggs[a].n_order > 0;
    }
    bool empty_set = n->empty_set_key >= 0;
    bool keyed = p->keyed_for == n; /* every group's rows are in one task already */
    if (distinct && !p->single && !keyed) {
        /* DISTINCT aggregates see every row of a group in one task: the raw
         * rows are exchanged on the keys and aggregated once. */
        int n_parts = n->n_keys > 0 && !empty_set ? (int)bld->cfg->shuffle_partitions : 1;
        if (!exchange(bld, p, n->n_keys, keys, n_parts)) {
            return false;
        }
    }
    if (n->n_keys > 0 && !sort_for_order(bld, n, p)) {
        return false;
    }
    if (p->single || distinct || keyed) {
        ExOp *op = ex_hash_agg_new(bld->a, EX_AGG_SINGLE, n->n_keys, keys, key_types, n->n_aggs,
                                   n->aggs, bld->err);
        if (op != NULL && empty_set) {
            ex_hash_agg_set_empty_set(op, n->empty_set_key, n->empty_set_id);
        }
        if (op != NULL && reads_sides_in_order(n, p)) {
            ex_hash_agg_set_find_only(op, n->aggs[0].arg);
        }
        return append(bld, p, op);
    }
    if (!append(bld, p,
                named(ex_hash_agg_new(bld->a, EX_AGG_PARTIAL, n->n_keys, keys, key_types, n->n_aggs,
                                      n->aggs, bld->err),
                      partial_names(bld, n)))) {
        return false;
    }
    /* An empty grouping set must see all groups to know the input was empty. */
    int n_parts = n->n_keys > 0 && !empty_set ? (int)bld->cfg->shuffle_partitions : 1;
    if (!exchange(bld, p, n->n_keys, keys, n_parts)) {
        return false;
    }
    ExOp *final = ex_hash_agg_new(bld->a, EX_AGG_FINAL, n->n_keys, keys, key_types, n->n_aggs,
                                  n->aggs, bld->err);
    if (final != NULL && empty_set) {
        ex_hash_agg_set_empty_set(final, n->empty_set_key, n->empty_set_id);
    }
    return append(bld, p, final);
}

/* Estimated bytes of a node's output: rows x the width of its columns (a
 * string counted as its 16-byte header plus 16 bytes of text). */
static double estimated_bytes(PlEst *est, const PlNode *n)
{
    double width = pl_est_row_width(n);
    return pl_est_rows(est, n) * (width > 0 ? width : 1);
}

/* The scan column that column `col` of p's top is, through p's operators; -1. */
static int scan_col(const Pipe *p, int col)
{
    for (int k = p->n_ops - 1; k >= 0 && col >= 0; k--) {
        col = p->ops[k]->vt->passes ? p->ops[k]->vt->passes(p->ops[k], col) : -1;
    }
    return col;
}

/* Narrows the scan's WHERE range on scan column col (made on first use; the
 * conjuncts of a WHERE may come as stacked filters) to [lo, hi]. */
static void narrow(Builder *bld, Pipe *p, int col, int64_t lo, int64_t hi)
{
    ExRangeFilter *rf = ex_scan_where_filter(p->source, col);
    if (rf == NULL) {
        if ((rf = cm_arena_zalloc(bld->a, sizeof *rf)) == NULL) {
            return;
        }
        *rf = (ExRangeFilter){.ready = true, .is_where = true, .min = INT64_MIN, .max = INT64_MAX};
        if (!ex_scan_add_range_filter(p->source, col, rf)) {
            return; /* the scan has its four filters */
        }
    }
    rf->min = lo > rf->min ? lo : rf->min;
    rf->max = hi < rf->max ? hi : rf->max;
    rf->empty |= rf->min > rf->max;
}

/* Zone maps for a WHERE: each conjunct of `pred` that compares a column of
 * p's scan of a type with zone maps (ex_zone_range; passed on unchanged to
 * the filter) with a constant narrows a range, and the scan skips the chunks
 * whose min and max fall outside it without loading them.  The filter still
 * runs: this only spares the chunks where it would keep nothing. */
static void where_ranges(Builder *bld, const ExExpr *pred, Pipe *p)
{
    if (!ex_op_is_scan(p->source)) {
        return;
    }
    const ExExpr *const *conj;
    int n_conj = ex_conjuncts(&pred, &conj);
    for (int i = 0; i < n_conj; i++) {
        int c, col;
        int64_t lo, hi;
        if (ex_zone_range(conj[i], &c, &lo, &hi) && (col = scan_col(p, c)) >= 0) {
            narrow(bld, p, col, lo, hi);
        }
    }
}

/* A range filter from the join being built into p to the scan at p's source,
 * when the join drops probe rows without a partner (INNER, SEMI), is broadcast
 * (its table is built before the stage's first row is scanned), has one key,
 * and that key is a scan column passed through p's operators unchanged.
 * NULL when not. */
static ExRangeFilter *range_filter(Builder *bld, const PlNode *n, const Pipe *p, bool partitioned)
{
    if (partitioned || n->n_join_keys != 1 || n->join_null_eq != 0 ||
        (n->join_type != EX_JOIN_INNER && n->join_type != EX_JOIN_SEMI) ||
        !ex_op_is_scan(p->source)) {
        return NULL;
    }
    int col = scan_col(p, n->left_keys[0]);
    ExRangeFilter *rf = col >= 0 ? cm_arena_zalloc(bld->a, sizeof *rf) : NULL;
    return rf != NULL && ex_scan_add_range_filter(p->source, col, rf) ? rf : NULL;
}

/* The keepable exchange the stage writing `slot` is offered to the keeper as
 * after the run (planner/keep.h), or NULL. */
static PlKeepWrote *kept_form(PlStagePlan *plan, ShShuffle **slot)
{
    for (int i = 0; i < plan->n_keep_wrote; i++) {
        if (plan->keep_slot[i] == slot) {
            return &plan->keep_wrote[i];
        }
    }
    return NULL;
}

/* A partitioned join's probe side is cut down by a Bloom filter of its build
 * side's keys (executor/bloom.h) before it is exchanged, when the join drops
 * probe rows without a partner (INNER, SEMI), the planner expects it to drop
 * at least half of them and the build side is no more than twice the probe
 * side (filling the filter costs about what asking it does), the keys pair up
 * type for type (one value, one hash), and neither stage reads a kept form (a
 * build stage that does not run fills nothing).  A filtered probe side is not
 * the table's partitioned form: the keeper only remembers its key (a kept
 * form would spare the exchange but not the join the rows it holds; a filter
 * expected to drop half of them spares both).  `bs` writes the build side;
 * the probe side's stage is the last one closed. */
static void join_bloom(Builder *bld, const PlNode *n, ExStage *bs, int n_parts)
{
    PlStagePlan *plan = bld->plan;
    ExStage *ps = plan->n_stages > 0 ? plan->stages[plan->n_stages - 1] : NULL;
    if (!bld->cfg->join_bloom_filter || n_parts <= 1 || ps == NULL || ps == bs ||
        (n->join_type != EX_JOIN_INNER && n->join_type != EX_JOIN_SEMI) || bs->skipped ||
        ps->skipped || !ex_op_is_shuffle_write(bs->sink) || !ex_op_is_shuffle_write(ps->sink)) {
        return;
    }
    for (int k = 0; k < n->n_join_keys; k++) {
        if (!cm_type_eq(n->child->types[n->left_keys[k]], n->right->types[n->right_keys[k]])) {
            return;
        }
    }
    double probe = pl_est_rows(bld->est, n->child), build = pl_est_rows(bld->est, n->right);
    if (pl_est_rows(bld->est, n) > 0.5 * probe || build > 2 * probe) {
        return;
    }
    PlKeepWrote *form = kept_form(plan, ps->shuffle);
    ExBloom *bf = cm_arena_zalloc(bld->a, sizeof *bf);
    if (bf == NULL) {
        return; /* only a missed chance */
    }
    if (form != NULL) {
        form->filtered = true;
    }
    bf->want_rows = build;
    bf->from_stage = bs->id;
    ex_shuffle_write_bloom(bs->sink, ps->sink, bf);
}

/* A comparison of a probe column with a build column of one integer-like
 * type, as probe OP build (ExJoinBound); false for anything else. */
static bool as_bound(const ExExpr *e, int n_probe, ExJoinBound *out)
{
    static const ExBoundOp flipped[] = {EX_BOUND_GT, EX_BOUND_GE, EX_BOUND_LT, EX_BOUND_LE};
    ExBoundOp op;
    if (!ex_join_bound_op(e, &op) || e->args[0]->kind != EX_E_COLUMN ||
        e->args[1]->kind != EX_E_COLUMN) {
        return false;
    }
    int a = e->args[0]->col, b = e->args[1]->col;
    if (a < n_probe && b >= n_probe) {
        *out = (ExJoinBound){.probe_col = a, .build_col = b - n_probe, .op = op};
        return true;
    }
    if (b < n_probe && a >= n_probe) {
        *out = (ExJoinBound){.probe_col = b, .build_col = a - n_probe, .op = flipped[op]};
        return true;
    }
    return false;
}

/* A nested loop's bounds (ExJoinSpec.bounds): the residual's first
 * conjunct comparing a probe column with a build column, then one that
 * bounds the same build column from the other side (x >= lo AND x < lo + 7
 * as columns), else one on another build column (x >= lo AND x <= hi). */
static void join_bounds(const PlNode *n, ExJoinSpec *spec)
{
    const ExExpr *r = n->residual;
    if (n->n_join_keys > 0 || r == NULL ||
        (n->join_type != EX_JOIN_INNER && n->join_type != EX_JOIN_LEFT &&
         n->join_type != EX_JOIN_SEMI && n->join_type != EX_JOIN_ANTI)) {
        return;
    }
    int n_conj = r->kind == EX_E_AND ? r->n_args : 1;
    ExJoinBound *b = spec->bounds;
    for (int c = 0; c < n_conj; c++) {
        ExJoinBound x;
        if (!as_bound(r->kind == EX_E_AND ? r->args[c] : r, spec->n_probe_cols, &x)) {
            continue;
        }
        if (spec->n_bounds == 0) {
            b[spec->n_bounds++] = x;
            continue;
        }
        bool lower = x.op == EX_BOUND_LT || x.op == EX_BOUND_LE; /* x below the column */
        bool lower0 = b[0].op == EX_BOUND_LT || b[0].op == EX_BOUND_LE;
        if (x.build_col == b[0].build_col ? lower != lower0 : spec->n_bounds == 1) {
            b[1] = x;
            spec->n_bounds = 2;
            if (x.build_col == b[0].build_col) {
                break; /* the best second: a range on the sorted column */
            }
        }
    }
}

static bool build_join(Builder *bld, const PlNode *n, Pipe *p)
{
    Pipe *bp = cm_arena_zalloc(bld->a, sizeof *bp);
    if (bp == NULL) {
        cm_err_set(bld->err, CM_OOM, -1, "out of memory");
        return false;
    }
    /* Broadcast a build side estimated under broadcast_threshold; the adaptive
     * optimizer revisits the choice from the real size once the side has run. */
    double rows = pl_est_rows(bld->est, n->right);
    double bytes = estimated_bytes(bld->est, n->right);
    double probe_bytes = estimated_bytes(bld->est, n->child);
    int64_t cap = cm_config_broadcast_bytes_for(bld->cfg, bytes, probe_bytes);
    bool partitioned = n->join_type == EX_JOIN_FULL || bytes > (double)cap ||
                       !ex_hash_join_broadcastable((int64_t)rows, bytes, cap);
    int n_parts = partitioned ? (int)bld->cfg->shuffle_partitions : 1;
    ShShuffle **slot = NULL;
    if (!build(bld, n->right, bp)) {
        return false;
    }
    ExStage *bs =
        close_to_shuffle(bld, bp, partitioned ? n->n_join_keys : 0, n->right_keys, n_parts, &slot);
    if (bs == NULL || !build(bld, n->child, p)) {
        return false;
    }
    if (partitioned && !exchange(bld, p, n->n_join_keys, n->left_keys, n_parts)) {
        return false;
    }
    if (partitioned) {
        join_bloom(bld, n, bs, n_parts);
    }
    if (p->n_deps < 64) {
        p->deps[p->n_deps++] = bs;
    }
    const PlNode *l = n->child, *r = n->right;
    ExJoinSpec spec = {.type = n->join_type,
                       .build = slot,
                       .partitioned = partitioned,
                       .n_keys = n->n_join_keys,
                       .probe_keys = n->left_keys,
                       .build_keys = n->right_keys,
                       .n_probe_cols = l->n_cols,
                       .probe_types = l->types,
                       .n_build_cols = r->n_cols,
                       .build_types = r->types,
                       .build_names = r->names,
                       .residual = n->residual,
                       .null_eq = n->join_null_eq,
                       .mark_plain = n->join_mark_plain,
                       .range_out = range_filter(bld, n, p, partitioned),
                       .probe_bytes_est = probe_bytes,
                       .build_row_width = pl_est_row_width(r)};
    join_bounds(n, &spec);
    return append(bld, p, ex_hash_join_new(bld->a, &spec, bld->err));
}

/*
 * When aggregate n (with keys, no empty grouping set) reads a union through
 * projections that pass its keys on as plain columns, notes the union and the
 * union column of each key in bld, for build_union.  INTERSECT, EXCEPT and
 * UNION are such aggregates: hashing each input on the keys lets every task
 * group its partition alone, where one task would otherwise group it all.
 */
static void note_keyed_union(Builder *bld, const PlNode *n)
{
    if (n->n_keys == 0 || n->empty_set_key >= 0 || bld->cfg->shuffle_partitions <= 1) {
        return;
    }
    int *cols = cm_arena_alloc(bld->a, sizeof(int) * (size_t)n->n_keys);
    if (cols == NULL) {
        return; /* only a missed chance */
    }
    for (int k = 0; k < n->n_keys; k++) {
        cols[k] = k;
    }
    const PlNode *c = n->child;
    for (; c != NULL && c->kind == PL_PROJECT; c = c->child) {
        for (int k = 0; k < n->n_keys; k++) {
            const ExExpr *e = c->exprs[cols[k]];
            if (e->kind != EX_E_COLUMN) {
                return;
            }
            cols[k] = e->col;
        }
    }
    if (c == NULL || c->kind != PL_UNION) {
        return;
    }
    /* Equal keys must hash alike on every side: the same types. */
    for (int i = 0; i < c->n_inputs; i++) {
        for (int k = 0; k < n->n_keys; k++) {
            if (!cm_type_eq(c->inputs[i]->types[cols[k]], c->types[cols[k]])) {
                return;
            }
        }
    }
    bld->keyed_union = c;
    bld->keyed_union_for = n;
    bld->keyed_cols = cols;
}

/* Every input closes into a gather and one task reads them all in turn, or,
 * for the union an aggregate noted (note_keyed_union), into a hash exchange
 * on its keys, and task i reads partition i of every input. */
static bool build_union(Builder *bld, const PlNode *n, Pipe *p)
{
    bool keyed = bld->keyed_union == n;
    const PlNode *agg = bld->keyed_union_for;
    const int *cols = bld->keyed_cols;
    bld->keyed_union = NULL;
    bld->keyed_union_for = NULL;
    int n_parts = keyed ? (int)bld->cfg->shuffle_partitions : 1;
    ShShuffle ***slots = cm_arena_alloc(bld->a, sizeof(ShShuffle **) * (size_t)n->n_inputs);
    Pipe *ip = cm_arena_zalloc(bld->a, sizeof *ip);
    if (slots == NULL || ip == NULL) {
        cm_err_set(bld->err, CM_OOM, -1, "out of memory");
        return false;
    }
    ExStage *deps[64];
    int n_deps = 0;
    for (int i = 0; i < n->n_inputs; i++) {
        memset(ip, 0, sizeof *ip);
        ExStage *s =
            build(bld, n->inputs[i], ip)
                ? close_to_shuffle(bld, ip, keyed ? agg->n_keys : 0, cols, n_parts, &slots[i])
                : NULL;
        if (s == NULL) {
            return false;
        }
        if (n_deps < 64) {
            deps[n_deps++] = s;
        }
    }
    memset(p, 0, sizeof *p);
    p->source =
        ex_shuffle_read_multi_new(bld->a, n->n_inputs, slots, n->n_cols, n->types, bld->err);
    p->single = !keyed;
    p->keyed_for = keyed ? agg : NULL;
    p->union_read = n;
    memcpy(p->deps, deps, sizeof(ExStage *) * (size_t)n_deps);
    p->n_deps = n_deps;
    return p->source != NULL;
}

/* Projection `up` over projection `low` as one projection over low's child:
 * up's expressions with low's columns replaced by their expressions, when
 * that computes nothing twice (low only passes columns on, or up only picks
 * low's columns, each computed one at most once).  Exprs in the query arena;
 * NULL when they do not compose (or on OOM, then with bld->err set). */
static ExExpr **compose_projections(Builder *bld, const PlNode *up, const PlNode *low)
{
    bool low_columns = true, up_columns = true;
    for (int i = 0; i < low->n_cols; i++) {
        low_columns &= low->exprs[i]->kind == EX_E_COLUMN;
    }
    int *uses = cm_arena_zalloc(bld->a, sizeof(int) * (size_t)(low->n_cols + 1));
    ExExpr **exprs = cm_arena_alloc(bld->a, sizeof(ExExpr *) * (size_t)(up->n_cols + 1));
    if (uses == NULL || exprs == NULL) {
        cm_err_set(bld->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    for (int i = 0; i < up->n_cols; i++) {
        const ExExpr *e = up->exprs[i];
        up_columns &= e->kind == EX_E_COLUMN && cm_type_eq(e->type, low->exprs[e->col]->type);
        if (e->kind == EX_E_COLUMN) {
            uses[e->col] += low->exprs[e->col]->kind != EX_E_COLUMN;
            up_columns &= uses[e->col] <= 1;
        }
    }
    for (int i = 0; i < low->n_cols && low_columns; i++) {
        uses[i] = low->exprs[i]->col; /* now the map from low's columns to its child's */
    }
    for (int i = 0; i < up->n_cols && (low_columns || up_columns); i++) {
        exprs[i] =
            low_columns ? ex_expr_remap(bld->a, up->exprs[i], uses) : low->exprs[up->exprs[i]->col];
        if (exprs[i] == NULL) {
            cm_err_set(bld->err, CM_OOM, -1, "out of memory");
            return NULL;
        }
    }
    return low_columns || up_columns ? exprs : NULL;
}

/* n with every projection right under it that composes with it
 * (compose_projections) folded in: one PROJECTION where the plan says
 * SELECT over a view over a subquery.  n itself when none does; NULL on OOM. */
static const PlNode *fold_projections(Builder *bld, const PlNode *n)
{
    while (n->child != NULL && n->child->kind == PL_PROJECT) {
        ExExpr **exprs = compose_projections(bld, n, n->child);
        PlNode *m = exprs != NULL ? cm_arena_alloc(bld->a, sizeof *m) : NULL;
        if (m == NULL) {
            return bld->err->code == CM_OK ? n : NULL;
        }
        *m = *n;
        m->exprs = exprs;
        m->child = n->child->child;
        n = m;
    }
    return n;
}

/* Whether projection n passes the columns of what is under it (pipe p's top)
 * on unchanged, as a no-op. */
static bool is_identity(const PlNode *n, const Pipe *p)
{
    const ExOp *top = pipe_top(p);
    if (top == NULL || top->n_cols != n->n_cols) {
        return false;
    }
    for (int i = 0; i < n->n_cols; i++) {
        const ExExpr *e = n->exprs[i];
        if (e->kind != EX_E_COLUMN || e->col != i || !cm_type_eq(e->type, top->types[i])) {
            return false;
        }
    }
    return true;
}

static bool build_node(Builder *bld, const PlNode *n, Pipe *p);

/* Builds n into p; the operator that emits n's rows carries n's estimate
 * (the first node to end at an operator names it: a projection the prune
 * step left alone still shows the estimate of what it projects). */
static bool build(Builder *bld, const PlNode *n, Pipe *p)
{
    if (!build_node(bld, n, p)) {
        return false;
    }
    ExOp *top = p->n_ops > 0 ? p->ops[p->n_ops - 1] : p->source;
    if (top != NULL && top->est_rows == 0) {
        double rows = pl_est_rows(bld->est, n);
        top->est_rows = rows > 0.5 ? rows : 0.5; /* 0.5 shows as 0 but is set */
    }
    if (top != NULL && top->names == NULL && top->n_cols == n->n_cols) {
        top->names = n->names;
    }
    return true;
}

/* A sort reads all its rows in one task.  When they come straight from a
 * table scan, that task scans the table itself: gathering them through a
 * shuffle first would copy every row twice more (the shuffle's write and
 * read) only to run a scan, which is free, on several threads.  TeraSort's
 * sort of 10M rows of 100 bytes took 6-9 s through the gather; the scan's
 * batches are views of the table, so the sorter's copy is the only one.
 * True when p became that one task. */
static bool scan_whole(Pipe *p)
{
    if (p->n_ops > 0 || p->source == NULL || !ex_op_is_scan(p->source)) {
        return false;
    }
    ex_scan_set_whole(p->source);
    p->single = true;
    return true;
}

static bool build_node(Builder *bld, const PlNode *n, Pipe *p)
{
    if (n->kind == PL_JOIN) {
        return build_join(bld, n, p);
    }
    if (n->kind == PL_UNION) {
        return build_union(bld, n, p);
    }
    if (n->kind == PL_AGGREGATE) {
        const PlNode *split = split_orders(bld, n);
        if (split != NULL) {
            return build(bld, split, p);
        }
        if (bld->err->code != CM_OK) {
            return false;
        }
        note_keyed_union(bld, n);
    }
    if (n->kind == PL_PROJECT && (n = fold_projections(bld, n)) == NULL) {
        return false;
    }
    if (n->child != NULL && !build(bld, n->child, p)) {
        return false;
    }
    switch (n->kind) {
    case PL_GET:
        memset(p, 0, sizeof *p);
        p->source = ex_scan_new(bld->a, n->table, n->n_cols, n->col_ids, bld->err);
        p->scan_node = n;
        if (p->source != NULL && (n->cache_name != NULL || n->shared_id > 0) &&
            bld->plan->n_cached_scans < 16) {
            bld->plan->cached_is_shared[bld->plan->n_cached_scans] = n->shared_id > 0;
            bld->plan->cached_scans[bld->plan->n_cached_scans++] = p->source;
        }
        return p->source != NULL;
    case PL_VALUES:
        memset(p, 0, sizeof *p);
        p->source = ex_values_new(bld->a, n->n_rows, n->n_cols, n->exprs, n->types, bld->err);
        p->single = true;
        return p->source != NULL;
    case PL_SERIES:
        memset(p, 0, sizeof *p);
        p->source =
            ex_series_new(bld->a, n->series_type, n->series_start, n->series_step,
                          n->series_is_cal ? &n->series_cal : NULL, n->series_rows, bld->err);
        return p->source != NULL;
    case PL_CSV:
        memset(p, 0, sizeof *p);
        p->source = ex_csv_scan_new(bld->a, n->csv->n_files, n->csv->files, &n->csv->opt, n->n_cols,
                                    n->types, n->names, n->csv->has_filename, n->csv->prefix,
                                    n->csv->n_prefix, bld->err);
        /* byte ranges in file order as tasks (executor/csv_scan.c) */
        return p->source != NULL;
    case PL_FILTER:
        where_ranges(bld, n->pred, p);
        return append(bld, p, ex_filter_new(bld->a, n->pred, n->n_cols, n->types, bld->err));
    case PL_PROJECT:
        /* a no-op projection (what the prune step left of a SELECT *) is not run */
        return is_identity(n, p) ||
               append(bld, p, ex_project_new(bld->a, n->n_cols, n->exprs, bld->err));
    case PL_AGGREGATE:
        return build_aggregate(bld, n, p);
    case PL_SORT:
        if (!p->single && !scan_whole(p) && !exchange(bld, p, 0, NULL, 1)) {
            return false;
        }
        return append(bld, p,
                      ex_sort_new(bld->a, n->n_sort_keys, n->sort_keys, n->n_cols, n->types,
                                  n->limit, bld->err));
    case PL_JOIN:
    case PL_UNION:
        return false; /* handled above */
    case PL_UNNEST:
        return append(
            bld, p,
            ex_unnest_new(bld->a, n->unnest_col, n->child->n_cols, n->child->types, bld->err));
    case PL_EXPAND:
        return append(bld, p,
                      ex_expand_new(bld->a, n->n_sets, n->set_masks, n->n_set_keys, n->gid_col,
                                    n->n_cols, n->types, bld->err));
    case PL_WINDOW: {
        /* Each partition goes to one task: hash on the partition keys, or
         * everything to one task when there are none.  An empty OVER () then
         * reads map by map, so it sees the rows in scan order as DuckDB does
         * (row_number() OVER () numbers a file's rows in file order). */
        const ExWindowSpec *w = n->win;
        /* A window after another over the same partitions (or whose input
         * was exchanged on some of its partition keys) stays in its stage:
         * the window keeps its input's columns in place. */
        if (!p->single && !hashed_within(p, w->n_part, w->part)) {
            if (!exchange(bld, p, w->n_part, w->part,
                          w->n_part > 0 ? (int)bld->cfg->shuffle_partitions : 1)) {
                return false;
            }
            if (w->n_part == 0 && w->n_order == 0) {
                ex_shuffle_read_set_map_order(p->source);
            }
        }
        bool keep = p->hashed_top != NULL && p->hashed_top == pipe_top(p);
        /* sorted_by is set only by a window, and cleared by an exchange */
        bool in_order = keep && p->sorted_by != NULL && sorted_for(p->sorted_by, w);
        if (!append(bld, p,
                    ex_window_new(bld->a, w, n->child->n_cols, n->child->types, bld->err))) {
            return false;
        }
        ExWindowSpec *mine = ex_window_spec(p->ops[p->n_ops - 1]);
        mine->presorted = in_order;
        p->hashed_top = keep ? pipe_top(p) : NULL;
        p->sorted_by = keep ? mine : NULL;
        return true;
    }
    case PL_LIMIT:
        if (!p->single) {
            int64_t local = n->limit < 0 ? -1 : n->limit + n->offset;
            if (local >= 0 &&
                !append(bld, p,
                        named(ex_limit_new(bld->a, local, 0, n->n_cols, n->types, bld->err),
                              pipe_top(p)->names))) {
                return false;
            }
            if (!exchange(bld, p, 0, NULL, 1)) {
                return false;
            }
            ex_shuffle_read_set_map_order(p->source); /* the first rows of the input */
        }
        return append(bld, p,
                      ex_limit_new(bld->a, n->limit, n->offset, n->n_cols, n->types, bld->err));
    }
    return false;
}

CmStatus pl_physical_plan(CmArena *a, const PlNode *root, const CmConfig *cfg, PlKeep *keep,
                          PlStagePlan *plan, CmErr *err)
{
    memset(plan, 0, sizeof *plan);
    plan->arena = a;
    plan->keep = keep;
    plan->keep_cap = cfg->max_temp_directory_size / 4;
    plan->stages = cm_arena_zalloc(a, sizeof(ExStage *) * MAX_STAGES);
    plan->shuffles = cm_calloc(MAX_STAGES, sizeof(ShShuffle *));
    if (plan->stages == NULL || plan->shuffles == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    plan->result = ex_result_new(root->n_cols, root->types, err);
    if (plan->result == NULL) {
        return err->code;
    }
    Builder bld = {.a = a, .cfg = cfg, .plan = plan, .err = err};
    /* Only the columns someone reads travel through scans, joins and exchanges. */
    root = pl_prune(a, (PlNode *)root, err);
    if (root == NULL) {
        return err->code;
    }
    Pipe *p = cm_arena_zalloc(a, sizeof *p);
    if (p == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    bld.est = pl_est_new();
    bool is_built = build(&bld, root, p);
    pl_est_free(bld.est);
    if (!is_built) {
        if (err->code == CM_OK) {
            cm_err_set(err, CM_INTERNAL, -1, "could not plan the query");
        }
        return err->code;
    }
    ExOp *sink = ex_result_sink_new(a, plan->result, root->n_cols, root->types, err);
    return close_stage(&bld, p, sink, "result") ? CM_OK : err->code;
}

/* Lineage recovery: a stage that failed reading a shuffle (a checksum
 * mismatch, a missing file) has the readers' record of which maps were lost.
 * Only those map tasks of the producing stages run again (their new attempt
 * replaces the lost one in the store, so nothing is counted twice); then the
 * failed stage runs again from the start. */
#define MAX_RECOVERIES 3

static bool rerun_lost_maps(PlStagePlan *plan, int failed, ExQuery *q, CmErr *err)
{
    bool any = false;
    int maps[1024];
    for (int j = 0; j < failed && err->code == CM_OK; j++) {
        ExStage *s = plan->stages[j];
        /* a kept shuffle's maps ran in an earlier statement: the error stands,
         * and the keeper drops it (pl_keep_done) */
        ShShuffle *sh = s->shuffle != NULL && s->kept == NULL ? *s->shuffle : NULL;
        int n = sh != NULL ? sh_shuffle_lost_maps(sh, maps, 1024) : 0;
        if (n <= 0) {
            continue;
        }
        for (int k = 0; k < n; k++) {
            sh_shuffle_invalidate_map(sh, maps[k]);
        }
        ex_stage_rerun_tasks(s, q, maps, n, err);
        any = true;
    }
    return any && err->code == CM_OK;
}

static void clear_error(ExQuery *q, CmErr *err)
{
    cm_err_init(&q->err);
    atomic_store(&q->cancelled, false);
    cm_err_init(err);
}

static void reset_counters(ExStage *s)
{
    atomic_store(&s->source->rows_out, 0);
    atomic_store(&s->sink->rows_out, 0);
    for (int k = 0; k < s->n_ops; k++) {
        atomic_store(&s->ops[k]->rows_out, 0);
    }
}

/* Test-only (setting debug_shuffle_damage): damages the first shuffle a query
 * writes, between its map and reduce stages, to exercise recovery. */
static void damage_for_test(ExStage *s, const CmConfig *cfg, bool *done)
{
    ShShuffle *sh = s->shuffle != NULL ? *s->shuffle : NULL;
    if (cfg->debug_shuffle_damage == 0 || *done || sh == NULL) {
        return;
    }
    for (int part = 0; part < sh_shuffle_n_parts(sh) && !*done; part++) {
        for (int map = 0; map < sh_shuffle_n_maps(sh) && !*done; map++) {
            if (sh_shuffle_map_part_rows(sh, map, part) == 0) {
                continue;
            }
            CmErr e;
            cm_err_init(&e);
            if (cfg->debug_shuffle_damage == 1) {
                sh_shuffle_debug_corrupt(sh, part, map, SH_DAMAGE_PAYLOAD, &e);
            } else {
                sh_shuffle_debug_delete_file(sh, part, 0, &e);
            }
            *done = e.code == CM_OK;
        }
    }
}

CmStatus pl_run_plan(PlStagePlan *plan, ExQuery *q, CmErr *err)
{
    bool damaged = false;
    for (int i = 0; i < plan->n_stages; i++) {
        ExStage *s = plan->stages[i];
        if (s->skipped) {
            continue;
        }
        pl_progress_stage_begin(plan, i, cm_pool_size(q->pool), q->progress);
        CmStatus rc = ex_stage_run(s, q, err);
        for (int tries = 0; rc == CM_IO && tries < MAX_RECOVERIES; tries++) {
            CmErr lost = *err;
            clear_error(q, err);
            if (!rerun_lost_maps(plan, i, q, err)) {
                cm_err_copy(err, &lost);
                break;
            }
            ex_stage_fini(s);
            reset_counters(s);
            rc = ex_stage_run(s, q, err);
        }
        if (rc != CM_OK) {
            return err->code;
        }
        ex_stage_release(s);
        damage_for_test(s, &q->config, &damaged);
        int n_decided = plan->n_decisions;
        if (pl_aqe_after_stage(plan, i, q, err) != CM_OK) {
            return err->code;
        }
        pl_progress_decisions(plan, n_decided, q->progress);
    }
    return CM_OK;
}

void pl_stage_plan_fini(PlStagePlan *plan)
{
    for (int i = 0; plan->stages != NULL && i < plan->n_stages; i++) {
        ex_stage_fini(plan->stages[i]);
    }
    for (int i = 0; i < plan->n_keep_used; i++) {
        *plan->keep_borrowed[i] = NULL; /* the keeper's */
    }
    for (int i = 0; i < plan->n_keep_wrote; i++) {
        plan->keep_wrote[i].sh = *plan->keep_slot[i];
        *plan->keep_slot[i] = NULL;
    }
    for (int i = 0; plan->shuffles != NULL && i < plan->n_shuffles; i++) {
        sh_shuffle_free(plan->shuffles[i]);
    }
    cm_free(plan->shuffles);
    plan->shuffles = NULL;
    /* the keeper takes the written ones and the store; what it keeps lives on */
    pl_keep_done(plan->keep_ran ? plan->keep : NULL, plan->keep_ok,
                 plan->keep_ran ? plan->n_keep_used : 0, plan->keep_used, plan->n_keep_wrote,
                 plan->keep_wrote, plan->store, plan->keep_cap);
    plan->keep_ran = false;
    plan->n_keep_used = plan->n_keep_wrote = 0;
    plan->store = NULL;
    ex_result_free(plan->result);
    plan->result = NULL;
}
