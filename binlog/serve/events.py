"""The artificial events a primary puts into a dump, built as the server builds them
(sql/sql_repl.cc fake_rotate_event, send_heartbeat_event, send_format_descriptor_event):
timestamp 0, LOG_EVENT_ARTIFICIAL_F, a CRC32 footer when the binlog has checksums."""
from __future__ import annotations

import struct
import zlib

from ..constants import HEADER_LEN, LOG_EVENT_ARTIFICIAL_F, LOG_EVENT_BINLOG_IN_USE_F, EventType

_FLAGS = 17      # offset of the flags in the event header (u16)
_LOG_POS = 13
_TIMESTAMP = 0


def _event(type_code: int, server_id: int, log_pos: int, flags: int, body: bytes, checksum: bool) -> bytes:
    size = HEADER_LEN + len(body) + (4 if checksum else 0)
    data = struct.pack("<IBIIIH", 0, type_code, server_id, size, log_pos & 0xFFFFFFFF, flags) + body
    return with_crc(data) if checksum else data


def with_crc(data: bytes) -> bytes:
    return data + struct.pack("<I", zlib.crc32(data))


def fake_rotate(name: str, position: int, server_id: int, checksum: bool) -> bytes:
    """ROTATE naming the file and position the dump continues at (log_pos 0)."""
    return _event(EventType.ROTATE_EVENT, server_id, 0, LOG_EVENT_ARTIFICIAL_F,
                  struct.pack("<Q", position) + name.encode("ascii"), checksum)


def heartbeat(name: str, position: int, server_id: int, checksum: bool) -> bytes:
    """HEARTBEAT: nothing new; log_pos is where the dump stands in ``name``."""
    return _event(EventType.HEARTBEAT_LOG_EVENT, server_id, position, LOG_EVENT_ARTIFICIAL_F,
                  name.encode("ascii"), checksum)


def format_description_for_client(fde: bytes, *, resent: bool, checksum: bool) -> bytes:
    """The file's FORMAT_DESCRIPTION as a dump sends it: LOG_EVENT_BINLOG_IN_USE_F cleared
    (the CRC32 is over the event with the flag cleared, so it stays valid); when the dump
    starts inside the file, a copy with log_pos and the creation time 0, so the client
    does not count it as an event of the file (init_binlog_sender clear_initial_log_pos)."""
    data = bytearray(fde)
    flags = int.from_bytes(data[_FLAGS:_FLAGS + 2], "little") & ~LOG_EVENT_BINLOG_IN_USE_F
    data[_FLAGS:_FLAGS + 2] = flags.to_bytes(2, "little")
    if not resent:
        return bytes(data)
    data[_LOG_POS:_LOG_POS + 4] = b"\0\0\0\0"
    data[HEADER_LEN + 52:HEADER_LEN + 56] = b"\0\0\0\0"      # created
    if checksum:
        return with_crc(bytes(data[:-4]))
    return bytes(data)
