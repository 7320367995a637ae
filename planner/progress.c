/*
 * progress.c - stage weights and adaptive decisions for the progress of a
 * statement (see progress.h).
 */
#include "planner/progress.h"

#include <stdio.h>
#include <string.h>

#include "executor/ops.h"

/* What reading one row costs beside its bytes, in bytes: a cost per row
 * that keeps many narrow rows from counting as nothing. */
#define ROW_COST 16.0
/* How many stages back an estimate is bounded by the inputs (a plan's
 * stages are few; the bound keeps a deep one linear enough). */
#define MAX_DEPTH 4

static double row_width(const ExOp *op)
{
    double width = 0;
    for (int i = 0; i < op->n_cols; i++) {
        width += (double)cm_type_width(op->types[i]) + (op->types[i].id == CM_T_VARCHAR ? 16 : 0);
    }
    return width > 0 ? width : 1;
}

/* What the weights are computed over. */
typedef struct Weigh {
    const PlStagePlan *plan;
    int workers; /* tasks that run at once: each partial aggregate emits its own groups */
} Weigh;

static double stage_work(const Weigh *g, const ExStage *s, int depth);

/* Whether stage w may output more than it reads (a join, an expansion). */
static bool may_grow(const ExStage *w)
{
    for (int k = 0; k < w->n_ops; k++) {
        if (ex_op_is_hash_join(w->ops[k]) || strcmp(w->ops[k]->vt->name, "EXPAND") == 0) {
            return true;
        }
    }
    return false;
}

/* A stage ending in a partial aggregate outputs at most the groups its
 * reader's final aggregate expects, from each worker; 0: not that shape (the
 * planner sets no estimate on the partial half). */
static double partial_output(const Weigh *g, const ExStage *w, const ExStage *reader)
{
    if (w->n_ops == 0 || !ex_hash_agg_is_partial(w->ops[w->n_ops - 1]) || reader->n_ops == 0 ||
        reader->ops[0]->est_rows <= 0) {
        return 0;
    }
    const ExOp *final = reader->ops[0];
    return final->est_rows * g->workers * (ROW_COST + row_width(final));
}

/* The planner's estimate of what stage w outputs (the last of its operators
 * that has one), but no more than w reads unless it may grow: once w's own
 * inputs are known, an aggregate estimated far above them does not take the
 * share of the stages that read its output. */
static double estimated_output(const Weigh *g, const ExStage *w, const ExStage *reader, int depth)
{
    double out = partial_output(g, w, reader);
    for (int k = w->n_ops - 1; k >= 0 && out == 0; k--) {
        if (w->ops[k]->est_rows > 0) {
            out = w->ops[k]->est_rows * (ROW_COST + row_width(w->ops[k]));
        }
    }
    if (out == 0) {
        double rows = w->source->est_rows > 0 ? w->source->est_rows : 1;
        out = rows * (ROW_COST + row_width(w->source));
    }
    if (depth < MAX_DEPTH && !may_grow(w)) {
        double in = stage_work(g, w, depth + 1);
        out = out < in ? out : in;
    }
    return out;
}

/* Work of reading the shuffle in `slot`: exact once it is written. */
static double shuffle_work(const Weigh *g, ShShuffle **slot, const ExStage *reader, int depth)
{
    for (int i = 0; i < g->plan->n_stages; i++) {
        const ExStage *w = g->plan->stages[i];
        if (w->shuffle != slot) {
            continue;
        }
        if (w->done && *slot != NULL) {
            ShShuffleStats st;
            sh_shuffle_stats(*slot, &st);
            return (double)st.bytes_pushed + ROW_COST * (double)st.rows;
        }
        return estimated_output(g, w, reader, depth);
    }
    return 0;
}

double pl_progress_stage_work(const PlStagePlan *plan, const ExStage *s, int workers)
{
    Weigh g = {.plan = plan, .workers = workers > 0 ? workers : 1};
    return stage_work(&g, s, 0);
}

static double stage_work(const Weigh *g, const ExStage *s, int depth)
{
    double work = 0;
    if (ex_op_is_shuffle_read(s->source)) {
        int n_in;
        ShShuffle ***in = ex_shuffle_read_inputs(s->source, &n_in);
        for (int i = 0; i < n_in; i++) {
            work += shuffle_work(g, in[i], s, depth);
        }
    } else {
        double rows = s->source->est_rows > 0 ? s->source->est_rows : 1;
        work += rows * (ROW_COST + row_width(s->source));
    }
    for (int k = 0; k < s->n_ops; k++) {
        if (ex_op_is_hash_join(s->ops[k])) {
            work += shuffle_work(g, ex_hash_join_spec(s->ops[k])->build, s, depth);
        }
    }
    return work > 1 ? work : 1;
}

void pl_progress_stage_begin(const PlStagePlan *plan, int i, int workers, ExProgress *p)
{
    if (p == NULL) {
        return;
    }
    double own = 0, left = 0;
    for (int j = i; j < plan->n_stages; j++) {
        const ExStage *s = plan->stages[j];
        if (!s->skipped && !s->done) {
            double w = pl_progress_stage_work(plan, s, workers);
            left += w;
            own = j == i ? w : own;
        }
    }
    ex_progress_stage_begin(p, plan->stages[i]->id, plan->n_stages, left > 0 ? own / left : 1);
}

/* "stage 3: join → broadcast" from a decision's JSON (planner/aqe/aqe.c). */
static void describe(const char *json, char *buf, size_t cap)
{
    char rule[32] = "";
    int stage = -1, before = 0, after = 0, part = 0;
    const char *at = strstr(json, "\"stage\": ");
    (void)sscanf(json, "{\"rule\": \"%31[^\"]\"", rule);
    if (at != NULL) {
        (void)sscanf(at, "\"stage\": %d", &stage);
    }
    if (strcmp(rule, "broadcast") == 0) {
        snprintf(buf, cap, "stage %d: join → broadcast", stage);
    } else if (strcmp(rule, "coalesce") == 0 && at != NULL &&
               sscanf(at, "\"stage\": %*d, \"partitions_before\": %d, \"partitions_after\": %d",
                      &before, &after) == 2) {
        snprintf(buf, cap, "stage %d: %d → %d partitions", stage, before, after);
    } else if (strcmp(rule, "skew_split") == 0 && at != NULL &&
               sscanf(at, "\"stage\": %*d, \"partition\": %d", &part) == 1) {
        snprintf(buf, cap, "stage %d: skewed partition %d split", stage, part);
    } else {
        snprintf(buf, cap, "stage %d: %s", stage, rule);
    }
}

void pl_progress_decisions(const PlStagePlan *plan, int from, ExProgress *p)
{
    for (int i = from; p != NULL && i < plan->n_decisions; i++) {
        char text[96];
        describe(plan->decisions[i], text, sizeof text);
        ex_progress_decision(p, text);
    }
}
