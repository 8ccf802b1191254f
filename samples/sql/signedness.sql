-- Signedness metadata with YEAR between numeric columns, binlog_row_metadata=FULL.
-- MariaDB's SIGNEDNESS bitmap has a bit for every Field_num column, and YEAR is one
-- (Field_year derives from Field_tiny, flagged UNSIGNED); MySQL leaves YEAR out.
-- A parser that skips YEAR shifts every later bit: a signed BIGINT after a YEAR comes
-- out as unsigned (-5 -> 18446744073709551611).
SET timestamp = 1700000000;
CREATE DATABASE sg;
USE sg;

CREATE TABLE signs (
  id INT NOT NULL PRIMARY KEY,
  y1 YEAR, b BIGINT, y2 YEAR, s SMALLINT, tu TINYINT UNSIGNED, bits BIT(5),
  e ENUM('a','b'), y3 YEAR, m MEDIUMINT, dec_s DECIMAL(10,2), dec_u DECIMAL(10,2) UNSIGNED,
  f FLOAT, fu FLOAT UNSIGNED, i INT, iu INT UNSIGNED, t TINYINT
);
INSERT INTO signs VALUES
  (1, 2001, -5, 1999, -1, 255, b'10101', 'b', 2155, -8388608, -12.50, 12.50, -1.5, 1.5, -2147483648, 4294967295, -128),
  (2, 1901, 9223372036854775807, NULL, 32767, 0, b'00000', 'a', 1901, 8388607, 99999999.99, 0, 0, 0, 2147483647, 0, 127),
  (3, NULL, -1, 2000, NULL, 128, NULL, NULL, NULL, -1, -0.01, 0.01, NULL, NULL, -1, 2147483648, -1);
UPDATE signs SET b = -9223372036854775808, s = -32768, t = -2 WHERE id = 2;
DELETE FROM signs WHERE id = 1;
