"""Common event header (19 bytes) and the FORMAT_DESCRIPTION_EVENT that frames everything else.

Header layout (``sql/log_event.h``, all LE): timestamp u32, type u8, server_id u32,
event_size u32, log_pos u32, flags u16.  With checksums on, an event ends with the CRC32
of all its bytes before it, an FDE's computed with LOG_EVENT_BINLOG_IN_USE_F dropped
(sql/log_event_server.cc Log_event_writer::write_header; the reader drops it too).
``frame_event`` is the one writer of headers and footers (serve's artificial and
replaced events, rewrite, the BINLOG statements of apply); ``event_crc`` the one rule
both the writer and the stream's check use.

FORMAT_DESCRIPTION body (``sql/log_event.cc`` Format_description_log_event ctor):
binlog_version u16, server_version char[50], create_timestamp u32,
common_header_len u8, post_header_len[] one byte per event type, then - when the
server is checksum-aware (MySQL >= 5.6.1, MariaDB >= 5.3) - checksum_alg u8 and
4 bytes of CRC32 (or room for it).
"""
from __future__ import annotations

import re
import struct
import zlib
from dataclasses import dataclass, field

from .constants import (
    CHECKSUM_CRC32,
    CHECKSUM_LEN,
    CHECKSUM_OFF,
    CHECKSUM_UNDEF,
    HEADER_LEN,
    LOG_EVENT_BINLOG_IN_USE_F,
    EventType,
    event_type_name,
)
from .cursor import Cursor
from .errors import MalformedEventError

#: timestamp, type, server_id, event_size, log_pos, flags
HEADER = struct.Struct("<IBIIIH")
#: where a field is in the header, for an event edited in place
TYPE_AT, SIZE_AT, LOG_POS_AT, FLAGS_AT = 4, 9, 13, 17
_FDE = EventType.FORMAT_DESCRIPTION_EVENT


@dataclass(slots=True)
class EventHeader:
    timestamp: int
    type_code: int
    server_id: int
    event_size: int
    log_pos: int
    flags: int
    offset: int = 0          # where the event starts in its source

    @property
    def type_name(self) -> str:
        return event_type_name(self.type_code)

    @property
    def end(self) -> int:
        return self.offset + self.event_size


def parse_header(data: bytes | bytearray | memoryview, pos: int, offset: int) -> EventHeader:
    """Parse the 19 header bytes at data[pos]; the caller checked there are 19."""
    ts, type_code, server_id, size, log_pos, flags = HEADER.unpack_from(data, pos)
    return EventHeader(ts, type_code, server_id, size, log_pos, flags, offset)


def event_crc(data: bytes | bytearray | memoryview) -> int:
    """The CRC32 of one whole event's bytes before its 4-byte footer, as the server
    computes it: a FORMAT_DESCRIPTION's with LOG_EVENT_BINLOG_IN_USE_F dropped."""
    return _crc(memoryview(data)[:-CHECKSUM_LEN])


def _crc(view: memoryview) -> int:
    """``event_crc`` of an event's bytes without their footer."""
    if view[TYPE_AT] != _FDE or not view[FLAGS_AT] & LOG_EVENT_BINLOG_IN_USE_F:
        return zlib.crc32(view)
    head = bytes(view[:FLAGS_AT]) + bytes((view[FLAGS_AT] & ~LOG_EVENT_BINLOG_IN_USE_F,))
    return zlib.crc32(view[FLAGS_AT + 1:], zlib.crc32(head))


def frame_event(type_code: int, body: bytes | bytearray | memoryview, *, checksum: bool,
                timestamp: int = 0, server_id: int = 0, log_pos: int = 0, flags: int = 0) -> bytes:
    """One event: the header (its size counts the body and the footer), the body, and,
    with ``checksum``, the CRC32 footer (``event_crc``)."""
    size = HEADER_LEN + len(body) + (CHECKSUM_LEN if checksum else 0)
    data = HEADER.pack(timestamp, type_code, server_id, size, log_pos & 0xFFFFFFFF, flags) + body
    if not checksum:
        return data
    return data + _crc(memoryview(data)).to_bytes(CHECKSUM_LEN, "little")


def set_checksum(data: bytearray) -> bytearray:
    """``data`` (one event, its CRC32 footer last) with the footer made right again
    after its bytes were edited in place."""
    data[-CHECKSUM_LEN:] = event_crc(data).to_bytes(CHECKSUM_LEN, "little")
    return data


_VERSION_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)")


def version_tuple(server_version: str) -> tuple[int, int, int]:
    m = _VERSION_RE.match(server_version)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else (0, 0, 0)


def checksum_aware(server_version: str) -> bool:
    """The FDE carries a checksum_alg byte only from these versions on
    (``sql/log_event.cc`` checksum_version_split / checksum_version_product)."""
    version = version_tuple(server_version)
    if "mariadb" in server_version.lower():
        return version >= (5, 3, 0)
    return version >= (5, 6, 1)


@dataclass
class FormatDescription:
    binlog_version: int = 4
    server_version: str = ""
    create_timestamp: int = 0
    common_header_len: int = HEADER_LEN
    post_header_len: bytes = b""
    checksum_alg: int = CHECKSUM_OFF
    header: EventHeader | None = None
    extra: dict = field(default_factory=dict)

    @property
    def is_mariadb(self) -> bool:
        return "mariadb" in self.server_version.lower()

    @property
    def version(self) -> tuple[int, int, int]:
        return version_tuple(self.server_version)

    @property
    def checksum_len(self) -> int:
        return 4 if self.checksum_alg == CHECKSUM_CRC32 else 0

    def post_header(self, type_code: int, default: int) -> int:
        """Post-header length of an event type, as this FDE declares it."""
        if 1 <= type_code <= len(self.post_header_len):
            return self.post_header_len[type_code - 1]
        return default

    @property
    def writes_legacy_hires(self) -> bool:
        """Whether this server can write legacy 7/12/11 columns with a fraction.

        Only MariaDB 5.3+ has the MariaDB-5.3 hires formats; MySQL (any version) writes
        types 7/12/11 only for N=0, so their precision is known to be 0."""
        return self.is_mariadb and self.version >= (5, 3, 0)


def parse_format_description(raw: bytes | bytearray, header: EventHeader) -> FormatDescription:
    """Decode an FDE from its whole raw event (header included)."""
    size = header.event_size
    cur = Cursor(raw, HEADER_LEN, size, header.offset)
    binlog_version = cur.u16("binlog_version")
    server_version = cur.bytes(50, "server_version").split(b"\0", 1)[0].decode("ascii", "replace")
    create_ts = cur.u32("create_timestamp")
    common_len = cur.u8("common_header_len")
    if common_len < HEADER_LEN:
        raise MalformedEventError(f"common_header_len {common_len} is below {HEADER_LEN}",
                                  field_offset=cur.offset - 1)
    if binlog_version != 4:
        raise MalformedEventError(f"binlog_version {binlog_version} is not supported (only v4)",
                                  field_offset=header.offset + HEADER_LEN)
    if checksum_aware(server_version):
        n = cur.remaining - 5
        if n < 0:
            raise MalformedEventError("FORMAT_DESCRIPTION too short for checksum_alg",
                                      field_offset=cur.offset)
        post = cur.bytes(n, "post_header_len")
        alg = cur.u8("checksum_alg")
        if alg not in (CHECKSUM_OFF, CHECKSUM_CRC32, CHECKSUM_UNDEF):
            raise MalformedEventError(f"unknown checksum algorithm {alg}", field_offset=cur.offset - 1)
        cur.skip(4, "checksum")
    else:
        post = cur.rest()
        alg = CHECKSUM_UNDEF
    return FormatDescription(binlog_version, server_version, create_ts, common_len, post,
                             CHECKSUM_OFF if alg == CHECKSUM_UNDEF else alg, header)
