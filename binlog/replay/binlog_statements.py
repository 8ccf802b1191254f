"""BINLOG statements: row events sent on to a MariaDB target as they are.

``binlog apply --method binlog`` does what ``mariadb-binlog FILE | mariadb`` does for
row events: the target gets ``BINLOG '<base64>'`` statements holding the events' own
bytes and applies them as a replica's SQL thread would (sql/sql_binlog.cc
``mysql_client_binlog_statement``: the events are read with the FORMAT_DESCRIPTION the
session was given last, then ``apply_event``), with no SQL text to parse.

What a statement holds (sans-IO: bytes in, bytes out):

- a FORMAT_DESCRIPTION first, once per session and whenever the source's changes
  (``fde_statement``), with its ``created`` field zeroed.  ``created`` is set in the
  first binlog after a server start; Format_description_log_event::do_apply_event of
  MySQL and of older MariaDB (log_event.cc: ``!artificial_event && created &&
  ...ha_list``) rolls back the open transaction on reading such an FDE (the master died
  mid-transaction, as a relay log sees it), which would drop what the open batch applied
  before a source restart.  MariaDB 10.11 does not for a BINLOG statement (tested);
  zeroed, no server does, and nothing else reads the field;
- then rows events, each statement group's TABLE_MAPs before its first rows event
  (Rows_log_event::do_apply_event opens and checks every mapped table at the group's
  first rows event; a map sent after that is never opened);
- the last rows event of a statement, and of each group in it, flagged STMT_END_F
  (Rows_log_event::STMT_END_F, sql/log_event.h): the server ends the statement there,
  as it does at the original's end.  Flags changed here get their CRC32 recomputed.

``RawEvents`` keeps, from the reader's items (``ReaderOptions.keep_raw``), the bytes
each rows event needs until its transaction is applied.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass

from ..constants import HEADER_LEN, STMT_END_F, EventType
from ..errors import BinlogError
from ..events import FormatDescriptionEvent, RowsEvent, TableMapEvent
from ..header import SIZE_AT, set_checksum
from ..reader import CountedRows, SourceEvent

# FORMAT_DESCRIPTION body: binlog_version (2), server_version (50), created (4)
# (sql/log_event.h ST_CREATED_OFFSET)
_CREATED_AT = HEADER_LEN + 2 + 50
# TABLE_MAP body after its post-header: db name length (1), name, NUL (log_event.h)
_ROWS_CODES = frozenset({23, 24, 25, 30, 31, 32, 166, 167, 168, 169, 170, 171})


class RawEventsError(BinlogError):
    """A rows event to send on has no bytes kept for it (it came from a MySQL
    transaction payload, or before the event that frames it)."""


@dataclass(slots=True)
class RawRows:
    """The bytes one rows event needs on the target."""
    fde: bytes              # the FORMAT_DESCRIPTION statement it is framed by
    group: int              # its statement group: the TABLE_MAPs below precede the group
    maps: tuple             # those TABLE_MAPs (bytes), in binlog order
    raw: bytes
    flags_at: int           # offset of its flags field
    checksum: bool          # it ends with a CRC32


@dataclass(slots=True)
class Chunk:
    """One BINLOG statement: ``sql`` to execute after ``fde`` was; ``events``: (file,
    position) of the rows events it holds, for messages."""
    fde: bytes
    sql: bytes
    events: list


def fde_statement(raw: bytes, checksum: bool) -> bytes:
    """The BINLOG statement of a FORMAT_DESCRIPTION, ``created`` zeroed (see above)."""
    data = bytearray(raw)
    data[_CREATED_AT:_CREATED_AT + 4] = b"\0\0\0\0"
    return statement(bytes(set_checksum(data) if checksum else data))


def statement(payload: bytes) -> bytes:
    return b"BINLOG '" + base64.b64encode(payload) + b"'"


def rewrite_table_map(raw: bytes, post_header: int, new_db: str, checksum: bool) -> bytes:
    """A TABLE_MAP with its database name replaced (``--rewrite-db``), its size and
    CRC32 made right (the layout: sql/log_event.h, Table_map_log_event)."""
    at = HEADER_LEN + post_header
    old_len = raw[at]
    name = new_db.encode("utf-8")
    if len(name) > 255:
        raise RawEventsError(f"--rewrite-db name {new_db!r} is longer than a TABLE_MAP holds")
    data = bytearray(raw[:at]) + bytes([len(name)]) + name + raw[at + 1 + old_len:]
    data[SIZE_AT:SIZE_AT + 4] = len(data).to_bytes(4, "little")
    return bytes(set_checksum(data) if checksum else data)


class RawEvents:
    """The bytes of the rows events given out and not applied yet, by (file, offset).

    ``sends(table_map, fde)``: whether a table's rows go as BINLOG statements (the
    others are decoded and rendered as SQL: their TABLE_MAPs are left out, the target
    would check their columns against its own).  ``rewrite``: --rewrite-db's map."""

    def __init__(self, sends, rewrite: dict[str, str] | None = None):
        self.sends = sends
        self.rewrite = rewrite or {}
        self.fde: FormatDescriptionEvent | None = None
        self.fde_sql = b""
        self.group = 0
        self.maps: list[bytes] = []
        self.group_open = False
        self.rows: dict[tuple[str, int], RawRows] = {}
        self.fresh = 0          # bytes of rows events kept since the holder last looked

    def feed(self, item) -> None:
        if isinstance(item, CountedRows):
            if item.raw is not None:
                self._counted(item)
            return
        if not isinstance(item, SourceEvent) or item.raw is None:
            return
        event = item.event
        if isinstance(event, FormatDescriptionEvent):
            self.fde = event
            self.fde_sql = fde_statement(item.raw, event.fde.checksum_len == 4)
            self.maps, self.group_open = [], False
        elif isinstance(event, TableMapEvent) and self.fde is not None:
            if not self.group_open:
                self.group += 1
                self.maps, self.group_open = [], True
            if self.sends(event, self.fde.fde):
                self.maps.append(self._table_map(event, item.raw))
        elif isinstance(event, RowsEvent):
            self._rows(item.file, event.offset, item.raw)

    def _table_map(self, event: TableMapEvent, raw: bytes) -> bytes:
        new_db = self.rewrite.get(event.db)
        if new_db is None or self.fde is None:
            return raw
        fde = self.fde.fde
        return rewrite_table_map(raw, fde.post_header(EventType.TABLE_MAP_EVENT, 8), new_db,
                                 fde.checksum_len == 4)

    def _counted(self, run: CountedRows) -> None:
        at = 0
        for count, size in zip(run.counts, run.sizes, strict=True):
            self._rows(run.file, count.pos, run.raw[at:at + size])     # type: ignore[index]
            at += size

    def _rows(self, file: str, pos: int, raw: bytes) -> None:
        if self.fde is None:
            return
        fde = self.fde.fde
        code = raw[4]
        flags_at = HEADER_LEN + (4 if fde.post_header(code, 8) == 6 else 6)
        self.rows[(file, pos)] = RawRows(self.fde_sql, self.group, tuple(self.maps), raw,
                                         flags_at, fde.checksum_len == 4)
        self.fresh += len(raw)
        if code in _ROWS_CODES and int.from_bytes(raw[flags_at:flags_at + 2], "little") & STMT_END_F:
            self.group_open = False

    def take(self, file: str, pos: int) -> RawRows:
        try:
            return self.rows.pop((file, pos))
        except KeyError:
            raise RawEventsError("no bytes were kept for this rows event to send on",
                                 source=file, event_offset=pos,
                                 hint="apply it with --method sql") from None

    def clear(self) -> None:
        """Forget what no transaction will take (rows events without rows)."""
        self.rows.clear()
        self.fresh = 0


def chunks(events: list[RawRows], where: list, limit: int):
    """The BINLOG statements (``Chunk``) holding ``events`` (rows events of one
    transaction, in binlog order; ``where``: their (file, position)), each at most
    about ``limit`` bytes before base64 unless one event alone is larger."""
    out = bytearray()
    group: int | None = None
    fde = b""
    last = -1                   # where the last rows event in ``out`` starts
    last_event: RawRows | None = None
    held: list = []
    for event, at in zip(events, where, strict=True):
        new_group = event.group != group
        if out and (event.fde != fde or len(out) + len(event.raw) > limit):
            _end_statement(out, last, last_event)
            yield Chunk(fde, statement(bytes(out)), held)
            out, held, new_group = bytearray(), [], True
        if new_group and out:
            _end_statement(out, last, last_event)
        if new_group:
            for table_map in event.maps:
                out += table_map
            group = event.group
        fde = event.fde
        last, last_event = len(out), event
        out += event.raw
        held.append(at)
    if out:
        _end_statement(out, last, last_event)
        yield Chunk(fde, statement(bytes(out)), held)


def _end_statement(out: bytearray, at: int, event: RawRows | None) -> None:
    """Flag the rows event at ``out[at:]`` STMT_END_F (CRC32 made right)."""
    if event is None:
        return
    i = at + event.flags_at
    flags = int.from_bytes(out[i:i + 2], "little")
    if flags & STMT_END_F:
        return
    out[i:i + 2] = (flags | STMT_END_F).to_bytes(2, "little")
    if event.checksum:
        end = at + len(event.raw)
        out[at:end] = set_checksum(bytearray(out[at:end]))
