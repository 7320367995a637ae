-- partsupp with the small parts (a fifth)
SELECT count(*), sum(ps_supplycost) FROM partsupp JOIN part ON ps_partkey = p_partkey WHERE p_size < 10;
