CREATE TABLE orders_pk (
  order_id BIGINT,
  region STRING,
  amount DECIMAL(12, 2),
  CONSTRAINT pk_orders PRIMARY KEY (order_id, region) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'json',
  'value.format' = 'json'
);
