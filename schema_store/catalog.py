"""The catalog: the current state of a set of tables ((db, table) -> TableSchema, database
default charsets, the ``USE`` database), changed by applying DDL actions.  ALTER TABLE is
applied by :mod:`schema_store.alter`.

Charsets: a parsed CreateTable/AddColumn keeps only what the statement says; the catalog
resolves inheritance (column -> table default -> database default) when it applies it.
"""
from __future__ import annotations

from dataclasses import replace
from typing import ItemsView, Iterable, Iterator, KeysView, ValuesView

from .actions import (
    AlterDatabase,
    AlterTable,
    CreateDatabase,
    CreateTable,
    CreateTableLike,
    CreateTableSelect,
    DdlAction,
    DropDatabase,
    DropTable,
    Ignored,
    RenameTable,
    TruncateTable,
    Use,
)
from .alter import apply_alter
from .column_types import resolve_column
from .errors import SchemaError, SchemaNotFoundError
from .model import TableSchema, default_collation

Key = tuple[str, str]


class Catalog:
    """Current state of a set of tables; apply DDL actions to it.

    ``mysql56_temporal_format``: when True, any ALTER TABLE also converts legacy temporal
    columns to the MySQL 5.6 format (``legacy=False``), as MariaDB 10.11 does when the
    variable is ON (checked: even ``ALTER TABLE t RENAME COLUMN`` converts them).  The
    binlog does not record the variable, so the default (None) leaves them unchanged.
    """

    def __init__(self, tables: dict[Key, TableSchema] | None = None,
                 databases: dict[str, tuple[str | None, str | None]] | None = None,
                 current_db: str | None = None, *, mysql56_temporal_format: bool | None = None):
        self.tables: dict[Key, TableSchema] = dict(tables or {})
        self.databases: dict[str, tuple[str | None, str | None]] = dict(databases or {})
        self.current_db = current_db
        self.mysql56_temporal_format = mysql56_temporal_format

    # dict-like ...........................................................................
    def __getitem__(self, key: Key) -> TableSchema:
        return self.tables[key]

    def __contains__(self, key: object) -> bool:
        return key in self.tables

    def __iter__(self) -> Iterator[Key]:
        return iter(self.tables)

    def __len__(self) -> int:
        return len(self.tables)

    def get(self, key: Key, default: TableSchema | None = None) -> TableSchema | None:
        return self.tables.get(key, default)

    def keys(self) -> KeysView[Key]:
        return self.tables.keys()

    def items(self) -> ItemsView[Key, TableSchema]:
        return self.tables.items()

    def values(self) -> ValuesView[TableSchema]:
        return self.tables.values()

    def copy(self) -> "Catalog":
        return Catalog(self.tables, self.databases, self.current_db,
                       mysql56_temporal_format=self.mysql56_temporal_format)

    def database_charset(self, db: str) -> tuple[str | None, str | None]:
        return self.databases.get(db, (None, None))

    # applying ............................................................................
    def _key(self, db: str | None, table: str, where: str = "") -> Key:
        db = db or self.current_db
        if not db:
            raise SchemaError(f"no database selected for table `{table}`", source=where or None)
        return (db, table)

    def apply_all(self, actions: Iterable[DdlAction]) -> list[Key]:
        changed: list[Key] = []
        for action in actions:
            for key in self.apply(action):
                if key not in changed:
                    changed.append(key)
        return changed

    def apply(self, action: DdlAction) -> list[Key]:
        """Apply one action; return the (db, table) keys whose schema changed (or vanished)."""
        method = getattr(self, "_apply_" + type(action).__name__, None)
        if method is None:
            raise TypeError(f"not a DDL action: {action!r}")
        return method(action)

    def _resolve_table(self, schema: TableSchema, db: str) -> TableSchema:
        cs, coll = schema.charset, schema.collation
        if cs is None and coll is None:
            cs, coll = self.database_charset(db)
        if cs is not None and coll is None:
            coll = default_collation(cs)
        cols = tuple(resolve_column(c, cs, coll) for c in schema.columns)
        return replace(schema, db=db, columns=cols, charset=cs, collation=coll)

    def _apply_CreateTable(self, a: CreateTable) -> list[Key]:
        key = self._key(a.schema.db or None, a.schema.table, a.where)
        if key in self.tables and a.if_not_exists and not a.or_replace:
            return []
        self.tables[key] = self._resolve_table(a.schema, key[0])
        return [key]

    def _apply_CreateTableLike(self, a: CreateTableLike) -> list[Key]:
        key = self._key(a.db, a.table, a.where)
        src = self._key(a.src_db, a.src_table, a.where)
        if key in self.tables and a.if_not_exists and not a.or_replace:
            return []
        if src not in self.tables:
            raise SchemaNotFoundError(
                f"CREATE TABLE {key[0]}.{key[1]} LIKE {src[0]}.{src[1]}: source table unknown",
                source=a.where or None, table=f"{src[0]}.{src[1]}")
        base = self.tables[src]
        self.tables[key] = replace(base, db=key[0], table=key[1])
        return [key]

    def _apply_CreateTableSelect(self, a: CreateTableSelect) -> list[Key]:
        key = self._key(a.db, a.table, a.where)
        self.tables.pop(key, None)
        return [key]

    def _apply_DropTable(self, a: DropTable) -> list[Key]:
        out = []
        for db, table in a.names:
            key = self._key(db, table, a.where)
            if self.tables.pop(key, None) is not None:
                out.append(key)
        return out

    def _apply_RenameTable(self, a: RenameTable) -> list[Key]:
        out: list[Key] = []
        for (odb, otable), (ndb, ntable) in a.pairs:
            old = self._key(odb, otable, a.where)
            new = self._key(ndb, ntable, a.where)
            schema = self.tables.pop(old, None)
            if schema is None:
                raise SchemaNotFoundError(f"RENAME TABLE: table {old[0]}.{old[1]} unknown",
                                          source=a.where or None, table=f"{old[0]}.{old[1]}")
            self.tables[new] = replace(schema, db=new[0], table=new[1])
            out += [k for k in (old, new) if k not in out]
        return out

    def _apply_TruncateTable(self, a: TruncateTable) -> list[Key]:
        return []

    def _apply_CreateDatabase(self, a: CreateDatabase) -> list[Key]:
        if a.db in self.databases and a.if_not_exists:
            return []
        self.databases[a.db] = (a.charset, a.collation)
        return []

    def _apply_AlterDatabase(self, a: AlterDatabase) -> list[Key]:
        db = a.db or self.current_db
        if db:
            cs, coll = self.databases.get(db, (None, None))
            self.databases[db] = (a.charset or cs, a.collation or (None if a.charset else coll))
        return []

    def _apply_DropDatabase(self, a: DropDatabase) -> list[Key]:
        out = [k for k in self.tables if k[0] == a.db]
        for k in out:
            del self.tables[k]
        self.databases.pop(a.db, None)
        if self.current_db == a.db:
            self.current_db = None
        return out

    def _apply_Use(self, a: Use) -> list[Key]:
        self.current_db = a.db
        return []

    def _apply_Ignored(self, a: Ignored) -> list[Key]:
        return []

    def _apply_AlterTable(self, a: AlterTable) -> list[Key]:
        return apply_alter(self, a)
