CREATE TABLE `we``ird table` (
  `a``b` INT,
  `select` STRING,
  `with space` STRING,
  `ü` DOUBLE,
  ```x``` AS `a``b` + 1,
  `1st` INT
) WITH ('connector' = 'datagen');
