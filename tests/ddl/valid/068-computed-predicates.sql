CREATE TABLE preds (
  a INT,
  s STRING,
  p1 AS a BETWEEN 1 AND 10,
  p2 AS a NOT BETWEEN SYMMETRIC 10 AND 1,
  p3 AS s LIKE 'a%' ESCAPE '!',
  p4 AS s NOT LIKE '%z',
  p5 AS a IN (1, 2, 3),
  p6 AS a NOT IN (4, 5),
  p7 AS a IS DISTINCT FROM 3,
  p8 AS s IS NOT DISTINCT FROM 'x',
  p9 AS s SIMILAR TO '[ab]+',
  p10 AS (a > 1) IS TRUE,
  p11 AS a <> 1 AND a != 2 AND a <= 3 AND a >= 0 AND a = a,
  p12 AS s IS NOT NULL
) WITH ('connector' = 'datagen');
