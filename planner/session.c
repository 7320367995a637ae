/*
 * session.c - statement dispatch: queries, EXPLAIN, DDL, INSERT and settings.
 *
 * Every statement runs in its own query arena.  Statements that change data
 * append their rows as the query produces them (a streamed result: the rows
 * are never all held at once), to a table that is new (CTAS, UPDATE, DELETE:
 * it replaces or joins the catalog only at the end) or truncated back to its
 * old length if anything fails (INSERT), so a failed statement changes nothing.
 * An INSERT whose query reads its own target collects the rows first.
 */
#include "planner/session.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/mem.h"
#include "common/value.h"
#include "executor/func.h"
#include "executor/progress.h"
#include "executor/update.h"
#include "parser/parser.h"
#include "planner/bind/binder.h"
#include "planner/cache.h"
#include "planner/describe.h"
#include "planner/memmode.h"
#include "planner/optimizer/optimizer.h"
#include "planner/physical.h"
#include "planner/textbuf.h"
#include "planner/timeline.h"
#include "shuffle/block.h"
#include "shuffle/spill.h"
#include "storage/csv.h"
#include "storage/csv_out.h"
#include "storage/index.h"
#include "storage/outfile.h"
#include "storage/persist.h"

struct PlSession {
    StCatalog *cat;
    CmConfig cfg;
    PlCache *cache; /* CACHE TABLE entries and their temporary views */
    PlKeep *keep;   /* partitioned forms kept across statements (planner/keep.h); owned, one
                       per connection */
    CmPool *pool;   /* sized cfg.threads; rebuilt when that changes */
    int pool_threads;
    bool in_txn;           /* this connection's BEGIN opened the catalog's transaction */
    bool is_txn_aborted;   /* a statement of the transaction failed: only ROLLBACK or COMMIT
                              (which rolls back) is run until it ends */
    atomic_bool interrupt; /* pl_session_interrupt: stop the running statement */
    ExProgress *progress;  /* the running statement's progress; owned */
    bool is_shared;        /* cat and cache are borrowed from another session */
    StPersist *persist;    /* the directory database, or NULL in memory; owned unless
                              is_shared */
    StCatalog *live_cat;   /* while a statement runs as a reader of the committed state
                              (another connection's transaction is open): the shared
                              catalog, and `cat` its snapshot (st_catalog_snapshot); else NULL */
};

typedef struct Stmt {
    PlTemp *temps; /* WITH RECURSIVE results of this statement; owned */
    PlSession *s;
    CmArena *arena;
    const char *sql;
    PsStmt *ast;
    PlResult *res;          /* set by statements that return something */
    PlResult *spare;        /* an empty result made before the statement ran (empty_result) */
    const PlParams *params; /* the values of its parameters, or NULL */
    const PlExecOpts *opts; /* how the caller asked it to run, or NULL */
    const CmValue *insert_defaults; /* INSERT ... VALUES: what DEFAULT is per column, or NULL */
    int n_insert_defaults;
    PlCacheCtx cache;        /* the statement's use of the session's cache */
    ExResultStreamFn stream; /* set: the next run_query streams its rows here */
    void *stream_ctx;
    bool is_client_stream; /* set: the stream is the client's (PlExecOpts) */
    bool rows_in_blocks;   /* set: the next run_query keeps its rows in the block store */
    PlMemObs mem_start;    /* what memory had cost when the statement started */
    bool is_mem_stepped;   /* the auto controller ran (EXPLAIN ANALYZE runs it early) */
    bool is_sub_run;       /* the next run_query is one the binder or the cache asked
                              for before the statement's own query */
    bool is_kept_lost;     /* a run that read kept partitioned forms failed on a file
                              (planner/keep.h): the keeper dropped them, a second run
                              exchanges the tables again */
    PlNotes notes;         /* binding's lines for EXPLAIN ANALYZE (WITH RECURSIVE) */
    PlStagePlan before;    /* those runs' figures so far: spilled (before_spilled_bytes)
                              and the three peaks; nothing else set */
    CmErr *err;
} Stmt;

/* keep.h's PlKeepCurrentFn: the catalog's table, or the cache entry's rows,
 * of that name is still that object at that version (CACHE TABLE t of a
 * table t names both). */
static bool keep_is_current(void *ctx, const char *name, uint64_t id, uint64_t version)
{
    PlSession *s = ctx;
    StEntry *e = st_catalog_find(s->cat, name);
    const StTable *t = e != NULL && e->kind == ST_ENTRY_TABLE ? e->table : NULL;
    if (t == NULL || t->id != id) {
        t = pl_cache_rows(s->cache, name);
    }
    return t != NULL && t->id == id && t->version == version;
}

PlSession *pl_session_new(CmErr *err)
{
    PlSession *s = cm_calloc(1, sizeof *s);
    if (s == NULL || (s->cat = st_catalog_new()) == NULL ||
        (s->progress = ex_progress_new()) == NULL || (s->cache = pl_cache_new(err)) == NULL ||
        (s->keep = pl_keep_new(keep_is_current, s)) == NULL) {
        pl_cache_free(s ? s->cache : NULL);
        st_catalog_free(s ? s->cat : NULL);
        ex_progress_free(s ? s->progress : NULL);
        cm_free(s);
        cm_err_set(err, CM_OOM, -1, "out of memory opening a database");
        return NULL;
    }
    cm_config_init(&s->cfg);
    return s;
}

PlSession *pl_session_new_shared(PlSession *first, CmErr *err)
{
    PlSession *s = cm_calloc(1, sizeof *s);
    if (s == NULL || (s->progress = ex_progress_new()) == NULL ||
        (s->keep = pl_keep_new(keep_is_current, s)) == NULL) {
        ex_progress_free(s ? s->progress : NULL);
        cm_free(s);
        cm_err_set(err, CM_OOM, -1, "out of memory opening a connection");
        return NULL;
    }
    s->cat = first->cat; /* each connection has its own progress, settings and pool */
    s->cache = first->cache;
    s->persist = first->persist;
    s->is_shared = true;
    cm_config_init(&s->cfg);
    return s;
}

static void rollback_txn(PlSession *s);

void pl_session_free(PlSession *s)
{
    if (s != NULL) {
        pl_session_rollback(s); /* closing ends the transaction as a crash would */
        cm_pool_free(s->pool);
        pl_keep_free(s->keep); /* its stores, before the catalog they read */
        if (!s->is_shared) {
            pl_cache_free(s->cache);
            st_catalog_free(s->cat);
            st_persist_close(s->persist);
        }
        ex_progress_free(s->progress);
        cm_free(s);
    }
}

StCatalog *pl_session_catalog(PlSession *s)
{
    return s->cat;
}

CmStatus pl_session_attach(PlSession *s, const char *dir, bool readonly, CmErr *err)
{
    CM_ASSERT(!s->is_shared && s->persist == NULL && st_catalog_count(s->cat) == 0);
    s->persist = st_persist_open(dir, readonly, s->cat, err);
    return err->code;
}

CmStatus pl_session_set(PlSession *s, const char *name, const char *value, CmErr *err)
{
    return cm_config_set(&s->cfg, name, value, err);
}

void pl_session_set_progress(PlSession *s, ExProgressFn fn, void *ctx)
{
    ex_progress_set_handler(s->progress, fn, ctx);
}

void pl_session_interrupt(PlSession *s)
{
    atomic_store(&s->interrupt, true);
}

bool pl_session_in_transaction(const PlSession *s)
{
    return s->in_txn;
}

bool pl_session_is_interrupted(PlSession *s)
{
    return atomic_load(&s->interrupt);
}

void pl_result_free(PlResult *r)
{
    if (r == NULL) {
        return;
    }
    ex_result_free(r->rows);
    for (int i = 0; r->names != NULL && i < r->n_cols; i++) {
        cm_free(r->names[i]);
    }
    cm_free(r->names);
    cm_free(r);
}

static PlResult *result_new(int n_cols, const char *const *names, CmErr *err);

/* The result of a statement that returns no rows, with `changes` rows changed
 * (-1: not a statement that changes rows).  It is the spare made before the
 * statement ran, so that it cannot fail once the statement's changes are in:
 * a write that reported "out of memory" after it was done would leave the
 * user believing it was not. */
static CmStatus empty_result(Stmt *st, int64_t changes)
{
    PlResult *r = st->spare != NULL ? st->spare : result_new(0, NULL, st->err);
    st->spare = NULL;
    if (r == NULL) {
        return st->err->code;
    }
    r->changes = changes;
    st->res = r;
    return CM_OK;
}

static PlResult *result_new(int n_cols, const char *const *names, CmErr *err)
{
    PlResult *r = cm_calloc(1, sizeof *r);
    if (r == NULL || (r->names = cm_calloc((size_t)(n_cols + 1), sizeof(char *))) == NULL) {
        cm_free(r);
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    r->changes = -1;
    for (int i = 0; i < n_cols; i++) {
        r->names[i] = cm_strdup(names[i]);
        r->n_cols = i + 1;
        if (r->names[i] == NULL) {
            pl_result_free(r);
            cm_err_set(err, CM_OOM, -1, "out of memory");
            return NULL;
        }
    }
    return r;
}

/* ---- running a plan --------------------------------------------------------------- */

static CmStatus ensure_pool(PlSession *s, CmErr *err)
{
    if (s->pool != NULL && s->pool_threads == (int)s->cfg.threads) {
        return CM_OK;
    }
    cm_pool_free(s->pool);
    s->pool = cm_pool_new((int)s->cfg.threads);
    s->pool_threads = s->pool ? (int)s->cfg.threads : 0;
    return s->pool ? CM_OK : cm_err_set(err, CM_OOM, -1, "could not start worker threads");
}

/* The operators' states are freed after the query's ExQuery is gone: their
 * memory groups stop counting for it. */
static void detach_memory(PlStagePlan *plan)
{
    for (int i = 0; i < plan->n_stages; i++) {
        ExStage *s = plan->stages[i];
        s->source->mem.parent = NULL;
        s->sink->mem.parent = NULL;
        for (int k = 0; k < s->n_ops; k++) {
            s->ops[k]->mem.parent = NULL;
        }
    }
}

/* *stmt and *run both become the larger of the two. */
static void keep_peak(int64_t *stmt, int64_t *run)
{
    *stmt = *run = *run > *stmt ? *run : *stmt;
}

/* Plans and runs `root`; on success *rows (owned) holds its output. */
static CmStatus run_query(Stmt *st, const PlNode *root, PlStagePlan *plan, ExResult **rows)
{
    memset(plan, 0, sizeof *plan);
    if (ensure_pool(st->s, st->err) != CM_OK ||
        pl_physical_plan(st->arena, root, &st->s->cfg, st->s->keep, plan, st->err) != CM_OK ||
        (plan->store = sh_store_new(&st->s->cfg, st->err)) == NULL) {
        return st->err->code;
    }
    if (st->stream != NULL) {
        ex_result_set_stream(plan->result, st->stream, st->stream_ctx);
        if (st->is_client_stream) {
            ex_result_set_stream_waiting(plan->result);
        }
        st->stream = NULL;
        st->is_client_stream = false;
    }
    if (st->rows_in_blocks) {
        st->rows_in_blocks = false;
        if (ex_result_set_blocks(plan->result, NULL, st->err) != CM_OK) {
            return st->err->code;
        }
    }
    ExQuery q;
    memset(&q, 0, sizeof q);
    q.arena = st->arena;
    q.config = st->s->cfg;
    q.pool = st->s->pool;
    q.shuffle_store = plan->store;
    q.interrupt = &st->s->interrupt;
    q.progress = st->s->progress;
    /* what the binder runs first (recursive CTEs, cached subplans) may take
     * half of what remains each: how many such runs come is not known */
    int64_t outer_end = ex_progress_plan_begin(q.progress, st->is_sub_run ? 0.5 : 1.0);
    cm_mutex_init(&q.lock);
    cm_err_init(&q.err);
    cm_mem_rss_span_begin();
    sh_temp_peak_reset();
    sh_store_set_mem_group(plan->store, &q.mem);
    long long t0 = cm_now_ns();
    pl_run_plan(plan, &q, st->err);
    plan->keep_ran = true;
    plan->keep_ok = st->err->code == CM_OK;
    st->is_kept_lost |= plan->n_keep_used > 0 && st->err->code == CM_IO;
    plan->total_ns = cm_now_ns() - t0;
    ex_progress_plan_end(q.progress, outer_end);
    sh_store_set_mem_group(plan->store, NULL);
    plan->peak_memory_bytes = atomic_load(&q.mem.peak);
    detach_memory(plan);
    plan->peak_rss_bytes = cm_mem_rss_span_peak();
    plan->peak_temp_bytes = sh_temp_peak();
    cm_mutex_fini(&q.lock);
    PlStagePlan *b = &st->before;
    if (st->is_sub_run) {
        b->before_spilled_bytes += pl_spilled_bytes(plan);
    } else {
        plan->before_spilled_bytes = b->before_spilled_bytes;
    }
    /* EXPLAIN ANALYZE's peaks are the statement's, over every run */
    keep_peak(&b->peak_memory_bytes, &plan->peak_memory_bytes);
    keep_peak(&b->peak_rss_bytes, &plan->peak_rss_bytes);
    keep_peak(&b->peak_temp_bytes, &plan->peak_temp_bytes);
    if (st->err->code == CM_OK && rows != NULL) {
        *rows = plan->result;
        plan->result = NULL;
    }
    return st->err->code;
}

static CmStatus run_for_binder(void *ctx, CmArena *arena, const PlNode *root, ExResultStreamFn fn,
                               void *fn_ctx, CmErr *err)
{
    Stmt *st = ctx;
    PlStagePlan plan;
    CmArena *stmt_arena = st->arena;
    /* A run may start while the statement's own stream waits for its query
     * (a cached entry computed while that query is planned): keep it. */
    ExResultStreamFn outer = st->stream;
    void *outer_ctx = st->stream_ctx;
    bool outer_blocks = st->rows_in_blocks;
    bool outer_client = st->is_client_stream;
    st->arena = arena;
    st->stream = fn;
    st->stream_ctx = fn_ctx;
    st->rows_in_blocks = false;
    bool outer_sub = st->is_sub_run;
    st->is_sub_run = true;
    st->is_client_stream = false;
    run_query(st, root, &plan, NULL);
    st->is_sub_run = outer_sub;
    pl_stage_plan_fini(&plan);
    st->stream = outer;
    st->stream_ctx = outer_ctx;
    st->rows_in_blocks = outer_blocks;
    st->is_client_stream = outer_client;
    st->arena = stmt_arena;
    (void)err; /* run_query reports into st->err, which is the binder's err */
    return st->err->code;
}

/* A binder for the statement: its arena, catalog, text and parameters. */
static PlBinder stmt_binder(Stmt *st)
{
    return (PlBinder){.arena = st->arena,
                      .cat = st->s->cat,
                      .sql = st->sql,
                      .params = st->params,
                      .err = st->err};
}

/* stmt_binder for a query: it may read system tables (snapshots kept in the
 * statement), settings, and, with_cache, the session's cache. */
static PlBinder query_binder(Stmt *st, bool with_cache)
{
    PlBinder b = stmt_binder(st);
    b.keep = &st->temps;
    b.cfg = &st->s->cfg;
    b.cache = with_cache ? st->s->cache : NULL;
    b.kept = with_cache ? st->s->keep : NULL;
    return b;
}

static PlNode *bind(Stmt *st, const PsSelect *sel)
{
    PlBinder b = query_binder(st, true);
    if (st->insert_defaults != NULL) {
        b.insert_values = sel;
        b.insert_defaults = st->insert_defaults;
        b.n_insert_defaults = st->n_insert_defaults;
    }
    b.notes = &st->notes;
    if (pl_materialize_recursive(&b, sel, run_for_binder, st) != CM_OK) {
        pl_temps_free(b.temps);
        return NULL;
    }
    /* The tables live until the statement ends: the plan scans them. */
    PlTemp **tail = &st->temps;
    while (*tail != NULL) {
        tail = &(*tail)->next;
    }
    *tail = b.temps;
    PlNode *root = pl_bind_select(&b, sel);
    root = root ? pl_optimize(&st->cache, root) : NULL;
    if (root == NULL && st->err->code == CM_OK) {
        /* an allocation that failed without a word: never a statement that
         * "succeeds" with nothing */
        cm_err_set(st->err, CM_OOM, -1, "out of memory");
    }
    return root;
}

static CmStatus stmt_select(Stmt *st)
{
    PlNode *root = bind(st, st->ast->select);
    if (root == NULL) {
        return st->err->code;
    }
    PlStagePlan plan;
    ExResult *rows = NULL;
    const PlExecOpts *o = st->opts;
    if (o != NULL && o->stream != NULL) {
        /* The client takes the rows as they come: nothing is kept. */
        if (o->start(o->stream_ctx, root->n_cols, root->names, root->types, st->err) != CM_OK) {
            return st->err->code;
        }
        st->stream = o->stream;
        st->stream_ctx = o->stream_ctx;
        st->is_client_stream = true;
    } else {
        /* The client's rows may be larger than memory: they go to the block
         * store, which moves them to disk under pressure. */
        st->rows_in_blocks = true;
    }
    if (run_query(st, root, &plan, &rows) == CM_OK) {
        st->res = result_new(root->n_cols, root->names, st->err);
        if (st->res != NULL) {
            st->res->rows = rows;
            rows = NULL;
        }
    }
    ex_result_free(rows);
    pl_stage_plan_fini(&plan);
    return st->err->code;
}

/* ---- SHOW TABLES, DESCRIBE ---------------------------------------------------------- */

static CmStatus stmt_show(Stmt *st)
{
    const PsSelect *sel = st->ast->select;
    ExResult *rows;
    if (st->ast->kind == PS_ST_SHOW_TABLES) {
        const char *name = "name";
        rows = pl_show_tables(st->s->cat, st->err);
        st->res = rows ? result_new(1, &name, st->err) : NULL;
    } else {
        /* DESCRIBE t is DESCRIBE SELECT * FROM t, with t's constraints and defaults */
        PlNode *root = bind(st, sel);
        if (root == NULL) {
            return st->err->code;
        }
        const StEntry *e = NULL;
        const char *schema = sel->from != NULL ? sel->from->schema.schema : NULL;
        if (sel->from != NULL && sel->from->kind == PS_FROM_TABLE && sel->targets->n == 1 &&
            ((const PsTarget *)sel->targets->items[0])->expr->kind == PS_EX_STAR &&
            (schema == NULL || strcmp(schema, "information_schema") != 0)) {
            e = st_catalog_find(st->s->cat, sel->from->name);
        }
        rows = pl_describe(root->n_cols, root->names, root->types,
                           e != NULL && e->kind == ST_ENTRY_TABLE ? e->table : NULL, st->err);
        st->res = rows ? result_new(PL_DESCRIBE_COLS, pl_describe_names, st->err) : NULL;
    }
    if (st->res == NULL) {
        ex_result_free(rows);
        return st->err->code;
    }
    st->res->rows = rows;
    return CM_OK;
}

/* ---- EXPLAIN ----------------------------------------------------------------------- */

typedef struct Lines {
    ExResult *rows;
    CmBatch batch;
    CmErr *err;
} Lines;

static void add_line(void *ctx, const char *line)
{
    Lines *l = ctx;
    if (l->err->code != CM_OK) {
        return;
    }
    cm_batch_reset(&l->batch);
    ((CmStr *)l->batch.cols[0].data)[0] = cm_str_make(line, (uint32_t)strlen(line));
    l->batch.n_rows = 1;
    ex_result_append(l->rows, &l->batch, l->err);
}

static CmStatus set_value_text(Stmt *st, const PsExpr *v, char *buf, size_t cap);

/* Appends an EXPLAIN line to a PlTextBuf, leaving out the adaptive
 * decisions: the plan's text alone, kept whole for comparing two plans. */
static void add_text(void *ctx, const char *line)
{
    if (strncmp(line, "Adaptive: ", 10) != 0) {
        pl_text_lit(ctx, line);
        pl_text_put(ctx, "\n", 1);
    }
}

/* Whether the adaptive rules changed what EXPLAIN shows of the plan: a
 * coalesce changes only how many tasks read an exchange, and then the plan as
 * first built says nothing the final one does not.  (Out of memory counts as
 * a change: the initial plan is shown then, as it always was.) */
static bool plans_differ(const PlStagePlan *initial, const PlStagePlan *final)
{
    PlTextBuf a = {0}, b = {0};
    pl_explain_plan(initial, false, add_text, &a);
    pl_explain_plan(final, false, add_text, &b);
    bool differ =
        a.is_oom || b.is_oom || a.len != b.len || (a.len > 0 && memcmp(a.buf, b.buf, a.len));
    cm_free(a.buf);
    cm_free(b.buf);
    return differ;
}

/* Each shared subtree once, before the plan that scans it (SHARED SCAN #k). */
static void explain_shared(Stmt *st, Lines *lines)
{
    for (int k = 0; k < st->cache.n_shared && st->err->code == CM_OK; k++) {
        const PlShared *s = &st->cache.shared[k];
        add_line(lines, cm_arena_printf(st->arena, "Shared #%d (computed once, used %d times):",
                                        k + 1, s->uses));
        PlStagePlan plan = {0};
        if (pl_physical_plan(st->arena, s->plan, &st->s->cfg, NULL, &plan, st->err) == CM_OK) {
            pl_explain_plan(&plan, false, add_line, lines);
        }
        pl_stage_plan_fini(&plan);
    }
    /* and each repeated subtree that the cost rule computes at each use, with why */
    for (int k = 0; k < st->cache.n_declined && st->err->code == CM_OK; k++) {
        const PlDeclined *d = &st->cache.declined[k];
        add_line(lines,
                 d->is_past_memory
                     ? cm_arena_printf(st->arena,
                                       "Not shared (computed at each of its %d uses: its %.0f rows "
                                       "pass a quarter of memory_limit, and writing them out and "
                                       "reading them back, %.0f rows, costs more than the %.0f "
                                       "rows of work it would save):",
                                       d->uses, d->rows, d->rows * (1 + d->uses),
                                       d->work * (d->uses - 1))
                     : cm_arena_printf(st->arena,
                                       "Not shared (computed at each of its %d uses: keeping its "
                                       "%.0f rows costs more than the %.0f rows of work it would "
                                       "save):",
                                       d->uses, d->rows, d->work));
        PlStagePlan plan = {0};
        if (pl_physical_plan(st->arena, d->plan, &st->s->cfg, NULL, &plan, st->err) == CM_OK) {
            pl_explain_plan(&plan, false, add_line, lines);
        }
        pl_stage_plan_fini(&plan);
    }
    if (st->cache.n_shared > 0 || st->cache.n_declined > 0) {
        add_line(lines, "Plan:");
    }
}

/* EXPLAIN (ANALYZE, FORMAT HTML): the stage timeline as the one row. */
static void add_timeline(Stmt *st, const PlStagePlan *plan, const PlStagePlan *initial,
                         Lines *lines)
{
    const PsStmt *inner = st->ast->inner;
    PlTimelineIn in = {
        .plan = plan,
        .initial = initial,
        .sql = cm_arena_strndup(st->arena, st->sql + inner->src_off, (size_t)inner->src_len),
        .n_notes = st->cache.n_events,
        .notes = st->cache.events};
    char *doc = pl_timeline_html(&in);
    if (doc == NULL) {
        cm_err_set(st->err, CM_OOM, -1, "out of memory writing EXPLAIN");
        return;
    }
    add_line(lines, doc);
    cm_free(doc);
}

/* EXPLAIN ANALYZE's stream: the rows are counted by the plan's RESULT and
 * dropped, so that showing a query's run never holds its whole result. */
static CmStatus drop_rows(void *ctx, const CmBatch *b, CmErr *err)
{
    (void)ctx;
    (void)b;
    (void)err;
    return CM_OK;
}

static CmStatus stmt_explain(Stmt *st)
{
    const PsStmt *inner = st->ast->inner;
    bool analyze = st->ast->analyze;
    long long t0 = cm_now_ns();
    if (inner->kind != PS_ST_SELECT) {
        return cm_err_set(st->err, CM_BIND, inner->src_off, "EXPLAIN supports queries only");
    }
    st->cache.is_plan_only = !analyze;
    PlNode *root = bind(st, inner->select);
    if (root == NULL) {
        return st->err->code;
    }
    bool json = false, html = false;
    for (int i = 0; st->ast->options != NULL && i < st->ast->options->n; i++) {
        const PsOption *o = st->ast->options->items[i];
        char text[32] = "true";
        if (o->value != NULL && set_value_text(st, o->value, text, sizeof text) != CM_OK) {
            return st->err->code;
        }
        if (!strcmp(o->name, "format")) {
            if (strcasecmp(text, "json") != 0 && strcasecmp(text, "text") != 0 &&
                strcasecmp(text, "html") != 0) {
                return cm_err_set(st->err, CM_BIND, o->value->src_off,
                                  "EXPLAIN format must be text, json or html");
            }
            json = strcasecmp(text, "json") == 0;
            html = strcasecmp(text, "html") == 0;
        } else if (strcmp(o->name, "analyze") != 0) {
            return cm_err_set(st->err, CM_BIND, st->ast->src_off, "unknown EXPLAIN option '%s'",
                              o->name);
        }
    }
    if (html && !analyze) {
        return cm_err_set(st->err, CM_BIND, st->ast->src_off,
                          "EXPLAIN (FORMAT HTML) needs ANALYZE: the timeline shows a run");
    }
    /* EXPLAIN ANALYZE also shows the plan as first built when the adaptive
     * optimizer changed it: planning is deterministic, so planning again
     * without running gives exactly the plan the run started from. */
    PlStagePlan plan = {0}, initial = {0};
    CmStatus rc = pl_physical_plan(st->arena, root, &st->s->cfg, st->s->keep,
                                   analyze ? &initial : &plan, st->err);
    if (rc == CM_OK && analyze) {
        st->stream = drop_rows;
        st->stream_ctx = NULL;
        rc = run_query(st, root, &plan, NULL);
        plan.statement_ns = cm_now_ns() - t0;
    }
    bool changed = analyze && plan.n_decisions > 0 && plans_differ(&initial, &plan);
    CmType t = cm_type_varchar(-1, false);
    const char *name = "explain";
    Lines lines = {.err = st->err};
    if (rc == CM_OK && (st->res = result_new(1, &name, st->err)) != NULL &&
        (lines.rows = ex_result_new(1, &t, st->err)) != NULL &&
        cm_batch_init(&lines.batch, 1, &t, st->err) == CM_OK) {
        if (html) {
            add_timeline(st, &plan, changed ? &initial : NULL, &lines);
        } else if (json) {
            char *doc = pl_explain_json(&plan, analyze);
            char *first = changed ? pl_explain_json(&initial, false) : NULL;
            if (doc == NULL || (changed && first == NULL)) {
                cm_err_set(st->err, CM_OOM, -1, "out of memory writing EXPLAIN");
            } else if (changed) {
                /* The final document's members, then "initial_plan": {...} last, so
                 * that the first of each counter a reader finds is the run's. */
                size_t n = strlen(doc);
                while (n > 0 && doc[n - 1] != '}') {
                    n--;
                }
                char *both = n == 0 ? NULL
                                    : cm_arena_printf(st->arena, "%.*s,\n\"initial_plan\": %s}",
                                                      (int)(n - 1), doc, first);
                if (both == NULL) {
                    cm_err_set(st->err, CM_OOM, -1, "out of memory writing EXPLAIN");
                } else {
                    add_line(&lines, both);
                }
            } else {
                add_line(&lines, doc);
            }
            cm_free(doc);
            cm_free(first);
        } else {
            if (changed) {
                add_line(&lines, "Initial plan:");
                pl_explain_plan(&initial, false, add_line, &lines);
                add_line(&lines, "Final plan:");
            }
            explain_shared(st, &lines);
            pl_explain_plan(&plan, analyze, add_line, &lines);
            for (int i = 0; analyze && i < st->cache.n_events; i++) {
                add_line(&lines, cm_arena_printf(st->arena, "Cache: %s", st->cache.events[i]));
            }
            for (int i = 0; analyze && i < st->notes.n; i++) {
                add_line(&lines, st->notes.lines[i]);
            }
            /* the memory mode's decision for this statement (the auto controller
             * moves the boundary now, so the line shows the move) */
            const char *mem = analyze ? pl_memmode_step(&st->mem_start, st->arena) : NULL;
            st->is_mem_stepped = analyze;
            if (mem != NULL) {
                add_line(&lines, cm_arena_printf(st->arena, "Memory mode: %s", mem));
            }
            if (analyze) {
                pl_explain_total(&plan, add_line, &lines);
            }
        }
        cm_batch_fini(&lines.batch);
        st->res->rows = lines.rows;
    }
    pl_stage_plan_fini(&plan);
    pl_stage_plan_fini(&initial);
    return st->err->code;
}

/* ---- DDL ---------------------------------------------------------------------------- */

static const char *stmt_text(const Stmt *st, const PsStmt *ast)
{
    return cm_arena_strndup(st->arena, st->sql + ast->src_off, (size_t)ast->src_len);
}

static CmStatus check_new_name(Stmt *st, const char *name, bool if_not_exists, bool *skip)
{
    *skip = false;
    const StEntry *e = st_catalog_find(st->s->cat, name);
    if (e == NULL) {
        return CM_OK;
    }
    if (st->ast->or_replace) {
        /* replaced once the new one is built; only by the same kind of object */
        bool is_table = st->ast->kind == PS_ST_CREATE_TABLE;
        if (e->kind != (is_table ? ST_ENTRY_TABLE : ST_ENTRY_VIEW)) {
            return cm_err_set(st->err, CM_BIND, st->ast->src_off,
                              "'%s' is not a %s: OR REPLACE cannot replace it", name,
                              is_table ? "table" : "view");
        }
        return CM_OK;
    }
    if (if_not_exists) {
        *skip = true;
        return CM_OK;
    }
    return cm_err_set(st->err, CM_BIND, st->ast->src_off, "table or view '%s' already exists",
                      name);
}

/* Where a statement's rows go as its query produces them (ExResultStreamFn). */
typedef struct Appender {
    StTable *t;
    StTable *written; /* RETURNING (INSERT): the rows written go here too, or NULL */
    int64_t n_rows;   /* rows appended to t */
} Appender;

static CmStatus append_batch(void *ctx, const CmBatch *b, CmErr *err)
{
    Appender *a = ctx;
    CmBatch view = *b;
    view.n_cols = a->t->n_cols;
    if (st_table_check(a->t, &view, err) != CM_OK || st_table_append(a->t, &view, err) != CM_OK) {
        return err->code;
    }
    a->n_rows += view.n_rows;
    return a->written != NULL ? st_table_append(a->written, &view, err) : CM_OK;
}

/* RETURNING: a table of the target's columns for the rows the statement
 * writes (Appender.written), or NULL (no RETURNING, or err set).  Owned. */
static StTable *written_table(Stmt *st, const StTable *target)
{
    if (st->ast->returning == NULL) {
        return NULL;
    }
    return st_table_new(target->name, target->n_cols, target->cols, st->err);
}

/* RETURNING: runs the statement's SELECT list over the rows it wrote
 * (`written`, standing for the target in FROM), and makes them its result
 * with `changes`.  Runs before the write is kept, so an error here undoes it. */
static CmStatus returning(Stmt *st, StTable *written, int64_t changes)
{
    PlTemp temp = {.name = st->ast->table, .table = written};
    PlBinder b = query_binder(st, true);
    b.temps = &temp;
    PlNode *root = pl_bind_returning(&b, st->ast->returning);
    if (root == NULL) {
        return st->err->code;
    }
    PlStagePlan plan;
    ExResult *rows = NULL;
    if (run_query(st, root, &plan, &rows) == CM_OK &&
        (st->res = result_new(root->n_cols, root->names, st->err)) != NULL) {
        st->res->rows = rows;
        st->res->changes = changes;
        rows = NULL;
    }
    ex_result_free(rows);
    pl_stage_plan_fini(&plan);
    return st->err->code;
}

/* Runs `root`, handing its batches to fn(ctx) as they come (in the result's
 * order); st->err tells how it went. */
static CmStatus run_streamed(Stmt *st, const PlNode *root, ExResultStreamFn fn, void *ctx)
{
    PlStagePlan plan;
    st->stream = fn;
    st->stream_ctx = ctx;
    run_query(st, root, &plan, NULL);
    st->stream = NULL;
    pl_stage_plan_fini(&plan);
    return st->err->code;
}

/* Runs `root`, appending its rows to a->t as they come.  On failure the rows
 * appended are truncated away. */
static CmStatus run_into(Stmt *st, const PlNode *root, Appender *a)
{
    int64_t before = a->t->n_rows;
    if (run_streamed(st, root, append_batch, a) != CM_OK) {
        st_table_truncate(a->t, before);
    }
    return st->err->code;
}

/* Does the plan scan t anywhere?  Iterative: plans may be deep chains. */
static bool reads_table(Stmt *st, const PlNode *root, const StTable *t, bool *reads)
{
    int cap = 64, n = 0;
    const PlNode **todo = cm_arena_alloc(st->arena, sizeof(PlNode *) * (size_t)cap);
    *reads = false;
    if (todo == NULL) {
        return false;
    }
    todo[n++] = root;
    while (n > 0 && !*reads) {
        const PlNode *x = todo[--n];
        *reads = x->kind == PL_GET && x->table == t;
        if (n + 2 + x->n_inputs > cap) {
            int grown = (n + 2 + x->n_inputs) * 2;
            const PlNode **g = cm_arena_alloc(st->arena, sizeof(PlNode *) * (size_t)grown);
            if (g == NULL) {
                return false;
            }
            memcpy(g, todo, sizeof(PlNode *) * (size_t)n);
            todo = g;
            cap = grown;
        }
        if (x->child != NULL) {
            todo[n++] = x->child;
        }
        if (x->right != NULL) {
            todo[n++] = x->right;
        }
        for (int i = 0; i < x->n_inputs; i++) {
            todo[n++] = x->inputs[i];
        }
    }
    return true;
}

/* Appends rows (block mode or not) to t, all or none. */
static CmStatus append_rows(Stmt *st, StTable *t, ExResult *rows)
{
    int64_t before = t->n_rows;
    for (int pass = 0; pass < 2; pass++) { /* check every row, then append */
        if (pass == 1 && st_table_reserve(t, ex_result_n_rows(rows), st->err) != CM_OK) {
            return st->err->code;
        }
        for (int i = 0; i < ex_result_n_batches(rows); i++) {
            const CmBatch *b = ex_result_pin(rows, i, st->err);
            if (b == NULL) {
                break;
            }
            if (pass == 0) {
                st_table_check(t, b, st->err);
            } else {
                st_table_append(t, b, st->err);
            }
            ex_result_unpin(rows, i);
            if (st->err->code != CM_OK) {
                break;
            }
        }
        if (st->err->code != CM_OK) {
            st_table_truncate(t, before);
            return st->err->code;
        }
    }
    return CM_OK;
}

/* The entry CREATE TEMP just added is listed as temporary (information_schema). */
static void mark_temp(Stmt *st)
{
    StEntry *e = st_catalog_find(st->s->cat, st->ast->name);
    if (e != NULL) {
        e->is_temp = st->ast->temporary;
    }
}

/* Appends name to buf at *n, in double quotes unless it is a plain lower-case
 * identifier. */
static void put_ident(char *buf, size_t cap, size_t *n, const char *name)
{
    bool is_plain = name[0] != '\0' && !(name[0] >= '0' && name[0] <= '9');
    for (const char *c = name; *c != '\0' && is_plain; c++) {
        is_plain = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_';
    }
    if (is_plain) {
        *n += (size_t)snprintf(buf + *n, *n < cap ? cap - *n : 0, "%s", name);
        return;
    }
    *n += (size_t)snprintf(buf + *n, *n < cap ? cap - *n : 0, "\"");
    for (const char *c = name; *c != '\0'; c++) {
        *n += (size_t)snprintf(buf + *n, *n < cap ? cap - *n : 0, *c == '"' ? "\"\"" : "%c", *c);
    }
    *n += (size_t)snprintf(buf + *n, *n < cap ? cap - *n : 0, "\"");
}

/* What .schema shows for a CREATE TABLE ... AS: the table's columns and
 * their types (the query's text would not say them), in the arena; NULL on
 * OOM. */
static const char *ctas_sql(Stmt *st, const StColumn *cols, int n_cols)
{
    size_t cap = 64 + strlen(st->ast->name) * 2;
    for (int i = 0; i < n_cols; i++) {
        cap += strlen(cols[i].name) * 2 + 48;
    }
    char *buf = cm_arena_alloc(st->arena, cap), tn[64];
    if (buf == NULL) {
        return NULL;
    }
    size_t n = (size_t)snprintf(buf, cap, "CREATE %sTABLE ", st->ast->temporary ? "TEMP " : "");
    put_ident(buf, cap, &n, st->ast->name);
    for (int i = 0; i < n_cols; i++) {
        n += (size_t)snprintf(buf + n, cap - n, i == 0 ? "(" : ", ");
        put_ident(buf, cap, &n, cols[i].name);
        n += (size_t)snprintf(buf + n, cap - n, " %s", cm_type_name(cols[i].type, tn, sizeof tn));
    }
    snprintf(buf + n, cap - n, ")");
    return buf;
}

static CmStatus create_as(Stmt *st)
{
    PlNode *root = bind(st, st->ast->select);
    if (root == NULL) {
        return st->err->code;
    }
    StColumn *cols = cm_arena_zalloc(st->arena, sizeof(StColumn) * (size_t)(root->n_cols + 1));
    if (cols == NULL) {
        return cm_err_set(st->err, CM_OOM, -1, "out of memory");
    }
    for (int i = 0; i < root->n_cols; i++) {
        for (int j = 0; j < i; j++) {
            if (strcmp(root->names[i], root->names[j]) == 0) {
                return cm_err_set(st->err, CM_BIND, st->ast->select->src_off,
                                  "column '%s' appears twice: give the columns distinct names",
                                  root->names[i]);
            }
        }
        cols[i].name = (char *)root->names[i];
        cols[i].type = root->types[i].id == CM_T_NULL ? cm_type_make(CM_T_INT32) : root->types[i];
    }
    /* The table is filled as the query runs and joins the catalog at the end. */
    StTable *t = st_table_new(st->ast->name, root->n_cols, cols, st->err);
    Appender app = {.t = t};
    if (t != NULL && !st->ast->temporary) {
        st_table_set_home(t, st_persist_home(st->s->persist));
    }
    if (t == NULL || run_into(st, root, &app) != CM_OK) {
        st_table_free(t);
        return st->err->code;
    }
    /* the catalog takes t, also when it fails */
    const char *sql = ctas_sql(st, cols, root->n_cols);
    if (sql == NULL) {
        st_table_free(t);
        return cm_err_set(st->err, CM_OOM, -1, "out of memory");
    }
    if (st_catalog_add_table(st->s->cat, t, sql, st->ast->or_replace, st->err) == CM_OK) {
        mark_temp(st);
    }
    return st->err->code;
}

/* Resolves the column list "a,b" of a table-level PRIMARY KEY or UNIQUE into
 * column numbers (key, room for n). */
static CmStatus key_columns(Stmt *st, const StColumn *cols, int n, const char *list,
                            const char *what, int *key, int *n_key)
{
    *n_key = 0;
    for (const char *k = list; *k != '\0';) {
        const char *end = strchr(k, ',');
        size_t len = end ? (size_t)(end - k) : strlen(k);
        int found = -1;
        for (int i = 0; i < n && found < 0; i++) {
            found = strlen(cols[i].name) == len && strncmp(cols[i].name, k, len) == 0 ? i : -1;
        }
        if (found < 0) {
            return cm_err_set(st->err, CM_BIND, st->ast->src_off,
                              "column '%.*s' of the %s is not a column of '%s'", (int)len, k, what,
                              st->ast->name);
        }
        if (*n_key < n) {
            key[(*n_key)++] = found;
        }
        k = end ? end + 1 : k + len;
    }
    return CM_OK;
}

static CmStatus create_table(Stmt *st)
{
    const PsStmt *a = st->ast;
    bool skip;
    if (check_new_name(st, a->name, a->if_not_exists, &skip) != CM_OK || skip) {
        return st->err->code;
    }
    if (a->select != NULL) {
        return create_as(st);
    }
    if (a->columns == NULL || a->columns->n == 0) {
        /* constraints alone: CREATE TABLE t (UNIQUE (a, c)) */
        return cm_err_set(st->err, CM_BIND, a->src_off, "table '%s' must have at least one column",
                          a->name);
    }
    int n = a->columns->n;
    StColumn *cols = cm_arena_zalloc(st->arena, sizeof(StColumn) * (size_t)(n + 1));
    if (cols == NULL) {
        return cm_err_set(st->err, CM_OOM, -1, "out of memory");
    }
    PlBinder b = stmt_binder(st);
    for (int i = 0; i < n; i++) {
        const PsColumnDef *d = a->columns->items[i];
        for (int j = 0; j < i; j++) {
            if (strcmp(cols[j].name, d->name) == 0) {
                return cm_err_set(st->err, CM_BIND, d->src_off, "column '%s' is declared twice",
                                  d->name);
            }
        }
        cols[i].name = (char *)d->name;
        cols[i].not_null = d->not_null || d->primary_key;
        cols[i].primary_key = d->primary_key;
        if (pl_type_from_ast(d->type, &cols[i].type, st->err) != CM_OK) {
            return st->err->code;
        }
        cols[i].has_default = d->default_value != NULL;
        if (cols[i].has_default &&
            pl_bind_default(&b, d->default_value, cols[i].type, &cols[i].default_value) != CM_OK) {
            return st->err->code;
        }
    }
    int n_pk = a->primary_key != NULL;
    for (int i = 0; i < n; i++) {
        n_pk += ((const PsColumnDef *)a->columns->items[i])->primary_key;
    }
    if (n_pk > 1) {
        return cm_err_set(st->err, CM_BIND, a->src_off,
                          "table \"%s\" has more than one primary key", a->name);
    }
    /* A table-level PRIMARY KEY (a, b) marks its columns (the planner reads
     * keys to order joins) and makes them NOT NULL, as a column-level one does. */
    int *key = cm_arena_alloc(st->arena, sizeof(int) * (size_t)(n + 1));
    int n_key = 0;
    if (key == NULL) {
        return cm_err_set(st->err, CM_OOM, -1, "out of memory");
    }
    if (a->primary_key != NULL) {
        if (key_columns(st, cols, n, a->primary_key, "PRIMARY KEY", key, &n_key) != CM_OK) {
            return st->err->code;
        }
        for (int i = 0; i < n_key; i++) {
            cols[key[i]].primary_key = cols[key[i]].not_null = true;
        }
    }
    StTable *t = st_table_new(a->name, n, cols, st->err);
    if (t == NULL) {
        return st->err->code;
    }
    if (!st->ast->temporary) {
        st_table_set_home(t, st_persist_home(st->s->persist));
    }
    if (a->primary_key == NULL) {
        for (int i = 0; i < n; i++) {
            key[n_key] = i;
            n_key += cols[i].primary_key;
        }
    }
    if (n_key > 0) {
        st_table_add_index(t, NULL, ST_INDEX_PRIMARY, n_key, key, st->err);
    }
    for (int i = 0; i < n && st->err->code == CM_OK; i++) {
        if (((const PsColumnDef *)a->columns->items[i])->unique) {
            st_table_add_index(t, NULL, ST_INDEX_UNIQUE, 1, &i, st->err);
        }
    }
    for (int i = 0; a->uniques != NULL && i < a->uniques->n && st->err->code == CM_OK; i++) {
        if (key_columns(st, cols, n, a->uniques->items[i], "UNIQUE", key, &n_key) == CM_OK) {
            st_table_add_index(t, NULL, ST_INDEX_UNIQUE, n_key, key, st->err);
        }
    }
    if (st->err->code != CM_OK) {
        st_table_free(t);
        return st->err->code;
    }
    if (st_catalog_add_table(st->s->cat, t, stmt_text(st, a), a->or_replace, st->err) == CM_OK) {
        mark_temp(st);
    }
    return st->err->code;
}

static CmStatus create_view(Stmt *st)
{
    const PsStmt *a = st->ast;
    bool skip;
    if (check_new_name(st, a->name, a->if_not_exists, &skip) != CM_OK || skip) {
        return st->err->code;
    }
    if (a->n_params > 0) {
        /* the view keeps its text, which would have no values when it is read */
        return cm_err_set(st->err, CM_BIND, a->src_off, "a view cannot have parameters");
    }
    st->cache.is_reusing = false; /* bound for its columns only: nothing runs */
    PlNode *root = bind(st, a->select);
    if (root == NULL) {
        return st->err->code;
    }
    int n_cols = a->columns ? a->columns->n : 0;
    if (n_cols > root->n_cols) {
        return cm_err_set(st->err, CM_BIND, a->src_off,
                          "view '%s' names %d columns but its query has %d", a->name, n_cols,
                          root->n_cols);
    }
    const char *select_sql =
        cm_arena_strndup(st->arena, st->sql + a->select->src_off, (size_t)a->select->src_len);
    if (st_catalog_add_view(st->s->cat, a->name, select_sql, n_cols,
                            a->columns ? (const char *const *)a->columns->items : NULL,
                            stmt_text(st, a), a->or_replace, st->err) == CM_OK) {
        mark_temp(st);
    }
    return st->err->code;
}

static CmStatus drop(Stmt *st)
{
    const PsStmt *a = st->ast;
    StEntry *e = st_catalog_find(st->s->cat, a->name);
    StEntryKind want = !strcmp(a->object, "view")    ? ST_ENTRY_VIEW
                       : !strcmp(a->object, "index") ? ST_ENTRY_INDEX
                                                     : ST_ENTRY_TABLE;
    if (e == NULL) {
        return a->if_exists ? CM_OK
                            : cm_err_set(st->err, CM_BIND, a->src_off, "unknown %s '%s'", a->object,
                                         a->name);
    }
    if (e->kind != want) {
        return cm_err_set(st->err, CM_BIND, a->src_off, "'%s' is not %s %s", a->name,
                          want == ST_ENTRY_INDEX ? "an" : "a", a->object);
    }
    st_catalog_drop(st->s->cat, a->name);
    return CM_OK;
}

/* The index is built over the table's rows and kept with the table (see
 * storage/index.h); the catalog entry gives it a name for DROP INDEX.  Queries
 * do not use it yet: they scan. */
static CmStatus create_index(Stmt *st)
{
    const PsStmt *a = st->ast;
    bool skip;
    if (check_new_name(st, a->name, a->if_not_exists, &skip) != CM_OK || skip) {
        return st->err->code;
    }
    StEntry *e = st_catalog_find(st->s->cat, a->table);
    if (e == NULL || e->kind != ST_ENTRY_TABLE) {
        return cm_err_set(st->err, CM_BIND, a->src_off, "unknown table '%s'", a->table);
    }
    int n_keys = a->columns ? a->columns->n : 0;
    int *key = cm_arena_alloc(st->arena, sizeof(int) * (size_t)(n_keys + 1));
    if (key == NULL) {
        return cm_err_set(st->err, CM_OOM, -1, "out of memory");
    }
    for (int i = 0; i < n_keys; i++) {
        const char *c = a->columns->items[i];
        int j = 0;
        while (j < e->table->n_cols && strcmp(e->table->cols[j].name, c) != 0) {
            j++;
        }
        if (j == e->table->n_cols) {
            return cm_err_set(st->err, CM_BIND, a->src_off, "unknown column '%s'", c);
        }
        key[i] = j;
    }
    if (st_table_add_index(e->table, a->name, a->unique ? ST_INDEX_UNIQUE : ST_INDEX_PLAIN, n_keys,
                           key, st->err) != CM_OK) {
        return st->err->code;
    }
    if (st_catalog_add_index(st->s->cat, a->name, a->table, stmt_text(st, a), st->err) != CM_OK) {
        st_table_drop_index(e->table, a->name);
    }
    return st->err->code;
}

/* ---- ANALYZE ---------------------------------------------------------------------------- */

/* Recomputes the column statistics of one table, or of every table.  As in
 * PostgreSQL a view has none and is skipped; an unknown name is an error. */
static CmStatus analyze(Stmt *st)
{
    const PsStmt *a = st->ast;
    if (a->name != NULL) {
        StEntry *e = st_catalog_find(st->s->cat, a->name);
        if (e == NULL || (e->kind != ST_ENTRY_TABLE && e->kind != ST_ENTRY_VIEW)) {
            return cm_err_set(st->err, CM_BIND, a->name_off, "unknown table '%s'", a->name);
        }
        return e->kind == ST_ENTRY_TABLE ? st_table_analyze(e->table, st->err) : CM_OK;
    }
    for (int i = 0; i < st_catalog_count(st->s->cat); i++) {
        StEntry *e = st_catalog_entry(st->s->cat, i);
        if (e->kind == ST_ENTRY_TABLE && st_table_analyze(e->table, st->err) != CM_OK) {
            return st->err->code;
        }
    }
    return CM_OK;
}

/* ---- UPDATE and DELETE ------------------------------------------------------------------ */

/* True when column c is a key column of one of t's indexes. */
static bool is_indexed(const StTable *t, int c)
{
    for (int i = 0; i < t->n_indexes; i++) {
        const int *keys = st_index_key_cols(t->indexes[i]);
        for (int k = 0; k < st_index_n_keys(t->indexes[i]); k++) {
            if (keys[k] == c) {
                return true;
            }
        }
    }
    return false;
}

/* True when an UPDATE's SET list names a key column of one of t's indexes. */
static bool sets_index_key(const StTable *t, const PsStmt *a)
{
    for (int i = 0; a->kind == PS_ST_UPDATE && a->sets != NULL && i < a->sets->n; i++) {
        const char *name = ((const PsSetClause *)a->sets->items[i])->column;
        for (int c = 0; c < t->n_cols; c++) {
            if (strcmp(t->cols[c].name, name) == 0 && is_indexed(t, c)) {
                return true;
            }
        }
    }
    return false;
}

/* UPDATE or DELETE in place (executor/update.h) when the statement allows
 * it: no FROM, no RETURNING, no subquery.  True when it ran (st->err tells
 * how), false when the statement needs a plan (by_address). */
static bool in_place(Stmt *st, StTable *t)
{
    const PsStmt *a = st->ast;
    if (a->returning != NULL) {
        return false;
    }
    PlBinder b = query_binder(st, true);
    ExExpr *pred = NULL;
    ExExpr **set = cm_arena_zalloc(st->arena, sizeof(ExExpr *) * (size_t)(t->n_cols + 1));
    if (set == NULL) {
        cm_err_set(st->err, CM_OOM, -1, "out of memory");
        return true;
    }
    if (!pl_bind_update_values(&b, t, a, &pred, set)) {
        return st->err->code != CM_OK;
    }
    int64_t changes = 0;
    if (ensure_pool(st->s, st->err) != CM_OK) {
        return true;
    }
    if ((a->kind == PS_ST_DELETE
             ? ex_delete_in_place(t, pred, st->s->pool, &st->s->interrupt, &changes, st->err)
             : ex_update_in_place(t, pred, set, sets_index_key(t, a), st->s->pool,
                                  &st->s->interrupt, &changes, st->err)) == CM_OK) {
        empty_result(st, changes);
    }
    return true;
}

/* ExResultStreamFn into ExChanges. */
static CmStatus changes_batch(void *ctx, const CmBatch *b, CmErr *err)
{
    return ex_changes_add(ctx, b, err);
}

/* UPDATE or DELETE by row address (executor/update.h, ExChanges) when it
 * cannot run in place: a FROM, a subquery, or RETURNING.  The plan yields
 * only the rows changed; the chunks they are in get copies, the others stay.
 * st->err tells how it went. */
static void by_address(Stmt *st, StTable *t)
{
    const PsStmt *a = st->ast;
    PlBinder b = query_binder(st, true);
    b.update_target = a->from != NULL ? t : NULL;
    bool *in_plan = cm_arena_zalloc(st->arena, sizeof(bool) * (size_t)(t->n_cols + 1));
    PlNode *root = in_plan != NULL ? pl_bind_changes(&b, t, a, in_plan) : NULL;
    StTable *written = root != NULL ? written_table(st, t) : NULL;
    ExChanges *ch = root != NULL && st->err->code == CM_OK
                        ? ex_changes_new(t, a->kind == PS_ST_DELETE, sets_index_key(t, a), in_plan,
                                         written, st->err)
                        : NULL;
    if (in_plan == NULL) {
        cm_err_set(st->err, CM_OOM, -1, "out of memory");
    }
    if (ch != NULL) {
        run_streamed(st, root, changes_batch, ch);
    }
    int64_t changes = 0;
    if (ch != NULL && st->err->code == CM_OK) {
        /* RETURNING runs before the rows change: an error there changes nothing */
        if ((written == NULL || returning(st, written, written->n_rows) == CM_OK) &&
            ex_changes_apply(ch, &changes, st->err) == CM_OK && written == NULL) {
            empty_result(st, changes);
        }
    }
    ex_changes_free(ch);
    st_table_free(written);
}

static CmStatus update_or_delete(Stmt *st)
{
    const PsStmt *a = st->ast;
    StEntry *e = st_catalog_find(st->s->cat, a->table);
    if (e == NULL || e->kind != ST_ENTRY_TABLE) {
        return cm_err_set(st->err, CM_BIND, a->src_off, "unknown table '%s'", a->table);
    }
    if (!in_place(st, e->table)) {
        by_address(st, e->table);
    }
    return st->err->code;
}

/* ---- ALTER TABLE ------------------------------------------------------------------------- */

static int column_index(const StTable *t, const char *name)
{
    for (int i = 0; i < t->n_cols; i++) {
        if (strcmp(t->cols[i].name, name) == 0) {
            return i;
        }
    }
    return -1;
}

/* ADD and DROP COLUMN: the rows are copied into a new table of the new shape
 * (with the old indexes, their columns renumbered), which replaces the old one
 * once every row is in; a failure leaves the old table as it was. `drop` is
 * the column dropped, or -1 to add `add` at the end. */
static CmStatus reshape(Stmt *st, StEntry *e, int drop, const StColumn *add)
{
    StTable *old = e->table;
    int n = old->n_cols + (drop >= 0 ? -1 : 1);
    StColumn *cols = cm_arena_zalloc(st->arena, sizeof(StColumn) * (size_t)(n + 1));
    int *from = cm_arena_alloc(st->arena, sizeof(int) * (size_t)(n + 1));
    int *to = cm_arena_alloc(st->arena, sizeof(int) * (size_t)(old->n_cols + 1));
    CmValue *fill = cm_arena_zalloc(st->arena, sizeof(CmValue) * (size_t)(n + 1));
    const char **names = cm_arena_alloc(st->arena, sizeof(char *) * (size_t)(n + 1));
    if (cols == NULL || from == NULL || to == NULL || fill == NULL || names == NULL) {
        return cm_err_set(st->err, CM_OOM, -1, "out of memory");
    }
    int k = 0;
    for (int c = 0; c < old->n_cols; c++) {
        to[c] = c == drop ? -1 : k;
        if (c != drop) {
            cols[k] = old->cols[c];
            from[k++] = c;
        }
    }
    if (add != NULL) {
        cols[k] = *add;
        from[k] = -1;
        fill[k] =
            add->has_default ? add->default_value : (CmValue){.type = add->type, .is_null = true};
        fill[k].type = add->type;
    }
    for (int c = 0; c < n; c++) {
        names[c] = cols[c].name;
    }
    StTable *t = st_table_new(old->name, n, cols, st->err);
    if (t != NULL) {
        st_table_set_home(t, old->home); /* a temporary table has none */
    }
    for (int i = 0; t != NULL && i < old->n_indexes && st->err->code == CM_OK; i++) {
        const StIndex *ix = old->indexes[i];
        int nk = st_index_n_keys(ix);
        int *keys = cm_arena_alloc(st->arena, sizeof(int) * (size_t)nk);
        if (keys == NULL) {
            cm_err_set(st->err, CM_OOM, -1, "out of memory");
            break;
        }
        for (int j = 0; j < nk; j++) {
            keys[j] = to[st_index_key_cols(ix)[j]];
        }
        st_table_add_index(t, st_index_name(ix), st_index_kind(ix), nk, keys, st->err);
    }
    PlBinder b = query_binder(st, true);
    PlNode *root =
        t != NULL && st->err->code == CM_OK ? pl_bind_reshape(&b, old, n, from, fill, names) : NULL;
    Appender app = {.t = t};
    if (root != NULL && run_into(st, root, &app) == CM_OK &&
        st_table_check_keys(t, false, st->err) == CM_OK) {
        e->table = t;
        st_table_release(old); /* a transaction keeps it for ROLLBACK */
    } else {
        st_table_free(t);
    }
    return st->err->code;
}

static CmStatus alter_table(Stmt *st)
{
    const PsStmt *a = st->ast;
    StEntry *e = st_catalog_find(st->s->cat, a->table);
    if (e == NULL || e->kind != ST_ENTRY_TABLE) {
        return cm_err_set(st->err, CM_BIND, a->src_off, "unknown table '%s'", a->table);
    }
    StTable *t = e->table;
    int c = a->alter == PS_ALTER_ADD_COLUMN || a->alter == PS_ALTER_RENAME_TABLE
                ? -1
                : column_index(t, a->name);
    if (c < 0 && (a->alter == PS_ALTER_RENAME_COLUMN || a->alter == PS_ALTER_DROP_COLUMN)) {
        return cm_err_set(st->err, CM_BIND, a->name_off, "unknown column '%s' in table '%s'",
                          a->name, t->name);
    }
    switch (a->alter) {
    case PS_ALTER_RENAME_TABLE:
        if (st_catalog_find(st->s->cat, a->name) != NULL) {
            return cm_err_set(st->err, CM_BIND, a->name_off, "table or view '%s' already exists",
                              a->name);
        }
        if (st_catalog_rename(st->s->cat, e, a->name, st->err) != CM_OK) {
            return st->err->code;
        }
        break;
    case PS_ALTER_RENAME_COLUMN: {
        if (column_index(t, a->name2) >= 0) {
            return cm_err_set(st->err, CM_BIND, a->name_off, "column '%s' already exists in '%s'",
                              a->name2, t->name);
        }
        char *name = cm_strdup(a->name2);
        if (name == NULL) {
            return cm_err_set(st->err, CM_OOM, -1, "out of memory");
        }
        cm_free(t->cols[c].name);
        t->cols[c].name = name;
        break;
    }
    case PS_ALTER_DROP_COLUMN:
        if (t->n_cols == 1) {
            return cm_err_set(st->err, CM_BIND, a->name_off,
                              "cannot drop '%s', the only column of '%s'", a->name, t->name);
        }
        if (is_indexed(t, c)) {
            return cm_err_set(st->err, CM_BIND, a->name_off,
                              "cannot drop '%s': a key or an index of '%s' uses it", a->name,
                              t->name);
        }
        if (reshape(st, e, c, NULL) != CM_OK) {
            return st->err->code;
        }
        break;
    case PS_ALTER_ADD_COLUMN: {
        const PsColumnDef *d = a->columns->items[0];
        StColumn col = {.name = (char *)d->name, .not_null = d->not_null};
        if (column_index(t, d->name) >= 0) {
            return cm_err_set(st->err, CM_BIND, d->src_off, "column '%s' already exists in '%s'",
                              d->name, t->name);
        }
        if (d->primary_key || d->unique) {
            return cm_err_set(st->err, CM_BIND, d->src_off,
                              "ADD COLUMN with PRIMARY KEY or UNIQUE is not supported yet");
        }
        PlBinder b = stmt_binder(st);
        if (pl_type_from_ast(d->type, &col.type, st->err) != CM_OK) {
            return st->err->code;
        }
        col.has_default = d->default_value != NULL;
        if (col.has_default &&
            pl_bind_default(&b, d->default_value, col.type, &col.default_value) != CM_OK) {
            return st->err->code;
        }
        if (col.not_null && t->n_rows > 0 && (!col.has_default || col.default_value.is_null)) {
            return cm_err_set(st->err, CM_BIND, d->src_off,
                              "column '%s' is NOT NULL without a DEFAULT, and '%s' has rows",
                              d->name, t->name);
        }
        if (reshape(st, e, -1, &col) != CM_OK) {
            return st->err->code;
        }
        break;
    }
    }
    return st_catalog_append_sql(e, stmt_text(st, a), st->err);
}

/* ---- INSERT --------------------------------------------------------------------------- */

/* INSERT ... VALUES: the cells of source column `col` are cast to the table
 * column's type in the VALUES node itself, so a value that does not convert
 * is an error at the value rather than at the statement. */
static bool cast_values_column(PlBinder *b, PlNode *values, int col, CmType to)
{
    for (int r = 0; r < values->n_rows; r++) {
        ExExpr **cell = &values->exprs[r * values->n_cols + col];
        if ((*cell = pl_cast_implicit(b, *cell, to, (*cell)->src_off)) == NULL) {
            return false;
        }
    }
    values->types[col] = to;
    return true;
}

/* The column of t each value of the INSERT's source goes to (its column list,
 * else every column in order; none for DEFAULT VALUES); in *n_src their count. */
static int *insert_targets(Stmt *st, const StTable *t, int *n_src)
{
    const PsList *cols = st->ast->columns;
    int n = st->ast->select == NULL ? 0 : cols ? cols->n : t->n_cols;
    int *target = cm_arena_alloc(st->arena, sizeof(int) * (size_t)(n + 1));
    bool *is_listed = cm_arena_zalloc(st->arena, sizeof(bool) * (size_t)(t->n_cols + 1));
    if (target == NULL || is_listed == NULL) {
        cm_err_set(st->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        target[i] = i;
        if (cols == NULL) {
            continue;
        }
        const char *name = cols->items[i];
        const PsList *named = st->ast->column_names;
        int64_t off = named != NULL && i < named->n
                          ? ((const PsSetClause *)named->items[i])->column_off
                          : st->ast->src_off;
        int col = 0;
        while (col < t->n_cols && strcmp(t->cols[col].name, name) != 0) {
            col++;
        }
        if (col == t->n_cols) {
            cm_err_set(st->err, CM_BIND, off, "unknown column '%s' in table '%s'", name, t->name);
            return NULL;
        }
        if (is_listed[col]) {
            cm_err_set(st->err, CM_BIND, off, "column '%s' is listed twice", name);
            return NULL;
        }
        is_listed[col] = true;
        target[i] = col;
    }
    *n_src = n;
    return target;
}

/* Maps the source's columns onto the table's (value i to column target[i]):
 * casts, and the columns' defaults for the rest. */
static PlNode *insert_projection(Stmt *st, StTable *t, PlNode *src, const int *target, int n_src)
{
    if (src->n_cols != n_src) {
        cm_err_set(st->err, CM_BIND, st->ast->src_off,
                   "table '%s' has %d columns to fill but %d values were supplied", t->name, n_src,
                   src->n_cols);
        return NULL;
    }
    PlNode *p = pl_node_new(st->arena, PL_PROJECT, t->n_cols);
    ExExpr **exprs = cm_arena_zalloc(st->arena, sizeof(ExExpr *) * (size_t)(t->n_cols + 1));
    if (p == NULL || exprs == NULL) {
        cm_err_set(st->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    PlBinder b = query_binder(st, false);
    for (int i = 0; i < n_src; i++) {
        if (src->kind == PL_VALUES && !cast_values_column(&b, src, i, t->cols[target[i]].type)) {
            return NULL;
        }
        ExExpr *c = ex_expr_column(st->arena, i, src->types[i]);
        exprs[target[i]] = c ? pl_cast(&b, c, t->cols[target[i]].type, st->ast->src_off) : NULL;
        if (exprs[target[i]] == NULL) {
            return NULL;
        }
    }
    for (int i = 0; i < t->n_cols; i++) {
        if (exprs[i] == NULL) {
            CmValue d = pl_column_default(&t->cols[i]);
            if ((exprs[i] = ex_expr_const(st->arena, &d)) == NULL) {
                cm_err_set(st->err, CM_OOM, -1, "out of memory");
                return NULL;
            }
        }
        p->types[i] = t->cols[i].type;
        p->names[i] = t->cols[i].name;
    }
    p->child = src;
    p->exprs = exprs;
    return p;
}

/* The source of INSERT ... DEFAULT VALUES: one row of no columns. */
static PlNode *default_row(Stmt *st)
{
    PlNode *n = pl_node_new(st->arena, PL_VALUES, 0);
    if (n == NULL) {
        cm_err_set(st->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    n->n_rows = 1;
    return n;
}

static CmStatus insert(Stmt *st)
{
    StEntry *e = st_catalog_find(st->s->cat, st->ast->table);
    if (e == NULL || e->kind != ST_ENTRY_TABLE) {
        return cm_err_set(st->err, CM_BIND, st->ast->src_off, "unknown table '%s'", st->ast->table);
    }
    int n_src = 0;
    int *target = insert_targets(st, e->table, &n_src);
    CmValue *defaults = cm_arena_alloc(st->arena, sizeof(CmValue) * (size_t)(n_src + 1));
    if (target == NULL || defaults == NULL) {
        return target ? cm_err_set(st->err, CM_OOM, -1, "out of memory") : st->err->code;
    }
    /* DEFAULT in the VALUES rows: the default of the column each value goes to. */
    for (int i = 0; i < n_src; i++) {
        defaults[i] = pl_column_default(&e->table->cols[target[i]]);
    }
    st->insert_defaults = defaults;
    st->n_insert_defaults = n_src;
    PlNode *src = st->ast->select ? bind(st, st->ast->select) : default_row(st);
    PlNode *root = src ? insert_projection(st, e->table, src, target, n_src) : NULL;
    if (root == NULL) {
        return st->err->code;
    }
    bool reads_target;
    if (!reads_table(st, root, e->table, &reads_target)) {
        return cm_err_set(st->err, CM_OOM, -1, "out of memory");
    }
    int64_t changes = 0, before = e->table->n_rows;
    StTable *written = written_table(st, e->table);
    if (st->err->code != CM_OK) {
        return st->err->code;
    }
    if (reads_target) {
        /* The query scans the table: its rows must all be in hand before the
         * table grows under the scan. */
        PlStagePlan plan;
        ExResult *rows = NULL;
        st->rows_in_blocks = true;
        if (run_query(st, root, &plan, &rows) == CM_OK &&
            append_rows(st, e->table, rows) == CM_OK) {
            changes = ex_result_n_rows(rows);
            if (written != NULL) {
                append_rows(st, written, rows);
            }
        }
        ex_result_free(rows);
        pl_stage_plan_fini(&plan);
    } else {
        Appender app = {.t = e->table, .written = written};
        run_into(st, root, &app);
        changes = app.n_rows;
    }
    if (st->err->code == CM_OK) {
        st_table_check_keys(e->table, false, st->err); /* an index too large for memory: now */
    }
    if (st->err->code == CM_OK && written != NULL) {
        returning(st, written, changes);
    } else if (st->err->code == CM_OK) {
        empty_result(st, changes);
    }
    if (st->err->code != CM_OK) {
        st_table_truncate(e->table, before);
    }
    st_table_free(written);
    return st->err->code;
}

/* ---- SET ------------------------------------------------------------------------------- */

static CmStatus set_value_text(Stmt *st, const PsExpr *v, char *buf, size_t cap)
{
    if (v->kind == PS_EX_COLUMN && v->qualifier == NULL) {
        snprintf(buf, cap, "%s", v->name);
        return CM_OK;
    }
    PlBinder b = query_binder(st, false);
    PlScope none = {0};
    ExExpr *e = pl_bind_scalar(&b, &none, v, "SET");
    e = e ? pl_cast(&b, e, cm_type_varchar(-1, false), v->src_off) : NULL;
    CmValue val;
    if (e == NULL || ex_expr_eval_const(e, st->arena, &val, st->err) != CM_OK) {
        return st->err->code;
    }
    if (val.is_null) {
        return cm_err_set(st->err, CM_BIND, v->src_off, "a setting cannot be NULL");
    }
    if (memchr(cm_str_data(&val.s), '\0', val.s.len) != NULL) {
        return cm_err_set(st->err, CM_BIND, v->src_off, "a setting cannot contain a NUL byte");
    }
    if (val.s.len >= cap) {
        return cm_err_set(st->err, CM_BIND, v->src_off, "a setting is longer than %zu bytes",
                          cap - 1);
    }
    snprintf(buf, cap, "%.*s", (int)val.s.len, cm_str_data(&val.s));
    return CM_OK;
}

static CmStatus set_stmt(Stmt *st)
{
    char value[256];
    if (set_value_text(st, st->ast->value, value, sizeof value) != CM_OK) {
        return st->err->code;
    }
    if (cm_config_set(&st->s->cfg, st->ast->name, value, st->err) != CM_OK) {
        st->err->off = st->ast->src_off;
    }
    return st->err->code;
}

/* ---- COPY -------------------------------------------------------------------------------- */

typedef struct CopyOpts {
    char delimiter, quote, escape; /* escape 0: the quote (as StCsvOptions) */
    bool header, has_header;       /* has_header: HEADER was given */
    bool auto_detect;              /* COPY FROM: sniff what was not given (DuckDB) */
    char null_str[64];
    int64_t max_line_size;                      /* bytes of the longest record COPY FROM reads */
    int64_t delimiter_off, quote_off, null_off; /* where each was given; -1 if not */
} CopyOpts;

/* Reads an option's constant value as text. */
static CmStatus option_text(Stmt *st, const PsOption *o, char *buf, size_t cap)
{
    if (o->value == NULL) {
        snprintf(buf, cap, "true");
        return CM_OK;
    }
    return set_value_text(st, o->value, buf, cap);
}

static CmStatus one_char(Stmt *st, const PsOption *o, const char *text, char *out)
{
    if (strcmp(text, "\\t") == 0 || strcmp(text, "tab") == 0) {
        *out = '\t';
        return CM_OK;
    }
    if (strlen(text) != 1) {
        return cm_err_set(st->err, CM_BIND, o->value ? o->value->src_off : st->ast->src_off,
                          "COPY option %s must be a single character", o->name);
    }
    *out = text[0];
    return CM_OK;
}

/* Rejects delimiter, quote and NULL text that cannot be told apart when read
 * back (PostgreSQL's checks); the caret points at the option given last. */
static CmStatus check_copy_options(Stmt *st, const CopyOpts *co)
{
    int64_t dq_off = co->delimiter_off > co->quote_off ? co->delimiter_off : co->quote_off;
    int64_t dn_off = co->delimiter_off > co->null_off ? co->delimiter_off : co->null_off;
    int64_t qn_off = co->quote_off > co->null_off ? co->quote_off : co->null_off;
    if (co->delimiter == '\n' || co->delimiter == '\r') {
        return cm_err_set(st->err, CM_BIND, co->delimiter_off,
                          "COPY delimiter cannot be a newline or carriage return");
    }
    if (co->quote == '\n' || co->quote == '\r') {
        return cm_err_set(st->err, CM_BIND, co->quote_off,
                          "COPY quote cannot be a newline or carriage return");
    }
    if (co->quote != 0 && co->quote == co->delimiter) {
        return cm_err_set(st->err, CM_BIND, dq_off, "COPY delimiter and quote must be different");
    }
    if (strpbrk(co->null_str, "\r\n") != NULL) {
        return cm_err_set(st->err, CM_BIND, co->null_off,
                          "COPY NULL text cannot hold a newline or carriage return");
    }
    if (strchr(co->null_str, co->delimiter) != NULL) {
        return cm_err_set(st->err, CM_BIND, dn_off,
                          "COPY delimiter must not appear in the NULL text");
    }
    if (co->quote != 0 && strchr(co->null_str, co->quote) != NULL) {
        return cm_err_set(st->err, CM_BIND, qn_off, "COPY quote must not appear in the NULL text");
    }
    return CM_OK;
}

static CmStatus copy_options(Stmt *st, CopyOpts *co)
{
    *co = (CopyOpts){.delimiter = ',',
                     .quote = '"',
                     .max_line_size = ST_CSV_MAX_LINE_SIZE,
                     .delimiter_off = -1,
                     .quote_off = -1,
                     .null_off = -1};
    for (int i = 0; st->ast->options != NULL && i < st->ast->options->n; i++) {
        const PsOption *o = st->ast->options->items[i];
        char text[64];
        bool b;
        if (option_text(st, o, text, sizeof text) != CM_OK) {
            return st->err->code;
        }
        int64_t off = o->value ? o->value->src_off : st->ast->src_off;
        if (!strcmp(o->name, "delimiter") || !strcmp(o->name, "delim") || !strcmp(o->name, "sep")) {
            if (one_char(st, o, text, &co->delimiter) != CM_OK) {
                return st->err->code;
            }
            co->delimiter_off = off;
        } else if (!strcmp(o->name, "quote")) {
            co->quote_off = off;
            if (text[0] == '\0') {
                co->quote = 0;
            } else if (one_char(st, o, text, &co->quote) != CM_OK) {
                return st->err->code;
            }
        } else if (!strcmp(o->name, "header")) {
            if (!cm_parse_bool(text, strlen(text), &b)) {
                return cm_err_set(st->err, CM_BIND, off, "COPY option header must be a boolean");
            }
            co->header = b;
            co->has_header = true;
        } else if (!strcmp(o->name, "auto_detect")) {
            if (st->ast->is_to) {
                return cm_err_set(st->err, CM_BIND, off,
                                  "COPY option auto_detect is for reading: COPY ... FROM");
            }
            if (!cm_parse_bool(text, strlen(text), &b)) {
                return cm_err_set(st->err, CM_BIND, off,
                                  "COPY option auto_detect must be a boolean");
            }
            co->auto_detect = b;
        } else if (!strcmp(o->name, "null")) {
            snprintf(co->null_str, sizeof co->null_str, "%s", text);
            co->null_off = off;
        } else if (!strcmp(o->name, "max_line_size")) {
            if (!cm_parse_int64(text, strlen(text), &co->max_line_size) || co->max_line_size <= 0) {
                return cm_err_set(st->err, CM_BIND, off,
                                  "COPY option max_line_size must be a positive integer");
            }
        } else if (!strcmp(o->name, "format")) {
            if (strcmp(text, "csv") != 0 && strcmp(text, "text") != 0) {
                return cm_err_set(st->err, CM_BIND, off, "COPY format '%s' is not supported", text);
            }
        } else {
            return cm_err_set(st->err, CM_BIND, off, "unknown COPY option '%s'", o->name);
        }
    }
    return check_copy_options(st, co);
}

/* COPY FROM with AUTO_DETECT: the delimiter, quote, escape and header that
 * the options leave open, sniffed from the file's first records as read_csv
 * does (storage/csv.h), with the table's column types as the types. */
static CmStatus copy_sniff(Stmt *st, const StTable *t, const int *cols, int n, CopyOpts *co)
{
    if (strcmp(st->ast->path, "/dev/stdin") == 0) {
        /* the sample would take the bytes the load then misses */
        return cm_err_set(st->err, CM_BIND, st->ast->src_off,
                          "COPY FROM '/dev/stdin' cannot AUTO_DETECT: give its options instead");
    }
    CmType *fixed = cm_arena_alloc(st->arena, sizeof(CmType) * (size_t)(n + 1));
    if (fixed == NULL) {
        return cm_err_set(st->err, CM_OOM, -1, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        fixed[i] = t->cols[cols[i]].type;
    }
    StCsvSniff s = {.has_delim = co->delimiter_off >= 0,
                    .has_quote = co->quote_off >= 0,
                    .has_header = co->has_header,
                    .null_str = co->null_str,
                    .sample_size = ST_CSV_SNIFF_SAMPLE,
                    .n_fixed = n,
                    .fixed = fixed,
                    .delimiter = co->delimiter,
                    .quote = co->quote,
                    .header = co->header};
    char *sample = NULL;
    size_t n_sample = 0;
    bool is_eof = false;
    if (st_csv_sample(st->ast->path, s.sample_size + 1, st->arena, &sample, &n_sample, &is_eof,
                      st->err) != CM_OK ||
        st_csv_sniff(sample, n_sample, is_eof, &s, st->arena, st->err) != CM_OK) {
        st->err->off = st->err->off < 0 ? st->ast->src_off : st->err->off;
        return st->err->code;
    }
    co->delimiter = s.delimiter;
    co->quote = s.quote;
    co->escape = s.escape == s.quote ? 0 : s.escape;
    co->header = s.header;
    return CM_OK;
}

/* COPY FROM's progress: the share of the file parsed (StCsvOptions.on_read). */
typedef struct CopyRead {
    ExProgress *progress;
    int64_t file_bytes; /* 0: unknown (a pipe) */
} CopyRead;

static void copy_read(void *ctx, int64_t bytes)
{
    const CopyRead *r = ctx;
    if (r->file_bytes > 0) {
        ex_progress_advance(r->progress, (double)bytes / (double)r->file_bytes);
    }
}

static CmStatus copy_from(Stmt *st, StTable *t, CopyOpts *co)
{
    const PsList *names = st->ast->columns;
    int n = names ? names->n : t->n_cols;
    int *cols = cm_arena_alloc(st->arena, sizeof(int) * (size_t)(n + 1));
    if (cols == NULL) {
        return cm_err_set(st->err, CM_OOM, -1, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        cols[i] = i;
        if (names != NULL) {
            for (cols[i] = 0; cols[i] < t->n_cols; cols[i]++) {
                if (strcmp(t->cols[cols[i]].name, (const char *)names->items[i]) == 0) {
                    break;
                }
            }
            if (cols[i] == t->n_cols) {
                return cm_err_set(st->err, CM_BIND, st->ast->src_off, "unknown column '%s'",
                                  (const char *)names->items[i]);
            }
        }
    }
    if (co->auto_detect && copy_sniff(st, t, cols, n, co) != CM_OK) {
        return st->err->code;
    }
    StCsvOptions opt = {.delimiter = co->delimiter,
                        .quote = co->quote,
                        .escape = co->escape,
                        .header = co->header,
                        .null_str = co->null_str,
                        .max_line_size = co->max_line_size,
                        .n_cols = n,
                        .cols = cols,
                        .interrupt = &st->s->interrupt};
    struct stat file;
    CopyRead read = {.progress = st->s->progress,
                     .file_bytes = stat(st->ast->path, &file) == 0 && S_ISREG(file.st_mode)
                                       ? (int64_t)file.st_size
                                       : 0};
    opt.on_read = copy_read;
    opt.on_read_ctx = &read;
    ex_progress_stage_begin(st->s->progress, 1, 1, 1.0);
    int64_t rows = 0;
    if (ensure_pool(st->s, st->err) != CM_OK ||
        st_csv_load(t, st->ast->path, &opt, st->s->pool, &rows, st->err) != CM_OK) {
        return st->err->code;
    }
    empty_result(st, rows);
    return st->err->code;
}

/* Where COPY ... TO writes the rows as its query produces them (ExResultStreamFn). */
typedef struct CopyWriter {
    StCsvOut *out;
    int64_t n_rows;
} CopyWriter;

static CmStatus write_batch(void *ctx, const CmBatch *b, CmErr *err)
{
    CopyWriter *w = ctx;
    w->n_rows += b->n_rows;
    return st_csv_out_write(w->out, b, err);
}

/* COPY ... TO: the rows are written through StOutFile as the query produces
 * them, in the order it would have returned them, so the result is never held
 * whole (docs/memory.md); a failed query or write leaves an existing file as it
 * was. */
static CmStatus copy_to(Stmt *st, const PlNode *root, const CopyOpts *co)
{
    PlStagePlan plan;
    StOutFile out;
    if (st_outfile_open(&out, st->ast->path, st->err) != CM_OK) {
        st->err->off = st->ast->path_off;
        return st->err->code;
    }
    StCsvOutOptions opt = {.delimiter = co->delimiter,
                           .quote = co->quote,
                           .null_str = co->null_str,
                           .name = st->ast->path};
    CopyWriter w = {.out = st_csv_out_new(out.f, &opt, (int)st->s->cfg.threads, st->err)};
    if (w.out == NULL) {
        st_outfile_abort(&out);
        return st->err->code;
    }
    for (int c = 0; co->header && c < root->n_cols; c++) {
        fprintf(out.f, "%s%s", c ? (char[]){co->delimiter, 0} : "", root->names[c]);
    }
    if (co->header) {
        fputc('\n', out.f);
    }
    st->stream = write_batch;
    st->stream_ctx = &w;
    run_query(st, root, &plan, NULL);
    st->stream = NULL;
    pl_stage_plan_fini(&plan);
    if (st->err->code == CM_OK) {
        st_csv_out_finish(w.out, st->err);
    }
    st_csv_out_free(w.out);
    if (st->err->code != CM_OK) {
        st_outfile_abort(&out);
    } else if (st_outfile_commit(&out, st->err) != CM_OK) {
        st->err->off = st->ast->path_off;
    }
    if (st->err->code == CM_OK) {
        empty_result(st, w.n_rows);
    }
    return st->err->code;
}

static CmStatus copy(Stmt *st)
{
    const PsStmt *a = st->ast;
    CopyOpts co;
    if (strlen(a->path) != (size_t)a->path_len) {
        return cm_err_set(st->err, CM_BIND, a->path_off, "COPY file name contains a NUL byte");
    }
    if (copy_options(st, &co) != CM_OK) {
        return st->err->code;
    }
    if (a->select != NULL) {
        PlNode *root = bind(st, a->select);
        return root ? copy_to(st, root, &co) : st->err->code;
    }
    StEntry *e = st_catalog_find(st->s->cat, a->table);
    if (e == NULL || e->kind != ST_ENTRY_TABLE) {
        return cm_err_set(st->err, CM_BIND, a->src_off, "unknown table '%s'", a->table);
    }
    if (!a->is_to) {
        return copy_from(st, e->table, &co);
    }
    PlBinder b = query_binder(st, false);
    PlNode *root = pl_bind_scan(&b, e->table);
    return root ? copy_to(st, root, &co) : st->err->code;
}

/* ---- transactions -------------------------------------------------------------------------- */

/*
 * BEGIN opens a transaction on the catalog (st_catalog_begin: entries copied,
 * tables marked, no row copied).  Its statements run as outside one, each
 * atomic on its own, but a directory database writes nothing until COMMIT,
 * which saves the whole catalog with one manifest swap (st_persist_commit);
 * ROLLBACK, closing the connection or a crash discards it.  As in PostgreSQL,
 * any error inside the transaction (the failed statement itself changed
 * nothing) aborts it: the statements that follow are refused until ROLLBACK,
 * or COMMIT, which then rolls back and says so with an error.  BEGIN inside a
 * transaction is an error (so it aborts it); COMMIT and ROLLBACK outside one
 * are errors.  Connections of one database share the catalog: while one has
 * a transaction open, the others may read but not write, ANALYZE or BEGIN;
 * what they read is the last committed state, a snapshot of the catalog as
 * BEGIN found it (pl_session_exec_opts; storage/catalog.h), so the
 * transaction's writes stay its own until COMMIT.
 */

/* Rolls the catalog back, then drops the cached rows (planner/cache.h) that
 * may come from the transaction's writes: those reading any name there was
 * before or is after the rollback; entries reading a name it removed go. */
static void rollback_txn(PlSession *s)
{
    int n = st_catalog_count(s->cat);
    char **names = cm_calloc((size_t)n + 1, sizeof(char *));
    for (int i = 0; names != NULL && i < n; i++) {
        names[i] = cm_strdup(st_catalog_entry(s->cat, i)->name);
    }
    st_catalog_rollback(s->cat);
    s->in_txn = false;
    s->is_txn_aborted = false;
    bool is_complete = names != NULL;
    for (int i = 0; names != NULL && i < n; i++) {
        is_complete = is_complete && names[i] != NULL;
        if (names[i] != NULL) {
            pl_cache_invalidate(s->cache, names[i], st_catalog_find(s->cat, names[i]) == NULL);
        }
        cm_free(names[i]);
    }
    cm_free(names);
    if (!is_complete) {
        pl_cache_invalidate_all(s->cache); /* out of memory: forget every entry's rows */
    }
    for (int i = 0; i < st_catalog_count(s->cat); i++) {
        pl_cache_invalidate(s->cache, st_catalog_entry(s->cat, i)->name, false);
    }
}

void pl_session_rollback(PlSession *s)
{
    if (s->in_txn) {
        rollback_txn(s);
    }
}

static CmStatus commit_txn(Stmt *st)
{
    PlSession *s = st->s;
    const PsStmt *a = st->ast;
    if (s->is_txn_aborted) {
        rollback_txn(s);
        return cm_err_set(st->err, CM_BIND, a->src_off,
                          "COMMIT rolled the transaction back: a statement in it failed");
    }
    StPersist *p = s->persist;
    if (p != NULL && !st_persist_readonly(p) &&
        (ensure_pool(s, st->err) != CM_OK ||
         st_persist_commit(p, s->cat, s->pool, st->err) != CM_OK)) {
        rollback_txn(s); /* the directory still holds the state before BEGIN */
        return st->err->code;
    }
    st_catalog_commit(s->cat);
    s->in_txn = false;
    return CM_OK;
}

static CmStatus transaction_stmt(Stmt *st)
{
    PlSession *s = st->s;
    const PsStmt *a = st->ast;
    if (a->kind == PS_ST_BEGIN) {
        if (s->in_txn) {
            return cm_err_set(st->err, CM_BIND, a->src_off,
                              "a transaction is already active: BEGIN does not nest");
        }
        if (s->live_cat != NULL) {
            return cm_err_set(st->err, CM_BIND, a->src_off,
                              "another connection to this database has a transaction open");
        }
        if (st_catalog_begin(s->cat, st->err) == CM_OK) {
            s->in_txn = true;
            s->is_txn_aborted = false;
        }
        return st->err->code;
    }
    const char *what = a->kind == PS_ST_COMMIT ? "COMMIT" : "ROLLBACK";
    if (!s->in_txn) {
        return cm_err_set(st->err, CM_BIND, a->src_off, "cannot %s: no transaction is active",
                          what);
    }
    if (a->kind == PS_ST_COMMIT) {
        return commit_txn(st);
    }
    rollback_txn(s);
    return CM_OK;
}

/* ---- dispatch ---------------------------------------------------------------------------- */

/* True for the statements that may change the catalog or a table's rows:
 * those a directory database commits, and a read-only one refuses. */
static bool is_write(const PsStmt *a)
{
    switch (a->kind) {
    case PS_ST_CREATE_TABLE:
    case PS_ST_CREATE_VIEW:
    case PS_ST_CREATE_INDEX:
    case PS_ST_DROP:
    case PS_ST_INSERT:
    case PS_ST_ALTER:
    case PS_ST_UPDATE:
    case PS_ST_DELETE:
        return true;
    case PS_ST_COPY:
        return !a->is_to;
    default:
        return false;
    }
}

static CmStatus dispatch(Stmt *st)
{
    const PsStmt *a = st->ast;
    if (st->s->is_txn_aborted && a->kind != PS_ST_COMMIT && a->kind != PS_ST_ROLLBACK) {
        return cm_err_set(st->err, CM_BIND, a->src_off,
                          "current transaction is aborted: statements are ignored until "
                          "ROLLBACK (or COMMIT, which rolls back)");
    }
    /* ANALYZE writes statistics, which the committed state's tables share */
    if ((is_write(a) || a->kind == PS_ST_ANALYZE) && st->s->live_cat != NULL) {
        return cm_err_set(st->err, CM_BIND, a->src_off,
                          "another connection to this database has a transaction open: "
                          "writes wait for its COMMIT or ROLLBACK");
    }
    /* The one table, view or index name a statement writes or reads by name. */
    if (a->schema.schema != NULL) {
        /* As PostgreSQL: DROP .. IF EXISTS of a name in no schema drops nothing. */
        CmErr quiet;
        cm_err_init(&quiet);
        bool is_quiet = a->kind == PS_ST_DROP && a->if_exists;
        if (pl_check_schema(&a->schema, is_quiet ? &quiet : st->err) != CM_OK) {
            return st->err->code;
        }
    }
    bool is_done = false;
    if (pl_cache_before(st->s->cache, st->s->cat, a, &is_done, st->err) != CM_OK || is_done) {
        return st->err->code;
    }
    switch (a->kind) {
    case PS_ST_SELECT:
        return stmt_select(st);
    case PS_ST_EXPLAIN:
        return stmt_explain(st);
    case PS_ST_ALTER:
        return alter_table(st);
    case PS_ST_SHOW_TABLES:
    case PS_ST_DESCRIBE:
        return stmt_show(st);
    case PS_ST_CREATE_TABLE:
        return create_table(st);
    case PS_ST_CREATE_VIEW:
        return create_view(st);
    case PS_ST_CREATE_INDEX:
        return create_index(st);
    case PS_ST_DROP:
        return drop(st);
    case PS_ST_INSERT:
        return insert(st);
    case PS_ST_SET:
        return set_stmt(st);
    case PS_ST_RESET:
        if (cm_config_reset(&st->s->cfg, a->name, st->err) != CM_OK) {
            st->err->off = a->src_off;
        }
        return st->err->code;
    case PS_ST_BEGIN:
    case PS_ST_COMMIT:
    case PS_ST_ROLLBACK:
        return transaction_stmt(st);
    case PS_ST_UPDATE:
    case PS_ST_DELETE:
        return update_or_delete(st);
    case PS_ST_COPY:
        return copy(st);
    case PS_ST_CACHE:
    case PS_ST_UNCACHE:
    case PS_ST_CLEAR_CACHE:
        if (a->kind == PS_ST_CLEAR_CACHE) {
            pl_keep_clear(st->s->keep); /* the partitioned forms are cached data too */
        }
        return pl_cache_exec(&st->cache, a, st->sql);
    case PS_ST_ANALYZE:
        return analyze(st);
    }
    return cm_err_set(st->err, CM_INTERNAL, a->src_off, "unknown statement kind");
}

/* Runs the statement, then, on a directory database, commits what it wrote:
 * a statement reported done is durable.  Inside a transaction, COMMIT does.
 * ANALYZE's statistics are saved too, except on a read-only database, where
 * they stay this process's. */
static CmStatus dispatch_durable(Stmt *st)
{
    StPersist *p = st->s->persist;
    bool is_analyze = st->ast->kind == PS_ST_ANALYZE;
    if (p == NULL || !(is_write(st->ast) || is_analyze) || (is_analyze && st_persist_readonly(p))) {
        return dispatch(st);
    }
    if (st_persist_readonly(p)) {
        return cm_err_set(st->err, CM_IO, st->ast->src_off,
                          "database '%s' is open read-only: the statement would change it",
                          st_persist_dir(p));
    }
    if (dispatch(st) != CM_OK || st->s->in_txn || ensure_pool(st->s, st->err) != CM_OK) {
        return st->err->code;
    }
    return st_persist_commit(p, st->s->cat, st->s->pool, st->err);
}

CmStatus pl_session_exec(PlSession *s, const char *sql, size_t len, size_t *off, PlResult **res,
                         CmErr *err)
{
    return pl_session_exec_opts(s, sql, len, off, NULL, res, err);
}

CmStatus pl_session_exec_opts(PlSession *s, const char *sql, size_t len, size_t *off,
                              const PlExecOpts *opts, PlResult **res, CmErr *err)
{
    *res = NULL;
    CmArena arena;
    cm_arena_init(&arena, 64 * 1024);
    Stmt st = {.s = s,
               .arena = &arena,
               .sql = sql,
               .err = err,
               .opts = opts,
               .params = opts != NULL ? opts->params : NULL};
    /* Rows streamed to the client cannot be taken back: no second run. */
    bool may_retry = opts == NULL || opts->stream == NULL;
    /* An interrupt stops the statement running when it comes, not the next one. */
    atomic_store(&s->interrupt, false);
    /* One limit for the process: the session's setting as of this statement. */
    cm_mem_set_limit(s->cfg.memory_limit);
    pl_memmode_apply(&s->cfg);
    pl_memmode_observe(&st.mem_start);
    st_blocks_configure(s->cfg.temp_directory, s->cfg.max_temp_directory_size);
    sh_disk_codec_set(s->cfg.shuffle_compression == CM_COMPRESSION_NONE   ? SH_BLOCK_CODEC_NONE
                      : s->cfg.shuffle_compression == CM_COMPRESSION_ZSTD ? SH_BLOCK_CODEC_ZSTD
                      : s->cfg.shuffle_compression == CM_COMPRESSION_LZ4  ? SH_BLOCK_CODEC_LZ4
                                                                          : SH_COMPRESS_AUTO);
    if (!s->cfg.exchange_reuse) {
        pl_keep_clear(s->keep);
    }
    /* Another connection has a transaction open: this statement reads the
     * state it committed last, never the transaction's writes (snapshot
     * isolation; the statements run one at a time, so the snapshot stays true
     * while this one runs).  Its keeper and the cache compare tables by id and
     * version, which the snapshot's tables have as committed. */
    if (!s->in_txn && st_catalog_in_txn(s->cat)) {
        StCatalog *snap = st_catalog_snapshot(s->cat, err);
        if (snap == NULL) {
            cm_arena_fini(&arena);
            return err->code;
        }
        s->live_cat = s->cat;
        s->cat = snap;
    }
    st.cache = (PlCacheCtx){.cache = s->cache,
                            .cat = s->cat,
                            .arena = &arena,
                            .run = run_for_binder,
                            .run_ctx = &st,
                            .is_reusing = s->cfg.subplan_reuse,
                            .err = err};
    bool has_statement = false; /* its progress began: white space and comments have none */
    if (ps_parse_next(&arena, sql, len, off, &st.ast, err) == CM_OK && st.ast != NULL &&
        (st.spare = result_new(0, NULL, err)) != NULL) {
        ex_progress_begin(s->progress, &s->cfg);
        has_statement = true;
        if (dispatch_durable(&st) != CM_OK && may_retry &&
            (pl_cache_ctx_lost_rows(&st.cache) || st.is_kept_lost)) {
            /* MEMORY_ONLY cached rows it read were dropped while it ran (storage
             * evicted them to make room), or a kept partitioned form's file was
             * lost: a failed statement changed nothing, so it runs again with
             * those subtrees computed where they stand (and those tables
             * exchanged again: the keeper has dropped the forms) */
            st.is_kept_lost = false;
            pl_result_free(st.res);
            st.res = NULL;
            pl_temps_free(st.temps);
            st.temps = NULL;
            pl_cache_ctx_fini(&st.cache);
            st.cache.n_events = 0;
            st.cache.n_memory_only_reads = 0;
            st.cache.is_in_place = true;
            st.insert_defaults = NULL;
            st.n_insert_defaults = 0;
            cm_err_init(err);
            dispatch_durable(&st);
        }
        if (err->code == CM_OK && st.res == NULL) {
            empty_result(&st, -1);
        }
        if (!st.is_mem_stepped) {
            pl_memmode_step(&st.mem_start, NULL);
        }
        if (err->code == CM_OK) {
            pl_cache_after(s->cache, st.ast);
        }
        /* partitioned forms of tables the statement wrote or dropped go */
        pl_keep_sweep(s->keep);
        if (err->code == CM_OK) {
            *res = st.res;
            st.res = NULL;
        }
    }
    if (err->code != CM_OK && s->in_txn) {
        s->is_txn_aborted = true; /* a syntax error too, as in PostgreSQL */
    }
    pl_result_free(st.res);
    pl_result_free(st.spare);
    pl_temps_free(st.temps);
    pl_cache_ctx_fini(&st.cache);
    cm_arena_fini(&arena);
    if (s->live_cat != NULL) {
        st_catalog_free(s->cat);
        s->cat = s->live_cat;
        s->live_cat = NULL;
    }
    if (has_statement) {
        ex_progress_finish(s->progress, err->code == CM_OK);
    }
    return err->code;
}
