"""The DDL statement parser: a recursive descent over the tokens of
:mod:`schema_store.lexer`, one :class:`~schema_store.actions.DdlAction` per statement.

Legacy temporal columns: see :mod:`schema_store.ddl` (``legacy`` True/False/None).
"""
from __future__ import annotations

import re
from dataclasses import replace

from .actions import (
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
from .column_types import (
    SEQUENCE_COLUMNS,
    SYSTEM_VERSIONING_COLUMNS,
    ColumnBuild,
    charset_name,
    parse_column,
    qualified_name,
)
from .lexer import Statement, Token, TokenStream, has_legacy_marker, split_statements, split_top_level, tokenize
from .model import (
    ColumnSchema,
    TableSchema,
    charset_of_collation,
    default_collation,
    normalize_charset,
    normalize_collation,
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

_DUMP_VERSION_RE = re.compile(r"^-- Server version\s+(\d+)\.(\d+)\.(\d+)-MariaDB", re.MULTILINE)


def markers_expected(text: str) -> bool:
    """Whether unmarked temporal columns in ``text`` are known to be MySQL-5.6 format:
    the marker appears somewhere, or a dump header names MariaDB >= 10.5.1."""
    if has_legacy_marker(text):
        return True
    m = _DUMP_VERSION_RE.search(text[:4000])
    return m is not None and tuple(int(x) for x in m.groups()) >= (10, 5, 1)


#: ALTER TABLE specifications that change no column: ALTER [COLUMN] c SET/DROP DEFAULT,
#: ALTER INDEX, ALGORITHM=, LOCK=, partition maintenance, ...
_ALTER_NO_OP = frozenset({
    "ALTER", "ALGORITHM", "LOCK", "ORDER", "ENABLE", "DISABLE", "DISCARD", "IMPORT", "COALESCE",
    "REORGANIZE", "EXCHANGE", "ANALYZE", "CHECK", "OPTIMIZE", "REBUILD", "REPAIR", "TRUNCATE",
    "REMOVE", "PARTITION", "WITH", "WITHOUT", "UPGRADE"})


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
        first = ts.current()
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
            return Ignored("RENAME " + ts.peek_upper(), where=where)
        if w == "TRUNCATE":
            ts.next()
            ts.accept_word("TABLE")
            name = self.qualify(qualified_name(ts))
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
        kind = ts.peek_upper()
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
            name = self.qualify(qualified_name(ts))
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
            value = charset_name(ts)
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
        db, table = self.qualify(qualified_name(ts))
        if ts.accept_word("LIKE"):
            src = self.qualify(qualified_name(ts))
            return CreateTableLike(db, table, src[0], src[1], if_not_exists=ine,
                                   or_replace=or_replace, where=where)
        if ts.at_punct("(") and ts.at_word("LIKE", k=1):
            ts.next()
            ts.next()
            src = self.qualify(qualified_name(ts))
            ts.expect_punct(")")
            return CreateTableLike(db, table, src[0], src[1], if_not_exists=ine,
                                   or_replace=or_replace, where=where)
        columns: list[ColumnSchema] = []
        hidden: list[ColumnSchema] = []
        pk: tuple[str, ...] = ()
        period_columns = False
        label = f"{db}.{table}" if db else table
        if ts.at_punct("(") and not self._starts_select(ts, 1):
            for item in split_top_level(ts.skip_group()):
                hidden.extend(functional_key_columns(item, ts, hidden))
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
        columns.extend(hidden)
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
        col, build = parse_column(item, ts, legacy_default=self.legacy_default, table=label)
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
            kind = ts.peek_upper()
            if kind in ("SEQUENCE",):
                return Ignored("ALTER SEQUENCE", where=where)
            if kind in ("VIEW", "EVENT", "PROCEDURE", "FUNCTION", "USER", "SERVER", "DEFINER",
                        "ALGORITHM", "SQL", "LOGFILE", "TABLESPACE", "INSTANCE"):
                return Ignored("ALTER " + kind, where=where)
            raise ts.error("unsupported ALTER statement")
        if_exists = ts.accept_words("IF", "EXISTS")
        db, table = self.qualify(qualified_name(ts))
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

    def _coldef(self, toks: list[Token], ts: TokenStream, label: str) -> tuple[ColumnSchema, ColumnBuild]:
        return parse_column(toks, ts, legacy_default=self.legacy_default, table=label)

    def _alter_spec(self, ts: TokenStream, label: str) -> list[AlterOp]:
        """One comma-separated ALTER TABLE specification -> its operations (none for the
        ones that leave the row format alone: indexes, partitions, ALGORITHM, ...)."""
        w = ts.current().upper
        if w in _ALTER_NO_OP:
            return []
        if w == "FORCE":
            return [Force("FORCE")]
        spec = {"ADD": self._alter_add, "DROP": self._alter_drop, "MODIFY": self._alter_modify,
                "CHANGE": self._alter_change, "RENAME": self._alter_rename,
                "CONVERT": self._alter_convert}.get(w)
        if spec is None:
            return self._alter_options(ts, label)
        ts.next()
        return spec(ts, label)

    def _alter_add(self, ts: TokenStream, label: str) -> list[AlterOp]:
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
            ops: list[AlterOp] = []
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

    def _alter_drop(self, ts: TokenStream, label: str) -> list[AlterOp]:
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

    def _alter_modify(self, ts: TokenStream, label: str) -> list[AlterOp]:
        ts.accept_word("COLUMN")
        ie = ts.accept_words("IF", "EXISTS")
        toks, first, after = self._position(ts)
        col, _ = self._coldef(toks, ts, label)
        return [ModifyColumn(col, first, after, if_exists=ie)]

    def _alter_change(self, ts: TokenStream, label: str) -> list[AlterOp]:
        ts.accept_word("COLUMN")
        ie = ts.accept_words("IF", "EXISTS")
        old = ts.ident("column name")
        toks, first, after = self._position(ts)
        col, _ = self._coldef(toks, ts, label)
        return [ChangeColumn(old, col, first, after, if_exists=ie)]

    def _alter_rename(self, ts: TokenStream, label: str) -> list[AlterOp]:
        if ts.accept_word("COLUMN"):
            ts.accept_words("IF", "EXISTS")
            old = ts.ident("column name")
            ts.expect_word("TO")
            return [RenameColumn(old, ts.ident("column name"))]
        if ts.accept_word("INDEX", "KEY"):
            return []
        ts.accept_word("TO", "AS")
        db, table = self.qualify(qualified_name(ts))
        return [RenameTo(db, table)]

    def _alter_convert(self, ts: TokenStream, label: str) -> list[AlterOp]:
        ts.expect_word("TO")
        if ts.accept_word("CHARACTER"):
            ts.expect_word("SET")
        else:
            ts.expect_word("CHARSET")
        cs = normalize_charset(charset_name(ts))
        coll = None
        if ts.accept_word("COLLATE"):
            coll = normalize_collation(charset_name(ts))
        if cs == "default":
            cs = None
        return [ConvertCharset(cs, coll)]

    def _alter_options(self, ts: TokenStream, label: str) -> list[AlterOp]:
        """Table options (several may follow each other without commas)."""
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
            return DropTable(self._table_list(ts), if_exists=ie, where=where)
        if ts.accept_word("DATABASE", "SCHEMA"):
            ie = ts.accept_words("IF", "EXISTS")
            return DropDatabase(ts.ident("database name"), if_exists=ie, where=where)
        if ts.accept_word("SEQUENCE"):
            ie = ts.accept_words("IF", "EXISTS")
            return DropTable(self._table_list(ts), if_exists=ie, where=where)
        kind = ts.peek_upper()
        return Ignored("DROP " + kind, where=where)

    def _table_list(self, ts: TokenStream) -> tuple[tuple[str | None, str], ...]:
        """``[db.]name, [db.]name ...`` (DROP TABLE / SEQUENCE)."""
        names = [self.qualify(qualified_name(ts))]
        while ts.accept_punct(","):
            names.append(self.qualify(qualified_name(ts)))
        return tuple(names)

    def _rename(self, ts: TokenStream, where: str) -> DdlAction:
        pairs = []
        while True:
            old = self.qualify(qualified_name(ts))
            if ts.accept_word("WAIT"):
                ts.next()
            ts.accept_word("NOWAIT")
            ts.expect_word("TO")
            new = self.qualify(qualified_name(ts))
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


_KEY_WORDS = ("KEY", "INDEX", "UNIQUE", "PRIMARY")


def functional_key_columns(item: list[Token], ts: TokenStream,
                           earlier: list[ColumnSchema]) -> list[ColumnSchema]:
    """MySQL 8.0.13+ functional key parts (``INDEX ((expr))``): each is a hidden VIRTUAL
    generated column the server appends after the declared columns and logs in every row
    image, named ``!hidden!<index>!<key part>!0`` (sql/sql_table.cc
    make_functional_index_column_name; an unnamed index is ``functional_index``, then
    ``functional_index_2``...)."""
    k = 0
    if item and item[0].is_word("CONSTRAINT"):
        k = 1 if len(item) > 1 and item[1].is_word(*_KEY_WORDS) else 2
    if len(item) <= k or not item[k].is_word(*_KEY_WORDS):
        return []
    sub = TokenStream(item[k:], ts.stmt, ts.source)
    name = None
    while not sub.done and not sub.at_punct("("):
        t = sub.next()
        if t.kind != "word" or not (t.is_word(*_KEY_WORDS) or t.is_word("USING", "BTREE", "HASH")):
            name = t.value
    if sub.done:
        return []
    parts = split_top_level(sub.skip_group())
    functional = [i for i, part in enumerate(parts) if part and part[0].kind == "punct"
                  and part[0].value == "("]
    if not functional:
        return []
    if name is None:
        unnamed = {c.name.split("!")[2] for c in earlier if c.name.startswith("!hidden!functional_index")}
        name = "functional_index" if not unnamed else f"functional_index_{len(unnamed) + 1}"
    return [ColumnSchema(f"!hidden!{name}!{i}!0", "expression", hidden=True) for i in functional]


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
