CREATE TABLE IF NOT EXISTS inventory (
  sku STRING,
  qty INT
) WITH ('connector' = 'blackhole');
