-- replace
REPLACE TABLE my_rtas_table WITH ('connector' = 'kafka') AS SELECT 1;