/*
 * explain.c - EXPLAIN output of a stage plan: indented text, or one JSON
 * document for tools (EXPLAIN (FORMAT JSON), EXPLAIN (ANALYZE, FORMAT JSON)).
 * Stages are listed in execution order; within a stage the sink comes first
 * and the source last, as the data flows upward.
 */
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "planner/physical.h"
#include "planner/textbuf.h"

/* The operator's name: a scan of cached rows (planner/cache.h) is a CACHED
 * SCAN, one of a statement's shared subtree a SHARED SCAN. */
static const char *op_name(const PlStagePlan *plan, const ExOp *op)
{
    for (int i = 0; i < plan->n_cached_scans; i++) {
        if (plan->cached_scans[i] == op) {
            return plan->cached_is_shared[i] ? "SHARED SCAN" : "CACHED SCAN";
        }
    }
    return op->vt->name;
}

/* ---- text ----------------------------------------------------------------------- */

/* The op's detail line; `in` is the op whose rows it reads in its stage
 * (NULL for a source), whose column names name its input. */
static void op_detail(const ExOp *op, const ExOp *in, char *detail, size_t cap)
{
    detail[0] = '\0';
    if (op->vt->explain != NULL) {
        op->vt->explain(op, in != NULL ? in->names : NULL, detail, cap);
    }
}

/* The op below ops[k] (k = n_ops: the sink) in stage s. */
static const ExOp *op_input(const ExStage *s, int k)
{
    return k > 0 ? s->ops[k - 1] : s->source;
}

static void explain_op(const PlStagePlan *plan, const ExOp *op, const ExOp *in, bool analyze,
                       int depth, void (*emit)(void *ctx, const char *line), void *ctx)
{
    char detail[512], line[768];
    op_detail(op, in, detail, sizeof detail);
    int n = snprintf(line, sizeof line, "%*s%s%s%s", depth * 2, "", op_name(plan, op),
                     detail[0] ? " " : "", detail);
    if (analyze && n > 0 && (size_t)n < sizeof line) {
        n += snprintf(line + n, sizeof line - (size_t)n, "  [rows=%lld",
                      (long long)atomic_load(&op->rows_out));
        if (op->est_rows > 0 && n > 0 && (size_t)n < sizeof line) {
            n += snprintf(line + n, sizeof line - (size_t)n, ", est=%.0f", op->est_rows);
        }
        long long peak = atomic_load(&op->mem.peak), spilled = atomic_load(&op->spilled_bytes);
        if (peak > 0 && n > 0 && (size_t)n < sizeof line) {
            n += snprintf(line + n, sizeof line - (size_t)n, ", memory=%lld", peak);
        }
        if (spilled > 0 && n > 0 && (size_t)n < sizeof line) {
            n += snprintf(line + n, sizeof line - (size_t)n, ", spilled=%lld in %lld files",
                          spilled, (long long)atomic_load(&op->spill_files));
        }
        long long checked, dropped;
        if (ex_shuffle_write_bloom_stats(op, &checked, &dropped) && n > 0 &&
            (size_t)n < sizeof line) {
            n += snprintf(line + n, sizeof line - (size_t)n, ", bloom dropped=%lld of %lld",
                          dropped, checked);
        }
        if (n > 0 && (size_t)n < sizeof line) {
            snprintf(line + n, sizeof line - (size_t)n, "]");
        }
    }
    emit(ctx, line);
}

void pl_explain_plan(const PlStagePlan *plan, bool analyze,
                     void (*emit)(void *ctx, const char *line), void *ctx)
{
    char line[512];
    for (int i = 0; i < plan->n_stages; i++) {
        const ExStage *s = plan->stages[i];
        if (s->kept != NULL) {
            /* its output is a shuffle an earlier statement wrote (planner/keep.h) */
            snprintf(line, sizeof line, "Stage %d -> %s, kept: %s, not run", s->id, s->exchange,
                     s->kept);
            emit(ctx, line);
            continue;
        }
        if (s->skipped) {
            snprintf(line, sizeof line, "Stage %d: merged into the stage before it (adaptive)",
                     s->id);
            emit(ctx, line);
            continue;
        }
        int n = snprintf(line, sizeof line, "Stage %d", s->id);
        for (int d = 0; d < s->n_deps && n > 0 && (size_t)n < sizeof line; d++) {
            n += snprintf(line + n, sizeof line - (size_t)n, "%s%d", d ? ", " : " <- stage ",
                          s->deps[d]->id);
        }
        if (n > 0 && (size_t)n < sizeof line) {
            n += snprintf(line + n, sizeof line - (size_t)n, " -> %s", s->exchange);
        }
        if (analyze && n > 0 && (size_t)n < sizeof line) {
            snprintf(line + n, sizeof line - (size_t)n,
                     "  [tasks=%d, time=%.3f ms, longest task=%.3f ms]", s->n_tasks,
                     (double)s->time_ns / 1e6, (double)atomic_load(&s->task_max_ns) / 1e6);
        }
        emit(ctx, line);
        explain_op(plan, s->sink, op_input(s, s->n_ops), analyze, 1, emit, ctx);
        for (int k = s->n_ops - 1; k >= 0; k--) {
            explain_op(plan, s->ops[k], op_input(s, k), analyze, 1 + (s->n_ops - k), emit, ctx);
        }
        explain_op(plan, s->source, NULL, analyze, 2 + s->n_ops, emit, ctx);
    }
    for (int i = 0; i < plan->n_decisions; i++) {
        snprintf(line, sizeof line, "Adaptive: %s", plan->decisions[i]);
        emit(ctx, line);
    }
    if (analyze) {
        snprintf(line, sizeof line,
                 "Memory: peak reserved %lld bytes, peak RSS %lld bytes, peak temp %lld bytes, "
                 "spilled %lld bytes",
                 (long long)plan->peak_memory_bytes, (long long)plan->peak_rss_bytes,
                 (long long)plan->peak_temp_bytes, (long long)pl_spilled_bytes(plan));
        emit(ctx, line);
    }
}

void pl_explain_total(const PlStagePlan *plan, void (*emit)(void *ctx, const char *line), void *ctx)
{
    char line[96];
    if (plan->statement_ns > plan->total_ns) {
        snprintf(line, sizeof line, "Total: %.3f ms (run %.3f ms, bind and plan %.3f ms)",
                 (double)plan->statement_ns / 1e6, (double)plan->total_ns / 1e6,
                 (double)(plan->statement_ns - plan->total_ns) / 1e6);
    } else {
        snprintf(line, sizeof line, "Total: %.3f ms", (double)plan->total_ns / 1e6);
    }
    emit(ctx, line);
}

int64_t pl_spilled_bytes(const PlStagePlan *plan)
{
    int64_t n = plan->before_spilled_bytes;
    for (int i = 0; i < plan->n_stages; i++) {
        const ExStage *s = plan->stages[i];
        n += atomic_load(&s->sink->spilled_bytes) + atomic_load(&s->source->spilled_bytes);
        for (int k = 0; k < s->n_ops; k++) {
            n += atomic_load(&s->ops[k]->spilled_bytes);
        }
    }
    return n;
}

/* ---- JSON ----------------------------------------------------------------------- */

static void put_string(PlTextBuf *j, const char *s)
{
    pl_text_lit(j, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            pl_text_put(j, e, 2);
        } else if (c < 0x20) {
            pl_text_printf(j, "\\u%04x", c);
        } else {
            pl_text_put(j, (const char *)s, 1);
        }
    }
    pl_text_lit(j, "\"");
}

static void put_operator(PlTextBuf *j, const PlStagePlan *plan, const ExOp *op, const ExOp *in,
                         bool analyze, bool first)
{
    char detail[512];
    op_detail(op, in, detail, sizeof detail);
    pl_text_lit(j, first ? "\n        {" : ",\n        {");
    pl_text_lit(j, "\"name\": ");
    put_string(j, op_name(plan, op));
    pl_text_lit(j, ", \"detail\": ");
    put_string(j, detail);
    if (analyze) {
        pl_text_printf(j, ", \"rows\": %lld", (long long)atomic_load(&op->rows_out));
        if (op->est_rows > 0) {
            pl_text_printf(j, ", \"est_rows\": %.0f", op->est_rows);
        }
        pl_text_printf(
            j, ", \"peak_memory_bytes\": %lld, \"spilled_bytes\": %lld, \"spill_files\": %lld",
            (long long)atomic_load(&op->mem.peak), (long long)atomic_load(&op->spilled_bytes),
            (long long)atomic_load(&op->spill_files));
        long long checked, dropped;
        if (ex_shuffle_write_bloom_stats(op, &checked, &dropped)) {
            pl_text_printf(j, ", \"bloom_checked_rows\": %lld, \"bloom_dropped_rows\": %lld",
                           checked, dropped);
        }
    }
    pl_text_lit(j, "}");
}

static void put_shuffle(PlTextBuf *j, const ExStage *s)
{
    ShShuffleStats st;
    memset(&st, 0, sizeof st);
    if (s->shuffle != NULL && *s->shuffle != NULL) {
        sh_shuffle_stats(*s->shuffle, &st);
    }
    pl_text_printf(
        j, ",\n      \"shuffle\": {\"rows\": %lld, \"bytes_pushed\": %lld, \"blocks\": %lld, ",
        (long long)st.rows, (long long)st.bytes_pushed, (long long)st.blocks);
    pl_text_printf(j, "\"files\": %lld, \"splits\": %lld, \"spilled_bytes\": %lld, ",
                   (long long)st.files, (long long)st.splits, (long long)st.spilled_bytes);
    pl_text_printf(j, "\"sorted_on_read\": %lld, \"pauses\": %lld, \"paused_ms\": %lld, ",
                   (long long)st.sorted_on_read, (long long)st.pauses, (long long)st.paused_ms);
    pl_text_printf(j, "\"map_reruns\": %lld}", (long long)st.map_reruns);
}

char *pl_explain_json(const PlStagePlan *plan, bool analyze)
{
    PlTextBuf j = {0};
    pl_text_lit(&j, "{\n  \"stages\": [");
    for (int i = 0; i < plan->n_stages; i++) {
        const ExStage *s = plan->stages[i];
        if (s->kept != NULL) {
            pl_text_printf(&j, "%s\n    {\"id\": %d, \"skipped\": true, \"kept\": ", i ? "," : "",
                           s->id);
            put_string(&j, s->kept);
            pl_text_lit(&j, "}");
            continue;
        }
        if (s->skipped) {
            pl_text_printf(&j, "%s\n    {\"id\": %d, \"skipped\": true}", i ? "," : "", s->id);
            continue;
        }
        pl_text_printf(&j,
                       "%s\n    {\"id\": %d, \"tasks\": %d, \"rows_out\": %lld, \"time_ms\": %.3f",
                       i ? "," : "", s->id, s->n_tasks, (long long)atomic_load(&s->sink->rows_out),
                       (double)s->time_ns / 1e6);
        pl_text_printf(&j, ", \"task_time_sum_ms\": %.3f, \"task_time_max_ms\": %.3f",
                       (double)atomic_load(&s->task_sum_ns) / 1e6,
                       (double)atomic_load(&s->task_max_ns) / 1e6);
        pl_text_printf(&j, ", \"memory_at_start_bytes\": %lld", (long long)s->mem_at_start);
        pl_text_lit(&j, ",\n      \"output\": ");
        put_string(&j, s->exchange);
        pl_text_lit(&j, ",\n      \"depends_on\": [");
        for (int d = 0; d < s->n_deps; d++) {
            pl_text_printf(&j, "%s%d", d ? ", " : "", s->deps[d]->id);
        }
        pl_text_lit(&j, "],\n      \"operators\": [");
        put_operator(&j, plan, s->sink, op_input(s, s->n_ops), analyze, true);
        for (int k = s->n_ops - 1; k >= 0; k--) {
            put_operator(&j, plan, s->ops[k], op_input(s, k), analyze, false);
        }
        put_operator(&j, plan, s->source, NULL, analyze, false);
        pl_text_lit(&j, "]");
        if (s->shuffle != NULL) {
            put_shuffle(&j, s);
        }
        pl_text_lit(&j, "}");
    }
    pl_text_lit(&j, "\n  ],\n  \"adaptive\": [");
    for (int i = 0; i < plan->n_decisions; i++) {
        pl_text_lit(&j, i ? ",\n    " : "\n    ");
        pl_text_lit(&j, plan->decisions[i]);
    }
    pl_text_lit(&j, plan->n_decisions ? "\n  ]" : "]");
    if (analyze) {
        pl_text_printf(&j, ",\n  \"peak_memory_bytes\": %lld, \"peak_rss_bytes\": %lld",
                       (long long)plan->peak_memory_bytes, (long long)plan->peak_rss_bytes);
        pl_text_printf(&j, ", \"peak_temp_bytes\": %lld, \"spilled_bytes\": %lld",
                       (long long)plan->peak_temp_bytes, (long long)pl_spilled_bytes(plan));
        int64_t all = plan->statement_ns > plan->total_ns ? plan->statement_ns : plan->total_ns;
        pl_text_printf(&j, ", \"total_ms\": %.3f, \"run_ms\": %.3f", (double)all / 1e6,
                       (double)plan->total_ns / 1e6);
    }
    pl_text_lit(&j, "\n}");
    return pl_text_take(&j);
}
