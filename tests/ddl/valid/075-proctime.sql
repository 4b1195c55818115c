CREATE TABLE clicks (
  url STRING,
  user_id BIGINT,
  proc AS PROCTIME(),
  eventtime AS CURRENT_ROW_TIMESTAMP()
) WITH ('connector' = 'datagen');
