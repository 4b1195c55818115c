CREATE TABLE MyUserTable (
  column_name1 INT,
  column_name2 STRING,
  part_name1 INT,
  part_name2 STRING
) PARTITIONED BY (part_name1, part_name2) WITH (
  'connector' = 'filesystem',           -- required: specify the connector
  'path' = 'file:///path/to/whatever',  -- required: path to a directory
  'format' = 'json',                    -- required: file system connector requires to specify a format,
  'partition.default-name' = '__DEFAULT_PARTITION__',
  'sink.shuffle-by-partition.enable' = 'false'
)
