"""Tables no schema describes, typed in the tasks from their JSON images
(``spark_ingest.shredded``), make the lake the driver made before, reading changes/ back
(``schemaless_reference``): the same files' columns and Arrow types, the same rows in
the same order, table by table.

A real mariadbd writes the binlogs, its tables created before them (no DDL inside, no
schema given: the forensics case), with ``binlog_row_metadata`` FULL (keys: the names,
some needing escapes) and NO_LOG (keys ``@N``, text of unknown charset as
``{"bytes_hex": ...}`` objects): every column kind, doubles of any exponent, quotes,
control characters and emoji in text, full and minimal row images, rows across a UTC
midnight, a DDL statement naming a table.  One split per transaction, so a table's keys
differ between splits (minimal images) and the driver conforms the files.  The values
of the columns a server renders as text the same way are checked against its ``CAST(col
AS CHAR)``.
"""
from __future__ import annotations

import glob
import os

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from support.schemaless_reference import write_schemaless_table  # noqa: E402

from binlog import rows  # noqa: E402
from binlog.cli import main  # noqa: E402
from spark_ingest import shredded  # noqa: E402
from spark_ingest.partitions import partition_value  # noqa: E402

MIDNIGHT = 1_700_006_400          # 2023-11-15 00:00:00 UTC

TABLES = [
    "CREATE DATABASE sl",
    """CREATE TABLE sl.kinds (id INT PRIMARY KEY, ti TINYINT, su SMALLINT UNSIGNED, bi BIGINT UNSIGNED,
       de DECIMAL(30,10), fl FLOAT, db DOUBLE, dt DATETIME(6), ts TIMESTAMP(3) NULL, d DATE, tm TIME(2),
       y YEAR, bt BIT(10), en ENUM('a','b'), st SET('x','y','z'), vc VARCHAR(50), tx TEXT, bn VARBINARY(20),
       bl BLOB, js JSON, ch CHAR(5) CHARACTER SET latin1) CHARACTER SET utf8mb4""",
    """CREATE TABLE sl.`odd names` (`id` INT PRIMARY KEY, `"q"` VARCHAR(10), `back\\slash` INT, `é` DOUBLE,
       `@1` VARCHAR(10)) CHARACTER SET utf8mb4""",
    "CREATE TABLE sl.late (id INT PRIMARY KEY, v VARCHAR(20), w INT) CHARACTER SET utf8mb4",
    "INSERT INTO sl.late VALUES (1, 'one', 1), (2, 'two', 2), (3, 'three', 3)",
]
KINDS = """INSERT INTO sl.kinds VALUES
  ({id}, -128, 65535, 18446744073709551615, -12345678901234567890.0123456789, 3.4e38, 1e300,
   '2023-11-14 23:59:59.999999', '2023-11-14 12:00:00.123', '1000-01-01', '-838:59:59.99', 2155, b'1010101010',
   'b', 'x,z', 'quote " back \\\\ ctl \\n\\t\\0 emoji 😀', REPEAT('t', {id}), x'00ff22', x'5c22',
   '{{"k": [1, 2.5, "é"], "n": null}}', 'café'),
  ({id2}, 0, 0, 0, 0, -1.5e-30, -2.2250738585072014e-308, '0000-00-00 00:00:00', NULL, '0000-00-00', '00:00:00',
   0, b'0', 'a', '', '', '', '', '', '[]', ''),
  ({id3}, NULL, NULL, NULL, NULL, NULL, 0.1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL)"""
WORKLOAD = [
    "SET TIMESTAMP = %d" % (MIDNIGHT - 60),
    "SET SESSION binlog_row_image = 'MINIMAL'",
    "UPDATE sl.late SET v = CONCAT(v, '!') WHERE id < 3",        # split 1 sees only v (and id)
    "SET SESSION binlog_row_image = 'FULL'",
    "INSERT INTO sl.late VALUES (4, 'four', 4)",
    KINDS.format(id=1, id2=2, id3=3),
    """INSERT INTO sl.`odd names` VALUES (1, 'a"b', -1, 12345678.9, 'x'), (2, NULL, 2, 1e-4, NULL)""",
    "BEGIN",
    KINDS.format(id=10, id2=11, id3=12),
    "UPDATE sl.kinds SET vc = CONCAT(vc, '!'), db = db / 3 WHERE id IN (1, 10)",
    "SET TIMESTAMP = %d" % (MIDNIGHT + 60),                       # the same transaction, the next day
    "UPDATE sl.`odd names` SET `é` = -`é`, `\"q\"` = 'z' WHERE id = 1",
    "DELETE FROM sl.kinds WHERE id = 11",
    "COMMIT",
    "SET SESSION binlog_row_image = 'MINIMAL'",
    "UPDATE sl.kinds SET tm = '12:34:56.78' WHERE id = 2",
    "DELETE FROM sl.`odd names` WHERE id = 2",
    "SET SESSION binlog_row_image = 'FULL'",
    "ALTER TABLE sl.late ADD COLUMN z INT",                         # a DDL record naming the table
    "INSERT INTO sl.late VALUES (5, 'five', 5, 5)",
    "SET TIMESTAMP = DEFAULT",
]
# columns a server casts to text as binlog dump renders them (no float, binary or bit)
CAST = ["id", "ti", "su", "bi", "de", "dt", "ts", "d", "tm", "y", "en", "vc", "tx"]


@pytest.fixture(params=["FULL", "NO_LOG"])
def written(request, mariadb_factory):
    """(server, binlog, metadata) of a fresh server that ran WORKLOAD on tables made before
    its binlog."""
    server = mariadb_factory({"binlog_row_metadata": request.param, "default_time_zone": "+00:00"})
    for sql in TABLES:
        server.execute(sql)
    server.flush_logs()
    for sql in WORKLOAD:
        server.execute(sql)
    server.flush_logs()
    return server, server.binlog_files()[-2], request.param


def _ingest(binlog, out, *extra) -> None:
    # one split per transaction (a split is at least a transaction)
    assert main(["ingest", "--no-progress", "--engine", "local", "--parallelism", "1", "--split-size", "1",
                 str(binlog), "--to", str(out), *extra]) == 0


def _reference(lake, out) -> None:
    changes = lake / "changes" / "run=1"
    for where in sorted(changes.glob("db=*/table=*")):
        db, table = where.parent.name[3:], where.name[6:]
        assert partition_value(db) == db and partition_value(table) == table.replace(" ", " ")
        write_schemaless_table(changes, out / "tables", 1, db, table)


def _tables(root) -> dict:
    """{directory: its files' rows in file order (split, then number)}."""
    found: dict = {}

    def order(path):
        split, number = os.path.basename(path)[len("part-"):-len(".parquet")].split("-")
        return os.path.dirname(path), int(split), int(number)

    for path in sorted(glob.glob(f"{root}/**/*.parquet", recursive=True), key=order):
        found.setdefault(os.path.relpath(os.path.dirname(path), root), []).append(pq.read_table(path))
    return {key: pa.concat_tables(parts) for key, parts in found.items()}


def _same_tables(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for key in want:
        assert got[key].schema == want[key].schema, key
        assert got[key].to_pylist() == want[key].to_pylist(), key


def test_the_tasks_make_the_tables_the_driver_made(written, tmp_path, monkeypatch):
    server, binlog, metadata = written
    rewritten = []
    rewrite = shredded._rewrite
    monkeypatch.setattr(shredded, "_rewrite", lambda path, names: (rewritten.append(path), rewrite(path, names)))
    _ingest(binlog, tmp_path / "lake")
    _reference(tmp_path / "lake", tmp_path / "reference")
    got, want = _tables(tmp_path / "lake" / "tables"), _tables(tmp_path / "reference" / "tables")
    assert len(want) == 6           # each table over two days
    _same_tables(got, want)
    # sl.late's first split saw only the minimal update's keys: its file was conformed
    assert any("sl.late" in path for path in rewritten)
    if metadata == "FULL":
        names = want["sl.odd%20names/_run=1/_date=2023-11-14"].schema.names
        assert names[6:-1] == ["@1", '"q"', "back\\slash", "id", "é"]     # @N first, then names
        kinds = got["sl.kinds/_run=1/_date=2023-11-14"]
        inserted = {r["id"]: r for r in kinds.to_pylist() if r["_op"] == "insert"}
        server_rows = server.query(f"SELECT {', '.join(f'CAST({c} AS CHAR)' for c in CAST)} FROM sl.kinds "
                                   "WHERE id IN (3, 12)")
        assert [tuple(inserted[row[0]][c] for c in CAST) for row in server_rows] == server_rows
    else:
        assert want["sl.kinds/_run=1/_date=2023-11-14"].schema.names[6:8] == ["@1", "@2"]


def test_without_the_compiled_module_the_same_tables(written, tmp_path, monkeypatch):
    _, binlog, _ = written
    _ingest(binlog, tmp_path / "compiled")
    monkeypatch.setattr(rows, "_speedups", None)
    _ingest(binlog, tmp_path / "python")
    _same_tables(_tables(tmp_path / "python" / "tables"), _tables(tmp_path / "compiled" / "tables"))
