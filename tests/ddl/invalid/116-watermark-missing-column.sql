CREATE TABLE t (
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts2 - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen')
