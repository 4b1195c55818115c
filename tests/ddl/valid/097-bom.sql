CREATE TABLE bom (a INT) WITH ('connector' = 'datagen');
