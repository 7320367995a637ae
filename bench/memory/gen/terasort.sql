-- TeraSort input (DuckDB): tera_in of /work/shared/workloads/terasort.sql with @R@ rows
-- (10000000 at scale 1).  Keys are printable '0'..'z' without comma or quote.
COPY (
SELECT chr(48 + CAST(hash(i, 0) % 75 AS INTEGER)) || chr(48 + CAST(hash(i, 1) % 75 AS INTEGER)) || chr(48 + CAST(hash(i, 2) % 75 AS INTEGER)) || chr(48 + CAST(hash(i, 3) % 75 AS INTEGER)) || chr(48 + CAST(hash(i, 4) % 75 AS INTEGER)) || chr(48 + CAST(hash(i, 5) % 75 AS INTEGER)) || chr(48 + CAST(hash(i, 6) % 75 AS INTEGER)) || chr(48 + CAST(hash(i, 7) % 75 AS INTEGER)) || chr(48 + CAST(hash(i, 8) % 75 AS INTEGER)) || chr(48 + CAST(hash(i, 9) % 75 AS INTEGER)) AS k,
       lpad(to_hex(i), 32, '0') || '  ' || repeat(chr(65 + CAST(i % 26 AS INTEGER)), 56) AS payload
FROM generate_series(0, @R@ - 1) AS g(i)
) TO '@DIR@/tera_in.csv' (FORMAT csv, HEADER true);
