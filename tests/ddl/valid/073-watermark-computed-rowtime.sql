CREATE TABLE epoch_events (
  id STRING,
  epoch_ms BIGINT,
  ts AS TO_TIMESTAMP_LTZ(epoch_ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE
) WITH (
  'connector' = 'kafka',
  'topic' = 'epoch',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json'
);
