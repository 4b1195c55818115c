CREATE OR REPLACE TABLE my_rtas_table
WITH ('connector' = 'kafka')
AS SELECT id, name, age FROM source_table;
