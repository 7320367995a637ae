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
 * try_coalesce.
 */
#include "planner/aqe/aqe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/ops.h"

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

static int64_t total_bytes(const ShShuffle *sh)
{
    int64_t sum = 0;
    for (int p = 0; p < sh_shuffle_n_parts(sh); p++) {
        sum += sh_shuffle_part_bytes(sh, p);
    }
    return sum;
}

static void record(PlStagePlan *plan, const char *json)
{
    if (json != NULL && plan->n_decisions < 64) {
        plan->decisions[plan->n_decisions++] = json;
    }
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
            if (ex_op_is_hash_join(o->ops[op]) && ex_hash_join_spec(o->ops[op])->build == inputs[0]) {
                return -1;
            }
        }
    }
    return w;
}

/* Stage w (the probe side's writer) takes over stage j's operators and sink;
 * stage j is left with nothing to do. */
static bool merge_into(PlStagePlan *plan, int w, int j)
{
    ExStage *p = plan->stages[w], *s = plan->stages[j];
    ExOp **ops = cm_arena_alloc(plan->arena, sizeof(ExOp *) * (size_t)(p->n_ops + s->n_ops + 1));
    if (ops == NULL) {
        return false;
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
    return true;
}

static void try_broadcast(PlStagePlan *plan, int j, const CmConfig *cfg)
{
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
        int64_t bytes = total_bytes(*js->build);
        if (bytes >= cfg->broadcast_threshold) {
            continue;
        }
        ex_hash_join_set_broadcast(op);
        int w = k == 0 ? mergeable_probe(plan, j) : -1;
        bool merged = w >= 0 && merge_into(plan, w, j);
        record(plan, cm_arena_printf(plan->arena,
                                     "{\"rule\": \"broadcast\", \"stage\": %d, \"build_bytes\": %lld, "
                                     "\"threshold\": %lld, \"probe_exchange_removed\": %s}",
                                     s->id, (long long)bytes, (long long)cfg->broadcast_threshold,
                                     merged ? "true" : "false"));
        if (merged) {
            return; /* the stage's operators now live in stage w */
        }
    }
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

static int64_t median(CmArena *a, const int64_t *v, int n)
{
    int64_t *c = cm_arena_alloc(a, sizeof(int64_t) * (size_t)n);
    if (c == NULL) {
        return INT64_MAX;
    }
    memcpy(c, v, sizeof(int64_t) * (size_t)n);
    qsort(c, (size_t)n, sizeof(int64_t), cmp_i64);
    return c[n / 2] > 0 ? c[n / 2] : 1;
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

/* Coalescing and skew splitting of one reading stage, decided together as in
 * the design: a skewed partition is never packed with others, and is cut into
 * map ranges (on the source side, on the build side of an inner join, or both:
 * every source range meets every build range). */
static void try_coalesce(PlStagePlan *plan, int j, const CmConfig *cfg)
{
    ExStage *s = plan->stages[j];
    ShShuffle **in[16];
    int n_in, n_src;
    if (s->coalesced || !ex_op_is_shuffle_read(s->source) || !stage_inputs(plan, s, in, &n_in)) {
        return;
    }
    s->coalesced = true;
    ex_shuffle_read_inputs(s->source, &n_src);
    int n_parts = sh_shuffle_n_parts(*in[0]);
    for (int i = 1; i < n_in; i++) {
        if (sh_shuffle_n_parts(*in[i]) != n_parts) {
            return;
        }
    }
    if (n_parts <= 1) {
        return;
    }
    CmArena *a = plan->arena;
    int threads = cfg->threads > 0 ? cfg->threads : 1;
    int64_t *bytes = cm_arena_zalloc(a, sizeof(int64_t) * (size_t)n_parts);
    int64_t *src = cm_arena_zalloc(a, sizeof(int64_t) * (size_t)n_parts);
    int64_t *bld = cm_arena_zalloc(a, sizeof(int64_t) * (size_t)n_parts);
    int *start = cm_arena_alloc(a, sizeof(int) * (size_t)(n_parts + 1));
    uint8_t *skew = cm_arena_zalloc(a, (size_t)n_parts); /* bit 0 source, bit 1 build */
    ExReadRanges *r = cm_arena_zalloc(a, sizeof *r);
    if (!bytes || !src || !bld || !start || !skew || !r) {
        return;
    }
    ExOp *join = NULL;
    bool can_split = cfg->adaptive_skew_join && n_src == 1 && splittable(s, &join);
    ShShuffle *build = join ? *ex_hash_join_spec(join)->build : NULL;
    int64_t total = 0;
    int non_empty = 0;
    for (int p = 0; p < n_parts; p++) {
        for (int i = 0; i < n_in; i++) {
            bytes[p] += sh_shuffle_part_bytes(*in[i], p);
        }
        src[p] = sh_shuffle_part_bytes(*in[0], p);
        bld[p] = build ? sh_shuffle_part_bytes(build, p) : 0;
        total += bytes[p];
        non_empty += bytes[p] > 0;
    }
    int n_skewed = 0;
    int64_t med_src = median(a, src, n_parts), med_bld = median(a, bld, n_parts);
    for (int p = 0; can_split && p < n_parts; p++) {
        if (src[p] > cfg->skew_factor * (double)med_src && src[p] > cfg->skew_threshold) {
            skew[p] |= 1;
        }
        if (build && ex_hash_join_spec(join)->type == EX_JOIN_INNER &&
            bld[p] > cfg->skew_factor * (double)med_bld && bld[p] > cfg->skew_threshold) {
            skew[p] |= 2;
        }
        n_skewed += skew[p] != 0;
    }
    if (!cfg->adaptive_coalesce && n_skewed == 0) {
        return;
    }
    /* Never fewer tasks than workers while there are partitions to give them,
     * unless each would get less than adaptive_min_partition_size: a task
     * costs more to start than that much data costs to read. */
    int64_t target = cfg->adaptive_advisory_partition_size;
    int64_t fair = total / threads;
    if (non_empty >= threads && fair < target) {
        target = fair > cfg->adaptive_min_partition_size ? fair : cfg->adaptive_min_partition_size;
        target = target < cfg->adaptive_advisory_partition_size ? target
                                                                 : cfg->adaptive_advisory_partition_size;
        target = target > 0 ? target : 1;
    }
    int n = 0;
    int64_t acc = 0;
    bool after_skew = false;
    for (int p = 0; p < n_parts; p++) {
        if (cfg->adaptive_coalesce && bytes[p] == 0) {
            continue; /* nothing to read on any side */
        }
        bool alone = skew[p] || after_skew || !cfg->adaptive_coalesce;
        if (n == 0 || alone || (acc > 0 && acc + bytes[p] > target)) {
            start[n++] = p;
            acc = 0;
        }
        acc += bytes[p];
        after_skew = skew[p] != 0;
    }
    if (n == 0) {
        start[n++] = 0; /* all empty: one task still runs (aggregates over no rows) */
    }
    start[n] = n_parts;
    /* Empty partitions between ranges are folded into the range before them. */
    if (n >= n_parts && n_skewed == 0) {
        return;
    }
    /* A skewed partition gets at least one split per worker, each about the
     * advisory size, and at most 8 per worker in all: a bound on the task
     * explosion a badly skewed key could cause. */
    int cap = 8 * threads;
    int *scuts = cm_arena_alloc(a, sizeof(int) * (size_t)(cap + 1) * (size_t)n);
    int *bcuts = cm_arena_alloc(a, sizeof(int) * (size_t)(cap + 1) * (size_t)n);
    int *ns = cm_arena_zalloc(a, sizeof(int) * (size_t)n);
    int *nb = cm_arena_zalloc(a, sizeof(int) * (size_t)n);
    if (!scuts || !bcuts || !ns || !nb) {
        return;
    }
    int n_tasks = 0;
    for (int g = 0; g < n; g++) {
        int p = start[g];
        ns[g] = nb[g] = 1;
        if (skew[p]) {
            int64_t adv = cfg->adaptive_advisory_partition_size;
            int each = (skew[p] & 3) == 3 ? cap / 2 : cap;
            int *sc = scuts + (size_t)g * (size_t)(cap + 1), *bc = bcuts + (size_t)g * (size_t)(cap + 1);
            if (skew[p] & 1) {
                int64_t t = src[p] / threads < adv ? src[p] / threads : adv;
                ns[g] = split_maps(*in[0], p, t, each, sc);
            }
            if (skew[p] & 2) {
                int64_t t = bld[p] / threads < adv ? bld[p] / threads : adv;
                nb[g] = split_maps(build, p, t, cap / ns[g] > 0 ? cap / ns[g] : 1, bc);
            }
        }
        n_tasks += ns[g] * nb[g];
    }
    ExTaskRead *task = cm_arena_alloc(a, sizeof(ExTaskRead) * (size_t)n_tasks);
    if (task == NULL) {
        return;
    }
    int t = 0;
    for (int g = 0; g < n; g++) {
        int *sc = scuts + (size_t)g * (size_t)(cap + 1), *bc = bcuts + (size_t)g * (size_t)(cap + 1);
        int p = start[g];
        for (int i = 0; i < ns[g]; i++) {
            for (int k = 0; k < nb[g]; k++) {
                task[t++] = (ExTaskRead){
                    .p0 = p, .p1 = start[g + 1],
                    .m0 = skew[p] & 1 ? sc[i] : 0, .m1 = skew[p] & 1 ? sc[i + 1] : -1,
                    .b0 = skew[p] & 2 ? bc[k] : 0, .b1 = skew[p] & 2 ? bc[k + 1] : -1,
                };
            }
        }
        if (skew[p]) {
            record(plan, cm_arena_printf(
                             a,
                             "{\"rule\": \"skew_split\", \"stage\": %d, \"partition\": %d, "
                             "\"side\": \"%s\", \"source_bytes\": %lld, \"source_median\": %lld, "
                             "\"build_bytes\": %lld, \"build_median\": %lld, \"skew_factor\": %g, "
                             "\"skew_threshold\": %lld, \"source_splits\": %d, \"build_splits\": %d}",
                             s->id, p, (skew[p] & 3) == 3 ? "both" : skew[p] & 1 ? "source" : "build",
                             (long long)src[p], (long long)med_src, (long long)bld[p],
                             (long long)med_bld, cfg->skew_factor, (long long)cfg->skew_threshold,
                             ns[g], nb[g]));
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
    if (n < n_parts) {
        record(plan, cm_arena_printf(a,
                                     "{\"rule\": \"coalesce\", \"stage\": %d, \"partitions_before\": %d, "
                                     "\"partitions_after\": %d, \"bytes\": %lld, \"advisory_bytes\": %lld}",
                                     s->id, n_parts, n, (long long)total,
                                     (long long)cfg->adaptive_advisory_partition_size));
    }
}

CmStatus pl_aqe_after_stage(PlStagePlan *plan, int done, const ExQuery *q, CmErr *err)
{
    const CmConfig *cfg = &q->config;
    if (!cfg->adaptive || plan->arena == NULL) {
        return CM_OK;
    }
    for (int j = done + 1; j < plan->n_stages; j++) {
        if (plan->stages[j]->done) {
            continue;
        }
        if (cfg->adaptive_broadcast) {
            try_broadcast(plan, j, cfg);
        }
        if (cfg->adaptive_coalesce && !plan->stages[j]->done) {
            try_coalesce(plan, j, cfg);
        }
    }
    (void)err;
    return CM_OK;
}
