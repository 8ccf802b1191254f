"""``--rewrite-db FROM->TO``, with mariadb-binlog's semantics.

mariadb-binlog (``client/mysqlbinlog.cc``) rewrites two things and nothing else:

- the database of each TABLE_MAP (``process_event``, case TABLE_MAP_EVENT:
  ``map->rewrite_db``): the rows of FROM's tables go to TO's;
- the default database of a QUERY event (``print_use_stmt``: ``use `TO``` instead of
  ``use `FROM```), unless the event carries LOG_EVENT_SUPPRESS_USE_F (CREATE / DROP /
  ALTER DATABASE: their ``db`` is the database they name, not one to USE).

It never edits statement text: a qualified name (``INSERT INTO FROM.t ...``, ``CREATE
DATABASE FROM``) still names FROM.  Table filters (``--database``, ``--table``) see the
binlog's own names, as mariadb-binlog's ``--database`` does (``shall_skip_database``
runs before the rewrite).  Here the same, for row records, statement and DDL records,
``--format sql`` and ``binlog apply``; a statement whose text names FROM qualified, or
whose database is FROM but not rewritable (LOG_EVENT_SUPPRESS_USE_F), is named in a warning.
"""
from __future__ import annotations

import re
from dataclasses import replace

from ..constants import LOG_EVENT_SUPPRESS_USE_F


def _qualified(name: str) -> re.Pattern:
    """``name`` used as a qualifier in SQL text: ```name`.`` or ``name.`` (any case: a
    warning too many is harmless)."""
    quoted = "`" + re.escape(name.replace("`", "``")) + "`"
    bare = r"(?<![\w$`.])" + re.escape(name) + r"(?![\w$])"
    return re.compile(f"(?:{quoted}|{bare})\\s*\\.", re.IGNORECASE)


class DbRewrite:
    """The rules of ``--rewrite-db`` (``{FROM: TO}``); ``warn(text)`` is told of
    statements the rewrite cannot reach into."""

    def __init__(self, rules: dict | None = None, warn=None):
        self.rules = dict(rules or {})
        self.warn = warn
        self._patterns = {old: _qualified(old) for old in self.rules}
        self._warned: set = set()

    def __bool__(self) -> bool:
        return bool(self.rules)

    def db(self, name):
        """A TABLE_MAP's database (rows): TO for FROM."""
        return self.rules.get(name, name)

    def statement(self, statement):
        """A statement (``reader.StatementChange`` or ``assembly.transactions.Statement``)
        with its default database rewritten; the same object when nothing changes."""
        if not self.rules:
            return statement
        event = getattr(statement, "query_event", None) or getattr(statement, "event", None)
        sql = getattr(statement, "sql", None)
        text: str = getattr(statement, "query", "") if sql is None else sql
        suppress = event is not None and event.header.flags & LOG_EVENT_SUPPRESS_USE_F
        self._check_text(statement, text, suppress)
        target = self.rules.get(statement.db)
        if target is None or suppress:
            return statement
        return replace(statement, db=target)

    def _check_text(self, statement, text: str, suppress) -> None:
        if self.warn is None:
            return
        where = f"{statement.file} @ {statement.pos}"
        for old, pattern in self._patterns.items():
            if (where, old) in self._warned:
                continue
            named = pattern.search(text) is not None
            if suppress and statement.db == old:
                reason = "it names the database itself (mariadb-binlog leaves such statements as they are)"
            elif named:
                reason = f"its text names {old}.<table> qualified, which stays {old}"
            else:
                continue
            self._warned.add((where, old))
            self.warn(f"{where}: --rewrite-db {old}->{self.rules[old]} does not change this "
                      f"statement's text: {reason}: {_short(text)}")


def _short(text: str, n: int = 120) -> str:
    flat = " ".join(text.split())
    flat = "".join(c if c.isprintable() else "?" for c in flat)
    return flat if len(flat) <= n else flat[:n] + "..."
