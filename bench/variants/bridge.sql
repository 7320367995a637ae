CREATE TABLE f AS SELECT i AS id, i % 1000 AS b1, (i * 7) % 1000 AS b2, (i * 13) % 100000 AS c, i % 97 AS amt FROM range(0, 4000000) t(i);
CREATE TABLE b1 AS SELECT i AS k, i % 10 AS v FROM range(0, 1000) t(i);
CREATE TABLE b2 AS SELECT i AS k, i % 10 AS v FROM range(0, 1000) t(i);
CREATE TABLE c AS SELECT i AS k, i % 1000 AS d FROM range(0, 100000) t(i);
CREATE TABLE d AS SELECT i AS k, i AS v, i % 100 AS e FROM range(0, 1000) t(i);
CREATE TABLE e AS SELECT i AS k, 'name' || i AS name FROM range(0, 100) t(i);
SELECT e.name, count(*), sum(f.amt) FROM f, b1, b2, c, d, e WHERE f.b1 = b1.k AND f.b2 = b2.k AND f.c = c.k AND c.d = d.k AND d.e = e.k AND b1.v < 8 AND b2.v < 8 AND d.v = 5 GROUP BY e.name ORDER BY 1;
SELECT e.name, count(*), sum(f.amt) FROM f, b1, b2, c, d, e WHERE f.b1 = b1.k AND f.b2 = b2.k AND f.c = c.k AND c.d = d.k AND d.e = e.k AND b1.v < 9 AND b2.v < 7 AND d.v BETWEEN 100 AND 119 GROUP BY e.name ORDER BY 1;
SELECT count(*), sum(f.amt) FROM f JOIN c ON f.c = c.k JOIN d ON c.d = d.k JOIN b1 ON f.b1 = b1.k JOIN e ON d.e = e.k WHERE b1.v <> 3 AND e.name = 'name7';
