/*
 * grammar.y - the Lemon grammar of Sluice's SQL dialect (PostgreSQL-like).
 *
 * Lemon turns this file into gen/grammar.c and gen/grammar.h in the build tree
 * (see CMakeLists.txt); nothing generated is committed.  parse.c feeds one
 * statement's tokens, then a 0 token; the start rule stores the PsStmt in the
 * parse context.  Actions only assign: building nodes, folding literals and
 * checking special forms happen in the ps_build_* functions (build_expr.c,
 * build_query.c), which return a scratch node after the first error.
 * Every node lives in the query arena and is freed with it, so no symbol needs
 * a %destructor: popping a symbol off Lemon's stack never leaks.
 * Non-reserved keywords become ID through %fallback wherever the keyword itself
 * cannot appear.  Lemon folds a state's most common reduction into a default
 * and tries the fallback first, so no state may both shift ID and reduce on a
 * fallback keyword (as after a table name, where an alias may follow and LEFT
 * JOIN may too): LEFT and RIGHT stay reserved, with explicit rules for left()
 * and right().  Check after edits: in the report of `lemon -c grammar.y`, no
 * state with "ID shift" may list a fallback keyword with only "reduce".
 * Precedence follows PostgreSQL (lowest first): set operations; OR; AND; NOT;
 * IS, ISNULL, NOTNULL; comparisons; BETWEEN, IN, LIKE, ILIKE; ||, &, |, <<, >>;
 * + -; * / %; unary - + ~; ::.  NOT_LA is NOT followed by BETWEEN, IN, LIKE or
 * ILIKE (the driver looks one token ahead), so `a = b NOT IN (..)` binds as
 * `a = (b NOT IN (..))`.  The driver also turns NOT NULL right after the end
 * of an expression into one NOTNULL token: SQLite's postfix `x NOT NULL`, and
 * the column constraint.
 */

%include {
#include <stdbool.h>
#include <stddef.h>

#include "parser/parse_int.h"
}

%name ps_grammar
%token_prefix PS_TK_
%token_type {PsToken}
%extra_context {PsParse *ps}
%stack_size 600
%start_symbol input

%syntax_error {
    (void)yymajor;
    ps_build_syntax_error(ps, TOKEN);
}
%stack_overflow {
    ps_build_overflow(ps);
}

/* Tokens the lexer makes that are not keywords. */
%token ID STRING INTEGER FLOAT ILLEGAL SEMI LP RP COMMA DOT LBRACKET RBRACKET LBRACE RBRACE COLON PARAM.

/* Keywords usable as names where the grammar has no other use for them.
 * Keep in sync with the keyword table in lexer.c. */
%fallback ID
    ADD ALTER ANALYZE BEGIN BY CACHE CLEAR COLUMN COMMIT COPY CREATE CUBE CURRENT DAY DEFAULT DELETE DESCRIBE DROP
    ESCAPE EXCLUDE EXPLAIN FILTER FIRST FOLLOWING FOR GROUPING HOUR IF INDEX INSERT INTERVAL KEY LAST
    LAZY MINUTE MONTH NULLS OPTIONS OUTER OVER PARTITION POSITION PRECEDING PRECISION PRIMARY
    RANGE RECURSIVE RENAME REPLACE RESET ROLLBACK ROLLUP ROW ROWS SECOND SET SETS SHOW START TABLE TEMP TEMPORARY
    TO TRANSACTION UNBOUNDED UNCACHE UNIQUE UNKNOWN UPDATE VALUES VARYING VIEW WEEK WORK YEAR
    YEARS MONTHS WEEKS DAYS HOURS MINUTES SECONDS MILLISECOND MILLISECONDS MICROSECOND MICROSECONDS.

/* Reserved keywords: never names. */
%token ALL AND ANY AS ASC BETWEEN BOTH CASE CROSS DESC DISTINCT ELSE END EXCEPT EXISTS
    FALSE FROM FULL GROUP HAVING ILIKE IN INNER INTERSECT INTO IS ISNULL JOIN LEADING
    LEFT LIKE LIMIT NATURAL NOT NOTNULL NULL OFFSET ON OR ORDER QUALIFY RETURNING RIGHT SELECT SOME THEN
    TRAILING TRUE UNION USING WHEN WHERE WINDOW WITH.

%left UNION EXCEPT.
%left INTERSECT.
%left OR.
%left AND.
%right NOT.
%nonassoc IS ISNULL NOTNULL.
%nonassoc EQ NE LT GT LE GE.
%nonassoc BETWEEN IN LIKE ILIKE NOT_LA.
%nonassoc ESCAPE.
%left CONCAT BITAND BITOR SHL SHR.
%left PLUS MINUS.
%left STAR SLASH PERCENT.
%right UMINUS TILDE.
%left DCOLON.
%left DOT.
/* `((select 1))`: the outer parentheses belong to the select, not to an
 * expression or a FROM item: rules marked [SUBQUERY] lose to shifting RP.
 * COLDEF outranks NOTNULL; see the coldef rules. */
%nonassoc SUBQUERY COLDEF.
%left LP RP.

/* ======================================================================== */
/* statements                                                                */
/* ======================================================================== */

input ::= cmd(C) SEMI.  { ps->stmt = C; }
input ::= cmd(C).       { ps->stmt = C; }

%type cmd {PsStmt *}
cmd(A) ::= select(S). {
    A = ps_build_stmt(ps, PS_ST_SELECT, S->src_off);
    A->select = S;
}

/* CREATE TABLE */
cmd(A) ::= CREATE(K) opt_or_replace(R) opt_temp(T) TABLE opt_if_not_exists(I) qname(N) LP table_elems(E) RP. {
    A = ps_build_create_table(ps, K, T, I, &N, E, NULL);
    ps_build_or_replace(ps, A, R);
}
cmd(A) ::= CREATE(K) opt_or_replace(R) opt_temp(T) TABLE opt_if_not_exists(I) qname(N) AS select(S). {
    A = ps_build_create_table(ps, K, T, I, &N, NULL, S);
    ps_build_or_replace(ps, A, R);
}

/* CREATE OR REPLACE TABLE|VIEW (DuckDB, PostgreSQL for views) */
%type opt_or_replace {bool}
opt_or_replace(A) ::= .            { A = false; }
opt_or_replace(A) ::= OR REPLACE.  { A = true; }

/* A table, view or index name, qualified by a schema or catalog.schema. */
%type qname {PsQName}
qname(A) ::= ID(N).                    { A.parts[0] = N; A.n = 1; }
qname(A) ::= ID(S) DOT ID(N).          { A.parts[0] = S; A.parts[1] = N; A.n = 2; }
qname(A) ::= ID(C) DOT ID(S) DOT ID(N). {
    A.parts[0] = C;
    A.parts[1] = S;
    A.parts[2] = N;
    A.n = 3;
}

%type opt_temp {bool}
opt_temp(A) ::= .           { A = false; }
opt_temp(A) ::= TEMP.       { A = true; }
opt_temp(A) ::= TEMPORARY.  { A = true; }

%type opt_if_not_exists {bool}
opt_if_not_exists(A) ::= .              { A = false; }
opt_if_not_exists(A) ::= IF NOT EXISTS. { A = true; }

%type opt_if_exists {bool}
opt_if_exists(A) ::= .          { A = false; }
opt_if_exists(A) ::= IF EXISTS. { A = true; }

%type table_elems {PsStmt *}
table_elems(A) ::= coldef(C).              { A = ps_build_table_elem(ps, NULL, C, NULL); }
table_elems(A) ::= table_constraint(K).    { A = ps_build_table_elem(ps, NULL, NULL, &K); }
table_elems(A) ::= table_elems(E) COMMA coldef(C). { A = ps_build_table_elem(ps, E, C, NULL); }
table_elems(A) ::= table_elems(E) COMMA table_constraint(K). {
    A = ps_build_table_elem(ps, E, NULL, &K);
}

%type coldef {PsColumnDef *}
coldef(A) ::= ID(N) typename(T).         { A = ps_build_coldef(ps, N, T); }
coldef(A) ::= coldef(C) NOT NULL.        { A = ps_build_coldef_more(ps, C); A->not_null = true; }
coldef(A) ::= coldef(C) NOTNULL.         { A = ps_build_coldef_more(ps, C); A->not_null = true; }
coldef(A) ::= coldef(C) NULL.            { A = ps_build_coldef_more(ps, C); }
coldef(A) ::= coldef(C) PRIMARY KEY.     { A = ps_build_coldef_more(ps, C); A->primary_key = true; }
coldef(A) ::= coldef(C) UNIQUE.          { A = ps_build_coldef_more(ps, C); A->unique = true; }
/* [COLDEF]: in "DEFAULT 0 NOT NULL" the NOT NULL is a constraint, not a postfix test. */
coldef(A) ::= coldef(C) DEFAULT expr(X). [COLDEF] {
    A = ps_build_coldef_more(ps, C);
    A->default_value = X;
}

%type table_constraint {PsTableConstraint}
table_constraint(A) ::= PRIMARY KEY LP name_list(L) RP. { A.is_primary = true; A.cols = L; }
table_constraint(A) ::= UNIQUE LP name_list(L) RP.      { A.is_primary = false; A.cols = L; }

/* CREATE VIEW, CREATE INDEX, DROP */
cmd(A) ::= CREATE(K) opt_or_replace(R) opt_temp(T) VIEW opt_if_not_exists(I) qname(N) opt_name_list(L) AS select(S). {
    A = ps_build_stmt(ps, PS_ST_CREATE_VIEW, K.off);
    ps_build_or_replace(ps, A, R);
    A->temporary = T;
    A->if_not_exists = I;
    A->name = ps_build_qname(ps, &N, &A->schema);
    A->columns = L;
    A->select = S;
}
cmd(A) ::= CREATE(K) opt_unique(U) INDEX opt_if_not_exists(I) ID(N) ON qname(T)
           LP index_cols(L) RP. {
    A = ps_build_stmt(ps, PS_ST_CREATE_INDEX, K.off);
    A->unique = U;
    A->if_not_exists = I;
    A->name = ps_build_ident(ps, N);
    A->table = ps_build_qname(ps, &T, &A->schema);
    A->columns = L;
}

%type opt_unique {bool}
opt_unique(A) ::= .       { A = false; }
opt_unique(A) ::= UNIQUE. { A = true; }

%type index_cols {PsList *}
index_cols(A) ::= ID(N) opt_dir.                      { A = ps_build_names(ps, NULL, N); }
index_cols(A) ::= index_cols(L) COMMA ID(N) opt_dir.  { A = ps_build_names(ps, L, N); }

cmd(A) ::= DROP(K) drop_object(O) opt_if_exists(E) qname(N). {
    A = ps_build_stmt(ps, PS_ST_DROP, K.off);
    A->object = O;
    A->if_exists = E;
    A->name = ps_build_qname(ps, &N, &A->schema);
}

%type drop_object {const char *}
drop_object(A) ::= TABLE. { A = "table"; }
drop_object(A) ::= VIEW.  { A = "view"; }
drop_object(A) ::= INDEX. { A = "index"; }

/* ALTER TABLE t RENAME TO u | RENAME [COLUMN] a TO b | ADD [COLUMN] c type ... | DROP [COLUMN] c */
cmd(A) ::= ALTER(K) TABLE qname(T) RENAME TO ID(N). {
    A = ps_build_alter(ps, K, &T, PS_ALTER_RENAME_TABLE, NULL, &N, NULL);
}
cmd(A) ::= ALTER(K) TABLE qname(T) RENAME opt_column ID(C) TO ID(N). {
    A = ps_build_alter(ps, K, &T, PS_ALTER_RENAME_COLUMN, &C, &N, NULL);
}
cmd(A) ::= ALTER(K) TABLE qname(T) ADD opt_column coldef(D). {
    A = ps_build_alter(ps, K, &T, PS_ALTER_ADD_COLUMN, NULL, NULL, D);
}
cmd(A) ::= ALTER(K) TABLE qname(T) DROP opt_column ID(C). {
    A = ps_build_alter(ps, K, &T, PS_ALTER_DROP_COLUMN, &C, NULL, NULL);
}
opt_column ::= .
opt_column ::= COLUMN.

/* SHOW TABLES; SHOW SETTINGS, SHOW ALL: the rows of sluice_settings; DESCRIBE t, SHOW t
 * (DuckDB): the columns of t; DESCRIBE query */
cmd(A) ::= SHOW(K) ID(N). { A = ps_build_show(ps, K, N); }
cmd(A) ::= SHOW(K) ALL. { A = ps_build_show_settings(ps, K); }
cmd(A) ::= DESCRIBE(K) qname(T). {
    A = ps_build_stmt(ps, PS_ST_DESCRIBE, K.off);
    A->select = ps_build_select_all(ps, K, &T);
}
cmd(A) ::= DESCRIBE(K) select_no_parens(S). {
    A = ps_build_stmt(ps, PS_ST_DESCRIBE, K.off);
    A->select = S;
}

/* INSERT, UPDATE, DELETE, each with an optional RETURNING list (ps_build_returning) */
cmd(A) ::= INSERT(K) INTO qname(T) select(S) opt_returning(R). {
    A = ps_build_stmt(ps, PS_ST_INSERT, K.off);
    A->table = ps_build_qname(ps, &T, &A->schema);
    A->select = S;
    ps_build_returning(ps, A, &T, NULL, R);
}
cmd(A) ::= INSERT(K) INTO qname(T) LP insert_cols(L) RP select(S) opt_returning(R). {
    A = ps_build_stmt(ps, PS_ST_INSERT, K.off);
    A->table = ps_build_qname(ps, &T, &A->schema);
    A->column_names = L;
    for (int i = 0; L != NULL && i < L->n; i++) {
        A->columns = ps_build_list(ps, A->columns, (void *)((PsSetClause *)L->items[i])->column);
    }
    A->select = S;
    ps_build_returning(ps, A, &T, NULL, R);
}
/* Names with their offsets, so that an unknown or repeated one is pointed at. */
%type insert_cols {PsList *}
insert_cols(A) ::= ID(N).                     { A = ps_build_list(ps, NULL, ps_build_set_clause(ps, N, NULL)); }
insert_cols(A) ::= insert_cols(L) COMMA ID(N). { A = ps_build_list(ps, L, ps_build_set_clause(ps, N, NULL)); }
cmd(A) ::= INSERT(K) INTO qname(T) DEFAULT VALUES opt_returning(R). {
    A = ps_build_stmt(ps, PS_ST_INSERT, K.off);
    A->table = ps_build_qname(ps, &T, &A->schema);
    ps_build_returning(ps, A, &T, NULL, R);
}
/* UPDATE t [AS x] SET .. [FROM ..] [WHERE ..]: FROM as PostgreSQL and DuckDB have it.
 * Only `AS x` names the target: SET is not reserved. */
cmd(A) ::= UPDATE(K) qname(T) update_alias(N) SET set_list(L) from_clause(F) where_clause(W)
           opt_returning(R). {
    A = ps_build_stmt(ps, PS_ST_UPDATE, K.off);
    A->table = ps_build_qname(ps, &T, &A->schema);
    A->alias = N;
    A->sets = L;
    A->where = W;
    ps_build_update_from(ps, A, &T, F);
    ps_build_returning(ps, A, &T, N, R);
}
cmd(A) ::= DELETE(K) FROM qname(T) where_clause(W) opt_returning(R). {
    A = ps_build_stmt(ps, PS_ST_DELETE, K.off);
    A->table = ps_build_qname(ps, &T, &A->schema);
    A->where = W;
    ps_build_returning(ps, A, &T, NULL, R);
}

%type update_alias {const char *}
update_alias(A) ::= .               { A = NULL; }
update_alias(A) ::= AS label(N).    { A = ps_build_ident(ps, N); }

%type opt_returning {PsList *}
opt_returning(A) ::= .                          { A = NULL; }
opt_returning(A) ::= RETURNING target_list(L).  { A = L; }

%type set_list {PsList *}
set_list(A) ::= set_item(S).                     { A = ps_build_list(ps, NULL, S); }
set_list(A) ::= set_list(L) COMMA set_item(S).   { A = ps_build_list(ps, L, S); }

%type set_item {PsSetClause *}
set_item(A) ::= ID(N) EQ expr(X).  { A = ps_build_set_clause(ps, N, X); }

/* COPY */
cmd(A) ::= COPY(K) qname(T) opt_name_list(L) FROM STRING(P) copy_options(O). {
    A = ps_build_stmt(ps, PS_ST_COPY, K.off);
    A->table = ps_build_qname(ps, &T, &A->schema);
    A->columns = L;
    ps_build_copy_path(ps, A, P);
    A->options = O;
}
cmd(A) ::= COPY(K) qname(T) opt_name_list(L) TO STRING(P) copy_options(O). {
    A = ps_build_stmt(ps, PS_ST_COPY, K.off);
    A->table = ps_build_qname(ps, &T, &A->schema);
    A->columns = L;
    ps_build_copy_path(ps, A, P);
    A->options = O;
    A->is_to = true;
}
cmd(A) ::= COPY(K) select_with_parens(S) TO STRING(P) copy_options(O). {
    A = ps_build_stmt(ps, PS_ST_COPY, K.off);
    A->select = S;
    ps_build_copy_path(ps, A, P);
    A->options = O;
    A->is_to = true;
}

%type copy_options {PsList *}
copy_options(A) ::= .                          { A = NULL; }
copy_options(A) ::= LP option_list(L) RP.      { A = L; }
copy_options(A) ::= WITH LP option_list(L) RP. { A = L; }

%type option_list {PsList *}
option_list(A) ::= option(O).                      { A = ps_build_list(ps, NULL, O); }
option_list(A) ::= option_list(L) COMMA option(O). { A = ps_build_list(ps, L, O); }

%type option {PsOption *}
option(A) ::= ID(N).           { A = ps_build_option(ps, N, NULL); }
option(A) ::= ID(N) expr(X).   { A = ps_build_option(ps, N, X); }
option(A) ::= NULL(N) expr(X). { A = ps_build_option(ps, N, X); }

/* CACHE [LAZY] TABLE, UNCACHE TABLE, CLEAR CACHE: Spark SQL's statements
 * (planner/cache.h).  As in Spark, AS is optional before the query and an
 * option is `key value` or `key = value`, the key a string or a name. */
cmd(A) ::= CACHE(K) opt_lazy(L) TABLE qname(N) cache_options(O) opt_cache_query(S). {
    A = ps_build_stmt(ps, PS_ST_CACHE, K.off);
    A->is_lazy = L;
    A->name = ps_build_qname(ps, &N, &A->schema);
    A->name_off = N.parts[N.n - 1].off;
    A->options = O;
    A->select = S;
}
cmd(A) ::= UNCACHE(K) TABLE opt_if_exists(E) qname(N). {
    A = ps_build_stmt(ps, PS_ST_UNCACHE, K.off);
    A->if_exists = E;
    A->name = ps_build_qname(ps, &N, &A->schema);
    A->name_off = N.parts[N.n - 1].off;
}
cmd(A) ::= CLEAR(K) CACHE. { A = ps_build_stmt(ps, PS_ST_CLEAR_CACHE, K.off); }

/* ANALYZE [table]: recomputes column statistics (PostgreSQL, DuckDB). */
cmd(A) ::= ANALYZE(K). { A = ps_build_stmt(ps, PS_ST_ANALYZE, K.off); }
cmd(A) ::= ANALYZE(K) qname(N). {
    A = ps_build_stmt(ps, PS_ST_ANALYZE, K.off);
    A->name = ps_build_qname(ps, &N, &A->schema);
    A->name_off = N.parts[N.n - 1].off;
}

%type opt_lazy {bool}
opt_lazy(A) ::= .     { A = false; }
opt_lazy(A) ::= LAZY. { A = true; }

%type opt_cache_query {PsSelect *}
opt_cache_query(A) ::= .             { A = NULL; }
opt_cache_query(A) ::= select(S).    { A = S; }
opt_cache_query(A) ::= AS select(S). { A = S; }

%type cache_options {PsList *}
cache_options(A) ::= .                                  { A = NULL; }
cache_options(A) ::= OPTIONS LP cache_option_list(L) RP. { A = L; }

%type cache_option_list {PsList *}
cache_option_list(A) ::= cache_key(K) cache_eq STRING(V). {
    A = ps_build_list(ps, ps_build_list(ps, NULL, K), ps_build_string(ps, V));
}
cache_option_list(A) ::= cache_option_list(L) COMMA cache_key(K) cache_eq STRING(V). {
    A = ps_build_list(ps, ps_build_list(ps, L, K), ps_build_string(ps, V));
}

cache_eq ::= .
cache_eq ::= EQ.

%type cache_key {PsExpr *}
cache_key(A) ::= STRING(K). { A = ps_build_string(ps, K); }
cache_key(A) ::= ID(K).     { A = ps_build_column(ps, &K, 1); }

/* SET, RESET */
cmd(A) ::= SET(K) setting(N) set_op expr(X). {
    A = ps_build_stmt(ps, PS_ST_SET, K.off);
    A->name = N;
    A->value = X;
}
cmd(A) ::= SET(K) setting(N) set_op ON(V). {
    A = ps_build_stmt(ps, PS_ST_SET, K.off);
    A->name = N;
    A->value = ps_build_column(ps, &V, 1);
}
cmd(A) ::= RESET(K) setting(N). {
    A = ps_build_stmt(ps, PS_ST_RESET, K.off);
    A->name = N;
}
cmd(A) ::= RESET(K) ALL. {
    A = ps_build_stmt(ps, PS_ST_RESET, K.off);
    A->name = "all";
}

set_op ::= EQ.
set_op ::= TO.

%type setting {const char *}
setting(A) ::= ID(N).                { A = ps_build_dotted(ps, NULL, N); }
setting(A) ::= setting(P) DOT ID(N). { A = ps_build_dotted(ps, P, N); }

/* EXPLAIN */
cmd(A) ::= EXPLAIN(K) cmd(X).                      { A = ps_build_explain(ps, K, X, false, NULL); }
cmd(A) ::= EXPLAIN(K) ANALYZE cmd(X).              { A = ps_build_explain(ps, K, X, true, NULL); }
cmd(A) ::= EXPLAIN(K) LP option_list(L) RP cmd(X). { A = ps_build_explain(ps, K, X, false, L); }

/* transactions */
cmd(A) ::= BEGIN(K) opt_transaction.    { A = ps_build_stmt(ps, PS_ST_BEGIN, K.off); }
cmd(A) ::= COMMIT(K) opt_transaction.   { A = ps_build_stmt(ps, PS_ST_COMMIT, K.off); }
cmd(A) ::= ROLLBACK(K) opt_transaction. { A = ps_build_stmt(ps, PS_ST_ROLLBACK, K.off); }
cmd(A) ::= START(K) TRANSACTION.        { A = ps_build_stmt(ps, PS_ST_BEGIN, K.off); }
cmd(A) ::= END(K) opt_transaction.      { A = ps_build_stmt(ps, PS_ST_COMMIT, K.off); }

opt_transaction ::= .
opt_transaction ::= TRANSACTION.
opt_transaction ::= WORK.

/* ======================================================================== */
/* queries                                                                   */
/* ======================================================================== */

/* As in PostgreSQL: select_with_parens is a query in parentheses; ORDER BY,
 * LIMIT and WITH attach to a whole query expression (select_no_parens). */
%type select {PsSelect *}
select(A) ::= select_no_parens(A).
select(A) ::= select_with_parens(A).

%type select_with_parens {PsSelect *}
select_with_parens(A) ::= LP(P) select_no_parens(S) RP.   { A = ps_build_parens_select(ps, S, P); }
select_with_parens(A) ::= LP(P) select_with_parens(S) RP. { A = ps_build_parens_select(ps, S, P); }

%type select_no_parens {PsSelect *}
select_no_parens(A) ::= simple_select(A).
select_no_parens(A) ::= select_clause(S) order_clause(O). {
    A = ps_build_select_tail(ps, S, NULL, &O, NULL);
}
select_no_parens(A) ::= select_clause(S) opt_order(O) limit_clause(L). {
    A = ps_build_select_tail(ps, S, NULL, &O, &L);
}
select_no_parens(A) ::= with_clause(W) select_clause(S) opt_order(O) opt_limit(L). {
    A = ps_build_select_tail(ps, S, &W, &O, &L);
}

%type select_clause {PsSelect *}
select_clause(A) ::= simple_select(A).
select_clause(A) ::= select_with_parens(A).

%type simple_select {PsSelect *}
simple_select(A) ::= SELECT(K) opt_distinct(D) target_list(T) from_clause(F) where_clause(W)
                     group_clause(G) having_clause(H) window_clause(N) qualify_clause(Q). {
    A = ps_build_simple(ps, K, D.distinct, T, F, W, &G, H);
    A->distinct_on = D.on;
    A->windows = N;
    A->qualify = Q;
}

/* QUALIFY cond (DuckDB): a filter on the rows once window functions are computed. */
%type qualify_clause {PsExpr *}
qualify_clause(A) ::= .                 { A = NULL; }
qualify_clause(A) ::= QUALIFY expr(X).  { A = X; }

/* WINDOW w AS (...), ...: named windows, resolved by the binder (PostgreSQL's rules). */
%type window_clause {PsList *}
window_clause(A) ::= .                     { A = NULL; }
window_clause(A) ::= WINDOW window_defs(L). { A = L; }

%type window_defs {PsList *}
window_defs(A) ::= window_def(D).                       { A = ps_build_list(ps, NULL, D); }
window_defs(A) ::= window_defs(L) COMMA window_def(D).  { A = ps_build_list(ps, L, D); }

%type window_def {PsWindowDef *}
window_def(A) ::= ID(N) AS LP window_spec(W) RP. { A = ps_build_window_def(ps, N, W); }
simple_select(A) ::= values_clause(A).
simple_select(A) ::= select_clause(L) UNION opt_all(D) select_clause(R). {
    A = ps_build_setop(ps, PS_SET_UNION, D, L, R);
}
simple_select(A) ::= select_clause(L) INTERSECT opt_all(D) select_clause(R). {
    A = ps_build_setop(ps, PS_SET_INTERSECT, D, L, R);
}
simple_select(A) ::= select_clause(L) EXCEPT opt_all(D) select_clause(R). {
    A = ps_build_setop(ps, PS_SET_EXCEPT, D, L, R);
}

%type opt_all {bool}
opt_all(A) ::= .         { A = false; }
opt_all(A) ::= ALL.      { A = true; }
opt_all(A) ::= DISTINCT. { A = false; }

%type values_clause {PsSelect *}
values_clause(A) ::= VALUES(K) LP expr_list(L) RP. { A = ps_build_values(ps, NULL, K, L); }
values_clause(A) ::= values_clause(V) COMMA(K) LP expr_list(L) RP. {
    A = ps_build_values(ps, V, K, L);
}

/* WITH */
%type with_clause {PsWithSpec}
with_clause(A) ::= WITH(K) cte_list(L). {
    A.ctes = L;
    A.off = K.off;
    A.recursive = false;
}
with_clause(A) ::= WITH(K) RECURSIVE cte_list(L). {
    A.ctes = L;
    A.off = K.off;
    A.recursive = true;
}

%type cte_list {PsList *}
cte_list(A) ::= cte(C).                   { A = ps_build_list(ps, NULL, C); }
cte_list(A) ::= cte_list(L) COMMA cte(C). { A = ps_build_list(ps, L, C); }

%type cte {PsCte *}
cte(A) ::= ID(N) opt_name_list(L) AS select_with_parens(S). { A = ps_build_cte(ps, N, L, S); }

/* ORDER BY, LIMIT, OFFSET */
%type order_clause {PsOrderSpec}
order_clause(A) ::= ORDER(K) BY order_list(L). { A.items = L; A.off = K.off; A.all = false; }
order_clause(A) ::= ORDER(K) BY ALL(X) opt_dir(D) opt_nulls(N). {
    PsExpr *zero = ps_build_expr(ps, PS_EX_INT, X.off);
    A.items = ps_build_list(ps, NULL, ps_build_order_item(ps, zero, D, N));
    A.off = K.off;
    A.all = true;
}

%type opt_order {PsOrderSpec}
opt_order(A) ::= .                { A.items = NULL; A.off = -1; A.all = false; }
opt_order(A) ::= order_clause(A).

%type order_list {PsList *}
order_list(A) ::= order_item(X).                      { A = ps_build_list(ps, NULL, X); }
order_list(A) ::= order_list(L) COMMA order_item(X).  { A = ps_build_list(ps, L, X); }

%type order_item {PsOrderItem *}
order_item(A) ::= expr(X) opt_dir(D) opt_nulls(N). { A = ps_build_order_item(ps, X, D, N); }

%type opt_dir {bool}
opt_dir(A) ::= .     { A = false; }
opt_dir(A) ::= ASC.  { A = false; }
opt_dir(A) ::= DESC. { A = true; }

%type opt_nulls {int}
opt_nulls(A) ::= .           { A = 0; }
opt_nulls(A) ::= NULLS FIRST. { A = 1; }
opt_nulls(A) ::= NULLS LAST.  { A = 2; }

%type limit_clause {PsLimitSpec}
limit_clause(A) ::= LIMIT(K) expr(X). {
    A.limit = X;
    A.offset = NULL;
    A.off = K.off;
}
limit_clause(A) ::= LIMIT(K) expr(X) OFFSET expr(Y). {
    A.limit = X;
    A.offset = Y;
    A.off = K.off;
}
limit_clause(A) ::= OFFSET(K) expr(Y). {
    A.limit = NULL;
    A.offset = Y;
    A.off = K.off;
}
limit_clause(A) ::= OFFSET(K) expr(Y) LIMIT expr(X). {
    A.limit = X;
    A.offset = Y;
    A.off = K.off;
}

%type opt_limit {PsLimitSpec}
opt_limit(A) ::= .                { A.limit = NULL; A.offset = NULL; A.off = -1; }
opt_limit(A) ::= limit_clause(A).

/* SELECT list */
%type opt_distinct {PsDistinct}
opt_distinct(A) ::= .         { A.distinct = false; A.on = NULL; }
opt_distinct(A) ::= ALL.      { A.distinct = false; A.on = NULL; }
opt_distinct(A) ::= DISTINCT. { A.distinct = true; A.on = NULL; }
opt_distinct(A) ::= DISTINCT ON LP expr_list(L) RP. { A.distinct = false; A.on = L; }

%type target_list {PsList *}
target_list(A) ::= target(X).                       { A = ps_build_list(ps, NULL, X); }
target_list(A) ::= target_list(L) COMMA target(X).  { A = ps_build_list(ps, L, X); }

%type target {PsTarget *}
target(A) ::= expr(X).            { A = ps_build_target(ps, X, NULL); }
target(A) ::= expr(X) AS label(N). { A = ps_build_target(ps, X, &N); }
target(A) ::= expr(X) ID(N).      { A = ps_build_target(ps, X, &N); }
target(A) ::= STAR(S) star_mods(M). {
    A = ps_build_star_target(ps, ps_build_star(ps, NULL, 0, S.off), &M);
}
target(A) ::= ID(Q) DOT STAR star_mods(M). {
    A = ps_build_star_target(ps, ps_build_star(ps, &Q, 1, Q.off), &M);
}
target(A) ::= ID(S) DOT ID(Q) DOT STAR star_mods(M). {
    PsToken quals[2] = {S, Q};
    A = ps_build_star_target(ps, ps_build_star(ps, quals, 2, S.off), &M);
}
target(A) ::= ID(C) DOT ID(S) DOT ID(Q) DOT STAR star_mods(M). {
    PsToken quals[3] = {C, S, Q};
    A = ps_build_star_target(ps, ps_build_star(ps, quals, 3, C.off), &M);
}

/* * EXCLUDE (a, b) REPLACE (x + 1 AS a) (DuckDB) */
%type star_mods {PsStarMods}
star_mods(A) ::= .                                        { A.exclude = NULL; A.replace = NULL; }
star_mods(A) ::= star_mods(M) EXCLUDE LP exclude_list(L) RP. {
    A = M;
    A.exclude = ps_build_concat(ps, M.exclude, L);
}
star_mods(A) ::= star_mods(M) REPLACE LP replace_list(L) RP. {
    A = M;
    A.replace = ps_build_concat(ps, M.replace, L);
}

%type exclude_list {PsList *}
exclude_list(A) ::= ID(N).                     { A = ps_build_list(ps, NULL, ps_build_column(ps, &N, 1)); }
exclude_list(A) ::= exclude_list(L) COMMA ID(N). { A = ps_build_list(ps, L, ps_build_column(ps, &N, 1)); }

%type replace_list {PsList *}
replace_list(A) ::= expr(X) AS ID(N).          { A = ps_build_list(ps, NULL, ps_build_target(ps, X, &N)); }
replace_list(A) ::= replace_list(L) COMMA expr(X) AS ID(N). {
    A = ps_build_list(ps, L, ps_build_target(ps, X, &N));
}

/* FROM */
%type from_clause {PsFrom *}
from_clause(A) ::= .                { A = NULL; }
from_clause(A) ::= FROM from_list(F). { A = F; }

%type from_list {PsFrom *}
from_list(A) ::= table_ref(A).
from_list(A) ::= from_list(L) COMMA table_ref(R). {
    A = ps_build_join(ps, PS_JOIN_CROSS, false, L, R, NULL);
}

%type table_ref {PsFrom *}
table_ref(A) ::= table_primary(A).
table_ref(A) ::= table_ref(L) join_type(J) JOIN table_primary(R) join_qual(Q). {
    A = ps_build_join(ps, J, false, L, R, &Q);
}
table_ref(A) ::= table_ref(L) CROSS JOIN table_primary(R). {
    A = ps_build_join(ps, PS_JOIN_CROSS, false, L, R, NULL);
}
table_ref(A) ::= table_ref(L) NATURAL join_type(J) JOIN table_primary(R). {
    A = ps_build_join(ps, J, true, L, R, NULL);
}

%type join_type {PsJoinType}
join_type(A) ::= .                 { A = PS_JOIN_INNER; }
join_type(A) ::= INNER.            { A = PS_JOIN_INNER; }
join_type(A) ::= LEFT opt_outer.   { A = PS_JOIN_LEFT; }
join_type(A) ::= RIGHT opt_outer.  { A = PS_JOIN_RIGHT; }
join_type(A) ::= FULL opt_outer.   { A = PS_JOIN_FULL; }

opt_outer ::= .
opt_outer ::= OUTER.

%type join_qual {PsJoinQual}
join_qual(A) ::= ON expr(X).                 { A.on = X; A.using_cols = NULL; }
join_qual(A) ::= USING LP name_list(L) RP.   { A.on = NULL; A.using_cols = L; }

%type table_primary {PsFrom *}
table_primary(A) ::= ID(N) opt_alias(L). {
    PsQName q = {{N}, 1};
    A = ps_build_table(ps, &q, &L);
}
/* SQLite's "t NOT INDEXED" hint is accepted and ignored. */
table_primary(A) ::= ID(N) opt_alias(L) NOT ID(W).   {
    PsQName q = {{N}, 1};
    A = ps_build_table(ps, &q, &L);
    ps_build_expect_word(ps, W, "indexed");
}
table_primary(A) ::= ID(S) DOT ID(N) opt_alias(L). {
    PsQName q = {{S, N}, 2};
    A = ps_build_table(ps, &q, &L);
}
table_primary(A) ::= ID(C) DOT ID(S) DOT ID(N) opt_alias(L). {
    PsQName q = {{C, S, N}, 3};
    A = ps_build_table(ps, &q, &L);
}
table_primary(A) ::= select_with_parens(S) opt_alias(L). { A = ps_build_from_subquery(ps, S, &L); }
/* A table function: generate_series(1, 10) AS g(i). */
table_primary(A) ::= ID(N) LP RP opt_alias(L). { A = ps_build_from_function(ps, N, NULL, &L); }
table_primary(A) ::= ID(N) LP expr_list(X) RP opt_alias(L). {
    A = ps_build_from_function(ps, N, X, &L);
}
table_primary(A) ::= LP(P) table_ref(F) RP.          { A = ps_build_parens_from(ps, F, P); }
/* FROM 'file.csv' reads the file as read_csv_auto('file.csv') does (DuckDB). */
table_primary(A) ::= STRING(S) opt_alias(L). {
    A = ps_build_from_function(ps, S, ps_build_list(ps, NULL, ps_build_string(ps, S)), &L);
    A->name = "read_csv_auto";
}

%type opt_alias {PsAliasSpec}
opt_alias(A) ::= . [SUBQUERY]                    { A.alias = NULL; A.cols = NULL; }
opt_alias(A) ::= ID(N).                          { A.alias = ps_build_ident(ps, N); A.cols = NULL; }
opt_alias(A) ::= AS label(N).                    { A.alias = ps_build_ident(ps, N); A.cols = NULL; }
opt_alias(A) ::= ID(N) LP name_list(L) RP.       { A.alias = ps_build_ident(ps, N); A.cols = L; }
opt_alias(A) ::= AS label(N) LP name_list(L) RP. { A.alias = ps_build_ident(ps, N); A.cols = L; }

/* A name after AS or after a qualifier's dot may be any word, reserved or not. */
%type label {PsToken}
label(A) ::= ID(A).
label(A) ::= ALL(A).
label(A) ::= AND(A).
label(A) ::= AS(A).
label(A) ::= ASC(A).
label(A) ::= BETWEEN(A).
label(A) ::= BOTH(A).
label(A) ::= CASE(A).
label(A) ::= CROSS(A).
label(A) ::= DESC(A).
label(A) ::= DISTINCT(A).
label(A) ::= ELSE(A).
label(A) ::= END(A).
label(A) ::= EXCEPT(A).
label(A) ::= EXISTS(A).
label(A) ::= FALSE(A).
label(A) ::= FROM(A).
label(A) ::= FULL(A).
label(A) ::= GROUP(A).
label(A) ::= HAVING(A).
label(A) ::= ILIKE(A).
label(A) ::= IN(A).
label(A) ::= INNER(A).
label(A) ::= INTERSECT(A).
label(A) ::= INTO(A).
label(A) ::= IS(A).
label(A) ::= ISNULL(A).
label(A) ::= JOIN(A).
label(A) ::= LEADING(A).
label(A) ::= LEFT(A).
label(A) ::= LIKE(A).
label(A) ::= LIMIT(A).
label(A) ::= NATURAL(A).
label(A) ::= NOT(A).
label(A) ::= NOTNULL(A).
label(A) ::= NULL(A).
label(A) ::= OFFSET(A).
label(A) ::= ON(A).
label(A) ::= OR(A).
label(A) ::= ORDER(A).
label(A) ::= RIGHT(A).
label(A) ::= SELECT(A).
label(A) ::= THEN(A).
label(A) ::= TRAILING(A).
label(A) ::= TRUE(A).
label(A) ::= UNION(A).
label(A) ::= USING(A).
label(A) ::= WHEN(A).
label(A) ::= WHERE(A).
label(A) ::= WITH(A).

/* WHERE, GROUP BY, HAVING */
%type where_clause {PsExpr *}
where_clause(A) ::= .                { A = NULL; }
where_clause(A) ::= WHERE expr(X).   { A = X; }

%type having_clause {PsExpr *}
having_clause(A) ::= .               { A = NULL; }
having_clause(A) ::= HAVING expr(X). { A = X; }

%type group_clause {PsGroupSpec}
group_clause(A) ::= .                                  { A.kind = PS_GROUP_PLAIN; A.list = NULL; A.all = false; }
group_clause(A) ::= GROUP BY ALL.                      { A.kind = PS_GROUP_PLAIN; A.list = NULL; A.all = true; }
group_clause(A) ::= GROUP(K) BY group_items(L).        { A = ps_build_group(ps, L, K.off); }

/* GROUP BY a, ROLLUP (b), ...: items whose sets are crossed (PostgreSQL). */
%type group_items {PsList *}
group_items(A) ::= group_item(I).                      { A = ps_build_list(ps, NULL, I); }
group_items(A) ::= group_items(L) COMMA group_item(I). { A = ps_build_list(ps, L, I); }

%type group_item {PsGroupSpec *}
group_item(A) ::= expr(X).                    { A = ps_build_group_item(ps, PS_GROUP_PLAIN, ps_build_row_items(ps, X)); }
group_item(A) ::= ROLLUP LP expr_list(L) RP.  { A = ps_build_group_item(ps, PS_GROUP_ROLLUP, L); }
group_item(A) ::= CUBE LP expr_list(L) RP.    { A = ps_build_group_item(ps, PS_GROUP_CUBE, L); }
group_item(A) ::= GROUPING SETS LP grouping_sets(L) RP. {
    A = ps_build_group_item(ps, PS_GROUP_SETS, L);
}

%type grouping_sets {PsList *}
grouping_sets(A) ::= grouping_set(S).                        { A = ps_build_list(ps, NULL, S); }
grouping_sets(A) ::= grouping_sets(L) COMMA grouping_set(S). { A = ps_build_list(ps, L, S); }

/* One set: a bare expression (also "(a)"), "()" or "(a, b, ..)", which parses
 * as a row value and is taken apart into its items. */
%type grouping_set {PsList *}
grouping_set(A) ::= expr(X).   { A = ps_build_row_items(ps, X); }
grouping_set(A) ::= LP RP.     { A = ps_build_alloc(ps, sizeof(PsList)); }

/* ======================================================================== */
/* expressions                                                               */
/* ======================================================================== */

%type expr_list {PsList *}
expr_list(A) ::= expr(X).                     { A = ps_build_list(ps, NULL, X); }
expr_list(A) ::= expr_list(L) COMMA expr(X).  { A = ps_build_list(ps, L, X); }

%type name_list {PsList *}
name_list(A) ::= ID(N).                       { A = ps_build_names(ps, NULL, N); }
name_list(A) ::= name_list(L) COMMA ID(N).    { A = ps_build_names(ps, L, N); }

%type opt_name_list {PsList *}
opt_name_list(A) ::= .                    { A = NULL; }
opt_name_list(A) ::= LP name_list(L) RP.  { A = L; }

%type expr {PsExpr *}
expr(A) ::= primary(A).
expr(A) ::= expr(X) OR expr(Y).       { A = ps_build_binary(ps, PS_OP_OR, X, Y); }
expr(A) ::= expr(X) AND expr(Y).      { A = ps_build_binary(ps, PS_OP_AND, X, Y); }
expr(A) ::= NOT(K) expr(X).           { A = ps_build_unary(ps, PS_OP_NOT, K, X); }
expr(A) ::= expr(X) EQ expr(Y).       { A = ps_build_binary(ps, PS_OP_EQ, X, Y); }
expr(A) ::= expr(X) NE expr(Y).       { A = ps_build_binary(ps, PS_OP_NE, X, Y); }
expr(A) ::= expr(X) LT expr(Y).       { A = ps_build_binary(ps, PS_OP_LT, X, Y); }
expr(A) ::= expr(X) LE expr(Y).       { A = ps_build_binary(ps, PS_OP_LE, X, Y); }
expr(A) ::= expr(X) GT expr(Y).       { A = ps_build_binary(ps, PS_OP_GT, X, Y); }
expr(A) ::= expr(X) GE expr(Y).       { A = ps_build_binary(ps, PS_OP_GE, X, Y); }
/* x op ANY|SOME|ALL (subquery) */
expr(A) ::= expr(X) EQ quantifier(Q) select_with_parens(S). [EQ] { A = ps_build_quantified(ps, PS_OP_EQ, X, Q, S); }
expr(A) ::= expr(X) NE quantifier(Q) select_with_parens(S). [EQ] { A = ps_build_quantified(ps, PS_OP_NE, X, Q, S); }
expr(A) ::= expr(X) LT quantifier(Q) select_with_parens(S). [EQ] { A = ps_build_quantified(ps, PS_OP_LT, X, Q, S); }
expr(A) ::= expr(X) LE quantifier(Q) select_with_parens(S). [EQ] { A = ps_build_quantified(ps, PS_OP_LE, X, Q, S); }
expr(A) ::= expr(X) GT quantifier(Q) select_with_parens(S). [EQ] { A = ps_build_quantified(ps, PS_OP_GT, X, Q, S); }
expr(A) ::= expr(X) GE quantifier(Q) select_with_parens(S). [EQ] { A = ps_build_quantified(ps, PS_OP_GE, X, Q, S); }
%type quantifier {bool}
quantifier(A) ::= ANY.   { A = false; }
quantifier(A) ::= SOME.  { A = false; }
quantifier(A) ::= ALL.   { A = true; }
expr(A) ::= expr(X) CONCAT expr(Y).   { A = ps_build_binary(ps, PS_OP_CONCAT, X, Y); }
expr(A) ::= expr(X) BITAND expr(Y).   { A = ps_build_binary(ps, PS_OP_BITAND, X, Y); }
expr(A) ::= expr(X) BITOR expr(Y).    { A = ps_build_binary(ps, PS_OP_BITOR, X, Y); }
expr(A) ::= expr(X) SHL expr(Y).      { A = ps_build_binary(ps, PS_OP_SHL, X, Y); }
expr(A) ::= expr(X) SHR expr(Y).      { A = ps_build_binary(ps, PS_OP_SHR, X, Y); }
expr(A) ::= expr(X) PLUS expr(Y).     { A = ps_build_binary(ps, PS_OP_ADD, X, Y); }
expr(A) ::= expr(X) MINUS expr(Y).    { A = ps_build_binary(ps, PS_OP_SUB, X, Y); }
expr(A) ::= expr(X) STAR expr(Y).     { A = ps_build_binary(ps, PS_OP_MUL, X, Y); }
expr(A) ::= expr(X) SLASH expr(Y).    { A = ps_build_binary(ps, PS_OP_DIV, X, Y); }
expr(A) ::= expr(X) PERCENT expr(Y).  { A = ps_build_binary(ps, PS_OP_MOD, X, Y); }
expr(A) ::= MINUS(K) expr(X). [UMINUS] { A = ps_build_negate(ps, K, X); }
expr(A) ::= PLUS(K) expr(X). [UMINUS]  { A = ps_build_unary(ps, PS_OP_PLUS, K, X); }
expr(A) ::= TILDE(K) expr(X). [UMINUS] { A = ps_build_unary(ps, PS_OP_BITNOT, K, X); }
expr(A) ::= expr(X) DCOLON typename(T). { A = ps_build_cast(ps, X, T, X->src_off); }

/* IS ... */
expr(A) ::= expr(X) IS NULL.            { A = ps_build_is_null(ps, X, false); }
expr(A) ::= expr(X) IS NOT NULL.        { A = ps_build_is_null(ps, X, true); }
expr(A) ::= expr(X) ISNULL.             { A = ps_build_is_null(ps, X, false); }
expr(A) ::= expr(X) NOTNULL.            { A = ps_build_is_null(ps, X, true); }
expr(A) ::= expr(X) IS UNKNOWN.         { A = ps_build_is_null(ps, X, false); }
expr(A) ::= expr(X) IS NOT UNKNOWN.     { A = ps_build_is_null(ps, X, true); }
expr(A) ::= expr(X) IS TRUE(T).         { A = ps_build_is_bool(ps, X, T, true, false); }
expr(A) ::= expr(X) IS NOT TRUE(T).     { A = ps_build_is_bool(ps, X, T, true, true); }
expr(A) ::= expr(X) IS FALSE(T).        { A = ps_build_is_bool(ps, X, T, false, false); }
expr(A) ::= expr(X) IS NOT FALSE(T).    { A = ps_build_is_bool(ps, X, T, false, true); }
expr(A) ::= expr(X) IS DISTINCT FROM expr(Y). [IS] {
    A = ps_build_is_distinct(ps, X, Y, false);
}
expr(A) ::= expr(X) IS NOT DISTINCT FROM expr(Y). [IS] {
    A = ps_build_is_distinct(ps, X, Y, true);
}

/* BETWEEN, IN, LIKE */
expr(A) ::= expr(X) BETWEEN expr(L) AND expr(H). [BETWEEN] {
    A = ps_build_between(ps, X, L, H, false);
}
expr(A) ::= expr(X) NOT_LA BETWEEN expr(L) AND expr(H). [BETWEEN] {
    A = ps_build_between(ps, X, L, H, true);
}
expr(A) ::= expr(X) IN LP expr_list(L) RP.              { A = ps_build_in_list(ps, X, L, false); }
expr(A) ::= expr(X) IN LP RP.                    { A = ps_build_in_list(ps, X, NULL, false); }
expr(A) ::= expr(X) NOT_LA IN LP RP.             { A = ps_build_in_list(ps, X, NULL, true); }
expr(A) ::= expr(X) NOT_LA IN LP expr_list(L) RP.       { A = ps_build_in_list(ps, X, L, true); }
expr(A) ::= expr(X) IN select_with_parens(S).           { A = ps_build_in_select(ps, X, S, false); }
expr(A) ::= expr(X) NOT_LA IN select_with_parens(S).    { A = ps_build_in_select(ps, X, S, true); }
expr(A) ::= expr(X) LIKE expr(P).  [LIKE] { A = ps_build_like(ps, PS_OP_LIKE, X, P, NULL, false); }
expr(A) ::= expr(X) ILIKE expr(P). [LIKE] { A = ps_build_like(ps, PS_OP_ILIKE, X, P, NULL, false); }
expr(A) ::= expr(X) NOT_LA LIKE expr(P).  [LIKE] {
    A = ps_build_like(ps, PS_OP_LIKE, X, P, NULL, true);
}
expr(A) ::= expr(X) NOT_LA ILIKE expr(P). [LIKE] {
    A = ps_build_like(ps, PS_OP_ILIKE, X, P, NULL, true);
}
expr(A) ::= expr(X) LIKE expr(P) ESCAPE expr(E). [LIKE] {
    A = ps_build_like(ps, PS_OP_LIKE, X, P, E, false);
}
expr(A) ::= expr(X) ILIKE expr(P) ESCAPE expr(E). [LIKE] {
    A = ps_build_like(ps, PS_OP_ILIKE, X, P, E, false);
}
expr(A) ::= expr(X) NOT_LA LIKE expr(P) ESCAPE expr(E). [LIKE] {
    A = ps_build_like(ps, PS_OP_LIKE, X, P, E, true);
}
expr(A) ::= expr(X) NOT_LA ILIKE expr(P) ESCAPE expr(E). [LIKE] {
    A = ps_build_like(ps, PS_OP_ILIKE, X, P, E, true);
}

/* primaries: literals, names, calls, subqueries, CASE */
%type primary {PsExpr *}
primary(A) ::= INTEGER(T).   { A = ps_build_int(ps, T); }
primary(A) ::= FLOAT(T).     { A = ps_build_number(ps, T); }
primary(A) ::= STRING(T).    { A = ps_build_string(ps, T); }
primary(A) ::= NULL(T).      { A = ps_build_expr(ps, PS_EX_NULL, T.off); }
primary(A) ::= PARAM(T).     { A = ps_build_param(ps, T); }
primary(A) ::= TRUE(T).      { A = ps_build_bool(ps, T, true); }
primary(A) ::= FALSE(T).     { A = ps_build_bool(ps, T, false); }
primary(A) ::= ID(T) STRING(S).                    { A = ps_build_typed(ps, T, S); }
primary(A) ::= INTERVAL(K) STRING(Q).              { A = ps_build_interval(ps, K, Q, NULL); }
primary(A) ::= INTERVAL(K) STRING(Q) interval_unit(U).  { A = ps_build_interval(ps, K, Q, &U); }
primary(A) ::= INTERVAL(K) INTEGER(Q) interval_unit(U). { A = ps_build_interval(ps, K, Q, &U); }
primary(A) ::= INTERVAL(N).  { A = ps_build_column(ps, &N, 1); }
primary(A) ::= POSITION(N).  { A = ps_build_column(ps, &N, 1); }
primary(A) ::= ID(N).        { A = ps_build_column(ps, &N, 1); }
primary(A) ::= ID(Q) DOT label(N). {
    PsToken parts[2] = {Q, N};
    A = ps_build_column(ps, parts, 2);
}
primary(A) ::= ID(S) DOT ID(Q) DOT label(N). {
    PsToken parts[3] = {S, Q, N};
    A = ps_build_column(ps, parts, 3);
}
primary(A) ::= ID(C) DOT ID(S) DOT ID(Q) DOT label(N). {
    PsToken parts[4] = {C, S, Q, N};
    A = ps_build_column(ps, parts, 4);
}
/* Only a whole value of an INSERT's VALUES row may be DEFAULT; the binder
 * says so with a position anywhere else. */
primary(A) ::= DEFAULT(K).   { A = ps_build_expr(ps, PS_EX_DEFAULT, K.off); }
primary(A) ::= LP(P) expr(X) RP.               { A = ps_build_parens(ps, X, P); }
/* A row value (a, b, ...): written so that "(a" stays a parenthesised
 * expression until a comma. */
primary(A) ::= LP(P) expr_list(L) COMMA expr(X) RP. { A = ps_build_row(ps, P, L, X); }
primary(A) ::= select_with_parens(S). [SUBQUERY] {
    A = ps_build_subquery(ps, PS_EX_SUBQUERY, S, S->src_off);
}
primary(A) ::= EXISTS(K) select_with_parens(S). {
    A = ps_build_subquery(ps, PS_EX_EXISTS, S, K.off);
}
primary(A) ::= CASE(K) case_operand(O) when_list(W) case_else(E) END. {
    A = ps_build_case(ps, K, O, W, E);
}
/* Lists: [1, 2, 3] is list_value(1, 2, 3), and l[i] is list_extract(l, i). */
primary(A) ::= LBRACKET(K) RBRACKET. { A = ps_build_func_named(ps, "list_value", K.off, NULL); }
primary(A) ::= LBRACKET(K) expr_list(L) RBRACKET. {
    A = ps_build_func_named(ps, "list_value", K.off, L);
}
/* A struct literal {'k': v, ...} is struct_pack(k1, v1, k2, v2, ...); there is
 * no STRUCT type yet: only options of table functions (read_csv's columns)
 * read one. */
primary(A) ::= LBRACE(K) struct_items(L) RBRACE. {
    A = ps_build_func_named(ps, "struct_pack", K.off, L);
}
%type struct_items {PsList *}
struct_items(A) ::= expr(K) COLON expr(V). { A = ps_build_list(ps, ps_build_list(ps, NULL, K), V); }
struct_items(A) ::= struct_items(L) COMMA expr(K) COLON expr(V). {
    A = ps_build_list(ps, ps_build_list(ps, L, K), V);
}
primary(A) ::= primary(X) LBRACKET expr(I) RBRACKET. {
    A = ps_build_func_named(ps, "list_extract", X->src_off, ps_build_list(ps, ps_build_list(ps, NULL, X), I));
}
primary(A) ::= func_call(F) filter_clause(W) over_clause(O). {
    A = ps_build_func_tail(ps, F, W, O);
}

%type interval_unit {PsToken}
interval_unit(A) ::= YEAR(A).
interval_unit(A) ::= MONTH(A).
interval_unit(A) ::= WEEK(A).
interval_unit(A) ::= DAY(A).
interval_unit(A) ::= HOUR(A).
interval_unit(A) ::= MINUTE(A).
interval_unit(A) ::= SECOND(A).
interval_unit(A) ::= YEARS(A).
interval_unit(A) ::= MONTHS(A).
interval_unit(A) ::= WEEKS(A).
interval_unit(A) ::= DAYS(A).
interval_unit(A) ::= HOURS(A).
interval_unit(A) ::= MINUTES(A).
interval_unit(A) ::= SECONDS(A).
interval_unit(A) ::= MILLISECOND(A).
interval_unit(A) ::= MILLISECONDS(A).
interval_unit(A) ::= MICROSECOND(A).
interval_unit(A) ::= MICROSECONDS(A).

%type case_operand {PsExpr *}
case_operand(A) ::= .         { A = NULL; }
case_operand(A) ::= expr(A).

%type when_list {PsList *}
when_list(A) ::= WHEN expr(C) THEN expr(R).              { A = ps_build_when(ps, NULL, C, R); }
when_list(A) ::= when_list(L) WHEN expr(C) THEN expr(R). { A = ps_build_when(ps, L, C, R); }

%type case_else {PsExpr *}
case_else(A) ::= .              { A = NULL; }
case_else(A) ::= ELSE expr(X).  { A = X; }

/* Function calls, including the SQL special forms written with keywords. */
%type func_call {PsExpr *}
func_call(A) ::= ID(N) LP RP. {
    A = ps_build_func(ps, N, NULL, false, false);
}
func_call(A) ::= ID(N) LP STAR RP.                  { A = ps_build_func(ps, N, NULL, false, true); }
func_call(A) ::= ID(N) LP expr_list(L) RP.          { A = ps_build_func(ps, N, L, false, false); }
func_call(A) ::= ID(N) LP ALL expr_list(L) RP.      { A = ps_build_func(ps, N, L, false, false); }
func_call(A) ::= ID(N) LP DISTINCT expr_list(L) RP. { A = ps_build_func(ps, N, L, true, false); }
/* ORDER BY inside an aggregate's call: string_agg(x, ',' ORDER BY y DESC). */
func_call(A) ::= ID(N) LP expr_list(L) ORDER(K) BY order_list(O) RP. {
    A = ps_build_func(ps, N, L, false, false);
    ps_build_func_order(ps, A, O, K);
}
func_call(A) ::= ID(N) LP ALL expr_list(L) ORDER(K) BY order_list(O) RP. {
    A = ps_build_func(ps, N, L, false, false);
    ps_build_func_order(ps, A, O, K);
}
func_call(A) ::= ID(N) LP DISTINCT expr_list(L) ORDER(K) BY order_list(O) RP. {
    A = ps_build_func(ps, N, L, true, false);
    ps_build_func_order(ps, A, O, K);
}
func_call(A) ::= LEFT(N) LP expr_list(L) RP.        { A = ps_build_func(ps, N, L, false, false); }
func_call(A) ::= RIGHT(N) LP expr_list(L) RP.       { A = ps_build_func(ps, N, L, false, false); }
func_call(A) ::= ID(N) LP expr(X) AS(K) typename(T) RP. { A = ps_build_func_cast(ps, N, K, X, T); }
func_call(A) ::= ID(N) LP expr(X) FROM(K) expr(Y) RP. {
    A = ps_build_func_from(ps, N, K, X, Y, NULL);
}
func_call(A) ::= ID(N) LP expr(X) FROM(K) expr(Y) FOR expr(Z) RP. {
    A = ps_build_func_from(ps, N, K, X, Y, Z);
}
func_call(A) ::= ID(N) LP expr(X) FOR(K) expr(Z) RP. {
    A = ps_build_func_from(ps, N, K, X, NULL, Z);
}
func_call(A) ::= ID(N) LP trim_spec(S) FROM expr(Y) RP. {
    A = ps_build_trim(ps, N, S, NULL, Y);
}
func_call(A) ::= ID(N) LP trim_spec(S) expr(X) FROM expr(Y) RP. {
    A = ps_build_trim(ps, N, S, X, Y);
}
func_call(A) ::= ID(N) LP trim_spec(S) expr(Y) RP. {
    A = ps_build_trim(ps, N, S, NULL, Y);
}
func_call(A) ::= POSITION(K) LP primary(X) IN primary(Y) RP. {
    A = ps_build_position(ps, K, X, Y);
}

%type trim_spec {PsTrimSpec}
trim_spec(A) ::= BOTH.      { A = PS_TRIM_BOTH; }
trim_spec(A) ::= LEADING.   { A = PS_TRIM_LEADING; }
trim_spec(A) ::= TRAILING.  { A = PS_TRIM_TRAILING; }

%type filter_clause {PsExpr *}
filter_clause(A) ::= .                           { A = NULL; }
filter_clause(A) ::= FILTER LP WHERE expr(X) RP. { A = X; }

%type over_clause {PsWindow *}
over_clause(A) ::= .                           { A = NULL; }
over_clause(A) ::= OVER LP window_spec(W) RP.  { A = W; }
over_clause(A) ::= OVER ID(N). {
    A = ps_build_window(ps, NULL, NULL, NULL);
    ps_build_window_ref(ps, A, N);
    A->ref_bare = true;
}

/* Spelled out so that each first token is shifted where it stands: with an empty
 * PARTITION BY reduced first, ROWS and RANGE would fall back to ID (a window name). */
%type window_spec {PsWindow *}
window_spec(A) ::= opt_frame(F).                    { A = ps_build_window(ps, NULL, NULL, F); }
window_spec(A) ::= order_clause(O) opt_frame(F).    { A = ps_build_window(ps, NULL, O.items, F); }
window_spec(A) ::= PARTITION BY expr_list(P) opt_order(O) opt_frame(F). {
    A = ps_build_window(ps, P, O.items, F);
}
window_spec(A) ::= ID(N) opt_partition(P) opt_order(O) opt_frame(F). {
    A = ps_build_window(ps, P, O.items, F);
    ps_build_window_ref(ps, A, N);
}

%type opt_partition {PsList *}
opt_partition(A) ::= .                         { A = NULL; }
opt_partition(A) ::= PARTITION BY expr_list(L). { A = L; }

%type opt_frame {PsWindow *}
opt_frame(A) ::= .                                { A = NULL; }
opt_frame(A) ::= frame_unit(U) frame_bound(S).    { A = ps_build_frame(ps, U, &S, NULL); }
opt_frame(A) ::= frame_unit(U) BETWEEN frame_bound(S) AND frame_bound(E). {
    A = ps_build_frame(ps, U, &S, &E);
}

%type frame_unit {PsFrameUnit}
frame_unit(A) ::= ROWS.  { A = PS_FRAME_ROWS; }
frame_unit(A) ::= RANGE. { A = PS_FRAME_RANGE; }

%type frame_bound {PsBound}
frame_bound(A) ::= UNBOUNDED PRECEDING. { A.kind = PS_BOUND_UNBOUNDED_PRECEDING; A.off = NULL; }
frame_bound(A) ::= UNBOUNDED FOLLOWING. { A.kind = PS_BOUND_UNBOUNDED_FOLLOWING; A.off = NULL; }
frame_bound(A) ::= CURRENT ROW.         { A.kind = PS_BOUND_CURRENT_ROW; A.off = NULL; }
frame_bound(A) ::= expr(X) PRECEDING.   { A.kind = PS_BOUND_PRECEDING; A.off = X; }
frame_bound(A) ::= expr(X) FOLLOWING.   { A.kind = PS_BOUND_FOLLOWING; A.off = X; }

/* Types: any name (lower-cased, aliases made canonical by ps_build_type),
 * DOUBLE PRECISION, CHARACTER VARYING, and up to two integer parameters. */
%type typename {PsTypeName *}
typename(A) ::= ID(N). {
    PsToken none = {0, 0, 0};
    A = ps_build_type(ps, N, none, NULL, 0);
}
typename(A) ::= ID(N) LP INTEGER(P) RP. {
    PsToken none = {0, 0, 0};
    A = ps_build_type(ps, N, none, &P, 1);
}
typename(A) ::= ID(N) LP INTEGER(P) COMMA INTEGER(S) RP. {
    PsToken none = {0, 0, 0};
    PsToken params[2] = {P, S};
    A = ps_build_type(ps, N, none, params, 2);
}
typename(A) ::= typename(T) LBRACKET(K) RBRACKET. { A = ps_build_list_type(ps, T, K); }
typename(A) ::= ID(N) PRECISION(M).  { A = ps_build_type(ps, N, M, NULL, 0); }
typename(A) ::= ID(N) VARYING(M).    { A = ps_build_type(ps, N, M, NULL, 0); }
typename(A) ::= ID(N) VARYING(M) LP INTEGER(P) RP. { A = ps_build_type(ps, N, M, &P, 1); }
