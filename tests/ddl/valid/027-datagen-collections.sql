CREATE TABLE gen_nested (
  id BIGINT NOT NULL,
  scores ARRAY<DOUBLE>,
  attrs MAP<STRING, STRING>,
  tags MULTISET<STRING>,
  nested ROW<a INT, b ARRAY<ROW<c STRING, d TIMESTAMP(3)>>>
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '100',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'fields.id.end' = '100',
  'fields.scores.element.min' = '0',
  'fields.attrs.key.length' = '4'
);
