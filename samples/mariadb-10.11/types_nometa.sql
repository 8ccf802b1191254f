-- Default binlog_row_metadata=NO_LOG: TABLE_MAP has types and metadata but no column
-- names, no signedness, no charsets, no ENUM/SET labels. ASCII text only.
SET timestamp = 1700000000;
SET sql_mode = '';
CREATE DATABASE nm CHARACTER SET latin1;
USE nm;
CREATE TABLE mixed (
  id INT UNSIGNED NOT NULL PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED,
  si SMALLINT UNSIGNED, mi MEDIUMINT, bi BIGINT UNSIGNED,
  f FLOAT, d DOUBLE, dec1 DECIMAL(10,2), dec2 DECIMAL(20,6) UNSIGNED,
  y YEAR, dt DATE, dtm DATETIME, dtm3 DATETIME(3), ts TIMESTAMP NULL DEFAULT NULL,
  ts6 TIMESTAMP(6) NULL DEFAULT NULL, tm TIME, tm2 TIME(2),
  c CHAR(8), vc VARCHAR(40), vc_long VARCHAR(400), txt TEXT, bl BLOB,
  e ENUM('red','green','blue'), s SET('a','b','c','d'), b BIT(12)
);
INSERT INTO mixed VALUES
  (1, -128, 255, 65535, -8388608, 18446744073709551615, -1.5, 2.5e100, -12345678.90, 12345678901234.123456,
   1999, '2021-06-30', '2021-06-30 12:00:00', '2021-06-30 12:00:00.125', '2021-06-30 12:00:00', '2021-06-30 12:00:00.654321',
   '-100:00:00', '23:59:59.99', 'char', 'varchar', REPEAT('L', 400), 'some text', x'0001020304', 'green', 'a,d', b'101010101010'),
  (2, 127, 0, 0, 8388607, 0, 0, 0, 0, 0,
   0, '0000-00-00', '0000-00-00 00:00:00', '1000-01-01 00:00:00.001', '1970-01-01 00:00:01', '2038-01-19 03:14:07.999999',
   '838:59:59', '-00:00:00.01', '', '', '', '', '', 'red', '', b'0'),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE mixed SET tiu = 200, bi = 9223372036854775808, vc = 'updated', dtm3 = '2022-02-02 02:02:02.202', e = 'blue' WHERE id = 1;
UPDATE mixed SET ti = 1, s = 'b,c' WHERE id = 3;
DELETE FROM mixed WHERE id = 2;
CREATE TABLE small (a INT, b VARCHAR(5), c DATETIME(6));
INSERT INTO small VALUES (1, 'x', '2020-01-01 00:00:00.000001'), (2, 'y', NULL);
UPDATE small SET b = 'z';
DELETE FROM small;
