CREATE TABLE t (a INT, b) WITH ('connector' = 'blackhole')
