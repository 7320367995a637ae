#!/usr/bin/env bash
# The memory limit holds for the whole process: spilling workloads (aggregate,
# sort, window, partitioned join) run at a small memory_limit give the same
# answers as unlimited, spill, and keep the peak RSS within
# memory_limit + 10% + 32 MiB (the room docs/memory.md leaves for small
# allocations).  Data is made from cross joins of a small table, so the tables
# are small and the operators' state is large.
set -u
# With --no-rss (sanitizer builds, whose shadow memory is RSS too) the RSS bound
# is not checked.
SLUICE=${1:?usage: rss_test.sh path/to/sluice [--no-rss]}
CHECK_RSS=1
[ "${2:-}" = "--no-rss" ] && CHECK_RSS=0
pass=0
fail=0
GEN="CREATE TABLE d AS WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000) SELECT n FROM c;
CREATE TABLE e AS SELECT a.n * 1000 + b.n AS k, 'payload-' || CAST(a.n * 7 + b.n AS VARCHAR) AS s FROM d a, d b WHERE b.n <= 200;
SET broadcast_threshold = 0; SET adaptive_broadcast = false;"

QUERIES=(
  "SELECT count(*), sum(c) FROM (SELECT a.n * 1000 + b.n AS k, count(*) AS c FROM d a, d b GROUP BY k) x"
  "SELECT count(*), sum(k) FROM (SELECT DISTINCT a.n * 1000 + b.n AS k, a.n FROM d a, d b) x"
  "SELECT count(*), sum(rn * (k % 13)) FROM (SELECT k, row_number() OVER (PARTITION BY k % 1000 ORDER BY s DESC, k) AS rn FROM e) x"
  "SELECT k, s FROM e ORDER BY s DESC, k LIMIT 3 OFFSET 150000"
  "SELECT count(*), sum(x.k), sum(y.k) FROM e x JOIN e y ON x.k = y.k + 1"
)

json_field() { # json_field FIELD: the query-level field of an EXPLAIN JSON on stdin
  python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"
}

for q in "${QUERIES[@]}"; do
  want=$("$SLUICE" -c "$GEN $q" 2>&1)
  for limit_mb in 16 32; do
    got=$("$SLUICE" -c "$GEN SET memory_limit = '${limit_mb}MB'; $q" 2>&1)
    plan=$("$SLUICE" -c "$GEN SET memory_limit = '${limit_mb}MB'; EXPLAIN (ANALYZE, FORMAT JSON) $q" 2>&1)
    rss=$(echo "$plan" | json_field peak_rss_bytes 2>/dev/null)
    spilled=$(echo "$plan" | json_field spilled_bytes 2>/dev/null)
    bound=$(( limit_mb * 1024 * 1024 * 11 / 10 + 32 * 1024 * 1024 ))
    if [ "$got" != "$want" ]; then
      echo "FAIL: at ${limit_mb}MB the answer differs: $q"; echo "  want: $want"; echo "  got:  $got"
      fail=$((fail + 1))
    elif [ -z "$rss" ] || { [ "$CHECK_RSS" = 1 ] && [ "$rss" -gt "$bound" ]; }; then
      echo "FAIL: at ${limit_mb}MB peak RSS ${rss:-none} > $bound: $q"
      fail=$((fail + 1))
    elif [ "$limit_mb" = 16 ] && { [ -z "$spilled" ] || [ "$spilled" -le 0 ]; }; then
      echo "FAIL: at ${limit_mb}MB nothing spilled: $q"
      fail=$((fail + 1))
    else
      pass=$((pass + 1))
    fi
  done
done
# Tables larger than the limit: about 40 MB of rows loaded at a 16 MB limit
# live mostly on disk (the block store evicts their chunks) and answer as
# without a limit.  The bound holds for the whole process, loading included
# (its peak RSS, measured from outside).
LOAD="CREATE TABLE big(k BIGINT, g INTEGER, s VARCHAR);"
for i in 0 1 2 3 4 5; do
  LOAD="$LOAD INSERT INTO big SELECT i, i % 1000, 'row-' || CAST(i AS VARCHAR) || '-padding-padding' FROM generate_series($((i * 100000 + 1)), $(((i + 1) * 100000))) t(i);"
done
BIG_QUERY="SELECT count(*), sum(k), sum(length(s)) FROM big;
SELECT count(*), sum(c), sum(sk) FROM (SELECT g, count(*) AS c, sum(k) AS sk FROM big GROUP BY g) x;
SELECT count(*), sum(a.k) FROM big a JOIN big b ON a.k = b.k + 1;"
max_rss() { # max_rss CMD...: runs CMD (stdout kept), then prints its peak RSS in bytes on stderr
  python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:])
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, file=sys.stderr)' "$@"
}
want=$("$SLUICE" -c "$LOAD $BIG_QUERY" 2>&1)
got=$("$SLUICE" -c "SET memory_limit = '16MB'; $LOAD $BIG_QUERY SELECT bytes > 0 FROM sluice_memory WHERE what = 'blocks on disk';" 2>&1)
rss=$(max_rss "$SLUICE" -c "SET memory_limit = '16MB'; $LOAD $BIG_QUERY" 2>&1 >/dev/null | tail -1)
bound=$(( 16 * 1024 * 1024 * 11 / 10 + 32 * 1024 * 1024 ))
if [ "$got" != "$want"$'\n'"true" ]; then
  echo "FAIL: tables over the limit: the answer differs or nothing went to disk"; echo "  want: $want"; echo "  got:  $got"
  fail=$((fail + 1))
elif [ "$CHECK_RSS" = 1 ] && { [ -z "$rss" ] || [ "$rss" -gt "$bound" ]; }; then
  echo "FAIL: tables over the limit: peak RSS ${rss:-none} > $bound"
  fail=$((fail + 1))
else
  pass=$((pass + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
