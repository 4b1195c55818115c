CREATE TABLE orc_sink (
  id INT,
  info MAP<STRING, ARRAY<STRING>>,
  dt STRING
) PARTITIONED BY (dt) WITH (
  'connector' = 'filesystem',
  'path' = 'hdfs:///warehouse/orc_sink',
  'format' = 'orc',
  'orc.compress' = 'SNAPPY',
  'sink.rolling-policy.file-size' = '128MB',
  'sink.rolling-policy.rollover-interval' = '30 min',
  'auto-compaction' = 'true'
);
