CREATE TABLE ev AS SELECT i AS id, (i * 7919) % 10000000 AS x, DATE '2000-01-01' + CAST((i * 31) % 9000 AS INTEGER) AS d FROM range(0, 2000000) t(i);
CREATE TABLE bins AS SELECT i AS bid, i * 100 AS lo, i * 100 + 59 AS hi FROM range(0, 100000) t(i);
CREATE TABLE periods AS SELECT i AS pid, DATE '2000-01-01' + CAST(i * 30 AS INTEGER) AS d0, DATE '2000-01-01' + CAST(i * 30 + 29 AS INTEGER) AS d1 FROM range(0, 300) t(i);
SELECT count(*), sum(bid) FROM ev JOIN bins ON ev.x BETWEEN bins.lo AND bins.hi;
SELECT pid, count(*) FROM ev JOIN periods ON ev.d >= periods.d0 AND ev.d <= periods.d1 GROUP BY pid ORDER BY 2 DESC, 1 LIMIT 3;
SELECT count(*) FROM ev JOIN bins ON ev.x > bins.hi AND bins.bid < 20;
SELECT count(*), sum(bid) FROM ev JOIN bins ON bins.lo BETWEEN ev.x - 50 AND ev.x + 50;
