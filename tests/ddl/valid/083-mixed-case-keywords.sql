Create Table MixedCase (
  Id BigInt Not Null,
  Ts Timestamp_Ltz(3),
  Watermark For Ts As Ts - Interval '5' Second,
  Constraint Pk Primary Key (Id) Not Enforced
) With ('connector' = 'datagen')
