#!/usr/bin/env bash
# tpch_test.sh - checks tpch_gen and the 22 queries on Sluice at a tiny scale
# factor (CTest tpch, label bench; a few seconds, no DuckDB needed):
#   1. the same bytes for 1 and 2 threads, one '|'-terminated field per column;
#   2. the spec's rules, checked by SQL on the loaded data: row counts per SF,
#      sparse order keys, line numbers, the date derivations, the flags,
#      the retail price formula, the total price, and cross-table keys;
#   3. every query of bench/tpch/queries runs on Sluice and returns rows.
#   bench/tpch/tpch_test.sh build/tpch_gen build/sluice [SF]
set -euo pipefail
gen=$1
sluice=$2
sf=${3:-0.01}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "tpch_test: $*" >&2; exit 1; }

"$gen" --sf "$sf" --out "$tmp/a" --threads 1 2>/dev/null
"$gen" --sf "$sf" --out "$tmp/b" --threads 2 2>/dev/null
for f in "$tmp"/a/*.dat; do
  cmp "$f" "$tmp/b/$(basename "$f")" || fail "$(basename "$f") differs for 1 and 2 threads"
done

# table -> number of columns, from the CREATE TABLE blocks of schema.sql
awk '/^create table/ { t = $3; n = 0 }
     /^    [a-z_]+ / { n++ }
     /^\);/ && t { print t, n; t = "" }' "$here/schema.sql" > "$tmp/columns"
[ "$(wc -l < "$tmp/columns")" -eq 8 ] || fail "schema.sql: expected 8 tables"
while read -r table n; do
  f="$tmp/a/$table.dat"
  [ -s "$f" ] || fail "$table.dat missing or empty"
  bad=$(awk -F'|' -v n="$n" 'NF != n + 1 || $NF != "" { print NR; exit }' "$f")
  [ -z "$bad" ] || fail "$table.dat line $bad: not $n '|'-terminated fields"
done < "$tmp/columns"

# Expected cardinalities (clause 4.2.5): SF x 10,000 suppliers, 200,000 parts,
# 150,000 customers, 1,500,000 orders, 1..7 lines per order.
read -r n_supp n_part n_cust n_ord max_key < <(awk -v sf="$sf" 'BEGIN {
  o = int(sf * 1500000 + 0.5); i = o - 1
  printf "%d %d %d %d %d\n", int(sf * 10000 + 0.5), int(sf * 200000 + 0.5),
         int(sf * 150000 + 0.5), o, int(i / 8) * 32 + i % 8 + 1 }')

# Each check prints its name and a value; the expected value follows the name.
{
  cat "$here/schema.sql"
  for t in region nation supplier customer part partsupp orders lineitem; do
    echo "COPY $t FROM '$tmp/a/$t.dat' (DELIMITER '|');"
  done
  cat <<SQL
select 'region=5', count(*) from region;
select 'nation=25', count(*) from nation;
select 'nations_per_region=5', min(c) from (select count(*) c from nation group by n_regionkey) x;
select 'supplier=$n_supp', count(*) from supplier;
select 'customer=$n_cust', count(*) from customer;
select 'part=$n_part', count(*) from part;
select 'partsupp=$((4 * n_part))', count(*) from partsupp;
select 'partsupp_pairs=$((4 * n_part))', count(*) from (select ps_partkey, ps_suppkey from partsupp group by ps_partkey, ps_suppkey) x;
select 'orders=$n_ord', count(*) from orders;
select 'max_orderkey=$max_key', max(o_orderkey) from orders;
select 'sparse_keys=0', count(*) from orders where (o_orderkey - 1) % 32 >= 8;
select 'cust_mod3_orders=0', count(*) from orders where o_custkey % 3 = 0;
select 'lineitem_in_range=true', count(*) between $n_ord and $((7 * n_ord)) from lineitem;
select 'orders_with_lines=$n_ord', count(distinct l_orderkey) from lineitem;
select 'bad_linenumbers=0', count(*) from (select l_orderkey, count(*) c, min(l_linenumber) lo, max(l_linenumber) hi from lineitem group by l_orderkey) x where lo <> 1 or hi <> c or c > 7;
select 'orderdate_range=0', count(*) from orders where o_orderdate < date '1992-01-01' or o_orderdate > date '1998-08-02';
select 'ship_commit_receipt=0', count(*) from lineitem, orders where l_orderkey = o_orderkey and (l_shipdate - o_orderdate not between 1 and 121 or l_commitdate - o_orderdate not between 30 and 90 or l_receiptdate - l_shipdate not between 1 and 30);
select 'returnflag=0', count(*) from lineitem where (l_receiptdate <= date '1995-06-17' and l_returnflag not in ('R', 'A')) or (l_receiptdate > date '1995-06-17' and l_returnflag <> 'N');
select 'linestatus=0', count(*) from lineitem where (l_shipdate > date '1995-06-17') <> (l_linestatus = 'O');
select 'orderstatus=0', count(*) from orders, (select l_orderkey, sum(case when l_linestatus = 'O' then 1 else 0 end) n_o, count(*) n from lineitem group by l_orderkey) x where o_orderkey = l_orderkey and o_orderstatus <> case when n_o = n then 'O' when n_o = 0 then 'F' else 'P' end;
select 'totalprice=0', count(*) from orders, (select l_orderkey, sum(round(l_extendedprice * (1 + l_tax) * (1 - l_discount), 2)) t from lineitem group by l_orderkey) x where o_orderkey = l_orderkey and abs(o_totalprice - t) > 0.01 * 7;
select 'retailprice=0', count(*) from part where p_retailprice * 100 <> 90000 + (p_partkey / 10) % 20001 + 100 * (p_partkey % 1000);
select 'extendedprice=0', count(*) from lineitem, part where l_partkey = p_partkey and l_extendedprice <> l_quantity * p_retailprice;
select 'line_not_in_partsupp=0', count(*) from lineitem left join partsupp on l_partkey = ps_partkey and l_suppkey = ps_suppkey where ps_partkey is null;
select 'quantity_discount_tax=0', count(*) from lineitem where l_quantity not between 1 and 50 or l_discount not between 0 and 0.1 or l_tax not between 0 and 0.08;
select 'phone_country=0', count(*) from customer where substring(c_phone from 1 for 2) <> cast(c_nationkey + 10 as varchar);
select 'complaints_in_range=true', count(*) between $((n_supp / 2000)) and $(((n_supp + 1999) / 2000)) from supplier where s_comment like '%Customer%Complaints%';
select 'part_size_brand=0', count(*) from part where p_size not between 1 and 50 or substring(p_brand from 7 for 1) <> substring(p_mfgr from 14 for 1);
SQL
} > "$tmp/checks.sql"
"$sluice" < "$tmp/checks.sql" > "$tmp/checks.out" 2>&1 || fail "sluice failed on the checks"
! grep -m1 '^Error' "$tmp/checks.out" || fail "a check did not run"
awk -F'\t' '{ split($1, kv, "="); if (kv[2] != $2) { print "check " kv[1] ": " $2 ", want " kv[2]; bad = 1 } }
            END { exit bad }' "$tmp/checks.out" >&2 || fail "the data breaks the spec's rules"
n_checks=$(grep -c . "$tmp/checks.out")

# The 22 queries (Q11's FRACTION = 0.0001 / SF), each after a marker row.
{
  cat "$here/schema.sql"
  for t in region nation supplier customer part partsupp orders lineitem; do
    echo "COPY $t FROM '$tmp/a/$t.dat' (DELIMITER '|');"
  done
  fraction=$(awk -v sf="$sf" 'BEGIN { printf "%.10f", 0.0001 / sf }')
  for q in "$here"/queries/q*.sql; do
    echo "select '@@ $(basename "$q" .sql)';"
    sed "s/{{FRACTION}}/$fraction/" "$q"
  done
} > "$tmp/queries.sql"
"$sluice" < "$tmp/queries.sql" > "$tmp/queries.out" 2>&1 || fail "sluice failed on the queries"
! grep -m1 -B1 '^Error' "$tmp/queries.out" || fail "a query failed"
awk '/^@@ q/ { q = $2; n[q] = 0; order[++k] = q; next } q { n[q]++ }
     END { for (i = 1; i <= k; i++) if (n[order[i]] == 0) { print order[i] ": no rows"; bad = 1 }
           if (k != 22) { print k " queries, want 22"; bad = 1 }
           exit bad }' "$tmp/queries.out" >&2 || fail "a query returned no rows"
echo "tpch_test: SF $sf: same bytes for 1 and 2 threads, $n_checks spec checks hold, 22 queries return rows"
