CREATE TABLE nested (
  a ARRAY<ROW<a INT, b MAP<STRING, BIGINT>>>,
  b MAP<STRING, ARRAY<MAP<INT, ROW<x DOUBLE, y DOUBLE>>>>,
  c ROW<`user` ROW<`name` STRING, `tags` ARRAY<STRING>>, `value` DECIMAL(10, 2)>,
  d MULTISET<ROW<k STRING>>,
  e ARRAY<ARRAY<ARRAY<INT>>>,
  f ROW<>
) WITH ('connector' = 'datagen');
