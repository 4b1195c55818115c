CREATE TABLE `_env_prod`.`default`.`src` (a INT) WITH ('connector' = 'datagen');
