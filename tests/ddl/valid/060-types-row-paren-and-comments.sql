CREATE TABLE rows_t (
  a ROW(a INT, b STRING),
  b ROW<a INT 'the a field', b STRING 'it''s b'>,
  c ROW(id BIGINT NOT NULL 'key', payload ROW(x INT) 'nested'),
  d ROW<a INT NOT NULL, b STRING NULL>
) WITH ('connector' = 'datagen');
