-- WordCount job (both engines): /work/shared/workloads/wordcount.sql after the generation of
-- lines, which is loaded from the CSV that DuckDB wrote (bench/memory/gen/wordcount.sql).
CREATE TABLE lines (line_id BIGINT, line VARCHAR);
COPY lines FROM '@DIR@/wc_lines.csv' (HEADER true);
-- @job
-- @result
SELECT COUNT(*) AS n_lines, SUM(length(line) + 1) AS n_bytes FROM lines;
CREATE TABLE word_counts AS
SELECT word, COUNT(*) AS cnt
FROM (SELECT unnest(string_split(line, ' ')) AS word FROM lines) AS w
GROUP BY word;
-- @result
SELECT COUNT(*) AS distinct_words, SUM(cnt) AS total_words FROM word_counts;
-- @result
SELECT word, cnt FROM word_counts ORDER BY cnt DESC, word LIMIT 100;
