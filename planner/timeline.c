/*
 * timeline.c - the HTML stage timeline (see timeline.h).
 *
 * Layout: an SVG with a label column on the left and the time axis on the
 * right; lanes stack in execution order, each as tall as the number of worker
 * threads its tasks ran on.  Coordinates are whole pixels and shapes are drawn
 * with crisp edges, so a screenshot shows each lane's colours exactly.
 * Below the SVG: a table of the stages, the adaptive decisions, the notes and
 * the plans as text.
 */
#include "planner/timeline.h"

#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "planner/textbuf.h"

enum {
    SVG_W = 1000,    /* the whole drawing */
    LABEL_W = 270,   /* the label column */
    PLOT_W = 700,    /* the time axis */
    AXIS_H = 24,     /* the tick labels above the lanes */
    ROW_H = 12,      /* one worker's row of bars */
    LANE_PAD = 4,    /* above and below a lane's rows */
    LANE_GAP = 6,    /* between lanes */
    LANE_MIN_H = 44, /* room for the three label lines */
    MAX_ROWS = 64,   /* worker rows per lane; more workers share the last ones */
};

/* Bar colours, one per lane in turn; no red, which marks spills. */
static const unsigned PALETTE[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0x9467bd,
                                   0x8c564b, 0xe377c2, 0x17becf, 0xbcbd22};
#define N_PALETTE (int)(sizeof PALETTE / sizeof PALETTE[0])
#define SPILL_COLOUR "#d62728"

/* A lane's background: its bar colour mixed 80% with white. */
static unsigned tint(unsigned rgb)
{
    unsigned out = 0;
    for (int shift = 0; shift <= 16; shift += 8) {
        unsigned c = (rgb >> shift) & 0xff;
        out |= (c + (255 - c) * 4 / 5) << shift;
    }
    return out;
}

static void put_escaped(PlTextBuf *t, const char *s)
{
    for (const char *run = s;; s++) {
        const char *rep = *s == '&'   ? "&amp;"
                          : *s == '<' ? "&lt;"
                          : *s == '>' ? "&gt;"
                          : *s == '"' ? "&quot;"
                                      : NULL;
        if (rep != NULL || *s == '\0') {
            pl_text_put(t, run, (size_t)(s - run));
            if (*s == '\0') {
                return;
            }
            pl_text_lit(t, rep);
            run = s + 1;
        }
    }
}

/* "12.3 MiB"-style sizes. */
static void fmt_bytes(long long n, char *buf, size_t cap)
{
    static const char *const UNITS[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)n;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, u == 0 ? "%.0f %s" : "%.1f %s", v, UNITS[u]);
}

/* ---- what a stage did ----------------------------------------------------------- */

typedef struct LaneInfo {
    const ExStage *stage;
    unsigned colour;
    int y, h;             /* the lane's box in the SVG */
    int n_rows;           /* worker rows */
    int row_of[MAX_ROWS]; /* worker id (capped) -> row, -1: none */
    ShShuffleStats shuffle;
    long long spilled; /* operators' spill files plus the shuffle's split files */
    bool has_cache;    /* it scans cached or shared rows */
} LaneInfo;

static bool stage_ran(const ExStage *s)
{
    return !s->skipped && s->done && s->end_ns > 0;
}

static int n_ops_all(const ExStage *s)
{
    return s->n_ops + 2;
}

static const ExOp *op_all(const ExStage *s, int i)
{
    return i == 0 ? s->source : i <= s->n_ops ? s->ops[i - 1] : s->sink;
}

static int span_count(const ExStage *s)
{
    int n = atomic_load(&s->n_spans);
    return n < s->span_cap ? n : s->span_cap;
}

static void lane_measure(const PlStagePlan *plan, const ExStage *s, LaneInfo *l)
{
    memset(l, 0, sizeof *l);
    l->stage = s;
    for (int i = 0; i < MAX_ROWS; i++) {
        l->row_of[i] = -1;
    }
    for (int i = 0; i < span_count(s); i++) {
        int w = s->spans[i].worker_id;
        w = w < 0 ? 0 : w >= MAX_ROWS ? MAX_ROWS - 1 : w;
        l->row_of[w] = 0;
    }
    for (int w = 0; w < MAX_ROWS; w++) {
        l->row_of[w] = l->row_of[w] == 0 ? l->n_rows++ : -1;
    }
    for (int i = 0; i < n_ops_all(s); i++) {
        const ExOp *op = op_all(s, i);
        l->spilled += atomic_load(&op->spilled_bytes);
        for (int c = 0; c < plan->n_cached_scans; c++) {
            l->has_cache |= plan->cached_scans[c] == op;
        }
    }
    if (s->shuffle != NULL && *s->shuffle != NULL) {
        sh_shuffle_stats(*s->shuffle, &l->shuffle);
        l->spilled += l->shuffle.spilled_bytes;
    }
    int h = 2 * LANE_PAD + (l->n_rows > 0 ? l->n_rows : 1) * ROW_H;
    l->h = h < LANE_MIN_H ? LANE_MIN_H : h;
}

/* ---- the SVG ---------------------------------------------------------------------- */

typedef struct Axis {
    long long t0, t1; /* cm_now_ns() at the left and right ends */
} Axis;

static int x_at(const Axis *ax, long long t)
{
    double f = (double)(t - ax->t0) / (double)(ax->t1 - ax->t0);
    f = f < 0 ? 0 : f > 1 ? 1 : f;
    return LABEL_W + (int)(f * PLOT_W + 0.5);
}

/* Ticks every 1, 2 or 5 times a power of ten milliseconds, at most 10. */
static void put_axis(PlTextBuf *t, const Axis *ax, int height)
{
    double span_ms = (double)(ax->t1 - ax->t0) / 1e6, step = 0.001;
    for (int k = 0; span_ms / step > 10; k++) {
        step *= k % 3 == 1 ? 2.5 : 2;
    }
    for (double ms = 0; ms <= span_ms + 1e-9; ms += step) {
        int x = x_at(ax, ax->t0 + (long long)(ms * 1e6));
        pl_text_printf(t, "<line class=\"tick\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", x,
                       AXIS_H - 4, x, height);
        pl_text_printf(t, "<text class=\"tl\" x=\"%d\" y=\"%d\">%g ms</text>\n", x, AXIS_H - 8, ms);
    }
}

/* The rule of each adaptive decision about stage `id` ({"rule": "coalesce",
 * "stage": 3, ...}), as a mark after the lane's name; the whole decision is
 * its tooltip. */
static void put_lane_decisions(PlTextBuf *t, const PlStagePlan *plan, int id)
{
    for (int i = 0; i < plan->n_decisions; i++) {
        const char *d = plan->decisions[i], *rule = strstr(d, "\"rule\": \""), *stage;
        int n = -1;
        if (rule == NULL || (stage = strstr(d, "\"stage\": ")) == NULL ||
            sscanf(stage + 9, "%d", &n) != 1 || n != id) {
            continue;
        }
        rule += 9;
        const char *end = strchr(rule, '"');
        pl_text_lit(t, " <tspan class=\"aqe\">\xe2\x97\x86 ");
        pl_text_put(t, rule, end != NULL ? (size_t)(end - rule) : 0);
        pl_text_lit(t, "<title>");
        put_escaped(t, d);
        pl_text_lit(t, "</title></tspan>");
    }
}

static void put_lane_label(PlTextBuf *t, const PlStagePlan *plan, const LaneInfo *l)
{
    const ExStage *s = l->stage;
    char size[32];
    pl_text_printf(t, "<text class=\"lh\" x=\"6\" y=\"%d\">Stage %d", l->y + 14, s->id);
    for (int d = 0; d < s->n_deps; d++) {
        pl_text_printf(t, "%s%d", d ? ", " : " \xe2\x86\x90 stage ", s->deps[d]->id);
    }
    put_lane_decisions(t, plan, s->id);
    pl_text_printf(t, "%s</text>\n",
                   l->has_cache ? " <tspan class=\"cache\">[cache read]</tspan>" : "");
    pl_text_printf(t,
                   "<text class=\"ll\" x=\"6\" y=\"%d\">%d tasks, %.3f ms, %lld rows out</text>\n",
                   l->y + 27, s->n_tasks, (double)s->time_ns / 1e6,
                   (long long)atomic_load(&s->sink->rows_out));
    pl_text_printf(t, "<text class=\"ll\" x=\"6\" y=\"%d\">\xe2\x86\x92 ", l->y + 40);
    put_escaped(t, s->exchange);
    if (s->shuffle != NULL) {
        fmt_bytes(l->shuffle.bytes_pushed, size, sizeof size);
        pl_text_printf(t, ": %s, %lld rows", size, (long long)l->shuffle.rows);
    }
    pl_text_lit(t, "</text>\n");
}

static void put_lane(PlTextBuf *t, const PlStagePlan *plan, const Axis *ax, const LaneInfo *l)
{
    const ExStage *s = l->stage;
    pl_text_printf(t,
                   "<rect class=\"lane\" data-stage=\"%d\" x=\"%d\" y=\"%d\" width=\"%d\" "
                   "height=\"%d\" fill=\"#%06x\"/>\n",
                   s->id, LABEL_W, l->y, PLOT_W, l->h, tint(l->colour));
    put_lane_label(t, plan, l);
    int x0 = x_at(ax, s->start_ns), x1 = x_at(ax, s->end_ns);
    pl_text_printf(t,
                   "<rect class=\"span\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                   "stroke=\"#%06x\"/>\n",
                   x0, l->y + 1, x1 > x0 ? x1 - x0 : 1, l->h - 2, l->colour);
    for (int i = 0; i < span_count(s); i++) {
        const ExTaskSpan *sp = &s->spans[i];
        int w = sp->worker_id < 0 ? 0 : sp->worker_id >= MAX_ROWS ? MAX_ROWS - 1 : sp->worker_id;
        int bx = x_at(ax, sp->start_ns), bw = x_at(ax, sp->end_ns) - bx;
        bw = bw < 3 ? 2 : bw - 1; /* a pixel apart from the next task */
        bx = bx + bw > LABEL_W + PLOT_W ? LABEL_W + PLOT_W - bw : bx;
        pl_text_printf(t,
                       "<rect class=\"task\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                       "fill=\"#%06x\"><title>stage %d task %d on worker %d: %.3f ms</title>"
                       "</rect>\n",
                       bx, l->y + LANE_PAD + l->row_of[w] * ROW_H + 1, bw, ROW_H - 2, l->colour,
                       s->id, sp->task_idx, sp->worker_id,
                       (double)(sp->end_ns - sp->start_ns) / 1e6);
    }
    if (l->spilled > 0) {
        char size[32];
        fmt_bytes(l->spilled, size, sizeof size);
        pl_text_printf(t,
                       "<rect class=\"spill\" x=\"%d\" y=\"%d\" width=\"4\" height=\"%d\" "
                       "fill=\"" SPILL_COLOUR "\"><title>spilled %s</title></rect>\n",
                       x1 > LABEL_W + PLOT_W - 4 ? LABEL_W + PLOT_W - 4 : x1, l->y, l->h, size);
    }
}

static void put_svg(PlTextBuf *t, const PlStagePlan *plan, LaneInfo *lanes, int n_lanes)
{
    Axis ax = {0, 0};
    int y = AXIS_H;
    for (int i = 0; i < n_lanes; i++) {
        const ExStage *s = lanes[i].stage;
        ax.t0 = i == 0 || s->start_ns < ax.t0 ? s->start_ns : ax.t0;
        ax.t1 = s->end_ns > ax.t1 ? s->end_ns : ax.t1;
        for (int k = 0; k < span_count(s); k++) {
            ax.t1 = s->spans[k].end_ns > ax.t1 ? s->spans[k].end_ns : ax.t1;
        }
        lanes[i].colour = PALETTE[i % N_PALETTE];
        lanes[i].y = y;
        y += lanes[i].h + LANE_GAP;
    }
    ax.t1 = ax.t1 > ax.t0 ? ax.t1 : ax.t0 + 1;
    pl_text_printf(t,
                   "<svg width=\"%d\" height=\"%d\" "
                   "viewBox=\"0 0 %d %d\" shape-rendering=\"crispEdges\">\n",
                   SVG_W, y, SVG_W, y);
    put_axis(t, &ax, y);
    for (int i = 0; i < n_lanes; i++) {
        put_lane(t, plan, &ax, &lanes[i]);
    }
    pl_text_lit(t, "</svg>\n");
}

/* ---- the rest of the page ------------------------------------------------------- */

static void put_stage_table(PlTextBuf *t, const PlStagePlan *plan, const LaneInfo *lanes,
                            int n_lanes)
{
    pl_text_lit(t, "<h2>Stages</h2>\n<table><tr><th>stage</th><th>after</th><th>output</th>"
                   "<th>tasks</th><th>time ms</th><th>longest task ms</th><th>rows out</th>"
                   "<th>shuffle rows</th><th>shuffle bytes</th><th>spilled bytes</th>"
                   "<th>cache read</th></tr>\n");
    for (int i = 0, lane = 0; i < plan->n_stages; i++) {
        const ExStage *s = plan->stages[i];
        if (lane >= n_lanes || lanes[lane].stage != s) {
            pl_text_printf(t, "<tr><td>%d</td><td colspan=\"10\">%s</td></tr>\n", s->id,
                           s->skipped ? "merged into the stage before it (adaptive)"
                                      : "did not run");
            continue;
        }
        const LaneInfo *l = &lanes[lane++];
        pl_text_printf(t,
                       "<tr><td><span class=\"sw\" style=\"background:#%06x\"></span>%d</td><td>",
                       l->colour, s->id);
        for (int d = 0; d < s->n_deps; d++) {
            pl_text_printf(t, "%s%d", d ? ", " : "", s->deps[d]->id);
        }
        pl_text_lit(t, "</td><td>");
        put_escaped(t, s->exchange);
        pl_text_printf(t, "</td><td>%d</td><td>%.3f</td><td>%.3f</td><td>%lld</td>", s->n_tasks,
                       (double)s->time_ns / 1e6, (double)atomic_load(&s->task_max_ns) / 1e6,
                       (long long)atomic_load(&s->sink->rows_out));
        pl_text_printf(t, "<td>%lld</td><td>%lld</td><td%s>%lld</td><td>%s</td></tr>\n",
                       (long long)l->shuffle.rows, (long long)l->shuffle.bytes_pushed,
                       l->spilled > 0 ? " class=\"spilled\"" : "", l->spilled,
                       l->has_cache ? "yes" : "");
    }
    pl_text_lit(t, "</table>\n");
}

static void emit_escaped_line(void *ctx, const char *line)
{
    put_escaped(ctx, line);
    pl_text_lit(ctx, "\n");
}

static void put_plans(PlTextBuf *t, const PlTimelineIn *in)
{
    if (in->initial != NULL) {
        pl_text_lit(t, "<h2>Plan before the adaptive rules</h2>\n<pre class=\"plan\">");
        pl_explain_plan(in->initial, false, emit_escaped_line, t);
        pl_text_lit(t, "</pre>\n");
    }
    pl_text_lit(t, in->initial != NULL ? "<h2>Plan as run</h2>\n<pre class=\"plan\">"
                                       : "<h2>Plan (the adaptive rules left it as built)</h2>\n"
                                         "<pre class=\"plan\">");
    pl_explain_plan(in->plan, true, emit_escaped_line, t);
    pl_explain_total(in->plan, emit_escaped_line, t);
    pl_text_lit(t, "</pre>\n");
}

static void put_decisions(PlTextBuf *t, const PlTimelineIn *in)
{
    const PlStagePlan *plan = in->plan;
    pl_text_printf(t, "<h2>Adaptive decisions (%d)</h2>\n<ul class=\"aqe\">\n", plan->n_decisions);
    for (int i = 0; i < plan->n_decisions; i++) {
        pl_text_lit(t, "<li><code>");
        put_escaped(t, plan->decisions[i]);
        pl_text_lit(t, "</code></li>\n");
    }
    pl_text_lit(t, "</ul>\n");
    if (in->n_notes > 0) {
        pl_text_lit(t, "<h2>Cache</h2>\n<ul>\n");
        for (int i = 0; i < in->n_notes; i++) {
            pl_text_lit(t, "<li>");
            put_escaped(t, in->notes[i]);
            pl_text_lit(t, "</li>\n");
        }
        pl_text_lit(t, "</ul>\n");
    }
}

static const char STYLE[] =
    "<style>\n"
    "body{font:13px sans-serif;margin:12px;color:#222;background:#fff}\n"
    "h1{font-size:18px;margin:0 0 6px}h2{font-size:15px;margin:18px 0 6px}\n"
    "pre{background:#f6f6f6;padding:6px;overflow-x:auto;font:12px monospace}\n"
    "pre.sql{max-height:9em;overflow-y:auto}\n"
    "svg text{font:11px sans-serif;fill:#222}svg .lh{font-weight:bold}\n"
    "svg .tl{fill:#666}svg .tick{stroke:#ddd}svg .cache{fill:#2a7d2a}svg .aqe{fill:#b35900}\n"
    "svg .span{fill:none;stroke-width:1}\n"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\n"
    ".sw{display:inline-block;width:10px;height:10px;margin-right:4px}\n"
    ".spilled{color:" SPILL_COLOUR ";font-weight:bold}.summary span{margin-right:18px}\n"
    "</style>\n";

static void put_summary(PlTextBuf *t, const PlStagePlan *plan)
{
    char peak[32], rss[32], spilled[32];
    fmt_bytes(plan->peak_memory_bytes, peak, sizeof peak);
    fmt_bytes(plan->peak_rss_bytes, rss, sizeof rss);
    fmt_bytes(pl_spilled_bytes(plan), spilled, sizeof spilled);
    int64_t all = plan->statement_ns > plan->total_ns ? plan->statement_ns : plan->total_ns;
    pl_text_printf(t,
                   "<p class=\"summary\"><span>total %.3f ms (run %.3f ms)</span><span>peak "
                   "memory %s</span><span>peak RSS %s</span><span>spilled %s</span></p>\n",
                   (double)all / 1e6, (double)plan->total_ns / 1e6, peak, rss, spilled);
}

char *pl_timeline_html(const PlTimelineIn *in)
{
    const PlStagePlan *plan = in->plan;
    PlTextBuf t = {0};
    LaneInfo *lanes = cm_calloc((size_t)(plan->n_stages > 0 ? plan->n_stages : 1), sizeof *lanes);
    if (lanes == NULL) {
        return NULL;
    }
    int n_lanes = 0;
    for (int i = 0; i < plan->n_stages; i++) {
        if (stage_ran(plan->stages[i])) {
            lane_measure(plan, plan->stages[i], &lanes[n_lanes++]);
        }
    }
    pl_text_lit(&t, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                    "<title>Sluice stage timeline</title>\n");
    pl_text_lit(&t, STYLE);
    pl_text_lit(&t, "</head><body>\n<h1>Stage timeline</h1>\n<pre class=\"sql\">");
    put_escaped(&t, in->sql != NULL ? in->sql : "");
    pl_text_lit(&t, "</pre>\n");
    put_summary(&t, plan);
    put_svg(&t, plan, lanes, n_lanes);
    put_stage_table(&t, plan, lanes, n_lanes);
    put_decisions(&t, in);
    put_plans(&t, in);
    pl_text_lit(&t, "</body></html>\n");
    cm_free(lanes);
    return pl_text_take(&t);
}
