CREATE TABLE `default`.`two_part` (a INT) WITH ('connector' = 'datagen');
