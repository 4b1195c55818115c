CREATE TABLE doris_sink (
  name STRING,
  age INT
)
WITH (
  'connector' = 'doris',
  'fenodes' = '10.20.30.1:8030',
  'table.identifier' = 'db.table',
  'username' = 'root',
  'password' = '',
  'sink.label-prefix' = 'doris_label',
  'sink.properties.format' = 'json',
  'sink.properties.read_json_by_line' = 'true'
);
