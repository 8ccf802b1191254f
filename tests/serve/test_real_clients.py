"""``binlog serve`` in front of real, unmodified clients: a MariaDB replica (CHANGE MASTER
TO our port, by file/position and by GTID), ``mariadb-binlog --read-from-remote-server``
and the PyPI python-mysql-replication.  Expected values come from the source server
(CHECKSUM TABLE, ``CAST(col AS CHAR)``, its own binlog files)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.server

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "serve-Pw1"


def workload(source, rows: int = 60) -> None:
    source.execute("CREATE DATABASE d")
    source.execute("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(40), ts DATETIME(3), n DECIMAL(10,2))")
    for i in range(rows):
        source.execute(f"INSERT INTO d.t VALUES ({i}, 'row {i}', '2021-02-03 04:05:06.{i % 1000:03d}', {i}.25)")
    source.execute("UPDATE d.t SET v = CONCAT(v, ' updated') WHERE id % 3 = 0")
    source.flush_logs()
    source.execute("DELETE FROM d.t WHERE id > 50")
    source.execute("CREATE TABLE d.big (id INT PRIMARY KEY, b LONGBLOB)")
    source.execute("INSERT INTO d.big VALUES (1, REPEAT('x', 300000))")


def copy_binlogs(source, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    names = source.binlog_names()
    for name in names:
        source.copy_binlog(name, directory / name)
    (directory / "mariadb-bin.index").write_text("".join(f"./{n}\n" for n in names))


def rows(server, table: str = "d.t") -> list[tuple]:
    return server.query(f"SELECT id, CAST(v AS CHAR), CAST(ts AS CHAR), CAST(n AS CHAR) FROM {table} ORDER BY id")


class Serve:
    """``binlog serve`` in a child process on a free port (read from its first log line)."""

    def __init__(self, binlogs: Path, tmp: Path, *extra: str):
        users = tmp / "users"
        hashed = subprocess.run([sys.executable, "-m", "binlog.cli", "serve", "--hash-password"],
                                input=PASSWORD + "\n", capture_output=True, text=True, cwd=REPO, check=True)
        users.write_text(f"repl {hashed.stdout.strip()}\n")
        self.log_path = tmp / "serve.log"
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", "serve", "--listen", "127.0.0.1:0",
                                      "--binlogs", binlogs, "--server-id", "100", "--users", users, *extra],
                                     cwd=REPO, stderr=self.log, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            found = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.log_path.read_text())
            if found:
                self.port = int(found.group(1))
                return
            assert self.proc.poll() is None, self.log_path.read_text()
            time.sleep(0.05)
        raise AssertionError("binlog serve did not start")

    def text(self) -> str:
        return self.log_path.read_text()

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=30)
        self.log.close()
        return code


@pytest.fixture
def source(mariadb_factory):
    src = mariadb_factory({"server_id": 1})
    workload(src)
    return src


def test_mariadb_binlog_copies_what_is_served(source, tmp_path):
    copy_binlogs(source, tmp_path / "served")
    serve = Serve(tmp_path / "served", tmp_path)
    try:
        out = tmp_path / "out"
        out.mkdir()
        done = subprocess.run(["mariadb-binlog", "--read-from-remote-server", "--host", "127.0.0.1",
                               "--port", str(serve.port), "--user", "repl", f"--password={PASSWORD}",
                               "--raw", "--to-last-log", source.binlog_names()[0]],
                              cwd=out, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        for name in source.binlog_names():
            served, copied = (tmp_path / "served" / name).read_bytes(), (out / name).read_bytes()
            # the FORMAT_DESCRIPTION's in-use flag goes cleared, as the server sends it
            assert copied[:21] + copied[22:] == served[:21] + served[22:]
    finally:
        assert serve.stop() == 0
    log = serve.text()
    assert "client 1 (repl@127.0.0.1" in log and "dumps from" in log and "stopped" in log


@pytest.mark.parametrize("use_gtid", ["no", "slave_pos"])
def test_a_mariadb_replica_replicates_through_serve(source, mariadb_factory, tmp_path, use_gtid):
    copy_binlogs(source, tmp_path / "served")
    serve = Serve(tmp_path / "served", tmp_path)
    replica = mariadb_factory({"server_id": 2})
    try:
        replica.execute(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={serve.port}, "
                        f"MASTER_USER='repl', MASTER_PASSWORD='{PASSWORD}', MASTER_CONNECT_RETRY=1, "
                        f"MASTER_USE_GTID={use_gtid}")
        replica.execute("START SLAVE")
        wait_replica(replica, source)
        assert rows(replica) == rows(source)
        assert replica.query("CHECKSUM TABLE d.t, d.big") == source.query("CHECKSUM TABLE d.t, d.big")
    finally:
        replica.execute("STOP SLAVE")
        serve.stop()


def wait_replica(replica, source, timeout: float = 60) -> None:
    want = source.query("CHECKSUM TABLE d.t, d.big")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = replica.query("SHOW SLAVE STATUS")
        if status:
            cur = replica.connect().cursor()
            cur.execute("SHOW SLAVE STATUS")
            names = [c[0] for c in cur.description]
            info = dict(zip(names, cur.fetchone(), strict=True))
            cur.connection.close()
            assert not info["Last_IO_Error"] and not info["Last_SQL_Error"], info
            try:
                if replica.query("CHECKSUM TABLE d.t, d.big") == want:
                    return
            except Exception:   # noqa: BLE001 - the tables are not there yet
                pass
        time.sleep(0.3)
    raise AssertionError(f"the replica did not catch up: {replica.query('SHOW SLAVE STATUS')}")


def test_python_mysql_replication_reads_through_serve(source, tmp_path):
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.row_event import WriteRowsEvent

    copy_binlogs(source, tmp_path / "served")
    serve = Serve(tmp_path / "served", tmp_path)
    try:
        stream = BinLogStreamReader(connection_settings={"host": "127.0.0.1", "port": serve.port,
                                                         "user": "repl", "passwd": PASSWORD},
                                    server_id=77, blocking=False, only_events=[WriteRowsEvent],
                                    only_tables=["t"], is_mariadb=True)
        try:
            got = [row["values"] for event in stream for row in event.rows]
        finally:
            stream.close()
    finally:
        serve.stop()
    # python-mysql-replication asks information_schema for the column names: serve does
    # not answer that, so the values come keyed by position (its UNKNOWN_COL<n>)
    ids = sorted(values[next(iter(values))] for values in got)
    assert ids == list(range(60))
