CREATE TABLE products (
  ID INT NOT NULL,
  NAME STRING,
  PRIMARY KEY(id) NOT ENFORCED
) WITH ('connector' = 'oracle-cdc')