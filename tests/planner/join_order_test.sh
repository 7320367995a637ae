#!/usr/bin/env bash
# join_order_test.sh - the join order bind_join.c picks, read from EXPLAIN, on
# crafted data where the old greedy order (the most selective dimension first,
# satellites of one level) is poor:
#   - a snowflake: the fact's supplier keeps a fifth of it only through its
#     nation and that nation's region, so region joins into nation and nation
#     into supplier (satellites of satellites) before the fact meets them;
#   - a cheaper probe first: a small build side that keeps a fifth goes before
#     a large one (a hash table past the caches) that keeps a sixth;
#   - a two-key build side after a one-key one that keeps a few more rows.
# Each answer is checked against the same question asked without joins.
#
# Usage: bash tests/planner/join_order_test.sh /path/to/sluice
set -u
if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: bash $0 /path/to/sluice" >&2
    exit 2
fi
SLUICE=$1
n_pass=0
n_fail=0

# f: 200,000 facts over ord's 400,000 keys (o) and sup's 1,000 (s).  sup's nation is s % 25,
# nat's region n % 5, one region named 'r0'.  ord: a day over 6 values, so day = 0 keeps a
# sixth: 66,667 rows, a hash table past 2 MiB.  (a, b): f's pairs, each one of pk's 2,000.
SETUP="CREATE TABLE reg AS SELECT i AS r, 'r' || CAST(i AS VARCHAR) AS name FROM range(5) t(i);
CREATE TABLE nat AS SELECT i AS n, i % 5 AS nr FROM range(25) t(i);
CREATE TABLE sup AS SELECT i AS s, i % 25 AS sn FROM range(1000) t(i);
CREATE TABLE ord AS SELECT i AS o, (i * 7) % 6 AS day FROM range(400000) t(i);
CREATE TABLE f AS SELECT (i * 7919) % 400000 AS o, i % 1000 AS s, i % 2000 AS a, i % 2000 % 3 AS b,
    i % 50 AS d FROM range(200000) t(i);
CREATE TABLE pk AS SELECT i AS a, i % 3 AS b, i % 100 AS w FROM range(2000) t(i);
CREATE TABLE dd AS SELECT i AS d, i % 10 AS m FROM range(50) t(i);"

# plan NAME SQL PATTERN...: EXPLAIN SQL has lines matching each PATTERN (grep -E), in order.
plan() {
    local name=$1 sql=$2 out rest ok=1
    shift 2
    out=$("$SLUICE" -c "$SETUP EXPLAIN $sql" 2>&1)
    rest=$out
    for p in "$@"; do
        local line
        line=$(printf '%s\n' "$rest" | grep -n -m1 -E -- "$p" | cut -d: -f1)
        if [ -z "$line" ]; then
            ok=0
            printf 'FAIL: %s: no line matching "%s" (in order) in\n%s\n' "$name" "$p" "$out"
            break
        fi
        rest=$(printf '%s\n' "$rest" | tail -n +"$((line + 1))")
    done
    if [ $ok -eq 1 ]; then n_pass=$((n_pass + 1)); else n_fail=$((n_fail + 1)); fi
}

# same NAME SQL1 SQL2: both give the same rows.
same() {
    local a b
    a=$("$SLUICE" -c "$SETUP $2" 2>&1)
    b=$("$SLUICE" -c "$SETUP $3" 2>&1)
    if [ "$a" = "$b" ] && [ -n "$a" ]; then
        n_pass=$((n_pass + 1))
    else
        n_fail=$((n_fail + 1))
        printf 'FAIL: %s: %s against %s\n' "$1" "$a" "$b"
    fi
}

SNOW="SELECT count(*) FROM f, ord, sup, nat, reg WHERE f.o = ord.o AND f.s = sup.s AND sup.sn = nat.n
    AND nat.nr = reg.r AND reg.name = 'r0' AND ord.day = 0"
# region into nation, nation into supplier, in a stage of their own; the fact meets them
# first (a 200-row table keeping a fifth), then ord (66,667 rows keeping a sixth)
plan "snowflake: satellites of satellites, the cheap probe first" "$SNOW" \
    "HASH_JOIN inner, broadcast, on nr = r" \
    "HASH_JOIN inner, broadcast, on sn = n" \
    "HASH_JOIN inner, .*on o = o" \
    "HASH_JOIN inner, broadcast, on s = s" \
    "TABLE_SCAN f "
same "snowflake: the answer" "$SNOW" \
    "SELECT count(*) FROM f WHERE s % 25 % 5 = 0 AND o IN (SELECT o FROM ord WHERE day = 0)"

# Two keys cost more to probe than one: dd (50 rows, keeps a tenth) before pk (2,000 pairs on
# two keys, keeps 5%: the more selective, not by enough).
MULTI="SELECT count(*) FROM f, pk, dd WHERE f.a = pk.a AND f.b = pk.b AND pk.w < 5 AND f.d = dd.d
    AND dd.m = 3"
plan "the one-key probe before the two-key one" "$MULTI" \
    "HASH_JOIN inner, broadcast, on a = a, b = b" \
    "HASH_JOIN inner, broadcast, on d = d" \
    "TABLE_SCAN f "
same "multi-key: the answer" "$MULTI" \
    "SELECT count(*) FROM f WHERE d % 10 = 3 AND (a, b) IN (SELECT a, b FROM pk WHERE w < 5)"

echo "$n_pass passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
