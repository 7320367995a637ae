-- WordCount input (DuckDB): vocab and lines of /work/shared/workloads/wordcount.sql with
-- @L@ lines (2400000 at scale 1); the vocabulary keeps its 50000 words.
CREATE TABLE vocab AS
SELECT w AS word_id,
       substr(md5(CAST(w AS VARCHAR)), 1, CAST(w % 5 AS INTEGER))
       || chr(103 + CAST(w % 20 AS INTEGER))
       || chr(103 + CAST(floor(w / 20.0) % 20 AS INTEGER))
       || chr(103 + CAST(floor(w / 400.0) % 20 AS INTEGER))
       || chr(103 + CAST(floor(w / 8000.0) % 20 AS INTEGER)) AS word
FROM generate_series(1, 50000) AS g(w);

COPY (
SELECT t.line_id, string_agg(v.word, ' ' ORDER BY t.pos) AS line
FROM (SELECT l.line_id, p.pos,
             LEAST(50000, CAST(floor(exp(((hash(l.line_id, p.pos) % 1000000000) / 1000000000.0) * ln(50001.0))) AS INTEGER)) AS word_id
      FROM generate_series(1, @L@) AS l(line_id)
      CROSS JOIN generate_series(1, 16) AS p(pos)
      WHERE p.pos <= 8 + hash(l.line_id) % 9) t
JOIN vocab v ON v.word_id = t.word_id
GROUP BY t.line_id
ORDER BY t.line_id
) TO '@DIR@/wc_lines.csv' (FORMAT csv, HEADER true);
