CREATE TABLE t (a INT);
-- nothing else follows
/* really nothing */
