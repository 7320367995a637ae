-- orders with the richest customers (a tenth)
SELECT c_mktsegment, count(*) FROM orders JOIN customer ON o_custkey = c_custkey WHERE c_acctbal > 9000 GROUP BY c_mktsegment ORDER BY 1;
