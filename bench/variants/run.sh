#!/usr/bin/env bash
# Variants of the shapes the seed workloads were tuned on, each timed against DuckDB in the
# same run (bench/RESULTS.md, "Variants").  A speed-up measured on one workload's data holds
# for the class only if it holds here too:
#   long       WordCount with words of 15 bytes (past the 12 a short string holds inline)
#   comma      WordCount split at ', ' (a separator of two bytes)
#   keys       GROUP BY one string key of 2,000,000 distinct values, short and long (4M rows)
#   recursive  WITH RECURSIVE ... UNION over 8,000,000 rows (the set of rows seen)
#   windows    four windows over one PARTITION BY (1,000 partitions of 4,000 rows), two orders
#   holistic   grouped median, quantile and list: 4 groups of 1,000,000 values, then 100,000
#              groups of 40 (data made by the statement itself, not timed)
#   bridge     six-table joins where a 4M-row fact meets two weak filters and, through a
#              100,000-row bridge, a selective table: the order by cost (join_enumeration)
#              joins the bridge first; three shapes and constants (data made by range, not timed)
#   ranges     joins on inequalities alone: 2M events into 100,000 [lo, hi] bins (BETWEEN), into
#              300 date periods (>= and <=), past the bins' ends (one inequality), and a band
#              over expressions (lo BETWEEN x - 50 AND x + 50): range
#              joins over sorted build rows (data made by range, not timed)
# Usage: bench/variants/run.sh [--sluice PATH] [--runs N] [--dir DIR] [--only VARIANT]
# Data (about 250 MB of CSV) is written by DuckDB into DIR (default /tmp/sluice-variants) on
# first use.  Prints a markdown table: the median of N runs of the timed statements, seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
sluice=build/sluice runs=3 dir=/tmp/sluice-variants only=
while [ $# -gt 0 ]; do
  case "$1" in
    --sluice) sluice=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "usage: bench/variants/run.sh [--sluice PATH] [--runs N] [--dir DIR] [--only VARIANT]" >&2
       exit 2 ;;
  esac
done
duck=../shared/tools/duckdb/duckdb-sql
mkdir -p "$dir"
if [ ! -f "$dir/keys.csv" ]; then
  sed "s#@DIR@#$dir#g" bench/variants/gen.sql > "$dir/gen.sql"
  "$duck" "$dir/gen.sql" > /dev/null
fi
# variant, then the 1-based statements whose time counts (the load is not timed)
cases=("long 3" "comma 3" "keys 3 4" "recursive 1" "windows 2" "holistic 2 3" "bridge 7 8 9" "ranges 4 5 6 7")
# seconds of the chosen statements of one run, from "Run Time: real S" or "time_ms MS" lines
pick() { awk -v idx="$1" -v div="$2" 'BEGIN { n = split(idx, a, " "); for (i = 1; i <= n; i++) w[a[i]] = 1 }
  { k++; if (k in w) t += $NF / div } END { printf "%.3f", t }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "| variant | sluice s | duckdb s | ratio |"
echo "|---|---:|---:|---:|"
for c in "${cases[@]}"; do
  v=${c%% *} idx=${c#* }
  [ -z "$only" ] || [ "$only" = "$v" ] || continue
  sed "s#@DIR@#$dir#g" "bench/variants/$v.sql" > "$dir/$v.sql"
  s=$(for r in $(seq "$runs"); do
        "$sluice" --timer < "$dir/$v.sql" 2>&1 | grep '^Run Time' | awk '{ print $4 }' | pick "$idx" 1; echo
      done | median)
  d=$(for r in $(seq "$runs"); do
        "$duck" --timer "$dir/$v.sql" 2>&1 | grep '^time_ms' | pick "$idx" 1000; echo
      done | median)
  echo "| $v | $s | $d | $(awk -v s="$s" -v d="$d" 'BEGIN { printf "%.2f", s / d }') |"
done
