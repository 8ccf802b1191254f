-- Tables created and filled BEFORE the captured binlog starts, as when a parser is pointed
-- at a running server: legacy tables (mysql56_temporal_format=OFF at CREATE) and MySQL 5.6
-- format tables (ON), TIMESTAMP/DATETIME/TIME for N = 0..6. Default binlog_row_metadata
-- (NO_LOG): the binlog has neither column names nor precisions of legacy columns; both come
-- from the schema dump (temporal_predump.schema.sql, real mariadb-dump --no-data output,
-- and temporal_predump.schema-nomarkers.sql, the same without the /* mariadb-5.3 */
-- comments, as a 10.0/10.1 dump looks).
-- Setup (recorded in expected.json "setup_steps", NOT in the stored binlog):
SET timestamp = 1700000000;
SET sql_mode = '';
CREATE DATABASE tp CHARACTER SET utf8mb4;
USE tp;
--! set-global mysql56_temporal_format=OFF
CREATE TABLE legacy_all (
  id INT NOT NULL PRIMARY KEY,
  ts0 TIMESTAMP NULL DEFAULT NULL, ts1 TIMESTAMP(1) NULL DEFAULT NULL, ts2 TIMESTAMP(2) NULL DEFAULT NULL, ts3 TIMESTAMP(3) NULL DEFAULT NULL,
  ts4 TIMESTAMP(4) NULL DEFAULT NULL, ts5 TIMESTAMP(5) NULL DEFAULT NULL, ts6 TIMESTAMP(6) NULL DEFAULT NULL,
  dt0 DATETIME NULL, dt1 DATETIME(1) NULL, dt2 DATETIME(2) NULL, dt3 DATETIME(3) NULL, dt4 DATETIME(4) NULL, dt5 DATETIME(5) NULL, dt6 DATETIME(6) NULL,
  t0 TIME NULL, t1 TIME(1) NULL, t2 TIME(2) NULL, t3 TIME(3) NULL, t4 TIME(4) NULL, t5 TIME(5) NULL, t6 TIME(6) NULL,
  note VARCHAR(30) NULL
);
-- the seed's test.tt shape (utf8, NOT NULL TIMESTAMP(6)) without a primary key
CREATE TABLE tt (
  ct timestamp(6) NOT NULL,
  st varchar(30) default NULL,
  st2 varchar(621) default NULL
) ENGINE = InnoDB CHARACTER SET = utf8;
--! set-global mysql56_temporal_format=ON
CREATE TABLE mysql56_all (
  id INT NOT NULL PRIMARY KEY,
  ts0 TIMESTAMP NULL DEFAULT NULL, ts1 TIMESTAMP(1) NULL DEFAULT NULL, ts2 TIMESTAMP(2) NULL DEFAULT NULL, ts3 TIMESTAMP(3) NULL DEFAULT NULL,
  ts4 TIMESTAMP(4) NULL DEFAULT NULL, ts5 TIMESTAMP(5) NULL DEFAULT NULL, ts6 TIMESTAMP(6) NULL DEFAULT NULL,
  dt0 DATETIME NULL, dt1 DATETIME(1) NULL, dt2 DATETIME(2) NULL, dt3 DATETIME(3) NULL, dt4 DATETIME(4) NULL, dt5 DATETIME(5) NULL, dt6 DATETIME(6) NULL,
  t0 TIME NULL, t1 TIME(1) NULL, t2 TIME(2) NULL, t3 TIME(3) NULL, t4 TIME(4) NULL, t5 TIME(5) NULL, t6 TIME(6) NULL,
  note VARCHAR(30) NULL
);
--! set-global mysql56_temporal_format=OFF
INSERT INTO legacy_all VALUES
  (1, '1970-01-01 00:00:01', '1970-01-01 00:00:01', '1970-01-01 00:00:01', '1970-01-01 00:00:01', '1970-01-01 00:00:01', '1970-01-01 00:00:01', '1970-01-01 00:00:01',
      '1000-01-01 00:00:00', '1000-01-01 00:00:00', '1000-01-01 00:00:00', '1000-01-01 00:00:00', '1000-01-01 00:00:00', '1000-01-01 00:00:00', '1000-01-01 00:00:00',
      '-838:59:59.999999', '-838:59:59.999999', '-838:59:59.999999', '-838:59:59.999999', '-838:59:59.999999', '-838:59:59.999999', '-838:59:59.999999', 'min'),
  (2, '2038-01-19 03:14:07.999999', '2038-01-19 03:14:07.999999', '2038-01-19 03:14:07.999999', '2038-01-19 03:14:07.999999', '2038-01-19 03:14:07.999999', '2038-01-19 03:14:07.999999', '2038-01-19 03:14:07.999999',
      '9999-12-31 23:59:59.999999', '9999-12-31 23:59:59.999999', '9999-12-31 23:59:59.999999', '9999-12-31 23:59:59.999999', '9999-12-31 23:59:59.999999', '9999-12-31 23:59:59.999999', '9999-12-31 23:59:59.999999',
      '838:59:59', '838:59:59', '838:59:59', '838:59:59', '838:59:59', '838:59:59', '838:59:59', 'max'),
  (3, '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00',
      '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00',
      '-00:00:00.5', '-00:00:00.5', '-00:00:00.5', '-00:00:00.5', '-00:00:00.5', '-00:00:00.5', '-00:00:00.5', 'zero'),
  (4, '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147',
      '2022/11/10 21:12:33.99', '2022/11/10 21:12:33.99', '2022/11/10 21:12:33.99', '2022/11/10 21:12:33.99', '2022/11/10 21:12:33.99', '2022/11/10 21:12:33.99', '2022/11/10 21:12:33.99',
      '12:34:56.789123', '12:34:56.789123', '12:34:56.789123', '12:34:56.789123', '12:34:56.789123', '12:34:56.789123', '12:34:56.789123', 'seed'),
  (5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO mysql56_all SELECT * FROM legacy_all;
INSERT INTO tt VALUES ('2022-11-02 11:11:22.326147', NULL, NULL), ('2022-11-10 21:12:33.99', 'pre', 'dump');
--! dump-schema tp
--! start-binlog
-- Captured: the stored binlog starts here (FLUSH BINARY LOGS + PURGE of the setup file).
SET timestamp = 1700000100;
INSERT INTO legacy_all (id, ts3, dt3, t3, note) VALUES (6, '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '-00:00:00.001', 'in binlog');
INSERT INTO mysql56_all (id, ts3, dt3, t3, note) VALUES (6, '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '-00:00:00.001', 'in binlog');
UPDATE legacy_all SET ts6 = '2000-02-29 12:34:56.000001', dt2 = '2000-02-29 12:34:56.01', t5 = '-838:59:59.99999', note = 'upd pre' WHERE id = 4;
UPDATE mysql56_all SET ts6 = '2000-02-29 12:34:56.000001', dt2 = '2000-02-29 12:34:56.01', t5 = '-838:59:59.99999', note = 'upd pre' WHERE id = 4;
UPDATE legacy_all SET ts1 = NULL, dt0 = '2022-11-10 21:12:33', t0 = '00:00:00' WHERE id IN (1, 2, 3);
UPDATE mysql56_all SET ts1 = NULL, dt0 = '2022-11-10 21:12:33', t0 = '00:00:00' WHERE id IN (1, 2, 3);
DELETE FROM legacy_all WHERE id IN (2, 5);
DELETE FROM mysql56_all WHERE id IN (2, 5);
BEGIN;
INSERT INTO tt VALUES ('2022-11-02 11:11:22.326147', 'in binlog', REPEAT('x', 300));
UPDATE tt SET st = 'upd' WHERE st = 'pre';
DELETE FROM tt WHERE st IS NULL;
COMMIT;
