"""Applying ALTER TABLE to a table of the catalog: one function per specification
(ADD / DROP / MODIFY / CHANGE / RENAME COLUMN, RENAME TO, ADD / DROP PRIMARY KEY,
CONVERT TO CHARACTER SET, table defaults, system versioning), in statement order, on a
working copy of the table (:class:`_Table`) that replaces it at the end."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from .actions import (
    AddColumn,
    AddPrimaryKey,
    AddSystemVersioning,
    AlterTable,
    ChangeColumn,
    ConvertCharset,
    DropColumn,
    DropPrimaryKey,
    DropSystemVersioning,
    Force,
    ModifyColumn,
    RenameColumn,
    RenameTo,
    TableDefaults,
)
from .column_types import SYSTEM_VERSIONING_COLUMNS, resolve_column
from .errors import SchemaNotFoundError
from .model import TEXT_TYPES, ColumnSchema, column_position, default_collation

Key = tuple[str, str]


class _Table:
    """The table being altered: columns, primary key, default charset, name."""

    def __init__(self, catalog, a: AlterTable, key: Key, schema):
        self.catalog = catalog
        self.a = a
        self.key = self.new_key = key
        self.label = f"{key[0]}.{key[1]}"
        self.cols = list(schema.columns)
        self.pk = list(schema.primary_key)
        self.cs, self.coll = schema.charset, schema.collation

    def index(self, name: str) -> int | None:
        return column_position(self.cols, name)

    def need(self, name: str) -> int:
        i = self.index(name)
        if i is None:
            raise SchemaNotFoundError(f"ALTER TABLE {self.label}: no column `{name}`",
                                      source=self.a.where or None, table=self.label, column=name)
        return i

    def place(self, col: ColumnSchema, first: bool, after: str | None, at: int | None) -> None:
        if first:
            self.cols.insert(0, col)
        elif after is not None:
            self.cols.insert(self.need(after) + 1, col)
        elif at is not None:
            self.cols.insert(at, col)
        else:
            self.cols.append(col)

    def rename_pk(self, old: str, new: str) -> None:
        for i, p in enumerate(self.pk):
            if p.lower() == old.lower():
                self.pk[i] = new


def _add_column(t: _Table, op: AddColumn) -> None:
    if op.if_not_exists and t.index(op.col.name) is not None:
        return
    t.place(resolve_column(op.col, t.cs, t.coll), op.first, op.after, None)


def _drop_column(t: _Table, op: DropColumn) -> None:
    i = t.index(op.name)
    if i is None:
        if op.if_exists:
            return
        i = t.need(op.name)
    del t.cols[i]
    t.pk = [p for p in t.pk if p.lower() != op.name.lower()]


def _modify_column(t: _Table, op: ModifyColumn | ChangeColumn) -> None:
    """MODIFY and CHANGE: the new definition replaces the old one in place (or FIRST /
    AFTER), inheriting the table's charset; a primary key column stays NOT NULL."""
    old_name = op.old_name if isinstance(op, ChangeColumn) else op.col.name
    i = t.index(old_name)
    if i is None:
        if op.if_exists:
            return
        i = t.need(old_name)
    col = resolve_column(op.col, t.cs, t.coll)
    if any(p.lower() == old_name.lower() for p in t.pk):
        col = replace(col, nullable=False)
    del t.cols[i]
    t.place(col, op.first, op.after, i)
    t.rename_pk(old_name, col.name)


def _rename_column(t: _Table, op: RenameColumn) -> None:
    i = t.need(op.old)
    t.cols[i] = replace(t.cols[i], name=op.new)
    t.rename_pk(op.old, op.new)


def _rename_to(t: _Table, op: RenameTo) -> None:
    t.new_key = t.catalog._key(op.db, op.table, t.a.where)


def _add_primary_key(t: _Table, op: AddPrimaryKey) -> None:
    names = [t.cols[t.need(n)].name for n in op.columns]
    t.pk = names
    low = {n.lower() for n in names}
    t.cols = [replace(c, nullable=False) if c.name.lower() in low else c for c in t.cols]


def _drop_primary_key(t: _Table, op: DropPrimaryKey) -> None:
    t.pk = []


def _convert_charset(t: _Table, op: ConvertCharset) -> None:
    """CONVERT TO CHARACTER SET: the new table default, and every text column in it."""
    t.cs = op.charset or t.catalog.database_charset(t.key[0])[0]
    t.coll = op.collation or default_collation(t.cs)
    t.cols = [resolve_column(replace(c, charset=None, collation=None), t.cs, t.coll)
              if c.data_type in TEXT_TYPES and c.data_type != "json" else c for c in t.cols]


def _table_defaults(t: _Table, op: TableDefaults) -> None:
    t.cs = op.charset
    t.coll = op.collation or default_collation(t.cs)


def _add_system_versioning(t: _Table, op: AddSystemVersioning) -> None:
    if t.index("row_start") is None:
        t.cols.extend(SYSTEM_VERSIONING_COLUMNS)


def _drop_system_versioning(t: _Table, op: DropSystemVersioning) -> None:
    t.cols = [c for c in t.cols if c.name not in ("row_start", "row_end")
              or c not in SYSTEM_VERSIONING_COLUMNS]


def _force(t: _Table, op: Force) -> None:
    pass


#: How each specification changes the table, keyed by its AlterOp class.
ALTER_OPS: dict[type, Callable[[_Table, Any], None]] = {
    AddColumn: _add_column, DropColumn: _drop_column, ModifyColumn: _modify_column,
    ChangeColumn: _modify_column, RenameColumn: _rename_column, RenameTo: _rename_to,
    AddPrimaryKey: _add_primary_key, DropPrimaryKey: _drop_primary_key,
    ConvertCharset: _convert_charset, TableDefaults: _table_defaults,
    AddSystemVersioning: _add_system_versioning, DropSystemVersioning: _drop_system_versioning,
    Force: _force,
}


def apply_alter(catalog, a: AlterTable) -> list[Key]:
    """Apply an ALTER TABLE to ``catalog`` (a :class:`~schema_store.catalog.Catalog`);
    return the keys whose schema changed (old and new name after a RENAME TO)."""
    key = catalog._key(a.db, a.table, a.where)
    schema = catalog.tables.get(key)
    if schema is None:
        if a.if_exists:
            return []
        label = f"{key[0]}.{key[1]}"
        raise SchemaNotFoundError(f"ALTER TABLE {label}: table unknown",
                                  source=a.where or None, table=label)
    t = _Table(catalog, a, key, schema)
    for op in a.ops:
        step = ALTER_OPS.get(type(op))
        if step is None:
            raise TypeError(f"unknown ALTER op {op!r}")
        step(t, op)
    cols = t.cols
    if catalog.mysql56_temporal_format:
        cols = [replace(c, legacy=False) if c.legacy else c for c in cols]
    new_schema = replace(schema, db=t.new_key[0], table=t.new_key[1], columns=tuple(cols),
                         primary_key=tuple(t.pk), charset=t.cs, collation=t.coll)
    if t.new_key != key:
        del catalog.tables[key]
        catalog.tables[t.new_key] = new_schema
        return [key, t.new_key]
    catalog.tables[key] = new_schema
    return [key]
