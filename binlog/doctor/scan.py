"""What the server's recent binlogs say: the TABLE_MAPs' column type codes of each table
and the data changes logged as statements.

Read over the replication protocol as a one-shot reader (server id 0, never registered,
non-blocking: ``sources.server.ServerOptions.one_shot``), so no replica of the server is
disturbed, and bounded: it starts at the newest binlogs whose sizes add up to at most
``max_bytes`` and stops at ``max_bytes`` read or ``max_seconds`` elapsed, whichever
comes first.  Rows events are stepped over by length (``EventStream(skip_rows=...)``):
only TABLE_MAP and QUERY events are decoded.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from ..constants import LEGACY_TEMPORAL_TYPES
from ..errors import BinlogError, ServerAccessError, ServerError
from ..events import QueryEvent, TableMapEvent
from ..sources.progress import Progress
from ..sources.server import ReplicationClient, ServerOptions
from ..statements import DML, classify_query
from ..stream import NEED_DATA, EventStream


@dataclass
class TableMapSeen:
    """The TABLE_MAPs of one table: the last one's type codes and where it is, and the
    last one that had a legacy temporal code (7/12/11)."""
    types: tuple[int, ...]
    file: str
    offset: int
    legacy_at: tuple[str, int] | None = None
    legacy_types: tuple[int, ...] = ()


@dataclass
class StatementsSeen:
    """Data changes of one database logged as statements (QUERY events)."""
    count: int
    file: str
    offset: int
    sample: str


@dataclass
class BinlogScan:
    start_file: str | None = None
    bytes_read: int = 0
    events: int = 0
    complete: bool = False              # read to the end of the newest binlog
    stopped: str | None = None          # why it stopped early, or why it was not done
    first_ts: int | None = None
    last_ts: int | None = None
    table_maps: dict[tuple[str, str], TableMapSeen] = field(default_factory=dict)
    statements: dict[str, StatementsSeen] = field(default_factory=dict)   # by db.table
    oldest_binlog_ts: int | None = None   # the first event time of the oldest binlog
    damage: str | None = None             # an event that could not be decoded (BinlogError)


#: Legacy temporal type codes (constants.LEGACY_TEMPORAL_TYPES): 7, 12, 11.
LEGACY_CODES = frozenset(LEGACY_TEMPORAL_TYPES)


def start_file(binlogs: list[tuple[str, int]], max_bytes: int) -> str:
    """The oldest binlog such that it and the newer ones add up to at most ``max_bytes``
    (the newest one at least)."""
    total, chosen = 0, binlogs[-1][0]
    for name, size in reversed(binlogs):
        total += size
        if total > max_bytes:
            break
        chosen = name
    return chosen


def scan(dsn: str, binlogs: list[tuple[str, int]] | None, *, max_bytes: int,
         max_seconds: float, progress: Progress | None = None) -> BinlogScan:
    """Read the recent binlogs (``binlogs``: SHOW BINARY LOGS; None when the user may not
    list them: then from the first binlog, still bounded); ``progress``: a line on
    stderr while it reads (sources.progress: only on a terminal)."""
    result = BinlogScan()
    first = start_file(binlogs, max_bytes) if binlogs else ""
    result.start_file = first or None
    client = ReplicationClient(ServerOptions(dsn, 0, one_shot=True, heartbeat=max(max_seconds, 1.0)))
    progress = progress or Progress()
    try:
        _read(client, first, result, max_bytes, time.monotonic() + max_seconds, progress)
        if binlogs and binlogs[0][0] != first:
            result.oldest_binlog_ts = first_event_time(client, binlogs[0][0])
    except ServerAccessError as exc:
        result.stopped = f"not allowed to read the binlog: {exc.message}"
    except ServerError:
        raise               # the server failed: exit code 5
    except BinlogError as exc:
        # a damaged or undecodable event: a finding (what was read before it stands)
        result.damage, result.stopped = str(exc), "damaged event"
    finally:
        progress.close()
        client.close()
    return result


def _read(client: ReplicationClient, file: str, result: BinlogScan, max_bytes: int,
          deadline: float, progress: Progress) -> None:
    client.start(file=file, position=4, blocking=False)
    stream = None
    for event in client.events():
        if not event.in_file:
            continue
        if event.offset == 4 or stream is None:
            stream = EventStream(event.file, expect_magic=False, offset=event.offset,
                                 skip_rows=lambda _table_id: True)
            if event.offset == 4 and result.oldest_binlog_ts is None:
                result.oldest_binlog_ts = event.header.timestamp
        stream.feed(event.data)
        # one event in, one out (a MySQL TRANSACTION_PAYLOAD gives its inner events too)
        while (decoded := stream.next_event()) is not NEED_DATA:
            _note(decoded, event.file, event.offset, result)
        result.events += 1
        result.bytes_read += len(event.data)
        progress.event(event.file, event.end, len(event.data), event.header.timestamp)
        if result.bytes_read >= max_bytes or time.monotonic() >= deadline:
            result.stopped = ("read limit reached" if result.bytes_read >= max_bytes
                              else "time limit reached")
            return
    result.complete = True


def _note(event, file: str, offset: int, result: BinlogScan) -> None:
    ts = event.header.timestamp
    if ts:
        result.first_ts = ts if result.first_ts is None else result.first_ts
        result.last_ts = ts
    if isinstance(event, TableMapEvent):
        _note_table_map(event, file, offset, result)
    elif isinstance(event, QueryEvent) and classify_query(event.query) == DML:
        key = statement_table(event.query, event.db)
        seen = result.statements.get(key)
        if seen is None:
            result.statements[key] = StatementsSeen(1, file, offset, event.query[:120])
        else:
            seen.count += 1


# The first table a DML statement names (INSERT INTO t, UPDATE t, DELETE FROM t, ...).
_DML_TABLE = re.compile(r"\b(?:INTO|UPDATE|FROM)\s+(`(?:[^`]|``)+`|[\w$]+)(?:\.(`(?:[^`]|``)+`|[\w$]+))?",
                        re.I)


def statement_table(query: str, db: str) -> str:
    """``db.table`` of the first table the statement names (the session's database when
    the name is not qualified), else ``db`` alone."""
    m = _DML_TABLE.search(query)
    if m is None:
        return db or "?"
    a, b = (p.strip("`").replace("``", "`") if p else p for p in m.groups())
    return f"{a}.{b}" if b else f"{db or '?'}.{a}"


def _note_table_map(event: TableMapEvent, file: str, offset: int, result: BinlogScan) -> None:
    types = tuple(c.binlog_type for c in event.columns)
    key = (event.db, event.table)
    previous = result.table_maps.get(key)
    seen = TableMapSeen(types, file, offset)
    if any(t in LEGACY_CODES for t in types):
        seen.legacy_at, seen.legacy_types = (file, offset), types
    elif previous is not None:
        seen.legacy_at, seen.legacy_types = previous.legacy_at, previous.legacy_types
    result.table_maps[key] = seen


def first_event_time(client: ReplicationClient, file: str) -> int | None:
    """The timestamp of a binlog's first event (its FORMAT_DESCRIPTION: when the file
    was started)."""
    client.close()
    client.start(file=file, position=4, blocking=False)
    try:
        for event in client.events():
            if event.in_file:
                return event.header.timestamp
    finally:
        client.close()
    return None
