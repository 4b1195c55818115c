CREATE TABLE t (
  ts TIMESTAMP(3),
  d AS DATE_FORMAT(ts, 'yyyy-MM-dd'),
  WATERMARK FOR d AS d
) WITH ('connector' = 'datagen')
