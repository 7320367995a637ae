-- lineitem with orders of one year and one priority (a thirty-fifth of the orders)
SELECT count(*), sum(l_extendedprice) FROM lineitem JOIN orders ON l_orderkey = o_orderkey WHERE o_orderdate BETWEEN DATE '1995-01-01' AND DATE '1995-12-31' AND o_orderpriority = '1-URGENT';
