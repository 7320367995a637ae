-- Sluice version of wordcount.sql of the seed workloads (../shared/workloads/wordcount.sql beside the
-- repository, written for DuckDB; see bench/workloads/README.md).  Differences, and why:
-- - every `hash(a) % n` is written `((hash(a) % n) + n) % n` (2 places): Sluice's hash()
--   is a signed BIGINT (DuckDB's is UBIGINT; docs/conformance.md), so `hash(a) % n` can be
--   negative, and the non-negative modulo keeps each draw in [0, n) as the original means.
-- Sizes: 2,400,000 lines whatever hash() gives (every line has 8..16 words); the words
-- (28.8M in the README), the bytes (200 MB), the distinct words and the top 100 depend on the
-- hash values, so they differ from DuckDB's (expected 12 words a line on average).  The original
-- runs on Sluice but makes 2,132,309 lines and loses about half the words: a negative draw
-- makes word_id 0, which is not in the vocabulary, or a line length of 0.

-- WordCount (HiBench-style).  ~200 MB of text lines, words drawn from a
-- Zipf-like (P(rank r) ~ 1/r) vocabulary of 50000 words; count words; top 100.
-- Data is generated deterministically with hash(); no random().

-- vocabulary: word_id = frequency rank; word = 0-4 hex chars + 4 letters g..z
-- (base-20 code of the id), so all 50000 words are distinct.
CREATE TABLE vocab AS
SELECT w AS word_id,
       substr(md5(CAST(w AS VARCHAR)), 1, CAST(w % 5 AS INTEGER))
       || chr(103 + CAST(w % 20 AS INTEGER))
       || chr(103 + CAST(floor(w / 20.0) % 20 AS INTEGER))
       || chr(103 + CAST(floor(w / 400.0) % 20 AS INTEGER))
       || chr(103 + CAST(floor(w / 8000.0) % 20 AS INTEGER)) AS word
FROM generate_series(1, 50000) AS g(w);

-- 2400000 lines of 8..16 words; rank = floor(exp(u * ln(V+1))) gives P(r) ~ ln(1+1/r) ~ 1/r
CREATE TABLE lines AS
SELECT t.line_id, string_agg(v.word, ' ' ORDER BY t.pos) AS line
FROM (SELECT l.line_id, p.pos,
             LEAST(50000, CAST(floor(exp(((((hash(l.line_id, p.pos) % 1000000000) + 1000000000) % 1000000000) / 1000000000.0) * ln(50001.0))) AS INTEGER)) AS word_id
      FROM generate_series(1, 2400000) AS l(line_id)
      CROSS JOIN generate_series(1, 16) AS p(pos)
      WHERE p.pos <= 8 + ((hash(l.line_id) % 9) + 9) % 9) t
JOIN vocab v ON v.word_id = t.word_id
GROUP BY t.line_id;

-- input size: lines, bytes (incl. one newline per line)
SELECT COUNT(*) AS n_lines, SUM(length(line) + 1) AS n_bytes FROM lines;

-- the WordCount job: split (flatMap), group, count
CREATE TABLE word_counts AS
SELECT word, COUNT(*) AS cnt
FROM (SELECT unnest(string_split(line, ' ')) AS word FROM lines) AS w
GROUP BY word;

SELECT COUNT(*) AS distinct_words, SUM(cnt) AS total_words FROM word_counts;

SELECT word, cnt FROM word_counts ORDER BY cnt DESC, word LIMIT 100;
