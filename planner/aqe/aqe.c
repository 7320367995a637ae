/*
 * aqe.c - the adaptive rules, applied between stages.
 *
 * A stage's inputs are the shuffles its source reads and, for partitioned
 * joins, the build shuffles; they are "known" once the stages writing them
 * have run.  Broadcast: a partitioned join whose build shuffle is known and
 * smaller than broadcast_threshold becomes a broadcast join; if its probe
 * shuffle is written by a stage that has not run, that stage's pipeline is
 * extended with the join stage's operators and sink, so the probe side is
 * never exchanged.  Coalesce: when all inputs of a stage reading a hash
 * exchange are known, contiguous partitions are packed up to
 * adaptive_advisory_partition_size (by the sum over its inputs), empty ones
 * dropped, never into fewer tasks than the worker count can use while
 * partitions remain and each gets adaptive_min_partition_size.  Skew: see
 * try_coalesce_and_split.
 *
 * A rule that cannot allocate (the query arena refused) fails the query with
 * CM_OOM rather than leaving the plan as it was: a silently skipped rule
 * would hide the failure, and a half-recorded decision would make EXPLAIN
 * ANALYZE lie.  The test-only setting debug_aqe_oom makes every allocation
 * of the rules fail, so that this path is tested.
 */
#include "planner/aqe/aqe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/ops.h"

/* What the rules of one call of pl_aqe_after_stage share. */
typedef struct Aqe {
    PlStagePlan *plan;   /* the plan being rewritten */
    const CmConfig *cfg; /* the query's settings */
    CmErr *err;          /* the caller's; set on the first failure */
} Aqe;

/* In the query arena: n bytes (zeroed when zero); NULL with CM_OOM in x->err
 * when the arena refuses, or always under debug_aqe_oom. */
static void *rule_alloc(Aqe *x, size_t n, bool zero)
{
    void *p = NULL;
    if (!x->cfg->debug_aqe_oom) {
        p = zero ? cm_arena_zalloc(x->plan->arena, n) : cm_arena_alloc(x->plan->arena, n);
    }
    if (p == NULL) {
        cm_err_set(x->err, CM_OOM, -1, "out of memory in adaptive execution");
    }
    return p;
}

/* The stage writing `slot`, or -1. */
static int writer_of(const PlStagePlan *plan, ShShuffle **slot)
{
    for (int i = 0; i < plan->n_stages; i++) {
        if (plan->stages[i]->shuffle == slot) {
            return i;
        }
    }
    return -1;
}

static bool known(const PlStagePlan *plan, ShShuffle **slot)
{
    int w = writer_of(plan, slot);
    return w >= 0 && plan->stages[w]->done && *slot != NULL;
}

/* The bytes and the rows of every partition of sh. */
static int64_t total_bytes(const ShShuffle *sh, int64_t *rows)
{
    int64_t sum = 0;
    *rows = 0;
    for (int p = 0; p < sh_shuffle_n_parts(sh); p++) {
        sum += sh_shuffle_part_bytes(sh, p);
        *rows += sh_shuffle_part_rows(sh, p);
    }
    return sum;
}

/* Records a decision (json, in the query arena); CM_OOM when its text could
 * not be made.  Past 64 decisions the rest go unrecorded (EXPLAIN's cap). */
static CmStatus record(Aqe *x, const char *json)
{
    if (json == NULL || x->cfg->debug_aqe_oom) {
        return cm_err_set(x->err, CM_OOM, -1, "out of memory in adaptive execution");
    }
    if (x->plan->n_decisions < 64) {
        x->plan->decisions[x->plan->n_decisions++] = json;
    }
    return CM_OK;
}

/* Stage j reads exactly one shuffle, written by a stage that has not run and
 * read by no one else: that stage can take j's pipeline over. */
static int mergeable_probe(const PlStagePlan *plan, int j)
{
    ExStage *s = plan->stages[j];
    int n_inputs;
    if (!ex_op_is_shuffle_read(s->source)) {
        return -1;
    }
    ShShuffle ***inputs = ex_shuffle_read_inputs(s->source, &n_inputs);
    if (n_inputs != 1) {
        return -1;
    }
    int w = writer_of(plan, inputs[0]);
    if (w < 0 || plan->stages[w]->done || w >= j) {
        return -1;
    }
    for (int k = 0; k < plan->n_stages; k++) {
        ExStage *o = plan->stages[k];
        int n;
        if (k != j && ex_op_is_shuffle_read(o->source)) {
            ShShuffle ***in = ex_shuffle_read_inputs(o->source, &n);
            for (int i = 0; i < n; i++) {
                if (in[i] == inputs[0]) {
                    return -1;
                }
            }
        }
        for (int op = 0; op < o->n_ops; op++) {
            if (ex_op_is_hash_join(o->ops[op]) &&
                ex_hash_join_spec(o->ops[op])->build == inputs[0]) {
                return -1;
            }
        }
    }
    return w;
}

/* Stage w (the probe side's writer) takes over stage j's operators and sink;
 * stage j is left with nothing to do. */
static CmStatus merge_into(Aqe *x, int w, int j)
{
    ExStage *p = x->plan->stages[w], *s = x->plan->stages[j];
    ExOp **ops = rule_alloc(x, sizeof(ExOp *) * (size_t)(p->n_ops + s->n_ops + 1), false);
    if (ops == NULL) {
        return x->err->code;
    }
    memcpy(ops, p->ops, sizeof(ExOp *) * (size_t)p->n_ops);
    memcpy(ops + p->n_ops, s->ops, sizeof(ExOp *) * (size_t)s->n_ops);
    p->ops = ops;
    p->n_ops += s->n_ops;
    p->sink = s->sink;
    p->shuffle = s->shuffle;
    p->exchange = s->exchange;
    s->n_ops = 0;
    s->skipped = true;
    s->done = true;
    return CM_OK;
}

static CmStatus try_broadcast(Aqe *x, int j)
{
    PlStagePlan *plan = x->plan;
    const CmConfig *cfg = x->cfg;
    ExStage *s = plan->stages[j];
    for (int k = 0; k < s->n_ops; k++) {
        ExOp *op = s->ops[k];
        if (!ex_op_is_hash_join(op)) {
            continue;
        }
        const ExJoinSpec *js = ex_hash_join_spec(op);
        if (!js->partitioned || js->type == EX_JOIN_FULL || !known(plan, js->build)) {
            continue;
        }
        int64_t rows;
        int64_t bytes = total_bytes(*js->build, &rows);
        /* The probe side has not run: beside the planner's estimate of it the
         * build side counts by its real rows at the planner's row width (the
         * units of that estimate), and beside a probe side 16 times larger
         * the cap is cm_config_broadcast_bytes_for's (config.h).  TPC-H q3 at
         * SF 10: its orders side, estimated at 2.1M rows, had 1.5M. */
        int64_t cap = cm_config_broadcast_bytes(cfg);
        if (js->probe_bytes_est > 0 && js->build_row_width > 0) {
            double est_bytes = (double)rows * js->build_row_width;
            int64_t big = cm_config_broadcast_bytes_for(cfg, est_bytes, js->probe_bytes_est);
            cap = big > cap && est_bytes < (double)big ? big : cap;
        }
        if (bytes >= cap || !ex_hash_join_broadcastable(rows, (double)bytes, cap)) {
            continue;
        }
        ex_hash_join_set_broadcast(op);
        int w = k == 0 ? mergeable_probe(plan, j) : -1;
        if (w >= 0 && merge_into(x, w, j) != CM_OK) {
            return x->err->code;
        }
        if (record(x, cm_arena_printf(plan->arena,
                                      "{\"rule\": \"broadcast\", \"stage\": %d, \"build_bytes\": "
                                      "%lld, \"threshold\": %lld, \"probe_exchange_removed\": %s}",
                                      s->id, (long long)bytes, (long long)cap,
                                      w >= 0 ? "true" : "false")) != CM_OK) {
            return x->err->code;
        }
        if (w >= 0) {
            return CM_OK; /* the stage's operators now live in stage w */
        }
    }
    return CM_OK;
}

/* The shuffles stage j reads by partition: its source's and its partitioned
 * joins' build sides; false if any is not known yet. */
static bool stage_inputs(const PlStagePlan *plan, ExStage *s, ShShuffle **out[], int *n)
{
    int n_src;
    ShShuffle ***src = ex_shuffle_read_inputs(s->source, &n_src);
    *n = 0;
    for (int i = 0; i < n_src && *n < 16; i++) {
        out[(*n)++] = src[i];
    }
    for (int k = 0; k < s->n_ops && *n < 16; k++) {
        if (ex_op_is_hash_join(s->ops[k]) && ex_hash_join_spec(s->ops[k])->partitioned) {
            out[(*n)++] = ex_hash_join_spec(s->ops[k])->build;
        }
    }
    for (int i = 0; i < *n; i++) {
        if (!known(plan, out[i])) {
            return false;
        }
    }
    return *n > 0;
}

/* The one partitioned join of stage s, which must be its first operator, in
 * *join (NULL if none); false if the stage's shape forbids splitting a
 * partition across tasks (see ex_op_row_independent). */
static bool splittable(const ExStage *s, ExOp **join)
{
    *join = NULL;
    for (int k = 0; k < s->n_ops; k++) {
        ExOp *op = s->ops[k];
        if (ex_op_is_hash_join(op) && ex_hash_join_spec(op)->partitioned) {
            if (k != 0 || ex_hash_join_spec(op)->type == EX_JOIN_FULL) {
                return false; /* unmatched build rows would be emitted once per split */
            }
            *join = op;
        } else if (!ex_op_row_independent(op)) {
            return false;
        }
    }
    return ex_op_row_independent(s->sink);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) in *out, at least 1. */
static CmStatus median(Aqe *x, const int64_t *v, int n, int64_t *out)
{
    int64_t *c = rule_alloc(x, sizeof(int64_t) * (size_t)n, false);
    if (c == NULL) {
        return x->err->code;
    }
    memcpy(c, v, sizeof(int64_t) * (size_t)n);
    qsort(c, (size_t)n, sizeof(int64_t), cmp_i64);
    *out = c[n / 2] > 0 ? c[n / 2] : 1;
    return CM_OK;
}

/* Cuts partition p of sh into contiguous map ranges of about target bytes;
 * at most cap of them.  Writes cuts[0..n] (range r is [cuts[r], cuts[r+1]))
 * and returns n. */
static int split_maps(const ShShuffle *sh, int p, int64_t target, int cap, int *cuts)
{
    int n_maps = sh_shuffle_n_maps(sh);
    int64_t total = sh_shuffle_part_bytes(sh, p);
    if (target < total / cap + 1) {
        target = total / cap + 1;
    }
    int n = 0;
    int64_t acc = 0;
    for (int m = 0; m < n_maps; m++) {
        int64_t b = sh_shuffle_map_part_bytes(sh, m, p);
        if (n == 0 || (acc > 0 && b > 0 && acc + b > target && n < cap)) {
            cuts[n++] = m;
            acc = 0;
        }
        acc += b;
    }
    cuts[n] = n_maps;
    return n;
}

/* What the partitions of a reading stage hold: over all its inputs, on its
 * source's shuffle, and on its partitioned join's build shuffle (0s if none). */
typedef struct Sizes {
    int n_parts;
    int64_t *bytes, *src, *bld;
    int64_t total;
    int non_empty;
    int64_t med_src, med_bld;
} Sizes;

static CmStatus measure(Aqe *x, ShShuffle **in[], int n_in, const ShShuffle *build, Sizes *z)
{
    int n = z->n_parts;
    z->bytes = rule_alloc(x, sizeof(int64_t) * (size_t)n, true);
    z->src = z->bytes ? rule_alloc(x, sizeof(int64_t) * (size_t)n, true) : NULL;
    z->bld = z->src ? rule_alloc(x, sizeof(int64_t) * (size_t)n, true) : NULL;
    if (z->bld == NULL) {
        return x->err->code;
    }
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < n_in; i++) {
            z->bytes[p] += sh_shuffle_part_bytes(*in[i], p);
        }
        z->src[p] = sh_shuffle_part_bytes(*in[0], p);
        z->bld[p] = build ? sh_shuffle_part_bytes(build, p) : 0;
        z->total += z->bytes[p];
        z->non_empty += z->bytes[p] > 0;
    }
    if (median(x, z->src, n, &z->med_src) != CM_OK) {
        return x->err->code;
    }
    return median(x, z->bld, n, &z->med_bld);
}

/* Marks the partitions over skew_factor x median and over skew_threshold:
 * bit 0 when the source side is skewed, bit 1 when the build side is (only
 * for INNER joins: an outer join's build side emits its unmatched rows, which
 * would then be emitted once per split).  Returns how many are marked. */
static int find_skew(const Sizes *z, const CmConfig *cfg, bool split_build, uint8_t *skew)
{
    int n_skewed = 0;
    for (int p = 0; p < z->n_parts; p++) {
        if (z->src[p] > cfg->skew_factor * (double)z->med_src && z->src[p] > cfg->skew_threshold) {
            skew[p] |= 1;
        }
        if (split_build && z->bld[p] > cfg->skew_factor * (double)z->med_bld &&
            z->bld[p] > cfg->skew_threshold) {
            skew[p] |= 2;
        }
        n_skewed += skew[p] != 0;
    }
    return n_skewed;
}

/* The bytes a coalesced task should read: the advisory size, lowered so that
 * every worker gets a task while there are partitions to give them, but not
 * below adaptive_min_partition_size (a task costs more to start than that
 * much data costs to read). */
static int64_t pack_target(const Sizes *z, const CmConfig *cfg, int threads)
{
    int64_t adv = cfg->adaptive_advisory_partition_size;
    int64_t target = adv;
    int64_t fair = z->total / threads;
    if (z->non_empty >= threads && fair < target) {
        target = fair > cfg->adaptive_min_partition_size ? fair : cfg->adaptive_min_partition_size;
        target = target < adv ? target : adv;
        target = target > 0 ? target : 1;
    }
    return target;
}

/* Groups contiguous partitions into reads of about target bytes, dropping
 * empty ones (when coalescing); a skewed partition, and the one after it, each
 * start a group of their own.  Writes start[0..n] (group g reads partitions
 * [start[g], start[g+1])) and returns n. */
static int pack(const Sizes *z, const uint8_t *skew, bool coalesce, int64_t target, int *start)
{
    int n = 0;
    int64_t acc = 0;
    bool after_skew = false;
    for (int p = 0; p < z->n_parts; p++) {
        if (coalesce && z->bytes[p] == 0) {
            continue; /* nothing to read on any side */
        }
        bool alone = skew[p] || after_skew || !coalesce;
        if (n == 0 || alone || (acc > 0 && acc + z->bytes[p] > target)) {
            start[n++] = p;
            acc = 0;
        }
        acc += z->bytes[p];
        after_skew = skew[p] != 0;
    }
    if (n == 0) {
        start[n++] = 0; /* all empty: one task still runs (aggregates over no rows) */
    }
    /* Empty partitions between groups are read by the group before them. */
    start[n] = z->n_parts;
    return n;
}

/*
 * How many tasks the coalesced partitions become when none is skewed: enough
 * that each reads at most the advisory size, and, when there are partitions
 * enough, at least one per worker and a multiple of the workers.  Greedy
 * packing to a target of total / workers makes workers + 1 tasks as often as
 * not (eight equal partitions on two workers became 3 + 3 + 2), and the last
 * task then runs alone while the other worker waits.  Never so many that a
 * task reads less than adaptive_min_partition_size, nor more than the
 * non-empty partitions.
 */
static int even_count(const Sizes *z, const CmConfig *cfg, int threads)
{
    int64_t adv = cfg->adaptive_advisory_partition_size;
    int64_t n = (z->total + adv - 1) / adv;
    if (z->non_empty >= threads) {
        n = n > threads ? n : threads;
        n = (n + threads - 1) / threads * threads;
    }
    int64_t by_min = z->total / cfg->adaptive_min_partition_size;
    n = n < by_min ? n : by_min;
    n = n < z->non_empty ? n : z->non_empty;
    return n > 1 ? (int)n : 1;
}

/* Cuts the non-empty partitions, in order, into n contiguous groups of about
 * total / n bytes: a partition starts the next group when its middle lies past
 * that group's share of the bytes, or when the partitions left are just enough
 * to give every group left one.  Writes start[0..n] as pack() does. */
static int pack_even(const Sizes *z, int n, int *start)
{
    int g = 0;
    int left = z->non_empty;
    int64_t before = 0; /* bytes of the partitions before p */
    for (int p = 0; p < z->n_parts; p++) {
        if (z->bytes[p] == 0) {
            continue;
        }
        double share = (double)z->total * g / n;
        if (g == 0 ||
            (g < n && ((double)before + (double)z->bytes[p] / 2 > share || left == n - g))) {
            start[g++] = p;
        }
        before += z->bytes[p];
        left--;
    }
    if (g == 0) {
        start[g++] = 0; /* all empty: one task still runs (aggregates over no rows) */
    }
    start[g] = z->n_parts;
    return g;
}

/* A group of partitions read together, and for a skewed one its map ranges:
 * source range i is [scuts[i], scuts[i+1]) (NULL: all maps), likewise bcuts. */
typedef struct Group {
    int p0, p1;
    int ns, nb;
    int *scuts, *bcuts;
} Group;

/* Cuts a skewed group's partition into map ranges of about min(advisory size,
 * its size / workers) on each skewed side, at most 8 x workers ranges in all (a
 * bound on the task explosion a badly skewed key could cause); every source
 * range meets every build range. */

static CmStatus split_group(Aqe *x, const Sizes *z, uint8_t skew, ShShuffle *source,
                            ShShuffle *build, int threads, Group *g)
{
    const CmConfig *cfg = x->cfg;
    g->ns = g->nb = 1;
    if (!skew) {
        return CM_OK;
    }
    int cap = 8 * threads;
    int64_t adv = cfg->adaptive_advisory_partition_size;
    int p = g->p0;
    if (skew & 1) {
        g->scuts = rule_alloc(x, sizeof(int) * (size_t)(cap + 1), false);
        if (g->scuts == NULL) {
            return x->err->code;
        }
        int64_t t = z->src[p] / threads < adv ? z->src[p] / threads : adv;
        g->ns = split_maps(source, p, t, (skew & 3) == 3 ? cap / 2 : cap, g->scuts);
    }
    if (skew & 2) {
        g->bcuts = rule_alloc(x, sizeof(int) * (size_t)(cap + 1), false);
        if (g->bcuts == NULL) {
            return x->err->code;
        }
        int64_t t = z->bld[p] / threads < adv ? z->bld[p] / threads : adv;
        g->nb = split_maps(build, p, t, cap / g->ns > 0 ? cap / g->ns : 1, g->bcuts);
    }
    return CM_OK;
}

static CmStatus record_skew(Aqe *x, const ExStage *s, const Sizes *z, uint8_t skew, const Group *g)
{
    const CmConfig *cfg = x->cfg;
    int p = g->p0;
    return record(
        x, cm_arena_printf(x->plan->arena,
                           "{\"rule\": \"skew_split\", \"stage\": %d, \"partition\": %d, "
                           "\"side\": \"%s\", \"source_bytes\": %lld, \"source_median\": %lld, "
                           "\"build_bytes\": %lld, \"build_median\": %lld, \"skew_factor\": %g, "
                           "\"skew_threshold\": %lld, \"source_splits\": %d, \"build_splits\": %d}",
                           s->id, p,
                           (skew & 3) == 3 ? "both"
                           : skew & 1      ? "source"
                                           : "build",
                           (long long)z->src[p], (long long)z->med_src, (long long)z->bld[p],
                           (long long)z->med_bld, cfg->skew_factor, (long long)cfg->skew_threshold,
                           g->ns, g->nb));
}

/* Coalescing and skew splitting of one reading stage, decided together as in
 * the design: a skewed partition is never packed with others, and is cut into
 * map ranges (on the source side, on the build side of an inner join, or both).
 * Either rule may be off on its own. */
static CmStatus try_coalesce_and_split(Aqe *x, int j)
{
    PlStagePlan *plan = x->plan;
    const CmConfig *cfg = x->cfg;
    ExStage *s = plan->stages[j];
    ShShuffle **in[16];
    int n_in, n_src;
    if (s->coalesced || !ex_op_is_shuffle_read(s->source) || !stage_inputs(plan, s, in, &n_in)) {
        return CM_OK;
    }
    s->coalesced = true;
    ex_shuffle_read_inputs(s->source, &n_src);
    Sizes z = {.n_parts = sh_shuffle_n_parts(*in[0])};
    for (int i = 1; i < n_in; i++) {
        if (sh_shuffle_n_parts(*in[i]) != z.n_parts) {
            return CM_OK;
        }
    }
    if (z.n_parts <= 1) {
        return CM_OK;
    }
    int threads = cfg->threads > 0 ? cfg->threads : 1;
    ExOp *join = NULL;
    bool can_split = cfg->adaptive_skew_join && n_src == 1 && splittable(s, &join);
    ShShuffle *build = join ? *ex_hash_join_spec(join)->build : NULL;
    uint8_t *skew = rule_alloc(x, (size_t)z.n_parts, true);
    int *start = skew ? rule_alloc(x, sizeof(int) * (size_t)(z.n_parts + 1), false) : NULL;
    if (start == NULL || measure(x, in, n_in, build, &z) != CM_OK) {
        return x->err->code;
    }
    int n_skewed = 0;
    if (can_split) {
        bool split_build = build && ex_hash_join_spec(join)->type == EX_JOIN_INNER;
        n_skewed = find_skew(&z, cfg, split_build, skew);
    }
    if (!cfg->adaptive_coalesce && n_skewed == 0) {
        return CM_OK;
    }
    int n = cfg->adaptive_coalesce && n_skewed == 0
                ? pack_even(&z, even_count(&z, cfg, threads), start)
                : pack(&z, skew, cfg->adaptive_coalesce, pack_target(&z, cfg, threads), start);
    if (n >= z.n_parts && n_skewed == 0) {
        return CM_OK; /* one task per partition, as planned */
    }
    Group *groups = rule_alloc(x, sizeof(Group) * (size_t)n, true);
    if (groups == NULL) {
        return x->err->code;
    }
    int n_tasks = 0;
    for (int g = 0; g < n; g++) {
        groups[g].p0 = start[g];
        groups[g].p1 = start[g + 1];
        if (split_group(x, &z, skew[start[g]], *in[0], build, threads, &groups[g]) != CM_OK) {
            return x->err->code;
        }
        n_tasks += groups[g].ns * groups[g].nb;
    }
    ExReadRanges *r = rule_alloc(x, sizeof *r, true);
    ExTaskRead *task = r ? rule_alloc(x, sizeof(ExTaskRead) * (size_t)n_tasks, false) : NULL;
    if (task == NULL) {
        return x->err->code;
    }
    int t = 0;
    for (int gi = 0; gi < n; gi++) {
        const Group *g = &groups[gi];
        for (int i = 0; i < g->ns; i++) {
            for (int k = 0; k < g->nb; k++) {
                task[t++] = (ExTaskRead){
                    .p0 = g->p0,
                    .p1 = g->p1,
                    .m0 = g->scuts ? g->scuts[i] : 0,
                    .m1 = g->scuts ? g->scuts[i + 1] : -1,
                    .b0 = g->bcuts ? g->bcuts[k] : 0,
                    .b1 = g->bcuts ? g->bcuts[k + 1] : -1,
                };
            }
        }
        if (skew[g->p0] && record_skew(x, s, &z, skew[g->p0], g) != CM_OK) {
            return x->err->code;
        }
    }
    r->n_tasks = n_tasks;
    r->task = task;
    ex_shuffle_read_set_ranges(s->source, r);
    for (int k = 0; k < s->n_ops; k++) {
        if (ex_op_is_hash_join(s->ops[k]) && ex_hash_join_spec(s->ops[k])->partitioned) {
            ex_hash_join_set_ranges(s->ops[k], r);
        }
    }
    if (n < z.n_parts) {
        return record(x, cm_arena_printf(plan->arena,
                                         "{\"rule\": \"coalesce\", \"stage\": %d, "
                                         "\"partitions_before\": %d, \"partitions_after\": %d, "
                                         "\"bytes\": %lld, \"advisory_bytes\": %lld}",
                                         s->id, z.n_parts, n, (long long)z.total,
                                         (long long)cfg->adaptive_advisory_partition_size));
    }
    return CM_OK;
}

CmStatus pl_aqe_after_stage(PlStagePlan *plan, int done, const ExQuery *q, CmErr *err)
{
    const CmConfig *cfg = &q->config;
    if (!cfg->adaptive || plan->arena == NULL) {
        return CM_OK;
    }
    Aqe x = {.plan = plan, .cfg = cfg, .err = err};
    for (int j = done + 1; j < plan->n_stages; j++) {
        if (plan->stages[j]->done) {
            continue;
        }
        if (cfg->adaptive_broadcast && try_broadcast(&x, j) != CM_OK) {
            return err->code;
        }
        if ((cfg->adaptive_coalesce || cfg->adaptive_skew_join) && !plan->stages[j]->done &&
            try_coalesce_and_split(&x, j) != CM_OK) {
            return err->code;
        }
    }
    return CM_OK;
}
