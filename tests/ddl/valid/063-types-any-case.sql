CREATE TABLE casing (
  a map<string, Int>,
  b Array<row<X int, y Varchar(3)>>,
  c timestamp_ltz(3),
  d Decimal(5, 1),
  e interval day(2) to second(3),
  f timestamp(3) with local time zone,
  g double precision not null
) with ('connector' = 'datagen');
