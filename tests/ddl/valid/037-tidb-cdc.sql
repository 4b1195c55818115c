CREATE TABLE orders (
  order_id INT,
  order_date TIMESTAMP(3),
  customer_name STRING,
  price DECIMAL(10, 5),
  product_id INT,
  order_status BOOLEAN,
  PRIMARY KEY(order_id) NOT ENFORCED
) WITH (
  'connector' = 'tidb-cdc',
  'tikv.grpc.timeout_in_ms' = '20000',
  'pd-addresses' = 'localhost:2379',
  'database-name' = 'mydb',
  'table-name' = 'orders'
);
