#!/usr/bin/env bash
# bench/aqe/run.sh [SLUICE] [ROWS] - the adaptive optimizer's three cases, each
# run with `adaptive` on and off in the same session (same data, same process),
# alternating, best of REPEAT runs.  Prints a markdown table: wall seconds and
# the off/on ratio (above 1: adaptive helps), and the critical path - the sum
# over the query's stages of each stage's longest task, from EXPLAIN (ANALYZE,
# FORMAT JSON) - which is what the query would take with a core per task, and
# so shows what a skew split buys that a 2-core wall clock cannot.
#   skew        a partitioned join where one key holds half of the ROWS-row side
#   misestimate a join whose build side is `p < 500 and q > 500` over two
#               correlated columns of a ROWS-row table: each filter keeps half of
#               the rows, together they keep 0.03%; the planner prices each
#               range bound at a third and treats them as independent (11%,
#               ~80 MB), so it plans
#               a partitioned join; adaptive makes it a broadcast join and the
#               big side is never exchanged
#   tiny        a GROUP BY whose 8 shuffle partitions hold a few rows each,
#               read by a follow-up join
# Each case also runs its query once more with adaptive off and on and compares
# the rows: a statement error, a missing measurement, or different rows print
# the reason on stderr and make the script exit 1 (after the other cases), so
# that a speedup of a wrong plan is never reported as one.
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
create table dim2 as select id as k, id % 1000 as p, id % 1000 + id % 3 as q,
  'name ' || (id % 1000) as s, 'addr ' || (id % 777) as t from ids;"

declare -A SQL
SQL[skew]="set broadcast_threshold = '1KB';
  select count(*), sum(v), sum(w) from big join dim on big.k = dim.k;"
SQL[misestimate]="select count(*), sum(v), max(s), max(t) from big join
  (select k, s, t from dim2 where p < 500 and q > 500) d on big.id = d.k;"
SQL[tiny]="select count(*), sum(n) from (select v % 5 as g, count(*) as n from big where id % 100000 = 1
  group by g) s join (select v % 5 as g2 from big where id < 5) t on s.g = t.g2;"

echo "| case | adaptive off (s) | adaptive on (s) | off / on | critical path off (s) | on (s) | off / on |"
echo "|---|---:|---:|---:|---:|---:|---:|"
failed=0
for c in skew misestimate tiny; do
    # Settings of the case first, then the measured query, off and on alternating.
    pre=$(echo "${SQL[$c]}" | grep -o '^ *set [^;]*;' || true)
    query=${SQL[$c]#"$pre"}
    script="$setup $pre"
    for r in $(seq "$REPEAT"); do
        script="$script set adaptive = off; explain (analyze, format json) $query"
        script="$script set adaptive = on; explain (analyze, format json) $query"
    done
    # The rows, off then on, after the measured runs (a single-row result each).
    script="$script set adaptive = off; $query set adaptive = on; $query"
    out=$(mktemp) err=$(mktemp)
    if ! "$SLUICE" --timer -c "$script" >"$out" 2>"$err"; then
        echo "bench/aqe: $c: sluice failed: $(grep -v '^Run Time' "$err" | head -5)" >&2
        echo "| $c | FAILED | | | | | |"
        failed=1
        rm -f "$out" "$err"
        continue
    fi
    # --timer prints one line per statement: the measured ones are every other
    # one after the setup and the settings.
    skip=$(( $(echo "$setup $pre" | grep -o ';' | wc -l) + 1 ))
    python3 - "$c" "$out" "$err" "$skip" "$REPEAT" <<'PY' || failed=1
import json, re, sys
case, out, err, skip, repeat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
walls = [float(m) for m in re.findall(r"Run Time: real ([0-9.]+)", open(err).read())]
walls = walls[skip - 1:][1::2]           # drop setup, then keep the explains and queries
lines = open(out).read().rstrip("\n").split("\n")
rows_off, rows_on = lines[-2:] if len(lines) >= 2 else ("", "")
text, docs, i = "\n".join(lines[:-2]), [], 0
dec = json.JSONDecoder()
while True:
    i = text.find("{", i)
    if i < 0:
        break
    d, i = dec.raw_decode(text, i)
    docs.append(d)
problems = []
if len(walls) != 2 * repeat + 2 or len(docs) != 2 * repeat:
    problems.append(f"expected {2 * repeat + 2} timed statements and {2 * repeat} plans, "
                    f"got {len(walls)} and {len(docs)}")
elif rows_off != rows_on or not rows_off:
    problems.append(f"adaptive on gave other rows than off: off {rows_off!r}, on {rows_on!r}")
if problems:
    print(f"bench/aqe: {case}: " + "; ".join(problems), file=sys.stderr)
    print(f"| {case} | FAILED | | | | | |")
    sys.exit(1)
walls = walls[:2 * repeat]
crit = [sum(s["task_time_max_ms"] for s in d["stages"] if not s.get("skipped")) / 1e3 for d in docs]
off_w, on_w = min(walls[0::2]), min(walls[1::2])
off_c, on_c = min(crit[0::2]), min(crit[1::2])
print(f"| {case} | {off_w:.3f} | {on_w:.3f} | {off_w / on_w:.2f} | {off_c:.3f} | {on_c:.3f} | {off_c / on_c:.2f} |")
PY
    rm -f "$out" "$err"
done
if [ "$failed" -ne 0 ]; then
    echo "bench/aqe: FAILED (see above): the figures of a failed case mean nothing" >&2
    exit 1
fi
