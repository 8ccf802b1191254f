"""Header-only pre-scan of binlog files: transaction boundaries, DDL, safe split points.

``scan_file`` walks a file by its 19-byte event headers (``event_size`` leads to the next
one) and decodes only the few events that matter for planning: the FORMAT_DESCRIPTION
(how to frame everything) and QUERY events (BEGIN/COMMIT and DDL, which the schema store
follows).  Rows events are never decoded; of them and of TABLE_MAPs only the 6-byte
table_id after the header is looked at.

Transaction groups start at a GTID event (MariaDB 162, MySQL 33/34/42) or, in logs without
GTIDs, at QUERY 'BEGIN'.  A group start is a *safe split point* when no rows event at or
after it uses a TABLE_MAP written before it - always so in real server binlogs, checked
anyway - so a split that starts there needs only the file's FORMAT_DESCRIPTION, which the
reader reads first before jumping (``binlog.sources.file.read_events(start_position=)``).

``plan_splits`` cuts a scanned file into byte ranges of about ``split_bytes`` at safe
split points.  Reading every range with ``BinlogReader([file], start_position=start,
stop_position=stop)`` and concatenating gives exactly the rows of one whole read.
"""
from __future__ import annotations

import bisect
import itertools
import mmap
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from binlog.constants import BINLOG_MAGIC, HEADER_LEN, EventType as E
from binlog.errors import BinlogError
from binlog.events import QueryEvent
from binlog.events.gtid import FL_STANDALONE
from binlog.events.query import (BEGIN, COMMIT, ROLLBACK, XA_COMMIT, XA_PREPARE, XA_ROLLBACK,
                                 transaction_control)
from binlog.events.rows import ROWS_EVENT_TYPES
from binlog.header import EventHeader
from binlog.reader import FILE_HEADER_EVENTS
from binlog.stream import EventStream, check_event_size

_HEADER = struct.Struct("<IBIIIH")
GTID_TYPES = frozenset({E.GTID_EVENT, E.GTID_LOG_EVENT, E.ANONYMOUS_GTID_LOG_EVENT,
                        E.GTID_TAGGED_LOG_EVENT})
QUERY_TYPES = frozenset({E.QUERY_EVENT, E.QUERY_COMPRESSED_EVENT, E.EXECUTE_LOAD_QUERY_EVENT})
CLOSING_TYPES = frozenset({E.ROTATE_EVENT, E.STOP_EVENT})
#: Statements that end a transaction group (ROLLBACK TO a savepoint does not).
GROUP_ENDS = frozenset({COMMIT, ROLLBACK, XA_COMMIT, XA_ROLLBACK, XA_PREPARE})


@dataclass
class FileScan:
    path: str
    name: str
    size: int
    start: int = 4                 # where reading starts (after the FDE, or the start position)
    end: int = 4                   # where the scan stopped (exclusive)
    safe_end: int = 4              # end of the last event outside any open transaction group
    closed: bool = False           # the file ends with ROTATE or STOP
    events: int = 0
    groups: int = 0
    boundaries: list[int] = field(default_factory=list)   # safe split points, ascending
    stopped_at: int | None = None  # first event at/after stop_datetime (global stop)
    error: dict | None = None      # the framing error that ended the scan, if any
    head: str = ""                 # hex of the first bytes (identity check for reruns)

    @property
    def ok(self) -> bool:
        return self.error is None


# the fields of an error record besides file and pos (error_record, errors/ rows)
ERROR_KEYS = ("error", "message", "event_type", "table", "column", "detail", "resumed_at")


def error_record(exc: BaseException, *, source: str, offset: int | None = None) -> dict:
    """A damaged-input report as plain data (errors/ rows, checkpoint, logs)."""
    if isinstance(exc, BinlogError):
        return {"file": exc.source or source, "pos": exc.event_offset if exc.event_offset is not None else offset,
                "error": type(exc).__name__, "message": exc.message, "event_type": exc.event_type,
                "table": exc.table, "column": exc.column, "detail": str(exc)}
    return {"file": source, "pos": offset, "error": type(exc).__name__, "message": str(exc),
            "event_type": None, "table": None, "column": None, "detail": f"{type(exc).__name__}: {exc}"}


HEAD_BYTES = 256


def scan_file(path, *, start: int | None = None, stop: int | None = None,
              stop_datetime: int | None = None, verify_checksums: bool = True,
              on_query: Callable[[QueryEvent], None] | None = None,
              tolerate_partial_tail: bool = False) -> FileScan:
    """Scan one file.  ``start``/``stop`` as BinlogReader's start/stop positions;
    ``on_query(event)`` gets every QUERY event read (for DDL tracking), in order.
    ``tolerate_partial_tail``: a file ending inside an event (still being written) is not
    an error; the scan ends at the last whole event."""
    path = Path(path)
    name = path.name
    size = os.stat(path).st_size
    scan = FileScan(str(path), name, size)
    with open(path, "rb") as fh:
        if size == 0:
            scan.error = error_record(BinlogError("empty file: not a binlog"), source=name, offset=0)
            return scan
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            scan.head = mm[:HEAD_BYTES].hex()
            _scan(mm, scan, start, stop, stop_datetime, verify_checksums, on_query, tolerate_partial_tail)
        finally:
            mm.close()
    return scan


def _scan(mm, scan: FileScan, start, stop, stop_datetime, verify, on_query, tolerate_tail) -> None:
    name, size = scan.name, scan.size
    if size < 4 or mm[:4] != BINLOG_MAGIC:
        if size < 4 and tolerate_tail and BINLOG_MAGIC.startswith(mm[:size]):
            return
        scan.error = error_record(BinlogError(
            f"not a binlog file: starts with {bytes(mm[:4]).hex(' ')}, expected {BINLOG_MAGIC.hex(' ')}"),
            source=name, offset=0)
        scan.error["error"] = "BadMagicError"
        return
    stream = EventStream(name, verify_checksums=verify, expect_magic=False)   # checked above
    fde = stream.fde
    unpack = _HEADER.unpack_from
    off = 4
    jumped = start is None or start <= 4
    boundaries: list[int] = []        # group starts (candidates)
    unsafe: set[int] = set()          # candidates a later rows event's TABLE_MAP lies before
    last_map: dict[int, int] = {}     # table_id -> offset of its latest TABLE_MAP
    group_start = -1
    open_group = False
    in_txn = False
    has_gtids = False
    safe_end = 4
    last_type = None
    try:
        while True:
            if off >= size:
                break
            if stop is not None and off >= stop:
                break
            if size - off < HEADER_LEN:
                if tolerate_tail:
                    break
                raise _incomplete(name, off, size - off)
            ts, type_code, server_id, esize, log_pos, flags = unpack(mm, off)
            check_event_size(type_code, esize, fde, source=name, offset=off)
            if off + esize > size:
                if tolerate_tail:
                    break
                raise _incomplete(name, off, size - off)
            end = off + esize
            if (stop_datetime is not None and ts >= stop_datetime and jumped
                    and type_code not in FILE_HEADER_EVENTS):
                scan.stopped_at = off
                break
            scan.events += 1
            last_type = type_code
            if type_code == E.FORMAT_DESCRIPTION_EVENT:
                header = EventHeader(ts, type_code, server_id, esize, log_pos, flags, off)
                stream.decode(bytes(mm[off:end]), header)
                fde = stream.fde
                last_map.clear()
                if not jumped:
                    jumped = True
                    if start > end:
                        off = start
                        scan.start = start
                        safe_end = start
                        continue
            elif type_code in GTID_TYPES:
                has_gtids = True
                group_start = off
                boundaries.append(off)
                open_group = True
                if type_code == E.GTID_EVENT:
                    # flags2 after seq_no u64 and domain_id u32
                    flags2 = mm[off + fde.common_header_len + 12] if esize > fde.common_header_len + 12 else 0
                    in_txn = not (flags2 & FL_STANDALONE)
                else:
                    in_txn = False
                scan.groups += 1
            elif type_code in QUERY_TYPES:
                header = EventHeader(ts, type_code, server_id, esize, log_pos, flags, off)
                try:
                    event = stream.decode(bytes(mm[off:end]), header)
                except BinlogError:
                    event = None     # a damaged statement: the reader reports it at its place
                if isinstance(event, QueryEvent):
                    control = transaction_control(event.query)
                    if control == BEGIN:
                        if not has_gtids and not open_group:
                            group_start = off
                            boundaries.append(off)
                            scan.groups += 1
                        open_group = True
                        in_txn = True
                    elif control in GROUP_ENDS:
                        open_group = in_txn = False
                    elif not in_txn:
                        open_group = False          # a standalone statement (DDL) is its group
                    if on_query is not None:
                        on_query(event)
            elif type_code == E.XID_EVENT or type_code == E.XA_PREPARE_LOG_EVENT:
                open_group = in_txn = False
            elif type_code == E.TABLE_MAP_EVENT:
                last_map[_table_id(mm, off, type_code, fde)] = off
            elif type_code in ROWS_EVENT_TYPES:
                mapped = last_map.get(_table_id(mm, off, type_code, fde))
                if mapped is not None and mapped < group_start:
                    # its TABLE_MAP lies before this group: no cut in (mapped, off]
                    lo = bisect.bisect_right(boundaries, mapped)
                    hi = bisect.bisect_right(boundaries, off)
                    unsafe.update(boundaries[lo:hi])
            if not open_group:
                safe_end = end
            off = end
    except BinlogError as exc:
        scan.error = error_record(exc, source=name, offset=off)
    scan.end = off
    scan.safe_end = min(safe_end, off)
    scan.closed = last_type in CLOSING_TYPES and scan.error is None and off == size
    scan.boundaries = [b for b in boundaries if b not in unsafe and b >= scan.start] if unsafe else \
        [b for b in boundaries if b >= scan.start]


def _table_id(mm, off: int, type_code: int, fde) -> int:
    start = off + fde.common_header_len
    width = 4 if fde.post_header(type_code, 8) == 6 else 6
    return int.from_bytes(mm[start:start + width], "little")


def _incomplete(name, off, have):
    from binlog.errors import IncompleteEventError

    return IncompleteEventError(f"input ends inside an event: {have} bytes of it are present",
                                source=name, event_offset=off,
                                hint="the file is truncated or still being written")


def plan_splits(scan: FileScan, split_bytes: int, *, start: int | None = None,
                end: int | None = None) -> list[tuple[int, int]]:
    """Byte ranges [start, stop) of about ``split_bytes`` each, cut only at safe split
    points; ``split_bytes <= 0``: one range."""
    lo = scan.start if start is None else start
    hi = scan.end if end is None else end
    if hi <= lo:
        return []
    total = hi - lo
    if split_bytes <= 0 or total <= split_bytes:
        return [(lo, hi)]
    points = [b for b in scan.boundaries if lo < b < hi]
    if not points:
        return [(lo, hi)]
    pieces = -(-total // split_bytes)
    cuts = []
    for k in range(1, pieces):
        target = lo + total * k // pieces
        i = bisect.bisect_left(points, target)
        best = None
        for j in (i - 1, i):
            if 0 <= j < len(points):
                if best is None or abs(points[j] - target) < abs(best - target):
                    best = points[j]
        if best is not None and (not cuts or best > cuts[-1]):
            cuts.append(best)
    edges = [lo, *cuts, hi]
    return [(a, b) for a, b in itertools.pairwise(edges) if b > a]
