CREATE TABLE empty_with (x INT) WITH ()
