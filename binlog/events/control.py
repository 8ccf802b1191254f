"""Small control events.

Layouts from MariaDB ``sql/log_event.cc`` constructors and MySQL
``libs/mysql/binlog/event/control_events.cpp`` / ``statement_events.cpp``:

- ROTATE (4): post-header u64 position (absent before v4), body: next file name.
- STOP (3): empty.  XID (16): u64 xid.  INTVAR (5): u8 type, u64 value.
- RAND (13): u64 seed1, u64 seed2.
- USER_VAR (14): u32 name_len, name, u8 is_null; if not NULL: u8 value type,
  u32 charset, u32 value_len, value, then optional u8 flags (1 = unsigned).
- INCIDENT (26): post-header u16 incident number; body: u8 message length, message.
- HEARTBEAT (27): body: the log file name (the header's log_pos is the position).
- HEARTBEAT_V2 (41): TLV fields, kept raw.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..constants import EventType as E
from ..header import FormatDescription
from ..registry import register
from .base import Event, OpaqueEvent


@dataclass
class FormatDescriptionEvent(Event):
    fde: FormatDescription


@dataclass
class RotateEvent(Event):
    position: int
    next_file: str


@dataclass
class StopEvent(Event):
    pass


@dataclass
class XidEvent(Event):
    xid: int


@dataclass
class IntvarEvent(Event):
    kind: int      # 1 = LAST_INSERT_ID, 2 = INSERT_ID
    value: int


@dataclass
class RandEvent(Event):
    seed1: int
    seed2: int


@dataclass
class UserVarEvent(Event):
    name: str
    is_null: bool
    value_type: int | None = None
    charset: int | None = None
    value: bytes | None = None
    flags: int = 0


@dataclass
class IncidentEvent(Event):
    incident: int
    message: str


@dataclass
class HeartbeatEvent(Event):
    log_file: str


def encode_rotate(position: int, name: str) -> bytes:
    """A ROTATE body: the position in the next binlog u64, its name to the end
    (sql/log_event_server.cc Rotate_log_event::write)."""
    return position.to_bytes(8, "little") + name.encode("ascii")


@register(E.ROTATE_EVENT)
def decode_rotate(cur, ctx, header):
    position = cur.u64("position") if ctx.fde.post_header(E.ROTATE_EVENT, 8) >= 8 else 4
    return RotateEvent(header, position, cur.rest().decode("utf-8", "replace"))


@register(E.STOP_EVENT)
def decode_stop(cur, ctx, header):
    cur.rest()  # MySQL writes nothing; tolerate padding some versions leave
    return StopEvent(header)


@register(E.XID_EVENT)
def decode_xid(cur, ctx, header):
    xid = cur.u64("xid")
    cur.expect_end("XID")
    return XidEvent(header, xid)


@register(E.INTVAR_EVENT)
def decode_intvar(cur, ctx, header):
    kind = cur.u8("intvar type")
    value = cur.u64("intvar value")
    cur.expect_end("INTVAR")
    return IntvarEvent(header, kind, value)


@register(E.RAND_EVENT)
def decode_rand(cur, ctx, header):
    seed1, seed2 = cur.u64("seed1"), cur.u64("seed2")
    cur.expect_end("RAND")
    return RandEvent(header, seed1, seed2)


def encode_null_user_var(name: bytes) -> bytes:
    """A USER_VAR body setting ``name`` to NULL: name length u32, name, is_null 1
    (sql/log_event_server.cc User_var_log_event::write)."""
    return len(name).to_bytes(4, "little") + name + b"\x01"


@register(E.USER_VAR_EVENT)
def decode_user_var(cur, ctx, header):
    name = cur.bytes(cur.u32("name length"), "name").decode("utf-8", "replace")
    if cur.u8("is_null"):
        cur.rest()
        return UserVarEvent(header, name, True)
    value_type = cur.u8("value type")
    charset = cur.u32("charset")
    value = cur.bytes(cur.u32("value length"), "value")
    flags = cur.u8("flags") if not cur.at_end() else 0
    cur.rest()  # MySQL 8 may append more optional bytes
    return UserVarEvent(header, name, False, value_type, charset, value, flags)


@register(E.INCIDENT_EVENT)
def decode_incident(cur, ctx, header):
    incident = cur.u16("incident")
    message = b""
    if not cur.at_end():
        message = cur.bytes(cur.u8("message length"), "message")
    cur.expect_end("INCIDENT")
    return IncidentEvent(header, incident, message.decode("utf-8", "replace"))


@register(E.HEARTBEAT_LOG_EVENT)
def decode_heartbeat(cur, ctx, header):
    return HeartbeatEvent(header, cur.rest().decode("utf-8", "replace"))


@register(E.HEARTBEAT_LOG_EVENT_V2, E.IGNORABLE_LOG_EVENT, E.VIEW_CHANGE_EVENT,
          E.TRANSACTION_CONTEXT_EVENT, E.LOAD_EVENT, E.SLAVE_EVENT, E.CREATE_FILE_EVENT,
          E.APPEND_BLOCK_EVENT, E.EXEC_LOAD_EVENT, E.DELETE_FILE_EVENT, E.NEW_LOAD_EVENT,
          E.BEGIN_LOAD_QUERY_EVENT, E.START_EVENT_V3)
def decode_opaque(cur, ctx, header):
    return OpaqueEvent(header, cur.rest())


@dataclass
class StartEncryptionEvent(Event):
    """Every later event of the file is encrypted (binlog.crypt)."""
    scheme: int
    key_version: int
    nonce: bytes

    def __repr__(self) -> str:
        return (f"StartEncryptionEvent(offset={self.offset}, scheme={self.scheme}, "
                f"key_version={self.key_version})")


@register(E.START_ENCRYPTION_EVENT)
def decode_start_encryption(cur, ctx, header):
    # u8 scheme, u32 key_version, nonce[12] (sql/log_event.h Start_encryption_log_event);
    # the stream decrypts what follows when it has keys, else stops here.
    scheme = cur.u8("scheme")
    key_version = cur.u32("key_version")
    nonce = bytes(cur.bytes(12, "nonce"))
    return StartEncryptionEvent(header, scheme, key_version, nonce)
