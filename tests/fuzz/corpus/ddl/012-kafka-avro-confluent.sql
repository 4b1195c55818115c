CREATE TABLE user_created (
  -- one column mapped to the Kafka raw UTF-8 key
  the_kafka_key STRING,
  -- a few columns mapped to the Avro fields of the Kafka value
  id STRING,
  name STRING,
  email STRING
) WITH (
  'connector' = 'kafka',
  'topic' = 'user_events_example2',
  'properties.bootstrap.servers' = 'localhost:9092',
  -- UTF-8 string as Kafka keys
  'key.format' = 'raw',
  'key.fields' = 'the_kafka_key',
  'value.format' = 'avro-confluent',
  'value.avro-confluent.url' = 'http://localhost:8082',
  'value.fields-include' = 'EXCEPT_KEY'
)
