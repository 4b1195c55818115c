CREATE TABLE paimon_catalog_table (
  k INT,
  v STRING,
  PRIMARY KEY (k) NOT ENFORCED
);
