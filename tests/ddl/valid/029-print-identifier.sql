CREATE TABLE print_sink (
  word STRING,
  cnt BIGINT
) WITH (
  'connector' = 'print',
  'print-identifier' = 'wordcount',
  'standard-error' = 'true',
  'sink.parallelism' = '1'
);
