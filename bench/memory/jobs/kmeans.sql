-- K-means job (both engines): /work/shared/workloads/kmeans.sql after the generation of points
-- and cent_0, which are loaded from the CSVs that DuckDB wrote (bench/memory/gen/kmeans.sql).
CREATE TABLE points (id BIGINT, x1 DOUBLE, x2 DOUBLE, x3 DOUBLE, x4 DOUBLE, x5 DOUBLE, x6 DOUBLE, x7 DOUBLE, x8 DOUBLE, x9 DOUBLE, x10 DOUBLE, x11 DOUBLE, x12 DOUBLE, x13 DOUBLE, x14 DOUBLE, x15 DOUBLE, x16 DOUBLE, x17 DOUBLE, x18 DOUBLE, x19 DOUBLE, x20 DOUBLE);
COPY points FROM '@DIR@/km_points.csv' (HEADER true);
CREATE TABLE cent_0 (cid INTEGER, x1 DOUBLE, x2 DOUBLE, x3 DOUBLE, x4 DOUBLE, x5 DOUBLE, x6 DOUBLE, x7 DOUBLE, x8 DOUBLE, x9 DOUBLE, x10 DOUBLE, x11 DOUBLE, x12 DOUBLE, x13 DOUBLE, x14 DOUBLE, x15 DOUBLE, x16 DOUBLE, x17 DOUBLE, x18 DOUBLE, x19 DOUBLE, x20 DOUBLE);
COPY cent_0 FROM '@DIR@/km_cent_0.csv' (HEADER true);
-- @job
CREATE TABLE assign_1 AS
SELECT id, cid FROM (
  SELECT p.id, c.cid,
         row_number() OVER (PARTITION BY p.id ORDER BY (p.x1 - c.x1) * (p.x1 - c.x1) + (p.x2 - c.x2) * (p.x2 - c.x2) + (p.x3 - c.x3) * (p.x3 - c.x3) + (p.x4 - c.x4) * (p.x4 - c.x4) + (p.x5 - c.x5) * (p.x5 - c.x5) + (p.x6 - c.x6) * (p.x6 - c.x6) + (p.x7 - c.x7) * (p.x7 - c.x7) + (p.x8 - c.x8) * (p.x8 - c.x8) + (p.x9 - c.x9) * (p.x9 - c.x9) + (p.x10 - c.x10) * (p.x10 - c.x10) + (p.x11 - c.x11) * (p.x11 - c.x11) + (p.x12 - c.x12) * (p.x12 - c.x12) + (p.x13 - c.x13) * (p.x13 - c.x13) + (p.x14 - c.x14) * (p.x14 - c.x14) + (p.x15 - c.x15) * (p.x15 - c.x15) + (p.x16 - c.x16) * (p.x16 - c.x16) + (p.x17 - c.x17) * (p.x17 - c.x17) + (p.x18 - c.x18) * (p.x18 - c.x18) + (p.x19 - c.x19) * (p.x19 - c.x19) + (p.x20 - c.x20) * (p.x20 - c.x20), c.cid) AS rn
  FROM points p CROSS JOIN cent_0 c) AS t
WHERE rn = 1;
CREATE TABLE cent_1 AS
SELECT a.cid, AVG(p.x1) AS x1, AVG(p.x2) AS x2, AVG(p.x3) AS x3, AVG(p.x4) AS x4, AVG(p.x5) AS x5, AVG(p.x6) AS x6, AVG(p.x7) AS x7, AVG(p.x8) AS x8, AVG(p.x9) AS x9, AVG(p.x10) AS x10, AVG(p.x11) AS x11, AVG(p.x12) AS x12, AVG(p.x13) AS x13, AVG(p.x14) AS x14, AVG(p.x15) AS x15, AVG(p.x16) AS x16, AVG(p.x17) AS x17, AVG(p.x18) AS x18, AVG(p.x19) AS x19, AVG(p.x20) AS x20, COUNT(*) AS n
FROM points p JOIN assign_1 a ON a.id = p.id
GROUP BY a.cid;
DROP TABLE assign_1;
CREATE TABLE assign_2 AS
SELECT id, cid FROM (
  SELECT p.id, c.cid,
         row_number() OVER (PARTITION BY p.id ORDER BY (p.x1 - c.x1) * (p.x1 - c.x1) + (p.x2 - c.x2) * (p.x2 - c.x2) + (p.x3 - c.x3) * (p.x3 - c.x3) + (p.x4 - c.x4) * (p.x4 - c.x4) + (p.x5 - c.x5) * (p.x5 - c.x5) + (p.x6 - c.x6) * (p.x6 - c.x6) + (p.x7 - c.x7) * (p.x7 - c.x7) + (p.x8 - c.x8) * (p.x8 - c.x8) + (p.x9 - c.x9) * (p.x9 - c.x9) + (p.x10 - c.x10) * (p.x10 - c.x10) + (p.x11 - c.x11) * (p.x11 - c.x11) + (p.x12 - c.x12) * (p.x12 - c.x12) + (p.x13 - c.x13) * (p.x13 - c.x13) + (p.x14 - c.x14) * (p.x14 - c.x14) + (p.x15 - c.x15) * (p.x15 - c.x15) + (p.x16 - c.x16) * (p.x16 - c.x16) + (p.x17 - c.x17) * (p.x17 - c.x17) + (p.x18 - c.x18) * (p.x18 - c.x18) + (p.x19 - c.x19) * (p.x19 - c.x19) + (p.x20 - c.x20) * (p.x20 - c.x20), c.cid) AS rn
  FROM points p CROSS JOIN cent_1 c) AS t
WHERE rn = 1;
CREATE TABLE cent_2 AS
SELECT a.cid, AVG(p.x1) AS x1, AVG(p.x2) AS x2, AVG(p.x3) AS x3, AVG(p.x4) AS x4, AVG(p.x5) AS x5, AVG(p.x6) AS x6, AVG(p.x7) AS x7, AVG(p.x8) AS x8, AVG(p.x9) AS x9, AVG(p.x10) AS x10, AVG(p.x11) AS x11, AVG(p.x12) AS x12, AVG(p.x13) AS x13, AVG(p.x14) AS x14, AVG(p.x15) AS x15, AVG(p.x16) AS x16, AVG(p.x17) AS x17, AVG(p.x18) AS x18, AVG(p.x19) AS x19, AVG(p.x20) AS x20, COUNT(*) AS n
FROM points p JOIN assign_2 a ON a.id = p.id
GROUP BY a.cid;
DROP TABLE assign_2;
CREATE TABLE assign_3 AS
SELECT id, cid FROM (
  SELECT p.id, c.cid,
         row_number() OVER (PARTITION BY p.id ORDER BY (p.x1 - c.x1) * (p.x1 - c.x1) + (p.x2 - c.x2) * (p.x2 - c.x2) + (p.x3 - c.x3) * (p.x3 - c.x3) + (p.x4 - c.x4) * (p.x4 - c.x4) + (p.x5 - c.x5) * (p.x5 - c.x5) + (p.x6 - c.x6) * (p.x6 - c.x6) + (p.x7 - c.x7) * (p.x7 - c.x7) + (p.x8 - c.x8) * (p.x8 - c.x8) + (p.x9 - c.x9) * (p.x9 - c.x9) + (p.x10 - c.x10) * (p.x10 - c.x10) + (p.x11 - c.x11) * (p.x11 - c.x11) + (p.x12 - c.x12) * (p.x12 - c.x12) + (p.x13 - c.x13) * (p.x13 - c.x13) + (p.x14 - c.x14) * (p.x14 - c.x14) + (p.x15 - c.x15) * (p.x15 - c.x15) + (p.x16 - c.x16) * (p.x16 - c.x16) + (p.x17 - c.x17) * (p.x17 - c.x17) + (p.x18 - c.x18) * (p.x18 - c.x18) + (p.x19 - c.x19) * (p.x19 - c.x19) + (p.x20 - c.x20) * (p.x20 - c.x20), c.cid) AS rn
  FROM points p CROSS JOIN cent_2 c) AS t
WHERE rn = 1;
CREATE TABLE cent_3 AS
SELECT a.cid, AVG(p.x1) AS x1, AVG(p.x2) AS x2, AVG(p.x3) AS x3, AVG(p.x4) AS x4, AVG(p.x5) AS x5, AVG(p.x6) AS x6, AVG(p.x7) AS x7, AVG(p.x8) AS x8, AVG(p.x9) AS x9, AVG(p.x10) AS x10, AVG(p.x11) AS x11, AVG(p.x12) AS x12, AVG(p.x13) AS x13, AVG(p.x14) AS x14, AVG(p.x15) AS x15, AVG(p.x16) AS x16, AVG(p.x17) AS x17, AVG(p.x18) AS x18, AVG(p.x19) AS x19, AVG(p.x20) AS x20, COUNT(*) AS n
FROM points p JOIN assign_3 a ON a.id = p.id
GROUP BY a.cid;
DROP TABLE assign_3;
CREATE TABLE assign_4 AS
SELECT id, cid FROM (
  SELECT p.id, c.cid,
         row_number() OVER (PARTITION BY p.id ORDER BY (p.x1 - c.x1) * (p.x1 - c.x1) + (p.x2 - c.x2) * (p.x2 - c.x2) + (p.x3 - c.x3) * (p.x3 - c.x3) + (p.x4 - c.x4) * (p.x4 - c.x4) + (p.x5 - c.x5) * (p.x5 - c.x5) + (p.x6 - c.x6) * (p.x6 - c.x6) + (p.x7 - c.x7) * (p.x7 - c.x7) + (p.x8 - c.x8) * (p.x8 - c.x8) + (p.x9 - c.x9) * (p.x9 - c.x9) + (p.x10 - c.x10) * (p.x10 - c.x10) + (p.x11 - c.x11) * (p.x11 - c.x11) + (p.x12 - c.x12) * (p.x12 - c.x12) + (p.x13 - c.x13) * (p.x13 - c.x13) + (p.x14 - c.x14) * (p.x14 - c.x14) + (p.x15 - c.x15) * (p.x15 - c.x15) + (p.x16 - c.x16) * (p.x16 - c.x16) + (p.x17 - c.x17) * (p.x17 - c.x17) + (p.x18 - c.x18) * (p.x18 - c.x18) + (p.x19 - c.x19) * (p.x19 - c.x19) + (p.x20 - c.x20) * (p.x20 - c.x20), c.cid) AS rn
  FROM points p CROSS JOIN cent_3 c) AS t
WHERE rn = 1;
CREATE TABLE cent_4 AS
SELECT a.cid, AVG(p.x1) AS x1, AVG(p.x2) AS x2, AVG(p.x3) AS x3, AVG(p.x4) AS x4, AVG(p.x5) AS x5, AVG(p.x6) AS x6, AVG(p.x7) AS x7, AVG(p.x8) AS x8, AVG(p.x9) AS x9, AVG(p.x10) AS x10, AVG(p.x11) AS x11, AVG(p.x12) AS x12, AVG(p.x13) AS x13, AVG(p.x14) AS x14, AVG(p.x15) AS x15, AVG(p.x16) AS x16, AVG(p.x17) AS x17, AVG(p.x18) AS x18, AVG(p.x19) AS x19, AVG(p.x20) AS x20, COUNT(*) AS n
FROM points p JOIN assign_4 a ON a.id = p.id
GROUP BY a.cid;
DROP TABLE assign_4;
CREATE TABLE assign_5 AS
SELECT id, cid FROM (
  SELECT p.id, c.cid,
         row_number() OVER (PARTITION BY p.id ORDER BY (p.x1 - c.x1) * (p.x1 - c.x1) + (p.x2 - c.x2) * (p.x2 - c.x2) + (p.x3 - c.x3) * (p.x3 - c.x3) + (p.x4 - c.x4) * (p.x4 - c.x4) + (p.x5 - c.x5) * (p.x5 - c.x5) + (p.x6 - c.x6) * (p.x6 - c.x6) + (p.x7 - c.x7) * (p.x7 - c.x7) + (p.x8 - c.x8) * (p.x8 - c.x8) + (p.x9 - c.x9) * (p.x9 - c.x9) + (p.x10 - c.x10) * (p.x10 - c.x10) + (p.x11 - c.x11) * (p.x11 - c.x11) + (p.x12 - c.x12) * (p.x12 - c.x12) + (p.x13 - c.x13) * (p.x13 - c.x13) + (p.x14 - c.x14) * (p.x14 - c.x14) + (p.x15 - c.x15) * (p.x15 - c.x15) + (p.x16 - c.x16) * (p.x16 - c.x16) + (p.x17 - c.x17) * (p.x17 - c.x17) + (p.x18 - c.x18) * (p.x18 - c.x18) + (p.x19 - c.x19) * (p.x19 - c.x19) + (p.x20 - c.x20) * (p.x20 - c.x20), c.cid) AS rn
  FROM points p CROSS JOIN cent_4 c) AS t
WHERE rn = 1;
CREATE TABLE cent_5 AS
SELECT a.cid, AVG(p.x1) AS x1, AVG(p.x2) AS x2, AVG(p.x3) AS x3, AVG(p.x4) AS x4, AVG(p.x5) AS x5, AVG(p.x6) AS x6, AVG(p.x7) AS x7, AVG(p.x8) AS x8, AVG(p.x9) AS x9, AVG(p.x10) AS x10, AVG(p.x11) AS x11, AVG(p.x12) AS x12, AVG(p.x13) AS x13, AVG(p.x14) AS x14, AVG(p.x15) AS x15, AVG(p.x16) AS x16, AVG(p.x17) AS x17, AVG(p.x18) AS x18, AVG(p.x19) AS x19, AVG(p.x20) AS x20, COUNT(*) AS n
FROM points p JOIN assign_5 a ON a.id = p.id
GROUP BY a.cid;
DROP TABLE assign_5;
-- @result
SELECT cid, n, round(x1, 3) AS x1, round(x2, 3) AS x2 FROM cent_5 ORDER BY cid;
-- @result
SELECT SUM(d) AS sse, COUNT(*) AS n_points FROM (
  SELECT p.id, MIN((p.x1 - c.x1) * (p.x1 - c.x1) + (p.x2 - c.x2) * (p.x2 - c.x2) + (p.x3 - c.x3) * (p.x3 - c.x3) + (p.x4 - c.x4) * (p.x4 - c.x4) + (p.x5 - c.x5) * (p.x5 - c.x5) + (p.x6 - c.x6) * (p.x6 - c.x6) + (p.x7 - c.x7) * (p.x7 - c.x7) + (p.x8 - c.x8) * (p.x8 - c.x8) + (p.x9 - c.x9) * (p.x9 - c.x9) + (p.x10 - c.x10) * (p.x10 - c.x10) + (p.x11 - c.x11) * (p.x11 - c.x11) + (p.x12 - c.x12) * (p.x12 - c.x12) + (p.x13 - c.x13) * (p.x13 - c.x13) + (p.x14 - c.x14) * (p.x14 - c.x14) + (p.x15 - c.x15) * (p.x15 - c.x15) + (p.x16 - c.x16) * (p.x16 - c.x16) + (p.x17 - c.x17) * (p.x17 - c.x17) + (p.x18 - c.x18) * (p.x18 - c.x18) + (p.x19 - c.x19) * (p.x19 - c.x19) + (p.x20 - c.x20) * (p.x20 - c.x20)) AS d
  FROM points p CROSS JOIN cent_5 c
  GROUP BY p.id) AS t;
