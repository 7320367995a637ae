#!/usr/bin/env bash
# depth_test.sh - very long and very deeply nested statements, generated here
# (a .test file cannot generate SQL): each gives its answer or a clean error
# with its position, never a crash.  Long chains of one operator (a sum, ORs,
# ||) are as deep as they are long in the grammar's tree; nesting (parentheses,
# NOT, subqueries) is bounded by the parser's stack.  See the limits in
# docs/conformance.md.
#
# Usage: bash tests/cli/depth_test.sh /path/to/sluice
# Prints one line per failed check and a final "N passed, M failed"; exits 1 on
# any failure.  Needs python3 to write the statements.
set -u

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: bash $0 /path/to/sluice" >&2
    exit 2
fi
SLUICE=$1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice_depth_test.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT

n_pass=0
n_fail=0

# check NAME EXPECTED_STDOUT EXPECTED_STDERR_FIRST_LINE: runs $TMP/q.sql (written
# by the caller) with --bail and compares stdout and the first line of stderr.
check() {
    "$SLUICE" --bail --threads 2 <"$TMP/q.sql" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    local out err
    out=$(cat "$TMP/out")
    err=$(head -n 1 "$TMP/err")
    if [ "$out" == "$2" ] && [ "$err" == "$3" ] && [ $rc -lt 128 ]; then
        n_pass=$((n_pass + 1))
    else
        n_fail=$((n_fail + 1))
        printf 'FAIL: %s (exit status %d)\n' "$1" "$rc"
        printf '    expected stdout: %q\n    actual stdout:   %q\n' "$2" "$(head -c 300 <<<"$out")"
        printf '    expected stderr: %q\n    actual stderr:   %q\n' "$3" "$(head -c 300 <<<"$err")"
    fi
}

# gen PYTHON_EXPR: writes the statement the expression evaluates to (with n = 100000).
gen() {
    python3 -c "n = 100000; import sys; sys.stdout.write($1)" >"$TMP/q.sql"
}

# gen_t PYTHON_EXPR: the same after the creation of table t.
gen_t() {
    {
        printf '%s\n' "CREATE TABLE t (a INTEGER, s VARCHAR); INSERT INTO t VALUES (5, 'x'), (7, 'y');"
        python3 -c "n = 100000; import sys; sys.stdout.write($1)"
    } >"$TMP/q.sql"
}

# ---- long chains: answered ----

gen "'SELECT ' + '+'.join(['1'] * n) + ';'"
check "sum of 100000 terms" "100000" ""

gen "'SELECT ' + '-'.join(['1'] * n) + ';'"
check "difference of 100000 terms" "-99998" ""

gen_t "'SELECT a FROM t WHERE ' + ' OR '.join('a = %d' % i for i in range(1, 20001)) + ' ORDER BY a;'"
check "20000 ORs" $'5\n7' ""

gen_t "'SELECT count(*) FROM t WHERE a IN (' + ', '.join(str(i) for i in range(1, 20001)) + ');'"
check "IN list of 20000 items" "2" ""

gen_t "'SELECT count(*) FROM t WHERE NOT (' + ' AND '.join('a <> %d' % i for i in range(1, 20001)) + ');'"
check "20000 ANDs inside NOT" "2" ""

gen "'SELECT length(' + ' || '.join([\"'a'\"] * n) + ');'"
check "concatenation of 100000 strings" "100000" ""

gen_t "'SELECT length(' + ' || '.join(['s'] * 20000) + ') FROM t ORDER BY 1;'"
check "concatenation of 20000 columns" $'20000\n20000' ""

gen "'SELECT 7' + '::INTEGER' * n + ';'"
check "100000 casts" "7" ""

gen_t "'SELECT ' + '+'.join(['a'] * 999) + ' FROM t ORDER BY 1;'"
check "sum of 999 columns" $'4995\n6993' ""

# ---- long chains: clean errors ----

gen "'SELECT ' + '+'.join(['1'] * n) + ' + nosuchcol;'"
check "unknown column after 100000 terms" "" \
    "Error: line 1, column 200010: unknown column 'nosuchcol'"

gen_t "'SELECT ' + '+'.join(['a'] * n) + ' FROM t;'"
check "sum of 100000 columns" "" \
    "Error: line 2, column 2006: expression too deeply nested (limit 1000)"

gen_t "'SELECT count(*) FROM t WHERE ' + ' AND '.join('a <> %d' % i for i in range(n)) + ';'"
check "100000 ANDs in WHERE" "" \
    "Error: line 2, column 6576: too many conditions in one query"

gen "' UNION ALL '.join(['SELECT 1'] * n) + ';'"
check "100000 UNION ALL" "" \
    "Error: line 1, column 9501: too many terms in compound SELECT (limit 500)"

gen_t "'SELECT count(*) FROM ' + ', '.join(['t'] * n) + ';'"
check "100000 tables" "" \
    "Error: line 2, column 214: more than 64 tables in one FROM clause"

# ---- deep nesting: clean errors ----

gen "'SELECT ' + '(' * n + '1' + ')' * n + ';'"
check "100000 nested parentheses" "" \
    "Error: line 1, column 605: statement is nested too deeply"

gen "'SELECT ' + 'NOT ' * n + 'true;'"
check "NOT 100000 times" "" "Error: line 1, column 2396: statement is nested too deeply"

gen "'SELECT ' + '- ' * n + '1;'"
check "unary minus 100000 times" "" "Error: line 1, column 1202: statement is nested too deeply"

gen "'SELECT ' + '(SELECT ' * n + '1' + ')' * n + ';'"
check "100000 nested scalar subqueries" "" \
    "Error: line 1, column 1600: statement is nested too deeply"

gen "'SELECT * FROM ' + '(SELECT * FROM ' * n + 't' + ') x' * n + ';'"
check "100000 nested derived tables" "" \
    "Error: line 1, column 1800: statement is nested too deeply"

gen "'SELECT ' + 'abs(' * n + '1' + ')' * n + ';'"
check "100000 nested calls" "" "Error: line 1, column 1203: statement is nested too deeply"

# ---- deep nesting the parser accepts ----

gen "'SELECT ' + '(' * 500 + '1' + ')' * 500 + ';'"
check "500 nested parentheses" "1" ""

gen "'SELECT ' + 'NOT ' * 501 + 'true;'"
check "NOT 501 times" "false" ""

gen "'SELECT ' + '(SELECT ' * 150 + '1' + ')' * 150 + ';'"
check "150 nested scalar subqueries" "1" ""

gen_t "'SELECT ' + 'abs(' * 250 + '+'.join(['a'] * 900) + ')' * 250 + ' FROM t ORDER BY 1;'"
check "250 calls around a sum of 900 columns" $'4500\n6300' ""

echo "$n_pass passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
