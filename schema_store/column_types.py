"""Column definitions -> :class:`ColumnSchema`: type names and their arguments, column
attributes (charset, NULL, PRIMARY KEY, the ``/* mariadb-5.3 */`` marker, ...), and the
columns MariaDB adds by itself (SEQUENCE tables, system versioning).

Shared by the statement parser (:mod:`schema_store.parser`) and the live snapshot
(:func:`parse_column_type` reads INFORMATION_SCHEMA.COLUMNS.COLUMN_TYPE).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .lexer import Statement, Token, TokenStream, split_top_level, tokenize
from .model import (
    MBMAXLEN,
    TEMPORAL_FSP_TYPES,
    TEXT_TYPES,
    ColumnSchema,
    charset_of_collation,
    default_collation,
    normalize_charset,
    normalize_collation,
)

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

_BIN_COLLATION = "_bin"      # placeholder: "<resolved charset>_bin" (the BINARY attribute)


@dataclass
class ColumnBuild:
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


def _parse_type(ts: TokenStream, col: ColumnBuild) -> None:
    """Base type name (one or more words) and its ``(...)`` arguments."""
    t = ts.next()
    if t.kind != "word":
        raise ts.error("expected a column type", column=col.name)
    w, national = _type_name(ts, t.value.lower())
    args: list[Token] = []
    if ts.at_punct("("):
        args = [tok for part in split_top_level(ts.skip_group()) for tok in part[:1]]
    if national:
        col.charset = "utf8mb3"
    nums = [_int_arg(ts, a) for a in args] if w not in ("enum", "set") else []
    family = _TYPE_FAMILIES.get(w)
    if family is not None:
        w = family(ts, col, w, args, nums)
    elif w not in _SIMPLE:
        raise ts.error(f"unknown column type {t.value!r}", column=col.name)
    if w == "json":
        col.charset, col.collation = "utf8mb4", "utf8mb4_bin"
    col.data_type = w


def _type_name(ts: TokenStream, w: str) -> tuple[str, bool]:
    """The type's name from its words (NATIONAL CHAR VARYING, DOUBLE PRECISION, LONG
    VARBINARY ...) and whether it is NATIONAL (utf8mb3)."""
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
    return w, national


# One function per type family: (stream, column, name, argument tokens, integer arguments)
# -> the type's canonical name; each sets the column's length/precision/labels.

def _integer(ts, col: ColumnBuild, w: str, args, nums) -> str:
    w = _INT_ALIASES.get(w, w)
    col.numeric_precision = _INT_PRECISION[w]
    col.numeric_scale = 0
    return w


def _serial(ts, col: ColumnBuild, w: str, args, nums) -> str:
    col.unsigned = True
    col.nullable = False
    col.numeric_precision, col.numeric_scale = 20, 0
    return "bigint"


def _decimal(ts, col: ColumnBuild, w: str, args, nums) -> str:
    col.numeric_precision = nums[0] if nums else 10
    col.numeric_scale = nums[1] if len(nums) > 1 else 0
    return "decimal"


def _float(ts, col: ColumnBuild, w: str, args, nums) -> str:
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
    return w


def _bit(ts, col: ColumnBuild, w: str, args, nums) -> str:
    col.length = col.numeric_precision = nums[0] if nums else 1
    return w


def _temporal(ts, col: ColumnBuild, w: str, args, nums) -> str:
    col.datetime_precision = nums[0] if nums else 0
    return w


def _fixed_string(ts, col: ColumnBuild, w: str, args, nums) -> str:
    col.length = nums[0] if nums else 1
    return w


def _var_string(ts, col: ColumnBuild, w: str, args, nums) -> str:
    if not nums:
        raise ts.error(f"{w.upper()} needs a length", column=col.name)
    col.length = nums[0]
    return w


def _labels(ts, col: ColumnBuild, w: str, args, nums) -> str:
    labels = []
    for a in args:
        if a.kind != "string":
            raise ts.error(f"{w.upper()} labels must be strings", column=col.name)
        labels.append(a.value)
    col.labels = tuple(labels)
    return w


def _blob(ts, col: ColumnBuild, w: str, args, nums) -> str:
    if not nums:
        return w
    n = nums[0]
    return "tinyblob" if n < 256 else "blob" if n < 65536 else "mediumblob" if n < 1 << 24 else "longblob"


def _text(ts, col: ColumnBuild, w: str, args, nums) -> str:
    if nums:
        col.text_length = nums[0]
    return w


def _renamed(canonical: str):
    return lambda ts, col, w, args, nums: canonical


_TYPE_FAMILIES = {
    **dict.fromkeys([*_INT_ALIASES, *_INT_PRECISION], _integer),
    "serial": _serial,
    **dict.fromkeys(("decimal", "dec", "numeric", "fixed", "number"), _decimal),
    **dict.fromkeys(("float", "float4", "float8", "double", "real"), _float),
    "bit": _bit,
    **dict.fromkeys(("timestamp", "datetime", "time"), _temporal),
    **dict.fromkeys(("char", "binary"), _fixed_string),
    **dict.fromkeys(("varchar", "varbinary"), _var_string),
    **dict.fromkeys(("enum", "set"), _labels),
    "blob": _blob,
    "text": _text,
    "geomcollection": _renamed("geometrycollection"),
    "byte": _renamed("binary"),
}


def charset_name(ts: TokenStream) -> str:
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
        if t.value.startswith("_") and (following := ts.peek()) is not None and following.kind == "string":
            ts.next()
        elif t.value.upper() in ("NEXT", "PREVIOUS") and ts.at_word("VALUE"):
            ts.next()
            ts.expect_word("FOR")
            qualified_name(ts)
        elif ts.at_punct("("):
            ts.skip_group()


def qualified_name(ts: TokenStream) -> tuple[str | None, str]:
    first = ts.ident("table name")
    if ts.accept_punct("."):
        return first, ts.ident("table name")
    return None, first


def parse_column(toks: list[Token], ts_parent: TokenStream, *, legacy_default: bool | None,
                  table: str) -> tuple[ColumnSchema, ColumnBuild]:
    ts = TokenStream(toks, ts_parent.stmt, ts_parent.source)
    name = ts.ident("column name")
    col = ColumnBuild(name)
    _parse_column_body(ts, col, table)
    return col.finish(legacy_default), col


def _parse_column_body(ts: TokenStream, col: ColumnBuild, table: str | None) -> None:
    _parse_type(ts, col)
    while not ts.done:
        t = ts.current()
        if t.kind == "marker":
            ts.next()
            col.marker = True
            continue
        if t.kind != "word":
            raise ts.error("unexpected token in column definition", table=table, column=col.name)
        ts.next()
        attribute = _ATTRIBUTES.get(t.upper)
        if attribute is not None:
            attribute(ts, col)
        elif ts.at_punct("="):                   # engine-defined attribute: name = value
            ts.next()
            ts.next()
        else:
            ts.i -= 1
            raise ts.error("unknown column attribute", table=table, column=col.name)


# One function per column attribute, called after its first word: (stream, column).

def _unsigned(ts: TokenStream, col: ColumnBuild) -> None:      # UNSIGNED, ZEROFILL
    col.unsigned = True


def _binary(ts: TokenStream, col: ColumnBuild) -> None:
    col.collation = _BIN_COLLATION if col.charset is None else f"{col.charset}_bin"


def _charset_is(name: str):
    def attribute(ts: TokenStream, col: ColumnBuild) -> None:   # BYTE, ASCII, UNICODE
        col.charset = name
    return attribute


def _charset(ts: TokenStream, col: ColumnBuild) -> None:
    col.charset = normalize_charset(charset_name(ts))
    if col.collation == _BIN_COLLATION:
        col.collation = f"{col.charset}_bin"


def _character_set(ts: TokenStream, col: ColumnBuild) -> None:
    ts.expect_word("SET")
    _charset(ts, col)


def _collate(ts: TokenStream, col: ColumnBuild) -> None:
    col.collation = normalize_collation(charset_name(ts))


def _compressed(ts: TokenStream, col: ColumnBuild) -> None:
    col.compressed = True
    if ts.accept_punct("="):
        ts.next()


def _not_null(ts: TokenStream, col: ColumnBuild) -> None:
    ts.expect_word("NULL")
    col.nullable = False


def _null(ts: TokenStream, col: ColumnBuild) -> None:
    col.nullable = True


def _default(ts: TokenStream, col: ColumnBuild) -> None:
    _skip_expr_operand(ts)


def _on_update(ts: TokenStream, col: ColumnBuild) -> None:
    ts.expect_word("UPDATE")
    _skip_expr_operand(ts)


def _ignored(ts: TokenStream, col: ColumnBuild) -> None:
    pass


def _primary(ts: TokenStream, col: ColumnBuild) -> None:
    ts.accept_word("KEY")
    col.primary = True


def _key(ts: TokenStream, col: ColumnBuild) -> None:     # column-level KEY means PRIMARY KEY
    col.primary = True


def _unique(ts: TokenStream, col: ColumnBuild) -> None:
    ts.accept_word("KEY")


def _comment(ts: TokenStream, col: ColumnBuild) -> None:
    ts.accept_punct("=")
    ts.next()


def _one_value(ts: TokenStream, col: ColumnBuild) -> None:     # COLUMN_FORMAT, STORAGE, SRID
    ts.next()


def _generated_always(ts: TokenStream, col: ColumnBuild) -> None:
    ts.expect_word("ALWAYS")
    ts.expect_word("AS")
    _generated(ts, col)


def _constraint(ts: TokenStream, col: ColumnBuild) -> None:
    if not ts.at_word("CHECK"):
        ts.ident("constraint name")
    ts.expect_word("CHECK")
    ts.skip_group()


def _check(ts: TokenStream, col: ColumnBuild) -> None:
    ts.skip_group()


def _references(ts: TokenStream, col: ColumnBuild) -> None:
    ts.i = len(ts.toks)                  # REFERENCES ... runs to the end of the definition


def _system_versioning(ts: TokenStream, col: ColumnBuild) -> None:    # WITH[OUT] SYSTEM VERSIONING
    ts.expect_word("SYSTEM")
    ts.expect_word("VERSIONING")


def _generated(ts: TokenStream, col: ColumnBuild) -> None:
    if ts.accept_word("ROW"):
        ts.expect_word("START", "END")
        col.row_period = True
        col.nullable = False
    else:
        ts.skip_group()


_ATTRIBUTES = {
    "UNSIGNED": _unsigned, "ZEROFILL": _unsigned, "SIGNED": _ignored,
    "BINARY": _binary, "BYTE": _charset_is("binary"), "ASCII": _charset_is("latin1"),
    "UNICODE": _charset_is("ucs2"), "CHARACTER": _character_set, "CHARSET": _charset,
    "COLLATE": _collate, "COMPRESSED": _compressed, "NOT": _not_null, "NULL": _null,
    "DEFAULT": _default, "ON": _on_update,
    **dict.fromkeys(("AUTO_INCREMENT", "INVISIBLE", "VISIBLE", "VIRTUAL", "STORED", "PERSISTENT"),
                    _ignored),
    "PRIMARY": _primary, "KEY": _key, "UNIQUE": _unique, "COMMENT": _comment,
    **dict.fromkeys(("COLUMN_FORMAT", "STORAGE", "SRID"), _one_value),
    "GENERATED": _generated_always, "AS": _generated, "CONSTRAINT": _constraint,
    "CHECK": _check, "REFERENCES": _references,
    "WITH": _system_versioning, "WITHOUT": _system_versioning,
}


def parse_column_type(column_type: str, name: str = "?") -> ColumnSchema:
    """Parse an INFORMATION_SCHEMA.COLUMNS.COLUMN_TYPE such as ``int(10) unsigned`` or
    ``timestamp(3) /* mariadb-5.3 */`` (legacy is True/False from the marker)."""
    stmt = Statement(column_type, 1)
    ts = TokenStream(tokenize(column_type), stmt, "information_schema")
    col = ColumnBuild(name)
    _parse_column_body(ts, col, None)
    return col.finish(False)


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
