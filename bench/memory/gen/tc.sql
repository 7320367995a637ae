-- TC input (DuckDB): the tc_edges generation of /work/shared/workloads/tc.sql with
-- @V@ vertices, @C@ candidate edges, @E@ edges kept (25000 / 60000 / 50000 at scale 1).
CREATE TABLE tc_edges AS
SELECT src, dst FROM (
  SELECT src, dst, MIN(i) AS first_i FROM (
    SELECT i, CAST(hash(i, 1) % @V@ AS INTEGER) AS src, CAST(hash(i, 2) % @V@ AS INTEGER) AS dst
    FROM generate_series(1, @C@) AS g(i)) AS c
  WHERE src <> dst
  GROUP BY src, dst) AS d
ORDER BY first_i
LIMIT @E@;
COPY tc_edges TO '@DIR@/tc_edges.csv' (FORMAT csv, HEADER true);
