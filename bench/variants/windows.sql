CREATE TABLE w AS SELECT i, i % 1000 AS a, (i * 7919) % 100003 AS b, i * 0.5 AS x FROM range(4000000) t(i);
SELECT count(*), sum(r), sum(s), sum(l), sum(d) FROM (SELECT row_number() OVER (PARTITION BY a ORDER BY b, i) AS r, sum(x) OVER (PARTITION BY a ORDER BY b) AS s, lag(x) OVER (PARTITION BY a ORDER BY b, i) AS l, dense_rank() OVER (PARTITION BY a ORDER BY b) AS d FROM w) q;
