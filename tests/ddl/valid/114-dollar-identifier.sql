-- '$' is a letter in Calcite's identifiers, also the first one.
CREATE TABLE t (
  $id INT,
  a$b STRING,
  `$$` AS $id + 1
) WITH ('connector' = 'datagen')
