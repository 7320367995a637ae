/*
 * test_value.c - unit tests for common/value.c: text <-> value conversions of
 * BIGINT, DOUBLE, DECIMAL, DATE and BOOLEAN.  Expected texts are written out
 * literally (the CLI contract depends on them); the calendar is checked
 * against a naive day-by-day walk rather than against a second formula.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/value.h"

/* ---------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------- */

/* Parsers take (text, len); these wrap them for NUL-terminated literals. */
static bool parse_i64(const char *s, int64_t *out)
{
    return cm_parse_int64(s, strlen(s), out);
}

static bool parse_dbl(const char *s, double *out)
{
    return cm_parse_double(s, strlen(s), out);
}

static bool parse_date(const char *s, int32_t *out)
{
    return cm_parse_date(s, strlen(s), out);
}

static bool parse_dec(const char *s, int precision, int scale, int64_t *out)
{
    return cm_parse_decimal(s, strlen(s), precision, scale, out);
}

static bool parse_bool(const char *s, bool *out)
{
    return cm_parse_bool(s, strlen(s), out);
}

/* Same bits, so -0.0 differs from 0.0 and NaN equals itself. */
static bool same_bits(double a, double b)
{
    uint64_t ua = 0;
    uint64_t ub = 0;
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    return ua == ub;
}

/* Copies s without its NUL into an exact-size heap block, so that ASan
 * catches any read past len. */
static char *unterminated(const char *s, size_t *len)
{
    *len = strlen(s);
    char *p = cm_malloc(*len == 0 ? 1 : *len);
    cr_assert_not_null(p);
    memcpy(p, s, *len);
    return p;
}

static uint64_t xorshift64(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

/* ---------------------------------------------------------------------------
 * cm_pow10, BIGINT
 * ------------------------------------------------------------------------- */

Test(cm_value, pow10_table)
{
    cr_assert_eq(cm_pow10(0), 1);
    cr_assert_eq(cm_pow10(1), 10);
    cr_assert_eq(cm_pow10(9), INT64_C(1000000000));
    cr_assert_eq(cm_pow10(18), INT64_C(1000000000000000000));
    for (int n = 1; n <= 18; n++) {
        cr_assert_eq(cm_pow10(n), 10 * cm_pow10(n - 1), "n=%d", n);
    }
}

Test(cm_value, fmt_int64)
{
    static const struct {
        int64_t v;
        const char *text;
    } cases[] = {
        {0, "0"},
        {1, "1"},
        {-1, "-1"},
        {10, "10"},
        {-100, "-100"},
        {INT64_C(123456789012345678), "123456789012345678"},
        {INT64_MAX, "9223372036854775807"},
        {INT64_MIN, "-9223372036854775808"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[CM_FMT_CAP];
        int n = cm_fmt_int64(cases[i].v, buf);
        cr_assert_str_eq(buf, cases[i].text);
        cr_assert_eq(n, (int)strlen(cases[i].text));
    }
}

Test(cm_value, parse_int64_valid)
{
    static const struct {
        const char *text;
        int64_t v;
    } cases[] = {
        {"0", 0},
        {"-0", 0},
        {"+0", 0},
        {"7", 7},
        {"+5", 5},
        {"-42", -42},
        {"  12  ", 12},
        {"\t-7\n", -7},
        {" \r\n\v\f1", 1},
        {"00000000000000000000000042", 42},
        {"123456789012345678", INT64_C(123456789012345678)},
        {"9223372036854775807", INT64_MAX},
        {"-9223372036854775807", -INT64_MAX},
        {"-9223372036854775808", INT64_MIN},
        {"-000009223372036854775808", INT64_MIN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = 99;
        cr_assert(parse_i64(cases[i].text, &v), "'%s'", cases[i].text);
        cr_assert_eq(v, cases[i].v, "'%s' -> %lld", cases[i].text, (long long)v);
    }
}

Test(cm_value, parse_int64_invalid)
{
    static const char *const cases[] = {
        "",
        " ",
        "+",
        "-",
        "--1",
        "+-1",
        "12a",
        "a12",
        "1 2",
        "1.0",
        "1e3",
        "0x1",
        "9223372036854775808",
        "-9223372036854775809",
        "99999999999999999999",
        "18446744073709551616",
        "- 1",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = 99;
        cr_assert_not(parse_i64(cases[i], &v), "'%s' accepted", cases[i]);
        cr_assert_eq(v, 99, "'%s' wrote the output", cases[i]);
    }
}

Test(cm_value, parse_int64_respects_len)
{
    int64_t v = 0;
    cr_assert(cm_parse_int64("123456", 3, &v));
    cr_assert_eq(v, 123);
    cr_assert_not(cm_parse_int64("12x456", 3, &v));
    cr_assert_not(cm_parse_int64("123", 0, &v));

    size_t len = 0;
    char *p = unterminated("-9876", &len);
    cr_assert(cm_parse_int64(p, len, &v));
    cr_assert_eq(v, -9876);
    cm_free(p);
}

Test(cm_value, int64_round_trip)
{
    uint64_t state = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 20000; i++) {
        int64_t v = (int64_t)xorshift64(&state) >> (i % 64);
        char buf[CM_FMT_CAP];
        int n = cm_fmt_int64(v, buf);
        int64_t back = 0;
        cr_assert(cm_parse_int64(buf, (size_t)n, &back), "'%s'", buf);
        cr_assert_eq(back, v, "'%s'", buf);
    }
}

Test(cm_value, parse_int64_round_exact)
{
    static const struct {
        const char *text;
        int64_t want;
    } ok[] = {
        {"12.5", 13}, {"-12.5", -13}, {"12.49", 12}, {"0.5", 1}, {"-0.4", 0}, {".5", 1},
        {"5.", 5}, {"1e3", 1000}, {"1.5E1", 15}, {"25e-1", 3}, {"1e-999", 0},
        {"0e999999999999", 0}, {" 42 ", 42}, {"0.00000000000000000000000001e30", 10000},
        {"9223372036854775807.4", INT64_MAX}, {"-9223372036854775808.49", INT64_MIN},
        {"9.223372036854775807e18", INT64_MAX}, {"-9223372036854775808", INT64_MIN},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t v = 0;
        cr_assert(cm_parse_int64_round(ok[i].text, strlen(ok[i].text), &v), "'%s'", ok[i].text);
        cr_assert_eq(v, ok[i].want, "'%s'", ok[i].text);
    }
    /* Out of range by a little (a DOUBLE would round these into range), or no number. */
    static const char *const bad[] = {"-9223372036854775809", "9223372036854775808",
                                      "9223372036854775807.5", "-9223372036854775808.5",
                                      "1e19", "-9.3e18", "1e999999999999", "abc", "", "1e",
                                      "--1", "1.2.3", "nan", "inf"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v = 0;
        cr_assert_not(cm_parse_int64_round(bad[i], strlen(bad[i]), &v), "'%s'", bad[i]);
    }
}

/* ---------------------------------------------------------------------------
 * DOUBLE
 * ------------------------------------------------------------------------- */

Test(cm_value, fmt_double_exact_texts)
{
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {0.0, "0.0"},
        {-0.0, "-0.0"},
        {0.1, "0.1"},
        {0.3, "0.3"},
        {0.1 + 0.2, "0.30000000000000004"},
        {2.5, "2.5"},
        {-1.5, "-1.5"},
        {3.0, "3.0"},
        {-3.0, "-3.0"},
        {100.0, "100.0"},
        {123456.0, "123456.0"},
        {1e14, "100000000000000.0"},
        {1e15, "1e+15"},
        {1e16, "1e+16"},
        {1e20, "1e+20"},
        {1e21, "1e+21"},
        {1e100, "1e+100"},
        {1e300, "1e+300"},
        {1.5e-7, "1.5e-07"},
        {1e-5, "1e-05"},
        {0.0001, "0.0001"},
        {4.35, "4.35"},
        {12345678.9, "12345678.9"},
        {1.0 / 3.0, "0.3333333333333333"},
        {2.0 / 3.0, "0.6666666666666666"},
        {9007199254740992.0, "9007199254740992.0"},
        {123456789012345678.0, "1.2345678901234568e+17"},
        {DBL_MAX, "1.7976931348623157e+308"},
        {-DBL_MAX, "-1.7976931348623157e+308"},
        {DBL_MIN, "2.2250738585072014e-308"},
        /* %.15g already reads back to the smallest subnormal. */
        {5e-324, "4.94065645841247e-324"},
        {INFINITY, "inf"},
        {-INFINITY, "-inf"},
        {NAN, "nan"},
        {-NAN, "nan"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[CM_FMT_CAP];
        int n = cm_fmt_double(cases[i].v, buf);
        cr_assert_str_eq(buf, cases[i].text, "case %zu", i);
        cr_assert_eq(n, (int)strlen(cases[i].text));
    }
}

Test(cm_value, parse_double_valid)
{
    static const struct {
        const char *text;
        double v;
    } cases[] = {
        {"0", 0.0},
        {"-0", -0.0},
        {"-0.0", -0.0},
        {"0.1", 0.1},
        {"  -2.5e3 ", -2500.0},
        {"1.", 1.0},
        {".5", 0.5},
        {"+.5", 0.5},
        {"-.25", -0.25},
        {"1E2", 100.0},
        {"1e+2", 100.0},
        {"25e-1", 2.5},
        {"3.0", 3.0},
        {"0.30000000000000004", 0.1 + 0.2},
        {"0.3333333333333333", 1.0 / 3.0},
        {"1.7976931348623157e308", DBL_MAX},
        {"5e-324", 5e-324},
        {"4.94065645841247e-324", 5e-324},
        {"1e-400", 0.0},
        {"123456789012345678", 123456789012345678.0},
        {"inf", INFINITY},
        {"-inf", -INFINITY},
        {"+Infinity", INFINITY},
        {"INF", INFINITY},
        {"\t1e+20\n", 1e20},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double v = 99.0;
        cr_assert(parse_dbl(cases[i].text, &v), "'%s'", cases[i].text);
        cr_assert(same_bits(v, cases[i].v), "'%s' -> %.17g", cases[i].text, v);
    }
    double v = 0.0;
    cr_assert(parse_dbl("nan", &v));
    cr_assert(isnan(v));
    cr_assert(parse_dbl(" NaN ", &v));
    cr_assert(isnan(v));
}

Test(cm_value, parse_double_invalid)
{
    static const char *const cases[] = {
        "",      "  ",    ".",      "-",       "+",   "e5",    "1e",    "1e+",
        "1.5x",  "1.5 x", "1 5",    "1,5",     "--1", "0x1p3", "0x10",  "nan(123)",
        "infin", "1e400", "-1e400", "1.8e308", "..5", "1..5",  "1.2.3",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double v = 99.0;
        cr_assert_not(parse_dbl(cases[i], &v), "'%s' accepted", cases[i]);
        cr_assert(v == 99.0, "'%s' wrote the output", cases[i]);
    }
}

Test(cm_value, parse_double_respects_len)
{
    double v = 0.0;
    cr_assert(cm_parse_double("1.5e3", 3, &v));
    cr_assert(v == 1.5);
    cr_assert(cm_parse_double("25junk", 2, &v));
    cr_assert(v == 25.0);
    cr_assert_not(cm_parse_double("1.5", 0, &v));

    size_t len = 0;
    char *p = unterminated("-12.75", &len);
    cr_assert(cm_parse_double(p, len, &v));
    cr_assert(v == -12.75);
    cm_free(p);
}

Test(cm_value, parse_double_long_text)
{
    /* Longer than the stack copy: must go through the heap and stay exact. */
    char text[1024];
    size_t n = 0;
    text[n++] = '0';
    text[n++] = '.';
    for (int i = 0; i < 300; i++) {
        text[n++] = '0';
    }
    text[n++] = '1';
    double v = 0.0;
    cr_assert(cm_parse_double(text, n, &v));
    cr_assert(v == 1e-301);

    n = 0;
    text[n++] = '1';
    for (int i = 0; i < 300; i++) {
        text[n++] = '0';
    }
    cr_assert(cm_parse_double(text, n, &v));
    cr_assert(v == 1e300);

    /* 1 followed by 400 zeros overflows. */
    for (int i = 0; i < 100; i++) {
        text[n++] = '0';
    }
    cr_assert_not(cm_parse_double(text, n, &v));
}

Test(cm_value, double_round_trip_random_bits)
{
    uint64_t state = 0x243F6A8885A308D3u;
    for (int i = 0; i < 200000; i++) {
        uint64_t bits = xorshift64(&state);
        double v = 0.0;
        memcpy(&v, &bits, sizeof v);
        char buf[CM_FMT_CAP];
        int n = cm_fmt_double(v, buf);
        cr_assert_lt(n, CM_FMT_CAP);
        double back = 0.0;
        cr_assert(cm_parse_double(buf, (size_t)n, &back), "'%s'", buf);
        if (isnan(v)) {
            cr_assert(isnan(back));
        } else {
            cr_assert(same_bits(back, v), "'%s' for %a", buf, v);
        }
    }
}

Test(cm_value, double_round_trip_short_decimals)
{
    /* Values typed by people must print back as typed: k / 1000. */
    for (int k = -100000; k <= 100000; k++) {
        double v = k / 1000.0;
        char buf[CM_FMT_CAP];
        cm_fmt_double(v, buf);
        char expect[64];
        snprintf(expect, sizeof expect, "%.3f", v);
        /* Strip the trailing zeros %.3f adds, but keep one digit after '.'. */
        size_t len = strlen(expect);
        while (len > 0 && expect[len - 1] == '0' && expect[len - 2] != '.') {
            expect[--len] = '\0';
        }
        if (k == 0) {
            strcpy(expect, "0.0");
        }
        cr_assert_str_eq(buf, expect, "k=%d", k);
    }
}

/* ---------------------------------------------------------------------------
 * DECIMAL
 * ------------------------------------------------------------------------- */

Test(cm_value, fmt_decimal)
{
    static const struct {
        int64_t v;
        int scale;
        const char *text;
    } cases[] = {
        {1230, 2, "12.30"},
        {-5, 2, "-0.05"},
        {7, 0, "7"},
        {-7, 0, "-7"},
        {0, 0, "0"},
        {0, 2, "0.00"},
        {5, 1, "0.5"},
        {-5, 1, "-0.5"},
        {123, 3, "0.123"},
        {-123, 3, "-0.123"},
        {1234, 3, "1.234"},
        {-100, 2, "-1.00"},
        {1, 18, "0.000000000000000001"},
        {INT64_MAX, 0, "9223372036854775807"},
        {INT64_MIN, 0, "-9223372036854775808"},
        {INT64_MAX, 18, "9.223372036854775807"},
        {INT64_MIN, 18, "-9.223372036854775808"},
        {INT64_MIN, 19, "-0.9223372036854775808"},
        {INT64_MIN, 2, "-92233720368547758.08"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[CM_FMT_CAP];
        int n = cm_fmt_decimal(cases[i].v, cases[i].scale, buf);
        cr_assert_str_eq(buf, cases[i].text, "case %zu", i);
        cr_assert_eq(n, (int)strlen(cases[i].text));
    }
}

Test(cm_value, fmt_int128_decimal)
{
    CmInt128 max = (((CmInt128)1 << 126) - 1) * 2 + 1; /* 2^127 - 1 without overflow */
    CmInt128 min = -max - 1;
    CmInt128 e20 = (CmInt128)cm_pow10(10) * cm_pow10(10);
    struct {
        CmInt128 v;
        int scale;
        const char *text;
    } cases[] = {
        {0, 0, "0"},
        {0, 3, "0.000"},
        {1230, 2, "12.30"},
        {-5, 2, "-0.05"},
        {7, 0, "7"},
        {e20, 2, "1000000000000000000.00"},
        {-e20 * 7 - 1, 4, "-70000000000000000.0001"},
        {max, 0, "170141183460469231731687303715884105727"},
        {min, 0, "-170141183460469231731687303715884105728"},
        {min, 2, "-1701411834604692317316873037158841057.28"},
        {max, 38, "1.70141183460469231731687303715884105727"},
        {1, 38, "0.00000000000000000000000000000000000001"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[CM_FMT_CAP];
        int n = cm_fmt_int128_decimal(cases[i].v, cases[i].scale, buf);
        cr_assert_str_eq(buf, cases[i].text, "case %zu", i);
        cr_assert_eq(n, (int)strlen(cases[i].text));
    }
}

Test(cm_value, fmt_int128_matches_int64)
{
    uint64_t state = 0xB7E151628AED2A6Bu;
    for (int i = 0; i < 20000; i++) {
        int64_t v = (int64_t)xorshift64(&state) >> (i % 64);
        int scale = i % 19;
        char a[CM_FMT_CAP];
        char b[CM_FMT_CAP];
        cm_fmt_decimal(v, scale, a);
        cm_fmt_int128_decimal(v, scale, b);
        cr_assert_str_eq(a, b);
    }
}

Test(cm_value, parse_decimal_valid)
{
    static const struct {
        const char *text;
        int precision;
        int scale;
        int64_t v;
    } cases[] = {
        {"12.345", 10, 3, 12345},
        {"12.345", 10, 2, 1235},
        {"-12.345", 10, 2, -1235},
        {"1.005", 10, 2, 101}, /* as a double 1.005 is below 1.005: exact text matters */
        {"-1.005", 10, 2, -101},
        {"1.0049999", 10, 2, 100},
        {"0.5", 5, 0, 1},
        {"-0.5", 5, 0, -1},
        {"0.49", 5, 0, 0},
        {"2.5", 5, 0, 3}, /* half away from zero, not to even */
        {"-2.5", 5, 0, -3},
        {"1.5", 5, 0, 2},
        {"1e2", 10, 2, 10000},
        {"1.5e1", 5, 0, 15},
        {"1.5E+1", 5, 0, 15},
        {"125e-2", 5, 2, 125},
        {"125e-3", 5, 2, 13},
        {"-125e-3", 5, 2, -13},
        {".5", 5, 1, 5},
        {"-.5", 5, 1, -5},
        {"5.", 5, 0, 5},
        {"+7", 3, 0, 7},
        {"  42.1  ", 5, 2, 4210},
        {"\t42\n", 5, 2, 4200},
        {"0", 1, 0, 0},
        {"-0", 1, 0, 0},
        {"-0.001", 5, 2, 0},
        {"000123.4500", 5, 2, 12345},
        {"99.99", 4, 2, 9999},
        {"99.994", 4, 2, 9999},
        {"0.995", 3, 2, 100},
        {"12", 5, 3, 12000},
        {"0.012", 2, 3, 12}, /* scale above precision: only fraction digits */
        {"1e-30", 10, 2, 0},
        {"5e-3", 10, 2, 1},
        {"4e-3", 10, 2, 0},
        {"0e999999999999", 10, 2, 0},
        {"0.00e-999999999999999999999", 10, 2, 0},
        {"1.000000000000000000000000000000000001", 10, 2, 100},
        {"999999999999999999", 18, 0, INT64_C(999999999999999999)},
        {"-999999999999999999", 18, 0, -INT64_C(999999999999999999)},
        {"0.123456789012345678", 18, 18, INT64_C(123456789012345678)},
        {"9223372036854775807", 19, 0, INT64_MAX},
        {"-9223372036854775807", 19, 0, -INT64_MAX},
        {"12.5", 38, 2, 1250},
        {"123456789012345678", 18, 0, INT64_C(123456789012345678)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = 99;
        cr_assert(parse_dec(cases[i].text, cases[i].precision, cases[i].scale, &v), "'%s'",
                  cases[i].text);
        cr_assert_eq(v, cases[i].v, "'%s' -> %lld", cases[i].text, (long long)v);
    }
}

Test(cm_value, parse_decimal_precision_overflow)
{
    static const struct {
        const char *text;
        int precision;
        int scale;
    } cases[] = {
        {"100.00", 4, 2},
        {"100", 4, 2},
        {"-100", 4, 2},
        {"99.995", 4, 2}, /* rounds up to 100.00 */
        {"-99.995", 4, 2},
        {"123", 5, 3},
        {"1", 2, 2},
        {"0.1", 1, 2},
        {"1e30", 10, 2},
        {"1e3", 5, 2},
        {"1e999999999999999999", 10, 2},
        {"1000000000000000000", 18, 0},
        {"9223372036854775808", 19, 0},
        {"-9223372036854775808", 19, 0},
        {"99999999999999999999", 38, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = 99;
        cr_assert_not(parse_dec(cases[i].text, cases[i].precision, cases[i].scale, &v),
                      "'%s' accepted as %lld", cases[i].text, (long long)v);
        cr_assert_eq(v, 99);
    }
}

Test(cm_value, parse_decimal_invalid)
{
    static const char *const cases[] = {
        "",    " ",   ".",   "-",   "+",    "abc",  "1.2.3", "1e",  "e1",  "1e+",   "1e-",
        "--1", "+-1", "1 2", "1,5", "0x10", "1.5x", "inf",   "nan", "- 1", "1e2.5",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = 99;
        cr_assert_not(parse_dec(cases[i], 10, 2, &v), "'%s' accepted", cases[i]);
        cr_assert_eq(v, 99);
    }
    int64_t v = 0;
    cr_assert_not(parse_dec("1", 0, 0, &v));
    cr_assert_not(parse_dec("1", 5, -1, &v));
    cr_assert_not(parse_dec("1", 19, 19, &v));
}

Test(cm_value, parse_decimal_respects_len)
{
    int64_t v = 0;
    cr_assert(cm_parse_decimal("12.345", 4, 10, 2, &v));
    cr_assert_eq(v, 1230);
    cr_assert(cm_parse_decimal("1e5", 1, 10, 2, &v));
    cr_assert_eq(v, 100);
    cr_assert_not(cm_parse_decimal("1e5", 2, 10, 2, &v));

    size_t len = 0;
    char *p = unterminated("-0.05", &len);
    cr_assert(cm_parse_decimal(p, len, 3, 2, &v));
    cr_assert_eq(v, -5);
    cm_free(p);
}

Test(cm_value, decimal_round_trip)
{
    uint64_t state = 0x3C6EF372FE94F82Bu;
    for (int i = 0; i < 20000; i++) {
        int64_t v = (int64_t)(xorshift64(&state) % UINT64_C(1000000000000000000));
        if (i % 2 == 1) {
            v = -v;
        }
        v /= cm_pow10(i % 18); /* vary the digit count too */
        int scale = i % 19;
        char buf[CM_FMT_CAP];
        int n = cm_fmt_decimal(v, scale, buf);
        int64_t back = 0;
        cr_assert(cm_parse_decimal(buf, (size_t)n, 18, scale, &back), "'%s'", buf);
        cr_assert_eq(back, v, "'%s'", buf);
    }
}

/* ---------------------------------------------------------------------------
 * DATE
 * ------------------------------------------------------------------------- */

Test(cm_value, date_from_ymd_known_days)
{
    static const struct {
        int32_t y, m, d, days;
    } cases[] = {
        {1970, 1, 1, 0},
        {1970, 1, 2, 1},
        {1969, 12, 31, -1},
        {2000, 2, 29, 11016},
        {2000, 3, 1, 11017},
        {2024, 2, 29, 19782},
        {2023, 2, 28, 19416},
        {1900, 3, 1, -25508},
        {1600, 1, 1, -135140},
        {2400, 12, 31, 157419},
        {1, 1, 1, -719162},
        {9999, 12, 31, 2932896},
        {10000, 1, 1, 2932897},
        {0, 12, 31, -719163},
        {0, 1, 1, -719528},
        {-1, 12, 31, -719529},
        {5881580, 7, 11, INT32_MAX},
        {-5877641, 6, 23, INT32_MIN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t days = 12345;
        cr_assert(cm_date_from_ymd(cases[i].y, cases[i].m, cases[i].d, &days), "case %zu", i);
        cr_assert_eq(days, cases[i].days, "case %zu: %d", i, days);
        int32_t y = 0;
        int32_t m = 0;
        int32_t d = 0;
        cm_date_to_ymd(cases[i].days, &y, &m, &d);
        cr_assert(y == cases[i].y && m == cases[i].m && d == cases[i].d, "case %zu: %d-%d-%d", i, y,
                  m, d);
    }
}

Test(cm_value, date_from_ymd_invalid)
{
    static const struct {
        int32_t y, m, d;
    } cases[] = {
        {2023, 2, 29},    {1900, 2, 29},     {2100, 2, 29},       {2023, 13, 1},     {2023, 0, 1},
        {2023, 1, 0},     {2023, 1, 32},     {2023, 4, 31},       {2023, -1, 1},     {2023, 1, -1},
        {5881580, 7, 12}, {-5877641, 6, 22}, {INT32_MAX, 12, 31}, {INT32_MIN, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t days = 12345;
        cr_assert_not(cm_date_from_ymd(cases[i].y, cases[i].m, cases[i].d, &days), "case %zu", i);
        cr_assert_eq(days, 12345);
    }
}

Test(cm_value, fmt_date)
{
    static const struct {
        int32_t days;
        const char *text;
    } cases[] = {
        {0, "1970-01-01"},
        {-1, "1969-12-31"},
        {11016, "2000-02-29"},
        {19782, "2024-02-29"},
        {-719162, "0001-01-01"},
        {-719162 + 40, "0001-02-10"},
        {2932896, "9999-12-31"},
        {2932897, "+10000-01-01"},
        {-719163, "+00000-12-31"},
        {-719529, "-00001-12-31"},
        {INT32_MAX, "+5881580-07-11"},
        {INT32_MIN, "-5877641-06-23"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[CM_FMT_CAP];
        int n = cm_fmt_date(cases[i].days, buf);
        cr_assert_str_eq(buf, cases[i].text);
        cr_assert_eq(n, (int)strlen(cases[i].text));
        int32_t back = 0;
        cr_assert(parse_date(buf, &back), "'%s'", buf);
        cr_assert_eq(back, cases[i].days, "'%s'", buf);
    }
}

Test(cm_value, parse_date_valid)
{
    static const struct {
        const char *text;
        int32_t days;
    } cases[] = {
        {"1970-01-01", 0},
        {"2000-02-29", 11016},
        {"2024-02-29", 19782},
        {"2023-02-28", 19416},
        {"1970-1-1", 0},
        {"1970-01-2", 1},
        {"1970-1-02", 1},
        {"  1970-01-01  ", 0},
        {"\t1970-01-02\n", 1},
        {"0001-01-01", -719162},
        {"9999-12-31", 2932896},
        {"+10000-01-01", 2932897},
        {"+1970-01-01", 0},
        {"-00001-12-31", -719529},
        {"-0001-12-31", -719529},
        {"+5881580-07-11", INT32_MAX},
        {"-5877641-06-23", INT32_MIN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t days = 12345;
        cr_assert(parse_date(cases[i].text, &days), "'%s'", cases[i].text);
        cr_assert_eq(days, cases[i].days, "'%s' -> %d", cases[i].text, days);
    }
}

Test(cm_value, parse_date_invalid)
{
    static const char *const cases[] = {
        "",
        "  ",
        "2023-02-29",
        "1900-02-29",
        "2023-13-01",
        "2023-00-10",
        "2023-01-00",
        "2023-04-31",
        "2023-01-32",
        "2023/01/05",
        "23-01-05",
        "123-01-05",
        "20230-01-05",
        "2023-01-05x",
        "2023-01-05 12:00",
        "2023-001-05",
        "2023-01-005",
        "2023-01-",
        "2023--01",
        "2023-01",
        "2023",
        "-2023",
        "+12345678-01-01",
        "+5881580-07-12",
        "-5877641-06-22",
        "x2023-01-05",
        "2023 -01-05",
        "2023-+1-05",
        "2023-1 -05",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t days = 12345;
        cr_assert_not(parse_date(cases[i], &days), "'%s' accepted", cases[i]);
        cr_assert_eq(days, 12345);
    }
}

Test(cm_value, parse_date_respects_len)
{
    int32_t days = 0;
    cr_assert(cm_parse_date("1970-01-021", 10, &days));
    cr_assert_eq(days, 1);
    cr_assert_not(cm_parse_date("1970-01-01", 9, &days)); /* "1970-01-0" */

    size_t len = 0;
    char *p = unterminated("2000-2-29", &len);
    cr_assert(cm_parse_date(p, len, &days));
    cr_assert_eq(days, 11016);
    cm_free(p);
}

static bool naive_is_leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int naive_month_len(int y, int m)
{
    static const int lengths[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && naive_is_leap(y) ? 29 : lengths[m - 1];
}

Test(cm_value, date_every_day_1600_to_2400)
{
    /* Day number of 1600-01-01 by counting whole years back from 1970. */
    int32_t days = 0;
    for (int y = 1600; y < 1970; y++) {
        days -= naive_is_leap(y) ? 366 : 365;
    }
    for (int y = 1600; y <= 2400; y++) {
        for (int m = 1; m <= 12; m++) {
            for (int d = 1; d <= naive_month_len(y, m); d++, days++) {
                int32_t got = 0;
                cr_assert(cm_date_from_ymd(y, m, d, &got));
                cr_assert_eq(got, days, "%d-%d-%d", y, m, d);
                int32_t gy = 0;
                int32_t gm = 0;
                int32_t gd = 0;
                cm_date_to_ymd(days, &gy, &gm, &gd);
                cr_assert(gy == y && gm == m && gd == d, "%d -> %d-%d-%d", days, gy, gm, gd);
                char buf[CM_FMT_CAP];
                char expect[32];
                int n = cm_fmt_date(days, buf);
                snprintf(expect, sizeof expect, "%04d-%02d-%02d", y, m, d);
                cr_assert_str_eq(buf, expect);
                int32_t back = 0;
                cr_assert(cm_parse_date(buf, (size_t)n, &back));
                cr_assert_eq(back, days, "'%s'", buf);
            }
            /* The day after the month's end must not exist. */
            int32_t ignored = 0;
            cr_assert_not(cm_date_from_ymd(y, m, naive_month_len(y, m) + 1, &ignored));
        }
    }
    cr_assert_eq(days, 157420); /* 2401-01-01 */
}

Test(cm_value, date_sampled_whole_int32_range)
{
    int32_t prev_y = INT32_MIN;
    for (int64_t days = INT32_MIN; days <= INT32_MAX; days += 104729) {
        int32_t y = 0;
        int32_t m = 0;
        int32_t d = 0;
        cm_date_to_ymd((int32_t)days, &y, &m, &d);
        cr_assert(m >= 1 && m <= 12 && d >= 1 && d <= naive_month_len(y, m), "%lld",
                  (long long)days);
        cr_assert_geq(y, prev_y);
        prev_y = y;
        int32_t back = 0;
        cr_assert(cm_date_from_ymd(y, m, d, &back));
        cr_assert_eq(back, days);
        char buf[CM_FMT_CAP];
        int n = cm_fmt_date((int32_t)days, buf);
        cr_assert(cm_parse_date(buf, (size_t)n, &back), "'%s'", buf);
        cr_assert_eq(back, days, "'%s'", buf);
    }
}

/* ---------------------------------------------------------------------------
 * BOOLEAN
 * ------------------------------------------------------------------------- */

Test(cm_value, parse_bool_valid)
{
    static const struct {
        const char *text;
        bool v;
    } cases[] = {
        {"true", true},   {"TRUE", true},   {"True", true},  {"t", true},      {"T", true},
        {"1", true},      {"yes", true},    {"YES", true},   {"  yes ", true}, {"\ttrue\n", true},
        {"false", false}, {"FALSE", false}, {"F", false},    {"f", false},     {"0", false},
        {"no", false},    {"No", false},    {" nO ", false}, {"fAlSe", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool v = !cases[i].v;
        cr_assert(parse_bool(cases[i].text, &v), "'%s'", cases[i].text);
        cr_assert_eq(v, cases[i].v, "'%s'", cases[i].text);
    }
}

Test(cm_value, parse_bool_invalid)
{
    static const char *const cases[] = {
        "",    " ",    "tru",   "truee", "2",  "y",  "n",    "on",
        "off", "yes!", "t rue", "10",    "00", "-1", "nope",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool v = true;
        cr_assert_not(parse_bool(cases[i], &v), "'%s' accepted", cases[i]);
        cr_assert(v);
    }
}

Test(cm_value, parse_bool_respects_len)
{
    bool v = false;
    cr_assert(cm_parse_bool("truex", 4, &v));
    cr_assert(v);
    cr_assert(cm_parse_bool("nothing", 2, &v));
    cr_assert_not(v);

    size_t len = 0;
    char *p = unterminated("FALSE", &len);
    cr_assert(cm_parse_bool(p, len, &v));
    cr_assert_not(v);
    cm_free(p);
}

/* 10^38 - 1, the largest DECIMAL(38) magnitude. */
static CmInt128 max38(void)
{
    return cm_pow10_128(38) - 1;
}

Test(cm_value, pow10_128)
{
    CmInt128 v = 1;
    for (int n = 0; n <= 38; n++) {
        cr_assert(cm_pow10_128(n) == v, "10^%d", n);
        v = n < 38 ? v * 10 : v; /* 10^39 would pass 2^127 */
    }
}

Test(cm_value, parse_decimal128_valid)
{
    CmInt128 e20 = cm_pow10_128(20);
    static const char *nines = "99999999999999999999999999999999999999";
    struct {
        const char *text;
        int precision;
        int scale;
        CmInt128 v;
    } cases[] = {
        {"0", 38, 0, 0},
        {"  -12.5 ", 20, 2, -1250},
        {"123456789012345678901234567890", 38, 0,
         (CmInt128)123456789012 * e20 / 100 + 345678901234567890},
        {"1e20", 21, 0, e20},
        {"-0.00000000000000000000000000000000000001", 38, 38, -1},
        {"0.125", 20, 2, 13}, /* half away from zero */
        {"-0.125", 20, 2, -13},
        {"12.344", 20, 2, 1234},
        {nines, 38, 0, 0}, /* v filled in below */
        {"-99999999999999999999999999999999999999", 38, 0, 0},
        {"99999999999999999999.99", 22, 2, 0},
    };
    cases[8].v = max38();
    cases[9].v = -max38();
    cases[10].v = e20 * 100 - 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CmInt128 v = 7;
        cr_assert(cm_parse_decimal128(cases[i].text, strlen(cases[i].text), cases[i].precision,
                                      cases[i].scale, &v),
                  "case %zu", i);
        cr_assert(v == cases[i].v, "case %zu", i);
    }
}

Test(cm_value, parse_decimal128_rejects)
{
    struct {
        const char *text;
        int precision;
        int scale;
    } cases[] = {
        {"100000000000000000000000000000000000000", 38, 0},  /* 39 digits */
        {"9999999999999999999999999999999999999.95", 38, 1}, /* rounds up past 38 digits */
        {"1e38", 38, 0},
        {"123", 2, 0},
        {"1.5", 38, 38},
        {"", 38, 0},
        {"1.2.3", 38, 2},
        {"abc", 38, 0},
        {"1", 39, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CmInt128 v;
        cr_assert(!cm_parse_decimal128(cases[i].text, strlen(cases[i].text), cases[i].precision,
                                       cases[i].scale, &v),
                  "case %zu", i);
    }
}

/* Formatting then parsing gives the value back, and below 19 digits the
 * 128-bit parser agrees with the 64-bit one. */
Test(cm_value, parse_decimal128_round_trip)
{
    uint64_t state = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 20000; i++) {
        CmInt128 v = (CmInt128)(int64_t)xorshift64(&state) * (int64_t)(xorshift64(&state) >> 2);
        v %= cm_pow10_128(38);
        int scale = i % 39;
        char buf[CM_FMT_CAP];
        cm_fmt_int128_decimal(v, scale, buf);
        CmInt128 back;
        cr_assert(cm_parse_decimal128(buf, strlen(buf), 38, scale, &back), "%s", buf);
        cr_assert(back == v, "%s", buf);
        int64_t small = (int64_t)xorshift64(&state) % cm_pow10(18), s64;
        cm_fmt_decimal(small, i % 19, buf);
        cr_assert(cm_parse_decimal(buf, strlen(buf), 18, i % 19, &s64));
        cr_assert(cm_parse_decimal128(buf, strlen(buf), 18, i % 19, &back));
        cr_assert(back == s64, "%s", buf);
    }
}

Test(cm_value, i128_checked_arithmetic)
{
    CmInt128 r = 5, m = max38();
    cr_assert(cm_i128_add_checked(m - 1, 1, 38, &r) && r == m);
    cr_assert(!cm_i128_add_checked(m, 1, 38, &r) && r == m, "past 38 digits: untouched");
    cr_assert(!cm_i128_add_checked(-m, -1, 38, &r));
    cr_assert(cm_i128_add_checked(-m, m, 38, &r) && r == 0);
    cr_assert(!cm_i128_add_checked(99, 1, 2, &r), "100 has 3 digits");
    cr_assert(cm_i128_mul_checked(cm_pow10_128(19), cm_pow10_128(18), 38, &r) &&
              r == cm_pow10_128(37));
    cr_assert(!cm_i128_mul_checked(cm_pow10_128(19), cm_pow10_128(19), 38, &r));
    cr_assert(cm_i128_mul_checked(-cm_pow10_128(19), 9, 38, &r) && r == -9 * cm_pow10_128(19));
    /* a product past 2^127 itself is refused, not wrapped into range */
    CmInt128 big = (CmInt128)1 << 100;
    cr_assert(!cm_i128_mul_checked(big, (CmInt128)1 << 40, 38, &r));
    cr_assert(!cm_i128_mul_checked(big, -((CmInt128)1 << 40), 38, &r));
}
