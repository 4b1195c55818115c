-- 订单表 (orders), with non-ASCII names and values
CREATE TABLE 订单 (
  编号 BIGINT COMMENT '主键',
  `名称` STRING,
  `prix€` DOUBLE,
  emoji AS '🚀' || 编号,
  PRIMARY KEY (编号) NOT ENFORCED
) COMMENT 'Bestellungen – Übersicht' WITH (
  'connector' = 'datagen',
  'fields.名称.length' = '5'
);
