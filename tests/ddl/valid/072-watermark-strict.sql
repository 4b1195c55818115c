CREATE TABLE strict_wm (
  id BIGINT,
  rowtime TIMESTAMP_LTZ(3) NOT NULL,
  WATERMARK FOR rowtime AS rowtime
) WITH ('connector' = 'datagen');
