-- PageRank input (DuckDB): edges and vertices of /work/shared/workloads/pagerank.sql with
-- @N@ vertices and @C@ candidate edges (1000000 / 10500000 at scale 1); @SQ@ = sqrt(N) - 1
-- keeps the out-degree law of the original (999.0 at scale 1).
CREATE TABLE edges AS
SELECT DISTINCT src, dst FROM (
  SELECT ((CAST(floor(power(@SQ@ * ((hash(i, 1) % 1000000000) / 1000000000.0) + 1.0, 2)) AS BIGINT) - 1) * 999983 + 12345) % @N@ AS src,
         ((CAST(floor(exp(((hash(i, 2) % 1000000000) / 1000000000.0) * ln(@N@ + 1.0))) AS BIGINT) - 1) * 999979 + 777777) % @N@ AS dst
  FROM generate_series(1, @C@) AS g(i)) AS c
WHERE src <> dst;

CREATE TABLE vertices AS
SELECT g.id, COALESCE(d.outdeg, 0) AS outdeg
FROM generate_series(0, @N@ - 1) AS g(id)
LEFT JOIN (SELECT src, COUNT(*) AS outdeg FROM edges GROUP BY src) AS d ON d.src = g.id;

COPY (SELECT src, dst FROM edges ORDER BY src, dst) TO '@DIR@/pr_edges.csv' (FORMAT csv, HEADER true);
COPY (SELECT id, outdeg FROM vertices ORDER BY id) TO '@DIR@/pr_vertices.csv' (FORMAT csv, HEADER true);
