"""DDL scripts -> actions -> a catalog of table schemas (this module gathers the API).

Where each step lives:

- :mod:`schema_store.lexer`: splitting a script into statements, statements into tokens;
- :mod:`schema_store.parser`: the recursive-descent statement parser (CREATE, ALTER, DROP,
  RENAME, TRUNCATE, USE) -> :mod:`schema_store.actions`;
- :mod:`schema_store.column_types`: column definitions (types, attributes) and charset
  inheritance (``resolve_column``);
- :mod:`schema_store.catalog`: applying actions to the tables; :mod:`schema_store.alter`:
  how each ALTER TABLE specification (ADD, MODIFY, CHANGE, ...) is applied.

:func:`parse_script` reads a ``mariadb-dump``/``mysqldump`` file, a ``CREATE TABLE`` script
or the text of a binlog QUERY event and returns one :class:`DdlAction` per statement.
:class:`Catalog` applies actions to a current state ((db, table) -> TableSchema, database
default charsets, the ``USE`` database) and says which tables changed.

Parsing is done by this module's own recursive-descent parser over the tokens of
:mod:`schema_store.lexer`.  sqlglot's MySQL dialect was tried first and rejects or
degrades too much of what real MariaDB dumps contain (``INET6``/``UUID`` types, ``ALTER
... MODIFY/CHANGE`` and ``WITH SYSTEM VERSIONING`` fall back to opaque commands,
``TIMESTAMP`` becomes TIMESTAMPTZ, and comments such as ``/* mariadb-5.3 */`` are lost), so
it is only used by the tests as an independent cross-check of column names.

Legacy temporal columns: MariaDB 10.5.1+ prints ``/* mariadb-5.3 */`` after the type of a
column stored in the MariaDB 5.3 format.  A temporal column carrying it gets
``legacy=True``; when the script is known to come from a marker-printing server (the marker
appears somewhere in it, or a dump header names MariaDB >= 10.5.1) an unmarked temporal
column gets ``legacy=False``; otherwise ``legacy=None`` (10.0/10.1 dumps, plain scripts).

Charsets: a parsed CreateTable/AddColumn keeps only what the statement says; the
:class:`Catalog` resolves inheritance (column -> table default -> database default) when
it applies the action, so ``CreateTable.schema`` is the *unresolved* form.
"""
from __future__ import annotations

from .actions import (
                      ACTION_TYPES,
                      AddColumn,
                      AddPrimaryKey,
                      AddSystemVersioning,
                      AlterDatabase,
                      AlterOp,
                      AlterTable,
                      ChangeColumn,
                      ConvertCharset,
                      CreateDatabase,
                      CreateTable,
                      CreateTableLike,
                      CreateTableSelect,
                      DdlAction,
                      DropColumn,
                      DropDatabase,
                      DropPrimaryKey,
                      DropSystemVersioning,
                      DropTable,
                      Force,
                      Ignored,
                      ModifyColumn,
                      RenameColumn,
                      RenameTable,
                      RenameTo,
                      TableDefaults,
                      TruncateTable,
                      Use,
)
from .catalog import Catalog
from .column_types import SEQUENCE_COLUMNS, SYSTEM_VERSIONING_COLUMNS, parse_column_type, resolve_column
from .parser import markers_expected, parse_script

__all__ = [
    "DdlAction", "CreateTable", "CreateTableLike", "CreateTableSelect", "AlterTable",
    "AlterOp", "AddColumn", "DropColumn", "ModifyColumn", "ChangeColumn", "RenameColumn",
    "RenameTo", "AddPrimaryKey", "DropPrimaryKey", "Force", "ConvertCharset", "TableDefaults",
    "AddSystemVersioning", "DropSystemVersioning", "DropTable", "RenameTable",
    "TruncateTable", "CreateDatabase", "AlterDatabase", "DropDatabase", "Use", "Ignored",
    "ACTION_TYPES", "Catalog", "parse_script", "parse_column_type", "resolve_column",
    "markers_expected", "SEQUENCE_COLUMNS", "SYSTEM_VERSIONING_COLUMNS",
]
