"""Legacy MariaDB binlogs into MySQL 5.6-format binlogs: events in, events out.

Sans-IO: ``Rewriter.event(event, raw)`` takes one decoded event and its bytes as framed
(``EventStream.keep_raw``) and gives back the event as it is written, with where it
starts in the output (``Rewritten``) - or None for an event that is not written.
``StreamRewriter`` joins it to an ``EventStream``: bytes in (a file, a growing relay),
rewritten events out.  Nothing here opens a file.

What changes (nothing else does: GTIDs, XIDs, timestamps, server ids, flags,
ANNOTATE_ROWS... are copied byte for byte):

- TABLE_MAP: every legacy TIMESTAMP/DATETIME/TIME column (type codes 7/12/11, no
  metadata; MariaDB sql/field.h Field_*0 and Field_*_hires keep the base
  ``binlog_type_info``) becomes TIMESTAMP2/DATETIME2/TIME2 (17/18/19) with one
  metadata byte, its fsp (sql/field.cc Field_*f::do_save_field_metadata).  The column
  types and the metadata block are rebuilt; the nullability bitmap and the optional
  metadata TLVs are copied (no TLV counts temporal columns: sql/log_event_server.cc
  Table_map_log_event::init_*_field).
- Rows events of such a table: every row image (before and after; only the present
  columns: binlog_row_image MINIMAL/NOBLOB) has each legacy value written in the ``*2``
  layout (binlog.types.LEGACY_TRANSCODERS: the legacy decoder then the ``*2`` encoder,
  without the text between them), every other value copied.
- MariaDB compressed events (QUERY_COMPRESSED 165, rows 166-171; sql/log_event.cc
  binlog_buf_uncompress) are written uncompressed, as QUERY (2) and rows 23-25/30-32,
  unless ``keep_compressed`` (then a rewritten rows block is compressed again as
  sql/log_event.cc binlog_buf_compress does).
- START_ENCRYPTION (164) is not written: the output is in clear.
- Every event after a change of size gets its header's log_pos (end position) moved by
  the bytes gained or lost so far (a log_pos of 0 stays 0), and its CRC32 recomputed when
  the FORMAT_DESCRIPTION says the binlog has checksums.

Positions: ``Rewritten.in_offset`` / ``out_offset`` are the event's start in the input
and in the output; the output file starts with the 4-byte magic, like the input, so the
first event is at 4 in both.  A ROTATE's position names the next binlog, whose
FORMAT_DESCRIPTION starts at 4 in both coordinate systems: it is kept.
"""
from __future__ import annotations

import bisect
import zlib
from dataclasses import dataclass, field
from typing import Any

from .column import Column
from .column_kinds import (
    FSP_BYTES,
    K_DT0,
    K_DT_HIRES,
    K_TIME0,
    K_TIME_HIRES,
    K_TS0,
    K_TS_HIRES,
    decimal_bin_size,
)
from .constants import (
    HEADER_LEN,
    LEGACY_TEMPORAL_TYPES,
    LOG_EVENT_BINLOG_IN_USE_F,
    MARIADB_NUMERIC_TYPES,
    ColumnType as T,
    EventType as E,
)
from .cursor import Cursor, pack_lenenc
from .errors import (
    BinlogError,
    MalformedEventError,
    MissingTableMapError,
    PrecisionUnknownError,
    TruncatedError,
    UnsupportedTypeError,
    UsageError,
)
from .events import (
    FormatDescriptionEvent,
    MariaGtidEvent,
    MysqlGtidEvent,
    QueryEvent,
    RowsEvent,
    StartEncryptionEvent,
    TableMapEvent,
    XidEvent,
)
from .extensions import load_extension
from .header import FormatDescription
from .rows import REMEDY, DecodePlan, build_plan, present_columns, speed_spec
from .scan import COUNT_RUN_CODES, count_key
from .stream import NEED_DATA, EventStream, RewrittenRun
from .types import LEGACY_TRANSCODERS, METADATA_READERS

#: legacy type code -> the MySQL 5.6 type code that replaces it
V2_TYPES = {int(T.TIMESTAMP): int(T.TIMESTAMP2), int(T.DATETIME): int(T.DATETIME2),
            int(T.TIME): int(T.TIME2)}

#: compressed type code -> its uncompressed form (sql/log_event.h: the compressed
#: rows types are their plain ones moved by a constant)
UNCOMPRESSED = {int(E.QUERY_COMPRESSED_EVENT): int(E.QUERY_EVENT),
                **{166 + i: 23 + i for i in range(3)}, **{169 + i: 30 + i for i in range(3)}}

_U32 = 0xFFFFFFFF
# The compiled walk of the row images (binlog/_speedups.c compile_rewrite, rewrite_rows,
# rewrite_run); None: the pure walk below does it all (not built, BINLOG_PURE=1).
_speedups = load_extension("_speedups")
#: a run of rows events rewritten in one compiled call ends after this many output bytes
RUN_OUTPUT = 4 << 20
# dump's remedy; rewrite does not infer (a TABLE_MAP needs N before any row is seen)
_REMEDY = REMEDY.replace("; or try --infer-precision",
                         "; `binlog dump --infer-precision` can find N to set that way")
_GROUP_ENDS = ("COMMIT", "ROLLBACK")


@dataclass(slots=True)
class Rewritten:
    """One event as written: ``data`` (header, body, checksum) starts at ``out_offset``
    of the output; it was read at ``in_offset`` of the input.  ``changed``: its bytes
    differ from the input's."""
    in_offset: int
    out_offset: int
    data: bytes
    changed: bool


@dataclass
class RewriteOptions:
    keep_compressed: bool = False     # write compressed events compressed
    full_metadata: bool = False       # add binlog_row_metadata=FULL TLVs from the schema


@dataclass
class RewriteStats:
    events: int = 0
    changed: int = 0
    table_maps: int = 0               # TABLE_MAPs whose legacy columns became *2
    rows_events: int = 0              # rows events whose images were re-encoded
    values: int = 0                   # legacy values re-encoded
    uncompressed: int = 0
    dropped: int = 0


@dataclass
class _Table:
    """How one TABLE_MAP's rows are rewritten (``legacy``: indexes of its legacy
    columns, empty when its rows stay as they are)."""
    table_map: TableMapEvent
    plan: DecodePlan | None
    legacy: tuple[int, ...]
    walks: dict = field(default_factory=dict)
    compiled: dict = field(default_factory=dict)   # present bitmap -> compile_rewrite's walk


# Steps of a row-image walk: (null byte, null mask, op, a, b, column); ops below.
_FIXED, _PREFIX, _DECODE, _LEGACY = range(4)
_FIXED_WIDTH: dict[int, int] = {
    T.TINY: 1, T.SHORT: 2, T.INT24: 3, T.LONG: 4, T.LONGLONG: 8, T.FLOAT: 4, T.DOUBLE: 8,
    T.YEAR: 1, T.DATE: 3, T.NEWDATE: 3, T.NULL: 0}
_V2_BASE: dict[int, int] = {T.TIMESTAMP2: 4, T.DATETIME2: 5, T.TIME2: 3}
_PREFIXED = frozenset({T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB, T.GEOMETRY, T.JSON})


class Rewriter:
    """Events of one binlog in order, rewritten (module docstring).

    ``name``: the binlog's name (errors, schema positions).  ``schema``: what the
    reader takes (``attributes(table_map, position)``, ``observe_query``): it gives the
    precision of legacy columns.  ``resume_after``/``resume_out``: the events at input
    offsets up to ``resume_after`` are already in the output, which is ``resume_out``
    bytes long: they are taken in (TABLE_MAPs, DDL, the FORMAT_DESCRIPTION) but not
    given out, and the next event is written at ``resume_out``."""

    def __init__(self, name: str, *, schema: Any = None, options: RewriteOptions | None = None,
                 resume_after: int = -1, resume_out: int = 4):
        self.name = name
        self.schema = schema
        self.options = options or RewriteOptions()
        self.fde = FormatDescription()
        self.out_pos = 4
        self.resume_after = resume_after
        self.resume_out = resume_out
        self.stats = RewriteStats()
        self.tables: dict[int, _Table] = {}
        # {table_id: {scan.count_key: None | (walk, walk_after)}}: rows events like one
        # this rewriter wrote, which ``run`` lets the compiled rewrite_run write by itself
        # (None: a table without legacy columns, whose events are copied)
        self.run_entries: dict[int, dict] = {}
        # where the event group being read began, (input offset, output offset): a
        # failure inside it leaves the output cut there (``rollback_point``)
        self.group_start: tuple[int, int] | None = None
        self._in_trx = False
        self._after_gtid = False
        self._failed_at: tuple[int, int] | None = None

    # --- the one entry point ----------------------------------------------------------
    def event(self, event, raw: bytes | None) -> Rewritten | None:
        header = event.header
        replaying = header.offset <= self.resume_after
        if not replaying and self.resume_after >= 0:
            self.out_pos, self.resume_after = self.resume_out, -1    # the first new event
        self._failed_at = (header.offset, self.out_pos)
        if raw is None:
            # an event inside a MySQL TRANSACTION_PAYLOAD: written with the payload, whole
            if isinstance(event, TableMapEvent) and any(
                    c.type in LEGACY_TEMPORAL_TYPES for c in event.columns):
                raise UnsupportedTypeError(
                    "legacy temporal columns inside a MySQL TRANSACTION_PAYLOAD "
                    "(binlog_transaction_compression=ON) are not rewritten", source=self.name,
                    event_offset=header.offset, event_type=header.type_name,
                    table=event.qualified_name)
            return None
        try:
            self._track_group(event)
            body, type_code = self._rewrite(event, raw, replaying)
        except BinlogError as exc:
            exc.add_context(source=self.name, event_offset=header.offset,
                            event_type=header.type_name)
            raise
        if body is _DROP:
            self.stats.dropped += 1
            return None
        if replaying:
            return None
        out = self._frame(raw, header, body, type_code)
        written = Rewritten(header.offset, self.out_pos, out, out is not raw)
        self.out_pos += len(out)
        self.stats.events += 1
        self.stats.changed += written.changed
        return written

    @property
    def rollback_point(self) -> tuple[int, int]:
        """(input offset, output offset) the output is cut back to after a failure: the
        start of the event group the failing event belongs to, else of the event."""
        if self.group_start is not None:
            return self.group_start
        if self._failed_at is None:
            return (4, 4)
        return self._failed_at

    # --- event groups -----------------------------------------------------------------
    def _track_group(self, event) -> None:
        start = (event.header.offset, self.out_pos)
        if isinstance(event, (MariaGtidEvent, MysqlGtidEvent)):
            self.group_start, self._after_gtid, self._in_trx = start, True, False
            return
        after_gtid, self._after_gtid = self._after_gtid, False
        if isinstance(event, XidEvent):
            self._end_group()
        elif isinstance(event, QueryEvent):
            word = event.query.lstrip()[:8].upper()
            if word.startswith("BEGIN") or word.startswith("XA START"):
                self._in_trx = True
                if not after_gtid:
                    self.group_start = start
            elif word.startswith(_GROUP_ENDS) or word.startswith("XA END"):
                self._end_group()
            elif not self._in_trx and not after_gtid:
                self.group_start = None        # a statement of its own (DDL) with no GTID
        elif isinstance(event, TableMapEvent) and self.group_start is None:
            self.group_start = start

    def _end_group(self) -> None:
        self.group_start, self._in_trx = None, False

    # --- per event type -----------------------------------------------------------------
    def _rewrite(self, event, raw: bytes, replaying: bool):
        """(new body, new type code); body None: the input's bytes unchanged."""
        header = event.header
        if isinstance(event, FormatDescriptionEvent):
            self.fde = event.fde
            self.tables.clear()
            self.run_entries.clear()
        elif isinstance(event, StartEncryptionEvent):
            return _DROP, None
        elif isinstance(event, TableMapEvent):
            return self._table_map(event, raw, replaying)
        elif isinstance(event, RowsEvent):
            return (None, None) if replaying else self._rows(event, raw)
        elif isinstance(event, QueryEvent):
            if self.schema is not None:
                self.schema.observe_query(event, (self.name, header.offset))
            if header.type_code in UNCOMPRESSED and not self.options.keep_compressed:
                return self._uncompressed_query(event, raw)
        return None, None

    def _table_map(self, event: TableMapEvent, raw: bytes, replaying: bool):
        plan = self._plan(event)
        legacy = tuple(c.index for c in event.columns if c.type in LEGACY_TEMPORAL_TYPES)
        if legacy:
            assert plan is not None
            for index in legacy:
                col = plan.columns[index]
                if col.precision is None:
                    raise PrecisionUnknownError(
                        f"precision of a legacy MariaDB {LEGACY_TEMPORAL_TYPES[col.type].upper()} "
                        f"column is not recorded in the binlog", table=event.qualified_name,
                        column=col.label, hint=_REMEDY)
        self.tables[event.table_id] = _Table(event, plan, legacy)
        self.run_entries.pop(event.table_id, None)
        extra = b""
        if self.options.full_metadata and self.schema is not None and not replaying:
            meta = self.schema.full_metadata(event, (self.name, event.offset))
            if meta is not None:
                extra = full_metadata_tlvs(event.columns, meta, set(event.optional))
        if not legacy and not extra:
            return None, None
        self.stats.table_maps += bool(legacy) and not replaying
        columns = plan.columns if plan is not None else event.columns
        return table_map_body(raw, self.fde, columns) + extra, None

    def _plan(self, event: TableMapEvent) -> DecodePlan | None:
        if not any(c.type in LEGACY_TEMPORAL_TYPES for c in event.columns):
            return None
        attributes: dict = {}
        if self.schema is not None:
            attributes = self.schema.attributes(event, (self.name, event.offset)) or {}
        return build_plan(event, legacy_precision_known_zero=not self.fde.writes_legacy_hires,
                          schema=attributes)

    def _rows(self, event: RowsEvent, raw: bytes):
        code = event.header.type_code
        table = self.tables.get(event.table_id)
        if table is None:
            raise MissingTableMapError(
                f"rows event for table_id {event.table_id} has no TABLE_MAP before it",
                hint="rewrite from the binlog's start: the TABLE_MAP of every rows event is needed")
        compressed = code in UNCOMPRESSED
        if not table.legacy:
            if compressed and not self.options.keep_compressed:
                self.stats.uncompressed += 1
                return raw[HEADER_LEN:event.data_offset - event.offset] + event.data, UNCOMPRESSED[code]
            self._register(event, None)
            return None, None
        if event.partial:
            raise UnsupportedTypeError("PARTIAL_UPDATE_ROWS of a table with legacy temporal "
                                       "columns cannot be rewritten", table=table.table_map.qualified_name)
        data = self._images(event, table)
        self.stats.rows_events += 1
        if not compressed:
            self._register(event, table)
        head = raw[HEADER_LEN:event.data_offset - event.offset]
        if compressed and self.options.keep_compressed:
            return head + compress_block(data), None
        if compressed:
            self.stats.uncompressed += 1
            return head + data, UNCOMPRESSED[code]
        return head + data, None

    def _uncompressed_query(self, event: QueryEvent, raw: bytes):
        """QUERY_COMPRESSED: the post-header, status vars and db stay; the compressed
        statement text becomes the plain one (sql/log_event.cc Query_log_event ctor)."""
        base = HEADER_LEN
        post = self.fde.post_header(E.QUERY_COMPRESSED_EVENT, 13)
        db_len = raw[base + 8]
        status_len = int.from_bytes(raw[base + 11:base + 13], "little") if post >= 13 else 0
        text_at = base + post + status_len + db_len + 1
        self.stats.uncompressed += 1
        return raw[base:text_at] + event.raw_query, UNCOMPRESSED[int(E.QUERY_COMPRESSED_EVENT)]

    # --- row images -------------------------------------------------------------------
    def _images(self, event: RowsEvent, table: _Table) -> bytes:
        plan = table.plan
        assert plan is not None
        if event.width != len(plan.columns):
            raise MalformedEventError(f"rows event has {event.width} columns, its TABLE_MAP "
                                      f"has {len(plan.columns)}", table=plan.qualified_name)
        compiled = self._compiled_images(event, table)
        if compiled is not None:
            data, values = compiled
            self.stats.values += values
            return data
        before = self._walk(table, event.present)
        after = self._walk(table, event.after_present) if event.kind == "update" else None
        if not before[0] and event.data and (after is None or not after[0]):
            raise MalformedEventError(f"{len(event.data)} bytes of rows data but no column is "
                                      f"present", table=plan.qualified_name)
        data, end, pos = event.data, len(event.data), 0
        out: list = []
        count = 0
        try:
            while pos < end:
                pos, n = rewrite_image(data, pos, end, before, out)
                count += n
                if after is not None:
                    pos, n = rewrite_image(data, pos, end, after, out)
                    count += n
        except _ImageError as failure:
            exc = failure.error
            exc.add_context(table=plan.qualified_name,
                            column=failure.col.label if failure.col is not None else None)
            if event.compressed:
                exc.message += f" (byte {failure.pos} of the decompressed rows data)"
                exc.add_context(field_offset=event.data_offset)
            else:
                exc.add_context(field_offset=event.data_offset + failure.pos)
            raise exc from exc.__cause__
        self.stats.values += count
        return b"".join(out)

    def _walk(self, table: _Table, present: bytes):
        walk = table.walks.get(present)
        if walk is None:
            plan = table.plan
            assert plan is not None
            cols = present_columns(present, len(plan.columns))
            steps = tuple((k >> 3, 1 << (k & 7)) + _step(plan.columns[ci], plan.decoders[ci])
                          for k, ci in enumerate(cols))
            walk = ((len(cols) + 7) >> 3, steps, {})
            table.walks[present] = walk
        return walk

    # --- the compiled walk (binlog/_speedups.c) -----------------------------------------
    def _compiled_walks(self, event: RowsEvent, table: _Table) -> tuple | None:
        """(walk, walk_after) of compile_rewrite for ``event``'s images, None when a
        column has no compiled step (its decoder finds its length) or nothing is built."""
        if _speedups is None or table.plan is None or event.width != len(table.plan.columns):
            return None
        before = self._compiled_walk(table, event.present)
        after = self._compiled_walk(table, event.after_present) if event.kind == "update" else before
        if before is None or after is None:
            return None
        return before, after

    def _compiled_walk(self, table: _Table, present: bytes):
        if present not in table.compiled:
            nbytes, steps, _ = self._walk(table, present)
            specs = [compiled_step(byte, mask, op, a, b, col) for byte, mask, op, a, b, col in steps]
            table.compiled[present] = (None if None in specs
                                       else _speedups.compile_rewrite(nbytes, tuple(specs)))
        return table.compiled[present]

    def _compiled_images(self, event: RowsEvent, table: _Table) -> tuple[bytes, int] | None:
        """(new rows data, legacy values) from the compiled walk; None: the pure walk
        rewrites the event (no compiled walk, or the compiled one falls back: the pure
        walk raises the typed error)."""
        walks = self._compiled_walks(event, table)
        if walks is None:
            return None
        try:
            return _speedups.rewrite_rows(event.data, _KINDS[event.kind], *walks)
        except _speedups.Fallback:
            return None

    def _register(self, event: RowsEvent, table: _Table | None) -> None:
        """Let ``run`` write the next events like ``event`` (just written) by length."""
        code = event.header.type_code
        if code not in COUNT_RUN_CODES or _speedups is None:
            return
        entry = None
        if table is not None:
            entry = self._compiled_walks(event, table)
            if entry is None:
                return
        key = count_key(code, event.width, event.present,
                        event.after_present if event.kind == "update" else None)
        self.run_entries.setdefault(event.table_id, {})[key] = entry

    def run(self, stream: EventStream) -> RewrittenRun | None:
        """The run of rows events at the stream's read position that the registered
        entries cover, rewritten in one compiled call (``_speedups.rewrite_run``): the
        output bytes and their map lines; None when the next event is not one of them
        (the stream reads it as usual).  Nothing to replay (a resumed run replays its
        first events through ``event``)."""
        if not self.run_entries or self.resume_after >= 0 or _speedups is None:
            return None
        got = stream.rewrite_run(_speedups.rewrite_run, self.run_entries, self.out_pos, RUN_OUTPUT)
        if got is None:
            return None
        self.out_pos = got.out_pos
        self.stats.events += got.events
        self.stats.changed += got.changed
        self.stats.rows_events += got.rows_events
        self.stats.values += got.values
        self._after_gtid = False        # as _track_group takes a rows event
        return got

    # --- framing ----------------------------------------------------------------------
    def _frame(self, raw: bytes, header, body: bytes | None, type_code: int | None) -> bytes:
        """The event as written at ``self.out_pos``: the input's bytes when nothing
        moved, else a new header (size, log_pos, type) and checksum."""
        checksum = self.fde.checksum_len
        if header.type_code == E.FORMAT_DESCRIPTION_EVENT:
            checksum = 4 if self.fde.checksum_alg == 1 else 0
        if body is None:
            if self.out_pos == header.offset:
                return raw
            body = raw[HEADER_LEN:len(raw) - checksum]
        size = HEADER_LEN + len(body) + checksum
        log_pos = header.log_pos
        if log_pos:
            log_pos = (log_pos + self.out_pos + size - header.offset - header.event_size) & _U32
        head = (raw[:4] + bytes((type_code if type_code is not None else header.type_code,))
                + raw[5:9] + size.to_bytes(4, "little") + log_pos.to_bytes(4, "little") + raw[17:19])
        out = head + body
        if checksum:
            crc_head = head
            if header.type_code == E.FORMAT_DESCRIPTION_EVENT:   # CRC with IN_USE cleared
                flags = header.flags & ~LOG_EVENT_BINLOG_IN_USE_F
                crc_head = head[:17] + flags.to_bytes(2, "little")
            crc = zlib.crc32(body, zlib.crc32(crc_head))
            out += crc.to_bytes(4, "little")
        return out


_DROP = b"\0drop"     # a body sentinel: the event is not written


class _ImageError(Exception):
    def __init__(self, error: BinlogError, pos: int, col: Column | None):
        self.error, self.pos, self.col = error, pos, col


_KINDS = {"insert": 0, "update": 1, "delete": 2}
# the column kinds of the legacy layouts, N = 0 and hires (_column_kinds.h)
_LEGACY_STEP_KINDS = frozenset({K_TS0, K_TS_HIRES, K_DT0, K_DT_HIRES, K_TIME0, K_TIME_HIRES})


def compiled_step(byte: int, mask: int, op: int, a, b, col: Column) -> tuple | None:
    """A pure walk's step (``_step``) as compile_rewrite takes it: (null byte, mask, op,
    width or length bytes, kind, N); a legacy value's kind is the decoder's
    (``rows.speed_spec``).  None for a step the compiled walk has not (``_DECODE``)."""
    if op in (_FIXED, _PREFIX):
        return (byte, mask, op, a, 0, 0)
    kind = speed_spec(col)[0]
    if op == _LEGACY and kind in _LEGACY_STEP_KINDS:
        return (byte, mask, op, 0, kind, b)
    return None


def _step(col: Column, decoder) -> tuple:
    """(op, a, b) of one column in a row-image walk."""
    t = col.type
    if t in LEGACY_TEMPORAL_TYPES:
        n = col.precision
        if n is None or not 0 <= n <= 6:
            raise MalformedEventError(f"invalid fractional precision {n}", column=col.label)
        return (_LEGACY, LEGACY_TRANSCODERS[t], n, col)
    if t in _FIXED_WIDTH:
        return (_FIXED, _FIXED_WIDTH[t], None, col)
    if t in _V2_BASE and col.precision is not None and 0 <= col.precision <= 6:
        return (_FIXED, _V2_BASE[t] + FSP_BYTES[col.precision], None, col)
    if t == T.NEWDECIMAL:
        size = decimal_bin_size(col.precision or 0, col.scale)
        if size < 0:
            raise MalformedEventError(f"DECIMAL({col.precision},{col.scale}) metadata no server "
                                      f"writes", column=col.label)
        return (_FIXED, size, None, col)
    if t in (T.BIT, T.ENUM, T.SET) and col.length:
        return (_FIXED, col.length, None, col)
    if t in (T.VARCHAR, T.VAR_STRING, T.STRING):
        return (_PREFIX, 1 if col.length <= 255 else 2, None, col)
    if t in _PREFIXED and 1 <= col.length <= 4:
        return (_PREFIX, col.length, None, col)
    return (_DECODE, decoder, col, col)


def rewrite_image(data, pos: int, end: int, walk, out: list) -> tuple[int, int]:
    """One row image from ``pos``: its bytes into ``out`` with each legacy value
    re-encoded; returns (the position after it, legacy values re-encoded).  The walk's
    steps for one NULL bitmap are compiled once (``_ops``): NULL columns dropped, runs of
    fixed-width values one step."""
    nbytes, steps, compiled = walk
    if end - pos < nbytes:
        raise _ImageError(TruncatedError(f"need {nbytes} bytes for the NULL bitmap, "
                                         f"{end - pos} left"), pos, None)
    nulls = data[pos:pos + nbytes]
    ops = compiled.get(nulls)
    if ops is None:
        ops = _ops(steps, nulls)
        if len(compiled) < 4096:        # NULL patterns of one table: few, but bounded
            compiled[nulls] = ops
    start = pos
    pos += nbytes
    count = 0
    for op, a, b, col in ops:
        at = pos
        try:
            if op == _FIXED:
                pos += a
            elif op == _PREFIX:
                if end - pos < a:
                    raise TruncatedError(f"need {a} bytes for a length, {end - pos} left")
                pos += a + int.from_bytes(data[pos:pos + a], "little")
            elif op == _LEGACY:
                out.append(data[start:pos])
                value, pos = a(data, pos, end, b)
                out.append(value)
                start = pos
                count += 1
            else:
                _value, pos = a(data, pos, end, b)
        except BinlogError as exc:
            raise _ImageError(exc, at, col) from exc
        if pos > end:
            where, col = _overrun(op, b, col, at, end)
            raise _ImageError(TruncatedError(f"the value runs {pos - end} bytes past the end "
                                             f"of the rows data"), where, col)
    out.append(data[start:pos])
    return pos, count


def _ops(steps, nulls) -> list:
    """The steps of the non-NULL columns, consecutive fixed widths merged into one
    (b: their (width, column) pairs, for the error that names the column)."""
    ops: list = []
    for byte, mask, op, a, b, col in steps:
        if nulls[byte] & mask:
            continue
        if op == _FIXED and ops and ops[-1][0] == _FIXED:
            _, size, parts, first = ops[-1]
            ops[-1] = (_FIXED, size + a, parts + ((a, col),), first)
        elif op == _FIXED:
            ops.append((_FIXED, a, ((a, col),), col))
        else:
            ops.append((op, a, b, col))
    return ops


def _overrun(op, b, col, at, end) -> tuple[int, Column]:
    """Where the value that runs past ``end`` starts, and its column."""
    if op == _FIXED:
        for size, part in b:
            if at + size > end:
                return at, part
            at += size
    return at, col


def table_map_body(raw: bytes, fde: FormatDescription, columns: list[Column]) -> bytes:
    """A TABLE_MAP's body with legacy columns as *2 types (sql/log_event_server.cc
    Table_map_log_event::write_data_body): the column types and the metadata block are
    rebuilt, every other byte copied.  ``columns``: with the legacy ones' precision."""
    end = len(raw) - fde.checksum_len
    cur = Cursor(raw, HEADER_LEN, end)
    cur.skip(fde.post_header(E.TABLE_MAP_EVENT, 8), "post-header")
    cur.skip(cur.u8("db length") + 1, "db name")
    cur.skip(cur.u8("table length") + 1, "table name")
    count = cur.count("column count")
    types_at = cur.pos
    types = cur.bytes(count, "column types")
    meta = cur.sub(cur.count("metadata length"), "metadata block")
    rest_at = meta.end
    new_types = bytearray(types)
    new_meta = bytearray()
    for index, code in enumerate(types):
        start = meta.pos
        METADATA_READERS[T(code)](meta)     # codes the decoder accepted
        if code in V2_TYPES:
            new_types[index] = V2_TYPES[code]
            new_meta.append(columns[index].precision or 0)
        else:
            new_meta += raw[start:meta.pos]
    return (raw[HEADER_LEN:types_at] + bytes(new_types) + pack_lenenc(len(new_meta))
            + bytes(new_meta) + raw[rest_at:end])


def compress_block(data: bytes) -> bytes:
    """sql/log_event.cc binlog_buf_compress: 0x80 | lenlen, the uncompressed length
    big-endian in lenlen (1..4) bytes, then a zlib stream (compress())."""
    n = len(data)
    lenlen = 4 if n >> 24 else 3 if n >> 16 else 2 if n >> 8 else 1
    return bytes((0x80 | lenlen,)) + n.to_bytes(lenlen, "big") + zlib.compress(data)


class StreamRewriter:
    """Bytes of one binlog in (``feed``, ``close``), rewritten events out (``next``
    returns a ``Rewritten`` or ``NEED_DATA``): a growing relay can be fed as it grows.
    The output is the magic (``BINLOG_MAGIC``, 4 bytes) then the events, in order."""

    def __init__(self, name: str, *, schema: Any = None, options: RewriteOptions | None = None,
                 keys: Any = None, verify_checksums: bool = True, resume_after: int = -1,
                 resume_out: int = 4):
        self.stream = EventStream(name, verify_checksums=verify_checksums, keys=keys)
        self.stream.keep_raw = True
        self.rewriter = Rewriter(name, schema=schema, options=options,
                                 resume_after=resume_after, resume_out=resume_out)

    def feed(self, data: bytes | memoryview) -> None:
        self.stream.feed(data)

    def close(self) -> None:
        self.stream.close()

    def next(self):
        while True:
            event = self.stream.next_event()
            if event is NEED_DATA:
                return NEED_DATA
            out = self.rewriter.event(event, self.stream.last_raw)
            if out is not None:
                return out


# --- the position map -------------------------------------------------------------------
#
# A text file beside each output binlog, ``<name>.map``: a first line naming the format,
# then one line per event written, in order, four decimal numbers separated by one
# space: its start and end offsets in the input, its start and end offsets in the
# output ("in_start in_end out_start out_end").  An end offset is what the header's
# log_pos holds (what a consumer's checkpoint stores); a start is where a reader may
# begin.  Events not written (START_ENCRYPTION) have no line.

MAP_HEADER = "# binlog rewrite position map v1: in_start in_end out_start out_end\n"


@dataclass(frozen=True, slots=True)
class MapEntry:
    in_start: int
    in_end: int
    out_start: int
    out_end: int

    def line(self) -> str:
        return f"{self.in_start} {self.in_end} {self.out_start} {self.out_end}\n"


def map_entry(written: Rewritten, in_size: int) -> MapEntry:
    return MapEntry(written.in_offset, written.in_offset + in_size, written.out_offset,
                    written.out_offset + len(written.data))


def parse_map(text: str, source: str) -> list[MapEntry]:
    """The entries of a map file's text (a last line without its newline, cut by a
    crash, is left out: the rerun writes its event again); MalformedEventError names a
    bad line."""
    if not text.startswith(MAP_HEADER):
        raise MalformedEventError("not a binlog rewrite position map (first line)",
                                  source=source, event_offset=0)
    lines = text[len(MAP_HEADER):].split("\n")
    entries = []
    for number, line in enumerate(lines[:-1], 2):      # lines[-1]: after the last newline
        parts = line.split(" ")
        if len(parts) != 4 or not all(p.isdigit() for p in parts):
            raise MalformedEventError(f"line {number} is not four offsets: {line[:80]!r}",
                                      source=source)
        entries.append(MapEntry(*map(int, parts)))
    return entries


def lookup(entries: list[MapEntry], position: int, *, from_output: bool = False) -> int:
    """``position`` (an event's start or end, 4 for the first) in the other coordinate
    system; UsageError when it is neither."""
    starts = [e.out_start if from_output else e.in_start for e in entries]
    i = bisect.bisect_right(starts, position) - 1
    if i >= 0:
        e = entries[i]
        if position == starts[i]:
            return e.in_start if from_output else e.out_start
        if position == (e.out_end if from_output else e.in_end):
            return e.in_end if from_output else e.out_end
    side = "output" if from_output else "input"
    raise UsageError(f"{side} position {position} is not the start or end of an event the "
                     f"map lists")


# --- binlog_row_metadata=FULL -----------------------------------------------------------

def full_metadata_tlvs(columns: list[Column], meta: dict, present: set[int]) -> bytes:
    """The optional metadata TLVs binlog_row_metadata=FULL writes, in the server's order
    (sql/log_event_server.cc Table_map_log_event::init_metadata_fields: SIGNEDNESS,
    charsets, [GEOMETRY_TYPE], COLUMN_NAME, ENUM/SET charsets, SET_STR_VALUE,
    ENUM_STR_VALUE, primary key), from ``meta`` (the schema resolver's
    ``full_metadata``); a field the TABLE_MAP has already (``present``) or the schema
    cannot give (a charset it does not name, a geometry's real type) is left out."""
    from .events.table_map import (
        COLUMN_NAME,
        ENUM_STR_VALUE,
        SET_STR_VALUE,
        SIGNEDNESS,
        SIMPLE_PRIMARY_KEY,
        is_character_column,
    )

    specs = meta["columns"]
    out = bytearray()

    def tlv(kind: int, value: bytes) -> None:
        if kind not in present:        # write_tlv_field: type, packed length, value
            out.extend(bytes((kind,)) + pack_lenenc(len(value)) + value)

    numeric = [specs[c.index]["unsigned"] for c in columns if c.type in MARIADB_NUMERIC_TYPES]
    if numeric:                         # init_signedness_field: MSB first
        bits = bytearray((len(numeric) + 7) // 8)
        for i, unsigned in enumerate(numeric):
            if unsigned:
                bits[i >> 3] |= 0x80 >> (i & 7)
        tlv(SIGNEDNESS, bytes(bits))
    chars = [c.index for c in columns if is_character_column(c, True)]
    enums = [c.index for c in columns if c.type in (T.ENUM, T.SET)]
    if not present & {DEFAULT_CHARSET_TLV, COLUMN_CHARSET_TLV}:
        out += _charset_tlv(chars, specs, DEFAULT_CHARSET_TLV, COLUMN_CHARSET_TLV)
    tlv(COLUMN_NAME, b"".join(pack_lenenc(len(n)) + n
                              for n in (s["name"].encode("utf-8") for s in specs)))
    if not present & {ENUM_SET_DEFAULT_CHARSET_TLV, ENUM_SET_COLUMN_CHARSET_TLV}:
        out += _charset_tlv(enums, specs, ENUM_SET_DEFAULT_CHARSET_TLV, ENUM_SET_COLUMN_CHARSET_TLV)
    for kind, code in ((SET_STR_VALUE, T.SET), (ENUM_STR_VALUE, T.ENUM)):
        labelled = [specs[c.index]["labels"] for c in columns if c.type == code]
        if labelled:
            tlv(kind, b"".join(pack_lenenc(len(labels)) + b"".join(
                pack_lenenc(len(x)) + x for x in labels) for labels in labelled))
    if meta["primary_key"]:
        tlv(SIMPLE_PRIMARY_KEY, b"".join(pack_lenenc(i) for i in meta["primary_key"]))
    return bytes(out)


DEFAULT_CHARSET_TLV, COLUMN_CHARSET_TLV = 2, 3
ENUM_SET_DEFAULT_CHARSET_TLV, ENUM_SET_COLUMN_CHARSET_TLV = 10, 11


def _charset_tlv(indexes: list[int], specs: list[dict], default_kind: int, column_kind: int) -> bytes:
    """init_charset_field: the most used collation as the default and the others by
    index, or every column's collation when that is shorter; nothing when a collation
    is unknown (a wrong charset would decode text wrongly)."""
    ids = [specs[i]["collation"] for i in indexes]
    if not ids or any(cid is None for cid in ids):
        return b""
    counts: dict[int, int] = {}
    for cid in ids:
        counts[cid] = counts.get(cid, 0) + 1
    most = max(sorted(counts), key=lambda cid: counts[cid])    # std::map order, first max
    if len(ids) < 1 + (len(ids) - counts[most]) * 2:
        kind, value = column_kind, b"".join(pack_lenenc(cid) for cid in ids)
    else:
        kind = default_kind
        value = pack_lenenc(most) + b"".join(pack_lenenc(k) + pack_lenenc(cid)
                                            for k, cid in enumerate(ids) if cid != most)
    return bytes((kind,)) + pack_lenenc(len(value)) + value
