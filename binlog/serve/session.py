"""One client of ``binlog serve``: the login, the queries before the dump, and the dump.

A client is untrusted input: every packet it sends is bounded (``MAX_COMMAND``) and read
under a deadline (the login, then each command while idle), every send has a deadline
(a client that stops reading is dropped, the others go on: each client has its own
thread), and a malformed packet ends that client's session only.  Nothing it sends is
executed: queries are matched against ``queries.Answers``.

The dump itself is ``dump.Dump``.
"""
from __future__ import annotations

import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..errors import BinlogError, ServerError, ServerProtocolError
from ..inert import inert
from ..protocol import client_side as m, constants as pc, server_side as s
from ..protocol.packets import MAX_PACKET, PacketReader, frame
from ..sources.served import ServedLogs
from ..sources.wire import WireConnection
from .dump import ClientGone, Dump, gtid_position, to_int
from .queries import UPSTREAM_FIRST, Answers, ServeState, statement_of

MAX_COMMAND = 1 << 20           # no client command a replica sends is near this
MAX_PASSTHROUGH = 1 << 30        # one row of a query run on the upstream
_GTID_POSITION = re.compile(r"@@(?:global\.)?gtid_(?:binlog_pos|current_pos|binlog_state)\b", re.I)
_SESSION_SET = re.compile(r"SET\s", re.I)
#: the whole list of variables (charsets, sql_mode) of a client that snapshots the upstream
#: are the upstream's: its tables' text is in them
_ALL_VARIABLES = re.compile(r"SHOW\s+(?:GLOBAL\s+|SESSION\s+)?VARIABLES(?!\s+LIKE\b)", re.I)
_MASTER_STATUS = re.compile(r"\s*SHOW\s+(?:MASTER|BINLOG)\s+STATUS\s*;?\s*", re.I)


@dataclass
class Limits:
    login_timeout: float = 10.0         # greeting to OK
    idle_timeout: float = 600.0         # between two commands before the dump
    write_timeout: float = 60.0         # one send (a client that stops reading)
    poll: float = 0.02                  # how often a followed binlog is looked at
    passthrough_timeout: float = 600.0  # one query run on the upstream, its whole reply
    translate_wait: float = 30.0        # for the served binlog to reach a snapshot's position


@dataclass
class SessionInfo:
    """What the status answers and the log lines show of a client."""
    id: int
    host: str
    user: str = ""
    server_id: int = 0
    file: str = ""
    position: int = 0
    command: str = "login"
    started: float = field(default_factory=time.time)
    stop: threading.Event = field(default_factory=threading.Event)


class Session:
    def __init__(self, sock: socket.socket, info: SessionInfo, *, logs: ServedLogs,
                 state: Callable[[], ServeState], users: dict[str, str], limits: Limits,
                 log: Callable[[str], None], kill: Callable[[int, str], bool],
                 tls: ssl.SSLContext | None = None, upstream: dict | None = None):
        self.sock = sock
        self.info = info
        self.logs = logs
        self.state = state
        self.users = users
        self.limits = limits
        self.log = log
        self.kill = kill
        self.tls = tls
        self.upstream = upstream                # parsed DSN of --upstream (no user or password)
        self.upstream_session: WireConnection | None = None
        self.upstream_status = pc.SERVER_STATUS_AUTOCOMMIT    # of the upstream session's last reply
        self.reader = PacketReader(MAX_COMMAND, step="reading from the client")
        self.seq = 0
        self.answers: Answers | None = None

    # -- packets ----------------------------------------------------------------------
    def send(self, payload: bytes) -> None:
        data, self.seq = frame(payload, self.seq)
        with self._io():
            self.sock.settimeout(self.limits.write_timeout)
            self.sock.sendall(data)

    def send_event(self, event: bytes) -> None:
        """An event of the dump (0x00 and the event) without copying it into a packet:
        header and event go out in one sendmsg (events are megabytes; copying each twice
        halved the throughput)."""
        length = len(event) + 1
        if length >= MAX_PACKET or isinstance(self.sock, ssl.SSLSocket):
            # split across packets (frame() does it), or TLS, which has no sendmsg
            self.send(b"\x00" + event)
            return
        head = length.to_bytes(3, "little") + bytes([self.seq]) + b"\x00"
        self.seq = (self.seq + 1) & 0xFF
        parts = [memoryview(head), memoryview(event)]
        with self._io():
            self.sock.settimeout(self.limits.write_timeout)
            sent = self.sock.sendmsg(parts)
            for part in parts:
                if sent >= len(part):
                    sent -= len(part)
                    continue
                self.sock.sendall(part[sent:])
                sent = 0

    def send_all(self, payloads: list[bytes]) -> None:
        for p in payloads:
            self.send(p)

    def receive(self, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        self.reader.reset(self.seq)
        while True:
            payload = self.reader.next()
            if payload is not None:
                self.seq = self.reader.seq
                return payload
            left = deadline - time.monotonic()
            if left <= 0 or self.info.stop.is_set():
                raise ClientGone("timed out" if left <= 0 else "killed")
            with self._io():
                self.sock.settimeout(min(left, 1.0))
                try:
                    data = self.sock.recv(65536)
                except TimeoutError:
                    continue
            if not data:
                raise ClientGone("closed the connection")
            self.reader.feed(data)

    def receive_first(self, timeout: float) -> bytes:
        """The handshake response, read to its last byte and no further: after an
        SSLRequest, the client's TLS hello follows at once and must be left to TLS."""
        deadline = time.monotonic() + timeout
        head = self._exactly(4, deadline)
        length = int.from_bytes(head[:3], "little")
        if length > 4096:
            raise ServerProtocolError(f"a handshake response of {length} bytes", step="login")
        self.seq = (head[3] + 1) & 0xFF
        return self._exactly(length, deadline)

    def _exactly(self, n: int, deadline: float) -> bytes:
        data = b""
        while len(data) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ClientGone("timed out")
            with self._io():
                self.sock.settimeout(left)
                chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ClientGone("closed the connection")
            data += chunk
        return data

    @contextmanager
    def _io(self) -> Iterator[None]:
        try:
            yield
        except TimeoutError:
            raise ClientGone("stopped reading (send timed out)") from None
        except OSError as exc:
            raise ClientGone(f"connection lost ({exc.strerror or exc})") from None

    # -- the session ------------------------------------------------------------------
    def run(self) -> None:
        try:
            if not self._login():
                return
            self._commands()
        except ClientGone as exc:
            self.log(f"client {self.info.id} ({self._who()}) disconnected: {exc}{self._where()}")
        except ServerProtocolError as exc:
            self.log(f"client {self.info.id} ({self._who()}) sent a malformed packet: "
                     f"{inert(exc.message)}; session ended")
        except BinlogError as exc:
            self._fail(pc.ER_MASTER_FATAL_ERROR_READING_BINLOG, inert(exc.message))
        finally:
            self.sock.close()
            if self.upstream_session is not None:
                self.upstream_session.close()

    def _fail(self, code: int, message: str) -> None:
        self.log(f"client {self.info.id} ({self._who()}): error {code}: {message}{self._where()}")
        try:
            self.send(s.error(code, message))
        except ClientGone:
            pass        # it went away as we told it why: the log line says why

    def _who(self) -> str:
        return inert(f"{self.info.user or '?'}@{self.info.host}", limit=160)

    def _where(self) -> str:
        return f" at {self.info.file}:{self.info.position}" if self.info.file else ""

    def _login(self) -> bool:
        upstream, caps = self._upstream_greeting()
        scramble = upstream.greeting.scramble if upstream is not None and upstream.greeting else s.new_scramble()
        self.seq = 0
        self.send(s.greeting(self.state().version, self.info.id, scramble, ssl=self.tls is not None))
        response = s.parse_handshake_response(self.receive_first(self.limits.login_timeout))
        if response.ssl_only:
            if self.tls is None:
                raise ServerProtocolError("an SSLRequest, but TLS is not offered", step="login")
            with self._io():        # the TLS handshake under the login's deadline
                self.sock.settimeout(self.limits.login_timeout)
                self.sock = self.tls.wrap_socket(self.sock, server_side=True)
            response = s.parse_handshake_response(self.receive(self.limits.login_timeout))
        self.info.user = response.user
        reply = response.auth
        if response.plugin not in ("", pc.NATIVE_PASSWORD):
            # the client's default method is another: ask for ours (AuthSwitchRequest)
            self.send(s.auth_switch(pc.NATIVE_PASSWORD, scramble + b"\0"))
            reply = self.receive(self.limits.login_timeout)
        if not self._check(response.user, scramble, reply, upstream, caps):
            return False
        self.send(s.ok())
        self.answers = Answers(self.state(), response.user)
        self.log(f"client {self.info.id} ({self._who()}) connected")
        return True

    def _upstream_greeting(self) -> tuple[WireConnection | None, int]:
        """With --upstream: a connection to it, greeted (its scramble is the one the
        client answers, so the upstream can check the answer); None when it is down
        (then only the --users accounts get in)."""
        if self.upstream is None:
            return None, 0
        conn = WireConnection(self.upstream, on_error=lambda code, text, step: ServerError(
            f"{text} (error {code})", code=code))
        try:
            return conn, conn.greet()
        except ServerError as exc:
            conn.close()
            self.log(f"client {self.info.id}: the upstream is not reachable ({exc.message}): "
                     f"only --users accounts can log in")
            return None, 0

    def _check(self, user: str, scramble: bytes, reply: bytes, upstream, caps: int) -> bool:
        """A --users account is checked here; any other against the upstream's accounts
        (whose connection then stays the client's: its privileges are the upstream's)."""
        stored = self.users.get(user)
        if stored is not None or upstream is None:
            if upstream is not None:
                upstream.close()
            if stored is not None and s.native_check(stored, scramble, reply):
                return True
            self._fail(pc.ER_ACCESS_DENIED_ERROR, f"Access denied for user '{inert(user, limit=64)}'")
            return False
        try:
            upstream.authenticate_as(user, reply, caps)
        except ServerError as exc:
            upstream.close()
            refused = (pc.ER_ACCESS_DENIED_ERROR, pc.ER_ACCESS_DENIED_NO_PASSWORD_ERROR)
            code = exc.code if exc.code in refused else pc.ER_ACCESS_DENIED_ERROR
            self._fail(code, f"Access denied for user '{inert(user, limit=64)}' (upstream: "
                             f"{inert(exc.message, limit=200)})")
            return False
        self.upstream_session = upstream
        return True

    def _commands(self) -> None:
        while True:
            self.info.command = "idle"
            self.seq = 0
            packet = self.receive(self.limits.idle_timeout)
            if not packet:
                raise ServerProtocolError("an empty command", step="command")
            code, body = packet[0], packet[1:]
            if code == pc.COM_QUIT:
                self.log(f"client {self.info.id} ({self._who()}) quit")
                return
            if code == pc.COM_QUERY:
                self._query(body.decode("utf-8", "replace"))
            elif code in (pc.COM_PING, pc.COM_INIT_DB):     # COM_INIT_DB: nothing to change
                self.send_all(self._served([s.ok()]))
            elif code == pc.COM_REGISTER_SLAVE:
                self.info.server_id = s.parse_register_slave(body)
                self.send(s.ok())
            elif code == pc.COM_BINLOG_DUMP:
                self._dump(s.parse_binlog_dump(body))
                return
            else:
                self.send(s.error(pc.ER_UNKNOWN_COM_ERROR, f"command {code} is not served"))

    def _query(self, sql: str) -> None:
        assert self.answers is not None
        kill = re.fullmatch(r"\s*KILL\s+(?:CONNECTION\s+|QUERY\s+)?(\d{1,10})\s*;?\s*", sql, re.I)
        if kill:
            done = self.kill(int(kill.group(1)), self.info.user)
            self.send(s.ok() if done else s.error(pc.ER_NO_SUCH_THREAD, f"Unknown thread id: {kill.group(1)}"))
            return
        self.answers.state = self.state()
        if self.upstream_session is not None and _MASTER_STATUS.fullmatch(statement_of(sql)):
            try:
                self.send_all(self._served(self._translated_master_status()))
            except ServerError as exc:      # the upstream refused it: its refusal, in its words
                self.send(s.error(exc.code or pc.ER_MASTER_FATAL_ERROR_READING_BINLOG,
                                  inert(exc.message, limit=300)))
            return
        if self.upstream_session is not None and (
                _GTID_POSITION.search(sql) or any(p.fullmatch(statement_of(sql)) for p in UPSTREAM_FIRST)):
            self._passthrough(sql)      # the snapshot's GTID (GTIDs are not rewritten), the upstream's zone
            return
        answer = self.answers.answer(sql)
        refused = bool(answer) and answer[0][:1] == bytes([pc.ERR])
        if self.upstream_session is not None and (refused or _SESSION_SET.match(statement_of(sql))
                                                  or _ALL_VARIABLES.match(statement_of(sql))):
            # what serve does not answer runs on the upstream; so does a SET (kept here
            # too, for the dump's @variables): the snapshot's queries then run with the
            # client's time_zone, sql_mode, names and isolation, as on a primary
            self._passthrough(sql)
            return
        if refused:
            self.log(f"client {self.info.id} ({self._who()}) asked what is not served: {inert(sql, limit=200)}")
        self.send_all(self._served(answer))

    def _served(self, answer: list[bytes]) -> list[bytes]:
        """An answer of serve's own, with the status flags of the client's upstream
        session when it has one (its autocommit, its open transaction)."""
        return answer if self.upstream_session is None else s.with_status(answer, self.upstream_status)

    # -- queries for the upstream -----------------------------------------------------
    def _passthrough(self, sql: str) -> None:
        """A query serve does not answer (a snapshot's SELECT, SHOW CREATE TABLE, FLUSH
        TABLES WITH READ LOCK...), run on the upstream in the client's own session (its own
        account and privileges), the reply handed on packet by packet."""
        conn = self.upstream_session
        assert conn is not None
        deadline = time.monotonic() + self.limits.passthrough_timeout
        conn.reader.limit = MAX_PASSTHROUGH
        conn.send_command(pc.COM_QUERY, sql.encode("utf-8"), deadline)
        self.info.command = "Query (upstream)"
        last = b""
        for payload in _reply(conn, deadline):
            self.send(payload)
            last = payload
        if last[:1] == bytes([pc.OK]) or m.is_eof(last):
            self.upstream_status = m.status_flags(last, ok=last[:1] == bytes([pc.OK]))

    def _translated_master_status(self) -> list[bytes]:
        """SHOW MASTER STATUS of the upstream in this session (after a FLUSH TABLES WITH
        READ LOCK it is the snapshot's position), in the served binlogs' coordinates: the
        same file, the position through the rewrite's position map, once the served file
        has reached it."""
        assert self.upstream_session is not None
        rows = self.upstream_session.query("SHOW MASTER STATUS", columns=4)
        out = []
        for name, pos, do_db, ignore_db in rows:
            file = (name or b"").decode("utf-8", "replace")
            position = self.logs.translate(file, int(pos or 0), wait=self.limits.translate_wait)
            out.append((file, position, (do_db or b"").decode(), (ignore_db or b"").decode()))
        return s.result_set(["File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB"], out,
                            numeric=frozenset({1}))

    # -- the dump ---------------------------------------------------------------------
    def _may_dump(self) -> bool:
        """A client logged in with an upstream account sees nothing it could not see there:
        its own grants on the upstream (SHOW GRANTS, its enabled roles' included) must hold
        REPLICATION SLAVE.  A --users account is serve's own: allowed."""
        if self.upstream_session is None:
            return True
        grants = [str(row[0] or b"", "utf-8", "replace") if isinstance(row[0], bytes) else str(row[0])
                  for row in self.upstream_session.query("SHOW GRANTS", columns=1)]
        return any("REPLICATION SLAVE" in g.upper() or "ALL PRIVILEGES ON *.*" in g.upper() for g in grants)

    def _first_names(self, *, blocking: bool) -> list[str]:
        """The served binlogs; a blocking dump waits for the first one (serve may start
        before the rewrite of the relay has written anything)."""
        while True:
            names = self.logs.names()
            if names or not blocking:
                return names
            if self.info.stop.wait(self.limits.poll * 10):
                raise ClientGone("killed")

    def _dump(self, request: s.DumpRequest) -> None:
        assert self.answers is not None
        variables = self.answers.user_vars
        aware = variables.get("master_binlog_checksum") is not None
        at_connect = (variables.get("master_binlog_checksum") or "").upper() == "CRC32"
        capability = to_int(variables.get("mariadb_slave_capability"))
        period = to_int(variables.get("master_heartbeat_period")) / 1e9
        want = gtid_position(variables.get("slave_connect_state"))
        names = self._first_names(blocking=not request.flags & pc.BINLOG_DUMP_NON_BLOCK)
        if want is not None and not want:
            name, position = (names[0] if names else ""), 4     # an empty GTID state: the start
        elif want is not None:
            name, position = self.logs.gtid_start_file(want), 4
        else:
            name, position = request.file or (names[0] if names else ""), request.position
        if name not in names:
            self._fail(pc.ER_MASTER_FATAL_ERROR_READING_BINLOG,
                       "Could not find first log file name in binary log index file")
            return
        if not 4 <= position <= self.logs.size(name):
            self._fail(pc.ER_MASTER_FATAL_ERROR_READING_BINLOG,
                       "Client requested master to start replication from impossible position")
            return
        if not self._may_dump():
            self._fail(pc.ER_SPECIFIC_ACCESS_DENIED_ERROR, "Access denied; you need (at least one of) the "
                                                  "REPLICATION SLAVE privilege(s) for this operation")
            return
        self.info.command = "Binlog Dump"
        self.log(f"client {self.info.id} ({self._who()}, server id {request.server_id}) dumps from "
                 f"{name}:{position}" + (f" (GTID {variables.get('slave_connect_state')})" if want else ""))
        dump = Dump(self, name, position, aware=aware, rotate_crc=at_connect, capability=capability,
                    annotate=bool(request.flags & pc.BINLOG_SEND_ANNOTATE_ROWS_EVENT), want=want,
                    blocking=not request.flags & pc.BINLOG_DUMP_NON_BLOCK, heartbeat=period)
        dump.run()


def _reply(conn: WireConnection, deadline: float) -> Iterator[bytes]:
    """The payloads of one query's reply (KB "Result Set Packets"; without
    CLIENT_DEPRECATE_EOF): OK or ERR, or column count, definitions, EOF, rows, EOF; again
    while the status says more results follow."""
    step = "a query run on the upstream"
    while True:
        first = conn.read_payload(deadline, step)
        yield first
        if first[:1] == bytes([pc.ERR]):
            return
        if first[:1] == bytes([pc.OK]):
            if not m.status_flags(first, ok=True) & pc.SERVER_MORE_RESULTS_EXISTS:
                return
            continue
        if first[:1] == bytes([pc.NULL_VALUE]):
            raise ServerProtocolError("the upstream asks for a LOCAL INFILE: not passed on",
                                      step=step)
        count = m.column_count(first, step)
        for _ in range(count):
            yield conn.read_payload(deadline, step)
        eof = conn.read_payload(deadline, step)
        if not m.is_eof(eof):
            raise ServerProtocolError(f"{step}: no EOF after the column definitions", step=step)
        yield eof
        while True:
            row = conn.read_payload(deadline, step)
            yield row
            if row[:1] == bytes([pc.ERR]):
                return
            if m.is_eof(row):
                break
        if not m.status_flags(row, ok=False) & pc.SERVER_MORE_RESULTS_EXISTS:
            return
