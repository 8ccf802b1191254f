"""The live source's own TLS against a real mariadbd: a certificate signed by the CA the
DSN names is verified and the copy is exact; another CA's is refused before any
password is sent; a DSN that asks for TLS is never served in clear."""
from __future__ import annotations

import datetime
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.server

REPO = Path(__file__).resolve().parents[2]


def _ca_and_cert(directory: Path, name: str) -> tuple[Path, Path, Path]:
    """A CA, and a server certificate for 127.0.0.1 signed by it (PEM files)."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    def key():
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, srv_key = key(), key()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name} test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(srv_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = directory / f"{name}-ca.pem", directory / f"{name}-cert.pem", directory / f"{name}-key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(srv_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
    return paths


def fetch(dsn: str, relay: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlog.cli", "fetch", "--from", dsn, "--to", relay,
                           "--server-id", "31", "--retries", "0"], cwd=REPO, capture_output=True,
                          text=True, timeout=60)


def test_fetch_over_verified_tls(mariadb_factory, tmp_path):
    ca, cert, key = _ca_and_cert(tmp_path, "good")
    other_ca, _, _ = _ca_and_cert(tmp_path, "other")
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
