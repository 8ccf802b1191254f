"""Statement events.

QUERY (2) post-header (``sql/log_event.cc`` Query_log_event ctor): thread_id u32,
exec_time u32, db_len u8, error_code u16, status_vars_len u16 (absent when the
post-header is 11 bytes, binlog v3).  Body: status vars, db name, NUL, query text to
the end.  QUERY_COMPRESSED (165, MariaDB): same, but the query text is one compressed
block (docs/binlog-formats.md §3).  EXECUTE_LOAD_QUERY (18) adds 13 post-header bytes
(file_id u32, fn_pos_start u32, fn_pos_end u32, dup_handling u8).
ROWS_QUERY (29, MySQL): u8 length (truncated, ignored) then the statement text.
ANNOTATE_ROWS (160, MariaDB): the statement text, no post-header.

Status vars (``sql/log_event.h`` Q_*_CODE, the same numbers in MySQL and MariaDB up to
10; ``Query_log_event::write`` writes them in code order): ``QueryEvent.charsets`` reads
Q_CHARSET_CODE (4): three u16 LE collation ids, ``character_set_client``,
``collation_connection`` and ``collation_server`` of the session (MariaDB
sql/log_event_server.cc Query_log_event ctor: ``int2store(charset+4,
thd->variables.collation_server->number)``).  A CREATE DATABASE naming no charset gets
``collation_server`` (sql/sql_db.cc write_db_opt).
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from ..compression import mariadb_uncompress
from ..constants import EventType as E
from ..errors import BinlogError, MalformedEventError
from ..registry import register
from .base import Event


@dataclass
class QueryEvent(Event):
    thread_id: int
    exec_time: int
    error_code: int
    status_vars: bytes
    db: str
    query: str
    raw_query: bytes = b""          # the statement's bytes, in the client's charset
    status_offset: int = 0          # absolute offset of the status vars in the file

    def session(self):
        """The session context of the status vars (binlog.events.status_vars)."""
        from .status_vars import parse_status_vars

        return parse_status_vars(self.status_vars, self.status_offset)

    @property
    def charsets(self) -> tuple[int, int, int] | None:
        """(client charset, collation_connection, collation_server) ids from the status
        var Q_CHARSET_CODE, or None when the event does not carry it."""
        raw = status_var(self.status_vars, Q_CHARSET_CODE)
        if raw is None or len(raw) != 6:
            return None
        return (int.from_bytes(raw[0:2], "little"), int.from_bytes(raw[2:4], "little"),
                int.from_bytes(raw[4:6], "little"))


Q_CHARSET_CODE = 4
Q_TIME_ZONE_CODE = 5
#: thread_id u32, exec_time u32, db_len u8, error_code u16, status_vars_len u16
QUERY_POST_HEADER = struct.Struct("<IIBHH")
# Status var code -> its fixed length; codes with a length prefix are handled in
# _var_length.  Codes 0-13 as MySQL and MariaDB log_event.h define them.
_FIXED_LENGTHS = {0: 4, 1: 8, 3: 4, 4: 6, 7: 2, 8: 2, 9: 8, 10: 4, 13: 3}


def _var_length(data: bytes, code: int, pos: int) -> int | None:
    """Bytes the value of status var ``code`` at ``data[pos:]`` takes; None if unknown."""
    if code in _FIXED_LENGTHS:
        return _FIXED_LENGTHS[code]
    if pos >= len(data):
        return None
    if code in (5, 6):          # Q_TIME_ZONE_CODE, Q_CATALOG_NZ_CODE: u8 length + text
        return 1 + data[pos]
    if code == 2:               # Q_CATALOG_CODE (5.0.0-5.0.3): u8 length + text + NUL
        return 2 + data[pos]
    if code == 11:              # Q_INVOKER: u8 length + user, u8 length + host
        user_end = pos + 1 + data[pos]
        if user_end >= len(data):
            return None
        return user_end - pos + 1 + data[user_end]
    return None


def status_var(data: bytes, wanted: int) -> bytes | None:
    """The value of one status var, walking the block in order; None when it is absent
    or lies behind a code whose length this walk does not know (those come after the
    ones read here: the server writes them in code order)."""
    pos = 0
    while pos < len(data):
        code = data[pos]
        size = _var_length(data, code, pos + 1)
        if size is None or pos + 1 + size > len(data):
            return None
        if code == wanted:
            return data[pos + 1:pos + 1 + size]
        pos += 1 + size
    return None


@dataclass
class RowsQueryEvent(Event):
    query: str


#: What a statement does to its transaction (``transaction_control``).
BEGIN, COMMIT, ROLLBACK, ROLLBACK_TO = "begin", "commit", "rollback", "rollback-to"
XA_START, XA_END, XA_PREPARE, XA_COMMIT, XA_ROLLBACK = (
    "xa-start", "xa-end", "xa-prepare", "xa-commit", "xa-rollback")
_XA_WORDS = {"START": XA_START, "BEGIN": XA_START, "END": XA_END, "PREPARE": XA_PREPARE,
             "COMMIT": XA_COMMIT, "ROLLBACK": XA_ROLLBACK}
_FIRST_TWO = re.compile(r"\s*([A-Za-z]+)(?:\s+([A-Za-z]+))?")


def transaction_control(query: str) -> str | None:
    """What a QUERY event's statement does to the transaction it is in, from its first
    words as the server logs them (``BEGIN``, ``COMMIT``, ``ROLLBACK [TO sp]``, ``XA
    START|END|PREPARE|COMMIT|ROLLBACK xid``: sql/log_event.cc, sql/xa.cc): BEGIN,
    COMMIT, ROLLBACK, ROLLBACK_TO, an XA_* constant, or None for any other statement.
    The one place the reader, the Spark pre-scan and the replay's transaction assembly
    read these words."""
    m = _FIRST_TWO.match(query)
    if m is None:
        return None
    first, second = m.group(1).upper(), (m.group(2) or "").upper()
    if first == "BEGIN" or (first == "START" and second == "TRANSACTION"):
        return BEGIN
    if first == "COMMIT":
        return COMMIT
    if first == "ROLLBACK":
        return ROLLBACK_TO if second == "TO" else ROLLBACK
    if first == "XA":
        return _XA_WORDS.get(second)
    return None


def _text(raw: bytes) -> str:
    # Statements are in the client's charset, which only status vars tell; utf-8 with
    # replacement keeps them readable without ever failing on forensic input.
    return raw.decode("utf-8", "replace")


def _decode_query(cur, ctx, header, compressed: bool, extra_post: int = 0):
    post_len = ctx.fde.post_header(header.type_code, 13)
    if post_len - extra_post < 11:
        raise MalformedEventError(f"{header.type_name} post-header length {post_len} is below "
                                  f"{11 + extra_post}", field_offset=cur.offset)
    start = cur.pos
    thread_id = cur.u32("thread_id")
    exec_time = cur.u32("exec_time")
    db_len = cur.u8("db_len")
    error_code = cur.u16("error_code")
    status_len = cur.u16("status_vars_len") if post_len - extra_post >= 13 else 0
    cur.skip(post_len - (cur.pos - start), "post-header")
    status_offset = cur.offset
    status_vars = cur.bytes(status_len, "status vars")
    db = cur.bytes(db_len, "db name")
    cur.skip(1, "db NUL")
    if compressed:
        try:
            raw = mariadb_uncompress(cur.data, cur.pos, cur.end, "query text")
        except BinlogError as exc:
            exc.add_context(field_offset=cur.offset)
            raise
        cur.pos = cur.end
    else:
        raw = cur.rest()
    return QueryEvent(header, thread_id, exec_time, error_code, status_vars, _text(db), _text(raw),
                      bytes(raw), status_offset)


def encode_query(query: bytes, *, db: bytes = b"", status_vars: bytes = b"", thread_id: int = 0,
                 exec_time: int = 0, error_code: int = 0) -> bytes:
    """A QUERY body as ``decode_query`` reads it with a 13-byte post-header (what every
    server since binlog v4 writes): the post-header, the status vars, the db and its NUL,
    the statement (sql/log_event_server.cc Query_log_event::write)."""
    return (QUERY_POST_HEADER.pack(thread_id, exec_time, len(db), error_code, len(status_vars))
            + status_vars + db + b"\0" + query)


@register(E.QUERY_EVENT)
def decode_query(cur, ctx, header):
    return _decode_query(cur, ctx, header, compressed=False)


@register(E.QUERY_COMPRESSED_EVENT)
def decode_query_compressed(cur, ctx, header):
    return _decode_query(cur, ctx, header, compressed=True)


@register(E.EXECUTE_LOAD_QUERY_EVENT)
def decode_execute_load_query(cur, ctx, header):
    return _decode_query(cur, ctx, header, compressed=False, extra_post=13)


@register(E.ROWS_QUERY_LOG_EVENT)
def decode_rows_query(cur, ctx, header):
    cur.u8("length")  # 1-byte length, truncated for long statements: use the rest
    return RowsQueryEvent(header, _text(cur.rest()))


@register(E.ANNOTATE_ROWS_EVENT)
def decode_annotate_rows(cur, ctx, header):
    return RowsQueryEvent(header, _text(cur.rest()))
