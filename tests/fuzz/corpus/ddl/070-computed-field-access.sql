CREATE TABLE access (
  payload ROW<`user` ROW<name STRING, tags ARRAY<STRING>>>,
  arr ARRAY<INT>,
  m MAP<STRING, ROW<x INT>>,
  n1 AS payload.`user`.name,
  n2 AS arr[1] + arr[CARDINALITY(arr)],
  n3 AS m['k'].x,
  n4 AS payload.`user`.tags[1]
) WITH ('connector' = 'datagen');
