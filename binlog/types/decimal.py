"""NEWDECIMAL columns: strings/decimal.c decimal2bin / bin2decimal.

DECIMAL(p, s): intg = p - s integer digits and s fraction digits, each side split into
groups of 9 digits stored as 4-byte big-endian ints; a partial group of k digits takes
DIG2BYTES[k] bytes (leading partial integer group first, trailing partial fraction
group last).  The first byte has its top bit flipped (XOR 0x80); a negative number has
every byte inverted as well.  Returned as decimal.Decimal with exactly s fraction digits.
"""
from __future__ import annotations

from decimal import Decimal

from ..column_kinds import DIG2BYTES
from ._common import malformed, truncated

_POW10 = tuple(10 ** i for i in range(10))

# (precision, scale) -> (size, [(nbytes, ndigits) int groups], [(nbytes, ndigits) frac groups])
_LAYOUTS: dict[tuple[int, int], tuple[int, tuple, tuple]] = {}


def decimal_layout(precision: int, scale: int) -> tuple[int, tuple, tuple]:
    key = (precision, scale)
    layout = _LAYOUTS.get(key)
    if layout is None:
        if not (0 < precision <= 65 and 0 <= scale <= 30 and scale <= precision):
            raise malformed(f"invalid DECIMAL({precision},{scale}) metadata")
        intg = precision - scale
        intg0, intg0x = divmod(intg, 9)
        frac0, frac0x = divmod(scale, 9)
        int_groups = ([(DIG2BYTES[intg0x], intg0x)] if intg0x else []) + [(4, 9)] * intg0
        frac_groups = [(4, 9)] * frac0 + ([(DIG2BYTES[frac0x], frac0x)] if frac0x else [])
        size = sum(b for b, _ in int_groups) + sum(b for b, _ in frac_groups)
        layout = (size, tuple(int_groups), tuple(frac_groups))
        _LAYOUTS[key] = layout
    return layout


def decimal_from_bin(raw: bytes, precision: int, scale: int) -> Decimal:
    """Decode exactly decimal_layout(precision, scale)[0] bytes of decimal2bin output."""
    size, int_groups, frac_groups = decimal_layout(precision, scale)
    if len(raw) != size:
        raise malformed(f"DECIMAL({precision},{scale}) needs {size} bytes, got {len(raw)}")
    if size == 0:
        return Decimal(0)
    negative = not (raw[0] & 0x80)
    v = int.from_bytes(raw, "big") ^ (0x80 << (8 * size - 8))
    if negative:
        v ^= (1 << (8 * size)) - 1
    data = v.to_bytes(size, "big")
    int_size = sum(nbytes for nbytes, _ in int_groups)
    intval = _digits(data, 0, int_groups, precision, scale)
    fracval = _digits(data, int_size, frac_groups, precision, scale)
    sign = "-" if negative and (intval or fracval) else ""
    if scale:
        return Decimal(f"{sign}{intval}.{fracval:0{scale}d}")
    return Decimal(f"{sign}{intval}")


def _digits(data: bytes, p: int, groups, precision: int, scale: int) -> int:
    """The number the digit groups at ``data[p:]`` spell (decimal2bin's base 10^9 words
    of 4 bytes, the leftover digits in DIG2BYTES bytes: strings/decimal.c)."""
    value = 0
    for nbytes, ndigits in groups:
        g = int.from_bytes(data[p:p + nbytes], "big")
        p += nbytes
        if g >= _POW10[ndigits]:
            raise malformed(f"DECIMAL({precision},{scale}) digit group {g} out of range")
        value = value * _POW10[ndigits] + g
    return value


def decode_newdecimal(buf, pos, end, col):
    precision = col.precision
    scale = col.scale
    size = decimal_layout(precision, scale)[0]
    if end - pos < size:
        raise truncated(size, f"DECIMAL({precision},{scale})", end - pos)
    return decimal_from_bin(buf[pos:pos + size], precision, scale), pos + size
