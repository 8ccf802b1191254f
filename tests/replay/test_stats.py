"""`binlog stats`: per-table counts, bytes, largest transactions, time range, --plot."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
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
