CREATE TABLE src (a INT, b STRING) WITH ('connector' = 'kafka', 'topic' = 'x', 'topic' = 'y')
