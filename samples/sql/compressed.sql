-- log_bin_compress=ON, log_bin_compress_min_len=10: QUERY_COMPRESSED_EVENT and
-- *_ROWS_COMPRESSED_EVENT_V1 (zlib block with a BE uncompressed length).
SET timestamp = 1700000000;
CREATE DATABASE cz CHARACTER SET utf8mb4;
USE cz;
CREATE TABLE t (
  id INT NOT NULL PRIMARY KEY COMMENT 'a long comment so that the DDL text compresses well, well, well',
  v VARCHAR(2000),
  tx TEXT,
  n BIGINT,
  ts TIMESTAMP(6) NULL DEFAULT NULL
) ENGINE=InnoDB COMMENT='compressed binlog events sample table, with a comment long enough to matter';
INSERT INTO t VALUES
  (1, REPEAT('abcdefghij', 100), REPEAT('compressible text ', 50), 1, '2023-11-14 22:13:20.000001'),
  (2, REPEAT('0123456789', 150), REPEAT('xyz', 300), -2, '1999-12-31 23:59:59.999999'),
  (3, 'short', 'short', 3, NULL);
INSERT INTO t VALUES (4, 'x', NULL, NULL, NULL);
UPDATE t SET v = REPEAT('updated value ', 100), n = n * 10 WHERE id IN (1, 2);
UPDATE t SET tx = 'tiny' WHERE id = 3;
DELETE FROM t WHERE id = 2;
ALTER TABLE t ADD COLUMN extra VARCHAR(100) DEFAULT 'default value of the new column' AFTER n;
INSERT INTO t (id, v, extra) VALUES (5, REPEAT('after alter ', 40), 'explicit extra value');
UPDATE t SET extra = NULL WHERE id = 1;
CREATE TABLE t2 AS SELECT id, v FROM t WHERE id < 4;
DELETE FROM t;
DROP TABLE t2;
