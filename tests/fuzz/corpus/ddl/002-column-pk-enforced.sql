CREATE TABLE t (
  id INT PRIMARY KEY,
  v STRING
) WITH ('connector' = 'jdbc');
