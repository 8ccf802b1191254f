"""Gaps between binlogs: the check made where the reader moves from one binlog to the next.

A server's binlogs form a chain, and a missing link leaves three traces:

- the ROTATE event that ends a binlog names the next one (``sql/log.cc``
  MYSQL_BIN_LOG::new_file_impl writes it before opening that file); without a ROTATE
  (a server stopped: STOP event, or a crash) the next one is the following number;
- MariaDB's GTID_LIST event at the start of every binlog holds the last GTID of each
  domain written before it (``Gtid_list_log_event``, the binlog state): a seq_no there
  beyond the last one read from the previous binlog means transactions were written to
  binlogs that are not in the input;
- a ``.index`` file lists every binlog of the set (sources.file).

Binlogs whose names belong to another sequence (another base name) are not compared: the
input may hold binlogs of several servers.  A gap is a ``GapError`` naming the missing
binlog(s) and the GTID range they held, when the next binlog's GTID_LIST tells it; with
``allow_gaps`` it is a warning and reading goes on.
"""
from __future__ import annotations

import re
from typing import Callable

from .errors import GapError

_NUMBERED = re.compile(r"^(.*)\.(\d+)$")


def numbered(name: str) -> tuple[str, int, int] | None:
    """(base, number, digits) of ``mariadb-bin.000042``; None for other names."""
    m = _NUMBERED.match(name)
    if not m:
        return None
    return m.group(1), int(m.group(2)), len(m.group(2))


def names_between(first: str, last: str) -> list[str]:
    """The binlog names from ``first`` up to, not including, ``last`` (same base)."""
    a, b = numbered(first), numbered(last)
    if a is None or b is None or a[0] != b[0] or b[1] <= a[1]:
        return [first]
    count = b[1] - a[1]
    if count > 3:
        return [first, "...", f"{a[0]}.{b[1] - 1:0{a[2]}d}"]
    return [f"{a[0]}.{n:0{a[2]}d}" for n in range(a[1], b[1])]


class Continuity:
    """Feed it the binlogs in reading order (``next_binlog``), the GTID and GTID_LIST
    events read (``gtid``, ``gtid_list``) and each binlog's end (``end_binlog``)."""

    def __init__(self, *, allow_gaps: bool = False,
                 on_warning: Callable[[str], None] | None = None):
        self.allow_gaps = allow_gaps
        self.on_warning = on_warning
        self.previous: str | None = None
        self.expected: str | None = None       # the name the previous binlog leads to
        self.seen: dict[int, int] = {}         # domain -> last seq_no read
        self.pending: list[str] | None = None  # missing names, reported at the GTID_LIST
        self.checking = False                  # the current binlog continues the previous
        self.current: str | None = None

    def state(self) -> dict:
        """Where the chain stands after the last binlog (kept between ingest runs)."""
        return {"previous": self.previous, "expected": self.expected,
                "seen": {str(d): s for d, s in self.seen.items()}}

    def restore(self, state: dict | None) -> None:
        """Go on from ``state()`` of an earlier run: its last binlog is the previous one."""
        if state:
            self.previous, self.expected = state.get("previous"), state.get("expected")
            self.seen = {int(d): int(s) for d, s in (state.get("seen") or {}).items()}

    def next_binlog(self, name: str) -> None:
        self.pending = None
        self.checking = False
        if self.expected is not None:
            want, got = numbered(self.expected), numbered(name)
            if want and got and want[0] == got[0]:
                self.checking = True
                if want[1] != got[1] and name != self.expected:
                    self.pending = names_between(self.expected, name)
        if not self.checking:
            self.seen = {}          # another sequence: its GTIDs are not comparable
        self.current = name

    def gtid(self, domain: int, seq: int) -> None:
        self.seen[domain] = max(seq, self.seen.get(domain, 0))

    def gtid_list(self, gtids) -> None:
        """The GTID_LIST at the start of the current binlog: (domain, server, seq)..."""
        state: dict[int, int] = {}
        servers: dict[int, int] = {}
        for domain, server, seq in gtids:
            if seq >= state.get(domain, 0):
                state[domain], servers[domain] = seq, server
        if self.checking and self.seen:
            lost = {(d, servers[d]): (self.seen[d] + 1, seq) for d, seq in state.items()
                    if d in self.seen and seq > self.seen[d]}
            if lost or self.pending:
                self._gap(lost)
        elif self.pending:
            self._gap({})
        self.pending = None
        for domain, seq in state.items():
            self.gtid(domain, seq)

    def first_event(self) -> None:
        """The current binlog's first event after its header events: no GTID_LIST came
        (MySQL, or a start position past it); a name gap is reported without GTIDs."""
        if self.pending:
            self._gap({})
        self.pending = None

    def end_binlog(self, name: str, rotated_to: str | None) -> None:
        self.previous = name
        if rotated_to:
            self.expected = rotated_to
            return
        parts = numbered(name)
        self.expected = f"{parts[0]}.{parts[1] + 1:0{parts[2]}d}" if parts else None

    def _gap(self, lost: dict) -> None:
        where = f"between {self.previous} and {self.current}"
        if self.pending:
            missing = ", ".join(self.pending)
            text = f"binlog(s) missing from the input {where}: {missing}"
        else:
            text = f"transactions missing from the input {where}"
        if lost:
            ranges = ", ".join(f"{d}-{s}-{a}..{d}-{s}-{b}" if a != b else f"{d}-{s}-{a}"
                               for (d, s), (a, b) in sorted(lost.items()))
            text += f"; they held GTID(s) {ranges} (the GTID list at the start of {self.current})"
        hint = ("copy the missing binlog(s) next to the others, or pass --allow-gaps to read "
                "on without their changes")
        if self.allow_gaps:
            if self.on_warning:
                self.on_warning(f"{text} (--allow-gaps: reading on without them)")
            return
        raise GapError(text, source=self.current, hint=hint)
