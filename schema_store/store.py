"""SchemaStore: table schemas versioned by binlog position, kept in SQLite.

A *position* is ``(file_name, offset)``; ``None`` is the baseline (before any binlog
event).  Versions are ordered baseline first, then by file name and offset; file names
sharing a basename compare by their numeric suffix (``mariadb-bin.000009`` <
``mariadb-bin.000010``, and ``.999999`` < ``.1000000``).  Several versions at the same
position are ordered by insertion.  History is never overwritten: a DROP is a tombstone
version, a new import adds versions.

Overrides (``binlog schema set DB.TABLE @N TIME 3``) are stored apart from the versions
and applied by :meth:`SchemaStore.schema` to every version at or after their position.
Precisions found by ``--infer-precision`` are stored the same way, marked inferred; a
manual override wins over an inferred one for the same column.
"""
from __future__ import annotations

import re
import sqlite3
import threading
from dataclasses import replace
from pathlib import Path
from typing import Iterable

from .ddl import Catalog, parse_script
from .errors import SchemaError
from .model import TableSchema, table_from_json, table_to_json

Position = tuple[str, int] | None
Key = tuple[str, str]

_SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS versions (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    db          TEXT NOT NULL,
    tbl         TEXT NOT NULL,
    pos_file    TEXT,              -- NULL: baseline
    pos_offset  INTEGER,
    source      TEXT NOT NULL,
    schema_json TEXT               -- NULL: dropped / unknown from here on
);
CREATE INDEX IF NOT EXISTS versions_table ON versions (db, tbl);
CREATE TABLE IF NOT EXISTS overrides (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    db          TEXT NOT NULL,
    tbl         TEXT NOT NULL,
    col_index   INTEGER,           -- 1-based, or NULL when col_name is used
    col_name    TEXT,
    data_type   TEXT,
    precision   INTEGER NOT NULL,
    pos_file    TEXT,
    pos_offset  INTEGER,
    kind        TEXT NOT NULL,     -- 'override' | 'inferred'
    source      TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS databases (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    db          TEXT NOT NULL,
    pos_file    TEXT,
    pos_offset  INTEGER,
    charset     TEXT,
    collation   TEXT,
    dropped     INTEGER NOT NULL DEFAULT 0,
    source      TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
INSERT OR IGNORE INTO meta VALUES ('format', '1');
"""

_SUFFIX_RE = re.compile(r"^(.*?)(\d+)$")


def file_key(name: str) -> tuple[str, int, str]:
    """Sort key of a binlog file name: (basename, numeric suffix, name)."""
    m = _SUFFIX_RE.match(name)
    if m:
        return (m.group(1), int(m.group(2)), name)
    return (name, -1, name)


def position_key(position: Position) -> tuple:
    """Sort key of a position: the baseline (None) first."""
    if position is None:
        return (0,)
    file_name, offset = position
    return (1, file_key(file_name), int(offset))


def _pos(file_name, offset) -> Position:
    return None if file_name is None else (file_name, int(offset))


def _check_position(position) -> Position:
    if position is None:
        return None
    try:
        file_name, offset = position
    except (TypeError, ValueError):
        raise SchemaError(f"bad position {position!r}: expected (file_name, offset) or None") from None
    return (str(file_name), int(offset))


class SchemaStore:
    """Versioned table schemas in SQLite (``path`` None: in memory)."""

    def __init__(self, path: str | Path | None = None):
        self.path = ":memory:" if path is None else str(path)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.executescript(_SCHEMA_SQL)
        self._cache: dict[Key, list[tuple[tuple, int, Position, str, str | None]]] = {}
        self._overrides_cache: list | None = None

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "SchemaStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- writing ------------------------------------------------------------------------
    def add_version(self, schema: TableSchema, position: Position = None, *, source: str) -> int:
        """Record ``schema`` as the table's schema from ``position`` on; returns the row id."""
        position = _check_position(position)
        schema = replace(schema, source=source)
        return self._insert(schema.db, schema.table, position, source, table_to_json(schema))

    def drop_table(self, db: str, table: str, position: Position, *, source: str) -> int:
        """Record that the table does not exist (or is unknown) from ``position`` on."""
        return self._insert(db, table, _check_position(position), source, None)

    def _insert(self, db, table, position, source, payload) -> int:
        with self._lock:
            cur = self._conn.execute(
                "INSERT INTO versions (db, tbl, pos_file, pos_offset, source, schema_json) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (db, table, *(position or (None, None)), source, payload))
            self._cache.pop((db, table), None)
            return int(cur.lastrowid)

    def set_override(self, db: str, table: str, column: int | str, data_type: str, precision: int,
                     *, position: Position = None, source: str = "override") -> int:
        """Force ``precision`` (and ``data_type``) for a column, given as a 1-based index
        (``@N``; ``"@3"`` also accepted) or a name, in every version at/after ``position``."""
        return self._add_override(db, table, column, data_type, precision, position, "override", source)

    def record_inferred(self, db: str, table: str, column_index: int, precision: int,
                        position: Position, *, source: str = "inferred",
                        data_type: str | None = None) -> int:
        """Store a precision inferred from row images.  ``column_index`` is **0-based**
        (the index into TableSchema.columns / the TABLE_MAP column order)."""
        if column_index < 0:
            raise SchemaError(f"bad column index {column_index}")
        return self._add_override(db, table, column_index + 1, data_type, precision, position,
                                  "inferred", source)

    def _add_override(self, db, table, column, data_type, precision, position, kind, source) -> int:
        position = _check_position(position)
        if not isinstance(precision, int) or not 0 <= precision <= 6:
            raise SchemaError(f"precision must be 0..6, got {precision!r}", table=f"{db}.{table}")
        col_index = col_name = None
        if isinstance(column, str) and column.startswith("@") and column[1:].isdigit():
            column = int(column[1:])
        if isinstance(column, int):
            if column < 1:
                raise SchemaError(f"column index is 1-based, got @{column}", table=f"{db}.{table}")
            col_index = column
        else:
            col_name = column
        with self._lock:
            cur = self._conn.execute(
                "INSERT INTO overrides (db, tbl, col_index, col_name, data_type, precision, "
                "pos_file, pos_offset, kind, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (db, table, col_index, col_name, data_type.lower() if data_type else None,
                 precision, *(position or (None, None)), kind, source))
            self._overrides_cache = None
            return int(cur.lastrowid)

    # -- reading ------------------------------------------------------------------------
    def _versions(self, db: str, table: str):
        key = (db, table)
        with self._lock:
            rows = self._cache.get(key)
            if rows is None:
                cur = self._conn.execute(
                    "SELECT id, pos_file, pos_offset, source, schema_json FROM versions "
                    "WHERE db = ? AND tbl = ?", key)
                rows = []
                for vid, pf, po, source, payload in cur.fetchall():
                    pos = _pos(pf, po)
                    rows.append((position_key(pos), vid, pos, source, payload))
                rows.sort(key=lambda r: (r[0], r[1]))
                self._cache[key] = rows
            return rows

    def _raw_schema(self, db: str, table: str, position: Position) -> TableSchema | None:
        pk = position_key(_check_position(position))
        best = None
        for row in self._versions(db, table):
            if row[0] <= pk:
                best = row
            else:
                break
        if best is None or best[4] is None:
            return None
        return table_from_json(best[4])

    def overrides(self, db: str | None = None, table: str | None = None) -> list[dict]:
        """All overrides and inferred precisions (oldest first) as dicts."""
        with self._lock:
            if self._overrides_cache is None:
                cur = self._conn.execute(
                    "SELECT id, db, tbl, col_index, col_name, data_type, precision, pos_file, "
                    "pos_offset, kind, source FROM overrides ORDER BY id")
                self._overrides_cache = [
                    {"id": r[0], "db": r[1], "table": r[2],
                     "column": r[3] if r[3] is not None else r[4], "data_type": r[5],
                     "precision": r[6], "position": _pos(r[7], r[8]), "kind": r[9], "source": r[10]}
                    for r in cur.fetchall()]
            rows = self._overrides_cache
        return [dict(o) for o in rows
                if (db is None or o["db"] == db) and (table is None or o["table"] == table)]

    def overrides_for(self, db: str, table: str, position: Position = None) -> dict[int | str, dict]:
        """Overrides in force at ``position``: column (1-based int or name) -> override.
        Useful when no schema is known for the table."""
        pk = position_key(_check_position(position))
        active = [o for o in self.overrides(db, table) if position_key(o["position"]) <= pk]
        # manual overrides win over inferred ones; then later position, then later id
        active.sort(key=lambda o: (o["kind"] == "override", position_key(o["position"]), o["id"]))
        out: dict[int | str, dict] = {}
        for o in active:
            col = o["column"]
            out[col.lower() if isinstance(col, str) else col] = o
        return out

    def schema(self, db: str, table: str, position: Position = None) -> TableSchema | None:
        """The table's schema at ``position`` (latest version at or before it; None = the
        baseline), with overrides applied; None when unknown or dropped."""
        base = self._raw_schema(db, table, position)
        if base is None:
            return None
        active = self.overrides_for(db, table, position)
        if not active:
            return base
        cols = list(base.columns)
        inferred = base.inferred
        for col_ref, o in active.items():
            if isinstance(col_ref, int):
                i = col_ref - 1 if col_ref <= len(cols) else None
            else:
                i = base.column_index(col_ref)
            if i is None:
                continue
            col = cols[i]
            cols[i] = replace(col, data_type=o["data_type"] or col.data_type,
                              datetime_precision=o["precision"])
            inferred |= o["kind"] == "inferred"
        return replace(base, columns=tuple(cols), inferred=inferred)

    def tables(self, position: Position = None) -> list[Key]:
        """Tables that exist (are known) at ``position``, sorted."""
        with self._lock:
            keys = self._conn.execute("SELECT DISTINCT db, tbl FROM versions").fetchall()
        return sorted((db, t) for db, t in keys if self._raw_schema(db, t, position) is not None)

    def history(self, db: str, table: str) -> list[tuple[Position, str, TableSchema | None]]:
        """All versions of a table in order: (position, source, schema or None if dropped)."""
        return [(pos, source, table_from_json(payload) if payload is not None else None)
                for _, _, pos, source, payload in self._versions(db, table)]

    # -- databases ----------------------------------------------------------------------
    def set_database(self, db: str, charset: str | None, collation: str | None,
                     position: Position = None, *, source: str, dropped: bool = False) -> None:
        position = _check_position(position)
        with self._lock:
            self._conn.execute(
                "INSERT INTO databases (db, pos_file, pos_offset, charset, collation, dropped, source) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (db, *(position or (None, None)), charset, collation, int(dropped), source))

    def databases(self, position: Position = None) -> dict[str, tuple[str | None, str | None]]:
        pk = position_key(_check_position(position))
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, db, pos_file, pos_offset, charset, collation, dropped FROM databases").fetchall()
        rows = sorted(rows, key=lambda r: (position_key(_pos(r[2], r[3])), r[0]))
        out: dict[str, tuple[str | None, str | None]] = {}
        for _, db, pf, po, cs, coll, dropped in rows:
            if position_key(_pos(pf, po)) > pk:
                continue
            if dropped:
                out.pop(db, None)
            else:
                out[db] = (cs, coll)
        return out

    # -- DDL ----------------------------------------------------------------------------
    def catalog_at(self, position: Position = None, *, current_db: str | None = None) -> Catalog:
        """The state at ``position`` (without overrides) as a :class:`Catalog` to apply DDL to."""
        tables = {}
        for key in self.tables(position):
            schema = self._raw_schema(key[0], key[1], position)
            if schema is not None:
                tables[key] = schema
        return Catalog(tables, self.databases(position), current_db)

    def save_catalog_changes(self, catalog: Catalog, keys: Iterable[Key], position: Position,
                             *, source: str, before: Catalog | None = None) -> list[Key]:
        """Record the state of ``keys`` in ``catalog`` at ``position``: a version for each
        existing table, a tombstone for each that vanished; database defaults too when
        ``before`` is given."""
        out = []
        for key in keys:
            schema = catalog.get(key)
            if schema is not None:
                self.add_version(schema, position, source=source)
                out.append(key)
            elif self._raw_schema(key[0], key[1], position) is not None:
                self.drop_table(key[0], key[1], position, source=source)
                out.append(key)
        if before is not None:
            for db, cs in catalog.databases.items():
                if before.databases.get(db) != cs:
                    self.set_database(db, cs[0], cs[1], position, source=source)
            for db in before.databases:
                if db not in catalog.databases:
                    self.set_database(db, None, None, position, source=source, dropped=True)
        return out

    def import_ddl(self, text: str, *, source: str, position: Position = None,
                   default_db: str | None = None) -> list[Key]:
        """Parse a DDL script and record the resulting tables at ``position`` (None:
        baseline); returns the (db, table) keys that got a new version or tombstone.
        Raises DdlParseError (nothing is recorded then)."""
        position = _check_position(position)
        if ":" not in source or not source.split(":", 1)[0] in ("ddl", "binlog", "live"):
            source = f"ddl:{source}"
        file_label = source.split(":", 1)[1] if source.startswith("ddl:") else source
        actions = parse_script(text, source=file_label, default_db=default_db)
        before = self.catalog_at(position, current_db=default_db)
        catalog = before.copy()
        changed = catalog.apply_all(actions)
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                out = self.save_catalog_changes(catalog, changed, position, source=source,
                                                before=before)
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                self._cache.clear()
                raise
        return out

    def import_live(self, dsn: str, **kw) -> list[Key]:
        """Snapshot a live server's schemas (see :mod:`schema_store.live`)."""
        from .live import import_live
        return import_live(self, dsn, **kw)


__all__ = ["SchemaStore", "Position", "position_key", "file_key"]
