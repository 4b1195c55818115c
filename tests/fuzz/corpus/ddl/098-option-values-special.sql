CREATE TABLE specials (
  a INT
) WITH (
  'connector' = 'filesystem',
  'path' = 'file:///tmp/it''s here',
  'csv.field-delimiter' = '	',
  'csv.quote-character' = '''',
  'csv.null-literal' = '',
  'multi' = 'line one
line two',
  'unicode' = 'ünïcödé ✓'
);
