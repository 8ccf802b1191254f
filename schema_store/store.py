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

import bisect
import json
import os
import re
import sqlite3
import threading
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from .errors import SchemaError
from .model import ColumnSchema, TableSchema, column_from_dict, table_from_dict

if TYPE_CHECKING:
    from .ddl import Catalog

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
CREATE TABLE IF NOT EXISTS ddl_seen (
    pos_file    TEXT NOT NULL,     -- a binlog DDL already applied to this store: reading it
    pos_offset  INTEGER NOT NULL,  -- again (the same file twice, a resumed apply) is a no-op
    digest      TEXT NOT NULL,     -- sha256 of the statement text
    PRIMARY KEY (pos_file, pos_offset, digest)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
INSERT OR IGNORE INTO meta VALUES ('format', '1');
"""

_COLUMN_FIELDS = tuple(f.name for f in fields(ColumnSchema))
_TUPLE_FIELDS = ("enum_values", "set_values")
# A version keeping at least this many columns of the one before it is stored as a delta.
_DELTA_MIN_COLUMNS = 16
# Store formats: 1 whole schemas only; 2 may hold deltas: {"base": id, "delta_columns":
# [[start, end] (columns start..end-1 of the base version) or a column, ...], ...}.
_FORMATS = ("1", "2")

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


def _inserted_id(cur) -> int:
    """The row id an INSERT gave (sqlite3 sets it for every INSERT of a row)."""
    if cur.lastrowid is None:
        raise SchemaError("schema store: an INSERT gave no row id")
    return int(cur.lastrowid)


def _known_position(position) -> tuple[str, int]:
    """A position that must be given (not None: the baseline has none)."""
    checked = _check_position(position)
    if checked is None:
        raise SchemaError("a binlog position is needed here, not None")
    return checked


def _check_position(position) -> Position:
    if position is None:
        return None
    try:
        file_name, offset = position
    except (TypeError, ValueError):
        raise SchemaError(f"bad position {position!r}: expected (file_name, offset) or None") from None
    return (str(file_name), int(offset))


class SchemaStore:
    """Versioned table schemas in SQLite (``path`` None: in memory).

    Each table has versions at binlog positions (``(file, offset)``; None: before the
    binlogs start): from DDL scripts (``import_ddl``), a live server (``import_live``),
    or the DDL a reader follows in the binlogs.  A ``binlog.BinlogReader`` given a store
    takes column names, types and legacy temporal precisions from it.

    >>> from binlog import BinlogReader, SchemaStore
    >>> store = SchemaStore()          # SchemaStore("schemas.db"): kept in a file
    >>> store.import_ddl("CREATE TABLE nm.mixed (id INT, ti TINYINT, tiu TINYINT UNSIGNED)",
    ...                  source="example.sql")
    [('nm', 'mixed')]
    >>> [c.name for c in store.schema("nm", "mixed").columns]
    ['id', 'ti', 'tiu']
    >>> reader = BinlogReader(["samples/mariadb-10.11/types_nometa.binlog"], schema=store)
    >>> change = next(reader.changes())
    >>> change.after["tiu"]                  # UNSIGNED, as the store says (the binlog does not)
    255
    """

    def __init__(self, path: str | Path | None = None):
        self.path = ":memory:" if path is None else str(path)
        self._lock = threading.RLock()
        self.read_only = False
        self._conn = self._open(path)
        # (db, table) -> its versions in order; only added to by writes
        self._cache: dict[Key, _TableVersions] = {}
        self._overrides_cache: list | None = None
        self._column_json: dict[int, tuple[ColumnSchema, str]] = {}
        fmt = self._read("SELECT value FROM meta WHERE key = 'format'")
        if fmt and fmt[0][0] not in _FORMATS:
            raise SchemaError(f"schema store {self.path} has format {fmt[0][0]}, newer than "
                              f"this program reads ({', '.join(_FORMATS)})")
        self._delta_format = bool(fmt) and fmt[0][0] == "2"

    def _open(self, path) -> sqlite3.Connection:
        """Open (or create) the store; a store we may not write is opened read-only (it
        serves lookups; a write then fails with a SchemaError).  Every failure is a
        SchemaError naming the file."""
        if path is None:
            conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            conn.executescript(_SCHEMA_SQL)
            return conn
        where = str(path)
        if os.path.isdir(where):
            raise SchemaError(f"schema store {where} is a directory, not an SQLite file")
        writable = os.access(where, os.W_OK) if os.path.exists(where) else True
        try:
            if writable:
                conn = sqlite3.connect(where, check_same_thread=False, isolation_level=None)
                # WAL + synchronous=NORMAL: a commit per DDL without an fsync each (a crash
                # may lose the last commits, never corrupt; the DDL is re-read idempotently).
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.executescript(_SCHEMA_SQL)
            else:
                conn = self._open_read_only(where)
            conn.execute("SELECT count(*) FROM versions").fetchone()
        except sqlite3.Error as exc:
            raise SchemaError(f"cannot open schema store {where}: {_sqlite_reason(exc, where)}") from exc
        return conn

    def _open_read_only(self, where: str) -> sqlite3.Connection:
        self.read_only = True
        uri = "file:" + _uri_path(where)
        try:
            conn = sqlite3.connect(uri + "?mode=ro", uri=True, check_same_thread=False,
                                   isolation_level=None)
            conn.execute("SELECT count(*) FROM versions").fetchone()
            return conn
        except sqlite3.OperationalError:
            # A WAL-mode file in a directory we may not write: no -shm can be made, so
            # read it as immutable (nobody may be writing it then: we could not either).
            return sqlite3.connect(uri + "?immutable=1", uri=True, check_same_thread=False,
                                   isolation_level=None)

    def _write(self, sql: str, params=()) -> sqlite3.Cursor:
        """Run a write; SchemaError (naming the store) when the store refuses it."""
        if self.read_only:
            raise SchemaError(f"schema store {self.path} is read-only: cannot record changes",
                              hint="give a writable --schema-store, or copy it first")
        try:
            return self._conn.execute(sql, params)
        except sqlite3.Error as exc:
            raise SchemaError(f"cannot write schema store {self.path}: "
                              f"{_sqlite_reason(exc, self.path)}") from exc

    def _read(self, sql: str, params=()) -> list:
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise SchemaError(f"cannot read schema store {self.path}: "
                              f"{_sqlite_reason(exc, self.path)}") from exc

    def transaction(self) -> _Transaction:
        """``with store.transaction():`` - writes inside are all kept or none."""
        return _Transaction(self)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "SchemaStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- writing ------------------------------------------------------------------------
    def add_version(self, schema: TableSchema, position: Position = None, *, source: str) -> int | None:
        """Record ``schema`` as the table's schema from ``position`` on; returns the row id,
        or None when that is already the table's schema there (nothing is recorded, so
        importing the same input twice changes nothing)."""
        position = _check_position(position)
        schema = replace(schema, source=source)
        current = self._raw_schema(schema.db, schema.table, position)
        if current is not None and replace(current, source=source) == schema:
            return None
        return self._insert(schema.db, schema.table, position, source, schema)

    def drop_table(self, db: str, table: str, position: Position, *, source: str) -> int | None:
        """Record that the table does not exist (or is unknown) from ``position`` on
        (None, recording nothing, when it is already unknown there)."""
        position = _check_position(position)
        if self._raw_schema(db, table, position) is None and self._versions(db, table):
            return None
        return self._insert(db, table, position, source, None)

    def _insert(self, db, table, position, source, schema: TableSchema | None) -> int:
        payload = None
        if schema is not None:
            payload = self._payload(schema, self._version_at(db, table, position))
        with self._lock:
            cur = self._write(
                "INSERT INTO versions (db, tbl, pos_file, pos_offset, source, schema_json) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (db, table, *(position or (None, None)), source, payload))
            vid = _inserted_id(cur)
            known = self._cache.get((db, table))
            if known is not None:
                # Keep the loaded versions instead of reloading them all: a DDL costs the
                # same however many versions came before.
                known.add(_Version(position, vid, source, payload, schema))
            return vid

    def _payload(self, schema: TableSchema, base: "_Version | None") -> str:
        """What ``versions.schema_json`` keeps: the whole schema, or - when most columns
        are those of the version it replaces - only the changed middle ("delta").  An
        ALTER then writes what it changed, not the table's 1000 columns again."""
        old = self._materialize(base) if base is not None else None
        if base is not None and old is not None:
            parts, kept = _column_runs(schema.columns, old.columns)
            if kept >= _DELTA_MIN_COLUMNS:
                if not self._delta_format:
                    self._write("UPDATE meta SET value = '2' WHERE key = 'format' AND value = '1'")
                    self._delta_format = True
                delta = {"db": schema.db, "table": schema.table, "base": base.vid,
                         "delta_columns": parts, **_table_fields(schema)}
                return json.dumps(delta, ensure_ascii=False, separators=(",", ":"))
        return self._table_json(schema)

    def _materialize(self, version: "_Version") -> TableSchema | None:
        """The schema of a version, resolving deltas along their bases (iteratively: a
        chain may be thousands of versions long)."""
        if version._schema is not None or version.payload is None:
            return version._schema
        chain = []
        v = version
        while True:
            data = _load_payload(v, self.path)
            chain.append((v, data))
            if "base" not in data:
                schema = None
                break
            known = self._cache.get((data.get("db") or "", data.get("table") or ""))
            base = known.by_vid.get(data["base"]) if known is not None else None
            if base is None or base.payload is None:
                raise SchemaError(f"schema store {self.path}: version {v.vid} is based on "
                                  f"version {data['base']}, which is missing")
            if base._schema is not None:
                schema = base._schema
                break
            v = base
        for v, data in reversed(chain):
            schema = _apply_payload(schema, data, v, self.path)
            v._schema = schema
        return version._schema

    def full_payload(self, db: str, table: str, payload: str | None) -> str | None:
        """A ``schema_json`` value as a whole schema (a delta resolved): what a snapshot
        holds, so it needs no other row."""
        if payload is None or '"delta_columns":' not in payload:
            return payload
        self._versions(db, table)
        data = json.loads(payload)
        base = self._cache[(db, table)].by_vid.get(data.get("base"))
        schema = _apply_payload(self._materialize(base) if base else None, data,
                                _Version(None, 0, "", payload), self.path)
        return self._table_json(schema)

    def _table_json(self, schema: TableSchema) -> str:
        """The JSON of a schema (as model.table_to_json), each column's text made once
        and reused by the versions that keep the column object unchanged."""
        cache = self._column_json
        if len(cache) > 200_000:
            cache.clear()
        parts = []
        for col in schema.columns:
            hit = cache.get(id(col))
            if hit is None or hit[0] is not col:
                hit = (col, json.dumps(_column_dict(col), ensure_ascii=False, separators=(",", ":")))
                cache[id(col)] = hit
            parts.append(hit[1])
        head = {"db": schema.db, "table": schema.table}
        dump = lambda d: json.dumps(d, ensure_ascii=False, separators=(",", ":"))[1:-1]
        return ("{" + dump(head) + ',"columns":[' + ",".join(parts) + "],"
                + dump(_table_fields(schema)) + "}")

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
        data_type = data_type.lower() if data_type else None
        column = col_index if col_index is not None else col_name
        for o in self.overrides(db, table):
            if (o["column"], o["data_type"], o["precision"], o["position"], o["kind"]) == \
                    (column, data_type, precision, position, kind):
                return o["id"]         # recorded before (the same input read again)
        with self._lock:
            cur = self._write(
                "INSERT INTO overrides (db, tbl, col_index, col_name, data_type, precision, "
                "pos_file, pos_offset, kind, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (db, table, col_index, col_name, data_type,
                 precision, *(position or (None, None)), kind, source))
            self._overrides_cache = None
            return _inserted_id(cur)

    # -- reading ------------------------------------------------------------------------
    def _versions(self, db: str, table: str):
        key = (db, table)
        with self._lock:
            known = self._cache.get(key)
            if known is None:
                found = self._read("SELECT id, pos_file, pos_offset, source, schema_json "
                                   "FROM versions WHERE db = ? AND tbl = ?", key)
                known = _TableVersions(_Version(_pos(pf, po), vid, source, payload)
                                       for vid, pf, po, source, payload in found)
                self._cache[key] = known
            return known.rows

    def _version_at(self, db: str, table: str, position: Position) -> "_Version | None":
        rows = self._versions(db, table)
        # the last version at or before the position (ids break ties: the latest wins)
        i = bisect.bisect_right(rows, (position_key(_check_position(position)), float("inf")),
                                key=_Version.order)
        return rows[i - 1] if i else None

    def _raw_schema(self, db: str, table: str, position: Position) -> TableSchema | None:
        version = self._version_at(db, table, position)
        return self._materialize(version) if version is not None else None

    def schema_without_overrides(self, db: str, table: str,
                                 position: Position = None) -> TableSchema | None:
        """The version in force at ``position`` as recorded (what DDL applies to)."""
        return self._raw_schema(db, table, position)

    def overrides(self, db: str | None = None, table: str | None = None) -> list[dict]:
        """All overrides and inferred precisions (oldest first) as dicts."""
        with self._lock:
            if self._overrides_cache is None:
                found = self._read(
                    "SELECT id, db, tbl, col_index, col_name, data_type, precision, pos_file, "
                    "pos_offset, kind, source FROM overrides ORDER BY id")
                self._overrides_cache = [
                    {"id": r[0], "db": r[1], "table": r[2],
                     "column": r[3] if r[3] is not None else r[4], "data_type": r[5],
                     "precision": r[6], "position": _pos(r[7], r[8]), "kind": r[9], "source": r[10]}
                    for r in found]
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
            keys = self._read("SELECT DISTINCT db, tbl FROM versions")
        return sorted((db, t) for db, t in keys if self._raw_schema(db, t, position) is not None)

    def keys(self) -> list[Key]:
        """Every table the store has held a version of (dropped ones too), sorted."""
        with self._lock:
            return sorted(self._conn.execute("SELECT DISTINCT db, tbl FROM versions").fetchall())

    def history(self, db: str, table: str) -> list[tuple[Position, str, TableSchema | None]]:
        """All versions of a table in order: (position, source, schema or None if dropped)."""
        return [(v.position, v.source, self._materialize(v)) for v in self._versions(db, table)]

    # -- databases ----------------------------------------------------------------------
    def set_database(self, db: str, charset: str | None, collation: str | None,
                     position: Position = None, *, source: str, dropped: bool = False) -> None:
        position = _check_position(position)
        if dropped:
            if db not in self.databases(position):
                return
        elif self.databases(position).get(db) == (charset, collation):
            return          # already so (the same input read again)
        with self._lock:
            self._write(
                "INSERT INTO databases (db, pos_file, pos_offset, charset, collation, dropped, source) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (db, *(position or (None, None)), charset, collation, int(dropped), source))

    def databases(self, position: Position = None) -> dict[str, tuple[str | None, str | None]]:
        pk = position_key(_check_position(position))
        with self._lock:
            rows = self._read(
                "SELECT id, db, pos_file, pos_offset, charset, collation, dropped FROM databases")
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
        from .ddl import Catalog  # the DDL machinery only when DDL is met (start-up time)

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
                if self.add_version(schema, position, source=source) is not None:
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
        from .ddl import parse_script

        actions = parse_script(text, source=file_label, default_db=default_db)
        before = self.catalog_at(position, current_db=default_db)
        catalog = before.copy()
        changed = catalog.apply_all(actions)
        with self.transaction():
            return self.save_catalog_changes(catalog, changed, position, source=source,
                                             before=before)

    # -- binlog DDL seen ------------------------------------------------------------------
    def ddl_seen(self, position: Position, text: str) -> bool:
        """Whether the DDL ``text`` at ``position`` was applied to this store already."""
        file_name, offset = _known_position(position)
        return bool(self._read("SELECT 1 FROM ddl_seen WHERE pos_file = ? AND pos_offset = ? "
                               "AND digest = ?", (file_name, offset, _digest(text))))

    def mark_ddl_seen(self, position: Position, text: str) -> None:
        file_name, offset = _known_position(position)
        self._write("INSERT OR IGNORE INTO ddl_seen VALUES (?, ?, ?)",
                    (file_name, offset, _digest(text)))

    def import_live(self, dsn: str, **kw: Any) -> list[Key]:
        """Snapshot a live server's schemas (see :mod:`schema_store.live`)."""
        from .live import import_live
        return import_live(self, dsn, **kw)


class _Version:
    """One row of ``versions``; its schema is parsed once, when first asked for."""

    __slots__ = ("position", "vid", "source", "payload", "_schema", "sort_key")

    def __init__(self, position, vid, source, payload, schema=None):
        self.position, self.vid, self.source, self.payload = position, vid, source, payload
        self._schema = schema
        self.sort_key = (position_key(position), vid)

    def order(self):
        return self.sort_key


class _TableVersions:
    """A table's versions in order, and by row id (deltas name their base by id)."""

    def __init__(self, versions):
        self.rows = sorted(versions, key=_Version.order)
        self.by_vid = {v.vid: v for v in self.rows}

    def add(self, version: _Version) -> None:
        bisect.insort(self.rows, version, key=_Version.order)
        self.by_vid[version.vid] = version


def _load_payload(version: _Version, where: str) -> dict:
    try:
        data = json.loads(version.payload)
    except ValueError as exc:
        raise SchemaError(f"schema store {where}: version {version.vid} is not valid JSON "
                          f"({exc})") from exc
    if not isinstance(data, dict):
        raise SchemaError(f"schema store {where}: version {version.vid} is not a schema")
    return data


def _apply_payload(base: TableSchema | None, data: dict, version: _Version, where: str) -> TableSchema:
    try:
        if "base" not in data:
            return table_from_dict(data)
        if base is None:
            raise ValueError("a delta without the version it is based on")
        cols = base.columns
        columns: list[ColumnSchema] = []
        for part in data["delta_columns"]:
            if isinstance(part, list):
                start, end = part
                if not 0 <= start <= end <= len(cols):
                    raise ValueError(f"columns {start}..{end} of a version of {len(cols)}")
                columns.extend(cols[start:end])
            else:
                columns.append(column_from_dict(part))
        return TableSchema(db=data["db"], table=data["table"], columns=tuple(columns),
                           primary_key=tuple(data["primary_key"]), source=data["source"],
                           inferred=data["inferred"], charset=data["charset"],
                           collation=data["collation"])
    except (TypeError, KeyError, ValueError, AttributeError) as exc:
        raise SchemaError(f"schema store {where}: version {version.vid} is not a valid schema "
                          f"({type(exc).__name__}: {exc})") from exc


def _column_runs(new, old) -> tuple[list, int]:
    """``new`` columns as runs ``[start, end]`` of ``old`` columns (the same objects: a
    DDL keeps the columns it does not touch) and dicts of the others; and how many
    columns the runs keep.  The unchanged head and tail are found by tuple comparison
    (C speed, identity first), so an ALTER of a 1000-column table only walks what it
    changed."""
    head = _common_length(new, old, lambda seq, n: seq[:n])
    tail = _common_length(new[head:], old[head:], lambda seq, n: seq[len(seq) - n:])
    parts: list = [[0, head]] if head else []
    kept = head + tail
    index = {id(c): i for i, c in enumerate(old[head:len(old) - tail], head)}
    for col in new[head:len(new) - tail]:
        i = index.get(id(col))
        if i is None or old[i] is not col:
            parts.append(_column_dict(col))
            continue
        kept += 1
        last = parts[-1] if parts else None
        if isinstance(last, list) and last[1] == i:
            last[1] = i + 1
        else:
            parts.append([i, i + 1])
    if tail:
        start = len(old) - tail
        last = parts[-1] if parts else None
        if isinstance(last, list) and last[1] == start:
            last[1] = len(old)
        else:
            parts.append([start, len(old)])
    return parts, kept


def _common_length(a, b, cut) -> int:
    """The largest n with cut(a, n) == cut(b, n) (a common prefix or suffix), by
    binary search."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cut(a, mid) == cut(b, mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _table_fields(schema: TableSchema) -> dict:
    return {"primary_key": list(schema.primary_key), "source": schema.source,
            "inferred": schema.inferred, "charset": schema.charset, "collation": schema.collation}


class _Transaction:
    def __init__(self, store: SchemaStore):
        self.store = store

    def __enter__(self):
        self.store._lock.acquire()
        try:
            self.store._write("BEGIN")
        except BaseException:
            self.store._lock.release()
            raise
        return self.store

    def __exit__(self, kind, exc, tb):
        store = self.store
        try:
            if kind is None:
                store._write("COMMIT")
            else:
                store._conn.execute("ROLLBACK")
                store._cache.clear()        # it may hold versions that were rolled back
                store._overrides_cache = None
        finally:
            store._lock.release()
        return False


def _column_dict(col: ColumnSchema) -> dict:
    d = {name: getattr(col, name) for name in _COLUMN_FIELDS}
    for name in _TUPLE_FIELDS:
        if d[name] is not None:
            d[name] = list(d[name])
    return d


def _digest(text: str) -> str:
    import hashlib  # (on first use: its OpenSSL load is ~2 ms of a short run's start-up)

    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _uri_path(path: str) -> str:
    from urllib.parse import quote

    return quote(os.path.abspath(path))


def _sqlite_reason(exc: sqlite3.Error, where: str) -> str:
    text = str(exc)
    if "not a database" in text or "malformed" in text:
        return f"not an SQLite database, or damaged ({text})"
    if "unable to open" in text:
        parent = os.path.dirname(os.path.abspath(where))
        return f"cannot create or open the file ({text}; is {parent} a writable directory?)"
    return text


__all__ = ["SchemaStore", "Position", "position_key", "file_key"]
