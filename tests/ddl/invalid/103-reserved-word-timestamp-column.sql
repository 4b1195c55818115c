CREATE TABLE t (
  timestamp TIMESTAMP(3) METADATA
) WITH ('connector' = 'kafka')
