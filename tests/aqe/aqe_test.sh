#!/usr/bin/env bash
# tests/aqe/aqe_test.sh SLUICE: the adaptive rules fire where they should, are
# visible in EXPLAIN (ANALYZE, FORMAT JSON), stay off when their setting is off,
# and never change a result.
set -u
SLUICE=$1
pass=0
fail=0
check() { # name, condition result (0 = ok)
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}
has() { # json, rule -> 0 when the JSON's adaptive array holds that rule
    echo "$1" | grep -q "\"rule\": \"$2\""
    echo $?
}
setup="create table a(x int);
insert into a values (0),(1),(2),(3),(4),(5),(6),(7),(8),(9);
create table big as select a1.x + 10*a2.x + 100*a3.x + 1000*a4.x + 10000*a5.x
  + 100000*a6.x as id from a a1, a a2, a a3, a a4, a a5, a a6;"

# Broadcast: the build side is estimated large (a filter the planner cannot see
# through) but is 99 rows; the join becomes a broadcast join and the probe side's
# exchange disappears.
join="select count(*), sum(big.id) from big join (select id from big where id + 0 > 999900) s
  on big.id = s.id;"
small="set broadcast_threshold = '64KB';"
on=$("$SLUICE" -c "$setup $small $join")
off=$("$SLUICE" -c "$setup $small set adaptive = off; $join")
check "broadcast: same result with adaptive on and off" "$([ "$on" = "$off" ]; echo $?)"
check "broadcast: right result" "$([ "$on" = "$(printf '99\t98995050')" ]; echo $?)"
json=$("$SLUICE" -c "$setup $small explain (analyze, format json) $join")
check "broadcast: rule fires" "$(has "$json" broadcast)"
check "broadcast: probe exchange removed" \
    "$(echo "$json" | grep -q '"probe_exchange_removed": true'; echo $?)"
check "broadcast: the JSON keeps the initial plan" \
    "$(echo "$json" | python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(not (d["initial_plan"]["stages"] and d["adaptive"]))'; echo $?)"
text=$("$SLUICE" -c "$setup $small explain analyze $join")
check "broadcast: EXPLAIN ANALYZE shows the initial (partitioned) and the final (broadcast) plan" \
    "$(echo "$text" | sed -n '/^Initial plan:/,/^Final plan:/p' | grep -q 'HASH_JOIN inner, partitioned' &&
       echo "$text" | sed -n '/^Final plan:/,$p' | grep -q 'HASH_JOIN inner, broadcast'; echo $?)"
json=$("$SLUICE" -c "$setup $small set adaptive_broadcast = off; explain (analyze, format json) $join")
check "broadcast: off when adaptive_broadcast is off" "$([ "$(has "$json" broadcast)" -ne 0 ]; echo $?)"

# Coalesce: a GROUP BY with 5 groups hashed into 8 partitions is read by fewer tasks.
agg="select id % 5 as k, count(*), sum(id) from big group by k order by k;"
on=$("$SLUICE" -c "$setup $agg")
off=$("$SLUICE" -c "$setup set adaptive = off; $agg")
check "coalesce: same result with adaptive on and off" "$([ "$on" = "$off" ]; echo $?)"
json=$("$SLUICE" -c "$setup explain (analyze, format json) $agg")
check "coalesce: rule fires" "$(has "$json" coalesce)"
after=$(echo "$json" | grep -o '"partitions_after": [0-9]*' | head -1 | grep -o '[0-9]*$')
check "coalesce: fewer than 8 tasks (got ${after:-none})" "$([ "${after:-8}" -lt 8 ]; echo $?)"
# A coalesce changes how many tasks read the exchange, not the plan EXPLAIN
# prints: the plan as first built would repeat the final one line for line.
check "coalesce: the JSON has no initial plan" \
    "$(echo "$json" | python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit("initial_plan" in d or not d["adaptive"])'; echo $?)"
text=$("$SLUICE" -c "$setup explain analyze $agg")
check "coalesce: EXPLAIN ANALYZE shows the decision and one plan" \
    "$(! echo "$text" | grep -q '^Initial plan:' && ! echo "$text" | grep -q '^Final plan:' &&
       echo "$text" | grep -q '^Adaptive: {"rule": "coalesce"'; echo $?)"
json=$("$SLUICE" -c "$setup set adaptive_coalesce = off; explain (analyze, format json) $agg")
check "coalesce: off when adaptive_coalesce is off" "$([ "$(has "$json" coalesce)" -ne 0 ]; echo $?)"
# Coalesced tasks come in multiples of the workers: a million groups make eight
# partitions of about 2 MB; packing them greedily to a share of 16/threads MB
# gave 3 tasks on 2 workers and 4 on 3, so one worker ran the last task alone.
many="select count(*), sum(c) from (select id, count(*) as c from big group by id);"
coalesced() { # threads, advisory size -> "tasks bytes" of the coalesce decision
    "$SLUICE" -c "$setup set adaptive_min_partition_size = '64KB'; set threads = $1;
      set adaptive_advisory_partition_size = '$2'; explain (analyze, format json) $many" |
        grep -o '"partitions_after": [0-9]*, "bytes": [0-9]*' | head -1 | grep -o '[0-9]*' | tr '\n' ' '
}
# An advisory size above the whole shuffle: one task per worker.
for t in 2 3; do
    set -- $(coalesced "$t" 64MB)
    check "coalesce: $t workers, advisory 64MB: $t tasks (got ${1:-none})" "$([ "${1:-0}" = "$t" ]; echo $?)"
done
# A smaller one: enough tasks for it, in a multiple of the workers (the bytes
# depend on the batch size, so the count is worked out from them).
for t in 2 3; do
    set -- $(coalesced "$t" 5MB)
    want=$(( (${2:-0} + 5242879) / 5242880 ))
    want=$(( want < t ? t : want ))
    want=$(( (want + t - 1) / t * t ))
    check "coalesce: $t workers, advisory 5MB, ${2:-?} bytes: $want tasks (got ${1:-none})" \
        "$([ "${1:-0}" = "$want" ]; echo $?)"
done
check "coalesce: same result in multiples of the workers" \
    "$([ "$("$SLUICE" -c "$setup set threads = 3; $many")" = "$(printf '1000000\t1000000')" ]; echo $?)"
set -- "$SLUICE"

json=$("$SLUICE" -c "$setup set adaptive = off; explain (analyze, format json) $agg")
check "no rule fires with adaptive off" "$(echo "$json" | grep -q '"adaptive": \[\]'; echo $?)"
check "no initial plan when nothing changed" "$(echo "$json" | grep -q initial_plan; [ $? -ne 0 ]; echo $?)"

# Skew split: key 7 holds half of `sk` (50,000 of 100,000 rows) and 100 of the
# 10,000 rows of `sk2`.  Broadcast is kept off so the join stays partitioned.
skew="create table sk as select case when a1.x < 5 then 7 else a1.x + 10*a2.x + 100*a3.x
  + 1000*a4.x + 10000*a5.x end as k, a2.x + a3.x as v from a a1, a a2, a a3, a a4, a a5;
create table sk2 as select case when a1.x < 1 and a2.x < 1 then 7 else a1.x + 10*a2.x
  + 100*a3.x + 1000*a4.x end as k, a1.x as w from a a1, a a2, a a3, a a4;
set broadcast_threshold = '1KB'; set skew_threshold = '16KB';"
tables="create table a(x int);
insert into a values (0),(1),(2),(3),(4),(5),(6),(7),(8),(9);"
for q in "select count(*), sum(v), sum(w) from sk join sk2 on sk.k = sk2.k;" \
    "select count(*), sum(v), sum(w) from sk left join sk2 on sk.k = sk2.k + 1;" \
    "select count(*), sum(v) from sk where k in (select k from sk2 where w > 0);" \
    "select count(*), sum(v) from sk where k not in (select k from sk2 where w > 0);"; do
    on=$("$SLUICE" -c "$tables $skew $q")
    off=$("$SLUICE" -c "$tables $skew set adaptive_skew_join = off; $q")
    check "skew: same result with the rule on and off: $q" "$([ "$on" = "$off" ]; echo $?)"
    json=$("$SLUICE" -c "$tables $skew explain (analyze, format json) $q")
    check "skew: the source side is split: $q" \
        "$(echo "$json" | grep -q '"rule": "skew_split".*"side": "source"'; echo $?)"
done
q="select count(*), sum(v), sum(w) from sk full join sk2 on sk.k = sk2.k;"
json=$("$SLUICE" -c "$tables $skew explain (analyze, format json) $q")
check "skew: never splits a full join" "$([ "$(has "$json" skew_split)" -ne 0 ]; echo $?)"
json=$("$SLUICE" -c "$tables $skew set adaptive_skew_join = off; explain (analyze, format json)
  select count(*), sum(v), sum(w) from sk join sk2 on sk.k = sk2.k;")
check "skew: off when adaptive_skew_join is off" "$([ "$(has "$json" skew_split)" -ne 0 ]; echo $?)"
json=$("$SLUICE" -c "$tables $skew set adaptive_coalesce = off; explain (analyze, format json)
  select count(*), sum(v), sum(w) from sk join sk2 on sk.k = sk2.k;")
check "skew: splits with adaptive_coalesce off" \
    "$([ "$(has "$json" skew_split)" -eq 0 ] && [ "$(has "$json" coalesce)" -ne 0 ]; echo $?)"
# Each stage reports its tasks' summed and longest time.
check "skew: task times reported, longest within the sum" \
    "$(echo "$json" | python3 -c 'import json, sys
d = json.load(sys.stdin)
ok = all(0 < s["task_time_max_ms"] <= s["task_time_sum_ms"] + 1e-9 for s in d["stages"] if not s.get("skipped"))
sys.exit(not ok)'; echo $?)"

# Both sides skewed: key 7 holds half of s3 and 30% of s4 (4,000 rows each).
both="create table s3 as select case when a1.x < 5 then 7 else a1.x + 10*a2.x + 100*a3.x
  + 1000*a4.x end as k, a2.x as v from a a1, a a2, a a3, a a4 where a4.x < 4;
create table s4 as select case when a1.x < 3 then 7 else a1.x + 10*a2.x + 100*a3.x
  + 1000*a4.x end as k, a3.x as w from a a1, a a2, a a3, a a4 where a4.x < 4;
set broadcast_threshold = '1KB'; set skew_threshold = '4KB'; set skew_factor = 2;"
q="select count(*), sum(v), sum(w) from s3 join s4 on s3.k = s4.k;"
on=$("$SLUICE" -c "$tables $both $q")
off=$("$SLUICE" -c "$tables $both set adaptive = off; $q")
check "skew: same result with both sides split" "$([ "$on" = "$off" ]; echo $?)"
json=$("$SLUICE" -c "$tables $both explain (analyze, format json) $q")
check "skew: both sides split when both are skewed" \
    "$(echo "$json" | grep -q '"rule": "skew_split".*"side": "both"'; echo $?)"

# Errors of the rules reach the user: with the test-only setting debug_aqe_oom
# every allocation of the rules fails, and each rule that fires must fail its query.
fails() { # sql -> 0 when sluice exits non-zero with the rules' out-of-memory error
    local msg
    msg=$("$SLUICE" -c "$1" 2>&1 >/dev/null) && return 1
    echo "$msg" | grep -q 'out of memory in adaptive execution'
}
oom="set debug_aqe_oom = on;"
check "errors: broadcast rule's error reaches the user" \
    "$(fails "$setup $small $oom set adaptive_coalesce = off; $join"; echo $?)"
check "errors: coalesce rule's error reaches the user" "$(fails "$setup $oom $agg"; echo $?)"
check "errors: skew rule's error reaches the user" \
    "$(fails "$tables $skew $oom set adaptive_coalesce = off;
      select count(*), sum(v), sum(w) from sk join sk2 on sk.k = sk2.k;"; echo $?)"
on=$("$SLUICE" -c "$setup $oom set adaptive = off; $agg")
off=$("$SLUICE" -c "$setup set adaptive = off; $agg")
check "errors: nothing fails with adaptive off" "$([ -n "$on" ] && [ "$on" = "$off" ]; echo $?)"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
