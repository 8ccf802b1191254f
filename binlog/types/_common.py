"""Helpers shared by the column decoders: typed errors without offsets.

The rows decoder adds file, event, table, column and the field offset; a decoder only
says what it needed and what was left (see binlog/column.py).
"""
from __future__ import annotations

import struct

from ..errors import MalformedEventError, TruncatedError

# Little-endian fixed-width values (the binlog's byte order).
I16, U16 = struct.Struct("<h"), struct.Struct("<H")
I32, U32 = struct.Struct("<i"), struct.Struct("<I")
I64, U64 = struct.Struct("<q"), struct.Struct("<Q")
F32, F64 = struct.Struct("<f"), struct.Struct("<d")


def truncated(n: int, what: str, left: int) -> TruncatedError:
    return TruncatedError(f"need {n} bytes for {what}, {max(left, 0)} left")


def malformed(message: str) -> MalformedEventError:
    return MalformedEventError(message)


def read_length(buf, pos: int, end: int, size: int, what: str) -> tuple[int, int]:
    """A little-endian length prefix of `size` bytes (1..4); returns (length, new_pos)."""
    if end - pos < size:
        raise truncated(size, f"{what} length", end - pos)
    if size == 1:
        return buf[pos], pos + 1
    return int.from_bytes(buf[pos:pos + size], "little"), pos + size


def read_framed(buf, pos: int, end: int, size: int, what: str) -> tuple[bytes, int]:
    """Length prefix of `size` bytes, then that many bytes; returns (bytes, new_pos)."""
    n, pos = read_length(buf, pos, end, size, what)
    if end - pos < n:
        raise truncated(n, what, end - pos)
    return bytes(buf[pos:pos + n]), pos + n
