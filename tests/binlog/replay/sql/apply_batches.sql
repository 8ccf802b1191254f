-- binlog apply's multi-row statements (binlog.replay.batch): the same keys touched several
-- times in one transaction and in one rows event, key changes, multi-table transactions,
-- a table without a key, a text key under a case-insensitive collation, a two-column key,
-- legacy temporals.  The DML runs after a FLUSH LOGS (tests/binlog/replay/test_apply_batches.py).
--! set-global mysql56_temporal_format=OFF
CREATE TABLE ab.legacy (id INT NOT NULL PRIMARY KEY, ts TIMESTAMP(3) NULL, dt DATETIME(6) NULL, tm TIME(2) NULL);
--! set-global mysql56_temporal_format=ON
CREATE TABLE ab.k (id INT NOT NULL PRIMARY KEY, v VARCHAR(20), n INT);
CREATE TABLE ab.s (code VARCHAR(10) COLLATE utf8mb4_general_ci NOT NULL PRIMARY KEY, v INT);
CREATE TABLE ab.nopk (a INT, b VARCHAR(10));
CREATE TABLE ab.u (id INT NOT NULL PRIMARY KEY, u INT NOT NULL, v INT, UNIQUE KEY (u));
CREATE TABLE ab.c2 (a INT NOT NULL, b VARCHAR(8) NOT NULL, v DOUBLE, PRIMARY KEY (a, b));
--! flush
USE ab;
INSERT INTO ab.k SELECT seq, CONCAT('v', seq), seq FROM seq_1_to_3000;
INSERT INTO ab.u SELECT seq, seq, 0 FROM seq_1_to_500;
INSERT INTO ab.c2 SELECT seq % 50, CONCAT('b', seq DIV 50), seq / 3 FROM seq_1_to_1000;
INSERT INTO ab.legacy SELECT seq, '2020-01-01 00:00:00.123' + INTERVAL seq SECOND, '2020-01-01 00:00:00.000001' + INTERVAL seq MINUTE, SEC_TO_TIME(seq * 7) + INTERVAL 0.25 SECOND FROM seq_1_to_400;
INSERT INTO ab.s VALUES ('abc', 1), ('m', 1), ('Straße', 1), ('e', 1);
BEGIN;
UPDATE ab.k SET n = n + 1 WHERE id <= 500;
UPDATE ab.k SET n = n * 2 WHERE id <= 300;
DELETE FROM ab.k WHERE id BETWEEN 100 AND 150;
INSERT INTO ab.k VALUES (100, 'again', 1), (101, 'again', 2);
UPDATE ab.k SET n = -1 WHERE id BETWEEN 99 AND 101;
UPDATE ab.k SET id = id + 10000 WHERE id BETWEEN 200 AND 210;
INSERT INTO ab.nopk VALUES (1, 'a'), (1, 'a'), (2, 'b'), (NULL, NULL);
UPDATE ab.legacy SET ts = ts + INTERVAL 1 DAY, tm = '-12:00:00.5' WHERE id % 3 = 0;
DELETE FROM ab.k WHERE id BETWEEN 10200 AND 10203;
COMMIT;
-- two updates of the same row in one rows event: 1 -> 10001, then 10001 -> 20001
INSERT INTO ab.k (id, v, n) VALUES (1, 'x', 0), (10001, 'y', 0) ON DUPLICATE KEY UPDATE id = id + 10000;
INSERT INTO ab.k (id, v, n) VALUES (2, 'x', 0), (2, 'y', 0), (2, 'z', 0) ON DUPLICATE KEY UPDATE n = n + 5, v = VALUES(v);
-- a key shift: each row moves to the key the next one leaves
UPDATE ab.k SET id = id + 1 WHERE id BETWEEN 2900 AND 3000 ORDER BY id DESC;
UPDATE ab.k SET id = id - 1 WHERE id BETWEEN 2901 AND 3001 ORDER BY id;
-- text keys the collation takes as equal
INSERT INTO ab.s VALUES ('ABC', 2), ('Abc', 3) ON DUPLICATE KEY UPDATE code = VALUES(code), v = s.v + VALUES(v);
INSERT INTO ab.s VALUES ('M', 2), ('m ', 3), ('STRASSE', 4), ('é', 5) ON DUPLICATE KEY UPDATE code = VALUES(code), v = s.v + VALUES(v);
BEGIN;
UPDATE ab.u SET u = u + 1000 WHERE id <= 100;
UPDATE ab.u SET v = v + 1;
DELETE FROM ab.u WHERE id % 7 = 0;
UPDATE ab.c2 SET b = CONCAT(b, 'x') WHERE a < 10;
DELETE FROM ab.c2 WHERE a = 20;
UPDATE ab.nopk SET b = 'c' WHERE a = 1 LIMIT 1;
DELETE FROM ab.nopk WHERE a IS NULL;
INSERT INTO ab.k SELECT seq, 'late', seq FROM seq_20002_to_20100;
COMMIT;
BEGIN;
DELETE FROM ab.k WHERE id % 2 = 0 AND id < 3000;
INSERT INTO ab.k SELECT seq * 2, 'back', 0 FROM seq_1_to_700;
UPDATE ab.k SET v = 'twice' WHERE id < 400;
UPDATE ab.k SET v = 'thrice' WHERE id < 200;
COMMIT;
