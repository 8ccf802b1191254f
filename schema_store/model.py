"""Table and column schemas as the parser needs them, plus their JSON form.

Field values follow INFORMATION_SCHEMA.COLUMNS on MariaDB 10.11 (checked against a real
server by ``tests/schema_store``): ``data_type`` is DATA_TYPE, ``numeric_precision`` /
``numeric_scale`` / ``datetime_precision`` are the columns of the same names, ``length`` is
CHARACTER_MAXIMUM_LENGTH for CHAR/VARCHAR/BINARY/VARBINARY and the width for BIT.
Exception: a DDL script's ``JSON`` column keeps ``data_type='json'`` (MariaDB itself reports
LONGTEXT, with utf8mb4_bin), because the same script may come from MySQL.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Iterable

#: DATA_TYPE values whose columns carry a character set.
TEXT_TYPES = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext",
                        "enum", "set", "json"})
TEMPORAL_FSP_TYPES = frozenset({"timestamp", "datetime", "time"})

#: Default collation of each character set (MariaDB 10.11 information_schema.CHARACTER_SETS).
DEFAULT_COLLATIONS: dict[str, str] = {
    "big5": "big5_chinese_ci", "dec8": "dec8_swedish_ci", "cp850": "cp850_general_ci",
    "hp8": "hp8_english_ci", "koi8r": "koi8r_general_ci", "latin1": "latin1_swedish_ci",
    "latin2": "latin2_general_ci", "swe7": "swe7_swedish_ci", "ascii": "ascii_general_ci",
    "ujis": "ujis_japanese_ci", "sjis": "sjis_japanese_ci", "hebrew": "hebrew_general_ci",
    "tis620": "tis620_thai_ci", "euckr": "euckr_korean_ci", "koi8u": "koi8u_general_ci",
    "gb2312": "gb2312_chinese_ci", "greek": "greek_general_ci", "cp1250": "cp1250_general_ci",
    "gbk": "gbk_chinese_ci", "latin5": "latin5_turkish_ci", "armscii8": "armscii8_general_ci",
    "utf8mb3": "utf8mb3_general_ci", "ucs2": "ucs2_general_ci", "cp866": "cp866_general_ci",
    "keybcs2": "keybcs2_general_ci", "macce": "macce_general_ci",
    "macroman": "macroman_general_ci", "cp852": "cp852_general_ci",
    "latin7": "latin7_general_ci", "utf8mb4": "utf8mb4_general_ci",
    "cp1251": "cp1251_general_ci", "utf16": "utf16_general_ci",
    "utf16le": "utf16le_general_ci", "cp1256": "cp1256_general_ci",
    "cp1257": "cp1257_general_ci", "utf32": "utf32_general_ci", "binary": "binary",
    "geostd8": "geostd8_general_ci", "cp932": "cp932_japanese_ci",
    "eucjpms": "eucjpms_japanese_ci", "gb18030": "gb18030_chinese_ci",
}

#: Bytes per character (MAXLEN of information_schema.CHARACTER_SETS).
MBMAXLEN: dict[str, int] = {
    "big5": 2, "ujis": 3, "sjis": 2, "euckr": 2, "gb2312": 2, "gbk": 2, "utf8mb3": 3,
    "ucs2": 2, "utf8mb4": 4, "utf16": 4, "utf16le": 4, "utf32": 4, "cp932": 2,
    "eucjpms": 3, "gb18030": 4,
}


def normalize_charset(name: str | None) -> str | None:
    """Lower-case charset name with MariaDB's aliases resolved (``utf8`` -> ``utf8mb3``)."""
    if name is None:
        return None
    name = name.lower()
    return "utf8mb3" if name == "utf8" else name


def normalize_collation(name: str | None) -> str | None:
    if name is None:
        return None
    name = name.lower()
    if name.startswith("utf8_"):
        name = "utf8mb3_" + name[5:]
    return name


def charset_of_collation(collation: str) -> str:
    """``utf8mb4_bin`` -> ``utf8mb4``; ``binary`` -> ``binary``."""
    collation = normalize_collation(collation) or ""
    if collation == "binary":
        return "binary"
    head = collation.split("_", 1)[0]
    return head


def default_collation(charset: str | None) -> str | None:
    if charset is None:
        return None
    return DEFAULT_COLLATIONS.get(charset, f"{charset}_general_ci")


@dataclass(frozen=True)
class ColumnSchema:
    name: str
    data_type: str
    unsigned: bool = False
    nullable: bool = True
    length: int | None = None
    numeric_precision: int | None = None
    numeric_scale: int | None = None
    datetime_precision: int | None = None
    legacy: bool | None = None
    charset: str | None = None
    collation: str | None = None
    enum_values: tuple[str, ...] | None = None
    set_values: tuple[str, ...] | None = None
    compressed: bool = False
    #: A column the server adds by itself and logs in every row image: MySQL's hidden
    #: generated column of a functional key part (data_type "expression": its type is the
    #: expression's, which DDL does not state).
    hidden: bool = False

    @property
    def is_temporal_fsp(self) -> bool:
        """TIMESTAMP/DATETIME/TIME: the types whose legacy form lacks binlog metadata."""
        return self.data_type in TEMPORAL_FSP_TYPES



def column_position(columns: Iterable[ColumnSchema], name: str) -> int | None:
    """0-based index of the column named ``name`` (names compare case-insensitively), or None."""
    low = name.lower()
    for i, col in enumerate(columns):
        if col.name.lower() == low:
            return i
    return None


@dataclass(frozen=True)
class TableSchema:
    db: str
    table: str
    columns: tuple[ColumnSchema, ...]
    primary_key: tuple[str, ...] = ()
    source: str = ""
    inferred: bool = False
    #: Table default character set / collation (for columns added later); None if unknown.
    charset: str | None = None
    collation: str | None = None

    def column(self, name: str) -> ColumnSchema | None:
        low = name.lower()
        for col in self.columns:
            if col.name.lower() == low:      # column names are case-insensitive
                return col
        return None

    def column_index(self, name: str) -> int | None:
        """0-based index of a column, or None."""
        return column_position(self.columns, name)

    @property
    def key(self) -> tuple[str, str]:
        return (self.db, self.table)

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def with_columns(self, columns: Iterable[ColumnSchema], **changes: Any) -> "TableSchema":
        return replace(self, columns=tuple(columns), **changes)

    # -- JSON -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return table_to_dict(self)

    def to_json(self) -> str:
        return table_to_json(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TableSchema":
        return table_from_dict(data)

    @classmethod
    def from_json(cls, text: str) -> "TableSchema":
        return table_from_json(text)


_COLUMN_FIELDS = {f.name for f in fields(ColumnSchema)}
_TABLE_FIELDS = {f.name for f in fields(TableSchema)}


def column_to_dict(col: ColumnSchema) -> dict[str, Any]:
    d = asdict(col)
    for k in ("enum_values", "set_values"):
        if d[k] is not None:
            d[k] = list(d[k])
    return d


def column_from_dict(data: dict[str, Any]) -> ColumnSchema:
    d = {k: v for k, v in data.items() if k in _COLUMN_FIELDS}
    for k in ("enum_values", "set_values"):
        if d.get(k) is not None:
            d[k] = tuple(d[k])
    return ColumnSchema(**d)


def table_to_dict(schema: TableSchema) -> dict[str, Any]:
    return {
        "db": schema.db, "table": schema.table,
        "columns": [column_to_dict(c) for c in schema.columns],
        "primary_key": list(schema.primary_key), "source": schema.source,
        "inferred": schema.inferred, "charset": schema.charset, "collation": schema.collation,
    }


def table_from_dict(data: dict[str, Any]) -> TableSchema:
    d = {k: v for k, v in data.items() if k in _TABLE_FIELDS}
    d["columns"] = tuple(column_from_dict(c) for c in d.get("columns", ()))
    d["primary_key"] = tuple(d.get("primary_key", ()))
    return TableSchema(**d)


def table_to_json(schema: TableSchema) -> str:
    return json.dumps(table_to_dict(schema), ensure_ascii=False, separators=(",", ":"))


def table_from_json(text: str) -> TableSchema:
    return table_from_dict(json.loads(text))


__all__ = [
    "ColumnSchema", "TableSchema", "TEXT_TYPES", "TEMPORAL_FSP_TYPES", "DEFAULT_COLLATIONS",
    "normalize_charset", "normalize_collation", "charset_of_collation", "default_collation",
    "column_to_dict", "column_from_dict", "table_to_dict", "table_from_dict",
    "table_to_json", "table_from_json",
]
