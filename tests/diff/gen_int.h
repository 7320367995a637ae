/*
 * gen_int.h - internals shared by the query generator's files (gen_expr.c for
 * typed expressions, gen_query.c for SELECT cores, FROM clauses, set
 * operations and subqueries, which call each other recursively).
 *
 * A DfScope lists the columns a query level may name, always qualified by a
 * per-query unique alias (q1, q2, ...), so names never shadow each other and a
 * correlated reference is simply a column of the `outer` scope.  In a grouped
 * query an expression's leaves are the group keys and aggregates whose
 * arguments range over the FROM columns (DfCtx.rows).  Never included outside
 * tests/diff/.
 */
#pragma once

#include "gen.h"

#define DF_SCOPE_CAP 24    /* columns of up to 3 FROM items (5 per table, 4 per derived table) */
#define DF_MAX_OUT 4       /* select-list items of a generated core */
#define DF_MAX_SUB_DEPTH 2 /* nesting of subqueries */
#define DF_EXPR_CAP 48     /* a GROUP BY key expression, e.g. "(q1.ab3 % 3)" */

/* A column a query level may reference as qual.name. */
typedef struct DfScopeCol {
    char qual[DF_NAME_CAP]; /* the FROM item's alias */
    char name[DF_NAME_CAP]; /* the column's name */
    DfType type;            /* DF_INT, DF_STR or DF_BOOL (derived tables only) */
    bool may_upper;         /* a string that may hold upper-case letters */
    char expr[DF_EXPR_CAP]; /* a GROUP BY key expression written instead of qual.name, or "" */
} DfScopeCol;

typedef struct DfScope {
    const struct DfScope *outer;   /* the enclosing query's columns (correlation), or NULL */
    int n_cols;                    /* columns used */
    DfScopeCol cols[DF_SCOPE_CAP]; /* in FROM order */
} DfScope;

/* The generator's state for one query. */
typedef struct DfGen {
    DfRng *rng;             /* borrowed */
    const DfSchema *schema; /* borrowed */
    int n_aliases;          /* aliases handed out: the next is q<n_aliases + 1> */
    int sub_depth;          /* subqueries currently open around the generated text */
    int n_no_select_sub;    /* open derived tables whose select lists take no subquery */
    unsigned avoid;         /* DF_AVOID_* flags: constructs not to write */
    unsigned used;          /* DF_AVOID_* flags of the constructs written */
} DfGen;

/* Where an expression is generated. */
typedef struct DfCtx {
    const DfScope *scope; /* row mode: the FROM columns; grouped mode: the group keys */
    const DfScope *rows;  /* grouped mode: the FROM columns aggregates range over; else NULL */
    int mul_budget;       /* nested multiplications still allowed (keeps values small) */
} DfCtx;

/* The output types of a SELECT. */
typedef struct DfShape {
    int n_cols;                 /* 1..DF_SCOPE_CAP (SELECT * may exceed DF_MAX_OUT) */
    DfType types[DF_SCOPE_CAP]; /* per output column */
} DfShape;

/* gen_expr.c */
/* An expression of `type` that is itself an aggregate call (grouped ctx). */
void df_gen_agg(DfGen *g, const DfCtx *ctx, DfType type, DfBuf *out);
void df_gen_expr(DfGen *g, const DfCtx *ctx, DfType type, int depth, DfBuf *out);
/* A boolean join condition linking the columns from index `first_new` on to the
 * columns before them. */
void df_gen_join_cond(DfGen *g, const DfScope *scope, int first_new, DfBuf *out);
/* A random column of `type` from `scope` (and, when allow_outer, its outer
 * scope), or NULL when there is none. */
const DfScopeCol *df_pick_col(DfGen *g, const DfScope *scope, DfType type, bool allow_outer);
void df_put_col(DfBuf *out, const DfScopeCol *col);
void df_put_int_literal(DfGen *g, DfBuf *out);
void df_put_str_literal(DfGen *g, DfBuf *out);

/* gen_query.c */
/* A new alias q<N> for a FROM item of this query. */
void df_new_alias(DfGen *g, char alias[DF_NAME_CAP]);
/* (SELECT agg ...) or (SELECT col ... ORDER BY ... LIMIT 1): at most one row. */
void df_gen_scalar_sub(DfGen *g, const DfScope *outer, DfType type, DfBuf *out);
/* EXISTS (SELECT ...) body, without the EXISTS keyword. */
void df_gen_exists_sub(DfGen *g, const DfScope *outer, DfBuf *out);
/* (SELECT one column of `type` ...) for IN. */
void df_gen_list_sub(DfGen *g, const DfScope *outer, DfType type, DfBuf *out);
