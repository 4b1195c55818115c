CREATE TABLE print_table WITH ('connector' = 'print')
LIKE source_table (EXCLUDING ALL);
