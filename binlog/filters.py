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


def compile_pattern(pattern: str) -> re.Pattern:
    if "." not in pattern:
        raise UsageError(f"table pattern {pattern!r} must be DB.TABLE (wildcards % _ *)")
    out, escaped = [], False
    for ch in pattern:
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
    return re.compile("".join(out), re.S)


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
        self._include = [compile_pattern(p) for p in self.include]
        self._include += [compile_pattern(f"{d}.%") for d in self.databases]
        self._exclude = [compile_pattern(p) for p in self.exclude]
        self._cache: dict[tuple[str, str], bool] = {}

    @property
    def active(self) -> bool:
        return bool(self._include or self._exclude)

    def keeps(self, db: str, table: str) -> bool:
        key = (db, table)
        decision = self._cache.get(key)
        if decision is None:
            name = f"{db}.{table}"
            decision = ((not self._include or any(p.fullmatch(name) for p in self._include))
                        and not any(p.fullmatch(name) for p in self._exclude))
            self._cache[key] = decision
        return decision
