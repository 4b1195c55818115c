-- Rowtimes computed from other columns, as Flink's documentation writes
-- them; a watermark may use computed columns, a computed column the
-- metadata ones; niladic functions and time units are not columns.
CREATE TABLE events (
  ms BIGINT,
  s STRING,
  kts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  ts AS TO_TIMESTAMP_LTZ(ms, 3),
  ts2 AS TO_TIMESTAMP(s),
  lag_s AS TIMESTAMPDIFF(SECOND, kts, CURRENT_TIMESTAMP),
  d AS EXTRACT(DOW FROM kts),
  w AS CEIL(kts TO WEEK),
  pt AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka');
