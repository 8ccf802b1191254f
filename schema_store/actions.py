"""What a DDL statement does, as data: one :class:`DdlAction` per statement, and for
ALTER TABLE one :class:`AlterOp` per specification.  :mod:`schema_store.parser` makes them,
:mod:`schema_store.catalog` and :mod:`schema_store.alter` apply them."""
from __future__ import annotations

from dataclasses import dataclass

from .model import ColumnSchema, TableSchema


@dataclass(frozen=True)
class DdlAction:
    """Base of all actions.  ``where``: ``source:line`` of the statement."""


@dataclass(frozen=True)
class CreateTable(DdlAction):
    schema: TableSchema            # db may be "" when the script had no USE/qualifier
    if_not_exists: bool = False
    or_replace: bool = False
    where: str = ""


@dataclass(frozen=True)
class CreateTableLike(DdlAction):
    db: str | None
    table: str
    src_db: str | None
    src_table: str
    if_not_exists: bool = False
    or_replace: bool = False
    where: str = ""


@dataclass(frozen=True)
class CreateTableSelect(DdlAction):
    """``CREATE TABLE ... [AS] SELECT``: the columns come from the query, so the table's
    schema is unknown (the catalog forgets the table).  ``declared`` holds the explicitly
    declared columns, if any, for information only."""
    db: str | None
    table: str
    declared: tuple[ColumnSchema, ...] = ()
    unknown: bool = True
    where: str = ""


# ALTER TABLE operations ------------------------------------------------------------------

@dataclass(frozen=True)
class AlterOp:
    pass


@dataclass(frozen=True)
class AddColumn(AlterOp):
    col: ColumnSchema
    first: bool = False
    after: str | None = None
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropColumn(AlterOp):
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class ModifyColumn(AlterOp):
    col: ColumnSchema
    first: bool = False
    after: str | None = None
    if_exists: bool = False


@dataclass(frozen=True)
class ChangeColumn(AlterOp):
    old_name: str
    col: ColumnSchema
    first: bool = False
    after: str | None = None
    if_exists: bool = False


@dataclass(frozen=True)
class RenameColumn(AlterOp):
    old: str
    new: str


@dataclass(frozen=True)
class RenameTo(AlterOp):
    db: str | None
    table: str


@dataclass(frozen=True)
class AddPrimaryKey(AlterOp):
    columns: tuple[str, ...]


@dataclass(frozen=True)
class DropPrimaryKey(AlterOp):
    pass


@dataclass(frozen=True)
class Force(AlterOp):
    """A rebuild with no column change (``FORCE``, ``ENGINE=...``)."""
    reason: str = "FORCE"


@dataclass(frozen=True)
class ConvertCharset(AlterOp):
    charset: str | None
    collation: str | None = None


@dataclass(frozen=True)
class TableDefaults(AlterOp):
    """``[DEFAULT] CHARACTER SET/COLLATE`` table option: only affects columns added later."""
    charset: str | None
    collation: str | None = None


@dataclass(frozen=True)
class AddSystemVersioning(AlterOp):
    pass


@dataclass(frozen=True)
class DropSystemVersioning(AlterOp):
    pass


@dataclass(frozen=True)
class AlterTable(DdlAction):
    db: str | None
    table: str
    ops: tuple[AlterOp, ...]
    if_exists: bool = False
    where: str = ""


@dataclass(frozen=True)
class DropTable(DdlAction):
    names: tuple[tuple[str | None, str], ...]
    if_exists: bool = False
    where: str = ""


@dataclass(frozen=True)
class RenameTable(DdlAction):
    pairs: tuple[tuple[tuple[str | None, str], tuple[str | None, str]], ...]
    where: str = ""


@dataclass(frozen=True)
class TruncateTable(DdlAction):
    db: str | None
    table: str
    where: str = ""


@dataclass(frozen=True)
class CreateDatabase(DdlAction):
    db: str
    charset: str | None = None
    collation: str | None = None
    if_not_exists: bool = False
    where: str = ""


@dataclass(frozen=True)
class AlterDatabase(DdlAction):
    db: str | None
    charset: str | None = None
    collation: str | None = None
    where: str = ""


@dataclass(frozen=True)
class DropDatabase(DdlAction):
    db: str
    if_exists: bool = False
    where: str = ""


@dataclass(frozen=True)
class Use(DdlAction):
    db: str
    where: str = ""


@dataclass(frozen=True)
class Ignored(DdlAction):
    kind: str                      # e.g. 'SET', 'INSERT', 'CREATE VIEW', 'CREATE TEMPORARY TABLE'
    where: str = ""


ACTION_TYPES = (CreateTable, CreateTableLike, CreateTableSelect, AlterTable, DropTable,
                RenameTable, TruncateTable, CreateDatabase, AlterDatabase, DropDatabase, Use,
                Ignored)
