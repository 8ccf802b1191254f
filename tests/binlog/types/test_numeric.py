"""Integers, FLOAT/DOUBLE, NEWDECIMAL and BIT: doc examples (docs/binlog-formats.md section 6)
and row-image bytes captured from a MariaDB 10.11.19 binlog (the SQL is in the ids)."""
from __future__ import annotations

import struct
from decimal import Decimal

import pytest
from types_helpers import assert_truncation, col_for, decode_hex

from binlog.constants import ColumnType as T
from binlog.errors import MalformedEventError

INTS = [  # (type, unsigned, hex, expected)
    (T.TINY, True, "FF", 255),                     # TINYINT UNSIGNED 255
    (T.TINY, False, "80", -128),                   # TINYINT -128
    (T.TINY, False, "7F", 127),
    (T.SHORT, False, "00 80", -32768),
    (T.SHORT, True, "FF FF", 65535),
    (T.INT24, False, "00 00 80", -8388608),        # MEDIUMINT -8388608
    (T.INT24, True, "FF FF FF", 16777215),
    (T.LONG, False, "FE FF FF FF", -2),
    (T.LONG, True, "FE FF FF FF", 4294967294),
    (T.LONGLONG, True, "FF FF FF FF FF FF FF FF", 18446744073709551615),  # BIGINT UNSIGNED max
    (T.LONGLONG, False, "FF FF FF FF FF FF FF FF", -1),
    (T.LONGLONG, False, "00 00 00 00 00 00 00 80", -9223372036854775808),
]


@pytest.mark.parametrize("t,unsigned,hexstr,expected", INTS, ids=str)
def test_ints(t, unsigned, hexstr, expected):
    col = col_for(t, unsigned=unsigned)
    assert decode_hex(hexstr, col) == expected
    assert_truncation(hexstr, col)


@pytest.mark.parametrize("t,meta,hexstr,expected", [
    (T.FLOAT, 4, "00 00 C0 3F", 1.5),                                   # FLOAT 1.5
    (T.FLOAT, 4, "CD CC CC BD", struct.unpack("<f", struct.pack("<f", -0.1))[0]),  # FLOAT -0.1
    (T.DOUBLE, 8, "9A 99 99 99 99 99 B9 BF", -0.1),                      # DOUBLE -0.1
], ids=str)
def test_floats(t, meta, hexstr, expected):
    col = col_for(t, meta)
    assert decode_hex(hexstr, col) == expected
    assert_truncation(hexstr, col)


DECIMALS = [  # (precision, scale, hex, expected)
    (10, 2, "80 12 D6 87 59", "1234567.89"),       # doc section 6 + MariaDB
    (10, 2, "7F ED 29 78 A6", "-1234567.89"),
    (10, 2, "80 00 00 00 00", "0.00"),
    (65, 30, "7F439EB1CA484078CAF1CB3FD0F8A086F8A432EAFF439EB1CA484078FC84",
     "-12345678901234567890123456789012345.123456789012345678901234567891"),
    (65, 30, "85F5E0FF3B9AC9FF3B9AC9FF3B9AC9FF3B9AC9FF3B9AC9FF3B9AC9FF03E7",
     "99999999999999999999999999999999999.999999999999999999999999999999"),
    (5, 5, "7F FF FE", "-0.00001"),                # fraction-only
    (5, 5, "80 30 39", "0.12345"),
    (18, 0, "78 A4 32 EA FF 43 9E B1", "-123456789012345678"),  # integer-only
    (18, 0, "80 00 00 00 00 00 00 00", "0"),
    (20, 10, "7F FF FF FF FF E2 32 9A FF FF", "-0.5000000000"),
    (20, 10, "80 00 00 00 01 00 00 00 00 01", "1.0000000001"),
]


@pytest.mark.parametrize("precision,scale,hexstr,expected", DECIMALS, ids=str)
def test_newdecimal(precision, scale, hexstr, expected):
    col = col_for(T.NEWDECIMAL, precision << 8 | scale)
    assert (col.precision, col.scale) == (precision, scale)
    value = decode_hex(hexstr, col)
    assert isinstance(value, Decimal)
    assert value == Decimal(expected)
    assert str(value) == expected            # exactly `scale` fraction digits
    assert_truncation(hexstr, col)


def test_newdecimal_bad_digit_group():
    col = col_for(T.NEWDECIMAL, 10 << 8 | 2)
    with pytest.raises(MalformedEventError):
        decode_hex("80 12 D6 87 FF", col)    # fraction group 0xFF > 99


BITS = [  # (TABLE_MAP metadata bytes, hex, expected) from MariaDB 10.11
    ("01 00", "01", 1),                      # BIT(1) b'1'
    ("02 01", "02 01", 513),                 # BIT(10) b'1000000001'
    ("00 02", "AB CD", 0xABCD),              # BIT(16) 0xABCD
    ("00 08", "FF FF FF FF FF FF FF FE", 0xFFFFFFFFFFFFFFFE),   # BIT(64)
]


@pytest.mark.parametrize("metabytes,hexstr,expected", BITS, ids=str)
def test_bit(metabytes, hexstr, expected):
    from binlog.cursor import Cursor
    from binlog.types import METADATA_READERS
    meta = METADATA_READERS[T.BIT](Cursor(bytes.fromhex(metabytes)))
    col = col_for(T.BIT, meta)
    assert decode_hex(hexstr, col) == expected
    assert_truncation(hexstr, col)
