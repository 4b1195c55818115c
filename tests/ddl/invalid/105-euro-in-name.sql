CREATE TABLE t (
  price€ DOUBLE
) WITH ('connector' = 'datagen')
