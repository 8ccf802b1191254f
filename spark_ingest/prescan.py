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

from binlog.constants import BINLOG_MAGIC, HEADER_LEN, LOG_EVENT_ARTIFICIAL_F, EventType as E
from binlog.errors import BinlogError, MalformedEventError
from binlog.events import QueryEvent
from binlog.events.gtid import FL_STANDALONE
from binlog.events.query import BEGIN, COMMIT, ROLLBACK, XA_COMMIT, XA_PREPARE, XA_ROLLBACK, transaction_control
from binlog.events.rows import ROWS_EVENT_TYPES
from binlog.header import HEADER, EventHeader
from binlog.reader import FILE_HEADER_EVENTS
from binlog.stream import EventStream, check_event_size

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
    # what binlog.continuity checks between files: the next binlog a ROTATE names, the
    # GTID_LIST at the start (domain, server, seq), the last seq_no read per domain
    rotated_to: str | None = None
    gtid_list: list | None = None
    gtids: dict = field(default_factory=dict)

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
              tolerate_partial_tail: bool = False, keys=None) -> FileScan:
    """Scan one file.  ``start``/``stop`` as BinlogReader's start/stop positions;
    ``on_query(event)`` gets every QUERY event read (for DDL tracking), in order.
    ``tolerate_partial_tail``: a file ending inside an event (still being written) is not
    an error; the scan ends at the last whole event.  ``keys``: a ``binlog.crypt.KeyRing``
    for an encrypted file (after its START_ENCRYPTION_EVENT only the first bytes of an
    event are decrypted, the whole event only when it is decoded)."""
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
            _scan(mm, scan, start, stop, stop_datetime, verify_checksums, on_query, tolerate_partial_tail,
                  keys)
        finally:
            mm.close()
    return scan


def _scan(mm, scan: FileScan, start, stop, stop_datetime, verify, on_query, tolerate_tail,
          keys=None) -> None:
    if not _has_magic(mm, scan, tolerate_tail):
        return
    scanner = _Scanner(mm, scan, start, verify, on_query, keys)
    try:
        scanner.walk(stop, stop_datetime, tolerate_tail)
    except BinlogError as exc:
        scan.error = error_record(exc, source=scan.name, offset=scanner.off)
    scanner.finish()


def _has_magic(mm, scan: FileScan, tolerate_tail: bool) -> bool:
    """The file starts with the binlog magic; else the scan's error says why (nothing,
    for a file still being written that has not got its 4 bytes yet)."""
    size = scan.size
    if size >= 4 and mm[:4] == BINLOG_MAGIC:
        return True
    if size < 4 and tolerate_tail and BINLOG_MAGIC.startswith(mm[:size]):
        return False
    scan.error = error_record(BinlogError(
        f"not a binlog file: starts with {bytes(mm[:4]).hex(' ')}, expected {BINLOG_MAGIC.hex(' ')}"),
        source=scan.name, offset=0)
    scan.error["error"] = "BadMagicError"
    return False


class _Scanner:
    """One walk over a file's event headers (see the module docstring)."""

    def __init__(self, mm, scan: FileScan, start, verify: bool, on_query, keys=None):
        self.mm, self.scan, self.start, self.on_query = mm, scan, start, on_query
        self.stream = EventStream(scan.name, verify_checksums=verify, expect_magic=False,
                                  keys=keys)
        self.src, self.at = mm, 4           # where the current event's plain bytes are
        self.fde = self.stream.fde
        self.off = 4
        self.jumped = start is None or start <= 4
        self.boundaries: list[int] = []     # group starts (candidates)
        self.unsafe: set[int] = set()       # candidates a later rows event's TABLE_MAP lies before
        self.last_map: dict[int, int] = {}  # table_id -> offset of its latest TABLE_MAP
        self.group_start = -1
        self.open_group = False
        self.in_txn = False
        self.has_gtids = False
        self.safe_end = 4
        self.last_type = None

    def walk(self, stop, stop_datetime, tolerate_tail: bool) -> None:
        mm, scan, name, size = self.mm, self.scan, self.scan.name, self.scan.size
        unpack = HEADER.unpack_from
        while self.off < size and (stop is None or self.off < stop):
            off = self.off
            if size - off < HEADER_LEN:
                if tolerate_tail:
                    break
                raise _incomplete(name, off, size - off)
            ts, type_code, server_id, esize, log_pos, flags = unpack(mm, off)
            encrypted = self.stream.decryption is not None and self.stream.decryption.encrypted(off)
            # (an encrypted header's type code is known after decryption: checked then)
            check_event_size(0 if encrypted else type_code, esize, self.fde, source=name, offset=off)
            if off + esize > size:
                if tolerate_tail:
                    break
                raise _incomplete(name, off, size - off)
            self.src, self.at = mm, off
            if encrypted:
                self.src, self.at = _plain_head(self.stream, mm, off, esize), 0
                ts, type_code, server_id, esize, log_pos, flags = unpack(self.src, 0)
                check_event_size(type_code, esize, self.fde, source=name, offset=off)
            if (stop_datetime is not None and ts >= stop_datetime and self.jumped
                    and type_code not in FILE_HEADER_EVENTS):
                scan.stopped_at = off
                break
            scan.events += 1
            self.last_type = type_code
            end = off + esize
            header = (ts, type_code, server_id, esize, log_pos, flags, off)
            if self._event(header, end):
                continue            # jumped to the start position
            if not self.open_group:
                self.safe_end = end
            self.off = end

    def _event(self, header: tuple, end: int) -> bool:
        """Take one event in; True when the walk jumped (to the start position)."""
        type_code = header[1]
        if type_code == E.FORMAT_DESCRIPTION_EVENT:
            return self._fde(header, end)
        if type_code == E.START_ENCRYPTION_EVENT and self.src is self.mm:
            return self._start_encryption(header, end)
        if type_code in GTID_TYPES:
            self._gtid(header)
        elif type_code in (E.ROTATE_EVENT, E.GTID_LIST_EVENT):
            self._chain(header, end)
        elif type_code in QUERY_TYPES:
            self._query(header, end)
        elif type_code == E.XID_EVENT or type_code == E.XA_PREPARE_LOG_EVENT:
            self.open_group = self.in_txn = False
        elif type_code == E.TABLE_MAP_EVENT:
            self.last_map[_table_id(self.src, self.at, type_code, self.fde)] = header[6]
        elif type_code in ROWS_EVENT_TYPES:
            self._rows(header)
        return False

    def _fde(self, header: tuple, end: int) -> bool:
        self.stream.decode(bytes(self.mm[header[6]:end]), EventHeader(*header))
        self.fde = self.stream.fde
        self.last_map.clear()
        if self.jumped or self._encryption_follows(end):
            return False
        return self._jump(end)

    def _encryption_follows(self, end: int) -> bool:
        """A START_ENCRYPTION_EVENT comes next: a jump waits for its nonce."""
        return end + HEADER_LEN <= self.scan.size and self.mm[end + 4] == E.START_ENCRYPTION_EVENT

    def _start_encryption(self, header: tuple, end: int) -> bool:
        # the nonce and key version of every later event (binlog.crypt); without keys
        # the stream raises EncryptedBinlogError: the scan's error
        self.stream.decode(bytes(self.mm[header[6]:end]), EventHeader(*header))
        return False if self.jumped else self._jump(end)

    def _jump(self, end: int) -> bool:
        self.jumped = True
        if self.start > end:
            self.off = self.scan.start = self.safe_end = self.start
            return True
        return False

    def _gtid(self, header: tuple) -> None:
        off, esize, fde = header[6], header[3], self.fde
        self.has_gtids = True
        self.group_start = off
        self.boundaries.append(off)
        self.open_group = True
        if header[1] == E.GTID_EVENT:
            # seq_no u64, domain_id u32, flags2 (log_event.h Gtid_log_event)
            body = self.at + fde.common_header_len
            seq, domain = struct.unpack_from("<QI", self.src, body)
            self.scan.gtids[domain] = max(seq, self.scan.gtids.get(domain, 0))
            at = body + 12
            flags2 = self.src[at] if esize > fde.common_header_len + 12 else 0
            self.in_txn = not (flags2 & FL_STANDALONE)
        else:
            self.in_txn = False
        self.scan.groups += 1

    def _chain(self, header: tuple, end: int) -> None:
        """ROTATE (the next binlog's name) and GTID_LIST (the GTID state before this
        binlog): what binlog.continuity needs.  Damage is the reader's to report."""
        try:
            event = self.stream.decode(self._raw(header, end), EventHeader(*header))
        except BinlogError:
            return
        if header[1] == E.ROTATE_EVENT:
            if not header[5] & LOG_EVENT_ARTIFICIAL_F:
                self.scan.rotated_to = getattr(event, "next_file", None) or None
        elif self.scan.gtid_list is None:
            self.scan.gtid_list = list(getattr(event, "gtids", None) or [])

    def _raw(self, header: tuple, end: int) -> bytes:
        off = header[6]
        if self.src is self.mm:
            return bytes(self.mm[off:end])
        return bytes(self.stream._active_decryption().decryptor.decrypt(self.mm[off:end], off))

    def _query(self, header: tuple, end: int) -> None:
        off = header[6]
        try:
            event = self.stream.decode(self._raw(header, end), EventHeader(*header))
        except BinlogError:
            event = None     # a damaged statement: the reader reports it at its place
        if not isinstance(event, QueryEvent):
            return
        control = transaction_control(event.query)
        if control == BEGIN:
            if not self.has_gtids and not self.open_group:
                self.group_start = off
                self.boundaries.append(off)
                self.scan.groups += 1
            self.open_group = True
            self.in_txn = True
        elif control in GROUP_ENDS:
            self.open_group = self.in_txn = False
        elif not self.in_txn:
            self.open_group = False          # a standalone statement (DDL) is its group
        if self.on_query is not None:
            self.on_query(event)

    def _rows(self, header: tuple) -> None:
        off = header[6]
        mapped = self.last_map.get(_table_id(self.src, self.at, header[1], self.fde))
        if mapped is not None and mapped < self.group_start:
            # its TABLE_MAP lies before this group: no cut in (mapped, off]
            lo = bisect.bisect_right(self.boundaries, mapped)
            hi = bisect.bisect_right(self.boundaries, off)
            self.unsafe.update(self.boundaries[lo:hi])

    def finish(self) -> None:
        scan, off = self.scan, self.off
        scan.end = off
        scan.safe_end = min(self.safe_end, off)
        scan.closed = self.last_type in CLOSING_TYPES and scan.error is None and off == scan.size
        scan.boundaries = [b for b in self.boundaries if b not in self.unsafe and b >= scan.start]


def _plain_head(stream: EventStream, mm, off: int, esize: int):
    """The plain first bytes of the encrypted event at ``off`` (header, GTID flags,
    table_id); the first encrypted event is decrypted whole, to find the key and
    algorithm that fit (binlog.crypt.EventDecryptor.detect)."""
    dec = stream._active_decryption().decryptor      # (walk: only after START_ENCRYPTION)
    if not dec.detected:
        plain = dec.detect(bytes(mm[off:off + esize]), off, stream._plain_ok(off))
        if plain is None:
            from binlog.errors import WrongKeyError

            raise WrongKeyError(
                f"the keys given do not decrypt this binlog: its first encrypted event fails "
                f"its checks with every key and algorithm tried for {dec.describe()}",
                key_id=dec.key_id, key_version=dec.key_version, source=stream.source,
                event_offset=off)
        return plain
    head = dec.plain_prefix(mm[off:off + min(esize, _PLAIN_HEAD + 16)], off, esize, _PLAIN_HEAD)
    if head is None:        # (walk maps the whole event first: its header's blocks are there)
        raise MalformedEventError(f"encrypted event of {esize} bytes too short for its header",
                                  source=stream.source, event_offset=off)
    return head + bytes(max(0, HEADER_LEN - len(head)))


_PLAIN_HEAD = 48        # header 19 + GTID flags2 at 13 / table_id 6 after it, with room


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
    cuts: list[int] = []
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
