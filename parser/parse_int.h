/*
 * parse_int.h - what the grammar, the AST builders and the driver share
 * (internal to parser/; never include it from another folder).
 *
 * The driver (parse.c) feeds tokens from the lexer to the Lemon parser
 * generated from grammar.y; the grammar's actions call the ps_build_*
 * functions (build_expr.c, build_query.c) to make AST nodes in the query arena.
 * PsParse is the parse context (%extra_context): one per statement, on the
 * driver's stack.  Every node's source span ends at `prev_end`, the end of the
 * token before the look-ahead: Lemon reduces a rule only once the next token is
 * in hand, so that is the end of the rule's last token.
 * After the first error (`is_failed`), every builder returns the scratch node
 * without looking at its arguments, so actions never need NULL checks; the
 * driver stops feeding tokens and drops the tree.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/err.h"
#include "parser/ast.h"
#include "parser/lexer.h"

/* Stands in for any node once an error was recorded; written, never read. */
typedef union PsScratch {
    PsExpr expr;
    PsSelect select;
    PsFrom from;
    PsStmt stmt;
    PsList list;
    PsCte cte;
    PsColumnDef coldef;
    PsTypeName type;
    PsWindow window;
    PsTarget target;
    PsOrderItem order;
    PsOption option;
    PsSetClause set;
    PsWhen when;
} PsScratch;

/* The parse context of one statement. */
typedef struct PsParse {
    CmArena *arena;    /* query arena: every node and string of the AST */
    const char *sql;   /* the whole SQL text (borrowed for the parse) */
    size_t len;        /* bytes of sql */
    int64_t prev_end;  /* end offset of the token before the look-ahead */
    int64_t cur_off;   /* offset of the look-ahead token, for stack overflow */
    PsStmt *stmt;      /* the result, set by the start rule */
    CmErr *err;        /* the caller's error record */
    int n_params;      /* the largest parameter index seen so far */
    bool is_failed;    /* an error was recorded: builders return `scratch` */
    CmStatus rc;       /* the class of that error */
    PsScratch scratch; /* see PsScratch */
} PsParse;

/* ---- values of grammar symbols (kept small: they live on Lemon's stack) --- */

typedef struct PsAliasSpec {
    const char *alias; /* AS alias or NULL */
    PsList *cols;      /* alias(c1, c2): const char*, or NULL */
} PsAliasSpec;

typedef struct PsJoinQual {
    PsExpr *on;         /* ON condition or NULL */
    PsList *using_cols; /* USING (..) names or NULL */
} PsJoinQual;

typedef struct PsDistinct {
    bool distinct;
    PsList *on; /* DISTINCT ON (...): PsExpr*, else NULL */
} PsDistinct;

/* The modifiers of a star target (DuckDB): EXCLUDE (...) and REPLACE (...). */
typedef struct PsStarMods {
    PsList *exclude; /* PsExpr* columns */
    PsList *replace; /* PsTarget* */
} PsStarMods;

typedef struct PsOrderSpec {
    PsList *items; /* PsOrderItem*, NULL when absent */
    int64_t off;   /* offset of ORDER, for errors */
    bool all;      /* ORDER BY ALL: items holds one template item (direction, NULLs) */
} PsOrderSpec;

typedef struct PsLimitSpec {
    PsExpr *limit;  /* NULL when absent */
    PsExpr *offset; /* NULL when absent */
    int64_t off;    /* offset of the clause's first keyword, -1 when absent */
} PsLimitSpec;

typedef struct PsWithSpec {
    PsList *ctes;   /* PsCte*, NULL when absent */
    int64_t off;    /* offset of WITH */
    bool recursive; /* WITH RECURSIVE */
} PsWithSpec;

typedef struct PsGroupSpec {
    PsGroupKind kind; /* PLAIN, ROLLUP, CUBE or SETS */
    PsList *list;     /* as PsSelect.group_by; NULL without GROUP BY */
    bool all;         /* GROUP BY ALL */
} PsGroupSpec;

typedef struct PsBound {
    PsBoundKind kind; /* frame bound */
    PsExpr *off;      /* n of n PRECEDING / n FOLLOWING, else NULL */
} PsBound;

typedef struct PsTableConstraint {
    bool is_primary; /* PRIMARY KEY (..); else UNIQUE (..) */
    PsList *cols;    /* const char* */
} PsTableConstraint;

/* A table name of 1..3 parts as written: [[catalog.]schema.]name. */
typedef struct PsQName {
    PsToken parts[3]; /* parts[0..n) */
    int n;
} PsQName;

/* trim([BOTH|LEADING|TRAILING] ...) */
typedef enum PsTrimSpec { PS_TRIM_BOTH, PS_TRIM_LEADING, PS_TRIM_TRAILING } PsTrimSpec;

/* ---- the Lemon parser (generated into gen/grammar.c) --------------------- */

/* Owned (free with ps_grammarFree); NULL when mallocProc fails. */
void *ps_grammarAlloc(void *(*mallocProc)(size_t), PsParse *ps);
void ps_grammarFree(void *parser, void (*freeProc)(void *));
/* Feeds one token; `major` 0 is the end of input. */
void ps_grammar(void *parser, int major, PsToken minor);
/* The token a keyword falls back to (PS_TK_ID), or 0. */
int ps_grammarFallback(int token);

/* ---- common helpers (build_expr.c) --------------------------------------- */

/* Records CM_OOM: the arena refused memory. */
void ps_build_oom(PsParse *ps);
/* Records an error (code, offset, message) and marks the parse failed. */
void ps_build_fail(PsParse *ps, CmStatus code, int64_t off, const char *msg);
/* In arena: n zeroed bytes; the scratch node after an error or on OOM. */
void *ps_build_alloc(PsParse *ps, size_t n);
/* Appends to a list in the arena (a new one when list is NULL). */
PsList *ps_build_list(PsParse *ps, PsList *list, void *item);
/* In arena: an identifier's name, lower-cased unless it was "quoted". */
const char *ps_build_ident(PsParse *ps, PsToken tok);
/* Records CM_SYNTAX "syntax error at or near 'tok'" (or "at end of input"). */
void ps_build_syntax_error(PsParse *ps, PsToken tok);
/* Records a syntax error at tok unless it is the identifier `word`. */
void ps_build_expect_word(PsParse *ps, PsToken tok, const char *word);
/* Records CM_LIMIT: the statement nests deeper than the parser stack. */
void ps_build_overflow(PsParse *ps);

/* ---- expressions (build_expr.c) ------------------------------------------ */

PsExpr *ps_build_expr(PsParse *ps, PsExprKind kind, int64_t off);
PsExpr *ps_build_int(PsParse *ps, PsToken tok);
/* A parameter token, `?` or `$n`. */
PsExpr *ps_build_param(PsParse *ps, PsToken tok);
PsExpr *ps_build_number(PsParse *ps, PsToken tok);
PsExpr *ps_build_string(PsParse *ps, PsToken tok);
PsExpr *ps_build_bool(PsParse *ps, PsToken tok, bool value);
PsExpr *ps_build_typed(PsParse *ps, PsToken type, PsToken str);
/* INTERVAL qty [unit]; unit NULL when absent. */
PsExpr *ps_build_interval(PsParse *ps, PsToken kw, PsToken qty, const PsToken *unit);
/* a, t.a, s.t.a or c.s.t.a from n (1..4) name tokens. */
PsExpr *ps_build_column(PsParse *ps, const PsToken *parts, int n);
/* *, t.*, s.t.* or c.s.t.* from n (0..3) qualifier tokens; `off` is the first token. */
PsExpr *ps_build_star(PsParse *ps, const PsToken *quals, int n, int64_t off);
PsExpr *ps_build_unary(PsParse *ps, PsOp op, PsToken tok, PsExpr *x);
/* Unary minus; folds into an integer or number literal. */
PsExpr *ps_build_negate(PsParse *ps, PsToken tok, PsExpr *x);
PsExpr *ps_build_binary(PsParse *ps, PsOp op, PsExpr *l, PsExpr *r);
PsExpr *ps_build_is_null(PsParse *ps, PsExpr *x, bool negated);
/* x IS [NOT] TRUE|FALSE as x IS [NOT] DISTINCT FROM the literal. */
PsExpr *ps_build_is_bool(PsParse *ps, PsExpr *x, PsToken lit, bool value, bool is_not);
PsExpr *ps_build_is_distinct(PsParse *ps, PsExpr *l, PsExpr *r, bool negated);
PsExpr *ps_build_between(PsParse *ps, PsExpr *x, PsExpr *lo, PsExpr *hi, bool negated);
/* x [NOT] IN (list); list NULL for SQLite's empty "IN ()". */
PsExpr *ps_build_in_list(PsParse *ps, PsExpr *x, PsList *list, bool negated);
PsExpr *ps_build_in_select(PsParse *ps, PsExpr *x, PsSelect *sub, bool negated);
PsExpr *ps_build_like(PsParse *ps, PsOp op, PsExpr *x, PsExpr *pat, PsExpr *esc, bool negated);
PsExpr *ps_build_cast(PsParse *ps, PsExpr *x, PsTypeName *type, int64_t off);
/* (x): widens x's span to the parentheses. */
PsExpr *ps_build_parens(PsParse *ps, PsExpr *x, PsToken lp);
/* The row value (L..., x) opened at lp. */
PsExpr *ps_build_row(PsParse *ps, PsToken lp, PsList *list, PsExpr *x);
/* A GROUP BY key or grouping set: the items of a row value, else x alone. */
PsList *ps_build_row_items(PsParse *ps, PsExpr *x);
/* PS_EX_SUBQUERY or PS_EX_EXISTS starting at off. */
PsExpr *ps_build_subquery(PsParse *ps, PsExprKind kind, PsSelect *sub, int64_t off);
PsExpr *ps_build_case(PsParse *ps, PsToken kw, PsExpr *operand, PsList *whens, PsExpr *els);
PsList *ps_build_when(PsParse *ps, PsList *whens, PsExpr *cond, PsExpr *result);
PsExpr *ps_build_func(PsParse *ps, PsToken name, PsList *args, bool distinct, bool star);
/* Sets f's ORDER BY items (inside its call, after its arguments); `order` is the ORDER token. */
void ps_build_func_order(PsParse *ps, PsExpr *f, PsList *items, PsToken order);
/* A call of the function `name` (static text) at off: what list syntax means. */
PsExpr *ps_build_func_named(PsParse *ps, const char *name, int64_t off, PsList *args);
/* t[]: a LIST of t (one level; t[][] is a syntax error at the second []). */
PsTypeName *ps_build_list_type(PsParse *ps, PsTypeName *t, PsToken bracket);
/* name(x AS type): only CAST. */
PsExpr *ps_build_func_cast(PsParse *ps, PsToken name, PsToken as, PsExpr *x, PsTypeName *type);
/* name(a FROM b [FOR c]) and name(a FOR c): EXTRACT, SUBSTRING, TRIM. */
PsExpr *ps_build_func_from(PsParse *ps, PsToken name, PsToken kw, PsExpr *a, PsExpr *b, PsExpr *c);
/* trim([spec] [chars] FROM s) and trim(spec s); chars may be NULL. */
PsExpr *ps_build_trim(PsParse *ps, PsToken name, PsTrimSpec spec, PsExpr *chars, PsExpr *s);
PsExpr *ps_build_position(PsParse *ps, PsToken kw, PsExpr *needle, PsExpr *haystack);
/* Attaches FILTER and OVER to a call and widens its span. */
PsExpr *ps_build_func_tail(PsParse *ps, PsExpr *call, PsExpr *filter, PsWindow *over);
PsWindow *ps_build_frame(PsParse *ps, PsFrameUnit unit, const PsBound *start, const PsBound *end);
PsWindow *ps_build_window(PsParse *ps, PsList *partition_by, PsList *order_by, PsWindow *frame);
void ps_build_window_ref(PsParse *ps, PsWindow *w, PsToken name);
PsWindowDef *ps_build_window_def(PsParse *ps, PsToken name, PsWindow *spec);
/* name [mod] [(params)]: mod is PRECISION or VARYING (type 0 when absent). */
PsTypeName *ps_build_type(PsParse *ps, PsToken name, PsToken mod, const PsToken *params,
                          int n_params);
PsOrderItem *ps_build_order_item(PsParse *ps, PsExpr *x, bool desc, int nulls);

/* ---- queries and statements (build_query.c) ------------------------------- */

PsStmt *ps_build_alter(PsParse *ps, PsToken kw, const PsQName *table, PsAlterKind kind,
                       const PsToken *column, const PsToken *name, PsColumnDef *def);
/* Marks CREATE OR REPLACE; refused beside IF NOT EXISTS. */
void ps_build_or_replace(PsParse *ps, PsStmt *s, bool or_replace);
/* SHOW TABLES, or SHOW t as DESCRIBE t. */
PsStmt *ps_build_show(PsParse *ps, PsToken kw, PsToken name);
/* SHOW ALL, SHOW SETTINGS: SELECT * FROM sluice_settings(), which no table of that name hides. */
PsStmt *ps_build_show_settings(PsParse *ps, PsToken kw);
/* SELECT * FROM name, for DESCRIBE name. */
PsSelect *ps_build_select_all(PsParse *ps, PsToken kw, const PsQName *name);
/* x op ANY|SOME|ALL (sub) (all: ALL): = ANY is IN, <> ALL is NOT IN;
 * the others a CASE over scalar subqueries of sub's count, count of values,
 * min and max, with SQL's three-valued result. */
PsExpr *ps_build_quantified(PsParse *ps, PsOp op, PsExpr *x, bool all, PsSelect *sub);
/* UPDATE ... FROM f: s->from becomes `name [AS s->alias], f`, the target
 * first (the binder gives it the target's numbered rows); nothing when f is NULL. */
void ps_build_update_from(PsParse *ps, PsStmt *s, const PsQName *name, PsFrom *f);
/* Sets s->returning to `SELECT targets FROM name [AS alias]` (targets NULL: none),
 * the name unqualified: the binder gives it the statement's written rows. */
void ps_build_returning(PsParse *ps, PsStmt *s, const PsQName *name, const char *alias,
                        PsList *targets);
PsTarget *ps_build_star_target(PsParse *ps, PsExpr *star, const PsStarMods *mods);
/* a's items followed by b's (either may be NULL). */
PsList *ps_build_concat(PsParse *ps, PsList *a, PsList *b);
PsSelect *ps_build_simple(PsParse *ps, PsToken kw, bool distinct, PsList *targets, PsFrom *from,
                          PsExpr *where, const PsGroupSpec *group, PsExpr *having);
PsGroupSpec *ps_build_group_item(PsParse *ps, PsGroupKind kind, PsList *list);
/* The GROUP BY of its items: PLAIN when all are plain keys, one ROLLUP/CUBE/SETS
 * item as it is, else the cross product of the items' sets as GROUPING SETS. */
PsGroupSpec ps_build_group(PsParse *ps, PsList *items, int64_t off);
/* VALUES (row): a new select when values is NULL, else one more row. */
PsSelect *ps_build_values(PsParse *ps, PsSelect *values, PsToken kw, PsList *row);
PsSelect *ps_build_setop(PsParse *ps, PsSetOp op, bool all, PsSelect *l, PsSelect *r);
/* (select): widens the span to the parentheses. */
PsSelect *ps_build_parens_select(PsParse *ps, PsSelect *sel, PsToken lp);
/* Attaches WITH, ORDER BY and LIMIT/OFFSET (each may be absent: NULL). */
PsSelect *ps_build_select_tail(PsParse *ps, PsSelect *sel, const PsWithSpec *with,
                               const PsOrderSpec *order, const PsLimitSpec *limit);
PsCte *ps_build_cte(PsParse *ps, PsToken name, PsList *cols, PsSelect *sel);
PsTarget *ps_build_target(PsParse *ps, PsExpr *x, const PsToken *alias);
PsList *ps_build_names(PsParse *ps, PsList *list, PsToken name);
PsFrom *ps_build_table(PsParse *ps, const PsQName *name, const PsAliasSpec *al);
/* The last part of a qualified name (in arena); the parts before it go to *schema. */
const char *ps_build_qname(PsParse *ps, const PsQName *name, PsSchemaRef *schema);
/* The catalog and schema of n (0..2) name tokens before a table name. */
void ps_build_schema_ref(PsParse *ps, const PsToken *parts, int n, PsSchemaRef *out);
PsFrom *ps_build_from_subquery(PsParse *ps, PsSelect *sub, const PsAliasSpec *al);
PsFrom *ps_build_from_function(PsParse *ps, PsToken name, PsList *args, const PsAliasSpec *al);
PsFrom *ps_build_join(PsParse *ps, PsJoinType type, bool natural, PsFrom *l, PsFrom *r,
                      const PsJoinQual *qual);
PsFrom *ps_build_parens_from(PsParse *ps, PsFrom *from, PsToken lp);

/* A statement of `kind` spanning from off to the previous token's end. */
PsStmt *ps_build_stmt(PsParse *ps, PsStmtKind kind, int64_t off);
/* Sets a COPY statement's path, its length and its offset from the literal tok. */
void ps_build_copy_path(PsParse *ps, PsStmt *st, PsToken tok);
PsColumnDef *ps_build_coldef(PsParse *ps, PsToken name, PsTypeName *type);
/* Widens a column definition's span over a constraint just parsed. */
PsColumnDef *ps_build_coldef_more(PsParse *ps, PsColumnDef *def);
/* Adds a column or a table constraint to the CREATE TABLE shell (NULL: new). */
PsStmt *ps_build_table_elem(PsParse *ps, PsStmt *shell, PsColumnDef *col,
                            const PsTableConstraint *cons);
PsStmt *ps_build_create_table(PsParse *ps, PsToken kw, bool temporary, bool if_not_exists,
                              const PsQName *name, PsStmt *shell, PsSelect *as_select);
PsOption *ps_build_option(PsParse *ps, PsToken name, PsExpr *value);
PsStmt *ps_build_explain(PsParse *ps, PsToken kw, PsStmt *inner, bool analyze, PsList *options);
/* prefix.part, lower-cased; prefix NULL for the first part. */
const char *ps_build_dotted(PsParse *ps, const char *prefix, PsToken part);
PsSetClause *ps_build_set_clause(PsParse *ps, PsToken column, PsExpr *value);
