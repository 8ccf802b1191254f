"""Row changes from binlog files: events joined with their TABLE_MAPs and decoded.

``BinlogReader(paths, ...).items()`` yields every event (``SourceEvent``) and, after
each rows event, its ``RowChange``s; ``changes()`` yields only the row changes.
Position and time filters follow mysqlbinlog: ``start_position`` applies to the first
file and ``stop_position`` to the last; events before ``start_datetime`` are skipped and
reading stops at the first event at or after ``stop_datetime``.
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Iterator, Protocol

from .column import CHARACTER_TYPES
from .constants import LEGACY_TEMPORAL_TYPES, MAX_EVENT_SIZE, EventType, event_type_name
from .continuity import Continuity
from .errors import (
    BinlogError,
    GapError,
    IncompleteEventError,
    MalformedEventError,
    MissingTableMapError,
    PrecisionUnknownError,
    UsageError,
)
from .events import (
    FormatDescriptionEvent,
    GtidListEvent,
    IntvarEvent,
    MariaGtidEvent,
    MysqlGtidEvent,
    PreviousGtidsEvent,
    QueryEvent,
    RandEvent,
    RowsEvent,
    TableMapEvent,
    UnknownEvent,
    UserVarEvent,
    XidEvent,
)
from .events.base import Event, SkippedRowsEvent
from .events.query import BEGIN, COMMIT, ROLLBACK, XA_START, transaction_control
from .events.status_vars import statement_text
from .gtids import GtidWindow, mysql_sid
from .header import FormatDescription
from .infer import infer_precisions, unknown_legacy_columns
from .reader_options import ReaderHooks, ReaderOptions, assumed_codec
from .rows import DecodePlan, EncodedRows, build_plan, count_rows, count_walk, decode_rows
from .scan import COUNT_RUN_CODES, count_key
from .sources.base import BinlogSource, Heartbeat, ReadState, read_events
from .sources.file import FileSource
from .statements import CONTROL, DDL, classify_query, statement_kept
from .stream import Damage, EventStream
from .stream_runs import RUN_OUTPUT, CountedRun, EncodedRun, RunModes, SkippedRun
from .types.strings import LARGE_VIEWS
from .watermarks import Watermark, Watermarks

# Events written when a file is opened or closed carry that moment, not a transaction's:
# like mysqlbinlog, the datetime filters do not stop on them.
FILE_HEADER_EVENTS = frozenset({EventType.FORMAT_DESCRIPTION_EVENT, EventType.ROTATE_EVENT,
                                EventType.GTID_LIST_EVENT, EventType.BINLOG_CHECKPOINT_EVENT,
                                EventType.PREVIOUS_GTIDS_LOG_EVENT, EventType.STOP_EVENT})


@dataclass(slots=True)
class RowsEventHead:
    """Where a rows event is and what it changes: the fields RowChange, RowCount and
    RowBatch begin with, in this order."""
    file: str
    pos: int
    ts: int
    server_id: int
    gtid: str | None
    db: str
    table: str
    op: str


@dataclass(slots=True)
class RowChange(RowsEventHead):
    before: dict | None
    after: dict | None
    plan: DecodePlan
    row: int = 0            # the row's index inside its rows event (file+pos is the event's)


@dataclass(slots=True)
class RowCount(RowsEventHead):
    """The rows of one rows event, counted, not decoded (``ReaderOptions.count_rows``:
    ``binlog stats``): given out instead of the event's ``RowChange``s."""
    count: int


@dataclass(slots=True)
class CountedRows:
    """A run of rows events counted in one go (``ReaderOptions.count_runs``: ``binlog
    stats``), given out instead of their SourceEvents and RowCounts: ``counts``, the
    RowCount of each event in order (``count`` 0 included), ``sizes`` their event sizes."""
    file: str
    counts: list
    sizes: list
    raw: bytes | None = None    # the events' bytes, back to back (``ReaderOptions.keep_raw``)


@dataclass(slots=True)
class RowBatch(RowsEventHead):
    """The row changes of one rows event at once (``records(batches=True)``): the fields
    each of its ``RowChange``s would repeat, once, and ``rows``: [(before, after), ...]
    in the event's order (row i is the RowChange with ``row = i``)."""
    rows: list
    plan: DecodePlan

    def changes(self) -> Iterator[RowChange]:
        for index, (before, after) in enumerate(self.rows):
            yield RowChange(self.file, self.pos, self.ts, self.server_id, self.gtid, self.db,
                            self.table, self.op, before, after, self.plan, index)


@dataclass(slots=True)
class StatementChange:
    """A QUERY event that is not transaction control: a statement-logged change
    (``op="statement"``: binlog_format STATEMENT/MIXED, LOAD DATA, GRANT...) or DDL
    (``op="ddl"``), with the session context it ran in: the status vars
    (``session``, binlog.events.status_vars.SessionContext) and the INTVAR, RAND and
    USER_VAR events logged before it (``context``, in order).  ``schema``: for DDL, the
    schema version of each table it names right after it (None: unknown)."""
    file: str
    pos: int
    end: int                # the byte after the event
    ts: int
    server_id: int
    gtid: str | None
    db: str | None
    op: str
    sql: str
    query_event: object     # the QueryEvent (raw_query: the statement's bytes); not
                            # ``event``: what has an ``event`` is a SourceEvent
    session: object
    context: list
    schema: list | None = None
    sql_exact: bool = True  # False: ``sql`` had bytes invalid in the client charset (replaced)
    mariadb: bool = False   # written by MariaDB (the FDE's server version)

    @property
    def table(self) -> str | None:
        return self.schema[0]["table"] if self.schema else None


@dataclass(slots=True)
class SourceEvent:
    file: str
    event: Event
    raw: bytes | None = None    # the event's bytes as framed (``ReaderOptions.keep_raw``)


@dataclass
class ReadStats:
    events: Counter = field(default_factory=Counter)
    rows: Counter = field(default_factory=Counter)
    unknown: list = field(default_factory=list)
    files: int = 0
    bytes: int = 0
    skipped_events: int = 0     # rows events of filtered tables, never decoded
    skipped_bytes: int = 0
    damage: list = field(default_factory=list)     # stream.Damage, in reading order (skip mode)
    incomplete: IncompleteEventError | None = None  # the last file ends inside this event
    unknown_charset_columns: int = 0    # text columns given as raw bytes (charset unknown)

    @property
    def damaged_bytes(self) -> int:
        return sum(d.size for d in self.damage)


class RunWriter(Protocol):
    """A writer whose rows the stream writes itself, a run of like rows events in one
    compiled call (``scan``'s encode walk): the line head ``run_parts(change, event)`` gives
    per (table, event shape), ``run_tail`` between rows, ``run_flags`` for the encoder;
    an attribute ``run_output`` (bytes after which a run ends) may replace RUN_OUTPUT."""

    run_tail: bytes

    @property
    def run_flags(self) -> int: ...

    def run_parts(self, change: RowChange, event: RowsEvent) -> tuple | None: ...


_OPTION_NAMES = frozenset(f.name for f in fields(ReaderOptions))
_HOOK_NAMES = frozenset(f.name for f in fields(ReaderHooks))


class BinlogReader:
    def __init__(self, source: BinlogSource | Iterable[str | os.PathLike],
                 options: ReaderOptions | None = None, *, schema: Any = None,
                 hooks: ReaderHooks | None = None, **settings: Any):
        """``source``: a ``sources.BinlogSource``, or file and directory paths (read
        by a ``sources.file.FileSource``).  ``options``: a ``ReaderOptions``; or give
        its fields (and ``ReaderHooks``'s) as keyword arguments instead.

        ``schema``: an object with ``attributes(table_map, position)`` giving, per
        column index, what the binlog lacks (precision of legacy temporals, names,
        signedness, charsets, labels), and optionally ``observe_query(event, position)``
        (DDL tracking) and ``record_inferred(db, table, {index: N}, position)``; see
        schema_store.resolver.  Positions are (binlog name, event offset).

        Damage (``on_error``): "fail" raises the first error.  "skip" reports each
        damaged event (``on_damage(Damage)``, and ``stats.damage``) and reads on: the
        stream resynchronises after a damaged header, and an event whose rows cannot be
        decoded is skipped whole.  After damage the TABLE_MAPs seen so far are forgotten
        (unless only a rows event was lost) and so is the GTID, unless the damage lies
        inside a transaction, so a row is never joined to a map or GTID it may not
        belong to.

        The last binlog ending inside an event (a file still being written) is not an
        error: reading stops cleanly before it and ``stats.incomplete`` holds the
        ``IncompleteEventError`` naming where it starts.  With ``follow``, the reader
        waits for the last file to grow instead (polling every ``poll_interval``
        seconds), and goes on to the next file after a ROTATE; ``follow_timeout``
        seconds without new data end the wait (None: wait forever); ``on_idle()`` is
        called before each wait."""
        options, hooks = _settings(options, hooks, settings)
        self.options = options
        self.hooks = hooks
        # The output's fast paths (set_output_paths): row_encoder, rows_hook, run_writer.
        self.row_encoder: Callable[[RowChange, RowsEvent], EncodedRows | None] | None = None
        self.rows_hook: Callable[[str, RowsEvent, DecodePlan], None] | None = None
        self.run_writer: RunWriter | None = None
        self.source = source if isinstance(source, BinlogSource) else FileSource(
            source, follow=options.follow, follow_timeout=options.follow_timeout,
            poll_interval=options.poll_interval, on_idle=hooks.on_idle,
            allow_gaps=options.allow_gaps, on_warning=hooks.on_warning)
        self.schema = schema
        table_filter = options.table_filter
        self.table_filter = table_filter if table_filter is not None and table_filter.active else None
        self.stats = ReadStats()
        self.gtid_window = GtidWindow(options.start_gtid, options.stop_gtid,
                                      allow_gaps=options.allow_gaps, on_warning=hooks.on_warning)
        self.continuity = Continuity(allow_gaps=options.allow_gaps, on_warning=hooks.on_warning)
        self._plans: dict[tuple, DecodePlan] = {}
        self._column_keys: dict[int, tuple] = {}   # id(TABLE_MAP columns) -> (them, their key)
        self._inferred: dict[tuple, dict[int, int]] = {}
        self._charset_warned: set[tuple] = set()
        self._batches = False            # items(batches=): RowBatch per rows event
        self.watermarks: Watermarks | None = None
        if options.watermark_interval is not None:
            self.watermarks = Watermarks(options.watermark_interval, options.start_gtid)
            self.source.report_heartbeats()

    def set_output_paths(self, *,
                         row_encoder: Callable[[RowChange, RowsEvent], EncodedRows | None] | None = None,
                         rows_hook: Callable[[str, RowsEvent, DecodePlan], None] | None = None,
                         run_writer: RunWriter | None = None) -> None:
        """The fast paths of the writer the items go to (``output.base.Writer``), set
        before reading:

        - ``row_encoder(change, event) -> rows.EncodedRows | None``: the batch path
          (binlog dump --format json|text|sql); the rows of an event it encodes are given
          out as one EncodedRows item instead of RowChanges;
        - ``rows_hook(name, event, plan)``: called with each rows event whose rows are
          given out as RowChanges, before them (SQL renders VALUES from its bytes,
          verify-rows computes checksums from them);
        - ``run_writer`` (with ``row_encoder``): a ``RunWriter`` (output.cdc.CdcJsonWriter):
          runs of rows events like ones it wrote are written by the stream in one
          compiled call and given out as one EncodedRows; no GTID window or
          --start-datetime."""
        self.row_encoder = row_encoder
        self.rows_hook = rows_hook
        self.run_writer = run_writer

    # The options as attributes, as callers of the keyword form have always read them.
    verify_checksums = property(lambda self: self.options.verify_checksums)
    start_position = property(lambda self: self.options.start_position)
    stop_position = property(lambda self: self.options.stop_position)
    start_datetime = property(lambda self: self.options.start_datetime)
    stop_datetime = property(lambda self: self.options.stop_datetime)
    tz = property(lambda self: self.options.tz)
    infer_precision = property(lambda self: self.options.infer_precision)
    on_error = property(lambda self: self.options.on_error)
    follow = property(lambda self: self.options.follow)
    on_unknown = property(lambda self: self.hooks.on_unknown)
    on_inferred = property(lambda self: self.hooks.on_inferred)
    on_damage = property(lambda self: self.hooks.on_damage)
    count_runs = property(lambda self: self.options.count_runs)
    keep_raw = property(lambda self: self.options.keep_raw)

    @property
    def files(self) -> list:
        """The files of a file source (empty for other sources)."""
        return getattr(self.source, "files", [])

    def changes(self) -> Iterator[RowChange]:
        """Row changes only (statement-logged changes and DDL are in ``records()``)."""
        for item in self.items():
            if isinstance(item, RowChange):
                yield item

    def records(self, *, batches: bool = False) -> Iterator:
        """Everything a change consumer needs, in binlog order: ``RowChange``s and
        ``StatementChange``s (statement-logged changes and DDL); with ``batches``, one
        ``RowBatch`` per rows event instead of its RowChanges (no object per row); with
        ``watermark_interval``, ``Watermark``s between transactions."""
        kinds = (RowBatch if batches else RowChange, StatementChange, Watermark)
        for item in self.items(statements=True, batches=batches):
            if isinstance(item, kinds):
                yield item

    def items(self, *, statements: bool = False, batches: bool = False) -> Iterator:
        """Every event given out (``SourceEvent``) and, after each rows event, its
        ``RowChange``s (with ``batches``: its ``RowBatch``), over all binlogs of the
        source; with ``statements``, after each QUERY event that is a statement-logged
        change or DDL its ``StatementChange``."""
        self._batches = batches
        if not statements:
            for item in self.items(statements=True, batches=batches):
                if not isinstance(item, StatementChange):
                    yield item
            return
        first = True
        # The next binlog is asked for only after this one was read: a source that
        # follows decides what comes next from its ROTATE.
        for binlog in self.source.binlogs():
            # the check between binlogs: does this one continue the previous one?
            self.continuity.next_binlog(binlog.name)
            with binlog:
                read = ReadState()
                start = binlog.start if binlog.start is not None else (
                    self.start_position if first else None)
                done = yield from self._read_file(binlog, start,
                                                  self.stop_position if binlog.last else None,
                                                  binlog.last, _FileState(), read)
            if done:
                return
            if read.rotated_to:
                self.source.rotated(read.rotated_to)
            self.continuity.end_binlog(binlog.name, read.rotated_to)
            first = False

    def _damaged(self, damage: Damage, state: "_FileState") -> None:
        """Record a skipped range and forget what it may have changed."""
        self.stats.damage.append(damage)
        if self.on_damage:
            self.on_damage(damage)
        if damage.no_event_lost:
            return          # bytes between two events that the log_pos chain links
        if not damage.may_be_rows_event:
            # It may have been a TABLE_MAP: rows events must not use an older map for its id.
            state.table_maps.clear()
            state.run_entries.clear()
            state.maps_lost_at = damage.start
        if not damage.one_event or not state.in_trx or damage.type_code in _GTID_TYPES:
            # It may have been the next transaction's GTID event.
            state.gtid = None
            state.in_trx = False
        if self.schema is not None and hasattr(self.schema, "observe_damage"):
            self.schema.observe_damage(damage, (damage.source, damage.start))

    def _read_file(self, binlog, start: int | None, stop: int | None, last: bool,
                   state: "_FileState", read: ReadState):
        name = binlog.name
        filtered: set[int] = set()       # table_ids whose TABLE_MAP the filter rejected
        self.stats.files += 1
        skip = filtered.__contains__ if self.table_filter else None
        plain = not self.gtid_window.active and self.start_datetime is None
        counting = self.options.count_runs and self.options.count_rows and plain
        encoding = self.run_writer is not None and self.row_encoder is not None and plain \
            and run_encoder() is not None
        runs = RunModes(skip_table_ids=filtered if self.table_filter else None,
                        stop_offset=-1 if stop is None else stop,
                        stop_ts=-1 if self.stop_datetime is None else self.stop_datetime,
                        count_walks=state.run_entries if counting else None,
                        encode_entries=state.run_entries if encoding else None)
        stream = EventStream(name, verify_checksums=self.verify_checksums, skip_rows=skip,
                             on_error=self.on_error, keys=self.options.keys,
                             keep_raw=self.options.keep_raw, runs=runs)
        events = read_events(binlog, stream, start_position=start,
                             follow=self.follow and last, state=read)
        seen = 0
        marks = self.watermarks
        try:
            while True:
                self._aim_skips(runs, state)        # before the stream reads the next event
                if encoding:
                    self._aim_runs(runs, state)
                event = next(events, None)
                if event is None:
                    break
                seen += 1
                if isinstance(event, Heartbeat):
                    mark = self._heartbeat(name, event, stream, state)
                    if mark is not None:
                        yield mark
                    continue
                if isinstance(event, Damage):
                    if stop is not None and event.start >= stop:
                        return True
                    self._damaged(event, state)
                    continue
                header = event.header
                if isinstance(event, SkippedRowsEvent):
                    self.stats.skipped_events += 1
                    self.stats.skipped_bytes += header.event_size
                    continue
                if isinstance(event, SkippedRun):
                    self._skipped_run(event)
                    continue
                if isinstance(event, CountedRun):
                    yield self._counted_run(name, event, state)
                    continue
                if isinstance(event, EncodedRun):
                    yield self._encoded_run(event, state)
                    continue
                if stop is not None and header.offset >= stop:
                    return True
                if (self.stop_datetime is not None and header.timestamp >= self.stop_datetime
                        and header.type_code not in FILE_HEADER_EVENTS):
                    return True
                if self.continuity.pending and header.type_code not in FILE_HEADER_EVENTS:
                    self.continuity.first_event()       # a name gap, no GTID_LIST came
                in_trx = state.in_trx
                try:
                    out = self._event(name, event, state, filtered)
                except (UsageError, GapError):
                    # not damage: an option does not fit the input; a gap (--allow-gaps)
                    raise
                except BinlogError as exc:
                    if isinstance(exc, MissingTableMapError):
                        exc.add_context(field_offset=header.offset + 19)    # its table_id
                        if state.maps_lost_at is not None:
                            exc.hint = f"its TABLE_MAP was lost to the damage at {state.maps_lost_at}"
                    exc.add_context(source=name, event_offset=header.offset,
                                    event_type=header.type_name, field_offset=header.offset)
                    if self.on_error == "fail":
                        raise
                    self._damaged(Damage(name, header.offset, header.end, exc,
                                         type_code=header.type_code), state)
                    continue
                if out is not None:
                    yield SourceEvent(name, event, stream.last_raw)
                    yield from out
                    if marks is not None:
                        if in_trx and not state.in_trx:     # the event ended a transaction
                            mark = marks.at_commit(name, header)
                            if mark is not None:
                                yield mark
                        elif header.type_code in _GTID_POSITION_TYPES:
                            marks.taken(event)
                if self.gtid_window.finished:
                    return True
            if not seen:
                # not even a FORMAT_DESCRIPTION: an empty file (or the magic alone, a
                # binlog the server just created) is not read silently as "no changes"
                raise IncompleteEventError("the binlog holds no event (empty, or only its "
                                           "magic number)", source=name, event_offset=0)
        except IncompleteEventError as exc:
            if last:
                # The file ends inside an event (still being written, or cut): a clean stop.
                self.stats.incomplete = exc
                return False
            if self.on_error == "fail":
                raise
            # the stream names where the incomplete event starts
            start = exc.event_offset if exc.event_offset is not None else 0
            end = binlog.size()
            self._damaged(Damage(name, start, end if end is not None else start, exc, to_end=True),
                          state)
        return False

    def _heartbeat(self, name: str, beat: Heartbeat, stream: EventStream,
                   state: "_FileState") -> Watermark | None:
        """A live server had nothing newer: a watermark where the reader stands, unless
        it stands inside a transaction or holds bytes of an event not given out yet."""
        if self.watermarks is None or state.in_trx or stream.buffered:
            return None
        return self.watermarks.at_heartbeat(name, beat, stream.offset)

    def _aim_skips(self, runs: RunModes, state: "_FileState") -> None:
        """Which rows events the stream may step over by length next, as ``_event``
        would take them in without giving anything out: every one inside an event group
        outside the GTID window, and those before --start-datetime (the table filter's
        are set once).  Not while the continuity check waits for the first event."""
        ready = not self.continuity.pending
        runs.skip_all_rows = (ready and state.group is not None and state.skip_group
                              and state.in_trx)
        start = self.start_datetime
        runs.skip_before_ts = start if ready and start is not None else -1

    def _skipped_run(self, run: SkippedRun) -> None:
        """Count a run of rows events stepped over: the filtered tables' as skipped,
        the others as events read (as ``_event`` counted them when they were decoded)."""
        self.stats.skipped_events += run.filtered_events
        self.stats.skipped_bytes += run.filtered_bytes
        for code, n in run.counted.items():
            self.stats.events[event_type_name(code)] += n
        self.stats.bytes += run.counted_bytes

    def _counted_run(self, name: str, run: CountedRun, state: "_FileState") -> CountedRows:
        """The events of a run the stream counted, taken in as ``_event`` takes a rows
        event it counts (stats, table maps) and given out as one CountedRows."""
        counts, sizes = [], []
        stats, table_maps, gtid = self.stats, state.table_maps, state.gtid
        codes: dict[int, int] = {}
        tables: dict[int, int] = {}
        for at, code, table_id, rows, size, ts, server_id in run.events:
            codes[code] = codes.get(code, 0) + 1
            tables[table_id] = tables.get(table_id, 0) + rows
            plan = table_maps[table_id][1]      # run_entries only holds mapped tables
            counts.append(RowCount(name, at, ts, server_id, gtid, plan.db, plan.table,
                                   _RUN_OPS[code], rows))
            sizes.append(size)
        for code, n in codes.items():
            stats.events[event_type_name(code)] += n
        for table_id, rows in tables.items():
            stats.rows[table_maps[table_id][1].qualified_name] += rows
        stats.bytes += sum(sizes)
        return CountedRows(name, counts, sizes, run.raw)

    def _aim_runs(self, runs: RunModes, state: "_FileState") -> None:
        """The entries of encoded runs hold the transaction's GTID (in each row's head):
        a new transaction (or damage) starts them anew."""
        if state.runs_gtid != state.gtid:
            state.run_entries.clear()
            state.runs_gtid = state.gtid
        writer = self.run_writer
        if runs.encode_args is None and state.run_prefix is not None and writer is not None:
            runs.encode_args = (run_encoder(), state.run_prefix, writer.run_tail,
                                writer.run_flags, _run_max_event(),
                                getattr(writer, "run_output", RUN_OUTPUT))

    def _register_run_entry(self, state: "_FileState", head: RowChange, event: RowsEvent) -> None:
        """Let the stream write the next events like ``event`` (just written by the row
        encoder) itself."""
        code, writer = event.header.type_code, self.run_writer
        if code not in _RUN_OPS or state.runs_gtid != state.gtid or writer is None:
            return
        parts = writer.run_parts(head, event)
        if parts is not None:
            state.run_prefix = parts[0]
            key = count_key(code, event.width, event.present, event.present_after)
            state.run_entries.setdefault(event.table_id, {})[key] = parts[1]

    def _encoded_run(self, run: EncodedRun, state: "_FileState") -> EncodedRows:
        """The events of a run the stream wrote, taken in as ``_event`` takes a rows event
        the row encoder writes (stats), given out as one EncodedRows."""
        stats, table_maps = self.stats, state.table_maps
        for _at, code, table_id, rows, size, *_ in run.events:
            stats.events[event_type_name(code)] += 1
            stats.bytes += size
            stats.rows[table_maps[table_id][1].qualified_name] += rows
        return EncodedRows(None, run.data, run.last_start, run.rows, events=run.events)

    def _event(self, name: str, event, state: "_FileState", filtered: set):
        """Take one event in: None when it is not given out, else the row changes
        that follow it (all decoded before anything of the event is given out)."""
        header = event.header
        table_maps = state.table_maps
        self.stats.events[event.type_name] += 1
        self.stats.bytes += header.event_size
        if isinstance(event, FormatDescriptionEvent):
            state.fde = event.fde
            table_maps.clear()
            state.run_entries.clear()
        elif isinstance(event, GtidListEvent):
            self.continuity.gtid_list(event.gtids)
        elif isinstance(event, PreviousGtidsEvent):
            if self.gtid_window.active:
                self._previous_gtids(name, event)
        elif isinstance(event, (MariaGtidEvent, MysqlGtidEvent)):
            state.gtid = event.gtid
            if isinstance(event, MariaGtidEvent):
                self.continuity.gtid(event.domain_id, event.seq_no)
            state.in_trx = True
            state.saw_begin = isinstance(event, MariaGtidEvent) and not event.standalone
            if self.gtid_window.active:
                self._enter_group(event, state)
        elif isinstance(event, TableMapEvent):
            state.run_entries.pop(event.table_id, None)     # a new layout: walks anew
            if self.table_filter and not self.table_filter.keeps(event.db, event.table):
                filtered.add(event.table_id)
                table_maps.pop(event.table_id, None)
                return None
            filtered.discard(event.table_id)
            table_maps[event.table_id] = (event, None)
        elif isinstance(event, QueryEvent):
            _track_transaction(state, event)
            if self.schema is not None:
                self.schema.observe_query(event, (name, header.offset))
            context, state.context = state.context, []
        elif isinstance(event, (IntvarEvent, RandEvent, UserVarEvent)):
            state.context.append(event)     # the session context of the next statement
        elif isinstance(event, XidEvent):
            state.in_trx = False
        elif isinstance(event, UnknownEvent):
            self.stats.unknown.append((name, header.offset, header.type_code, header.event_size))
            if self.on_unknown:
                self.on_unknown(name, event)
        if state.group is not None and not self._group_selected(state, state.group):
            return None
        if self.start_datetime is not None and header.timestamp < self.start_datetime:
            return None
        if isinstance(event, RowsEvent):
            return list(self._changes(name, event, table_maps, state.gtid, state.fde, state))
        if isinstance(event, QueryEvent):
            return self._statement(name, event, state, context)
        return ()

    def _enter_group(self, event, state: "_FileState") -> None:
        """A GTID event: is its group inside --start-gtid/--stop-gtid?"""
        window = self.gtid_window
        if isinstance(event, MariaGtidEvent):
            if window.kind != "mariadb":
                raise UsageError("--start-gtid/--stop-gtid were given as MySQL GTID sets "
                                 "(uuid:interval); this binlog has MariaDB GTIDs",
                                 hint="give domain-server-seq lists, e.g. 0-1-100")
            state.group = (event.domain_id, event.seq_no)
        else:
            if window.kind != "mysql":
                raise UsageError("--start-gtid/--stop-gtid were given as MariaDB GTID lists "
                                 "(domain-server-seq); this binlog has MySQL GTIDs",
                                 hint="give a MySQL GTID set, e.g. "
                                      f"{event.sid or '<uuid>'}:1-5")
            key = None if event.anonymous else mysql_sid(event.sid, event.tag)
            state.group = (key, event.gno)
        state.skip_group = not window.accepts(*state.group)

    def _previous_gtids(self, name: str, event: PreviousGtidsEvent) -> None:
        """The GTIDs written before this binlog, against a MySQL --start-gtid set."""
        try:
            self.gtid_window.previous_gtids(event.gtid_set, name)
        except UsageError as exc:
            # the set the event holds did not parse: the event is damaged, not the options
            raise MalformedEventError(f"PREVIOUS_GTIDS holds an unreadable GTID set "
                                      f"({exc})") from None

    def _group_selected(self, state: "_FileState", group: tuple[Any, int]) -> bool:
        """Whether the event just taken in (a GTID window is set) is given out; notes
        the end of its event group."""
        keep = not state.skip_group
        if not state.in_trx:            # the event ended its group
            self.gtid_window.group_ended(*group)
            state.group = None
            state.skip_group = False
        return keep

    def _statement(self, name, event: QueryEvent, state: "_FileState", context: list):
        """() for transaction control (BEGIN, COMMIT, XA...), else the statement's record."""
        kind = classify_query(event.query)
        if kind == CONTROL:
            return ()
        if not statement_kept(event.query, event.db, self.table_filter, dml=kind != DDL):
            return ()
        h = event.header
        try:
            session = event.session()
        except BinlogError as exc:
            raise exc.add_context(field_offset=event.status_offset) from None
        schema = None
        if kind == DDL and self.schema is not None and hasattr(self.schema, "schemas_after"):
            schema = self.schema.schemas_after(event, (name, h.offset))
        op = "ddl" if kind == DDL else "statement"
        sql, exact = statement_text(event.raw_query, session)
        return [StatementChange(name, h.offset, h.offset + h.event_size, h.timestamp, h.server_id,
                                state.gtid, event.db or None, op, sql, event, session, context, schema,
                                exact, state.fde is not None and state.fde.is_mariadb)]

    def _changes(self, name, event: RowsEvent, table_maps, gtid, fde, state=None):
        entry = table_maps.get(event.table_id)
        if entry is None:
            raise MissingTableMapError(
                f"rows event for table_id {event.table_id} has no TABLE_MAP before it",
                source=name, event_offset=event.offset, event_type=event.type_name,
                hint="start reading at the transaction's start (its GTID or BEGIN), not inside it")
        table_map, plan = entry
        if plan is None:
            plan = self._plan(table_map, fde, (name, table_map.offset))
            table_maps[event.table_id] = (table_map, plan)
        header = event.header
        decode_table = self.hooks.decode_table
        counting = self.options.count_rows and not (
            decode_table is not None and decode_table(table_map, fde))
        decode: Callable[[RowsEvent, DecodePlan], Any] = count_rows if counting else decode_rows
        if self.row_encoder is not None:
            # the batch path: the writer's encoder gives all rows as output bytes, or None
            head = RowChange(name, header.offset, header.timestamp, header.server_id, gtid,
                             plan.db, plan.table, event.kind, None, None, plan)
            encoded = self.row_encoder(head, event)
            if encoded is not None:
                self.stats.rows[plan.qualified_name] += encoded.count
                if self.run_writer is not None and state is not None:
                    self._register_run_entry(state, head, event)
                yield encoded
                return
        try:
            # The whole event is decoded before any of its rows is given out: a row is
            # only trusted once the event's bytes were consumed exactly.
            try:
                rows = decode(event, plan)
            except PrecisionUnknownError:
                if not (self.infer_precision and unknown_legacy_columns(plan)):
                    raise
                plan = self._infer(name, event, table_map, plan, fde)
                table_maps[event.table_id] = (table_map, plan)
                rows = decode(event, plan)
        except BinlogError as exc:
            exc.add_context(source=name)
            raise
        if isinstance(rows, int):
            self.stats.rows[plan.qualified_name] += rows
            if self.options.count_runs and state is not None:
                _register_count_walk(state.run_entries, event, plan)
            if rows:
                yield RowCount(name, header.offset, header.timestamp, header.server_id, gtid,
                               plan.db, plan.table, event.kind, rows)
            return
        self.stats.rows[plan.qualified_name] += len(rows)
        if self._batches:
            if rows:
                yield RowBatch(name, header.offset, header.timestamp, header.server_id, gtid,
                               plan.db, plan.table, event.kind, rows, plan)
            return
        if self.rows_hook is not None:
            self.rows_hook(name, event, plan)
        for index, (before, after) in enumerate(rows):
            yield RowChange(name, header.offset, header.timestamp, header.server_id, gtid,
                            plan.db, plan.table, event.kind, before, after, plan, index)

    def _infer(self, name, event, table_map, plan, fde) -> DecodePlan:
        found = infer_precisions(event, plan)
        key = (table_map.db, table_map.table, table_map.layout_key())
        self._inferred.setdefault(key, {}).update(found)
        if self.schema is not None and hasattr(self.schema, "record_inferred"):
            types = {i: LEGACY_TEMPORAL_TYPES[plan.columns[i].type] for i in found}
            # Kept from the TABLE_MAP's position on: that is where the next run looks it up.
            self.schema.record_inferred(table_map.db, table_map.table, found, (name, table_map.offset),
                                        types=types)
        if self.on_inferred:
            self.on_inferred(name, event.offset, plan, found)
        return self._plan(table_map, fde, (name, table_map.offset))

    def _plan(self, table_map: TableMapEvent, fde, position) -> DecodePlan:
        known_zero = not (fde.writes_legacy_hires if fde is not None else True)
        mariadb = fde is not None and fde.is_mariadb
        attributes: dict = {}
        if self.schema is not None:
            attributes = self.schema.attributes(table_map, position) or {}
        inferred = self._inferred.get((table_map.db, table_map.table, table_map.layout_key()), {})
        for index, n in inferred.items():
            attributes.setdefault(index, {}).setdefault("precision", n)
        if self.options.assume_charset:
            _assume_charset(table_map, attributes, assumed_codec(self.options.assume_charset))
        key = (table_map.db, table_map.table, known_zero, mariadb, self._columns_key(table_map.columns),
               tuple(sorted((i, tuple(sorted(a.items()))) for i, a in attributes.items())))
        plan = self._plans.get(key)
        if plan is None:
            plan = build_plan(table_map, legacy_precision_known_zero=known_zero, tz=self.tz,
                              schema=attributes, ts_offset=self.options.timestamp_offset, mariadb=mariadb)
            self._plans[key] = plan
            self._warn_unknown_charsets(plan)
        return plan

    def _columns_key(self, columns) -> tuple:
        """What of a TABLE_MAP's columns a plan depends on; remembered for the list
        itself, which the stream shares between the repeats of one TABLE_MAP."""
        hit = self._column_keys.get(id(columns))
        if hit is not None and hit[0] is columns:
            return hit[1]
        key = tuple((c.binlog_type, c.meta, c.unsigned, c.collation, c.name, c.enum_values,
                     c.set_values, c.nullable, c.geometry_type) for c in columns)
        if len(self._column_keys) >= 1024:
            self._column_keys.clear()
        self._column_keys[id(columns)] = (columns, key)
        return key

    def _warn_unknown_charsets(self, plan: DecodePlan) -> None:
        for col in plan.columns:
            where = (plan.db, plan.table, col.index)
            if not col.charset_unknown or where in self._charset_warned:
                continue
            self._charset_warned.add(where)
            self.stats.unknown_charset_columns += 1
            if self.hooks.on_warning:
                self.hooks.on_warning(
                    f"{plan.qualified_name} column {col.label}: neither the binlog nor the "
                    f"schema gives its charset; its values are raw bytes "
                    f'({{"bytes_hex": ...}}). Give the schema (--schema-ddl DUMP, '
                    f"--schema-from DSN) or --assume-charset CHARSET")


_GTID_TYPES = frozenset({EventType.GTID_EVENT, EventType.GTID_LOG_EVENT,
                         EventType.ANONYMOUS_GTID_LOG_EVENT, EventType.GTID_TAGGED_LOG_EVENT})
# the events that move the watermarks' GTID position (Watermarks.taken)
_GTID_POSITION_TYPES = _GTID_TYPES | {EventType.GTID_LIST_EVENT}


@dataclass
class _FileState:
    """What reading one file has established so far (reset by damage where needed)."""
    table_maps: dict = field(default_factory=dict)   # table_id -> (TableMapEvent, plan|None)
    # what runs of like rows events need, {table_id: {scan.count_key: ...}}: counting
    # walks (RunModes.count_walks, count_runs) or encoder entries (.encode_entries)
    run_entries: dict = field(default_factory=dict)
    runs_gtid: str | None = None    # the GTID the encode entries were made in
    run_prefix: bytes | None = None  # the records' head up to the offset (the file)
    gtid: str | None = None
    fde: FormatDescription | None = None
    in_trx: bool = False        # between a GTID event and the end of its transaction
    saw_begin: bool = False     # the transaction is an explicit one (BEGIN ... COMMIT)
    maps_lost_at: int | None = None
    # (domain, seq_no) or (MySQL sid, gno) of the event group, with a GTID window
    group: tuple[Any, int] | None = None
    skip_group: bool = False                # that group lies outside the window
    context: list = field(default_factory=list)   # INTVAR/RAND/USER_VAR before a statement


# rows type codes -> RowCount.op, for the events of runs (scan.COUNT_RUN_CODES)
_RUN_OPS = {code: ("insert", "update", "delete")[kind] for code, (kind, _v2) in COUNT_RUN_CODES.items()}


def run_encoder() -> Callable[..., Any] | None:
    """rows._speedups.encode_run, or None (pure Python)."""
    from . import rows

    return getattr(rows._speedups, "encode_run", None) if rows._speedups is not None else None


def _run_max_event() -> int:
    """The largest event an encoded run takes: below LARGE_VIEWS' size (a larger one may
    hold a value the writers write in pieces: rows.large_event)."""
    threshold = LARGE_VIEWS.get()
    return MAX_EVENT_SIZE if threshold is None else threshold - 1


def _register_count_walk(run_entries: dict, event: RowsEvent, plan: DecodePlan) -> None:
    """Let the stream count the next events like ``event`` (same table_id, type, columns
    and bitmaps) itself: ``event`` was just counted along this walk."""
    code = event.header.type_code
    if code not in _RUN_OPS:
        return
    walk = count_walk(event, plan)
    if walk is not None:
        key = count_key(code, event.width, event.present, event.present_after)
        run_entries.setdefault(event.table_id, {})[key] = walk


def _assume_charset(table_map, attributes: dict, codec: str) -> None:
    """Text columns whose charset neither the TABLE_MAP nor the schema gives: decode them
    with the codec the user named."""
    for col in table_map.columns:
        given = attributes.get(col.index, {})
        if (col.type in CHARACTER_TYPES and given.get("collation", col.collation) is None
                and given.get("encoding", col.encoding) is None):
            attributes.setdefault(col.index, {})["encoding"] = codec


def _track_transaction(state: _FileState, event: QueryEvent) -> None:
    """Where a transaction ends: COMMIT/ROLLBACK of an explicit one, or the statement
    itself after a GTID without BEGIN (DDL)."""
    control = transaction_control(event.query)
    if control in (BEGIN, XA_START):
        state.saw_begin = True
    elif not state.saw_begin or control in (COMMIT, ROLLBACK):
        state.in_trx = False


def _settings(options: ReaderOptions | None, hooks: ReaderHooks | None,
              settings: dict) -> tuple[ReaderOptions, ReaderHooks]:
    """The reader's options and hooks, from the objects or from keyword arguments."""
    unknown = set(settings) - _OPTION_NAMES - _HOOK_NAMES
    if unknown:
        raise TypeError(f"BinlogReader: unknown argument(s) {', '.join(sorted(unknown))}")
    given = {k: v for k, v in settings.items() if k in _OPTION_NAMES}
    if options is not None and given:
        raise UsageError("BinlogReader: give either options= or its fields as keyword arguments")
    hook_args = {k: v for k, v in settings.items() if k in _HOOK_NAMES}
    if hooks is not None and hook_args:
        raise UsageError("BinlogReader: give either hooks= or the callbacks as keyword arguments")
    return options or ReaderOptions(**given), hooks or ReaderHooks(**hook_args)
