-- Flink's <like_options>: { INCLUDING | EXCLUDING } { ALL | CONSTRAINTS |
-- DISTRIBUTION | PARTITIONS }; OVERWRITING only for GENERATED, METADATA,
-- OPTIONS and WATERMARKS (SqlTableLike: "Illegal merging strategy").
CREATE TABLE derived (
  total AS 0
) WITH ('topic' = 'mine') LIKE base (OVERWRITING ALL);
