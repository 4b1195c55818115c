CREATE TABLE raw_events (
  payload STRING,
  event_id AS JSON_VALUE(payload, '$.id'),
  amount AS JSON_VALUE(payload, '$.amount' RETURNING DOUBLE DEFAULT 0.0 ON EMPTY NULL ON ERROR),
  items AS JSON_QUERY(payload, '$.items' WITH CONDITIONAL ARRAY WRAPPER),
  ok AS JSON_EXISTS(payload, '$.ok' FALSE ON ERROR),
  obj AS JSON_OBJECT(KEY 'id' VALUE JSON_VALUE(payload, '$.id') NULL ON NULL),
  arr AS JSON_ARRAY(1, 'two', NULL ABSENT ON NULL),
  ts AS TO_TIMESTAMP_LTZ(CAST(JSON_VALUE(payload, '$.ts') AS BIGINT), 3)
) WITH (
  'connector' = 'kafka',
  'topic' = 'raw',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'raw'
);
