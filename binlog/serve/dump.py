"""The event stream of one COM_BINLOG_DUMP (sql/sql_repl.cc mysql_binlog_send): a fake
ROTATE naming the file and position, the file's FORMAT_DESCRIPTION (a copy with log_pos
0 when the dump starts inside the file), then its events as they are, or as the client's
capability needs them (``compat``); at the end of a file that has a successor, the next
file the same way; at the end of the last, EOF in a non-blocking dump, else waiting for
more with a HEARTBEAT every @master_heartbeat_period."""
from __future__ import annotations

import re
import time
from typing import Any, Protocol

from ..constants import HEADER_LEN, EventType
from ..errors import MalformedEventError, ServerProtocolError
from ..inert import inert
from ..protocol import constants as pc, server_side as s
from . import compat, events


class Client(Protocol):
    """What a dump needs of its session (``session.Session``)."""
    logs: Any
    limits: Any
    info: Any

    def state(self) -> Any: ...

    def send(self, payload: bytes) -> None: ...

    def send_event(self, event: bytes) -> None: ...

    def _fail(self, code: int, message: str) -> None: ...



class ClientGone(Exception):
    """The client closed the connection, stopped reading, or was killed: the session ends."""
_GTID = re.compile(r"\s*(\d{1,10})-(\d{1,10})-(\d{1,20})\s*")


class Dump:
    """The event stream of one COM_BINLOG_DUMP."""

    def __init__(self, session: Client, name: str, position: int, *, aware: bool, rotate_crc: bool,
                 capability: int, annotate: bool, want: dict[int, int] | None, blocking: bool,
                 heartbeat: float):
        self.session = session
        self.logs = session.logs
        self.name, self.position = name, position
        self.aware, self.rotate_crc = aware, rotate_crc
        self.capability, self.annotate = capability, annotate
        self.want = want
        self.skipping = False
        self.blocking, self.heartbeat = blocking, heartbeat
        self.server_id = session.state().server_id

    def run(self) -> None:
        session = self.session
        while True:
            checksum = self._start_file()
            if checksum is None:
                return
            while True:
                end = self.logs.size(self.name)
                self._send_events(end, checksum)
                following = self._next_name()
                if following is not None and self.position >= self.logs.size(self.name):
                    self.name, self.position = following, 4
                    break
                if not self.blocking:
                    session.send(s.eof())
                    return
                self._wait(checksum)

    def _start_file(self) -> bool | None:
        """The fake ROTATE and the FORMAT_DESCRIPTION; the file's checksum setting, or
        None when the client cannot take it."""
        session = self.session
        info = self.logs.info(self.name)
        if info.checksum and not self.aware:
            session._fail(pc.ER_MASTER_FATAL_ERROR_READING_BINLOG,
                          "Slave can not handle replication events with the checksum that master "
                          "is configured to log")
            return None
        session.send(b"\x00" + events.fake_rotate(self.name, self.position, self.server_id, self.rotate_crc))
        offset, fde = next(iter(self.logs.events(self.name, 4, self.logs.size(self.name))))
        session.send(b"\x00" + events.format_description_for_client(fde, resent=self.position > 4,
                                                                    checksum=info.checksum))
        if self.position == 4:
            self.position = 4 + len(fde)
        self.rotate_crc = info.checksum
        session.info.file, session.info.position = self.name, self.position
        return info.checksum

    def _send_events(self, end: int, checksum: bool) -> None:
        session = self.session
        for offset, data in self.logs.events(self.name, self.position, end):
            if session.info.stop.is_set():
                raise ClientGone("killed")
            sent = self._for_client(data, checksum)
            if sent is not None:
                session.send_event(sent)
            self.position = offset + len(data)
            session.info.position = self.position

    def _for_client(self, data: bytes, checksum: bool) -> bytes | None:
        """The event as this client gets it, None when it is left out (sql_repl.cc
        send_event_to_slave): event groups before its GTID position, and what its
        capability does not understand (``compat``)."""
        code = data[4]
        if code == EventType.GTID_EVENT and self.want is not None:
            domain = int.from_bytes(data[HEADER_LEN + 8:HEADER_LEN + 12], "little")
            seq = int.from_bytes(data[HEADER_LEN:HEADER_LEN + 8], "little")
            self.skipping = domain in self.want and seq <= self.want[domain]
        if self.skipping and code not in (EventType.ROTATE_EVENT, EventType.FORMAT_DESCRIPTION_EVENT):
            return None
        try:
            return compat.for_client(data, self.capability, annotate=self.annotate, checksum=checksum)
        except compat.CompatError as exc:
            raise MalformedEventError(str(exc), source=self.name, event_offset=self.position) from None

    def _next_name(self) -> str | None:
        names = self.logs.names()
        if self.name in names:
            i = names.index(self.name)
            return names[i + 1] if i + 1 < len(names) else None
        return None

    def _wait(self, checksum: bool) -> None:
        """Until the followed binlog grows, a new one starts, or a heartbeat is due."""
        session = self.session
        idle_since = time.monotonic()
        while True:
            if session.info.stop.is_set():
                raise ClientGone("killed")
            if self.logs.size(self.name) > self.position or self._next_name() is not None:
                return
            if self.heartbeat and time.monotonic() - idle_since >= self.heartbeat:
                session.send(b"\x00" + events.heartbeat(self.name, self.position, self.server_id,
                                                        checksum and self.aware))
                idle_since = time.monotonic()
            session.info.stop.wait(session.limits.poll)


def to_int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


def gtid_position(text: str | None) -> dict[int, int] | None:
    """@slave_connect_state ``D-S-N,...`` as domain -> seq_no; None when not set."""
    if text is None:
        return None
    want: dict[int, int] = {}
    for item in filter(None, text.split(",")):
        match = _GTID.fullmatch(item)
        if match is None:
            raise ServerProtocolError(f"@slave_connect_state {inert(text, limit=100)!r} is not a GTID list",
                                      step="dump request")
        want[int(match.group(1))] = int(match.group(3))
    return want
