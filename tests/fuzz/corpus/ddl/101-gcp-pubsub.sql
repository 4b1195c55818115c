CREATE TABLE pubsub_source (
  `data` STRING
) WITH (
  'connector' = 'pubsub',
  'project-name' = 'my-project',
  'subscription' = 'my-subscription',
  'format' = 'raw'
);
