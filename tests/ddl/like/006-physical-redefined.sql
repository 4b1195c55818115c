CREATE TABLE derived (name STRING) LIKE base;
