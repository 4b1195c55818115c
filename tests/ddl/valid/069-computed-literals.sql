CREATE TABLE lits (
  a INT,
  l1 AS DATE '2024-01-31',
  l2 AS TIME '12:00:00',
  l3 AS TIMESTAMP '2024-01-31 12:00:00.000',
  l4 AS X'0aff',
  l5 AS 1.5e3 + .5 - 2E-2,
  l6 AS TRUE OR FALSE,
  l7 AS CAST(NULL AS STRING),
  l8 AS ARRAY[1, 2, 3],
  l9 AS MAP['a', 1, 'b', 2],
  l10 AS ROW(1, 'a'),
  l11 AS (1, 2),
  l12 AS INTERVAL '1 02:03' DAY TO MINUTE,
  l13 AS INTERVAL -'3' HOUR,
  l14 AS 'it''s'
) WITH ('connector' = 'datagen');
