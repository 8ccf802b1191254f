"""MariaDB's ed25519 accounts against a real mariadbd: fetch logs in with a replication
user IDENTIFIED VIA ed25519 (the server checks our signature of its nonce) and copies
the binlogs exactly; a wrong password is the server's refusal (1045), with the
password in no message; apply's target connection (PyMySQL) logs in the same way."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.server, pytest.mark.live]

REPO = Path(__file__).resolve().parents[3]
SECRET = "Ed-25519-pw with blanks "


def fetch(dsn: str, relay: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlog.cli", "fetch", "--from", dsn, "--to", relay,
                           "--server-id", "32", "--retries", "0"], cwd=REPO, capture_output=True,
                          text=True, timeout=60)


@pytest.fixture
def server(mariadb_factory):
    pytest.importorskip("nacl", reason="the ed25519 extra (PyNaCl) is not installed")
    srv = mariadb_factory({"plugin_load_add": "auth_ed25519"})
    srv.execute(f"CREATE USER repl@'%' IDENTIFIED VIA ed25519 USING PASSWORD('{SECRET}')")
    srv.execute("GRANT ALL PRIVILEGES ON *.* TO repl@'%'")
    srv.execute("CREATE DATABASE t")
    srv.execute("CREATE TABLE t.a (id INT PRIMARY KEY, v VARCHAR(20))")
    srv.execute("INSERT INTO t.a VALUES (1, 'ed25519')")
    assert srv.query("SELECT plugin FROM mysql.user WHERE user = 'repl'") == [("ed25519",)]
    return srv


def test_fetch_logs_in_with_an_ed25519_account(server, tmp_path):
    password = SECRET.replace(" ", "%20")
    done = fetch(f"mysql://repl:{password}@127.0.0.1:{server.port}/", tmp_path / "relay")
    assert done.returncode == 0, done.stderr
    for path in server.binlog_files():
        copy = (tmp_path / "relay" / path.name).read_bytes()
        original = path.read_bytes()
        assert copy[:21] + copy[22:] == original[:21] + original[22:]   # FDE in-use flag aside

    wrong = fetch(f"mysql://repl:not-{password}@127.0.0.1:{server.port}/", tmp_path / "relay2")
    assert wrong.returncode == 5 and "1045" in wrong.stderr, wrong.stderr
    assert SECRET.strip() not in wrong.stderr


def test_apply_targets_an_ed25519_account(server, mariadb_factory, tmp_path):
    source = mariadb_factory()
    source.execute("CREATE DATABASE s")
    source.execute("CREATE TABLE s.b (id INT PRIMARY KEY, v VARCHAR(20))")
    source.execute("INSERT INTO s.b VALUES (1, 'one'), (2, 'two')")
    target = f"mysql://repl:{SECRET.replace(' ', '%20')}@127.0.0.1:{server.port}/"
    done = subprocess.run([sys.executable, "-m", "binlog.cli", "apply", *source.binlog_files(),
                           "--to", target], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert server.query("CHECKSUM TABLE s.b") == source.query("CHECKSUM TABLE s.b")
