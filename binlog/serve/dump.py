"""The event stream of one COM_BINLOG_DUMP (sql/sql_repl.cc mysql_binlog_send): a fake
ROTATE naming the file and position, the file's FORMAT_DESCRIPTION (a copy with log_pos
0 when the dump starts inside the file), then its events as they are, or as the client's
capability needs them (``compat``); at the end of a file that has a successor, the next
file the same way; at the end of the last, EOF in a non-blocking dump, else waiting for
more with a HEARTBEAT every @master_heartbeat_period.

The events a client gets as they are go out without Python per event: the file is read
a window at a time and the compiled framer (binlog/_scan.c frame_packets) makes the
packets of every event up to the first the dump must look at (compat's, the GTID
filter's), sent in one write.  An event larger than the window is sent in pieces as it
is read, so a 1 GiB event never sits in memory whole."""
from __future__ import annotations

import os
import re
import time
from typing import Any, BinaryIO, Protocol

from .. import scan
from ..constants import HEADER_LEN, EventType
from ..errors import MalformedEventError, ServerProtocolError
from ..inert import inert
from ..protocol import constants as pc, server_side as s
from ..protocol.packets import MAX_PACKET
from ..sources.served import MAX_EVENT
from . import compat, events


class Client(Protocol):
    """What a dump needs of its session (``session.Session``)."""
    logs: Any
    limits: Any
    info: Any
    seq: int

    def state(self) -> Any: ...

    def send(self, payload: bytes) -> None: ...

    def send_event(self, event: bytes) -> None: ...

    def send_packets(self, packets: bytes, seq: int) -> None: ...

    def _fail(self, code: int, message: str) -> None: ...



#: bytes of a served binlog read at once (and the packets made of them, about as many)
WINDOW = 1 << 20


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
        # type codes sent as they are (compat.passing; a GTID filter looks at every GTID)
        table = bytearray(compat.passing(capability, annotate=annotate))
        if want is not None:
            table[EventType.GTID_EVENT] = 0
        self.passing = bytes(table)
        # the file being sent, kept open, and a window of it read into one buffer reused
        # for every read: (file, its offset, bytes in the buffer)
        self._file: tuple[str, BinaryIO] | None = None
        self._buffer = bytearray(WINDOW)
        self._window: tuple[str, int, int] | None = None

    def run(self) -> None:
        try:
            self._run()
        finally:
            if self._file is not None:
                self._file[1].close()

    def _run(self) -> None:
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
        while self.position < end:
            if session.info.stop.is_set():
                raise ClientGone("killed")
            if not self._send_run(end):
                self._send_one(end, checksum)
            session.info.position = self.position

    def _read(self, end: int) -> tuple[bytearray, int, int]:
        """The window of the file from the dump's position (up to WINDOW bytes, not past
        ``end``): the buffer, where the position is in it and where its bytes end; the
        window read last when it still holds the event at the position."""
        buf, window = self._buffer, self._window
        if window is not None and window[0] == self.name and window[1] <= self.position:
            at, held = self.position - window[1], window[2]
            if held - at >= HEADER_LEN and int.from_bytes(buf[at + 9:at + 13], "little") <= held - at:
                return buf, at, held
        if self._file is None or self._file[0] != self.name:
            if self._file is not None:
                self._file[1].close()
            self._file = (self.name, self.logs.open(self.name))
        with memoryview(buf) as view:
            held = os.preadv(self._file[1].fileno(), [view[:min(end - self.position, WINDOW)]], self.position)
        self._window = (self.name, self.position, held)
        return buf, 0, held

    def _send_run(self, end: int) -> bool:
        """The events from the position that the client gets as they are, framed and
        sent at once (scan.frame_packets); False when the next is not one of them (or is
        larger than the window)."""
        if self.skipping:
            return False
        data, at, held = self._read(end)
        got = scan.frame_packets(data, at, held, self.session.seq, self.passing, WINDOW)
        if got is None:
            return False
        packets, taken, seq, _count = got
        self.session.send_packets(packets, seq)
        self.position += taken - at
        return True

    def _send_one(self, end: int, checksum: bool) -> None:
        """The event at the position, through ``_for_client``; one larger than the window
        that the client gets as it is goes out in pieces as it is read."""
        data, at, held = self._read(end)
        size = int.from_bytes(data[at + 9:at + 13], "little") if held - at >= HEADER_LEN else 0
        if not HEADER_LEN <= size <= min(MAX_EVENT, end - self.position):
            raise MalformedEventError(f"the event at {self.position} says it has {size} bytes",
                                      source=self.name, event_offset=self.position)
        if size > held - at and self.passing[data[at + 4]] and not self.skipping:
            self._stream(size)
            return
        if size > held - at:
            event = self.logs.read(self.name, self.position, size)
        else:
            event = bytes(data[at:at + size])
        sent = self._for_client(event, checksum)
        if sent is not None:
            self.session.send_event(sent)
        self.position += size

    def _stream(self, size: int) -> None:
        """An event of ``size`` bytes (more than the window) as its packets, each read
        from the file as it goes out: memory stays a window's, not the event's."""
        session = self.session
        remaining, at, first = size + 1, self.position, True    # the payload: 0x00 + event
        while True:
            length = min(remaining, MAX_PACKET)             # this packet's payload
            prefix = length.to_bytes(3, "little") + bytes([session.seq]) + (b"\x00" if first else b"")
            seq = (session.seq + 1) & 0xFF
            todo = length - first                           # the event's bytes in it
            if not todo:
                session.send_packets(prefix, seq)           # an empty last packet
            while todo:
                piece = self.logs.read(self.name, at, min(todo, WINDOW))
                if not piece:
                    raise MalformedEventError(f"the event at {self.position} ends before its "
                                              f"{size} bytes", source=self.name,
                                              event_offset=self.position)
                session.send_packets(prefix + piece, seq)
                prefix = b""
                at += len(piece)
                todo -= len(piece)
            remaining -= length
            first = False
            if length < MAX_PACKET:
                break
        self.position += size

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
            seen = self.logs.version        # (before looking: a change after it ends the wait)
            if self.logs.size(self.name) > self.position or self._next_name() is not None:
                return
            if self.heartbeat and time.monotonic() - idle_since >= self.heartbeat:
                session.send(b"\x00" + events.heartbeat(self.name, self.position, self.server_id,
                                                        checksum and self.aware))
                idle_since = time.monotonic()
            self.logs.wait_change(seen, session.limits.poll)


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
