-- Every MariaDB 10.11 column type family, binlog_row_metadata=FULL.
-- One table per family; INSERT (edge values + an all-NULL row), UPDATE, DELETE each.
SET timestamp = 1700000000;
SET sql_mode = '';
CREATE DATABASE tf CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
USE tf;

-- integers ------------------------------------------------------------------
CREATE TABLE ints (
  id INT NOT NULL PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED,
  si SMALLINT, siu SMALLINT UNSIGNED,
  mi MEDIUMINT, miu MEDIUMINT UNSIGNED,
  i INT, iu INT UNSIGNED,
  bi BIGINT, biu BIGINT UNSIGNED
);
INSERT INTO ints VALUES
  (1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0),
  (2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807, 18446744073709551615),
  (3, 0, 128, -1, 32768, -1, 8388608, -1, 2147483648, -1, 9223372036854775808),
  (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE ints SET ti = -1, tiu = 254, bi = 42, biu = 18446744073709551614 WHERE id = 3;
UPDATE ints SET i = 7 WHERE id = 4;
DELETE FROM ints WHERE id = 1;

-- floating point -------------------------------------------------------------
CREATE TABLE floats (
  id INT NOT NULL PRIMARY KEY,
  f FLOAT, d DOUBLE, fu FLOAT UNSIGNED, d2 DOUBLE(10,3)
);
INSERT INTO floats VALUES
  (1, 0, 0, 0, 0),
  (2, -1.5, -2.25, 1.5, -1234567.125),
  (3, 3.14159, 3.141592653589793, 0.1, 0.001),
  (4, 1.17549e-38, 2.2250738585072014e-308, 3.40282e38, 9999999.999),
  (5, -3.40282e38, -1.7976931348623157e308, 1e-10, -0.5),
  (6, 1e20, 1.5e-300, 123456, 42),
  (7, NULL, NULL, NULL, NULL);
UPDATE floats SET f = f * 2, d = -d WHERE id IN (2, 3);
DELETE FROM floats WHERE id = 1;

-- fixed point ----------------------------------------------------------------
CREATE TABLE decimals (
  id INT NOT NULL PRIMARY KEY,
  d10_2 DECIMAL(10,2), d65_30 DECIMAL(65,30), d5_0 DECIMAL(5,0),
  du DECIMAL(12,4) UNSIGNED, d4_4 DECIMAL(4,4), d18_9 DECIMAL(18,9)
);
INSERT INTO decimals VALUES
  (1, 1234567.89, '12345678901234567890123456789012345.123456789012345678901234567890', 12345, 1.5, 0.1234, 123456789.123456789),
  (2, -1234567.89, '-12345678901234567890123456789012345.123456789012345678901234567890', -12345, 0, -0.9999, -123456789.123456789),
  (3, 0, 0, 0, 0, 0, 0),
  (4, 99999999.99, '99999999999999999999999999999999999.999999999999999999999999999999', 99999, 99999999.9999, 0.9999, 999999999.999999999),
  (5, -0.01, '-0.000000000000000000000000000001', -1, 0.0001, -0.0001, -0.000000001),
  (6, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE decimals SET d10_2 = -d10_2, d65_30 = d65_30 / 7 WHERE id = 1;
DELETE FROM decimals WHERE id = 3;

-- BIT ------------------------------------------------------------------------
CREATE TABLE bits (
  id INT NOT NULL PRIMARY KEY,
  b1 BIT(1), b8 BIT(8), b17 BIT(17), b64 BIT(64)
);
INSERT INTO bits VALUES
  (1, b'0', b'0', b'0', b'0'),
  (2, b'1', b'11111111', b'11111111111111111', 18446744073709551615),
  (3, 1, 165, 65537, 81985529216486895),
  (4, NULL, NULL, NULL, NULL);
UPDATE bits SET b8 = b'00000001', b17 = b'10000000000000000' WHERE id = 1;
DELETE FROM bits WHERE id = 3;

-- YEAR and DATE (sql_mode='' allows zero dates) ----------------------------------
CREATE TABLE dates (
  id INT NOT NULL PRIMARY KEY,
  y YEAR, d DATE
);
INSERT INTO dates VALUES
  (1, 1901, '1000-01-01'),
  (2, 2155, '9999-12-31'),
  (3, 0000, '0000-00-00'),
  (4, 2024, '2024-02-29'),
  (5, 1970, '2020-00-15'),
  (6, NULL, NULL);
UPDATE dates SET y = 2000, d = '2000-01-01' WHERE id = 3;
DELETE FROM dates WHERE id = 4;

-- TIMESTAMP(0..6), MySQL 5.6 format (TIMESTAMP2) ---------------------------------
CREATE TABLE timestamps (
  id INT NOT NULL PRIMARY KEY,
  ts0 TIMESTAMP NULL DEFAULT NULL, ts1 TIMESTAMP(1) NULL DEFAULT NULL,
  ts2 TIMESTAMP(2) NULL DEFAULT NULL, ts3 TIMESTAMP(3) NULL DEFAULT NULL,
  ts4 TIMESTAMP(4) NULL DEFAULT NULL, ts5 TIMESTAMP(5) NULL DEFAULT NULL,
  ts6 TIMESTAMP(6) NULL DEFAULT NULL
);
INSERT INTO timestamps VALUES
  (1, '1970-01-01 00:00:01', '1970-01-01 00:00:01.1', '1970-01-01 00:00:01.01', '1970-01-01 00:00:01.001', '1970-01-01 00:00:01.0001', '1970-01-01 00:00:01.00001', '1970-01-01 00:00:01.000001'),
  (2, '2038-01-19 03:14:07', '2038-01-19 03:14:07.9', '2038-01-19 03:14:07.99', '2038-01-19 03:14:07.999', '2038-01-19 03:14:07.9999', '2038-01-19 03:14:07.99999', '2038-01-19 03:14:07.999999'),
  (3, '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147'),
  (4, '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00'),
  (5, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO timestamps (id, ts0, ts3, ts6) VALUES (6, NOW(), NOW(3), NOW(6));
UPDATE timestamps SET ts3 = '2000-02-29 12:34:56.789', ts6 = '2000-02-29 12:34:56.000001' WHERE id = 3;
DELETE FROM timestamps WHERE id = 1;

-- DATETIME(0..6), MySQL 5.6 format (DATETIME2) -----------------------------------
CREATE TABLE datetimes (
  id INT NOT NULL PRIMARY KEY,
  dt0 DATETIME, dt1 DATETIME(1), dt2 DATETIME(2), dt3 DATETIME(3),
  dt4 DATETIME(4), dt5 DATETIME(5), dt6 DATETIME(6)
);
INSERT INTO datetimes VALUES
  (1, '1000-01-01 00:00:00', '1000-01-01 00:00:00.0', '1000-01-01 00:00:00.00', '1000-01-01 00:00:00.000', '1000-01-01 00:00:00.0000', '1000-01-01 00:00:00.00000', '1000-01-01 00:00:00.000000'),
  (2, '9999-12-31 23:59:59', '9999-12-31 23:59:59.9', '9999-12-31 23:59:59.99', '9999-12-31 23:59:59.999', '9999-12-31 23:59:59.9999', '9999-12-31 23:59:59.99999', '9999-12-31 23:59:59.999999'),
  (3, '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00'),
  (4, '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147', '2022-11-02 11:11:22.326147'),
  (5, '2024-02-29 00:00:00.5', '2024-02-29 00:00:00.5', '2024-02-29 00:00:00.05', '2024-02-29 00:00:00.005', '2024-02-29 00:00:00.0005', '2024-02-29 00:00:00.00005', '2024-02-29 00:00:00.000005'),
  (6, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO datetimes (id, dt0, dt6) VALUES (7, NOW(), NOW(6));
UPDATE datetimes SET dt2 = '1999-12-31 23:59:59.99', dt5 = dt5 + INTERVAL 1 DAY WHERE id = 4;
DELETE FROM datetimes WHERE id = 3;

-- TIME(0..6), MySQL 5.6 format (TIME2) -----------------------------------------------
CREATE TABLE times (
  id INT NOT NULL PRIMARY KEY,
  t0 TIME, t1 TIME(1), t2 TIME(2), t3 TIME(3), t4 TIME(4), t5 TIME(5), t6 TIME(6)
);
INSERT INTO times VALUES
  (1, '-838:59:59', '-838:59:59.0', '-838:59:59.00', '-838:59:59.000', '-838:59:59.0000', '-838:59:59.00000', '-838:59:59.000000'),
  (2, '838:59:59', '838:59:59.0', '838:59:59.00', '838:59:59.000', '838:59:59.0000', '838:59:59.00000', '838:59:59.000000'),
  (3, '00:00:00', '-00:00:00.5', '-00:00:00.5', '-00:00:00.5', '-00:00:00.5', '-00:00:00.5', '-00:00:00.5'),
  (4, '12:34:56', '12:34:56.7', '12:34:56.78', '12:34:56.789', '12:34:56.7891', '12:34:56.78912', '12:34:56.789123'),
  (5, '-12:34:56', '-12:34:56.1', '-12:34:56.01', '-12:34:56.001', '-12:34:56.0001', '-12:34:56.00001', '-12:34:56.000001'),
  (6, '-00:00:01', '-00:00:00.1', '-00:00:00.01', '-00:00:00.001', '-00:00:00.0001', '-00:00:00.00001', '-00:00:00.000001'),
  (7, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE times SET t3 = '-01:00:00.250', t6 = '100:00:00.999999' WHERE id = 4;
DELETE FROM times WHERE id = 6;

-- character and binary strings ---------------------------------------------------
CREATE TABLE strings (
  id INT NOT NULL PRIMARY KEY,
  c10 CHAR(10),
  c255 CHAR(255) CHARACTER SET utf8mb4,
  vc10 VARCHAR(10),
  vc300 VARCHAR(300) CHARACTER SET utf8mb4,
  vc60_l1 VARCHAR(60) CHARACTER SET latin1,
  c5_l1 CHAR(5) CHARACTER SET latin1,
  vc20_u3 VARCHAR(20) CHARACTER SET utf8mb3,
  vc100_ascii VARCHAR(100) CHARACTER SET ascii,
  c4_bin CHAR(4) CHARACTER SET binary,
  bin8 BINARY(8),
  vbin300 VARBINARY(300)
);
INSERT INTO strings VALUES
  (1, 'abc', 'abc', 'abc', 'abc', 'abc', 'abc', 'abc', 'abc', 'ab', x'0102', x'00ff'),
  (2, '', '', '', '', '', '', '', '', '', '', ''),
  (3, 'trail  ', 'é€😀', 'ünïcødé', REPEAT('é€', 150), 'café € £ ÿ', 'é€x', 'Ωmega ñ', REPEAT('x', 100), x'00000000', x'0000000000000000', REPEAT(x'ab', 300)),
  (4, '0123456789', REPEAT('😀', 255), '0123456789', REPEAT('😀', 300), REPEAT('é', 60), 'ÀÉÎÕÜ', REPEAT('中', 20), 'A;B''C"D\\E', x'ff000000', x'0102030400000000', x'000102'),
  (5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE strings SET vc10 = 'changed', c255 = CONCAT(c255, '!'), vbin300 = x'deadbeef' WHERE id IN (1, 3);
DELETE FROM strings WHERE id = 2;

-- BLOB and TEXT of every size ---------------------------------------------------------
CREATE TABLE blobs (
  id INT NOT NULL PRIMARY KEY,
  tb TINYBLOB, b BLOB, mb MEDIUMBLOB, lb LONGBLOB,
  tt TINYTEXT, t TEXT, mt MEDIUMTEXT, lt LONGTEXT,
  t_l1 TEXT CHARACTER SET latin1
);
INSERT INTO blobs VALUES
  (1, x'00ff', x'01020304', 'mb', 'lb', 'tiny', 'text', 'medium', 'long', 'latin1 é €'),
  (2, '', '', '', '', '', '', '', '', ''),
  (3, REPEAT(x'5a', 255), REPEAT('b', 300), REPEAT('m', 1000), REPEAT('l', 1000), REPEAT('t', 255), REPEAT('é', 300), REPEAT('😀', 1000), REPEAT('long text ', 100), REPEAT('€', 500)),
  (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE blobs SET b = x'ffff', t = 'updated 😀' WHERE id = 1;
DELETE FROM blobs WHERE id = 2;

-- ENUM and SET --------------------------------------------------------------------
CREATE TABLE enums_sets (
  id INT NOT NULL PRIMARY KEY,
  e ENUM('a','b','c'),
  s SET('x','y','z'),
  e_l1 ENUM('é','€','plain') CHARACTER SET latin1,
  e300 ENUM('e001','e002','e003','e004','e005','e006','e007','e008','e009','e010','e011','e012','e013','e014','e015','e016','e017','e018','e019','e020','e021','e022','e023','e024','e025','e026','e027','e028','e029','e030','e031','e032','e033','e034','e035','e036','e037','e038','e039','e040','e041','e042','e043','e044','e045','e046','e047','e048','e049','e050','e051','e052','e053','e054','e055','e056','e057','e058','e059','e060','e061','e062','e063','e064','e065','e066','e067','e068','e069','e070','e071','e072','e073','e074','e075','e076','e077','e078','e079','e080','e081','e082','e083','e084','e085','e086','e087','e088','e089','e090','e091','e092','e093','e094','e095','e096','e097','e098','e099','e100','e101','e102','e103','e104','e105','e106','e107','e108','e109','e110','e111','e112','e113','e114','e115','e116','e117','e118','e119','e120','e121','e122','e123','e124','e125','e126','e127','e128','e129','e130','e131','e132','e133','e134','e135','e136','e137','e138','e139','e140','e141','e142','e143','e144','e145','e146','e147','e148','e149','e150','e151','e152','e153','e154','e155','e156','e157','e158','e159','e160','e161','e162','e163','e164','e165','e166','e167','e168','e169','e170','e171','e172','e173','e174','e175','e176','e177','e178','e179','e180','e181','e182','e183','e184','e185','e186','e187','e188','e189','e190','e191','e192','e193','e194','e195','e196','e197','e198','e199','e200','e201','e202','e203','e204','e205','e206','e207','e208','e209','e210','e211','e212','e213','e214','e215','e216','e217','e218','e219','e220','e221','e222','e223','e224','e225','e226','e227','e228','e229','e230','e231','e232','e233','e234','e235','e236','e237','e238','e239','e240','e241','e242','e243','e244','e245','e246','e247','e248','e249','e250','e251','e252','e253','e254','e255','e256','e257','e258','e259','e260','e261','e262','e263','e264','e265','e266','e267','e268','e269','e270','e271','e272','e273','e274','e275','e276','e277','e278','e279','e280','e281','e282','e283','e284','e285','e286','e287','e288','e289','e290','e291','e292','e293','e294','e295','e296','e297','e298','e299','e300'),
  s20 SET('s01','s02','s03','s04','s05','s06','s07','s08','s09','s10','s11','s12','s13','s14','s15','s16','s17','s18','s19','s20'),
  s64 SET('b01','b02','b03','b04','b05','b06','b07','b08','b09','b10','b11','b12','b13','b14','b15','b16','b17','b18','b19','b20','b21','b22','b23','b24','b25','b26','b27','b28','b29','b30','b31','b32','b33','b34','b35','b36','b37','b38','b39','b40','b41','b42','b43','b44','b45','b46','b47','b48','b49','b50','b51','b52','b53','b54','b55','b56','b57','b58','b59','b60','b61','b62','b63','b64')
);
INSERT INTO enums_sets VALUES
  (1, 'a', 'x', 'é', 'e001', 's01', 'b01'),
  (2, 'c', 'x,y,z', '€', 'e300', 's01,s09,s17,s20', 'b01,b08,b09,b32,b33,b64'),
  (3, '', '', 'plain', 'e256', '', ''),
  (4, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE enums_sets SET e = 'b', s = 'y,z', e300 = 'e255' WHERE id = 1;
DELETE FROM enums_sets WHERE id = 3;

-- JSON (MariaDB: LONGTEXT utf8mb4_bin + CHECK json_valid) ------------------------
CREATE TABLE jsons (
  id INT NOT NULL PRIMARY KEY,
  j JSON
);
INSERT INTO jsons VALUES
  (1, '{"a": 1, "b": [1, 2.5, "x", true, null], "c": {"d": "é😀"}}'),
  (2, '[]'),
  (3, '"just a string"'),
  (4, '12345678901234567890'),
  (5, NULL);
UPDATE jsons SET j = JSON_SET(j, '$.a', 2) WHERE id = 1;
DELETE FROM jsons WHERE id = 2;

-- spatial -------------------------------------------------------------------------
CREATE TABLE geoms (
  id INT NOT NULL PRIMARY KEY,
  g GEOMETRY, p POINT, ls LINESTRING, poly POLYGON,
  mp MULTIPOINT, gc GEOMETRYCOLLECTION
);
INSERT INTO geoms VALUES
  (1, ST_GeomFromText('POINT(1 2)'), ST_GeomFromText('POINT(-1.5 2.25)'),
      ST_GeomFromText('LINESTRING(0 0, 1 1, 2 0)'),
      ST_GeomFromText('POLYGON((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 3 2, 3 3, 2 2))'),
      ST_GeomFromText('MULTIPOINT(1 1, 2 2)'),
      ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1), LINESTRING(0 0, 1 1))')),
  (2, ST_GeomFromText('POLYGON((0 0, 1 0, 1 1, 0 0))', 4326), ST_GeomFromText('POINT(45 90)', 4326),
      NULL, NULL, NULL, NULL),
  (3, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE geoms SET p = ST_GeomFromText('POINT(3 4)') WHERE id = 1;
DELETE FROM geoms WHERE id = 2;

-- INET6, UUID (MariaDB 10.5 / 10.7 data types) and INET4 (10.10) ----------------
CREATE TABLE net_ids (
  id INT NOT NULL PRIMARY KEY,
  ip6 INET6, ip4 INET4, u UUID
);
INSERT INTO net_ids VALUES
  (1, '::1', '127.0.0.1', '123e4567-e89b-12d3-a456-426614174000'),
  (2, '2001:db8::ff00:42:8329', '255.255.255.255', 'f47ac10b-58cc-4372-a567-0e02b2c3d479'),
  (3, '::ffff:192.0.2.1', '0.0.0.0', '00000000-0000-0000-0000-000000000000'),
  (4, NULL, NULL, NULL);
UPDATE net_ids SET ip6 = 'fe80::1', u = 'ffffffff-ffff-ffff-ffff-ffffffffffff' WHERE id = 1;
DELETE FROM net_ids WHERE id = 3;

-- no primary key, nullable everything: row order in the snapshot is by all columns --
CREATE TABLE nopk (
  a INT, b VARCHAR(10), c DATETIME(3)
);
INSERT INTO nopk VALUES (2, 'b', '2001-01-01 00:00:00.001'), (1, 'a', NULL), (NULL, NULL, NULL);
UPDATE nopk SET b = 'bb' WHERE a = 2;
DELETE FROM nopk WHERE a IS NULL;
