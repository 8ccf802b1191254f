"""``binlog ingest`` run again and again over a relay that ``binlog fetch --stop-never``
keeps extending while a real server takes writes (and over the server's own binlog
directory the same way): at the end the lake holds every row change exactly once.

The expected rows are the server's (SELECT ... CAST AS CHAR); the lake is read with
DuckDB.  Between runs the relay's last file grows (the checkpoint's end of a file still
being written is the end of its last whole transaction) and FLUSH BINARY LOGS closes it.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.server, pytest.mark.live]
duckdb = pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

REPO = Path(__file__).resolve().parents[2]


def ingest(source: Path, lake: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "binlog.cli", "ingest", "--no-progress", "--engine",
                           "local", "--parallelism", "1", str(source), "--to", str(lake)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


class Writer(threading.Thread):
    """Inserts, updates and deletes on its own connection until stopped; FLUSH BINARY
    LOGS when asked."""

    def __init__(self, srv):
        super().__init__(daemon=True)
        self.srv = srv
        self.stopping = threading.Event()
        self.flush = threading.Event()
        self.error: BaseException | None = None
        self.count = 0

    def run(self):
        conn = self.srv.connect()
        try:
            with conn.cursor() as cur:
                while not self.stopping.is_set():
                    n = self.count = self.count + 1
                    cur.execute("INSERT INTO r.t VALUES (%s, %s, %s)", (n, f"v{n}", n))
                    if n % 3 == 0:
                        cur.execute("UPDATE r.t SET v = CONCAT(v, 'u'), n = n + 1 WHERE id = %s", (n // 3,))
                    if n % 5 == 0:
                        cur.execute("BEGIN")
                        cur.execute("DELETE FROM r.t WHERE id = %s", (n - 4,))
                        cur.execute("INSERT INTO r.t VALUES (%s, 'again', 0) "
                                    "ON DUPLICATE KEY UPDATE v = 'again'", (n - 4,))
                        cur.execute("COMMIT")
                    if self.flush.is_set():
                        cur.execute("FLUSH BINARY LOGS")
                        self.flush.clear()
                    time.sleep(0.005)
        except BaseException as exc:    # reported by the test thread
            self.error = exc
        finally:
            conn.close()


def lake_rows(lake: Path) -> tuple[dict, int, int]:
    """Table r.t rebuilt from changes/ in binlog order, the number of row changes and
    the number of distinct (file, pos, row) among them."""
    con = duckdb.connect()
    changes = con.execute(
        f"SELECT file, pos, \"row\", op, before, after FROM read_parquet('{lake}/changes/**/*.parquet', "
        f"hive_partitioning = true) WHERE db = 'r' AND \"table\" = 't' AND op IN "
        f"('insert', 'update', 'delete') ORDER BY file, pos, \"row\"").fetchall()
    state: dict = {}
    for _, _, _, op, before, after in changes:
        if op in ("update", "delete"):
            del state[json.loads(before)["id"]]
        if op in ("insert", "update"):
            image = json.loads(after)
            state[image["id"]] = (str(image["v"]), str(image["n"]))
    distinct = len({(f, p, r) for f, p, r, *_ in changes})
    return state, len(changes), distinct


def test_ingest_reruns_over_a_growing_relay_read_every_change_once(tmp_path):
    from support.mariadb_server import MariaDBServer, require_mariadbd

    require_mariadbd()
    relay, relay_lake, server_lake = tmp_path / "relay", tmp_path / "lake", tmp_path / "server-lake"
    with MariaDBServer({"binlog_checksum": "CRC32"}) as srv:
        srv.execute("CREATE DATABASE r")
        srv.execute("CREATE TABLE r.t (id INT PRIMARY KEY, v VARCHAR(60), n INT)")
        fetch = subprocess.Popen([sys.executable, "-m", "binlog.cli", "fetch", "--from",
                                  f"mysql://root@localhost/?unix_socket={srv.socket}", "--to", relay,
                                  "--server-id", "91", "--heartbeat", "0.5", "--stop-never"],
                                 cwd=REPO, stderr=subprocess.PIPE, text=True)
        writer = Writer(srv)
        writer.start()
        grown = []      # (file, checkpoint end) of a relay file still being written
        try:
            for run in range(4):
                time.sleep(1.5)
                if run == 2:
                    writer.flush.set()
                ingest(relay, relay_lake)
                ingest(srv.binlog_dir, server_lake)
                files = json.loads((relay_lake / "_checkpoint" / "state.json").read_text())["files"]
                grown += [(Path(p).name, e["end"]) for p, e in files.items() if not e["closed"]]
            writer.stopping.set()
            writer.join(30)
            assert writer.error is None, writer.error
            deadline = time.monotonic() + 60
            while not srv.copied_to(relay):
                assert time.monotonic() < deadline, "the relay did not catch up"
                time.sleep(0.1)
        finally:
            writer.stopping.set()
            fetch.send_signal(signal.SIGTERM)
            _, err = fetch.communicate(timeout=30)
        assert fetch.returncode == 0, err
        ingest(relay, relay_lake)
        ingest(srv.binlog_dir, server_lake)
        want = {int(i): (v, n) for i, v, n in
                srv.query("SELECT id, v, CAST(n AS CHAR) FROM r.t ORDER BY id")}
        names = srv.binlog_names()
        sizes = {p.name: p.stat().st_size for p in srv.binlog_files()}
    assert len(names) >= 2 and writer.count > 100
    # the relay's last file grew between runs: read up to a transaction's end, then on
    assert any(end < sizes[name] for name, end in grown), grown
    for lake in (relay_lake, server_lake):
        state, changes, distinct = lake_rows(lake)
        assert distinct == changes, f"{lake.name}: a row change was ingested twice"
        assert state == want, f"{lake.name}: the rebuilt table differs from the server's"
