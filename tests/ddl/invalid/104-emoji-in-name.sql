CREATE TABLE t (
  rocket🚀 INT
) WITH ('connector' = 'datagen')
