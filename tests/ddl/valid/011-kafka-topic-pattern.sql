CREATE TABLE pattern_source (
  `id` BIGINT,
  `payload` STRING
) WITH (
  'connector' = 'kafka',
  'topic-pattern' = 'test-topic-[0-9]',
  'properties.bootstrap.servers' = 'localhost:9092',
  'scan.topic-partition-discovery.interval' = '5 min',
  'scan.startup.mode' = 'specific-offsets',
  'scan.startup.specific-offsets' = 'partition:0,offset:42;partition:1,offset:300',
  'format' = 'raw'
);
