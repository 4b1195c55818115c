CREATE TABLE t (
  TS TIMESTAMP(3),
  WATERMARK FOR ts AS TS
) WITH ('connector' = 'datagen')
