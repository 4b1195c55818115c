CREATE TABLE json_events (
  `id` BIGINT,
  `props` MAP<STRING, STRING>,
  `at` TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json',
  'json.fail-on-missing-field' = 'false',
  'json.ignore-parse-errors' = 'true',
  'json.timestamp-format.standard' = 'ISO-8601',
  'json.map-null-key.mode' = 'LITERAL',
  'json.map-null-key.literal' = 'null',
  'json.encode.decimal-as-plain-number' = 'true'
);
