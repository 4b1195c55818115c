CREATE TABLE derived PARTITIONED BY (id) WITH ('connector' = 'filesystem', 'path' = '/x', 'format' = 'csv') LIKE base (EXCLUDING PARTITIONS EXCLUDING OPTIONS);
