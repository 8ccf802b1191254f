"""The bridge between the parser and the schema store.

``SchemaResolver(store)`` is what ``binlog.reader.BinlogReader(schema=...)`` calls:

- ``attributes(table_map, position)``: per column index, what the TABLE_MAP lacks and
  the schema version in force at that position knows - the precision N of legacy
  TIMESTAMP/DATETIME/TIME columns above all, then names, signedness, charsets and
  ENUM/SET labels.  A schema that contradicts the TABLE_MAP (column count, a type the
  binlog type code cannot be, a different fsp or name) is a ``SchemaMismatchError``:
  never a guess.
- ``observe_query(event, position)``: DDL in QUERY events makes new schema versions at
  its position (CREATE/ALTER/DROP/RENAME/TRUNCATE TABLE, CREATE/DROP DATABASE, USE).
- ``record_inferred(db, table, {index: N}, position)``: keeps what --infer-precision found.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Iterable

from binlog.charsets import CHARSET_CODECS, collation_id
from binlog.constants import BINARY_COLLATION, GEOMETRY_TYPES, LEGACY_TEMPORAL_TYPES, ColumnType as T

from .errors import DdlParseError, SchemaMismatchError, SchemaNotFoundError
from .model import ColumnSchema, TableSchema

if TYPE_CHECKING:            # annotations only: the schema store never imports the parser
    from binlog.events import QueryEvent, TableMapEvent

    from .actions import DdlAction
    from .store import SchemaStore

Position = tuple[str, int] | None

_INTS: dict[str, set[int]] = {"tinyint": {T.TINY}, "smallint": {T.SHORT}, "mediumint": {T.INT24},
                                 "int": {T.LONG}, "integer": {T.LONG}, "bigint": {T.LONGLONG}}
_TEXT_BLOBS = {T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB, T.BLOB_COMPRESSED}
_GEOMETRY = GEOMETRY_TYPES

# information_schema DATA_TYPE -> the TABLE_MAP type codes such a column can have.
BINLOG_TYPES: dict[str, set[int]] = {
    **_INTS,
    "boolean": {T.TINY}, "bool": {T.TINY},
    "float": {T.FLOAT}, "double": {T.DOUBLE}, "real": {T.DOUBLE}, "double precision": {T.DOUBLE},
    "decimal": {T.NEWDECIMAL, T.DECIMAL}, "numeric": {T.NEWDECIMAL, T.DECIMAL},
    "bit": {T.BIT}, "year": {T.YEAR}, "date": {T.DATE, T.NEWDATE},
    "time": {T.TIME, T.TIME2}, "datetime": {T.DATETIME, T.DATETIME2},
    "timestamp": {T.TIMESTAMP, T.TIMESTAMP2},
    "char": {T.STRING}, "binary": {T.STRING},
    "varchar": {T.VARCHAR, T.VAR_STRING, T.VARCHAR_COMPRESSED},
    "varbinary": {T.VARCHAR, T.VAR_STRING, T.VARCHAR_COMPRESSED},
    "enum": {T.ENUM, T.STRING}, "set": {T.SET, T.STRING},
    "json": {T.JSON, *_TEXT_BLOBS},
    "inet6": {T.STRING}, "inet4": {T.STRING}, "uuid": {T.STRING},
    "vector": {T.VECTOR, T.VARCHAR},
    **{name: set(_TEXT_BLOBS) for name in ("tinytext", "text", "mediumtext", "longtext",
                                           "tinyblob", "blob", "mediumblob", "longblob")},
    **{name: {T.GEOMETRY} for name in _GEOMETRY},
}
FSP_CODES = {T.TIMESTAMP2, T.DATETIME2, T.TIME2}
BINARY_TYPES = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob",
                "inet6", "inet4", "uuid", *_GEOMETRY}

# A QUERY whose text starts like this may change a schema; everything else (BEGIN,
# COMMIT, DML, SET...) is not parsed at all.
_DDL_START = re.compile(r"^\s*(?:/\*.*?\*/\s*)*(create|alter|drop|rename|truncate|use)\b", re.I | re.S)
_DDL_TABLE = re.compile(r"\btable\s+(?:if\s+(?:not\s+)?exists\s+)?`?([\w$]+)`?(?:\.`?([\w$]+)`?)?", re.I)


def column_attributes(table_map: TableMapEvent, schema: TableSchema) -> dict[int, dict]:
    """What the schema adds to each TABLE_MAP column; SchemaMismatchError on contradiction."""
    name = table_map.qualified_name
    if len(schema.columns) != len(table_map.columns):
        raise SchemaMismatchError(
            f"TABLE_MAP has {len(table_map.columns)} columns, the schema ({schema.source}) "
            f"has {len(schema.columns)}", table=name,
            hint="the schema is not the one in force at this position: give the schema as of "
                 "the binlog's start (DDL after it is tracked from the binlog itself)")
    has_signedness = 1 in table_map.optional
    out = {}
    for col, spec in zip(table_map.columns, schema.columns, strict=True):   # counts checked above
        _check_type(col, spec, name, schema.source)
        out[col.index] = _column_extras(col, spec, has_signedness)
    return out


def _check_type(col, spec: ColumnSchema, table: str, source: str) -> None:
    allowed = BINLOG_TYPES.get(spec.data_type)
    label = col.label
    if allowed is not None and col.type not in allowed and col.binlog_type not in allowed:
        raise SchemaMismatchError(
            f"binlog type code {col.binlog_type} cannot be a {spec.data_type.upper()} column "
            f"(`{spec.name}` in {source})", table=table, column=label)
    if col.name is not None and col.name != spec.name and not spec.hidden:
        raise SchemaMismatchError(f"TABLE_MAP names the column `{col.name}`, the schema "
                                  f"({source}) `{spec.name}`", table=table, column=label)
    if col.type in FSP_CODES and spec.datetime_precision not in (None, col.precision):
        raise SchemaMismatchError(
            f"binlog says {spec.data_type.upper()}({col.precision}), the schema ({source}) "
            f"{spec.data_type.upper()}({spec.datetime_precision})", table=table, column=label)


def _column_extras(col, spec: ColumnSchema, has_signedness: bool) -> dict:
    extras: dict[str, object] = {}
    if col.type in LEGACY_TEMPORAL_TYPES and spec.datetime_precision is not None:
        extras["precision"] = spec.datetime_precision
    if col.name is None:
        extras["name"] = spec.name
    if not has_signedness and spec.unsigned:
        extras["unsigned"] = True
    if col.collation is None and col.encoding is None:
        if spec.data_type in BINARY_TYPES or spec.charset == "binary":
            extras["collation"] = BINARY_COLLATION
        elif spec.charset:
            extras["encoding"] = CHARSET_CODECS.get(spec.charset)
    if col.type == T.ENUM and col.enum_values is None and spec.enum_values:
        extras["enum_values"] = tuple(spec.enum_values)
    if col.type == T.SET and col.set_values is None and spec.set_values:
        extras["set_values"] = tuple(spec.set_values)
    if col.type == T.GEOMETRY and col.geometry_type is None and spec.data_type in GEOMETRY_TYPES:
        extras["geometry_type"] = GEOMETRY_TYPES.index(spec.data_type)
    return {k: v for k, v in extras.items() if v is not None}


def needs_schema(table_map: TableMapEvent) -> bool:
    """Whether the TABLE_MAP cannot decode its rows alone: legacy TIMESTAMP/DATETIME/TIME
    columns (7/12/11) take a byte count the binlog does not give (never guessed)."""
    return any(col.type in LEGACY_TEMPORAL_TYPES for col in table_map.columns)


def override_attributes(table_map: TableMapEvent, overrides: dict) -> dict[int, dict]:
    """`binlog schema set` (or inferred) precisions for a table no schema describes:
    column given by 1-based number or by the name the TABLE_MAP carries."""
    by_name = {c.name.lower(): c for c in table_map.columns if c.name}
    out = {}
    for ref, override in overrides.items():
        if isinstance(ref, int):
            col = table_map.columns[ref - 1] if 1 <= ref <= len(table_map.columns) else None
        else:
            col = by_name.get(ref)
        if col is None:
            raise SchemaMismatchError(f"the override of column {ref!r} names no column of the "
                                      f"TABLE_MAP ({len(table_map.columns)} columns)",
                                      table=table_map.qualified_name)
        allowed = BINLOG_TYPES.get((override["data_type"] or "").lower(), set())
        if col.binlog_type not in allowed:
            raise SchemaMismatchError(
                f"override says {override['data_type'].upper()}, the binlog type code is "
                f"{col.binlog_type}", table=table_map.qualified_name, column=col.label)
        if col.type in LEGACY_TEMPORAL_TYPES:
            out[col.index] = {"precision": override["precision"]}
    return out


def _with_server_charset(action, event):
    """A CREATE DATABASE that names no charset gets the session's collation_server
    (sql/sql_db.cc write_db_opt), which the QUERY event's Q_CHARSET_CODE carries."""
    from binlog.charsets import charset_for_collation

    from .actions import CreateDatabase
    from .model import normalize_charset

    if not isinstance(action, CreateDatabase) or action.charset or action.collation:
        return action
    codes = getattr(event, "charsets", None)
    charset = normalize_charset(charset_for_collation(codes[2])) if codes else None
    if charset is None:
        return action
    return replace(action, charset=charset)


def _case_evidence(action, event) -> bool:
    """A server with lower_case_table_names=1/2 logs CREATE/DROP DATABASE with the name
    lower-cased in the QUERY event's db field (the statement keeps the user's spelling)."""
    from .actions import CreateDatabase, DropDatabase

    if not isinstance(action, (CreateDatabase, DropDatabase)) or not event.db:
        return False
    return action.db != event.db and action.db.lower() == event.db


class SchemaResolver:
    """``lower_case_table_names``: the server's setting (0: names compare exactly; 1 or 2:
    case-insensitively, as the TABLE_MAP then carries lower-cased names).  None: exact
    until the binlog says otherwise (see _case_evidence); a TABLE_MAP whose table is known
    only in another letter case is then named in a warning giving the option."""

    def __init__(self, store: SchemaStore, *, track_ddl: bool = True,
                 on_warning: Callable[[str], None] | None = None,
                 lower_case_table_names: int | None = None):
        self.store = store
        self.track_ddl = track_ddl
        self.on_warning = on_warning or (lambda message: None)
        self.disagreements: Counter = Counter()     # db.table -> TABLE_MAPs decoded without it
        self._warned: set[tuple] = set()
        self.case_insensitive = None if lower_case_table_names is None else lower_case_table_names > 0
        self._folded: dict | None = None            # (db, table) casefolded -> stored keys

    def _schema(self, db: str, table: str, position):
        schema = self.store.schema(db, table, position)
        if schema is not None or self.case_insensitive is False:
            return schema
        if self._folded is None:
            self._folded = {}
            for key in self.store.keys():
                self._folded.setdefault((key[0].casefold(), key[1].casefold()), []).append(key)
        matches = [k for k in self._folded.get((db.casefold(), table.casefold()), ())
                   if self.store.schema(k[0], k[1], position) is not None]
        if len(matches) != 1:
            return None
        if self.case_insensitive:
            return self.store.schema(matches[0][0], matches[0][1], position)
        if ("case", db, table) not in self._warned:
            self._warned.add(("case", db, table))
            self.on_warning(f"{db}.{table}: no schema; `{matches[0][0]}`.`{matches[0][1]}` differs "
                            f"only in letter case: if the server ran with lower_case_table_names"
                            f"=1 or 2, give --lower-case-table-names 1")
        return None

    def attributes(self, table_map: TableMapEvent, position: Position) -> dict[int, dict]:
        schema = self._schema(table_map.db, table_map.table, position)
        try:
            if schema is None:
                return override_attributes(table_map,
                                           self.store.overrides_for(table_map.db, table_map.table, position))
            return column_attributes(table_map, schema)
        except SchemaMismatchError as exc:
            exc.add_context(event_offset=table_map.offset, event_type=table_map.type_name)
            if schema is None or needs_schema(table_map):
                raise exc
            self._disagreement(table_map, schema, exc, position)
            return {}

    def full_metadata(self, table_map: TableMapEvent, position: Position) -> dict | None:
        """What binlog_row_metadata=FULL would have put into this TABLE_MAP, from the
        schema in force at ``position`` (None when no schema describes the table, or
        one that does not fit it): per column ``name``, ``unsigned``, ``collation`` (an
        id, None when unknown), ``labels`` (ENUM/SET values as bytes in the column's
        charset); ``primary_key``: column indexes."""
        schema = self._schema(table_map.db, table_map.table, position)
        if schema is None or len(schema.columns) != len(table_map.columns):
            return None
        columns = []
        for spec in schema.columns:
            charset = spec.charset or schema.charset
            binary = spec.data_type in BINARY_TYPES or charset == "binary"
            cid = BINARY_COLLATION if binary else collation_id(charset, spec.collation)
            codec = (CHARSET_CODECS.get(charset) if charset else None) or "utf-8"
            labels = spec.enum_values or spec.set_values or ()
            columns.append({"name": spec.name, "unsigned": spec.unsigned, "collation": cid,
                            "labels": [label.encode(codec, "replace") for label in labels]})
        names = [c.name.lower() for c in schema.columns]
        primary = [names.index(n.lower()) for n in schema.primary_key if n.lower() in names]
        return {"columns": columns, "primary_key": primary}

    def _disagreement(self, table_map, schema, exc, position) -> None:
        """A schema that contradicts a TABLE_MAP needing nothing from it: decode with the
        TABLE_MAP alone, say so once per table and schema version, count it (--stats)."""
        key = (table_map.db, table_map.table, schema.source, len(schema.columns))
        self.disagreements[f"{table_map.db}.{table_map.table}"] += 1
        if key in self._warned:
            return
        self._warned.add(key)
        self.on_warning(f"{position[0]} @ {table_map.offset} {table_map.qualified_name}: "
                        f"{exc.message}; the TABLE_MAP alone "
                        f"decodes its rows: decoded without the schema (columns @N, no names, "
                        f"charsets or labels the binlog does not carry)")

    def observe_query(self, event: QueryEvent, position: Position) -> None:
        if not self.track_ddl or not _DDL_START.match(event.query):
            return
        if self.store.ddl_seen(position, event.query):
            return          # read before (the same file again, a resumed apply): a no-op
        with self.store.transaction():
            self._apply_ddl(event, position)
            self.store.mark_ddl_seen(position, event.query)

    def _apply_ddl(self, event, position) -> None:
        source = f"binlog:{position[0]}:{position[1]}"
        try:
            from .ddl import parse_script

            actions = parse_script(event.query, source=source, default_db=event.db or None)
        except DdlParseError as exc:
            self._forget_tables(event, position, source, exc)
            return
        actions = [_with_server_charset(action, event) for action in actions]
        if self.case_insensitive is None and any(_case_evidence(a, event) for a in actions):
            self.case_insensitive = True
            self.on_warning(f"{position[0]} @ {position[1]}: the binlog was written with "
                            f"lower_case_table_names (database `{event.db}` logged for "
                            f"`{getattr(actions[0], 'db', None)}`): table names compare case-insensitively")
        self._folded = None
        db = event.db or None
        catalog = self._catalog_for(actions, position, db)
        before = catalog.copy()
        changed = []
        for action in actions:
            try:
                changed.extend(catalog.apply(action))
            except SchemaNotFoundError:
                # ALTER/RENAME of a table no schema source knows: it stays unknown, and a
                # legacy column of it stops the run with the remedy when its rows come.
                continue
        self.store.save_catalog_changes(catalog, dict.fromkeys(changed), position,
                                        source=source, before=before)

    def _catalog_for(self, actions, position, db):
        """A catalog holding only the tables the actions touch, so a DDL costs the same
        however many tables and versions the store holds (the whole catalog when an
        action's tables cannot be listed)."""
        from .ddl import Catalog

        keys = touched_tables(actions, db)
        if keys is None:
            return self.store.catalog_at(position, current_db=db)
        tables = {}
        for key in keys:
            schema = self.store.schema_without_overrides(key[0], key[1], position)
            if schema is not None:
                tables[key] = schema
        return Catalog(tables, self.store.databases(position), db)

    def schemas_after(self, event: Any, position: tuple[str, int]) -> list[dict] | None:
        """The schema version each table a DDL statement names has right after it (the
        ``schema`` of a ``ddl`` record): a version the store holds at exactly this
        position, made by this statement (DDL tracking, or the Spark pre-scan); a table
        dropped by it has ``columns: null`` (and ``primary_key: null``; else the primary key's
        column names, [] for none).  None when the store has no version made
        here (DDL not tracked, or not understood): unknown, never an older version."""
        from .model import column_to_dict

        db = event.db or None
        where = (position[0], position[1])
        out: list = []
        for m in _DDL_TABLE.finditer(event.query):
            key = (m.group(1), m.group(2)) if m.group(2) else (db, m.group(1))
            if not key[0] or any(key == (o["db"], o["table"]) for o in out):
                continue
            made_here = [schema for pos, _, schema in self.store.history(*key) if pos == where]
            if not made_here:
                continue
            schema = made_here[-1]
            columns = None if schema is None else [
                {k: v for k, v in column_to_dict(c).items() if v is not None}
                for c in schema.columns]
            primary = None if schema is None else list(schema.primary_key)
            out.append({"db": key[0], "table": key[1], "columns": columns, "primary_key": primary})
        return out or None

    def _forget_tables(self, event, position, source, exc) -> None:
        """A DDL statement we cannot parse: the tables it names have an unknown schema
        from here on (so a legacy column stops the run instead of using a stale N)."""
        db = event.db or None
        for m in _DDL_TABLE.finditer(event.query):
            table_db, table = (m.group(1), m.group(2)) if m.group(2) else (db, m.group(1))
            if table_db:
                self.store.drop_table(table_db, table, position, source=f"{source} (unparsed DDL)")
        self.on_warning(f"{position[0]} @ {position[1]}: DDL not understood, schema of the "
                        f"tables it names is now unknown: {exc}")

    def record_inferred(self, db: str, table: str, found: dict[int, int], position: Position,
                        types: dict[int, str] | None = None) -> None:
        for index, precision in found.items():
            self.store.record_inferred(db, table, index, precision, position,
                                       data_type=(types or {}).get(index))


def touched_tables(actions: Iterable[DdlAction], db: str | None) -> set | None:
    """The (db, table) keys a list of DDL actions reads or changes; None when unknown
    (DROP DATABASE, or an action type not listed here)."""
    from . import ddl

    keys: set = set()

    def add(table_db, table):
        if table_db or db:
            keys.add((table_db or db, table))

    for a in actions:
        if isinstance(a, ddl.Use):
            db = a.db
        elif isinstance(a, ddl.CreateTable):
            add(a.schema.db or None, a.schema.table)
        elif isinstance(a, (ddl.CreateTableSelect, ddl.TruncateTable)):
            add(a.db, a.table)
        elif isinstance(a, ddl.CreateTableLike):
            add(a.db, a.table)
            add(a.src_db, a.src_table)
        elif isinstance(a, ddl.AlterTable):
            add(a.db, a.table)
            for op in a.ops:
                if isinstance(op, ddl.RenameTo):
                    add(op.db, op.table)
        elif isinstance(a, ddl.DropTable):
            for name in a.names:
                add(*name)
        elif isinstance(a, ddl.RenameTable):
            for old, new in a.pairs:
                add(*old)
                add(*new)
        elif isinstance(a, (ddl.CreateDatabase, ddl.AlterDatabase, ddl.Ignored)):
            continue
        else:
            return None
    return keys
