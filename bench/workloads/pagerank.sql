-- Sluice version of pagerank.sql of the seed workloads (../shared/workloads/pagerank.sql beside the
-- repository, written for DuckDB; see bench/workloads/README.md).  Differences, and why:
-- - every `hash(a) % n` is written `((hash(a) % n) + n) % n` (2 places): Sluice's hash()
--   is a signed BIGINT (DuckDB's is UBIGINT; docs/conformance.md), so `hash(a) % n` can be
--   negative, and the non-negative modulo keeps each draw in [0, n) as the original means.
-- - form 3 (WITH RECURSIVE ... USING KEY) is left out, and so is its 'key' row of the final
--   agreement query: USING KEY is a DuckDB extension Sluice lacks.  Forms 1 and 2 still run and
--   are compared.
-- Sizes: 1,000,000 vertices whatever hash() gives; the edges (10.1M in the README), the
-- dangling vertices, the degrees (max in-degree 364k) and the ranks depend on the hash values.

-- PageRank, 10 iterations, damping 0.85, dangling mass spread uniformly.
-- Power-law graph: 1000000 vertices, ~10500000 candidate edges (duplicates and self-loops
-- dropped).  Out-degree ~ x^-0.5, in-degree ~ 1/x (Zipf), ranks scrambled by
-- a multiplicative permutation so the hubs are spread over the id space.
CREATE TABLE edges AS
SELECT DISTINCT src, dst FROM (
  SELECT ((CAST(floor(power(999.0 * ((((hash(i, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) + 1.0, 2)) AS BIGINT) - 1) * 999983 + 12345) % 1000000 AS src,
         ((CAST(floor(exp(((((hash(i, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) * ln(1000001.0))) AS BIGINT) - 1) * 999979 + 777777) % 1000000 AS dst
  FROM generate_series(1, 10500000) AS g(i)) AS c
WHERE src <> dst;

CREATE TABLE vertices AS
SELECT g.id, COALESCE(d.outdeg, 0) AS outdeg
FROM generate_series(0, 999999) AS g(id)
LEFT JOIN (SELECT src, COUNT(*) AS outdeg FROM edges GROUP BY src) AS d ON d.src = g.id;

CREATE TABLE edges_w AS
SELECT e.src, e.dst, 1.0e0 / v.outdeg AS w FROM edges e JOIN vertices v ON v.id = e.src;

SELECT (SELECT COUNT(*) FROM vertices) AS n_vertices, (SELECT COUNT(*) FROM edges_w) AS n_edges,
       (SELECT COUNT(*) FROM vertices WHERE outdeg = 0) AS n_dangling,
       (SELECT MAX(c) FROM (SELECT COUNT(*) AS c FROM edges GROUP BY dst) AS x) AS max_indeg,
       (SELECT MAX(outdeg) FROM vertices) AS max_outdeg;

-- ===== form 1: unrolled batch script, one CREATE TABLE per iteration =====
CREATE TABLE ranks_0 AS SELECT id, 1.0e0 / 1000000 AS rank FROM vertices;

CREATE TABLE ranks_1 AS
SELECT v.id, 0.15e0 / 1000000 + 0.85e0 * (COALESCE(c.s, 0) + d.m / 1000000) AS rank
FROM vertices v
LEFT JOIN (SELECT e.dst, SUM(r.rank * e.w) AS s
           FROM edges_w e JOIN ranks_0 r ON r.id = e.src
           GROUP BY e.dst) AS c ON c.dst = v.id
CROSS JOIN (SELECT COALESCE(SUM(r.rank), 0) AS m
            FROM ranks_0 r JOIN vertices v2 ON v2.id = r.id
            WHERE v2.outdeg = 0) AS d;
DROP TABLE ranks_0;

CREATE TABLE ranks_2 AS
SELECT v.id, 0.15e0 / 1000000 + 0.85e0 * (COALESCE(c.s, 0) + d.m / 1000000) AS rank
FROM vertices v
LEFT JOIN (SELECT e.dst, SUM(r.rank * e.w) AS s
           FROM edges_w e JOIN ranks_1 r ON r.id = e.src
           GROUP BY e.dst) AS c ON c.dst = v.id
CROSS JOIN (SELECT COALESCE(SUM(r.rank), 0) AS m
            FROM ranks_1 r JOIN vertices v2 ON v2.id = r.id
            WHERE v2.outdeg = 0) AS d;
DROP TABLE ranks_1;

CREATE TABLE ranks_3 AS
SELECT v.id, 0.15e0 / 1000000 + 0.85e0 * (COALESCE(c.s, 0) + d.m / 1000000) AS rank
FROM vertices v
LEFT JOIN (SELECT e.dst, SUM(r.rank * e.w) AS s
           FROM edges_w e JOIN ranks_2 r ON r.id = e.src
           GROUP BY e.dst) AS c ON c.dst = v.id
CROSS JOIN (SELECT COALESCE(SUM(r.rank), 0) AS m
            FROM ranks_2 r JOIN vertices v2 ON v2.id = r.id
            WHERE v2.outdeg = 0) AS d;
DROP TABLE ranks_2;

CREATE TABLE ranks_4 AS
SELECT v.id, 0.15e0 / 1000000 + 0.85e0 * (COALESCE(c.s, 0) + d.m / 1000000) AS rank
FROM vertices v
LEFT JOIN (SELECT e.dst, SUM(r.rank * e.w) AS s
           FROM edges_w e JOIN ranks_3 r ON r.id = e.src
           GROUP BY e.dst) AS c ON c.dst = v.id
CROSS JOIN (SELECT COALESCE(SUM(r.rank), 0) AS m
            FROM ranks_3 r JOIN vertices v2 ON v2.id = r.id
            WHERE v2.outdeg = 0) AS d;
DROP TABLE ranks_3;

CREATE TABLE ranks_5 AS
SELECT v.id, 0.15e0 / 1000000 + 0.85e0 * (COALESCE(c.s, 0) + d.m / 1000000) AS rank
FROM vertices v
LEFT JOIN (SELECT e.dst, SUM(r.rank * e.w) AS s
           FROM edges_w e JOIN ranks_4 r ON r.id = e.src
           GROUP BY e.dst) AS c ON c.dst = v.id
CROSS JOIN (SELECT COALESCE(SUM(r.rank), 0) AS m
            FROM ranks_4 r JOIN vertices v2 ON v2.id = r.id
            WHERE v2.outdeg = 0) AS d;
DROP TABLE ranks_4;

CREATE TABLE ranks_6 AS
SELECT v.id, 0.15e0 / 1000000 + 0.85e0 * (COALESCE(c.s, 0) + d.m / 1000000) AS rank
FROM vertices v
LEFT JOIN (SELECT e.dst, SUM(r.rank * e.w) AS s
           FROM edges_w e JOIN ranks_5 r ON r.id = e.src
           GROUP BY e.dst) AS c ON c.dst = v.id
CROSS JOIN (SELECT COALESCE(SUM(r.rank), 0) AS m
            FROM ranks_5 r JOIN vertices v2 ON v2.id = r.id
            WHERE v2.outdeg = 0) AS d;
DROP TABLE ranks_5;

CREATE TABLE ranks_7 AS
SELECT v.id, 0.15e0 / 1000000 + 0.85e0 * (COALESCE(c.s, 0) + d.m / 1000000) AS rank
FROM vertices v
LEFT JOIN (SELECT e.dst, SUM(r.rank * e.w) AS s
           FROM edges_w e JOIN ranks_6 r ON r.id = e.src
           GROUP BY e.dst) AS c ON c.dst = v.id
CROSS JOIN (SELECT COALESCE(SUM(r.rank), 0) AS m
            FROM ranks_6 r JOIN vertices v2 ON v2.id = r.id
            WHERE v2.outdeg = 0) AS d;
DROP TABLE ranks_6;

CREATE TABLE ranks_8 AS
SELECT v.id, 0.15e0 / 1000000 + 0.85e0 * (COALESCE(c.s, 0) + d.m / 1000000) AS rank
FROM vertices v
LEFT JOIN (SELECT e.dst, SUM(r.rank * e.w) AS s
           FROM edges_w e JOIN ranks_7 r ON r.id = e.src
           GROUP BY e.dst) AS c ON c.dst = v.id
CROSS JOIN (SELECT COALESCE(SUM(r.rank), 0) AS m
            FROM ranks_7 r JOIN vertices v2 ON v2.id = r.id
            WHERE v2.outdeg = 0) AS d;
DROP TABLE ranks_7;

CREATE TABLE ranks_9 AS
SELECT v.id, 0.15e0 / 1000000 + 0.85e0 * (COALESCE(c.s, 0) + d.m / 1000000) AS rank
FROM vertices v
LEFT JOIN (SELECT e.dst, SUM(r.rank * e.w) AS s
           FROM edges_w e JOIN ranks_8 r ON r.id = e.src
           GROUP BY e.dst) AS c ON c.dst = v.id
CROSS JOIN (SELECT COALESCE(SUM(r.rank), 0) AS m
            FROM ranks_8 r JOIN vertices v2 ON v2.id = r.id
            WHERE v2.outdeg = 0) AS d;
DROP TABLE ranks_8;

CREATE TABLE ranks_10 AS
SELECT v.id, 0.15e0 / 1000000 + 0.85e0 * (COALESCE(c.s, 0) + d.m / 1000000) AS rank
FROM vertices v
LEFT JOIN (SELECT e.dst, SUM(r.rank * e.w) AS s
           FROM edges_w e JOIN ranks_9 r ON r.id = e.src
           GROUP BY e.dst) AS c ON c.dst = v.id
CROSS JOIN (SELECT COALESCE(SUM(r.rank), 0) AS m
            FROM ranks_9 r JOIN vertices v2 ON v2.id = r.id
            WHERE v2.outdeg = 0) AS d;
DROP TABLE ranks_9;

SELECT COUNT(*) AS n, SUM(rank) AS total_rank FROM ranks_10;
SELECT id, rank FROM ranks_10 ORDER BY rank DESC, id LIMIT 10;

-- ===== form 2: WITH RECURSIVE ... UNION ALL (aggregates in the recursive term;
-- the working table is referenced three times).  Keeps all 11 iterations.
CREATE TABLE ranks_rec AS
WITH RECURSIVE pr(id, it, rank) AS (
  SELECT id, 0, 1.0e0 / 1000000 FROM vertices
  UNION ALL
  SELECT p.id, p.it + 1, 0.15e0 / 1000000 + 0.85e0 * (COALESCE(c.s, 0) + d.m / 1000000)
  FROM pr p
  LEFT JOIN (SELECT e.dst, SUM(q.rank * e.w) AS s
             FROM pr q JOIN edges_w e ON e.src = q.id
             WHERE q.it < 10
             GROUP BY e.dst) AS c ON c.dst = p.id
  CROSS JOIN (SELECT COALESCE(SUM(q.rank), 0) AS m
              FROM pr q JOIN vertices v ON v.id = q.id
              WHERE q.it < 10 AND v.outdeg = 0) AS d
  WHERE p.it < 10
)
SELECT id, rank FROM pr WHERE it = 10;

-- the two forms agree?
SELECT 'rec' AS form, COUNT(*) AS n, MAX(ABS(a.rank - b.rank)) AS max_diff
FROM ranks_10 a JOIN ranks_rec b ON a.id = b.id;
