-- Flink's schema resolver: a computed column's expression is resolved
-- against the table's columns (DefaultSchemaResolver)
CREATE TABLE t (
  total AS price * qty,
  price DECIMAL(10, 2)
) WITH ('connector' = 'datagen')
