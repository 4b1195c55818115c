-- A source table stored in a filesystem
CREATE TABLE Orders_in_file (
    `user` BIGINT,
    product STRING,
    order_time_string STRING,
    order_time AS to_timestamp(order_time_string)
)
PARTITIONED BY (`user`)
WITH (
    'connector' = 'filesystem',
    'path' = '...'
);
