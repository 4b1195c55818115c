CREATE TABLE my_ctas_table
WITH (
    'connector' = 'kafka'
)
AS SELECT id, name, age FROM source_table WHERE mod(id, 10) = 0;
