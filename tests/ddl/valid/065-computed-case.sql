CREATE TABLE scored (
  score INT,
  status STRING,
  grade AS CASE WHEN score >= 90 THEN 'A' WHEN score >= 80 THEN 'B' ELSE 'C' END,
  state AS CASE status WHEN 'o', 'open' THEN 1 WHEN 'c' THEN 2 END,
  flag AS CASE WHEN status IS NULL OR status <> 'x' AND NOT (score < 0) THEN TRUE ELSE FALSE END
) WITH ('connector' = 'datagen');
