CREATE TABLE h AS SELECT i % 4 AS g, i % 100000 AS k, (i * 7919) % 1000003 AS v FROM range(4000000) t(i);
SELECT g, median(v), quantile_disc(v, 0.9), len(list(v)) FROM h GROUP BY g ORDER BY g;
SELECT count(*), sum(m) FROM (SELECT k, median(v) AS m FROM h GROUP BY k) q;
