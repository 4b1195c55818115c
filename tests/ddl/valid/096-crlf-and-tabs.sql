CREATE TABLE crlf (
	a INT,
	b STRING
) WITH (
	'connector' = 'datagen'
);
