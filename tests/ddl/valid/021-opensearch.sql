CREATE TABLE os_sink (
  id STRING,
  title STRING,
  tags ARRAY<STRING>,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'opensearch',
  'hosts' = 'https://opensearch:9200',
  'index' = 'docs',
  'username' = 'admin',
  'password' = 'admin',
  'allow-insecure' = 'true'
);
