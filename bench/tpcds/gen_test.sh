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

# --skew: the same bytes for any thread count, the same tables but for the sales' columns
# it draws, and the low item keys popular (with --skew 2 the first tenth of the item keys
# takes more than 25% of the store sales lines, about 35%; uniform about 10%; half of the
# lines are customers' favorite items, which stay spread)
"$gen" --sf "$sf" --out "$tmp/s1" --threads 1 --skew 2 --tables store_sales,item 2>/dev/null
"$gen" --sf "$sf" --out "$tmp/s2" --threads 2 --skew 2 --tables store_sales,item 2>/dev/null
cmp "$tmp/s1/store_sales.dat" "$tmp/s2/store_sales.dat"
cmp "$tmp/s1/item.dat" "$tmp/a/item.dat"
share() { # the share, in percent, of store_sales lines whose item is in the first tenth
  local items
  items=$(wc -l < "$tmp/a/item.dat")
  awk -F'|' -v lim=$((items / 10)) '{ n++; if ($3 <= lim) k++ } END { printf "%d", 100 * k / n }' "$1"
}
uniform=$(share "$tmp/a/store_sales.dat")
skewed=$(share "$tmp/s1/store_sales.dat")
[ "$uniform" -le 15 ] || { echo "uniform items: $uniform% in the first tenth"; exit 1; }
[ "$skewed" -ge 25 ] || { echo "--skew 2 items: only $skewed% in the first tenth"; exit 1; }
if "$gen" --sf "$sf" --out "$tmp/bad" --skew 4 2>/dev/null; then
  echo "--skew 4 accepted"; exit 1
fi
echo "tpcds_gen: SF $sf identical for 1 and 2 threads; field counts match schema.sql;" \
  "--skew 2 puts $skewed% of the lines on a tenth of the items (uniform $uniform%)"
