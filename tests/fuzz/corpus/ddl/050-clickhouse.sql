CREATE TABLE ck_sink (
  id BIGINT,
  event_date DATE,
  amount DECIMAL(18, 4),
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'clickhouse',
  'url' = 'clickhouse://127.0.0.1:8123',
  'database-name' = 'default',
  'table-name' = 'events',
  'sink.batch-size' = '500',
  'sink.flush-interval' = '1000',
  'sink.max-retries' = '3'
);
