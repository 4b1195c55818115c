CREATE TABLE t (
  ID BIGINT,
  k AS id + 1
) WITH ('connector' = 'datagen')
