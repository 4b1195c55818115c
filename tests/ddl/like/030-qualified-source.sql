CREATE TABLE dst (b INT) WITH ('number-of-rows' = '10') LIKE `_env_prod`.`default`.`src`;
