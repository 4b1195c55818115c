CREATE TABLE MyTable (uid BIGINT, name STRING, region STRING)
  COMMENT 'bucketed'
  DISTRIBUTED BY HASH(uid, region) INTO 16 BUCKETS
  PARTITIONED BY (region)
  WITH ('connector' = 'filesystem', 'path' = '/data', 'format' = 'csv');
