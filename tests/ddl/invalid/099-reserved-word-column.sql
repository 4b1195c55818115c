-- USER is reserved in Calcite (SQL reference, Keywords: **USER**)
CREATE TABLE t (
  user STRING,
  id BIGINT
) WITH ('connector' = 'datagen')
