-- lineitem with orders over a total price (a tenth), grouped
SELECT o_orderpriority, count(*), sum(l_quantity) FROM lineitem JOIN orders ON l_orderkey = o_orderkey WHERE o_totalprice > 300000 GROUP BY o_orderpriority ORDER BY 1;
