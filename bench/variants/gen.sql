SELECT setseed(0.42);
COPY (SELECT i AS line_id, string_agg('w' || lpad(CAST(CAST(pow(random(), 3) * 200000 AS BIGINT) AS VARCHAR), 14, '0'), ' ') AS line
      FROM range(0, 2400000) t(j), LATERAL (SELECT j // 12 AS i) x GROUP BY i) TO '@DIR@/long.csv' (HEADER true);
COPY (SELECT i AS line_id, string_agg('w' || CAST(CAST(pow(random(), 3) * 200000 AS BIGINT) AS VARCHAR), ', ') AS line
      FROM range(0, 2400000) t(j), LATERAL (SELECT j // 12 AS i) x GROUP BY i) TO '@DIR@/comma.csv' (HEADER true);
COPY (SELECT i, 'key-' || CAST((i * 7919) % 2000003 AS VARCHAR) AS s, 'a-longer-key-string-' || CAST((i * 7919) % 2000003 AS VARCHAR) AS ls FROM range(0, 4000000) t(i)) TO '@DIR@/keys.csv' (HEADER true);
