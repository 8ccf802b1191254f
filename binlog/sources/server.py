"""Binlog events from a running server, over the replication protocol (``--from DSN``).

The client logs in over our own connection (``sources.wire`` on ``binlog.protocol``: TLS,
the authentication methods and their password rules, a deadline on every step, every
reply bounded and checked: a primary is untrusted input), then speaks the replica side
of the protocol on the same connection, as
python-mysql-replication (``pymysqlreplication/binlogstream.py``) and ``mariadb-binlog
--read-from-remote-server`` (``client/mysqlbinlog.cc``) do:

1. ``SET @master_binlog_checksum = @@global.binlog_checksum``: says we understand
   checksums; without it a server with ``binlog_checksum=CRC32`` refuses to send
   (``sql/sql_repl.cc`` send_format_descriptor_event, "Slave can not handle replication
   events with the checksum...").
2. ``SET @mariadb_slave_capability = 4`` (MARIA_SLAVE_CAPABILITY_GTID): GTID,
   BINLOG_CHECKPOINT and GTID_LIST events are sent as they are in the file, not replaced
   by dummies or BEGIN queries (sql_repl.cc send_event_to_slave).
3. ``SET @master_heartbeat_period = N`` (nanoseconds): while there is nothing to send the
   server sends a HEARTBEAT_LOG_EVENT every N (sql_repl.cc wait_new_events), so a dead
   connection is told from a quiet server by the read timeout.
4. GTID start (MariaDB): ``SET @slave_connect_state``, ``@slave_gtid_strict_mode``,
   ``@slave_gtid_ignore_duplicates``, then COM_BINLOG_DUMP with an empty file name: the
   server picks the file (sql_repl.cc init_binlog_sender, gtid_find_binlog_file) and
   skips the event groups before the position.
5. COM_REGISTER_SLAVE (server id, empty host/user/password: nothing secret is sent),
   then pc.COM_BINLOG_DUMP: position u32, flags u16 (pc.BINLOG_DUMP_NON_BLOCK = 1: end of the
   stream at the end of the last binlog instead of waiting; BINLOG_SEND_ANNOTATE_ROWS_EVENT
   = 2: without it the server leaves ANNOTATE_ROWS out, a hole in the file), server id
   u32, file name (https://mariadb.com/kb/en/com_binlog_dump/).

Each event then comes in a packet of its own: 0x00 and the event; an ERR packet ends the
stream with the server's error; in non-blocking mode an EOF packet (0xFE) ends it at the
end of the binlog.

Semi-sync (``ServerOptions.semi_sync``, as sql/semisync_slave.cc does it): the client checks
that the server knows ``rpl_semi_sync_master_enabled`` and sets ``@rpl_semi_sync_slave = 1``
before the dump; the server then puts a 2-byte header before every event (0xEF, and a
flag whose bit 0x01 asks for an acknowledgement, on the last event of a transaction a
commit waits for; sql_repl.cc reset_transmit_packet, semisync_master.cc
update_sync_header).  The acknowledgement, sent once the event is safe with us
(``ack()``), is a packet of its own with sequence number 0: 0xEF, the position after the
event u64 and the binlog name (Repl_semi_sync_slave::slave_reply).  After sending a
flagged event the server restarts its sequence numbers at 1 (semisync_master.cc
flush_net: "the slave_reply's are interleaved with data from the master"), so the
client does too.  Without ``semi_sync`` the server neither adds the header nor waits for
us (tests/binlog/sources/test_semi_sync.py checks both).

Before the first event of every file the server sends a fake ROTATE (flags LOG_EVENT_ARTIFICIAL_F, timestamp and
log_pos 0) naming the file and position, then the file's FORMAT_DESCRIPTION: the real one
when the dump starts at 4 (with LOG_EVENT_BINLOG_IN_USE_F cleared), else a copy with
log_pos and created 0 that is not at any position of the file (sql_repl.cc
fake_rotate_event, send_format_descriptor_event).  ``DumpTracker`` (sans-IO) tells
these apart from the events of the file and gives each file event its file and offset.
"""
from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..constants import (
    BINLOG_MAGIC,
    CHECKSUM_CRC32,
    CHECKSUM_LEN,
    HEADER_LEN,
    LOG_EVENT_ARTIFICIAL_F,
    MAX_EVENT_SIZE,
    EventType,
)
from ..errors import (
    ChecksumMismatchError,
    GtidPositionError,
    MalformedEventError,
    PurgedLogError,
    ServerAccessError,
    ServerConnectionError,
    ServerError,
    ServerPositionError,
    ServerProtocolError,
    UsageError,
)
from ..gtids import is_mysql_set
from ..header import EventHeader, event_crc, parse_header
from ..inert import inert
from ..protocol import client_side as m, constants as pc
from ..protocol.packets import frame
from ..stream import verify_crc
from ..user_values import dsn_address, parse_dsn
from .base import Binlog, BinlogSource, Heartbeat, Position
from .progress import Progress
from .wire import MovingDeadline, WireConnection

HEARTBEAT_TYPES = frozenset({EventType.HEARTBEAT_LOG_EVENT, EventType.HEARTBEAT_LOG_EVENT_V2})

# A binlog name as the server writes it (log_basename + "." + digits): a plain file name,
# never a path, whatever the server sends.
_BINLOG_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}\.[0-9]{1,10}")
# A MariaDB GTID position as the user gives it: it goes into a SET statement.
_GTID_LIST = re.compile(r"[0-9]{1,10}-[0-9]{1,10}-[0-9]{1,20}(,[0-9]{1,10}-[0-9]{1,10}-[0-9]{1,20})*")


def check_binlog_name(name: str, *, what: str = "binlog file name") -> str:
    if not _BINLOG_NAME.fullmatch(name):
        raise MalformedEventError(f"the server sent {what} {name!r}, not a plain binlog file "
                                  f"name (letters, digits, . _ - and a numeric extension)")
    return name


@dataclass(frozen=True)
class ServerOptions:
    dsn: str
    server_id: int
    heartbeat: float = 5.0          # seconds between heartbeats while the server is idle
    connect_timeout: float = 10.0
    semi_sync: bool = False         # register as a semi-sync replica and acknowledge
    # A one-shot reader (server id 0, never registered), as mariadb-binlog
    # --read-from-remote-server reads without --stop-never: the server kills the dump
    # threads of any other replica with the id a dump asks with, except for id 0
    # (sql/sql_parse.cc COM_BINLOG_DUMP, kill_zombie_dump_threads), so a reader that
    # must change nothing on the server uses 0 and stops at the end of the binlog.
    one_shot: bool = False

    def __post_init__(self):
        if self.one_shot:
            if self.server_id != 0 or self.semi_sync:
                raise UsageError("a one-shot reader has server id 0 and no semi-sync")
        elif self.server_id == 0:
            raise UsageError("--server-id 0 is refused: the server treats a replica with id 0 "
                             "as a one-shot reader (it ends the dump at the end of the binlog) "
                             "and replicas must have an id of their own; pick a number no "
                             "other server or replica of this server uses (SHOW SLAVE HOSTS)")
        if not (self.one_shot or 1 <= self.server_id <= 0xFFFFFFFF):
            raise UsageError(f"--server-id must be 1..4294967295, not {self.server_id}")
        if not 0 < self.heartbeat <= 4294967:
            raise UsageError("the heartbeat period must be 0 < S <= 4294967 seconds")

    @property
    def read_timeout(self) -> float:
        """Seconds without any packet (heartbeats included) before the connection
        counts as lost."""
        return self.heartbeat * 2 + 5


@dataclass(slots=True)
class ServerEvent:
    """One event as the server sent it.  ``in_file``: the event is in ``file`` at
    ``offset`` (False for a fake ROTATE, a resent FORMAT_DESCRIPTION, a heartbeat and
    any other artificial event; their ``offset`` is where the stream stands)."""
    file: str
    offset: int
    data: bytes | memoryview        # a view of a large event's packets (read_large)
    header: EventHeader
    in_file: bool
    need_ack: bool = False          # semi-sync: the server waits for ack(file, end)

    @property
    def end(self) -> int:
        return self.offset + len(self.data) if self.in_file else self.offset


class DumpTracker:
    """Sans-IO: the file and offset of each event of a dump, and what is in the file.

    Starts at (``file``, ``position``) as asked; the fake ROTATE the server sends first
    and before every further file says where the stream really is."""

    def __init__(self, file: str = "", position: int = 4, checksum: bool = False):
        self.file = file
        self.position = position
        self.checksum = checksum        # the algorithm of the file being sent

    def take(self, data: bytes | memoryview) -> ServerEvent:
        header = _header(data, self.file, self.position)
        code = header.type_code
        artificial = bool(header.flags & LOG_EVENT_ARTIFICIAL_F)
        if code == EventType.ROTATE_EVENT and (artificial or header.log_pos == 0):
            self.file, self.position = self._fake_rotate(data, header)
            return ServerEvent(self.file, self.position, data, header, False)
        if code == EventType.FORMAT_DESCRIPTION_EVENT:
            self.checksum = _fde_checksum(data, self.file, self.position)
            if header.log_pos == 0:     # the resent copy when the dump starts past 4
                return ServerEvent(self.file, self.position, data, header, False)
        elif code in HEARTBEAT_TYPES or artificial:
            return ServerEvent(self.file, self.position, data, header, False)
        if not self.file:
            raise MalformedEventError("the server sent an event before naming its binlog file "
                                      "(no fake ROTATE first)", event_type=header.type_name)
        offset = self.position
        end = offset + len(data)
        header.offset = offset
        if header.log_pos and header.log_pos != end & 0xFFFFFFFF:
            raise MalformedEventError(
                f"the event's log_pos {header.log_pos} is not where it ends in the file "
                f"({end}): the server left events out of the stream", source=self.file,
                event_offset=offset, event_type=header.type_name,
                hint="the dump session must not skip events (BINLOG_SEND_ANNOTATE_ROWS_EVENT, "
                     "no @@skip_replication)")
        self.position = end
        return ServerEvent(self.file, offset, data, header, True)

    def _fake_rotate(self, data: bytes | memoryview, header: EventHeader) -> tuple[str, int]:
        """ROTATE body: position u64, then the file name to the end (before the
        checksum) (sql/log_event.h Rotate_log_event)."""
        end = len(data) - (CHECKSUM_LEN if self.checksum else 0)
        if end < HEADER_LEN + 8:
            raise MalformedEventError(f"fake ROTATE of {len(data)} bytes is too short",
                                      source=self.file, event_type="ROTATE_EVENT")
        if self.checksum:
            _check_crc(data, self.file, header)
        position = int.from_bytes(data[HEADER_LEN:HEADER_LEN + 8], "little")
        name = bytes(data[HEADER_LEN + 8:end]).decode("ascii", "replace")
        return check_binlog_name(name), position


def verify_event(event: ServerEvent) -> None:
    """ChecksumMismatchError, naming the file, offset and event type, when the event's
    CRC32 footer does not match its bytes."""
    try:
        verify_crc(event.data, event.header)
    except ChecksumMismatchError as exc:
        raise exc.add_context(source=event.file, event_type=event.header.type_name) from None


def _after(packet: bytes | bytearray, lead: int) -> bytes | memoryview:
    """The event in a dump packet, after its ``lead`` marker bytes: a view of a payload of
    several packets (a large event is not copied again), else bytes."""
    if isinstance(packet, bytearray):
        return memoryview(packet)[lead:]
    return packet[lead:]


def _header(data: bytes | memoryview, file: str, position: int) -> EventHeader:
    if len(data) < HEADER_LEN:
        raise MalformedEventError(f"the server sent an event of {len(data)} bytes, shorter "
                                  f"than a header", source=file or None, event_offset=position)
    header = parse_header(data, 0, position)
    if header.event_size != len(data):
        raise MalformedEventError(f"the event says it has {header.event_size} bytes, its packet "
                                  f"has {len(data)}", source=file or None, event_offset=position,
                                  event_type=header.type_name)
    return header


def _fde_checksum(data: bytes | memoryview, file: str, position: int) -> bool:
    """The checksum_alg byte is the 5th byte from the end of a checksum-aware server's
    FORMAT_DESCRIPTION (sql/log_event.cc get_checksum_alg)."""
    if len(data) < HEADER_LEN + 57 + 5:
        raise MalformedEventError(f"FORMAT_DESCRIPTION of {len(data)} bytes is too short",
                                  source=file or None, event_offset=position,
                                  event_type="FORMAT_DESCRIPTION_EVENT")
    return data[-5] == CHECKSUM_CRC32


def _check_crc(data: bytes | memoryview, file: str, header: EventHeader) -> None:
    stored = int.from_bytes(data[-4:], "little")
    if event_crc(data) != stored:
        raise MalformedEventError(f"the CRC32 of the server's artificial {header.type_name} "
                                  f"does not match its bytes",
                                  source=file or None, event_type=header.type_name)


class ReplicationClient:
    """One replication connection: ``start()`` a dump, then iterate ``events()``.

    The connection is our own (``sources.wire``): every step has a deadline, every
    reply is bounded and checked, the password goes only where ``protocol.auth`` allows."""

    def __init__(self, options: ServerOptions):
        self.options = options
        self.kw = parse_dsn(options.dsn)
        self.kw.pop("database", None)
        self.where = dsn_address(self.kw)
        self.conn: WireConnection | None = None
        self.version = ""
        self.checksum = False
        self.tracker: DumpTracker | None = None
        self.blocking = True
        self.need_ack = False           # the last event read asks for a semi-sync ack
        self._idle_since = 0.0          # non-blocking dump: when the last file event came

    # -- connection -------------------------------------------------------------------
    def connect(self) -> None:
        self.close()
        self.conn = WireConnection(self.kw, on_error=self._typed)
        try:
            self.conn.open()
        except ServerError:
            self.close()
            raise

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()

    def _connection(self) -> WireConnection:
        if self.conn is None:
            raise ServerConnectionError(f"not connected to {self.where}")
        return self.conn

    def _tracker(self) -> DumpTracker:
        """Where the dump is (set when it starts)."""
        if self.tracker is None:
            raise ServerConnectionError(f"no binlog dump started on {self.where}")
        return self.tracker

    def query(self, sql: str, *, columns: int) -> list[tuple[str | None, ...]]:
        """A query's rows as text (NULL as None); its shape is checked."""
        rows = self._connection().query(sql, columns=columns)
        return [tuple(None if v is None else v.decode("utf-8", "replace") for v in row) for row in rows]

    def execute(self, sql: str) -> None:
        self._connection().execute(sql)

    # -- dump -------------------------------------------------------------------------
    def start(self, *, file: str = "", position: int = 4, gtid: str | None = None,
              blocking: bool = True, strict: bool = False) -> None:
        """Connect and ask for the binlog from ``file``:``position`` ("" = the first
        binlog), or from the MariaDB GTID position ``gtid`` (a domain-server-seq list).
        A GTID dump leaves out the event groups before the position, so event offsets
        would not be file offsets: it is only used to learn the file the server starts
        at (``gtid_start_file``), then the file is read from its start."""
        if file:
            check_binlog_name(file, what="start file")
        self.connect()
        self._prepare(gtid, strict)
        if self.options.one_shot:
            blocking = False            # id 0: the server ends the dump anyway
        else:
            self._register()
        self.blocking = blocking
        flags = pc.BINLOG_SEND_ANNOTATE_ROWS_EVENT | (0 if blocking else pc.BINLOG_DUMP_NON_BLOCK)
        self._read_clock()
        if gtid is not None:
            file, position = "", 4
        conn = self._connection()
        conn.send_command(pc.COM_BINLOG_DUMP, m.binlog_dump(position, flags, self.options.server_id, file),
                          time.monotonic() + conn.read_timeout)
        conn.reader.limit = MAX_EVENT_SIZE + 3
        conn.reader.bound = self._event_bound
        conn.reader.bound_bytes = 3 + HEADER_LEN
        self.tracker = DumpTracker(file, position, self.checksum)
        self._idle_since = time.monotonic()

    def _prepare(self, gtid: str | None, strict: bool) -> None:
        version, log_bin, alg = self._one_row(
            "SELECT VERSION(), @@global.log_bin, @@global.binlog_checksum", 3)
        self.version = version or ""
        if log_bin not in ("0", "1") or alg is None or alg.upper() not in ("NONE", "CRC32"):
            raise ServerProtocolError(f"preparing the dump: the server says log_bin = "
                                      f"{inert(str(log_bin), limit=40)!r}, binlog_checksum = "
                                      f"{inert(str(alg), limit=40)!r}", step="preparing the dump")
        if log_bin == "0":
            raise ServerError(f"binary logging is off on {self.where}",
                              hint="start the server with log_bin (and binlog_format=ROW)")
        self.execute("SET @master_binlog_checksum = @@global.binlog_checksum")
        self.checksum = alg.upper() == "CRC32"
        self.execute(f"SET @mariadb_slave_capability = {pc.MARIA_SLAVE_CAPABILITY_GTID}")
        self.execute(f"SET @master_heartbeat_period = {int(self.options.heartbeat * 1e9)}")
        if self.options.semi_sync:
            self._ask_semi_sync()
        if gtid is not None:
            # MySQL's COM_BINLOG_DUMP_GTID (an encoded GTID set, sql/rpl_binlog_sender.cc)
            # is not built: no MySQL server was at hand to test it against.  With
            # --start-file the server sends that file and the reader selects by the set.
            if is_mysql_set(gtid) or "mariadb" not in self.version.lower():
                raise UsageError("a live start at a GTID needs a MariaDB server and a MariaDB "
                                 "GTID list (MySQL's COM_BINLOG_DUMP_GTID is not supported)",
                                 hint="give --start-file too: the server sends that file and "
                                      "the reader skips the transactions --start-gtid holds")
            if not _GTID_LIST.fullmatch(gtid):
                raise UsageError(f"bad MariaDB GTID position {gtid!r}: expected D-S-N[,D-S-N...]")
            self.execute(f"SET @slave_connect_state = '{gtid}'")
            self.execute(f"SET @slave_gtid_strict_mode = {1 if strict else 0}")
            self.execute("SET @slave_gtid_ignore_duplicates = 0")

    def _one_row(self, sql: str, columns: int) -> tuple[str | None, ...]:
        rows = self.query(sql, columns=columns)
        if len(rows) != 1:
            raise ServerProtocolError(f"query {sql!r}: {len(rows)} rows, expected one",
                                      step="preparing the dump")
        return rows[0]

    def _ask_semi_sync(self) -> None:
        """Repl_semi_sync_slave::request_transmit: a server without the variable has no
        semi-sync (MariaDB's replica falls back to asynchronous; asked for it, we stop)."""
        if not self.query("SHOW VARIABLES LIKE 'rpl_semi_sync_master_enabled'", columns=2):
            raise ServerError(f"{self.where} has no semi-synchronous replication "
                              f"(no rpl_semi_sync_master_enabled)",
                              hint="leave out --semi-sync, or install the semisync_master "
                                   "plugin on the source")
        self.execute("SET @rpl_semi_sync_slave = 1")

    # (server clock, our monotonic time of its answer, that query's round trip): _read_clock
    clock_origin: tuple[float, float, float] | None = None

    def _read_clock(self) -> None:
        """The server's clock, @@timestamp (epoch seconds with microseconds), read as a
        MariaDB replica reads its primary's (sql/slave.cc get_master_version_and_clock):
        heartbeats carry no time of their own (sql_repl.cc send_heartbeat_event sets
        'when' to 0), so a heartbeat's time is this reading plus the time elapsed since."""
        asked = time.monotonic()
        (value,) = self._one_row("SELECT @@timestamp", 1)
        answered = time.monotonic()
        self.clock_origin = (server_epoch(value, self.where), answered, answered - asked)

    def server_clock(self) -> float | None:
        """The server's clock now (epoch seconds), as a lower bound: its reading at connect
        plus our monotonic time since the answer, less that query's round trip (the
        allowance for a packet's way from the server to us).  None before a connect."""
        if self.clock_origin is None:
            return None
        clock, answered, round_trip = self.clock_origin
        return clock + (time.monotonic() - answered) - round_trip

    def ack(self, file: str, position: int) -> None:
        """Semi-sync acknowledgement: the events of ``file`` up to ``position`` are safe
        with us (Repl_semi_sync_slave::slave_reply; sequence number 0, net_clear)."""
        conn = self._connection()
        conn.send_raw(frame(m.semi_sync_ack(file, position), 0)[0], time.monotonic() + conn.read_timeout)

    def _register(self) -> None:
        """COM_REGISTER_SLAVE (``client_side.register_slave``: nothing secret is sent)."""
        conn = self._connection()
        deadline = time.monotonic() + conn.read_timeout
        conn.send_command(pc.COM_REGISTER_SLAVE, m.register_slave(self.options.server_id), deadline)
        conn.read_ok(deadline, "registering as a replica")

    def caught_up(self) -> bool:
        """Nothing more received yet: the next event would be waited for."""
        return self.conn is None or self.conn.reader.buffered == 0

    def _event_bound(self, first: bytes) -> int | None:
        """The longest an event packet may be, from its first bytes: the event's own
        length (header bytes 9..13) and the marker bytes before it."""
        lead = 3 if self.options.semi_sync else 1
        if first[:1] != b"\x00":
            return 64 * 1024                # ERR, EOF: short
        if len(first) < lead + HEADER_LEN:
            return None                     # a short packet: the tracker rejects it
        return lead + int.from_bytes(first[lead + 9:lead + 13], "little")

    def events(self) -> Iterator[ServerEvent]:
        """The events of the dump; ends at the end of the binlog in non-blocking mode.
        ServerError (or a subclass) when the server sends an error or the connection
        is lost."""
        while True:
            data = self._read_event()
            if data is None:
                if self.blocking:
                    # A blocking dump ends only when the server's dump thread is killed,
                    # e.g. at shutdown (sql_repl.cc mysql_binlog_send ends with an EOF).
                    self.close()
                    raise ServerConnectionError(f"source {self.where} ended the dump (shutdown "
                                                f"or KILL of the dump thread)")
                return
            event = self._tracker().take(data)
            event.need_ack = self.need_ack
            if not self.blocking:
                self._check_progress(event)
            yield event

    def _check_progress(self, event: ServerEvent) -> None:
        """A non-blocking dump ends at the end of the binlog: a server that keeps it open
        with heartbeats and artificial events only is stalling us."""
        now = time.monotonic()
        if event.in_file:
            self._idle_since = now
        elif now - self._idle_since > self.options.read_timeout:
            self.close()
            raise ServerProtocolError(f"source {self.where} sent no binlog event for "
                                      f"{self.options.read_timeout:g} s of a dump that should "
                                      f"end at the end of its binlog", step="reading the binlog")

    def _read_event(self) -> bytes | memoryview | None:
        packet = self._read_packet()
        kind = packet[0] if packet else None
        if kind == pc.OK:
            if self.options.semi_sync:
                return self._semi_sync_payload(packet)
            return _after(packet, 1)
        if m.is_eof(packet):
            return None                 # EOF: the end of the binlog (non-blocking dump)
        if kind == pc.ERR:
            raise self._server_error(packet)
        raise MalformedEventError(f"unexpected packet from the server: starts with "
                                  f"{packet[:4].hex(' ')} ({len(packet)} bytes)",
                                  source=self._tracker().file or None,
                                  event_offset=self._tracker().position)

    def _semi_sync_payload(self, packet: bytes | bytearray) -> bytes | memoryview:
        """The event after the semi-sync header (Repl_semi_sync_slave::slave_read_sync_header)."""
        if len(packet) < 3 or packet[1] != pc.SEMI_SYNC_MAGIC:
            raise MalformedEventError(f"semi-sync packet without its magic number 0xEF "
                                      f"({len(packet)} bytes)", source=self._tracker().file or None,
                                      event_offset=self._tracker().position)
        self.need_ack = bool(packet[2] & pc.SEMI_SYNC_NEED_ACK)
        if self.need_ack:
            self._connection().reader.reset(1)     # semisync_master.cc flush_net
        return _after(packet, 3)

    def _read_packet(self) -> bytes | bytearray:
        """One protocol payload of the dump, joined from 16 MiB packets and bounded by
        its event's own length.  The server sends a heartbeat after ``heartbeat`` seconds
        with nothing to send, so no packet within twice that plus 5 s is a lost
        connection; the bytes of a large one move that deadline on as they arrive
        (``wire.MovingDeadline``): a server that stalls inside it is cut within the same time,
        whatever length it announced."""
        conn = self._connection()
        try:
            return conn.read_large(MovingDeadline(self.options.read_timeout), "reading the binlog")
        except ServerError:
            self.close()
            raise

    # -- errors -----------------------------------------------------------------------
    # -- errors -----------------------------------------------------------------------
    def _server_error(self, packet: bytes | bytearray) -> ServerError:
        return self._connection().server_error(packet, "reading the binlog")

    def _typed(self, code: int | None, text: str, doing: str) -> ServerError:
        """The typed error of a server's refusal (``text`` already inert): also the wire
        connection's handler of ERR packets."""
        tracker = self.tracker
        where = tracker.file if tracker is not None and tracker.file else None
        pos = tracker.position if tracker is not None and where else None
        message = f"source {self.where}, {doing}: {text}" + (f" (error {code})" if code else "")
        if code in pc.ER_ACCESS_DENIED:
            # Once logged in, "access denied" (1045 to COM_REGISTER_SLAVE) is a privilege.
            hint = ("check the user and password of the DSN"
                    if code in (pc.ER_ACCESS_DENIED_ERROR, pc.ER_ACCESS_DENIED_NO_PASSWORD_ERROR)
                    and doing == "connecting" else
                    "the user needs REPLICATION SLAVE (and, to list binlogs, BINLOG MONITOR or "
                    "REPLICATION CLIENT): GRANT REPLICATION SLAVE ON *.* TO ...")
            return ServerAccessError(message, code=code, hint=hint)
        if code in pc.ER_GTID_ERRORS or (code == pc.ER_MASTER_FATAL_ERROR_READING_BINLOG and "GTID" in text):
            return GtidPositionError(message, code=code, source=where, event_offset=pos,
                                     hint="the GTID is not in the server's binlogs (purged, or "
                                          "from another server): start at a later GTID or at "
                                          "a file the server has (SHOW BINARY LOGS)")
        if code == pc.ER_MASTER_FATAL_ERROR_READING_BINLOG:
            lowered = text.lower()
            if "could not find first log" in lowered or "purged" in lowered:
                return PurgedLogError(message, code=code, source=where, event_offset=pos,
                                      hint="the binlog asked for is no longer on the server "
                                           "(PURGE BINARY LOGS, expire_logs_days): start at a "
                                           "file it still has (SHOW BINARY LOGS), and take "
                                           "what is missing from a backup")
            return ServerPositionError(message, code=code, source=where, event_offset=pos,
                                       hint="the position is not an event boundary of a file "
                                            "the server has (SHOW BINLOG EVENTS lists them)")
        if code is None or code in pc.CONNECTION_ERRORS:
            return ServerConnectionError(message, code=code)
        return ServerError(message, code=code)


class ServerSource(BinlogSource):
    """A live server as a source of the reader (``--from DSN``): its binlogs, one
    ``ServerBinlog`` per file, from ``start_file``:``start_position`` ("" = the server's
    first binlog) or from the file holding ``start_gtid`` (the reader's GTID filter then
    skips what precedes it).

    ``blocking``: follow the server after its last event (else stop there).  A lost
    connection (a network failure, a server restart) is retried ``retries`` times with
    back-off, resuming right after the last event handed on: the reader sees one
    unbroken stream, no event twice, none lost.  Any event received resets the count;
    then ServerConnectionError with a hint.  ``on_idle()`` runs at each heartbeat (the
    server had nothing to send for ``options.heartbeat`` seconds): apply commits there."""

    def __init__(self, options: ServerOptions, *, start_file: str = "", start_position: int = 4,
                 start_gtid: str | None = None, blocking: bool = False, retries: int = 5,
                 on_retry: Callable[[str], None] | None = None,
                 on_idle: Callable[[], None] | None = None, progress: Progress | None = None):
        self.options = options
        self.start_file = start_file
        self.start_position = max(start_position, 4)
        self.start_gtid = start_gtid
        self.blocking = blocking
        self.retries = retries
        self.on_retry = on_retry
        self.on_idle = on_idle          # called at each heartbeat: the server has nothing new
        self.progress = progress
        self.client = ReplicationClient(options)
        self.position: Position | None = None     # after the last event handed on
        self._events: Iterator[ServerEvent] | None = None
        self._pending: ServerEvent | None = None
        self._fresh = False
        self._heartbeats = False        # next_event gives heartbeats out (report_heartbeats)

    def report_heartbeats(self) -> None:
        self._heartbeats = True

    def binlogs(self) -> Iterator[Binlog]:
        if self.start_gtid is not None:
            self.start_file, self.start_position = gtid_start_file(self.client, self.start_gtid), 4
        try:
            self._start(self.start_file, self.start_position, fresh=True)
        except ServerConnectionError as exc:
            self._retry(exc, 0)
        try:
            first = self._next_file_event()
            while first is not None:
                binlog = ServerBinlog(self, first)
                yield binlog
                while not binlog.done:          # the reader stopped early: skip the rest
                    binlog.read(0)
                first, self._pending = self._pending, None
        finally:
            self.client.close()
            if self.progress is not None:
                self.progress.close()

    def _next_file_event(self) -> ServerEvent | None:
        """The next event that is not a heartbeat: the first of a binlog."""
        while True:
            event = self.next_event()
            if event is None or event.in_file or event.header.type_code not in HEARTBEAT_TYPES:
                return event

    def heartbeat_of(self, event: ServerEvent) -> Heartbeat:
        """What a heartbeat says: the file it names and the position of the server's dump
        (header log_pos; 0 when it is beyond 4 GiB and the server put it in an 8-byte
        sub-header instead, sql_repl.cc send_heartbeat_event: left unknown here), and
        the server's clock now (``ReplicationClient.server_clock``)."""
        data, header = event.data, event.header
        checksum = self.client._tracker().checksum      # the file's, as the server sends it
        end = len(data) - (CHECKSUM_LEN if checksum else 0)
        if end < HEADER_LEN:
            raise MalformedEventError(f"heartbeat of {len(data)} bytes is too short",
                                      source=event.file or None, event_type=header.type_name)
        if checksum:
            _check_crc(data, event.file, header)
        name = bytes(data[HEADER_LEN:end]).decode("ascii", "replace")
        position = header.log_pos or None
        if header.type_code != EventType.HEARTBEAT_LOG_EVENT:
            position, name = None, ""       # MySQL's v2 body (TLVs) is not read: no claim
        return Heartbeat(name, position, self.client.server_clock())

    def _start(self, file: str, position: int, *, fresh: bool) -> None:
        self.client.start(file=file, position=position, blocking=self.blocking)
        self._events = self.client.events()
        self._fresh = fresh

    def next_event(self) -> ServerEvent | None:
        """The next event of a file (None at the end of a non-blocking dump).  The
        resent FORMAT_DESCRIPTION of a dump starting inside a file comes out too, but
        only for the first connection: after a reconnect the reader already has it; and,
        once ``report_heartbeats`` was called, each heartbeat (``in_file`` False)."""
        failures = 0
        while True:
            if self._events is None:
                raise ServerConnectionError(f"no binlog dump started on {self.client.where}")
            try:
                event = next(self._events)
            except StopIteration:
                return None
            except ServerConnectionError as exc:
                failures = self._retry(exc, failures)
                continue
            failures = 0
            if event.in_file:
                self._fresh = False
                self.position = Position(event.file, event.end)
                if self.progress is not None:
                    self.progress.event(event.file, event.end, len(event.data),
                                        event.header.timestamp)
                return event
            if self._fresh and event.header.type_code == EventType.FORMAT_DESCRIPTION_EVENT:
                self._fresh = False
                return event
            if event.header.type_code in HEARTBEAT_TYPES:
                if self.progress is not None:
                    self.progress.idle()
                if self.on_idle is not None:
                    self.on_idle()
                if self._heartbeats:
                    return event

    def _retry(self, exc: ServerConnectionError, failures: int) -> int:
        self.client.close()
        failures += 1
        if failures > self.retries:
            exc.hint = (f"gave up after {self.retries} retries" +
                        (f"; the last event read ends at {self.position}" if self.position else ""))
            raise exc
        delay = min(2 ** (failures - 1), 30)
        if self.on_retry is not None:
            self.on_retry(f"{exc}; reconnecting in {delay}s (retry {failures} of {self.retries})")
        time.sleep(delay)
        where = self.position or Position(self.start_file, self.start_position)
        try:
            self._start(where.name, where.offset, fresh=self.position is None)
        except ServerConnectionError as again:
            return self._retry(again, failures)
        return failures


class ServerBinlog(Binlog):
    """One binlog file of a server, as its events arrive: the magic, the
    FORMAT_DESCRIPTION, then the events (from ``start`` when the dump began inside the
    file).  ``read`` blocks while the server has nothing to send and returns b"" when
    the server moved on to the next file or the dump ended."""

    def __init__(self, source: ServerSource, first: ServerEvent):
        self.source = source
        self.name = first.file
        self.last = False           # a server may always write another binlog
        if first.header.type_code != EventType.FORMAT_DESCRIPTION_EVENT:
            raise MalformedEventError(f"the server's dump of {first.file} does not begin with "
                                      f"its FORMAT_DESCRIPTION", source=first.file,
                                      event_offset=first.offset, event_type=first.header.type_name)
        # The resent copy stands in for the file's own at offset 4.
        self.start = None if first.in_file else first.offset
        self._head: bytes | None = BINLOG_MAGIC + first.data
        self.done = False
        self._beat: Heartbeat | None = None

    def read(self, size: int) -> bytes:
        if self._head is not None:
            data, self._head = self._head, None
            return data
        if self.done:
            return b""
        event = self.source.next_event()
        if event is not None and not event.in_file and event.header.type_code in HEARTBEAT_TYPES:
            self._beat = self.source.heartbeat_of(event)
            return b""
        if event is None or event.file != self.name:
            self.source._pending = event
            self.done = True
            return b""
        body = event.data
        return body if isinstance(body, bytes) else bytes(body)     # (the stream copies it anyway)

    def heartbeat(self) -> Heartbeat | None:
        beat, self._beat = self._beat, None
        return beat

    def seek(self, offset: int) -> None:
        if offset != self.start:
            super().seek(offset)


def gtid_start_file(client: ReplicationClient, gtid: str) -> str:
    """The binlog a MariaDB server starts a GTID dump at (the file whose GTID_LIST
    precedes the position, sql_repl.cc gtid_find_binlog_file): the name its first fake
    ROTATE gives.  Errors (an unknown or purged GTID) are the server's."""
    client.start(gtid=gtid, blocking=False, strict=True)
    try:
        for event in client.events():
            return event.file
    finally:
        client.close()
    raise ServerPositionError(f"the server sent nothing for the GTID position {gtid}")


def server_epoch(value, where: str) -> float:
    """A server's @@timestamp answer as epoch seconds; ServerError for anything else (a
    hostile or broken server's answer is not taken as a clock)."""
    try:
        seconds = float(str(value))
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < 1 << 40:
        raise ServerProtocolError(f"{where} answered SELECT @@timestamp with "
                                  f"{inert(str(value), limit=40)!r}, not a time in epoch seconds",
                                  step="reading the server's clock")
    return seconds
