-- binlog_checksum=NONE: no CRC32 footer on any event.
SET timestamp = 1700000000;
CREATE DATABASE cs CHARACTER SET utf8mb4;
CREATE TABLE cs.t (
  id INT NOT NULL PRIMARY KEY,
  n BIGINT,
  s VARCHAR(40),
  ts TIMESTAMP(3) NULL DEFAULT NULL,
  d DECIMAL(10,2)
) ENGINE=InnoDB;
INSERT INTO cs.t VALUES (1, -42, 'one', '2023-11-14 22:13:20.123', 1.50),
  (2, 9223372036854775807, 'two; not the end', '2000-01-01 00:00:00.000', -0.01);
INSERT INTO cs.t VALUES (3, NULL, NULL, NULL, NULL);
UPDATE cs.t SET s = 'it''s', n = n + 1 WHERE id = 1;
DELETE FROM cs.t WHERE id = 2;
