"""Text/binary, ENUM/SET, GEOMETRY, VECTOR and MariaDB compressed columns.

Row-image bytes and TABLE_MAP metadata were captured from a MariaDB 10.11.19 binlog
(binlog_row_metadata=FULL); the SQL is given next to each case."""
from __future__ import annotations

import struct

import pytest
from types_helpers import assert_truncation, col_for, decode_hex

from binlog.charsets import codec_for_collation
from binlog.constants import ColumnType as T
from binlog.cursor import Cursor
from binlog.errors import MalformedEventError
from binlog.types import METADATA_READERS, make_column


def table_map_col(type_byte: int, metabytes: str, collation=None, **fields):
    meta = METADATA_READERS[type_byte](Cursor(bytes.fromhex(metabytes)))
    col = make_column(0, type_byte, meta)
    col.collation = collation
    col.encoding = codec_for_collation(collation)
    for k, v in fields.items():
        setattr(col, k, v)
    return col


HELLO = "hello world " * 20
CASES = [  # (id, type byte, metadata bytes, collation, row hex, expected)
    # CHAR(255) utf8mb4 'abc  ' (trailing spaces stripped by the server); 1020 bytes max
    ("char255", 0xFE, "CE FC", 45, "03 00 61 62 63", "abc"),
    # BINARY(4) x'610000': the binlog strips trailing 00s, the server holds 61000000
    ("binary4", 0xFE, "FE 04", 63, "01 61", b"a\x00\x00\x00"),
    # CHAR(10) latin1 'ab€' (cp1252 0x80)
    ("char_latin1", 0xFE, "FE 0A", 8, "03 61 62 80", "ab€"),
    # TEXT COMPRESSED utf8mb4: repeat('hello world ', 20), raw deflate, 1-byte length
    ("text_zlib", 0x8C, "02", 45, "13 00 89 F0 CB 48 CD C9 C9 57 28 CF 2F CA 49 51 C8 18 01 6C 00",
     HELLO),
    # TEXT COMPRESSED with column_compression_zlib_wrap=ON (zlib header, header byte 0x81)
    ("text_zlib_wrapped", 0x8C, "02", 45,
     "12 00 81 96 78 9C 2B 2F 4A 2C 50 28 1F 6C 04 00 77 F0 37 8D", "wrap " * 30),
    # TEXT COMPRESSED 'x': too short to compress, header 00 = stored
    ("text_stored", 0x8C, "02", 45, "02 00 00 78", "x"),
    # TEXT COMPRESSED '': no header byte at all
    ("text_empty", 0x8C, "02", 45, "00 00", ""),
    # TEXT COMPRESSED 'héllo wörld €' stored uncompressed
    ("text_utf8", 0x8C, "02", 45,
     "12 00 00 68 C3 A9 6C 6C 6F 20 77 C3 B6 72 6C 64 20 E2 82 AC", "héllo wörld €"),
    # VARCHAR(1000) COMPRESSED utf8mb4: meta 4001, 2-byte length; repeat('abcdefgh', 50)
    ("varchar_zlib", 0x8D, "A1 0F", 45,
     "12 00 8A 01 90 4B 4C 4A 4E 49 4D 4B CF 48 1C A5 07 05 0D 00", "abcdefgh" * 50),
    ("varchar_stored", 0x8D, "A1 0F", 45, "06 00 00 73 68 6F 72 74", "short"),
    # VARCHAR(100) COMPRESSED latin1: meta 101, 1-byte length
    ("varchar_latin1_zlib", 0x8D, "65 00", 8, "08 89 5A AB AA A2 15 00 00", "z" * 90),
    ("varchar_latin1_stored", 0x8D, "65 00", 8, "03 00 61 62", "ab"),
    # BLOB COMPRESSED repeat(x'00ff', 100)
    ("blob_zlib", 0x8C, "02", 63, "09 00 89 C8 63 F8 CF 30 2C 20 00", b"\x00\xff" * 100),
    # Plain framing (no server capture needed: the length prefix is the whole format)
    ("varchar_short", 0x0F, "0A 00", 45, "03 61 62 63", "abc"),
    ("varchar_long", 0x0F, "2C 01", 63, "02 00 00 FF", b"\x00\xff"),
    ("var_string", 0xFD, "0A 00", 33, "02 68 69", "hi"),
    ("tinyblob", 0xFC, "01", 63, "02 01 02", b"\x01\x02"),
    ("mediumtext", 0xFC, "03", 33, "02 00 00 68 69", "hi"),
    ("longblob", 0xFC, "04", 63, "01 00 00 00 7F", b"\x7f"),
    ("unknown_charset", 0xFC, "02", None, "02 00 68 69", b"hi"),
    # GEOMETRY POINT(1 2): HEX(c) = 000000000101000000000000000000F03F0000000000000040
    ("geometry", 0xFF, "04", 63,
     "19 00 00 00 00 00 00 00 01 01 00 00 00 00 00 00 00 00 00 F0 3F 00 00 00 00 00 00 00 40",
     bytes.fromhex("000000000101000000000000000000F03F0000000000000040")),
]


@pytest.mark.parametrize("name,t,metabytes,collation,hexstr,expected", CASES,
                         ids=[c[0] for c in CASES])
def test_strings(name, t, metabytes, collation, hexstr, expected):
    col = table_map_col(t, metabytes, collation)
    value = decode_hex(hexstr, col)
    assert type(value) is type(expected)
    assert value == expected
    assert_truncation(hexstr, col)


def test_string_metadata_lengths():
    assert table_map_col(0xFE, "CE FC").length == 1020
    assert table_map_col(0xFE, "FE 04").length == 4
    assert table_map_col(0x8D, "A1 0F").length == 4001


def test_bad_utf8_names_charset():
    col = table_map_col(0x0F, "0A 00", 45)
    with pytest.raises(MalformedEventError, match="utf8mb4"):
        decode_hex("02 C3 28", col)


def test_corrupt_compressed():
    col = table_map_col(0x8C, "02", 45)
    with pytest.raises(MalformedEventError):
        decode_hex("05 00 89 10 FF FF FF", col)
    with pytest.raises(MalformedEventError):   # unknown method 3
        decode_hex("03 00 39 01 00", col)
    with pytest.raises(MalformedEventError):   # claims 2 GiB
        decode_hex("06 00 8C 80 00 00 00 00", col)


ENUM_SET = [  # (id, metadata bytes, labels, row hex, expected labelled, expected raw)
    # SET('a','b','c','d'): 'a,c', '', 'a,b,c,d'
    ("set_ac", "F8 01", ("a", "b", "c", "d"), "05", "a,c", 5),
    ("set_empty", "F8 01", ("a", "b", "c", "d"), "00", "", 0),
    ("set_all", "F8 01", ("a", "b", "c", "d"), "0F", "a,b,c,d", 15),
    # SET('a1',...,'a10') 'a1,a9,a10': 2-byte mask
    ("set_2bytes", "F8 02", tuple(f"a{i}" for i in range(1, 11)), "01 03", "a1,a9,a10", 0x301),
    # ENUM('x','y','z') 'y'
    ("enum_y", "F7 01", ("x", "y", "z"), "02", "y", 2),
    ("enum_empty", "F7 01", ("x", "y", "z"), "00", "", 0),
]


@pytest.mark.parametrize("name,metabytes,labels,hexstr,labelled,raw", ENUM_SET,
                         ids=[c[0] for c in ENUM_SET])
def test_enum_set(name, metabytes, labels, hexstr, labelled, raw):
    col = table_map_col(0xFE, metabytes)
    assert col.type in (T.ENUM, T.SET)
    assert decode_hex(hexstr, col) == raw
    if col.type == T.ENUM:
        col.enum_values = labels
    else:
        col.set_values = labels
    assert decode_hex(hexstr, col) == labelled
    assert_truncation(hexstr, col)


def test_set_8_bytes_and_enum_2_bytes():
    col = col_for(T.SET, 0xF808, set_values=tuple(f"v{i}" for i in range(64)))
    assert decode_hex("01 00 00 00 00 00 00 80", col) == "v0,v63"
    col = col_for(T.ENUM, 0xF702, enum_values=tuple(f"e{i}" for i in range(300)))
    assert decode_hex("2C 01", col) == "e299"


def test_enum_index_out_of_range():
    col = col_for(T.ENUM, 0xF701, enum_values=("x",))
    with pytest.raises(MalformedEventError):
        decode_hex("02", col)


def test_vector():
    # MySQL 9 VECTOR: BLOB framing with a 4-byte length, float32 LE values
    # (string_to_vector('[1.1,2.2]'), debezium vector_test.sql).
    col = col_for(T.VECTOR, 4)
    data = struct.pack("<2f", 1.1, 2.2)
    hexstr = (len(data).to_bytes(4, "little") + data).hex()
    assert decode_hex(hexstr, col) == list(struct.unpack("<2f", data))
    assert_truncation(hexstr, col)
    with pytest.raises(MalformedEventError):
        decode_hex("03 00 00 00 00 00 00", col)
