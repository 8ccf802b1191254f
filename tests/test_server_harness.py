"""Real-server tests of tests/support/mariadb_server.py (start, binlogs, options, stop)."""

from __future__ import annotations

import os

import pytest
from support.mariadb_server import MariaDBServer, split_version

pytestmark = pytest.mark.server


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); a reaped process does not exist at all
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def test_session_server_basics(mariadb_server: MariaDBServer) -> None:
    srv = mariadb_server
    assert "MariaDB" in srv.version
    assert split_version(srv.version) >= (10, 0)
    assert srv.query("SELECT @@binlog_row_metadata, @@binlog_format, @@log_bin") == [
        ("FULL", "ROW", 1)]
    assert srv.query("SELECT @@port")[0][0] == srv.port
    db = "harness_basics"
    srv.execute(f"DROP DATABASE IF EXISTS {db}")
    srv.execute(f"CREATE DATABASE {db}")
    srv.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(10))")
    srv.execute(f"INSERT INTO {db}.t VALUES (1, 'a'), (2, 'b')")
    assert srv.query(f"SELECT id, v FROM {db}.t ORDER BY id") == [(1, "a"), (2, "b")]
    with srv.connect(db) as conn, conn.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM t")
        assert cur.fetchone()[0] == 2
    srv.execute(f"DROP DATABASE {db}")


def test_binlog_files_exist_and_rotate(mariadb_factory) -> None:
    srv = mariadb_factory()
    first = srv.binlog_files()
    assert len(first) == 1 and first[0].name == "mariadb-bin.000001"
    srv.execute("CREATE DATABASE d")
    srv.flush_logs()
    files = srv.binlog_files()
    assert [p.name for p in files] == ["mariadb-bin.000001", "mariadb-bin.000002"]
    for p in files:
        assert p.is_file() and p.parent == srv.binlog_dir
        assert p.read_bytes()[:4] == b"\xfebin"
    kinds = [r[2] for r in srv.query("SHOW BINLOG EVENTS IN 'mariadb-bin.000001'")]
    assert kinds[0] == "Format_desc" and kinds[-1] == "Rotate" and "Query" in kinds
    assert srv.master_status()[0] == "mariadb-bin.000002"


def test_custom_options_applied(mariadb_factory) -> None:
    srv = mariadb_factory({"binlog_row_image": "MINIMAL", "binlog-checksum": "NONE",
                           "mysql56_temporal_format": "OFF"})
    assert srv.query("SELECT @@binlog_row_image, @@binlog_checksum, "
                     "@@mysql56_temporal_format") == [("MINIMAL", "NONE", 0)]
    srv.set_global("binlog_row_image", "NOBLOB")
    assert srv.variable("binlog_row_image") == "NOBLOB"


def test_stop_leaves_no_process_and_restart_writes_stop_event(mariadb_factory) -> None:
    srv = mariadb_factory()
    pid = srv.pid
    assert pid and _alive(pid)
    srv.restart()                      # clean stop: mariadb-bin.000001 ends with STOP
    pid2 = srv.pid
    assert not _alive(pid) and _alive(pid2)
    kinds = [r[2] for r in srv.query("SHOW BINLOG EVENTS IN 'mariadb-bin.000001'")]
    assert kinds[-1] == "Stop"
    srv.stop()
    assert not srv.running and not _alive(pid2)
    srv.stop()                         # idempotent


def test_context_manager_cleans_up() -> None:
    with MariaDBServer() as srv:
        pid, base = srv.pid, srv.basedir
        assert base.is_dir()
    assert not _alive(pid)
    assert not base.exists()
