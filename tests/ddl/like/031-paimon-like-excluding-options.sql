CREATE TABLE my_table_like LIKE my_table (EXCLUDING OPTIONS);
