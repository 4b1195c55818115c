-- Flink CDC's MongoDB documentation; // starts a line comment in
-- Calcite's lexer, as -- does.
CREATE TABLE products (
  _id STRING, // must be declared
  name STRING,
  weight DECIMAL(10,3),
  tags ARRAY<STRING>, // array
  price ROW<amount DECIMAL(10,2), currency STRING>, // embedded document
  suppliers ARRAY<ROW<name STRING, address STRING>>, // embedded documents
  PRIMARY KEY(_id) NOT ENFORCED
) WITH (
  'connector' = 'mongodb-cdc',
  'hosts' = 'localhost:27017,localhost:27018,localhost:27019',
  'username' = 'flinkuser',
  'password' = 'flinkpw',
  'database' = 'inventory',
  'collection' = 'products'
);
