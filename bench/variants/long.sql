CREATE TABLE lines (line_id BIGINT, line VARCHAR);
COPY lines FROM '@DIR@/long.csv' (HEADER true);
CREATE TABLE word_counts AS SELECT word, COUNT(*) AS cnt FROM (SELECT unnest(string_split(line, ' ')) AS word FROM lines) AS w GROUP BY word;
SELECT COUNT(*) AS distinct_words, SUM(cnt) AS total_words, max(word), min(length(word)), max(length(word)) FROM word_counts;
SELECT word, cnt FROM word_counts ORDER BY cnt DESC, word LIMIT 3;
