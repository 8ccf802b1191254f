"""The client side of the wire protocol against arbitrary server bytes: a whole session
(greeting, authentication, the queries before the dump, COM_REGISTER_SLAVE, the dump's
events) is read from ``data`` as if a server had sent it, over a socket pair.  Any input
must end in a BinlogError (a ServerError, a malformed event) or a clean end: never
another exception, a hang or unbounded memory.

Used by the hypothesis test tests/hostile/test_protocol.py and the atheris harness
fuzz/fuzz_protocol.py.
"""
from __future__ import annotations

import socket
import sys
from pathlib import Path

from binlog.errors import BinlogError
from binlog.sources.server import ReplicationClient, ServerOptions, verify_event
from binlog.sources.wire import WireConnection

MAX_INPUT = 64 * 1024           # under a socket pair's buffer: the writer never blocks


class _PairClient(ReplicationClient):
    """The replication client, logged in over a socket already connected."""

    def __init__(self, sock: socket.socket):
        super().__init__(ServerOptions("mysql://repl:pw@127.0.0.1/?connect_timeout=1&read_timeout=1",
                                       server_id=9, heartbeat=0.1))
        self.sock = sock

    def connect(self) -> None:
        self.conn = WireConnection(self.kw, on_error=self._typed)
        self.conn.open(sock=self.sock)


def run_session(data: bytes) -> int:
    """The events of the binlog file the session got through (0 when it ended early)."""
    read = 0
    ours, theirs = socket.socketpair()
    try:
        theirs.sendall(data[:MAX_INPUT])
        theirs.shutdown(socket.SHUT_WR)
        client = _PairClient(ours)
        try:
            client.start(file="mysql-bin.000001", position=4, blocking=False)
            for event in client.events():
                if event.in_file and client.tracker is not None and client.tracker.checksum:
                    verify_event(event)
                read += event.in_file
        except BinlogError:
            pass            # the expected end of a hostile session
        finally:
            client.close()
    finally:
        ours.close()
        theirs.close()
    return read


def valid_session(binlog: Path) -> bytes:
    """What a real primary sends in one session, greeting to EOF, serving ``binlog``
    (built by the test suite's fake primary, tests/support/fake_primary.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from support import fake_primary as fp

    out = [fp.packet(fp.greeting(), 0), fp.packet(fp.ok(), 2)]
    answer = fp.result_set([b"v", b"l", b"c"], [[b"10.11.6-MariaDB", b"1", b"CRC32"]])
    out += [fp.packet(p, i + 1) for i, p in enumerate(answer)]
    out += [fp.packet(fp.ok(), 1)] * 4          # the SETs, then COM_REGISTER_SLAVE
    clock = fp.result_set([b"@@timestamp"], [[b"1764158400.123456"]])
    out += [fp.packet(p, i + 1) for i, p in enumerate(clock)]
    payloads = [b"\x00" + fp.fake_rotate(b"mysql-bin.000001", 4, True)]
    payloads += [b"\x00" + e for e in fp.binlog_events(binlog)] + [fp.eof()]
    out += [fp.packet(p, i + 1) for i, p in enumerate(payloads)]
    return b"".join(out)


def seed_protocol(corpus: Path) -> None:
    """Seeds: a whole session over each small sample with checksums."""
    samples = Path(__file__).resolve().parents[1] / "samples" / "mariadb-10.11"
    for name in ("seed_tt_test2", "signedness", "temporal_predump"):
        (corpus / f"seed-{name}").write_bytes(valid_session(samples / f"{name}.binlog"))
