-- WordCount job, Sluice version of jobs/wordcount.sql.  What differs and why: Sluice has no
-- string_split() and no unnest(), so the split (the flatMap) is a WITH RECURSIVE that peels
-- one word off each line per round with strpos/substr (a line has at most 16 words, so at
-- most 16 rounds).  The grouping, the counts and the result queries are the same.
CREATE TABLE lines (line_id BIGINT, line VARCHAR);
COPY lines FROM '@DIR@/wc_lines.csv' (HEADER true);
-- @job
-- @result
SELECT COUNT(*) AS n_lines, SUM(length(line) + 1) AS n_bytes FROM lines;
CREATE TABLE word_counts AS
WITH RECURSIVE split(word, rest) AS (
  SELECT CASE WHEN strpos(line, ' ') = 0 THEN line ELSE substr(line, 1, strpos(line, ' ') - 1) END,
         CASE WHEN strpos(line, ' ') = 0 THEN NULL ELSE substr(line, strpos(line, ' ') + 1) END
  FROM lines
  UNION ALL
  SELECT CASE WHEN strpos(rest, ' ') = 0 THEN rest ELSE substr(rest, 1, strpos(rest, ' ') - 1) END,
         CASE WHEN strpos(rest, ' ') = 0 THEN NULL ELSE substr(rest, strpos(rest, ' ') + 1) END
  FROM split
  WHERE rest IS NOT NULL
)
SELECT word, COUNT(*) AS cnt
FROM split
GROUP BY word;
-- @result
SELECT COUNT(*) AS distinct_words, SUM(cnt) AS total_words FROM word_counts;
-- @result
SELECT word, cnt FROM word_counts ORDER BY cnt DESC, word LIMIT 100;
