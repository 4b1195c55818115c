-- Reserved words back-quoted are names; non-reserved keywords (KEY,
-- DATA, TYPE, NAME, MAP, JSON: Flink's nonReservedKeywords) need no
-- quotes; a name of 256 characters is Flink's longest.
CREATE TABLE `default`.t (
  `user` STRING,
  `timestamp` TIMESTAMP(3) METADATA,
  `value` ROW<`value` INT, name STRING>,
  key STRING,
  data STRING,
  type INT,
  map MAP<STRING, INT>,
  json STRING,
  bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb INT
) WITH ('connector' = 'kafka')
