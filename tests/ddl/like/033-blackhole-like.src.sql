CREATE TABLE src (a INT, b STRING METADATA) WITH ('connector' = 'kafka');
