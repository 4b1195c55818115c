CREATE TABLE md (
  `timestamp` BIGINT METADATA,
  `offset` BIGINT METADATA VIRTUAL,
  `user_id` BIGINT,
  `name` STRING
) WITH (
  'connector' = 'kafka',
  'topic' = 't',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json'
);
