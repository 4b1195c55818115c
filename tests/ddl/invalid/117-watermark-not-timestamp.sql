CREATE TABLE t (
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS 1
) WITH ('connector' = 'datagen')
