CREATE TABLE MyTable (
  `user_id` BIGINT,
  `price` DOUBLE,
  `quantity` DOUBLE,
  `cost` AS price * quantity,  -- evaluate expression and supply the result to queries
  `net` AS (price - 1.5) * quantity / 100 % 7 + -price,
  `label` AS 'u-' || CAST(user_id AS STRING) || '-x'
) WITH (
  'connector' = 'kafka',
  'topic' = 't',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json'
);
