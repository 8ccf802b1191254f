"""Row changes from binlog files: events joined with their TABLE_MAPs and decoded.

``BinlogReader(paths, ...).items()`` yields every event (``SourceEvent``) and, after
each rows event, its ``RowChange``s; ``changes()`` yields only the row changes.
Position and time filters follow mysqlbinlog: ``start_position`` applies to the first
file and ``stop_position`` to the last; events before ``start_datetime`` are skipped and
reading stops at the first event at or after ``stop_datetime``.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from .constants import EventType
from .errors import BinlogError, MissingTableMapError, PrecisionUnknownError
from .events.base import SkippedRowsEvent
from .events import (FormatDescriptionEvent, MariaGtidEvent, MysqlGtidEvent, QueryEvent,
                     RowsEvent, TableMapEvent, UnknownEvent)
from .infer import infer_precisions, unknown_legacy_columns
from .rows import DecodePlan, build_plan, decode_rows
from .sources.file import expand_paths, read_events


# Events written when a file is opened or closed carry that moment, not a transaction's:
# like mysqlbinlog, the datetime filters do not stop on them.
FILE_HEADER_EVENTS = frozenset({EventType.FORMAT_DESCRIPTION_EVENT, EventType.ROTATE_EVENT,
                                EventType.GTID_LIST_EVENT, EventType.BINLOG_CHECKPOINT_EVENT,
                                EventType.PREVIOUS_GTIDS_LOG_EVENT, EventType.STOP_EVENT})


_TEMPORAL_NAMES = {7: "timestamp", 12: "datetime", 11: "time"}


@dataclass(slots=True)
class RowChange:
    file: str
    pos: int
    ts: int
    server_id: int
    gtid: str | None
    db: str
    table: str
    op: str
    before: dict | None
    after: dict | None
    plan: DecodePlan


@dataclass(slots=True)
class SourceEvent:
    file: str
    event: object


@dataclass
class ReadStats:
    events: Counter = field(default_factory=Counter)
    rows: Counter = field(default_factory=Counter)
    unknown: list = field(default_factory=list)
    files: int = 0
    bytes: int = 0
    skipped_events: int = 0     # rows events of filtered tables, never decoded
    skipped_bytes: int = 0


class BinlogReader:
    def __init__(self, paths, *, verify_checksums: bool = True, start_position: int | None = None,
                 stop_position: int | None = None, start_datetime: int | None = None,
                 stop_datetime: int | None = None, tz=None,
                 on_unknown: Callable[[str, UnknownEvent], None] | None = None,
                 schema=None, infer_precision: bool = False, table_filter=None,
                 on_inferred: Callable[[str, int, DecodePlan, dict], None] | None = None):
        """``schema``: an object with ``attributes(table_map, position)`` giving, per
        column index, what the binlog lacks (precision of legacy temporals, names,
        signedness, charsets, labels), and optionally ``observe_query(event, position)``
        (DDL tracking) and ``record_inferred(db, table, {index: N}, position)``; see
        schema_store.resolver.  Positions are (file name, event offset)."""
        self.files = expand_paths(paths)
        self.verify_checksums = verify_checksums
        self.start_position = start_position
        self.stop_position = stop_position
        self.start_datetime = start_datetime
        self.stop_datetime = stop_datetime
        self.tz = tz
        self.on_unknown = on_unknown
        self.schema = schema
        self.infer_precision = infer_precision
        self.on_inferred = on_inferred
        self.table_filter = table_filter if table_filter is not None and table_filter.active else None
        self.stats = ReadStats()
        self._plans: dict[tuple, DecodePlan] = {}
        self._inferred: dict[tuple, dict[int, int]] = {}

    def changes(self) -> Iterator[RowChange]:
        for item in self.items():
            if isinstance(item, RowChange):
                yield item

    def items(self) -> Iterator:
        for number, path in enumerate(self.files):
            first, last = number == 0, number == len(self.files) - 1
            done = yield from self._read_file(path, self.start_position if first else None,
                                              self.stop_position if last else None)
            if done:
                return

    def _read_file(self, path: Path, start: int | None, stop: int | None):
        name = path.name
        table_maps: dict[int, tuple[TableMapEvent, DecodePlan | None]] = {}
        filtered: set[int] = set()       # table_ids whose TABLE_MAP the filter rejected
        gtid = None
        fde = None
        self.stats.files += 1
        skip = filtered.__contains__ if self.table_filter else None
        for event in read_events(path, verify_checksums=self.verify_checksums, start_position=start,
                                 skip_rows=skip):
            header = event.header
            if isinstance(event, SkippedRowsEvent):
                self.stats.skipped_events += 1
                self.stats.skipped_bytes += header.event_size
                continue
            if stop is not None and header.offset >= stop:
                return True
            if (self.stop_datetime is not None and header.timestamp >= self.stop_datetime
                    and header.type_code not in FILE_HEADER_EVENTS):
                return True
            self.stats.events[event.type_name] += 1
            self.stats.bytes += header.event_size
            if isinstance(event, FormatDescriptionEvent):
                fde = event.fde
                table_maps.clear()
            elif isinstance(event, (MariaGtidEvent, MysqlGtidEvent)):
                gtid = event.gtid
            elif isinstance(event, TableMapEvent):
                if self.table_filter and not self.table_filter.keeps(event.db, event.table):
                    filtered.add(event.table_id)
                    table_maps.pop(event.table_id, None)
                    continue
                filtered.discard(event.table_id)
                table_maps[event.table_id] = (event, None)
            elif isinstance(event, QueryEvent) and self.schema is not None:
                self.schema.observe_query(event, (name, header.offset))
            elif isinstance(event, UnknownEvent):
                self.stats.unknown.append((name, header.offset, header.type_code, header.event_size))
                if self.on_unknown:
                    self.on_unknown(name, event)
            if self.start_datetime is not None and header.timestamp < self.start_datetime:
                continue
            yield SourceEvent(name, event)
            if isinstance(event, RowsEvent):
                yield from self._changes(name, event, table_maps, gtid, fde)
        return False

    def _changes(self, name, event: RowsEvent, table_maps, gtid, fde):
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
        try:
            # The whole event is decoded before any of its rows is given out: a row is
            # only trusted once the event's bytes were consumed exactly.
            try:
                rows = decode_rows(event, plan)
            except PrecisionUnknownError:
                if not (self.infer_precision and unknown_legacy_columns(plan)):
                    raise
                plan = self._infer(name, event, table_map, plan, fde)
                table_maps[event.table_id] = (table_map, plan)
                rows = decode_rows(event, plan)
        except BinlogError as exc:
            raise exc.add_context(source=name)
        self.stats.rows[plan.qualified_name] += len(rows)
        for before, after in rows:
            yield RowChange(name, header.offset, header.timestamp, header.server_id, gtid,
                            plan.db, plan.table, event.kind, before, after, plan)

    def _infer(self, name, event, table_map, plan, fde) -> DecodePlan:
        found = infer_precisions(event, plan)
        key = (table_map.db, table_map.table, table_map.layout_key())
        self._inferred.setdefault(key, {}).update(found)
        if self.schema is not None and hasattr(self.schema, "record_inferred"):
            types = {i: _TEMPORAL_NAMES[plan.columns[i].type] for i in found}
            # Kept from the TABLE_MAP's position on: that is where the next run looks it up.
            self.schema.record_inferred(table_map.db, table_map.table, found, (name, table_map.offset),
                                        types=types)
        if self.on_inferred:
            self.on_inferred(name, event.offset, plan, found)
        return self._plan(table_map, fde, (name, table_map.offset))

    def _plan(self, table_map: TableMapEvent, fde, position) -> DecodePlan:
        known_zero = not (fde.writes_legacy_hires if fde is not None else True)
        attributes = {}
        if self.schema is not None:
            attributes = self.schema.attributes(table_map, position) or {}
        inferred = self._inferred.get((table_map.db, table_map.table, table_map.layout_key()), {})
        for index, n in inferred.items():
            attributes.setdefault(index, {}).setdefault("precision", n)
        key = (table_map.db, table_map.table, known_zero,
               tuple((c.binlog_type, c.meta, c.unsigned, c.collation, c.name, c.enum_values,
                      c.set_values, c.nullable) for c in table_map.columns),
               tuple(sorted((i, tuple(sorted(a.items()))) for i, a in attributes.items())))
        plan = self._plans.get(key)
        if plan is None:
            plan = build_plan(table_map, legacy_precision_known_zero=known_zero, tz=self.tz,
                              schema=attributes)
            self._plans[key] = plan
        return plan
