CREATE TABLE documented (
  a INT COMMENT 'first',
  b AS a * 2 COMMENT 'derived',
  c STRING METADATA FROM 'k' COMMENT 'meta'
) COMMENT 'A table
with a multi-line comment'
WITH ('connector' = 'datagen');
