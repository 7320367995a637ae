/*
 * test_cast.c - unit tests for executor/func_cast.c: casts of single values
 * (strings to numbers and back, rounding half away from zero for DECIMAL and
 * for DOUBLE to integer, range errors naming the value and the type, DATE
 * rules) and the vector cast kernels over selections and NULLs.
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

TestSuite(ex_func_cast, .init = setup, .fini = teardown);

static const CmType I32 = {.id = CM_T_INT32, .length = -1};
static const CmType I64 = {.id = CM_T_INT64, .length = -1};
static const CmType F64 = {.id = CM_T_DOUBLE, .length = -1};
static const CmType STR = {.id = CM_T_VARCHAR, .length = -1};
static const CmType DATE = {.id = CM_T_DATE, .length = -1};
static const CmType BOOL = {.id = CM_T_BOOL, .length = -1};

static CmStatus cast(CmValue in, CmType to, CmValue *out)
{
    cm_err_init(&err);
    memset(out, 0x5a, sizeof *out);
    return ex_cast_value(&in, to, &arena, out, &err);
}

static int64_t cast_ok_i(CmValue in, CmType to)
{
    CmValue out;
    cr_assert_eq(cast(in, to, &out), CM_OK, "cast failed: %s", err.msg);
    cr_assert_not(out.is_null);
    cr_assert_eq(out.type.id, to.id);
    return out.i;
}

static void expect_fail(CmValue in, CmType to, const char *msg)
{
    CmValue out;
    cr_expect_eq(cast(in, to, &out), CM_RUNTIME, "cast accepted (%s)", msg);
    cr_expect_str_eq(err.msg, msg);
}

static bool out_text_is(CmValue in, const char *want)
{
    CmValue out;
    cr_assert_eq(cast(in, STR, &out), CM_OK, "%s", err.msg);
    return out.s.len == strlen(want) && memcmp(cm_str_data(&out.s), want, out.s.len) == 0;
}

/* ---- strings to numbers --------------------------------------------------------------- */

Test(ex_func_cast, string_to_integer)
{
    cr_expect_eq(cast_ok_i(v_str("42"), I32), 42);
    cr_expect_eq(cast_ok_i(v_str(" -7 "), I32), -7);
    cr_expect_eq(cast_ok_i(v_str("2147483647"), I32), INT32_MAX);
    cr_expect_eq(cast_ok_i(v_str("9223372036854775807"), I64), INT64_MAX);
    /* A decimal text rounds half away from zero. */
    cr_expect_eq(cast_ok_i(v_str("12.5"), I32), 13);
    cr_expect_eq(cast_ok_i(v_str("-12.5"), I32), -13);
    cr_expect_eq(cast_ok_i(v_str("12.49"), I32), 12);
}

Test(ex_func_cast, string_to_integer_failures)
{
    expect_fail(v_str("abc"), I32, "could not convert string 'abc' to INTEGER");
    expect_fail(v_str(""), I32, "could not convert string '' to INTEGER");
    expect_fail(v_str("12x"), I64, "could not convert string '12x' to BIGINT");
    expect_fail(v_str("1 2"), I32, "could not convert string '1 2' to INTEGER");
    expect_fail(v_str("2147483648"), I32, "could not convert string '2147483648' to INTEGER");
    expect_fail(v_str("-2147483649"), I32, "could not convert string '-2147483649' to INTEGER");
    expect_fail(v_str("9223372036854775808"), I64,
                "could not convert string '9223372036854775808' to BIGINT");
    expect_fail(v_str("nan"), I64, "could not convert string 'nan' to BIGINT");
}

Test(ex_func_cast, long_bad_string_is_cut_in_the_message)
{
    char text[200];
    memset(text, 'q', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    CmValue out;
    cr_expect_eq(cast(v_str(text), I32, &out), CM_RUNTIME);
    cr_expect_lt(strlen(err.msg), CM_ERR_MSG_CAP);
    cr_expect(strstr(err.msg, "could not convert string 'qqqq") == err.msg, "%s", err.msg);
}

Test(ex_func_cast, string_to_double_and_decimal)
{
    CmValue out;
    cr_assert_eq(cast(v_str("2.5e3"), F64, &out), CM_OK);
    cr_expect_eq(out.d, 2500.0);
    expect_fail(v_str("1.2.3"), F64, "could not convert string '1.2.3' to DOUBLE");
    CmType d = cm_type_decimal(10, 2);
    cr_expect_eq(cast_ok_i(v_str("1.005"), d), 101);
    cr_expect_eq(cast_ok_i(v_str("-0.005"), d), -1);
    cr_expect_eq(cast_ok_i(v_str("0.0049"), d), 0);
    cr_expect_eq(cast_ok_i(v_str("12345678.99"), d), 1234567899);
    expect_fail(v_str("123456789"), d, "could not convert string '123456789' to DECIMAL(10,2)");
    expect_fail(v_str("x1"), d, "could not convert string 'x1' to DECIMAL(10,2)");
}

/* ---- decimal rounding ------------------------------------------------------------------------ */

Test(ex_func_cast, decimal_to_smaller_scale_rounds_half_away_from_zero)
{
    CmType d2 = cm_type_decimal(10, 2);
    cr_expect_eq(cast_ok_i(v_dec(12345, 10, 3), d2), 1235);   /* 12.345 -> 12.35 */
    cr_expect_eq(cast_ok_i(v_dec(-12345, 10, 3), d2), -1235); /* -12.345 -> -12.35 */
    cr_expect_eq(cast_ok_i(v_dec(12344, 10, 3), d2), 1234);
    cr_expect_eq(cast_ok_i(v_dec(-12344, 10, 3), d2), -1234);
    cr_expect_eq(cast_ok_i(v_dec(12346, 10, 3), d2), 1235);
    cr_expect_eq(cast_ok_i(v_dec(-5, 10, 3), d2), -1); /* -0.005 -> -0.01 */
    cr_expect_eq(cast_ok_i(v_dec(4, 10, 3), d2), 0);
    cr_expect_eq(cast_ok_i(v_dec(-4, 10, 3), d2), 0);
}

Test(ex_func_cast, decimal_to_integer_rounds_half_away_from_zero)
{
    cr_expect_eq(cast_ok_i(v_dec(25, 5, 1), I32), 3);
    cr_expect_eq(cast_ok_i(v_dec(-25, 5, 1), I32), -3);
    cr_expect_eq(cast_ok_i(v_dec(24, 5, 1), I32), 2);
    cr_expect_eq(cast_ok_i(v_dec(-15, 5, 1), I64), -2);
    cr_expect_eq(cast_ok_i(v_dec(-14, 5, 1), I64), -1);
    cr_expect_eq(cast_ok_i(v_dec(7, 5, 0), I64), 7);
    /* 21474836475 / 10 rounds to 2147483648: out of INTEGER's range. */
    expect_fail(v_dec(21474836475LL, 12, 1), I32,
                "value 2147483647.5 is out of range for type INTEGER");
}

Test(ex_func_cast, decimal_scale_up_and_precision)
{
    cr_expect_eq(cast_ok_i(v_dec(123, 5, 0), cm_type_decimal(10, 3)), 123000);
    expect_fail(v_dec(12345, 5, 0), cm_type_decimal(6, 2),
                "value 12345 is out of range for type DECIMAL(6,2)");
    cr_expect_eq(cast_ok_i(v_i64(999), cm_type_decimal(4, 1)), 9990);
    expect_fail(v_i64(12345), cm_type_decimal(4, 1),
                "value 12345 is out of range for type DECIMAL(4,1)");
    expect_fail(v_i64(INT64_MAX), cm_type_decimal(18, 2),
                "value 9223372036854775807 is out of range for type DECIMAL(18,2)");
}

Test(ex_func_cast, double_to_decimal_rounds_half_away_from_zero)
{
    /* Exactly representable halves, so the rounding rule alone decides. */
    cr_expect_eq(cast_ok_i(v_f64(0.125), cm_type_decimal(10, 2)), 13);
    cr_expect_eq(cast_ok_i(v_f64(-0.125), cm_type_decimal(10, 2)), -13);
    cr_expect_eq(cast_ok_i(v_f64(2.5), cm_type_decimal(10, 0)), 3);
    expect_fail(v_f64(1e20), cm_type_decimal(18, 0),
                "value 1e+20 is out of range for type "
                "DECIMAL(18,0)");
    CmValue out;
    cr_expect_eq(cast(v_f64(NAN), cm_type_decimal(10, 2), &out), CM_RUNTIME);
}

/* ---- double to integer ------------------------------------------------------------------------
 */

/* Halves go to the even neighbour, as PostgreSQL and DuckDB do. */
Test(ex_func_cast, double_to_integer_rounds_half_to_even)
{
    cr_expect_eq(cast_ok_i(v_f64(2.5), I32), 2);
    cr_expect_eq(cast_ok_i(v_f64(-2.5), I32), -2);
    cr_expect_eq(cast_ok_i(v_f64(3.5), I64), 4);
    cr_expect_eq(cast_ok_i(v_f64(2.4999999), I64), 2);
    cr_expect_eq(cast_ok_i(v_f64(-0.4), I64), 0);
    cr_expect_eq(cast_ok_i(v_f64(0.49999999999999994), I64), 0);
    cr_expect_eq(cast_ok_i(v_f64(-1e15 - 0.5), I64), -1000000000000000LL);
}

Test(ex_func_cast, double_to_integer_out_of_range)
{
    expect_fail(v_f64(1e19), I64, "value 1e+19 is out of range for type BIGINT");
    expect_fail(v_f64(-1e19), I64, "value -1e+19 is out of range for type BIGINT");
    expect_fail(v_f64(2147483647.5), I32, "value 2147483647.5 is out of range for type INTEGER");
    expect_fail(v_f64(-2147483649.5), I32, "value -2147483649.5 is out of range for type INTEGER");
    CmValue out;
    cr_expect_eq(cast(v_f64(NAN), I64, &out), CM_RUNTIME);
    cr_expect_eq(cast(v_f64(INFINITY), I32, &out), CM_RUNTIME);
    cr_expect_eq(cast(v_f64(-INFINITY), I64, &out), CM_RUNTIME);
    /* The largest double below 2^63 still fits. */
    cr_expect_eq(cast_ok_i(v_f64(9223372036854774784.0), I64), 9223372036854774784LL);
}

/* Regression (was a bug): to_int() accepts doubles with |d| < 9.3e18, but BIGINT ends at
 * 2^63 ~ 9.223e18: for 9.2234e18 <= |d| < 9.3e18 llround() overflows
 * (returns an unspecified value, INT64_MIN on x86-64) and the cast succeeds
 * with a wrapped number instead of failing "out of range", contrary to the
 * rule in func_cast.c's header.  The bound should be d < 9223372036854775808.0
 * and d >= -9223372036854775808.0. */
Test(ex_func_cast, double_just_past_bigint_range_fails)
{
    expect_fail(v_f64(9.25e18), I64, "value 9.25e+18 is out of range for type BIGINT");
    expect_fail(v_f64(-9.25e18), I64, "value -9.25e+18 is out of range for type BIGINT");
    expect_fail(v_f64(9223372036854775808.0), I64,
                "value 9.223372036854776e+18 is out of range for type BIGINT");
}

/* ---- other casts -------------------------------------------------------------------------- */

Test(ex_func_cast, integer_narrowing)
{
    cr_expect_eq(cast_ok_i(v_i64(-2147483648LL), I32), INT32_MIN);
    expect_fail(v_i64(2147483648LL), I32, "value 2147483648 is out of range for type INTEGER");
    cr_expect_eq(cast_ok_i(v_bool(true), I64), 1);
}

Test(ex_func_cast, to_text)
{
    cr_expect(out_text_is(v_i64(-42), "-42"));
    cr_expect(out_text_is(v_f64(0.1), "0.1"));
    cr_expect(out_text_is(v_f64(3), "3.0"));
    cr_expect(out_text_is(v_dec(1230, 10, 2), "12.30"));
    cr_expect(out_text_is(v_dec(-5, 10, 2), "-0.05"));
    cr_expect(out_text_is(v_int(CM_T_DATE, 19782), "2024-02-29"));
    cr_expect(out_text_is(v_bool(false), "false"));
    cr_expect(out_text_is(v_str("same text, no copy needed"), "same text, no copy needed"));
}

Test(ex_func_cast, to_boolean)
{
    cr_expect_eq(cast_ok_i(v_str("yes"), BOOL), 1);
    cr_expect_eq(cast_ok_i(v_str("F"), BOOL), 0);
    cr_expect_eq(cast_ok_i(v_f64(0.0), BOOL), 0);
    cr_expect_eq(cast_ok_i(v_f64(-0.5), BOOL), 1);
    cr_expect_eq(cast_ok_i(v_i64(7), BOOL), 1);
    expect_fail(v_str("maybe"), BOOL, "could not convert string 'maybe' to BOOLEAN");
    CmValue out;
    cr_expect_eq(cast(v_int(CM_T_DATE, 1), BOOL, &out), CM_RUNTIME);
}

Test(ex_func_cast, dates)
{
    cr_expect_eq(cast_ok_i(v_str("2024-02-29"), DATE), 19782);
    cr_expect_eq(cast_ok_i(v_str("1970-01-01"), DATE), 0);
    expect_fail(v_str("2023-02-29"), DATE, "could not convert string '2023-02-29' to DATE");
    CmValue out;
    cr_expect_eq(cast(v_i64(5), DATE, &out), CM_RUNTIME);
    cr_expect_eq(cast(v_int(CM_T_DATE, 5), I32, &out), CM_RUNTIME);
    cr_expect_null(ex_cast_kernel(DATE, I32));
    cr_expect_null(ex_cast_kernel(I64, DATE));
    cr_expect_null(ex_cast_kernel(DATE, F64));
    cr_expect_not_null(ex_cast_kernel(STR, DATE));
    cr_expect_not_null(ex_cast_kernel(DATE, STR));
    cr_expect_not_null(ex_cast_kernel(DATE, DATE));
}

Test(ex_func_cast, null_casts_to_null_of_the_target_type)
{
    CmValue out;
    cr_assert_eq(cast(v_null(STR), I32, &out), CM_OK);
    cr_expect(out.is_null);
    cr_expect_eq(out.type.id, CM_T_INT32);
    CmType untyped = cm_type_make(CM_T_NULL);
    CmValue nul = v_null(untyped);
    nul.is_null = false; /* the NULL type is NULL whatever the flag says */
    cr_assert_eq(cast(nul, DATE, &out), CM_OK);
    cr_expect(out.is_null);
}

/* ---- vector kernels ------------------------------------------------------------------------- */

Test(ex_func_cast, vector_cast_only_converts_selected_rows)
{
    if (CM_BATCH_CAP < 3) {
        cr_skip_test("needs three rows per batch");
    }
    CmType t[1] = {STR};
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, t, &err), CM_OK);
    CmStr *s = b.cols[0].data;
    s[0] = cm_str_make("10", 2);
    s[1] = cm_str_make("not a number at all", 19);
    s[2] = cm_str_make("-3", 2);
    b.sel_buf[0] = 2;
    b.sel_buf[1] = 0;
    b.sel = b.sel_buf;
    b.n_rows = 2;
    ExExpr *e = expr_cast(&arena, expr_col(&arena, 0, STR), I32);
    e->src_off = 9;
    ExExprState *st = ex_expr_state_new(e, &err);
    cr_assert_not_null(st);
    const CmVec *v = ex_expr_eval(st, &b, &err);
    cr_assert_not_null(v, "%s", err.msg);
    cr_expect_eq(((int32_t *)v->data)[0], 10);
    cr_expect_eq(((int32_t *)v->data)[2], -3);

    b.sel_buf[0] = 1;
    b.n_rows = 1;
    cr_expect_null(ex_expr_eval(st, &b, &err));
    cr_expect_eq(err.code, CM_RUNTIME);
    cr_expect_eq(err.off, 9, "the error points at the cast");
    cr_expect(strstr(err.msg, "not a number at all") != NULL, "%s", err.msg);
    ex_expr_state_free(st);
    cm_batch_fini(&b);
}

Test(ex_func_cast, vector_casts_keep_nulls)
{
    CmType from[4] = {I32, I32, I64, cm_type_decimal(9, 2)};
    CmType to[4] = {I64, F64, F64, F64};
    for (int k = 0; k < 4; k++) {
        CmBatch b;
        cr_assert_eq(cm_batch_init(&b, 1, &from[k], &err), CM_OK);
        for (int i = 0; i < CM_BATCH_CAP; i++) {
            if (i % 2) {
                cm_vec_set_null(&b.cols[0], (uint32_t)i);
            } else if (from[k].id == CM_T_INT32) {
                ((int32_t *)b.cols[0].data)[i] = -i * 3;
            } else {
                ((int64_t *)b.cols[0].data)[i] = -i * 3;
            }
        }
        b.n_rows = CM_BATCH_CAP;
        ExExprState *st =
            ex_expr_state_new(expr_cast(&arena, expr_col(&arena, 0, from[k]), to[k]), &err);
        const CmVec *v = ex_expr_eval(st, &b, &err);
        cr_assert_not_null(v);
        for (int i = 0; i < CM_BATCH_CAP; i++) {
            cr_assert_eq(cm_vec_is_null(v, (uint32_t)i), i % 2 == 1, "cast %d row %d", k, i);
            if (i % 2 == 0) {
                double want = from[k].id == CM_T_DECIMAL ? -i * 3 / 100.0 : -i * 3;
                double got = to[k].id == CM_T_INT64 ? (double)((int64_t *)v->data)[i]
                                                    : ((double *)v->data)[i];
                cr_assert_float_eq(got, want, 1e-12, "cast %d row %d", k, i);
            }
        }
        ex_expr_state_free(st);
        cm_batch_fini(&b);
    }
}
