CREATE TABLE blackhole_table WITH ('connector' = 'blackhole') LIKE src (EXCLUDING ALL);
