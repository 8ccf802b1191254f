"""MySQL binary JSON and JSON diffs.

Documents come from mysql-server sources: the ["abc", "def"] serialisation and its two
in-place updates are spelled out byte by byte in sql-common/json_binary.cc
(Value::update_in_shadow comment); the others are built field by field from the format
described there (json_binary.h / parse_value) with expected values fixed by hand, and the
temporal/decimal opaque payloads reuse the server-verified bytes of docs/binlog-formats.md."""
from __future__ import annotations

import struct
from decimal import Decimal

import pytest
from types_helpers import assert_truncation, col_for, decode_hex

from binlog.constants import ColumnType as T
from binlog.errors import BinlogError, MalformedEventError
from binlog.types import apply_json_diffs, decode_json_diffs, parse_json_binary, parse_json_diffs, parse_json_path

# json_binary.cc: [ "abc", "def" ], then $[0]='XY' in place, then $[1]=456 inlined.
ABC_DEF = "02 02 00 12 00 0C 0A 00 0C 0E 00 03 61 62 63 03 64 65 66"
XY_DEF = "02 02 00 12 00 0C 0A 00 0C 0E 00 02 58 59 63 03 64 65 66"
XY_XYZW = "02 02 00 12 00 0C 0A 00 0C 0D 00 02 58 59 04 58 59 5A 57"
XY_456 = "02 02 00 12 00 0C 0A 00 05 C8 01 02 58 59 04 58 59 5A 57"

# {"a": 1, "bc": [true, null]} small object: count 2, size, key entries (offset, len),
# value entries (type, inline/offset), keys, then the array.
OBJ = ("00 02 00 1F 00"           # small object, 2 members, 31 bytes
       " 12 00 01 00  13 00 02 00"   # keys at 18 (len 1), 19 (len 2)
       " 05 01 00  02 15 00"         # a: int16 1 inlined; bc: small array at 21
       " 61 62 63"                   # 'a' 'bc'
       " 02 00 0A 00 04 01 00 04 00 00")  # [true, null]: 2 elems, 10 bytes

DATETIME_PACKED = (0x19AE555321 - 0) << 24 | 990000   # 2022-11-10 21:12:33.990000 (section 8)


def opaque(field_type: int, data: bytes) -> bytes:
    return bytes([0x0F, field_type, len(data)]) + data


SCALARS = [
    ("04 00", None), ("04 01", True), ("04 02", False),
    ("05 FF FF", -1), ("06 FF FF", 65535),
    ("07 00 00 00 80", -2147483648), ("08 FF FF FF FF", 4294967295),
    ("09 FF FF FF FF FF FF FF FF", -1), ("0A FF FF FF FF FF FF FF FF", 18446744073709551615),
    ("0B" + struct.pack("<d", 2.5).hex(), 2.5),
    ("0C 03 E2 82 AC", "€"),
    ("0C 80 01" + "61" * 128, "a" * 128),      # 2-byte variable length
    ("", None),                                 # empty document = JSON null
    (ABC_DEF, ["abc", "def"]),
    (XY_DEF, ["XY", "def"]),
    (XY_XYZW, ["XY", "XYZW"]),
    (XY_456, ["XY", 456]),
    (OBJ, {"a": 1, "bc": [True, None]}),
    ("03 01 00 00 00 13 00 00 00 07 FF FF FF FF 00 00 00 00 00 00 00", [-1]),  # large array,
    # int32 inlined in a large entry (4 bytes) followed by padding
    (opaque(T.DATETIME, struct.pack("<q", DATETIME_PACKED)).hex(), "2022-11-10 21:12:33.990000"),
    (opaque(T.TIMESTAMP, struct.pack("<q", DATETIME_PACKED)).hex(), "2022-11-10 21:12:33.990000"),
    (opaque(T.DATE, struct.pack("<q", (0x19AE555321 >> 17 << 17) << 24)).hex(), "2022-11-10"),
    # TIME -838:59:59.99: packed = -((hms << 24) + 990000), hms = (838<<12)|(59<<6)|59
    (opaque(T.TIME, struct.pack("<q", -(((838 << 12 | 59 << 6 | 59) << 24) + 990000))).hex(),
     "-838:59:59.990000"),
    (opaque(T.NEWDECIMAL, bytes([10, 2]) + bytes.fromhex("7FED2978A6")).hex(),
     Decimal("-1234567.89")),
    (opaque(T.BLOB, b"\x01\x02\x03").hex(), "base64:type252:AQID"),
]


@pytest.mark.parametrize("hexstr,expected", SCALARS, ids=[str(i) for i in range(len(SCALARS))])
def test_parse_json_binary(hexstr, expected):
    value = parse_json_binary(bytes.fromhex(hexstr.replace(" ", "")))
    assert value == expected and type(value) is type(expected)


def test_json_column():
    raw = bytes.fromhex(ABC_DEF.replace(" ", ""))
    hexstr = (len(raw).to_bytes(4, "little") + raw).hex()
    col = col_for(T.JSON, 4)
    assert decode_hex(hexstr, col) == ["abc", "def"]
    assert_truncation(hexstr, col)
    assert decode_hex("00 00 00 00", col) is None


@pytest.mark.parametrize("hexstr", [
    ABC_DEF[:-6],                     # document cut inside the second string
    "02 02 00 40 00 0C 0A 00",        # size larger than the data
    "0C 05 61",                       # string longer than the data
    "04 07",                          # unknown literal
    "0D 00",                          # unknown type
    "0C FF FF FF FF FF",              # ill-formed variable length
    "02 01 00 06 00 0C 01 00",        # value offset inside the header
])
def test_malformed_json(hexstr):
    with pytest.raises(MalformedEventError):
        parse_json_binary(bytes.fromhex(hexstr.replace(" ", "")))


def test_json_depth_cap():
    doc = b""
    inner = bytes.fromhex("020000" "0400")   # [] : small array, 0 elements, 4 bytes
    # nest: [[[...]]] each level a 1-element small array pointing at offset 7
    value = inner[1:]
    for _ in range(150):
        size = 7 + len(value)
        value = struct.pack("<HH", 1, size) + bytes([0x02]) + struct.pack("<H", 7) + value
    doc = b"\x02" + value
    with pytest.raises(MalformedEventError, match="deeper"):
        parse_json_binary(doc)


def test_json_fuzzish_prefixes_only_raise_binlog_errors():
    for doc in (ABC_DEF, OBJ, XY_456):
        raw = bytes.fromhex(doc.replace(" ", ""))
        for cut in range(1, len(raw)):
            try:
                parse_json_binary(raw[:cut])
            except BinlogError:
                pass


# --- JSON diffs (sql/json_diff.cc write_binary) -------------------------------------------

def diff_bytes(*diffs) -> bytes:
    body = b""
    for op, path, value in diffs:
        body += bytes([op]) + bytes([len(path)]) + path.encode()
        if op != 2:
            body += bytes([len(value)]) + value
    return len(body).to_bytes(4, "little") + body


def test_parse_and_apply_diffs():
    xy = bytes.fromhex("0C 02 58 59".replace(" ", ""))
    n456 = bytes.fromhex("05 C8 01".replace(" ", ""))
    raw = diff_bytes((0, "$[0]", xy), (1, '$[2]', n456), (2, "$[1]", None))
    diffs, pos = decode_json_diffs(raw + b"\xEE", 0, len(raw) + 1)
    assert pos == len(raw)
    assert [(d.operation_name, d.path, d.value) for d in diffs] == [
        ("REPLACE", "$[0]", "XY"), ("INSERT", "$[2]", 456), ("REMOVE", "$[1]", None)]
    assert parse_json_diffs(raw, 0, len(raw)) == diffs
    doc = ["abc", "def"]
    assert apply_json_diffs(doc, diffs) == ["XY", 456]
    assert doc == ["abc", "def"]               # the input is not modified
    for cut in range(len(raw)):
        with pytest.raises(BinlogError):
            decode_json_diffs(raw, 0, cut)


def test_apply_member_paths():
    doc = {"a": [1, {"x y": 2}], "b": 3}
    diffs = parse_json_diffs(diff_bytes(
        (0, '$.a[1]."x y"', bytes.fromhex("0C0161")),     # "a"
        (1, "$.c", bytes.fromhex("0401")),               # true
        (2, "$.b", None),
        (0, "$.a[last]", bytes.fromhex("0400")),         # null (REPLACE via last)
    ), 0, 10 ** 6)
    assert apply_json_diffs(doc, diffs) == {"a": [1, None], "c": True}


def test_rejected_diffs():
    with pytest.raises(MalformedEventError):
        apply_json_diffs({"a": 1}, parse_json_diffs(diff_bytes((2, "$.zz", None)), 0, 100))
    with pytest.raises(MalformedEventError):
        apply_json_diffs({"a": 1}, parse_json_diffs(diff_bytes((1, "$.a", b"\x04\x00")), 0, 100))
    with pytest.raises(MalformedEventError):
        parse_json_diffs(diff_bytes((7, "$.a", b"\x04\x00")), 0, 100)


def test_parse_json_path():
    assert parse_json_path('$.a[1]."x y"[last-2].b_c') == ["a", 1, "x y", ("last", 2), "b_c"]
    assert parse_json_path('$."a\\"b"') == ['a"b']
    for bad in ("a.b", "$.*", "$[*]", "$[1 to 2]", "$.a[", '$."x'):
        with pytest.raises(MalformedEventError):
            parse_json_path(bad)
