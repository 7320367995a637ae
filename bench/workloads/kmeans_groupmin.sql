-- Sluice version of kmeans_groupmin.sql of the seed workloads (../shared/workloads/kmeans_groupmin.sql beside the
-- repository, written for DuckDB; see bench/workloads/README.md).  Differences, and why:
-- - every `hash(a) % n` is written `((hash(a) % n) + n) % n` (60 places): Sluice's hash()
--   is a signed BIGINT (DuckDB's is UBIGINT; docs/conformance.md), so `hash(a) % n` can be
--   negative, and the non-negative modulo keeps each draw in [0, n) as the original means.
-- Sizes: 2,000,000 points, k = 10, 5 iterations whatever hash() gives; the true centres, the
-- points, the initial centroids (the 10 smallest hash(id, 99), left as it is: an order, not a
-- draw), the final centroids and the SSE depend on the hash values.  The original fails on
-- Sluice: a negative Box-Muller draw u makes ln(1 - u) positive, and sqrt(-2 ln(1 - u)) an
-- error ("cannot take the square root of a negative number").

-- K-means, assignment by GROUP BY min + join (no window), (HiBench-style): 2000000 points, 20 dimensions, drawn around 5 centers
-- (uniform in [-10,10]^20) with Gaussian noise sigma=2 (Box-Muller on hash());
-- k = 10, 5 Lloyd iterations, unrolled; final SSE.
CREATE TABLE true_centers AS
SELECT c, 20.0e0 * ((((hash(c, 1, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x1, 20.0e0 * ((((hash(c, 2, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x2, 20.0e0 * ((((hash(c, 3, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x3, 20.0e0 * ((((hash(c, 4, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x4, 20.0e0 * ((((hash(c, 5, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x5, 20.0e0 * ((((hash(c, 6, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x6, 20.0e0 * ((((hash(c, 7, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x7, 20.0e0 * ((((hash(c, 8, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x8, 20.0e0 * ((((hash(c, 9, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x9, 20.0e0 * ((((hash(c, 10, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x10, 20.0e0 * ((((hash(c, 11, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x11, 20.0e0 * ((((hash(c, 12, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x12, 20.0e0 * ((((hash(c, 13, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x13, 20.0e0 * ((((hash(c, 14, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x14, 20.0e0 * ((((hash(c, 15, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x15, 20.0e0 * ((((hash(c, 16, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x16, 20.0e0 * ((((hash(c, 17, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x17, 20.0e0 * ((((hash(c, 18, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x18, 20.0e0 * ((((hash(c, 19, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x19, 20.0e0 * ((((hash(c, 20, 0) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) - 10.0 AS x20
FROM generate_series(0, 4) AS g(c);

CREATE TABLE points AS
SELECT i AS id, t.x1 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 1, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 1, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x1, t.x2 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 2, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 2, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x2, t.x3 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 3, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 3, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x3, t.x4 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 4, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 4, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x4, t.x5 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 5, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 5, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x5, t.x6 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 6, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 6, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x6, t.x7 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 7, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 7, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x7, t.x8 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 8, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 8, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x8, t.x9 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 9, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 9, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x9, t.x10 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 10, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 10, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x10, t.x11 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 11, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 11, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x11, t.x12 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 12, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 12, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x12, t.x13 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 13, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 13, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x13, t.x14 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 14, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 14, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x14, t.x15 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 15, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 15, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x15, t.x16 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 16, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 16, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x16, t.x17 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 17, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 17, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x17, t.x18 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 18, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 18, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x18, t.x19 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 19, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 19, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x19, t.x20 + 2.0e0 * sqrt(-2.0e0 * ln(1.0e0 - ((((hash(i, 20, 1) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0))) * cos(2.0e0 * pi() * ((((hash(i, 20, 2) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0)) AS x20
FROM generate_series(0, 1999999) AS g(i)
JOIN true_centers t ON t.c = i % 5;

-- initial centroids: the 10 points with the smallest hash(id, 99)
CREATE TABLE cent_0 AS
SELECT CAST(rn AS INTEGER) AS cid, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19, x20
FROM (SELECT p.*, row_number() OVER (ORDER BY hash(p.id, 99)) AS rn FROM points p) AS t
WHERE rn <= 10;

-- iteration 1: assign every point to its nearest centroid, then recompute centroids
CREATE TABLE assign_1 AS
WITH d AS (SELECT p.id, c.cid, (p.x1 - c.x1) * (p.x1 - c.x1) + (p.x2 - c.x2) * (p.x2 - c.x2) + (p.x3 - c.x3) * (p.x3 - c.x3) + (p.x4 - c.x4) * (p.x4 - c.x4) + (p.x5 - c.x5) * (p.x5 - c.x5) + (p.x6 - c.x6) * (p.x6 - c.x6) + (p.x7 - c.x7) * (p.x7 - c.x7) + (p.x8 - c.x8) * (p.x8 - c.x8) + (p.x9 - c.x9) * (p.x9 - c.x9) + (p.x10 - c.x10) * (p.x10 - c.x10) + (p.x11 - c.x11) * (p.x11 - c.x11) + (p.x12 - c.x12) * (p.x12 - c.x12) + (p.x13 - c.x13) * (p.x13 - c.x13) + (p.x14 - c.x14) * (p.x14 - c.x14) + (p.x15 - c.x15) * (p.x15 - c.x15) + (p.x16 - c.x16) * (p.x16 - c.x16) + (p.x17 - c.x17) * (p.x17 - c.x17) + (p.x18 - c.x18) * (p.x18 - c.x18) + (p.x19 - c.x19) * (p.x19 - c.x19) + (p.x20 - c.x20) * (p.x20 - c.x20) AS d
           FROM points p CROSS JOIN cent_0 c)
SELECT d.id, MIN(d.cid) AS cid
FROM d JOIN (SELECT id, MIN(d) AS md FROM d GROUP BY id) AS m ON m.id = d.id AND d.d = m.md
GROUP BY d.id;
CREATE TABLE cent_1 AS
SELECT a.cid, AVG(p.x1) AS x1, AVG(p.x2) AS x2, AVG(p.x3) AS x3, AVG(p.x4) AS x4, AVG(p.x5) AS x5, AVG(p.x6) AS x6, AVG(p.x7) AS x7, AVG(p.x8) AS x8, AVG(p.x9) AS x9, AVG(p.x10) AS x10, AVG(p.x11) AS x11, AVG(p.x12) AS x12, AVG(p.x13) AS x13, AVG(p.x14) AS x14, AVG(p.x15) AS x15, AVG(p.x16) AS x16, AVG(p.x17) AS x17, AVG(p.x18) AS x18, AVG(p.x19) AS x19, AVG(p.x20) AS x20, COUNT(*) AS n
FROM points p JOIN assign_1 a ON a.id = p.id
GROUP BY a.cid;
DROP TABLE assign_1;

-- iteration 2: assign every point to its nearest centroid, then recompute centroids
CREATE TABLE assign_2 AS
WITH d AS (SELECT p.id, c.cid, (p.x1 - c.x1) * (p.x1 - c.x1) + (p.x2 - c.x2) * (p.x2 - c.x2) + (p.x3 - c.x3) * (p.x3 - c.x3) + (p.x4 - c.x4) * (p.x4 - c.x4) + (p.x5 - c.x5) * (p.x5 - c.x5) + (p.x6 - c.x6) * (p.x6 - c.x6) + (p.x7 - c.x7) * (p.x7 - c.x7) + (p.x8 - c.x8) * (p.x8 - c.x8) + (p.x9 - c.x9) * (p.x9 - c.x9) + (p.x10 - c.x10) * (p.x10 - c.x10) + (p.x11 - c.x11) * (p.x11 - c.x11) + (p.x12 - c.x12) * (p.x12 - c.x12) + (p.x13 - c.x13) * (p.x13 - c.x13) + (p.x14 - c.x14) * (p.x14 - c.x14) + (p.x15 - c.x15) * (p.x15 - c.x15) + (p.x16 - c.x16) * (p.x16 - c.x16) + (p.x17 - c.x17) * (p.x17 - c.x17) + (p.x18 - c.x18) * (p.x18 - c.x18) + (p.x19 - c.x19) * (p.x19 - c.x19) + (p.x20 - c.x20) * (p.x20 - c.x20) AS d
           FROM points p CROSS JOIN cent_1 c)
SELECT d.id, MIN(d.cid) AS cid
FROM d JOIN (SELECT id, MIN(d) AS md FROM d GROUP BY id) AS m ON m.id = d.id AND d.d = m.md
GROUP BY d.id;
CREATE TABLE cent_2 AS
SELECT a.cid, AVG(p.x1) AS x1, AVG(p.x2) AS x2, AVG(p.x3) AS x3, AVG(p.x4) AS x4, AVG(p.x5) AS x5, AVG(p.x6) AS x6, AVG(p.x7) AS x7, AVG(p.x8) AS x8, AVG(p.x9) AS x9, AVG(p.x10) AS x10, AVG(p.x11) AS x11, AVG(p.x12) AS x12, AVG(p.x13) AS x13, AVG(p.x14) AS x14, AVG(p.x15) AS x15, AVG(p.x16) AS x16, AVG(p.x17) AS x17, AVG(p.x18) AS x18, AVG(p.x19) AS x19, AVG(p.x20) AS x20, COUNT(*) AS n
FROM points p JOIN assign_2 a ON a.id = p.id
GROUP BY a.cid;
DROP TABLE assign_2;

-- iteration 3: assign every point to its nearest centroid, then recompute centroids
CREATE TABLE assign_3 AS
WITH d AS (SELECT p.id, c.cid, (p.x1 - c.x1) * (p.x1 - c.x1) + (p.x2 - c.x2) * (p.x2 - c.x2) + (p.x3 - c.x3) * (p.x3 - c.x3) + (p.x4 - c.x4) * (p.x4 - c.x4) + (p.x5 - c.x5) * (p.x5 - c.x5) + (p.x6 - c.x6) * (p.x6 - c.x6) + (p.x7 - c.x7) * (p.x7 - c.x7) + (p.x8 - c.x8) * (p.x8 - c.x8) + (p.x9 - c.x9) * (p.x9 - c.x9) + (p.x10 - c.x10) * (p.x10 - c.x10) + (p.x11 - c.x11) * (p.x11 - c.x11) + (p.x12 - c.x12) * (p.x12 - c.x12) + (p.x13 - c.x13) * (p.x13 - c.x13) + (p.x14 - c.x14) * (p.x14 - c.x14) + (p.x15 - c.x15) * (p.x15 - c.x15) + (p.x16 - c.x16) * (p.x16 - c.x16) + (p.x17 - c.x17) * (p.x17 - c.x17) + (p.x18 - c.x18) * (p.x18 - c.x18) + (p.x19 - c.x19) * (p.x19 - c.x19) + (p.x20 - c.x20) * (p.x20 - c.x20) AS d
           FROM points p CROSS JOIN cent_2 c)
SELECT d.id, MIN(d.cid) AS cid
FROM d JOIN (SELECT id, MIN(d) AS md FROM d GROUP BY id) AS m ON m.id = d.id AND d.d = m.md
GROUP BY d.id;
CREATE TABLE cent_3 AS
SELECT a.cid, AVG(p.x1) AS x1, AVG(p.x2) AS x2, AVG(p.x3) AS x3, AVG(p.x4) AS x4, AVG(p.x5) AS x5, AVG(p.x6) AS x6, AVG(p.x7) AS x7, AVG(p.x8) AS x8, AVG(p.x9) AS x9, AVG(p.x10) AS x10, AVG(p.x11) AS x11, AVG(p.x12) AS x12, AVG(p.x13) AS x13, AVG(p.x14) AS x14, AVG(p.x15) AS x15, AVG(p.x16) AS x16, AVG(p.x17) AS x17, AVG(p.x18) AS x18, AVG(p.x19) AS x19, AVG(p.x20) AS x20, COUNT(*) AS n
FROM points p JOIN assign_3 a ON a.id = p.id
GROUP BY a.cid;
DROP TABLE assign_3;

-- iteration 4: assign every point to its nearest centroid, then recompute centroids
CREATE TABLE assign_4 AS
WITH d AS (SELECT p.id, c.cid, (p.x1 - c.x1) * (p.x1 - c.x1) + (p.x2 - c.x2) * (p.x2 - c.x2) + (p.x3 - c.x3) * (p.x3 - c.x3) + (p.x4 - c.x4) * (p.x4 - c.x4) + (p.x5 - c.x5) * (p.x5 - c.x5) + (p.x6 - c.x6) * (p.x6 - c.x6) + (p.x7 - c.x7) * (p.x7 - c.x7) + (p.x8 - c.x8) * (p.x8 - c.x8) + (p.x9 - c.x9) * (p.x9 - c.x9) + (p.x10 - c.x10) * (p.x10 - c.x10) + (p.x11 - c.x11) * (p.x11 - c.x11) + (p.x12 - c.x12) * (p.x12 - c.x12) + (p.x13 - c.x13) * (p.x13 - c.x13) + (p.x14 - c.x14) * (p.x14 - c.x14) + (p.x15 - c.x15) * (p.x15 - c.x15) + (p.x16 - c.x16) * (p.x16 - c.x16) + (p.x17 - c.x17) * (p.x17 - c.x17) + (p.x18 - c.x18) * (p.x18 - c.x18) + (p.x19 - c.x19) * (p.x19 - c.x19) + (p.x20 - c.x20) * (p.x20 - c.x20) AS d
           FROM points p CROSS JOIN cent_3 c)
SELECT d.id, MIN(d.cid) AS cid
FROM d JOIN (SELECT id, MIN(d) AS md FROM d GROUP BY id) AS m ON m.id = d.id AND d.d = m.md
GROUP BY d.id;
CREATE TABLE cent_4 AS
SELECT a.cid, AVG(p.x1) AS x1, AVG(p.x2) AS x2, AVG(p.x3) AS x3, AVG(p.x4) AS x4, AVG(p.x5) AS x5, AVG(p.x6) AS x6, AVG(p.x7) AS x7, AVG(p.x8) AS x8, AVG(p.x9) AS x9, AVG(p.x10) AS x10, AVG(p.x11) AS x11, AVG(p.x12) AS x12, AVG(p.x13) AS x13, AVG(p.x14) AS x14, AVG(p.x15) AS x15, AVG(p.x16) AS x16, AVG(p.x17) AS x17, AVG(p.x18) AS x18, AVG(p.x19) AS x19, AVG(p.x20) AS x20, COUNT(*) AS n
FROM points p JOIN assign_4 a ON a.id = p.id
GROUP BY a.cid;
DROP TABLE assign_4;

-- iteration 5: assign every point to its nearest centroid, then recompute centroids
CREATE TABLE assign_5 AS
WITH d AS (SELECT p.id, c.cid, (p.x1 - c.x1) * (p.x1 - c.x1) + (p.x2 - c.x2) * (p.x2 - c.x2) + (p.x3 - c.x3) * (p.x3 - c.x3) + (p.x4 - c.x4) * (p.x4 - c.x4) + (p.x5 - c.x5) * (p.x5 - c.x5) + (p.x6 - c.x6) * (p.x6 - c.x6) + (p.x7 - c.x7) * (p.x7 - c.x7) + (p.x8 - c.x8) * (p.x8 - c.x8) + (p.x9 - c.x9) * (p.x9 - c.x9) + (p.x10 - c.x10) * (p.x10 - c.x10) + (p.x11 - c.x11) * (p.x11 - c.x11) + (p.x12 - c.x12) * (p.x12 - c.x12) + (p.x13 - c.x13) * (p.x13 - c.x13) + (p.x14 - c.x14) * (p.x14 - c.x14) + (p.x15 - c.x15) * (p.x15 - c.x15) + (p.x16 - c.x16) * (p.x16 - c.x16) + (p.x17 - c.x17) * (p.x17 - c.x17) + (p.x18 - c.x18) * (p.x18 - c.x18) + (p.x19 - c.x19) * (p.x19 - c.x19) + (p.x20 - c.x20) * (p.x20 - c.x20) AS d
           FROM points p CROSS JOIN cent_4 c)
SELECT d.id, MIN(d.cid) AS cid
FROM d JOIN (SELECT id, MIN(d) AS md FROM d GROUP BY id) AS m ON m.id = d.id AND d.d = m.md
GROUP BY d.id;
CREATE TABLE cent_5 AS
SELECT a.cid, AVG(p.x1) AS x1, AVG(p.x2) AS x2, AVG(p.x3) AS x3, AVG(p.x4) AS x4, AVG(p.x5) AS x5, AVG(p.x6) AS x6, AVG(p.x7) AS x7, AVG(p.x8) AS x8, AVG(p.x9) AS x9, AVG(p.x10) AS x10, AVG(p.x11) AS x11, AVG(p.x12) AS x12, AVG(p.x13) AS x13, AVG(p.x14) AS x14, AVG(p.x15) AS x15, AVG(p.x16) AS x16, AVG(p.x17) AS x17, AVG(p.x18) AS x18, AVG(p.x19) AS x19, AVG(p.x20) AS x20, COUNT(*) AS n
FROM points p JOIN assign_5 a ON a.id = p.id
GROUP BY a.cid;
DROP TABLE assign_5;

SELECT cid, n, round(x1, 3) AS x1, round(x2, 3) AS x2 FROM cent_5 ORDER BY cid;

-- final SSE: squared distance of every point to its nearest final centroid
SELECT SUM(d) AS sse, COUNT(*) AS n_points FROM (
  SELECT p.id, MIN((p.x1 - c.x1) * (p.x1 - c.x1) + (p.x2 - c.x2) * (p.x2 - c.x2) + (p.x3 - c.x3) * (p.x3 - c.x3) + (p.x4 - c.x4) * (p.x4 - c.x4) + (p.x5 - c.x5) * (p.x5 - c.x5) + (p.x6 - c.x6) * (p.x6 - c.x6) + (p.x7 - c.x7) * (p.x7 - c.x7) + (p.x8 - c.x8) * (p.x8 - c.x8) + (p.x9 - c.x9) * (p.x9 - c.x9) + (p.x10 - c.x10) * (p.x10 - c.x10) + (p.x11 - c.x11) * (p.x11 - c.x11) + (p.x12 - c.x12) * (p.x12 - c.x12) + (p.x13 - c.x13) * (p.x13 - c.x13) + (p.x14 - c.x14) * (p.x14 - c.x14) + (p.x15 - c.x15) * (p.x15 - c.x15) + (p.x16 - c.x16) * (p.x16 - c.x16) + (p.x17 - c.x17) * (p.x17 - c.x17) + (p.x18 - c.x18) * (p.x18 - c.x18) + (p.x19 - c.x19) * (p.x19 - c.x19) + (p.x20 - c.x20) * (p.x20 - c.x20)) AS d
  FROM points p CROSS JOIN cent_5 c
  GROUP BY p.id) AS t;
