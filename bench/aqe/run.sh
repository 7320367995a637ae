#!/usr/bin/env bash
# bench/aqe/run.sh [SLUICE] [ROWS] - the adaptive optimizer's three cases, each
# run with `adaptive` on and off in the same session (same data, same process),
# alternating, best of REPEAT runs.  Prints a markdown table of seconds and the
# off/on ratio (above 1: adaptive helps).
#   skew        a partitioned join where one key holds half of the ROWS-row side
#   misestimate a join whose build side the planner thinks is large (a filter it
#               prices at 25% keeps 0.2%) but is tiny: broadcast, and the
#               big side is never exchanged
#   tiny        a GROUP BY whose 8 shuffle partitions hold a few rows each,
#               read by a follow-up join
set -eu
SLUICE=${1:-build/sluice}
ROWS=${2:-10000000}
REPEAT=${REPEAT:-3}
digits=$(( ${#ROWS} - 1 ))  # ROWS must be a power of ten
from="a a1"
expr="a1.x"
for i in $(seq 2 "$digits"); do
    from="$from, a a$i"
    expr="$expr + $(printf '1%0*d' $((i - 1)) 0)*a$i.x"
done
setup="create table a(x int);
insert into a values (0),(1),(2),(3),(4),(5),(6),(7),(8),(9);
create table ids as select $expr as id from $from;
create table big as select id, case when id % 2 = 0 then 7 else id end as k, id % 100 as v from ids;
create table dim as select id as k, id % 10 as w from ids where id < $((ROWS / 10));
create table dim2 as select id as k, id % 1000 as p, 'name ' || (id % 1000) as s from ids
  where id < $((ROWS / 2));"

declare -A SQL
SQL[skew]="set broadcast_threshold = '1KB';
  select count(*), sum(v), sum(w) from big join dim on big.k = dim.k;"
SQL[misestimate]="select count(*), sum(v), max(s) from big join
  (select k, s from dim2 where p > 997) d on big.id = d.k;"
SQL[tiny]="select count(*), sum(n) from (select v % 5 as g, count(*) as n from big where id % 100000 = 1
  group by g) s join (select v % 5 as g2 from big where id < 5) t on s.g = t.g2;"

echo "| case | adaptive off (s) | adaptive on (s) | off / on |"
echo "|---|---:|---:|---:|"
for c in skew misestimate tiny; do
    script="$setup"
    for r in $(seq "$REPEAT"); do
        script="$script set adaptive = off; ${SQL[$c]} set adaptive = on; ${SQL[$c]}"
    done
    # --timer prints one line per statement; keep those of the measured queries.
    times=$("$SLUICE" --timer -c "$script" 2>&1 >/dev/null | awk '/Run Time/ {print $4}')
    n_setup=$(echo "$setup" | grep -o ';' | wc -l)
    per=$(echo "${SQL[$c]}" | grep -o ';' | wc -l)
    echo "$times" | tail -n +$((n_setup + 1)) | awk -v per="$per" -v c="$c" '
        { stmt = (NR - 1) % (2 * (per + 1)); t = $1 }
        stmt == per     { if (off == "" || t < off) off = t }
        stmt == 2*per+1 { if (on == "" || t < on) on = t }
        END { printf "| %s | %.3f | %.3f | %.2f |\n", c, off, on, off / on }'
done
