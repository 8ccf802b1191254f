-- MariaDB storage-level column compression (10.3+): TEXT/VARCHAR/BLOB COMPRESSED. The
-- TABLE_MAP types are BLOB_COMPRESSED (140) / VARCHAR_COMPRESSED (141); the row image
-- carries the column's compressed form (1 header byte, then raw or zlib data).
SET timestamp = 1700000000;
CREATE DATABASE cc CHARACTER SET utf8mb4;
USE cc;
CREATE TABLE t (
  id INT NOT NULL PRIMARY KEY,
  tx TEXT COMPRESSED,
  vc VARCHAR(500) COMPRESSED,
  bl BLOB COMPRESSED,
  vc_l1 VARCHAR(300) CHARACTER SET latin1 COMPRESSED,
  vb VARBINARY(200) COMPRESSED,
  plain VARCHAR(20)
);
INSERT INTO t VALUES
  (1, 'short', 'short', x'0102', 'short', x'01', 'p1'),
  (2, '', '', '', '', '', 'p2'),
  (3, REPEAT('long compressible text ', 40), REPEAT('v', 500), REPEAT(x'abcd', 400), REPEAT('é€', 150), REPEAT(x'00', 200), 'p3'),
  (4, REPEAT('😀', 300), REPEAT('ü', 500), REPEAT(x'00', 1000), REPEAT('x', 99), REPEAT(x'ff', 101), 'p4'),
  (5, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE t SET tx = REPEAT('changed ', 60), vc = 'now short', bl = REPEAT(x'11', 150) WHERE id IN (1, 3);
DELETE FROM t WHERE id = 2;
DELETE FROM t WHERE id = 4;
