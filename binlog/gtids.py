"""MariaDB GTID positions as the user gives them: ``--start-gtid`` / ``--stop-gtid``.

A position is a comma-separated list of ``domain-server-seq`` GTIDs, at most one per
domain, read as mariadb-binlog reads ``--start-position=GTID-list`` and
``--stop-position=GTID-list`` (MariaDB KB "mariadb-binlog Options"; sql/rpl_gtid.cc
Window_gtid_event_filter, Domain_gtid_event_filter):

- start: the state the reader already has.  In a listed domain only event groups with a
  higher seq_no are read (each GTID is exclusive); unlisted domains are read from the
  start.
- stop: in a listed domain event groups up to and including seq_no are read (inclusive);
  when a stop list is given, unlisted domains are not read, and reading ends once every
  listed domain has reached its stop GTID.

Within a domain groups are ordered by seq_no; the server id does not order them.
Events outside event groups (FORMAT_DESCRIPTION, ROTATE, GTID_LIST ...) are not affected.
MySQL ``uuid:interval`` sets are not supported (a UsageError says so).
"""
from __future__ import annotations

import re

from .errors import UsageError

_GTID = re.compile(r"(\d{1,10})-(\d{1,10})-(\d{1,20})")


def parse_gtid_list(text: str, *, what: str = "GTID list") -> dict[int, tuple[int, int]]:
    """``"0-1-100,1-2-7"`` -> ``{domain: (server_id, seq_no)}``."""
    out: dict[int, tuple[int, int]] = {}
    for item in text.split(","):
        item = item.strip()
        m = _GTID.fullmatch(item)
        if not m:
            hint = " (MySQL uuid:interval sets are not supported)" if ":" in item else ""
            raise UsageError(f"bad {what} {text!r}: expected domain-server-seq[,...], e.g. "
                             f"0-1-100{hint}")
        domain, server, seq = (int(g) for g in m.groups())
        if domain > 0xFFFFFFFF or server > 0xFFFFFFFF or seq >= 1 << 64:
            raise UsageError(f"bad {what} {text!r}: {item} is out of range")
        if domain in out:
            raise UsageError(f"bad {what} {text!r}: domain {domain} is given twice")
        out[domain] = (server, seq)
    return out


def format_gtid_list(gtids: dict[int, tuple[int, int]]) -> str:
    return ",".join(f"{d}-{s}-{n}" for d, (s, n) in sorted(gtids.items()))


class GtidWindow:
    """Which event groups lie between ``start`` and ``stop`` (either may be None)."""

    def __init__(self, start: str | None = None, stop: str | None = None):
        self.start = parse_gtid_list(start, what="--start-gtid") if start else {}
        self.stop = parse_gtid_list(stop, what="--stop-gtid") if stop else {}
        for domain, (_, seq) in self.start.items():
            if domain in self.stop and self.stop[domain][1] <= seq:
                raise UsageError(f"--stop-gtid {format_gtid_list({domain: self.stop[domain]})} is "
                                 f"not after --start-gtid {format_gtid_list({domain: self.start[domain]})}")
        self._reached: set[int] = set()     # stop domains whose stop GTID was read

    @property
    def active(self) -> bool:
        return bool(self.start or self.stop)

    def accepts(self, domain: int, seq: int) -> bool:
        """Whether the event group of GTID ``domain``-*-``seq`` is read."""
        if domain in self.start and seq <= self.start[domain][1]:
            return False
        if self.stop:
            return domain in self.stop and seq <= self.stop[domain][1]
        return True

    def group_ended(self, domain: int, seq: int) -> None:
        """An event group ended: note a stop domain that reached its stop GTID."""
        if domain in self.stop and seq >= self.stop[domain][1]:
            self._reached.add(domain)

    @property
    def finished(self) -> bool:
        """Every stop domain reached its stop GTID: nothing more is to be read."""
        return bool(self.stop) and self._reached >= set(self.stop)
