-- binlog_row_image=MINIMAL: which columns the before/after images carry.
SET timestamp = 1700000000;
CREATE DATABASE ri CHARACTER SET utf8mb4;
USE ri;
CREATE TABLE t (
  id INT NOT NULL PRIMARY KEY,
  n INT,
  s VARCHAR(20),
  d DATETIME(3),
  b BLOB,
  tx TEXT,
  u INT DEFAULT 7
);
INSERT INTO t (id, n, s, d, b, tx) VALUES
  (1, 10, 'one', '2020-01-01 00:00:00.100', x'0101', 'text one'),
  (2, 20, 'two', '2020-01-02 00:00:00.200', x'0202', 'text two'),
  (3, 30, 'three', '2020-01-03 00:00:00.300', REPEAT(x'03', 300), 'text three');
INSERT INTO t (id) VALUES (4);
UPDATE t SET n = n + 1 WHERE id = 1;
UPDATE t SET b = x'ffff' WHERE id = 2;
UPDATE t SET s = NULL, tx = 'new text' WHERE id = 3;
UPDATE t SET id = 40 WHERE id = 4;
DELETE FROM t WHERE id = 1;
DELETE FROM t WHERE b = x'ffff';
-- no primary key: the before image cannot be reduced to the PK
CREATE TABLE nopk (a INT, b BLOB, c VARCHAR(10));
INSERT INTO nopk VALUES (1, x'aa', 'x'), (2, x'bb', 'y');
UPDATE nopk SET c = 'z' WHERE a = 1;
UPDATE nopk SET b = x'cc' WHERE a = 2;
DELETE FROM nopk WHERE a = 1;
