"""GTID positions as the user gives them: ``--start-gtid`` / ``--stop-gtid``.

Two notations, told apart by their shape:

- MariaDB: a comma-separated list of ``domain-server-seq`` GTIDs, at most one per domain,
  read as mariadb-binlog reads ``--start-position=GTID-list`` and
  ``--stop-position=GTID-list`` (MariaDB KB "mariadb-binlog Options"; sql/rpl_gtid.cc
  Window_gtid_event_filter, Domain_gtid_event_filter):

  - start: the state the reader already has.  In a listed domain only event groups with
    a higher seq_no are read (each GTID is exclusive); unlisted domains are read from the
    start.
  - stop: in a listed domain event groups up to and including seq_no are read
    (inclusive); when a stop list is given, unlisted domains are not read, and reading
    ends once every listed domain has reached its stop GTID.

  Within a domain groups are ordered by seq_no; the server id does not order them.

- MySQL: a GTID set, ``uuid:interval[:interval...][,uuid:...]`` (8.4: ``uuid:tag:interval``),
  the text of @@gtid_executed (sql/rpl_gtid_set.cc Gtid_set::add_gtid_text).  The same
  two roles, as a replica's state and as mysqlbinlog's GTID filters
  (client/mysqlbinlog.cc):

  - start: the set the reader already has (a replica's gtid_executed): transactions in
    it are not read (mysqlbinlog ``--exclude-gtids``); every other one is, anonymous
    transactions included.
  - stop: only transactions in the set are read (mysqlbinlog ``--include-gtids``;
    anonymous transactions are in no set), and reading ends once every GTID of the stop
    set that the start set does not hold has been read.
  - the first PREVIOUS_GTIDS event read (the GTIDs written before that binlog) must lie
    inside the start set: GTIDs before the input that the reader does not have are
    missing, as a server refuses such a replica (ER_MASTER_HAS_PURGED_REQUIRED_GTIDS,
    sql/rpl_binlog_sender.cc check_start_file): a GapError, a warning with --allow-gaps.

Events outside event groups (FORMAT_DESCRIPTION, ROTATE, GTID_LIST ...) are not affected.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from .errors import GapError, UsageError

_GTID = re.compile(r"(\d{1,10})-(\d{1,10})-(\d{1,20})")

# MySQL: a UUID with or without dashes (Uuid::parse), a tag (8.4, mysql::gtid::Tag:
# a letter or _ then up to 31 letters, digits or _), an interval of GNOs 1..2^63-2.
_UUID = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}")
_TAG = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")
_INTERVAL = re.compile(r"(\d{1,19})(?:-(\d{1,19}))?")
GNO_MAX = (1 << 63) - 2     # GNO_END - 1 (include/mysql/binlog/event/control_events.h)

Sid = tuple[str, str]       # (uuid in lower case with dashes, tag or "")
# an event group's key: a MariaDB domain, a MySQL sid, None for a MySQL anonymous one
GroupKey = int | Sid | None


def parse_gtid_list(text: str, *, what: str = "GTID list") -> dict[int, tuple[int, int]]:
    """``"0-1-100,1-2-7"`` -> ``{domain: (server_id, seq_no)}``."""
    out: dict[int, tuple[int, int]] = {}
    for item in text.split(","):
        item = item.strip()
        m = _GTID.fullmatch(item)
        if not m:
            raise UsageError(f"bad {what} {text!r}: expected a MariaDB domain-server-seq[,...] "
                             f"(e.g. 0-1-100) or a MySQL uuid:interval[,...] set (e.g. "
                             f"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5)")
        domain, server, seq = (int(g) for g in m.groups())
        if domain > 0xFFFFFFFF or server > 0xFFFFFFFF or seq >= 1 << 64:
            raise UsageError(f"bad {what} {text!r}: {item} is out of range")
        if domain in out:
            raise UsageError(f"bad {what} {text!r}: domain {domain} is given twice")
        out[domain] = (server, seq)
    return out


def format_gtid_list(gtids: dict[int, tuple[int, int]]) -> str:
    return ",".join(f"{d}-{s}-{n}" for d, (s, n) in sorted(gtids.items()))


def is_mysql_set(text: str) -> bool:
    """MySQL sets name a UUID and a colon; MariaDB lists are digits and dashes only."""
    return ":" in text


class GtidSet:
    """A MySQL GTID set: per (uuid, tag), sorted disjoint inclusive intervals of GNOs."""

    def __init__(self, intervals: dict[Sid, list[tuple[int, int]]] | None = None):
        self.intervals: dict[Sid, list[tuple[int, int]]] = {}
        for sid, spans in (intervals or {}).items():
            for lo, hi in spans:
                self.add(sid, lo, hi)

    @classmethod
    def parse(cls, text: str, *, what: str = "GTID set") -> GtidSet:
        """``uuid:1-5:7,uuid2:tag:3`` (whitespace around items allowed, repeated or
        overlapping intervals merged, as Gtid_set::add_gtid_text does)."""
        out = cls()
        for item in text.split(","):
            item = item.strip()
            if not item:
                continue
            uuid, *parts = item.split(":")
            if not _UUID.fullmatch(uuid.strip()) or not parts:
                raise UsageError(f"bad {what} {text!r}: {item!r} is not uuid:interval[:interval...] "
                                 f"(e.g. 3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5)")
            hexed = uuid.strip().replace("-", "").lower()
            uuid = f"{hexed[:8]}-{hexed[8:12]}-{hexed[12:16]}-{hexed[16:20]}-{hexed[20:]}"
            tag, bare_tag = "", False      # a tag must be followed by an interval
            for part in parts:
                part = part.strip()
                if _TAG.fullmatch(part):
                    tag, bare_tag = part.lower(), True
                    continue
                m = _INTERVAL.fullmatch(part)
                if not m:
                    raise UsageError(f"bad {what} {text!r}: {part!r} in {item!r} is neither an "
                                     f"interval (N or N-M) nor a tag")
                lo = int(m.group(1))
                hi = int(m.group(2)) if m.group(2) else lo
                if not 1 <= lo <= hi <= GNO_MAX:
                    raise UsageError(f"bad {what} {text!r}: interval {part} must be 1 <= N <= M "
                                     f"<= {GNO_MAX}")
                out.add((uuid, tag), lo, hi)
                bare_tag = False
            if bare_tag:
                raise UsageError(f"bad {what} {text!r}: tag {tag!r} in {item!r} has no interval")
        return out

    def add(self, sid: Sid, lo: int, hi: int | None = None) -> None:
        hi = lo if hi is None else hi
        merged = []
        for a, b in self.intervals.get(sid, []):
            if b + 1 < lo or hi + 1 < a:
                merged.append((a, b))
            else:
                lo, hi = min(lo, a), max(hi, b)
        merged.append((lo, hi))
        self.intervals[sid] = sorted(merged)

    def remove(self, sid: Sid, gno: int) -> None:
        spans = []
        for a, b in self.intervals.get(sid, []):
            if a <= gno <= b:
                spans += [(x, y) for x, y in ((a, gno - 1), (gno + 1, b)) if x <= y]
            else:
                spans.append((a, b))
        if spans:
            self.intervals[sid] = spans
        else:
            self.intervals.pop(sid, None)

    def __contains__(self, gtid: object) -> bool:
        if not isinstance(gtid, tuple) or len(gtid) != 2:
            return False
        sid, gno = gtid
        return any(a <= gno <= b for a, b in self.intervals.get(sid, ()))

    def __bool__(self) -> bool:
        return bool(self.intervals)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GtidSet) and self.intervals == other.intervals

    def spans(self) -> Iterator[tuple[Sid, int, int]]:
        for sid in sorted(self.intervals):
            for a, b in self.intervals[sid]:
                yield sid, a, b

    def __sub__(self, other: GtidSet) -> GtidSet:
        out = GtidSet()
        for sid, lo, hi in self.spans():
            pieces = [(lo, hi)]
            for a, b in other.intervals.get(sid, ()):
                pieces = [(x, y) for p, q in pieces
                          for x, y in ((p, min(q, a - 1)), (max(p, b + 1), q)) if x <= y]
            for x, y in pieces:
                out.add(sid, x, y)
        return out

    def __str__(self) -> str:
        """MySQL's text: per UUID, its untagged intervals, then each tag and its
        intervals (Gtid_set::to_string)."""
        items: dict[str, list[str]] = {}
        for (uuid, tag) in sorted(self.intervals):
            parts = items.setdefault(uuid, [uuid])
            parts += ([tag] if tag else []) + [f"{a}-{b}" if a != b else str(a)
                                               for a, b in self.intervals[(uuid, tag)]]
        return ",".join(":".join(parts) for parts in items.values())


def mysql_sid(uuid: str, tag: str | None) -> Sid:
    return uuid.lower(), (tag or "").lower()


class GtidWindow:
    """Which event groups lie between ``start`` and ``stop`` (either may be None).

    A group is keyed by (domain, seq_no) for MariaDB GTIDs and by (sid, gno) for MySQL
    ones (see ``mysql_sid``); ``kind`` says which notation the options used."""

    def __init__(self, start: str | None = None, stop: str | None = None, *,
                 allow_gaps: bool = False, on_warning: Callable[[str], None] | None = None):
        given = [t for t in (start, stop) if t]
        kinds = {is_mysql_set(t) for t in given}
        if len(kinds) > 1:
            raise UsageError("--start-gtid and --stop-gtid must both be MariaDB GTID lists "
                             "(domain-server-seq) or both MySQL GTID sets (uuid:interval)")
        self.kind = ("mysql" if kinds.pop() else "mariadb") if kinds else None
        self.allow_gaps = allow_gaps
        self.on_warning = on_warning
        self._reached: set[int] = set()     # stop domains whose stop GTID was read
        self._checked_previous = False
        if self.kind == "mysql":
            self.start_set = GtidSet.parse(start or "", what="--start-gtid")
            self.stop_set = GtidSet.parse(stop, what="--stop-gtid") if stop else None
            self._left = self.stop_set - self.start_set if self.stop_set is not None else None
            if self.stop_set is not None and not self._left:
                raise UsageError(f"--stop-gtid {self.stop_set} holds nothing that --start-gtid "
                                 f"{self.start_set} does not: no transaction can be read")
            self.start: dict = {}
            self.stop: dict = {}
            return
        self.start = parse_gtid_list(start, what="--start-gtid") if start else {}
        self.stop = parse_gtid_list(stop, what="--stop-gtid") if stop else {}
        for domain, (_, seq) in self.start.items():
            if domain in self.stop and self.stop[domain][1] <= seq:
                raise UsageError(f"--stop-gtid {format_gtid_list({domain: self.stop[domain]})} is "
                                 f"not after --start-gtid {format_gtid_list({domain: self.start[domain]})}")

    @property
    def active(self) -> bool:
        return self.kind is not None

    def accepts(self, key: GroupKey, seq: int) -> bool:
        """Whether the event group of GTID ``key`` (a MariaDB domain or a MySQL sid;
        None for a MySQL anonymous transaction) and ``seq`` is read."""
        if self.kind == "mysql":
            if not isinstance(key, tuple):      # anonymous: in no set
                return self.stop_set is None
            if (key, seq) in self.start_set:
                return False
            return self.stop_set is None or (key, seq) in self.stop_set
        if key in self.start and seq <= self.start[key][1]:
            return False
        if self.stop:
            return key in self.stop and seq <= self.stop[key][1]
        return True

    def group_ended(self, key: GroupKey, seq: int) -> None:
        """An event group ended: note what of the stop position was read."""
        if self.kind == "mysql":
            if self._left is not None and isinstance(key, tuple):
                self._left.remove(key, seq)
            return
        if isinstance(key, int) and key in self.stop and seq >= self.stop[key][1]:
            self._reached.add(key)

    @property
    def finished(self) -> bool:
        """Everything the stop position selects was read: nothing more is to be read."""
        if self.kind == "mysql":
            return self._left is not None and not self._left
        return bool(self.stop) and self._reached >= set(self.stop)

    def previous_gtids(self, gtid_set: str, source: str) -> None:
        """The first PREVIOUS_GTIDS event read (MySQL start sets only): GTIDs written
        before ``source`` that the start set does not hold are not in the input."""
        if self.kind != "mysql" or self._checked_previous:
            return
        self._checked_previous = True
        missing = GtidSet.parse(gtid_set, what="PREVIOUS_GTIDS") - self.start_set
        if self.stop_set is not None:       # only what the stop set asks for
            missing = missing - (missing - self.stop_set)
        if not missing:
            return
        text = (f"transactions {missing} were written before {source} (its PREVIOUS_GTIDS "
                f"event) but are neither in the input nor in --start-gtid {self.start_set}")
        if self.allow_gaps:
            if self.on_warning:
                self.on_warning(f"{text} (--allow-gaps: reading on without them)")
            return
        raise GapError(text, source=source,
                       hint="give the binlogs that hold them too, add them to --start-gtid if "
                            "the reader already has them, or pass --allow-gaps")
