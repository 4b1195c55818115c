CREATE TABLE big_orders (
  order_id BIGINT,
  amount DECIMAL(10, 2),
  created_at TIMESTAMP(3)
) WITH (
  'connector' = 'jdbc',
  'url' = 'jdbc:mysql://localhost:3306/shop',
  'table-name' = 'orders',
  'scan.partition.column' = 'order_id',
  'scan.partition.num' = '8',
  'scan.partition.lower-bound' = '0',
  'scan.partition.upper-bound' = '10000000',
  'scan.fetch-size' = '1000',
  'sink.buffer-flush.max-rows' = '500',
  'sink.buffer-flush.interval' = '1s'
);
