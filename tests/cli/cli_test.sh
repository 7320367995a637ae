#!/usr/bin/env bash
# cli_test.sh - checks the contract of the `sluice` command-line shell exactly:
# script and -c/-f input, output modes, errors with line/column and caret,
# --bail, --echo, --timer, statement order on merged streams, dot commands,
# incremental stdin (one statement answered before the next is written), the
# demo and the REPL (through script(1) when it is installed).
#
# Usage: bash tests/cli/cli_test.sh /path/to/sluice
# Prints one line per failed check and a final "N passed, M failed"; exits 1 on
# any failure.  Uses only SQL of the engine's first slice (CREATE TABLE, INSERT
# VALUES, SELECT with expressions, WHERE, ORDER BY, LIMIT, GROUP BY count/sum).
set -u

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: bash $0 /path/to/sluice" >&2
    exit 2
fi
SLUICE=$1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice_cli_test.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
export HOME="$TMP/home" # the REPL writes its history here, never in the real home
mkdir -p "$HOME"

n_pass=0
n_fail=0
OUT="$TMP/out"
ERR="$TMP/err"
RC=0

pass() { n_pass=$((n_pass + 1)); }
fail() {
    n_fail=$((n_fail + 1))
    printf 'FAIL: %s\n' "$1"
    shift
    for line in "$@"; do printf '    %s\n' "$line"; done
}

# sl ARGS...: runs sluice with stdin from /dev/null; stdout, stderr in $OUT, $ERR; status in RC.
sl() {
    "$SLUICE" "$@" <"/dev/null" >"$OUT" 2>"$ERR"
    RC=$?
}

# sl_in TEXT ARGS...: runs sluice with TEXT on stdin.
sl_in() {
    local text=$1
    shift
    printf '%s' "$text" | "$SLUICE" "$@" >"$OUT" 2>"$ERR"
    RC=${PIPESTATUS[1]}
}

# expect_file NAME FILE EXPECTED: FILE holds exactly EXPECTED.
expect_file() {
    local actual
    actual=$(cat "$2"; printf x) # the x keeps trailing newlines
    actual=${actual%x}
    if [ "$actual" == "$3" ]; then
        pass
    else
        fail "$1" "expected: $(printf '%q' "$3")" "actual:   $(printf '%q' "$actual")"
    fi
}

expect_out() { expect_file "$1 (stdout)" "$OUT" "$2"; }
expect_err() { expect_file "$1 (stderr)" "$ERR" "$2"; }

expect_rc() {
    if [ "$RC" -eq "$2" ]; then
        pass
    else
        fail "$1 (exit status)" "expected $2, got $RC" "stderr: $(head -c 300 "$ERR")"
    fi
}

# expect_line NAME FILE N REGEX: line N (1-based) of FILE matches the extended REGEX.
expect_line() {
    local line
    line=$(sed -n "${3}p" "$2")
    if [[ "$line" =~ $4 ]]; then
        pass
    else
        fail "$1 (line $3)" "expected /$4/" "actual:   $(printf '%q' "$line")"
    fi
}

expect_lines() {
    local n
    n=$(wc -l <"$2")
    if [ "$n" -eq "$3" ]; then
        pass
    else
        fail "$1 (line count)" "expected $3 lines, got $n" "$(head -c 300 "$2")"
    fi
}

T_DDL="CREATE TABLE t (a INTEGER, b VARCHAR);
INSERT INTO t VALUES (1, 'x'), (22, NULL), (30, 'héllo');"
T_QUERY="SELECT a, b FROM t ORDER BY a;"

# ---------------------------------------------------------------- basics

echo "select 1+1;" | "$SLUICE" >"$OUT" 2>"$ERR"
RC=$?
expect_out "echo select 1+1 | sluice" $'2\n'
expect_rc "echo select 1+1 | sluice" 0

sl_in $'select 1+1;\n'
expect_out "stdin script, tsv by default" $'2\n'
expect_err "stdin script, tsv by default" ''
expect_rc "stdin script ok" 0

sl -c "select 1; select 2"
expect_out "-c several statements, last without ;" $'1\n2\n'
expect_rc "-c ok" 0

sl -c "create table z (a INTEGER); insert into z values (1);"
expect_out "statements without result columns print nothing" ''
expect_rc "ddl ok" 0

sl_in $'select\n  1\n  +\n  2;\nselect 4;\n'
expect_out "multi-line statement on stdin" $'3\n4\n'

sl_in $'select \'a;b\',\n  2;\nselect \'c;\nd\';\n'
expect_out "';' inside a string literal across lines" $'a;b\t2\nc;\nd\n'

sl_in 'select 5'
expect_out "unterminated last statement runs at end of input" $'5\n'

sl_in $'-- a comment\n\nselect 6; -- trailing comment\n'
expect_out "comments and blank lines" $'6\n'

# ---------------------------------------------------------------- errors

sl -c "selec 1"
expect_line "-c syntax error" "$ERR" 1 '^Error: line 1, column 1: .+'
expect_line "-c syntax error source line" "$ERR" 2 '^  selec 1$'
expect_line "-c syntax error caret" "$ERR" 3 '^  \^$'
expect_lines "-c syntax error" "$ERR" 3
expect_out "-c syntax error prints nothing on stdout" ''
expect_rc "-c syntax error" 1

sl -c $'select 1;\nselect 2 +;'
expect_line "error on line 2 of -c" "$ERR" 1 '^Error: line 2, column 11: .+'
expect_line "error on line 2 of -c, source" "$ERR" 2 '^  select 2 \+;$'
expect_line "error on line 2 of -c, caret" "$ERR" 3 '^            \^$'
expect_out "error on line 2 of -c" $'1\n'

sl_in $'select 1;\n\nselect 2;\nselect\n  3 +;\nselect 4;\n'
expect_line "stdin line numbers count from the stream start" "$ERR" 1 \
    '^Error: line 5, column 6: .+'
expect_line "stdin error source line" "$ERR" 2 '^    3 \+;$'
expect_line "stdin error caret" "$ERR" 3 '^       \^$'
expect_out "statements after an error still run" $'1\n2\n4\n'
expect_rc "stdin with an error" 1

sl -c "select 1; selec; select 2;"
expect_out "without --bail the next statement runs" $'1\n2\n'
expect_rc "without --bail" 1

sl -c "select 1; selec; select 2;" --bail
expect_out "--bail stops at the first error" $'1\n'
expect_lines "--bail: one error" "$ERR" 3
expect_rc "--bail" 1

sl_in $'select 1;\nselec;\nselect 2;\n' --bail
expect_out "--bail on stdin" $'1\n'
expect_rc "--bail on stdin" 1

"$SLUICE" -c "select 1; selec; select 2;" >"$OUT" 2>&1
expect_line "merged streams: result 1 first" "$OUT" 1 '^1$'
expect_line "merged streams: then the error" "$OUT" 2 '^Error: line 1, column 11: .+'
expect_line "merged streams: then its source" "$OUT" 3 '^  select 1; selec; select 2;$'
expect_line "merged streams: then the caret" "$OUT" 4 '^            \^$'
expect_line "merged streams: then result 2" "$OUT" 5 '^2$'
expect_lines "merged streams" "$OUT" 5

sl -f "$TMP/missing.sql"
expect_err "-f of a missing file" \
    "Error: cannot open '$TMP/missing.sql': No such file or directory"$'\n'
expect_rc "-f of a missing file" 1

# ---------------------------------------------------------------- output modes

box=$'┌───────┬─────────┐
│   a   │    b    │
│ int32 │ varchar │
├───────┼─────────┤
│     1 │ x       │
│    22 │ NULL    │
│    30 │ héllo   │
├───────┴─────────┤
│     3 rows      │
└─────────────────┘\n'
table=$'+----+-------+
| a  |   b   |
+----+-------+
|  1 | x     |
| 22 | NULL  |
| 30 | héllo |
+----+-------+\n'
markdown=$'| a  |   b   |
|----|-------|
| 1  | x     |
| 22 | NULL  |
| 30 | héllo |\n'
line=$'    a = 1
    b = x

    a = 22
    b = NULL

    a = 30
    b = héllo\n'
json=$'[{"a":1,"b":"x"},\n{"a":22,"b":null},\n{"a":30,"b":"héllo"}]\n'

sl -c "$T_DDL" -c "$T_QUERY" --mode box
expect_out "--mode box" "$box"
sl -c "$T_DDL" -c "$T_QUERY" --mode table
expect_out "--mode table" "$table"
sl -c "$T_DDL" -c "$T_QUERY" --mode markdown
expect_out "--mode markdown" "$markdown"
sl -c "$T_DDL" -c "$T_QUERY" --mode line
expect_out "--mode line" "$line"
sl -c "$T_DDL" -c "$T_QUERY" --mode json
expect_out "--mode json" "$json"
sl -c "$T_DDL" -c "$T_QUERY" --mode csv
expect_out "--mode csv: NULL is an empty field" $'1,x\n22,\n30,héllo\n'
sl -c "$T_DDL" -c "$T_QUERY" --mode=tsv
expect_out "--mode=tsv" $'1\tx\n22\tNULL\n30\théllo\n'
sl -c "$T_DDL" -c "$T_QUERY" --mode csv --header
expect_out "csv --header" $'a,b\n1,x\n22,\n30,héllo\n'
sl -c "$T_DDL" -c "$T_QUERY" --header --no-header
expect_out "tsv --no-header" $'1\tx\n22\tNULL\n30\théllo\n'
sl -c "$T_DDL" -c "$T_QUERY" --header
expect_out "tsv --header" $'a\tb\n1\tx\n22\tNULL\n30\théllo\n'
sl -c "$T_DDL" -c "$T_QUERY" --header --mode box
expect_out "--header does not change box" "$box"
sl -c "$T_DDL" -c "$T_QUERY" --nullvalue '(null)' --mode csv
expect_out "--nullvalue csv" $'1,x\n22,(null)\n30,héllo\n'
sl -c "$T_DDL" -c "$T_QUERY" --nullvalue '-' --mode box
expect_out "--nullvalue box" $'┌───────┬─────────┐
│   a   │    b    │
│ int32 │ varchar │
├───────┼─────────┤
│     1 │ x       │
│    22 │ -       │
│    30 │ héllo   │
├───────┴─────────┤
│     3 rows      │
└─────────────────┘\n'
sl -c "$T_DDL" -c "$T_QUERY" --nullvalue '-' --mode json
expect_out "--nullvalue does not change json" "$json"

sl -c "$T_DDL" -c "SELECT a, b FROM t WHERE a > 100;" --mode box
expect_out "box with zero rows" $'┌───────┬─────────┐
│   a   │    b    │
│ int32 │ varchar │
├───────┴─────────┤
│     0 rows      │
└─────────────────┘\n'
sl -c "$T_DDL" -c "SELECT a, b FROM t WHERE a > 100;" --mode json
expect_out "json with zero rows" $'[]\n'

sl --mode csv -c $'CREATE TABLE q (s VARCHAR);
INSERT INTO q VALUES (\'p,q\'), (\'say "hi"\'), (\'two\nlines\'), (\'plain\');
SELECT s FROM q;'
expect_out "csv quoting (RFC 4180)" $'"p,q"\n"say ""hi"""\n"two\nlines"\nplain\n'

sl --mode json -c $'CREATE TABLE q (s VARCHAR);
INSERT INTO q VALUES (\'a"b\\c\ttab\nnl\');
SELECT s FROM q;'
expect_out "json string escaping" $'[{"s":"a\\"b\\\\c\\ttab\\nnl"}]\n'

sl --mode json -c "CREATE TABLE v (i INTEGER, g BIGINT, ok BOOLEAN, s VARCHAR);
INSERT INTO v VALUES (-7, 12345678901, true, '5'), (0, NULL, false, NULL);
SELECT i, g, ok, s FROM v ORDER BY i;"
expect_out "json numbers, booleans, nulls" \
    $'[{"i":-7,"g":12345678901,"ok":true,"s":"5"},\n{"i":0,"g":null,"ok":false,"s":null}]\n'

sl --mode table -c "CREATE TABLE w (name VARCHAR, n INTEGER);
INSERT INTO w VALUES ('longer name', 5), ('b', 1234);
SELECT name, n FROM w ORDER BY n;"
expect_out "table: numbers right, text left, names centred" $'+-------------+------+
|    name     |  n   |
+-------------+------+
| longer name |    5 |
| b           | 1234 |
+-------------+------+\n'

# ---------------------------------------------------------------- box (DuckDB's), escapes, widths

# heredoc VAR: reads the here-document on stdin into VAR, with its last newline.
heredoc() {
    local text
    IFS= read -r -d '' text
    printf -v "$1" '%s' "$text"
}

heredoc box_types <<'EOF'
┌───────┬─────────────┬────────┬───────────────┬─────────┬────────────┬─────────┐
│   i   │      g      │   d    │       m       │   ok    │    day     │    s    │
│ int32 │    int64    │ double │ decimal(15,2) │ boolean │    date    │ varchar │
├───────┼─────────────┼────────┼───────────────┼─────────┼────────────┼─────────┤
│    -7 │ 12345678901 │    2.5 │       1234.50 │ true    │ 2024-02-29 │ five    │
│    10 │        NULL │ -0.125 │          0.01 │ false   │ NULL       │ NULL    │
├───────┴─────────────┴────────┴───────────────┴─────────┴────────────┴─────────┤
│                                    2 rows                                     │
└───────────────────────────────────────────────────────────────────────────────┘
EOF
sl --mode box -c "CREATE TABLE v (i INTEGER, g BIGINT, d DOUBLE, m DECIMAL(15,2), ok BOOLEAN, day DATE, s VARCHAR);
INSERT INTO v VALUES (-7, 12345678901, 2.5, 1234.50, true, DATE '2024-02-29', 'five'), (10, NULL, -0.125, 0.01, false, NULL, NULL);
SELECT * FROM v ORDER BY i;"
expect_out "box: types under the names, numbers right, a footer" "$box_types"

heredoc box_unicode <<'EOF'
┌─────────┬─────────┬─────────┬───────┐
│    c    │  city   │    e    │   n   │
│ varchar │ varchar │ varchar │ int32 │
├─────────┼─────────┼─────────┼───────┤
│ été     │ 東京    │ 🦆 duck │     1 │
│ x       │ Paris   │ x       │    22 │
├─────────┴─────────┴─────────┴───────┤
│               2 rows                │
└─────────────────────────────────────┘
EOF
sl --mode box -c "SELECT 'été' AS c, '東京' AS city, '🦆 duck' AS e, 1 AS n
UNION ALL SELECT 'x', 'Paris', 'x', 22 ORDER BY n;"
expect_out "box: CJK and emoji take two columns, combining marks none" "$box_unicode"

sl --mode table -c "SELECT '東京' AS city, 'a
b	c' AS t"
expect_out "table: Unicode width, newline and tab escaped" $'+------+---------+
| city |    t    |
+------+---------+
| 東京 | a\\nb\\tc |
+------+---------+\n'

sl --mode markdown -c "SELECT '東京' AS city, 'a|b
c' AS t"
expect_out "markdown: '|' and newline escaped" $'| city |    t    |
|------|---------|
| 東京 | a\\|b\\nc |\n'

sl --mode line -c "SELECT 'a
b	c' AS t"
expect_out "line: newline and tab escaped" $'    t = a\\nb\\tc\n'

heredoc box_maxrows <<'EOF'
┌───────┬────────────┐
│   i   │     j      │
│ int64 │   int64    │
├───────┼────────────┤
│     0 │          0 │
│     1 │          2 │
│     2 │          4 │
│     · │          · │
│     · │          · │
│     · │          · │
│    98 │        196 │
│    99 │        198 │
├───────┴────────────┤
│ 100 rows (5 shown) │
└────────────────────┘
┌─────────┐
│    i    │
│  int64  │
├─────────┤
│       0 │
│       1 │
│       2 │
│       3 │
│       4 │
│       5 │
│       6 │
│       7 │
│       8 │
│       9 │
│      10 │
│      11 │
├─────────┤
│ 12 rows │
└─────────┘
EOF
sl_in $'.maxrows 5\nSELECT i, i * 2 AS j FROM range(0, 100) t(i);\n.maxrows 0\nSELECT i FROM range(0, 12) t(i);\n' --mode box
expect_out ".maxrows: the first and last rows around middle dots" "$box_maxrows"

sl_in $'.maxrows 5\nSELECT i FROM range(0, 100) t(i) ORDER BY i;\n' --mode csv
expect_lines ".maxrows does not cut csv" "$OUT" 100

heredoc box_maxwidth <<'EOF'
┌───────┬──────────────────────┬───────┐
│   a   │      long_text       │   c   │
│ int32 │       varchar        │ int32 │
├───────┼──────────────────────┼───────┤
│     1 │ abcdefghijabcdefghi… │     3 │
├───────┴──────────────────────┴───────┤
│                1 row                 │
└──────────────────────────────────────┘
┌───────┬───┬────────────────┐
│ first │ … │     fifth      │
│ int32 │ … │     int32      │
├───────┼───┼────────────────┤
│     1 │ … │              5 │
├───────┴───┴────────────────┤
│ 1 row  5 columns (2 shown) │
└────────────────────────────┘
EOF
sl_in ".maxwidth 40
SELECT 1 AS a, 'abcdefghijabcdefghijabcdefghijabcdefghij' AS long_text, 3 AS c;
.maxwidth 24
SELECT 1 AS first, 2 AS second, 3 AS third, 4 AS fourth, 5 AS fifth;
" --mode box
expect_out ".maxwidth: wide cells cut with an ellipsis, then middle columns hidden" "$box_maxwidth"

sl_in $'.maxrows\n.maxwidth\n.maxrows 9\n.maxwidth 50\n.maxrows\n.maxwidth\n'
expect_out ".maxrows and .maxwidth without an argument print them" $'0\nauto\n9\n50\n'

sl_in $'.maxrows x\n.maxwidth -3\n'
expect_err ".maxrows and .maxwidth take a count" \
    $'Error: usage: .maxrows N (0 shows every row)\nError: usage: .maxwidth N|auto (0: no limit)\n'

# csv prints NULL as an empty field, as COPY TO writes it, unless .nullvalue was set
sl -c "CREATE TABLE n (a INTEGER, b VARCHAR); INSERT INTO n VALUES (1, NULL), (NULL, ''), (3, 'NULL');
COPY (SELECT a, b FROM n ORDER BY a NULLS LAST) TO '$TMP/n.csv';" -c "SELECT a, b FROM n ORDER BY a NULLS LAST;" --mode csv
expect_out "csv NULL is empty, an empty string is \"\"" $'1,\n3,NULL\n,""\n'
expect_file "csv mode agrees with COPY TO" "$TMP/n.csv" "$(cat "$OUT")"$'\n'
sl_in $'.nullvalue NULL\n.mode csv\nSELECT NULL AS a, 1 AS b;\n'
expect_out "csv prints a null text that was set" $'NULL,1\n'

# ---------------------------------------------------------------- error positions

sl -c "SELECT '東京', xx;"
expect_err "the column and caret count characters" $'Error: line 1, column 14: unknown column \'xx\'
  SELECT \'東京\', xx;
                 ^\n'

printf 'SELECT 1;\n\nSELECT\n  1 +;\n' >"$TMP/bad2.sql"
sl_in $'.read '"$TMP/bad2.sql"$'\nSELECT 2 +;\n'
expect_err ".read names its file, then stdin counts its own lines" \
    "Error: $TMP/bad2.sql:4:6: syntax error at or near ';'"$'
    1 +;
       ^
Error: line 2, column 11: syntax error at or near \';\'
  SELECT 2 +;
            ^\n'

# ---------------------------------------------------------------- .once, .output, .show, .import

sl_in ".once $TMP/once.txt
SELECT 1 AS a;
SELECT 2 AS a;
.output $TMP/all.txt
SELECT 3 AS a;
.tables
CREATE TABLE k (a INTEGER);
SELECT 4 AS a;
.output
SELECT 5 AS a;
"
expect_out ".once and .output leave stdout the rest" $'2\n5\n'
expect_file ".once takes the next result only" "$TMP/once.txt" $'1\n'
expect_file ".output takes results and listings until .output" "$TMP/all.txt" $'3\n4\n'

sl_in ".output $TMP/a.txt
SELECT 1;
.output $TMP/b.txt
SELECT 2;
"
expect_file ".output to a second file closes the first" "$TMP/a.txt" $'1\n'
expect_file ".output to a second file" "$TMP/b.txt" $'2\n'

sl_in $'.once /nonexistent-dir/x.txt\nSELECT 1;\n'
expect_err ".once to a file that cannot be opened" \
    $'Error: cannot open \'/nonexistent-dir/x.txt\': No such file or directory\n'
expect_out ".once that failed leaves stdout" $'1\n'
expect_rc ".once that failed" 1

heredoc show <<'EOF'
        bail: off
        echo: off
     explain: off
     headers: on
     maxrows: 7
    maxwidth: 0
        mode: csv
   nullvalue: "NULL" (csv: empty)
      output: stdout
    timeline: off
       timer: off
        bail: off
        echo: off
     explain: off
     headers: on
     maxrows: 7
    maxwidth: auto
        mode: csv
   nullvalue: "-"
      output: stdout
    timeline: off
       timer: on
EOF
sl_in $'.maxrows 7\n.maxwidth 0\n.show\n.nullvalue -\n.timer on\n.maxwidth auto\n.show\n' --mode csv --header
expect_out ".show" "$show"

printf '1,one\n2,"t,wo"\n3,\n' >"$TMP/imp.csv"
sl_in ".import $TMP/imp.csv imp
CREATE TABLE imp (a INTEGER, b VARCHAR);
.import $TMP/imp.csv imp
.import $TMP/imp.csv imp
SELECT a, b IS NULL, b FROM imp ORDER BY a, b;
.import $TMP/nope.csv imp
.import $TMP/imp.csv
"
expect_out ".import loads a CSV file through COPY" \
    $'1\tfalse\tone\n1\tfalse\tone\n2\tfalse\tt,wo\n2\tfalse\tt,wo\n3\ttrue\tNULL\n3\ttrue\tNULL\n'
expect_line ".import into a missing table" "$ERR" 1 "^Error: .*imp"
expect_line ".import of a missing file" "$ERR" 2 "^Error: .*nope.csv"
expect_line ".import needs a table" "$ERR" 3 "^Error: usage: .import FILE TABLE$"
expect_lines ".import errors" "$ERR" 3

# ---- .explain on|off, .timeline FILE|off ----

sl_in $'.explain on\nSELECT 1 AS a;\nCREATE TABLE ex AS SELECT 2 AS b;\n.explain off\nSELECT b FROM ex;\n'
expect_out ".explain on: the plan before the result, none for DDL" \
    $'Stage 1 -> result\n  RESULT\n    PROJECTION 1\n      VALUES 1 row\n1\n2\n'
expect_rc ".explain on" 0
sl_in $'.explain on\nSELECT nope;\n'
expect_err ".explain on: a bad statement reports its own error once" \
    $'Error: line 2, column 8: unknown column \'nope\'\n  SELECT nope;\n         ^\n'

sl_in ".timeline $TMP/tl.html
SELECT 1; SELECT 2;
.timeline $TMP/tl2.html
.timeline off
SELECT 3;
"
expect_out ".timeline takes the next statement only" $'2\n3\n'
expect_rc ".timeline" 0
if grep -q '<rect class="lane" data-stage="1"' "$TMP/tl.html" && [ ! -e "$TMP/tl2.html" ]; then
    pass
else
    fail ".timeline writes the timeline, .timeline off forgets it" "$(head -c 300 "$TMP/tl.html")"
fi
sl_in ".timeline $TMP/tl3.html
  SELECT  nope;
CREATE TABLE z(a INT);
"
expect_err ".timeline: errors point into the statement as typed" \
    $'Error: line 2, column 11: unknown column \'nope\'\n    SELECT  nope;\n            ^\n'
expect_rc ".timeline with an error" 1
sl_in $'.explain on\n.timeline t.html\n.show\n'
expect_line ".show: .explain" "$OUT" 3 "^     explain: on$"
expect_line ".show: the pending .timeline" "$OUT" 10 "^    timeline: t.html$"

sl_in $'.help\n'
for cmd in once output show import maxrows maxwidth explain timeline edit; do
    if grep -q "^\\.$cmd " "$OUT"; then pass; else fail ".help lists .$cmd" "$(cat "$OUT")"; fi
done

# ---------------------------------------------------------------- echo, timer

sl -c $'select 1;\n  select   2 ;' --echo
expect_out "--echo prints each statement as written" $'select 1;\n1\nselect   2 ;\n2\n'

sl -c "select 1; selec; select 2;" --timer
timer_re='^Run Time: real [0-9]+\.[0-9]{3} user [0-9]+\.[0-9]{3} sys [0-9]+\.[0-9]{3}$'
expect_line "--timer after statement 1" "$ERR" 1 "$timer_re"
expect_line "--timer error line" "$ERR" 2 '^Error: line 1, column 11: '
expect_line "--timer after a failed statement" "$ERR" 5 "$timer_re"
expect_line "--timer after statement 3" "$ERR" 6 "$timer_re"
expect_lines "--timer" "$ERR" 6

sl_in $'.timer on\nselect 1;\n.timer off\nselect 2;\n'
expect_line ".timer on" "$ERR" 1 "$timer_re"
expect_lines ".timer off" "$ERR" 1
expect_out ".timer on/off" $'1\n2\n'

# ---------------------------------------------------------------- files and dot commands

printf '%s\n%s\n' "$T_DDL" "$T_QUERY" >"$TMP/script.sql"
sl -f "$TMP/script.sql"
expect_out "-f FILE" $'1\tx\n22\tNULL\n30\théllo\n'
expect_rc "-f FILE" 0

printf 'select 1;\nselect 2 +;\n' >"$TMP/bad.sql"
sl -f "$TMP/bad.sql"
expect_err "-f errors name the file, line and column" \
    "Error: $TMP/bad.sql:2:11: syntax error at or near ';'"$'\n  select 2 +;\n            ^\n'
expect_rc "-f with an error" 1

sl_in $'.read '"$TMP/script.sql"$'\nselect 7;\n'
expect_out ".read FILE" $'1\tx\n22\tNULL\n30\théllo\n7\n'

sl_in $'.read '"$TMP/bad.sql"$'\n'
expect_line ".read errors name the file" "$ERR" 1 "^Error: $TMP/bad.sql:2:11: "

sl_in $'.read '"$TMP/nope.sql"$'\nselect 8;\n'
expect_line ".read of a missing file" "$ERR" 1 "^Error: cannot open '$TMP/nope.sql': "
expect_out ".read of a missing file, next runs" $'8\n'
expect_rc ".read of a missing file" 1

sl_in $'CREATE TABLE zeta (a INTEGER);\nCREATE TABLE alpha (b VARCHAR, c INTEGER);\n.tables\n'
expect_out ".tables, sorted" $'alpha\nzeta\n'

sl_in $'CREATE TABLE zeta (a INTEGER);\nCREATE TABLE alpha (b VARCHAR, c INTEGER);\n.schema alpha\n'
expect_out ".schema TABLE" $'CREATE TABLE alpha (b VARCHAR, c INTEGER);\n'

# defaults and a schema qualifier are shown as written
sl_in $'CREATE TABLE main.d (a INTEGER DEFAULT 2 + 3, b VARCHAR DEFAULT \'x\');\n.schema d\n'
expect_out ".schema with DEFAULT" $'CREATE TABLE main.d (a INTEGER DEFAULT 2 + 3, b VARCHAR DEFAULT \'x\');\n'

# a CREATE TABLE ... AS shows its columns' types (issue 12), names quoted where they must be
sl_in $'CREATE TABLE c AS SELECT 1 AS a, sum(2) AS s, [1] AS "My l";\nCREATE TEMP TABLE "t x" AS SELECT 1.5;\n.schema\n'
expect_out ".schema of CTAS" \
    $'CREATE TABLE c(a INTEGER, s DECIMAL(38,0), "My l" INTEGER[]);\nCREATE TEMP TABLE "t x"("1.5" DECIMAL(2,1));\n'

sl_in $'CREATE TABLE zeta (a INTEGER);\nCREATE TABLE alpha (b VARCHAR, c INTEGER);\n.schema\n'
expect_out ".schema, creation order" \
    $'CREATE TABLE zeta (a INTEGER);\nCREATE TABLE alpha (b VARCHAR, c INTEGER);\n'

sl_in "$T_DDL"$'\n.mode csv\n.headers on\n.nullvalue ~\n'"$T_QUERY"$'\n.mode markdown\n'\
$'select 1 as one;\n'
expect_out ".mode, .headers, .nullvalue" $'a,b\n1,x\n22,~\n30,héllo\n| one |\n|-----|\n| 1   |\n'

sl_in $'.nullvalue \'\'\n.mode csv\nselect NULL;\n'
expect_out ".nullvalue ''" $'\n'

sl_in $'select 1;\n.quit\nselect 2;\n'
expect_out ".quit stops reading" $'1\n'
expect_rc ".quit" 0

sl_in $'select 1;\n.exit\nselect 2;\n'
expect_out ".exit stops reading" $'1\n'

sl_in $'.frobnicate\nselect 1;\n'
expect_line "unknown dot command" "$ERR" 1 '^Error: .*frobnicate'
expect_out "unknown dot command, next runs" $'1\n'
expect_rc "unknown dot command" 1

sl_in $'.mode nosuchmode\n'
expect_line "bad .mode" "$ERR" 1 '^Error: .*nosuchmode'
expect_rc "bad .mode" 1

sl_in $'.help\n'
if grep -q '^\.mode' "$OUT" && grep -q '^\.read' "$OUT"; then
    pass
else
    fail ".help lists the commands"
fi
expect_rc ".help" 0

sl_in $'select\n.5;\n'
expect_line "a '.' line inside a pending statement is SQL" "$OUT" 1 '^0?\.5$'

sl -c ".tables"
expect_rc "dot command in -c" 0

# ---------------------------------------------------------------- incremental stdin

# A driver writes one statement and waits for its answer before the next.
coproc SLUICE_CO { "$SLUICE" 2>&1; }
co_in=${SLUICE_CO[1]}
co_out=${SLUICE_CO[0]}
co_pid=$SLUICE_CO_PID
co_read() { # co_read NAME EXPECTED_REGEX
    local line=""
    if IFS= read -r -t 10 line <&"$co_out" && [[ "$line" =~ $2 ]]; then
        pass
    else
        fail "incremental stdin: $1" "expected /$2/" "actual:   $(printf '%q' "$line")"
    fi
}
printf 'select 1;\n' >&"$co_in"
co_read "answer to statement 1" '^1$'
printf 'select\n' >&"$co_in"
printf '2;\n' >&"$co_in"
co_read "answer to a two-line statement" '^2$'
printf 'selec;\n' >&"$co_in"
co_read "error" '^Error: line 4, column 1: '
co_read "error source line" '^  selec;$'
co_read "error caret" '^  \^$'
printf '.mode csv\nselect 3;\n' >&"$co_in"
co_read "dot command then a statement" '^3$'
exec {co_in}>&-
wait "$co_pid"
RC=$?
expect_rc "incremental stdin" 1

# ---------------------------------------------------------------- command line

sl --version
expect_line "--version" "$OUT" 1 '^sluice [0-9]+\.[0-9]+'
expect_rc "--version" 0

sl --help
expect_line "--help" "$OUT" 1 '^Usage: sluice'
expect_rc "--help" 0

sl --frob
expect_line "unknown option is named" "$ERR" 1 "--frob"
expect_line "unknown option prints the usage" "$ERR" 2 '^Usage: sluice'
expect_out "unknown option prints nothing on stdout" ''
expect_rc "unknown option" 1

sl -c
expect_line "missing argument is named" "$ERR" 1 "'-c'"
expect_rc "missing argument" 1

sl --mode
expect_line "missing --mode argument" "$ERR" 1 "'--mode'"
expect_rc "missing --mode argument" 1

sl --mode nosuch -c "select 1"
expect_line "bad --mode value" "$ERR" 1 "nosuch"
expect_rc "bad --mode value" 1

sl --threads abc -c "select 1"
expect_line "bad --threads value" "$ERR" 1 "--threads"
expect_rc "bad --threads value" 1

sl --threads 2 -c "select 1+2"
expect_out "--threads 2" $'3\n'
expect_rc "--threads 2" 0

sl --threads=1 -c "select 1+3"
expect_out "--threads=1" $'4\n'

sl --bail=yes
expect_line "flag given a value" "$ERR" 1 "--bail"
expect_rc "flag given a value" 1

sl :memory: -c "select 1+4;" --mode csv
expect_out "options after DBPATH" $'5\n'
expect_rc "options after DBPATH" 0

sl -c "select 1" "$TMP/db2" "$TMP/db3"
expect_line "two DBPATHs" "$ERR" 1 "db3"
expect_rc "two DBPATHs" 1

# ---------------------------------------------------------------- transactions

# ROLLBACK undoes the DELETE
sl -c "create table t(a integer); insert into t values (1), (2); begin; delete from t; rollback; select count(*) from t;"
expect_out "BEGIN; DELETE; ROLLBACK deletes nothing" $'2\n'
expect_err "BEGIN; DELETE; ROLLBACK: no error" ''
expect_rc "BEGIN; DELETE; ROLLBACK" 0

# an error aborts the transaction: the next statement is refused, COMMIT rolls back
sl -c "create table t(a integer); insert into t values (1); begin; delete from t; select * from nosuch; select count(*) from t; commit; select count(*) from t;"
expect_out "an aborted transaction is rolled back" $'1\n'
expect_line "the error in the transaction" "$ERR" 1 "^Error: line 1, column 90: unknown table 'nosuch'"
expect_line "the statement after it is refused" "$ERR" 4 '^Error: line 1, column 98: current transaction is aborted'
expect_line "COMMIT rolls back" "$ERR" 7 '^Error: line 1, column 122: COMMIT rolled the transaction back'
expect_lines "aborted transaction: three errors" "$ERR" 9
expect_rc "aborted transaction" 1

# --bail stops at the error: the transaction, still open, is not saved
sl "$TMP/txdb" -c "create table t(a integer); insert into t values (1);"
sl "$TMP/txdb" -c "start transaction; delete from t; insert into nosuch values (1); commit;" --bail
expect_lines "--bail: one error" "$ERR" 3
expect_rc "--bail in a transaction" 1
sl "$TMP/txdb" -c "select count(*) from t;"
expect_out "--bail left the transaction uncommitted" $'1\n'

# ---------------------------------------------------------------- COPY and files

D="$TMP/copy"
mkdir -p "$D"

# a symbolic link: its target is replaced, keeping its mode; the link stays a link
printf 'old\n' >"$D/target.csv"
chmod 640 "$D/target.csv"
ln -s target.csv "$D/link.csv"
sl -c "copy (select 1 as x union all select 2 order by x) to '$D/link.csv'"
expect_rc "COPY TO a symlink" 0
expect_file "COPY TO a symlink writes its target" "$D/target.csv" $'1\n2\n'
if [ -L "$D/link.csv" ] && [ "$(stat -c %a "$D/target.csv")" = 640 ]; then pass; else
    fail "the link stays a link, the target keeps mode 640" "$(ls -l "$D")"
fi

# a failing COPY TO leaves the old file and no temporary file
sl -c "create table z(a integer); insert into z values (1), (2), (3); copy (select 6 / (2 - a) from z) to '$D/target.csv'"
expect_line "a failing COPY TO" "$ERR" 1 'division by zero'
expect_file "a failing COPY TO keeps the old file" "$D/target.csv" $'1\n2\n'
expect_file "a failing COPY TO leaves no temporary file" <(ls -A "$D") $'link.csv\ntarget.csv\n'

# a new file gets the umask's mode
(umask 027 && "$SLUICE" -c "copy (select 1) to '$D/new.csv'" </dev/null >"$OUT" 2>"$ERR")
if [ "$(stat -c %a "$D/new.csv")" = 640 ]; then pass; else
    fail "a new COPY TO file follows the umask" "$(stat -c %a "$D/new.csv")"
fi
rm -f "$D/new.csv"

# /dev/null is written through and stays a device
sl -c "copy (select 1) to '/dev/null'"
expect_rc "COPY TO /dev/null" 0
if [ -c /dev/null ]; then pass; else fail "/dev/null is still a character device"; fi

# a FIFO is written through to its reader and stays a FIFO
if mkfifo "$D/out.fifo" 2>/dev/null; then
    cat "$D/out.fifo" >"$D/from_fifo" &
    reader=$!
    sl -c "copy (select 7 as x, 'seven' as y) to '$D/out.fifo' (header true)"
    wait "$reader"
    expect_rc "COPY TO a FIFO" 0
    expect_file "COPY TO a FIFO reaches its reader" "$D/from_fifo" $'x,y\n7,seven\n'
    if [ -p "$D/out.fifo" ]; then pass; else fail "the FIFO stays a FIFO"; fi

    # COPY FROM a FIFO reads to its end
    mkfifo "$D/in.fifo"
    printf '1,a\n2,b\n3,c\n' >"$D/in.fifo" &
    writer=$!
    sl -c "create table f(a integer, b varchar); copy f from '$D/in.fifo'; select sum(a), count(b) from f;"
    wait "$writer"
    expect_out "COPY FROM a FIFO" $'6\t3\n'
    rm -f "$D/out.fifo" "$D/in.fifo" "$D/from_fifo"
else
    echo "skipped: FIFO checks (mkfifo failed)"
fi

# /dev/stdin, a pipe, is read to its end
sl_in $'4\n5\n' -c "create table s(a integer); copy s from '/dev/stdin'; select sum(a) from s;"
expect_out "COPY FROM /dev/stdin" $'9\n'

# a record over the default max_line_size (2 MiB), from a file and from a pipe
head -c 3000000 /dev/zero | tr '\0' x >"$D/long.csv"
sl -c "create table l(a varchar); copy l from '$D/long.csv'"
expect_line "a long record in a file" "$ERR" 1 "line 1: record longer than 2097152 bytes"
"$SLUICE" -c "create table l(a varchar); copy l from '/dev/stdin'" <"$D/long.csv" >"$OUT" 2>"$ERR"
expect_line "a long record in a pipe" "$ERR" 1 "^Error: /dev/stdin, line 1: record longer than 2097152 bytes"
rm -f "$D/long.csv"

# a NUL byte in the file name is refused, and nothing is written
printf "copy (select 1) to '%s/a\\0b';\n" "$D" >"$D/nul.sql"
sl -f "$D/nul.sql"
expect_line "a NUL in a COPY file name" "$ERR" 1 "^Error: $D/nul.sql:1:20: COPY file name contains a NUL byte"
expect_file "a NUL in a COPY file name writes nothing" <(ls -A "$D") $'link.csv\nnul.sql\ntarget.csv\n'

# a directory that cannot be written (not checkable as root, who may write anywhere)
if [ "$(id -u)" != 0 ]; then
    mkdir "$D/ro" && chmod 555 "$D/ro"
    sl -c "copy (select 1) to '$D/ro/x.csv'"
    expect_line "an unwritable directory" "$ERR" 1 "cannot write '$D/ro/x.csv': Permission denied"
    chmod 755 "$D/ro"
fi

# ---------------------------------------------------------------- demo

sl --demo
expect_line "--demo prints the sample query" "$OUT" 2 \
    '^SELECT city, count\(\*\), sum\(amount\) FROM demo GROUP BY city ORDER BY city;$'
expect_line "--demo result, Amsterdam" "$OUT" 3 $'^Amsterdam\t4\t[0-9]+\\.[0-9]+$'
expect_line "--demo result, Paris" "$OUT" 7 $'^Paris\t4\t[0-9]+\\.[0-9]+$'
expect_lines "--demo" "$OUT" 7
expect_err "--demo" ''
expect_rc "--demo" 0

# ---------------------------------------------------------------- terminal: box default, REPL

if command -v script >/dev/null 2>&1; then
    script -qec "'$SLUICE' -c 'select 1 as x'" /dev/null </dev/null >"$OUT" 2>&1
    RC=$?
    expect_out "box is the default on a terminal" \
        $'┌───────┐\r\n│   x   │\r\n│ int32 │\r\n├───────┤\r\n│     1 │\r\n├───────┤\r\n│ 1 row │\r\n└───────┘\r\n'

    printf 'select\n 40 + 2 as y;\n.quit\n' |
        script -qec "'$SLUICE'" /dev/null >"$OUT" 2>&1
    RC=$?
    expect_rc "REPL" 0
    if grep -q 'sluice> ' "$OUT" && grep -q '   \.\.\.> ' "$OUT" && grep -q '│    42 │' "$OUT"; then
        pass
    else
        fail "REPL prompts and box result" "$(tr -d '\r' <"$OUT" | head -c 600)"
    fi
    if [ -s "$HOME/.sluice_history" ] && grep -q '40' "$HOME/.sluice_history"; then
        pass
    else
        fail "REPL writes ~/.sluice_history"
    fi
else
    echo "skipped: terminal checks (script(1) is not installed)"
fi

# the REPL on a pseudo-terminal: box defaults, error lines, Tab completion
if command -v python3 >/dev/null 2>&1; then
    if python3 "$(dirname "$0")/repl_test.py" "$SLUICE" >"$OUT" 2>&1; then
        pass
    else
        fail "repl_test.py" "$(head -c 3000 "$OUT")"
    fi
else
    echo "skipped: REPL checks (python3 is not installed)"
fi

# ---- hash aggregate spilling -------------------------------------------------------
# Under a 1MB memory_limit the GROUP BY, DISTINCT and set-operation tables of
# tests/sql/aggregate/spill.test (and a GROUP BY on packed integer keys,
# tests/sql/aggregate/packed_keys.test, and on packed short and long string keys,
# tests/sql/aggregate/string_keys.test) write spill files: EXPLAIN ANALYZE shows it.
SPILL_SETUP="CREATE TABLE t10 (i INTEGER); INSERT INTO t10 VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9);
CREATE TABLE t2 (j INTEGER); INSERT INTO t2 VALUES (0),(1);
CREATE VIEW g AS SELECT b.i*1000 + c.i*100 + d.i*10 + e.i AS n, t2.j AS j, 'value-string-' || ((b.i*13 + c.i*7 + d.i + t2.j) % 23) AS s FROM t10 b, t10 c, t10 d, t10 e, t2;
CREATE TABLE gs (k VARCHAR(7), j INTEGER); INSERT INTO gs SELECT CAST(n AS VARCHAR), j FROM g;
SET shuffle_partitions = 1;"
for q in "SELECT n / 2 AS k, count(*), count(DISTINCT s), min(s), avg(j) FROM g GROUP BY 1" \
         "SELECT DISTINCT n / 2, s FROM g" \
         "SELECT n / 2, s FROM g EXCEPT SELECT n / 3, s FROM g" \
         "SELECT n, j, count(*), sum(n) FROM g GROUP BY n, j" \
         "SELECT k, j, count(*) FROM gs GROUP BY k, j" \
         "SET shuffle_partitions = 4; EXPLAIN (ANALYZE, FORMAT JSON) SELECT n, s FROM g EXCEPT SELECT n + 1, s FROM g"; do
    for limit in 1MB default; do
        set_limit="SET memory_limit = '1MB';"
        [ "$limit" = default ] && set_limit=""
        case "$q" in
        SET*) run="$q" ;; # the EXCEPT's inputs hash-exchanged on its keys: 4 tables spill
        *) run="EXPLAIN (ANALYZE, FORMAT JSON) $q" ;;
        esac
        sl -c "$SPILL_SETUP $set_limit $run"
        spilled=$(grep -o '"name": "HASH_AGGREGATE".*"spilled_bytes": [0-9]*' "$OUT" |
                  sed 's/.*"spilled_bytes": //' | sort -n | tail -1)
        if [ "$RC" -ne 0 ]; then
            fail "spill at $limit: $q" "exit $RC: $(head -c 300 "$ERR")"
        elif [ "$limit" = 1MB ] && [ "${spilled:-0}" -gt 0 ]; then
            pass
        elif [ "$limit" = default ] && [ "${spilled:-1}" -eq 0 ]; then
            pass
        else
            fail "HASH_AGGREGATE spilled_bytes at $limit: $q" "got ${spilled:-none}"
        fi
    done
done

# ---- holistic and ordered aggregates spilling ----------------------------------------
# Under a 2MB memory_limit (tests/sql/memory/ordered_agg.test) an ungrouped median's sorter
# spills in its HASH_AGGREGATE, and a grouped string_agg(... ORDER BY ...) in the ORDER_BY
# before it; so does a grouped median and count(DISTINCT) whose one group holds 95% of the
# rows (tests/sql/memory/hot_group.test), which failed before.
ORD_SETUP="CREATE TABLE h AS SELECT i, 'payload-' || CAST((i * 7919) % 200003 AS VARCHAR) AS s FROM generate_series(1, 200000) t(i);"
for spec in "HASH_AGGREGATE|SELECT median(i), mode(s), length(string_agg(CAST(i % 10 AS VARCHAR), '' ORDER BY s)) FROM h" \
            "ORDER_BY|SELECT i % 1000, string_agg(s, ',' ORDER BY s DESC) FROM h GROUP BY 1" \
            "HASH_AGGREGATE|SELECT i % 20 = 0, median(i), count(DISTINCT s), mode(length(s)) FROM h GROUP BY 1"; do
    op=${spec%%|*}
    q=${spec#*|}
    for limit in 2MB default; do
        set_limit="SET memory_limit = '2MB';"
        [ "$limit" = default ] && set_limit=""
        sl -c "$ORD_SETUP $set_limit EXPLAIN (ANALYZE, FORMAT JSON) $q"
        spilled=$(grep -o "\"name\": \"$op\".*\"spilled_bytes\": [0-9]*" "$OUT" |
                  sed 's/.*"spilled_bytes": //' | sort -n | tail -1)
        if [ "$RC" -ne 0 ]; then
            fail "spill at $limit: $q" "exit $RC: $(head -c 300 "$ERR")"
        elif [ "$limit" = 2MB ] && [ "${spilled:-0}" -gt 0 ]; then
            pass
        elif [ "$limit" = default ] && [ "${spilled:-1}" -eq 0 ]; then
            pass
        else
            fail "$op spilled_bytes at $limit: $q" "got ${spilled:-none}"
        fi
    done
done

# ---- WITH RECURSIVE ... UNION past its memory (tests/sql/memory/recursive_seen.test) ---
# At 2MB the set of rows seen is refused and the rounds go on by EXCEPT, which spills: EXPLAIN
# ANALYZE says so in its Recursive line, and the statement's spilled_bytes counts the rounds'.
# Unlimited, the set holds every row and nothing spills.
REC_Q="WITH RECURSIVE r(n, s) AS (SELECT 1, 'n1' UNION SELECT (n * 2 + k) % 50021, 'n' || ((n * 2 + k) % 50021) || repeat('x', n % 20) FROM r, (VALUES (0), (1)) v(k)) SELECT count(*), count(DISTINCT s) FROM r"
for limit in 2MB default; do
    set_limit="SET memory_limit = '2MB';"
    [ "$limit" = default ] && set_limit=""
    sl -c "$set_limit EXPLAIN ANALYZE $REC_Q; EXPLAIN (ANALYZE, FORMAT JSON) $REC_Q"
    spilled=$(grep -o '"peak_temp_bytes": [0-9]*, "spilled_bytes": [0-9]*' "$OUT" |
              sed 's/.*"spilled_bytes": //')
    line=$(grep -c '^Recursive: r, [0-9]* rounds, [0-9]* rows; the set of rows seen was refused memory in round [0-9]*, and from then on' "$OUT")
    plain=$(grep -c '^Recursive: r, [0-9]* rounds, [0-9]* rows$' "$OUT")
    if [ "$RC" -ne 0 ]; then
        fail "WITH RECURSIVE at $limit" "exit $RC: $(head -c 300 "$ERR")"
    elif [ "$limit" = 2MB ] && [ "${spilled:-0}" -gt 0 ] && [ "$line" -eq 1 ]; then
        pass
    elif [ "$limit" = default ] && [ "${spilled:-1}" -eq 0 ] && [ "$plain" -eq 1 ]; then
        pass
    else
        fail "WITH RECURSIVE at $limit: spilled_bytes and the Recursive line" \
             "got ${spilled:-none}, $line, $plain: $(head -c 600 "$OUT")"
    fi
done

# ---- cache reads and writes in EXPLAIN ANALYZE (docs/cache.md) ----------------------
sl -c "CREATE TABLE ct (a INTEGER); INSERT INTO ct VALUES (1), (2), (3);
CACHE LAZY TABLE cl AS SELECT a FROM ct WHERE a > 1;
EXPLAIN ANALYZE SELECT count(*) FROM cl;
EXPLAIN ANALYZE SELECT a FROM cl"
if [ "$RC" -eq 0 ] && [ "$(grep -c '^Cache: write cl (2 rows)$' "$OUT")" -eq 1 ] &&
   [ "$(grep -c '^Cache: read cl (2 rows)$' "$OUT")" -eq 2 ] &&
   [ "$(grep -c 'CACHED SCAN cl ([^)]*)  \[rows=2' "$OUT")" -eq 2 ]; then
    pass
else
    fail "EXPLAIN ANALYZE shows cache reads and writes" "exit $RC: $(head -c 600 "$OUT")"
fi

# ---- EXPLAIN ANALYZE ends with the total time (docs/memory.md) ----------------------
# (after the cache reads and the memory mode's decision too)
sl -c "CREATE TABLE tt AS SELECT i AS a FROM range(1000) r(i);
EXPLAIN ANALYZE SELECT count(*) FROM tt;
EXPLAIN (ANALYZE, FORMAT JSON) SELECT sum(a) FROM tt;
CACHE TABLE ttc AS SELECT a FROM tt; SET memory_mode = 'auto';
EXPLAIN ANALYZE SELECT sum(a) FROM ttc"
TOTAL_RE='^Total: [0-9]+\.[0-9]{3} ms \(run [0-9]+\.[0-9]{3} ms, bind and plan [0-9]+\.[0-9]{3} ms\)$'
if [ "$RC" -eq 0 ] && [ "$(grep -cE "$TOTAL_RE" "$OUT")" -eq 2 ] &&
   [ "$(grep -cE '"total_ms": [0-9]+\.[0-9]{3}, "run_ms": [0-9]+\.[0-9]{3}' "$OUT")" -eq 1 ] &&
   [ "$(grep -c '^Cache: read ttc' "$OUT")" -eq 1 ] && [ "$(grep -c '^Memory mode: auto' "$OUT")" -eq 1 ] &&
   tail -n 1 "$OUT" | grep -qE "$TOTAL_RE"; then
    pass
else
    fail "EXPLAIN ANALYZE ends with the total time" "exit $RC: $(head -c 600 "$OUT")"
fi

# ---- shared subtrees in EXPLAIN ANALYZE (docs/cache.md) -----------------------------
sl -c "CREATE TABLE st (a INTEGER, b INTEGER); INSERT INTO st VALUES (1, 2), (2, 3), (1, 4);
EXPLAIN ANALYZE WITH x AS (SELECT a, sum(b) s FROM st GROUP BY a) SELECT * FROM x p JOIN x q ON p.a = q.a"
if [ "$RC" -eq 0 ] &&
   [ "$(grep -c '^Cache: shared #1 computed once (2 rows), used 2 times$' "$OUT")" -eq 1 ] &&
   [ "$(grep -c '^Shared #1 (computed once, used 2 times):$' "$OUT")" -eq 1 ] &&
   [ "$(grep -c 'SHARED SCAN #1 (2 of 2 columns: a, s).*  \[rows=2, est=2\]' "$OUT")" -eq 2 ]; then
    pass
else
    fail "EXPLAIN ANALYZE shows the shared subtree's rows" "exit $RC: $(head -c 600 "$OUT")"
fi

# ---- memory-mode decisions in EXPLAIN ANALYZE (docs/memory.md) ----------------------
sl -c "SET memory_limit = '8MB'; SET memory_mode = 'auto';
EXPLAIN ANALYZE SELECT count(*) FROM (SELECT i % 150000 AS g, count(*) AS c FROM generate_series(1, 300000) t(i) GROUP BY 1) x;
EXPLAIN ANALYZE SELECT count(*) FROM generate_series(1, 10) t(i);
SET memory_mode = 'static';
EXPLAIN ANALYZE SELECT count(*) FROM generate_series(1, 10) t(i);
SET memory_mode = 'unified';
EXPLAIN ANALYZE SELECT count(*) FROM generate_series(1, 10) t(i)"
if [ "$RC" -eq 0 ] &&
   [ "$(grep -c '^Memory mode: auto, storage boundary 50% -> 45% of pooled memory (spilling cost more: toward execution; spilled [0-9.]* [KM]iB in [0-9.]* ms; cache misses: 0 blocks loaded back, 0 recomputes in 0.0 ms)$' "$OUT")" -eq 1 ] &&
   [ "$(grep -c '^Memory mode: auto, storage boundary 45% -> 45% of pooled memory (kept; spilled 0 bytes in 0.0 ms; ' "$OUT")" -eq 1 ] &&
   [ "$(grep -c '^Memory mode: static, storage 50% and execution 50% of pooled memory (spilled 0 bytes' "$OUT")" -eq 1 ] &&
   [ "$(grep -c '^Memory mode:' "$OUT")" -eq 3 ]; then
    pass
else
    fail "EXPLAIN ANALYZE shows the memory mode's decisions" "exit $RC: $(grep 'Memory' "$OUT" | head -c 900)"
fi

# ---- read_csv('/dev/stdin'): the sniffer's sample is replayed, not lost -------------
sl_in $'a|b\n1|x\n2|y\n3|z\n' -c "SELECT sum(a), string_agg(b, '') FROM read_csv('/dev/stdin')"
expect_out "read_csv from a pipe" $'6\txyz\n'
expect_rc "read_csv from a pipe" 0

# more than the sample (5 records) and more than one read window: every row arrives once
seq_csv=$(printf 'n,label\n'; for i in $(seq 1 30000); do printf '%d,row %d\n' "$i" "$i"; done)
sl_in "$seq_csv" -c "SELECT count(*), sum(n), count(DISTINCT label) FROM read_csv('/dev/stdin', sample_size = 5)"
expect_out "read_csv from a pipe past its sample" $'30000\t450015000\t30000\n'

sl_in $'n\n1\n2\nx\n' -c "SELECT * FROM read_csv('/dev/stdin', sample_size = 1)"
expect_err "read_csv from a pipe: a value past the sample" \
    $'Error: /dev/stdin, line 4, column 1 (n): cannot read as BIGINT: \'x\' (the column\'s type was detected from a sample: give it with the types option, or read every column as VARCHAR with all_varchar = true)\n'
expect_rc "read_csv from a pipe: a value past the sample" 1

# ---- SHOW ALL, SHOW settings: the rows of sluice_settings, whatever this machine's values ----

# (max_temp_directory_size follows the free disk space: fixed here)
fix="SET max_temp_directory_size = 1000000000;"
sl --threads 3 -c "$fix SELECT * FROM sluice_settings"
cp "$OUT" "$TMP/settings"
for form in "SHOW ALL" "show settings" "SELECT * FROM sluice_settings()"; do
    sl --threads 3 -c "$fix $form"
    expect_out "$form" "$(cat "$TMP/settings")"$'\n'
    expect_rc "$form" 0
done
expect_line "sluice_settings lists threads" "$TMP/settings" 1 $'^threads\t3\t'

echo "$n_pass passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
