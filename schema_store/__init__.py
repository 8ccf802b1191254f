"""Versioned table schemas for the binlog parser: DDL import, live snapshot, overrides.

The parser never talks to a database; it asks ``SchemaStore.schema(db, table, position)``
for what the binlog lacks (legacy temporal precision, names, signedness, charsets,
ENUM/SET labels, primary key).
"""
from typing import TYPE_CHECKING

from .errors import DdlParseError, SchemaError, SchemaMismatchError, SchemaNotFoundError

if TYPE_CHECKING:
    from .model import ColumnSchema, TableSchema, table_from_json, table_to_json
    from .store import Position, SchemaStore, position_key

# The model and the store load on first use too (whoever imports the package for its
# errors does not pay for SQLite).
_LAZY = {"ColumnSchema": "model", "TableSchema": "model", "table_from_json": "model",
         "table_to_json": "model", "Position": "store", "SchemaStore": "store",
         "position_key": "store"}
# The DDL parser's names load on first use (PEP 562): importing it costs ~20 ms of
# dataclass creation, and a run whose binlog holds no DDL never needs it.
_DDL_NAMES = (
    "parse_script", "parse_column_type", "Catalog", "DdlAction", "CreateTable",
    "CreateTableLike", "CreateTableSelect", "AlterTable", "AlterOp", "AddColumn", "DropColumn",
    "ModifyColumn", "ChangeColumn", "RenameColumn", "RenameTo", "AddPrimaryKey",
    "DropPrimaryKey", "Force", "ConvertCharset", "TableDefaults", "AddSystemVersioning",
    "DropSystemVersioning", "DropTable", "RenameTable", "TruncateTable", "CreateDatabase",
    "AlterDatabase", "DropDatabase", "Use", "Ignored",
)


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    if name in _DDL_NAMES:
        from . import ddl

        return getattr(ddl, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ColumnSchema", "TableSchema", "table_to_json", "table_from_json",
    "SchemaStore", "Position", "position_key",
    "SchemaError", "SchemaNotFoundError", "SchemaMismatchError", "DdlParseError",
    *_DDL_NAMES,
]
