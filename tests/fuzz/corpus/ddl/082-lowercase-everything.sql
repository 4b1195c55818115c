create table if not exists lower_t (
  id bigint not null primary key not enforced comment 'id',
  ts timestamp(3),
  meta string metadata from 'topic' virtual,
  c as id + 1,
  watermark for ts as ts - interval '5' second
) comment 'lower' distributed by hash(id) into 2 buckets partitioned by (id) with (
  'connector' = 'kafka'
) ;
