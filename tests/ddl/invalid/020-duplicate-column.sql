CREATE TABLE t (
  id INT,
  name STRING,
  ID INT,
  id BIGINT
)