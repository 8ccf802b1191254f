"""Legacy MariaDB binlogs into MySQL 5.6-format binlogs: events in, events out.

Sans-IO: ``Rewriter.event(event, raw)`` takes one decoded event and its bytes as framed
(``EventStream(keep_raw=True)``) and gives back the event as it is written, with where it
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

from dataclasses import dataclass, field
from typing import Any

from ..column import Column
from ..compression import mariadb_compress
from ..constants import (
    CHECKSUM_CRC32,
    CHECKSUM_LEN,
    HEADER_LEN,
    LEGACY_TEMPORAL_TYPES,
    UNCOMPRESSED_TYPES,
    ColumnType as T,
    EventType as E,
)
from ..cursor import Cursor, pack_lenenc
from ..errors import (
    BinlogError,
    MalformedEventError,
    MissingTableMapError,
    PrecisionUnknownError,
    UnsupportedTypeError,
)
from ..events import (
    FormatDescriptionEvent,
    MariaGtidEvent,
    MysqlGtidEvent,
    QueryEvent,
    RowsEvent,
    StartEncryptionEvent,
    TableMapEvent,
    XidEvent,
)
from ..events.query import QUERY_POST_HEADER
from ..events.table_map import full_metadata_tlvs
from ..header import FormatDescription, frame_event
from ..rows import REMEDY, DecodePlan, build_plan
from ..scan import COUNT_RUN_CODES, count_key
from ..stream import NEED_DATA, EventStream
from ..stream_runs import RewrittenRun
from ..types import METADATA_READERS
from . import images
from .position_map import MapEntry

#: legacy type code -> the MySQL 5.6 type code that replaces it
V2_TYPES = {int(T.TIMESTAMP): int(T.TIMESTAMP2), int(T.DATETIME): int(T.DATETIME2),
            int(T.TIME): int(T.TIME2)}

_U32 = 0xFFFFFFFF
#: a run of rows events rewritten in one compiled call (images.py) ends after this many
#: output bytes
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

    def entry(self, in_size: int) -> MapEntry:
        """Its line of the position map, the event having been ``in_size`` bytes in the input."""
        return MapEntry(self.in_offset, self.in_offset + in_size, self.out_offset,
                        self.out_offset + len(self.data))


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
    compiled: dict = field(default_factory=dict)   # present bitmap -> images.compiled_walk's


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
            if header.type_code in UNCOMPRESSED_TYPES and not self.options.keep_compressed:
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
        compressed = code in UNCOMPRESSED_TYPES
        if not table.legacy:
            if compressed and not self.options.keep_compressed:
                self.stats.uncompressed += 1
                return raw[HEADER_LEN:event.data_offset - event.offset] + event.data, UNCOMPRESSED_TYPES[code]
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
            return head + mariadb_compress(data), None
        if compressed:
            self.stats.uncompressed += 1
            return head + data, UNCOMPRESSED_TYPES[code]
        return head + data, None

    def _uncompressed_query(self, event: QueryEvent, raw: bytes):
        """QUERY_COMPRESSED: the post-header, status vars and db stay; the compressed
        statement text becomes the plain one (sql/log_event.cc Query_log_event ctor)."""
        base = HEADER_LEN
        post = self.fde.post_header(E.QUERY_COMPRESSED_EVENT, 13)
        _thread, _time, db_len, _error, status_len = QUERY_POST_HEADER.unpack_from(raw, base)
        status_len = status_len if post >= QUERY_POST_HEADER.size else 0
        text_at = base + post + status_len + db_len + 1
        self.stats.uncompressed += 1
        return raw[base:text_at] + event.raw_query, UNCOMPRESSED_TYPES[int(E.QUERY_COMPRESSED_EVENT)]

    # --- row images -------------------------------------------------------------------
    def _images(self, event: RowsEvent, table: _Table) -> bytes:
        plan = table.plan
        assert plan is not None
        if event.width != len(plan.columns):
            raise MalformedEventError(f"rows event has {event.width} columns, its TABLE_MAP "
                                      f"has {len(plan.columns)}", table=plan.qualified_name)
        compiled = self._compiled_walks(event, table)
        if compiled is not None:
            got = images.compiled_images(event, *compiled)
            if got is not None:
                data, values = got
                self.stats.values += values
                return data
        before = self._walk(table, event.present)
        after = self._walk(table, event.after_present) if event.kind == "update" else None
        if not before[0] and event.data and (after is None or not after[0]):
            raise MalformedEventError(f"{len(event.data)} bytes of rows data but no column is "
                                      f"present", table=plan.qualified_name)
        try:
            out, count = images.rewrite_images(event.data, before, after)
        except images.ImageError as failure:
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
            assert table.plan is not None
            walk = table.walks[present] = images.walk(table.plan, present)
        return walk

    # --- the compiled walk (binlog/_speedups_rewrite.c, through images.py) ------------------------
    def _compiled_walks(self, event: RowsEvent, table: _Table) -> tuple | None:
        """(walk, walk_after) of ``images.compiled_walk`` for ``event``'s images, None
        when a column has no compiled step or nothing is built."""
        if table.plan is None or event.width != len(table.plan.columns):
            return None
        before = self._compiled_walk(table, event.present)
        after = self._compiled_walk(table, event.after_present) if event.kind == "update" else before
        if before is None or after is None:
            return None
        return before, after

    def _compiled_walk(self, table: _Table, present: bytes):
        if present not in table.compiled:
            table.compiled[present] = images.compiled_walk(self._walk(table, present))
        return table.compiled[present]

    def _register(self, event: RowsEvent, table: _Table | None) -> None:
        """Let ``run`` write the next events like ``event`` (just written) by length."""
        code = event.header.type_code
        if code not in COUNT_RUN_CODES or images.rewrite_run() is None:
            return
        entry = None
        if table is not None:
            entry = self._compiled_walks(event, table)
            if entry is None:
                return
        key = count_key(code, event.width, event.present,
                        event.after_present if event.kind == "update" else None)
        self.run_entries.setdefault(event.table_id, {})[key] = entry

    def run_args(self) -> tuple | None:
        """(``_speedups.rewrite_run``, the registered entries, the output position, the
        output bound) for the stream's runs of rows events (``stream_runs.RunModes.rewriter``):
        the events like ones this rewriter rewrote, written in one compiled call with their
        map lines; None while there is nothing to take (nothing registered, nothing built,
        a resumed run still replaying its first events through ``event``)."""
        rewrite = images.rewrite_run()
        if not self.run_entries or self.resume_after >= 0 or rewrite is None:
            return None
        return rewrite, self.run_entries, self.out_pos, RUN_OUTPUT

    def took(self, run: RewrittenRun) -> None:
        """A run the stream rewrote from ``run_args``: the output moves on, counted."""
        self.out_pos = run.out_pos
        self.stats.events += run.events
        self.stats.changed += run.changed
        self.stats.rows_events += run.rows_events
        self.stats.values += run.values
        self._after_gtid = False        # as _track_group takes a rows event

    # --- framing ----------------------------------------------------------------------
    def _frame(self, raw: bytes, header, body: bytes | None, type_code: int | None) -> bytes:
        """The event as written at ``self.out_pos``: the input's bytes when nothing
        moved, else a new header (size, log_pos, type) and checksum."""
        checksum = self.fde.checksum_len
        if header.type_code == E.FORMAT_DESCRIPTION_EVENT:
            checksum = CHECKSUM_LEN if self.fde.checksum_alg == CHECKSUM_CRC32 else 0
        if body is None:
            if self.out_pos == header.offset:
                return raw
            body = raw[HEADER_LEN:len(raw) - checksum]
        log_pos = header.log_pos
        if log_pos:
            size = HEADER_LEN + len(body) + checksum
            log_pos = (log_pos + self.out_pos + size - header.offset - header.event_size) & _U32
        return frame_event(type_code if type_code is not None else header.type_code, body,
                           checksum=bool(checksum), timestamp=header.timestamp,
                           server_id=header.server_id, log_pos=log_pos, flags=header.flags)


_DROP = b"\0drop"     # a body sentinel: the event is not written


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


class StreamRewriter:
    """Bytes of one binlog in (``feed``, ``close``), rewritten events out (``next``
    returns a ``Rewritten`` or ``NEED_DATA``): a growing relay can be fed as it grows.
    The output is the magic (``BINLOG_MAGIC``, 4 bytes) then the events, in order."""

    def __init__(self, name: str, *, schema: Any = None, options: RewriteOptions | None = None,
                 keys: Any = None, verify_checksums: bool = True, resume_after: int = -1,
                 resume_out: int = 4):
        self.stream = EventStream(name, verify_checksums=verify_checksums, keys=keys, keep_raw=True)
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


