"""A client of ``binlog serve`` is untrusted input: wrong passwords, garbage after the
handshake, a huge declared packet, a client that never reads, too many clients.  Each
gets a clear error or is disconnected, the other clients are served all the while, and
serve's memory stays bounded."""
from __future__ import annotations

import socket
import struct
import subprocess
import time

import pymysql
import pytest
from support.serve_process import PASSWORD, Serve, copy_binlogs, follow_raw, workload

from binlog.protocol import constants as pc
from binlog.sources.wire import WireConnection

pytestmark = pytest.mark.server


@pytest.fixture
def served(mariadb_factory, tmp_path):
    source = mariadb_factory({"server_id": 1, "max_allowed_packet": "64M"})
    workload(source)
    source.execute("CREATE TABLE d.blobs (id INT PRIMARY KEY, b LONGBLOB)")
    for i in range(6):      # ~24 MB of events: more than the socket buffers hold
        source.execute(f"INSERT INTO d.blobs VALUES ({i}, REPEAT('b', 4000000))")
    copy_binlogs(source, tmp_path / "served")
    return source, tmp_path / "served"


def login(port: int, password: str = PASSWORD) -> WireConnection:
    conn = WireConnection({"host": "127.0.0.1", "port": port, "user": "repl", "password": password},
                          on_error=lambda code, text, step: AssertionError(f"{code} {text}"))
    return conn.open()


def mariadb_binlog_copy(port: int, first: str, out) -> subprocess.CompletedProcess:
    out.mkdir(exist_ok=True)
    return subprocess.run(["mariadb-binlog", "--read-from-remote-server", "--host", "127.0.0.1",
                           "--port", str(port), "--user", "repl", f"--password={PASSWORD}", "--raw",
                           "--to-last-log", first], cwd=out, capture_output=True, text=True, timeout=120)


def test_wrong_passwords_and_unknown_users_are_refused(served, tmp_path):
    source, directory = served
    serve = Serve(directory, tmp_path)
    try:
        for user, password in (("repl", "Wr0ng-Pw"), ("nobody", PASSWORD), ("", ""), ("repl", "")):
            with pytest.raises(pymysql.err.OperationalError) as refused:
                pymysql.connect(host="127.0.0.1", port=serve.port, user=user, password=password,
                                connect_timeout=5)
            assert refused.value.args[0] == 1045
        pymysql.connect(host="127.0.0.1", port=serve.port, user="repl", password=PASSWORD).close()
    finally:
        serve.stop()
    assert "Wr0ng-Pw" not in serve.text() and PASSWORD not in serve.text()


def test_garbage_and_huge_packets_end_only_that_session(served, tmp_path):
    source, directory = served
    serve = Serve(directory, tmp_path)
    try:
        before = serve.rss_kb()
        # garbage instead of a handshake response
        with socket.create_connection(("127.0.0.1", serve.port), timeout=5) as raw:
            raw.recv(1024)
            raw.sendall(b"\x05\x00\x00\x01\xff\xff\xff\xff\xff")
            raw.settimeout(5)
            answer = raw.recv(1024)
            assert answer == b"" or answer[4:5] == b"\xff"
        # a packet that says 16 MiB, after login, then a trickle
        conn = login(serve.port)
        conn.sock.sendall(b"\xff\xff\xff\x00" + b"\x03" * 1000)
        conn.sock.settimeout(5)
        assert conn.sock.recv(1024) == b""          # serve hung up at the header
        conn.close()
        # a command that is not one, and a dump request cut short
        conn = login(serve.port)
        conn.send_command(0x99, b"", time.monotonic() + 5)
        reply = conn.read_payload(time.monotonic() + 5, "odd command")
        assert reply[:1] == b"\xff"
        conn.send_command(pc.COM_BINLOG_DUMP, b"\x04\x00", time.monotonic() + 5)
        conn.sock.settimeout(5)
        assert conn.sock.recv(1024) == b""
        conn.close()
        done = mariadb_binlog_copy(serve.port, source.binlog_names()[0], tmp_path / "out")
        assert done.returncode == 0, done.stderr
        assert serve.rss_kb() - before < 64 * 1024
    finally:
        assert serve.stop() == 0
    assert "malformed packet" in serve.text()


def test_a_client_that_never_reads_is_dropped_and_holds_nobody(served, tmp_path):
    source, directory = served
    serve = Serve(directory, tmp_path, "--write-timeout", "2")
    try:
        stuck = login(serve.port)
        stuck.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.execute("SET @master_binlog_checksum = @@global.binlog_checksum")
        stuck.execute("SET @mariadb_slave_capability = 4")
        payload = struct.pack("<IHI", 4, 0, 555) + source.binlog_names()[0].encode()
        stuck.send_command(pc.COM_BINLOG_DUMP, payload, time.monotonic() + 5)
        # ... and never reads: meanwhile another client gets everything
        done = mariadb_binlog_copy(serve.port, source.binlog_names()[0], tmp_path / "out")
        assert done.returncode == 0, done.stderr
        deadline = time.monotonic() + 20
        while "stopped reading" not in serve.text():
            assert time.monotonic() < deadline, serve.text()
            time.sleep(0.2)
        stuck.close()
    finally:
        assert serve.stop() == 0


def test_too_many_clients_are_told_so(served, tmp_path):
    source, directory = served
    serve = Serve(directory, tmp_path, "--max-clients", "2")
    try:
        held = [login(serve.port), login(serve.port)]
        with pytest.raises(pymysql.err.OperationalError) as refused:
            pymysql.connect(host="127.0.0.1", port=serve.port, user="repl", password=PASSWORD,
                            connect_timeout=5)
        assert refused.value.args[0] == 1040
        held[0].close()
        time.sleep(0.5)
        pymysql.connect(host="127.0.0.1", port=serve.port, user="repl", password=PASSWORD).close()
        held[1].close()
    finally:
        assert serve.stop() == 0


def test_sigterm_ends_serve_with_dumps_open(served, tmp_path):
    source, directory = served
    serve = Serve(directory, tmp_path)
    follower = follow_raw(serve, source.binlog_names()[0], tmp_path, stderr=subprocess.PIPE)
    try:
        time.sleep(2)
        started = time.monotonic()
        assert serve.stop() == 0
        assert time.monotonic() - started < 10
        follower.wait(timeout=30)           # it saw the server go away and ended
    finally:
        if follower.poll() is None:
            follower.kill()
    assert "stopped" in serve.text()


def test_tls_and_a_20_mib_event_through_serve(mariadb_factory, tmp_path):
    """--tls-cert: mariadb-binlog asks for TLS and copies a binlog whose one event is over
    16 MiB (sent as several packets) byte for byte; a client that asks for no TLS is still
    served in clear when the account allows it."""
    from support.certificates import ca_and_cert

    source = mariadb_factory({"server_id": 1, "max_allowed_packet": "64M"})
    source.execute("CREATE DATABASE d")
    source.execute("CREATE TABLE d.huge (id INT PRIMARY KEY, b LONGBLOB)")
    source.execute("INSERT INTO d.huge VALUES (1, REPEAT('h', 20000000))")
    source.flush_logs()
    copy_binlogs(source, tmp_path / "served")
    ca, cert, key = ca_and_cert(tmp_path, "serve")
    serve = Serve(tmp_path / "served", tmp_path, "--tls-cert", cert, "--tls-key", key)
    try:
        out = tmp_path / "out"
        out.mkdir()
        done = subprocess.run(["mariadb-binlog", "--read-from-remote-server", "--host", "127.0.0.1",
                               "--port", str(serve.port), "--user", "repl", f"--password={PASSWORD}",
                               "--ssl", f"--ssl-ca={ca}", "--ssl-verify-server-cert", "--raw",
                               "--to-last-log", source.binlog_names()[0]],
                              cwd=out, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        names = source.binlog_names()
        assert max((tmp_path / "served" / n).stat().st_size for n in names) > 20_000_000
        for name in names:
            served, copied = (tmp_path / "served" / name).read_bytes(), (out / name).read_bytes()
            assert copied[:21] + copied[22:] == served[:21] + served[22:]
        ours = login_tls(serve.port, ca)
        assert ours.secure
        ours.close()
    finally:
        serve.stop()


def login_tls(port: int, ca) -> WireConnection:
    conn = WireConnection({"host": "127.0.0.1", "port": port, "user": "repl", "password": PASSWORD,
                           "ssl_ca": str(ca)},
                          on_error=lambda code, text, step: AssertionError(f"{code} {text}"))
    return conn.open()


def test_kill_ends_a_dump_and_ping_answers(served, tmp_path):
    source, directory = served
    serve = Serve(directory, tmp_path)
    follower = follow_raw(serve, source.binlog_names()[0], tmp_path, stderr=subprocess.PIPE)
    try:
        conn = pymysql.connect(host="127.0.0.1", port=serve.port, user="repl", password=PASSWORD)
        conn.ping(reconnect=False)
        deadline = time.monotonic() + 20
        while True:
            with conn.cursor() as cur:
                cur.execute("SHOW PROCESSLIST")
                dumps = [r[0] for r in cur.fetchall() if r[4] == "Binlog Dump"]
            if dumps:
                break
            assert time.monotonic() < deadline
            time.sleep(0.1)
        with conn.cursor() as cur:
            cur.execute(f"KILL {dumps[0]}")
            with pytest.raises(pymysql.err.OperationalError) as unknown:
                cur.execute("KILL 987654")
        assert unknown.value.args[0] == 1094
        follower.wait(timeout=30)       # the dump ended: mariadb-binlog gives up or retries and ends
        conn.close()
    finally:
        if follower.poll() is None:
            follower.kill()
        serve.stop()
    assert "killed" in serve.text()
