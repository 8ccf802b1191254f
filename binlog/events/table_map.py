"""TABLE_MAP_EVENT (19).

Post-header (``sql/log_event_server.cc`` Table_map_log_event::write_data_header):
table_id 6 bytes LE (4 when the FDE post-header length is 6, pre-5.1.4), u16 flags.
Body (write_data_body): u8 db length, db, NUL; u8 table length, table, NUL; packed
column count; one type byte per column; packed metadata length and the metadata block
(0-2 bytes per column by type, read by ``binlog.types.METADATA_READERS``); nullability
bitmap; then optional metadata TLVs to the end of the event (binlog_row_metadata
MINIMAL/FULL; MySQL ``libs/mysql/binlog/event/rows_event.h`` Optional_metadata_field_type).

``full_metadata_tlvs`` writes the TLVs of binlog_row_metadata=FULL (``binlog rewrite
--full-metadata``) that ``decode_table_map`` reads back.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..column import Column
from ..constants import MARIADB_NUMERIC_TYPES, NUMERIC_TYPES, ColumnType as T, EventType as E
from ..cursor import Cursor, bit_set, pack_lenenc
from ..errors import BinlogError, MalformedEventError, UnsupportedTypeError
from ..registry import register
from .base import Event

SIGNEDNESS = 1
DEFAULT_CHARSET = 2
COLUMN_CHARSET = 3
COLUMN_NAME = 4
SET_STR_VALUE = 5
ENUM_STR_VALUE = 6
GEOMETRY_TYPE = 7
SIMPLE_PRIMARY_KEY = 8
PRIMARY_KEY_WITH_PREFIX = 9
ENUM_AND_SET_DEFAULT_CHARSET = 10
ENUM_AND_SET_COLUMN_CHARSET = 11
COLUMN_VISIBILITY = 12
VECTOR_DIMENSIONALITY = 13

_CHARACTER_TYPES = frozenset({T.STRING, T.VAR_STRING, T.VARCHAR, T.BLOB, T.TINY_BLOB,
                              T.MEDIUM_BLOB, T.LONG_BLOB, T.BLOB_COMPRESSED,
                              T.VARCHAR_COMPRESSED})


@dataclass
class TableMapEvent(Event):
    table_id: int
    flags: int
    db: str
    table: str
    columns: list[Column]
    primary_key: list[int] | None = None
    pk_prefixes: dict[int, int] = field(default_factory=dict)
    optional: dict[int, bytes] = field(default_factory=dict)   # raw TLVs, for inspection

    @property
    def qualified_name(self) -> str:
        return f"{self.db}.{self.table}"

    def layout_key(self) -> tuple:
        """What the byte decoding of rows depends on (names do not change bytes)."""
        return tuple((c.binlog_type, c.meta) for c in self.columns)


def is_character_column(col: Column, mariadb: bool) -> bool:
    """Columns counted by the charset TLVs: MySQL sql/log_event.cc is_character_type
    (STRING, VAR_STRING, VARCHAR, BLOB and, from 9.0, VECTOR - binary, but listed); MariaDB
    sql/log_event_server.cc lists GEOMETRY instead (its is_character_type keeps the
    "Base class is blob for geom type" case) and has no VECTOR type code."""
    if col.type in _CHARACTER_TYPES:
        return True
    return col.type == (T.GEOMETRY if mariadb else T.VECTOR)


def read_table_id(cur: Cursor, ctx, type_code: int) -> int:
    return cur.u32("table_id") if ctx.fde.post_header(type_code, 8) == 6 else cur.u48("table_id")


def _name(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


@register(E.TABLE_MAP_EVENT)
def decode_table_map(cur, ctx, header):
    from ..types import METADATA_READERS, make_column

    table_id = read_table_id(cur, ctx, E.TABLE_MAP_EVENT)
    flags = cur.u16("flags")
    db = cur.bytes(cur.u8("db length"), "db name")
    cur.skip(1, "db NUL")
    table = cur.bytes(cur.u8("table length"), "table name")
    cur.skip(1, "table NUL")
    count = cur.count("column count")
    types_offset = cur.offset
    types = cur.bytes(count, "column types")
    qualified = f"{_name(db)}.{_name(table)}"
    if cur.at_end():
        _reject_pre_ga(ctx, qualified, cur.offset)
    meta_cur = cur.sub(cur.count("metadata length"), "metadata block")
    columns = []
    for index, type_code in enumerate(types):
        reader = METADATA_READERS.get(type_code)
        if reader is None:
            raise UnsupportedTypeError(f"column @{index + 1} has unknown type code {type_code}",
                                       field_offset=types_offset + index, table=qualified)
        start = meta_cur.offset
        try:
            columns.append(make_column(index, type_code, reader(meta_cur)))
        except BinlogError as exc:
            exc.add_context(table=qualified, column=f"@{index + 1}", field_offset=start)
            raise
    meta_cur.expect_end("column metadata")
    nullable = cur.bitmap(count, "nullability bitmap")
    for col in columns:
        col.nullable = bit_set(nullable, col.index)
    event = TableMapEvent(header, table_id, flags, _name(db), _name(table), columns)
    try:
        _read_optional_metadata(cur, event, ctx.fde.is_mariadb)
    except BinlogError as exc:
        exc.add_context(table=qualified)
        raise
    return event


def _reject_pre_ga(ctx, qualified: str, offset: int) -> None:
    """MySQL 5.1.15-5.1.17 (pre-GA) wrote TABLE_MAP with the column types only: no
    metadata block and no nullability bitmap (the field metadata came with 5.1.18,
    WL#3228).  Their rows were read with the replica's own table definition: the
    binlog alone does not give VARCHAR/CHAR/DECIMAL/BLOB sizes, so they are refused."""
    version = ctx.fde.server_version or "unknown"
    raise UnsupportedTypeError(
        f"TABLE_MAP ends after its column types, with no metadata block: written by a "
        f"pre-GA MySQL 5.1 (5.1.15-5.1.17; this binlog's server: {version}), whose rows "
        f"cannot be decoded from the binlog alone", field_offset=offset, table=qualified,
        hint="replay it with mysqlbinlog of that MySQL version into a server of the same "
             "version, or re-log the data with MySQL 5.1.18 or later")


def _read_optional_metadata(cur: Cursor, event: TableMapEvent, mariadb: bool) -> None:
    while not cur.at_end():
        kind = cur.u8("optional metadata type")
        value = cur.sub(cur.count("optional metadata length"), f"optional metadata {kind}")
        event.optional[kind] = bytes(value.data[value.pos:value.end])
        handler = _OPTIONAL_HANDLERS.get(kind)
        if handler is not None:
            handler(value, event, mariadb)
            value.expect_end(f"optional metadata field {kind}")
    _decode_labels(event)


def _decode_labels(event: TableMapEvent) -> None:
    """ENUM/SET labels are in the column's charset, which a later TLV may give."""
    for col in event.columns:
        for attr in ("enum_values", "set_values"):
            raw = col.extra.pop(attr, None)
            if raw is not None:
                setattr(col, attr, tuple(_label_text(label, col.encoding) for label in raw))


def _label_text(raw: bytes, encoding: str | None) -> str:
    if encoding:
        try:
            return raw.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            pass
    return raw.decode("utf-8", "replace")


def _signedness(cur, event, mariadb):
    types = MARIADB_NUMERIC_TYPES if mariadb else NUMERIC_TYPES
    numeric = [c for c in event.columns if c.type in types]
    bits = cur.bytes((len(numeric) + 7) // 8, "signedness bits")
    for i, col in enumerate(numeric):   # MSB first, unlike every other bitmap
        col.unsigned = bool(bits[i >> 3] & (0x80 >> (i & 7)))


def _apply_collations(columns, collations):
    from ..charsets import codec_for_collation

    # hostile input may give more or fewer collations than columns: those given are used
    for col, cid in zip(columns, collations, strict=False):
        col.collation = cid
        col.encoding = codec_for_collation(cid)


def _default_charset(cur, columns):
    default = cur.count("default collation")
    collations = [default] * len(columns)
    while not cur.at_end():
        index, cid = cur.count("column index"), cur.count("collation")
        if index >= len(columns):
            raise MalformedEventError(f"charset entry for column index {index} of {len(columns)}",
                                      field_offset=cur.offset)
        collations[index] = cid
    _apply_collations(columns, collations)


def _column_charset(cur, columns):
    collations = [cur.count("collation") for _ in columns]
    _apply_collations(columns, collations)


def _char_columns(event, mariadb):
    return [c for c in event.columns if is_character_column(c, mariadb)]


def _enum_set_columns(event):
    return [c for c in event.columns if c.type in (T.ENUM, T.SET)]


def _column_names(cur, event, mariadb):
    for col in event.columns:
        col.name = _name(cur.lenenc_bytes("column name"))


def _labels(cur):
    return tuple(cur.lenenc_bytes("label") for _ in range(cur.count("label count")))


def _set_values(cur, event, mariadb):
    for col in [c for c in event.columns if c.type == T.SET]:
        col.extra["set_values"] = _labels(cur)


def _enum_values(cur, event, mariadb):
    for col in [c for c in event.columns if c.type == T.ENUM]:
        col.extra["enum_values"] = _labels(cur)


def _geometry_type(cur, event, mariadb):
    for col in [c for c in event.columns if c.type == T.GEOMETRY]:
        col.geometry_type = cur.count("geometry type")


def _simple_pk(cur, event, mariadb):
    event.primary_key = []
    while not cur.at_end():
        event.primary_key.append(cur.count("primary key column"))


def _pk_with_prefix(cur, event, mariadb):
    event.primary_key = []
    while not cur.at_end():
        index, prefix = cur.count("primary key column"), cur.count("prefix length")
        event.primary_key.append(index)
        if prefix:
            event.pk_prefixes[index] = prefix


def _visibility(cur, event, mariadb):
    bits = cur.bytes((len(event.columns) + 7) // 8, "visibility bits")
    for i, col in enumerate(event.columns):
        col.extra["visible"] = bool(bits[i >> 3] & (0x80 >> (i & 7)))


def _vector_dims(cur, event, mariadb):
    for col in [c for c in event.columns if c.type == T.VECTOR]:
        col.vector_dim = cur.count("vector dimensionality")


_OPTIONAL_HANDLERS = {
    SIGNEDNESS: _signedness,
    DEFAULT_CHARSET: lambda cur, ev, m: _default_charset(cur, _char_columns(ev, m)),
    COLUMN_CHARSET: lambda cur, ev, m: _column_charset(cur, _char_columns(ev, m)),
    COLUMN_NAME: _column_names,
    SET_STR_VALUE: _set_values,
    ENUM_STR_VALUE: _enum_values,
    GEOMETRY_TYPE: _geometry_type,
    SIMPLE_PRIMARY_KEY: _simple_pk,
    PRIMARY_KEY_WITH_PREFIX: _pk_with_prefix,
    ENUM_AND_SET_DEFAULT_CHARSET: lambda cur, ev, m: _default_charset(cur, _enum_set_columns(ev)),
    ENUM_AND_SET_COLUMN_CHARSET: lambda cur, ev, m: _column_charset(cur, _enum_set_columns(ev)),
    COLUMN_VISIBILITY: _visibility,
    VECTOR_DIMENSIONALITY: _vector_dims,
}


# --- the encoder: binlog_row_metadata=FULL (binlog rewrite --full-metadata) -----------

def full_metadata_tlvs(columns: list[Column], meta: dict, present: set[int]) -> bytes:
    """The optional metadata TLVs binlog_row_metadata=FULL writes, in the server's order
    (sql/log_event_server.cc Table_map_log_event::init_metadata_fields: SIGNEDNESS,
    charsets, [GEOMETRY_TYPE], COLUMN_NAME, ENUM/SET charsets, SET_STR_VALUE,
    ENUM_STR_VALUE, primary key), from ``meta`` (the schema resolver's
    ``full_metadata``); a field the TABLE_MAP has already (``present``) or the schema
    cannot give (a charset it does not name, a geometry's real type) is left out."""
    specs = meta["columns"]
    out = bytearray()

    def tlv(kind: int, value: bytes) -> None:
        if kind not in present:        # write_tlv_field: type, packed length, value
            out.extend(bytes((kind,)) + pack_lenenc(len(value)) + value)

    numeric = [specs[c.index]["unsigned"] for c in columns if c.type in MARIADB_NUMERIC_TYPES]
    if numeric:                         # init_signedness_field: MSB first
        bits = bytearray((len(numeric) + 7) // 8)
        for i, unsigned in enumerate(numeric):
            if unsigned:
                bits[i >> 3] |= 0x80 >> (i & 7)
        tlv(SIGNEDNESS, bytes(bits))
    chars = [c.index for c in columns if is_character_column(c, True)]
    enums = [c.index for c in columns if c.type in (T.ENUM, T.SET)]
    if not present & {DEFAULT_CHARSET, COLUMN_CHARSET}:
        out += _charset_tlv(chars, specs, DEFAULT_CHARSET, COLUMN_CHARSET)
    tlv(COLUMN_NAME, b"".join(pack_lenenc(len(n)) + n
                              for n in (s["name"].encode("utf-8") for s in specs)))
    if not present & {ENUM_AND_SET_DEFAULT_CHARSET, ENUM_AND_SET_COLUMN_CHARSET}:
        out += _charset_tlv(enums, specs, ENUM_AND_SET_DEFAULT_CHARSET, ENUM_AND_SET_COLUMN_CHARSET)
    for kind, code in ((SET_STR_VALUE, T.SET), (ENUM_STR_VALUE, T.ENUM)):
        labelled = [specs[c.index]["labels"] for c in columns if c.type == code]
        if labelled:
            tlv(kind, b"".join(pack_lenenc(len(labels)) + b"".join(
                pack_lenenc(len(x)) + x for x in labels) for labels in labelled))
    if meta["primary_key"]:
        tlv(SIMPLE_PRIMARY_KEY, b"".join(pack_lenenc(i) for i in meta["primary_key"]))
    return bytes(out)


def _charset_tlv(indexes: list[int], specs: list[dict], default_kind: int, column_kind: int) -> bytes:
    """init_charset_field: the most used collation as the default and the others by
    index, or every column's collation when that is shorter; nothing when a collation
    is unknown (a wrong charset would decode text wrongly)."""
    ids = [specs[i]["collation"] for i in indexes]
    if not ids or any(cid is None for cid in ids):
        return b""
    counts: dict[int, int] = {}
    for cid in ids:
        counts[cid] = counts.get(cid, 0) + 1
    most = max(sorted(counts), key=lambda cid: counts[cid])    # std::map order, first max
    if len(ids) < 1 + (len(ids) - counts[most]) * 2:
        kind, value = column_kind, b"".join(pack_lenenc(cid) for cid in ids)
    else:
        kind = default_kind
        value = pack_lenenc(most) + b"".join(pack_lenenc(k) + pack_lenenc(cid)
                                            for k, cid in enumerate(ids) if cid != most)
    return bytes((kind,)) + pack_lenenc(len(value)) + value
