CREATE TABLE pulsar_users (
  id BIGINT,
  name STRING,
  publish_time TIMESTAMP_LTZ(3) METADATA FROM 'publish_time' VIRTUAL,
  WATERMARK FOR publish_time AS publish_time - INTERVAL '5' SECOND
) WITH (
  'connector' = 'pulsar',
  'topics' = 'persistent://public/default/my-topic',
  'service-url' = 'pulsar://localhost:6650',
  'source.start.message-id' = 'earliest',
  'format' = 'json'
);
