/*
 * binder_int.h - state shared by the binder's files (binder.c for queries,
 * bind_expr.c for expressions).  Never included outside planner/.
 */
#pragma once

#include "planner/bind/binder.h"

/* Uncorrelated subqueries after aggregation are placeholders PL_POST_BASE + i:
 * joined onto the aggregate's output (one row each) once it exists. */
#define PL_POST_BASE (1 << 22)
#define PL_MAX_POST 32

/* Subqueries after aggregation that read the grouped rows (correlated ones,
 * and x IN (subquery)) are placeholders PL_LATE_BASE + i: bound once the
 * aggregate's output exists, over that output, so that they see each group's
 * keys as the group has them (NULL where ROLLUP/CUBE rolled a key up). */
#define PL_LATE_BASE (PL_POST_BASE + PL_MAX_POST)

/* One subquery deferred until after aggregation. */
typedef struct PlLate {
    const PsExpr *ast; /* the subquery (scalar, EXISTS or IN) */
    ExExpr *left;      /* IN: its left operand, bound over the aggregate's output */
    ExExpr **row;      /* IN with a row value: its items, bound likewise (left NULL) */
    CmType type;       /* the value's type, as the placeholder has it */
} PlLate;

#define PL_MAX_AGGS 256
#define PL_MAX_KEYS 256

/* The aggregation of one SELECT: its group keys and the aggregates found. */
typedef struct PlAggCtx {
    bool empty;           /* bind as over no rows at all: count 0, other aggregates NULL */
    const int *key_outer; /* empty: the outer column each key stands for */
    int n_keys;
    ExExpr **keys;       /* bound over the FROM scope */
    int n_sets;          /* ROLLUP/CUBE/GROUPING SETS: the sets, else 0 */
    uint64_t *set_masks; /* bit k: key k is in the set */
    int n_set_keys;      /* keys [0, n_set_keys) take part in the sets */
    int gid_key;         /* the key holding the set number, or -1 */
    int n_post;          /* one-row plans of uncorrelated subqueries after aggregation */
    PlNode *post[PL_MAX_POST];
    int n_late; /* subqueries bound over the aggregate's output */
    PlLate late[PL_MAX_POST];
    int n_aggs;
    ExAggSpec aggs[PL_MAX_AGGS];
    ExExpr *agg_args[PL_MAX_AGGS];   /* bound over the FROM scope; NULL for count(*) */
    ExExpr *agg_by[PL_MAX_AGGS];     /* arg_min/arg_max: the second argument (its column
                                      * follows the first's), else NULL */
    ExExpr **agg_order[PL_MAX_AGGS]; /* ORDER BY inside the call: aggs[a].n_order keys,
                                        bound over the FROM scope (query arena) */
} PlAggCtx;

#define PL_MAX_CORR 64

/* The enclosing query of a subquery: where outer column references resolve. */
struct PlOuter {
    const PlScope *scope;    /* the enclosing query's columns */
    PlOuter *parent;         /* the enclosing query's own enclosing query, when it is a
                              * correlated subquery itself: a name found there is
                              * carried in as the enclosing query's outer reference */
    const PlAggCtx *grouped; /* set when the subquery stands after the enclosing query's
                              * aggregation: it reads group keys, and a subtree of outer
                              * columns only (bound over scope) must equal one */
    int n_refs;
    int refs[PL_MAX_CORR]; /* enclosing columns (group keys when grouped) referenced,
                            * in order of first use */
    CmType types[PL_MAX_CORR];
    int inject_offset; /* where they appear in the subquery's FROM; -1 while discovering */
};

/* The distinct values of a correlated subquery's outer columns, joined into the
 * subquery's FROM and carried through its SELECT (as extra group keys). */
struct PlInject {
    PlNode *d; /* one column per outer reference */
    PlOuter *outer;
    bool joined;          /* a FROM clause took it */
    bool carried;         /* a SELECT appended its columns to the output */
    int n_values;         /* that SELECT's own output columns */
    bool plain_aggregate; /* it aggregated without GROUP BY */
    ExExpr *empty_value;  /* then: its first column over no rows, over the outer columns */
};

/* The name of column i of d, the distinct outer values a correlated subquery
 * reads, as its plan shows it: "outer.pk" after the outer column.  No bare
 * name can take it (a name with a dot is only ever written quoted), so the
 * subquery's own columns and aliases never resolve to it. */
const char *pl_outer_name(PlBinder *b, const PlNode *d, int i);

/* Aggregates are bound as placeholders too: column PL_AGG_BASE + a, numbered
 * after the keys once every key is known (a subquery may add one late). */
#define PL_AGG_BASE (1 << 23)
/* Keys of an ORDER BY inside an aggregate's call, at most. */
#define PL_MAX_AGG_ORDER 16

#define PL_MAX_WINDOWS 64
/* Window calls are bound as placeholders: column PL_WIN_BASE + i. */
#define PL_WIN_BASE (1 << 24)

/* The window function calls of one SELECT, collected while its list binds. */
typedef struct PlWinCtx {
    int n;
    ExWindowSpec spec[PL_MAX_WINDOWS];
    ExExpr *arg[PL_MAX_WINDOWS]; /* over the row before windows; NULL if none */
    ExExpr **part[PL_MAX_WINDOWS];
    ExExpr **order[PL_MAX_WINDOWS]; /* with spec[i].order for direction */
    /* unnest(list) of the select list (one at most): its list, over the row
     * before windows like a window's argument, or NULL; the call itself is the
     * placeholder column PL_UNNEST_COL, of the element type. */
    ExExpr *unnest;
} PlWinCtx;

#define PL_UNNEST_COL (1 << 25)

typedef struct PlBindCtx {
    PlBinder *b;
    const PlScope *scope;     /* the FROM clause's columns */
    PlScope *mscope;          /* the same scope, extended as subqueries join on; NULL: fixed */
    PlNode **input;           /* the node expressions read; subqueries join onto it (or NULL) */
    PlNode *base;             /* *input before any subquery joined on */
    PlAggCtx *agg;            /* non-NULL when binding after aggregation */
    PlWinCtx *win;            /* non-NULL where window functions may appear */
    PlAggCtx *post_agg;       /* uncorrelated subqueries join after this aggregation */
    const struct JoinSet *js; /* the FROM clause's tables, when *input joins them */
    uint64_t *leaf_refs;      /* when set (with js), every column bound here, and every
                               * outer column of a correlated subquery, ORs in its
                               * leaf of js (all bits for a column in no leaf) */
    bool *correlated;         /* when set, a correlated subquery bound here sets it */
    bool in_agg_arg;          /* inside an aggregate's argument */
    ExExpr *in_left;          /* when set: the left operand of the IN subquery being bound,
                               * already bound (over *input) */
    ExExpr **in_row;          /* likewise, the items of a row value IN (subquery) */
    const PlAggCtx *grouped;  /* when set, *input is that aggregation's output (keys
                               * first) and subqueries read its keys, named as the
                               * FROM clause's columns in grouped_scope */
    const PlScope *grouped_scope;
    const char *clause;       /* "WHERE", "GROUP BY", ... for messages */
    const PsExpr *filter_top; /* a WHERE conjunct being bound as a whole: there NULL and
                               * FALSE both drop the row, so an IN need not tell them
                               * apart (row_in_select) */
} PlBindCtx;

/* The deepest bound expression tree: evaluation and the planner's walks over
 * ExExpr recurse, so this bounds their stack.  Chains of AND, OR and || do not
 * count against it (n-ary and balanced); see docs/conformance.md. */
#define PL_MAX_EXPR_DEPTH 1000

/* Binds `ast` in ctx: with ctx->agg set, the result is over the aggregate's
 * output (keys, then aggregates); otherwise over ctx->scope. */
ExExpr *pl_bind_expr(PlBindCtx *ctx, const PsExpr *ast);

/* True when the tree holds an aggregate call (not looking into subqueries). */
bool pl_has_aggregate(const PsExpr *ast);
/* The first aggregate call in `ast` (for an error's position), or NULL. */
const PsExpr *pl_find_aggregate(const PsExpr *ast);
/* A window specification with the named window it builds on (OVER w, OVER (w ...))
 * folded in from defs (PsWindowDef*, a WINDOW clause): `w` itself, or *out filled.
 * NULL with b->err set when the name is unknown or the combination is illegal. */
const PsWindow *pl_resolve_window(PlBinder *b, const PsWindow *w, const PsList *defs,
                                  PsWindow *out);

/* Structural equality of bound expressions. */
bool pl_expr_equal(const ExExpr *a, const ExExpr *b);

/* The name EXPLAIN shows for e over `input`: an input column's own name, else
 * the expression over the input's names (in the arena; `fallback` on OOM). */
const char *pl_expr_name(PlBinder *b, const ExExpr *e, const PlNode *input, const char *fallback);

/* The SQL text of a node, in the arena (for column names). */
const char *pl_source_text(PlBinder *b, int64_t off, int64_t len);

/* Binds one FROM item that is not a join (table, view, CTE, subquery). */
PlNode *pl_bind_from_item(PlBinder *b, const PsFrom *f, PlScope *sc);
/* After a trial binding made under its own CmErr, whose failure only means
 * "not this way": true when it failed for want of memory instead, which is no
 * answer to the trial.  The error is then copied to b->err and the caller
 * fails too. */
bool pl_trial_oom(PlBinder *b, const CmErr *trial);

/* Binds a FROM clause together with its WHERE condition (may be NULL): joins
 * are ordered, single-table conditions pushed below them and equalities made
 * join keys.  The output's columns are the FROM clause's, in order (*sc). */
PlNode *pl_bind_from_where(PlBinder *b, const PsFrom *from, const PsExpr *where, PlScope *sc);

/* A PROJECT of `exprs` over child (names borrowed), or a FILTER keeping the
 * rows where pred (cast to BOOLEAN) is true.  NULL with b->err on failure. */
PlNode *pl_project(PlBinder *b, PlNode *child, int n, ExExpr **exprs, const char **names);
PlNode *pl_filter(PlBinder *b, PlNode *child, ExExpr *pred, int64_t off);

/* A resolved operator or function call ("=", "+", "abs", ...) over bound
 * arguments, with casts inserted and constants folded. */
ExExpr *pl_make_call(PlBinder *b, const char *name, ExExpr **args, int n, int64_t off);

/* l AND r, l OR r (both cast to BOOLEAN). */
ExExpr *pl_make_and(PlBinder *b, ExExpr *l, ExExpr *r);
/* COALESCE(l, r), of their common type. */
ExExpr *pl_make_coalesce(PlBinder *b, ExExpr *l, ExExpr *r, int64_t off);
ExExpr *pl_make_or(PlBinder *b, ExExpr *l, ExExpr *r);

/* The table (leaf) of a FROM clause, as it was before any subquery condition
 * was pushed into it, holding every one of the scope columns
 * cols[0..n) (renumbered into the leaf's own columns in `local`), or NULL when
 * they span several. */
PlNode *pl_join_leaf_of(const struct JoinSet *js, const int *cols, int n, int *local);

/* The leaves of js holding the scope columns cols[0..n), as a bit mask; all
 * bits when one is in no leaf. */
uint64_t pl_join_leaves_of(const struct JoinSet *js, const int *cols, int n);

/* True when the tree holds a subquery (scalar, IN or EXISTS). */
bool pl_has_subquery(const PsExpr *ast);
/* The first subquery, aggregate or window call in `ast` (RETURNING refuses
 * them, as DuckDB does), or NULL. */
const PsExpr *pl_find_not_returnable(const PsExpr *ast);
/* Only IN (subquery) and EXISTS. */
bool pl_has_predicate_subquery(const PsExpr *ast);

/* Binds a scalar, IN or EXISTS subquery: plans it, joins it onto *ctx->input
 * (decorrelated: never re-run per row) and returns the expression for its value. */
ExExpr *pl_bind_subquery(PlBindCtx *ctx, const PsExpr *ast);

/* Pass 1 of binding a subquery: plans it with ctx->mscope (or, with
 * ctx->grouped, the group keys) as its enclosing scope, filling *o with the
 * enclosing columns it reads (none: uncorrelated).
 * The plan (in the query arena) is only good for its column types. */
PlNode *pl_subquery_outer_refs(PlBindCtx *ctx, const PsExpr *ast, PlOuter *o);

/* The n values of a one-row subquery compared with a row value,
 * (a, b) = (SELECT x, y ...), joined onto *ctx->input: NULLs when it gives no
 * row, an error past one.  Uncorrelated only.  False with b->err set. */
bool pl_bind_row_subquery(PlBindCtx *ctx, const PsExpr *ast, int n, ExExpr **out);

/* Row values (bind_row.c): true for a comparison, IN list or IS [NOT]
 * DISTINCT FROM with a row value operand, which pl_bind_row binds. */
bool pl_is_row_op(const PsExpr *ast);
ExExpr *pl_bind_row(PlBindCtx *ctx, const PsExpr *ast);

/* `constant IN (subquery)` as a one-row plan of its BOOLEAN value. */
PlNode *pl_bind_in_one_row(PlBindCtx *ctx, const PsExpr *ast);

/* Binds a query expression (the binder's recursion, for subqueries). */
PlNode *pl_bind_query(PlBinder *b, const PsSelect *sel);

/* The node `child` without its duplicate rows. */
PlNode *pl_distinct(PlBinder *b, PlNode *child);

/* FROM read_csv(path, option = value, ...), read_csv_auto and 'file.csv'
 * (bind_csv.c): sniffs the file now; NULL with b->err set. */
PlNode *pl_bind_read_csv(PlBinder *b, const PsFrom *f);
