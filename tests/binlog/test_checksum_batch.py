"""``dump --checksum`` on a real server's binlog: the compiled encoder computes each
record's TiCDC checksums from the row's bytes (``_speedups`` flag 8).  Expected values
come from the server: ``verify-rows --records`` recomputes every row's checksum from the
values the server that wrote the binlog holds, and they must all be equal; the pure path
and the per-row path give the same lines byte for byte."""
from __future__ import annotations

import json

import pytest
from replay_helpers import cli, dsn, run_script

pytestmark = pytest.mark.server

SCRIPT = """
CREATE DATABASE ck;
CREATE TABLE ck.t (
  id INT NOT NULL PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, mi MEDIUMINT, bu BIGINT UNSIGNED,
  bi BIGINT, f FLOAT, d DOUBLE, n DECIMAL(20,6), b BIT(13), e ENUM('x','y','z'),
  s SET('a','b','c'), y YEAR, dt DATE, dtm DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME(2),
  c CHAR(5) CHARACTER SET utf8mb4, v VARCHAR(20) CHARACTER SET latin1, bn BINARY(4),
  vb VARBINARY(10), tx TEXT CHARACTER SET utf8mb4, bl BLOB, j JSON, g GEOMETRY
) CHARACTER SET utf8mb4;
INSERT INTO ck.t VALUES
  (1, -128, 255, -8388608, 18446744073709551615, -9223372036854775808, 1.5, -2.25e-300,
   -12345678901234.000001, b'1010101010101', 'y', 'a,c', 2024, '2024-02-29',
   '2024-02-29 23:59:59.999999', '2038-01-19 03:14:07.999', '-838:59:59.99', 'ab\\'c',
   'caf\\xe9 \\xc3\\xa9', 'ab', x'00ff', 'text \\xe2\\x98\\x83', x'000102', '{"k": [1, 2.5, null]}',
   ST_GeomFromText('POINT(1 2)')),
  (2, 0, 0, 0, 0, 0, 0, -0.0, 0.000000, b'0', 'x', '', 1901, '1000-01-01', '1000-01-01 00:00:00',
   '1970-01-01 00:00:01', '00:00:00', '', '', '', '', '', '', '[]', NULL),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (4, 127, 1, 8388607, 1, 9223372036854775807, -3.4e38, 1.7976931348623157e308,
   -0.000001, b'1111111111111', 'z', 'a,b,c', 2155, '9999-12-31', '9999-12-31 23:59:59.000001',
   '2000-01-01 00:00:00.5', '838:59:59.99', 'x', 'y', 'abcd', x'ff', REPEAT('w', 300),
   REPEAT(x'ee', 300), '"s"', ST_GeomFromText('LINESTRING(0 0, 1 1)'));
UPDATE ck.t SET n = n * -1, tx = CONCAT(tx, '!'), e = 'x', bn = 'z' WHERE id IN (1, 4);
UPDATE ck.t SET id = 5 WHERE id = 2;
DELETE FROM ck.t WHERE id = 3;
INSERT INTO ck.t (id, v) VALUES (6, 'only');
"""


@pytest.mark.usefixtures("compiled")
def test_checksums_of_every_type_are_the_servers(mariadb_factory):
    server = mariadb_factory({"binlog_row_metadata": "FULL"})
    server.flush_logs()
    run_script(server, SCRIPT)
    files = [str(p) for p in server.binlog_files()]
    compiled = cli("dump", "--checksum", *files)
    assert compiled.returncode == 0, compiled.stderr.decode()
    for env in ({"BINLOG_PURE": "1"}, {"BINLOG_BATCH": "0"}):
        other = cli("dump", "--checksum", *files, env=env)
        assert other.returncode == 0, other.stderr.decode()
        assert other.stdout == compiled.stdout, env
    records = [json.loads(line) for line in compiled.stdout.splitlines()]
    rows = [r for r in records if r["op"] in ("insert", "update", "delete")]
    assert len(rows) == 9
    # the fields of the plain JSON records, and the checksums before the commit fields
    assert list(rows[0])[-6:] == ["row", "pk", "checksum", "commit", "xid", "end_pos"]
    plain = cli("dump", *files)
    plain_rows = [json.loads(line) for line in plain.stdout.splitlines()]
    plain_rows = [r for r in plain_rows if r["op"] in ("insert", "update", "delete")]
    assert [{k: v for k, v in r.items() if k != "checksum"} for r in rows] == plain_rows
    assert all(r["checksum"]["current"] is not None for r in rows if r["op"] != "delete")

    # every row's last image against the server's own values (the expected values)
    verified = cli("verify-rows", "--records", "--against", dsn(server), "-", input=compiled.stdout)
    out = verified.stdout.decode()
    assert verified.returncode == 0, out + verified.stderr.decode()
    assert "verify-rows: 6 row(s) checked, 6 equal, 0 different" in out, out

    # and one value changed behind the binlog's back is found
    server.execute("UPDATE ck.t SET tm = '-838:59:59.98' WHERE id = 1")
    changed = cli("verify-rows", "--records", "--against", dsn(server), "-", input=compiled.stdout)
    assert changed.returncode == 6
    assert "DIFF ck.t (id=1): checksum" in changed.stdout.decode()


def test_enum_member_empty_string_is_not_checked_not_reported(mariadb_factory):
    """ENUM('', 'a'): the member '' (index 1) and the error value (index 0) both come out
    of the binlog as ''; TiCDC's checksum encodes the index, which the binlog does not
    give: such rows are counted as not checked, never reported as different."""
    server = mariadb_factory({"binlog_row_metadata": "FULL"})
    server.flush_logs()
    run_script(server, """CREATE DATABASE ce;
CREATE TABLE ce.t (id INT PRIMARY KEY, e ENUM('', 'a')) CHARACTER SET utf8mb4;
SET SESSION sql_mode = '';
INSERT INTO ce.t VALUES (1, ''), (2, 'a'), (3, 'no such member');
""")
    assert server.query("SELECT id, e + 0 FROM ce.t ORDER BY id") == [(1, 1), (2, 2), (3, 0)]
    files = [str(p) for p in server.binlog_files()]
    for args in (files, ["--records", "-"]):
        stdin = cli("dump", "--checksum", *files).stdout if args[0] == "--records" else None
        done = cli("verify-rows", "--against", dsn(server), *args, input=stdin)
        out = done.stdout.decode()
        assert done.returncode == 0, out + done.stderr.decode()
        assert "1 row(s) checked, 1 equal, 0 different, 2 not checked" in out, out
    records = [json.loads(line) for line in cli("dump", "--checksum", *files).stdout.splitlines()]
    current = {r["after"]["id"]: r["checksum"]["current"] for r in records if r["op"] == "insert"}
    assert current[1] is None and current[3] is None and current[2] is not None


def test_minimal_row_images_are_not_checked_not_reported(mariadb_factory):
    """binlog_row_image=MINIMAL: an UPDATE's after image holds the changed columns only
    (no key, no checksum): its row is counted as not checked - not compared with the
    INSERT's checksum, nor taken for a deleted row; a later full image is checked."""
    server = mariadb_factory({"binlog_row_metadata": "FULL", "binlog_row_image": "MINIMAL"})
    server.flush_logs()
    run_script(server, """CREATE DATABASE cm;
CREATE TABLE cm.t (id INT PRIMARY KEY, a INT, b VARCHAR(10));
INSERT INTO cm.t VALUES (1, 1, 'x'), (2, 2, 'y'), (3, 3, 'z');
UPDATE cm.t SET a = 10 WHERE id = 1;
UPDATE cm.t SET id = 4 WHERE id = 2;
DELETE FROM cm.t WHERE id = 3;
""")
    files = [str(p) for p in server.binlog_files()]
    records = cli("dump", "--checksum", *files).stdout
    for args, stdin in ((files, None), (["--records", "-"], records)):
        done = cli("verify-rows", "--against", dsn(server), *args, input=stdin)
        out = done.stdout.decode()
        assert done.returncode == 0, out + done.stderr.decode()
        assert "2 row(s) checked, 2 equal, 0 different, 2 not checked" in out, out
    _, stop = server.master_status()
    server.execute("DELETE FROM cm.t WHERE id = 1")         # a row the input left is gone
    gone = cli("verify-rows", "--against", dsn(server), "--stop-position", stop, *files)
    assert gone.returncode == 6 and "cm.t (id=1): missing on the target" in gone.stdout.decode()
