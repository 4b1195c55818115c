CREATE TABLE t (
  s STRING,
  x AS TO_TIMESTAMPS(s)
) WITH ('connector' = 'datagen')
