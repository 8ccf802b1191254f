"""A small, hostile-when-asked MySQL primary on loopback, for the tests of the live source.

It speaks the server side of the protocol far enough for ``binlog fetch``/``--from``:
the greeting, authentication, the queries the client sends before the dump, COM_REGISTER_SLAVE
and COM_BINLOG_DUMP, and serves the events of a real binlog file (a sample) after the
fake ROTATE a real primary sends first.  Its packets are built here with ``struct``, not
with the project's own protocol code, so the tests check our client against bytes
written independently.

Each attack is a subclass that overrides one step (``greeting``, ``authenticate``,
``answer``, ``dump``).  Everything the client sent is kept in ``received`` (raw bytes of
every connection), so a test can prove that a secret never reached the server.
"""
from __future__ import annotations

import hashlib
import socket
import struct
import threading
import zlib
from pathlib import Path

CAPS = (0x1 | 0x4 | 0x200 | 0x2000 | 0x8000 | 0x20000 | 0x80000 | 0x200000)   # no SSL
SCRAMBLE = bytes(range(65, 85))          # 20 bytes of auth plugin data


def packet(payload: bytes, seq: int) -> bytes:
    return struct.pack("<I", len(payload))[:3] + bytes([seq & 0xFF]) + payload


def lenenc_str(data: bytes) -> bytes:
    assert len(data) < 251
    return bytes([len(data)]) + data


def greeting(plugin: bytes = b"mysql_native_password", version: bytes = b"10.11.6-MariaDB-fake",
             caps: int = CAPS) -> bytes:
    return (b"\x0a" + version + b"\0" + struct.pack("<I", 7) + SCRAMBLE[:8] + b"\0"
            + struct.pack("<H", caps & 0xFFFF) + b"\x2d" + struct.pack("<H", 2)
            + struct.pack("<H", caps >> 16) + bytes([21]) + b"\0" * 10 + SCRAMBLE[8:] + b"\0"
            + plugin + b"\0")


def ok() -> bytes:
    return b"\x00\x00\x00\x02\x00\x00\x00"


def eof() -> bytes:
    return b"\xfe\x00\x00\x02\x00"


def err(code: int, message: bytes, state: bytes = b"HY000") -> bytes:
    return b"\xff" + struct.pack("<H", code) + b"#" + state + message


def column(name: bytes) -> bytes:
    return (lenenc_str(b"def") + lenenc_str(b"") + lenenc_str(b"") + lenenc_str(b"")
            + lenenc_str(name) + lenenc_str(name) + b"\x0c" + struct.pack("<HIBHB", 33, 255, 253, 0, 0)
            + b"\0\0")


def row(values) -> bytes:
    return b"".join(b"\xfb" if v is None else lenenc_str(v) for v in values)


def result_set(names: list[bytes], rows: list[list[bytes | None]]) -> list[bytes]:
    """The payloads of a text result set (column count, definitions, EOF, rows, EOF)."""
    return [bytes([len(names)]), *(column(n) for n in names), eof(), *(row(r) for r in rows), eof()]


def native_scramble(password: bytes, scramble: bytes = SCRAMBLE) -> bytes:
    stage1 = hashlib.sha1(password).digest()
    stage2 = hashlib.sha1(stage1).digest()
    mix = hashlib.sha1(scramble + stage2).digest()
    return bytes(a ^ b for a, b in zip(stage1, mix, strict=True))


def binlog_events(path: Path) -> list[bytes]:
    data = path.read_bytes()
    events, pos = [], 4
    while pos + 19 <= len(data):
        size = int.from_bytes(data[pos + 9:pos + 13], "little")
        events.append(data[pos:pos + size])
        pos += size
    return events


def fake_rotate(name: bytes, position: int, checksum: bool) -> bytes:
    body = struct.pack("<Q", position) + name
    size = 19 + len(body) + (4 if checksum else 0)
    head = struct.pack("<IBIIIH", 0, 4, 1, size, 0, 0x20)
    event = head + body
    return event + (struct.pack("<I", zlib.crc32(event)) if checksum else b"")


class Session:
    """One client connection, as the server sees it."""

    def __init__(self, server: FakePrimary, sock: socket.socket):
        self.server = server
        self.sock = sock
        self.seq = 0
        self.handshake = b""

    def send(self, payload: bytes) -> None:
        self.sock.sendall(packet(payload, self.seq))
        self.seq += 1

    def recv_packet(self) -> bytes | None:
        head = self._exact(4)
        if head is None:
            return None
        length = int.from_bytes(head[:3], "little")
        self.seq = head[3] + 1
        return self._exact(length)

    def _exact(self, n: int) -> bytes | None:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                return None
            self.server.record(chunk)
            data += chunk
        return data


class FakePrimary:
    """Serves ``binlog`` (a sample file's events) as ``name``; override a step to attack."""
    password = b"s3cret-Pw"
    plugin = b"mysql_native_password"
    version = b"10.11.6-MariaDB-fake"
    checksum = b"CRC32"
    log_bin: bytes | None = b"1"
    binlog_name = b"mysql-bin.000001"

    def __init__(self, binlog: Path | None = None):
        self.events = binlog_events(binlog) if binlog is not None else []
        self.received = bytearray()
        self.queries: list[str] = []
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def hold(self, seconds: float = 60) -> None:
        """Silence: keep the connection open without a byte (until the test ends)."""
        self._stop.wait(seconds)

    def trickle(self, s: Session, data: bytes, every: float = 0.5) -> None:
        """Send ``data`` one byte at a time, ``every`` seconds apart."""
        for byte in data:
            if self._stop.wait(every):
                return
            s.sock.sendall(bytes([byte]))

    def record(self, data: bytes) -> None:
        with self._lock:
            self.received += data

    def dsn(self, user: str = "repl", query: str = "") -> str:
        password = self.password.decode()
        return f"mysql://{user}:{password}@127.0.0.1:{self.port}/{'?' + query if query else ''}"

    # -- the steps a subclass overrides ----------------------------------------------
    def greeting(self, s: Session) -> None:
        s.send(greeting(self.plugin, self.version))

    def authenticate(self, s: Session) -> bool:
        """After the handshake response: True when the client is logged in."""
        s.send(ok())
        return True

    def answer(self, s: Session, sql: str) -> None:
        if sql.startswith("SELECT VERSION()"):
            for p in result_set([b"VERSION()", b"@@global.log_bin", b"@@global.binlog_checksum"],
                                [[self.version, self.log_bin, self.checksum]]):
                s.send(p)
        elif sql.startswith("SELECT @@timestamp"):
            for p in result_set([b"@@timestamp"], [[b"1764158400.123456"]]):
                s.send(p)
        elif sql.startswith("SHOW VARIABLES"):
            for p in result_set([b"Variable_name", b"Value"], [[b"rpl_semi_sync_master_enabled", b"ON"]]):
                s.send(p)
        else:
            s.send(ok())

    def dump(self, s: Session, request: bytes) -> None:
        """The events after the fake ROTATE, then EOF (a non-blocking dump)."""
        checksum = self.checksum == b"CRC32"
        s.send(b"\x00" + fake_rotate(self.binlog_name, 4, checksum))
        for event in self.events:
            s.send(b"\x00" + event)
        s.send(eof())

    # -- the session ------------------------------------------------------------------
    def _session(self, sock: socket.socket) -> None:
        s = Session(self, sock)
        try:
            self.greeting(s)
            response = s.recv_packet()
            if response is None:
                return
            s.handshake = response
            if not self.authenticate(s):
                return
            while not self._stop.is_set():
                s.seq = 0
                command = s.recv_packet()
                if not command or command[0] == 0x01:
                    return
                if command[0] == 0x03:
                    sql = command[1:].decode("utf-8", "replace")
                    self.queries.append(sql)
                    self.answer(s, sql)
                elif command[0] == 0x15:
                    s.send(ok())
                elif command[0] == 0x12:
                    self.dump(s, command[1:])
                    return
                else:
                    s.send(err(1047, b"Unknown command"))
        except OSError:
            pass            # the client went away: its side of the test checks why
        except Exception as exc:    # noqa: BLE001 - kept and re-raised by the test
            self.errors.append(exc)
        finally:
            sock.close()

    def _serve(self) -> None:
        self._listener.settimeout(0.2)
        while not self._stop.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            t = threading.Thread(target=self._session, args=(sock,), daemon=True)
            t.start()
            self._threads.append(t)

    def __enter__(self) -> FakePrimary:
        t = threading.Thread(target=self._serve, daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._listener.close()
        for t in self._threads:
            t.join(timeout=5)
        if self.errors:
            raise self.errors[0]
