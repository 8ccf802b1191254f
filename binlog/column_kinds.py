"""The column kinds of the row walks and the byte widths of their values, for the pure
path: the same numbers as binlog/_column_kinds.h, which both compiled extensions include
(tests/binlog/test_column_kinds.py parses the header and compares).

Widths: MariaDB sql/sql_type.cc (the 5.3 hires layouts), MySQL sql-common/my_time.cc
(the 5.6 fsp bytes), strings/decimal.c decimal_bin_size (dig2bytes).
"""
from __future__ import annotations

# Value kinds, by how a value is laid out in a row image (rows.speed_spec; K_PY: the
# column's Python decoder).
KIND_NAMES = ("K_PY", "K_TINY", "K_SHORT", "K_INT24", "K_LONG", "K_LONGLONG", "K_FLOAT",
              "K_DOUBLE", "K_YEAR", "K_DATE", "K_TS0", "K_DT0", "K_TIME0", "K_TS_HIRES",
              "K_DT_HIRES", "K_TIME_HIRES", "K_TS2", "K_DT2", "K_TIME2", "K_VARCHAR",
              "K_STRING", "K_BLOB", "K_DECIMAL", "K_BIT", "K_ENUM")
(K_PY, K_TINY, K_SHORT, K_INT24, K_LONG, K_LONGLONG, K_FLOAT, K_DOUBLE, K_YEAR, K_DATE, K_TS0,
 K_DT0, K_TIME0, K_TS_HIRES, K_DT_HIRES, K_TIME_HIRES, K_TS2, K_DT2, K_TIME2, K_VARCHAR,
 K_STRING, K_BLOB, K_DECIMAL, K_BIT, K_ENUM) = range(len(KIND_NAMES))

# Bytes of a value of a fixed-size kind (KIND_FIXED_BYTES)
KIND_FIXED_BYTES = {K_TINY: 1, K_YEAR: 1, K_SHORT: 2, K_INT24: 3, K_DATE: 3, K_TIME0: 3,
                    K_LONG: 4, K_FLOAT: 4, K_TS0: 4, K_LONGLONG: 8, K_DOUBLE: 8, K_DT0: 8}

# Index N (fractional digits, 0..6)
SEC_PART_BYTES = (0, 1, 1, 2, 2, 3, 3)          # 5.3 TIMESTAMP(N), after its 4 bytes
DATETIME_HIRES_BYTES = (5, 6, 6, 7, 7, 7, 8)    # 5.3 DATETIME(N)
TIME_HIRES_BYTES = (3, 4, 4, 5, 5, 5, 6)        # 5.3 TIME(N)
FSP_BYTES = (0, 1, 1, 2, 2, 3, 3)               # 5.6 *2 fraction
FSP_MULT = (0, 10000, 10000, 100, 100, 1, 1)    # 5.6 fraction -> microseconds
# Bytes of a partial DECIMAL group of k digits (a whole group of 9 takes 4)
DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)

_TEMPORAL_BYTES = {K_TS_HIRES: lambda n: 4 + SEC_PART_BYTES[n], K_DT_HIRES: DATETIME_HIRES_BYTES.__getitem__,
                   K_TIME_HIRES: TIME_HIRES_BYTES.__getitem__, K_TS2: lambda n: 4 + FSP_BYTES[n],
                   K_DT2: lambda n: 5 + FSP_BYTES[n], K_TIME2: lambda n: 3 + FSP_BYTES[n]}


def kind_temporal_bytes(kind: int, n: int) -> int:
    """Bytes of a fractional temporal kind's value with N digits; -1: not such a kind or
    N out of range."""
    size = _TEMPORAL_BYTES.get(kind)
    return size(n) if size is not None and 0 <= n <= 6 else -1


#: kind_width of a length-prefixed kind (VARCHAR, STRING, BLOB)
VARIABLE = -2


def kind_width(kind: int, n: int, length: int, precision: int, scale: int) -> int:
    """Bytes of a value of ``kind`` (binlog/_speedups_out.c step_width): the fixed size;
    VARIABLE for the length-prefixed kinds; -1 when the column's metadata gives none."""
    if kind in KIND_FIXED_BYTES:
        return KIND_FIXED_BYTES[kind]
    if kind in _TEMPORAL_BYTES:
        return kind_temporal_bytes(kind, n)
    if kind == K_DECIMAL:
        return decimal_bin_size(precision, scale)
    if kind == K_BIT:
        return length if 0 <= length <= 8 else -1
    if kind == K_ENUM:
        return length if length in (1, 2) else -1
    return VARIABLE if kind in (K_VARCHAR, K_STRING, K_BLOB) else -1


def decimal_bin_size(precision: int, scale: int) -> int:
    """Bytes of a DECIMAL(precision, scale) value; -1 for metadata no server writes."""
    if not (0 < precision <= 65 and 0 <= scale <= 30 and scale <= precision):
        return -1
    intg = precision - scale
    size = DIG2BYTES[intg % 9] + intg // 9 * 4 + scale // 9 * 4 + DIG2BYTES[scale % 9]
    return size or -1
