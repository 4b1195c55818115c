CREATE TABLE t (
  ts TIMESTAMP(3),
  dt AS DATE_FORMAT(ts, 'yyyy-MM-dd')
)
PARTITIONED BY (dt)
WITH ('connector' = 'filesystem', 'path' = '/tmp/t', 'format' = 'csv')
