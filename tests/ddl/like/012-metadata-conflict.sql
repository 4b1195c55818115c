CREATE TABLE derived (meta_topic STRING METADATA) LIKE base;
