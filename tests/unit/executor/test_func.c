/*
 * test_func.c - unit tests for executor/func.c: operator resolution (result
 * and argument types for the numeric promotion INTEGER < BIGINT < DECIMAL <
 * DOUBLE, comparison common types, errors for unknown names and impossible
 * operand types) and the arithmetic kernels' errors: integer overflow and
 * division by zero are CM_RUNTIME, NULL operands are skipped.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "ex_test_util.h"

static CmArena arena;
static CmErr err;

static void setup(void)
{
    cm_arena_init(&arena, 0);
    cm_err_init(&err);
}

static void teardown(void)
{
    cm_arena_fini(&arena);
}

TestSuite(ex_func, .init = setup, .fini = teardown);

static const CmType I32 = {.id = CM_T_INT32, .length = -1};
static const CmType I64 = {.id = CM_T_INT64, .length = -1};
static const CmType F64 = {.id = CM_T_DOUBLE, .length = -1};
static const CmType STR = {.id = CM_T_VARCHAR, .length = -1};
static const CmType DATE = {.id = CM_T_DATE, .length = -1};
static const CmType BOOL = {.id = CM_T_BOOL, .length = -1};
static const CmType NUL = {.id = CM_T_NULL, .length = -1};

static bool same_type(CmType a, CmType b)
{
    return a.id == b.id &&
           (a.id != CM_T_DECIMAL || (a.precision == b.precision && a.scale == b.scale));
}

static ExFuncMatch resolve2(const char *name, CmType a, CmType b)
{
    CmType t[2] = {a, b};
    ExFuncMatch m;
    cm_err_init(&err);
    cr_assert_eq(ex_func_resolve(name, 2, t, 5, &m, &err), CM_OK, "%s: %s", name, err.msg);
    cr_assert_not_null(m.kernel);
    return m;
}

static void expect_types(ExFuncMatch m, CmType result, CmType arg0, CmType arg1)
{
    char want[32], got[32];
    cr_expect(same_type(m.result, result), "result %s, want %s",
              cm_type_name(m.result, got, sizeof got), cm_type_name(result, want, sizeof want));
    cr_expect(same_type(m.arg_types[0], arg0), "arg 0 %s, want %s",
              cm_type_name(m.arg_types[0], got, sizeof got), cm_type_name(arg0, want, sizeof want));
    cr_expect(same_type(m.arg_types[1], arg1), "arg 1 %s, want %s",
              cm_type_name(m.arg_types[1], got, sizeof got), cm_type_name(arg1, want, sizeof want));
}

/* ---- resolution ------------------------------------------------------------------- */

Test(ex_func, plus_on_integers_is_bigint)
{
    expect_types(resolve2("+", I32, I32), I64, I64, I64);
    expect_types(resolve2("+", I32, I64), I64, I64, I64);
    expect_types(resolve2("+", I64, I32), I64, I64, I64);
    expect_types(resolve2("-", I64, I64), I64, I64, I64);
    expect_types(resolve2("*", I32, I64), I64, I64, I64);
    expect_types(resolve2("/", I32, I32), I64, I64, I64);
    expect_types(resolve2("%", I32, I32), I64, I64, I64);
}

Test(ex_func, plus_with_decimal_keeps_the_larger_scale)
{
    CmType d72 = cm_type_decimal(7, 2), d124 = cm_type_decimal(12, 4);
    CmType r2 = cm_type_decimal(18, 2), r4 = cm_type_decimal(18, 4);
    /* A DECIMAL operand already at the kernel's scale is read as it is (the
     * kernels read raw int64 values); the others are cast. */
    expect_types(resolve2("+", I32, d72), r2, r2, d72);
    /* A BIGINT is 19 digits: with it the sum is DuckDB's DECIMAL(22,2), in 128 bits. */
    expect_types(resolve2("+", d72, I64), cm_type_decimal(22, 2), cm_type_decimal(38, 2),
                 cm_type_decimal(38, 2));
    expect_types(resolve2("-", d72, d124), r4, r4, d124);
    /* Products add the scales. */
    expect_types(resolve2("*", d72, d124), cm_type_decimal(18, 6), d72, d124);
    expect_types(resolve2("*", I64, d72), cm_type_decimal(26, 2), cm_type_decimal(38, 0),
                 cm_type_decimal(38, 2));
    /* Division goes through DOUBLE. */
    expect_types(resolve2("/", d72, d124), F64, F64, F64);
}

Test(ex_func, product_too_wide_for_decimal_goes_to_double)
{
    CmType d10 = cm_type_decimal(18, 10);
    expect_types(resolve2("*", d10, d10), F64, F64, F64);
}

Test(ex_func, plus_with_double_is_double)
{
    expect_types(resolve2("+", F64, I32), F64, F64, F64);
    expect_types(resolve2("+", I64, F64), F64, F64, F64);
    expect_types(resolve2("+", cm_type_decimal(9, 3), F64), F64, F64, F64);
}

Test(ex_func, null_operand_takes_the_other_type)
{
    expect_types(resolve2("+", NUL, I32), I64, I64, I64);
    expect_types(resolve2("+", NUL, NUL), I64, I64, I64);
}

Test(ex_func, string_operand_is_read_as_the_other_type)
{
    expect_types(resolve2("+", STR, I64), I64, I64, I64);
    expect_types(resolve2("*", F64, STR), F64, F64, F64);
}

Test(ex_func, date_arithmetic)
{
    expect_types(resolve2("+", DATE, I32), DATE, DATE, I64);
    expect_types(resolve2("-", DATE, I64), DATE, DATE, I64);
    expect_types(resolve2("-", DATE, DATE), I64, DATE, DATE);
    /* days + DATE is DATE + days with the arguments swapped: one kernel. */
    ExFuncMatch fwd = resolve2("+", DATE, I64), rev = resolve2("+", I32, DATE);
    expect_types(rev, DATE, I64, DATE);
    cr_expect(rev.swap_args);
    cr_expect_not(fwd.swap_args);
    cr_expect_eq(rev.kernel, fwd.kernel);
}

static void expect_type_error(const char *name, CmType a, CmType b, const char *msg_part)
{
    CmType t[2] = {a, b};
    ExFuncMatch m;
    CmErr e;
    cm_err_init(&e);
    cr_expect_eq(ex_func_resolve(name, 2, t, 42, &m, &e), CM_TYPE, "%s resolved", name);
    cr_expect_eq(e.off, 42, "the error points at the operator");
    cr_expect(strstr(e.msg, msg_part) != NULL, "message: %s", e.msg);
}

Test(ex_func, string_plus_date_is_a_type_error)
{
    expect_type_error("+", STR, DATE, "no operator +");
    expect_type_error("+", DATE, STR, "no operator +");
}

Test(ex_func, impossible_operands_are_type_errors)
{
    expect_type_error("+", STR, STR, "no operator + for types VARCHAR and VARCHAR");
    expect_type_error("*", DATE, I32, "no operator *");
    expect_type_error("+", DATE, DATE, "no operator +");
    expect_type_error("-", BOOL, I32, "no operator -");
    expect_type_error("=", I32, DATE, "no operator = for types INTEGER and DATE");
    expect_type_error("<", BOOL, F64, "no operator <");
}

Test(ex_func, unknown_function_is_a_bind_error)
{
    CmType t[1] = {I64};
    ExFuncMatch m;
    cr_expect_eq(ex_func_resolve("frobnicate", 1, t, 3, &m, &err), CM_BIND);
    cr_expect(strstr(err.msg, "frobnicate") != NULL, "message: %s", err.msg);
    CmErr e2;
    cm_err_init(&e2);
    /* A known name with the wrong number of arguments. */
    cr_expect_eq(ex_func_resolve("+", 1, t, 3, &m, &e2), CM_BIND);
}

Test(ex_func, comparison_common_types)
{
    CmType r;
    cr_expect(ex_common_type(I32, I64, &r) && r.id == CM_T_INT64);
    cr_expect(ex_common_type(I64, I32, &r) && r.id == CM_T_INT64);
    cr_expect(ex_common_type(I32, F64, &r) && r.id == CM_T_DOUBLE);
    cr_expect(ex_common_type(cm_type_decimal(5, 2), I32, &r) && r.id == CM_T_DECIMAL &&
              r.scale == 2 && r.precision == 18);
    cr_expect(ex_common_type(cm_type_decimal(5, 2), cm_type_decimal(9, 4), &r) &&
              r.id == CM_T_DECIMAL && r.scale == 4);
    cr_expect(ex_common_type(cm_type_decimal(5, 2), F64, &r) && r.id == CM_T_DOUBLE);
    cr_expect(ex_common_type(cm_type_varchar(3, false), cm_type_varchar(10, true), &r) &&
              r.id == CM_T_VARCHAR && r.length == -1 && !r.is_char);
    cr_expect(ex_common_type(STR, DATE, &r) && r.id == CM_T_DATE);
    cr_expect(ex_common_type(I64, STR, &r) && r.id == CM_T_INT64);
    cr_expect(ex_common_type(NUL, DATE, &r) && r.id == CM_T_DATE);
    cr_expect(ex_common_type(BOOL, BOOL, &r) && r.id == CM_T_BOOL);
    cr_expect_not(ex_common_type(DATE, I32, &r));
    cr_expect_not(ex_common_type(BOOL, I32, &r));
}

Test(ex_func, comparison_resolves_to_bool_over_the_common_type)
{
    expect_types(resolve2("=", I32, I64), BOOL, I64, I64);
    expect_types(resolve2("<", I32, F64), BOOL, F64, F64);
    expect_types(resolve2(">=", STR, DATE), BOOL, DATE, DATE);
    expect_types(resolve2("<>", cm_type_decimal(5, 1), I32), BOOL, cm_type_decimal(5, 1),
                 cm_type_decimal(18, 1));
    expect_types(resolve2("<", cm_type_decimal(7, 2), cm_type_decimal(12, 4)), BOOL,
                 cm_type_decimal(18, 4), cm_type_decimal(12, 4));
    expect_types(resolve2("=", STR, STR), BOOL, STR, STR);
    expect_types(resolve2("=", NUL, NUL), BOOL, BOOL, BOOL);
}

Test(ex_func, unary_resolution)
{
    CmType t[1];
    ExFuncMatch m;
    t[0] = I32;
    cr_assert_eq(ex_func_resolve("neg", 1, t, 0, &m, &err), CM_OK);
    cr_expect_eq(m.result.id, CM_T_INT64);
    t[0] = cm_type_decimal(6, 2);
    cr_assert_eq(ex_func_resolve("abs", 1, t, 0, &m, &err), CM_OK);
    cr_expect(same_type(m.result, cm_type_decimal(6, 2)));
    t[0] = DATE;
    cr_expect_eq(ex_func_resolve("neg", 1, t, 0, &m, &err), CM_TYPE);
    CmErr e2;
    cm_err_init(&e2);
    t[0] = STR;
    cr_expect_eq(ex_func_resolve("not", 1, t, 0, &m, &e2), CM_TYPE);
}

/* ---- kernels: values and errors ----------------------------------------------------- */

/* Evaluates `a op b` on constants; returns the status, the value in *out. */
static CmStatus calc(const char *op, CmValue a, CmValue b, CmValue *out)
{
    cm_err_init(&err);
    ExExpr *e = expr_bin(&arena, op, expr_const(&arena, a), expr_const(&arena, b));
    return ex_expr_eval_const(e, &arena, out, &err);
}

static int64_t calc_i(const char *op, int64_t a, int64_t b)
{
    CmValue out;
    cr_assert_eq(calc(op, v_i64(a), v_i64(b), &out), CM_OK, "%lld %s %lld: %s", (long long)a, op,
                 (long long)b, err.msg);
    cr_assert_not(out.is_null);
    return out.i;
}

static void expect_overflow(const char *op, int64_t a, int64_t b)
{
    CmValue out;
    cr_expect_eq(calc(op, v_i64(a), v_i64(b), &out), CM_RUNTIME, "%lld %s %lld", (long long)a, op,
                 (long long)b);
    cr_expect(strstr(err.msg, "overflow") != NULL, "message: %s", err.msg);
}

Test(ex_func, integer_arithmetic)
{
    cr_expect_eq(calc_i("+", 2, 3), 5);
    cr_expect_eq(calc_i("-", 2, 3), -1);
    cr_expect_eq(calc_i("*", -4, 3), -12);
    cr_expect_eq(calc_i("/", 7, 2), 3);
    cr_expect_eq(calc_i("/", -7, 2), -3);
    cr_expect_eq(calc_i("/", 7, -2), -3);
    cr_expect_eq(calc_i("%", 7, 3), 1);
    cr_expect_eq(calc_i("%", -7, 3), -1);
    cr_expect_eq(calc_i("%", INT64_MIN, -1), 0);
    cr_expect_eq(calc_i("+", INT64_MAX, 0), INT64_MAX);
    cr_expect_eq(calc_i("-", INT64_MIN + 1, 1), INT64_MIN);
}

Test(ex_func, integer_overflow_is_a_runtime_error)
{
    expect_overflow("+", INT64_MAX, 1);
    expect_overflow("+", INT64_MIN, -1);
    expect_overflow("-", INT64_MIN, 1);
    expect_overflow("-", 0, INT64_MIN);
    expect_overflow("*", INT64_MAX / 2 + 1, 2);
    expect_overflow("*", INT64_MIN, -1);
    expect_overflow("/", INT64_MIN, -1);
    cr_expect_str_eq(err.msg, "integer overflow in '/'");
}

Test(ex_func, integer_columns_overflow_in_bigint_not_int32)
{
    /* INTEGER + INTEGER is computed in BIGINT: 2^31 - 1 + 1 does not overflow. */
    CmValue out;
    cr_assert_eq(calc("+", v_i32(INT32_MAX), v_i32(1), &out), CM_OK, "%s", err.msg);
    cr_expect_eq(out.i, (int64_t)INT32_MAX + 1);
    cr_expect_eq(out.type.id, CM_T_INT64);
}

Test(ex_func, negation_overflow)
{
    ExExpr *arg = expr_const(&arena, v_i64(INT64_MIN));
    ExExpr *e = expr_call(&arena, "neg", 1, &arg);
    CmValue out;
    cr_expect_eq(ex_expr_eval_const(e, &arena, &out, &err), CM_RUNTIME);
    CmErr e2;
    cm_err_init(&e2);
    ExExpr *a2 = expr_call(&arena, "abs", 1, &arg);
    cr_expect_eq(ex_expr_eval_const(a2, &arena, &out, &e2), CM_RUNTIME);
    cm_err_init(&err);
    arg = expr_const(&arena, v_i64(-9));
    cr_assert_eq(ex_expr_eval_const(expr_call(&arena, "abs", 1, &arg), &arena, &out, &err), CM_OK);
    cr_expect_eq(out.i, 9);
}

Test(ex_func, division_by_zero_is_a_runtime_error)
{
    static const char *ops[] = {"/", "%"};
    CmValue out;
    for (int k = 0; k < 2; k++) {
        cr_expect_eq(calc(ops[k], v_i64(1), v_i64(0), &out), CM_RUNTIME, "integer %s", ops[k]);
        cr_expect_str_eq(err.msg, "division by zero");
    }
    cr_expect_eq(calc("%", v_dec(150, 5, 2), v_dec(0, 5, 2), &out), CM_RUNTIME, "decimal %%");
    cr_expect_str_eq(err.msg, "division by zero");
}

Test(ex_func, double_division_by_zero_follows_ieee)
{
    CmValue out;
    cr_assert_eq(calc("/", v_f64(1.5), v_f64(0.0), &out), CM_OK);
    cr_expect(isinf(out.d) && out.d > 0);
    cr_assert_eq(calc("/", v_f64(-1.5), v_f64(0.0), &out), CM_OK);
    cr_expect(isinf(out.d) && out.d < 0);
    cr_assert_eq(calc("/", v_f64(0.0), v_f64(0.0), &out), CM_OK);
    cr_expect(isnan(out.d));
    cr_assert_eq(calc("%", v_f64(1.5), v_f64(0.0), &out), CM_OK);
    cr_expect(isnan(out.d));
    /* a DECIMAL quotient is a DOUBLE */
    cr_assert_eq(calc("/", v_dec(150, 5, 2), v_dec(0, 5, 2), &out), CM_OK);
    cr_expect(isinf(out.d) && out.d > 0);
}

Test(ex_func, null_operands_skip_the_checks)
{
    CmValue out;
    cr_expect_eq(calc("/", v_null(I64), v_i64(0), &out), CM_OK);
    cr_expect(out.is_null);
    cr_expect_eq(calc("/", v_i64(1), v_null(I64), &out), CM_OK);
    cr_expect(out.is_null);
    cr_expect_eq(calc("+", v_i64(INT64_MAX), v_null(I64), &out), CM_OK);
    cr_expect(out.is_null);
    cr_expect_eq(calc("*", v_null(F64), v_f64(2), &out), CM_OK);
    cr_expect(out.is_null);
}

Test(ex_func, decimal_arithmetic)
{
    CmValue out;
    /* 1.25 + 2 = 3.25 (scale 2) */
    cr_assert_eq(calc("+", v_dec(125, 5, 2), v_i64(2), &out), CM_OK, "%s", err.msg);
    cr_expect_eq(out.type.scale, 2);
    cr_expect_eq(out.i, 325);
    /* 1.5 - 0.25 = 1.25 (scale 2) */
    cr_assert_eq(calc("-", v_dec(15, 5, 1), v_dec(25, 5, 2), &out), CM_OK, "%s", err.msg);
    cr_expect_eq(out.i, 125);
    /* 1.5 * 0.25 = 0.375 (scale 3) */
    cr_assert_eq(calc("*", v_dec(15, 5, 1), v_dec(25, 5, 2), &out), CM_OK, "%s", err.msg);
    cr_expect_eq(out.type.scale, 3);
    cr_expect_eq(out.i, 375);
    /* 1 / 0.5 = 2.0 as DOUBLE */
    cr_assert_eq(calc("/", v_dec(10, 5, 1), v_dec(5, 5, 1), &out), CM_OK, "%s", err.msg);
    cr_expect_eq(out.type.id, CM_T_DOUBLE);
    cr_expect_float_eq(out.d, 2.0, 1e-12);
}

Test(ex_func, decimal_overflow_beyond_18_digits)
{
    CmValue out;
    int64_t big = 999999999999999999LL; /* 18 nines */
    cr_expect_eq(calc("+", v_dec(big, 18, 0), v_dec(1, 18, 0), &out), CM_RUNTIME);
    cr_expect(strstr(err.msg, "overflow") != NULL, "message: %s", err.msg);
    cr_expect_eq(calc("*", v_dec(1000000000, 18, 0), v_dec(1000000000, 18, 0), &out), CM_RUNTIME);
    cr_expect_eq(calc("-", v_dec(-big, 18, 0), v_dec(1, 18, 0), &out), CM_RUNTIME);
    cr_assert_eq(calc("+", v_dec(big - 1, 18, 0), v_dec(1, 18, 0), &out), CM_OK);
    cr_expect_eq(out.i, big);
}

Test(ex_func, double_arithmetic)
{
    CmValue out;
    cr_assert_eq(calc("+", v_f64(0.5), v_i64(2), &out), CM_OK);
    cr_expect_eq(out.d, 2.5);
    cr_assert_eq(calc("%", v_f64(7.5), v_f64(2), &out), CM_OK);
    cr_expect_eq(out.d, 1.5);
    cr_assert_eq(calc("*", v_f64(1e308), v_f64(10), &out), CM_OK, "doubles overflow to inf");
    cr_expect(isinf(out.d));
}

Test(ex_func, date_arithmetic_values)
{
    CmValue out;
    CmValue d = v_int(CM_T_DATE, 19000);
    cr_assert_eq(calc("+", d, v_i32(31), &out), CM_OK, "%s", err.msg);
    cr_expect_eq(out.type.id, CM_T_DATE);
    cr_expect_eq(out.i, 19031);
    cr_assert_eq(calc("-", d, v_int(CM_T_DATE, 18000), &out), CM_OK);
    cr_expect_eq(out.type.id, CM_T_INT64);
    cr_expect_eq(out.i, 1000);
    cr_expect_eq(calc("+", d, v_i64(INT64_MAX / 2), &out), CM_RUNTIME);
    cr_assert_eq(calc("+", v_i32(31), d, &out), CM_OK, "%s", err.msg);
    cr_expect_eq(out.type.id, CM_T_DATE);
    cr_expect_eq(out.i, 19031);
    cr_assert_eq(calc("+", v_i64(-19000), d, &out), CM_OK, "%s", err.msg);
    cr_expect_eq(out.i, 0);
    cr_expect_eq(calc("+", v_i64(INT64_MAX / 2), d, &out), CM_RUNTIME);
    cr_assert_eq(calc("+", v_null(I32), d, &out), CM_OK, "%s", err.msg);
    cr_expect(out.is_null);
}

static bool cmp_const(const char *op, CmValue a, CmValue b)
{
    CmValue out;
    cr_assert_eq(calc(op, a, b, &out), CM_OK, "%s", err.msg);
    cr_assert_not(out.is_null);
    return out.i != 0;
}

Test(ex_func, comparisons_across_types)
{
    cr_expect(cmp_const("=", v_i32(3), v_i64(3)));
    cr_expect(cmp_const("<", v_i32(3), v_f64(3.5)));
    cr_expect(cmp_const(">", v_dec(251, 5, 2), v_i32(2)));
    cr_expect(cmp_const("<>", v_dec(250, 5, 2), v_dec(25, 5, 1)) == false);
    cr_expect(cmp_const("<=", v_str("abc"), v_str("abd")));
    cr_expect(cmp_const(">=", v_str("b"), v_str("abcdefghijklmnop")));
    cr_expect(cmp_const("=", v_str("2024-02-29"), v_int(CM_T_DATE, 19782)));
    CmValue out;
    cr_assert_eq(calc("=", v_null(I64), v_i64(1), &out), CM_OK);
    cr_expect(out.is_null);
}

/* Regression (was a bug): comparing a BIGINT with a DECIMAL resolves both sides to the common
 * type DECIMAL(18, s) (ex_common_type), so any BIGINT of more than 18 - s
 * digits fails the implicit cast with "out of range" and the *comparison*
 * raises CM_RUNTIME: `WHERE big_col > 0.5` errors on 10^18 (and on values
 * of 10^17 already for a scale of 2).  Both operands are valid values of
 * their types; the comparison should be answered (compare in a wider type,
 * e.g. 128-bit scaled integers, or in DOUBLE when the integer does not fit). */
Test(ex_func, bigint_compared_with_decimal_does_not_fail)
{
    CmValue out;
    cr_assert_eq(calc(">", v_i64(1000000000000000000LL), v_dec(5, 2, 1), &out), CM_OK, "%s",
                 err.msg);
    cr_expect_eq(out.i, 1);
    cr_assert_eq(calc("=", v_i64(INT64_MAX), v_dec(5, 2, 1), &out), CM_OK, "%s", err.msg);
    cr_expect_eq(out.i, 0);
}
