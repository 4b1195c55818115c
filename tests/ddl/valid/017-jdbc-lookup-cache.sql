CREATE TABLE dim_users (
  id BIGINT,
  name STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'jdbc',
  'url' = 'jdbc:postgresql://db:5432/app?sslmode=require',
  'table-name' = 'public.users',
  'username' = 'flink',
  'password' = 'secret',
  'lookup.cache' = 'PARTIAL',
  'lookup.partial-cache.max-rows' = '10000',
  'lookup.partial-cache.expire-after-write' = '10 min',
  'lookup.max-retries' = '3'
);
