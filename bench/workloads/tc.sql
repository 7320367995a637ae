-- Sluice version of tc.sql of the seed workloads (../shared/workloads/tc.sql beside the
-- repository, written for DuckDB; see bench/workloads/README.md).  Differences, and why:
-- - every `hash(a) % n` is written `((hash(a) % n) + n) % n` (2 places): Sluice's hash()
--   is a signed BIGINT (DuckDB's is UBIGINT; docs/conformance.md), so `hash(a) % n` can be
--   negative, and the non-negative modulo keeps each draw in [0, n) as the original means.
-- Sizes: 50,000 edges (LIMIT 50000 of 60,000 candidates, so this holds unless more than
-- 10,000 candidates are duplicates or self-loops); the pairs per round and at the end
-- (46,079,636 in the README) depend on the graph, so on the hash values.

-- Transitive closure, 25000 vertices, 50000 distinct random edges (no self-loops),
-- 10 iterations of semi-naive evaluation of  tc = E  U  tc o E
-- (the linear form Spark's SparkTC uses).  After iteration i, tc holds all pairs
-- joined by a path of length <= i+1.
CREATE TABLE tc_edges AS
SELECT src, dst FROM (
  SELECT src, dst, MIN(i) AS first_i FROM (
    SELECT i, CAST(((hash(i, 1) % 25000) + 25000) % 25000 AS INTEGER) AS src, CAST(((hash(i, 2) % 25000) + 25000) % 25000 AS INTEGER) AS dst
    FROM generate_series(1, 60000) AS g(i)) AS c
  WHERE src <> dst
  GROUP BY src, dst) AS d
ORDER BY first_i
LIMIT 50000;

CREATE TABLE tc_stats (iter INTEGER, new_pairs BIGINT, total_pairs BIGINT);
CREATE TABLE tc AS SELECT src, dst FROM tc_edges;
CREATE TABLE delta_0 AS SELECT src, dst FROM tc_edges;
INSERT INTO tc_stats SELECT 0, COUNT(*), COUNT(*) FROM tc;

CREATE TABLE delta_1 AS
SELECT d.src, e.dst FROM delta_0 d JOIN tc_edges e ON e.src = d.dst
EXCEPT
SELECT src, dst FROM tc;
INSERT INTO tc SELECT src, dst FROM delta_1;
INSERT INTO tc_stats SELECT 1, (SELECT COUNT(*) FROM delta_1), (SELECT COUNT(*) FROM tc);
DROP TABLE delta_0;

CREATE TABLE delta_2 AS
SELECT d.src, e.dst FROM delta_1 d JOIN tc_edges e ON e.src = d.dst
EXCEPT
SELECT src, dst FROM tc;
INSERT INTO tc SELECT src, dst FROM delta_2;
INSERT INTO tc_stats SELECT 2, (SELECT COUNT(*) FROM delta_2), (SELECT COUNT(*) FROM tc);
DROP TABLE delta_1;

CREATE TABLE delta_3 AS
SELECT d.src, e.dst FROM delta_2 d JOIN tc_edges e ON e.src = d.dst
EXCEPT
SELECT src, dst FROM tc;
INSERT INTO tc SELECT src, dst FROM delta_3;
INSERT INTO tc_stats SELECT 3, (SELECT COUNT(*) FROM delta_3), (SELECT COUNT(*) FROM tc);
DROP TABLE delta_2;

CREATE TABLE delta_4 AS
SELECT d.src, e.dst FROM delta_3 d JOIN tc_edges e ON e.src = d.dst
EXCEPT
SELECT src, dst FROM tc;
INSERT INTO tc SELECT src, dst FROM delta_4;
INSERT INTO tc_stats SELECT 4, (SELECT COUNT(*) FROM delta_4), (SELECT COUNT(*) FROM tc);
DROP TABLE delta_3;

CREATE TABLE delta_5 AS
SELECT d.src, e.dst FROM delta_4 d JOIN tc_edges e ON e.src = d.dst
EXCEPT
SELECT src, dst FROM tc;
INSERT INTO tc SELECT src, dst FROM delta_5;
INSERT INTO tc_stats SELECT 5, (SELECT COUNT(*) FROM delta_5), (SELECT COUNT(*) FROM tc);
DROP TABLE delta_4;

CREATE TABLE delta_6 AS
SELECT d.src, e.dst FROM delta_5 d JOIN tc_edges e ON e.src = d.dst
EXCEPT
SELECT src, dst FROM tc;
INSERT INTO tc SELECT src, dst FROM delta_6;
INSERT INTO tc_stats SELECT 6, (SELECT COUNT(*) FROM delta_6), (SELECT COUNT(*) FROM tc);
DROP TABLE delta_5;

CREATE TABLE delta_7 AS
SELECT d.src, e.dst FROM delta_6 d JOIN tc_edges e ON e.src = d.dst
EXCEPT
SELECT src, dst FROM tc;
INSERT INTO tc SELECT src, dst FROM delta_7;
INSERT INTO tc_stats SELECT 7, (SELECT COUNT(*) FROM delta_7), (SELECT COUNT(*) FROM tc);
DROP TABLE delta_6;

CREATE TABLE delta_8 AS
SELECT d.src, e.dst FROM delta_7 d JOIN tc_edges e ON e.src = d.dst
EXCEPT
SELECT src, dst FROM tc;
INSERT INTO tc SELECT src, dst FROM delta_8;
INSERT INTO tc_stats SELECT 8, (SELECT COUNT(*) FROM delta_8), (SELECT COUNT(*) FROM tc);
DROP TABLE delta_7;

CREATE TABLE delta_9 AS
SELECT d.src, e.dst FROM delta_8 d JOIN tc_edges e ON e.src = d.dst
EXCEPT
SELECT src, dst FROM tc;
INSERT INTO tc SELECT src, dst FROM delta_9;
INSERT INTO tc_stats SELECT 9, (SELECT COUNT(*) FROM delta_9), (SELECT COUNT(*) FROM tc);
DROP TABLE delta_8;

CREATE TABLE delta_10 AS
SELECT d.src, e.dst FROM delta_9 d JOIN tc_edges e ON e.src = d.dst
EXCEPT
SELECT src, dst FROM tc;
INSERT INTO tc SELECT src, dst FROM delta_10;
INSERT INTO tc_stats SELECT 10, (SELECT COUNT(*) FROM delta_10), (SELECT COUNT(*) FROM tc);
DROP TABLE delta_9;

SELECT iter, new_pairs, total_pairs FROM tc_stats ORDER BY iter;
SELECT COUNT(*) AS final_pairs, COUNT(DISTINCT src) AS n_src FROM tc;
