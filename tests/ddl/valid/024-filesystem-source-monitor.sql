CREATE TABLE csv_source (
  `a` STRING,
  `b` INT,
  `file.path` STRING NOT NULL METADATA,
  `file.name` STRING NOT NULL METADATA,
  `file.size` BIGINT NOT NULL METADATA,
  `file.modification-time` TIMESTAMP_LTZ(3) NOT NULL METADATA
) WITH (
  'connector' = 'filesystem',
  'path' = 's3://bucket/in/',
  'format' = 'csv',
  'csv.field-delimiter' = ';',
  'csv.ignore-parse-errors' = 'true',
  'source.monitor-interval' = '10 s'
);
