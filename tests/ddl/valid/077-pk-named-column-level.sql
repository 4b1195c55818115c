CREATE TABLE users_pk (
  id BIGINT NOT NULL CONSTRAINT `pk_users` PRIMARY KEY NOT ENFORCED COMMENT 'the key',
  name STRING COMMENT 'display name'
) WITH ('connector' = 'jdbc', 'url' = 'jdbc:mysql://db/app', 'table-name' = 'users');
