"""TABLE_MAP metadata readers, make_column, decoder_for and the table coverage."""
from __future__ import annotations

import pytest

from binlog.constants import ColumnType as T
from binlog.cursor import Cursor
from binlog.errors import MalformedEventError, PrecisionUnknownError, TruncatedError, UnsupportedTypeError
from binlog.types import COLUMN_DECODERS, LEGACY_HIRES_DECODERS, METADATA_READERS, decoder_for, make_column

# Types that never reach a decoder: DECIMAL (pre-5.0, undecodable), NEWDATE / BOOL /
# INVALID (never written to a binlog), TYPED_ARRAY (replication-internal).
NOT_DECODED = {T.DECIMAL, T.NEWDATE, T.BOOL, T.INVALID, T.TYPED_ARRAY}


def test_every_type_has_reader_and_decoder():
    for t in T:
        assert t in METADATA_READERS, t.name
        if t not in NOT_DECODED:
            assert t in COLUMN_DECODERS, t.name
    assert set(LEGACY_HIRES_DECODERS) == {T.TIMESTAMP, T.DATETIME, T.TIME}


def read_meta(t, hexstr):
    cur = Cursor(bytes.fromhex(hexstr.replace(" ", "") + "EE"))
    meta = METADATA_READERS[t](cur)
    return meta, cur.pos


# (type, metadata bytes as written by MariaDB 10.11 unless noted, meta int, bytes read)
READERS = [
    (T.LONG, "", 0, 0), (T.DATE, "", 0, 0), (T.TIMESTAMP, "", 0, 0), (T.YEAR, "", 0, 0),
    (T.FLOAT, "04", 4, 1), (T.DOUBLE, "08", 8, 1),
    (T.TIME2, "02", 2, 1), (T.BLOB, "02", 2, 1), (T.GEOMETRY, "04", 4, 1),
    (T.JSON, "04", 4, 1), (T.VECTOR, "04", 4, 1), (T.BLOB_COMPRESSED, "02", 2, 1),
    (T.VARCHAR_COMPRESSED, "A1 0F", 4001, 2), (T.VARCHAR, "2C 01", 300, 2),
    (T.BIT, "02 01", 0x0102, 2),                        # BIT(10): [10 % 8, 10 // 8]
    (T.NEWDECIMAL, "41 1E", 65 << 8 | 30, 2),            # DECIMAL(65,30)
    (T.STRING, "CE FC", 0xCEFC, 2), (T.STRING, "F8 01", 0xF801, 2),
    (T.TYPED_ARRAY, "0F 2C 01", T.VARCHAR << 16 | 300, 3),
]


@pytest.mark.parametrize("t,hexstr,meta,size", READERS, ids=str)
def test_metadata_readers(t, hexstr, meta, size):
    assert read_meta(t, hexstr) == (meta, size)


def test_metadata_reader_truncated():
    with pytest.raises(TruncatedError):
        METADATA_READERS[T.VARCHAR](Cursor(b"\x01"))


def test_make_column():
    c = make_column(3, T.STRING, 0xCEFC)
    assert (c.index, c.type, c.length) == (3, T.STRING, 1020)
    c = make_column(0, T.STRING, 0xF802)
    assert (c.binlog_type, c.type, c.length) == (T.STRING, T.SET, 2)
    c = make_column(0, T.STRING, 0xF701)
    assert (c.type, c.length) == (T.ENUM, 1)
    c = make_column(0, T.NEWDECIMAL, 65 << 8 | 30)
    assert (c.precision, c.scale) == (65, 30)
    c = make_column(0, T.DATETIME2, 3)
    assert c.precision == 3
    c = make_column(0, T.BIT, 0x0102)
    assert (c.length, c.precision) == (2, 10)
    assert make_column(0, T.DATETIME, 0).precision is None
    assert make_column(0, T.VAR_STRING, 10).length == 10


@pytest.mark.parametrize("t,meta", [
    (T.STRING, 0x0F05),        # STRING metadata naming VARCHAR
    (T.BLOB, 5), (T.TIME2, 7), (T.NEWDECIMAL, 66 << 8), (T.NEWDECIMAL, 10 << 8 | 11),
    (T.BIT, 0x0108),
])
def test_make_column_bad_metadata(t, meta):
    with pytest.raises(MalformedEventError):
        make_column(0, t, meta)


def test_unknown_types():
    with pytest.raises(UnsupportedTypeError):
        make_column(0, 99, 0)
    with pytest.raises(UnsupportedTypeError):
        METADATA_READERS[99]
    with pytest.raises(UnsupportedTypeError):
        decoder_for(make_column(0, T.DECIMAL, 0))
    with pytest.raises(UnsupportedTypeError):
        decoder_for(make_column(0, T.TYPED_ARRAY, 0))


def test_decoder_for_legacy():
    for t in (T.TIMESTAMP, T.DATETIME, T.TIME):
        col = make_column(0, t, 0)
        with pytest.raises(PrecisionUnknownError):
            decoder_for(col)
        col.precision = 0
        assert decoder_for(col) is COLUMN_DECODERS[t]
        col.precision = 4
        assert decoder_for(col) is LEGACY_HIRES_DECODERS[t]
        col.precision = 7
        with pytest.raises(MalformedEventError):
            decoder_for(col)
