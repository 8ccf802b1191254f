"""What the compatibility page (tests/peers/compat.py) and the peer tests share: the row
changes a peer reports, the server's own changes of the temporal corpus, and how one is
compared with the other.

A peer's value and the server's ``CAST(col AS CHAR)`` are compared as values, not as
strings: a temporal text is parsed into its fields with the fraction padded to six digits
(``838:59:59`` equals ``838:59:59.0``; ``-00:00:00`` equals ``00:00:00``); any other value
is compared as text.  Each runner turns its peer's own representation (go-mysql's strings,
python-mysql-replication's datetime/timedelta, ``mariadb-binlog -v``'s text...) into such
text first, and says how in its docstring.
"""
from __future__ import annotations

import json
import re
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

INSERT, UPDATE, DELETE = "insert", "update", "delete"


@dataclass(frozen=True)
class Change:
    """One row change: ``table`` is ``db.table``; images are tuples of text (None for NULL)
    in the table's column order; ``gtid`` is the transaction's MariaDB GTID."""
    table: str
    op: str
    before: tuple | None
    after: tuple | None
    gtid: str | None = None

    @property
    def key(self) -> str | None:
        image = self.after if self.after is not None else self.before
        return None if not image else image[0]


@dataclass
class Run:
    """What a peer did: its changes in order, and the errors it stopped with, each with the
    GTID of the transaction it failed in when that is known (the driver then restarts the
    peer after it).  A peer that keeps a state instead of reporting changes (a replica)
    gives ``final``: table -> rows (tuples of text), ordered by the first column."""
    changes: list[Change] = field(default_factory=list)
    errors: list[tuple[str | None, str]] = field(default_factory=list)
    final: dict[str, list[tuple]] | None = None
    finished: bool = True       # it read to the end (False: it stopped at the last error)


@dataclass(frozen=True)
class Target:
    """Where a runner reads.  File runners read ``binlog`` from ``start_pos``; network
    runners connect to serve at ``host``:``port`` (serving a copy of ``binlog`` under
    ``binlog.name``) and start after GTID ``start_after`` (None: from the start) or at
    ``start_pos`` in ``binlog.name``; ``end`` is the served binlog's size (where to stop)."""
    binlog: Path
    tmp: Path
    start_after: str | None = None
    start_pos: int = 4
    host: str = "127.0.0.1"
    port: int = 0
    user: str = ""
    password: str = ""

    @property
    def end(self) -> int:
        return self.binlog.stat().st_size


@dataclass(frozen=True)
class Runner:
    """One peer in one mode: ``run(target) -> Run``; ``version()`` names what ran."""
    peer: str
    mode: str                   # "file" | "network"
    version: Callable[[], str]
    run: Callable[[Target], Run]
    note: str = ""              # how its values were turned into text (shown on the page)


# -- values -----------------------------------------------------------------------------
_DATETIME = re.compile(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?")
_TIME = re.compile(r"(-?)(\d+):(\d\d):(\d\d)(?:\.(\d{1,6}))?")


def canonical(value):
    """A value as compared: temporal text as its fields (fraction in microseconds)."""
    if value is None:
        return None
    text = str(value)
    match = _DATETIME.fullmatch(text)
    if match:
        *fields, frac = match.groups()
        return ("datetime", *map(int, fields), int((frac or "").ljust(6, "0")))
    match = _TIME.fullmatch(text)
    if match:
        sign, *fields, frac = match.groups()
        parts = (*map(int, fields), int((frac or "").ljust(6, "0")))
        return ("time", "-" if sign and any(parts) else "", *parts)
    return text


def same(got, want) -> bool:
    return canonical(got) == canonical(want)


# -- the server's changes of a corpus case ------------------------------------------------
@dataclass(frozen=True)
class Step:
    gtid: str
    table: str
    changes: tuple[Change, ...]


def expected_steps(expected: dict) -> list[Step]:
    """The row changes each transaction of a sample made, from the server's own snapshots
    (``<case>.expected.json``: the table's rows, ``CAST(col AS CHAR)``, after each step):
    a row whose id appears is an insert, one that disappears a delete, one that changed an
    update (the server logs no image of a row an UPDATE left as it was)."""
    state: dict[str, dict[str, tuple]] = {}
    steps = []
    for step in expected["steps"]:
        for table, rows in sorted(step.get("snapshot", {}).items()):
            before = state.get(table, {})
            after = {row[0]: tuple(row) for row in rows}
            changes = []
            for key in sorted(before.keys() | after.keys(), key=int):
                old, new = before.get(key), after.get(key)
                if old != new:
                    op = INSERT if old is None else DELETE if new is None else UPDATE
                    changes.append(Change(table, op, old, new, step["gtid"]))
            state[table] = after
            if changes:
                steps.append(Step(step["gtid"], table, tuple(changes)))
    return steps


def final_rows(expected: dict) -> dict[str, list[tuple]]:
    """Each table's rows after the last step."""
    state: dict[str, list[tuple]] = {}
    for step in expected["steps"]:
        for table, rows in step.get("snapshot", {}).items():
            state[table] = [tuple(r) for r in rows]
    return state


def load_expected(path: Path) -> dict:
    return json.loads(path.read_text())


# -- transactions of a binlog file (its structure, not its values) ------------------------
GTID_EVENT = 162


def _events(binlog: Path) -> Iterator[tuple[int, int, str | None]]:
    """(position, type code, GTID of the transaction it is in) of every event of a binlog
    file, from the event headers (19 bytes: timestamp, type, server id, size, next
    position, flags) and each GTID event's body (seq_no u64, domain u32):
    sql/log_event.cc Gtid_log_event."""
    data = binlog.read_bytes()
    current, pos = None, 4
    while pos + 19 <= len(data):
        type_code, server_id, size = data[pos + 4], *struct.unpack_from("<II", data, pos + 5)
        if size < 19 or pos + size > len(data):
            raise ValueError(f"{binlog.name} @ {pos}: an event of {size} bytes does not fit")
        if type_code == GTID_EVENT:
            seq, domain = struct.unpack_from("<QI", data, pos + 19)
            current = f"{domain}-{server_id}-{seq}"
        yield pos, type_code, current
        pos += size


def transactions(binlog: Path) -> list[tuple[str, int]]:
    """(GTID, position of its GTID event) of every MariaDB transaction in a binlog file."""
    return [(gtid, pos) for pos, type_code, gtid in _events(binlog) if type_code == GTID_EVENT and gtid]


# WRITE/UPDATE/DELETE_ROWS v1 and v2, MariaDB's compressed ones (sql/log_event.h Log_event_type)
ROWS_EVENTS = frozenset({23, 24, 25, 30, 31, 32, 166, 167, 168, 169, 170, 171})


def row_transactions(binlog: Path) -> list[str]:
    """The GTIDs of the transactions that hold a rows event, in binlog order."""
    return list(dict.fromkeys(gtid for _, type_code, gtid in _events(binlog)
                              if type_code in ROWS_EVENTS and gtid))


def position_after(binlog: Path, gtid: str) -> int | None:
    """Where the transaction after ``gtid`` starts in the file (None: it was the last)."""
    found = False
    for name, pos in transactions(binlog):
        if found:
            return pos
        found = name == gtid
    return None


def gtid_of_position(binlog: Path, position: int) -> str | None:
    """The transaction an event at (or ending at) ``position`` belongs to."""
    current = None
    for name, pos in transactions(binlog):
        if pos >= position:
            break
        current = name
    return current


# -- comparing -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    status: str                 # "exact" | "wrong" | "error"
    detail: str = ""            # wrong: the first wrong value; error: the peer's message


EXACT = Verdict("exact")


def _show(value) -> str:
    return "NULL" if value is None else str(value)


def compare_step(step: Step, got: list[Change], column: int) -> str | None:
    """The first difference in one column between the server's changes of a transaction and
    a peer's (matched by operation and row id), or None."""
    pending = list(got)
    for want in step.changes:
        match = next((g for g in pending if g.op == want.op and same(g.key, want.key)), None)
        if match is None:
            return f"no {want.op} of row {want.key}"
        pending.remove(match)
        for image, mine, theirs in (("before", match.before, want.before), ("after", match.after, want.after)):
            if theirs is None:
                continue
            if mine is None or len(mine) <= column:
                return f"row {want.key}: no {image} image of the column"
            if not same(mine[column], theirs[column]):
                return f"`{_show(mine[column])}` for `{_show(theirs[column])}` (row {want.key}, {want.op})"
    if pending:
        extra = pending[0]
        return f"a {extra.op} of row `{_show(extra.key)}` the server did not make"
    return None


def verdict(steps: Iterable[Step], run: Run, column: int, expected_final: list[tuple] | None = None) -> Verdict:
    """A peer's verdict on one column of one table: its first error or wrong value in the
    order of the server's transactions, else exact."""
    errors = {gtid: message for gtid, message in run.errors if gtid}
    by_step: dict[tuple[str | None, str], list[Change]] = {}
    for change in run.changes:
        by_step.setdefault((change.gtid, change.table), []).append(change)
    steps = list(steps)
    for step in steps:
        if step.gtid in errors:
            return Verdict("error", errors[step.gtid])
    if run.errors and not run.finished:
        reached = {gtid for gtid, _ in by_step} | set(errors)
        if any(step.gtid not in reached for step in steps):
            return Verdict("error", run.errors[-1][1])
    if run.final is not None:
        table = steps[0].table if steps else ""
        got = {row[0]: row for row in run.final.get(table, [])}
        for row in expected_final or []:
            mine = got.get(row[0])
            if mine is None:
                return Verdict("wrong", f"no row {row[0]}")
            if not same(mine[column], row[column]):
                return Verdict("wrong", f"`{_show(mine[column])}` for `{_show(row[column])}` (row {row[0]})")
        return EXACT
    for step in steps:
        problem = compare_step(step, by_step.get((step.gtid, step.table), []), column)
        if problem:
            return Verdict("wrong", problem)
    return EXACT
