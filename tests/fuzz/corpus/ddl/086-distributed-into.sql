CREATE TABLE IF NOT EXISTS `events_topic` (
  id BIGINT,
  ts TIMESTAMP(3),
  value_str STRING
) DISTRIBUTED INTO 3 BUCKETS
WITH (
  'value.format' = 'json-registry'
);
