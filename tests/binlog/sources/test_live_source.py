"""A running server as the reader's source (``--from DSN``): ``dump`` and ``stats`` give
what they give on the server's own binlog files, and ``apply --from A --to B`` replicates
continuously across a kill -9 and restart of A and a restart of B."""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.server, pytest.mark.live]

REPO = Path(__file__).resolve().parents[3]


def dsn(server) -> str:
    return f"mysql://root@localhost/?unix_socket={server.socket}"


def cli(*args, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlog.cli", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


def workload(server, first: int, count: int) -> None:
    """Transactions of inserts, updates and deletes (a few rows each)."""
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            for i in range(first, first + count):
                cur.execute("BEGIN")
                cur.execute("INSERT INTO live.t VALUES (%s, %s, NOW(6))", (i, f"row {i}"))
                cur.execute("INSERT INTO live.u VALUES (%s, %s)", (i, i * 3))
                cur.execute("UPDATE live.t SET b = CONCAT(b, '+') WHERE a = %s", (i // 2,))
                if i % 5 == 0:
                    cur.execute("DELETE FROM live.u WHERE k = %s", (i - 3,))
                cur.execute("COMMIT")
    finally:
        conn.close()


SCHEMA = ["CREATE DATABASE live",
          "CREATE TABLE live.t (a INT PRIMARY KEY, b VARCHAR(200), c DATETIME(6))",
          "CREATE TABLE live.u (k INT PRIMARY KEY, v BIGINT)",
          "CREATE TABLE live.big (id INT PRIMARY KEY, v LONGTEXT)"]


def contents(server) -> dict:
    out = {}
    for table, key in (("t", "a"), ("u", "k")):
        checksum = server.query(f"CHECKSUM TABLE live.{table}")[0][1]
        rows = server.query(f"SELECT * FROM live.{table} ORDER BY {key}")
        out[table] = (checksum, rows)
    return out


@pytest.fixture(scope="module")
def source():
    from support.mariadb_server import MariaDBServer, require_mariadbd

    require_mariadbd()
    with MariaDBServer({"binlog_row_metadata": "FULL"}) as srv:
        for sql in SCHEMA:
            srv.execute(sql)
        workload(srv, 0, 30)
        # an event longer than the reader's 1 MiB chunk: a live source hands on whole events
        srv.execute("INSERT INTO live.big VALUES (1, REPEAT('x', 3 * 1024 * 1024))")
        srv.flush_logs()
        workload(srv, 30, 30)
        yield srv


def test_dump_from_a_server_equals_dump_of_its_files(source):
    files = source.binlog_files()
    live = cli("dump", "--from", dsn(source), "--server-id", "31")
    assert live.returncode == 0, live.stderr
    on_files = cli("dump", *files)
    assert live.stdout == on_files.stdout and live.stdout.count("\n") > 100
    assert '"table":"big"' in live.stdout and "x" * 3 * 1024 * 1024 in live.stdout
    # from a position inside the first file: the server starts there, so does the reader
    events = source.query(f"SHOW BINLOG EVENTS IN '{files[0].name}'")
    middle = [e for e in events if e[2] == "Gtid"][len(events) // 20][1]
    live = cli("dump", "--from", dsn(source), "--server-id", "31", "--start-file", files[0].name,
               "--start-position", middle, "--format", "sql")
    on_files = cli("dump", "--start-position", middle, "--format", "sql", *files)
    assert live.returncode == 0, live.stderr
    assert live.stdout == on_files.stdout and "INSERT" in live.stdout or "REPLACE" in live.stdout


def test_stats_from_a_server(source):
    live = cli("stats", "--json", "--from", dsn(source), "--server-id", "31")
    on_files = cli("stats", "--json", *source.binlog_files())
    assert live.returncode == 0, live.stderr
    assert live.stdout == on_files.stdout


def test_from_needs_a_server_id_and_no_files(source):
    done = cli("dump", "--from", dsn(source))
    assert done.returncode == 2 and "--server-id" in done.stderr
    done = cli("dump", "--from", dsn(source), "--server-id", "31", *source.binlog_files())
    assert done.returncode == 2 and "not both" in done.stderr


def wait_for(condition, timeout: float = 90, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not _holds(condition):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _holds(condition) -> bool:
    import pymysql

    try:
        return condition()
    except pymysql.err.ProgrammingError:
        return False        # apply has not created the table on the target yet


@pytest.mark.parametrize("method", ["sql", "binlog"])
def test_apply_from_a_live_source_across_restarts(mariadb_factory, method):
    """--method binlog: the target is given the source's row events; after A's restart
    its binlog's FORMAT_DESCRIPTION has ``created`` set, after B's the new session is
    given the FORMAT_DESCRIPTION again."""
    a = mariadb_factory({"binlog_row_metadata": "FULL"})
    b = mariadb_factory({})
    for sql in SCHEMA:
        a.execute(sql)
    proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", "apply", "--from", dsn(a),
                             "--server-id", "41", "--stop-never", "--heartbeat", "0.5",
                             "--method", method, "--to", dsn(b), "--retries", "5"],
                            cwd=REPO, stderr=subprocess.PIPE, text=True)
    try:
        workload(a, 0, 100)
        wait_for(lambda: len(contents(b)["t"][1]) > 0, what="apply to start")
        # A is killed -9 and restarted while apply reads it
        a._proc.send_signal(signal.SIGKILL)
        a._proc.wait(10)
        a._proc = None
        a.start()
        workload(a, 100, 100)
        a.flush_logs()
        # B restarts too: apply reconnects and resumes from its checkpoint
        b.restart()
        workload(a, 200, 100)
        wait_for(lambda: contents(a) == contents(b), what="B to catch up with A")
    finally:
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=20)
    assert "reading the binlog: lost connection" in err, err                         # A
    assert "connection to the target lost" in err, err                                  # B
    assert len(contents(a)["t"][1]) == 300
    # a second run resumes from the checkpoint and has nothing to redo
    again = cli("apply", "--from", dsn(a), "--server-id", "41", "--method", method, "--to", dsn(b))
    assert again.returncode == 0, again.stderr
    assert "0 transaction(s), 0 row change(s)" in again.stderr
    assert contents(a) == contents(b)


def test_legacy_temporal_columns_from_a_live_stream(mariadb_factory):
    """MariaDB 5.3 hires columns (mysql56_temporal_format=OFF) do not record their
    precision in the binlog: from --from with --schema-from the same server, the values
    are the server's own (SELECT ... CAST AS CHAR)."""
    srv = mariadb_factory({"mysql56_temporal_format": "OFF"})
    srv.execute("CREATE DATABASE legacy")
    srv.execute("CREATE TABLE legacy.t (id INT PRIMARY KEY, ts TIMESTAMP(3) NULL, "
                "dt DATETIME(6), tm TIME(5))")
    srv.flush_logs()                    # the stream starts after the CREATE
    srv.execute("SET time_zone = '+00:00'")
    srv.execute("INSERT INTO legacy.t VALUES (1, '2020-02-29 12:34:56.789', "
                "'1999-12-31 23:59:59.999999', '-01:02:03.45678')")
    first = srv.binlog_names()[-1]
    dsn_ = dsn(srv)
    done = cli("dump", "--from", dsn_, "--server-id", "61", "--start-file", first,
               "--schema-from", dsn_)
    assert done.returncode == 0, done.stderr
    import json

    row = json.loads(done.stdout.splitlines()[0])["after"]
    conn = srv.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SET time_zone = '+00:00'")
            cur.execute("SELECT CAST(ts AS CHAR), CAST(dt AS CHAR), CAST(tm AS CHAR) "
                        "FROM legacy.t WHERE id = 1")
            expected = cur.fetchone()
    finally:
        conn.close()
    assert (row["ts"], row["dt"], row["tm"]) == expected
    # without a schema the precision is unknown: a clear error, not a guess
    done = cli("dump", "--from", dsn_, "--server-id", "61", "--start-file", first)
    assert done.returncode == 1 and "precision" in done.stderr
