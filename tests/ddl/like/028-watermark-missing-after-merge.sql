CREATE TABLE derived (WATERMARK FOR event_time AS event_time) LIKE Orders;
