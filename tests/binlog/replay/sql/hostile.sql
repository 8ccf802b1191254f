-- Hostile values for replay: quotes, backslashes, NUL, ctrl-Z, newlines, emoji, invalid
-- UTF-8 in latin1 and binary columns, a GBK character whose second byte is 0x5C ('\'),
-- SQL-injection lookalikes; a composite primary key, a NOT NULL unique key, a table
-- without any key (duplicate rows), key-changing UPDATEs and multi-statement transactions.
SET timestamp = 1700000000;
SET sql_mode = '';
CREATE DATABASE hx CHARACTER SET utf8mb4;
USE hx;
CREATE TABLE s (
  id INT NOT NULL PRIMARY KEY,
  u VARCHAR(200) CHARACTER SET utf8mb4,
  l VARCHAR(100) CHARACTER SET latin1,
  b VARBINARY(100),
  bl BLOB,
  t TEXT CHARACTER SET utf8mb4,
  c CHAR(10) CHARACTER SET latin1,
  bn BINARY(6),
  u3 VARCHAR(50) CHARACTER SET utf8mb3,
  g VARCHAR(40) CHARACTER SET gbk,
  f FLOAT,
  d DOUBLE,
  n DECIMAL(30,10),
  y YEAR,
  j JSON
);
INSERT INTO s VALUES (1, 'plain', 'plain', X'00', X'', '', 'c', X'01', 'x', 'ascii', 0.1, 0.1, 0.1, 0, '{}');
INSERT INTO s VALUES (2, 'it''s "quoted" \\ back\\slash \\\\ ''\\''', 'l''atin \\ \\''', X'5c27220027', X'00ff5c27', 'multi\nline\r\ntext\ttab', 'q''\\', X'5c00275c', '\\''"', '中文\\', -3.4028234663852886e38, 2.2250738585072014e-308, -12345678901234567890.0123456789, 1901, '{"k": "v\\"q''\\\\"}');
INSERT INTO s VALUES (3, CONCAT('nul', CHAR(0), 'byte', CHAR(26), 'ctrlz'), CONCAT('nul', CHAR(0)), X'001a00', X'1a', CONCAT(CHAR(0), CHAR(26), '\\0'), CONCAT('z', CHAR(26)), X'1a1a', 'ok', 'x', 1e-45, -0.0, 0, 2155, '[1, 2.5, null]');
INSERT INTO s VALUES (4, 'emoji 😀🎉 é€ 𝄞', _latin1 X'e9ff80818d8f909d', X'c328a0a1e28228ff', X'fffefdfc', '😀', _latin1 X'ffe9', X'ffffffffffff', 'é€ ✓', _gbk X'815c27d6d0cec4', 3.14159, 3.141592653589793, 99999999999999999999.9999999999, 2024, '"é😀"');
INSERT INTO s VALUES (5, ''');DROP TABLE s;-- ', '\'; DELETE FROM s; #', X'27293b44524f50', X'', '/* comment */ -- x', '', X'', '', '', NULL, 1e300, -0.0000000001, 1970, NULL);
INSERT INTO s VALUES (6, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO s VALUES (7, 'trailing space ', 'trail ', X'2000', X'20', 'tab\t', 'pad  ', X'202020', ' lead', ' ', 0, 0, 0, 0, 'null');
UPDATE s SET u = CONCAT(u, ' ✓'), l = CONCAT(l, _latin1 X'a9'), b = CONCAT(b, X'5c') WHERE id IN (2, 4);
UPDATE s SET id = 10 WHERE id = 1;
DELETE FROM s WHERE id = 3;
INSERT INTO s VALUES (3, 'back again', CONCAT('nul', CHAR(0)), X'00', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

-- composite primary key, a NOT NULL unique key ------------------------------------------
CREATE TABLE ck (
  a INT NOT NULL, b VARCHAR(20) CHARACTER SET latin1 NOT NULL, v VARCHAR(50), code CHAR(8) NOT NULL,
  PRIMARY KEY (a, b), UNIQUE KEY uc (code)
);
INSERT INTO ck VALUES (1, 'x', 'one', 'C1'), (1, 'y', 'two', 'C2'), (2, _latin1 X'e9', 'three', 'C3'), (3, 'q''\\', 'four', 'C4');
BEGIN;
UPDATE ck SET code = 'TMP' WHERE code = 'C1';
UPDATE ck SET code = 'C1' WHERE code = 'C2';
UPDATE ck SET code = 'C2' WHERE code = 'TMP';
COMMIT;
UPDATE ck SET b = 'z' WHERE a = 1 AND b = 'x';
UPDATE ck SET a = a + 10 ORDER BY a DESC;
DELETE FROM ck WHERE a = 13;

-- no key at all: duplicate rows ---------------------------------------------------------
CREATE TABLE nokey (v VARCHAR(20) CHARACTER SET latin1, n INT, f FLOAT);
INSERT INTO nokey VALUES ('dup', 1, 0.5), ('dup', 1, 0.5), ('dup', 1, 0.5), (_latin1 X'e9', NULL, NULL), ('A', 2, 0.1), ('a', 2, 0.1);
DELETE FROM nokey WHERE v = 'dup' LIMIT 1;
UPDATE nokey SET n = 5 WHERE v = 'dup' LIMIT 1;
UPDATE nokey SET n = 7 WHERE BINARY v = 'a';
DELETE FROM nokey WHERE BINARY v = 'A';

-- a bigger multi-statement transaction and many small ones -------------------------------
CREATE TABLE many (id INT NOT NULL PRIMARY KEY, v VARCHAR(40), ts TIMESTAMP(3) NULL, dt DATETIME(6) NULL, tm TIME(2) NULL);
INSERT INTO many (id, v, ts, dt, tm) WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 120) SELECT n, CONCAT('row ', n, ' \'q\' \\'), FROM_UNIXTIME(1700000000 + n + 0.123), '2024-02-29 23:59:59.999999' - INTERVAL n SECOND, SEC_TO_TIME(n * 3600.25 - 200000) FROM s;
BEGIN;
UPDATE many SET v = CONCAT(v, '!') WHERE id % 3 = 0;
DELETE FROM many WHERE id % 7 = 0;
INSERT INTO many (id, v) VALUES (1000, 'in the transaction');
COMMIT;
UPDATE many SET id = id + 500 WHERE id BETWEEN 10 AND 12;
UPDATE many SET v = 'one' WHERE id = 1;
UPDATE many SET v = 'two' WHERE id = 2;
UPDATE many SET v = 'three' WHERE id = 4;
UPDATE many SET v = 'four' WHERE id = 5;
UPDATE many SET v = 'five' WHERE id = 8;
DELETE FROM many WHERE id = 9;
INSERT INTO many (id, v, tm) VALUES (2000, 'negative time', '-838:59:59.99'), (2001, 'zero', '00:00:00');

-- generated columns: the target computes them, a replay never writes them ----------------
CREATE TABLE gen (id INT NOT NULL PRIMARY KEY, a INT, b INT AS (a * 2) VIRTUAL, c VARCHAR(20) AS (CONCAT('x', a)) PERSISTENT);
INSERT INTO gen (id, a) VALUES (1, 10), (2, 20), (3, NULL);
UPDATE gen SET a = a + 1 WHERE id = 2;
DELETE FROM gen WHERE id = 1;
