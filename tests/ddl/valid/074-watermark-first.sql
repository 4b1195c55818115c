CREATE TABLE wm_first (
  WATERMARK FOR ts AS ts - INTERVAL '10' SECONDS,
  ts TIMESTAMP(3),
  v INT,
  PRIMARY KEY (v) NOT ENFORCED
) WITH ('connector' = 'datagen');
