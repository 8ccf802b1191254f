"""`binlog stats`: per-table counts, bytes, largest transactions, time range, --plot."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "samples" / "mariadb-10.11"


def stats(*args):
    proc = subprocess.run([sys.executable, "-m", "binlog.cli", "stats", *map(str, args)],
                          capture_output=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc


def test_stats_counts_bytes_transactions_time_range():
    data = json.loads(stats("--json", "--top", "3", SAMPLES / "events_misc").stdout)
    assert data["files"] == 3
    # samples/sql/events_misc.sql: 300 rows inserted in one statement, 40 updated, 20 deleted
    big = data["tables"]["em.big"]
    assert (big["inserted"], big["updated"], big["deleted"]) == (301, 40, 20)
    assert big["rows_events"] >= 3 and big["bytes"] > 60000
    largest = data["largest_transactions"]
    assert [t["rows"] for t in largest] == [300, 40, 20]
    assert largest[0]["gtid"] == "0-1-24" and largest[0]["tables"] == {"em.big": 300}
    # the time range is the transactions' (1700000000..1700000100), not the files' headers
    assert data["time_range"] == {"first": "2023-11-14T22:13:20Z", "last": "2023-11-14T22:15:00Z",
                                  "seconds": 100}
    assert data["statements"]["ddl"] == 8
    text = stats(SAMPLES / "types_full.binlog").stdout.decode()
    line = next(l for l in text.splitlines() if l.startswith("tf.ints "))
    assert line.split()[1:4] == ["4", "2", "1"]
    assert "largest transactions" in text


def test_stats_plot(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "changes.png"
    stats("--plot", out, SAMPLES / "events_misc")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000


def test_plot_without_matplotlib_fails_before_the_scan(tmp_path):
    """--plot needs the [plot] extra: without matplotlib the command says so at once
    (exit 2), before reading anything - no statistics printed, then a failure."""
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "matplotlib.py").write_text("raise ImportError('matplotlib blocked by the test')\n")
    env = {**os.environ, "PYTHONPATH": f"{blocked}:{REPO}"}
    proc = subprocess.run([sys.executable, "-m", "binlog.cli", "stats", "--plot",
                           str(tmp_path / "out.png"), str(SAMPLES / "types_full.binlog")],
                          capture_output=True, cwd=REPO, env=env)
    assert proc.returncode == 2
    assert b"binlog-temporal[plot]" in proc.stderr
    assert proc.stdout == b""
    assert not (tmp_path / "out.png").exists()


@pytest.mark.server
def test_stats_counts_equal_the_servers(mariadb_server):
    """Row counts without decoding: each table's inserted/updated/deleted are
    the server's affected-row counts, and what is left is its SELECT COUNT(*); columns
    whose length needs decoding (JSON, SET) and multi-row events of several images."""
    srv = mariadb_server
    srv.execute("SET SESSION binlog_format = 'ROW'")
    srv.execute("CREATE DATABASE stats20")
    srv.execute("CREATE TABLE stats20.a (id INT PRIMARY KEY, v VARCHAR(300), d DECIMAL(12,2), "
                "t DATETIME(3), b BLOB, e ENUM('x','y'))")
    srv.execute("CREATE TABLE stats20.j (id INT PRIMARY KEY, doc JSON, s SET('p','q'))")
    srv.execute("CREATE TABLE stats20.other (id INT PRIMARY KEY)")
    affected = Counter()
    for start in range(0, 3000, 500):   # six multi-row statements, several events each
        values = ", ".join(f"({i}, REPEAT('v', {i % 300}), {i}.25, '2024-01-02 03:04:05.{i % 1000:03d}', "
                           f"{'NULL' if i % 3 else 'REPEAT(0x41, 70)'}, 'y')" for i in range(start, start + 500))
        affected["a", "inserted"] += srv.execute(f"INSERT INTO stats20.a VALUES {values}")
    affected["j", "inserted"] += srv.execute(
        "INSERT INTO stats20.j VALUES " + ", ".join(f"({i}, '{{\"k\": {i}}}', 'p,q')" for i in range(40)))
    affected["a", "updated"] += srv.execute("UPDATE stats20.a SET d = d + 1 WHERE id % 7 = 0")
    affected["j", "updated"] += srv.execute("UPDATE stats20.j SET doc = JSON_SET(doc, '$.z', 1) WHERE id < 9")
    affected["a", "deleted"] += srv.execute("DELETE FROM stats20.a WHERE id % 11 = 0")
    affected["j", "deleted"] += srv.execute("DELETE FROM stats20.j WHERE id >= 30")
    srv.execute("INSERT INTO stats20.other VALUES (1), (2)")
    srv.flush_logs()
    for env in ({}, {"BINLOG_PURE": "1"}):
        proc = subprocess.run([sys.executable, "-m", "binlog.cli", "stats", "--json", "--database",
                               "stats20", "--exclude-table", "stats20.other",
                               *map(str, srv.binlog_files())],
                              capture_output=True, cwd=REPO, env=dict(os.environ, **env))
        assert proc.returncode == 0, proc.stderr.decode()
        tables = json.loads(proc.stdout)["tables"]
        assert sorted(tables) == ["stats20.a", "stats20.j"]
        for (table, op), n in affected.items():
            assert tables[f"stats20.{table}"][op] == n, (env, table, op)
        for table in ("a", "j"):
            left = srv.query(f"SELECT COUNT(*) FROM stats20.{table}")[0][0]
            t = tables[f"stats20.{table}"]
            assert t["inserted"] - t["deleted"] == left
            assert t["rows_events"] >= (2 if table == "j" else 7)


@pytest.mark.server
@pytest.mark.usefixtures("compiled")
def test_counted_runs_on_a_real_servers_binlog(mariadb_factory, monkeypatch, capsys):
    """Runs of rows events counted in one compiled call give the counts the
    server reports (the affected rows of each statement) and the same whole output as
    the event-by-event path and the pure-Python runs: statements big enough to span many
    8 KiB rows events, several tables and kinds per transaction, an ALTER in between (a
    new layout for a table_id's walks)."""
    from support.workloads import runs_workload

    from binlog import scan
    from binlog.cli import main

    srv = mariadb_factory({"binlog_format": "ROW"})
    names = {"insert": "inserted", "update": "updated", "delete": "deleted"}
    expected = Counter({(table, names[op]): n
                        for (table, op), n in runs_workload(srv, 4, 3000, 2000).items()})
    path = srv.binlog_files()[-2]

    def stats(batch: str, compiled):
        monkeypatch.setenv("BINLOG_BATCH", batch)
        monkeypatch.setattr(scan, "compiled", compiled)
        assert main(["stats", "--json", str(path)]) == 0
        return capsys.readouterr().out
    native = scan.compiled
    reference = stats("0", native)
    assert stats("1", native) == reference
    assert stats("1", None) == reference
    tables = json.loads(reference)["tables"]
    got = Counter({(name, kind): t[kind] for name, t in tables.items()
                   for kind in ("inserted", "updated", "deleted") if t[kind]})
    assert got == expected
    assert tables["cr.a"]["rows_events"] > 40       # the runs were long
