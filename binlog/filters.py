"""Table filters, decided once per TABLE_MAP (like replicate-wild-do-table).

Patterns are ``db.table`` with SQL-LIKE wildcards ``%`` (any run of characters) and
``_`` (one character), plus ``*`` as a synonym of ``%``; ``\\`` escapes a wildcard.
A table is kept when it matches an include (``--table``, or ``--database`` for a whole
schema) - or when there are no includes - and matches no ``--exclude-table``.
Matching is case-sensitive for table names as on Linux servers (lower_case_table_names=0).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import UsageError

# DB.TABLE: each part plain (no dot, no backquote) or backquoted (`` doubles a backquote)
_PART = r"(`(?:[^`]|``)+`|[^.`]+)"
_PATTERN = re.compile(_PART + r"\." + _PART, re.S)


def split_pattern(pattern: str) -> tuple[str, str]:
    """(db, table) parts of a DB.TABLE pattern, backquotes removed; UsageError for one
    that cannot match a table (``cs.``, ``.t``, ``cs.t.x``, unbalanced backquotes)."""
    m = _PATTERN.fullmatch(pattern)
    if not m:
        raise UsageError(f"table pattern {pattern!r} must be DB.TABLE with both parts given "
                         f"(wildcards % _ *; backquote a name holding a dot: `a.b`.t)")
    db, table = (_unquote(p) for p in m.groups())
    return db, table


def _unquote(part: str) -> str:
    if part.startswith("`"):
        return part[1:-1].replace("``", "`")
    return part


def _like(text: str) -> str:
    out, escaped = [], False
    for ch in text:
        if escaped:
            out.append(re.escape(ch))
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in "%*":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        else:
            out.append(re.escape(ch))
    return "".join(out)


def compile_pattern(pattern: str) -> tuple[re.Pattern, re.Pattern]:
    """(db regex, table regex) of a DB.TABLE pattern."""
    db, table = split_pattern(pattern)
    return re.compile(_like(db), re.S), re.compile(_like(table), re.S)


def _matches(pattern, db: str, table: str) -> bool:
    return bool(pattern[0].fullmatch(db) and pattern[1].fullmatch(table))


@dataclass
class TableFilter:
    """Which tables a reader decodes (``--table``, ``--exclude-table``, ``--database``):
    rows events of other tables are skipped without being decoded.

    >>> from binlog import BinlogReader, TableFilter
    >>> only = TableFilter(include=["tf.dates", "tf.time%"], exclude=["tf.timestamps"])
    >>> only.keeps("tf", "dates"), only.keeps("tf", "times"), only.keeps("tf", "timestamps")
    (True, True, False)
    >>> reader = BinlogReader(["samples/mariadb-10.11/types_full.binlog"], table_filter=only)
    >>> sorted({change.table for change in reader.changes()})
    ['dates', 'times']
    """

    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    databases: list[str] = field(default_factory=list)

    def __post_init__(self):
        for db in self.databases:
            if not db or "." in db.strip("`") and not db.startswith("`"):
                raise UsageError(f"--database {db!r}: a database name (no table part)")
        self._include = [compile_pattern(p) for p in self.include]
        self._include += [(re.compile(re.escape(_unquote(d))), re.compile(".*", re.S))
                          for d in self.databases]
        self._exclude = [compile_pattern(p) for p in self.exclude]
        self._names = list(self.include) + [f"--database {d}" for d in self.databases]
        self._cache: dict[tuple[str, str], bool] = {}
        self.matched: set[int] = set()          # includes that kept a table
        self.excluded: set[int] = set()         # excludes that dropped one

    @property
    def active(self) -> bool:
        return bool(self._include or self._exclude)

    def keeps(self, db: str, table: str) -> bool:
        key = (db, table)
        decision = self._cache.get(key)
        if decision is None:
            hits = [i for i, p in enumerate(self._include) if _matches(p, db, table)]
            drops = [i for i, p in enumerate(self._exclude) if _matches(p, db, table)]
            decision = (not self._include or bool(hits)) and not drops
            if decision:
                self.matched.update(hits)
            self.excluded.update(drops)
            self._cache[key] = decision
        return decision

    def keeps_database(self, db: str) -> bool:
        """Whether the filter can keep some table of ``db`` (CREATE/DROP DATABASE)."""
        if not self._include:
            return True
        return any(p[0].fullmatch(db) for p in self._include)

    def unmatched(self) -> list[str]:
        """The patterns no table seen so far matched (warned about at the end of a run:
        a filter that matches nothing is most likely a typo)."""
        out = [self._names[i] for i in range(len(self._include)) if i not in self.matched]
        out += [f"--exclude-table {p}" for i, p in enumerate(self.exclude) if i not in self.excluded]
        return out
