-- FLINK-39726's parser tests: USING CONNECTION after DISTRIBUTED BY and
-- PARTITIONED BY.
CREATE TABLE t (
  a INT,
  b STRING,
  dt STRING
) COMMENT 'partitioned'
DISTRIBUTED BY HASH(a) INTO 4 BUCKETS
PARTITIONED BY (dt)
USING CONNECTION conn
WITH ('connector' = 'filesystem', 'path' = '/tmp/t', 'format' = 'csv')
