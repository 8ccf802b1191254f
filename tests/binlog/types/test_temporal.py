"""Temporal decoders against the worked examples of docs/binlog-formats.md sections 7-8
(confirmed byte for byte against MariaDB 10.11 where marked there) plus real-server bytes."""
from __future__ import annotations

from datetime import timedelta, timezone

import pytest
from types_helpers import assert_truncation, col_for, decode_hex

from binlog.constants import ColumnType as T
from binlog.errors import MalformedEventError, PrecisionUnknownError
from binlog.types import decoder_for

TS = "2022-11-02 11:11:22"
DT = "2022-11-10 21:12:33"

LEGACY_TIMESTAMP = [  # (N, bytes, expected) '2022-11-02 11:11:22.326147' truncated to N
    (0, "5A 50 62 63", TS),
    (1, "63 62 50 5A 03", TS + ".3"),
    (2, "63 62 50 5A 20", TS + ".32"),
    (3, "63 62 50 5A 01 46", TS + ".326"),
    (4, "63 62 50 5A 0C BD", TS + ".3261"),
    (5, "63 62 50 5A 00 7F 66", TS + ".32614"),
    (6, "63 62 50 5A 04 FA 03", TS + ".326147"),
]

LEGACY_DATETIME = [  # '2022-11-10 21:12:33.990'
    (0, "A1 52 17 18 64 12 00 00", DT),
    (1, "00 A9 48 AE 5C 93", DT + ".9"),
    (2, "06 9C D6 CF 9D C7", DT + ".99"),
    (3, "00 42 20 64 1C 29 C6", DT + ".990"),
    (4, "02 95 43 E9 19 A1 BC", DT + ".9900"),
    (5, "19 D4 A7 1B 00 51 58", DT + ".99000"),
    (6, "01 02 4E 87 0E 03 2D 70", DT + ".990000"),
]

LEGACY_TIME = [
    (0, "59 0A 80", "-838:59:59"), (0, "40 E2 01", "12:34:56"),
    (1, "00 00 00 01", "-838:59:59.9"), (1, "01 D3 C9 C7", "12:34:56.7"),
    (2, "00 00 00 01", "-838:59:59.99"), (2, "12 45 E1 CE", "12:34:56.78"),
    (3, "00 00 00 00 0A", "-838:59:59.990"), (3, "00 B6 BA D2 0C", "12:34:56.780"),
    (4, "00 00 00 00 64", "-838:59:59.9900"), (4, "07 23 4C 34 78", "12:34:56.7800"),
    (5, "00 00 00 03 E8", "-838:59:59.99000"), (5, "47 60 FA 0C B0", "12:34:56.78000"),
    (6, "00 00 00 00 27 10", "-838:59:59.990000"), (6, "02 C9 C9 C4 7E E0", "12:34:56.780000"),
    (2, "12 00 C3 C0", "00:00:00.00"),
    (2, "12 00 C3 BF", "-00:00:00.01"),
]

TIMESTAMP2 = [
    (0, "63 62 50 5A", TS),
    (1, "63 62 50 5A 1E", TS + ".3"),
    (2, "63 62 50 5A 20", TS + ".32"),
    (3, "63 62 50 5A 0C BC", TS + ".326"),
    (4, "63 62 50 5A 0C BD", TS + ".3261"),
    (5, "63 62 50 5A 04 F9 FC", TS + ".32614"),
    (6, "63 62 50 5A 04 FA 03", TS + ".326147"),
]

DATETIME2 = [
    (0, "99 AE 55 53 21", DT),
    (1, "99 AE 55 53 21 5A", DT + ".9"),
    (2, "99 AE 55 53 21 63", DT + ".99"),
    (3, "99 AE 55 53 21 26 AC", DT + ".990"),
    (4, "99 AE 55 53 21 26 AC", DT + ".9900"),
    (5, "99 AE 55 53 21 0F 1B 30", DT + ".99000"),
    (6, "99 AE 55 53 21 0F 1B 30", DT + ".990000"),
]

TIME2 = [
    (0, "4B 91 05", "-838:59:59"), (0, "80 C8 B8", "12:34:56"),
    (1, "4B 91 04 A6", "-838:59:59.9"), (1, "80 C8 B8 46", "12:34:56.7"),
    (2, "4B 91 04 9D", "-838:59:59.99"), (2, "80 C8 B8 4E", "12:34:56.78"),
    (3, "4B 91 04 D9 54", "-838:59:59.990"), (3, "80 C8 B8 1E 78", "12:34:56.780"),
    (4, "4B 91 04 D9 54", "-838:59:59.9900"), (4, "80 C8 B8 1E 78", "12:34:56.7800"),
    (5, "4B 91 04 F0 E4 D0", "-838:59:59.99000"), (5, "80 C8 B8 0B E6 E0", "12:34:56.78000"),
    (6, "4B 91 04 F0 E4 D0", "-838:59:59.990000"), (6, "80 C8 B8 0B E6 E0", "12:34:56.780000"),
    (2, "7F FF FF FF", "-00:00:00.01"),            # doc + MariaDB 10.11 TIME(2) row
    (6, "7F EF 7C F9 07 AB", "-01:02:03.456789"),  # MariaDB 10.11 TIME(6) row
]

CASES = (
    [(T.TIMESTAMP, n, h, e) for n, h, e in LEGACY_TIMESTAMP]
    + [(T.DATETIME, n, h, e) for n, h, e in LEGACY_DATETIME]
    + [(T.TIME, n, h, e) for n, h, e in LEGACY_TIME]
    + [(T.TIMESTAMP2, n, h, e) for n, h, e in TIMESTAMP2]
    + [(T.DATETIME2, n, h, e) for n, h, e in DATETIME2]
    + [(T.TIME2, n, h, e) for n, h, e in TIME2]
)


def _col(t, n):
    if t in (T.TIMESTAMP2, T.DATETIME2, T.TIME2):
        return col_for(t, n)
    return col_for(t, 0, precision=n)


@pytest.mark.parametrize("t,n,hexstr,expected", CASES, ids=lambda v: str(v))
def test_worked_examples(t, n, hexstr, expected):
    assert decode_hex(hexstr, _col(t, n)) == expected


@pytest.mark.parametrize("t,n,hexstr,expected", CASES, ids=lambda v: str(v))
def test_truncation(t, n, hexstr, expected):
    assert_truncation(hexstr, _col(t, n))


@pytest.mark.parametrize("hexstr,expected", [
    ("6A CD 0F", "2022-11-10"),       # doc section 7.1 and MariaDB 10.11
    ("00 00 00", "0000-00-00"),       # MariaDB 10.11 '0000-00-00'
    ("00 CC 0F", "2022-00-00"),       # MariaDB 10.11 '2022-00-00'
])
def test_date(hexstr, expected):
    col = col_for(T.DATE)
    assert decode_hex(hexstr, col) == expected
    assert_truncation(hexstr, col)


@pytest.mark.parametrize("hexstr,expected", [
    ("7A", 2022), ("00", 0), ("01", 1901), ("FF", 2155),   # MariaDB 10.11 YEAR rows
])
def test_year(hexstr, expected):
    col = col_for(T.YEAR)
    assert decode_hex(hexstr, col) == expected
    assert_truncation(hexstr, col)


def test_legacy_precision_unknown():
    for t in (T.TIMESTAMP, T.DATETIME, T.TIME):
        col = col_for(t)
        assert col.precision is None
        with pytest.raises(PrecisionUnknownError, match="not recorded in the binlog"):
            decoder_for(col)


def test_zero_timestamp():
    assert decode_hex("00 00 00 00", _col(T.TIMESTAMP, 0)) == "0000-00-00 00:00:00"
    assert decode_hex("00 00 00 00 00 00", _col(T.TIMESTAMP, 3)) == "0000-00-00 00:00:00.000"
    assert decode_hex("00 00 00 00 00", _col(T.TIMESTAMP2, 2)) == "0000-00-00 00:00:00.00"
    assert decode_hex("00 00 00 00", _col(T.TIMESTAMP2, 0)) == "0000-00-00 00:00:00"


def test_timestamp_in_zone():
    col = _col(T.TIMESTAMP2, 3)
    col.tz = timezone(timedelta(hours=2))
    assert decode_hex("63 62 50 5A 0C BC", col) == "2022-11-02 13:11:22.326"


def test_legacy_hires_fraction_out_of_range():
    # N=1 fraction byte 0x0A = 10 has two digits: misaligned or corrupt.
    with pytest.raises(MalformedEventError):
        decode_hex("63 62 50 5A 0A", _col(T.TIMESTAMP, 1))
