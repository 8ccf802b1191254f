"""DDL scripts -> actions -> a catalog of table schemas.

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

import re
from dataclasses import dataclass, field, replace
from typing import Iterator

from .errors import DdlParseError, SchemaError, SchemaNotFoundError
from .lexer import Statement, Token, TokenStream, has_legacy_marker, split_statements, split_top_level, tokenize
from .model import (MBMAXLEN, TEMPORAL_FSP_TYPES, TEXT_TYPES, ColumnSchema, TableSchema, charset_of_collation,
                    default_collation, normalize_charset, normalize_collation)

Key = tuple[str, str]

# --- actions ---------------------------------------------------------------------------


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

# --- column types ----------------------------------------------------------------------

_INT_PRECISION = {"tinyint": 3, "smallint": 5, "mediumint": 7, "int": 10, "bigint": 19}
_INT_ALIASES = {"integer": "int", "int4": "int", "int1": "tinyint", "int2": "smallint",
                "int3": "mediumint", "middleint": "mediumint", "int8": "bigint",
                "bool": "tinyint", "boolean": "tinyint"}
_SIMPLE = {"date", "year", "json", "inet4", "inet6", "uuid", "tinyblob", "blob", "mediumblob",
           "longblob", "tinytext", "text", "mediumtext", "longtext", "geometry", "point",
           "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
           "geometrycollection", "vector", "xmltype", "row"}
_TEXT_TO_BLOB = {"char": "binary", "varchar": "varbinary", "tinytext": "tinyblob",
                 "text": "blob", "mediumtext": "mediumblob", "longtext": "longblob"}
_CHAR_LENGTH_TYPES = {"char", "varchar", "binary", "varbinary"}

#: The columns of a SEQUENCE table (MariaDB 10.3+; checked on 10.11).
SEQUENCE_COLUMNS = (
    ColumnSchema("next_not_cached_value", "bigint", nullable=False, numeric_precision=19, numeric_scale=0),
    ColumnSchema("minimum_value", "bigint", nullable=False, numeric_precision=19, numeric_scale=0),
    ColumnSchema("maximum_value", "bigint", nullable=False, numeric_precision=19, numeric_scale=0),
    ColumnSchema("start_value", "bigint", nullable=False, numeric_precision=19, numeric_scale=0),
    ColumnSchema("increment", "bigint", nullable=False, numeric_precision=19, numeric_scale=0),
    ColumnSchema("cache_size", "bigint", unsigned=True, nullable=False, numeric_precision=20, numeric_scale=0),
    ColumnSchema("cycle_option", "tinyint", unsigned=True, nullable=False, numeric_precision=3, numeric_scale=0),
    ColumnSchema("cycle_count", "bigint", nullable=False, numeric_precision=19, numeric_scale=0),
)

#: Hidden columns MariaDB adds for ``WITH SYSTEM VERSIONING`` without explicit period
#: columns.  INFORMATION_SCHEMA.COLUMNS does not list them, but they are in every row
#: image (checked with mariadb-binlog -v on 10.11: 4 values for a 2-column table).
SYSTEM_VERSIONING_COLUMNS = (
    ColumnSchema("row_start", "timestamp", nullable=False, datetime_precision=6),
    ColumnSchema("row_end", "timestamp", nullable=False, datetime_precision=6),
)

#: Table options (MariaDB + MySQL); any other ``name = value`` is taken as an
#: engine-defined option.
_TABLE_OPTIONS = frozenset("""
    ENGINE TYPE AUTO_INCREMENT AVG_ROW_LENGTH CHARSET COLLATE CHECKSUM TABLE_CHECKSUM COMMENT
    CONNECTION DATA INDEX DELAY_KEY_WRITE ENCRYPTED ENCRYPTION_KEY_ID ENCRYPTION IETF_QUOTES
    INSERT_METHOD KEY_BLOCK_SIZE MAX_ROWS MIN_ROWS PACK_KEYS PAGE_CHECKSUM PAGE_COMPRESSED
    PAGE_COMPRESSION_LEVEL PASSWORD ROW_FORMAT SEQUENCE STATS_AUTO_RECALC STATS_PERSISTENT
    STATS_SAMPLE_PAGES TABLESPACE TRANSACTIONAL UNION COMPRESSION STORAGE SECONDARY_ENGINE
    AUTOEXTEND_SIZE ENGINE_ATTRIBUTE SECONDARY_ENGINE_ATTRIBUTE""".split())

_BIN_COLLATION = "_bin"      # placeholder: "<resolved charset>_bin" (the BINARY attribute)


@dataclass
class _ColumnBuild:
    """Mutable column under construction."""
    name: str
    data_type: str = ""
    unsigned: bool = False
    nullable: bool = True
    length: int | None = None
    numeric_precision: int | None = None
    numeric_scale: int | None = None
    datetime_precision: int | None = None
    marker: bool = False
    charset: str | None = None
    collation: str | None = None
    labels: tuple[str, ...] | None = None
    compressed: bool = False
    primary: bool = False
    row_period: bool = False      # GENERATED ALWAYS AS ROW START/END
    blob_length: int | None = None
    text_length: int | None = None

    def finish(self, legacy_default: bool | None) -> ColumnSchema:
        dt = self.data_type
        if dt == "text" and self.text_length is not None:
            # TEXT(N) picks the smallest type holding N characters; the charset's width is
            # only known here when the column names it (else 1 byte/char is assumed).
            n = self.text_length * MBMAXLEN.get(self.charset or "", 1)
            dt = "tinytext" if n < 256 else "text" if n < 65536 else "mediumtext" if n < 1 << 24 else "longtext"
        legacy = None
        if dt in TEMPORAL_FSP_TYPES:
            legacy = True if self.marker else legacy_default
        if self.primary:
            self.nullable = False
        if self.unsigned and dt in ("mediumint", "bigint"):
            self.numeric_precision = {"mediumint": 8, "bigint": 20}[dt]
        return ColumnSchema(
            name=self.name, data_type=dt, unsigned=self.unsigned, nullable=self.nullable,
            length=self.length, numeric_precision=self.numeric_precision,
            numeric_scale=self.numeric_scale, datetime_precision=self.datetime_precision,
            legacy=legacy, charset=self.charset, collation=self.collation,
            enum_values=self.labels if dt == "enum" else None,
            set_values=self.labels if dt == "set" else None, compressed=self.compressed)


def _int_arg(ts: TokenStream, tok: Token) -> int:
    if tok.kind != "number" or not tok.value.isdigit():
        raise ts.error(f"expected an integer type argument, got {tok.value!r}")
    return int(tok.value)


def _parse_type(ts: TokenStream, col: _ColumnBuild) -> None:
    """Base type name (one or more words) and its ``(...)`` arguments."""
    t = ts.next()
    if t.kind != "word":
        raise ts.error("expected a column type", column=col.name)
    w = t.value.lower()
    national = False
    if w == "national":
        national = True
        w = ts.expect_word("CHAR", "CHARACTER", "VARCHAR").lower()
    if w in ("nchar", "nvarchar"):
        national = True
        w = "char" if w == "nchar" else "varchar"
    if w == "double":
        ts.accept_word("PRECISION")
    if w in ("char", "character"):
        w = "char"
        if ts.accept_word("VARYING"):
            w = "varchar"
        elif ts.accept_word("VARCHAR"):          # NCHAR VARCHAR
            w = "varchar"
    if w == "long":
        if ts.accept_word("VARBINARY"):
            w = "mediumblob"
        else:
            if ts.accept_word("CHAR"):
                ts.accept_word("VARYING")
            else:
                ts.accept_word("VARCHAR")
            w = "mediumtext"
    args: list[Token] = []
    if ts.at_punct("("):
        args = [tok for part in split_top_level(ts.skip_group()) for tok in part[:1]]
    if national:
        col.charset = "utf8mb3"
    nums = [_int_arg(ts, a) for a in args] if w not in ("enum", "set") else []

    if w in _INT_ALIASES or w in _INT_PRECISION:
        w = _INT_ALIASES.get(w, w)
        col.numeric_precision = _INT_PRECISION[w]
        col.numeric_scale = 0
    elif w == "serial":
        w = "bigint"
        col.unsigned = True
        col.nullable = False
        col.numeric_precision, col.numeric_scale = 20, 0
    elif w in ("decimal", "dec", "numeric", "fixed", "number"):
        w = "decimal"
        col.numeric_precision = nums[0] if nums else 10
        col.numeric_scale = nums[1] if len(nums) > 1 else 0
    elif w in ("float", "float4", "float8", "double", "real"):
        if w in ("float8", "real"):
            w = "double"
        elif w == "float4":
            w = "float"
        if w == "float" and len(nums) == 1 and nums[0] > 24:
            w = "double"
        if len(nums) == 2:
            col.numeric_precision, col.numeric_scale = nums
        else:
            col.numeric_precision = 12 if w == "float" else 22
    elif w == "bit":
        col.length = col.numeric_precision = nums[0] if nums else 1
    elif w in ("timestamp", "datetime", "time"):
        col.datetime_precision = nums[0] if nums else 0
    elif w in ("char", "binary"):
        col.length = nums[0] if nums else 1
    elif w in ("varchar", "varbinary"):
        if not nums:
            raise ts.error(f"{w.upper()} needs a length", column=col.name)
        col.length = nums[0]
    elif w in ("enum", "set"):
        labels = []
        for a in args:
            if a.kind != "string":
                raise ts.error(f"{w.upper()} labels must be strings", column=col.name)
            labels.append(a.value)
        col.labels = tuple(labels)
    elif w == "blob" and nums:
        n = nums[0]
        w = "tinyblob" if n < 256 else "blob" if n < 65536 else "mediumblob" if n < 1 << 24 else "longblob"
    elif w == "text" and nums:
        col.text_length = nums[0]
    elif w == "geomcollection":
        w = "geometrycollection"
    elif w in ("byte",):
        w = "binary"
    elif w not in _SIMPLE:
        raise ts.error(f"unknown column type {t.value!r}", column=col.name)
    if w == "json":
        col.charset, col.collation = "utf8mb4", "utf8mb4_bin"
    col.data_type = w


def _charset_name(ts: TokenStream) -> str:
    ts.accept_punct("=")
    return ts.ident("character set name").lower()


def _skip_expr_operand(ts: TokenStream) -> None:
    """Skip a DEFAULT / ON UPDATE value: literal, (expr), func(...), -1, _cs'str'."""
    if ts.at_punct("("):
        ts.skip_group()
        return
    if ts.at_punct("-") or ts.at_punct("+"):
        ts.next()
    t = ts.next()
    if t.kind == "word":
        if t.value.startswith("_") and ts.peek() is not None and ts.peek().kind == "string":
            ts.next()
        elif t.value.upper() in ("NEXT", "PREVIOUS") and ts.at_word("VALUE"):
            ts.next()
            ts.expect_word("FOR")
            _qualified_name(ts)
        elif ts.at_punct("("):
            ts.skip_group()


def _qualified_name(ts: TokenStream) -> tuple[str | None, str]:
    first = ts.ident("table name")
    if ts.accept_punct("."):
        return first, ts.ident("table name")
    return None, first


def _parse_column(toks: list[Token], ts_parent: TokenStream, *, legacy_default: bool | None,
                  table: str) -> tuple[ColumnSchema, _ColumnBuild]:
    ts = TokenStream(toks, ts_parent.stmt, ts_parent.source)
    name = ts.ident("column name")
    col = _ColumnBuild(name)
    _parse_column_body(ts, col, table)
    return col.finish(legacy_default), col


def _parse_column_body(ts: TokenStream, col: _ColumnBuild, table: str | None) -> None:
    _parse_type(ts, col)
    while not ts.done:
        t = ts.peek()
        if t.kind == "marker":
            ts.next()
            col.marker = True
            continue
        if t.kind != "word":
            raise ts.error("unexpected token in column definition", table=table, column=col.name)
        w = t.upper
        ts.next()
        if w == "UNSIGNED":
            col.unsigned = True
        elif w == "ZEROFILL":
            col.unsigned = True
        elif w == "SIGNED":
            pass
        elif w == "BINARY":
            col.collation = _BIN_COLLATION if col.charset is None else f"{col.charset}_bin"
        elif w == "BYTE":
            col.charset = "binary"
        elif w == "ASCII":
            col.charset = "latin1"
        elif w == "UNICODE":
            col.charset = "ucs2"
        elif w in ("CHARACTER", "CHARSET"):
            if w == "CHARACTER":
                ts.expect_word("SET")
            col.charset = normalize_charset(_charset_name(ts))
            if col.collation == _BIN_COLLATION:
                col.collation = f"{col.charset}_bin"
        elif w == "COLLATE":
            col.collation = normalize_collation(_charset_name(ts))
        elif w == "COMPRESSED":
            col.compressed = True
            if ts.accept_punct("="):
                ts.next()
        elif w == "NOT":
            ts.expect_word("NULL")
            col.nullable = False
        elif w == "NULL":
            col.nullable = True
        elif w == "DEFAULT":
            _skip_expr_operand(ts)
        elif w == "ON":
            ts.expect_word("UPDATE")
            _skip_expr_operand(ts)
        elif w in ("AUTO_INCREMENT", "INVISIBLE", "VISIBLE", "VIRTUAL", "STORED", "PERSISTENT"):
            pass
        elif w == "PRIMARY":
            ts.accept_word("KEY")
            col.primary = True
        elif w == "KEY":                         # column-level KEY means PRIMARY KEY
            col.primary = True
        elif w == "UNIQUE":
            ts.accept_word("KEY")
        elif w == "COMMENT":
            ts.accept_punct("=")
            ts.next()
        elif w in ("COLUMN_FORMAT", "STORAGE", "SRID"):
            ts.next()
        elif w == "GENERATED":
            ts.expect_word("ALWAYS")
            ts.expect_word("AS")
            _generated(ts, col)
        elif w == "AS":
            _generated(ts, col)
        elif w == "CONSTRAINT":
            if not ts.at_word("CHECK"):
                ts.ident("constraint name")
            ts.expect_word("CHECK")
            ts.skip_group()
        elif w == "CHECK":
            ts.skip_group()
        elif w == "REFERENCES":
            ts.i = len(ts.toks)                  # REFERENCES ... runs to the end of the definition
        elif w in ("WITH", "WITHOUT"):
            ts.expect_word("SYSTEM")
            ts.expect_word("VERSIONING")
        elif ts.at_punct("="):                   # engine-defined attribute: name = value
            ts.next()
            ts.next()
        else:
            ts.i -= 1
            raise ts.error("unknown column attribute", table=table, column=col.name)


def _generated(ts: TokenStream, col: _ColumnBuild) -> None:
    if ts.accept_word("ROW"):
        ts.expect_word("START", "END")
        col.row_period = True
        col.nullable = False
    else:
        ts.skip_group()


def parse_column_type(column_type: str, name: str = "?") -> ColumnSchema:
    """Parse an INFORMATION_SCHEMA.COLUMNS.COLUMN_TYPE such as ``int(10) unsigned`` or
    ``timestamp(3) /* mariadb-5.3 */`` (legacy is True/False from the marker)."""
    stmt = Statement(column_type, 1)
    ts = TokenStream(tokenize(column_type), stmt, "information_schema")
    col = _ColumnBuild(name)
    _parse_column_body(ts, col, None)
    return col.finish(False)


# --- statements ------------------------------------------------------------------------

_DUMP_VERSION_RE = re.compile(r"^-- Server version\s+(\d+)\.(\d+)\.(\d+)-MariaDB", re.MULTILINE)


def markers_expected(text: str) -> bool:
    """Whether unmarked temporal columns in ``text`` are known to be MySQL-5.6 format:
    the marker appears somewhere, or a dump header names MariaDB >= 10.5.1."""
    if has_legacy_marker(text):
        return True
    m = _DUMP_VERSION_RE.search(text[:4000])
    return bool(m) and tuple(int(x) for x in m.groups()) >= (10, 5, 1)


class _Parser:
    def __init__(self, source: str, default_db: str | None, legacy_default: bool | None):
        self.source = source
        self.db = default_db
        self.legacy_default = legacy_default

    def where(self, stmt: Statement) -> str:
        return f"{self.source}:{stmt.line}" if self.source else f"line {stmt.line}"

    def qualify(self, name: tuple[str | None, str]) -> tuple[str | None, str]:
        return (name[0] if name[0] is not None else self.db, name[1])

    def parse(self, stmt: Statement) -> DdlAction:
        toks = tokenize(stmt.text)
        ts = TokenStream(toks, stmt, self.source)
        where = self.where(stmt)
        if ts.done:
            return Ignored("COMMENT", where=where)
        first = ts.peek()
        w = first.upper
        if w == "CREATE":
            return self._create(ts, where)
        if w == "ALTER":
            return self._alter(ts, where)
        if w == "DROP":
            return self._drop(ts, where)
        if w == "RENAME":
            ts.next()
            if ts.accept_word("TABLE", "TABLES"):
                return self._rename(ts, where)
            return Ignored("RENAME " + (ts.peek().upper if ts.peek() else ""), where=where)
        if w == "TRUNCATE":
            ts.next()
            ts.accept_word("TABLE")
            name = self.qualify(_qualified_name(ts))
            return TruncateTable(name[0], name[1], where=where)
        if w == "USE":
            ts.next()
            db = ts.ident("database name")
            self.db = db
            return Use(db, where=where)
        return Ignored(w or first.value, where=where)

    # CREATE ...........................................................................
    def _create(self, ts: TokenStream, where: str) -> DdlAction:
        ts.expect_word("CREATE")
        or_replace = ts.accept_words("OR", "REPLACE")
        # skip DEFINER=..., ALGORITHM=..., SQL SECURITY ... (views, routines, triggers)
        temporary = bool(ts.accept_word("TEMPORARY"))
        kind = ts.peek().upper if ts.peek() else ""
        if kind == "TABLE":
            ts.next()
            if temporary:
                return Ignored("CREATE TEMPORARY TABLE", where=where)
            return self._create_table(ts, where, or_replace)
        if kind in ("DATABASE", "SCHEMA"):
            ts.next()
            ine = ts.accept_words("IF", "NOT", "EXISTS")
            db = ts.ident("database name")
            cs, coll = self._db_options(ts)
            return CreateDatabase(db, cs, coll, if_not_exists=ine, where=where)
        if kind == "SEQUENCE":
            ts.next()
            ine = ts.accept_words("IF", "NOT", "EXISTS")
            name = self.qualify(_qualified_name(ts))
            schema = TableSchema(name[0] or "", name[1], SEQUENCE_COLUMNS, (), source=self.source)
            return CreateTable(schema, if_not_exists=ine, or_replace=or_replace, where=where)
        kinds = ("VIEW", "TRIGGER", "PROCEDURE", "FUNCTION", "EVENT", "INDEX", "USER",
                 "ROLE", "SERVER", "PACKAGE", "TABLESPACE", "LOGFILE", "SYNONYM")
        for t in ts.toks[ts.i: ts.i + 40]:
            if t.kind == "word" and t.upper in kinds:
                return Ignored("CREATE " + t.upper, where=where)
        raise ts.error("unsupported CREATE statement")

    def _db_options(self, ts: TokenStream) -> tuple[str | None, str | None]:
        cs = coll = None
        while not ts.done:
            ts.accept_word("DEFAULT")
            w = ts.accept_word("CHARACTER", "CHARSET", "COLLATE", "COMMENT")
            if w is None:
                raise ts.error("unknown database option")
            if w == "CHARACTER":
                ts.expect_word("SET")
            if w == "COMMENT":
                ts.accept_punct("=")
                ts.next()
                continue
            value = _charset_name(ts)
            if w == "COLLATE":
                coll = normalize_collation(value)
            else:
                cs = normalize_charset(value)
        if cs is None and coll is not None:
            cs = charset_of_collation(coll)
        if cs is not None and coll is None:
            coll = default_collation(cs)
        return cs, coll

    def _create_table(self, ts: TokenStream, where: str, or_replace: bool) -> DdlAction:
        ine = ts.accept_words("IF", "NOT", "EXISTS")
        db, table = self.qualify(_qualified_name(ts))
        if ts.accept_word("LIKE"):
            src = self.qualify(_qualified_name(ts))
            return CreateTableLike(db, table, src[0], src[1], if_not_exists=ine,
                                   or_replace=or_replace, where=where)
        if ts.at_punct("(") and ts.at_word("LIKE", k=1):
            ts.next()
            ts.next()
            src = self.qualify(_qualified_name(ts))
            ts.expect_punct(")")
            return CreateTableLike(db, table, src[0], src[1], if_not_exists=ine,
                                   or_replace=or_replace, where=where)
        columns: list[ColumnSchema] = []
        pk: tuple[str, ...] = ()
        period_columns = False
        label = f"{db}.{table}" if db else table
        if ts.at_punct("(") and not self._starts_select(ts, 1):
            for item in split_top_level(ts.skip_group()):
                col_pk, col, build = self._table_item(item, ts, label)
                if col is not None:
                    columns.append(col)
                    period_columns |= build.row_period
                    if build.primary:
                        pk = (col.name,)
                if col_pk is not None:
                    pk = col_pk
        opts, rest = self._table_options(ts, label)
        if rest:                                     # [IGNORE|REPLACE] [AS] SELECT ...
            return CreateTableSelect(db, table, tuple(columns), where=where)
        if not columns:
            raise ts.error("CREATE TABLE without columns", table=label)
        if opts.get("SYSTEM VERSIONING") and not period_columns:
            columns.extend(SYSTEM_VERSIONING_COLUMNS)
        pk_lower = {c.lower() for c in pk}
        columns = [replace(c, nullable=False) if c.name.lower() in pk_lower else c for c in columns]
        cs, coll = opts.get("CHARSET"), opts.get("COLLATE")
        if cs is None and coll is not None:
            cs = charset_of_collation(coll)
        schema = TableSchema(db or "", table, tuple(columns), pk, source=self.source,
                             charset=cs, collation=coll)
        return CreateTable(schema, if_not_exists=ine, or_replace=or_replace, where=where)

    @staticmethod
    def _starts_select(ts: TokenStream, k: int) -> bool:
        return ts.at_word("SELECT", "WITH", "VALUES", "TABLE", k=k)

    def _table_item(self, item: list[Token], ts: TokenStream, label: str):
        """One comma-separated item of the CREATE TABLE body."""
        head = item[0]
        w = head.upper
        if w == "CONSTRAINT":
            k = 1
            if not (len(item) > 1 and item[1].is_word("PRIMARY", "UNIQUE", "FOREIGN", "CHECK")):
                k = 2
            if len(item) > k and item[k].is_word("PRIMARY"):
                return _index_columns(item[k:], ts), None, None
            return None, None, None
        if w == "PRIMARY":
            return _index_columns(item, ts), None, None
        if w in ("KEY", "INDEX", "UNIQUE", "FULLTEXT", "SPATIAL", "FOREIGN", "CHECK", "PERIOD"):
            return None, None, None
        col, build = _parse_column(item, ts, legacy_default=self.legacy_default, table=label)
        return None, col, build

    def _table_options(self, ts: TokenStream, label: str) -> tuple[dict, bool]:
        """Table options up to the end, PARTITION BY or a SELECT; returns (options, has_select)."""
        opts: dict = {}
        while not ts.done:
            if ts.accept_punct(","):
                continue
            if ts.at_word("PARTITION") and ts.at_word("BY", k=1):
                _skip_partitioning(ts)
                continue
            if ts.accept_words("WITH", "SYSTEM", "VERSIONING"):
                opts["SYSTEM VERSIONING"] = True
                continue
            if ts.at_word("IGNORE", "REPLACE", "AS") or self._starts_select(ts, 0) or ts.at_punct("("):
                return opts, True
            ts.accept_word("DEFAULT")
            t = ts.next()
            if t.kind != "word":
                ts.i -= 1
                raise ts.error("bad table option", table=label)
            name = t.upper
            if name == "CHARACTER":
                ts.expect_word("SET")
                name = "CHARSET"
            elif name in ("DATA", "INDEX"):
                ts.expect_word("DIRECTORY")
            elif name not in _TABLE_OPTIONS and not ts.at_punct("="):
                ts.i -= 1
                raise ts.error("unknown table option", table=label)
            ts.accept_punct("=")
            if name == "UNION" and ts.at_punct("("):
                ts.skip_group()
                continue
            v = ts.next()
            if name == "CHARSET":
                opts["CHARSET"] = normalize_charset(v.value)
            elif name == "COLLATE":
                opts["COLLATE"] = normalize_collation(v.value)
            else:
                opts[name] = v.value
        return opts, False

    # ALTER ............................................................................
    def _alter(self, ts: TokenStream, where: str) -> DdlAction:
        ts.expect_word("ALTER")
        ts.accept_word("ONLINE")
        ts.accept_word("IGNORE")
        if ts.accept_word("DATABASE", "SCHEMA"):
            db = None
            if not ts.at_word("DEFAULT", "CHARACTER", "CHARSET", "COLLATE", "COMMENT"):
                db = ts.ident("database name")
                if ts.at_word("UPGRADE"):
                    return Ignored("ALTER DATABASE UPGRADE", where=where)
            cs, coll = self._db_options(ts)
            return AlterDatabase(db or self.db, cs, coll, where=where)
        if not ts.accept_word("TABLE"):
            kind = ts.peek().upper if ts.peek() else ""
            if kind in ("SEQUENCE",):
                return Ignored("ALTER SEQUENCE", where=where)
            if kind in ("VIEW", "EVENT", "PROCEDURE", "FUNCTION", "USER", "SERVER", "DEFINER",
                        "ALGORITHM", "SQL", "LOGFILE", "TABLESPACE", "INSTANCE"):
                return Ignored("ALTER " + kind, where=where)
            raise ts.error("unsupported ALTER statement")
        if_exists = ts.accept_words("IF", "EXISTS")
        db, table = self.qualify(_qualified_name(ts))
        label = f"{db}.{table}" if db else table
        if ts.accept_word("WAIT"):
            ts.next()
        else:
            ts.accept_word("NOWAIT")
        ops: list[AlterOp] = []
        for spec in split_top_level(ts.until_top_level()):
            ops.extend(self._alter_spec(TokenStream(spec, ts.stmt, ts.source), label))
        return AlterTable(db, table, tuple(ops), if_exists=if_exists, where=where)

    def _position(self, ts: TokenStream) -> tuple[list[Token], bool, str | None]:
        """Split a trailing FIRST / AFTER col off a column definition."""
        toks = ts.toks[ts.i:]
        ts.i = len(ts.toks)
        if toks and toks[-1].is_word("FIRST"):
            return toks[:-1], True, None
        if len(toks) >= 2 and toks[-2].is_word("AFTER"):
            return toks[:-2], False, toks[-1].value
        return toks, False, None

    def _coldef(self, toks: list[Token], ts: TokenStream, label: str) -> tuple[ColumnSchema, _ColumnBuild]:
        return _parse_column(toks, ts, legacy_default=self.legacy_default, table=label)

    def _alter_spec(self, ts: TokenStream, label: str) -> list[AlterOp]:
        t = ts.peek()
        w = t.upper
        if w == "ADD":
            ts.next()
            if ts.at_word("SYSTEM") and ts.at_word("VERSIONING", k=1):
                return [AddSystemVersioning()]
            if ts.at_word("PRIMARY"):
                return [AddPrimaryKey(_index_columns(ts.toks[ts.i:], ts))]
            if ts.at_word("CONSTRAINT"):
                rest = ts.toks[ts.i:]
                item_pk, _, _ = self._table_item(rest, ts, label)
                return [AddPrimaryKey(item_pk)] if item_pk is not None else []
            if ts.at_word("KEY", "INDEX", "UNIQUE", "FULLTEXT", "SPATIAL", "FOREIGN", "CHECK",
                          "PARTITION", "PERIOD"):
                return []
            ts.accept_word("COLUMN")
            ine = ts.accept_words("IF", "NOT", "EXISTS")
            if ts.at_punct("("):                 # ADD (col1 def, col2 def)
                ops = []
                for item in split_top_level(ts.skip_group()):
                    pk, col, build = self._table_item(item, ts, label)
                    if col is not None:
                        ops.append(AddColumn(col, if_not_exists=ine))
                        if build.primary:
                            ops.append(AddPrimaryKey((col.name,)))
                    elif pk is not None:
                        ops.append(AddPrimaryKey(pk))
                return ops
            toks, first, after = self._position(ts)
            col, build = self._coldef(toks, ts, label)
            ops = [AddColumn(col, first, after, if_not_exists=ine)]
            if build.primary:
                ops.append(AddPrimaryKey((col.name,)))
            return ops
        if w == "DROP":
            ts.next()
            if ts.accept_words("PRIMARY", "KEY"):
                return [DropPrimaryKey()]
            if ts.accept_words("SYSTEM", "VERSIONING"):
                return [DropSystemVersioning()]
            if ts.at_word("KEY", "INDEX", "FOREIGN", "CONSTRAINT", "CHECK", "PARTITION", "PERIOD"):
                return []
            ts.accept_word("COLUMN")
            ie = ts.accept_words("IF", "EXISTS")
            name = ts.ident("column name")
            return [DropColumn(name, if_exists=ie)]
        if w == "MODIFY":
            ts.next()
            ts.accept_word("COLUMN")
            ie = ts.accept_words("IF", "EXISTS")
            toks, first, after = self._position(ts)
            col, _ = self._coldef(toks, ts, label)
            return [ModifyColumn(col, first, after, if_exists=ie)]
        if w == "CHANGE":
            ts.next()
            ts.accept_word("COLUMN")
            ie = ts.accept_words("IF", "EXISTS")
            old = ts.ident("column name")
            toks, first, after = self._position(ts)
            col, _ = self._coldef(toks, ts, label)
            return [ChangeColumn(old, col, first, after, if_exists=ie)]
        if w == "RENAME":
            ts.next()
            if ts.accept_word("COLUMN"):
                ts.accept_words("IF", "EXISTS")
                old = ts.ident("column name")
                ts.expect_word("TO")
                return [RenameColumn(old, ts.ident("column name"))]
            if ts.accept_word("INDEX", "KEY"):
                return []
            ts.accept_word("TO", "AS")
            db, table = self.qualify(_qualified_name(ts))
            return [RenameTo(db, table)]
        if w == "ALTER":
            return []                            # ALTER [COLUMN] c SET/DROP DEFAULT, ALTER INDEX
        if w == "CONVERT":
            ts.next()
            ts.expect_word("TO")
            if ts.accept_word("CHARACTER"):
                ts.expect_word("SET")
            else:
                ts.expect_word("CHARSET")
            cs = normalize_charset(_charset_name(ts))
            coll = None
            if ts.accept_word("COLLATE"):
                coll = normalize_collation(_charset_name(ts))
            if cs == "default":
                cs = None
            return [ConvertCharset(cs, coll)]
        if w == "FORCE":
            return [Force("FORCE")]
        if w in ("ALGORITHM", "LOCK", "ORDER", "ENABLE", "DISABLE", "DISCARD", "IMPORT",
                 "COALESCE", "REORGANIZE", "EXCHANGE", "ANALYZE", "CHECK", "OPTIMIZE",
                 "REBUILD", "REPAIR", "TRUNCATE", "REMOVE", "PARTITION", "WITH", "WITHOUT",
                 "UPGRADE", "CONVERT"):
            return []
        # table options (several may follow each other without commas)
        opts, has_select = self._table_options(ts, label)
        if has_select:
            raise ts.error("unsupported ALTER TABLE specification", table=label)
        ops: list[AlterOp] = []
        if "CHARSET" in opts or "COLLATE" in opts:
            cs, coll = opts.get("CHARSET"), opts.get("COLLATE")
            if cs is None and coll is not None:
                cs = charset_of_collation(coll)
            ops.append(TableDefaults(cs, coll))
        if "ENGINE" in opts or "ROW_FORMAT" in opts:
            ops.append(Force("ENGINE" if "ENGINE" in opts else "ROW_FORMAT"))
        return ops

    # DROP / RENAME ......................................................................
    def _drop(self, ts: TokenStream, where: str) -> DdlAction:
        ts.expect_word("DROP")
        temporary = bool(ts.accept_word("TEMPORARY"))
        if ts.accept_word("TABLE", "TABLES"):
            if temporary:
                return Ignored("DROP TEMPORARY TABLE", where=where)
            ie = ts.accept_words("IF", "EXISTS")
            names = []
            while True:
                names.append(self.qualify(_qualified_name(ts)))
                if not ts.accept_punct(","):
                    break
            return DropTable(tuple(names), if_exists=ie, where=where)
        if ts.accept_word("DATABASE", "SCHEMA"):
            ie = ts.accept_words("IF", "EXISTS")
            return DropDatabase(ts.ident("database name"), if_exists=ie, where=where)
        if ts.accept_word("SEQUENCE"):
            ie = ts.accept_words("IF", "EXISTS")
            names = []
            while True:
                names.append(self.qualify(_qualified_name(ts)))
                if not ts.accept_punct(","):
                    break
            return DropTable(tuple(names), if_exists=ie, where=where)
        kind = ts.peek().upper if ts.peek() else ""
        return Ignored("DROP " + kind, where=where)

    def _rename(self, ts: TokenStream, where: str) -> DdlAction:
        pairs = []
        while True:
            old = self.qualify(_qualified_name(ts))
            if ts.accept_word("WAIT"):
                ts.next()
            ts.accept_word("NOWAIT")
            ts.expect_word("TO")
            new = self.qualify(_qualified_name(ts))
            pairs.append((old, new))
            if not ts.accept_punct(","):
                break
        return RenameTable(tuple(pairs), where=where)


def _index_columns(item: list[Token], ts: TokenStream) -> tuple[str, ...]:
    """Column names of ``PRIMARY KEY [USING x] (a, b(10) DESC)``."""
    sub = TokenStream(item, ts.stmt, ts.source)
    while not sub.done and not sub.at_punct("("):
        sub.next()
    cols = []
    for part in split_top_level(sub.skip_group()):
        cols.append(part[0].value)
    return tuple(cols)


def _skip_partitioning(ts: TokenStream) -> None:
    """PARTITION BY ... [PARTITIONS n] [SUBPARTITION BY ...] [(partition defs)] - to the end
    or to a SELECT."""
    while not ts.done:
        if ts.at_word("AS", "SELECT", "IGNORE", "REPLACE"):
            return
        if ts.at_punct("("):
            ts.skip_group()
        else:
            ts.next()


def parse_script(text: str, *, source: str = "", default_db: str | None = None,
                 legacy_default: bool | None | str = "auto") -> list[DdlAction]:
    """Parse a DDL script into actions, one per statement (see module docstring).

    ``legacy_default``: the ``legacy`` value of unmarked temporal columns; ``"auto"``
    decides from the script (:func:`markers_expected`: False if it comes from a
    marker-printing server, else None).  Raises :class:`DdlParseError` for a CREATE or
    ALTER it cannot interpret, naming ``source:line`` and the statement's first line.
    """
    if legacy_default == "auto":
        legacy_default = False if markers_expected(text) else None
    parser = _Parser(source, default_db, legacy_default)  # type: ignore[arg-type]
    return [parser.parse(stmt) for stmt in split_statements(text)]


# --- catalog ---------------------------------------------------------------------------

def resolve_column(col: ColumnSchema, table_cs: str | None, table_coll: str | None) -> ColumnSchema:
    """Fill in a column's charset/collation from the table defaults (MariaDB rules)."""
    if col.data_type not in TEXT_TYPES:
        if col.charset is None and col.collation is None:
            return col
        return replace(col, charset=None, collation=None)
    cs, coll = col.charset, col.collation
    want_bin = coll == _BIN_COLLATION
    if want_bin:
        coll = None
    if cs is None and coll is not None:
        cs = charset_of_collation(coll)
    if cs is None:
        cs = table_cs
        if coll is None and not want_bin and table_cs is not None:
            coll = table_coll if table_coll and charset_of_collation(table_coll) == table_cs else None
    if cs is not None and coll is None:
        coll = f"{cs}_bin" if want_bin and cs != "binary" else default_collation(cs)
    if cs == "binary" and col.data_type in _TEXT_TO_BLOB:
        return replace(col, data_type=_TEXT_TO_BLOB[col.data_type], charset=None, collation=None)
    return replace(col, charset=cs, collation=coll if cs is not None else None)


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

    def get(self, key: Key, default=None):
        return self.tables.get(key, default)

    def keys(self):
        return self.tables.keys()

    def items(self):
        return self.tables.items()

    def values(self):
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

    def apply_all(self, actions) -> list[Key]:
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
        key = self._key(a.db, a.table, a.where)
        schema = self.tables.get(key)
        label = f"{key[0]}.{key[1]}"
        if schema is None:
            if a.if_exists:
                return []
            raise SchemaNotFoundError(f"ALTER TABLE {label}: table unknown",
                                      source=a.where or None, table=label)
        cols = list(schema.columns)
        pk = list(schema.primary_key)
        cs, coll = schema.charset, schema.collation
        new_key = key

        def index(name: str) -> int | None:
            low = name.lower()
            for i, c in enumerate(cols):
                if c.name.lower() == low:
                    return i
            return None

        def need(name: str) -> int:
            i = index(name)
            if i is None:
                raise SchemaNotFoundError(f"ALTER TABLE {label}: no column `{name}`",
                                          source=a.where or None, table=label, column=name)
            return i

        def place(col: ColumnSchema, first: bool, after: str | None, at: int | None) -> None:
            if first:
                cols.insert(0, col)
            elif after is not None:
                cols.insert(need(after) + 1, col)
            elif at is not None:
                cols.insert(at, col)
            else:
                cols.append(col)

        def rename_pk(old: str, new: str) -> None:
            for i, p in enumerate(pk):
                if p.lower() == old.lower():
                    pk[i] = new

        for op in a.ops:
            if isinstance(op, AddColumn):
                if op.if_not_exists and index(op.col.name) is not None:
                    continue
                place(resolve_column(op.col, cs, coll), op.first, op.after, None)
            elif isinstance(op, DropColumn):
                i = index(op.name)
                if i is None:
                    if op.if_exists:
                        continue
                    need(op.name)
                del cols[i]
                pk = [p for p in pk if p.lower() != op.name.lower()]
            elif isinstance(op, (ModifyColumn, ChangeColumn)):
                old_name = op.old_name if isinstance(op, ChangeColumn) else op.col.name
                i = index(old_name)
                if i is None:
                    if op.if_exists:
                        continue
                    need(old_name)
                col = resolve_column(op.col, cs, coll)
                if any(p.lower() == old_name.lower() for p in pk):
                    col = replace(col, nullable=False)
                del cols[i]
                place(col, op.first, op.after, i)
                rename_pk(old_name, col.name)
            elif isinstance(op, RenameColumn):
                i = need(op.old)
                cols[i] = replace(cols[i], name=op.new)
                rename_pk(op.old, op.new)
            elif isinstance(op, RenameTo):
                new_key = self._key(op.db, op.table, a.where)
            elif isinstance(op, AddPrimaryKey):
                names = [cols[need(n)].name for n in op.columns]
                pk = names
                low = {n.lower() for n in names}
                cols = [replace(c, nullable=False) if c.name.lower() in low else c for c in cols]
            elif isinstance(op, DropPrimaryKey):
                pk = []
            elif isinstance(op, ConvertCharset):
                ncs = op.charset or self.database_charset(key[0])[0]
                ncoll = op.collation or default_collation(ncs)
                cs, coll = ncs, ncoll
                cols = [resolve_column(replace(c, charset=None, collation=None), cs, coll)
                        if c.data_type in TEXT_TYPES and c.data_type != "json" else c for c in cols]
            elif isinstance(op, TableDefaults):
                cs = op.charset
                coll = op.collation or default_collation(cs)
            elif isinstance(op, AddSystemVersioning):
                if index("row_start") is None:
                    cols.extend(SYSTEM_VERSIONING_COLUMNS)
            elif isinstance(op, DropSystemVersioning):
                cols = [c for c in cols if c.name not in ("row_start", "row_end")
                        or c not in SYSTEM_VERSIONING_COLUMNS]
            elif isinstance(op, Force):
                pass
            else:
                raise TypeError(f"unknown ALTER op {op!r}")
        if self.mysql56_temporal_format:
            cols = [replace(c, legacy=False) if c.legacy else c for c in cols]
        new_schema = replace(schema, db=new_key[0], table=new_key[1], columns=tuple(cols),
                             primary_key=tuple(pk), charset=cs, collation=coll)
        if new_key != key:
            del self.tables[key]
            self.tables[new_key] = new_schema
            return [key, new_key]
        self.tables[key] = new_schema
        return [key]


__all__ = [
    "DdlAction", "CreateTable", "CreateTableLike", "CreateTableSelect", "AlterTable",
    "AlterOp", "AddColumn", "DropColumn", "ModifyColumn", "ChangeColumn", "RenameColumn",
    "RenameTo", "AddPrimaryKey", "DropPrimaryKey", "Force", "ConvertCharset", "TableDefaults",
    "AddSystemVersioning", "DropSystemVersioning", "DropTable", "RenameTable",
    "TruncateTable", "CreateDatabase", "AlterDatabase", "DropDatabase", "Use", "Ignored",
    "ACTION_TYPES", "Catalog", "parse_script", "parse_column_type", "resolve_column",
    "markers_expected", "SEQUENCE_COLUMNS", "SYSTEM_VERSIONING_COLUMNS",
]
