"""``binlog fetch``: a real mariadbd is copied while it takes writes, across FLUSH BINARY
LOGS, a kill -9 of the fetcher and a server restart; every copy must equal the server's
own file (``cmp``), with checksums on and off and with log_bin_compress.

The one byte allowed to differ is documented in binlog/commands/fetch.py: the server
sends the FORMAT_DESCRIPTION of the file it is still writing with LOG_EVENT_BINLOG_IN_USE_F
(flags, file offset 4 + 17) cleared, as the file on disk has it once closed.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from binlog.reader import BinlogReader

pytestmark = [pytest.mark.server, pytest.mark.live]

REPO = Path(__file__).resolve().parents[3]
FDE_FLAGS = 4 + 17      # the FORMAT_DESCRIPTION's flags byte in a binlog file


def dsn(server, user: str = "root", password: str = "") -> str:
    auth = f"{user}:{password}" if password else user
    return f"mysql://{auth}@localhost/?unix_socket={server.socket}"


def cli(*args, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlog.cli", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


def start_fetcher(server, relay: Path, *extra) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "binlog.cli", "fetch", "--from", dsn(server),
                             "--to", relay, "--server-id", "77", "--heartbeat", "0.5",
                             "--stop-never", *extra], cwd=REPO, stderr=subprocess.PIPE, text=True)


def write_rows(server, first: int, count: int) -> None:
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            for i in range(first, first + count):
                # 600 bytes of text: over log_bin_compress_min_len (256), so compressed
                cur.execute("INSERT INTO live.t VALUES (%s, %s)", (i, f"row {i} " + "x" * 600))
            cur.execute("UPDATE live.t SET b = CONCAT(b, 'u') WHERE a % 7 = 0")
    finally:
        conn.close()


def wait_caught_up(server, relay: Path, timeout: float = 60) -> None:
    """Until the copy holds every byte of every server binlog."""
    deadline = time.monotonic() + timeout
    while not server.copied_to(relay):
        if time.monotonic() > deadline:
            sizes = {p.name: p.stat().st_size for p in server.binlog_files()}
            copied = {name: (relay / name).stat().st_size for name in sizes if (relay / name).exists()}
            raise AssertionError(f"relay behind the server: {copied} vs {sizes}")
        time.sleep(0.1)


def assert_copies_equal(server, relay: Path) -> None:
    names = server.binlog_names()
    index = (relay / (names[0].rpartition(".")[0] + ".index")).read_text().split()
    assert [Path(line).name for line in index] == names
    active = server.master_status()[0]
    for path in server.binlog_files():
        ours = (relay / path.name).read_bytes()
        theirs = bytearray(path.read_bytes())
        if path.name == active:         # see the module docstring
            assert theirs[FDE_FLAGS] & 1
            theirs[FDE_FLAGS] &= ~1
        assert ours == bytes(theirs), f"{path.name} differs from the server's file"


def stop(proc: subprocess.Popen) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    return err


@pytest.mark.parametrize("options", [
    {"binlog_checksum": "CRC32", "log_bin_compress": "ON"},
    {"binlog_checksum": "NONE"},
], ids=["crc32-compressed", "no-checksum"])
def test_fetch_is_byte_identical_across_flush_kill_and_restart(mariadb_factory, tmp_path, options):
    srv = mariadb_factory(options)
    srv.execute("CREATE DATABASE live")
    srv.execute("CREATE TABLE live.t (a INT PRIMARY KEY, b TEXT)")
    relay = tmp_path / "relay"
    proc = start_fetcher(srv, relay)
    try:
        write_rows(srv, 0, 150)
        wait_caught_up(srv, relay)      # the fetcher runs (its start is slow on a busy machine)
        srv.flush_logs()
        write_rows(srv, 150, 150)
        # kill -9 while the server is writing, then cut the copy inside an event as a
        # crash in the middle of a write would
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        write_rows(srv, 300, 100)
        last = Path((relay / "mariadb-bin.index").read_text().split()[-1]).name
        server_file = srv.binlog_dir / last
        with open(relay / last, "ab") as fh:
            size = (relay / last).stat().st_size
            fh.write(server_file.read_bytes()[size:size + 30])
        proc = start_fetcher(srv, relay)
        write_rows(srv, 400, 100)
        wait_caught_up(srv, relay)
        srv.restart()                   # the fetcher loses the connection and reconnects
        write_rows(srv, 500, 100)
        srv.flush_logs()
        write_rows(srv, 600, 50)
        wait_caught_up(srv, relay)
    finally:
        err = stop(proc) if proc.poll() is None else proc.stderr.read()
    assert "reconnecting" in err
    assert len(srv.binlog_names()) >= 4
    assert_copies_equal(srv, relay)
    # the relay is an input like any other: every row written is in it, checksums verified
    reader = BinlogReader([relay])
    rows = [c for c in reader.changes() if c.op == "insert"]
    assert len(rows) == srv.query("SELECT COUNT(*) FROM live.t")[0][0] == 650
    compressed = [name for name in reader.stats.events if "COMPRESSED" in name]
    assert bool(compressed) == (options.get("log_bin_compress") == "ON")


@pytest.fixture(scope="module")
def server():
    from support.mariadb_server import MariaDBServer, require_mariadbd

    require_mariadbd()
    with MariaDBServer({"binlog_checksum": "CRC32"}) as srv:
        srv.execute("CREATE DATABASE live")
        srv.execute("CREATE TABLE live.t (a INT PRIMARY KEY, b TEXT)")
        write_rows(srv, 0, 20)
        srv.flush_logs()
        write_rows(srv, 20, 20)
        yield srv


def test_fetch_stops_at_the_end_without_stop_never(server, tmp_path):
    first = cli("fetch", "--from", dsn(server), "--to", tmp_path, "--server-id", "78")
    assert first.returncode == 0, first.stderr
    assert_copies_equal(server, tmp_path)
    write_rows(server, 1000, 5)
    again = cli("fetch", "--from", dsn(server), "--to", tmp_path, "--server-id", "78")
    assert again.returncode == 0, again.stderr
    assert_copies_equal(server, tmp_path)


def test_fetch_from_a_start_file(server, tmp_path):
    names = server.binlog_names()
    done = cli("fetch", "--from", dsn(server), "--to", tmp_path, "--server-id", "78",
               "--start-file", names[1])
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / names[0]).exists()
    assert (tmp_path / names[1]).read_bytes()[FDE_FLAGS + 1:] == \
        (server.binlog_dir / names[1]).read_bytes()[FDE_FLAGS + 1:]


def test_fetch_from_a_gtid_takes_the_file_holding_it(server, tmp_path):
    # the first GTID of the second file: the server starts there
    second = server.binlog_names()[1]
    gtid = server.query(f"SELECT BINLOG_GTID_POS('{second}', 4)")[0][0]
    done = cli("fetch", "--from", dsn(server), "--to", tmp_path, "--server-id", "78",
               "--start-gtid", gtid)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".index"))[0] == second


def test_purged_start_file_is_a_clear_error(server, tmp_path):
    name = server.binlog_names()[0]
    server.execute("CREATE DATABASE IF NOT EXISTS scratch")
    server.flush_logs()
    server.execute(f"PURGE BINARY LOGS TO '{server.binlog_names()[1]}'")
    assert name not in server.binlog_names()
    done = cli("fetch", "--from", dsn(server), "--to", tmp_path, "--server-id", "78",
               "--start-file", name)
    assert done.returncode == 5
    assert "Could not find first log file" in done.stderr
    assert "no longer on the server" in done.stderr      # the hint says what to do


def test_wrong_password_is_a_clear_error_without_the_password(server, tmp_path):
    server.execute("CREATE USER IF NOT EXISTS 'repl'@'localhost' IDENTIFIED BY 'right-pw-1'")
    server.execute("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'repl'@'localhost'")
    done = cli("fetch", "--from", dsn(server, "repl", "Wr0ng-s3cret"), "--to", tmp_path,
               "--server-id", "78")
    assert done.returncode == 5
    assert "Access denied for user 'repl'" in done.stderr
    assert "check the user and password" in done.stderr
    assert "Wr0ng-s3cret" not in done.stderr
    # and with the right one, the same user can fetch
    ok = cli("fetch", "--from", dsn(server, "repl", "right-pw-1"), "--to", tmp_path,
             "--server-id", "78")
    assert ok.returncode == 0, ok.stderr


def test_missing_replication_privilege_is_a_clear_error(server, tmp_path):
    server.execute("CREATE USER IF NOT EXISTS 'plain'@'localhost' IDENTIFIED BY 'pw'")
    done = cli("fetch", "--from", dsn(server, "plain", "pw"), "--to", tmp_path, "--server-id", "78")
    assert done.returncode == 5, done.stderr
    assert "GRANT REPLICATION SLAVE" in done.stderr


def test_server_id_zero_is_refused_with_the_reason(server, tmp_path):
    done = cli("fetch", "--from", dsn(server), "--to", tmp_path, "--server-id", "0")
    assert done.returncode == 2
    assert "--server-id 0 is refused" in done.stderr and "SHOW SLAVE HOSTS" in done.stderr


def test_a_damaged_relay_file_stops_the_fetch(server, tmp_path):
    name = server.binlog_names()[0]
    (tmp_path / "mariadb-bin.index").write_text(f"./{name}\n")
    data = bytearray((server.binlog_dir / name).read_bytes()[:400])
    data[4 + 9] ^= 0x40                 # the FORMAT_DESCRIPTION's size: no longer its log_pos
    (tmp_path / name).write_bytes(data)
    done = cli("fetch", "--from", dsn(server), "--to", tmp_path, "--server-id", "78")
    assert done.returncode == 1, done.stderr
    assert f"{name} @ 4: the event at 4 says" in done.stderr and "fetch it again" in done.stderr


def test_progress_line_on_a_terminal_only(server, tmp_path):
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "binlog.cli", "fetch", "--from", dsn(server),
                             "--to", tmp_path / "tty", "--server-id", "79", "--heartbeat", "0.5",
                             "--stop-never"], cwd=REPO, stderr=slave)
    os.close(slave)
    time.sleep(3)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(20) == 0
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:         # the terminal's other end is closed: all was read
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    last = server.binlog_names()[-1]
    assert f"binlog: at {last}:".encode() in shown and b"lag 0 s" in shown, shown
    # not a terminal: silent
    proc = start_fetcher(server, tmp_path / "pipe")
    time.sleep(3)
    assert "binlog: at" not in stop(proc)
