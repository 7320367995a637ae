/*
 * ast.h - the abstract syntax tree produced by the parser.
 *
 * Every node lives in the query arena handed to ps_parse_next() and dies with
 * it; nothing here is freed one by one.  Every node records `src_off`/`src_len`,
 * the byte range of its text in the SQL string passed to the parser (offsets
 * from the start of that whole string), so the binder and runtime errors can
 * point at the SQL.  Identifiers are stored as written, unquoted, and with their
 * case folded to lower case unless they were double-quoted; string literals are
 * stored unescaped ('' -> ').  Lists are PsList of pointers.
 * The tree is plain data: no behaviour, no back pointers.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"

/* A growable array of pointers in an arena. */
typedef struct PsList {
    int n;        /* number of items */
    int cap;      /* allocated slots */
    void **items; /* in the query arena */
} PsList;

/* Appends `item`; returns the list (a new one when `list` is NULL), NULL on OOM. */
PsList *ps_list_append(CmArena *arena, PsList *list, void *item);

typedef struct PsSelect PsSelect;
typedef struct PsExpr PsExpr;

/* The catalog and schema written before a table name (`memory.main.t`, `main.t`),
 * as written: the binder checks them (planner/bind/binder.h, pl_check_schema). */
typedef struct PsSchemaRef {
    const char *catalog; /* NULL unless three parts were written */
    const char *schema;  /* NULL when the name was not qualified */
    int64_t off;         /* offset of the first part written (when `schema` is set) */
} PsSchemaRef;

/* ---- types -------------------------------------------------------------- */

/* A type as written: name lower-cased ("integer", "decimal", "varchar",
 * "double precision" is stored as "double"), with up to two parameters. */
typedef struct PsTypeName {
    const char *name; /* in arena, lower case */
    int n_params;     /* 0, 1 or 2 */
    int64_t params[2];
    bool is_list; /* written with [] after it: a LIST of this type */
    int64_t src_off, src_len;
} PsTypeName;

/* ---- expressions -------------------------------------------------------- */

typedef enum PsExprKind {
    PS_EX_INT,         /* integer literal: `ival`; too large for int64 -> PS_EX_NUMBER */
    PS_EX_NUMBER,      /* decimal or float literal as written: `str` ("1.50", "1e3") */
    PS_EX_STRING,      /* string literal: `str` (unescaped), `str_len` */
    PS_EX_NULL,        /* NULL */
    PS_EX_BOOL,        /* TRUE/FALSE: `ival` 1 or 0 */
    PS_EX_TYPED,       /* DATE 'x', TIMESTAMP 'x', INTERVAL 'n' DAY...: `type`, `str`; for
                          INTERVAL `str` is the quantity text and `name` the unit */
    PS_EX_COLUMN,      /* [[catalog.]schema.][qualifier.]name: `schema`, `qualifier` (the
                          table; may be NULL), `name` */
    PS_EX_STAR,        /* * or [[catalog.]schema.]qualifier.* in a select list: `schema`,
                          `qualifier` may be NULL */
    PS_EX_UNARY,       /* `op` applied to `left` */
    PS_EX_BINARY,      /* `left` `op` `right` */
    PS_EX_FUNC,        /* name(args): `name`, `args`, `distinct`, `star` for f(*),
                          `over` for a window call, `filter` for FILTER (WHERE ..),
                          `agg_order` for f(x ORDER BY y) */
    PS_EX_CASE,        /* CASE [left] WHEN..THEN.. [ELSE right] END: `left` operand
                          (NULL for searched CASE), `args` = PsWhen*, `right` = ELSE */
    PS_EX_CAST,        /* CAST(left AS type) and left::type */
    PS_EX_BETWEEN,     /* left [NOT] BETWEEN args[0] AND args[1]: `negated` */
    PS_EX_IN_LIST,     /* left [NOT] IN (args...): `negated` */
    PS_EX_IN_SELECT,   /* left [NOT] IN (subquery): `negated`, `subquery` */
    PS_EX_EXISTS,      /* [NOT] EXISTS (subquery): `negated`, `subquery` */
    PS_EX_SUBQUERY,    /* (subquery) used as a scalar value */
    PS_EX_IS_NULL,     /* left IS [NOT] NULL, also ISNULL / NOTNULL: `negated` */
    PS_EX_LIKE,        /* left [NOT] LIKE right [ESCAPE escape]: `negated`, also ILIKE
                          with op PS_OP_ILIKE, else op PS_OP_LIKE */
    PS_EX_IS_DISTINCT, /* left IS [NOT] DISTINCT FROM right: `negated` */
    PS_EX_ROW,         /* a row value (a, b, ...): `args`, two or more; allowed only as
                          an operand of a comparison, IN or IS [NOT] DISTINCT FROM */
    PS_EX_DEFAULT,     /* the DEFAULT keyword: allowed only as a whole value of an INSERT's
                          VALUES row; the binder rejects it anywhere else */
    PS_EX_PARAM,       /* a parameter `?` or `$n`: `ival` its 1-based index (`?` takes
                          the largest index before it plus one, as in SQLite); the
                          binder reads its value from the statement's bound values */
} PsExprKind;

typedef enum PsOp {
    PS_OP_NONE = 0,
    /* unary */
    PS_OP_NEG,
    PS_OP_PLUS,
    PS_OP_NOT,
    PS_OP_BITNOT,
    /* binary arithmetic and string */
    PS_OP_ADD,
    PS_OP_SUB,
    PS_OP_MUL,
    PS_OP_DIV,
    PS_OP_MOD,
    PS_OP_CONCAT,
    PS_OP_BITAND,
    PS_OP_BITOR,
    PS_OP_SHL,
    PS_OP_SHR,
    /* comparison */
    PS_OP_EQ,
    PS_OP_NE,
    PS_OP_LT,
    PS_OP_LE,
    PS_OP_GT,
    PS_OP_GE,
    /* logic */
    PS_OP_AND,
    PS_OP_OR,
    /* LIKE flavours (PS_EX_LIKE) */
    PS_OP_LIKE,
    PS_OP_ILIKE,
} PsOp;

typedef struct PsWhen {
    PsExpr *cond;   /* WHEN cond (or the value compared with the CASE operand) */
    PsExpr *result; /* THEN result */
} PsWhen;

typedef enum PsFrameUnit { PS_FRAME_NONE = 0, PS_FRAME_ROWS, PS_FRAME_RANGE } PsFrameUnit;
typedef enum PsBoundKind {
    PS_BOUND_UNBOUNDED_PRECEDING,
    PS_BOUND_PRECEDING,
    PS_BOUND_CURRENT_ROW,
    PS_BOUND_FOLLOWING,
    PS_BOUND_UNBOUNDED_FOLLOWING,
} PsBoundKind;

typedef struct PsWindow {
    PsList *partition_by; /* PsExpr* or NULL */
    PsList *order_by;     /* PsOrderItem* or NULL */
    PsFrameUnit frame;    /* PS_FRAME_NONE when no frame clause was written */
    PsBoundKind start_kind, end_kind;
    PsExpr *start_off, *end_off; /* for n PRECEDING / n FOLLOWING */
    const char *ref;             /* OVER w / OVER (w ...): the named window it builds on, or NULL */
    int64_t ref_off;
    bool ref_bare; /* OVER w, without parentheses: w as it is, frame included */
} PsWindow;

/* WINDOW name AS (spec) of a SELECT. */
typedef struct PsWindowDef {
    const char *name;
    int64_t name_off;
    PsWindow *spec;
} PsWindowDef;

struct PsExpr {
    PsExprKind kind;
    PsOp op;
    bool negated;          /* NOT BETWEEN / NOT IN / NOT EXISTS / IS NOT NULL / NOT LIKE */
    bool distinct;         /* f(DISTINCT ...) */
    bool star;             /* count(*) */
    int64_t ival;          /* PS_EX_INT, PS_EX_BOOL */
    const char *str;       /* literal text, in arena, NUL-terminated */
    int64_t str_len;       /* bytes of `str` (strings may hold NUL) */
    const char *name;      /* column / function name / interval unit, lower-cased */
    const char *qualifier; /* table qualifier of a column or star, or NULL */
    PsSchemaRef schema;    /* catalog and schema before `qualifier` */
    PsExpr *left, *right, *escape;
    PsList *args; /* PsExpr* (or PsWhen* for CASE) */
    PsSelect *subquery;
    PsTypeName *type;      /* CAST target, typed literal type */
    PsWindow *over;        /* window specification, or NULL */
    PsExpr *filter;        /* FILTER (WHERE ...) of an aggregate, or NULL */
    PsList *agg_order;     /* ORDER BY inside an aggregate's call: PsOrderItem*, or NULL */
    int64_t agg_order_off; /* offset of that ORDER, for errors */
    int64_t src_off, src_len;
};

/* ---- select ------------------------------------------------------------- */

typedef struct PsOrderItem {
    PsExpr *expr;
    bool desc;
    int nulls; /* 0 = default, 1 = NULLS FIRST, 2 = NULLS LAST */
} PsOrderItem;

typedef struct PsTarget {
    PsExpr *expr;      /* PS_EX_STAR for * and t.* */
    const char *alias; /* AS alias, or NULL */
    PsList *exclude;   /* * EXCLUDE (a, b): PsExpr* columns (names and offsets), or NULL */
    PsList *replace;   /* * REPLACE (x AS a, ...): PsTarget* (expression and column), or NULL */
    int64_t src_off, src_len;
} PsTarget;

/* Limits on the shape of a query, checked as it is parsed: the planner walks
 * these trees recursively, and a left-associative chain (t1, t2, t3 ... or
 * q1 UNION q2 UNION q3 ...) nests as deeply as it is long.  Both follow SQLite. */
/* tables in one FROM clause (keep in sync with MAX_LEAVES in planner/bind/bind_join.c) */
#define PS_MAX_FROM_TABLES 64
#define PS_MAX_COMPOUND_TERMS 500 /* SELECTs in one UNION/INTERSECT/EXCEPT chain */
#define PS_MAX_GROUPING_SETS 4096 /* sets of one GROUP BY, once its items are crossed */

typedef enum PsJoinType {
    PS_JOIN_INNER,
    PS_JOIN_LEFT,
    PS_JOIN_RIGHT,
    PS_JOIN_FULL,
    PS_JOIN_CROSS,
} PsJoinType;

typedef enum PsFromKind {
    PS_FROM_TABLE,
    PS_FROM_SUBQUERY,
    PS_FROM_JOIN,
    PS_FROM_FUNCTION, /* a table function: name(args), e.g. generate_series(1, 10) */
} PsFromKind;

typedef struct PsFrom PsFrom;
struct PsFrom {
    PsFromKind kind;
    PsSchemaRef schema;    /* TABLE: optional catalog and schema */
    const char *name;      /* TABLE: table, view or CTE name; FUNCTION: function name */
    const char *alias;     /* TABLE/SUBQUERY/FUNCTION: AS alias, or NULL */
    PsList *col_aliases;   /* SUBQUERY/TABLE/FUNCTION: alias(c1, c2) as const char*, or NULL */
    PsList *args;          /* FUNCTION: argument expressions (PsExpr*), NULL when none */
    PsSelect *subquery;    /* SUBQUERY (also LATERAL-free VALUES lists) */
    PsJoinType join_type;  /* JOIN */
    bool natural;          /* JOIN: NATURAL */
    PsFrom *left, *right;  /* JOIN; a comma list is a left-deep chain of CROSS joins */
    PsExpr *on;            /* JOIN: ON condition or NULL */
    PsList *using_cols;    /* JOIN: USING (const char*) or NULL */
    int n_tables;          /* JOIN: the tables under it (at most PS_MAX_FROM_TABLES) */
    bool one_column;       /* SUBQUERY: must have one column (x > ANY (subquery)) */
    bool is_update_target; /* TABLE: the target of UPDATE ... FROM (PlBinder.update_target) */
    int64_t src_off, src_len;
};

typedef struct PsCte {
    const char *name;
    PsList *col_names; /* const char*, or NULL */
    PsSelect *select;
    int64_t src_off, src_len;
} PsCte;

typedef enum PsSelectKind {
    PS_SEL_SIMPLE, /* SELECT ... FROM ... */
    PS_SEL_SETOP,  /* left UNION/INTERSECT/EXCEPT [ALL] right */
    PS_SEL_VALUES, /* VALUES (..), (..) */
} PsSelectKind;

typedef enum PsSetOp { PS_SET_UNION, PS_SET_INTERSECT, PS_SET_EXCEPT } PsSetOp;

typedef enum PsGroupKind {
    PS_GROUP_PLAIN,
    PS_GROUP_ROLLUP,
    PS_GROUP_CUBE,
    PS_GROUP_SETS,
} PsGroupKind;

struct PsSelect {
    PsSelectKind kind;
    /* SIMPLE */
    bool distinct;
    PsList *distinct_on; /* DISTINCT ON (...): PsExpr*, or NULL; the binder makes it a QUALIFY */
    PsList *targets;     /* PsTarget* */
    PsFrom *from;        /* NULL when there is no FROM */
    PsExpr *where;
    PsGroupKind group_kind;
    PsList *group_by; /* PsExpr*; for PS_GROUP_SETS a list of PsList* (each a set) */
    bool group_all;   /* GROUP BY ALL: the binder groups by the targets without aggregates */
    PsExpr *having;
    PsList *windows; /* PsWindowDef* of the WINDOW clause, or NULL */
    PsExpr *qualify; /* QUALIFY condition, or NULL */
    /* SETOP */
    PsSetOp setop;
    bool all;    /* UNION ALL etc. */
    int n_terms; /* SETOP: the SELECTs it combines (at most PS_MAX_COMPOUND_TERMS) */
    PsSelect *left, *right;
    /* VALUES */
    PsList *rows; /* PsList* of PsExpr* */
    /* apply to the whole query expression (any kind) */
    PsList *with;     /* PsCte*, or NULL */
    bool recursive;   /* WITH RECURSIVE */
    PsList *order_by; /* PsOrderItem* */
    bool order_all;   /* ORDER BY ALL: order_by is one template item, the binder makes one
                       * per output column */
    PsExpr *limit, *offset;
    int64_t src_off, src_len;
};

/* ---- statements --------------------------------------------------------- */

typedef struct PsColumnDef {
    const char *name;
    PsTypeName *type;
    bool not_null;
    bool primary_key;
    bool unique;
    PsExpr *default_value; /* DEFAULT expr, or NULL */
    int64_t src_off, src_len;
} PsColumnDef;

typedef struct PsSetClause {
    const char *column;
    int64_t column_off; /* byte offset of the column name, for errors */
    PsExpr *value;      /* NULL in an INSERT's column list */
} PsSetClause;

typedef struct PsOption {
    const char *name; /* lower-cased option name, e.g. "delimiter", "header" */
    PsExpr *value;    /* NULL when the option was written without a value */
} PsOption;

typedef enum PsStmtKind {
    PS_ST_SELECT,       /* select */
    PS_ST_CREATE_TABLE, /* name, if_not_exists, columns (PsColumnDef*), select (AS SELECT),
                           primary_key (const char*) for a table-level PRIMARY KEY (..),
                           uniques (const char* "a,b") for each table-level UNIQUE (..) */
    PS_ST_CREATE_VIEW,  /* name, if_not_exists, columns (const char* names or NULL), select */
    PS_ST_CREATE_INDEX, /* name, table, columns (const char*), unique, if_not_exists */
    PS_ST_DROP,         /* object ("table", "view", "index"), name, if_exists */
    PS_ST_INSERT,       /* table, columns (const char*, or NULL), select (VALUES or query;
                           NULL for DEFAULT VALUES) */
    PS_ST_UPDATE,       /* table, sets (PsSetClause*), where */
    PS_ST_DELETE,       /* table, where */
    PS_ST_COPY,         /* table, columns (const char*) or NULL, path, options (PsOption*),
                           is_to (COPY .. TO), select for COPY (query) TO */
    PS_ST_SET,          /* name, value (expr; identifiers after '=' are PS_EX_COLUMN) */
    PS_ST_RESET,        /* name */
    PS_ST_EXPLAIN,      /* inner, analyze, options (PsOption*: "format" -> json/text) */
    PS_ST_BEGIN,
    PS_ST_COMMIT,
    PS_ST_ROLLBACK,
    PS_ST_CACHE,       /* CACHE [LAZY] TABLE name [OPTIONS (k v, ..)] [[AS] select]: name,
                          is_lazy, select or NULL, options (PsExpr*: key, value, key, value,
                          ...; a key is a STRING or a COLUMN, a value a STRING) */
    PS_ST_UNCACHE,     /* UNCACHE TABLE [IF EXISTS] name: name, if_exists */
    PS_ST_CLEAR_CACHE, /* CLEAR CACHE */
    PS_ST_SHOW_TABLES, /* SHOW TABLES */
    PS_ST_ALTER,       /* ALTER TABLE table ...: alter, name (the column, or the new table name),
                          name2 (RENAME COLUMN's new name), columns (ADD: one PsColumnDef*),
                          name_off (offset of the column named) */
    PS_ST_DESCRIBE,    /* DESCRIBE t | query: select (for t, SELECT * FROM t), table (t or NULL) */
    PS_ST_ANALYZE,     /* ANALYZE [name]: name or NULL (every table), name_off */
} PsStmtKind;

typedef enum PsAlterKind {
    PS_ALTER_RENAME_TABLE,
    PS_ALTER_RENAME_COLUMN,
    PS_ALTER_ADD_COLUMN,
    PS_ALTER_DROP_COLUMN,
} PsAlterKind;

typedef struct PsStmt PsStmt;
struct PsStmt {
    PsStmtKind kind;
    const char *name;   /* object / setting name */
    const char *table;  /* INSERT/UPDATE/DELETE/COPY/CREATE INDEX target */
    const char *object; /* DROP: "table", "view" or "index" */
    const char *path;   /* COPY file path */
    int64_t path_len;   /* bytes of `path` (a NUL inside is the user's) */
    int64_t path_off;   /* offset of the path literal in the SQL */
    int64_t name_off;   /* CACHE, UNCACHE, ANALYZE: offset of the name's last part */
    const char *primary_key;
    PsSchemaRef schema; /* catalog and schema written before `name` or `table` */
    bool if_exists, if_not_exists, unique, analyze, is_to, temporary, is_lazy;
    bool or_replace;   /* CREATE OR REPLACE TABLE|VIEW */
    PsAlterKind alter; /* ALTER TABLE */
    const char *name2;
    PsList *columns;
    PsList *column_names; /* INSERT's column list as PsSetClause (names with offsets) */
    PsList *sets;
    PsList *uniques; /* CREATE TABLE: table-level UNIQUE (..) column lists */
    PsList *options;
    PsSelect *select;
    PsSelect *returning; /* INSERT/UPDATE/DELETE ... RETURNING list: SELECT list FROM target,
                            the target being (in the binder) the rows the statement wrote */
    PsFrom *from;        /* UPDATE ... FROM: the target, then the other tables; or NULL */
    const char *alias;   /* UPDATE t AS alias: the target's name in the statement, or NULL */
    PsExpr *where;
    PsExpr *value;
    PsStmt *inner;
    int64_t src_off, src_len; /* the statement's text, without the ';' */
    int n_params;             /* the largest parameter index written (0: none) */
};
