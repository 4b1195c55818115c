CREATE TABLE orders (
  `_id` STRING,
  amount DOUBLE,
  PRIMARY KEY (`_id`) NOT ENFORCED
) WITH (
  'connector' = 'mongodb',
  'uri' = 'mongodb://user:password@mongo:27017/?authSource=admin',
  'database' = 'shop',
  'collection' = 'orders'
);
