-- Flink's grammar makes the column list optional (SqlCreateTable with an
-- empty column list); the schema may come from the connector or catalog.
CREATE TABLE t WITH ('connector' = 'datagen')
