CREATE TABLE my_table (
    user_id BIGINT,
    item_id BIGINT,
    behavior STRING,
    dt STRING,
    hh STRING,
    price DOUBLE,
    number BIGINT,
    `cost` AS price * number,
    PRIMARY KEY (dt, hh, user_id) NOT ENFORCED
) WITH (
    'connector' = 'paimon',
    'path' = 'file:///tmp/paimon/default.db/my_table',
    'auto-create' = 'true',
    'file.format' = 'orc'
);
