-- Sluice version of terasort.sql of the seed workloads (../shared/workloads/terasort.sql beside the
-- repository, written for DuckDB; see bench/workloads/README.md).  Differences, and why:
-- - every `hash(a) % n` is written `((hash(a) % n) + n) % n` (12 places): Sluice's hash()
--   is a signed BIGINT (DuckDB's is UBIGINT; docs/conformance.md), so `hash(a) % n` can be
--   negative, and the non-negative modulo keeps each draw in [0, n) as the original means.
--   (The two checksums would agree without it; it is kept so that every hash draw reads the
--   same as in the other scripts.)
-- Sizes: 10,000,000 rows and 1,000,000,000 bytes whatever hash() gives; the keys, the
-- checksum and so the output file differ from DuckDB's.  The original fails on Sluice: a key
-- char draw 48 + (negative remainder) is no code point ("invalid UTF-8 code point -10").
-- The validation runs as written: row_number() OVER () numbers the file's rows in file
-- order, as in DuckDB, also when the window's 1 GB gather spills shuffle blocks (0 rows out
-- of order at c90568f; 2 of 10M before the shuffle reader kept push order after a spill).

-- TeraSort.  10000000 rows of (10-byte key, 90-byte payload) ~ 1 GB as in
-- gensort -a: key = 10 printable chars ('0'..'z', no comma/quote, so the CSV
-- needs no quoting), payload = 32 hex digits of the row id, 2 spaces, 56 filler.
CREATE TABLE tera_in AS
SELECT chr(48 + CAST(((hash(i, 0) % 75) + 75) % 75 AS INTEGER)) || chr(48 + CAST(((hash(i, 1) % 75) + 75) % 75 AS INTEGER)) || chr(48 + CAST(((hash(i, 2) % 75) + 75) % 75 AS INTEGER)) || chr(48 + CAST(((hash(i, 3) % 75) + 75) % 75 AS INTEGER)) || chr(48 + CAST(((hash(i, 4) % 75) + 75) % 75 AS INTEGER)) || chr(48 + CAST(((hash(i, 5) % 75) + 75) % 75 AS INTEGER)) || chr(48 + CAST(((hash(i, 6) % 75) + 75) % 75 AS INTEGER)) || chr(48 + CAST(((hash(i, 7) % 75) + 75) % 75 AS INTEGER)) || chr(48 + CAST(((hash(i, 8) % 75) + 75) % 75 AS INTEGER)) || chr(48 + CAST(((hash(i, 9) % 75) + 75) % 75 AS INTEGER)) AS k,
       lpad(to_hex(i), 32, '0') || '  ' || repeat(chr(65 + CAST(i % 26 AS INTEGER)), 56) AS payload
FROM generate_series(0, 9999999) AS g(i);

-- input size and checksum (TeraValidate-style: order-independent sum of row hashes)
SELECT COUNT(*) AS n_rows, SUM(length(k) + length(payload)) AS n_bytes,
       SUM(((hash(k, payload) % 1000000007) + 1000000007) % 1000000007) AS checksum
FROM tera_in;

-- the sort, written to a file (path relative to the working directory)
COPY (SELECT k, payload FROM tera_in ORDER BY k) TO 'terasort_out.csv' (FORMAT csv, HEADER false);

-- validate the file: read it back, every key >= the previous one; same rows, same checksum.
-- row_number() OVER () numbers rows in file order (DuckDB documents that an empty
-- OVER () and a single-table scan keep the original row order).
SELECT COUNT(*) AS n_rows,
       SUM(CASE WHEN prev_k > k THEN 1 ELSE 0 END) AS out_of_order,
       SUM(((hash(k, payload) % 1000000007) + 1000000007) % 1000000007) AS checksum
FROM (SELECT k, payload, LAG(k) OVER (ORDER BY rn) AS prev_k
      FROM (SELECT k, payload, row_number() OVER () AS rn
            FROM read_csv('terasort_out.csv', header = false, delim = ',', quote = '"',
                          columns = {'k': 'VARCHAR', 'payload': 'VARCHAR'})) AS f) AS t;
