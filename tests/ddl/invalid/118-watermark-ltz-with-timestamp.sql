CREATE TABLE t (
  ts TIMESTAMP_LTZ(3),
  WATERMARK FOR ts AS CAST(ts AS TIMESTAMP(3))
) WITH ('connector' = 'datagen')
