CREATE TABLE t (
  a INT,
  b AS a + 1,
  c AS b * 2
) WITH ('connector' = 'datagen')
