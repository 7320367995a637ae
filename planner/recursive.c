/*
 * recursive.c - WITH RECURSIVE, by iteration to a fixpoint.
 *
 * A recursive CTE is `anchor UNION [ALL] step`, where `step` reads the CTE.
 * The anchor's rows start both the result and the working set; each round
 * binds and runs `step` with the CTE's name reading the working set, and the
 * rows it returns (for UNION, only rows never seen before) are added to the
 * result and become the next working set.  It ends when a round adds nothing.
 * Each round is an ordinary staged query, so rounds run in parallel inside;
 * the loop itself is sequential, as the semantics require.  Recursive CTEs
 * are computed before the statement binds (so only at its top level).  For
 * UNION, "never seen" is a hash set while memory grants it, then an EXCEPT
 * against the result per round (add_unseen), which spills.
 */
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/hash.h"
#include "common/value.h"
#include "executor/func.h"
#include "planner/bind/binder.h"

#define MAX_ROUNDS 100000
#define SEEN_CHUNK ((size_t)64 * 1024)

/* Does the query read a table called `name` in any FROM (not looking into
 * expression subqueries)? */
static bool reads(const PsFrom *f, const char *name);

static bool select_reads(const PsSelect *s, const char *name)
{
    if (s == NULL) {
        return false;
    }
    if (s->kind == PS_SEL_SETOP) {
        return select_reads(s->left, name) || select_reads(s->right, name);
    }
    return s->kind == PS_SEL_SIMPLE && s->from != NULL && reads(s->from, name);
}

static bool reads(const PsFrom *f, const char *name)
{
    switch (f->kind) {
    case PS_FROM_TABLE:
        return strcmp(f->name, name) == 0;
    case PS_FROM_SUBQUERY:
        return select_reads(f->subquery, name);
    case PS_FROM_JOIN:
        return reads(f->left, name) || reads(f->right, name);
    case PS_FROM_FUNCTION:
        return false; /* constant arguments only */
    }
    return false;
}

/* ---- the set of rows seen (UNION without ALL) ------------------------------------ */

/* The rows seen, each by its whole serialized bytes (row_key), while they fit:
 * the slot arrays and the keys' arena are execution memory grown with
 * cm_mem_grow (the set is spillable).  When a growth is refused, the set is
 * dropped and the CTE goes on without it: each round's rows are set against
 * the result by an EXCEPT, which spills (see materialize). */
typedef struct Seen {
    uint64_t *hashes; /* slot: hash | 1, 0 = empty */
    char **keys;      /* slot: the row's serialized bytes after their length (uint32_t), in arena */
    uint64_t mask;
    int64_t n;
    CmArena arena; /* not accounted itself: keys_held covers it */
    CmMemRes res;  /* "WITH RECURSIVE rows seen" */
    int64_t slots; /* bytes of the slot arrays, held on res */
    int64_t keys_held; /* bytes held on res for the arena: what it handed out, plus a chunk */
} Seen;

static void seen_init(Seen *s)
{
    memset(s, 0, sizeof *s);
    cm_mem_res_init(&s->res, CM_MEM_EXECUTION, "WITH RECURSIVE rows seen", NULL);
    cm_arena_init(&s->arena, SEEN_CHUNK);
}

/* A row's bytes as a key: grown as a row needs, never cut (two rows that
 * differ only past a fixed size would be one row). */
typedef struct Key {
    char *buf; /* owned */
    size_t cap, len;
} Key;

static bool key_room(Key *k, size_t more, CmErr *err)
{
    if (k->len + more <= k->cap) {
        return true;
    }
    size_t cap = k->cap ? k->cap : 256;
    while (cap < k->len + more) {
        cap *= 2;
    }
    char *buf = cm_realloc(k->buf, cap);
    if (buf == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory in WITH RECURSIVE");
        return false;
    }
    k->buf = buf;
    k->cap = cap;
    return true;
}

static bool key_put(Key *k, const void *p, size_t n, CmErr *err)
{
    if (!key_room(k, n, err)) {
        return false;
    }
    memcpy(k->buf + k->len, p, n);
    k->len += n;
    return true;
}

/* A non-NULL scalar of type t at p: a string as its length and bytes, any
 * other value as its slot's bytes (DECIMAL128 and INTERVAL: all 16). */
static bool key_scalar(Key *k, CmType t, const void *p, CmErr *err)
{
    if (t.id == CM_T_VARCHAR) {
        const CmStr *str = p;
        uint32_t len = str->len;
        return key_put(k, &len, 4, err) && key_put(k, cm_str_data(str), len, err);
    }
    return key_put(k, p, cm_type_width(t), err);
}

/* Serializes row r of b after what k holds (type-aware, NULL-safe; a list
 * element by element, so that no two different rows have the same bytes). */
static bool row_key(const CmBatch *b, int r, Key *k, CmErr *err)
{
    for (int c = 0; c < b->n_cols; c++) {
        const CmVec *v = &b->cols[c];
        uint32_t p = v->kind == CM_VEC_CONST ? 0 : cm_batch_pos(b, r);
        bool is_null = cm_vec_is_null(v, p);
        if (!key_put(k, is_null ? "N" : "V", 1, err)) {
            return false;
        }
        if (is_null) {
            continue;
        }
        const char *slot = (const char *)v->data + cm_type_width(v->type) * p;
        if (v->type.id != CM_T_LIST) {
            if (!key_scalar(k, v->type, slot, err)) {
                return false;
            }
            continue;
        }
        const CmList *l = (const CmList *)slot;
        CmType elem = cm_type_elem(v->type);
        size_t w = cm_type_width(elem);
        if (!key_put(k, &l->len, 4, err)) {
            return false;
        }
        for (uint32_t i = 0; i < l->len; i++) {
            bool elem_null = cm_list_is_null(l, w, i);
            if (!key_put(k, elem_null ? "N" : "V", 1, err) ||
                (!elem_null && !key_scalar(k, elem, (const char *)l->data + w * i, err))) {
                return false;
            }
        }
    }
    return true;
}

typedef enum SeenHit { SEEN_NEW, SEEN_OLD, SEEN_FULL, SEEN_ERROR } SeenHit;

/* Makes room for n_more keys without a rehash: SEEN_NEW when there is,
 * SEEN_FULL when the memory was refused (nothing changed), SEEN_ERROR. */
static SeenHit seen_room(Seen *s, int64_t n_more, CmErr *err)
{
    if ((uint64_t)(s->n + n_more) * 2 <= s->mask + 1 && s->mask != 0) {
        return SEEN_NEW;
    }
    uint64_t n = s->mask ? (s->mask + 1) * 2 : 1024;
    while ((uint64_t)(s->n + n_more) * 2 > n) {
        n *= 2;
    }
    int64_t bytes = (int64_t)(n * (sizeof(uint64_t) + sizeof(char *)));
    if (!cm_mem_grow(&s->res, bytes)) {
        return SEEN_FULL;
    }
    uint64_t *h = cm_calloc((size_t)n, sizeof *h);
    char **k = cm_calloc((size_t)n, sizeof *k);
    if (h == NULL || k == NULL) {
        cm_free(h);
        cm_free(k);
        cm_mem_shrink(&s->res, bytes);
        cm_err_set(err, CM_OOM, -1, "out of memory in WITH RECURSIVE");
        return SEEN_ERROR;
    }
    for (uint64_t i = 0; s->hashes != NULL && i <= s->mask; i++) {
        if (s->hashes[i] != 0) {
            uint64_t j = s->hashes[i] & (n - 1);
            while (h[j] != 0) {
                j = (j + 1) & (n - 1);
            }
            h[j] = s->hashes[i];
            k[j] = s->keys[i];
        }
    }
    cm_free(s->hashes);
    cm_free(s->keys);
    cm_mem_shrink(&s->res, s->slots);
    s->slots = bytes;
    s->hashes = h;
    s->keys = k;
    s->mask = n - 1;
    return SEEN_NEW;
}

/* Adds a key whose hash (| 1) is `hash` unless it is there, in a table with
 * room for it (seen_room): SEEN_NEW, SEEN_OLD, SEEN_FULL when the memory its
 * bytes need was refused (nothing changed), SEEN_ERROR with err set. */
static SeenHit seen_put(Seen *s, const char *key, size_t len, uint64_t hash, CmErr *err)
{
    for (uint64_t j = hash & s->mask;; j = (j + 1) & s->mask) {
        if (s->hashes[j] == 0) {
            /* The arena's bytes are reserved ahead, a chunk at a time (or the
             * key's size when larger), before it takes them. */
            int64_t want = (int64_t)(s->arena.n_bytes + 4 + len + SEEN_CHUNK);
            if (want > s->keys_held) {
                int64_t more = want - s->keys_held;
                more = more > (int64_t)(4 * SEEN_CHUNK) ? more : (int64_t)(4 * SEEN_CHUNK);
                if (!cm_mem_grow(&s->res, more)) {
                    return SEEN_FULL;
                }
                s->keys_held += more;
            }
            char *stored = cm_arena_alloc(&s->arena, 4 + len);
            if (stored == NULL) {
                cm_err_set(err, CM_OOM, -1, "out of memory in WITH RECURSIVE");
                return SEEN_ERROR;
            }
            uint32_t len32 = (uint32_t)len;
            memcpy(stored, &len32, 4);
            memcpy(stored + 4, key, len);
            s->hashes[j] = hash;
            s->keys[j] = stored;
            s->n++;
            return SEEN_NEW;
        }
        uint32_t stored_len;
        if (s->hashes[j] == hash && (memcpy(&stored_len, s->keys[j], 4), stored_len == len) &&
            memcmp(s->keys[j] + 4, key, len) == 0) {
            return SEEN_OLD;
        }
    }
}

/* Frees the set; it may be finished again (a set dropped when full is). */
static void seen_fini(Seen *s)
{
    cm_arena_fini(&s->arena);
    cm_free(s->hashes);
    cm_free(s->keys);
    cm_mem_res_fini(&s->res);
    s->hashes = NULL;
    s->keys = NULL;
    s->mask = 0;
    s->n = 0;
    s->slots = 0;
    s->keys_held = 0;
}

/* ---- the outer query's filter -------------------------------------------------------- */

static bool expr_has_subquery(const PsExpr *e);

static bool order_has_subquery(const PsList *items)
{
    for (int i = 0; items != NULL && i < items->n; i++) {
        if (expr_has_subquery(((const PsOrderItem *)items->items[i])->expr)) {
            return true;
        }
    }
    return false;
}

static bool exprs_have_subquery(const PsList *items)
{
    for (int i = 0; items != NULL && i < items->n; i++) {
        if (expr_has_subquery(items->items[i])) {
            return true;
        }
    }
    return false;
}

static bool window_has_subquery(const PsWindow *w)
{
    return w != NULL && (exprs_have_subquery(w->partition_by) || order_has_subquery(w->order_by) ||
                         expr_has_subquery(w->start_off) || expr_has_subquery(w->end_off));
}

/* Does e hold a subquery anywhere (which could read the CTE)? */
static bool expr_has_subquery(const PsExpr *e)
{
    if (e == NULL) {
        return false;
    }
    if (e->subquery != NULL || e->kind == PS_EX_IN_SELECT || e->kind == PS_EX_EXISTS ||
        e->kind == PS_EX_SUBQUERY) {
        return true;
    }
    if (e->kind == PS_EX_CASE) {
        for (int i = 0; e->args != NULL && i < e->args->n; i++) {
            const PsWhen *w = e->args->items[i];
            if (expr_has_subquery(w->cond) || expr_has_subquery(w->result)) {
                return true;
            }
        }
    } else if (exprs_have_subquery(e->args)) {
        return true;
    }
    return expr_has_subquery(e->left) || expr_has_subquery(e->right) ||
           expr_has_subquery(e->escape) || expr_has_subquery(e->filter) ||
           order_has_subquery(e->agg_order) || window_has_subquery(e->over);
}

static bool targets_have_subquery(const PsList *targets)
{
    for (int i = 0; targets != NULL && i < targets->n; i++) {
        const PsTarget *t = targets->items[i];
        if (expr_has_subquery(t->expr) || targets_have_subquery(t->replace)) {
            return true;
        }
    }
    return false;
}

static bool group_has_subquery(const PsSelect *s)
{
    if (s->group_kind != PS_GROUP_SETS) {
        return exprs_have_subquery(s->group_by);
    }
    for (int i = 0; s->group_by != NULL && i < s->group_by->n; i++) {
        if (exprs_have_subquery(s->group_by->items[i])) {
            return true;
        }
    }
    return false;
}

/* Does any expression of the simple query `s` hold a subquery? */
static bool select_has_subquery(const PsSelect *s)
{
    if (expr_has_subquery(s->where) || targets_have_subquery(s->targets) || group_has_subquery(s) ||
        expr_has_subquery(s->having) || expr_has_subquery(s->qualify) ||
        exprs_have_subquery(s->distinct_on) || order_has_subquery(s->order_by) ||
        expr_has_subquery(s->limit) || expr_has_subquery(s->offset)) {
        return true;
    }
    for (int i = 0; s->windows != NULL && i < s->windows->n; i++) {
        if (window_has_subquery(((const PsWindowDef *)s->windows->items[i])->spec)) {
            return true;
        }
    }
    return false;
}

/*
 * UNION ALL only (UNION's result must hold every row seen, for add_unseen):
 * when the statement reads the recursive CTE only as `SELECT ... FROM cte
 * WHERE cond`, the rows of every round that fail cond can never reach it:
 * the rounds read the working set, never the result.  Then the result keeps
 * only the rows that pass, as each round adds them (filter(A ∪ B) is filter(A)
 * ∪ filter(B) for a condition on one row), which is what lets `WHERE it = 10`
 * over ten rounds hold one round's rows instead of eleven.  The statement
 * still applies cond itself, to rows that all pass it.  Returns that filtering
 * query, `SELECT * FROM cte [AS alias] WHERE cond`, or NULL when the statement
 * has another shape: a second CTE (which may read this one), a join, a
 * compound query, or a subquery anywhere (which may read the CTE whole).
 */
static PsSelect *result_filter(PlBinder *b, const PsSelect *outer, const PsCte *cte)
{
    const PsFrom *f = outer->from;
    if (outer->kind != PS_SEL_SIMPLE || outer->with == NULL || outer->with->n != 1 ||
        outer->where == NULL || f == NULL || f->kind != PS_FROM_TABLE || f->schema.schema != NULL ||
        strcmp(f->name, cte->name) != 0 || select_has_subquery(outer)) {
        return NULL;
    }
    PsSelect *q = cm_arena_zalloc(b->arena, sizeof *q);
    PsTarget *star = cm_arena_zalloc(b->arena, sizeof *star);
    PsExpr *all = cm_arena_zalloc(b->arena, sizeof *all);
    PsList *targets = cm_arena_zalloc(b->arena, sizeof *targets);
    void **items = cm_arena_alloc(b->arena, sizeof(void *));
    if (q == NULL || star == NULL || all == NULL || targets == NULL || items == NULL) {
        return NULL; /* the rounds then fill the result whole */
    }
    all->kind = PS_EX_STAR;
    all->src_off = outer->src_off;
    star->expr = all;
    star->src_off = outer->src_off;
    items[0] = star;
    *targets = (PsList){.n = 1, .cap = 1, .items = items};
    q->kind = PS_SEL_SIMPLE;
    q->targets = targets;
    q->from = outer->from;
    q->where = outer->where;
    q->src_off = outer->src_off;
    q->src_len = outer->src_len;
    return q;
}

/* Does the bound filtering query call a volatile function (random())?  Then
 * the statement's own WHERE would draw again over rows already drawn, so the
 * result takes every row. */
static bool plan_volatile(const PlNode *n)
{
    for (; n != NULL; n = n->child) {
        if (n->kind == PL_FILTER && ex_expr_is_volatile(n->pred)) {
            return true;
        }
        for (int i = 0; n->kind == PL_PROJECT && i < n->n_cols; i++) {
            if (ex_expr_is_volatile(n->exprs[i])) {
                return true;
            }
        }
        if (n->kind != PL_FILTER && n->kind != PL_PROJECT && n->kind != PL_GET) {
            return true; /* not the shape expected: take no risk */
        }
    }
    return false;
}

/* The stream of a filtering query: appends its rows to the result. */
static CmStatus add_result(void *ctx, const CmBatch *in, CmErr *err)
{
    StTable *result = ctx;
    CmBatch b = *in;
    b.n_cols = result->n_cols;
    return b.n_rows > 0 ? st_table_append(result, &b, err) : CM_OK;
}

/* ---- the loop ------------------------------------------------------------------------ */

/* Where a round's rows go: the result, and the next working set. */
typedef struct Adder {
    StTable *result;
    StTable *work;
    Seen *seen;     /* UNION while its set fits: only rows never seen before go on; else NULL */
    StTable *cand;  /* UNION: the rows that came after the set was dropped, each, to be set
                       against the result when the run ends (add_unseen); NULL for UNION ALL */
    Key key;        /* UNION: the row being looked up */
    bool to_result; /* false: a filtering query fills the result (result_filter) */
    int64_t added;  /* rows added this round */
    int64_t rows;   /* rows added in all */
} Adder;

/* Which rows of b are new to a->seen, into sel (positions in b): every row's
 * key is serialized and hashed first, the table grown once for all of them,
 * and each probe's slot fetched a few rows ahead; a set of millions of rows
 * misses the cache at nearly every probe.  *stop is the number of rows
 * looked up: all, or when memory is refused at row r, r (the set is then
 * dropped, a->seen NULL, and rows r.. are unknown). */
static int new_rows(Adder *a, const CmBatch *b, uint32_t *sel, int *stop, CmErr *err)
{
    Seen *s = a->seen;
    Key *k = &a->key;
    uint32_t off[CM_BATCH_CAP + 1];
    uint64_t hash[CM_BATCH_CAP];
    k->len = 0;
    for (int r = 0; r < b->n_rows; r++) {
        off[r] = (uint32_t)k->len;
        if (!row_key(b, r, k, err)) {
            return 0;
        }
        if (k->len > UINT32_MAX) {
            cm_err_set(err, CM_LIMIT, -1, "a row of WITH RECURSIVE past 4 GB");
            return 0;
        }
    }
    off[b->n_rows] = (uint32_t)k->len;
    for (int r = 0; r < b->n_rows; r++) {
        hash[r] = cm_hash_bytes(k->buf + off[r], off[r + 1] - off[r]) | 1;
    }
    int n = 0;
    SeenHit hit = seen_room(s, b->n_rows, err);
    *stop = hit == SEEN_FULL ? 0 : b->n_rows;
    for (int r = 0; r < b->n_rows && hit != SEEN_FULL && hit != SEEN_ERROR; r++) {
        if (r + 8 < b->n_rows) {
            __builtin_prefetch(&s->hashes[hash[r + 8] & s->mask]);
        }
        hit = seen_put(s, k->buf + off[r], off[r + 1] - off[r], hash[r], err);
        if (hit == SEEN_NEW) {
            sel[n++] = cm_batch_pos(b, r);
        } else if (hit == SEEN_FULL) {
            *stop = r;
        }
    }
    if (hit == SEEN_FULL) {
        seen_fini(s);
        a->seen = NULL;
    }
    return n;
}

/* The stream of a round (PlRunFn): appends the batch's rows (only unseen ones
 * while a->seen) to the next working set, and to the result unless a filtering
 * query fills it.  When the set of rows seen is refused memory, it is dropped
 * (new_rows), and the rows it did not take, and every later one, go to a->cand
 * instead. */
static CmStatus add_rows(void *ctx, const CmBatch *in, CmErr *err)
{
    Adder *a = ctx;
    CmBatch b = *in;
    b.n_cols = a->result->n_cols;
    uint32_t sel[CM_BATCH_CAP], later[CM_BATCH_CAP];
    int n = 0, n_later = 0, from = 0;
    if (a->seen != NULL) {
        n = new_rows(a, &b, sel, &from, err);
    }
    for (int r = from; r < b.n_rows && err->code == CM_OK; r++) {
        if (a->cand != NULL) {
            later[n_later++] = cm_batch_pos(in, r);
        } else {
            sel[n++] = cm_batch_pos(in, r);
        }
    }
    b.sel = sel;
    b.n_rows = n;
    if (err->code == CM_OK && n > 0 &&
        (!a->to_result || st_table_append(a->result, &b, err) == CM_OK) &&
        st_table_append(a->work, &b, err) == CM_OK) {
        a->added += n;
    }
    b.sel = later;
    b.n_rows = n_later;
    if (err->code == CM_OK && n_later > 0) {
        st_table_append(a->cand, &b, err);
    }
    return err->code;
}

/* `node` with its columns cast to t's types. */
static PlNode *cast_to(PlBinder *b, PlNode *node, const StTable *t, int64_t off)
{
    if (node->n_cols != t->n_cols) {
        cm_err_set(b->err, CM_BIND, off,
                   "the recursive part of '%s' returns %d columns, its first part %d", t->name,
                   node->n_cols, t->n_cols);
        return NULL;
    }
    ExExpr **exprs = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(t->n_cols + 1));
    PlNode *p = pl_node_new(b->arena, PL_PROJECT, t->n_cols);
    if (exprs == NULL || p == NULL) {
        cm_err_set(b->err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    for (int i = 0; i < t->n_cols; i++) {
        ExExpr *c = ex_expr_column(b->arena, i, node->types[i]);
        exprs[i] = c ? pl_cast(b, c, t->cols[i].type, off) : NULL;
        if (exprs[i] == NULL) {
            return NULL;
        }
        p->types[i] = t->cols[i].type;
        p->names[i] = t->cols[i].name;
    }
    p->child = node;
    p->exprs = exprs;
    return p;
}

static StTable *new_table(const char *name, const PlNode *shape, const PsCte *cte, CmErr *err)
{
    StColumn cols[256];
    if (shape->n_cols > 256) {
        cm_err_set(err, CM_LIMIT, cte->src_off, "a recursive CTE of more than 256 columns");
        return NULL;
    }
    for (int i = 0; i < shape->n_cols; i++) {
        CmType t = shape->types[i];
        /* The recursive part may make longer strings than the first part's
         * CHAR(n) or VARCHAR(n) (s || 'x'): the column is a plain VARCHAR,
         * as in DuckDB, not a declared length its rows would exceed. */
        t = t.id == CM_T_NULL      ? cm_type_make(CM_T_INT32)
            : t.id == CM_T_VARCHAR ? cm_type_varchar(-1, false)
                                   : t;
        cols[i] = (StColumn){.name = (char *)(cte->col_names && i < cte->col_names->n
                                                  ? cte->col_names->items[i]
                                                  : shape->names[i]),
                             .type = t};
    }
    return st_table_new(name, shape->n_cols, cols, err);
}

static CmStatus push_temp(PlBinder *b, const char *name, StTable *t)
{
    PlTemp *tp = cm_calloc(1, sizeof *tp);
    if (tp == NULL) {
        st_table_free(t);
        return cm_err_set(b->err, CM_OOM, -1, "out of memory");
    }
    tp->name = name;
    tp->table = t;
    tp->next = b->temps;
    b->temps = tp;
    return CM_OK;
}

/* Adds the rows of the working set that pass the filtering query `q` to the
 * result (the set is the temp table of the CTE's name); when q turns out to
 * call a volatile function, it stops filtering: q's WHERE is dropped. */
static CmStatus add_filtered(PlBinder *b, PsSelect *q, StTable *result, PlRunFn run, void *ctx)
{
    PlNode *plan = pl_bind_select(b, q);
    if (plan != NULL && q->where != NULL && plan_volatile(plan)) {
        q->where = NULL;
        plan = pl_bind_select(b, q);
    }
    if (plan == NULL) {
        return b->err->code != CM_OK ? b->err->code
                                     : cm_err_set(b->err, CM_OOM, -1, "out of memory");
    }
    return run(ctx, b->arena, plan, add_result, result, b->err);
}

/*
 * UNION once its set of rows seen has been dropped: the rows the run that just
 * ended sent to a->cand, less the ones in the result and their repeats, are new.
 * The result holds every row seen (there is no filtering query for UNION), so
 * `cand EXCEPT result` finds them; it is a grouping, so it spills.  They go to
 * a table of their own first, since the EXCEPT reads the result they join.
 */
static CmStatus add_unseen(PlBinder *b, Adder *a, const PsCte *cte, const PlNode *shape,
                           PlRunFn run, void *ctx)
{
    if (a->cand->n_rows == 0) {
        return CM_OK;
    }
    PlNode *l = pl_bind_scan(b, a->cand);
    PlNode *r = l ? pl_bind_scan(b, a->result) : NULL;
    PlNode *except = r ? pl_bind_except(b, l, r) : NULL;
    StTable *fresh = except ? new_table(cte->name, shape, cte, b->err) : NULL;
    StTable *empty = fresh ? new_table(cte->name, shape, cte, b->err) : NULL;
    if (empty == NULL) {
        st_table_free(fresh);
        return b->err->code != CM_OK ? b->err->code
                                     : cm_err_set(b->err, CM_OOM, -1, "out of memory");
    }
    Adder copy = {.result = a->result, .work = a->work, .to_result = true};
    PlNode *scan = NULL;
    if (run(ctx, b->arena, except, add_result, fresh, b->err) == CM_OK &&
        (scan = pl_bind_scan(b, fresh)) != NULL) {
        run(ctx, b->arena, scan, add_rows, &copy, b->err);
    }
    a->added += copy.added;
    st_table_free(fresh);
    st_table_free(a->cand);
    a->cand = empty;
    return b->err->code;
}

static CmStatus materialize(PlBinder *b, const PsCte *cte, const PsSelect *outer, PlRunFn run,
                            void *ctx)
{
    const PsSelect *sel = cte->select;
    if (sel->kind != PS_SEL_SETOP || sel->setop != PS_SET_UNION ||
        select_reads(sel->left, cte->name)) {
        return cm_err_set(b->err, CM_BIND, cte->src_off,
                          "recursive '%s' must be: non-recursive part UNION [ALL] recursive part",
                          cte->name);
    }
    PlNode *anchor = pl_bind_select(b, sel->left);
    StTable *result = anchor ? new_table(cte->name, anchor, cte, b->err) : NULL;
    StTable *work = result ? new_table(cte->name, anchor, cte, b->err) : NULL;
    Seen seen;
    seen_init(&seen);
    CmArena round_arena;
    cm_arena_init(&round_arena, 64 * 1024);
    /* UNION: the result is the set of rows seen once that set is dropped. */
    PsSelect *filter = sel->all ? result_filter(b, outer, cte) : NULL;
    Adder add = {.result = result,
                 .work = work,
                 .seen = sel->all ? NULL : &seen,
                 .cand =
                     sel->all || work == NULL ? NULL : new_table(cte->name, anchor, cte, b->err),
                 .to_result = filter == NULL};
    if (work != NULL && (sel->all || add.cand != NULL) &&
        run(ctx, b->arena, anchor, add_rows, &add, b->err) == CM_OK && add.cand != NULL) {
        add_unseen(b, &add, cte, anchor, run, ctx);
    }
    int round = 0, except_from = add.cand != NULL && add.seen == NULL ? 0 : -1;
    for (; b->err->code == CM_OK && add.added > 0; round++) {
        add.rows += add.added;
        if (round == MAX_ROUNDS) {
            cm_err_set(b->err, CM_LIMIT, cte->src_off, "recursive '%s' did not end after %d rounds",
                       cte->name, MAX_ROUNDS);
            break;
        }
        /* This round's step reads the rows the previous round added. */
        if (push_temp(b, cte->name, work) != CM_OK) {
            work = NULL;
            break;
        }
        CmArena *stmt_arena = b->arena;
        cm_arena_reset(&round_arena);
        b->arena = &round_arena;
        /* The rows the previous round added reach the result now, filtered. */
        PlNode *step = filter == NULL || add_filtered(b, filter, result, run, ctx) == CM_OK
                           ? pl_bind_select(b, sel->right)
                           : NULL;
        step = step ? cast_to(b, step, result, sel->right->src_off) : NULL;
        work = step ? new_table(cte->name, anchor, cte, b->err) : NULL;
        add.work = work;
        add.added = 0;
        if (work != NULL && run(ctx, &round_arena, step, add_rows, &add, b->err) == CM_OK &&
            add.cand != NULL) {
            except_from = except_from < 0 && add.seen == NULL ? round + 1 : except_from;
            add_unseen(b, &add, cte, anchor, run, ctx);
        }
        b->arena = stmt_arena;
        PlTemp *top = b->temps;
        b->temps = top->next;
        st_table_free(top->table);
        cm_free(top);
    }
    st_table_free(work);
    st_table_free(add.cand);
    seen_fini(&seen);
    cm_free(add.key.buf);
    cm_arena_fini(&round_arena);
    if (b->err->code != CM_OK) {
        st_table_free(result);
        return b->err->code;
    }
    if (b->notes != NULL && b->notes->n < (int)(sizeof b->notes->lines / sizeof(char *))) {
        const char *line =
            except_from < 0
                ? cm_arena_printf(b->arena, "Recursive: %s, %d rounds, %lld rows", cte->name, round,
                                  (long long)add.rows)
                : cm_arena_printf(b->arena,
                                  "Recursive: %s, %d rounds, %lld rows; the set of rows seen was "
                                  "refused memory in round %d, and from then on each round's rows "
                                  "were set against the result by EXCEPT",
                                  cte->name, round, (long long)add.rows, except_from);
        if (line != NULL) {
            b->notes->lines[b->notes->n++] = line;
        }
    }
    return push_temp(b, cte->name, result);
}

CmStatus pl_materialize_recursive(PlBinder *b, const PsSelect *sel, PlRunFn run, void *ctx)
{
    if (sel->with == NULL || !sel->recursive) {
        return CM_OK;
    }
    /* A recursive CTE may read the plain CTEs written before it. */
    PlCte *saved = b->ctes;
    for (int i = 0; i < sel->with->n && b->err->code == CM_OK; i++) {
        const PsCte *cte = sel->with->items[i];
        if (select_reads(cte->select, cte->name)) {
            materialize(b, cte, sel, run, ctx);
            continue;
        }
        PlCte *c = cm_arena_zalloc(b->arena, sizeof *c);
        if (c == NULL) {
            cm_err_set(b->err, CM_OOM, -1, "out of memory");
            break;
        }
        c->cte = cte;
        c->next = b->ctes;
        b->ctes = c;
    }
    b->ctes = saved;
    return b->err->code;
}

void pl_temps_free(PlTemp *temps)
{
    while (temps != NULL) {
        PlTemp *next = temps->next;
        st_table_free(temps->table);
        cm_free(temps);
        temps = next;
    }
}
