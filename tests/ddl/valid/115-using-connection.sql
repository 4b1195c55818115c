-- Flink 2.x, FLIP-529 (FLINK-39726): USING CONNECTION between
-- PARTITIONED BY and WITH.
CREATE TABLE orders (
  order_id INT,
  customer_id INT,
  amount DECIMAL(10, 2)
) USING CONNECTION mycat.mydb.mysql_prod
WITH (
  'connector' = 'jdbc',
  'table-name' = 'orders'
);
