-- Flink 2.x CTAS with a column list of bare names: still a CTAS
CREATE TABLE t (col1, col2)
WITH ('connector' = 'blackhole')
AS SELECT a, b FROM src
