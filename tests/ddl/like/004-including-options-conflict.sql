CREATE TABLE derived WITH ('topic' = 'other') LIKE base (INCLUDING OPTIONS);
