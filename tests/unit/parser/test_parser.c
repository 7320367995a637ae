/*
 * test_parser.c - unit tests of the SQL parser (suite ps_parse): expressions
 * and their precedence, literals, calls and special forms, queries, FROM
 * clauses, every statement kind, keywords used as names, and source spans.
 * Errors, scripts and corpora are in test_errors.c and test_corpus.c.
 */
#include "test_util.h"

CmArena test_arena;

static void setup(void)
{
    cm_arena_init(&test_arena, 0);
}

static void teardown(void)
{
    cm_arena_fini(&test_arena);
}

TestSuite(ps_parse, .init = setup, .fini = teardown);

/* ======================================================================== */
/* precedence                                                                */
/* ======================================================================== */

Test(ps_parse, arithmetic_precedence)
{
    CHECK_EXPR("1 + 2 * 3", "(+ 1 (* 2 3))");
    CHECK_EXPR("(1 + 2) * 3", "(* (+ 1 2) 3)");
    CHECK_EXPR("1 - 2 - 3", "(- (- 1 2) 3)");
    CHECK_EXPR("8 / 4 / 2", "(/ (/ 8 4) 2)");
    CHECK_EXPR("2 * 3 % 4", "(% (* 2 3) 4)");
    CHECK_EXPR("a + b * c - d / e", "(- (+ a (* b c)) (/ d e))");
}

Test(ps_parse, unary_precedence)
{
    CHECK_EXPR("-a * b", "(* (neg a) b)");
    CHECK_EXPR("- a + b", "(+ (neg a) b)");
    CHECK_EXPR("+a", "(pos a)");
    CHECK_EXPR("~a & b", "(& (bitnot a) b)");
    CHECK_EXPR("- - a", "(neg (neg a))");
    CHECK_EXPR("-a::int", "(neg (cast a integer))");
}

Test(ps_parse, concat_and_bit_operators_sit_between_comparison_and_additive)
{
    CHECK_EXPR("a || b || c", "(|| (|| a b) c)");
    CHECK_EXPR("a || b + c", "(|| a (+ b c))");
    CHECK_EXPR("a = b || c", "(= a (|| b c))");
    CHECK_EXPR("a & b | c << 1 >> 2", "(>> (<< (| (& a b) c) 1) 2)");
    CHECK_EXPR("1 + 2 << 3", "(<< (+ 1 2) 3)");
}

Test(ps_parse, logical_precedence)
{
    CHECK_EXPR("a or b and c", "(or a (and b c))");
    CHECK_EXPR("a and b or c", "(or (and a b) c)");
    CHECK_EXPR("not a = b", "(not (= a b))");
    CHECK_EXPR("not a and b", "(and (not a) b)");
    CHECK_EXPR("a and not b or c", "(or (and a (not b)) c)");
    CHECK_EXPR("not not a", "(not (not a))");
    CHECK_EXPR("a or b or c", "(or (or a b) c)");
}

Test(ps_parse, comparisons)
{
    CHECK_EXPR("a = 1", "(= a 1)");
    CHECK_EXPR("a == 1", "(= a 1)");
    CHECK_EXPR("a <> 1", "(<> a 1)");
    CHECK_EXPR("a != 1", "(<> a 1)");
    CHECK_EXPR("a < 1", "(< a 1)");
    CHECK_EXPR("a <= 1", "(<= a 1)");
    CHECK_EXPR("a > 1", "(> a 1)");
    CHECK_EXPR("a >= 1", "(>= a 1)");
    CHECK_EXPR("a + 1 > b * 2", "(> (+ a 1) (* b 2))");
    CHECK_EXPR("(a < b) = (c < d)", "(= (< a b) (< c d))");
}

Test(ps_parse, is_binds_looser_than_comparison)
{
    CHECK_EXPR("a = b is null", "(is-null (= a b))");
    CHECK_EXPR("a is null and b", "(and (is-null a) b)");
    CHECK_EXPR("not a is null", "(not (is-null a))");
    CHECK_EXPR("a is distinct from b = c", "(is-distinct a (= b c))");
}

Test(ps_parse, between_in_like_bind_tighter_than_comparison)
{
    CHECK_EXPR("a between 1 and 2 and b", "(and (between a 1 2) b)");
    CHECK_EXPR("a between 1 and 2 + 3", "(between a 1 (+ 2 3))");
    CHECK_EXPR("a between b + 1 and c * 2", "(between a (+ b 1) (* c 2))");
    CHECK_EXPR("x = a not in (1)", "(= x (not-in a (1)))");
    CHECK_EXPR("x = a not between 1 and 2", "(= x (not-between a 1 2))");
    CHECK_EXPR("a like b || 'x'", "(like a (|| b 'x'))");
    CHECK_EXPR("a = b like c", "(= a (like b c))");
    CHECK_EXPR("not a like b", "(not (like a b))");
    CHECK_EXPR("a in (1) and b in (2)", "(and (in a (1)) (in b (2)))");
}

Test(ps_parse, cast_binds_tightest)
{
    CHECK_EXPR("1 + 2::int", "(+ 1 (cast 2 integer))");
    CHECK_EXPR("a.b::text", "(cast a.b text)");
    CHECK_EXPR("a::text::int", "(cast (cast a text) integer)");
    CHECK_EXPR("(a + b)::bigint", "(cast (+ a b) bigint)");
}

Test(ps_parse, comparisons_do_not_chain)
{
    CHECK_ERR("select 1 = 2 = 3", 13, "syntax error at or near '='");
    CHECK_ERR("select 1 < 2 < 3", 13, "syntax error at or near '<'");
}

/* ======================================================================== */
/* literals and names                                                        */
/* ======================================================================== */

Test(ps_parse, integer_literals)
{
    const PsExpr *e = expr_node("42");
    cr_assert_eq(e->kind, PS_EX_INT);
    cr_assert_eq(e->ival, 42);
    e = expr_node("9223372036854775807");
    cr_assert_eq(e->kind, PS_EX_INT);
    cr_assert_eq(e->ival, INT64_MAX);
    e = expr_node("9223372036854775808");
    cr_assert_eq(e->kind, PS_EX_NUMBER);
    cr_assert_str_eq(e->str, "9223372036854775808");
    e = expr_node("123456789012345678901234567890");
    cr_assert_eq(e->kind, PS_EX_NUMBER);
}

Test(ps_parse, negative_literals_fold)
{
    const PsExpr *e = expr_node("-42");
    cr_assert_eq(e->kind, PS_EX_INT);
    cr_assert_eq(e->ival, -42);
    e = expr_node("-9223372036854775808");
    cr_assert_eq(e->kind, PS_EX_INT);
    cr_assert_eq(e->ival, INT64_MIN);
    e = expr_node("- 2.5");
    cr_assert_eq(e->kind, PS_EX_NUMBER);
    cr_assert_str_eq(e->str, "-2.5");
    e = expr_node("-(-2.5)");
    cr_assert_str_eq(e->str, "2.5");
    CHECK_EXPR("- -9223372036854775808", "(neg -9223372036854775808)");
    CHECK_EXPR("1 - -1", "(- 1 -1)");
}

Test(ps_parse, decimal_literals_keep_their_text)
{
    const char *cases[] = {"1.5", ".5", "1.", "1e10", "1.5E-3", "100.0000"};
    for (size_t idx = 0; idx < sizeof cases / sizeof cases[0]; idx++) {
        const PsExpr *e = expr_node(cases[idx]);
        cr_assert_eq(e->kind, PS_EX_NUMBER, "%s", cases[idx]);
        cr_assert_str_eq(e->str, cases[idx]);
        cr_assert_eq(e->str_len, (int64_t)strlen(cases[idx]));
    }
}

Test(ps_parse, string_literals_are_unescaped)
{
    const PsExpr *e = expr_node("'it''s'");
    cr_assert_eq(e->kind, PS_EX_STRING);
    cr_assert_str_eq(e->str, "it's");
    cr_assert_eq(e->str_len, 4);
    e = expr_node("''");
    cr_assert_str_eq(e->str, "");
    cr_assert_eq(e->str_len, 0);
    e = expr_node("'a;b -- c /* d */'");
    cr_assert_str_eq(e->str, "a;b -- c /* d */");
    e = expr_node("''''");
    cr_assert_str_eq(e->str, "'");
}

Test(ps_parse, null_and_booleans)
{
    cr_assert_eq(expr_node("null")->kind, PS_EX_NULL);
    const PsExpr *e = expr_node("TRUE");
    cr_assert_eq(e->kind, PS_EX_BOOL);
    cr_assert_eq(e->ival, 1);
    e = expr_node("false");
    cr_assert_eq(e->kind, PS_EX_BOOL);
    cr_assert_eq(e->ival, 0);
}

Test(ps_parse, typed_literals)
{
    const PsExpr *e = expr_node("DATE '2000-01-31'");
    cr_assert_eq(e->kind, PS_EX_TYPED);
    cr_assert_str_eq(e->type->name, "date");
    cr_assert_str_eq(e->str, "2000-01-31");
    CHECK_EXPR("timestamp '2000-01-01 10:00:00'", "(timestamp '2000-01-01 10:00:00')");
    CHECK_EXPR("time '10:00'", "(time '10:00')");
    CHECK_EXPR("d + date '2000-01-01'", "(+ d (date '2000-01-01'))");
    CHECK_ERR("select foo 'x'", 11, "syntax error at or near ''x''");
}

Test(ps_parse, interval_literals)
{
    const PsExpr *e = expr_node("interval '3' day");
    cr_assert_eq(e->kind, PS_EX_TYPED);
    cr_assert_str_eq(e->type->name, "interval");
    cr_assert_str_eq(e->str, "3");
    cr_assert_str_eq(e->name, "day");
    CHECK_EXPR("INTERVAL 5 MONTH", "(interval '5' month)");
    CHECK_EXPR("interval '1' year", "(interval '1' year)");
    CHECK_EXPR("interval '2 weeks'", "(interval '2 weeks')");
    CHECK_EXPR("d - interval '30' day", "(- d (interval '30' day))");
    CHECK_EXPR("interval '1' hour + interval '1' minute + interval '1' second + interval '1' week",
               "(+ (+ (+ (interval '1' hour) (interval '1' minute)) (interval '1' second)) "
               "(interval '1' week))");
    cr_assert_null(expr_node("interval '1 day'")->name);
}

Test(ps_parse, column_references)
{
    const PsExpr *e = expr_node("a");
    cr_assert_eq(e->kind, PS_EX_COLUMN);
    cr_assert_str_eq(e->name, "a");
    cr_assert_null(e->qualifier);
    e = expr_node("T.A");
    cr_assert_str_eq(e->name, "a");
    cr_assert_str_eq(e->qualifier, "t");
    cr_assert_null(e->schema.schema);
    e = expr_node("s.t.a");
    cr_assert_str_eq(e->name, "a");
    cr_assert_str_eq(e->qualifier, "t");
    cr_assert_str_eq(e->schema.schema, "s");
    cr_assert_null(e->schema.catalog);
    e = expr_node("c.s.t.a");
    cr_assert_str_eq(e->name, "a");
    cr_assert_str_eq(e->qualifier, "t");
    cr_assert_str_eq(e->schema.schema, "s");
    cr_assert_str_eq(e->schema.catalog, "c");
    CHECK("select c.s.t.*, s.t.* from t", "(select (c.s.t.* s.t.*) :from t)");
}

Test(ps_parse, default_keyword)
{
    CHECK("insert into t values (default, 1)", "(insert t (values (default 1)))");
    CHECK("insert into t default values", "(insert t default-values)");
    CHECK("insert into m.s.t default values", "(insert m.s.t default-values)");
    CHECK("insert into s.t (b, a) values (1, default), (default, 2)",
          "(insert s.t (b a) (values (1 default) (default 2)))");
    cr_assert_eq(expr_node("default")->kind, PS_EX_DEFAULT);
}

Test(ps_parse, quoted_identifiers_keep_case)
{
    const PsExpr *e = expr_node("\"MyTable\".\"My\"\"Col\"");
    cr_assert_str_eq(e->qualifier, "MyTable");
    cr_assert_str_eq(e->name, "My\"Col");
    e = expr_node("\"select\"");
    cr_assert_eq(e->kind, PS_EX_COLUMN);
    cr_assert_str_eq(e->name, "select");
    CHECK("select MixedCase AS \"Alias\" from \"T\"", "(select ((as mixedcase Alias)) :from T)");
}

Test(ps_parse, stars)
{
    CHECK("select *", "(select (*))");
    CHECK("select t.*, s.t.*, a from t", "(select (t.* s.t.* a) :from t)");
    const PsExpr *e = expr_node("count(*)");
    cr_assert_eq(e->kind, PS_EX_FUNC);
    cr_assert(e->star);
    cr_assert_null(e->args);
}

/* ======================================================================== */
/* predicates                                                                */
/* ======================================================================== */

Test(ps_parse, is_null_forms)
{
    CHECK_EXPR("a is null", "(is-null a)");
    CHECK_EXPR("a is not null", "(not-is-null a)");
    CHECK_EXPR("a isnull", "(is-null a)");
    CHECK_EXPR("a notnull", "(not-is-null a)");
    CHECK_EXPR("a not null", "(not-is-null a)");
    CHECK_EXPR("a is unknown", "(is-null a)");
    CHECK_EXPR("a is not unknown", "(not-is-null a)");
    CHECK_EXPR("not null", "(not null)");
    CHECK_EXPR("a and not null", "(and a (not null))");
}

Test(ps_parse, is_distinct_and_is_bool)
{
    CHECK_EXPR("a is distinct from b", "(is-distinct a b)");
    CHECK_EXPR("a is not distinct from b", "(not-is-distinct a b)");
    CHECK_EXPR("a is true", "(not-is-distinct a true)");
    CHECK_EXPR("a is not true", "(is-distinct a true)");
    CHECK_EXPR("a is false", "(not-is-distinct a false)");
    CHECK_EXPR("a is not false", "(is-distinct a false)");
}

Test(ps_parse, between)
{
    CHECK_EXPR("a between 1 and 10", "(between a 1 10)");
    CHECK_EXPR("a not between 1 and 10", "(not-between a 1 10)");
    const PsExpr *e = expr_node("a not between 1 and 10");
    cr_assert_eq(e->kind, PS_EX_BETWEEN);
    cr_assert(e->negated);
    cr_assert_eq(e->args->n, 2);
    CHECK_EXPR("d between cast('1999-02-22' as date) and cast('1999-03-24' as date)",
               "(between d (cast '1999-02-22' date) (cast '1999-03-24' date))");
}

Test(ps_parse, in_lists_and_subqueries)
{
    CHECK_EXPR("a in (1, 2, 3)", "(in a (1 2 3))");
    CHECK_EXPR("a not in ('x')", "(not-in a ('x'))");
    CHECK_EXPR("a in (select b from t)", "(in a (select (b) :from t))");
    CHECK_EXPR("a not in (select b from t)", "(not-in a (select (b) :from t))");
    CHECK_EXPR("a in ((select 1))", "(in a (select (1)))");
    CHECK_EXPR("a in ((select 1), 2)", "(in a ((subquery (select (1))) 2))");
    CHECK_EXPR("a in ((1))", "(in a (1))");
    CHECK_EXPR("a in ()", "(in a ())");
    CHECK_EXPR("(a, b) in ((1, 2), (3, 4))", "(in (row a b) ((row 1 2) (row 3 4)))");
    CHECK_EXPR("(a, b) not in (select x, y from t)", "(not-in (row a b) (select (x y) :from t))");
    CHECK_EXPR("(a, b + 1, c) <= ((1), 2, 3)", "(<= (row a (+ b 1) c) (row 1 2 3))");
    CHECK_EXPR("a not in ()", "(not-in a ())");
    cr_assert_eq(expr_node("a in ()")->args->n, 0);
}

Test(ps_parse, like_and_ilike)
{
    CHECK_EXPR("a like 'x%'", "(like a 'x%')");
    CHECK_EXPR("a not like 'x%'", "(not-like a 'x%')");
    CHECK_EXPR("a ilike 'x%'", "(ilike a 'x%')");
    CHECK_EXPR("a not ilike 'x%'", "(not-ilike a 'x%')");
    CHECK_EXPR("a like '!%' escape '!'", "(like a '!%' :escape '!')");
    CHECK_EXPR("a not ilike b escape c", "(not-ilike a b :escape c)");
    cr_assert_eq(expr_node("a ilike b")->op, PS_OP_ILIKE);
    cr_assert_eq(expr_node("a like b")->op, PS_OP_LIKE);
}

Test(ps_parse, exists_and_scalar_subqueries)
{
    CHECK_EXPR("exists (select 1)", "(exists (select (1)))");
    CHECK_EXPR("not exists (select 1)", "(not-exists (select (1)))");
    CHECK_EXPR("(select max(a) from t)", "(subquery (select ((max a)) :from t))");
    CHECK_EXPR("((select 1))", "(subquery (select (1)))");
    CHECK_EXPR("(select 1) + 1", "(+ (subquery (select (1))) 1)");
    CHECK_EXPR("((select 1) union (select 2))", "(subquery (union (select (1)) (select (2))))");
    CHECK_EXPR("a > (select avg(b) * 1.2 from t where t.c = x.c)",
               "(> a (subquery (select ((* (avg b) 1.2)) :from t :where (= t.c x.c))))");
}

Test(ps_parse, case_expressions)
{
    CHECK_EXPR("case when a then 1 when b then 2 else 3 end",
               "(case (when a 1) (when b 2) :else 3)");
    CHECK_EXPR("case x when 1 then 'a' end", "(case :operand x (when 1 'a'))");
    CHECK_EXPR("case when a > 0 then a else -a end + 1",
               "(+ (case (when (> a 0) a) :else (neg a)) 1)");
    const PsExpr *e = expr_node("case when a then b end");
    cr_assert_eq(e->kind, PS_EX_CASE);
    cr_assert_null(e->left);
    cr_assert_null(e->right);
    const PsWhen *w = e->args->items[0];
    cr_assert_str_eq(w->cond->name, "a");
    cr_assert_str_eq(w->result->name, "b");
}

Test(ps_parse, casts_and_types)
{
    CHECK_EXPR("cast(a as integer)", "(cast a integer)");
    CHECK_EXPR("CAST (a AS decimal(7,2))", "(cast a decimal(7,2))");
    CHECK_EXPR("a::numeric(10, 2)", "(cast a decimal(10,2))");
    CHECK_EXPR("cast(a as double precision)", "(cast a double)");
    CHECK_EXPR("a::character varying(5)", "(cast a varchar(5))");
    CHECK_EXPR("a::character varying", "(cast a varchar)");
    CHECK_EXPR("a::char(3)", "(cast a char(3))");
    CHECK_EXPR("a::interval", "(cast a interval)");
    const char *types[][2] = {
        {"int", "integer"},     {"INTEGER", "integer"},     {"int4", "integer"},
        {"bigint", "bigint"},   {"int8", "bigint"},         {"smallint", "smallint"},
        {"tinyint", "tinyint"}, {"double", "double"},       {"float", "double"},
        {"real", "real"},       {"decimal", "decimal"},     {"numeric", "decimal"},
        {"char", "char"},       {"character", "char"},      {"varchar", "varchar"},
        {"text", "text"},       {"string", "text"},         {"date", "date"},
        {"time", "time"},       {"timestamp", "timestamp"}, {"boolean", "boolean"},
        {"bool", "boolean"},
    };
    for (size_t idx = 0; idx < sizeof types / sizeof types[0]; idx++) {
        char sql[64];
        snprintf(sql, sizeof sql, "cast(x as %s)", types[idx][0]);
        const PsExpr *e = expr_node(sql);
        cr_assert_eq(e->kind, PS_EX_CAST);
        cr_assert_str_eq(e->type->name, types[idx][1], "%s", types[idx][0]);
        cr_assert_eq(e->type->n_params, 0);
    }
    const PsExpr *e = expr_node("cast(x as decimal(15, 4))");
    cr_assert_eq(e->type->n_params, 2);
    cr_assert_eq(e->type->params[0], 15);
    cr_assert_eq(e->type->params[1], 4);
    CHECK_ERR("select a::integer varying", 18, "syntax error at or near 'varying'");
    CHECK_ERR("select a::text precision", 15, "syntax error at or near 'precision'");
}

/* ======================================================================== */
/* function calls                                                            */
/* ======================================================================== */

Test(ps_parse, plain_calls)
{
    CHECK_EXPR("f()", "(f)");
    CHECK_EXPR("F(a, b + 1)", "(f a (+ b 1))");
    CHECK_EXPR("count(distinct a)", "(count distinct a)");
    CHECK_EXPR("count(all a)", "(count a)");
    CHECK_EXPR("sum(a) / count(*)", "(/ (sum a) (count *))");
    CHECK_EXPR("coalesce(a, b, 0)", "(coalesce a b 0)");
    CHECK_EXPR("nullif(a, 0)", "(nullif a 0)");
    CHECK_EXPR("grouping(a, b)", "(grouping a b)");
    CHECK_EXPR("left(s, 2) || right(s, 1)", "(|| (left s 2) (right s 1))");
    CHECK_EXPR("abs(-a)", "(abs (neg a))");
    cr_assert(expr_node("count(distinct a)")->distinct);
}

Test(ps_parse, filter_clause)
{
    CHECK_EXPR("count(*) filter (where a > 0)", "(count * :filter (> a 0))");
    CHECK_EXPR("sum(x) filter (where y) over ()", "(sum x :filter y :over (window))");
}

Test(ps_parse, window_calls)
{
    CHECK_EXPR("rank() over (partition by a, b order by c desc)",
               "(rank :over (window :partition (a b) :order ((desc c))))");
    CHECK_EXPR("sum(x) over ()", "(sum x :over (window))");
    CHECK_EXPR("sum(x) over (order by d rows between unbounded preceding and current row)",
               "(sum x :over (window :order ((asc d)) :rows unbounded-preceding current-row))");
    CHECK_EXPR("avg(x) over (order by d range between 3 preceding and 2 following)",
               "(avg x :over (window :order ((asc d)) :range (preceding 3) (following 2)))");
    CHECK_EXPR("max(y) over (rows 5 preceding)",
               "(max y :over (window :rows (preceding 5) current-row))");
    CHECK_EXPR("f() over (rows between current row and unbounded following)",
               "(f :over (window :rows current-row unbounded-following))");
    CHECK_EXPR("sum(sum(x)) over (partition by a) * 100",
               "(* (sum (sum x) :over (window :partition (a))) 100)");
    const PsExpr *e = expr_node("sum(x) over (partition by a)");
    cr_assert_eq(e->over->frame, PS_FRAME_NONE);
    cr_assert_eq(e->over->partition_by->n, 1);
    cr_assert_null(e->over->order_by);
}

Test(ps_parse, substring_forms)
{
    CHECK_EXPR("substring(s from 2 for 3)", "(substring s 2 3)");
    CHECK_EXPR("substring(s from 2)", "(substring s 2)");
    CHECK_EXPR("substring(s for 3)", "(substring s 1 3)");
    CHECK_EXPR("substring(s, 1, 30)", "(substring s 1 30)");
    CHECK_EXPR("substr(s, 1)", "(substr s 1)");
}

Test(ps_parse, extract_forms)
{
    CHECK_EXPR("extract(year from d)", "(extract 'year' d)");
    CHECK_EXPR("EXTRACT(Month FROM d)", "(extract 'month' d)");
    CHECK_EXPR("extract(day from d)", "(extract 'day' d)");
    CHECK_EXPR("extract(epoch from d)", "(extract 'epoch' d)");
    CHECK_EXPR("extract('dow' from d)", "(extract 'dow' d)");
    const PsExpr *e = expr_node("extract(year from d)");
    const PsExpr *field = e->args->items[0];
    cr_assert_eq(field->kind, PS_EX_STRING);
    CHECK_ERR("select extract(a.b from d)", 19, "syntax error at or near 'from'");
}

Test(ps_parse, trim_forms)
{
    CHECK_EXPR("trim(s)", "(trim s)");
    CHECK_EXPR("trim('x' from s)", "(trim s 'x')");
    CHECK_EXPR("trim(both 'x' from s)", "(trim s 'x')");
    CHECK_EXPR("trim(leading from s)", "(ltrim s)");
    CHECK_EXPR("trim(trailing ' ' from s)", "(rtrim s ' ')");
    CHECK_EXPR("trim(leading s)", "(ltrim s)");
}

Test(ps_parse, position_form)
{
    CHECK_EXPR("position('a' in s)", "(position 'a' s)");
    CHECK_EXPR("position(lower(x) in (s || t))", "(position (lower x) (|| s t))");
}

Test(ps_parse, special_forms_need_their_names)
{
    CHECK_ERR("select foo(a as int)", 13, "syntax error at or near 'as'");
    CHECK_ERR("select bar(a from b)", 13, "syntax error at or near 'from'");
    CHECK_ERR("select upper(both a)", 7, "syntax error at or near 'upper'");
}

/* ======================================================================== */
/* queries                                                                   */
/* ======================================================================== */

Test(ps_parse, select_lists)
{
    CHECK("select 1", "(select (1))");
    CHECK("select distinct a, b", "(select distinct (a b))");
    CHECK("select all a", "(select (a))");
    CHECK("select a as x, b y, c", "(select ((as a x) (as b y) c))");
    CHECK("select a + 1 total from t", "(select ((as (+ a 1) total)) :from t)");
}

Test(ps_parse, where_group_having)
{
    CHECK("select a, count(*) from t where b > 1 group by a having count(*) > 2",
          "(select (a (count *)) :from t :where (> b 1) :group plain (a) "
          ":having (> (count *) 2))");
    CHECK("select count(*) from t having count(*) > 0",
          "(select ((count *)) :from t :having (> (count *) 0))");
    CHECK("select a from t group by a, b + 1", "(select (a) :from t :group plain (a (+ b 1)))");
}

Test(ps_parse, rollup_cube_grouping_sets)
{
    CHECK("select a from t group by rollup(a, b)", "(select (a) :from t :group rollup (a b))");
    CHECK("select a from t group by cube (a, b)", "(select (a) :from t :group cube (a b))");
    CHECK("select a from t group by grouping sets ((a, b), (a), (), b)",
          "(select (a) :from t :group sets ((a b) (a) () (b)))");
    PsStmt *st = parse_one("select a from t group by grouping sets ((a, b), ())");
    cr_assert_eq(st->select->group_kind, PS_GROUP_SETS);
    const PsList *sets = st->select->group_by;
    cr_assert_eq(sets->n, 2);
    cr_assert_eq(((const PsList *)sets->items[0])->n, 2);
    cr_assert_eq(((const PsList *)sets->items[1])->n, 0);
}

Test(ps_parse, order_by)
{
    CHECK("select a from t order by a", "(select (a) :from t :order ((asc a)))");
    CHECK("select a from t order by a desc nulls first, b asc nulls last, c",
          "(select (a) :from t :order ((desc a nulls-first) (asc b nulls-last) (asc c)))");
    PsStmt *st = parse_one("select a from t order by a desc nulls last");
    const PsOrderItem *o = st->select->order_by->items[0];
    cr_assert(o->desc);
    cr_assert_eq(o->nulls, 2);
}

Test(ps_parse, limit_and_offset)
{
    CHECK("select a from t limit 10", "(select (a) :from t :limit 10)");
    CHECK("select a from t limit 10 offset 5", "(select (a) :from t :limit 10 :offset 5)");
    CHECK("select a from t offset 5", "(select (a) :from t :offset 5)");
    CHECK("select a from t offset 5 limit 10", "(select (a) :from t :limit 10 :offset 5)");
    CHECK("select a from t order by a limit 1", "(select (a) :from t :order ((asc a)) :limit 1)");
}

Test(ps_parse, set_operations)
{
    CHECK("select 1 union select 2", "(union (select (1)) (select (2)))");
    CHECK("select 1 union all select 2", "(union-all (select (1)) (select (2)))");
    CHECK("select 1 union distinct select 2", "(union (select (1)) (select (2)))");
    CHECK("select 1 except all select 2", "(except-all (select (1)) (select (2)))");
    CHECK("select 1 intersect all select 2", "(intersect-all (select (1)) (select (2)))");
}

Test(ps_parse, set_operation_precedence)
{
    CHECK("select 1 union select 2 intersect select 3",
          "(union (select (1)) (intersect (select (2)) (select (3))))");
    CHECK("select 1 intersect select 2 union select 3",
          "(union (intersect (select (1)) (select (2))) (select (3)))");
    CHECK("select 1 union select 2 except select 3",
          "(except (union (select (1)) (select (2))) (select (3)))");
    CHECK("select 1 except select 2 except select 3",
          "(except (except (select (1)) (select (2))) (select (3)))");
    CHECK("select 1 union (select 2 union select 3)",
          "(union (select (1)) (union (select (2)) (select (3))))");
}

Test(ps_parse, order_and_limit_attach_to_the_whole_query)
{
    CHECK("select a from t union select b from u order by 1 limit 2",
          "(union (select (a) :from t) (select (b) :from u) :order ((asc 1)) :limit 2)");
    CHECK("(select 1 order by 1 limit 1) union all (select 2) order by 1",
          "(union-all (select (1) :order ((asc 1)) :limit 1) (select (2)) :order ((asc 1)))");
    CHECK("(select a from t) order by a", "(select (a) :from t :order ((asc a)))");
    CHECK("((select 1))", "(select (1))");
}

Test(ps_parse, repeated_clauses_are_errors)
{
    CHECK_ERR("(select 1 order by 1) order by 2", 22, "multiple ORDER BY clauses not allowed");
    CHECK_ERR("(select 1 limit 1) limit 2", 19, "multiple LIMIT/OFFSET clauses not allowed");
    CHECK_ERR("with a as (select 1) (with b as (select 2) select 3)", 0,
              "multiple WITH clauses not allowed");
    CHECK_ERR("select a from t order by 1 order by 2", 27, "syntax error at or near 'order'");
}

Test(ps_parse, values_lists)
{
    CHECK("values (1, 'a'), (2, 'b')", "(values (1 'a') (2 'b'))");
    CHECK("values (1) order by 1 limit 1", "(values (1) :order ((asc 1)) :limit 1)");
    CHECK("select 1 union values (2)", "(union (select (1)) (values (2)))");
    PsStmt *st = parse_one("values (1, 2), (3, 4), (5, 6)");
    cr_assert_eq(st->select->kind, PS_SEL_VALUES);
    cr_assert_eq(st->select->rows->n, 3);
}

Test(ps_parse, with_clauses)
{
    CHECK("with a as (select 1) select * from a", "(select (*) :from a :with ((a (select (1)))))");
    CHECK("with a (x, y) as (select 1, 2), b as (select x from a) select * from b order by 1",
          "(select (*) :from b :with ((a (x y) (select (1 2))) (b (select (x) :from a))) "
          ":order ((asc 1)))");
    CHECK("with recursive r(n) as (select 1 union all select n + 1 from r where n < 9) "
          "select n from r",
          "(select (n) :from r :with-recursive ((r (n) (union-all (select (1)) "
          "(select ((+ n 1)) :from r :where (< n 9))))))");
    CHECK("with a as (select 1) select 2 union select 3",
          "(union (select (2)) (select (3)) :with ((a (select (1)))))");
    PsStmt *st = parse_one("with recursive a as (select 1) select 2");
    cr_assert(st->select->recursive);
    cr_assert_eq(st->select->with->n, 1);
}

/* ======================================================================== */
/* FROM                                                                      */
/* ======================================================================== */

Test(ps_parse, from_tables_and_aliases)
{
    CHECK("select * from t", "(select (*) :from t)");
    CHECK("select * from s.t", "(select (*) :from s.t)");
    CHECK("select * from t x", "(select (*) :from (t as x))");
    CHECK("select * from t as x", "(select (*) :from (t as x))");
    CHECK("select * from t as x (a, b)", "(select (*) :from (t as x (a b)))");
    CHECK("select * from s.t y(c)", "(select (*) :from (s.t as y (c)))");
    PsStmt *st = parse_one("select * from main.orders AS o");
    const PsFrom *f = st->select->from;
    cr_assert_eq(f->kind, PS_FROM_TABLE);
    cr_assert_str_eq(f->schema.schema, "main");
    cr_assert_null(f->schema.catalog);
    cr_assert_str_eq(f->name, "orders");
    cr_assert_str_eq(f->alias, "o");
    CHECK("select * from memory.main.t", "(select (*) :from memory.main.t)");
    st = parse_one("select * from Memory.main.t");
    f = st->select->from;
    cr_assert_str_eq(f->schema.catalog, "memory");
    cr_assert_str_eq(f->schema.schema, "main");
    cr_assert_eq(f->schema.off, 14);
}

Test(ps_parse, comma_lists_are_left_deep_cross_joins)
{
    CHECK("select * from a, b, c", "(select (*) :from (join-cross (join-cross a b) c))");
    PsStmt *st = parse_one("select * from a, b");
    const PsFrom *f = st->select->from;
    cr_assert_eq(f->kind, PS_FROM_JOIN);
    cr_assert_eq(f->join_type, PS_JOIN_CROSS);
    cr_assert_null(f->on);
    cr_assert_null(f->using_cols);
}

Test(ps_parse, join_kinds)
{
    CHECK("select * from a join b on a.x = b.x",
          "(select (*) :from (join-inner a b :on (= a.x b.x)))");
    CHECK("select * from a inner join b on x", "(select (*) :from (join-inner a b :on x))");
    CHECK("select * from a left join b on x", "(select (*) :from (join-left a b :on x))");
    CHECK("select * from a left outer join b on x", "(select (*) :from (join-left a b :on x))");
    CHECK("select * from a right join b on x", "(select (*) :from (join-right a b :on x))");
    CHECK("select * from a right outer join b on x", "(select (*) :from (join-right a b :on x))");
    CHECK("select * from a full join b on x", "(select (*) :from (join-full a b :on x))");
    CHECK("select * from a full outer join b on x", "(select (*) :from (join-full a b :on x))");
    CHECK("select * from a cross join b", "(select (*) :from (join-cross a b))");
    CHECK("select * from a natural join b", "(select (*) :from (natural-join-inner a b))");
    CHECK("select * from a natural left join b", "(select (*) :from (natural-join-left a b))");
    CHECK("select * from a join b using (x, y)",
          "(select (*) :from (join-inner a b :using (x y)))");
}

Test(ps_parse, join_chains_and_parentheses)
{
    CHECK("select * from a join b on p left join c on q",
          "(select (*) :from (join-left (join-inner a b :on p) c :on q))");
    CHECK("select * from a, b join c on p",
          "(select (*) :from (join-cross a (join-inner b c :on p)))");
    CHECK("select * from (a join b on p) left join c on q",
          "(select (*) :from (join-left (join-inner a b :on p) c :on q))");
    CHECK("select * from a join (b join c on p) on q",
          "(select (*) :from (join-inner a (join-inner b c :on p) :on q))");
    CHECK("select * from a x left join b y on x.k = y.k",
          "(select (*) :from (join-left (a as x) (b as y) :on (= x.k y.k)))");
}

Test(ps_parse, from_subqueries)
{
    CHECK("select * from (select 1) as s", "(select (*) :from (sub (select (1)) as s))");
    CHECK("select * from (select 1) s (a)", "(select (*) :from (sub (select (1)) as s (a)))");
    CHECK("select * from (select 1)", "(select (*) :from (sub (select (1))))");
    CHECK("select * from ((select 1)) x", "(select (*) :from (sub (select (1)) as x))");
    CHECK("select * from (values (1, 2)) as v (a, b)",
          "(select (*) :from (sub (values (1 2)) as v (a b)))");
    CHECK("select * from (select 1 union select 2) u",
          "(select (*) :from (sub (union (select (1)) (select (2))) as u))");
    CHECK("select * from t, (select 1) s where x",
          "(select (*) :from (join-cross t (sub (select (1)) as s)) :where x)");
}

Test(ps_parse, from_table_functions)
{
    CHECK("select * from generate_series(1, 5)",
          "(select (*) :from (tablefunc generate_series 1 5))");
    CHECK("select * from range(10) as g (i)", "(select (*) :from (tablefunc range 10 as g (i)))");
    CHECK("select * from range() r", "(select (*) :from (tablefunc range as r))");
    CHECK("select * from t join range(1 + 1, 3) on a = range",
          "(select (*) :from (join-inner t (tablefunc range (+ 1 1) 3) :on (= a range)))");
}

/* ======================================================================== */
/* keywords as names                                                         */
/* ======================================================================== */

Test(ps_parse, non_reserved_keywords_are_column_names)
{
    CHECK("select date, name, value, key, year, first, last, data, text from t",
          "(select (date name value key year first last data text) :from t)");
    CHECK("select month, day, hour, minute, second, week, row, rows, range, filter, over, "
          "partition, preceding, following, current, unbounded, position, interval from t",
          "(select (month day hour minute second week row rows range filter over partition "
          "preceding following current unbounded position interval) :from t)");
    CHECK("select set, table, view, index, copy, explain, temp, if, to, for, by, nulls from t",
          "(select (set table view index copy explain temp if to for by nulls) :from t)");
    CHECK("select t.left, t.right, t.year from t", "(select (t.left t.right t.year) :from t)");
    CHECK("select 1 as year, 2 as left, 3 date", "(select ((as 1 year) (as 2 left) (as 3 date)))");
}

Test(ps_parse, any_word_after_as_or_a_dot)
{
    CHECK("select 1 as from, t.select, s.t.order from t as where",
          "(select ((as 1 from) t.select s.t.order) :from (t as where))");
    CHECK("select * from t as join (a)", "(select (*) :from (t as join (a)))");
}

Test(ps_parse, keywords_in_other_name_positions)
{
    CHECK("select * from first as last", "(select (*) :from (first as last))");
    CHECK("select year from data where key = 1 order by first nulls last, value",
          "(select (year) :from data :where (= key 1) "
          ":order ((asc first nulls-last) (asc value)))");
    CHECK("select count(*) filter (where x) from t", "(select ((count * :filter x)) :from t)");
    CHECK("create table kv (key int, value text, date date, year int)",
          "(create-table kv (key integer) (value text) (date date) (year integer))");
    CHECK("select date from t where date > date '2000-01-01'",
          "(select (date) :from t :where (> date (date '2000-01-01')))");
    CHECK("select extract(year from date) from t", "(select ((extract 'year' date)) :from t)");
}

/* ======================================================================== */
/* statements                                                                */
/* ======================================================================== */

Test(ps_parse, create_table)
{
    CHECK("create table t (a int not null primary key, b varchar(10) default 'x' not null, "
          "c decimal(7,2), d double precision, e character varying(5), f text, g date, "
          "h bool, i bigint unique null)",
          "(create-table t (a integer not-null pk) (b varchar(10) not-null :default 'x') "
          "(c decimal(7,2)) (d double) (e varchar(5)) (f text) (g date) (h boolean) (i bigint))");
    CHECK("create temp table if not exists t (a int)",
          "(create-table temp if-not-exists t (a integer))");
    CHECK("create temporary table t (a int)", "(create-table temp t (a integer))");
    CHECK("create table t (a int default -1 not null)",
          "(create-table t (a integer not-null :default -1))");
}

Test(ps_parse, create_table_primary_keys)
{
    PsStmt *st = parse_one("create table t (a int, b int, primary key (a, b))");
    cr_assert_eq(st->kind, PS_ST_CREATE_TABLE);
    cr_assert_str_eq(st->name, "t");
    cr_assert_eq(st->columns->n, 2);
    cr_assert_str_eq(st->primary_key, "a,b");
    st = parse_one("create table t (a int, primary key (a), unique (a))");
    cr_assert_str_eq(st->primary_key, "a");
    st = parse_one("create table t (a int primary key)");
    cr_assert_null(st->primary_key);
    const PsColumnDef *c = st->columns->items[0];
    cr_assert(c->primary_key);
}

Test(ps_parse, create_table_as)
{
    CHECK("create table t2 as select a from t", "(create-table t2 :as (select (a) :from t))");
    CHECK("create table t2 as (select 1) union (select 2)",
          "(create-table t2 :as (union (select (1)) (select (2))))");
}

Test(ps_parse, create_view)
{
    CHECK("create view v as select 1", "(create-view v (select (1)))");
    CHECK("create view if not exists v (a, b) as select 1, 2",
          "(create-view if-not-exists v (a b) (select (1 2)))");
    CHECK("create temp view v as select 1", "(create-view temp v (select (1)))");
}

Test(ps_parse, create_index)
{
    CHECK("create index i on t (a)", "(create-index i t (a))");
    CHECK("create unique index if not exists i on t (a desc, b asc)",
          "(create-unique-index if-not-exists i t (a b))");
}

Test(ps_parse, drop)
{
    CHECK("drop table t", "(drop table t)");
    CHECK("drop table if exists t", "(drop table if-exists t)");
    CHECK("drop view v", "(drop view v)");
    CHECK("drop index if exists i", "(drop index if-exists i)");
}

Test(ps_parse, insert)
{
    CHECK("insert into t values (1, 'a'), (2, 'b')", "(insert t (values (1 'a') (2 'b')))");
    CHECK("insert into t (a, b) values (1, 2)", "(insert t (a b) (values (1 2)))");
    CHECK("insert into t (a) select x from u", "(insert t (a) (select (x) :from u))");
    CHECK("insert into t select * from u where p", "(insert t (select (*) :from u :where p))");
    CHECK("insert into t (select 1)", "(insert t (select (1)))");
    CHECK("insert into t with w as (select 1) select * from w",
          "(insert t (select (*) :from w :with ((w (select (1))))))");
}

Test(ps_parse, update_and_delete)
{
    CHECK("update t set a = 1", "(update t (set a 1))");
    CHECK("update t set a = a + 1, b = 'x' where c > 0",
          "(update t (set a (+ a 1)) (set b 'x') :where (> c 0))");
    CHECK("delete from t", "(delete t)");
    CHECK("delete from t where a in (select b from u)",
          "(delete t :where (in a (select (b) :from u)))");
}

Test(ps_parse, copy)
{
    CHECK("copy t from '/data/t.dat' (delimiter '|', header false, null '', format csv)",
          "(copy t from '/data/t.dat' :options ((delimiter '|') (header false) (null '') "
          "(format csv)))");
    CHECK("copy t (a, b) from 'x.csv' with (header, quote '\"')",
          "(copy t (a b) from 'x.csv' :options ((header) (quote '\"')))");
    CHECK("copy t from 'x.csv'", "(copy t from 'x.csv')");
    CHECK("copy t to 'out.csv' (format csv, header true)",
          "(copy t to 'out.csv' :options ((format csv) (header true)))");
    CHECK("copy (select a from t where b) to 'o.csv' (delimiter ',')",
          "(copy (select (a) :from t :where b) to 'o.csv' :options ((delimiter ',')))");
    PsStmt *st = parse_one("copy t to 'it''s.csv'");
    cr_assert(st->is_to);
    cr_assert_str_eq(st->path, "it's.csv");
    cr_assert_str_eq(st->table, "t");
    const PsOption *o = parse_one("copy t from 'f' (header)")->options->items[0];
    cr_assert_str_eq(o->name, "header");
    cr_assert_null(o->value);
}

Test(ps_parse, set_and_reset)
{
    CHECK("set threads = 4", "(set threads 4)");
    CHECK("set threads to 4", "(set threads 4)");
    CHECK("set search_path to 'x'", "(set search_path 'x')");
    CHECK("set a.b.c = on", "(set a.b.c on)");
    CHECK("SET Memory_Limit = '1GB'", "(set memory_limit '1GB')");
    CHECK("set x = off", "(set x off)");
    CHECK("set x = -1", "(set x -1)");
    CHECK("set x = true", "(set x true)");
    CHECK("reset threads", "(reset threads)");
    CHECK("reset all", "(reset all)");
    PsStmt *st = parse_one("set enable_spill = on");
    cr_assert_eq(st->value->kind, PS_EX_COLUMN);
    cr_assert_str_eq(st->value->name, "on");
}

Test(ps_parse, explain)
{
    CHECK("explain select 1", "(explain (select (1)))");
    CHECK("explain analyze select 1", "(explain analyze (select (1)))");
    CHECK("explain (analyze, format json) select 1",
          "(explain analyze :options ((analyze) (format json)) (select (1)))");
    CHECK("explain (format text) select 1", "(explain :options ((format text)) (select (1)))");
    CHECK("explain (analyze false) select 1", "(explain :options ((analyze false)) (select (1)))");
    CHECK("explain (format 'json') insert into t values (1)",
          "(explain :options ((format 'json')) (insert t (values (1))))");
    CHECK("explain (select 1)", "(explain (select (1)))");
    PsStmt *st = parse_one("explain analyze select 1");
    cr_assert_eq(st->kind, PS_ST_EXPLAIN);
    cr_assert(st->analyze);
    cr_assert_eq(st->inner->kind, PS_ST_SELECT);
}

Test(ps_parse, transactions)
{
    CHECK("begin", "(begin)");
    CHECK("begin transaction", "(begin)");
    CHECK("commit", "(commit)");
    CHECK("commit work", "(commit)");
    CHECK("rollback", "(rollback)");
    CHECK("ROLLBACK TRANSACTION", "(rollback)");
}

Test(ps_parse, sqlite_compatibility_forms)
{
    CHECK("select * from t1 not indexed", "(select (*) :from t1)");
    CHECK("select x from t1 where x not null", "(select (x) :from t1 :where (not-is-null x))");
    CHECK_ERR("select * from t1 not foo", 21, "syntax error at or near 'foo'");
}

/* ======================================================================== */
/* source spans                                                              */
/* ======================================================================== */

Test(ps_parse, statement_spans_exclude_the_semicolon)
{
    const char *sql = "  -- c\n  select a from t ;  ";
    PsStmt *st = parse_one(sql);
    cr_assert_str_eq(span_text(sql, st->src_off, st->src_len), "select a from t");
    cr_assert_str_eq(span_text(sql, st->select->src_off, st->select->src_len), "select a from t");
    sql = "explain analyze select 1";
    st = parse_one(sql);
    cr_assert_str_eq(span_text(sql, st->src_off, st->src_len), sql);
    cr_assert_str_eq(span_text(sql, st->inner->src_off, st->inner->src_len), "select 1");
    sql = "create table t (a int, b int)";
    st = parse_one(sql);
    cr_assert_str_eq(span_text(sql, st->src_off, st->src_len), sql);
    const PsColumnDef *c = st->columns->items[1];
    cr_assert_str_eq(span_text(sql, c->src_off, c->src_len), "b int");
}

Test(ps_parse, expression_spans)
{
    const char *sql = "select a + b * 2 as x, (c - 1) * d, f(x, y) over (order by z) from t";
    PsStmt *st = parse_one(sql);
    const PsTarget *t0 = st->select->targets->items[0];
    cr_assert_str_eq(span_text(sql, t0->src_off, t0->src_len), "a + b * 2 as x");
    cr_assert_str_eq(span_text(sql, t0->expr->src_off, t0->expr->src_len), "a + b * 2");
    const PsExpr *mul = t0->expr->right;
    cr_assert_str_eq(span_text(sql, mul->src_off, mul->src_len), "b * 2");
    const PsTarget *t1 = st->select->targets->items[1];
    cr_assert_str_eq(span_text(sql, t1->expr->src_off, t1->expr->src_len), "(c - 1) * d");
    cr_assert_str_eq(span_text(sql, t1->expr->left->src_off, t1->expr->left->src_len), "(c - 1)");
    const PsTarget *t2 = st->select->targets->items[2];
    cr_assert_str_eq(span_text(sql, t2->expr->src_off, t2->expr->src_len),
                     "f(x, y) over (order by z)");
    const PsFrom *f = st->select->from;
    cr_assert_str_eq(span_text(sql, f->src_off, f->src_len), "t");
}

Test(ps_parse, literal_and_predicate_spans)
{
    const char *sql = "select -1, 'a''b', date '2000-01-01', x is not null, y not in (1, 2), "
                      "z between 1 and 2, cast(q as int), w::text";
    PsStmt *st = parse_one(sql);
    const char *want[] = {"-1",
                          "'a''b'",
                          "date '2000-01-01'",
                          "x is not null",
                          "y not in (1, 2)",
                          "z between 1 and 2",
                          "cast(q as int)",
                          "w::text"};
    for (int idx = 0; idx < 8; idx++) {
        const PsTarget *t = st->select->targets->items[idx];
        cr_assert_str_eq(span_text(sql, t->expr->src_off, t->expr->src_len), want[idx]);
    }
}

Test(ps_parse, query_and_from_spans)
{
    const char *sql = "with w as (select 1) select * from (select a from u) s join v on p "
                      "union all (select 2) order by 1";
    PsStmt *st = parse_one(sql);
    const PsSelect *top = st->select;
    cr_assert_str_eq(span_text(sql, top->src_off, top->src_len), sql);
    const PsCte *cte = top->with->items[0];
    cr_assert_str_eq(span_text(sql, cte->src_off, cte->src_len), "w as (select 1)");
    cr_assert_str_eq(span_text(sql, cte->select->src_off, cte->select->src_len), "(select 1)");
    const PsSelect *left = top->left;
    cr_assert_str_eq(span_text(sql, left->src_off, left->src_len),
                     "select * from (select a from u) s join v on p");
    cr_assert_str_eq(span_text(sql, top->right->src_off, top->right->src_len), "(select 2)");
    const PsFrom *join = left->from;
    cr_assert_str_eq(span_text(sql, join->src_off, join->src_len),
                     "(select a from u) s join v on p");
    cr_assert_str_eq(span_text(sql, join->left->src_off, join->left->src_len),
                     "(select a from u) s");
}

Test(ps_parse, list_append_grows)
{
    PsList *list = NULL;
    int values[100];
    for (int idx = 0; idx < 100; idx++) {
        values[idx] = idx;
        list = ps_list_append(&test_arena, list, &values[idx]);
        cr_assert_not_null(list);
    }
    cr_assert_eq(list->n, 100);
    cr_assert_geq(list->cap, 100);
    for (int idx = 0; idx < 100; idx++) {
        cr_assert_eq(*(int *)list->items[idx], idx);
    }
}

/* ---- parameters ------------------------------------------------------------ */

Test(ps_parse, question_marks_number_on_from_the_largest_before)
{
    CHECK_EXPR("? + ?", "(+ $1 $2)");
    CHECK_EXPR("$3 + ?", "(+ $3 $4)");
    cr_assert_eq(parse_one("select ?, $5, ?")->n_params, 6);
    cr_assert_eq(parse_one("select 1")->n_params, 0);
    cr_assert_eq(parse_one("select * from t where a = $2")->n_params, 2);
}

Test(ps_parse, parameter_needs_an_index_from_one)
{
    CHECK_ERR("select $0", 7, "a parameter's index must be from $1 to $65535");
    CHECK_ERR("select $65536", 7, "a parameter's index must be from $1 to $65535");
    CHECK_ERR("select $1x", 7, "syntax error at or near '$1x'");
}

Test(ps_parse, next_statement_offset_skips_semicolons_and_comments)
{
    const char *sql = "select 1; ; -- c\n select 2";
    cr_assert_eq(ps_next_statement_off(sql, strlen(sql), 8), 18);
    cr_assert_eq(ps_next_statement_off(sql, 9, 8), 9);
}
