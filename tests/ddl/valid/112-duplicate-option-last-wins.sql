-- Flink keeps the last value of a key written twice (and logs a warning):
-- kept as written here; readers take 'b'.
CREATE TABLE t (a INT) WITH (
  'connector' = 'kafka',
  'topic' = 'a',
  'topic' = 'b'
)
