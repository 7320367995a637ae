-- TeraSort job (both engines): the sort of /work/shared/workloads/terasort.sql, written to
-- a CSV file.  tera_in is loaded from the CSV that DuckDB wrote (bench/memory/gen/terasort.sql).
-- The original validates with hash() and read_csv(), which Sluice lacks; the runner validates
-- each engine's output file instead (rows, keys in order, an order-independent checksum of
-- the rows equal to the input's), the same check for both engines.
CREATE TABLE tera_in (k VARCHAR, payload VARCHAR);
COPY tera_in FROM '@DIR@/tera_in.csv' (HEADER true);
-- @job
COPY (SELECT k, payload FROM tera_in ORDER BY k) TO '@OUT@/terasort_out.csv' (HEADER false);
