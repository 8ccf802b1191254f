"""``binlog ingest`` writes runs of like rows events in one compiled call
(``records.ImagesEncoder`` as the reader's run writer, ``_speedups.encode_run`` flags 48):
the lake it makes is the one the per-event path makes, row for row and in the same order.

A real mariadbd writes the binlog: long statements (many rows events of one table in a
row), two tables interleaved in one transaction, a transaction across a UTC midnight
(``SET TIMESTAMP``: the typed tables are cut by day), minimal update images (other
column bitmaps), a JSON column (typed the Python way: no run for that table) and row
groups of a few rows (a run stops when its table's builder is full).  Both lakes are read
back with pyarrow; the runs must have taken most events, or the test proves nothing.
"""
from __future__ import annotations

import glob
import os
import zlib

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from spark_ingest import arrow_typed, records  # noqa: E402
from spark_ingest.options import parse_options  # noqa: E402
from spark_ingest.plan import build_plan  # noqa: E402
from spark_ingest.tasks import table_columns_of, write_split_local  # noqa: E402

pytestmark = pytest.mark.usefixtures("compiled")

MIDNIGHT = 1_700_006_400          # 2023-11-15 00:00:00 UTC

SCHEMA = [
    "CREATE DATABASE runs",
    """CREATE TABLE runs.a (id INT PRIMARY KEY, v VARCHAR(64), d DECIMAL(10,2), t DATETIME(6),
       f DOUBLE, n INT NULL) CHARACTER SET utf8mb4""",
    "CREATE TABLE runs.b (id INT PRIMARY KEY, j JSON, s TEXT) CHARACTER SET utf8mb4",
]
FILL = """INSERT INTO runs.{table} SELECT seq + {base}, CONCAT('row-', seq, '-', MD5(seq)), seq / 7,
          '2023-11-14 12:00:00.000001' + INTERVAL seq SECOND, seq / 3.0, IF(seq % 5 = 0, NULL, seq)
          FROM runs.seq_1_to_{rows}"""


def _write(server) -> int:
    """The binlog's statements; the row changes of table a, as the server counts them
    (the affected rows of each statement)."""
    for sql in SCHEMA:
        server.execute(sql)
    server.flush_logs()
    script = [
        "SET TIMESTAMP = %d" % (MIDNIGHT - 60),
        "BEGIN",
        FILL.format(table="a", base=0, rows=3000),
        "INSERT INTO runs.b SELECT seq, JSON_OBJECT('k', seq), REPEAT('s', seq % 40) FROM runs.seq_1_to_300",
        FILL.format(table="a", base=10_000, rows=500),
        "SET TIMESTAMP = %d" % (MIDNIGHT + 60),          # the same transaction, the next day
        FILL.format(table="a", base=20_000, rows=2000),
        "UPDATE runs.a SET v = CONCAT(v, '!'), n = n + 1 WHERE id % 3 = 0",
        "COMMIT",
        "SET SESSION binlog_row_image = 'MINIMAL'",
        "UPDATE runs.a SET f = f * 2 WHERE id % 4 = 0",
        "DELETE FROM runs.a WHERE id % 7 = 0",
        "SET SESSION binlog_row_image = 'FULL'",
        "DELETE FROM runs.b WHERE id % 2 = 0",
        "SET TIMESTAMP = DEFAULT",
    ]
    changes = 0
    for sql in script:
        affected = server.execute(sql)
        changes += affected if "runs.a" in sql else 0
    return changes


def _lake(binlog, schema_ddl, out, monkeypatch, runs: bool) -> dict:
    """The lake of ``binlog`` (one split per file, one worker) under ``out``; the number
    of runs and of their events."""
    seen = {"runs": 0, "events": 0}
    add_run = records.BatchBuilder.add_run

    def counting(self, item, heads):
        seen["runs"] += 1
        seen["events"] += len(item.events)
        add_run(self, item, heads)

    with monkeypatch.context() as patch:
        patch.setattr(records.BatchBuilder, "add_run", counting)
        patch.setattr(arrow_typed, "ROWS_PER_GROUP", 700)         # builders fill mid-run
        if not runs:
            patch.setattr(records.ImagesEncoder, "run_parts", lambda self, change, event: None)
        plan = build_plan(parse_options({"path": str(binlog), "schema-ddl": str(schema_ddl)}))
        columns = table_columns_of(plan)
        for split in plan.splits:
            write_split_local(split, plan.options, plan.snapshots[split.group], str(out / "changes"),
                              str(out / "tables"), 1, columns)
    return seen


def _tables(root) -> dict:
    """{directory: its files' rows, in file order}."""
    found: dict = {}
    for path in sorted(glob.glob(f"{root}/**/*.parquet", recursive=True),
                       key=lambda p: (os.path.dirname(p), int(p.rsplit("-", 1)[1].split(".")[0]))):
        found.setdefault(os.path.relpath(os.path.dirname(path), root), []).append(pq.read_table(path))
    return {key: pa.concat_tables(parts) for key, parts in found.items()}


@pytest.fixture
def written(mariadb_factory, tmp_path):
    """(binlog, schema DDL, row changes of table a) of a fresh server."""
    server = mariadb_factory({"binlog_row_metadata": "FULL"})
    changes_of_a = _write(server)
    ddl = tmp_path / "schema.sql"       # the typed tables' columns, as the server shows them
    ddl.write_text("USE runs;\n" + "".join(server.query(f"SHOW CREATE TABLE runs.{t}")[0][1] + ";\n"
                                            for t in "ab"))
    return server.binlog_files()[-1], ddl, changes_of_a


def _same_lakes(binlog, ddl, tmp_path, monkeypatch) -> dict:
    with_runs = _lake(binlog, ddl, tmp_path / "runs", monkeypatch, runs=True)
    without = _lake(binlog, ddl, tmp_path / "events", monkeypatch, runs=False)
    assert without["runs"] == 0
    assert with_runs["runs"] >= 10 and with_runs["events"] >= 50, with_runs
    for part in ("changes", "tables"):
        got, want = _tables(tmp_path / "runs" / part), _tables(tmp_path / "events" / part)
        assert got.keys() == want.keys(), part
        for key in want:
            assert got[key].equals(want[key]), (part, key)
    return _tables(tmp_path / "runs" / "tables")


def test_runs_make_the_lake_of_the_per_event_path(written, tmp_path, monkeypatch):
    binlog, ddl, changes_of_a = written
    tables = _same_lakes(binlog, ddl, tmp_path, monkeypatch)
    days = {key.split("_date=")[1] for key in tables if "runs.a" in key}
    assert days == {"2023-11-14", "2023-11-15"}
    assert sum(t.num_rows for key, t in tables.items() if "runs.a" in key) == changes_of_a


def _restamp(binlog, out, ts: int) -> int:
    """A copy of ``binlog`` whose third WRITE_ROWS event in a row (one statement's) is
    stamped ``ts`` (its CRC32 made anew); that event's offset."""
    data = bytearray(binlog.read_bytes())
    pos, in_a_row = 4, 0
    while pos + 19 <= len(data):
        code, size = data[pos + 4], int.from_bytes(data[pos + 9:pos + 13], "little")
        in_a_row = in_a_row + 1 if code in (23, 30) else 0
        if in_a_row == 3:
            data[pos:pos + 4] = ts.to_bytes(4, "little")
            crc = zlib.crc32(bytes(data[pos:pos + size - 4]))
            data[pos + size - 4:pos + size] = crc.to_bytes(4, "little")
            out.write_bytes(bytes(data))
            return pos
        pos += size
    raise AssertionError("no three WRITE_ROWS events in a row")


def test_a_run_ends_at_a_new_day(written, tmp_path, monkeypatch):
    """A statement's events share its timestamp, but a binlog's may not: an event of the
    next UTC day in the middle of a run goes to that day's table."""
    binlog, ddl, _ = written
    forged = tmp_path / "forged-bin.000001"
    at = _restamp(binlog, forged, MIDNIGHT + 86_400 + 5)
    tables = _same_lakes(forged, ddl, tmp_path, monkeypatch)
    next_day = [t for key, t in tables.items() if key.endswith("_date=2023-11-16")]
    assert len(next_day) == 1 and set(next_day[0].column("_pos").to_pylist()) == {at}
