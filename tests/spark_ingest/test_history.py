"""``binlog history`` over a lake (``spark_ingest.history``, DuckDB): the changes of one row,
one transaction and one time range, as ``binlog dump --format json`` prints them.

A real mariadbd (the session's) writes the binlog; what each statement changed is what the server says
(the affected rows, and the row read back after each statement with ``CAST(col AS
CHAR)``).  Row 5 is inserted, updated, renamed to 1005 (its key changes: the history
follows it), updated and deleted; another row takes key 5 afterwards (its history is
that of key 5 too, from its insert on).  Each table's name needs escaping in its
directory (Parquet; the Delta lake has plain names: deltalake reads a path's %2F as /),
and a key of two columns is asked for.
"""
from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stdout

import pytest

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

from binlog.cli import main  # noqa: E402

DAY = 1_700_000_000 - 1_700_000_000 % 86_400       # 2023-11-14 00:00 UTC
# (database, table) per lake format
NAMES = {"parquet": ("h:db", "t/1"), "delta": ("hdb", "t1")}
TABLES = [
    "CREATE DATABASE `{db}`",
    "CREATE TABLE `{db}`.`{t}` (id INT PRIMARY KEY, v VARCHAR(20), n DECIMAL(8,2)) CHARACTER SET utf8mb4",
    "CREATE TABLE `{db}`.pair (a INT, b VARCHAR(5), v INT, PRIMARY KEY (a, b)) CHARACTER SET utf8mb4",
]
# (the time each runs at, the statement); the row of key 5 is followed
WORKLOAD = [
    (DAY + 10, "INSERT INTO `{db}`.`{t}` VALUES (5, 'five', 5.5), (6, 'six', 6)"),
    (DAY + 20, "UPDATE `{db}`.`{t}` SET v = 'FIVE' WHERE id = 5"),
    (DAY + 30, "INSERT INTO `{db}`.pair VALUES (1, 'x', 1), (1, 'y', 2)"),
    (DAY + 40, "UPDATE `{db}`.`{t}` SET id = 1005 WHERE id = 5"),
    (DAY + 86_400 + 10, "UPDATE `{db}`.`{t}` SET n = n * 2 WHERE id = 1005"),
    (DAY + 86_400 + 20, "UPDATE `{db}`.pair SET v = v + 10 WHERE a = 1"),
    (DAY + 86_400 + 30, "DELETE FROM `{db}`.`{t}` WHERE id = 1005"),
    (DAY + 86_400 + 40, "INSERT INTO `{db}`.`{t}` VALUES (5, 'new five', 0)"),
]


def _run(*args) -> list[str]:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    with redirect_stdout(out):
        assert main(list(map(str, args))) == 0
    out.flush()
    return out.buffer.getvalue().decode().splitlines()


def history(*args) -> list[dict]:
    return [json.loads(line) for line in _run("history", *args)]


def dump(binlog) -> list[str]:
    return _run("dump", binlog)


@pytest.fixture(scope="module", params=["parquet", "delta"])
def written(request, tmp_path_factory, mariadb_server):
    """(binlog, {statement index: (affected rows, row 5/1005 read back after it)}, lake,
    (db, table)) of the session's server (binlog_row_metadata=FULL), its tables made
    before the binlog, ingested as ``request.param``."""
    if request.param == "delta":
        pytest.importorskip("deltalake")
    db, table = NAMES[request.param]
    server = mariadb_server
    try:
        for sql in TABLES:
            server.execute(sql.format(db=db, t=table))
        server.flush_logs()
        seen = {}
        for at, (ts, sql) in enumerate(WORKLOAD):
            server.execute(f"SET TIMESTAMP = {ts}")
            affected = server.execute(sql.format(db=db, t=table))
            row = server.query(f"SELECT CAST(id AS CHAR), v, CAST(n AS CHAR) FROM `{db}`.`{table}` "
                               "WHERE id IN (5, 1005) ORDER BY id")
            seen[at] = (affected, row)
        server.flush_logs()
        binlog = tmp_path_factory.mktemp("binlog") / "mariadb-bin.000001"
        shutil.copyfile(server.binlog_files()[-2], binlog)
    finally:
        server.execute("SET TIMESTAMP = DEFAULT")          # (a shared server: as it was)
        server.execute(f"DROP DATABASE IF EXISTS `{db}`")
    lake = tmp_path_factory.mktemp("history") / request.param
    assert main(["ingest", "--no-progress", str(binlog), "--to", str(lake), "--format", request.param]) == 0
    return binlog, seen, lake, (db, table)


def test_the_history_of_a_row_follows_its_key(written):
    binlog, seen, lake, (db, table) = written
    got = history(lake, "--table", f"{db}.{table}", "--key", "id=5")
    assert [r["op"] for r in got] == ["insert", "update", "update", "update", "delete", "insert"]
    # each change's after image is the row the server had after the statement
    images = [r["after"] or r["before"] for r in got]
    for image, at in zip(images, (0, 1, 3, 4, 6, 7), strict=True):
        affected, rows = seen[at]
        assert affected >= 1
        if rows and at != 6:
            assert [str(image["id"]), image["v"], image["n"]] == list(rows[-1 if at != 7 else 0])
    # byte for byte the lines of binlog dump
    lines = set(dump(binlog))
    assert all(json.dumps(r, separators=(",", ":"), ensure_ascii=False) in lines for r in got)


def test_a_key_of_two_columns(written):
    _, _, lake, (db, _) = written
    got = history(lake, "--table", f"{db}.pair", "--key", "a=1", "--key", "b=y")
    assert [(r["op"], (r["after"] or {}).get("v")) for r in got] == [("insert", 2), ("update", 12)]


def test_one_transaction(written):
    binlog, seen, lake, (db, table) = written
    rename = [json.loads(line) for line in dump(binlog) if '"op":"update"' in line and '"id":1005' in line]
    gtid = rename[0]["gtid"]
    got = history(lake, "--gtid", gtid)
    assert len(got) == seen[3][0] == 1 and (got[0]["db"], got[0]["table"]) == (db, table)


def test_one_time_range(written):
    _, seen, lake, (db, _) = written
    got = history(lake, "--start-datetime", "2023-11-15 00:00:00", "--stop-datetime", "2023-11-15 00:00:35")
    # the statements at DAY + 86_400 + 10, 20 and 30
    assert len(got) == seen[4][0] + seen[5][0] + seen[6][0]
    assert [r["op"] for r in got] == ["update", "update", "update", "delete"]
    assert history(lake, "--table", f"{db}.pair", "--stop-datetime", "2023-11-14 00:00:31") != []
    assert history(lake, "--table", f"{db}.pair", "--stop-datetime", "2023-11-14 00:00:30") == []


def test_a_damaged_lake_is_an_input_error(written, tmp_path):
    """A Parquet file of changes/ cut short: exit 1 naming the lake and DuckDB's reason,
    no traceback."""
    import subprocess
    import sys
    from pathlib import Path

    _, _, lake, _ = written
    copy = tmp_path / "lake"
    shutil.copytree(lake, copy)
    victim = max((copy / "changes").rglob("*.parquet"), key=lambda p: p.stat().st_size)
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    done = subprocess.run([sys.executable, "-m", "binlog.cli", "history", str(copy), "--start-datetime",
                           "2000-01-01 00:00:00"], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 1, done.stderr
    assert "DuckDB could not read the lake" in done.stderr and "Traceback" not in done.stderr
