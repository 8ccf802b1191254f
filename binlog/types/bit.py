"""BIT(M) columns (sql/field.cc Field_bit::pack / do_save_field_metadata).

TABLE_MAP metadata bytes are [M % 8, M // 8]; METADATA_READERS returns them as a
little-endian u16, ``meta = (M // 8) << 8 | (M % 8)`` (as MySQL's table_def and
calc_field_size read it).  make_column stores the value's byte count in ``col.length``
and M in ``col.precision``.  The row value is ``M // 8 + (M % 8 > 0)`` bytes,
big-endian; it is returned as an int.
"""
from __future__ import annotations

from ._common import truncated


def decode_bit(buf, pos, end, col):
    n = col.length
    if end - pos < n:
        raise truncated(n, "BIT", end - pos)
    return int.from_bytes(buf[pos:pos + n], "big"), pos + n
