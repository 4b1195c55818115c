CREATE TABLE es_logs (
  log_ts TIMESTAMP(3),
  `level` STRING,
  message STRING
) WITH (
  'connector' = 'elasticsearch-7',
  'hosts' = 'http://es1:9200;http://es2:9200',
  'index' = 'myusers_{log_ts|yyyy-MM-dd}',
  'document-id.key-delimiter' = '$',
  'sink.bulk-flush.max-actions' = '1000',
  'sink.bulk-flush.backoff.strategy' = 'EXPONENTIAL'
);
