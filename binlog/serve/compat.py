"""MariaDB events for a client that does not understand them, as a MariaDB primary sends
them (sql/sql_repl.cc send_event_to_slave, by the client's @mariadb_slave_capability):
left out where the client tolerates holes in the stream, else replaced by an event of
the same length it knows, so positions stay the file's (sql/log_event_server.cc
Query_log_event::begin_event, Query_log_event::dummy_event).

- a GTID event becomes a ``BEGIN`` QUERY (a standalone one is left out, or a dummy);
- BINLOG_CHECKPOINT and GTID_LIST are left out, or dummies;
- ANNOTATE_ROWS not asked for is left out, sent as it is (a client that knows it), or a
  dummy.

A dummy is a QUERY holding a comment (``# Dummy event replacing event type N that slave
cannot handle.``, cut or padded with spaces to the length), or for an event too short
for that, a NULL user variable ``@`!dummyvar``` cut to fit.  The CRC32 footer is
recomputed.
"""
from __future__ import annotations

from ..constants import (
    CHECKSUM_LEN,
    HEADER_LEN,
    LOG_EVENT_SUPPRESS_USE_F,
    LOG_EVENT_THREAD_SPECIFIC_F,
    EventType,
)
from ..events.control import encode_null_user_var
from ..events.gtid import FL_STANDALONE, GTID_HEADER_LEN
from ..events.query import Q_TIME_ZONE_CODE, QUERY_POST_HEADER, encode_query
from ..header import TYPE_AT, frame_event, parse_header
from ..protocol.constants import (
    MARIA_SLAVE_CAPABILITY_ANNOTATE,
    MARIA_SLAVE_CAPABILITY_BINLOG_CHECKPOINT,
    MARIA_SLAVE_CAPABILITY_GTID,
    MARIA_SLAVE_CAPABILITY_TOLERATE_HOLES,
)

MIN_USER_VAR = HEADER_LEN + 4 + 1 + 1   # 25: a name of one byte
MIN_QUERY = HEADER_LEN + QUERY_POST_HEADER.size + 1 + 1   # 34: a statement of one byte
_DUMMY = "# Dummy event replacing event type {} that slave cannot handle."


class CompatError(ValueError):
    """An event the server itself could not replace (a GTID event of an odd length)."""


def for_client(data: bytes, capability: int, *, annotate: bool, checksum: bool) -> bytes | None:
    """The event as a client of ``capability`` gets it; None when it is left out."""
    code = data[TYPE_AT]
    holes = capability >= MARIA_SLAVE_CAPABILITY_TOLERATE_HOLES
    if code == EventType.ANNOTATE_ROWS_EVENT and not annotate:
        if holes:
            return None
        return data if capability >= MARIA_SLAVE_CAPABILITY_ANNOTATE else dummy(data, checksum)
    if code == EventType.GTID_EVENT and capability < MARIA_SLAVE_CAPABILITY_GTID:
        flags2 = data[HEADER_LEN + 12] if len(data) > HEADER_LEN + 12 else 0
        if flags2 & FL_STANDALONE:
            return None if holes else dummy(data, checksum)
        return begin(data, checksum)
    if (code == EventType.BINLOG_CHECKPOINT_EVENT and capability < MARIA_SLAVE_CAPABILITY_BINLOG_CHECKPOINT) or \
            (code == EventType.GTID_LIST_EVENT and capability < MARIA_SLAVE_CAPABILITY_GTID):
        return None if holes else dummy(data, checksum)
    return data


def passing(capability: int, *, annotate: bool) -> bytes:
    """256 bytes, by type code: 1 for the events ``for_client`` gives to such a client as
    they are (whatever their bytes), 0 for those it replaces or leaves out - what the
    dump's compiled framer (binlog/_scan.c frame_packets) may send without looking."""
    table = bytearray(b"\x01" * 256)
    if not annotate and (capability >= MARIA_SLAVE_CAPABILITY_TOLERATE_HOLES
                         or capability < MARIA_SLAVE_CAPABILITY_ANNOTATE):
        table[EventType.ANNOTATE_ROWS_EVENT] = 0
    if capability < MARIA_SLAVE_CAPABILITY_GTID:
        table[EventType.GTID_EVENT] = table[EventType.GTID_LIST_EVENT] = 0
    if capability < MARIA_SLAVE_CAPABILITY_BINLOG_CHECKPOINT:
        table[EventType.BINLOG_CHECKPOINT_EVENT] = 0
    return bytes(table)


def _replace(data: bytes, checksum: bool, type_code: int, body: bytes) -> bytes:
    """An event of ``type_code`` in place of ``data``: its header's timestamp, server id
    and log_pos, the flags the server sets (Query_log_event::dummy_event), ``body``."""
    header = parse_header(data, 0, 0)
    flags = (header.flags & ~LOG_EVENT_THREAD_SPECIFIC_F) | LOG_EVENT_SUPPRESS_USE_F
    return frame_event(type_code, body, checksum=checksum, timestamp=header.timestamp,
                       server_id=header.server_id, log_pos=header.log_pos, flags=flags)


def begin(data: bytes, checksum: bool) -> bytes:
    """A GTID event as a BEGIN QUERY of the same length (Query_log_event::begin_event)."""
    length = len(data) - (CHECKSUM_LEN if checksum else 0)
    if length not in (HEADER_LEN + GTID_HEADER_LEN, HEADER_LEN + GTID_HEADER_LEN + 2):
        raise CompatError(f"a GTID event of {length} bytes cannot be replaced by a BEGIN "
                          f"of the same length (as the server also refuses)")
    # an empty time zone status variable takes the 2 bytes more
    status = b"" if length == HEADER_LEN + GTID_HEADER_LEN else bytes([Q_TIME_ZONE_CODE, 0])
    return _replace(data, checksum, EventType.QUERY_EVENT, encode_query(b"BEGIN", status_vars=status))


def dummy(data: bytes, checksum: bool) -> bytes:
    """An event a client cannot handle as a no-op of the same length
    (Query_log_event::dummy_event)."""
    length = len(data) - (CHECKSUM_LEN if checksum else 0)
    if length < MIN_USER_VAR:
        raise CompatError(f"an event of {length} bytes is too short to be replaced")
    old_type = data[TYPE_AT]
    if length < MIN_QUERY:
        name = b"!dummyvar"[:length - (MIN_USER_VAR - 1)]
        return _replace(data, checksum, EventType.USER_VAR_EVENT, encode_null_user_var(name))
    comment_len = length - (MIN_QUERY - 1)
    text = _DUMMY.format(old_type).encode("ascii")
    comment = text[:comment_len] + b" " * (comment_len - len(text))
    return _replace(data, checksum, EventType.QUERY_EVENT, encode_query(comment))
