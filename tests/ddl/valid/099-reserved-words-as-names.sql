CREATE TABLE `default`.events (
  `timestamp` TIMESTAMP(3),
  `value` DOUBLE,
  `user` STRING,
  `comment` STRING,
  `key` STRING,
  `from` STRING,
  WATERMARK FOR `timestamp` AS `timestamp` - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen');
