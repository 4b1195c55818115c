CREATE TABLE KafkaTable (
  `user_id` BIGINT,
  `item_id` BIGINT,
  `behavior` STRING,
  `ts` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  `proc_time` AS PROCTIME(),
  WATERMARK FOR `ts` AS `ts` - INTERVAL '5' SECOND,
  PRIMARY KEY (`user_id`, `item_id`) NOT ENFORCED
) COMMENT 'user behaviour, keyed'
PARTITIONED BY (`behavior`)
WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'user_behavior',
  'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'json',
  'value.format' = 'json',
  'sink.buffer-flush.max-rows' = '1000',
  'sink.buffer-flush.interval' = '1s'
);
