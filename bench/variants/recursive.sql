WITH RECURSIVE r(n) AS (SELECT 1 UNION SELECT n * 2 + k FROM r, (VALUES (0), (1)) v(k) WHERE n < 4000000) SELECT count(*), sum(n) FROM r;
