CREATE TABLE raws (
  a RAW('java.lang.String', 'AEdvcmcuYXBhY2hlLmZsaW5rLmFwaS5jb21tb24udHlwZXV0aWxzLmJhc2UuU3RyaW5nU2VyaWFsaXplcg=='),
  b RAW('org.example.MyPojo', 'c25hcHNob3Q=') NOT NULL,
  c VARIANT
) WITH ('connector' = 'blackhole');
