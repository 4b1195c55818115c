CREATE TABLE t (
  a INT,
  b STRING,
) WITH ('connector' = 'datagen')