-- Precision and format changes of legacy (MariaDB 5.3 format) columns in the middle of
-- the binlog. The server starts with mysql56_temporal_format=OFF.
-- 1. ALTER TABLE ... MODIFY changes N of legacy columns: the TABLE_MAP type codes stay
--    7/12/11 (no metadata), only the row image sizes change (TIME(2) 4 bytes -> TIME(5)
--    5 bytes, DATETIME(6) 8 bytes -> DATETIME(3) 7 bytes, DATETIME(0) 8 bytes LE ->
--    DATETIME(6) 8 bytes BE: same size, other encoding).
-- 2. SET GLOBAL mysql56_temporal_format=ON, ALTER TABLE ... FORCE: every temporal column
--    of the table becomes TIME2/DATETIME2/TIMESTAMP2 (a table-copying ALTER converts all
--    of them to the format in force; INSTANT/INPLACE are refused for this).
-- 3. SET GLOBAL ... OFF again and an ALTER that converts a 5.6-format table back to legacy.
-- Rows are written before and after every change; UPDATEs/DELETEs touch rows written
-- before the change (their before images are logged in the new layout).
SET timestamp = 1700000000;
SET sql_mode = '';
CREATE DATABASE ta CHARACTER SET utf8mb4;
USE ta;
--! set-global mysql56_temporal_format=OFF
CREATE TABLE alt (
  id INT NOT NULL PRIMARY KEY,
  t TIME(2) NULL,
  dt DATETIME(6) NULL,
  ts TIMESTAMP(3) NULL DEFAULT NULL,
  note VARCHAR(20) NULL
);
CREATE TABLE alt0 (
  id INT NOT NULL PRIMARY KEY,
  d DATETIME NULL,
  t0 TIME NULL,
  ts0 TIMESTAMP NULL DEFAULT NULL
);
INSERT INTO alt VALUES
  (1, '-838:59:59.99', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999', 'before'),
  (2, '12:34:56.78', '2022-11-10 21:12:33.99', '2022-11-02 11:11:22.326', 'before'),
  (3, '-00:00:00.5', '0000-00-00 00:00:00', '0000-00-00 00:00:00', 'zero'),
  (4, NULL, NULL, NULL, 'nulls');
INSERT INTO alt0 VALUES
  (1, '2022-11-10 21:12:33', '-838:59:59', '1970-01-01 00:00:01'),
  (2, '1000-01-01 00:00:00', '838:59:59', '2038-01-19 03:14:07'),
  (3, NULL, NULL, NULL);
-- legacy TIME(2) -> legacy TIME(5)
ALTER TABLE alt MODIFY t TIME(5) NULL;
INSERT INTO alt VALUES (5, '838:59:59.99999', '2001-02-03 04:05:06.654321', '2001-02-03 04:05:06.654', 't5');
UPDATE alt SET t = '-12:34:56.12345', note = 'upd t5' WHERE id = 2;
-- legacy DATETIME(6) -> legacy DATETIME(3)
ALTER TABLE alt MODIFY dt DATETIME(3) NULL;
INSERT INTO alt VALUES (6, '00:00:00.00001', '1000-01-01 00:00:00.001', '1970-01-01 00:00:01.001', 'dt3');
UPDATE alt SET dt = '2022-11-02 11:11:22.326', ts = '2022-11-10 21:12:33.990' WHERE id IN (1, 5);
DELETE FROM alt WHERE id = 3;
-- legacy DATETIME (8 bytes LE) -> legacy DATETIME(6) (8 bytes BE); TIME -> TIME(1); TIMESTAMP -> TIMESTAMP(6)
ALTER TABLE alt0 MODIFY d DATETIME(6) NULL, MODIFY t0 TIME(1) NULL, MODIFY ts0 TIMESTAMP(6) NULL DEFAULT NULL;
INSERT INTO alt0 VALUES (4, '2022-11-02 11:11:22.326147', '-00:00:00.5', '2022-11-02 11:11:22.326147');
UPDATE alt0 SET d = '9999-12-31 23:59:59.999999', t0 = '12:34:56.7' WHERE id = 1;
DELETE FROM alt0 WHERE id = 2;
-- switch ON and rebuild: every temporal column of alt becomes MySQL 5.6 format
--! set-global mysql56_temporal_format=ON
ALTER TABLE alt FORCE;
INSERT INTO alt VALUES (7, '-838:59:59.99999', '9999-12-31 23:59:59.999', '2038-01-19 03:14:07.999', 'mysql56');
UPDATE alt SET t = '01:02:03.45678', note = 'upd 56' WHERE id = 1;
UPDATE alt SET dt = '0000-00-00 00:00:00' WHERE id = 4;
DELETE FROM alt WHERE id = 6;
-- precision change of a MySQL 5.6 format column while ON: stays 5.6 format
ALTER TABLE alt MODIFY t TIME(1) NULL;
INSERT INTO alt VALUES (8, '-00:00:00.5', '2022-11-10 21:12:33.990', '2022-11-10 21:12:33.990', 'time2(1)');
UPDATE alt SET note = 'after t1' WHERE id = 2;
-- switch OFF and rebuild: back to the legacy format (both directions)
--! set-global mysql56_temporal_format=OFF
ALTER TABLE alt MODIFY ts TIMESTAMP(6) NULL DEFAULT NULL;
INSERT INTO alt VALUES (9, '838:59:59.9', '1000-01-01 00:00:00.999', '2038-01-19 03:14:07.999999', 'legacy again');
UPDATE alt SET ts = '1970-01-01 00:00:01.000001' WHERE id = 7;
DELETE FROM alt WHERE id = 1;
-- alt0 was never rebuilt while ON: still legacy
INSERT INTO alt0 VALUES (5, '2001-02-03 04:05:06.000007', '838:59:59.9', '1970-01-01 00:00:01.000001');
