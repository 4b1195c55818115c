CREATE TABLE dim_hbase (
  rowkey STRING,
  cf ROW<name STRING, age INT, score DECIMAL(5, 2)>,
  PRIMARY KEY (rowkey) NOT ENFORCED
) WITH (
  'connector' = 'hbase-2.2',
  'table-name' = 'ns:dim',
  'zookeeper.quorum' = 'zk1:2181,zk2:2181',
  'zookeeper.znode.parent' = '/hbase',
  'lookup.async' = 'true',
  'lookup.cache' = 'PARTIAL',
  'lookup.partial-cache.max-rows' = '1000'
);
