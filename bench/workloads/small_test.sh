#!/usr/bin/env bash
# small_test.sh - the Sluice versions of the seed workloads (bench/workloads/*.sql) still run on
# Sluice: each script, scaled down by the substitutions below, runs whole (--bail: any error
# fails), then checks of what it made that hold for any hash() values, never answers copied
# from a run.  About a second in all.
#   bench/workloads/small_test.sh build/sluice
#
# Scaling (every pattern must match, or the test fails: a script changed under it):
#   wordcount        generate_series(1, 2400000) -> (1, 2400)                  2,400 lines
#   terasort         generate_series(0, 9999999) -> (0, 9999)                  10,000 rows
#   pagerank         1000000 -> 1000, 999999 -> 999, 10500000 -> 10500,        1,000 vertices
#                    ln(1000001.0) -> ln(1001.0), 999.0 * -> 30.6 * (sqrt(N) - 1)
#   tc               25000 -> 250 vertices, 60000 -> 600 candidates, 50000 -> 500 edges
#   kmeans(_groupmin) generate_series(0, 1999999) -> (0, 1999)                 2,000 points
set -euo pipefail
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# scale NAME SED_EXPR...: $tmp/NAME.sql, the script with each substitution applied (each must match)
scale() {
  local name=$1 expr
  shift
  cp "$here/$name.sql" "$tmp/$name.sql"
  for expr in "$@"; do
    local before
    before=$(cat "$tmp/$name.sql")
    sed -E -i "$expr" "$tmp/$name.sql"
    if [ "$before" = "$(cat "$tmp/$name.sql")" ]; then
      echo "FAIL $name: the scaling '$expr' matches nothing" >&2
      fail=1
    fi
  done
}

# run NAME CHECKS_SQL: runs the scaled script, then the checks (each prints "name<TAB>bool")
run() {
  local name=$1
  printf '%s\n' "$2" >> "$tmp/$name.sql"
  if ! (cd "$tmp" && "$sluice" --threads 2 --bail -f "$name.sql" > "$name.out" 2> "$name.err"); then
    echo "FAIL $name: the script did not run:" >&2
    cat "$tmp/$name.err" >&2
    fail=1
    return
  fi
  local bad
  bad=$(awk -F'\t' '$1 ~ /^check / && $2 != "true"' "$tmp/$name.out")
  if [ -n "$bad" ] || ! grep -q '^check ' "$tmp/$name.out"; then
    echo "FAIL $name: ${bad:-no checks printed}" >&2
    fail=1
  else
    echo "ok   $name: $(grep -c '^check ' "$tmp/$name.out") checks"
  fi
}

scale wordcount 's/generate_series\(1, 2400000\)/generate_series(1, 2400)/'
run wordcount "
SELECT 'check every line', COUNT(*) = 2400 FROM lines;
SELECT 'check 8..16 words a line', bool_and(n BETWEEN 8 AND 16) FROM (
  SELECT length(line) - length(replace(line, ' ', '')) + 1 AS n FROM lines) AS t;
SELECT 'check counts add up to the words', (SELECT SUM(cnt) FROM word_counts) =
  (SELECT SUM(length(line) - length(replace(line, ' ', '')) + 1) FROM lines);
SELECT 'check 50000 distinct words in vocab', COUNT(DISTINCT word) = 50000 FROM vocab;
SELECT 'check every word from vocab', COUNT(*) = 0 FROM word_counts w
  LEFT JOIN vocab v ON v.word = w.word WHERE v.word IS NULL;
SELECT 'check rank 1 most frequent', (SELECT word FROM word_counts ORDER BY cnt DESC, word LIMIT 1) =
  (SELECT word FROM vocab WHERE word_id = 1);"

scale terasort 's/generate_series\(0, 9999999\)/generate_series(0, 9999)/'
run terasort "
CREATE TABLE sorted AS SELECT * FROM read_csv('terasort_out.csv', header = false, delim = ',',
  quote = '\"', columns = {'k': 'VARCHAR', 'payload': 'VARCHAR'});
SELECT 'check 10000 rows of 100 bytes', COUNT(*) = 10000 AND bool_and(length(k) = 10 AND length(payload) = 90)
  FROM tera_in;
SELECT 'check keys in 0..z', bool_and(k >= '0000000000' AND k <= 'zzzzzzzzzz') FROM tera_in;
SELECT 'check output has the input rows', (SELECT COUNT(*) FROM sorted) = 10000 AND
  (SELECT COUNT(*) FROM (SELECT k, payload FROM tera_in EXCEPT SELECT k, payload FROM sorted) AS d) = 0;"
# the script's own validation: its two result rows (rows, ..., checksum) agree, none out of order
awk -F'\t' 'NR == 1 { n = $1; c = $3 } NR == 2 { exit !($1 == n && $2 == 0 && $3 == c) }' \
  "$tmp/terasort.out" || { echo "FAIL terasort: the script's validation disagrees" >&2; fail=1; }

scale pagerank 's/\b1000000\b/1000/g' 's/\b999999\b/999/g' 's/\b10500000\b/10500/g' \
  's/ln\(1000001\.0\)/ln(1001.0)/g' 's/999\.0 \*/30.6 */g'
run pagerank "
SELECT 'check 1000 vertices', COUNT(*) = 1000 FROM ranks_10;
SELECT 'check no self-loops or duplicate edges', COUNT(*) = 0 FROM (
  SELECT src, dst FROM edges GROUP BY src, dst HAVING COUNT(*) > 1 OR src = dst) AS t;
SELECT 'check out-weights sum to 1', bool_and(abs(s - 1) < 1e-9) FROM (
  SELECT SUM(w) AS s FROM edges_w GROUP BY src) AS t;
SELECT 'check ranks sum to 1', abs(SUM(rank) - 1) < 1e-9 FROM ranks_10;
SELECT 'check every rank at least the teleport share', bool_and(rank >= 0.15e0 / 1000 * (1 - 1e-9)) FROM ranks_10;
SELECT 'check forms 1 and 2 agree', COUNT(*) = 1000 AND MAX(ABS(a.rank - b.rank)) < 1e-12
  FROM ranks_10 a JOIN ranks_rec b ON a.id = b.id;"

scale tc 's/\b25000\b/250/g' 's/\b60000\b/600/g' 's/\b50000\b/500/g'
run tc "
SELECT 'check 500 edges, no self-loops', COUNT(*) = 500 AND bool_and(src <> dst) FROM tc_edges;
SELECT 'check totals add up', bool_and(s.total_pairs = p.total_pairs + s.new_pairs)
  FROM tc_stats s JOIN tc_stats p ON p.iter = s.iter - 1;
SELECT 'check no duplicate pairs', COUNT(*) = (SELECT COUNT(*) FROM (SELECT DISTINCT src, dst FROM tc) AS d)
  FROM tc;
CREATE TABLE paths AS WITH RECURSIVE r(src, dst, len) AS (
  SELECT src, dst, 1 FROM tc_edges
  UNION
  SELECT r.src, e.dst, r.len + 1 FROM r JOIN tc_edges e ON e.src = r.dst WHERE r.len < 11)
SELECT DISTINCT src, dst FROM r;
SELECT 'check tc = pairs joined by a path of length <= 11',
  (SELECT COUNT(*) FROM (SELECT src, dst FROM tc EXCEPT SELECT src, dst FROM paths) AS a) = 0 AND
  (SELECT COUNT(*) FROM (SELECT src, dst FROM paths EXCEPT SELECT src, dst FROM tc) AS b) = 0;"

# the squared distance of point p to centroid c in 20 dimensions
dist=$(for d in $(seq 1 20); do printf '(p.x%d - c.x%d) * (p.x%d - c.x%d) + ' "$d" "$d" "$d" "$d"; done)
dist=${dist% + }
for kmeans in kmeans kmeans_groupmin; do
  scale "$kmeans" 's/generate_series\(0, 1999999\)/generate_series(0, 1999)/'
  run "$kmeans" "
SELECT 'check 2000 points', COUNT(*) = 2000 FROM points;
SELECT 'check every point in one cluster', SUM(n) = 2000 FROM cent_5;
SELECT 'check Lloyd: SSE does not grow', s5 <= s4 * (1 + 1e-12) FROM
  (SELECT SUM(d) AS s5 FROM (SELECT p.id, MIN($dist) AS d FROM points p CROSS JOIN cent_5 c GROUP BY p.id) AS t) AS a,
  (SELECT SUM(d) AS s4 FROM (SELECT p.id, MIN($dist) AS d FROM points p CROSS JOIN cent_4 c GROUP BY p.id) AS t) AS b;
SELECT 'centroid', cid, n, round(x1, 6), round(x2, 6), round(x20, 6) FROM cent_5 ORDER BY cid;"
done
# the two assignment forms (window, GROUP BY min) pick the same centroids on the same points
if ! diff <(grep '^centroid' "$tmp/kmeans.out") <(grep '^centroid' "$tmp/kmeans_groupmin.out") >&2; then
  echo "FAIL kmeans: the window and GROUP BY min forms give different centroids" >&2
  fail=1
fi
exit $fail
