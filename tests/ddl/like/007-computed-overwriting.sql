CREATE TABLE derived (total AS id * 3 COMMENT 'tripled') LIKE base (OVERWRITING GENERATED);
