CREATE TABLE t (
  r ROW<a INT, b STRING, a BIGINT>
) WITH ('connector' = 'datagen')
