CREATE TABLE t (
  a INT,
  pt AS PROCTIME(),
  WATERMARK FOR pt AS pt
) WITH ('connector' = 'datagen')
