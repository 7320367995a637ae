-- lineitem IN orders with a comment pattern (a mark join: no filter)
SELECT count(*), sum(l_extendedprice) FROM lineitem WHERE l_orderkey IN (SELECT o_orderkey FROM orders WHERE o_comment LIKE '%special%requests%');
