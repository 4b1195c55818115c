CREATE TABLE asc_wm (
  id BIGINT,
  rowtime TIMESTAMP(3),
  WATERMARK FOR rowtime AS rowtime - INTERVAL '0.001' SECOND
) WITH ('connector' = 'datagen');
