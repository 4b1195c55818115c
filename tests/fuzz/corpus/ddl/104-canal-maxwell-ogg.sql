CREATE TABLE canal_products (
  id BIGINT,
  name STRING,
  ingestion_ts TIMESTAMP_LTZ(3) METADATA FROM 'value.ingestion-timestamp' VIRTUAL,
  event_time TIMESTAMP_LTZ(3) METADATA FROM 'value.event-timestamp' VIRTUAL,
  origin_database STRING METADATA FROM 'value.database' VIRTUAL
) WITH (
  'connector' = 'kafka',
  'topic' = 'products_binlog',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'canal-json',
  'canal-json.database.include' = '^inventory$',
  'canal-json.table.include' = '^products$'
);
