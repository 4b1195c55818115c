CREATE TABLE derived (
  extra INT
) WITH (
  'topic' = 'derived',
  'sink.parallelism' = '2'
) LIKE base;
