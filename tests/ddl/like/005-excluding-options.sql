CREATE TABLE print_base WITH ('connector' = 'print') LIKE base (EXCLUDING OPTIONS);
