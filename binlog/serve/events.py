"""The artificial events a primary puts into a dump, built as the server builds them
(sql/sql_repl.cc fake_rotate_event, send_heartbeat_event, send_format_descriptor_event):
timestamp 0, LOG_EVENT_ARTIFICIAL_F, a CRC32 footer when the binlog has checksums."""
from __future__ import annotations

import struct

from ..constants import HEADER_LEN, LOG_EVENT_ARTIFICIAL_F, LOG_EVENT_BINLOG_IN_USE_F, EventType
from ..header import FLAGS_AT, LOG_POS_AT, frame_event, set_checksum


def fake_rotate(name: str, position: int, server_id: int, checksum: bool) -> bytes:
    """ROTATE naming the file and position the dump continues at (log_pos 0)."""
    return frame_event(EventType.ROTATE_EVENT, struct.pack("<Q", position) + name.encode("ascii"),
                       checksum=checksum, server_id=server_id, flags=LOG_EVENT_ARTIFICIAL_F)


def heartbeat(name: str, position: int, server_id: int, checksum: bool) -> bytes:
    """HEARTBEAT: nothing new; log_pos is where the dump stands in ``name``."""
    return frame_event(EventType.HEARTBEAT_LOG_EVENT, name.encode("ascii"), checksum=checksum,
                       server_id=server_id, log_pos=position, flags=LOG_EVENT_ARTIFICIAL_F)


def format_description_for_client(fde: bytes, *, resent: bool, checksum: bool) -> bytes:
    """The file's FORMAT_DESCRIPTION as a dump sends it: LOG_EVENT_BINLOG_IN_USE_F cleared
    (the CRC32 is over the event with the flag cleared, so it stays valid); when the dump
    starts inside the file, a copy with log_pos and the creation time 0, so the client
    does not count it as an event of the file (init_binlog_sender clear_initial_log_pos)."""
    data = bytearray(fde)
    flags = int.from_bytes(data[FLAGS_AT:FLAGS_AT + 2], "little") & ~LOG_EVENT_BINLOG_IN_USE_F
    data[FLAGS_AT:FLAGS_AT + 2] = flags.to_bytes(2, "little")
    if not resent:
        return bytes(data)
    data[LOG_POS_AT:LOG_POS_AT + 4] = b"\0\0\0\0"
    data[HEADER_LEN + 52:HEADER_LEN + 56] = b"\0\0\0\0"      # created
    return bytes(set_checksum(data) if checksum else data)
