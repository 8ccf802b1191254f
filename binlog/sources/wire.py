"""A blocking client connection to a MySQL/MariaDB server over ``binlog.protocol``: the
socket, TLS, the login, queries and commands, each step under a deadline.

Every step has a time limit measured from its start, not from the last byte: a server
that answers one byte every few seconds cannot keep a step open longer than a silent one.

- the login (TCP connect, greeting, TLS, authentication): ``connect_timeout`` (DSN
  ``?connect_timeout=S``, default 10 s) in all;
- each query or command before the dump, its whole reply: ``read_timeout`` (DSN
  ``?read_timeout=S``, default 30 s);
- each packet of the dump (``read_payload`` with a ``MovingDeadline``): the read timeout
  (from the heartbeat period) from the packet's start, moved on by the bytes that arrive
  (``MovingDeadline.RATE`` a second earns a second) but never past the read timeout from the
  last bytes: a server that stalls inside a packet is cut within the read timeout,
  whatever length it announced, and one that trickles it within about that too.

What the server sends is bounded before it is kept: a packet over the step's limit is
refused when its header is in, a result set over ``MAX_COLUMNS`` / ``MAX_ROWS`` when its
column count or its row is.  Its texts reach messages only through ``inert`` (escaped,
capped, without the password).
"""
from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import (
    ServerAccessError,
    ServerConnectionError,
    ServerError,
    ServerProtocolError,
    ServerTimeoutError,
    UsageError,
)
from ..inert import inert
from ..protocol import auth, client_side as m, constants as pc
from ..protocol.packets import PacketReader, frame

DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 30.0
#: The longest reply to a query or command before the dump (a few variables' values).
MAX_REPLY = 1 << 20
_RECV = 1 << 20


class MovingDeadline:
    """A deadline that arriving bytes move (module docstring): ``at``, initially
    ``timeout`` seconds from now; each ``received(n)`` moves it on by n / RATE seconds,
    to at most ``timeout`` seconds after that moment."""

    RATE = 64 * 1024        # bytes a second a packet must come at to earn its time

    def __init__(self, timeout: float):
        self.timeout = timeout
        self.at = time.monotonic() + timeout

    def received(self, n: int) -> None:
        self.at = min(self.at + n / self.RATE, time.monotonic() + self.timeout)


class WireConnection:
    """``open()`` logs in; then ``query``, ``execute``, ``command``, and for the dump
    ``read_payload``.  ``kw``: a parsed DSN (``binlog.user_values.parse_dsn``)."""

    def __init__(self, kw: dict, *, on_error: Callable[[int, str, str], ServerError]):
        self.kw = kw
        self.host = kw.get("host") or "localhost"
        self.port = int(kw.get("port") or 3306)
        self.unix_socket = kw.get("unix_socket")
        self.connect_timeout = float(kw.get("connect_timeout") or DEFAULT_CONNECT_TIMEOUT)
        self.read_timeout = float(kw.get("read_timeout") or DEFAULT_READ_TIMEOUT)
        self.password = str(kw.get("password") or "")
        self.on_error = on_error            # (code, inert text, step) -> the typed error
        self.sock: socket.socket | None = None
        self.reader = PacketReader(MAX_REPLY)
        self.seq = 0
        self.greeting: m.Greeting | None = None
        self.secure = False
        self.logged_in = False

    # -- texts and errors -------------------------------------------------------------
    def inert(self, text: bytes | str) -> str:
        return inert(text, secrets=(self.password,))

    def server_error(self, payload: bytes | bytearray, step: str) -> ServerError:
        packet = m.parse_error(bytes(payload), step)
        return self.on_error(packet.code, self.inert(packet.message), step)

    # -- the login --------------------------------------------------------------------
    def open(self, sock: socket.socket | None = None) -> WireConnection:
        """Log in; ``sock``: a socket already connected to the server (a proxy, the
        fuzz harness) instead of the DSN's address."""
        deadline = time.monotonic() + self.connect_timeout
        caps = self.greet(sock, deadline)
        self._authenticate(caps, self.kw.get("database"), deadline)
        return self

    def authenticate_as(self, user: str, proof: bytes, caps: int) -> None:
        """Log in with another party's credentials after ``greet`` (``binlog serve``
        checking a client against the upstream's accounts): ``proof`` is the client's
        mysql_native_password answer to this server's scramble; the password never
        passes through us.  A server that wants another method for the account is refused."""
        deadline = time.monotonic() + self.connect_timeout
        self.send(m.handshake_response(user, proof, auth.NativePassword.name, caps), deadline)
        payload = self.read_payload(deadline, auth.STEP)
        if payload[:1] == bytes([pc.ERR]):
            raise self.server_error(payload, "connecting")
        if payload[:1] != bytes([pc.OK]):
            raise ServerAccessError("the upstream asks for another authentication method than "
                                    "mysql_native_password for this account")
        self.logged_in = True

    def greet(self, sock: socket.socket | None = None, deadline: float | None = None) -> int:
        """Connect, read the greeting, start TLS if asked: the capabilities to log in with."""
        deadline = deadline if deadline is not None else time.monotonic() + self.connect_timeout
        self.sock = sock if sock is not None else self._socket(deadline)
        step = "reading the server greeting"
        payload = self.read_payload(deadline, step)
        if payload[:1] == bytes([pc.ERR]):
            raise self.server_error(payload, step)
        self.greeting = m.parse_greeting(payload)
        caps = m.CLIENT_CAPS & self.greeting.capabilities
        if self.kw.get("database"):
            caps |= pc.CLIENT_CONNECT_WITH_DB & self.greeting.capabilities
        return self._tls(caps, deadline)

    def _socket(self, deadline: float) -> socket.socket:
        where = self.unix_socket or f"{self.host}:{self.port}"
        try:
            if self.unix_socket:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(self._left(deadline, "connecting"))
                sock.connect(self.unix_socket)
            else:
                sock = socket.create_connection((self.host, self.port),
                                                timeout=self._left(deadline, "connecting"))
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except TimeoutError:
            raise ServerTimeoutError(f"connecting to {where}: no answer within "
                                     f"{self.connect_timeout:g} s (?connect_timeout=)") from None
        except OSError as exc:
            raise ServerConnectionError(f"connecting to {where}: {exc.strerror or exc}") from None
        return sock

    def _tls(self, caps: int, deadline: float) -> int:
        """SSLRequest, then TLS on the same socket (KB "Connection": SSL handshake)."""
        context = tls_context(self.kw)
        if context is None:
            self.secure = bool(self.unix_socket)
            return caps & ~pc.CLIENT_SSL
        assert self.greeting is not None and self.sock is not None
        if not self.greeting.capabilities & pc.CLIENT_SSL:
            raise ServerAccessError("the DSN asks for TLS (?ssl_...) but the server does not "
                                    "offer it: refused rather than sent in clear")
        if self.reader.buffered:
            # bytes sent after the greeting would be read as if they came over TLS
            raise ServerProtocolError("the server sent data before TLS started", step="starting TLS")
        caps |= pc.CLIENT_SSL
        self.send(m.ssl_request(caps), deadline)
        try:
            self.sock.settimeout(self._left(deadline, "starting TLS"))
            self.sock = context.wrap_socket(self.sock, server_hostname=None if self.unix_socket
                                            else self.host)
        except (ssl.SSLError, OSError) as exc:
            raise ServerAccessError(f"TLS with {self.host}: {self.inert(str(exc))}",
                                    hint="check ?ssl_ca= (the CA that signed the server's "
                                         "certificate) and the server's ssl settings") from None
        self.secure = context.verify_mode == ssl.CERT_REQUIRED or bool(self.unix_socket)
        return caps

    def _authenticate(self, caps: int, database: str | None, deadline: float) -> None:
        assert self.greeting is not None
        cred = auth.Credentials(str(self.kw.get("user") or "root"), self.password.encode("utf-8"),
                                self.secure, public_key(self.kw),
                                bool(self.kw.get("allow_cleartext_password")))
        method = auth.method(self.greeting.plugin, cred, self.greeting.scramble)
        self.send(m.handshake_response(cred.user, method.start(), method.name, caps,
                                       database=database), deadline)
        switched = False
        step = auth.STEP
        while True:
            payload = self.read_payload(deadline, step)
            kind = payload[:1]
            if kind == bytes([pc.OK]):
                self.logged_in = True
                return
            if kind == bytes([pc.ERR]):
                raise self.server_error(payload, "connecting")
            if kind == bytes([pc.SWITCH]) and not switched:
                switched = True
                request = m.parse_auth_switch(payload, step)
                # whole: 20 bytes and a NUL for the SHA methods (each takes [:20]), 32 for ed25519
                method = auth.method(request.plugin, cred, request.data)
                self.send(method.start(), deadline)
            elif kind == bytes([pc.MORE_DATA]):
                reply = method.more(payload[1:])
                if reply is not None:
                    self.send(reply, deadline)
            else:
                raise ServerProtocolError(f"{step}: unexpected packet ({len(payload)} bytes, "
                                          f"starts with {payload[:1].hex() or 'nothing'})", step=step)

    # -- queries ----------------------------------------------------------------------
    def query(self, sql: str, *, columns: int) -> list[tuple[bytes | None, ...]]:
        """The rows of a query that returns a result set of ``columns`` columns."""
        step = f"query {sql!r}"
        deadline = time.monotonic() + self.read_timeout
        self.send_command(pc.COM_QUERY, sql.encode("utf-8"), deadline)
        first = self.read_payload(deadline, step)
        if first[:1] == bytes([pc.ERR]):
            raise self.server_error(first, step)
        if first[:1] == bytes([pc.OK]):
            raise ServerProtocolError(f"{step}: an OK packet where rows were expected", step=step)
        count = m.column_count(first, step)
        if count != columns:
            raise ServerProtocolError(f"{step}: {count} columns, expected {columns}", step=step)
        for _ in range(count):
            m.column_name(self.read_payload(deadline, step), step)
        if not m.is_eof(self.read_payload(deadline, step)):
            raise ServerProtocolError(f"{step}: no EOF after the column definitions", step=step)
        rows: list[tuple[bytes | None, ...]] = []
        while True:
            payload = self.read_payload(deadline, step)
            if m.is_eof(payload):
                return rows
            if payload[:1] == bytes([pc.ERR]):
                raise self.server_error(payload, step)
            if len(rows) >= m.MAX_ROWS:
                raise ServerProtocolError(f"{step}: more than {m.MAX_ROWS} rows", step=step)
            rows.append(m.text_row(payload, count, step))

    def execute(self, sql: str) -> None:
        """A statement that returns no rows (SET ...): its OK."""
        step = f"query {sql!r}"
        deadline = time.monotonic() + self.read_timeout
        self.send_command(pc.COM_QUERY, sql.encode("utf-8"), deadline)
        self.read_ok(deadline, step)

    def read_ok(self, deadline: float, step: str) -> None:
        payload = self.read_payload(deadline, step)
        if payload[:1] == bytes([pc.ERR]):
            raise self.server_error(payload, step)
        if payload[:1] != bytes([pc.OK]):
            raise ServerProtocolError(f"{step}: expected an OK packet, got {len(payload)} bytes "
                                      f"starting with {payload[:1].hex() or 'nothing'}", step=step)

    # -- packets ----------------------------------------------------------------------
    def send_command(self, code: int, payload: bytes, deadline: float) -> None:
        """A command starts a new exchange: sequence numbers from 0."""
        self.seq = 0
        self.reader.reset(1)
        self.send(m.command(code, payload), deadline)

    def send(self, payload: bytes, deadline: float) -> None:
        data, self.seq = frame(payload, self.seq)
        self.reader.reset(self.seq)
        self.send_raw(data, deadline)

    def send_raw(self, data: bytes, deadline: float) -> None:
        sock = self._sock()
        with self._io("sending"):
            sock.settimeout(self._left(deadline, "sending"))
            sock.sendall(data)

    @contextmanager
    def _io(self, step: str) -> Iterator[None]:
        """Socket failures as the typed errors of the live source (both retried)."""
        try:
            yield
        except TimeoutError:
            raise ServerTimeoutError(f"source {self.where}, {step}: timed out") from None
        except OSError as exc:
            raise ServerConnectionError(f"source {self.where}, {step}: lost connection "
                                        f"({exc.strerror or exc})") from None

    def read_payload(self, deadline: float, step: str) -> bytes:
        """The next payload, whole, by ``deadline``."""
        payload = self.read_large(deadline, step)
        return payload if isinstance(payload, bytes) else bytes(payload)

    def read_large(self, deadline: float | MovingDeadline, step: str) -> bytes | bytearray:
        """The next payload, whole, by ``deadline`` (a ``MovingDeadline``: by its moving
        deadline); one that came in several packets is the bytearray it was put together
        in, not a copy (the dump's large events)."""
        reader = self.reader
        reader.step = step
        sock = self._sock()
        while True:
            payload = reader.next()
            if payload is not None:
                self.seq = reader.seq
                return payload
            with self._io(step):
                sock.settimeout(self._left(deadline.at if isinstance(deadline, MovingDeadline) else deadline, step))
                data = sock.recv(min(max(reader.wanted(), 4096), _RECV))
            if not data:
                raise ServerConnectionError(f"source {self.where}, {step}: lost connection "
                                            f"(the server closed it)")
            if isinstance(deadline, MovingDeadline):
                deadline.received(len(data))
            reader.feed(data)

    def _left(self, deadline: float, step: str) -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ServerTimeoutError(f"source {self.where}, {step}: timed out")
        return left

    def _sock(self) -> socket.socket:
        if self.sock is None:
            raise ServerConnectionError(f"not connected to {self.where}")
        return self.sock

    @property
    def where(self) -> str:
        return self.unix_socket or f"{self.host}:{self.port}"

    def close(self) -> None:
        """COM_QUIT when logged in, then close; never raises."""
        sock, self.sock = self.sock, None
        if sock is None:
            return
        if not self.logged_in:
            sock.close()
            return
        try:
            sock.settimeout(0.5)
            sock.sendall(frame(m.command(pc.COM_QUIT), 0)[0])
        except OSError:
            pass            # the server went away first: nothing to say goodbye to
        finally:
            sock.close()


def tls_context(kw: dict) -> ssl.SSLContext | None:
    """The TLS settings of a DSN (?ssl_ca, ?ssl_cert, ?ssl_key, ?ssl_verify_cert,
    ?ssl_verify_identity): None when it asks for none.  A CA verifies the certificate
    unless ?ssl_verify_cert=0; ?ssl_verify_identity=1 checks the host name too."""
    names = ("ssl_ca", "ssl_cert", "ssl_key", "ssl_verify_cert", "ssl_verify_identity")
    if not any(kw.get(n) for n in names):
        return None
    try:
        context = ssl.create_default_context(cafile=kw.get("ssl_ca"))
        verify = kw.get("ssl_verify_cert")
        if verify is None:
            verify = bool(kw.get("ssl_ca"))
        context.check_hostname = bool(kw.get("ssl_verify_identity")) and bool(verify)
        context.verify_mode = ssl.CERT_REQUIRED if verify else ssl.CERT_NONE
        if kw.get("ssl_cert"):
            context.load_cert_chain(kw["ssl_cert"], kw.get("ssl_key"))
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(f"the DSN's TLS files cannot be used: {exc}") from None
    return context


def public_key(kw: dict) -> bytes | None:
    path = kw.get("server_public_key")
    if not path:
        return None
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"?server_public_key={path}: {exc.strerror or exc}") from None
    if len(data) > 64 * 1024:
        raise UsageError(f"?server_public_key={path}: not a PEM public key (over 64 KiB)")
    return data
