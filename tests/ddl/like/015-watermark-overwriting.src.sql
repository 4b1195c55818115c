CREATE TABLE base (
  id BIGINT,
  name STRING,
  ts TIMESTAMP(3),
  meta_topic STRING METADATA FROM 'topic' VIRTUAL,
  total AS id * 2,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND,
  PRIMARY KEY (id) NOT ENFORCED
) COMMENT 'the base'
DISTRIBUTED BY HASH(id) INTO 4 BUCKETS
PARTITIONED BY (name)
WITH (
  'connector' = 'kafka',
  'topic' = 'base',
  'format' = 'json'
);
