"""``binlog fetch --semi-sync`` against a real semi-synchronous MariaDB primary
(rpl_semi_sync_master_enabled=ON): the server counts our acknowledgements in its own
status variables (Rpl_semi_sync_master_yes_tx / _no_tx, sql/semisync_master.cc), a
commit returns only once its transaction is in the relay on disk, a commit with the
fetcher stopped waits for the timeout, and the relay stays byte-identical.  Without
--semi-sync the fetcher is an asynchronous replica the primary does not wait for.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.server, pytest.mark.live]

REPO = Path(__file__).resolve().parents[3]
TIMEOUT_MS = 8000           # rpl_semi_sync_master_timeout: how long a commit waits for us
FDE_FLAGS = 4 + 17          # the FORMAT_DESCRIPTION's flags byte (see test_fetch.py)


@pytest.fixture(scope="module")
def primary():
    from support.mariadb_server import MariaDBServer, require_mariadbd

    require_mariadbd()
    with MariaDBServer({"rpl_semi_sync_master_enabled": "ON",
                        "rpl_semi_sync_master_timeout": TIMEOUT_MS}) as srv:
        srv.execute("CREATE DATABASE semi")
        srv.execute("CREATE TABLE semi.t (a INT PRIMARY KEY, b VARCHAR(100))")
        yield srv


def status(srv, name: str) -> int:
    return int(srv.query(f"SHOW GLOBAL STATUS LIKE '{name}'")[0][1])


def fetcher(srv, relay: Path, *extra) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "binlog.cli", "fetch", "--from",
         f"mysql://root@localhost/?unix_socket={srv.socket}", "--to", relay, "--server-id", "88",
         "--heartbeat", "0.5", "--stop-never", *extra], cwd=REPO, stderr=subprocess.PIPE, text=True)


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err


def wait_for(condition, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def assert_copies_equal(srv, relay: Path) -> None:
    active = srv.master_status()[0]
    for path in srv.binlog_files():
        theirs = bytearray(path.read_bytes())
        if path.name == active:         # sent with LOG_EVENT_BINLOG_IN_USE_F cleared
            theirs[FDE_FLAGS] &= ~1
        assert (relay / path.name).read_bytes() == bytes(theirs), path.name


def insert(srv, conn, key: int) -> float:
    """One autocommit INSERT; seconds until the server returned."""
    started = time.monotonic()
    with conn.cursor() as cur:
        cur.execute("INSERT INTO semi.t VALUES (%s, %s)", (key, f"row {key}"))
    return time.monotonic() - started


def test_commits_wait_for_our_ack_after_the_relay_holds_them(primary, tmp_path):
    relay = tmp_path / "relay"
    proc = fetcher(primary, relay, "--semi-sync")
    conn = primary.connect()
    try:
        wait_for(lambda: status(primary, "Rpl_semi_sync_master_clients") == 1,
                 "the fetcher to register as a semi-sync replica")
        insert(primary, conn, 0)         # semi-sync switches on once the replica caught up
        wait_for(lambda: primary.query("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_status'")
                 [0][1] == "ON", "semi-sync to be on")
        yes, no = status(primary, "Rpl_semi_sync_master_yes_tx"), status(primary, "Rpl_semi_sync_master_no_tx")
        for key in range(1, 11):
            insert(primary, conn, key)
            # the commit returned: the server had our ack, sent after the relay's write
            name, end = primary.master_status()
            assert (relay / name).stat().st_size >= end
        assert status(primary, "Rpl_semi_sync_master_yes_tx") == yes + 10
        assert status(primary, "Rpl_semi_sync_master_no_tx") == no
        wait_for(lambda: primary.copied_to(relay), "the relay to catch up")
    finally:
        stop(proc)
    # nobody acknowledges now: the next commit waits for the whole timeout
    no = status(primary, "Rpl_semi_sync_master_no_tx")
    waited = insert(primary, conn, 11)
    conn.close()
    assert waited >= TIMEOUT_MS / 1000 - 0.5
    assert status(primary, "Rpl_semi_sync_master_no_tx") == no + 1
    proc = fetcher(primary, relay, "--semi-sync")      # resumes the relay
    try:
        wait_for(lambda: primary.copied_to(relay), "the relay to catch up")
    finally:
        stop(proc)
    assert_copies_equal(primary, relay)


def test_without_semi_sync_the_primary_neither_prefixes_nor_counts_us(primary, tmp_path):
    relay = tmp_path / "relay"
    proc = fetcher(primary, relay)
    try:
        wait_for(lambda: primary.copied_to(relay), "the relay to catch up")
        assert status(primary, "Rpl_semi_sync_master_clients") == 0
    finally:
        stop(proc)
    assert_copies_equal(primary, relay)         # no 2-byte header went into the files


def test_semi_sync_from_a_primary_with_it_off(mariadb_server, tmp_path):
    # MariaDB has semi-sync built in (the variable exists, OFF here): the server still
    # puts the header before each event but never asks for an acknowledgement
    done = subprocess.run(
        [sys.executable, "-m", "binlog.cli", "fetch", "--from",
         f"mysql://root@localhost/?unix_socket={mariadb_server.socket}", "--to", tmp_path,
         "--server-id", "89", "--semi-sync"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert mariadb_server.copied_to(tmp_path)
    assert_copies_equal(mariadb_server, tmp_path)
