-- ROW field names are identifiers too; VALUE is reserved in Calcite
CREATE TABLE t (
  a ROW<name STRING, value INT>
) WITH ('connector' = 'datagen')
