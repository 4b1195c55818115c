-- COMMENT is one of Flink's own keywords (Parser.tdd "keywords") and is
-- not in its nonReservedKeywords: reserved
CREATE TABLE t (
  comment STRING
) WITH ('connector' = 'datagen')
