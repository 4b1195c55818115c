CREATE TABLE t (a INT) WITH (
  'connector' = 'kafka',
  'topic' = 'a',
  'topic' = 'b'
)