"""TABLE_MAP optional metadata over mixed late column types, from hand-made event bodies.

Which columns each TLV lists (MySQL 9 sql/log_event.cc Table_map_log_event::init_*_field
and its ``is_character_type``: STRING, VAR_STRING, VARCHAR, VECTOR and BLOB - JSON and
GEOMETRY are not character columns; MariaDB sql/log_event_server.cc: STRING, VAR_STRING,
VARCHAR, BLOB and GEOMETRY, MariaDB having no VECTOR type code):

- SIGNEDNESS (1): numeric columns, one bit each, MSB first;
- DEFAULT_CHARSET (2) / COLUMN_CHARSET (3): character columns;
- ENUM_AND_SET_DEFAULT_CHARSET (10): ENUM and SET columns;
- SET_STR_VALUE (5) / ENUM_STR_VALUE (6), GEOMETRY_TYPE (7), VECTOR_DIMENSIONALITY (13):
  the columns of that type, in table order.
"""
from __future__ import annotations

import pytest
from hostile.build import lenenc, table_map

from binlog.constants import ColumnType as T, EventType
from binlog.cursor import Cursor
from binlog.errors import BinlogError, MalformedEventError, UnsupportedTypeError
from binlog.events.table_map import decode_table_map
from binlog.header import EventHeader, FormatDescription

BINARY, UTF8MB4_0900, UTF8MB4_GENERAL, LATIN1 = 63, 255, 45, 8


class MySQL9:
    fde = FormatDescription(server_version="9.1.0")


class MariaDB:
    fde = FormatDescription(server_version="10.11.6-MariaDB-log")


def tlv(kind: int, value: bytes) -> bytes:
    return bytes([kind]) + lenenc(len(value)) + value


def packed(*numbers: int) -> bytes:
    return b"".join(lenenc(n) for n in numbers)


def labels(*names: str) -> bytes:
    return lenenc(len(names)) + b"".join(lenenc(len(n)) + n.encode() for n in names)


# The table plus the other late types: v2 VECTOR(2), t TEXT, v4 VECTOR(4), j JSON,
# g POINT, e ENUM('a','b'), s SET('x','y'), n TINYINT UNSIGNED, c VARCHAR(10).
TYPES = bytes([T.VECTOR, T.BLOB, T.VECTOR, T.JSON, T.GEOMETRY, T.STRING, T.STRING, T.TINY,
               T.VARCHAR])
META = (b"\x04" + b"\x02" + b"\x04" + b"\x04" + b"\x04" + bytes([T.ENUM, 1])
        + bytes([T.SET, 1]) + b"" + (40).to_bytes(2, "little"))
NAMES = ["v2", "t", "v4", "j", "g", "e", "s", "n", "c"]


def body(optional: bytes) -> bytes:
    return table_map(77, "d", "late", TYPES, META) + optional


def decode(ctx, optional: bytes):
    data = body(optional)
    header = EventHeader(0, EventType.TABLE_MAP_EVENT, 1, 19 + len(data), 0, 0)
    return decode_table_map(Cursor(data), ctx, header)


def common_tlvs() -> bytes:
    return (tlv(1, b"\x80")                                      # n unsigned
            + tlv(4, b"".join(lenenc(len(n)) + n.encode() for n in NAMES))
            + tlv(5, labels("x", "y")) + tlv(6, labels("a", "b"))
            + tlv(7, packed(1))                                  # g: POINT
            + tlv(10, packed(UTF8MB4_0900)))


def test_mysql9_vector_columns_are_character_columns_in_the_charset_list():
    # Character columns t(1) v2(0) v4(2) c(8), in table order: v2 v4 are binary (the
    # default, the most common), t is utf8mb4, c latin1 - entries by character-column index.
    optional = (common_tlvs() + tlv(2, packed(BINARY) + packed(1, UTF8MB4_0900, 3, LATIN1))
                + tlv(13, packed(2, 4)))
    event = decode(MySQL9, optional)
    cols = {c.name: c for c in event.columns}
    assert [cols[n].collation for n in ("v2", "t", "v4", "c")] == [BINARY, UTF8MB4_0900, BINARY, LATIN1]
    assert cols["t"].encoding == "utf-8" and cols["c"].encoding == "mysql_latin1"
    assert cols["j"].collation is None and cols["g"].collation is None
    assert (cols["v2"].vector_dim, cols["v4"].vector_dim) == (2, 4)
    assert cols["g"].geometry_type == 1
    assert cols["e"].enum_values == ("a", "b") and cols["s"].set_values == ("x", "y")
    assert cols["n"].unsigned


def test_mysql9_column_charset_counts_vectors_too():
    optional = common_tlvs() + tlv(3, packed(BINARY, UTF8MB4_0900, BINARY, LATIN1))
    cols = {c.name: c for c in decode(MySQL9, optional).columns}
    assert [cols[n].collation for n in ("v2", "t", "v4", "c")] == [BINARY, UTF8MB4_0900, BINARY, LATIN1]


def test_mariadb_counts_geometry_not_vector_type_codes():
    # MariaDB: t, g, c (and the VECTOR type codes are not MariaDB's: not counted).
    optional = common_tlvs() + tlv(3, packed(UTF8MB4_GENERAL, BINARY, LATIN1))
    cols = {c.name: c for c in decode(MariaDB, optional).columns}
    assert (cols["t"].collation, cols["g"].collation, cols["c"].collation) == (UTF8MB4_GENERAL, BINARY, LATIN1)
    assert cols["v2"].collation is None


def test_a_charset_entry_beyond_the_character_columns_is_an_error():
    optional = common_tlvs() + tlv(2, packed(BINARY) + packed(4, LATIN1))
    with pytest.raises(MalformedEventError, match="column index 4 of 4"):
        decode(MySQL9, optional)


def test_column_charset_with_too_few_entries_is_an_error():
    with pytest.raises(BinlogError, match="collation"):
        decode(MySQL9, common_tlvs() + tlv(3, packed(BINARY, UTF8MB4_0900)))


class MySQL5116:
    fde = FormatDescription(server_version="5.1.16-beta-log")


def test_a_pre_ga_mysql_51_table_map_is_refused_naming_the_server_version():
    # MySQL 5.1.15-5.1.17: table id, flags, names, column count and types, then nothing.
    full = table_map(77, "d", "old", bytes([T.LONG, T.VARCHAR]), (20).to_bytes(2, "little"))
    data = full[:full.index(b"old\x00") + 4 + 1 + 2]
    assert data.endswith(bytes([2, T.LONG, T.VARCHAR]))
    header = EventHeader(0, EventType.TABLE_MAP_EVENT, 1, 19 + len(data), 0, 0)
    with pytest.raises(UnsupportedTypeError, match=r"pre-GA MySQL 5\.1 .*5\.1\.16-beta-log") as info:
        decode_table_map(Cursor(data), MySQL5116, header)
    assert info.value.table == "d.old" and info.value.hint
