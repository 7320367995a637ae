/*
 * test_types.c - unit tests for common/types.c and the CmStr helpers of
 * common/types.h: SQL type names, physical widths, type equality, the
 * inline/pointer boundary of CmStr at 12/13 bytes and cm_str_cmp ordering.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/types.h"

static const char *name_of(CmType t)
{
    static char buf[64];
    return cm_type_name(t, buf, sizeof buf);
}

Test(cm_types, names)
{
    cr_expect_str_eq(name_of(cm_type_make(CM_T_NULL)), "NULL");
    cr_expect_str_eq(name_of(cm_type_make(CM_T_BOOL)), "BOOLEAN");
    cr_expect_str_eq(name_of(cm_type_make(CM_T_INT32)), "INTEGER");
    cr_expect_str_eq(name_of(cm_type_make(CM_T_INT64)), "BIGINT");
    cr_expect_str_eq(name_of(cm_type_make(CM_T_DOUBLE)), "DOUBLE");
    cr_expect_str_eq(name_of(cm_type_make(CM_T_DATE)), "DATE");
    cr_expect_str_eq(name_of(cm_type_make(CM_T_VARCHAR)), "VARCHAR");
    cr_expect_str_eq(name_of(cm_type_decimal(7, 2)), "DECIMAL(7,2)");
    cr_expect_str_eq(name_of(cm_type_decimal(18, 0)), "DECIMAL(18,0)");
    cr_expect_str_eq(name_of(cm_type_varchar(10, false)), "VARCHAR(10)");
    cr_expect_str_eq(name_of(cm_type_varchar(3, true)), "CHAR(3)");
    cr_expect_str_eq(name_of(cm_type_varchar(-1, false)), "VARCHAR");
    cr_expect_str_eq(name_of(cm_type_varchar(0, false)), "VARCHAR(0)");
}

Test(cm_types, name_returns_the_buffer_and_truncates)
{
    char buf[8];
    const char *r = cm_type_name(cm_type_decimal(12, 4), buf, sizeof buf);
    cr_expect_eq(r, buf);
    cr_expect_str_eq(buf, "DECIMAL");
}

Test(cm_types, default_decimal_is_18_3)
{
    CmType t = cm_type_make(CM_T_DECIMAL);
    cr_expect_eq(t.precision, 18);
    cr_expect_eq(t.scale, 3);
    cr_expect_eq(cm_type_make(CM_T_INT32).length, -1);
}

Test(cm_types, widths)
{
    cr_expect_eq(cm_type_width(cm_type_make(CM_T_NULL)), 1);
    cr_expect_eq(cm_type_width(cm_type_make(CM_T_BOOL)), 1);
    cr_expect_eq(cm_type_width(cm_type_make(CM_T_INT32)), 4);
    cr_expect_eq(cm_type_width(cm_type_make(CM_T_DATE)), 4);
    cr_expect_eq(cm_type_width(cm_type_make(CM_T_INT64)), 8);
    cr_expect_eq(cm_type_width(cm_type_decimal(5, 2)), 8);
    cr_expect_eq(cm_type_width(cm_type_make(CM_T_DOUBLE)), 8);
    cr_expect_eq(cm_type_width(cm_type_varchar(5, false)), 16);
    cr_expect_eq(sizeof(CmStr), 16);
}

Test(cm_types, equality)
{
    cr_expect(cm_type_eq(cm_type_make(CM_T_INT32), cm_type_make(CM_T_INT32)));
    cr_expect_not(cm_type_eq(cm_type_make(CM_T_INT32), cm_type_make(CM_T_INT64)));
    cr_expect_not(cm_type_eq(cm_type_make(CM_T_INT32), cm_type_make(CM_T_DATE)));
    cr_expect(cm_type_eq(cm_type_decimal(7, 2), cm_type_decimal(7, 2)));
    cr_expect_not(cm_type_eq(cm_type_decimal(7, 2), cm_type_decimal(8, 2)));
    cr_expect_not(cm_type_eq(cm_type_decimal(7, 2), cm_type_decimal(7, 3)));
    /* A declared length is a constraint, not a different physical type. */
    cr_expect(cm_type_eq(cm_type_varchar(3, false), cm_type_varchar(10, false)));
}

Test(cm_types, numeric_and_integer_classes)
{
    cr_expect(cm_type_is_numeric(cm_type_make(CM_T_INT32)));
    cr_expect(cm_type_is_numeric(cm_type_make(CM_T_INT64)));
    cr_expect(cm_type_is_numeric(cm_type_make(CM_T_DOUBLE)));
    cr_expect(cm_type_is_numeric(cm_type_decimal(5, 1)));
    cr_expect_not(cm_type_is_numeric(cm_type_make(CM_T_DATE)));
    cr_expect_not(cm_type_is_numeric(cm_type_make(CM_T_BOOL)));
    cr_expect_not(cm_type_is_numeric(cm_type_make(CM_T_VARCHAR)));
    cr_expect(cm_type_is_integer(cm_type_make(CM_T_INT32)));
    cr_expect(cm_type_is_integer(cm_type_make(CM_T_INT64)));
    cr_expect_not(cm_type_is_integer(cm_type_decimal(5, 0)));
    cr_expect_not(cm_type_is_integer(cm_type_make(CM_T_DOUBLE)));
}

/* ---- CmStr ------------------------------------------------------------------ */

Test(cm_types, str_twelve_bytes_are_inline)
{
    char src[] = "abcdefghijkl"; /* 12 */
    CmStr s = cm_str_make(src, 12);
    cr_expect_eq(s.len, 12);
    const char *d = cm_str_data(&s);
    cr_expect_eq(d, s.prefix, "a 12-byte string must be stored inline");
    cr_expect_eq(memcmp(d, "abcdefghijkl", 12), 0);
    /* Inline means a copy: changing the source does not change it. */
    src[11] = 'Z';
    cr_expect_eq(memcmp(cm_str_data(&s), "abcdefghijkl", 12), 0);
}

Test(cm_types, str_thirteen_bytes_point_at_the_source)
{
    char src[] = "abcdefghijklm"; /* 13 */
    CmStr s = cm_str_make(src, 13);
    cr_expect_eq(s.len, 13);
    cr_expect_eq(cm_str_data(&s), src, "a 13-byte string must point at its bytes");
    cr_expect_eq(memcmp(s.prefix, "abcd", 4), 0);
}

Test(cm_types, str_empty_string)
{
    CmStr s = cm_str_make("", 0);
    CmStr t = cm_str_make("x", 0);
    cr_expect_eq(s.len, 0);
    cr_expect(cm_str_eq(&s, &t));
    cr_expect_eq(cm_str_cmp(&s, &t), 0);
}

Test(cm_types, str_equality_across_the_inline_boundary)
{
    char a_src[] = "abcdefghijklmnop";
    char b_src[] = "abcdefghijklmnop";
    CmStr a = cm_str_make(a_src, 16);
    CmStr b = cm_str_make(b_src, 16);
    cr_expect(cm_str_eq(&a, &b));
    b_src[15] = 'q'; /* differs after the prefix */
    cr_expect_not(cm_str_eq(&a, &b));
    CmStr c = cm_str_make(a_src, 12);
    cr_expect_not(cm_str_eq(&a, &c));
    CmStr d = cm_str_make("abcdefghijkl", 12);
    cr_expect(cm_str_eq(&c, &d));
    CmStr e = cm_str_make("abcdefghijkX", 12);
    cr_expect_not(cm_str_eq(&c, &e));
}

static int sign(int x)
{
    return (x > 0) - (x < 0);
}

static int cmp_text(const char *a, const char *b)
{
    CmStr x = cm_str_make(a, (uint32_t)strlen(a));
    CmStr y = cm_str_make(b, (uint32_t)strlen(b));
    return sign(cm_str_cmp(&x, &y));
}

Test(cm_types, str_cmp_ordering)
{
    cr_expect_eq(cmp_text("abc", "abd"), -1);
    cr_expect_eq(cmp_text("abd", "abc"), 1);
    cr_expect_eq(cmp_text("abc", "abc"), 0);
    /* Shorter first on a common prefix. */
    cr_expect_eq(cmp_text("ab", "abc"), -1);
    cr_expect_eq(cmp_text("abc", "ab"), 1);
    cr_expect_eq(cmp_text("", "a"), -1);
    cr_expect_eq(cmp_text("a", ""), 1);
    /* Byte order, case-sensitive: 'B' (0x42) < 'a' (0x61). */
    cr_expect_eq(cmp_text("B", "a"), -1);
    /* Bytes compare unsigned: 0xC3 sorts after ASCII. */
    cr_expect_eq(cmp_text("\xc3\xa9", "z"), 1);
    /* Long strings differing only after the 12th byte, and across the boundary. */
    cr_expect_eq(cmp_text("abcdefghijklmnopA", "abcdefghijklmnopB"), -1);
    cr_expect_eq(cmp_text("abcdefghijkl", "abcdefghijklm"), -1);
    cr_expect_eq(cmp_text("abcdefghijkz", "abcdefghijklm"), 1);
}

Test(cm_types, str_cmp_is_antisymmetric_over_a_set)
{
    static const char *words[] = {"",
                                  "a",
                                  "ab",
                                  "abc",
                                  "abcdefghijkl",
                                  "abcdefghijklm",
                                  "abcdefghijklmn",
                                  "b",
                                  "zzzzzzzzzzzzzzzz",
                                  "\x01",
                                  "\xff"};
    int n = (int)(sizeof words / sizeof words[0]);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            int c = cmp_text(words[i], words[j]);
            cr_assert_eq(c, -cmp_text(words[j], words[i]), "%d vs %d", i, j);
            cr_assert_eq(c == 0, i == j);
            int expect = sign(strcmp(words[i], words[j]));
            cr_assert_eq(c, expect, "'%s' vs '%s'", words[i], words[j]);
        }
    }
}
