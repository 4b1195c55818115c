CREATE TABLE redis_sink (
  `key` STRING,
  `value` STRING,
  PRIMARY KEY (`key`) NOT ENFORCED
) WITH (
  'connector' = 'redis',
  'redis-mode' = 'single',
  'host' = 'localhost',
  'port' = '6379',
  'command' = 'set'
);
