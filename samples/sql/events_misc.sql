-- Event kinds beyond plain row events. Several binlog files: FLUSH LOGS (ROTATE) and a
-- server restart (the file ends with STOP_EVENT).
SET timestamp = 1700000000;
CREATE DATABASE em CHARACTER SET utf8mb4;
USE em;
CREATE TABLE ai (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  v VARCHAR(40),
  r DOUBLE,
  n DECIMAL(14,3)
);
CREATE TABLE xa (id INT NOT NULL PRIMARY KEY, v VARCHAR(40));

-- STATEMENT format: INTVAR (INSERT_ID, LAST_INSERT_ID), RAND, USER_VAR ----------------
SET SESSION binlog_format = 'STATEMENT';
INSERT INTO ai (v) VALUES ('auto1');
INSERT INTO ai (v) VALUES ('auto2'), ('auto3');
INSERT INTO ai (v, n) VALUES ('last id', LAST_INSERT_ID());
SET @@rand_seed1 = 12345, @@rand_seed2 = 67890;
INSERT INTO ai (v, r) VALUES ('rand', RAND());
SET @s = 'user var é', @i = 42, @neg = -7, @d = 1.25, @r = 2.5e10, @nul = NULL;
INSERT INTO ai (v, n) VALUES (@s, @i);
INSERT INTO ai (v, r, n) VALUES (@nul, @r, @d + @neg);
UPDATE ai SET v = CONCAT(v, '!') WHERE id = 1;
SELECT 100, 'loaded one' UNION ALL SELECT 101, 'loaded two' INTO OUTFILE 'em_load.txt';
LOAD DATA INFILE 'em_load.txt' INTO TABLE xa;
-- MIXED: a safe statement is logged as a statement, an unsafe one (LIMIT) as rows
SET SESSION binlog_format = 'MIXED';
INSERT INTO ai (v) VALUES ('mixed, safe');
INSERT INTO ai (v) SELECT v FROM ai WHERE id = 1 LIMIT 1;
SET SESSION binlog_format = 'ROW';

-- XA: prepared then committed, prepared then rolled back, one phase -------------------
XA START 'xa1';
INSERT INTO xa VALUES (1, 'xa one');
UPDATE ai SET v = 'changed by xa1' WHERE id = 2;
XA END 'xa1';
XA PREPARE 'xa1';
XA COMMIT 'xa1';
XA START 'xa2', 'bq', 7;
INSERT INTO xa VALUES (2, 'xa two, rolled back');
XA END 'xa2', 'bq', 7;
XA PREPARE 'xa2', 'bq', 7;
XA ROLLBACK 'xa2', 'bq', 7;
XA START 'xa3';
INSERT INTO xa VALUES (3, 'xa three, one phase');
XA END 'xa3';
XA COMMIT 'xa3' ONE PHASE;

-- multi-statement transactions --------------------------------------------------------
BEGIN;
INSERT INTO xa VALUES (10, 'in a transaction');
UPDATE ai SET r = 0.5 WHERE id = 3;
DELETE FROM xa WHERE id = 3;
COMMIT;
BEGIN;
INSERT INTO xa VALUES (11, 'rolled back');
ROLLBACK;
INSERT INTO xa VALUES (1, 'duplicate') ON DUPLICATE KEY UPDATE v = 'upserted';

-- multi-table UPDATE / DELETE: one TABLE_MAP per table, rows events for both -----------
UPDATE ai JOIN xa ON xa.id = ai.id SET ai.v = 'joined ai', xa.v = 'joined xa';
DELETE ai, xa FROM ai JOIN xa ON xa.id = ai.id WHERE xa.id = 1;

-- ROTATE ------------------------------------------------------------------------------
FLUSH LOGS;

-- a large INSERT: 300 rows x 200 bytes, split into several rows events -----------------
CREATE TABLE big (id INT NOT NULL PRIMARY KEY, v VARCHAR(255));
INSERT INTO big (id, v) WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 300) SELECT n, REPEAT(CHAR(65 + n % 26), 200) FROM s;
UPDATE big SET v = CONCAT('short ', id) WHERE id <= 40;
DELETE FROM big WHERE id > 280;
TRUNCATE TABLE big;
INSERT INTO big VALUES (1, 'after truncate');

-- DDL: ALTER (a new table version mid-case), RENAME, DROP ------------------------------
ALTER TABLE xa ADD COLUMN n INT NOT NULL DEFAULT 5, MODIFY v VARCHAR(60);
INSERT INTO xa VALUES (20, 'after alter', 6);
RENAME TABLE big TO big_renamed;
DROP TABLE big_renamed;

-- STOP: clean shutdown ends the file with STOP_EVENT; the restart opens a new file ------
--! restart
SET timestamp = 1700000100;
USE em;
INSERT INTO xa VALUES (30, 'after restart', 7);
UPDATE xa SET n = n + 1 WHERE id = 30;
