/*
 * binder.h - names and types: turns a parsed SELECT into a logical plan with
 * bound expressions.
 *
 * The binder resolves table, view, CTE and column names against the catalog
 * and the FROM clause, picks a kernel for every operator and function (with
 * explicit casts where types differ), folds constant subtrees, and splits
 * aggregate queries into pre-projection -> AGGREGATE -> post-projection.
 * Errors carry the byte offset of the offending name or expression in the SQL
 * text.  Everything it makes lives in the query arena.  Not thread-safe: one
 * binder per statement.
 */
#pragma once

#include "common/arena.h"
#include "common/config.h"
#include "common/err.h"
#include "executor/result.h"
#include "parser/ast.h"
#include "planner/plan.h"
#include "storage/catalog.h"

typedef struct PlCte {
    const PsCte *cte;
    struct PlCte *next;
} PlCte;

typedef struct PlOuter PlOuter;
typedef struct PlCache PlCache;
typedef struct PlKeep PlKeep;
typedef struct PlInject PlInject;

/* A table computed before binding (a WITH RECURSIVE result), found by name
 * before CTEs and the catalog. */
typedef struct PlTemp {
    const char *name;
    StTable *table; /* owned by whoever made the list */
    struct PlTemp *next;
} PlTemp;

/* The values bound to a prepared statement's parameters `?`/`$n` (borrowed for
 * the statement): value idx-1 is `$idx`'s, used only where is_bound[idx-1]. */
typedef struct PlParams {
    int n;                 /* slots in values and is_bound */
    const CmValue *values; /* strings and lists borrowed for the statement */
    const bool *is_bound;
} PlParams;

/* Lines binding adds to EXPLAIN ANALYZE: what each WITH RECURSIVE did. */
typedef struct PlNotes {
    int n;
    const char *lines[8]; /* in the statement arena */
} PlNotes;

typedef struct PlBinder {
    CmArena *arena; /* the query arena */
    StCatalog *cat;
    const char *sql;  /* the text the AST's offsets refer to */
    PlCte *ctes;      /* WITH names in scope, innermost first */
    int depth;        /* view/subquery nesting, bounded */
    PlOuter *outer;   /* the enclosing query of a subquery being bound, or NULL */
    PlInject *inject; /* correlated values for the next FROM clause to join in */
    PlInject *carry;  /* correlated values the next SELECT must pass through */
    PlTemp *temps;    /* materialized WITH RECURSIVE results */
    /* UPDATE ... FROM by row address: the target's reference (PsFrom.is_update_target)
     * scans it with the address, or NULL */
    StTable *update_target;
    PlNotes *notes;        /* where binding's notes for EXPLAIN ANALYZE go, or NULL */
    PlTemp **keep;         /* where system-table snapshots go (the statement's list, freed when
                              it ends); NULL: reading a system table is refused */
    PlCache *cache;        /* the session's cache: its temporary views (CACHE TABLE AS), or NULL */
    const PlKeep *kept;    /* the session's kept partitioned forms (sluice_cache), or NULL */
    const CmConfig *cfg;   /* the session's settings, for sluice_settings; may be NULL */
    bool is_listing_views; /* binding the views for information_schema.columns */
    /* INSERT ... VALUES: the VALUES whose rows may hold DEFAULT (no other query's may),
     * and the value DEFAULT stands for in each of its columns. */
    const PsSelect *insert_values;
    const PsList *windows;          /* the WINDOW clause (PsWindowDef*) of the SELECT being bound */
    const CmValue *insert_defaults; /* n_insert_defaults values, of the target columns' types */
    int n_insert_defaults;
    const PlParams *params; /* the values of the statement's parameters, or NULL: none bound */
    int64_t now_us;         /* now(): the statement's TIMESTAMP, read at its first call */
    bool has_now;
    CmErr *err;
} PlBinder;

/* One column visible to expressions: which table (alias) it came from. */
typedef struct PlScopeCol {
    const char *table; /* alias or table name; NULL for derived columns */
    const char *name;
    CmType type;
    bool hidden; /* the right-hand twin of a USING column: found only qualified */
    bool merged; /* the USING column of a RIGHT or FULL join, computed from both twins */
} PlScopeCol;

typedef struct PlScope {
    int n;
    PlScopeCol *cols;
} PlScope;

/* Checks the catalog and schema written before a table name.  The database has
 * one catalog, `memory`, with one schema, `main` (DuckDB's names for an
 * in-memory database): `main.t`, `memory.t` (a catalog with its default
 * schema, as DuckDB reads a two-part name) and `memory.main.t` are `t`.
 * CM_BIND "unknown schema 'x'" / "unknown catalog 'x'" at the name otherwise. */
CmStatus pl_check_schema(const PsSchemaRef *schema, CmErr *err);

/* Binds a query expression; NULL with b->err set on failure. */
PlNode *pl_bind_select(PlBinder *b, const PsSelect *sel);

/* Binds an expression over `scope` with no aggregates allowed (`clause` names
 * where it stands, for messages, e.g. "WHERE"). */
ExExpr *pl_bind_scalar(PlBinder *b, const PlScope *scope, const PsExpr *ast, const char *clause);

/* Runs a plan to completion, its physical plan in `arena`, handing its rows to
 * fn(fn_ctx, batch) as they come (from worker threads, one call at a time, in
 * order) instead of keeping them: the caller appends them where they belong,
 * to a table in the block store, which moves them to disk under pressure.  An
 * error of fn fails the run. */
typedef CmStatus (*PlRunFn)(void *ctx, CmArena *arena, const PlNode *root, ExResultStreamFn fn,
                            void *fn_ctx, CmErr *err);

/* WITH RECURSIVE: computes every recursive CTE of `sel` to its fixpoint
 * (iterating its recursive term over the rows the previous step added) into
 * a table, listed in b->temps for the query to read.  The tables belong to
 * the caller (pl_temps_free).  Each round binds and plans its step in an arena
 * of its own, reset after the round, so the rounds' plans do not pile up. */
CmStatus pl_materialize_recursive(PlBinder *b, const PsSelect *sel, PlRunFn run, void *ctx);
void pl_temps_free(PlTemp *temps);

/* A scan of every column of t; pl_bind_scan_addr's then gives each row's
 * address (ST_ROW_ADDR, storage/table.h), named "#addr", which no identifier
 * can name. */
PlNode *pl_bind_scan(PlBinder *b, StTable *t);
PlNode *pl_bind_scan_addr(PlBinder *b, StTable *t);
/* l EXCEPT r (without ALL: l's distinct rows not in r, NULLs equal), both of
 * the same column types: a grouping of their union, so it spills. */
PlNode *pl_bind_except(PlBinder *b, PlNode *l, PlNode *r);
/* ALTER TABLE: t's rows as n columns, column i being t's column from[i], or the
 * constant fill[i] where from[i] < 0, named names[i]. NULL with b->err. */
PlNode *pl_bind_reshape(PlBinder *b, StTable *t, int n, const int *from, const CmValue *fill,
                        const char *const *names);

/* What DEFAULT stands for in column c: its declared default, else NULL of its type
 * (a string's bytes are borrowed from the table). */
CmValue pl_column_default(const StColumn *c);

/* CREATE TABLE: binds a column's DEFAULT expression, converts it to `type` and
 * evaluates it into *out (strings in the query arena).  The expression must be
 * constant: columns, subqueries, aggregates and window functions are errors, as
 * is a value that does not convert (CM_TYPE, or CM_RUNTIME from the cast). */
CmStatus pl_bind_default(PlBinder *b, const PsExpr *ast, CmType type, CmValue *out);

/* UPDATE or DELETE by row address: a plan of the rows the
 * statement changes, in address order: column 0 the row's address
 * (ST_ROW_ADDR, storage/table.h), then those of t's columns in_plan[c] (t's
 * n_cols entries, filled) picks, in table order (an UPDATE's: those it sets,
 * new values; with RETURNING every column, for a DELETE as it is), then a
 * TRUE flag.  For the statements that cannot run in place
 * (pl_bind_update_values) for a FROM, a subquery or RETURNING: the rows it
 * does not change never leave the plan, nor the columns it does not need.  An UPDATE
 * with FROM needs b->update_target = t: the matches of its FROM and WHERE
 * give the rows, one match per row (which one unspecified). */
PlNode *pl_bind_changes(PlBinder *b, StTable *t, const PsStmt *stmt, bool *in_plan);

/* UPDATE without FROM, or DELETE (no SET list: set all NULL), as
 * expressions over t's columns (column i is t's column i), for a statement
 * that changes the table in place: *pred its
 * WHERE, a BOOLEAN that is never NULL (NULL: no WHERE), and set[col] the new
 * value of each column set, of its type (NULL for a column not set; set has
 * t->n_cols entries).  False, b->err clear, when the statement needs
 * pl_bind_changes' plan (FROM, or a subquery, which joins); false with
 * b->err on an error. */
bool pl_bind_update_values(PlBinder *b, StTable *t, const PsStmt *stmt, ExExpr **pred,
                           ExExpr **set);

/* INSERT/UPDATE/DELETE ... RETURNING: binds `sel` (PsStmt.returning, its FROM
 * naming the target) where b->temps holds the rows the statement wrote under
 * the target's name.  Subqueries, aggregates and window functions are refused
 * there, as in DuckDB. */
PlNode *pl_bind_returning(PlBinder *b, const PsSelect *sel);

/* `e` cast to `to` (e itself when already of that type); NULL on error. */
ExExpr *pl_cast(PlBinder *b, ExExpr *e, CmType to, int64_t off);

/* pl_cast for a conversion the SQL did not write (an operand, a CASE branch,
 * a VALUES cell, an assigned value): a string constant is converted now, and
 * one that does not convert is an error at the constant.  NULL on error. */
ExExpr *pl_cast_implicit(PlBinder *b, ExExpr *e, CmType to, int64_t off);

/* The logical type of a declared SQL type. */
CmStatus pl_type_from_ast(const PsTypeName *t, CmType *out, CmErr *err);
