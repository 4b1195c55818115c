CREATE TABLE a (x INT) WITH ('connector' = 'datagen');
INSERT INTO a SELECT 1;