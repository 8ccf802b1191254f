"""The live source's own TLS against a real mariadbd: a certificate signed by the CA the
DSN names is verified and the copy is exact; another CA's is refused before any
password is sent; a DSN that asks for TLS is never served in clear."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.certificates import ca_and_cert

pytestmark = [pytest.mark.server, pytest.mark.live]

REPO = Path(__file__).resolve().parents[3]


def fetch(dsn: str, relay: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlog.cli", "fetch", "--from", dsn, "--to", relay,
                           "--server-id", "31", "--retries", "0"], cwd=REPO, capture_output=True,
                          text=True, timeout=60)


def test_fetch_over_verified_tls(mariadb_factory, tmp_path):
    ca, cert, key = ca_and_cert(tmp_path, "good")
    other_ca, _, _ = ca_and_cert(tmp_path, "other")
    server = mariadb_factory({"ssl_ca": ca, "ssl_cert": cert, "ssl_key": key})
    server.execute("CREATE USER repl@'%' IDENTIFIED BY 'tls-Pw' REQUIRE SSL")
    server.execute("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO repl@'%'")
    server.execute("CREATE DATABASE t")
    server.execute("CREATE TABLE t.a (id INT PRIMARY KEY, v VARCHAR(20))")
    server.execute("INSERT INTO t.a VALUES (1, 'over tls')")
    base = f"mysql://repl:tls-Pw@127.0.0.1:{server.port}/"

    done = fetch(base + f"?ssl_ca={ca}&ssl_verify_identity=1", tmp_path / "relay")
    assert done.returncode == 0, done.stderr
    for path in server.binlog_files():
        copy = (tmp_path / "relay" / path.name).read_bytes()
        original = path.read_bytes()
        assert copy[:21] + copy[22:] == original[:21] + original[22:]   # FDE in-use flag aside

    refused = fetch(base + f"?ssl_ca={other_ca}", tmp_path / "relay2")
    assert refused.returncode == 5 and "TLS" in refused.stderr, refused.stderr
    assert "tls-Pw" not in refused.stderr

    plain = fetch(base, tmp_path / "relay3")        # REQUIRE SSL: the server refuses us
    assert plain.returncode == 5 and "Traceback" not in plain.stderr
