CREATE TABLE derived (total AS id * 3) LIKE base;
