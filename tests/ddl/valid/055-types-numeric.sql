CREATE TABLE numbers (
  a TINYINT,
  b SMALLINT,
  c INT,
  d INTEGER,
  e BIGINT,
  f FLOAT,
  g REAL,
  h DOUBLE,
  i DOUBLE PRECISION,
  j DECIMAL,
  k DECIMAL(10),
  l DECIMAL(38, 18),
  m DEC(5, 2),
  n NUMERIC(20, 0),
  o BOOLEAN NOT NULL
) WITH ('connector' = 'datagen');
