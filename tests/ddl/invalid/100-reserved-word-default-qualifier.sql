-- DEFAULT is reserved in Calcite; `default`.t (back-quoted) is accepted
CREATE TABLE default.t (a INT) WITH ('connector' = 'datagen')
