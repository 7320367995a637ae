CREATE TABLE keys (i BIGINT, s VARCHAR, ls VARCHAR);
COPY keys FROM '@DIR@/keys.csv' (HEADER true);
CREATE TABLE g1 AS SELECT s, count(*) AS c FROM keys GROUP BY s;
CREATE TABLE g2 AS SELECT ls, count(*) AS c FROM keys GROUP BY ls;
SELECT count(*), sum(c), max(s) FROM g1;
SELECT count(*), sum(c), max(ls) FROM g2;
