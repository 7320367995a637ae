#!/usr/bin/env bash
# tests/spill/sort_spill_test.sh SLUICE: ORDER BY and window functions under a
# memory_limit several times smaller than their input.
#  - the results equal those at the default limit (md5 of the whole output);
#  - EXPLAIN (ANALYZE, FORMAT JSON) shows spilled_bytes > 0 for ORDER_BY and
#    WINDOW, and their peak_memory_bytes within the limit;
#  - at the default limit the same sort spills nothing (it stays in memory);
#  - no file is left in temp_directory.
# The rows come from cross joins, not a table: tables count against the limit.
set -u
SLUICE=$1
pass=0
fail=0
check() { # name, condition result (0 = ok)
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice_sort_spill.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT

setup="create table d(x int);
insert into d values (0),(1),(2),(3),(4),(5),(6),(7),(8),(9);
create view t as select id, id * 7919 % 100003 as v, 'str' || (id * 37 % 11) || 'abcdefghijklmnop' as s
  from (select a.x + 10*b.x + 100*c.x + 1000*e.x + 10000*f.x as id from d a, d b, d c, d e, d f) g;
set temp_directory = '$TMP';"
tight="set memory_limit = '2MB';"
sort="select id, v, s from t order by s desc, v;"
window="select id, v, row_number() over (partition by v % 997 order by s, id),
  sum(v) over (partition by id % 499 order by v rows between 3 preceding and current row) from t;"

for q in "$sort" "$window"; do
    base=$("$SLUICE" -c "$setup $q" | md5sum)
    small=$("$SLUICE" -c "$setup $tight $q" | md5sum)
    check "same result at 2MB: $q" "$([ "$base" = "$small" ]; echo $?)"
done

# field OP NAME JSON: the value of field NAME of the first operator OP in JSON.
field() {
    echo "$3" | grep -o "\"name\": \"$1\"[^}]*\"$2\": [0-9]*" | head -1 | grep -o '[0-9]*$'
}
json=$("$SLUICE" -c "$setup $tight explain (analyze, format json) $window")
spilled=$(field WINDOW spilled_bytes "$json")
peak=$(field WINDOW peak_memory_bytes "$json")
check "WINDOW spilled_bytes > 0 (got ${spilled:-none})" "$([ "${spilled:-0}" -gt 0 ]; echo $?)"
check "WINDOW peak_memory_bytes <= 2MB (got ${peak:-none})" \
    "$([ -n "$peak" ] && [ "$peak" -le 2097152 ]; echo $?)"
json=$("$SLUICE" -c "$setup $tight explain (analyze, format json) $sort")
spilled=$(field ORDER_BY spilled_bytes "$json")
files=$(field ORDER_BY spill_files "$json")
peak=$(field ORDER_BY peak_memory_bytes "$json")
check "ORDER_BY spilled_bytes > 0 (got ${spilled:-none})" "$([ "${spilled:-0}" -gt 0 ]; echo $?)"
check "ORDER_BY spill_files > 1 (got ${files:-none})" "$([ "${files:-0}" -gt 1 ]; echo $?)"
check "ORDER_BY peak_memory_bytes <= 2MB (got ${peak:-none})" \
    "$([ -n "$peak" ] && [ "$peak" -le 2097152 ]; echo $?)"
json=$("$SLUICE" -c "$setup explain (analyze, format json) $sort")
spilled=$(field ORDER_BY spilled_bytes "$json")
check "ORDER_BY at the default limit spills nothing (got ${spilled:-none})" \
    "$([ "${spilled:-1}" -eq 0 ]; echo $?)"

left=$(find "$TMP" -mindepth 1 | wc -l)
check "no file left in temp_directory (found $left)" "$([ "$left" -eq 0 ]; echo $?)"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
