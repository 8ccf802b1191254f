"""Integer, FLOAT, DOUBLE, YEAR and NULL columns (sql/field.cc Field_*::pack).

TINY/SHORT/INT24/LONG/LONGLONG are 1/2/3/4/8 bytes little-endian; whether they are
signed is not in the row image, only in the SIGNEDNESS optional metadata (col.unsigned).
FLOAT/DOUBLE are 4/8-byte little-endian IEEE 754.  YEAR is one byte: 0 means 0000,
otherwise year - 1900.
"""
from __future__ import annotations

from ._common import F32, F64, I16, I32, I64, U16, U32, U64, truncated


def decode_tiny(buf, pos, end, col):
    if end - pos < 1:
        raise truncated(1, "TINYINT", end - pos)
    v = buf[pos]
    if v >= 0x80 and not col.unsigned:
        v -= 0x100
    return v, pos + 1


def decode_short(buf, pos, end, col):
    if end - pos < 2:
        raise truncated(2, "SMALLINT", end - pos)
    return (U16 if col.unsigned else I16).unpack_from(buf, pos)[0], pos + 2


def decode_int24(buf, pos, end, col):
    if end - pos < 3:
        raise truncated(3, "MEDIUMINT", end - pos)
    v = buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16
    if v >= 0x800000 and not col.unsigned:
        v -= 0x1000000
    return v, pos + 3


def decode_long(buf, pos, end, col):
    if end - pos < 4:
        raise truncated(4, "INT", end - pos)
    return (U32 if col.unsigned else I32).unpack_from(buf, pos)[0], pos + 4


def decode_longlong(buf, pos, end, col):
    if end - pos < 8:
        raise truncated(8, "BIGINT", end - pos)
    return (U64 if col.unsigned else I64).unpack_from(buf, pos)[0], pos + 8


def decode_float(buf, pos, end, col):
    if end - pos < 4:
        raise truncated(4, "FLOAT", end - pos)
    return F32.unpack_from(buf, pos)[0], pos + 4


def decode_double(buf, pos, end, col):
    if end - pos < 8:
        raise truncated(8, "DOUBLE", end - pos)
    return F64.unpack_from(buf, pos)[0], pos + 8


def decode_year(buf, pos, end, col):
    if end - pos < 1:
        raise truncated(1, "YEAR", end - pos)
    v = buf[pos]
    return (1900 + v if v else 0), pos + 1


def decode_null(buf, pos, end, col):
    """MYSQL_TYPE_NULL columns take no bytes in the row image."""
    return None, pos
