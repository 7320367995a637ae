#!/usr/bin/env bash
# gen_test.sh - checks tpcds_gen: the same bytes for 1 and 2 threads, and every
# row of every table has exactly one '|'-terminated field per column of schema.sql.
#   bench/tpcds/gen_test.sh build/tpcds_gen [SF]
set -euo pipefail
gen=$1
sf=${2:-0.01}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$gen" --sf "$sf" --out "$tmp/a" --threads 1 2>/dev/null
"$gen" --sf "$sf" --out "$tmp/b" --threads 2 2>/dev/null
for f in "$tmp"/a/*.dat; do
  cmp "$f" "$tmp/b/$(basename "$f")"
done

# table -> number of columns, from the CREATE TABLE blocks of schema.sql
awk '/^create table/ { t = $3; n = 0 }
     /^ +[a-z_]+ +(integer|decimal|char|varchar|date|time)/ { n++ }
     /^\);/ && t { print t, n; t = "" }' "$here/schema.sql" > "$tmp/columns"
[ "$(wc -l < "$tmp/columns")" -eq 25 ] || { echo "schema.sql: expected 25 tables"; exit 1; }
while read -r table n; do
  f="$tmp/a/$table.dat"
  [ -s "$f" ] || { echo "$table.dat missing or empty"; exit 1; }
  bad=$(awk -F'|' -v n="$n" 'NF != n + 1 || $NF != "" { print NR; exit }' "$f")
  [ -z "$bad" ] || { echo "$table.dat line $bad: not $n '|'-terminated fields"; exit 1; }
done < "$tmp/columns"
echo "tpcds_gen: SF $sf identical for 1 and 2 threads; field counts match schema.sql"
