CREATE TABLE t (
  ts TIMESTAMP,
  WATERMARK FOR ts AS ts
) WITH ('connector' = 'datagen')
