-- FLINK-39726: USING CONNECTION also with LIKE; the derived table's
-- options overwrite every copy of the source's key.
CREATE TABLE t (c INT) USING CONNECTION `default`.conn
WITH ('topic' = 'z')
LIKE src
