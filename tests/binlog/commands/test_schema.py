"""`binlog schema` and the schema options of `binlog dump`, as a user runs them."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "mariadb-10.11"
PREDUMP = SAMPLES / "temporal_predump.binlog"
PREDUMP_DDL = SAMPLES / "temporal_predump.schema.sql"
SEED = SAMPLES / "seed_tt_test2.binlog"


def run(*args):
    return subprocess.run([sys.executable, "-m", "binlog.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def rows(result):
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    return [r for r in records if r["op"] in ("insert", "update", "delete")]


def test_import_then_dump_with_the_store(tmp_path):
    store = tmp_path / "schemas.sqlite"
    imported = run("schema", "import", "--schema-store", store, "--schema-ddl", PREDUMP_DDL)
    assert imported.returncode == 0, imported.stderr
    assert "table(s)" in imported.stdout
    listing = run("schema", "show", "--schema-store", store)
    assert "tp.legacy_all" in listing.stdout.split()
    with_store = rows(run("dump", "--schema-store", store, PREDUMP))
    with_ddl = rows(run("dump", "--schema-ddl", PREDUMP_DDL, PREDUMP))
    assert with_store == with_ddl and with_store


def test_manual_override_is_kept_and_used(tmp_path):
    store = tmp_path / "s.sqlite"
    for column, kind, n in (("@1", "TIMESTAMP", 6), ("@1", "timestamp", 2)):
        table = "test.tt" if n == 6 else "test.test2"
        result = run("schema", "set", table, column, kind, n, "--schema-store", store)
        assert result.returncode == 0, result.stderr
    got = rows(run("dump", "--no-track-ddl", "--schema-store", store, SEED))
    assert [r["after"]["@1"] for r in got] == ["2022-11-02 11:11:22.326147", "2022-11-10 21:12:33.99"]
    shown = run("schema", "show", "test.test2", "--schema-store", store)
    assert "override\t@1\ttimestamp(2)\teverywhere" in shown.stdout


def test_inferred_precision_is_stored_marked_inferred(tmp_path):
    store = tmp_path / "s.sqlite"
    first = run("dump", "--no-track-ddl", "--infer-precision", "--schema-store", store, SEED)
    assert first.returncode == 0 and "inferred test.test2 column @1 TIMESTAMP(2)" in first.stderr
    shown = run("schema", "show", "test.test2", "--schema-store", store)
    assert "inferred\t@1\ttimestamp(2)\tfrom seed_tt_test2.binlog:1251" in shown.stdout
    # The next run reads it from the store: nothing left to infer.
    second = run("dump", "--no-track-ddl", "--schema-store", store, SEED)
    assert rows(second) == rows(first) and "inferred" not in second.stderr


def test_schema_that_contradicts_the_binlog_is_a_mismatch(tmp_path):
    wrong = tmp_path / "wrong.sql"
    wrong.write_text("CREATE DATABASE tp; USE tp;\n"
                     "CREATE TABLE legacy_all (id INT PRIMARY KEY, ts0 TIMESTAMP);\n")
    result = run("dump", "--schema-ddl", wrong, PREDUMP)
    assert result.returncode == 1
    assert "tp.legacy_all" in result.stderr and "columns" in result.stderr


def test_schema_usage_errors():
    assert run("schema", "set", "nodot", "@1", "TIME", 3, "--schema-store", "/tmp/x.sqlite").returncode == 2
    assert run("schema", "set", "a.b", "@1", "BLOB", 3, "--schema-store", "/tmp/x.sqlite").returncode == 2
    assert run("schema", "set", "a.b", "@1", "TIME", 9, "--schema-store", "/tmp/x.sqlite").returncode == 2
    assert run("dump", "--schema-ddl", "/nonexistent.sql", SEED).returncode == 2


@pytest.mark.server
def test_schema_from_a_live_server(mariadb_factory, tmp_path):
    srv = mariadb_factory({"mysql56_temporal_format": "OFF"})
    srv.execute("CREATE DATABASE live")
    srv.execute("CREATE TABLE live.t (id INT PRIMARY KEY, ts TIMESTAMP(3) NULL, tm TIME(5))")
    srv.flush_logs()      # the binlog to read starts after the CREATE
    srv.execute("INSERT INTO live.t VALUES (1, '2020-02-29 12:34:56.789', '-01:02:03.45678')")
    srv.flush_logs()
    binlog = srv.binlog_files()[-2]
    dsn = f"mysql://root@127.0.0.1:{srv.port}/live?unix_socket={srv.socket}"
    assert run("dump", binlog).returncode == 1            # no schema: stop
    got = rows(run("dump", "--schema-from", dsn, binlog))
    assert got[0]["after"] == {"id": 1, "ts": "2020-02-29 12:34:56.789", "tm": "-01:02:03.45678"}
